// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs: inspect and use a DaxFS region from the command line, without a
 * mount.  Every subcommand opens the region through libdaxfs (joining the
 * host table as a short-lived host where it needs to write), does its work
 * and leaves.
 *
 * Exit status: 0 success, 1 an operation failed, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "daxfs/libdaxfs.h"
#include "daxfs/libdaxfs-ino.h"
#include "common.h"

#define IO_CHUNK	(1u << 20)
#define LS_BATCH	256u

#ifndef DT_DIR
#define DT_DIR 4
#endif

enum open_mode {
	OPEN_NONE,		/* the command does not touch a region */
	OPEN_RDONLY,		/* never join (info) */
	OPEN_READ,		/* join if possible, else read-only */
	OPEN_WRITE,		/* join (needed to write) */
};

struct cmd;

struct ctx {
	const char *region;
	struct daxfs_handle *h;
	const struct cmd *cmd;
	bool joined;
	bool mutated;		/* something was freed or changed: reclaim */
	int status;
	mode_t umask;
	const char *backing[16];	/* --backing FILE (split mode) */
	unsigned int nr_backing;
};

struct cmd {
	const char *name;
	enum open_mode open;
	int (*fn)(struct ctx *c, int argc, char **argv);
	const char *args;	/* usage line after the name */
	const char *help;	/* description and options */
};

static const struct cmd *find_cmd(const char *name);

/* ------------------------------------------------------------------ */
/* messages                                                            */
/* ------------------------------------------------------------------ */

static const char *errmsg(struct ctx *c, int err)
{
	static char buf[512];

	if (err < 0)
		err = -err;
	if (err == EUCLEAN || err == EBADMSG) {
		snprintf(buf, sizeof(buf), "filesystem structure corrupt: run fsck.daxfs %s",
			 c->region ? c->region : "REGION");
		return buf;
	}
	/* DaxFS advice where it helps, plain strerror (like coreutils) else */
	switch (err) {
	case ENOSPC:
	case EROFS:
	case ESTALE:
	case EFBIG:
	case EBUSY:
	case ETIMEDOUT:	/* split mode without --backing: say so */
		return daxfs_strerror(-err);
	default:
		return strerror(err);
	}
}

/* "daxfs: CMD: PATH: message", status 1. */
static int path_err(struct ctx *c, const char *path, int err)
{
	fflush(stdout);
	fprintf(stderr, "daxfs: %s: %s: %s\n", c->cmd->name, path, errmsg(c, err));
	c->status = 1;
	return 1;
}

static int cmd_err(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cmd_err(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(c->cmd->name, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	c->status = 1;
	return 1;
}

static int usage_err(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_err(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(c->cmd->name, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: daxfs %s %s\nTry 'daxfs %s --help' for more information.\n",
		c->cmd->name, c->cmd->args, c->cmd->name);
	exit(TOOL_EXIT_USAGE);
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	/* no vasprintf: _GNU_SOURCE makes <sys/stat.h> pull in linux/types.h,
	 * whose __u64 clashes with the typedefs in format.h */
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = n < 0 ? NULL : malloc((size_t)n + 1);
	if (!s) {
		tool_err("out of memory");
		exit(1);
	}
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* Last component of a path ("a/b/" -> "b"); a static copy. */
static const char *base_name(const char *path)
{
	static char buf[4096];
	size_t len = strlen(path);
	const char *p;

	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, path, len);
	buf[len] = '\0';
	p = strrchr(buf, '/');
	return p && p[1] ? p + 1 : buf;
}

static char *join_path(const char *dir, const char *name)
{
	size_t len = strlen(dir);

	if (len && dir[len - 1] == '/')
		return xasprintf("%s%s", dir, name);
	return xasprintf("%s/%s", dir, name);
}

static bool is_dir_path(struct ctx *c, const char *path)
{
	struct daxfs_attr st;

	return !daxfs_path_stat(c->h, path, &st) && S_ISDIR(st.mode);
}

/* dst, or dst/name when dst is a directory of the region (put, mv, ln
 * into a directory). */
static char *target_path(struct ctx *c, const char *dst, const char *name)
{
	if (is_dir_path(c, dst))
		return join_path(dst, name);
	return strdup(dst);
}

static bool is_root(const char *path)
{
	for (; *path; path++)
		if (*path != '/' && *path != '.')
			return false;
	return true;
}

/* Standard getopt loop preamble for subcommands: handles --help. */
static const struct option help_only[] = {
	{ "help", no_argument, NULL, 'H' },
	{ NULL, 0, NULL, 0 },
};

static void print_cmd_help(const struct cmd *cmd, FILE *f)
{
	fprintf(f, "Usage: daxfs [-r REGION] %s %s\n%s", cmd->name, cmd->args, cmd->help);
}

static int next_opt(struct ctx *c, int argc, char **argv, const char *opts,
		    const struct option *longopts)
{
	int ch = getopt_long(argc, argv, opts, longopts ? longopts : help_only, NULL);

	if (ch == 'H') {
		print_cmd_help(c->cmd, stdout);
		exit(0);
	}
	if (ch == '?')
		usage_err(c, "invalid option");
	return ch;
}

/* Parses the options of a subcommand whose only option is the flag
 * opts[0] ("" for none): whether it was given. */
static bool flag_opt(struct ctx *c, int argc, char **argv, const char *opts,
		     const struct option *longopts)
{
	bool set = false;
	int ch;

	while ((ch = next_opt(c, argc, argv, opts, longopts)) != -1)
		if (ch == opts[0])
			set = true;
	return set;
}

/* Usage error for a subcommand that takes no operands. */
static void no_operands(struct ctx *c, int argc, char **argv)
{
	if (optind != argc)
		usage_err(c, "unexpected argument '%s'", argv[optind]);
}

/* Usage error "missing" unless there are operands from argv[first] on. */
static void need_operands(struct ctx *c, int argc, int first, const char *missing)
{
	if (first >= argc)
		usage_err(c, "%s", missing);
}

typedef int (*operand_fn)(struct ctx *c, const char *path, const void *arg);

/* Runs fn on each operand from argv[first] on, like coreutils going on
 * after a failure: a negative errno is reported as "CMD: PATH: message"
 * and makes the exit status 1. */
static int each_operand(struct ctx *c, int argc, char **argv, int first, operand_fn fn,
			const void *arg)
{
	int i;

	for (i = first; i < argc; i++) {
		int ret = fn(c, argv[i], arg);

		if (ret < 0)
			path_err(c, argv[i], ret);
	}
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void mode_string(uint32_t mode, char *s)
{
	static const char rwx[] = "rwxrwxrwx";
	int i;

	switch (mode & S_IFMT) {
	case S_IFDIR:
		s[0] = 'd';
		break;
	case S_IFLNK:
		s[0] = 'l';
		break;
	case S_IFCHR:
		s[0] = 'c';
		break;
	case S_IFBLK:
		s[0] = 'b';
		break;
	case S_IFIFO:
		s[0] = 'p';
		break;
	case S_IFSOCK:
		s[0] = 's';
		break;
	default:
		s[0] = '-';
	}
	for (i = 0; i < 9; i++)
		s[i + 1] = (mode & (1u << (8 - i))) ? rwx[i] : '-';
	if (mode & S_ISUID)
		s[3] = (mode & S_IXUSR) ? 's' : 'S';
	if (mode & S_ISGID)
		s[6] = (mode & S_IXGRP) ? 's' : 'S';
	if (mode & S_ISVTX)
		s[9] = (mode & S_IXOTH) ? 't' : 'T';
	s[10] = '\0';
}

static const char *type_name(uint32_t mode, uint64_t size)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return size ? "regular file" : "regular empty file";
	case S_IFDIR:
		return "directory";
	case S_IFLNK:
		return "symbolic link";
	case S_IFCHR:
		return "character special file";
	case S_IFBLK:
		return "block special file";
	case S_IFIFO:
		return "fifo";
	case S_IFSOCK:
		return "socket";
	default:
		return "unknown";
	}
}

/* name, or the number id in buf when the id has no name (like ls). */
static const char *name_or_id(const char *name, uint32_t id, char *buf, size_t len)
{
	if (name)
		return name;
	snprintf(buf, len, "%u", id);
	return buf;
}

static const char *user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	return name_or_id(pw ? pw->pw_name : NULL, uid, buf, len);
}

static const char *group_name(uint32_t gid, char *buf, size_t len)
{
	struct group *gr = getgrgid(gid);

	return name_or_id(gr ? gr->gr_name : NULL, gid, buf, len);
}

static void format_time_full(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000LL);
	long frac = (long)(ns % 1000000000LL);
	struct tm tm;
	char a[32], z[16];

	if (frac < 0) {
		frac += 1000000000L;
		t--;
	}
	localtime_r(&t, &tm);
	strftime(a, sizeof(a), "%Y-%m-%d %H:%M:%S", &tm);
	strftime(z, sizeof(z), "%z", &tm);
	snprintf(buf, len, "%s.%09ld %s", a, frac, z);
}

/* ------------------------------------------------------------------ */
/* info                                                                */
/* ------------------------------------------------------------------ */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void uuid_string(const uint8_t *u, char *buf)
{
	int i, n = 0;

	for (i = 0; i < 16; i++)
		n += sprintf(buf + n, "%02x%s", u[i],
			     (i == 3 || i == 5 || i == 7 || i == 9) ? "-" : "");
}

static const char *target_kind_name(uint32_t k)
{
	switch (k) {
	case DAXFS_TARGET_BLOCK:
		return "block";
	case DAXFS_TARGET_DEVDAX:
		return "devdax";
	default:
		return "file";
	}
}

/* How this process judges a host's lease (docs/hosts.md "Leases"). */
static const char *lease_name(uint32_t lease)
{
	if (lease == DAXFS_LEASE_LIVE)
		return "live";
	if (lease == DAXFS_LEASE_EXPIRED)
		return "expired";
	return "unknown";
}

static const char *host_kind_name(uint32_t k)
{
	switch (k) {
	case DAXFS_HOST_KIND_USER:
		return "user";
	case DAXFS_HOST_KIND_KERNEL:
		return "kernel";
	default:
		return "?";
	}
}

