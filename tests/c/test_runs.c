// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * 2 MiB runs (format 11, docs/files.md "Runs"): a write that covers a
 * whole aligned 2 MiB of a plain file publishes 512 contiguous pages with
 * one slot word.  Each test checks what a user sees (the bytes, the block
 * count, the space) and what fsck finds, through every way a run leaves a
 * file: rewritten in place, cut in the middle (split), cut whole, punched,
 * freed, and lost to another host's leaf.
 */
#include <pthread.h>
#include <unistd.h>

#include "tfile.h"
#include "tpool.h"

#define REGION (64 * MiB)
#define PAGE 4096ULL
#define RUN_B (2 * MiB)
#define PUNCH (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE)

static u8 src[8 * MiB], got[16 * MiB];

static void fill(u8 *p, u64 len, u32 tag)
{
	u64 i;

	for (i = 0; i < len; i += 8) {
		u64 v = (i / 8) * 0x9e3779b97f4a7c15ULL ^ tag;

		memcpy(p + i, &v, 8);
	}
}

/* The level-2 slot of blocks [k * 512, (k + 1) * 512) of ino (the tree
 * must be of height 2). */
static u64 l2_slot(struct daxfs_fs *fs, u64 ino, u32 k)
{
	u64 root = daxfs_load(&t_ip(fs, ino)->root);
	struct daxfs_radix_node *n;

	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 2);
	n = daxfs_ptr(fs, root & ~4095ULL, PAGE, PAGE);
	return daxfs_load(&n->slot[k]);
}

static bool is_run(u64 v)
{
	return (v & DAXFS_RADIX_RUN) && !((v & ~DAXFS_RADIX_RUN) & (RUN_B - 1));
}

static void check_bytes(struct daxfs_fs *fs, u64 ino, u64 off, u64 len,
			const u8 *want)
{
	CHECK_EQ(t_pread(fs, ino, got, len, off), (s64)len);
	CHECK(!memcmp(got, want, len));
}

/* A whole aligned 2 MiB is one run; anything less, or unaligned, is not. */
static void test_run_made(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), g = t_mkreg(&fs, 1, "g");
	u64 h = t_mkreg(&fs, 1, "h"), v, pg, b;
	struct rdst rd = { got, 0, 0, 0 };

	fill(src, 4 * MiB, 1);
	CHECK_EQ(t_pwrite(&fs, f, src, 4 * MiB, 0), (s64)(4 * MiB));
	CHECK(is_run(l2_slot(&fs, f, 0)));
	CHECK(is_run(l2_slot(&fs, f, 1)));
	CHECK_EQ(t_blocks(&fs, f), 1024);
	/* every block's page is the run's, in order */
	v = l2_slot(&fs, f, 1) & ~DAXFS_RADIX_RUN;
	for (b = 512; b < 1024; b++) {
		CHECK_EQ(daxfs_block_page(&fs, f, b, &pg), 0);
		CHECK_EQ(pg, v + (b - 512) * PAGE);
	}
	/* a read of one run is one actor call */
	CHECK_EQ(daxfs_read(&fs, f, 2 * MiB, 2 * MiB, r_actor, &rd),
		 (s64)(2 * MiB));
	CHECK_EQ(rd.calls, 1);
	CHECK(!memcmp(got, src + 2 * MiB, 2 * MiB));
	check_bytes(&fs, f, 0, 4 * MiB, src);
	CHECK_EQ(t_seek(&fs, f, 0, DAXFS_SEEK_HOLE), 4 * MiB);

	/* 2 MiB from 4 KiB: no whole aligned piece, pages */
	CHECK_EQ(t_pwrite(&fs, g, src, 2 * MiB, PAGE), (s64)(2 * MiB));
	CHECK(!is_run(l2_slot(&fs, g, 0)));
	CHECK_EQ(t_blocks(&fs, g), 512);
	check_bytes(&fs, g, PAGE, 2 * MiB, src);
	/* 1 MiB at an aligned start, then the rest: pages, no run */
	CHECK_EQ(t_pwrite(&fs, h, src, 1 * MiB, 2 * MiB), (s64)MiB);
	CHECK_EQ(t_pwrite(&fs, h, src + MiB, 1 * MiB, 3 * MiB), (s64)MiB);
	CHECK(!is_run(l2_slot(&fs, h, 1)));
	CHECK_EQ(t_blocks(&fs, h), 512);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Rewrites land in the run's pages; nothing is allocated. */
