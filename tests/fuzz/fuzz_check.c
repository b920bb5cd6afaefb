// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libFuzzer harness for the DaxFS core on hostile regions.
 *
 * A small valid filesystem (directories, files with data, hard link,
 * symlink, special file, an unlinked file, a rename) is built once with
 * the core API.  Each input overlays bytes on a copy of it:
 *
 *   byte 0     flags: bit 0 recompute the superblock checksum after the
 *              overlay (so the fuzzer gets past it), bit 1 join as a host
 *              and run modifying operations, bit 2 run the repairer,
 *              bit 3 treat the rest of the input as the whole image start
 *   then       chunks [off: 3 bytes LE, mod image size][len: 1][len bytes]
 *
 * Then: daxfs_fs_open, daxfs_check (read-only), a bounded walk of the
 * namespace through the public API (readdir, lookup, getattr, read,
 * readlink, statfs), optionally modifying operations, then repair and a
 * second check.  With FUZZ_STRICT=1 in the environment, a check after a
 * repair that still finds errors aborts (finds repairer bugs).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/compat.h"
#include "core/daxfs_core.h"
#include "core/check.h"

#define IMG_SIZE	(512u << 10)

static u8 *seed;
static u8 *img;
static void *scratch;
static u64 scratch_size;
static int strict;

static u64 fill_actor(void *ctx, void *dst, u64 len)
{
	u64 i;

	for (i = 0; i < len; i++)
		((u8 *)dst)[i] = (u8)(i * 7 + (uintptr_t)ctx);
	return len;
}

static u64 sink_actor(void *ctx, const void *src, u64 len)
{
	u64 *sum = ctx;

	if (src && len)
		*sum += ((const u8 *)src)[0] + ((const u8 *)src)[len - 1];
	return len;
}

static void must(int err, const char *what)
{
	if (err < 0) {
		fprintf(stderr, "seed build: %s: %d\n", what, err);
		abort();
	}
}

static void build_seed(void)
{
	struct daxfs_format_opts o = { .max_hosts = 4, .nr_buckets = 256, .lease_ms = 20 };
	static const u64 key[2] = { 0x0123456789abcdefULL, 0xfedcba9876543210ULL };
	struct daxfs_fs fs;
	u64 d, sub, f, big, x, pos;
	char name[16];
	int i;

	seed = aligned_alloc(4096, IMG_SIZE);
	img = aligned_alloc(4096, IMG_SIZE);
	memset(seed, 0, IMG_SIZE);
	o.hash_key = key;
	must(daxfs_format(seed, IMG_SIZE, &o), "format");
	must(daxfs_fs_open(&fs, seed, IMG_SIZE, 0), "open");
	must(daxfs_host_join(&fs, "seed", 1, DAXFS_HOST_KIND_USER), "join");
	must(daxfs_mkdir(&fs, 1, "dir", 3, 0755, 0, 0, &d), "mkdir");
	must(daxfs_mkdir(&fs, d, "sub", 3, 0700, 0, 0, &sub), "mkdir sub");
	must(daxfs_mknod(&fs, d, "file", 4, 0100644, 0, 0, 0, &f), "mknod");
	must((int)daxfs_write(&fs, f, 0, 9000, 0, fill_actor, (void *)1, &pos), "write");
	must(daxfs_mknod(&fs, 1, "big", 3, 0100600, 0, 0, 0, &big), "mknod big");
	must((int)daxfs_write(&fs, big, 3 << 20, 4096, 0, fill_actor, (void *)2, &pos),
	     "write sparse");
	must(daxfs_link(&fs, f, sub, "hard", 4), "link");
	must(daxfs_symlink(&fs, 1, "sym", 3, "dir/file", 8, 0, 0, &x), "symlink");
	must(daxfs_mknod(&fs, sub, "fifo", 4, 0010644, 0, 0, 0, &x), "fifo");
	for (i = 0; i < 24; i++) {
		int n = snprintf(name, sizeof(name), "n%02d", i);

		must(daxfs_mknod(&fs, sub, name, n, 0100644, 0, 0, 0, &x), "many");
	}
	must(daxfs_mknod(&fs, 1, "gone", 4, 0100644, 0, 0, 0, &x), "gone");
	must((int)daxfs_write(&fs, x, 0, 5000, 0, fill_actor, (void *)3, &pos), "w gone");
	must(daxfs_unlink(&fs, 1, "gone", 4), "unlink");
	must(daxfs_rename(&fs, sub, "n03", 3, 1, "moved", 5, 0), "rename");
	daxfs_host_leave(&fs);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct daxfs_fs fs;

	(void)argc;
	(void)argv;
	build_seed();
	must(daxfs_fs_open(&fs, seed, IMG_SIZE, 0), "reopen");
	scratch_size = (daxfs_check_scratch_size(&fs) + (1u << 20)) & ~63ULL;
	scratch = aligned_alloc(64, scratch_size);
	strict = getenv("FUZZ_STRICT") ? atoi(getenv("FUZZ_STRICT")) : 0;
	return 0;
}