/* The shared page cache of a split-mode filesystem (docs/pcache.md). */
static void info_cache_json(struct ctx *c)
{
	struct daxfs_cache_info ci;
	uint32_t i;

	if (daxfs_cache_info(c->h, &ci))
		return;
	printf(",\n  \"cache\": {\"slots\": %llu, \"window\": %llu, \"bytes\": %llu, "
	       "\"free\": %llu, \"pending\": %llu, \"valid\": %llu, \"evicting\": %llu, "
	       "\"requested\": %llu, \"referenced\": %llu, \"pinned_slots\": %llu, "
	       "\"pins\": %llu, \"pin_columns\": %llu, \"hand\": %llu, "
	       "\"hand_pos\": %llu, \"fills\": %llu, \"evictions\": %llu, "
	       "\"takeovers\": %llu, \"served\": %llu, \"timeouts\": %llu, "
	       "\"backing_reach\": %u, \"backing\": [",
	       (unsigned long long)ci.nr_slots, (unsigned long long)ci.window,
	       (unsigned long long)ci.cache_bytes, (unsigned long long)ci.free,
	       (unsigned long long)ci.pending, (unsigned long long)ci.valid,
	       (unsigned long long)ci.evicting, (unsigned long long)ci.requested,
	       (unsigned long long)ci.referenced, (unsigned long long)ci.pinned_slots,
	       (unsigned long long)ci.pins, (unsigned long long)ci.columns,
	       (unsigned long long)ci.hand, (unsigned long long)ci.hand_pos,
	       (unsigned long long)ci.fills, (unsigned long long)ci.evictions,
	       (unsigned long long)ci.takeovers, (unsigned long long)ci.served,
	       (unsigned long long)ci.timeouts, ci.reach);
	for (i = 0; i < ci.nr_backing && i < 16; i++) {
		printf("%s{\"index\": %u, \"size\": %llu, \"name\": ", i ? ", " : "", i,
		       (unsigned long long)ci.backing[i].size);
		json_str(ci.backing[i].name);
		printf("}");
	}
	printf("]}");
}

static void info_cache_text(struct ctx *c)
{
	struct daxfs_cache_info ci;
	char s1[32], s2[32];
	uint32_t i;

	if (daxfs_cache_info(c->h, &ci))
		return;
	format_bytes(ci.cache_bytes, s1, sizeof(s1));
	printf("\nPage cache:      %s, %llu slots, probe window %llu\n", s1,
	       (unsigned long long)ci.nr_slots, (unsigned long long)ci.window);
	printf("  occupancy:     %llu valid (%.1f%%, %llu referenced), %llu free\n",
	       (unsigned long long)ci.valid,
	       ci.nr_slots ? 100.0 * (double)ci.valid / (double)ci.nr_slots : 0.0,
	       (unsigned long long)ci.referenced, (unsigned long long)ci.free);
	printf("  in flight:     %llu pending (%llu requested by hosts without backing "
	       "access), %llu evicting\n", (unsigned long long)ci.pending,
	       (unsigned long long)ci.requested, (unsigned long long)ci.evicting);
	printf("  pinned:        %llu slots, %llu pins, %llu hosts with pin columns\n",
	       (unsigned long long)ci.pinned_slots, (unsigned long long)ci.pins,
	       (unsigned long long)ci.columns);
	printf("  sweep hand:    slot %llu (%llu slots swept)\n",
	       (unsigned long long)ci.hand_pos, (unsigned long long)ci.hand);
	printf("  totals:        %llu fills, %llu evictions, %llu takeovers, %llu served, "
	       "%llu timeouts\n", (unsigned long long)ci.fills,
	       (unsigned long long)ci.evictions, (unsigned long long)ci.takeovers,
	       (unsigned long long)ci.served, (unsigned long long)ci.timeouts);
	for (i = 0; i < ci.nr_backing && i < 16; i++) {
		format_bytes(ci.backing[i].size, s2, sizeof(s2));
		printf("  backing %-2u     %s, %s (%s here)\n", i, ci.backing[i].name, s2,
		       (ci.reach >> i) & 1 ? "open" : "not open");
	}
}

static void info_json(struct ctx *c, const struct daxfs_info *in)
{
	char uuid[40];
	uint32_t i;

	uuid_string(in->uuid, uuid);
	printf("{\n  \"region\": ");
	json_str(c->region);
	printf(",\n  \"target_kind\": \"%s\",\n", target_kind_name(in->target_kind));
	printf("  \"version\": %u,\n  \"label\": ", in->version);
	json_str(in->label);
	printf(",\n  \"uuid\": \"%s\",\n", uuid);
	printf("  \"created_ns\": %lld,\n", (long long)in->created_ns);
	printf("  \"features\": {\"compat\": %u, \"incompat\": %u, \"ro_compat\": %u},\n",
	       in->feat_compat, in->feat_incompat, in->feat_ro_compat);
	printf("  \"block_size\": %u,\n", in->block_size);
	printf("  \"total_size\": %llu,\n  \"mapped_size\": %llu,\n",
	       (unsigned long long)in->total_size, (unsigned long long)in->mapped_size);
	printf("  \"root_ino\": %llu,\n  \"first_dyn_ino\": %llu,\n",
	       (unsigned long long)in->root_ino, (unsigned long long)in->first_dyn_ino);
	printf("  \"regions\": [");
	for (i = 0; i < in->nr_regions && i < DAXFS_RGN_MAX; i++) {
		const struct daxfs_info_region *r = &in->regions[i];

		printf("%s\n    {\"name\": \"%s\", \"kind\": %u, \"offset\": %llu, "
		       "\"size\": %llu}", i ? "," : "", r->name ? r->name : "?", r->kind,
		       (unsigned long long)r->offset, (unsigned long long)r->size);
	}
	printf("\n  ],\n");
	printf("  \"overlay\": {\"buckets\": %llu, \"used\": %llu, \"tombstones\": %llu, "
	       "\"pending\": %llu, \"probe_window\": %u},\n",
	       (unsigned long long)in->nr_buckets, (unsigned long long)in->used_buckets,
	       (unsigned long long)in->tomb_buckets, (unsigned long long)in->pending_buckets,
	       in->probe_window);
	printf("  \"pool\": {\"size\": %llu, \"used\": %llu, \"free\": %llu, "
	       "\"bump\": %llu},\n",
	       (unsigned long long)in->pool_bytes, (unsigned long long)in->used_bytes,
	       (unsigned long long)in->free_bytes, (unsigned long long)in->bump_bytes);
	printf("  \"epoch\": %llu,\n  \"next_ino\": %llu,\n  \"inodes\": %llu,\n",
	       (unsigned long long)in->epoch, (unsigned long long)in->next_ino,
	       (unsigned long long)in->inodes);
	printf("  \"stats\": {\"cas_fail\": %llu, \"inserts\": %llu},\n",
	       (unsigned long long)in->stat_cas_fail, (unsigned long long)in->stat_inserts);
	printf("  \"rename_claim\": %llu,\n", (unsigned long long)in->rename_claim);
	printf("  \"max_hosts\": %u,\n  \"lease_ms\": %u,\n", in->max_hosts, in->lease_ms);
	if (in->self_slot == DAXFS_NO_HOST)
		printf("  \"self_slot\": null,\n");
	else
		printf("  \"self_slot\": %u,\n", in->self_slot);
	printf("  \"hosts\": [");
	for (i = 0; i < in->nr_hosts && i < DAXFS_MAX_HOSTS; i++) {
		const struct daxfs_info_host *hs = &in->hosts[i];
		int64_t age = hs->lease_age_ns;
		bool expired = hs->expired;

		printf("%s\n    {\"slot\": %u, \"state\": ", i ? "," : "", hs->slot);
		json_str(daxfs_host_state_name(hs->state));
		printf(", \"gen\": %llu, \"name\": ", (unsigned long long)hs->gen);
		json_str(hs->name);
		printf(", \"pid\": %u, \"kind\": \"%s\", \"lease_age_ms\": %lld, "
		       "\"lease\": \"%s\", "
		       "\"expired\": %s, \"joined_ns\": %lld, \"ops\": %llu, "
		       "\"busy_lanes\": %u, \"open_files\": %u, \"self\": %s, "
		       "\"recovered_ns\": %lld, \"recovered_by\": ",
		       hs->pid, host_kind_name(hs->kind), (long long)(age / 1000000),
		       lease_name(hs->lease),
		       expired && hs->state == DAXFS_HOST_ALIVE ? "true" : "false",
		       (long long)hs->joined_ns,
		       (unsigned long long)hs->ops, hs->busy_lanes, hs->open_files,
		       hs->self ? "true" : "false", (long long)hs->recovered_ns);
		if (hs->recovered_by)
			printf("%u}", hs->recovered_by - 1);
		else
			printf("null}");
	}
	printf("%s]", in->nr_hosts ? "\n  " : "");
	info_cache_json(c);
	printf("\n}\n");
}

