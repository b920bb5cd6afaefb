// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mkfs.daxfs: create a DaxFS filesystem on a file, a /dev/shm file, a pmem
 * block device or a devdax character device, optionally with a read-only
 * base image built from a directory tree (--source).
 *
 * Exit codes follow mke2fs: 0 success, 1 usage error, 8 operational error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <libgen.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "daxfs/libdaxfs.h"
#include "common.h"

#define PROBE_LEN	4096u
#define TMPFS_MAGIC	0x01021994	/* statfs(2) */

struct mkfs_args {
	bool force, quiet, have_size, small_pages;
	uint64_t block_unit;		/* -b: bytes per BLOCKS unit */
	uint64_t size;
	const char *source;
	uint64_t buckets;
	uint32_t max_hosts;
	uint32_t lease_ms;
	const char *label;
	const char *target;
	/* split mode */
	const char *backing[DAXFS_PCACHE_MAX_BACKING];
	unsigned int nr_backing;
	uint64_t backing_max;
	uint64_t cache_size;
	uint32_t cache_window;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: mkfs.daxfs [options] TARGET [BLOCKS]\n"
"Create a DaxFS filesystem on TARGET: a regular file (created or resized to\n"
"SIZE), a file in /dev/shm, a pmem block device or a devdax character device\n"
"(the device size is used).\n"
"\n"
"Options:\n"
"  -s, --size SIZE      region size, e.g. 64M, 1G (K, M, G, T = powers of 1024);\n"
"                       required when TARGET is a new or empty file\n"
"  -f, -F, --force      overwrite an existing filesystem or data on TARGET\n"
"  -b, --block-size N   the unit of BLOCKS in bytes (1024 to 65536, a power of\n"
"                       two; default 1024), as mke2fs -b: xfstests'\n"
"                       _scratch_mkfs_sized calls mkfs -F -b 4096 DEV BLOCKS\n"
"      --source DIR     build a read-only base image from the tree under DIR\n"
"      --backing FILE   split mode: put the file data of --source DIR into\n"
"                       backing FILE (repeatable, up to 16 files; files are\n"
"                       balanced by size) and cache it in the region\n"
"      --backing-max SIZE  cap per backing file (first fit instead of balance)\n"
"      --cache-size SIZE   shared page cache in the region (default: 1/4 of it)\n"
"      --cache-window N    cache slots probed per page (default 32)\n"
"      --buckets N      overlay hash buckets (power of two; default: automatic)\n"
"      --max-hosts N    host table entries, 1..%u (default 64)\n"
"      --lease-ms N     host lease in milliseconds (default 10000)\n"
"  -L, --label LABEL    filesystem label (up to %u bytes)\n"
"      --small-pages    on a tmpfs, keep its own pages (4 KiB on /dev/shm as\n"
"                       most systems mount it); by default a region file on a\n"
"                       tmpfs gets 2 MiB pages where the kernel can give them\n"
"  -q, --quiet          print nothing but errors\n"
"  -V, --version        print the version and exit\n"
"  -h, --help           show this help\n"
"\n"
"BLOCKS (for mkfs(8) compatibility) is the size in 1 KiB blocks (-b: in\n"
"blocks of that size); the region's own block stays 4 KiB.\n"
"Exit status: 0 success, 1 usage error, 8 operational error.\n",
		DAXFS_MAX_HOSTS, DAXFS_LABEL_LEN - 1);
}

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("mkfs.daxfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'mkfs.daxfs --help' for more information.\n", stderr);
	exit(MKFS_EXIT_USAGE);
}

