// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fallocate, SEEK_DATA / SEEK_HOLE and extents (core/falloc.c,
 * core/extent.c, docs/files.md "fallocate"): what a user checks with
 * fallocate(1), stat, df and lseek after each mode, the errors Linux
 * gives, a full pool, fsck, and a punch racing a write on another host.
 */
#include <pthread.h>

#include "tfile.h"
#include "tpool.h"

#define REGION (32 * MiB)
#define KEEP DAXFS_FALLOC_KEEP_SIZE
#define PUNCH (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE)
#define ZERO DAXFS_FALLOC_ZERO_RANGE

static u8 buf[1 << 20], out[1 << 20];

static u64 t_size(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a;

	CHECK_EQ(t_getattr(fs, ino, &a), 0);
	return a.size;
}

/* Every byte of [a, b) of out is c. */
static bool all(const u8 *p, u64 a, u64 b, u8 c)
{
	for (; a < b; a++)
		if (p[a] != c)
			return false;
	return true;
}

/* Punch: the range reads as zeros, the size stays, whole pages are freed
 * (df shows them free), the partial ends are zeroed in place. */
static void test_punch(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), used;

	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 40000, 0), 40000);
	used = t_usedbytes(&fs);
	CHECK_EQ(t_blocks(&fs, ino), 10);
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH, 5000, 20000), 0);
	CHECK_EQ(t_size(&fs, ino), 40000);
	/* blocks 2..5 wholly inside [5000, 25000) */
	CHECK_EQ(t_blocks(&fs, ino), 6);
	CHECK_EQ(used - t_usedbytes(&fs), 4 * 4096);
	CHECK_EQ(t_pread(&fs, ino, out, 40000, 0), 40000);
	CHECK(all(out, 0, 5000, 0x5a));
	CHECK(all(out, 5000, 25000, 0));
	CHECK(all(out, 25000, 40000, 0x5a));
	/* inside one page: zeroed, nothing freed */
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH, 30001, 10), 0);
	CHECK_EQ(t_blocks(&fs, ino), 6);
	CHECK_EQ(t_pread(&fs, ino, out, 40000, 0), 40000);
	CHECK(all(out, 25000, 30001, 0x5a));
	CHECK(all(out, 30001, 30011, 0));
	CHECK(all(out, 30011, 40000, 0x5a));
	/* the holes are holes */
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_HOLE), 8192);
	CHECK_EQ(t_seek(&fs, ino, 8192, DAXFS_SEEK_DATA), 24576);
	CHECK_EQ(t_seek(&fs, ino, 24576, DAXFS_SEEK_HOLE), 40000);
	/* the whole file: every page goes, the size stays */
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH, 0, 1ULL << 40), 0);
	CHECK_EQ(t_blocks(&fs, ino), 0);
	CHECK_EQ(t_size(&fs, ino), 40000);
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_DATA), (u64)-ENXIO);
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_HOLE), 0);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* A one-page file (its page is the root) and a tall tree: punching
 * frees the direct page, and whole leaf nodes in the middle of a tree. */