static void info_text(struct ctx *c, const struct daxfs_info *in)
{
	char uuid[40], s1[32], s2[32], s3[32], tbuf[96];
	bool any_expired = false;
	uint32_t i;

	uuid_string(in->uuid, uuid);
	format_bytes(in->total_size, s1, sizeof(s1));
	printf("Region:          %s (%s)\n", c->region, target_kind_name(in->target_kind));
	printf("Size:            %s (%llu bytes; %llu mapped)\n", s1,
	       (unsigned long long)in->total_size, (unsigned long long)in->mapped_size);
	printf("Label:           %s\n", in->label[0] ? in->label : "(none)");
	printf("UUID:            %s\n", uuid);
	format_time_full(in->created_ns, tbuf, sizeof(tbuf));
	printf("Created:         %s\n", tbuf);
	printf("Format version:  %u (features: compat 0x%x, incompat 0x%x%s%s%s%s, "
	       "ro_compat 0x%x)\n", in->version, in->feat_compat, in->feat_incompat,
	       (in->feat_incompat & DAXFS_FEAT_INCOMPAT_BASE) ? " base" : "",
	       (in->feat_incompat & DAXFS_FEAT_INCOMPAT_OVERLAY) ? " overlay" : "",
	       (in->feat_incompat & DAXFS_FEAT_INCOMPAT_PCACHE) ? " pcache" : "",
	       (in->feat_incompat & DAXFS_FEAT_INCOMPAT_OPEN_SETS) ? " open-sets" : "",
	       in->feat_ro_compat);
	printf("Block size:      %u\n", in->block_size);
	if (in->feat_incompat & DAXFS_FEAT_INCOMPAT_BASE)
		printf("Root inode:      %llu (base image: %llu inodes)\n",
		       (unsigned long long)in->root_ino,
		       (unsigned long long)(in->first_dyn_ino ? in->first_dyn_ino - 1 : 0));
	else
		printf("Root inode:      %llu (no base image)\n",
		       (unsigned long long)in->root_ino);
	printf("\nLayout:\n  %-10s %14s %14s\n", "region", "offset", "size");
	printf("  %-10s %14s %14s\n", "super", "0", "4096");
	for (i = 0; i < in->nr_regions && i < DAXFS_RGN_MAX; i++) {
		const struct daxfs_info_region *r = &in->regions[i];

		format_bytes(r->size, s1, sizeof(s1));
		printf("  %-10s %14llu %14llu  (%s)\n", r->name ? r->name : "?",
		       (unsigned long long)r->offset, (unsigned long long)r->size, s1);
	}
	format_bytes(in->pool_bytes, s1, sizeof(s1));
	format_bytes(in->used_bytes, s2, sizeof(s2));
	format_bytes(in->free_bytes, s3, sizeof(s3));
	printf("\nPool:            %s, %s used, %s free\n", s1, s2, s3);
	printf("Overlay:         %llu buckets, %llu used, %llu tombstones, %llu pending "
	       "(probe window %u)\n",
	       (unsigned long long)in->nr_buckets, (unsigned long long)in->used_buckets,
	       (unsigned long long)in->tomb_buckets, (unsigned long long)in->pending_buckets,
	       in->probe_window);
	printf("Inodes:          %llu in use, next dynamic inode %llu\n",
	       (unsigned long long)in->inodes, (unsigned long long)in->next_ino);
	printf("Epoch:           %llu\n", (unsigned long long)in->epoch);
	printf("Rename claim:    %s\n", in->rename_claim ? "held" : "free");
	printf("CAS failures:    %llu (of %llu overlay inserts)\n",
	       (unsigned long long)in->stat_cas_fail, (unsigned long long)in->stat_inserts);
	printf("\nHosts:           %u of %u slots in use, lease %u ms\n", in->nr_hosts,
	       in->max_hosts, in->lease_ms);
	if (!in->nr_hosts)
		return;
	printf("  %4s %-10s %6s %8s %-6s %12s %10s %5s  %s\n", "slot", "state", "gen", "pid",
	       "kind", "lease age", "ops", "busy", "name");
	for (i = 0; i < in->nr_hosts && i < DAXFS_MAX_HOSTS; i++) {
		const struct daxfs_info_host *hs = &in->hosts[i];
		bool expired = hs->expired;

		any_expired |= expired && hs->state == DAXFS_HOST_ALIVE;
		if (hs->state == DAXFS_INFO_HOST_RECOVERED)
			snprintf(s1, sizeof(s1), "-");
		else if (hs->lease == DAXFS_LEASE_UNKNOWN)
			snprintf(s1, sizeof(s1), "?");
		else
			snprintf(s1, sizeof(s1), "%.1fs%s", hs->lease_age_ns / 1e9,
				 expired && hs->state == DAXFS_HOST_ALIVE ? "!" : "");
		printf("  %4u %-10s %6llu %8u %-6s %12s %10llu %5u  %s%s\n", hs->slot,
		       daxfs_host_state_name(hs->state), (unsigned long long)hs->gen,
		       hs->pid, host_kind_name(hs->kind), s1, (unsigned long long)hs->ops,
		       hs->busy_lanes, hs->name, hs->self ? " (this process)" : "");
		if (hs->open_files)
			printf("       %u open file(s) (kept if unlinked until closed)\n",
			       hs->open_files);
		if (hs->state == DAXFS_INFO_HOST_RECOVERED && hs->recovered_ns) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			printf("       recovered %.1fs ago", ((int64_t)ts.tv_sec * 1000000000LL +
			       ts.tv_nsec - hs->recovered_ns) / 1e9);
			if (hs->recovered_by)
				printf(" by slot %u", hs->recovered_by - 1);
			printf("\n");
		}
	}
	if (any_expired)
		printf("  ('!': lease expired: the host is gone or stalled; another host "
		       "recovers it when it needs the slot or its epoch)\n");
}

static int cmd_info(struct ctx *c, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", no_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct daxfs_info *in;
	bool json = false, watch = false;
	int ret, ch;

	while ((ch = next_opt(c, argc, argv, "jw", longopts)) != -1) {
		if (ch == 'j')
			json = true;
		else if (ch == 'w')
			watch = true;
	}
	no_operands(c, argc, argv);
	/* times the other hosts' heartbeats with our own clock first */
	if (watch)
		daxfs_region_watch_hosts(c->h);
	in = calloc(1, sizeof(*in));
	if (!in)
		return cmd_err(c, "out of memory");
	ret = daxfs_info(c->h, in);
	if (ret) {
		free(in);
		return path_err(c, c->region, ret);
	}
	if (json) {
		info_json(c, in);
	} else {
		info_text(c, in);
		info_cache_text(c);
	}
	free(in);
	return 0;
}

/* ------------------------------------------------------------------ */
/* ls, stat                                                            */
/* ------------------------------------------------------------------ */

struct ls_ent {
	char *name;
	uint64_t ino;
	uint32_t dtype;
	struct daxfs_attr st;
	bool have_st;
	char *target;		/* symlinks with -l */
};

struct ls_opts {
	bool all, longfmt, dir_only, inode;
};

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct ls_ent *)a)->name, ((const struct ls_ent *)b)->name);
}

static void ls_print(struct ls_ent *e, size_t n, const struct ls_opts *o, bool total)
{
	int wl = 1, wu = 1, wg = 1, ws = 1, wi = 1;
	char ub[16], gb[16], sz[48];
	time_t now = time(NULL);
	uint64_t blocks = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		int w;

		if (o->inode) {
			w = snprintf(NULL, 0, "%llu", (unsigned long long)e[i].ino);
			wi = w > wi ? w : wi;
		}
		if (!o->longfmt || !e[i].have_st)
			continue;
		blocks += e[i].st.blocks * 4;
		w = snprintf(NULL, 0, "%u", e[i].st.nlink);
		wl = w > wl ? w : wl;
		w = (int)strlen(user_name(e[i].st.uid, ub, sizeof(ub)));
		wu = w > wu ? w : wu;
		w = (int)strlen(group_name(e[i].st.gid, gb, sizeof(gb)));
		wg = w > wg ? w : wg;
		if (S_ISCHR(e[i].st.mode) || S_ISBLK(e[i].st.mode)) {
			dev_t d = daxfs_decode_dev(e[i].st.rdev);

			w = snprintf(NULL, 0, "%u, %u", major(d), minor(d));
		} else {
			w = snprintf(NULL, 0, "%llu", (unsigned long long)e[i].st.size);
		}
		ws = w > ws ? w : ws;
	}
	if (o->longfmt && total)
		printf("total %llu\n", (unsigned long long)blocks);
	for (i = 0; i < n; i++) {
		char ms[12], tb[32];
		struct tm tm;
		time_t t;

		if (o->inode)
			printf("%*llu ", wi, (unsigned long long)e[i].ino);
		if (!o->longfmt) {
			printf("%s\n", e[i].name);
			continue;
		}
		if (!e[i].have_st) {
			printf("?????????? ? ? ? ? ? %s\n", e[i].name);
			continue;
		}
		mode_string(e[i].st.mode, ms);
		if (S_ISCHR(e[i].st.mode) || S_ISBLK(e[i].st.mode)) {
			dev_t d = daxfs_decode_dev(e[i].st.rdev);

			snprintf(sz, sizeof(sz), "%u, %u", major(d), minor(d));
		} else {
			snprintf(sz, sizeof(sz), "%llu", (unsigned long long)e[i].st.size);
		}
		t = (time_t)(e[i].st.mtime_ns / 1000000000LL);
		localtime_r(&t, &tm);
		if (t > now - 182 * 24 * 3600 && t <= now + 3600)
			strftime(tb, sizeof(tb), "%b %e %H:%M", &tm);
		else
			strftime(tb, sizeof(tb), "%b %e  %Y", &tm);
		printf("%s %*u %-*s %-*s %*s %s %s", ms, wl, e[i].st.nlink, wu,
		       user_name(e[i].st.uid, ub, sizeof(ub)), wg,
		       group_name(e[i].st.gid, gb, sizeof(gb)), ws, sz, tb, e[i].name);
		if (e[i].target)
			printf(" -> %s", e[i].target);
		putchar('\n');
	}
}

static void ls_fill(struct ctx *c, struct ls_ent *e, const char *path, const struct ls_opts *o)
{
	if (!o->longfmt)
		return;
	if (daxfs_fstat(c->h, e->ino, &e->st))
		return;
	e->have_st = true;
	if (S_ISLNK(e->st.mode)) {
		char buf[DAXFS_SYMLINK_MAX + 1];
		int n = daxfs_path_readlink(c->h, path, buf, sizeof(buf));

		if (n >= 0) {
			buf[(size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1] = '\0';
			e->target = strdup(buf);
		}
	}
}

static void ls_free(struct ls_ent *e, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(e[i].name);
		free(e[i].target);
	}
	free(e);
}

/* Reads a whole directory into an array (names sorted). */
/* The entries of directory path, or of directory number dir when path is
 * NULL (no path length limit: rm -r of a tree deeper than PATH_MAX). */
static int read_dir(struct ctx *c, const char *path, uint64_t dir, bool all,
		    struct ls_ent **out, size_t *nout)
{
	struct daxfs_dirent_info *batch;
	struct ls_ent *e = NULL;
	size_t n = 0, cap = 0;
	uint64_t pos = 0, next;
	int ret = 0, i;

	batch = calloc(LS_BATCH, sizeof(*batch));
	if (!batch)
		return -ENOMEM;
	for (;;) {
		ret = path ? daxfs_path_readdir_chunk(c->h, path, pos, batch,
						      LS_BATCH, &next)
			   : daxfs_readdir_chunk(c->h, dir, pos, batch, LS_BATCH,
						 &next);
		if (ret < 0)
			break;
		for (i = 0; i < ret; i++) {
			if (!all && batch[i].name[0] == '.')
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				e = realloc(e, cap * sizeof(*e));
				if (!e) {
					free(batch);
					return -ENOMEM;
				}
			}
			memset(&e[n], 0, sizeof(e[n]));
			e[n].name = strdup(batch[i].name);
			e[n].ino = batch[i].ino;
			e[n].dtype = batch[i].dtype;
			n++;
		}
		if (next == DAXFS_POS_EOF || (ret == 0 && next == pos))
			break;
		pos = next;
		ret = 0;
	}
	free(batch);
	if (ret < 0) {
		ls_free(e, n);
		return ret;
	}
	if (n)
		qsort(e, n, sizeof(*e), cmp_ent);
	*out = e;
	*nout = n;
	return 0;
}