static void test_run_rewrite(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), used, run;

	fill(src, 2 * MiB, 2);
	CHECK_EQ(t_pwrite(&fs, f, src, 2 * MiB, 0), (s64)RUN_B);
	run = l2_slot(&fs, f, 0);
	used = t_usedbytes(&fs);
	fill(src + 5000, 300000, 3);
	CHECK_EQ(t_pwrite(&fs, f, src + 5000, 300000, 5000), 300000);
	fill(src, 2 * MiB, 4);
	CHECK_EQ(t_pwrite(&fs, f, src, 2 * MiB, 0), (s64)RUN_B);
	CHECK_EQ(l2_slot(&fs, f, 0), run);
	CHECK_EQ(t_usedbytes(&fs), used);
	CHECK_EQ(t_blocks(&fs, f), 512);
	check_bytes(&fs, f, 0, 2 * MiB, src);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* A truncate inside a run splits it into a leaf naming the same pages and
 * cuts the pages past the new end; one at a run's start drops it whole. */
static void test_run_truncate(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), used, run0, run1, cut = 3 * MiB + 100;
	u64 pg;

	fill(src, 6 * MiB, 5);
	CHECK_EQ(t_pwrite(&fs, f, src, 6 * MiB, 0), (s64)(6 * MiB));
	run0 = l2_slot(&fs, f, 0);
	used = t_usedbytes(&fs);
	CHECK_EQ(daxfs_truncate(&fs, f, 4 * MiB), 0);
	/* the third run went with one CAS: exactly its 2 MiB */
	CHECK_EQ(used - t_usedbytes(&fs), 2 * MiB);
	CHECK_EQ(l2_slot(&fs, f, 2), 0);
	used = t_usedbytes(&fs);
	run1 = l2_slot(&fs, f, 1) & ~DAXFS_RADIX_RUN;
	CHECK_EQ(daxfs_truncate(&fs, f, cut), 0);
	CHECK_EQ(l2_slot(&fs, f, 0), run0);
	CHECK(!is_run(l2_slot(&fs, f, 1)) && l2_slot(&fs, f, 1));
	CHECK_EQ(t_blocks(&fs, f), 512 + 257);
	/* 255 pages freed, one leaf node made */
	CHECK_EQ(used - t_usedbytes(&fs), 254 * PAGE);
	/* the kept pages are still the run's */
	CHECK_EQ(daxfs_block_page(&fs, f, 768, &pg), 0);
	CHECK_EQ(pg, run1 + 256 * PAGE);
	check_bytes(&fs, f, 0, cut, src);
	/* an extension shows zeros past the cut */
	CHECK_EQ(daxfs_truncate(&fs, f, 4 * MiB), 0);
	CHECK_EQ(t_pread(&fs, f, got, MiB, 3 * MiB), (s64)MiB);
	CHECK(!memcmp(got, src + 3 * MiB, 100));
	memset(src, 0, MiB);
	CHECK(!memcmp(got + 100, src, MiB - 100));
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* A punch inside a run splits it; ZERO_RANGE zeroes one in place; a
 * punch over a whole run takes it whole. */
