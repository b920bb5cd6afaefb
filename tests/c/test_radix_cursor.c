// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The leaf cursor of the write path (core/radix-cursor.c, docs/files.md
 * "Leaf cursor"): a leaf resolved once and used for many blocks goes out
 * of date when another host drops it, fills a hole it showed, or grows the
 * tree; each case must still put the page where a fresh walk finds it,
 * count it once, and leave fsck nothing to find.
 */
#include "tfile.h"
#include "tpool.h"

#define REGION (32 * MiB)
#define PAGE 4096u
#define PUNCH (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE)

static u8 buf[600 * PAGE], out[PAGE];

static u64 fresh_page(struct daxfs_op *op, u8 fill)
{
	u64 pg = daxfs_alloc(op, DAXFS_CLASS_PAGE);

	CHECK(pg != 0);
	memset(daxfs_ptr(op->fs, pg, PAGE, PAGE), fill, PAGE);
	return pg;
}

/* Hosts a and b on a fresh region with file "f" of len bytes of fill
 * written by a, and an op of a with a fresh cursor. */
static void *setup(struct daxfs_fs *a, struct daxfs_fs *b, u64 *ino,
		   u8 fill, u64 len, struct daxfs_op *op, struct daxfs_rcur *lf)
{
	void *r = t_setup(a, REGION, NULL);

	*ino = t_mkreg(a, 1, "f");
	CHECK_EQ(t_join(b, r, REGION), 0);
	memset(buf, fill, len);
	CHECK_EQ(t_pwrite(a, *ino, buf, len, 0), (s64)len);
	CHECK_EQ(daxfs_op_begin(a, op), 0);
	daxfs_rcur_init(lf);
	return r;
}

static void both_leave_clean(struct daxfs_fs *a, struct daxfs_fs *b, void *r)
{
	daxfs_host_leave(b);
	daxfs_host_leave(a);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Host B punches the whole leaf the cursor holds: its slots are sealed
 * and the node unhooked.  The stale cursor reads a hole there, and an
 * insert through it goes in through the root into a new leaf. */
static void test_leaf_dropped(void)
{
	struct daxfs_fs a, b;
	struct daxfs_rcur lf;
	struct daxfs_op op;
	u64 ino, pg, got, win, blocks;
	u32 i;
	void *r = setup(&a, &b, &ino, 0x11, sizeof(buf), &op, &lf);
	struct daxfs_inode *ip = t_ip(&a, ino);

	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 520, &got), 0);
	CHECK(got != 0);
	/* leaf 1 (blocks 512..1023) wholly punched by the other host */
	CHECK_EQ(daxfs_fallocate(&b, ino, PUNCH, 512ULL * PAGE,
				 512ULL * PAGE), 0);
	blocks = daxfs_load(&ip->blocks);
	CHECK_EQ(blocks, 512);
	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 520, &got), 0);
	CHECK_EQ(got, 0);
	pg = fresh_page(&op, 0x77);
	CHECK_EQ(daxfs_rcur_insert(&op, ip, &lf, 520, pg, &win), 0);
	CHECK_EQ(win, 0);
	CHECK_EQ(daxfs_radix_get(&a, ip, 520, &got), 0);
	CHECK_EQ(got, pg);
	/* the cursor follows: the next block of the new leaf is a hole */
	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 521, &got), 0);
	CHECK_EQ(got, 0);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_load(&ip->blocks), blocks + 1);
	CHECK_EQ(t_pread(&b, ino, out, PAGE, 520ULL * PAGE), PAGE);
	for (i = 0; i < PAGE; i++)
		CHECK_EQ(out[i], 0x77);
	CHECK_EQ(t_pread(&b, ino, out, PAGE, 519ULL * PAGE), PAGE);
	CHECK_EQ(out[0], 0);
	both_leave_clean(&a, &b, r);
}

/* The cursor showed a hole (a one-page file: direct root); host B then
 * writes that block, growing the tree.  An insert through the cursor must
 * find B's page as the winner, not publish a second one. */
static void test_hole_filled(void)
{
	struct daxfs_fs a, b;
	struct daxfs_rcur lf;
	struct daxfs_op op;
	u64 ino, pg, got, win;
	void *r = setup(&a, &b, &ino, 0x22, PAGE, &op, &lf);
	struct daxfs_inode *ip = t_ip(&a, ino);

	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 5, &got), 0);
	CHECK_EQ(got, 0);
	CHECK_EQ(t_pwrite(&b, ino, buf, PAGE, 5ULL * PAGE), PAGE);
	pg = fresh_page(&op, 0x33);
	CHECK_EQ(daxfs_rcur_insert(&op, ip, &lf, 5, pg, &win), 0);
	CHECK(win != 0 && win != pg);
	CHECK_EQ(daxfs_radix_get(&a, ip, 5, &got), 0);
	CHECK_EQ(got, win);
	CHECK_EQ(daxfs_free_now(&op, pg, DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_load(&ip->blocks), 2);
	both_leave_clean(&a, &b, r);
}

/* A direct root: the cursor's slot of block 0 is its own snapshot word.
 * An insert of block 0 reports the root's page as the winner and never
 * stores into the snapshot; after host B grows the tree the snapshot
 * still names the same page (growth moves it, it does not copy it). */
static void test_direct_root(void)
{
	struct daxfs_fs a, b;
	struct daxfs_rcur lf;
	struct daxfs_op op;
	u64 ino, pg, p0, got, win;
	void *r = setup(&a, &b, &ino, 0x44, PAGE, &op, &lf);
	struct daxfs_inode *ip = t_ip(&a, ino);

	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 0, &p0), 0);
	CHECK(p0 != 0);
	CHECK_EQ(t_pwrite(&b, ino, buf, PAGE, 9000ULL * PAGE), PAGE);
	CHECK_EQ(daxfs_rcur_page(&a, ip, &lf, 0, &got), 0);
	CHECK_EQ(got, p0);
	pg = fresh_page(&op, 0x55);
	CHECK_EQ(daxfs_rcur_insert(&op, ip, &lf, 0, pg, &win), 0);
	CHECK_EQ(win, p0);
	CHECK_EQ(daxfs_free_now(&op, pg, DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_radix_get(&a, ip, 0, &got), 0);
	CHECK_EQ(got, p0);
	CHECK_EQ(daxfs_load(&ip->blocks), 2);
	both_leave_clean(&a, &b, r);
}

int main(void)
{
	RUN(test_leaf_dropped);
	RUN(test_hole_filled);
	RUN(test_direct_root);
	return t_done();
}
