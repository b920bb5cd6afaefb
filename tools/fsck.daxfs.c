// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck.daxfs: check (and repair) a DaxFS region.  The checker itself is
 * core/check*.c; this front end maps the target, runs it, prints the
 * problems and returns the exit codes of fsck(8).  docs/fsck.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "include/daxfs/libdaxfs.h"
#include "core/check.h"
#include "core/pcache.h"
#include "tools/badblocks.h"
#include "tools/common.h"
#include "lib/crash-plain.h"

/* fsck(8) exit codes */
#define FSCK_OK			0
#define FSCK_NONDESTRUCT	1	/* errors corrected */
#define FSCK_REBOOT		2	/* unused */
#define FSCK_UNCORRECTED	4
#define FSCK_ERROR		8	/* operational error */
#define FSCK_USAGE		16
#define FSCK_CANCELED		32

static const char *const sev_names[] = { "info", "warning", "error", "fatal" };

struct fsck {
	const char *target;
	bool repair, force, verbose, json, preen, convert;
	struct progress prog;
	u64 shown;
	bool first_json;
	FILE *out;
	const char *bb_list;		/* --badblocks FILE */
	const char *backing[DAXFS_PCACHE_MAX_BACKING];	/* --backing FILE */
	unsigned int nr_backing;
	int fd;				/* the target, while bad ranges wait */
	bool bad_refused;		/* -y, but the bad ranges took no write */
	struct bad_ranges bad;
	struct bad_hit *hits;		/* DAXFS_CHK_MEDIA problems */
	u64 nr_hits, cap_hits;
};

static volatile sig_atomic_t interrupted;
static bool repairing;

static void on_signal(int sig)
{
	(void)sig;
	if (!repairing)
		_exit(FSCK_CANCELED);	/* read-only so far: nothing to undo */
	interrupted = 1;		/* finish the repair, then report 32 */
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fsck.daxfs [-n|-y|-p|--convert] [-f] [-v] [--json] TARGET\n"
		"Check a DaxFS region (regular file, /dev/shm file, pmem block device\n"
		"or devdax character device).\n\n"
		"  -n        check only; the region is mapped read-only (default)\n"
		"  -y        repair every problem that can be repaired safely\n"
		"  -p, -a    preen: like -y (no questions are ever asked)\n"
		"  --convert convert an image of format version 1 or 2 to the current\n"
		"            format in place (every host unmounted), then repair\n"
		"            like -y\n"
		"  -f        with -y: repair even while hosts hold fresh leases\n"
		"            (dangerous: only when those hosts are known to be gone);\n"
		"            with -p or -a (fsck(8)'s forced check) it changes nothing\n"
		"  -v        verbose: also list informational findings\n"
		"  --json    print a machine-readable report on stdout\n"
		"  --badblocks FILE\n"
		"            known bad ranges of TARGET, as in /sys/block/pmemN/badblocks\n"
		"            (\"SECTOR COUNT\" lines, 512-byte sectors); a pmem block\n"
		"            device's own list is read without it.  They are never\n"
		"            read; what lies on them is reported, and -y overwrites\n"
		"            them with zeros (their data is lost) and repairs\n"
		"  --backing FILE\n"
		"            a backing file of a split-mode filesystem (repeat for\n"
		"            each): its descriptor in the region is checked against\n"
		"            the file's own header, and -y puts a damaged word back\n"
		"  -h, --help  this help\n\n"
		"Exit codes (fsck(8)): 0 clean, 1 errors corrected, 4 errors left\n"
		"uncorrected, 8 operational error, 16 usage error, 32 cancelled.\n");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/* Keeps a DAXFS_CHK_MEDIA problem for the bad-range summary (once). */
