// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A host's sealed limbo chain linked into a cycle (a stray store or a
 * buggy peer): reclaim must free every batch once, never twice.  A page
 * freed twice sits twice on the page stack, so two later allocations
 * return the same page, and used_bytes drops by more than was freed.
 */
#include "tutil.h"

#define MiB	(1024ULL * 1024)
#define SIZE	(16 * MiB)
#define MAXP	(SIZE / DAXFS_BLOCK_SIZE)

static u64 pages[MAXP];

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Takes every page the pool still gives; true when none came twice. */
static bool pages_distinct(struct daxfs_fs *fs)
{
	struct daxfs_op op;
	u64 n = 0, i, x;

	daxfs_op_begin(fs, &op);
	while (n < MAXP && daxfs_alloc_pages(&op, 1, &x) == 1)
		pages[n++] = x;
	daxfs_op_end(&op);
	qsort(pages, n, sizeof(pages[0]), cmp_u64);
	for (i = 1; i < n; i++)
		if (pages[i] == pages[i - 1])
			return false;
	return n > 0;
}

static struct daxfs_limbo *batch(struct daxfs_fs *fs, u64 off, u64 next)
{
	struct daxfs_limbo *lb = (struct daxfs_limbo *)(fs->base + off);

	memset(lb, 0, sizeof(*lb));
	lb->next = next;
	lb->epoch = 1;		/* sealed long ago: free at once */
	return lb;
}

/* Chain of n batches whose last links back to batch loop_to. */
static void cycle_case(unsigned int n, unsigned int loop_to)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 b[4], used0, x, y, i;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_reclaim_all(&fs);
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_alloc_pages(&op, 1, &b[i]), 1);
	/* one small object retired in the first batch */
	x = daxfs_alloc(&op, DAXFS_CLASS_128);
	CHECK(x != 0);
	daxfs_op_end(&op);
	used0 = t_used(&fs);
	for (i = 0; i < n; i++)
		batch(&fs, b[i], i + 1 < n ? b[i + 1] : b[loop_to]);
	((struct daxfs_limbo *)(fs.base + b[0]))->entry[0] = x | DAXFS_CLASS_128;
	((struct daxfs_limbo *)(fs.base + b[0]))->count = 1;
	for (i = 0; i < 4; i++)
		daxfs_faa(daxfs_state_word(&fs, epoch), 1);
	daxfs_store(&daxfs_host_at(&fs, fs.host)->limbo_sealed, b[0]);

	daxfs_reclaim_all(&fs);

	/* n batch pages and one object freed, each exactly once */
	CHECK_EQ(used0 - t_used(&fs), n * DAXFS_BLOCK_SIZE + 128);
	daxfs_op_begin(&fs, &op);
	x = daxfs_alloc(&op, DAXFS_CLASS_128);
	y = daxfs_alloc(&op, DAXFS_CLASS_128);
	daxfs_op_end(&op);
	CHECK(x && y && x != y);
	CHECK(pages_distinct(&fs));
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

static void test_self_loop(void)
{
	cycle_case(1, 0);
}

static void test_two_cycle(void)
{
	cycle_case(2, 0);
}

static void test_tail_cycle(void)
{
	cycle_case(4, 2);
}

int main(void)
{
	RUN(test_self_loop);
	RUN(test_two_cycle);
	RUN(test_tail_cycle);
	return t_done();
}