static int ls_dir(struct ctx *c, const char *path, const struct daxfs_attr *dst,
		  const struct ls_opts *o)
{
	struct ls_ent *e = NULL, *all;
	size_t n = 0, i, extra = 0;
	int ret;

	ret = read_dir(c, path, 0, o->all, &e, &n);
	if (ret)
		return path_err(c, path, ret);
	all = calloc(n + 2, sizeof(*all));
	if (!all) {
		ls_free(e, n);
		return cmd_err(c, "out of memory");
	}
	if (o->all) {
		struct daxfs_attr pst;
		char *pp = join_path(path, "..");

		all[0].name = strdup(".");
		all[0].ino = dst->ino;
		all[0].st = *dst;
		all[0].have_st = true;
		all[1].name = strdup("..");
		if (!daxfs_path_stat(c->h, pp, &pst)) {
			all[1].ino = pst.ino;
			all[1].st = pst;
			all[1].have_st = true;
		}
		free(pp);
		extra = 2;
	}
	for (i = 0; i < n; i++) {
		char *cp = join_path(path, e[i].name);

		all[extra + i] = e[i];
		ls_fill(c, &all[extra + i], cp, o);
		free(cp);
	}
	free(e);
	ls_print(all, n + extra, o, true);
	ls_free(all, n + extra);
	return 0;
}

static int cmd_ls(struct ctx *c, int argc, char **argv)
{
	struct ls_opts o = { 0 };
	struct ls_ent *files;
	const char *def[] = { "/" };
	char **paths;
	int ch, np, i, nf = 0, ndirs = 0;
	bool first = true;

	while ((ch = next_opt(c, argc, argv, "lAadi1", NULL)) != -1) {
		switch (ch) {
		case 'l':
			o.longfmt = true;
			break;
		case 'a':
		case 'A':
			o.all = true;
			break;
		case 'd':
			o.dir_only = true;
			break;
		case 'i':
			o.inode = true;
			break;
		default:
			break;
		}
	}
	paths = argv + optind;
	np = argc - optind;
	if (!np) {
		paths = (char **)def;
		np = 1;
	}
	files = calloc((size_t)np, sizeof(*files));
	if (!files)
		return cmd_err(c, "out of memory");
	/* operands that are not directories first, like ls */
	for (i = 0; i < np; i++) {
		struct daxfs_attr st;
		int ret = o.longfmt ? daxfs_path_lstat(c->h, paths[i], &st)
				    : daxfs_path_stat(c->h, paths[i], &st);

		if (!ret && o.longfmt && S_ISLNK(st.mode) && !o.dir_only) {
			struct daxfs_attr t;

			/* ls -l DIRLINK lists the link itself unless it ends in / */
			if (paths[i][strlen(paths[i]) - 1] == '/' &&
			    !daxfs_path_stat(c->h, paths[i], &t))
				st = t;
		}
		if (ret) {
			path_err(c, paths[i], ret);
			continue;
		}
		if (S_ISDIR(st.mode) && !o.dir_only) {
			ndirs++;
			continue;
		}
		files[nf].name = strdup(paths[i]);
		files[nf].ino = st.ino;
		ls_fill(c, &files[nf], paths[i], &o);
		nf++;
	}
	if (nf) {
		qsort(files, (size_t)nf, sizeof(*files), cmp_ent);
		ls_print(files, (size_t)nf, &o, false);
		first = false;
	}
	ls_free(files, (size_t)nf);
	if (!ndirs)
		return 0;
	for (i = 0; i < np; i++) {
		struct daxfs_attr st;

		if (daxfs_path_stat(c->h, paths[i], &st) || !S_ISDIR(st.mode) || o.dir_only)
			continue;
		if (o.longfmt) {
			struct daxfs_attr lst;

			if (!daxfs_path_lstat(c->h, paths[i], &lst) && S_ISLNK(lst.mode) &&
			    paths[i][strlen(paths[i]) - 1] != '/')
				continue;
		}
		if (np > 1) {
			printf("%s%s:\n", first ? "" : "\n", paths[i]);
			first = false;
		}
		ls_dir(c, paths[i], &st, &o);
	}
	return 0;
}

static int stat_one(struct ctx *c, const char *path, const void *follow)
{
	struct daxfs_attr st;
	char ms[12], ub[16], gb[16], tb[96], target[DAXFS_SYMLINK_MAX + 1];
	int ret = *(const bool *)follow ? daxfs_path_stat(c->h, path, &st)
					: daxfs_path_lstat(c->h, path, &st);

	if (ret)
		return ret;
	if (S_ISLNK(st.mode)) {
		int n = daxfs_path_readlink(c->h, path, target, sizeof(target));

		if (n < 0)
			n = 0;
		target[(size_t)n < sizeof(target) ? (size_t)n : sizeof(target) - 1] = '\0';
		printf("  File: %s -> %s\n", path, target);
	} else {
		printf("  File: %s\n", path);
	}
	printf("  Size: %-15llu Blocks: %-10llu IO Block: %-6u %s\n",
	       (unsigned long long)st.size, (unsigned long long)st.blocks * 8,
	       DAXFS_BLOCK_SIZE, type_name(st.mode, st.size));
	printf("Device: %s\tInode: %-11llu Links: %u", "daxfs",
	       (unsigned long long)st.ino, st.nlink);
	if (S_ISCHR(st.mode) || S_ISBLK(st.mode)) {
		dev_t d = daxfs_decode_dev(st.rdev);

		printf("\tDevice type: %u,%u", major(d), minor(d));
	}
	putchar('\n');
	mode_string(st.mode, ms);
	printf("Access: (%04o/%s)  Uid: (%5u/%8s)   Gid: (%5u/%8s)\n",
	       st.mode & 07777, ms, st.uid, user_name(st.uid, ub, sizeof(ub)),
	       st.gid, group_name(st.gid, gb, sizeof(gb)));
	format_time_full(st.atime_ns, tb, sizeof(tb));
	printf("Access: %s\n", tb);
	format_time_full(st.mtime_ns, tb, sizeof(tb));
	printf("Modify: %s\n", tb);
	format_time_full(st.ctime_ns, tb, sizeof(tb));
	printf("Change: %s\n", tb);
	printf(" Birth: -\n");
	return 0;
}

static int cmd_stat(struct ctx *c, int argc, char **argv)
{
	bool follow = flag_opt(c, argc, argv, "L", NULL);

	need_operands(c, argc, optind, "missing operand");
	return each_operand(c, argc, argv, optind, stat_one, &follow);
}