struct walk {
	struct daxfs_fs *fs;
	u32 budget;
	u64 names[64];
	u32 n;
};

static int fill(void *ctx, const char *name, u32 len, u64 ino, u32 dtype, u64 pos)
{
	struct walk *w = ctx;

	(void)name;
	(void)len;
	(void)dtype;
	(void)pos;
	if (w->n >= 64)
		return 1;
	w->names[w->n++] = ino;
	return 0;
}

static void walk_dir(struct daxfs_fs *fs, u64 dir, u32 depth, u32 *budget)
{
	struct walk w = { .fs = fs };
	struct daxfs_attr a;
	u64 pos = 0, ino, sum = 0;
	char buf[256];
	u32 i, rounds;

	if (depth > 6 || !*budget)
		return;
	for (rounds = 0; rounds < 4 && pos != DAXFS_POS_EOF; rounds++) {
		w.n = 0;
		if (daxfs_readdir(fs, dir, &pos, fill, &w) < 0)
			break;
		if (w.n < 64)
			break;
	}
	daxfs_lookup(fs, dir, "file", 4, &ino);
	daxfs_lookup(fs, dir, "sub", 3, &ino);
	daxfs_lookup(fs, dir, "missing-name", 12, &ino);
	for (i = 0; i < w.n && *budget; i++, (*budget)--) {
		if (daxfs_getattr(fs, w.names[i], &a))
			continue;
		switch (a.mode & 0170000) {
		case 0040000:
			if (w.names[i] != dir)
				walk_dir(fs, w.names[i], depth + 1, budget);
			break;
		case 0100000:
			daxfs_read(fs, w.names[i], 0, 1 << 16, sink_actor, &sum);
			daxfs_read(fs, w.names[i], (3 << 20) - 100, 8192, sink_actor, &sum);
			break;
		case 0120000:
			daxfs_readlink(fs, w.names[i], buf, sizeof(buf));
			break;
		}
	}
}

static void modify(struct daxfs_fs *fs)
{
	u64 d, f, pos, x;
	struct daxfs_attr a;

	if (daxfs_host_join(fs, "fuzz", 2, DAXFS_HOST_KIND_USER))
		return;
	if (!daxfs_mkdir(fs, 1, "fz", 2, 0755, 0, 0, &d)) {
		if (!daxfs_mknod(fs, d, "f", 1, 0100644, 0, 0, 0, &f)) {
			daxfs_write(fs, f, 100, 10000, 0, fill_actor, (void *)4, &pos);
			daxfs_write(fs, f, 0, 300, DAXFS_WRITE_APPEND, fill_actor,
				    (void *)5, &pos);
			daxfs_truncate(fs, f, 50);
			daxfs_rename(fs, d, "f", 1, 1, "g", 1, 0);
			daxfs_unlink(fs, 1, "g", 1);
		}
		daxfs_rmdir(fs, 1, "fz", 2);
	}
	if (!daxfs_lookup(fs, 1, "dir", 3, &d)) {
		daxfs_rename(fs, 1, "dir", 3, 1, "dir2", 4, 0);
		daxfs_lookup(fs, 1, "dir2", 4, &x);
		if (!daxfs_lookup(fs, x, "file", 4, &f)) {
			daxfs_write(fs, f, 4096, 4096, 0, fill_actor, (void *)6, &pos);
			daxfs_truncate(fs, f, 1);
			a.mode = 0600;
			daxfs_setattr(fs, f, DAXFS_ATTR_MODE, &a);
		}
		daxfs_unlink(fs, x, "file", 4);
		daxfs_rmdir(fs, x, "sub", 3);
	}
	daxfs_unlink(fs, 1, "big", 3);
	daxfs_host_leave(fs);
}

