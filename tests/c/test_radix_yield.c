// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The radix sweeps yield (issue 16 item 7, docs/files.md "Sweeps yield"):
 * truncate, hole punching and a file's final drop visit every page of the
 * range in one operation, so a file of tens of TiB on real memory would
 * keep one CPU past the kernel's soft-lockup threshold.  Each sweep calls
 * daxfs_walk_yield() (cond_resched() in the kernel) once per leaf node it
 * visits.  Here the hook daxfs_walk_stop counts those calls: a sweep over
 * L leaf nodes must yield at least L times.  The hook also answers "stop"
 * from the first call on, as a fatal signal stays pending in the kernel:
 * a sweep must finish anyway (a half-swept truncate would leave pages
 * past the new size for a later extend to expose), so every page must
 * come back.
 */
#include "tfile.h"

#define SIZE (64 * MiB)
#define PAGES_PER_LEAF DAXFS_RADIX_FANOUT
#define LEAVES 6
#define NPAGES (LEAVES * PAGES_PER_LEAF)

static u64 yields;

static bool count_and_stop(void)
{
	yields++;
	return true;
}

/* A file of NPAGES pages, one byte in each. */
static u64 filled_file(struct daxfs_fs *fs)
{
	u64 ino = t_mkfile(fs), i;
	u8 b = 0x5a;

	CHECK(ino != 0);
	for (i = 0; i < NPAGES; i++)
		CHECK_EQ(t_pwrite(fs, ino, &b, 1, i * DAXFS_BLOCK_SIZE), 1);
	return ino;
}

static void expect_yields(u64 leaves)
{
	daxfs_walk_stop = NULL;
	if (yields < leaves)
		fprintf(stderr, "  %llu yields for %llu leaf nodes\n",
			(unsigned long long)yields, (unsigned long long)leaves);
	CHECK(yields >= leaves);
}

static void test_truncate_yields(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 used0 = t_usedbytes(&fs), ino = filled_file(&fs);
	u8 b;

	yields = 0;
	daxfs_walk_stop = count_and_stop;
	CHECK_EQ(daxfs_truncate(&fs, ino, DAXFS_BLOCK_SIZE), 0);
	expect_yields(LEAVES - 1);
	/* finished despite the pending "stop": regrown, the cut reads 0 */
	CHECK_EQ(daxfs_truncate(&fs, ino, NPAGES * DAXFS_BLOCK_SIZE), 0);
	CHECK_EQ(t_pread(&fs, ino, &b, 1, (NPAGES - 1) * DAXFS_BLOCK_SIZE), 1);
	CHECK_EQ(b, 0);
	CHECK(t_usedbytes(&fs) - used0 < 4 * DAXFS_BLOCK_SIZE);
	t_freefile(&fs, ino);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

static void test_final_drop_yields(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 used0 = t_usedbytes(&fs), ino = filled_file(&fs);

	yields = 0;
	daxfs_walk_stop = count_and_stop;
	t_freefile(&fs, ino);
	expect_yields(LEAVES);
	CHECK_EQ(t_usedbytes(&fs), used0);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

static void test_punch_yields(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 ino = filled_file(&fs), used1;
	struct daxfs_inode *ip = t_ip(&fs, ino);

	used1 = t_usedbytes(&fs);
	yields = 0;
	daxfs_walk_stop = count_and_stop;
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	/* every block but the first and the last */
	CHECK_EQ(daxfs_radix_punch(&op, ip, 1, NPAGES - 1), 0);
	daxfs_op_end(&op);
	expect_yields(LEAVES);
	CHECK(used1 - t_usedbytes(&fs) >= (NPAGES - 2) * DAXFS_BLOCK_SIZE);
	t_freefile(&fs, ino);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

int main(void)
{
	RUN(test_truncate_yields);
	RUN(test_final_drop_yields);
	RUN(test_punch_yields);
	return t_done();
}