static void test_run_punch(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), used, run;
	struct daxfs_extent ext;

	fill(src, 4 * MiB, 6);
	CHECK_EQ(t_pwrite(&fs, f, src, 4 * MiB, 0), (s64)(4 * MiB));
	used = t_usedbytes(&fs);
	CHECK_EQ(daxfs_fallocate(&fs, f, PUNCH, 100 * PAGE, 156 * PAGE), 0);
	CHECK(!is_run(l2_slot(&fs, f, 0)));
	CHECK_EQ(t_blocks(&fs, f), 1024 - 156);
	CHECK_EQ(used - t_usedbytes(&fs), 155 * PAGE);
	CHECK_EQ(t_seek(&fs, f, 0, DAXFS_SEEK_HOLE), 100 * PAGE);
	CHECK_EQ(t_seek(&fs, f, 100 * PAGE, DAXFS_SEEK_DATA), 256 * PAGE);
	memset(src + 100 * PAGE, 0, 156 * PAGE);
	check_bytes(&fs, f, 0, 4 * MiB, src);
	/* ZERO_RANGE inside a run zeroes its pages in place: the run stays,
	 * its pages written data (one extent, no unwritten flag) */
	run = l2_slot(&fs, f, 1);
	CHECK_EQ(daxfs_fallocate(&fs, f, DAXFS_FALLOC_ZERO_RANGE |
				 DAXFS_FALLOC_KEEP_SIZE, 3 * MiB, 8 * PAGE), 0);
	CHECK_EQ(l2_slot(&fs, f, 1), run);
	CHECK_EQ(t_blocks(&fs, f), 1024 - 156);
	memset(src + 3 * MiB, 0, 8 * PAGE);
	check_bytes(&fs, f, 0, 4 * MiB, src);
	CHECK_EQ(daxfs_next_extent(&fs, f, 2 * MiB, &ext), 0);
	CHECK_EQ(ext.logical, 2 * MiB);
	CHECK_EQ(ext.length, 2 * MiB);
	CHECK(!(ext.flags & DAXFS_EXTENT_UNWRITTEN));
	used = t_usedbytes(&fs);
	CHECK_EQ(daxfs_fallocate(&fs, f, PUNCH, 2 * MiB, 2 * MiB), 0);
	CHECK_EQ(l2_slot(&fs, f, 1), 0);
	CHECK_EQ(used - t_usedbytes(&fs), 2 * MiB);
	CHECK_EQ(t_blocks(&fs, f), 512 - 156);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* The last link gone: every page of every run comes back. */