static void test_punch_shapes(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 a = t_mkreg(&fs, 1, "a"), b = t_mkreg(&fs, 1, "b"), base, i;

	memset(buf, 0x11, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, a, buf, 4096, 0), 4096);
	CHECK_EQ(daxfs_fallocate(&fs, a, PUNCH, 0, 4096), 0);
	CHECK_EQ(t_blocks(&fs, a), 0);
	CHECK_EQ(t_pread(&fs, a, out, 4096, 0), 4096);
	CHECK(all(out, 0, 4096, 0));
	CHECK_EQ(t_pwrite(&fs, a, buf, 10, 4096), 10);	/* grows again */
	CHECK_EQ(t_size(&fs, a), 4106);

	/* 1792 blocks: leaves 0..3; punch blocks 100..1400 (leaf 1 whole) */
	for (i = 0; i < 1792 * 4096ULL; i += sizeof(buf))
		CHECK_EQ(t_pwrite(&fs, b, buf, sizeof(buf), i), (s64)sizeof(buf));
	base = t_usedbytes(&fs);
	CHECK_EQ(daxfs_fallocate(&fs, b, PUNCH, 100 * 4096ULL, 1300 * 4096ULL),
		 0);
	CHECK_EQ(t_blocks(&fs, b), 492);
	/* 1300 pages and the leaf node of blocks 512..1023 */
	CHECK_EQ(base - t_usedbytes(&fs), 1301 * 4096ULL);
	CHECK_EQ(t_pread(&fs, b, out, 4096, 99 * 4096), 4096);
	CHECK(all(out, 0, 4096, 0x11));
	CHECK_EQ(t_pread(&fs, b, out, 4096, 700 * 4096), 4096);
	CHECK(all(out, 0, 4096, 0));
	CHECK_EQ(t_pread(&fs, b, out, 4096, 1400 * 4096), 4096);
	CHECK(all(out, 0, 4096, 0x11));
	/* a writer fills a hole of a dropped leaf again */
	CHECK_EQ(t_pwrite(&fs, b, buf, 4096, 700 * 4096), 4096);
	CHECK_EQ(t_blocks(&fs, b), 493);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Mode 0 and KEEP_SIZE: pages of zeros, the size grows (or stays), data
 * already there is untouched; fsck accepts preallocation beyond EOF. */
static void test_prealloc(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), used;
	struct daxfs_extent e;

	memset(buf, 0x77, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 100, 8192), 100);
	used = t_usedbytes(&fs);
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 5 * 4096), 0);
	CHECK_EQ(t_size(&fs, ino), 5 * 4096);
	CHECK_EQ(t_blocks(&fs, ino), 5);
	CHECK(t_usedbytes(&fs) - used >= 4 * 4096);
	CHECK_EQ(t_pread(&fs, ino, out, 5 * 4096, 0), 5 * 4096);
	CHECK(all(out, 0, 8192, 0));
	CHECK(all(out, 8192, 8292, 0x77));
	CHECK(all(out, 8292, 5 * 4096, 0));
	/* allocated blocks are data */
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_DATA), 0);
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_HOLE), 5 * 4096);
	/* never shrinks */
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 10), 0);
	CHECK_EQ(t_size(&fs, ino), 5 * 4096);
	/* KEEP_SIZE: pages beyond EOF, size unchanged, FIEMAP sees them */
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 1 * MiB, 2 * 4096), 0);
	CHECK_EQ(t_size(&fs, ino), 5 * 4096);
	CHECK_EQ(t_blocks(&fs, ino), 7);
	CHECK_EQ(daxfs_next_extent(&fs, ino, 5 * 4096, &e), 0);
	CHECK_EQ(e.logical, 1 * MiB);
	CHECK_EQ(e.length, 2 * 4096);
	CHECK_EQ(t_seek(&fs, ino, 5 * 4096, DAXFS_SEEK_DATA), (u64)-ENXIO);
	/* growing into it shows zeros */
	CHECK_EQ(daxfs_truncate(&fs, ino, 2 * MiB), 0);
	CHECK_EQ(t_pread(&fs, ino, out, 2 * 4096, 1 * MiB), 2 * 4096);
	CHECK(all(out, 0, 2 * 4096, 0));
	CHECK_EQ(daxfs_truncate(&fs, ino, 5 * 4096), 0);
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 1 * MiB, 4096), 0);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Whether mtime and ctime moved off the 1000 ns set_old_times left. */
static bool times_moved(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a;

	CHECK_EQ(t_getattr(fs, ino, &a), 0);
	return a.mtime_ns != 1000 && a.ctime_ns != 1000;
}

static void set_old_times(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a = { .mtime_ns = 1000, .ctime_ns = 1000 };

	CHECK_EQ(daxfs_setattr(fs, ino, DAXFS_ATTR_MTIME | DAXFS_ATTR_CTIME,
			       &a), 0);
	CHECK(!times_moved(fs, ino));
}