static void keep_hit(struct fsck *k, const struct daxfs_check_problem *p)
{
	struct bad_hit h = { .ino = p->ino, .off = p->off, .page = p->want,
			     .range = p->have }, *n;
	u64 i;

	for (i = 0; i < k->nr_hits; i++)
		if (!memcmp(&k->hits[i], &h, sizeof(h)))
			return;
	if (k->nr_hits == k->cap_hits) {
		n = realloc(k->hits, (k->cap_hits * 2 + 16) * sizeof(*n));
		if (!n)
			return;
		k->hits = n;
		k->cap_hits = k->cap_hits * 2 + 16;
	}
	k->hits[k->nr_hits++] = h;
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	struct fsck *k = ctx;
	u32 sev = p->severity > 3 ? 3 : p->severity;

	if (p->code == DAXFS_CHK_MEDIA)
		keep_hit(k, p);

	progress_done(&k->prog);
	if (k->json) {
		fprintf(k->out, "%s\n    {\"severity\": \"%s\", \"code\": ",
			k->first_json ? "" : ",", sev_names[sev]);
		json_str(k->out, p->name);
		fprintf(k->out, ", \"message\": ");
		json_str(k->out, p->msg);
		fprintf(k->out, ", \"ino\": %llu, \"offset\": %llu, \"have\": %llu, "
			"\"want\": %llu, \"repaired\": %s}",
			(unsigned long long)p->ino, (unsigned long long)p->off,
			(unsigned long long)p->have, (unsigned long long)p->want,
			p->repaired ? "true" : "false");
		k->first_json = false;
		return;
	}
	if (sev == DAXFS_CHK_INFO && !k->verbose)
		return;
	k->shown++;
	if (!k->verbose && k->shown > 200) {
		if (k->shown == 201)
			fprintf(k->out, "... more problems not shown (use -v)\n");
		return;
	}
	fprintf(k->out, "%s: %s [%s]", sev_names[sev], p->msg, p->name);
	if (p->ino)
		fprintf(k->out, " ino %llu", (unsigned long long)p->ino);
	if (p->off)
		fprintf(k->out, " at 0x%llx", (unsigned long long)p->off);
	if ((p->have || p->want) && p->code != DAXFS_CHK_MEDIA)
		fprintf(k->out, " (found %llu, expected %llu)",
			(unsigned long long)p->have, (unsigned long long)p->want);
	if (p->repaired)
		fprintf(k->out, ": FIXED");
	fputc('\n', k->out);
}

static void progress(void *ctx, u32 phase, u64 done, u64 total)
{
	static const char *const what[] = { "", "hosts", "overlay", "directories",
		"orphans", "space", "rebuilding free space" };
	struct fsck *k = ctx;

	progress_update(&k->prog, what[phase < 7 ? phase : 0], done, total);
}

static void json_begin(struct fsck *k)
{
	fprintf(k->out, "{\n  \"target\": ");
	json_str(k->out, k->target);
	fprintf(k->out, ",\n  \"mode\": \"%s\",\n  \"problems\": [",
		k->repair ? "repair" : "check");
	k->first_json = true;
}