static void test_run_freed(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f, used, pg;

	used = t_usedbytes(&fs);
	f = t_mkfile(&fs);
	fill(src, 8 * MiB, 7);
	CHECK_EQ(t_pwrite(&fs, f, src, 8 * MiB, 0), (s64)(8 * MiB));
	/* map_block of a run's block finds its page, allocates nothing */
	CHECK_EQ(daxfs_map_block(&fs, f, 1000, true, &pg), 0);
	CHECK_EQ(pg, (l2_slot(&fs, f, 1) & ~DAXFS_RADIX_RUN) + 488 * PAGE);
	CHECK_EQ(t_blocks(&fs, f), 2048);
	t_freefile(&fs, f);
	CHECK(t_usedbytes(&fs) - used < 4 * PAGE);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* The final drop on a full pool: a whole run's leaf does not come from
 * the limbo reserve (its retires need it), so the runs go out whole
 * (run_take); the file is freed all the same and nothing leaks. */
static void test_run_freed_full_pool(void)
{
	static u64 hoard[REGION / PAGE];
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	struct daxfs_op op;
	u64 f, n = 0, used, i;

	used = t_usedbytes(&fs);
	f = t_mkfile(&fs);
	fill(src, 8 * MiB, 9);
	CHECK_EQ(t_pwrite(&fs, f, src, 8 * MiB, 0), (s64)(8 * MiB));
	CHECK_EQ(t_blocks(&fs, f), 2048);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	while (n < REGION / PAGE &&
	       (hoard[n] = daxfs_alloc(&op, DAXFS_CLASS_PAGE)) != 0)
		n++;
	CHECK(n > 0 && n < REGION / PAGE);
	daxfs_op_end(&op);
	t_freefile(&fs, f);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, hoard[i], DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	CHECK(t_usedbytes(&fs) - used < 4 * PAGE);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* insert_run finds its slot taken by a leaf, or by another run: 1, and
 * nothing changes. */
static void test_run_slot_taken(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), run, before;
	struct daxfs_op op;

	fill(src, 4 * MiB, 8);
	CHECK_EQ(t_pwrite(&fs, f, src, PAGE, 2 * MiB + PAGE), (s64)PAGE);
	CHECK_EQ(t_pwrite(&fs, f, src, 2 * MiB, 0), (s64)RUN_B);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	run = daxfs_alloc_run_held(&op);
	CHECK(run != 0);
	before = t_ip(&fs, f)->blocks;
	CHECK_EQ(daxfs_radix_insert_run(&op, t_ip(&fs, f), 512, run), 1);
	CHECK_EQ(daxfs_radix_insert_run(&op, t_ip(&fs, f), 0, run), 1);
	CHECK_EQ(daxfs_radix_insert_run(&op, t_ip(&fs, f), 5, run), -EINVAL);
	CHECK_EQ(t_ip(&fs, f)->blocks, before);
	CHECK_EQ(daxfs_hold_pages(&op, 0, 0), 0);
	daxfs_run_free(&op, run);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* What fsck finds in a run word: bytes past EOF in a run's page (zeroed
 * by the repair: a run cannot lose one page), a run named by two files,
 * an unaligned run word (dropped: its pages show as leaked, then freed). */
static void test_run_fsck(void)
{
	struct daxfs_fs fs, fs2;
	struct daxfs_check_result res;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), g = t_mkreg(&fs, 1, "g"), v, run1;
	struct daxfs_inode *fi, *gi;
	struct daxfs_radix_node *n;
	u64 *slot;

	fill(src, 4 * MiB, 10);
	CHECK_EQ(t_pwrite(&fs, f, src, 4 * MiB, 0), (s64)(4 * MiB));
	CHECK_EQ(t_pwrite(&fs, g, src, 2 * MiB, 0), (s64)RUN_B);
	fi = t_ip(&fs, f);
	gi = t_ip(&fs, g);
	run1 = l2_slot(&fs, f, 1) & ~DAXFS_RADIX_RUN;
	n = daxfs_ptr(&fs, daxfs_load(&gi->root) & ~4095ULL, PAGE, PAGE);
	slot = &n->slot[0];
	v = daxfs_load(slot);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);

	/* f's size cut behind fsck's back: 256 pages of bytes past EOF */
	daxfs_store(&fi->size, 3 * MiB);
	CHECK_EQ(t_fsck(r, REGION, false, NULL, NULL, &res), 0);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	CHECK_EQ(t_fsck(r, REGION, true, NULL, NULL, &res), 0);
	t_check_clean(r, REGION);
	memset(got, 0, MiB);
	CHECK(!memcmp((u8 *)r + run1 + MiB, got, MiB));
	CHECK(!memcmp((u8 *)r + run1, src + 2 * MiB, MiB));

	/* g names f's first run too */
	daxfs_store(slot, daxfs_load(&((struct daxfs_radix_node *)((u8 *)r +
		(daxfs_load(&fi->root) & ~4095ULL)))->slot[0]));
	CHECK_EQ(t_fsck(r, REGION, false, NULL, NULL, &res), 0);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	daxfs_store(slot, v);
	t_check_clean(r, REGION);

	/* an unaligned run word: dropped, its run leaked then freed */
	daxfs_store(slot, v + PAGE);
	CHECK_EQ(t_fsck(r, REGION, false, NULL, NULL, &res), 0);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	CHECK_EQ(t_fsck(r, REGION, true, NULL, NULL, &res), 0);
	t_check_clean(r, REGION);
	CHECK_EQ(daxfs_load(slot), 0);

	/* what a user reads afterwards */
	CHECK_EQ(t_join(&fs2, r, REGION), 0);
	CHECK_EQ(t_pread(&fs2, f, got, 3 * MiB, 0), (s64)(3 * MiB));
	CHECK(!memcmp(got, src, 3 * MiB));
	CHECK_EQ(t_pread(&fs2, g, got, 2 * MiB, 0), (s64)(2 * MiB));
	memset(src, 0, 2 * MiB);
	CHECK(!memcmp(got, src, 2 * MiB));
	daxfs_host_leave(&fs2);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/*
 * A writer host dies at each step of a run's life (write_run,
 * run_scatter); another recovers it.  What it held comes back exactly
 * once (used bytes as before, fsck: nothing leaked, nothing freed twice),
 * and what it published stays the file's.
 */
enum run_step {
	RS_NONE,		/* the op began, nothing allocated yet */
	RS_HELD,		/* the run in the hold, being filled */
	RS_NAMED,		/* the record names it, not published */
	RS_SCATTERING,		/* slot taken: pages 1.. back in the hold */
	RS_PUBLISHED,		/* the CAS went in, the record still set */
	RS_PAGE0_IN,		/* scattering: page 0 published in a leaf */
};

/* Used bytes after the recovery less before the write (what the dead
 * host kept of its own is in every case's figure alike: RS_NONE's). */