/* Every mode moves mtime and ctime, as Linux's file_modified() does in
 * ext4's, xfs' and tmpfs' fallocate, also when the size stays: the
 * differential test against tmpfs found KEEP_SIZE and a mode 0 inside
 * the file leaving them. */
static void test_prealloc_times(void)
{
	static const u32 modes[] = { 0, KEEP, KEEP, PUNCH, ZERO, ZERO | KEEP };
	static const u64 offs[] = { 0, 4096, 1 * MiB, 100, 0, 3 * MiB };
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f");
	unsigned int i;

	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 3 * 4096, 0), 3 * 4096);
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		set_old_times(&fs, ino);
		CHECK_EQ(daxfs_fallocate(&fs, ino, modes[i], offs[i], 4096), 0);
		CHECK(times_moved(&fs, ino));
	}
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* ZERO_RANGE: zeros in place, the blocks keep pages, the size grows
 * unless KEEP_SIZE. */
static void test_zero_range(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f");

	memset(buf, 0x33, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 3 * 4096, 0), 3 * 4096);
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO | KEEP, 100, 5000), 0);
	CHECK_EQ(t_size(&fs, ino), 3 * 4096);
	CHECK_EQ(t_blocks(&fs, ino), 3);
	CHECK_EQ(t_pread(&fs, ino, out, 3 * 4096, 0), 3 * 4096);
	CHECK(all(out, 0, 100, 0x33));
	CHECK(all(out, 100, 5100, 0));
	CHECK(all(out, 5100, 3 * 4096, 0x33));
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO, 8192, 4 * 4096), 0);
	CHECK_EQ(t_size(&fs, ino), 6 * 4096);
	CHECK_EQ(t_blocks(&fs, ino), 6);
	CHECK_EQ(t_pread(&fs, ino, out, 6 * 4096, 0), 6 * 4096);
	CHECK(all(out, 5100, 8192, 0x33));
	CHECK(all(out, 8192, 6 * 4096, 0));
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_HOLE), 6 * 4096);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Linux's errors; a full pool changes no byte and no size. */
static void test_errors(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), d = 0;

	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 0), -EINVAL);
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, (u64)-1, 10), -EINVAL);
	CHECK_EQ(daxfs_fallocate(&fs, ino, DAXFS_FALLOC_PUNCH_HOLE, 0, 10),
		 -EOPNOTSUPP);
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH | ZERO, 0, 10), -EOPNOTSUPP);
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0x08, 0, 10), -EOPNOTSUPP);
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, DAXFS_MAX_FILE_SIZE, 1), -EFBIG);
	CHECK_EQ(daxfs_mkdir(&fs, 1, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_fallocate(&fs, d, 0, 0, 10), -EISDIR);
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_DATA), (u64)-ENXIO);
	CHECK_EQ(t_seek(&fs, ino, 0, 7), (u64)-EINVAL);

	memset(buf, 0x44, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 8192, 0), 8192);
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 64 * MiB), -ENOSPC);
	CHECK_EQ(t_size(&fs, ino), 8192);
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO, 100, 64 * MiB), -ENOSPC);
	CHECK_EQ(t_size(&fs, ino), 8192);
	CHECK_EQ(t_pread(&fs, ino, out, 8192, 0), 8192);
	CHECK(all(out, 0, 8192, 0x44));
	/* punching frees what the failed calls left */
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH, 8192, 64 * MiB), 0);
	CHECK_EQ(t_blocks(&fs, ino), 2);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Extents: physically contiguous runs are one extent; a punched middle
 * splits it; the offset picks the first extent that ends after it. */