static uint64_t parse_num_opt(const char *opt, const char *arg, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(arg, &v) || v < min || v > max)
		usage_error("invalid %s '%s': expected a number from %llu to %llu", opt, arg,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static void parse_size_opt(const char *arg, uint64_t *out)
{
	const char *why;

	if (parse_size(arg, out, &why))
		usage_error("invalid size '%s': %s", arg, why);
}

static void parse_args(int argc, char **argv, struct mkfs_args *a)
{
	enum { OPT_SOURCE = 256, OPT_BUCKETS, OPT_MAX_HOSTS, OPT_LEASE, OPT_BACKING,
	       OPT_BACKING_MAX, OPT_CACHE_SIZE, OPT_CACHE_WINDOW, OPT_SMALL_PAGES };
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "buckets", required_argument, NULL, OPT_BUCKETS },
		{ "max-hosts", required_argument, NULL, OPT_MAX_HOSTS },
		{ "lease-ms", required_argument, NULL, OPT_LEASE },
		{ "backing", required_argument, NULL, OPT_BACKING },
		{ "backing-max", required_argument, NULL, OPT_BACKING_MAX },
		{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
		{ "cache-window", required_argument, NULL, OPT_CACHE_WINDOW },
		{ "label", required_argument, NULL, 'L' },
		{ "small-pages", no_argument, NULL, OPT_SMALL_PAGES },
		{ "quiet", no_argument, NULL, 'q' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	while ((c = getopt_long(argc, argv, "s:fFb:L:qVh", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			parse_size_opt(optarg, &a->size);
			a->have_size = true;
			break;
		case 'f':
		case 'F':
			a->force = true;
			break;
		case 'b':
			a->block_unit = parse_num_opt("--block-size", optarg, 1024, 65536);
			if (a->block_unit & (a->block_unit - 1))
				usage_error("invalid --block-size '%s': must be a power of two",
					    optarg);
			break;
		case OPT_SOURCE:
			a->source = optarg;
			break;
		case OPT_BUCKETS:
			a->buckets = parse_num_opt("--buckets", optarg, 1, 1ULL << 40);
			if (a->buckets & (a->buckets - 1))
				usage_error("invalid --buckets '%s': must be a power of two", optarg);
			break;
		case OPT_MAX_HOSTS:
			a->max_hosts = (uint32_t)parse_num_opt("--max-hosts", optarg, 1,
							       DAXFS_MAX_HOSTS);
			break;
		case OPT_LEASE:
			a->lease_ms = (uint32_t)parse_num_opt("--lease-ms", optarg, 1,
							      UINT32_MAX);
			break;
		case OPT_BACKING:
			if (a->nr_backing >= DAXFS_PCACHE_MAX_BACKING)
				usage_error("too many --backing files (at most 16): '%s'",
					    optarg);
			a->backing[a->nr_backing++] = optarg;
			break;
		case OPT_BACKING_MAX:
		case OPT_CACHE_SIZE:
			parse_size_opt(optarg, c == OPT_CACHE_SIZE ? &a->cache_size :
				       &a->backing_max);
			break;
		case OPT_CACHE_WINDOW:
			a->cache_window = (uint32_t)parse_num_opt("--cache-window", optarg,
								  1, 4096);
			break;
		case 'L':
			if (strlen(optarg) > DAXFS_LABEL_LEN - 1) {
				fprintf(stderr, "mkfs.daxfs: label '%s' is too long (at most "
					"%u bytes)\n", optarg, DAXFS_LABEL_LEN - 1);
				exit(MKFS_EXIT_USAGE);
			}
			a->label = optarg;
			break;
		case 'q':
			a->quiet = true;
			break;
		case OPT_SMALL_PAGES:
			a->small_pages = true;
			break;
		case 'V':
			printf("mkfs.daxfs (DaxFS format version %u)\n", DAXFS_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			fputs("Try 'mkfs.daxfs --help' for more information.\n", stderr);
			exit(MKFS_EXIT_USAGE);
		}
	}
	if (optind >= argc)
		usage_error("missing TARGET (a file, /dev/shm file, pmem or devdax device)");
	a->target = argv[optind++];
	if (!a->block_unit)
		a->block_unit = 1024;
	if (optind < argc) {
		uint64_t blocks;

		if (parse_u64(argv[optind], &blocks) || !blocks ||
		    blocks > UINT64_MAX / a->block_unit)
			usage_error("invalid BLOCKS '%s': expected a number of %llu-byte blocks",
				    argv[optind], (unsigned long long)a->block_unit);
		if (a->have_size && a->size != blocks * a->block_unit)
			usage_error("BLOCKS and -s disagree");
		a->size = blocks * a->block_unit;
		a->have_size = true;
		optind++;
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (a->have_size && a->size == 0)
		usage_error("size must not be zero");
	if (a->nr_backing && !a->source)
		usage_error("--backing needs --source DIR (the tree whose data "
			    "goes to the backing files)");
	if ((a->backing_max || a->cache_window) && !a->nr_backing)
		usage_error("--backing-max and --cache-window need --backing");
}

/* What the first bytes of a target look like, or NULL if all zero. */
static const char *identify(const uint8_t *b, size_t len, char *buf, size_t buflen)
{
	size_t i;
	uint64_t magic;

	for (i = 0; i < len && !b[i]; i++)
		;
	if (i == len)
		return NULL;
	memcpy(&magic, b, sizeof(magic));
	if (magic == DAXFS_MAGIC) {
		const struct daxfs_super *sb = (const void *)b;
		char label[DAXFS_LABEL_LEN + 1];

		memcpy(label, sb->label, DAXFS_LABEL_LEN);
		label[DAXFS_LABEL_LEN] = '\0';
		if (label[0])
			snprintf(buf, buflen, "a DaxFS filesystem (label '%s')", label);
		else
			snprintf(buf, buflen, "a DaxFS filesystem");
		return buf;
	}
	if (len >= 1082 && b[1080] == 0x53 && b[1081] == 0xef)
		return "an ext2/ext3/ext4 filesystem";
	if (!memcmp(b, "XFSB", 4))
		return "an XFS filesystem";
	if (!memcmp(b, "hsqs", 4))
		return "a squashfs filesystem";
	if (!memcmp(b, "LUKS\xba\xbe", 6))
		return "a LUKS encrypted volume";
	if (len >= 4096 && (!memcmp(b + 4086, "SWAPSPACE2", 10) ||
			    !memcmp(b + 4086, "SWAP-SPACE", 10)))
		return "a swap area";
	if (!memcmp(b + 3, "NTFS    ", 8))
		return "an NTFS filesystem";
	if (!memcmp(b + 54, "FAT", 3) || !memcmp(b + 82, "FAT32", 5))
		return "a FAT filesystem";
	if (!memcmp(b + 512, "EFI PART", 8))
		return "a GPT partition table";
	if (b[510] == 0x55 && b[511] == 0xaa)
		return "a partition table or boot sector";
	return "data (its first 4 KiB are not zero)";
}

static const char *kind_name(enum daxfs_target_kind k)
{
	switch (k) {
	case DAXFS_TARGET_BLOCK:
		return "block device";
	case DAXFS_TARGET_DEVDAX:
		return "devdax device";
	default:
		return "regular file";
	}
}

/* The huge page size of the hugetlbfs holding (or to hold) target, or 0
 * when it is on another filesystem. */
static uint64_t hugetlb_page(const char *target)
{
	char dir[PATH_MAX];
	uint64_t page = 0;
	int fd = open(target, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		snprintf(dir, sizeof(dir), "%s", target);
		fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd >= 0) {
		page = daxfs_target_page_size(fd);
		close(fd);
	}
	return page > (uint64_t)sysconf(_SC_PAGESIZE) ? page : 0;
}

/* Whether target (or, not made yet, its directory) is on a tmpfs. */
static bool on_tmpfs(const char *target)
{
	char dir[PATH_MAX];
	struct statfs sfs;

	if (!statfs(target, &sfs))
		return (unsigned long)sfs.f_type == TMPFS_MAGIC;
	snprintf(dir, sizeof(dir), "%s", target);
	return !statfs(dirname(dir), &sfs) &&
	       (unsigned long)sfs.f_type == TMPFS_MAGIC;
}

/* hugetlbfs files are whole huge pages and have no write(2): the region
 * is written through its mapping, its size must fit. */
static void check_hugetlb_size(const struct mkfs_args *a, uint64_t page)
{
	char p[32];

	if (!page || !a->have_size || !(a->size % page))
		return;
	format_bytes(page, p, sizeof(p));
	tool_err("%s is on hugetlbfs, whose files are made of whole %s pages: "
		 "give a size that is a multiple of %s (e.g. -s %lluM)", a->target,
		 p, p, (unsigned long long)((a->size + page - 1) / page * page >> 20));
	exit(MKFS_EXIT_USAGE);
}

/*
 * Looks at TARGET before anything is written: existence, kind, size and
 * whether it already holds something.  Exits on problems.
 */
static void probe_target(struct mkfs_args *a, enum daxfs_target_kind *kind, uint64_t *cur)
{
	uint8_t buf[PROBE_LEN];
	char what_buf[96];
	const char *what;
	ssize_t n = 0;
	int fd;

	*kind = DAXFS_TARGET_FILE;
	*cur = 0;
	fd = daxfs_target_open(a->target, O_RDONLY, kind, cur);
	if (fd == -ENOENT) {
		if (!a->have_size) {
			tool_err("%s does not exist: give the size of the new file with "
				 "-s SIZE (e.g. -s 1G)", a->target);
			exit(MKFS_EXIT_USAGE);
		}
		return;
	}
	if (fd == -EINVAL || fd == -ENODEV) {
		tool_err("%s is not a regular file, pmem block device or devdax device",
			 a->target);
		exit(MKFS_EXIT_ERROR);
	}
	if (fd < 0) {
		tool_err("cannot open %s: %s", a->target, daxfs_strerror(fd));
		exit(MKFS_EXIT_ERROR);
	}
	if (*kind == DAXFS_TARGET_FILE && *cur == 0 && !a->have_size) {
		tool_err("%s is empty: give the size of the filesystem with -s SIZE "
			 "(e.g. -s 1G)", a->target);
		close(fd);
		exit(MKFS_EXIT_USAGE);
	}
	if (*cur) {
		size_t want = *cur < PROBE_LEN ? (size_t)*cur : PROBE_LEN;

		memset(buf, 0, sizeof(buf));
		n = pread(fd, buf, want, 0);
		if (n < 0 && *kind == DAXFS_TARGET_DEVDAX) {
			/* devdax has no read(): look through a mapping */
			void *m = mmap(NULL, 2 << 20, PROT_READ, MAP_SHARED, fd, 0);

			if (m != MAP_FAILED) {
				memcpy(buf, m, PROBE_LEN);
				munmap(m, 2 << 20);
				n = PROBE_LEN;
			}
		}
		if (n < 0) {
			tool_errno(errno, "cannot read %s", a->target);
			close(fd);
			exit(MKFS_EXIT_ERROR);
		}
	}
	close(fd);
	what = identify(buf, (size_t)n, what_buf, sizeof(what_buf));
	if (what && !a->force) {
		tool_err("%s contains %s; use -f to overwrite it (everything on it "
			 "will be lost)", a->target, what);
		exit(MKFS_EXIT_ERROR);
	}
	if (a->have_size && *kind != DAXFS_TARGET_FILE && a->size > *cur) {
		char s1[32], s2[32];

		format_bytes(a->size, s1, sizeof(s1));
		format_bytes(*cur, s2, sizeof(s2));
		tool_err("-s %s is larger than %s (%s); omit -s to use the whole device",
			 s1, a->target, s2);
		exit(MKFS_EXIT_ERROR);
	}
}

struct writer_ctx {
	struct base_image *bi;
	bool quiet;
};

static int write_base(void *ctx, void *base, uint64_t size)
{
	struct writer_ctx *w = ctx;

	return base_image_write(w->bi, base, size, w->quiet);
}

/* On a tmpfs a region file gets 2 MiB pages where the kernel can give them
 * (lib/hugepages.c): say how many it gave, and what to do about none. */
static void print_pages(const struct mkfs_args *a, uint64_t total, uint64_t huge)
{
	char s1[32];

	if (huge >= total) {
		printf("  pages:       2 MiB\n");
		return;
	}
	if (huge) {
		format_bytes(huge, s1, sizeof(s1));
		printf("  pages:       2 MiB for %s of it, 4 KiB for the rest\n", s1);
		return;
	}
	if (a->small_pages || !on_tmpfs(a->target))
		return;
	printf("  pages:       4 KiB: the kernel gave no 2 MiB pages (it needs\n"
	       "               MADV_COLLAPSE, Linux 6.1, and free 2 MiB of memory)\n");
}

static void print_summary(const struct mkfs_args *a, enum daxfs_target_kind kind,
			  const struct base_image_stats *bs, uint64_t huge)
{
	struct daxfs_handle *h;
	struct daxfs_info *info;
	char s1[32], s2[32];
	int ret, i;

	info = calloc(1, sizeof(*info));
	if (!info)
		return;
	ret = daxfs_region_open(a->target, DAXFS_OPEN_RDONLY, &h);
	if (!ret) {
		ret = daxfs_info(h, info);
		daxfs_region_close(h);
	}
	if (ret) {
		tool_err("warning: created, but cannot read the new filesystem back: %s",
			 daxfs_strerror(ret));
		free(info);
		return;
	}
	format_bytes(info->total_size, s1, sizeof(s1));
	printf("Created DaxFS on %s (%s)\n", a->target, kind_name(kind));
	printf("  size:        %s (%llu bytes)\n", s1, (unsigned long long)info->total_size);
	format_bytes(info->pool_bytes, s2, sizeof(s2));
	printf("  pool:        %s free for new data\n", s2);
	printf("  buckets:     %llu (probe window %u)\n",
	       (unsigned long long)info->nr_buckets, info->probe_window);
	printf("  hosts:       up to %u, lease %u ms\n", info->max_hosts, info->lease_ms);
	print_pages(a, info->total_size, huge);
	if (bs) {
		format_bytes(bs->image_size, s1, sizeof(s1));
		printf("  base image:  %llu inodes (%llu files, %llu directories, "
		       "%llu symlinks, %llu special, %llu hard links), %s, from %s\n",
		       (unsigned long long)bs->nr_inodes, (unsigned long long)bs->nr_files,
		       (unsigned long long)bs->nr_dirs, (unsigned long long)bs->nr_symlinks,
		       (unsigned long long)bs->nr_special,
		       (unsigned long long)bs->nr_hardlinks, s1, a->source);
	} else {
		printf("  base image:  none (empty root directory)\n");
	}
	if (a->nr_backing) {
		struct daxfs_cache_info ci;

		ret = daxfs_region_open(a->target, DAXFS_OPEN_RDONLY, &h);
		if (!ret) {
			ret = daxfs_cache_info(h, &ci);
			daxfs_region_close(h);
		}
		if (!ret) {
			format_bytes(ci.cache_bytes, s1, sizeof(s1));
			printf("  page cache:  %s (%llu slots, window %llu)\n", s1,
			       (unsigned long long)ci.nr_slots,
			       (unsigned long long)ci.window);
			for (i = 0; i < (int)ci.nr_backing; i++) {
				format_bytes(ci.backing[i].size, s2, sizeof(s2));
				printf("  backing %d:   %s (%s)\n", i, a->backing[i], s2);
			}
		}
	}
	if (info->label[0])
		printf("  label:       %s\n", info->label);
	printf("  uuid:        ");
	for (i = 0; i < 16; i++)
		printf("%02x%s", info->uuid[i], (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
	printf("\n");
	free(info);
}

int main(int argc, char **argv)
{
	struct mkfs_args a;
	struct daxfs_mkfs_opts o;
	struct base_image *bi = NULL;
	struct base_image_stats bs;
	struct writer_ctx wctx;
	struct daxfs_backing_desc descs[DAXFS_PCACHE_MAX_BACKING];
	enum daxfs_target_kind kind;
	uint64_t cur, size, huge, huge_bytes = 0;
	int ret;

	tool_name = "mkfs.daxfs";
	parse_args(argc, argv, &a);
	probe_target(&a, &kind, &cur);
	huge = kind == DAXFS_TARGET_FILE ? hugetlb_page(a.target) : 0;
	check_hugetlb_size(&a, huge);
	size = a.have_size ? a.size : cur;

	memset(&o, 0, sizeof(o));
	o.force = a.force;
	o.nr_buckets = a.buckets;
	o.max_hosts = a.max_hosts;
	o.lease_ms = a.lease_ms;
	o.label = a.label;
	o.small_pages = a.small_pages;
	o.huge_bytes = &huge_bytes;
	o.root_mode = 0755;
	o.root_uid = (uint32_t)geteuid();
	o.root_gid = (uint32_t)getegid();

	if (a.source) {
		ret = base_image_scan(a.source, a.quiet, &bi);
		if (ret)
			return MKFS_EXIT_ERROR;
		if (a.nr_backing) {
			ret = base_image_split(bi, a.nr_backing, a.backing_max);
			if (ret) {
				base_image_free(bi);
				return MKFS_EXIT_ERROR;
			}
		}
		base_image_stats(bi, &bs);
		if (size && bs.image_size >= size) {
			char s1[32], s2[32];

			format_bytes(bs.image_size, s1, sizeof(s1));
			format_bytes(size, s2, sizeof(s2));
			tool_err("the base image of %s needs %s but the region is %s; "
				 "give a larger -s SIZE", a.source, s1, s2);
			base_image_free(bi);
			return MKFS_EXIT_ERROR;
		}
		wctx.bi = bi;
		wctx.quiet = a.quiet;
		o.base_size = bs.image_size;
		o.first_dyn_ino = bs.nr_inodes + 1;
		o.base_writer = write_base;
		o.base_ctx = &wctx;
	}
	if (a.nr_backing) {
		/* split mode: data to the backing files first (their ids go
		 * into the region's PCACHE table) */
		ret = base_image_write_backing(bi, a.backing, a.force, a.quiet, descs);
		if (ret) {
			base_image_free(bi);
			return MKFS_EXIT_ERROR;
		}
		o.nr_backing = a.nr_backing;
		o.backing = descs;
		o.pcache_window = a.cache_window;
	}
	if (a.cache_size || a.nr_backing) {
		uint64_t cs = a.cache_size ? a.cache_size : size / 4;

		if (cs < 16 * 4096ULL)
			cs = 16 * 4096ULL;
		o.pcache_size = (cs + 4095) & ~4095ULL;
	}

	/* the kernel copies every 2 MiB: seconds per GiB where it must
	 * compact memory first (docs/libdaxfs.md "Huge pages") */
	if (!a.quiet && !a.small_pages && kind == DAXFS_TARGET_FILE &&
	    size >= (1ULL << 30) && on_tmpfs(a.target)) {
		printf("Giving the region 2 MiB pages (--small-pages skips this)...\n");
		fflush(stdout);
	}
	ret = daxfs_region_create(a.target, a.have_size ? a.size : 0, &o);
	if (ret) {
		char s[32];

		format_bytes(size, s, sizeof(s));
		if (ret == -EEXIST)
			tool_err("%s contains a DaxFS filesystem; use -f to overwrite it",
				 a.target);
		else if (ret == -ENOMEM && tool_enomem_from_limit(NULL, a.target, size))
			;
		else if (ret == -ENOMEM && huge)
			tool_err("cannot create a filesystem of %s on %s: not enough "
				 "free huge pages on its hugetlbfs (HugePages_Free in "
				 "/proc/meminfo); raise /proc/sys/vm/nr_hugepages or give "
				 "a smaller -s SIZE", s, a.target);
		else if (ret == -ENOMEM && kind == DAXFS_TARGET_FILE)
			tool_err("cannot create a filesystem of %s on %s: the filesystem "
				 "holding it has no room for %s (a region is allocated whole, "
				 "so that no host ever dies of SIGBUS when it fills); nothing "
				 "was left behind: free space there or give a smaller -s SIZE",
				 s, a.target, s);
		else if (ret == -ENOSPC || ret == -E2BIG || ret == -EFBIG)
			tool_err("cannot create a filesystem of %s on %s: %s (the size must "
				 "fit the metadata%s and not exceed the device)", s,
				 a.target, daxfs_strerror(ret), bi ? " and the base image" : "");
		else if (ret == -EINVAL && size)
			tool_err("cannot create a filesystem of %s on %s: %s (is the size "
				 "large enough and are --buckets/--max-hosts sensible?)",
				 s, a.target, daxfs_strerror(ret));
		else
			tool_err("cannot create a filesystem on %s: %s", a.target,
				 daxfs_strerror(ret));
		base_image_free(bi);
		return MKFS_EXIT_ERROR;
	}
	if (!a.quiet)
		print_summary(&a, kind, bi ? &bs : NULL, huge_bytes);
	base_image_free(bi);
	return 0;
}