static s64 dead_run_writer(enum run_step st)
{
	struct daxfs_fs a, b;
	void *r = t_setup(&a, REGION, NULL);
	u64 f = t_mkreg(&a, 1, "f"), before, after, run, win, pg;
	struct daxfs_inode *ip;
	struct daxfs_op op;

	CHECK_EQ(daxfs_truncate(&a, f, 2 * MiB), 0);
	CHECK_EQ(t_join(&b, r, REGION), 0);
	ip = t_ip(&a, f);
	before = t_usedbytes(&a);
	CHECK_EQ(daxfs_op_begin(&b, &op), 0);
	CHECK_EQ(daxfs_intent_set(&op, DAXFS_INTENT_FILE_WRITE, f, 0, RUN_B,
				  0), 0);
	run = st == RS_NONE ? 0 : daxfs_alloc_run_held(&op);
	CHECK(run != 0 || st == RS_NONE);
	if (run)
		memset((u8 *)r + run, 0x5a, RUN_B);
	if (st >= RS_NAMED) {
		daxfs_wrec_set(&op, 0, run | DAXFS_RADIX_RUN);
		CHECK_EQ(daxfs_hold_pages(&op, 0, 0), 0);
	}
	if (st == RS_PUBLISHED)
		CHECK_EQ(daxfs_radix_insert_run(&op, ip, 0, run), 0);
	if (st == RS_SCATTERING || st == RS_PAGE0_IN)
		CHECK_EQ(daxfs_hold_pages(&op, run + PAGE, DAXFS_RUN_PAGES - 1), 0);
	if (st == RS_PAGE0_IN) {
		daxfs_wrec_set(&op, 0, run);
		CHECK_EQ(daxfs_radix_insert(&op, ip, 0, run, &win), 0);
		CHECK_EQ(win, 0);
	}
	t_age(&b, b.host);
	CHECK_EQ(daxfs_recover_dead_hosts(&a), 1);
	after = t_usedbytes(&a);
	CHECK_EQ(daxfs_block_page(&a, f, 0, &pg), 0);
	CHECK_EQ(t_pread(&a, f, got, 2 * MiB, 0), (s64)(2 * MiB));
	if (st == RS_PUBLISHED) {
		CHECK_EQ(pg, run);
		CHECK_EQ(t_blocks(&a, f), 512);
		memset(src, 0x5a, RUN_B);
	} else if (st == RS_PAGE0_IN) {
		CHECK_EQ(pg, run);
		CHECK_EQ(t_blocks(&a, f), 1);
		memset(src, 0, RUN_B);
		memset(src, 0x5a, PAGE);
	} else {
		CHECK_EQ(pg, 0);
		CHECK_EQ(t_blocks(&a, f), 0);
		memset(src, 0, RUN_B);
	}
	CHECK(!memcmp(got, src, RUN_B));
	daxfs_host_leave(&a);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
	return (s64)(after - before);
}

static void test_run_writer_dies(void)
{
	s64 none = dead_run_writer(RS_NONE);

	CHECK_EQ(dead_run_writer(RS_HELD), none);
	CHECK_EQ(dead_run_writer(RS_NAMED), none);
	CHECK_EQ(dead_run_writer(RS_SCATTERING), none);
	/* the run, and the root node of the tree of height 2 it needed */
	CHECK_EQ(dead_run_writer(RS_PUBLISHED), none + (s64)(RUN_B + PAGE));
	/* page 0 alone: a direct root */
	CHECK_EQ(dead_run_writer(RS_PAGE0_IN), none + (s64)PAGE);
}

/*
 * Two hosts race on one file: A writes whole 2 MiB pieces (runs), B
 * writes single pages into the same pieces at the same time.  Where B's
 * leaf wins the slot, A's run goes in page by page (run_scatter) and its
 * bytes land in B's pages where B was first.  Afterwards every page holds
 * one writer's whole page, the block count is the pages mapped, and fsck
 * finds nothing.  Both hosts renew their leases from a thread of their
 * own, as a front end's heartbeat does: starved of CPU (qemu-user in a
 * loaded CI), one writer idles for a lease while the other writes and
 * checks, and would be declared dead (-ESTALE).
 */