static void json_end(struct fsck *k, const struct daxfs_check_result *r,
		     int code, const char *status)
{
	fprintf(k->out, "%s],\n", k->first_json ? "" : "\n  ");
	if (r) {
		fprintf(k->out,
			"  \"summary\": {\"inodes\": %llu, \"dirs\": %llu, \"files\": %llu, "
			"\"symlinks\": %llu, \"specials\": %llu, \"dirents\": %llu, "
			"\"data_pages\": %llu, \"orphans\": %llu, \"reattached\": %llu, "
			"\"dropped\": %llu, \"reachable_bytes\": %llu, \"free_bytes\": %llu, "
			"\"limbo_bytes\": %llu, \"batch_bytes\": %llu, \"leaked_bytes\": %llu, "
			"\"used_bytes\": %llu, \"live_hosts\": %u, \"dead_hosts\": %u, "
			"\"errors\": %llu, \"warnings\": %llu, \"repaired\": %llu, "
			"\"unrepaired\": %llu, \"repair_refused\": %s, \"rebuilt_space\": %s},\n",
			(unsigned long long)r->inodes, (unsigned long long)r->dirs,
			(unsigned long long)r->files, (unsigned long long)r->symlinks,
			(unsigned long long)r->specials, (unsigned long long)r->dirents,
			(unsigned long long)r->data_pages, (unsigned long long)r->orphans,
			(unsigned long long)r->reattached, (unsigned long long)r->dropped,
			(unsigned long long)r->reachable_bytes,
			(unsigned long long)r->free_bytes,
			(unsigned long long)r->limbo_bytes,
			(unsigned long long)r->batch_bytes,
			(unsigned long long)r->leaked_bytes,
			(unsigned long long)r->used_bytes, r->live_hosts, r->dead_hosts,
			(unsigned long long)(r->nr[2] + r->nr[3]),
			(unsigned long long)r->nr[1], (unsigned long long)r->repaired,
			(unsigned long long)r->unrepaired,
			r->repair_refused ? "true" : "false",
			r->rebuilt_space ? "true" : "false");
	}
	fprintf(k->out, "  \"status\": \"%s\",\n  \"exit\": %d\n}\n", status, code);
}

/* Reports the end of a run that could not check: operational error or a
 * superblock too broken to use. */
static int finish_early(struct fsck *k, int code, const char *status)
{
	if (k->json)
		json_end(k, NULL, code, status);
	return code;
}

/* finish_early, saying why on stderr first (not with --json) */
static int stop_why(struct fsck *k, int code, const char *status,
		    const char *why)
{
	if (!k->json)
		fprintf(stderr, "%s: %s\n", k->target, why);
	return finish_early(k, code, status);
}

/*
 * A region file shorter than the filesystem its superblock describes:
 * most often a file truncated or copied in part, not a corrupt
 * superblock, and the fix is the user's (give the file its size back).
 * Said plainly, with nothing changed.  0: not so.
 */
static int region_cut_short(struct fsck *k, const void *base, u64 size)
{
	u64 total = ((const struct daxfs_super *)base)->total_size;
	char why[1024];

	if (total <= size || (total & (DAXFS_BLOCK_SIZE - 1)))
		return 0;
	snprintf(why, sizeof(why),
		 "the region is %llu bytes, but the filesystem on it says it "
		 "is %llu: the region file was cut short (truncated, or copied "
		 "in part). Nothing was changed. If it was only shrunk, give it "
		 "its size back (truncate -s %llu %s) and run fsck.daxfs again: "
		 "what lay past its end is gone. If it was not, the superblock "
		 "is damaged, and DaxFS keeps no backup copy of it.",
		 (unsigned long long)size, (unsigned long long)total,
		 (unsigned long long)total, k->target);
	return stop_why(k, FSCK_UNCORRECTED, "region shorter than the "
			"filesystem", why);
}

/*
 * A superblock whose version and checksum disagree the way a cut format
 * conversion leaves them (daxfs_convert_torn_version): every step of the
 * conversion before them is done, so a repair finishes it; without one,
 * nothing goes on (the open refuses the checksum).  Returns 0 to go on
 * (*fixed: 1 when repaired), or the exit code.
 */
static int torn_conversion(struct fsck *k, void *base, int *fixed)
{
	const struct daxfs_super *sb = base;
	u32 other = daxfs_convert_torn_version(base);
	struct daxfs_check_problem p = {
		.severity = DAXFS_CHK_ERROR, .code = DAXFS_CHK_SUPER,
		.name = "super",
		.msg = "superblock of a cut format conversion (version and "
		       "checksum disagree)",
		.want = DAXFS_VERSION,
	};
	char why[512];

	if (!other)
		return 0;
	p.have = sb->version < other ? sb->version : other;	/* the old one */
	if (!k->repair) {
		report(k, &p);
		snprintf(why, sizeof(why), "a format conversion (fsck.daxfs "
			 "--convert, version %u to %u) was cut between its two "
			 "superblock stores: run fsck.daxfs -y to finish it",
			 (u32)p.have, DAXFS_VERSION);
		return stop_why(k, FSCK_UNCORRECTED, "cut conversion", why);
	}
	daxfs_convert_seal(base);
	p.repaired = true;
	report(k, &p);
	*fixed = 1;
	return 0;
}