static int readlink_one(struct ctx *c, const char *path, const void *arg)
{
	char buf[DAXFS_SYMLINK_MAX + 1];
	int n = daxfs_path_readlink(c->h, path, buf, sizeof(buf));

	if (n < 0)
		return n;
	buf[(size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1] = '\0';
	printf("%s\n", buf);
	return 0;
}

static int cmd_readlink(struct ctx *c, int argc, char **argv)
{
	flag_opt(c, argc, argv, "", NULL);
	need_operands(c, argc, optind, "missing operand");
	return each_operand(c, argc, argv, optind, readlink_one, NULL);
}

/* ------------------------------------------------------------------ */
/* data: cat, get, put, write, truncate                                 */
/* ------------------------------------------------------------------ */

/* Copies file ino of the region to fd.  Returns 0 or -errno; *where tells
 * which side failed ("read"/"write"). */
static int copy_out(struct ctx *c, uint64_t ino, int fd, const char **where)
{
	char *buf = malloc(IO_CHUNK);
	uint64_t off = 0;
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		int64_t n = daxfs_pread(c->h, ino, buf, IO_CHUNK, off);

		if (n < 0) {
			*where = "read";
			ret = (int)n;
			break;
		}
		if (n == 0)
			break;
		ret = write_all(fd, buf, (size_t)n);
		if (ret) {
			*where = "write";
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	return ret;
}

/*
 * Writes all len bytes of buf at off (or appending).  daxfs_pwrite and
 * daxfs_append return a short count when the region fills part way: the
 * rest is retried, and a retry that writes nothing is the error (-ENOSPC),
 * never taken as done.  *done receives the bytes written.
 */
static int write_chunk(struct ctx *c, uint64_t ino, const char *buf, size_t len,
		       uint64_t off, bool append, uint64_t *done)
{
	*done = 0;
	while (*done < len) {
		int64_t w = append ? daxfs_append(c->h, ino, buf + *done, len - *done, NULL)
				   : daxfs_pwrite(c->h, ino, buf + *done, len - *done,
						  off + *done);

		if (w < 0)
			return (int)w;
		if (w == 0)
			return -ENOSPC;
		*done += (uint64_t)w;
	}
	return 0;
}

/* Copies fd to file ino of the region at offset 0 (or appending).
 * *copied receives the bytes that reached the region. */
static int copy_in(struct ctx *c, uint64_t ino, int fd, bool append,
		   const char **where, uint64_t *copied)
{
	char *buf = malloc(IO_CHUNK);
	uint64_t off = 0;
	int ret = 0;

	*copied = 0;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf, IO_CHUNK);
		uint64_t done;
		size_t got;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			*where = "read";
			ret = -errno;
			break;
		}
		if (n == 0)
			break;
		got = (size_t)n;
		/* fill the chunk so that writes are large */
		while (got < IO_CHUNK) {
			n = read(fd, buf + got, IO_CHUNK - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		ret = write_chunk(c, ino, buf, got, off, append, &done);
		off += done;
		if (ret) {
			*where = "write";
			break;
		}
		if (n < 0) {
			*where = "read";
			ret = -errno;
			break;
		}
	}
	*copied = off;
	free(buf);
	return ret;
}

/* dst's directory part ("a/b" -> "a/", "b" -> ""), malloc'd. */
static char *dir_part(const char *dst)
{
	const char *slash = strrchr(dst, '/');
	size_t len = slash ? (size_t)(slash - dst) + 1 : 0;
	char *d = malloc(len + 1);

	if (!d) {
		tool_err("out of memory");
		exit(1);
	}
	memcpy(d, dst, len);
	d[len] = '\0';
	return d;
}

/*
 * Stores fd as dst, whole or not at all.  The bytes go to a hidden name
 * in dst's directory that is renamed over dst only once every byte is
 * in, so that no host ever sees a partial dst and a failed copy (region
 * full, read error) leaves dst as it was.  The new file keeps an existing
 * dst's mode and owner.  A dst that is a symlink or has other hard links
 * cannot be replaced by a rename without breaking them: it is truncated
 * and written in place, and on failure truncated back to empty, so that
 * what remains cannot pass for the whole file.
 */
static int store_file(struct ctx *c, const char *dst, int fd, uint32_t mode,
		      const char *src_name)
{
	const char *where = "read";
	struct daxfs_attr old;
	uint64_t ino, copied;
	char *dir, *tmp;
	bool exists, in_place;
	int ret;

	exists = !daxfs_path_lstat(c->h, dst, &old);
	in_place = exists && (!S_ISREG(old.mode) || old.nlink > 1);
	if (exists && S_ISREG(old.mode))
		mode = old.mode & 07777;
	c->mutated = true;
	if (in_place) {
		ret = daxfs_path_create(c->h, dst, mode, DAXFS_CREATE_TRUNC, &ino);
		if (ret < 0)
			return path_err(c, dst, ret);
		ret = copy_in(c, ino, fd, false, &where, &copied);
		if (!ret)
			return 0;
		daxfs_ftruncate(c->h, ino, 0);
		path_err(c, strcmp(where, "read") ? dst : src_name, ret);
		fprintf(stderr, "daxfs: %s: %s: left empty (%llu bytes had been copied)\n",
			c->cmd->name, dst, (unsigned long long)copied);
		return 1;
	}
	dir = dir_part(dst);
	tmp = xasprintf("%s.%.200s.daxfs-%ld", dir, base_name(dst), (long)getpid());
	free(dir);
	ret = daxfs_path_create(c->h, tmp, mode, DAXFS_CREATE_EXCL, &ino);
	if (ret < 0) {
		path_err(c, dst, ret);
		goto out;
	}
	if (exists)
		daxfs_path_chown(c->h, tmp, old.uid, old.gid);
	ret = copy_in(c, ino, fd, false, &where, &copied);
	if (!ret)
		ret = daxfs_path_rename(c->h, tmp, dst, 0);
	if (ret) {
		path_err(c, strcmp(where, "read") ? dst : src_name, ret);
		daxfs_path_unlink(c->h, tmp);
	}
out:
	free(tmp);
	return ret ? 1 : 0;
}

static int cmd_cat(struct ctx *c, int argc, char **argv)
{
	int i;

	flag_opt(c, argc, argv, "", NULL);
	need_operands(c, argc, optind, "missing operand");
	for (i = optind; i < argc; i++) {
		struct daxfs_attr st;
		const char *where = "read";
		int ret = daxfs_path_stat(c->h, argv[i], &st);

		if (!ret && S_ISDIR(st.mode))
			ret = -EISDIR;
		if (!ret)
			ret = copy_out(c, st.ino, STDOUT_FILENO, &where);
		if (ret && !strcmp(where, "write")) {
			if (ret == -EPIPE)
				exit(1);
			return cmd_err(c, "write error: %s", strerror(-ret));
		}
		if (ret)
			path_err(c, argv[i], ret);
	}
	return 0;
}

static int cmd_get(struct ctx *c, int argc, char **argv)
{
	struct daxfs_attr st;
	const char *src, *where = "read";
	char *local;
	struct stat lst;
	int fd, ret;

	flag_opt(c, argc, argv, "", NULL);
	if (argc - optind != 2)
		usage_err(c, "expected PATH and LOCAL");
	src = argv[optind];
	ret = daxfs_path_stat(c->h, src, &st);
	if (!ret && S_ISDIR(st.mode))
		ret = -EISDIR;
	if (ret)
		return path_err(c, src, ret);
	if (!strcmp(argv[optind + 1], "-")) {
		ret = copy_out(c, st.ino, STDOUT_FILENO, &where);
		if (ret)
			return path_err(c, strcmp(where, "read") ? "stdout" : src, ret);
		return 0;
	}
	if (!stat(argv[optind + 1], &lst) && S_ISDIR(lst.st_mode))
		local = join_path(argv[optind + 1], base_name(src));
	else
		local = strdup(argv[optind + 1]);
	fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.mode & 0777);
	if (fd < 0) {
		ret = -errno;
		path_err(c, local, ret);
		free(local);
		return 1;
	}
	ret = copy_out(c, st.ino, fd, &where);
	if (close(fd) && !ret) {
		ret = -errno;
		where = "write";
	}
	if (ret)
		path_err(c, strcmp(where, "read") ? local : src, ret);
	free(local);
	return ret ? 1 : 0;
}