#define RACE_PIECES 6
#define RACE_ROUNDS 40

struct racer {
	struct daxfs_fs *fs;
	u64 ino;
	u32 round;
	s64 stop_err;		/* the first failed write's result */
};

static u8 page_b[PAGE];

static void *race_a(void *arg)
{
	struct racer *t = arg;
	u32 k;

	for (k = 0; k < RACE_PIECES; k++) {
		s64 n = t_pwrite(t->fs, t->ino, src, RUN_B, k * RUN_B);

		if (n != (s64)RUN_B && !t->stop_err)
			t->stop_err = n ? n : -1;
	}
	return NULL;
}

static void *race_b(void *arg)
{
	struct racer *t = arg;
	u32 k, j;

	/* from the last piece back, after a start that varies by round: A
	 * (first to last) meets B somewhere, where B's leaf may take a
	 * slot during A's copy */
	usleep((t->round % 8) * 200);
	for (j = 0; j < 4; j++)
		for (k = RACE_PIECES; k-- > 0;) {
			u64 b = k * 512 + (t->round * 37 + j * 131) % 512;
			s64 n = t_pwrite(t->fs, t->ino, page_b, PAGE, b * PAGE);

			if (n != (s64)PAGE && !t->stop_err)
				t->stop_err = n ? n : -1;
		}
	return NULL;
}

/* A leaf most of whose pages sit where a 2 MiB run would put them: a
 * run that went in page by page. */
static bool scattered(struct daxfs_fs *fs, u64 leaf)
{
	struct daxfs_radix_node *n = daxfs_ptr(fs, leaf, PAGE, PAGE);
	u32 i, at = 0;

	for (i = 0; n && i < 512; i++) {
		u64 pg = daxfs_load(&n->slot[i]);

		at += pg && !((pg - i * PAGE) & (RUN_B - 1));
	}
	return at >= 400;
}

static void test_run_races_pages(void)
{
	struct daxfs_fs a, b;
	void *r = t_setup(&a, REGION, NULL);
	u32 round, k, runs = 0, leaves = 0, scatters = 0;
	struct t_renewer ra, rb;
	u64 blk;

	CHECK_EQ(t_join(&b, r, REGION), 0);
	t_renew_start(&ra, &a);
	t_renew_start(&rb, &b);
	fill(src, RUN_B, 9);
	memset(page_b, 0xbb, PAGE);
	for (round = 0; round < RACE_ROUNDS; round++) {
		u64 f = t_mkfile(&a);
		struct racer ta = { &a, f, round, 0 }, tb = { &b, f, round, 0 };
		pthread_t th[2];

		pthread_create(&th[0], NULL, race_a, &ta);
		pthread_create(&th[1], NULL, race_b, &tb);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
		CHECK_EQ(ta.stop_err, 0);
		CHECK_EQ(tb.stop_err, 0);
		CHECK_EQ(t_pread(&a, f, got, RACE_PIECES * RUN_B, 0),
			 (s64)(RACE_PIECES * RUN_B));
		for (blk = 0; blk < RACE_PIECES * 512; blk++) {
			const u8 *p = got + blk * PAGE;

			CHECK(!memcmp(p, src + (blk % 512) * PAGE, PAGE) ||
			      !memcmp(p, page_b, PAGE));
		}
		for (k = 0; k < RACE_PIECES; k++) {
			u64 v = l2_slot(&a, f, k);

			if (is_run(v))
				runs++;
			else if (scattered(&a, v))
				scatters++;
			else
				leaves++;
		}
		CHECK_EQ(t_blocks(&a, f), RACE_PIECES * 512);
		t_freefile(&a, f);
	}
	fprintf(stderr, "  pieces: %u runs, %u runs scattered into a leaf, "
		"%u leaves\n", runs, scatters, leaves);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	daxfs_host_leave(&b);
	daxfs_host_leave(&a);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_run_made);
	RUN(test_run_rewrite);
	RUN(test_run_truncate);
	RUN(test_run_punch);
	RUN(test_run_freed);
	RUN(test_run_freed_full_pool);
	RUN(test_run_slot_taken);
	RUN(test_run_fsck);
	RUN(test_run_writer_dies);
	RUN(test_run_races_pages);
	return t_done();
}