/*
 * The target's known bad ranges: --badblocks FILE, or a pmem block
 * device's own list.  Returns 0, or the exit code of a run that cannot go
 * on (fd closed then).
 */
static int load_bad(struct fsck *k, int fd, u64 size)
{
	int err;

	if (bad_ranges_load(&k->bad, k->bb_list, fd, size))
		goto fail;
	if (!k->bad.n)
		return 0;
	if (bad_ranges_find(&k->bad, 0, DAXFS_BLOCK_SIZE)) {
		fprintf(stderr, "%s: the superblock lies on a bad range (%s): the filesystem "
			"cannot be checked or repaired; restore it from a copy\n", k->target,
			k->bad.src);
		close(fd);
		return finish_early(k, FSCK_UNCORRECTED, "superblock on a bad range");
	}
	/*
	 * A repair must be able to write there: what it drops or rebuilds
	 * around a lost page is only consistent once the page holds what the
	 * checker saw (zeros).  If the device refuses (it cannot clear the
	 * poison), check only.
	 */
	err = k->repair ? bad_ranges_write(&k->bad, NULL, fd) : 0;
	if (err) {
		tool_errno(-err, "%s: cannot write zeros over the bad ranges (the device "
			   "refuses them); checking only, nothing repaired", k->target);
		k->repair = false;
		k->bad_refused = true;
	}
	return 0;
fail:
	close(fd);
	return finish_early(k, FSCK_ERROR, "bad block list");
}

/*
 * After the check: with a repair, writes the bad ranges' new contents
 * (zeros and repairs) to the media; says what each range held.  The
 * superblock's fixed regions on a bad range count as errors here (the
 * checker walks only the pool).
 */
static void bad_done(struct fsck *k, void *base, struct daxfs_fs *fs,
		     struct daxfs_check_result *res)
{
	bool wrote = false;
	int err;
	u64 i;

	if (!k->bad.n)
		return;
	if (k->repair && !res->repair_refused) {
		err = bad_ranges_write(&k->bad, base, k->fd);
		if (err)
			tool_errno(-err, "%s: cannot write zeros over the bad ranges", k->target);
		wrote = !err;
	}
	close(k->fd);
	for (i = 0; i < k->bad.n; i++) {
		if (k->bad.r[2 * i] >= fs->pool_off)
			continue;
		res->nr[DAXFS_CHK_ERROR]++;
		if (wrote)
			res->repaired++;
		else
			res->unrepaired++;
	}
	if ((k->repair && !res->repair_refused && !wrote) || k->bad_refused)
		res->unrepaired++;	/* asked to repair, could not */
	if (!k->json)
		bad_ranges_report(stdout, k->target, &k->bad, fs, k->hits, k->nr_hits, wrote);
}

/* An image of an older format version: converted with --convert, else
 * how to.  Returns true when the image is now current. */