static void test_extents(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), pos = 0, total = 0, n = 0;
	struct daxfs_extent e;

	memset(buf, 0x66, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 64 * 4096, 0), 64 * 4096);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 4096, 1ULL << 40), 4096);
	CHECK_EQ(daxfs_fallocate(&fs, ino, PUNCH, 10 * 4096, 4096), 0);
	for (;;) {
		CHECK_EQ(daxfs_next_extent(&fs, ino, pos, &e), 0);
		if (!e.length)
			break;
		CHECK(e.logical >= pos || pos < e.logical + e.length);
		CHECK_EQ(e.flags, 0);
		CHECK(e.logical != 10 * 4096);
		total += e.length;
		pos = e.logical + e.length;
		n++;
	}
	CHECK_EQ(total, 64 * 4096);
	CHECK(n >= 3);
	CHECK_EQ(t_seek(&fs, ino, 11 * 4096 - 1, DAXFS_SEEK_DATA), 11 * 4096);
	CHECK_EQ(t_seek(&fs, ino, 64 * 4096, DAXFS_SEEK_DATA), 1ULL << 40);
	CHECK_EQ(t_seek(&fs, ino, (1ULL << 40) + 5, DAXFS_SEEK_HOLE),
		 (1ULL << 40) + 4096);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* A write on host A is copying when host B punches [100, 32768): the
 * punch waits for it (the gate), so the outcome is write-then-punch:
 * the write's bytes below 100, zeros above.  A punch that ignored the
 * gate ran first and the write's first page, zeroed in place, got the
 * write's bytes again: a mix that no serial order gives. */
struct race {
	struct wsrc w;
	struct daxfs_fs *other;
	u64 ino;
	pthread_t th;
	bool started;
	u64 done;
	int ret;
};

static void *punch_thread(void *arg)
{
	struct race *r = arg;

	r->ret = daxfs_fallocate(r->other, r->ino, PUNCH, 100, 8 * 4096 - 100);
	daxfs_store(&r->done, 1);
	return NULL;
}

static u64 race_actor(void *ctx, void *dst, u64 len)
{
	struct race *r = ctx;
	struct daxfs_inode *ip = t_ip(r->other, r->ino);
	int i;

	if (!r->started) {
		r->started = true;
		CHECK_EQ(pthread_create(&r->th, NULL, punch_thread, r), 0);
		/* the punch closed the gate and waits for us */
		while (!daxfs_load(&ip->parent) && !daxfs_load(&r->done))
			sched_yield();
		for (i = 0; i < 1000; i++)
			sched_yield();
	}
	return w_actor(&r->w, dst, len);
}

static void test_punch_races_write(void)
{
	struct daxfs_fs a, b;
	void *r = t_setup(&a, REGION, NULL);
	u64 ino = t_mkreg(&a, 1, "f");
	struct race rc = { { buf, 0, 0, 0 }, &b, ino, 0, false, 0, 0 };
	struct t_renewer ra, rb;

	CHECK_EQ(t_join(&b, r, REGION), 0);
	/* a's write stays in one op while b's punch waits for it */
	t_renew_start(&ra, &a);
	t_renew_start(&rb, &b);
	memset(buf, 0x22, sizeof(buf));
	CHECK_EQ(t_pwrite(&a, ino, buf, 8 * 4096, 0), 8 * 4096);
	memset(buf, 0x99, sizeof(buf));
	CHECK_EQ(daxfs_write(&a, ino, 0, 8 * 4096, 0, race_actor, &rc, NULL),
		 8 * 4096);
	CHECK_EQ(pthread_join(rc.th, NULL), 0);
	CHECK_EQ(rc.ret, 0);
	CHECK_EQ(t_pread(&a, ino, out, 8 * 4096, 0), 8 * 4096);
	CHECK(all(out, 0, 100, 0x99));
	CHECK(all(out, 100, 8 * 4096, 0));
	CHECK_EQ(t_blocks(&a, ino), 1);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	daxfs_host_leave(&b);
	daxfs_host_leave(&a);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_punch);
	RUN(test_punch_shapes);
	RUN(test_prealloc);
	RUN(test_prealloc_times);
	RUN(test_zero_range);
	RUN(test_errors);
	RUN(test_extents);
	RUN(test_punch_races_write);
	return t_done();
}