static int cmd_put(struct ctx *c, int argc, char **argv)
{
	const char *lsrc;
	char *dst;
	struct stat lst;
	uint32_t mode;
	int fd, ret;

	flag_opt(c, argc, argv, "", NULL);
	if (argc - optind != 2)
		usage_err(c, "expected LOCAL and PATH");
	lsrc = argv[optind];
	if (!strcmp(lsrc, "-")) {
		fd = STDIN_FILENO;
		mode = 0666 & ~c->umask;
	} else {
		fd = open(lsrc, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return path_err(c, lsrc, -errno);
		if (fstat(fd, &lst) == 0 && S_ISDIR(lst.st_mode)) {
			close(fd);
			return path_err(c, lsrc, -EISDIR);
		}
		mode = lst.st_mode & 07777;
	}
	dst = target_path(c, argv[optind + 1], strcmp(lsrc, "-") ? base_name(lsrc) : "stdin");
	ret = store_file(c, dst, fd, mode, strcmp(lsrc, "-") ? lsrc : "stdin");
	if (fd != STDIN_FILENO)
		close(fd);
	free(dst);
	return ret;
}

static int cmd_write(struct ctx *c, int argc, char **argv)
{
	const char *where = "read";
	bool append = flag_opt(c, argc, argv, "a", NULL);
	uint64_t ino, copied;
	int ret;

	if (argc - optind != 1)
		usage_err(c, "expected one PATH");
	if (!append)
		return store_file(c, argv[optind], STDIN_FILENO, 0666 & ~c->umask, "stdin");
	ret = daxfs_path_create(c->h, argv[optind], 0666 & ~c->umask, 0, &ino);
	c->mutated = true;
	if (ret < 0)
		return path_err(c, argv[optind], ret);
	ret = copy_in(c, ino, STDIN_FILENO, true, &where, &copied);
	if (!ret)
		return 0;
	path_err(c, strcmp(where, "read") ? argv[optind] : "stdin", ret);
	/* appended bytes cannot be taken back: another host may have
	 * appended after them.  Say how much of the input is in. */
	if (copied)
		fprintf(stderr, "daxfs: %s: %s: only the first %llu bytes of the input were appended\n",
			c->cmd->name, argv[optind], (unsigned long long)copied);
	return 1;
}

struct truncate_args {
	uint64_t size;
	bool no_create;
};

static int truncate_one(struct ctx *c, const char *path, const void *arg)
{
	const struct truncate_args *ta = arg;
	int ret = daxfs_path_truncate(c->h, path, ta->size);

	if (ret == -ENOENT && !ta->no_create) {
		ret = daxfs_path_create(c->h, path, 0666 & ~c->umask, 0, NULL);
		if (ret >= 0)
			ret = daxfs_path_truncate(c->h, path, ta->size);
	} else if (ret == -ENOENT) {
		ret = 0;
	}
	return ret;
}

static int cmd_truncate(struct ctx *c, int argc, char **argv)
{
	struct truncate_args ta = { 0, false };
	bool have = false;
	const char *why;
	int ch;

	while ((ch = next_opt(c, argc, argv, "s:c", NULL)) != -1) {
		if (ch == 'c') {
			ta.no_create = true;
		} else if (ch == 's') {
			if (parse_size(optarg, &ta.size, &why))
				usage_err(c, "invalid size '%s': %s", optarg, why);
			have = true;
		}
	}
	if (!have)
		usage_err(c, "you must specify -s SIZE");
	need_operands(c, argc, optind, "missing file operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, truncate_one, &ta);
}

struct falloc_args {
	int mode;
	uint64_t off, len;
};

static int falloc_one(struct ctx *c, const char *path, const void *arg)
{
	const struct falloc_args *fa = arg;
	uint64_t ino;
	int ret = daxfs_path_resolve(c->h, path, 1, &ino);

	/* as fallocate(1), which opens with O_CREAT */
	if (ret == -ENOENT)
		ret = daxfs_path_create(c->h, path, 0666 & ~c->umask, 0, &ino);
	if (ret < 0)
		return ret;
	return daxfs_file_fallocate(c->h, ino, fa->mode, fa->off, fa->len);
}

/* fallocate(1)'s options: -n keep size, -p punch (keeps size), -z zero */
static int cmd_fallocate(struct ctx *c, int argc, char **argv)
{
	struct falloc_args fa = { 0, 0, 0 };
	bool have = false;
	const char *why;
	int ch;

	while ((ch = next_opt(c, argc, argv, "npzo:l:", NULL)) != -1) {
		if (ch == 'n')
			fa.mode |= DAXFS_FALLOC_KEEP_SIZE;
		else if (ch == 'p')
			fa.mode |= DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE;
		else if (ch == 'z')
			fa.mode |= DAXFS_FALLOC_ZERO_RANGE;
		else if (parse_size(optarg, ch == 'o' ? &fa.off : &fa.len, &why))
			usage_err(c, "invalid %s '%s': %s",
				  ch == 'o' ? "offset" : "length", optarg, why);
		else if (ch == 'l')
			have = true;
	}
	if (!have)
		usage_err(c, "you must specify -l LENGTH");
	need_operands(c, argc, optind, "missing file operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, falloc_one, &fa);
}

/* ------------------------------------------------------------------ */
/* namespace: mkdir, rm, rmdir, mv, ln, chmod, touch                     */
/* ------------------------------------------------------------------ */

static int parse_mode(const char *s, uint32_t old, uint32_t *out, mode_t umask_)
{
	uint64_t v;
	uint32_t mode = old & 07777;

	if (s[0] >= '0' && s[0] <= '7') {
		char *end;

		v = strtoull(s, &end, 8);
		if (*end || v > 07777)
			return -EINVAL;
		*out = (uint32_t)v;
		return 0;
	}
	/* symbolic: [ugoa]*[+-=][rwxXst]*[,...] */
	while (*s) {
		uint32_t who = 0, perm = 0;
		char op;

		for (; *s && strchr("ugoa", *s); s++)
			who |= *s == 'u' ? 04700 : *s == 'g' ? 02070 : *s == 'o' ? 01007 : 07777;
		if (!*s || !strchr("+-=", *s))
			return -EINVAL;
		op = *s++;
		for (; *s && strchr("rwxXst", *s); s++) {
			switch (*s) {
			case 'r':
				perm |= 0444;
				break;
			case 'w':
				perm |= 0222;
				break;
			case 'x':
				perm |= 0111;
				break;
			case 'X':
				if (S_ISDIR(old) || (old & 0111))
					perm |= 0111;
				break;
			case 's':
				perm |= 06000;
				break;
			case 't':
				perm |= 01000;
				break;
			}
		}
		if (!who)
			perm &= ~(uint32_t)umask_ | 07000;
		else
			perm &= who;
		if (!who)
			who = 07777;
		if (op == '+')
			mode |= perm;
		else if (op == '-')
			mode &= ~perm;
		else
			mode = (mode & ~(who & 0777 ? who : 07777)) | perm;
		if (*s == ',')
			s++;
		else if (*s)
			return -EINVAL;
	}
	*out = mode;
	return 0;
}

static int mkdir_p(struct ctx *c, const char *path, uint32_t mode)
{
	char *p = strdup(path), *s;
	int ret = 0;

	if (!p)
		return -ENOMEM;
	for (s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char save = *s;

			*s = '\0';
			if (*p && !is_root(p)) {
				/* intermediate directories get u+wx like mkdir -p */
				ret = daxfs_path_mkdir(c->h, p, save ? (0777 & ~c->umask) | 0300
								      : mode);
				if (ret == -EEXIST)
					ret = is_dir_path(c, p) ? 0 : -EEXIST;
			}
			*s = save;
			if (ret || !save)
				break;
		}
	}
	free(p);
	return ret;
}

struct mkdir_args {
	bool parents;
	uint32_t mode;
};

static int mkdir_one(struct ctx *c, const char *path, const void *arg)
{
	const struct mkdir_args *ma = arg;

	return ma->parents ? mkdir_p(c, path, ma->mode) : daxfs_path_mkdir(c->h, path, ma->mode);
}

static int cmd_mkdir(struct ctx *c, int argc, char **argv)
{
	struct mkdir_args ma = { false, 0777 & ~c->umask };
	int ch;

	while ((ch = next_opt(c, argc, argv, "pm:", NULL)) != -1) {
		if (ch == 'p')
			ma.parents = true;
		else if (ch == 'm' && parse_mode(optarg, S_IFDIR | 0777, &ma.mode, 0))
			usage_err(c, "invalid mode '%s'", optarg);
	}
	need_operands(c, argc, optind, "missing operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, mkdir_one, &ma);
}

static int rm_children(struct ctx *c, uint64_t dir, const char *shown,
		       bool force, unsigned int depth);

/*
 * Removes name in directory number dir, a tree if it is one.  Below the
 * operand, rm works by directory number, not by path, so that a tree
 * deeper than PATH_MAX goes too (the path API refuses such paths with
 * ENAMETOOLONG); shown is the path for messages only.
 */
static int rm_entry(struct ctx *c, uint64_t dir, const char *name,
		    const char *shown, bool force, unsigned int depth)
{
	struct daxfs_attr st;
	uint64_t ino;
	int ret;

	ret = daxfs_ino_lookup(c->h, dir, name, &ino, &st);
	if (ret == -ENOENT && force)
		return 0;
	if (ret)
		return path_err(c, shown, ret);
	if (!S_ISDIR(st.mode))
		ret = daxfs_ino_unlink(c->h, dir, name);
	else if (rm_children(c, ino, shown, force, depth + 1))
		return 1;
	else
		ret = daxfs_ino_rmdir(c->h, dir, name);
	if (ret && !(ret == -ENOENT && force))
		return path_err(c, shown, ret);
	return 0;
}

/* Empties directory number dir (shown: its path, for messages). */
static int rm_children(struct ctx *c, uint64_t dir, const char *shown,
		       bool force, unsigned int depth)
{
	struct ls_ent *e = NULL;
	size_t n = 0, i;
	int ret, failed = 0;

	/* a loop a hostile peer made would recurse for ever */
	if (depth > 4096)
		return path_err(c, shown, -ELOOP);
	ret = read_dir(c, NULL, dir, true, &e, &n);
	if (ret)
		return path_err(c, shown, ret);
	for (i = 0; i < n; i++) {
		char *cp = join_path(shown, e[i].name);

		failed |= rm_entry(c, dir, e[i].name, cp, force, depth);
		free(cp);
	}
	ls_free(e, n);
	return failed;
}

static int rm_tree(struct ctx *c, const char *path, bool force)
{
	struct daxfs_attr st;
	int ret;

	ret = daxfs_path_lstat(c->h, path, &st);
	if (ret == -ENOENT && force)
		return 0;
	if (ret)
		return path_err(c, path, ret);
	if (!S_ISDIR(st.mode))
		ret = daxfs_path_unlink(c->h, path);
	else if (rm_children(c, st.ino, path, force, 0))
		return 1;
	else
		ret = daxfs_path_rmdir(c->h, path);
	if (ret && !(ret == -ENOENT && force))
		return path_err(c, path, ret);
	return 0;
}

struct rm_args {
	bool recursive, force;
};

static int rm_one(struct ctx *c, const char *path, const void *arg)
{
	const struct rm_args *ra = arg;
	struct daxfs_attr st;
	int ret;

	if (is_root(path) || !strcmp(base_name(path), ".") ||
	    !strcmp(base_name(path), "..")) {
		cmd_err(c, "refusing to remove '%s'", path);
		return 0;
	}
	if (ra->recursive) {
		rm_tree(c, path, ra->force);
		return 0;
	}
	ret = daxfs_path_lstat(c->h, path, &st);
	if (!ret && S_ISDIR(st.mode))
		ret = -EISDIR;
	if (!ret)
		ret = daxfs_path_unlink(c->h, path);
	return ret == -ENOENT && ra->force ? 0 : ret;
}

static int cmd_rm(struct ctx *c, int argc, char **argv)
{
	struct rm_args ra = { false, false };
	int ch;

	while ((ch = next_opt(c, argc, argv, "rRfd", NULL)) != -1) {
		if (ch == 'r' || ch == 'R')
			ra.recursive = true;
		else if (ch == 'f')
			ra.force = true;
	}
	if (!ra.force)
		need_operands(c, argc, optind, "missing operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, rm_one, &ra);
}

static int rmdir_one(struct ctx *c, const char *path, const void *arg)
{
	return daxfs_path_rmdir(c->h, path);
}

static int cmd_rmdir(struct ctx *c, int argc, char **argv)
{
	flag_opt(c, argc, argv, "", NULL);
	need_operands(c, argc, optind, "missing operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, rmdir_one, NULL);
}

static int cmd_mv(struct ctx *c, int argc, char **argv)
{
	bool noclobber = flag_opt(c, argc, argv, "n", NULL);
	char *dst;
	int ret;

	if (argc - optind != 2)
		usage_err(c, "expected SRC and DST");
	dst = target_path(c, argv[optind + 1], base_name(argv[optind]));
	c->mutated = true;
	ret = daxfs_path_rename(c->h, argv[optind], dst,
				noclobber ? DAXFS_RENAME_NOREPLACE : 0);
	if (ret) {
		struct daxfs_attr st;

		/* name the side that failed */
		path_err(c, daxfs_path_lstat(c->h, argv[optind], &st) ? argv[optind] : dst, ret);
	}
	free(dst);
	return 0;
}

static int cmd_ln(struct ctx *c, int argc, char **argv)
{
	bool sym = false, force = false;
	char *link;
	int ch, ret;

	while ((ch = next_opt(c, argc, argv, "sf", NULL)) != -1) {
		if (ch == 's')
			sym = true;
		else if (ch == 'f')
			force = true;
	}
	if (argc - optind != 2)
		usage_err(c, "expected TARGET and LINK_NAME");
	link = target_path(c, argv[optind + 1], base_name(argv[optind]));
	c->mutated = true;
	if (force) {
		struct daxfs_attr st;

		if (!daxfs_path_lstat(c->h, link, &st) && !S_ISDIR(st.mode))
			daxfs_path_unlink(c->h, link);
	}
	ret = sym ? daxfs_path_symlink(c->h, argv[optind], link)
		  : daxfs_path_link(c->h, argv[optind], link);
	if (ret) {
		struct daxfs_attr st;

		if (!sym && daxfs_path_lstat(c->h, argv[optind], &st))
			path_err(c, argv[optind], ret);
		else
			path_err(c, link, ret);
	}
	free(link);
	return 0;
}

static int chmod_one(struct ctx *c, const char *path, const void *mode_arg)
{
	struct daxfs_attr st;
	uint32_t mode;
	int ret = daxfs_path_stat(c->h, path, &st);

	if (ret)
		return ret;
	if (parse_mode(mode_arg, st.mode, &mode, c->umask))
		usage_err(c, "invalid mode '%s'", (const char *)mode_arg);
	return daxfs_path_chmod(c->h, path, mode);
}

static int cmd_chmod(struct ctx *c, int argc, char **argv)
{
	flag_opt(c, argc, argv, "", NULL);
	need_operands(c, argc, optind + 1, "expected MODE and PATH");
	c->mutated = true;
	return each_operand(c, argc, argv, optind + 1, chmod_one, argv[optind]);
}

/* chattr(1) letters of the flags daxfs keeps, in lsattr's order */
static const struct {
	char letter;
	uint32_t fl;
} attr_letters[] = {
	{ 'S', DAXFS_FL_SYNC }, { 'i', DAXFS_FL_IMMUTABLE },
	{ 'a', DAXFS_FL_APPEND }, { 'd', DAXFS_FL_NODUMP },
	{ 'A', DAXFS_FL_NOATIME },
};
#define NR_ATTR_LETTERS	(sizeof(attr_letters) / sizeof(attr_letters[0]))

static int lsattr_one(struct ctx *c, const char *path, const void *arg)
{
	struct daxfs_attr st;
	size_t i;
	int ret = daxfs_path_stat(c->h, path, &st);

	if (ret)
		return ret;
	for (i = 0; i < NR_ATTR_LETTERS; i++)
		putchar(st.flags & attr_letters[i].fl ? attr_letters[i].letter :
			'-');
	printf(" %s\n", path);
	return 0;
}

static int cmd_lsattr(struct ctx *c, int argc, char **argv)
{
	flag_opt(c, argc, argv, "", NULL);
	need_operands(c, argc, optind, "missing operand");
	return each_operand(c, argc, argv, optind, lsattr_one, NULL);
}

/* A chattr(1) mode: +LETTERS, -LETTERS or =LETTERS.  false: not one. */
struct attr_change {
	uint32_t set, clear;
	bool assign;
};

static bool parse_attr_mode(const char *s, struct attr_change *ch)
{
	char op = *s++;
	uint32_t bits = 0;
	size_t i;

	if ((op != '+' && op != '-' && op != '=') || !*s)
		return false;
	for (; *s; s++) {
		for (i = 0; i < NR_ATTR_LETTERS; i++)
			if (attr_letters[i].letter == *s)
				break;
		if (i == NR_ATTR_LETTERS)
			return false;
		bits |= attr_letters[i].fl;
	}
	if (op == '=') {
		ch->assign = true;
		ch->set = bits;
		ch->clear = 0;
	} else if (op == '+') {
		ch->set |= bits;
		ch->clear &= ~bits;
	} else {
		ch->clear |= bits;
		ch->set &= ~bits;
	}
	return true;
}

static int chattr_one(struct ctx *c, const char *path, const void *arg)
{
	const struct attr_change *ch = arg;
	struct daxfs_attr st;
	uint32_t fl;
	int ret = daxfs_path_stat(c->h, path, &st);

	if (ret)
		return ret;
	fl = ch->assign ? ch->set : (st.flags | ch->set) & ~ch->clear;
	return daxfs_path_setflags(c->h, path, fl);
}

static int cmd_chattr(struct ctx *c, int argc, char **argv)
{
	struct attr_change ch = { 0, 0, false };
	int i;

	/* no getopt: "-i" is a mode, not an option */
	for (i = 1; i < argc && argv[i][0] && strchr("+-=", argv[i][0]); i++)
		if (!parse_attr_mode(argv[i], &ch))
			usage_err(c, "invalid mode '%s' (letters: SiadA)",
				  argv[i]);
	if (i == 1)
		usage_err(c, "expected a mode such as +i, -a or =A");
	need_operands(c, argc, i, "missing operand");
	c->mutated = true;
	return each_operand(c, argc, argv, i, chattr_one, &ch);
}

static int touch_one(struct ctx *c, const char *path, const void *no_create)
{
	int ret = daxfs_path_utimens(c->h, path, DAXFS_UTIME_NOW, DAXFS_UTIME_NOW);

	if (ret == -ENOENT && !*(const bool *)no_create)
		ret = daxfs_path_create(c->h, path, 0666 & ~c->umask, 0, NULL);
	else if (ret == -ENOENT)
		ret = 0;
	return ret;
}

static int cmd_touch(struct ctx *c, int argc, char **argv)
{
	bool no_create = flag_opt(c, argc, argv, "c", NULL);

	need_operands(c, argc, optind, "missing file operand");
	c->mutated = true;
	return each_operand(c, argc, argv, optind, touch_one, &no_create);
}

/* ------------------------------------------------------------------ */
/* df                                                                   */
/* ------------------------------------------------------------------ */

static int cmd_df(struct ctx *c, int argc, char **argv)
{
	struct daxfs_statfs st;
	bool human = false, inodes = false;
	char a[32], b[32], d[32];
	uint64_t size, used, avail;
	unsigned int pct;
	int ch, ret, w;

	while ((ch = next_opt(c, argc, argv, "hik", NULL)) != -1) {
		if (ch == 'h')
			human = true;
		else if (ch == 'i')
			inodes = true;
	}
	no_operands(c, argc, argv);
	/* a joined host frees what earlier commands retired first */
	if (c->joined)
		daxfs_region_reclaim(c->h);
	ret = daxfs_region_statfs(c->h, &st);
	if (ret)
		return path_err(c, c->region, ret);
	if (inodes) {
		size = st.nr_buckets;
		used = st.inodes;
		avail = size > used ? size - used : 0;
	} else {
		size = st.pool_bytes;
		used = st.used_bytes;
		avail = st.free_bytes;
	}
	pct = used + avail ? (unsigned int)((used * 100 + used + avail - 1) / (used + avail)) : 0;
	w = (int)strlen(c->region);
	if (w < 10)
		w = 10;
	if (inodes) {
		printf("%-*s %10s %10s %10s %5s %s\n", w, "Filesystem", "Inodes", "IUsed",
		       "IFree", "IUse%", "Mounted on");
		snprintf(a, sizeof(a), "%llu", (unsigned long long)size);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)used);
		snprintf(d, sizeof(d), "%llu", (unsigned long long)avail);
	} else if (human) {
		printf("%-*s %6s %6s %6s %4s %s\n", w, "Filesystem", "Size", "Used", "Avail",
		       "Use%", "Mounted on");
		format_human(size, a, sizeof(a));
		format_human(used, b, sizeof(b));
		format_human(avail, d, sizeof(d));
		printf("%-*s %6s %6s %6s %3u%% %s\n", w, c->region, a, b, d, pct, "-");
		return 0;
	} else {
		printf("%-*s %10s %10s %10s %4s %s\n", w, "Filesystem", "1K-blocks", "Used",
		       "Available", "Use%", "Mounted on");
		snprintf(a, sizeof(a), "%llu", (unsigned long long)(size / 1024));
		snprintf(b, sizeof(b), "%llu", (unsigned long long)((used + 1023) / 1024));
		snprintf(d, sizeof(d), "%llu", (unsigned long long)(avail / 1024));
	}
	printf("%-*s %10s %10s %10s %*u%% %s\n", w, c->region, a, b, d, inodes ? 4 : 3, pct, "-");
	return 0;
}

/* ------------------------------------------------------------------ */
/* dispatch                                                             */
/* ------------------------------------------------------------------ */

static void lock_line(void *ctx, u64 ino, const struct daxfs_lock_req *l,
		      bool waiting)
{
	static const char *const kinds[] = { "?", "POSIX", "OFD", "FLOCK" };
	char end[24];

	if (l->end == DAXFS_LOCK_EOF)
		snprintf(end, sizeof(end), "EOF");
	else
		snprintf(end, sizeof(end), "%llu", (unsigned long long)l->end);
	printf("%-10llu %-5s %-5s %12llu %12s %4u %8u%s\n",
	       (unsigned long long)ino, kinds[l->kind <= 3 ? l->kind : 0],
	       l->type == DAXFS_LCK_WR ? "WRITE" : "READ",
	       (unsigned long long)l->start, end, l->host, l->pid,
	       waiting ? " (waiting)" : "");
}

/* 2 MiB pages for a region made with small ones (docs/libdaxfs.md "Huge
 * pages"): what mkfs does for a new one, on a region in use. */
static int cmd_hugepages(struct ctx *c, int argc, char **argv)
{
	uint64_t huge, total;
	char a[32], b[32];
	int ret;

	flag_opt(c, argc, argv, "", NULL);
	no_operands(c, argc, argv);
	ret = daxfs_region_huge_pages(c->region, &huge, &total);
	if (ret)
		return path_err(c, c->region, ret);
	format_bytes(huge, a, sizeof(a));
	format_bytes(total, b, sizeof(b));
	printf("2 MiB pages: %s of %s\n", huge ? a : "none", b);
	if (!huge)
		fprintf(stderr, "daxfs: hugepages: the kernel gave no 2 MiB page: it "
			"needs a region on a tmpfs, MADV_COLLAPSE (Linux 6.1) and free "
			"2 MiB of memory\n");
	return huge ? 0 : 1;
}

/* Every advisory lock of every host (docs/locks.md), or of PATH's file. */
static int cmd_locks(struct ctx *c, int argc, char **argv)
{
	uint64_t ino = 0;
	int ret;

	flag_opt(c, argc, argv, "", NULL);
	if (optind < argc) {
		ret = daxfs_path_resolve(c->h, argv[optind], 1, &ino);
		if (ret)
			return path_err(c, argv[optind], ret);
	}
	printf("%-10s %-5s %-5s %12s %12s %4s %8s\n", "INODE", "KIND", "TYPE",
	       "START", "END", "HOST", "PID");
	ret = daxfs_lock_list_all(c->h, ino, lock_line, NULL);
	return ret < 0 ? path_err(c, c->region, ret) : 0;
}

static const struct cmd cmds[] = {
	{ "info", OPEN_RDONLY, cmd_info, "[--json] [-w]",
	  "Show the region layout, space and overlay usage, and the hosts in the host\n"
	  "table with their state and lease age.  Does not join the host table.\n"
	  "A lease is judged by timing the host's heartbeat counter with this\n"
	  "process's clock: '?' (unknown) until watched long enough.\n"
	  "  --json       machine-readable output\n"
	  "  -w, --watch  watch the heartbeats first (up to about one lease)\n" },
	{ "ls", OPEN_READ, cmd_ls, "[-l] [-a] [-d] [-i] [PATH...]",
	  "List directory contents (default: the root).\n"
	  "  -l   long listing like ls -l\n  -a   include names starting with '.' and . ..\n"
	  "  -d   list directories themselves\n  -i   print inode numbers\n" },
	{ "stat", OPEN_READ, cmd_stat, "[-L] PATH...",
	  "Show the attributes of files like stat(1).\n"
	  "  -L   follow a final symbolic link\n" },
	{ "cat", OPEN_READ, cmd_cat, "PATH...",
	  "Write the contents of files to standard output.\n" },
	{ "get", OPEN_READ, cmd_get, "PATH LOCAL",
	  "Copy a file out of the filesystem to LOCAL (a local path, a local directory\n"
	  "or - for standard output).\n" },
	{ "put", OPEN_WRITE, cmd_put, "LOCAL PATH",
	  "Copy the local file LOCAL (- for standard input) into the filesystem as PATH\n"
	  "(or into PATH when it is a directory).  An existing file is overwritten.\n" },
	{ "write", OPEN_WRITE, cmd_write, "[-a] PATH",
	  "Write standard input to PATH, creating or truncating it.\n"
	  "  -a   append instead of truncating (atomic appends)\n" },
	{ "mkdir", OPEN_WRITE, cmd_mkdir, "[-p] [-m MODE] PATH...",
	  "Create directories.\n"
	  "  -p        create missing parents, no error if it exists\n"
	  "  -m MODE   permissions (octal or symbolic; default 0777 & ~umask)\n" },
	{ "rm", OPEN_WRITE, cmd_rm, "[-r] [-f] PATH...",
	  "Remove files (and with -r whole directory trees).  Freed space returns to\n"
	  "the pool once no host can still be reading it.\n"
	  "  -r, -R   remove directories and their contents recursively\n"
	  "  -f       ignore missing files, never fail for them\n" },
	{ "rmdir", OPEN_WRITE, cmd_rmdir, "PATH...", "Remove empty directories.\n" },
	{ "mv", OPEN_WRITE, cmd_mv, "[-n] SRC DST",
	  "Rename SRC to DST (into DST when it is a directory); atomic.\n"
	  "  -n   do not overwrite an existing DST\n" },
	{ "ln", OPEN_WRITE, cmd_ln, "[-s] [-f] TARGET LINK_NAME",
	  "Make a hard link (or with -s a symbolic link) named LINK_NAME.\n"
	  "  -s   symbolic link (TARGET is stored as given)\n"
	  "  -f   remove an existing LINK_NAME first\n" },
	{ "readlink", OPEN_READ, cmd_readlink, "PATH...", "Print symbolic link targets.\n" },
	{ "truncate", OPEN_WRITE, cmd_truncate, "[-c] -s SIZE PATH...",
	  "Shrink or extend files to SIZE (K, M, G, T suffixes); creates missing files.\n"
	  "  -c   do not create files\n" },
	{ "fallocate", OPEN_WRITE, cmd_fallocate, "[-n|-p|-z] [-o OFFSET] -l LENGTH PATH...",
	  "Preallocate, punch a hole in or zero a range of files (as fallocate(1)).\n"
	  "  -n   keep the size   -p   punch a hole (frees pages)   -z   zero the range\n" },
	{ "chmod", OPEN_WRITE, cmd_chmod, "MODE PATH...",
	  "Change permissions (octal like 0644 or symbolic like u+x,go-w).\n" },
	{ "chattr", OPEN_WRITE, cmd_chattr, "+-=[SiadA]... PATH...",
	  "Change attribute flags, as chattr(1), on every host: i immutable, a\n"
	  "append only, d no dump, A no atime updates, S synchronous writes.\n" },
	{ "lsattr", OPEN_READ, cmd_lsattr, "PATH...",
	  "Show attribute flags (S i a d A, '-' where unset) as lsattr(1).\n" },
	{ "touch", OPEN_WRITE, cmd_touch, "[-c] PATH...",
	  "Set access and modification times to now, creating empty files.\n"
	  "  -c   do not create files\n" },
	{ "df", OPEN_READ, cmd_df, "[-h] [-i]",
	  "Show pool space (or inode) usage like df(1).  Reclaims retired space first.\n"
	  "  -h   human-readable sizes\n  -i   inodes instead of bytes\n" },
	{ "hugepages", OPEN_RDONLY, cmd_hugepages, "",
	  "Give the region 2 MiB pages where the kernel can (a region file on a\n"
	  "tmpfs, Linux 6.1 or later), as mkfs.daxfs does for a new one unless\n"
	  "--small-pages: for a region made before, or with --small-pages.  Safe\n"
	  "while hosts use it.  Says how much of the region has them; exit status 1\n"
	  "when none.  Does not join the host table.\n" },
	{ "locks", OPEN_RDONLY, cmd_locks, "[PATH]",
	  "List the advisory locks (fcntl, OFD, flock) every host holds, or those\n"
	  "of PATH's file, with the holder's host slot and its process id there;\n"
	  "waiting POSIX requests are marked.  Does not join the host table.\n" },
	{ NULL, OPEN_NONE, NULL, NULL, NULL },
};

static const struct cmd *find_cmd(const char *name)
{
	const struct cmd *c;

	for (c = cmds; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void usage(FILE *f)
{
	const struct cmd *c;

	fprintf(f,
"Usage: daxfs [-r REGION] COMMAND [ARGS...]\n"
"Use a DaxFS region (a file, /dev/shm file, pmem or devdax device) without\n"
"mounting it.  REGION may also be given in $DAXFS_REGION.  Paths inside the\n"
"filesystem are absolute (a leading / is optional).\n\n"
"Commands:\n"
"  run       [--at DIR] -- COMMAND [ARGS...]  (see daxfs run --help)\n");
	for (c = cmds; c->name; c++)
		fprintf(f, "  %-9s %s\n", c->name, c->args);
	fprintf(f, "  %-9s %s\n  %-9s %s\n", "mount", "[-o OPTIONS] [-f] MOUNTPOINT",
		"umount", "[-l] MOUNTPOINT...");
	fprintf(f,
"\nOptions:\n"
"  -r, --region REGION   the region to use (default: $DAXFS_REGION)\n"
"  -b, --backing FILE    a backing file of a split-mode filesystem that this\n"
"                        host can read (repeatable; see docs/pcache.md)\n"
"  -h, --help            show this help ('daxfs COMMAND --help' for one command)\n"
"  -V, --version         print the version\n"
"\nExit status: 0 success, 1 an operation failed, 2 usage error.\n");
}

static int open_region(struct ctx *c)
{
	struct daxfs_open_opts oo;
	unsigned int flags = 0;
	int ret;

	if (c->cmd->open == OPEN_RDONLY)
		flags = DAXFS_OPEN_RDONLY;
	memset(&oo, 0, sizeof(oo));
	oo.backing = c->backing;
	oo.nr_backing = c->nr_backing;
	oo.flags = flags;
	ret = daxfs_region_open_opts(c->region, &oo, &c->h);
	/* EAGAIN: no thread for the heartbeat (RLIMIT_NPROC); a reader
	 * needs none */
	if (ret && c->cmd->open == OPEN_READ &&
	    (ret == -EACCES || ret == -EROFS || ret == -EPERM || ret == -EBUSY ||
	     ret == -EAGAIN)) {
		flags = DAXFS_OPEN_RDONLY;
		oo.flags = flags;
		ret = daxfs_region_open_opts(c->region, &oo, &c->h);
	}
	if (ret) {
		fflush(stdout);
		if (ret == -EINVAL)
			fprintf(stderr, "daxfs: %s: not a DaxFS filesystem (no valid superblock "
				"of a supported version); create one with mkfs.daxfs\n", c->region);
		else if (ret == -EUCLEAN || ret == -EBADMSG)
			fprintf(stderr, "daxfs: %s: filesystem corrupt (superblock checksum or "
				"region table invalid): run fsck.daxfs %s\n", c->region, c->region);
		else if (ret == -EPROTO || ret == -ENOSYS)
			fprintf(stderr, "daxfs: %s: %s\n", c->region,
				daxfs_strerror(ret));
		else if (ret == -EPROTONOSUPPORT || ret == -EOPNOTSUPP)
			fprintf(stderr, "daxfs: %s: made by a newer DaxFS (unsupported format "
				"version or features); use a newer daxfs\n", c->region);
		else if (ret == -EAGAIN)
			fprintf(stderr, "daxfs: %s: cannot start libdaxfs's heartbeat "
				"thread: %s (the limit on this user's processes and "
				"threads, ulimit -u?)\n", c->region, strerror(EAGAIN));
		else if (ret == -ENOMEM && tool_enomem_from_limit(NULL, c->region, 0))
			;
		else if (ret == -ENOMEM)
			fprintf(stderr, "daxfs: %s: the region file has holes and the "
				"filesystem holding it has no room to allocate them (a host "
				"storing into a hole there would die of SIGBUS); free space "
				"there, or open it read-only\n", c->region);
		else if (ret == -EMEDIUMTYPE)
			fprintf(stderr, "daxfs: %s: a --backing file is not one of this "
				"filesystem's backing files (wrong file, or changed/truncated "
				"since mkfs; if it is the right file, fsck.daxfs --backing "
				"FILE checks the region's record of it)\n", c->region);
		else if (ret == -EBUSY)
			fprintf(stderr, "daxfs: %s: host table full (all host slots are taken "
				"by live hosts); try again later or make the filesystem with "
				"more --max-hosts\n", c->region);
		else
			fprintf(stderr, "daxfs: %s: %s\n", c->region, daxfs_strerror(ret));
		return 1;
	}
	c->joined = !(flags & DAXFS_OPEN_RDONLY);
	if (c->joined) {
		daxfs_set_creds(c->h, (uint32_t)geteuid(), (uint32_t)getegid());
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "backing", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctx c;
	int ch, ret;

	tool_name = "daxfs";
	memset(&c, 0, sizeof(c));
	c.umask = umask(0);
	umask(c.umask);
	c.region = getenv("DAXFS_REGION");
	while ((ch = getopt_long(argc, argv, "+r:b:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			c.region = optarg;
			break;
		case 'b':
			if (c.nr_backing >= 16) {
				fprintf(stderr, "daxfs: too many --backing files (at most 16)\n");
				return TOOL_EXIT_USAGE;
			}
			c.backing[c.nr_backing++] = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("daxfs (DaxFS format version %u)\n", DAXFS_VERSION);
			return 0;
		default:
			fputs("Try 'daxfs --help' for more information.\n", stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	/* run: exec's a program under the preload (tools/common-run.c) */
	if (!strcmp(argv[optind], "run"))
		return daxfs_run_main(c.region, argc - optind, argv + optind);
	if (!strcmp(argv[optind], "help")) {
		const struct cmd *hc = optind + 1 < argc ? find_cmd(argv[optind + 1]) : NULL;

		if (hc)
			print_cmd_help(hc, stdout);
		else
			usage(stdout);
		return 0;
	}
	if (!strcmp(argv[optind], "mount"))
		return tool_mount(c.region, c.backing, c.nr_backing, argc - optind,
				  argv + optind);
	if (!strcmp(argv[optind], "umount"))
		return tool_umount(argc - optind, argv + optind);
	c.cmd = find_cmd(argv[optind]);
	if (!c.cmd) {
		fprintf(stderr, "daxfs: unknown command '%s'\nTry 'daxfs --help' for the "
			"list of commands.\n", argv[optind]);
		return TOOL_EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	/* --help before touching the region */
	for (ch = 1; ch < argc; ch++) {
		if (!strcmp(argv[ch], "--"))
			break;
		if (!strcmp(argv[ch], "--help") || !strcmp(argv[ch], "-h")) {
			if (c.cmd->fn == cmd_df && !strcmp(argv[ch], "-h"))
				continue;
			print_cmd_help(c.cmd, stdout);
			return 0;
		}
	}
	if (!c.region || !*c.region) {
		fprintf(stderr, "daxfs: %s: no region given: use -r REGION or set "
			"DAXFS_REGION\n", c.cmd->name);
		return TOOL_EXIT_USAGE;
	}
	if (open_region(&c))
		return 1;
	optind = 1;
	opterr = 1;
	ret = c.cmd->fn(&c, argc, argv);
	if (c.mutated && c.joined)
		daxfs_region_reclaim(c.h);
	daxfs_region_close(c.h);
	if (fflush(stdout) && !ret)
		ret = 1;
	return ret ? ret : c.status;
}