static bool convert_old(struct fsck *k, void *base, u64 size)
{
	u32 version = ((const struct daxfs_super *)base)->version;
	struct daxfs_fs fs;
	int err;

	if (!k->convert) {
		if (!k->json)
			fprintf(stderr, "%s: made by an older DaxFS (format version %u, "
				"%s).\nConvert it with every host unmounted: "
				"fsck.daxfs --convert %s\n", k->target, version,
				version == DAXFS_VERSION_V1 ?
				"before 16-byte free-stack heads" :
				version == DAXFS_VERSION_V2 ?
				"leases timed by wall clocks" :
				version == DAXFS_VERSION_V3 ?
				"appends racing truncates without a write gate" :
				version < DAXFS_VERSION_V5 ?
				"before cluster-wide file locks" :
				version < DAXFS_VERSION_V6 ?
				"before extended attributes" :
				version < DAXFS_VERSION_V7 ?
				"strict overwrites stored in place" :
				version < DAXFS_VERSION_V8 ?
				"before unwritten pages" :
				version < DAXFS_VERSION_V9 ?
				"before attribute flags" :
				version < DAXFS_VERSION_V10 ?
				"before atomic rename whiteouts" :
				version < DAXFS_VERSION_V11 ?
				"before 2 MiB runs" :
				version < DAXFS_VERSION_V12 ?
				"before free page extents" :
				version < DAXFS_VERSION_V13 ?
				"before changes in flight" :
				version < DAXFS_VERSION_V14 ?
				"before rewrite marks" :
				"before the attribute epoch", k->target);
		return false;
	}
	err = daxfs_fs_open(&fs, base, size, DAXFS_FS_CONVERT);
	if (!err && !k->force) {
		/* a host still renewing shows within a lease */
		if (!k->json)
			fprintf(stderr, "%s: watching the host table for up to "
				"%.1f s (leases)...\n", k->target,
				fs.lease_ms * 1.25 / 1000);
		if (daxfs_fs_watch_hosts(&fs) < 0)
			err = -ENOMEM;
	}
	if (!err)
		err = daxfs_convert(&fs, k->force);
	free(fs.obs);
	if (err == -EBUSY) {
		if (!k->json)
			fprintf(stderr, "%s: NOT CONVERTING: a host has this filesystem "
				"mounted (its lease is renewed).\nUnmount it everywhere, "
				"then run fsck.daxfs --convert again, or add -f if you "
				"know those hosts are gone.\n", k->target);
		return false;
	}
	if (err < 0) {
		if (!k->json)
			fprintf(stderr, "%s: cannot convert: %s\n", k->target,
				daxfs_strerror(err));
		return false;
	}
	msync(base, size, MS_SYNC);
	if (!k->json)
		printf("%s: converted to DaxFS format version %u\n", k->target,
		       DAXFS_VERSION);
	return true;
}

/*
 * --backing: each file's descriptor in the region against the file's own
 * header (daxfs_check_backing_desc).  Returns the problems found, or -1
 * (said on stderr) when a file cannot be read or is not this
 * filesystem's: nothing is changed then.
 */
