// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs_next_page (fsync's walk, docs/kernel.md "Data path details"): it
 * finds exactly the pool pages a file has, skips holes a subtree at a
 * time, and a sparse file of 2^48 bytes takes a few calls, not 2^36.
 */
#include "tfile.h"

#define PAGE 4096u

/* Walks [first, end) of ino; returns the pages found, their blocks in
 * blks (at most max), and the calls it took in *calls. */
static u32 walk(struct daxfs_fs *fs, u64 ino, u64 first, u64 end, u64 *blks,
		u32 max, u64 *calls)
{
	u64 blk = first, pg;
	u32 n = 0;

	*calls = 0;
	while (blk < end) {
		CHECK_EQ(daxfs_next_page(fs, ino, &blk, end, &pg), 0);
		++*calls;
		if (!pg)
			continue;
		CHECK_EQ(daxfs_block_page(fs, ino, blk, &pg), 0);
		CHECK(pg != 0);
		if (n < max)
			blks[n] = blk;
		n++;
		blk++;
		CHECK(*calls < 100000);
	}
	CHECK_EQ(blk, end);
	return n;
}

static void test_sparse_2_48(void)
{
	struct daxfs_fs fs;
	u64 size = 16 * MiB, calls, blks[8];
	u64 want[] = { 0, 1, 513, (1ULL << 27) + 7, (1ULL << 36) - 1 };
	void *r = t_setup(&fs, size, NULL);
	u64 ino = t_mkfile(&fs), end = 1ULL << 36;
	u8 buf[PAGE];
	u32 i, n;

	memset(buf, 'x', sizeof(buf));
	CHECK(ino != 0);
	for (i = 0; i < 5; i++)
		CHECK_EQ(t_pwrite(&fs, ino, buf, PAGE, want[i] * PAGE), PAGE);
	n = walk(&fs, ino, 0, end, blks, 8, &calls);
	CHECK_EQ(n, 5);
	for (i = 0; i < 5; i++)
		CHECK_EQ(blks[i], want[i]);
	/* a few descents per page, not one call per 4 KiB of the 256 TiB */
	CHECK(calls < 64);
	/* a range that starts past some pages and ends before others */
	n = walk(&fs, ino, 2, (1ULL << 27) + 8, blks, 8, &calls);
	CHECK_EQ(n, 2);
	CHECK_EQ(blks[0], 513);
	CHECK_EQ(blks[1], (1ULL << 27) + 7);
	/* an end beyond what any tree can map is no endless walk */
	n = walk(&fs, ino, (1ULL << 36) - 1, ~0ULL >> 12, blks, 8, &calls);
	CHECK_EQ(n, 1);
	/* after a truncate the cut pages are gone */
	CHECK_EQ(daxfs_truncate(&fs, ino, 2 * PAGE), 0);
	n = walk(&fs, ino, 0, end, blks, 8, &calls);
	CHECK_EQ(n, 2);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

static void test_dense_and_empty(void)
{
	struct daxfs_fs fs;
	u64 size = 16 * MiB, calls, blks[1];
	void *r = t_setup(&fs, size, NULL);
	u64 ino = t_mkfile(&fs);
	static u8 buf[600 * PAGE];

	CHECK(ino != 0);
	CHECK_EQ(walk(&fs, ino, 0, 1ULL << 20, blks, 1, &calls), 0);
	memset(buf, 'y', sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, sizeof(buf), 0), sizeof(buf));
	CHECK_EQ(walk(&fs, ino, 0, 1ULL << 20, blks, 1, &calls), 600);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

int main(void)
{
	RUN(test_sparse_2_48);
	RUN(test_dense_and_empty);
	return t_done();
}