static void print_problem(void *ctx, const struct daxfs_check_problem *p)
{
	(void)ctx;
	fprintf(stderr, "  [%u %s] %s ino %llu off %#llx have %#llx want %#llx%s\n",
		p->severity, p->name, p->msg, (unsigned long long)p->ino,
		(unsigned long long)p->off, (unsigned long long)p->have,
		(unsigned long long)p->want, p->repaired ? " FIXED" : "");
}

static void check(struct daxfs_fs *fs, u32 flags, struct daxfs_check_result *r)
{
	struct daxfs_check_opts o = {
		.flags = flags, .scratch = scratch, .scratch_size = scratch_size,
		.report = strict > 1 ? print_problem : NULL,
	};

	memset(r, 0, sizeof(*r));
	if (daxfs_check_scratch_size(fs) > scratch_size)
		return;		/* fuzzed geometry needing more scratch */
	daxfs_check(fs, &o, r);
}

static void fix_csum(void)
{
	struct daxfs_super *sb = (struct daxfs_super *)img;

	sb->csum = daxfs_crc32c(0, sb, offsetof(struct daxfs_super, csum));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct daxfs_check_result r1, r2;
	struct daxfs_fs fs;
	size_t i = 1;
	u32 budget = 256;
	u8 flags;

	if (size < 1)
		return 0;
	flags = data[0];
	memcpy(img, seed, IMG_SIZE);
	if (flags & 8) {
		size_t n = size - 1 < IMG_SIZE ? size - 1 : IMG_SIZE;

		memcpy(img, data + 1, n);
	} else {
		while (i + 4 <= size) {
			u32 off = (data[i] | data[i + 1] << 8 | data[i + 2] << 16) % IMG_SIZE;
			u32 len = data[i + 3];

			i += 4;
			if (len > size - i)
				len = size - i;
			if (len > IMG_SIZE - off)
				len = IMG_SIZE - off;
			memcpy(img + off, data + i, len);
			i += len;
		}
	}
	if (flags & 1)
		fix_csum();
	daxfs_check_super(img, IMG_SIZE, NULL, NULL);
	if (daxfs_fs_open(&fs, img, IMG_SIZE, DAXFS_FS_RDONLY)) {
		if (!(flags & 4))
			return 0;
		if (daxfs_check_state_fixup(img, IMG_SIZE, true, NULL, NULL) <= 0 ||
		    daxfs_fs_open(&fs, img, IMG_SIZE, 0))
			return 0;
	}
	check(&fs, 0, &r1);
	walk_dir(&fs, fs.sb.root_ino, 0, &budget);
	{
		struct daxfs_statfs st;

		daxfs_statfs(&fs, &st);
	}
	if (daxfs_fs_open(&fs, img, IMG_SIZE, 0))
		return 0;
	if (flags & 2)
		modify(&fs);
	if (flags & 4) {
		check(&fs, DAXFS_CHECK_REPAIR | DAXFS_CHECK_FORCE, &r1);
		check(&fs, 0, &r2);
		if (strict && r2.unrepaired && !r1.unrepaired) {
			fprintf(stderr, "repair left %llu errors\n",
				(unsigned long long)r2.unrepaired);
			abort();
		}
		budget = 256;
		walk_dir(&fs, fs.sb.root_ino, 0, &budget);
		if (flags & 2)
			modify(&fs);
	}
	return 0;
}