static int check_backing_files(struct fsck *k, void *base, u64 size)
{
	struct daxfs_backing_header bh;
	struct stat st;
	unsigned int i;
	int fd, n, found = 0;

	for (i = 0; i < k->nr_backing; i++) {
		fd = open(k->backing[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			tool_errno(errno, "cannot open backing file %s", k->backing[i]);
			goto fail;
		}
		memset(&bh, 0, sizeof(bh));
		n = pread(fd, &bh, sizeof(bh), 0) == (ssize_t)sizeof(bh) ?
		    daxfs_check_backing_desc(base, size, &bh, (u64)st.st_size,
					     k->repair, report, k) : -EMEDIUMTYPE;
		close(fd);
		if (n == -EUCLEAN)	/* no cache header: the open says so */
			continue;
		if (n == -EOPNOTSUPP) {
			tool_err("%s: not a split-mode filesystem: --backing %s has "
				 "nothing to check", k->target, k->backing[i]);
			return -1;
		}
		if (n < 0) {
			tool_err("%s: %s is not one of this filesystem's backing files "
				 "(wrong file, or changed or truncated since mkfs): "
				 "nothing changed", k->target, k->backing[i]);
			return -1;
		}
		found += n;
	}
	return found;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ "convert", no_argument, NULL, 'C' },
		{ "badblocks", required_argument, NULL, 'B' },
		{ "backing", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct fsck k = { .out = stdout };
	struct daxfs_check_result res;
	struct daxfs_pcache_report pc;
	s64 pc_left;
	struct daxfs_check_opts o;
	enum daxfs_target_kind kind;
	struct daxfs_fs fs;
	struct sigaction sa;
	bool check_only = false;
	uint64_t size;
	void *base, *scratch;
	u64 ssize, warns;
	int opt, fd, err, code, nstate = 0, npc, nbk, ntorn = 0;

	tool_name = "fsck.daxfs";
	while ((opt = getopt_long(argc, argv, "nypafvhJ", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			check_only = true;
			break;
		case 'y':
			k.repair = true;
			break;
		case 'p':
		case 'a':
			k.repair = k.preen = true;
			break;
		case 'f':
			k.force = true;
			break;
		case 'v':
			k.verbose = true;
			break;
		case 'J':
			k.json = true;
			break;
		case 'C':
			k.convert = k.repair = true;
			break;
		case 'B':
			k.bb_list = optarg;
			break;
		case 'K':
			if (k.nr_backing == DAXFS_PCACHE_MAX_BACKING) {
				tool_err("too many --backing files (at most %u)",
					 DAXFS_PCACHE_MAX_BACKING);
				return FSCK_USAGE;
			}
			k.backing[k.nr_backing++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return FSCK_OK;
		default:
			usage(stderr);
			return FSCK_USAGE;
		}
	}
	if (optind != argc - 1 || (check_only && k.repair)) {
		if (check_only && k.repair)
			tool_err("-n cannot be combined with -y or -p");
		usage(stderr);
		return FSCK_USAGE;
	}
	/* fsck(8) and systemd-fsck pass -f with -a or -p to force a check
	 * (e2fsck's -f); DaxFS checks everything every time.  A run at boot
	 * cannot know that hosts holding fresh leases are gone, so only an
	 * operator's -y -f repairs over them. */
	if (k.preen)
		k.force = false;
	k.target = argv[optind];
	progress_init(&k.prog, k.json || !isatty(2));
	if (k.json)
		json_begin(&k);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	fd = daxfs_target_open(k.target, k.repair ? O_RDWR : O_RDONLY, &kind, &size);
	if (fd < 0) {
		tool_errno(-fd, "cannot open %s", k.target);
		return finish_early(&k, FSCK_ERROR, "cannot open");
	}
	if (size < 2 * DAXFS_BLOCK_SIZE) {
		tool_err("%s: too small to hold a DaxFS filesystem (%llu bytes)",
			 k.target, (unsigned long long)size);
		close(fd);
		return finish_early(&k, FSCK_ERROR, "not daxfs");
	}
	code = load_bad(&k, fd, size);
	if (code)
		return code;
	base = mmap(NULL, size, k.repair ? PROT_READ | PROT_WRITE : PROT_READ,
		    MAP_SHARED, fd, 0);
	if (!k.bad.n)
		close(fd);
	else
		k.fd = fd;	/* for the write-back of the bad ranges */
	if (base == MAP_FAILED) {
		tool_errno(errno, "cannot map %s", k.target);
		return finish_early(&k, FSCK_ERROR, "cannot map");
	}
	if (k.repair)
		daxfs_crash_map(base, size);	/* test builds: count its stores */
	/* the checker reads zeros there, never the media (and with -y its
	 * repairs there are written back once it is done) */
	if (bad_ranges_mask(&k.bad, base)) {
		tool_errno(errno, "cannot keep the bad ranges of %s unmapped", k.target);
		return finish_early(&k, FSCK_ERROR, "cannot map");
	}

	if (((const struct daxfs_super *)base)->magic != DAXFS_MAGIC) {
		tool_err("%s: not a DaxFS filesystem (bad magic number)", k.target);
		return finish_early(&k, FSCK_ERROR, "not daxfs");
	}
	code = torn_conversion(&k, base, &ntorn);
	if (code)
		return code;
	if (((const struct daxfs_super *)base)->version < DAXFS_VERSION &&
	    ((const struct daxfs_super *)base)->version >= DAXFS_VERSION_V1 &&
	    !convert_old(&k, base, size))
		return finish_early(&k, FSCK_UNCORRECTED, "older format version");
	code = region_cut_short(&k, base, size);
	if (code)
		return code;
	err = daxfs_check_super(base, size, report, &k);
	if (err == -EOPNOTSUPP)		/* as e2fsck: not damage found */
		return stop_why(&k, FSCK_ERROR, "unknown features",
				"the filesystem uses features this fsck.daxfs does "
				"not know: check it with the fsck.daxfs of the DaxFS "
				"that made it.");
	if (err)
		return stop_why(&k, FSCK_UNCORRECTED, "corrupt superblock",
				"the superblock is corrupt and DaxFS keeps no backup "
				"copy: the filesystem cannot be checked or repaired.\n"
				"Recover the data with a tool that reads the raw region, "
				"or recreate it with mkfs.daxfs.");
	if (daxfs_check_base_header(base, size, report, &k))
		return stop_why(&k, FSCK_UNCORRECTED, "corrupt base image",
				"the base image's header is corrupt; the base image is "
				"read-only and fsck.daxfs does not repair it.\n"
				"Recreate the filesystem from its source with "
				"mkfs.daxfs --source.");
	nbk = check_backing_files(&k, base, size);
	if (nbk < 0)
		return finish_early(&k, FSCK_ERROR, "wrong backing file");
	err = daxfs_fs_open(&fs, base, size, k.repair ? 0 : DAXFS_FS_RDONLY);
	if (err == -EUCLEAN) {
		/* maybe only the state page or the page cache's header:
		 * diagnose, and fix with -y */
		nstate = daxfs_check_state_fixup(base, size, k.repair, report, &k);
		npc = daxfs_check_pcache_fixup(base, size, k.repair, report, &k);
		if (npc > 0)
			nstate = (nstate > 0 ? nstate : 0) + npc;
		if (nstate > 0 && k.repair)
			err = daxfs_fs_open(&fs, base, size, 0);
	}
	if (err) {
		if (!k.json)
			fprintf(stderr, "%s: cannot open the filesystem: %s\n",
				k.target, daxfs_strerror(err));
		if (!k.json)	/* maybe because of them: say where they are */
			bad_ranges_report(stdout, k.target, &k.bad, NULL, NULL, 0, false);
		code = nstate > 0 || err == -EUCLEAN || err == -EBADMSG ?
		       FSCK_UNCORRECTED : FSCK_ERROR;
		return finish_early(&k, code, "cannot open filesystem");
	}

	ssize = daxfs_check_scratch_size(&fs);
	scratch = malloc(ssize ? ssize : 8);
	if (!scratch) {
		tool_err("cannot allocate %llu bytes of scratch memory",
			 (unsigned long long)ssize);
		return finish_early(&k, FSCK_ERROR, "out of memory");
	}
	memset(&o, 0, sizeof(o));
	o.flags = (k.repair ? DAXFS_CHECK_REPAIR : 0) |
		  (k.force ? DAXFS_CHECK_FORCE : 0);
	o.scratch = scratch;
	o.scratch_size = ssize;
	o.report = report;
	o.progress = progress;
	o.ctx = &k;
	o.bad = k.bad.r;
	o.nr_bad = k.bad.n;
	o.bad_rewrite = true;
	repairing = k.repair;
	/* which hosts are live: their heartbeat counters, timed with our
	 * own clock, for up to about a lease (docs/hosts.md "Leases") */
	if (daxfs_fs_watch_hosts(&fs) < 0) {
		tool_err("out of memory");
		return finish_early(&k, FSCK_ERROR, "out of memory");
	}
	err = daxfs_check(&fs, &o, &res);
	progress_done(&k.prog);
	if (err) {
		tool_errno(-err, "%s: check failed", k.target);
		return finish_early(&k, FSCK_ERROR, "check failed");
	}
	if (nstate > 0 || ntorn) {
		res.nr[DAXFS_CHK_ERROR] += (nstate > 0 ? nstate : 0) + ntorn;
		res.repaired += (nstate > 0 ? nstate : 0) + ntorn;
	}
	res.nr[DAXFS_CHK_ERROR] += (u64)nbk;
	if (k.repair)
		res.repaired += (u64)nbk;
	else
		res.unrepaired += (u64)nbk;
	pc_left = daxfs_pcache_check(&fs, k.repair && !res.repair_refused, &pc);
	if (pc_left < 0) {
		tool_errno((int)-pc_left, "%s: page cache check failed", k.target);
		pc_left = 0;
	}
	res.repaired += pc.repaired;
	bad_done(&k, base, &fs, &res);
	res.unrepaired += (u64)pc_left;
	res.nr[DAXFS_CHK_ERROR] += (u64)pc_left + pc.repaired;
	if (res.repair_refused && !k.json)
		fprintf(stderr,
			"%s: NOT REPAIRING: %u host(s) have this filesystem mounted (fresh "
			"lease).\nUnmount it everywhere (a crashed host's lease expires "
			"after %u ms), then run fsck.daxfs -y again,\nor use -f if you "
			"know those hosts are gone.\n", k.target, res.live_hosts,
			fs.lease_ms);
	warns = res.nr[DAXFS_CHK_WARN] - res.live_hosts;
	if (res.unrepaired || (res.repair_refused && warns))
		code = FSCK_UNCORRECTED;	/* asked to repair, could not */
	else if (res.repaired)
		code = FSCK_NONDESTRUCT;
	else
		code = FSCK_OK;
	if (interrupted)
		code |= FSCK_CANCELED;
	if (k.repair && res.repaired)
		msync(base, size, MS_SYNC);
	if (k.json) {
		json_end(&k, &res, code, code == 0 ? "clean" : code & FSCK_UNCORRECTED ?
			 "errors left" : "repaired");
	} else {
		char used[32], reach[32], leak[32];

		format_bytes(res.used_bytes, used, sizeof(used));
		format_bytes(res.reachable_bytes, reach, sizeof(reach));
		format_bytes(res.leaked_bytes, leak, sizeof(leak));
		printf("%s: %llu inodes (%llu dirs, %llu files, %llu symlinks, %llu other), "
		       "%llu names, %llu data pages\n", k.target,
		       (unsigned long long)res.inodes, (unsigned long long)res.dirs,
		       (unsigned long long)res.files, (unsigned long long)res.symlinks,
		       (unsigned long long)res.specials, (unsigned long long)res.dirents,
		       (unsigned long long)res.data_pages);
		printf("%s: %s reachable, %s counted as used, %s leaked; %u live host(s)\n",
		       k.target, reach, used, leak, res.live_hosts);
		if (fs.pc.hdr)
			printf("%s: page cache: %llu stale claim(s), %llu stale pin(s), "
			       "%llu bad slot(s), %llu duplicate(s), %llu repaired\n",
			       k.target, (unsigned long long)pc.stale_claims,
			       (unsigned long long)(pc.stale_pins + pc.stale_owners),
			       (unsigned long long)(pc.bad_state + pc.bad_tag),
			       (unsigned long long)pc.duplicates,
			       (unsigned long long)pc.repaired);
		if (code == FSCK_OK && warns)
			printf("%s: no errors; %llu warning(s) (filesystem in use: may be "
			       "transient)\n", k.target, (unsigned long long)warns);
		else if (code == FSCK_OK)
			printf("%s: clean\n", k.target);
		else if (res.repair_refused)
			printf("%s: %llu problem(s) found, not repaired (mounted)\n",
			       k.target, (unsigned long long)(res.unrepaired + warns));
		else if (code & FSCK_UNCORRECTED)
			printf("%s: %llu error(s) left uncorrected%s\n", k.target,
			       (unsigned long long)res.unrepaired,
			       k.repair ? "" : " (run fsck.daxfs -y to repair)");
		else
			printf("%s: %llu problem(s) corrected\n", k.target,
			       (unsigned long long)res.repaired);
	}
	free(scratch);
	munmap(base, size);
	return code;
}
