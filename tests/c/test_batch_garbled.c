// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A host's page batch words (alloc_cursor, alloc_end, in its host slot)
 * garbled by a stray store or a buggy peer.  The chaos host did it: a
 * worker died of SIGSEGV in daxfs_retire, which stored into the "page" a
 * garbled batch handed out (docs/testing.md "Chaos runs").  Every
 * allocation must hand out a page of the pool or nothing: never an
 * offset outside the pool, outside the region, or off a page boundary.
 */
#include "tutil.h"

#define MiB	(1024ULL * 1024)
#define SIZE	(16 * MiB)
#define PG	DAXFS_PAGE_SIZE

static bool pool_page(struct daxfs_fs *fs, u64 off)
{
	return off >= fs->pool_off && off + PG <= fs->pool_end &&
	       !(off & (PG - 1));
}

static void garble(struct daxfs_fs *fs, u64 cursor, u64 end)
{
	struct daxfs_host *h = daxfs_host_at(fs, fs->host);

	daxfs_store(&h->alloc_cursor, cursor);
	daxfs_store(&h->alloc_end, end);
}

/* cursor/end relative to the pool's start (or its end when from_end) */
static void garbled_case(s64 cursor, s64 end, bool from_end)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 at = from_end ? fs.pool_end : fs.pool_off, x, xs[2], i;

	daxfs_op_begin(&fs, &op);
	for (i = 0; i < 4; i++) {
		garble(&fs, at + cursor, at + end);
		x = daxfs_alloc_limbo_page(&op);
		CHECK(!x || pool_page(&fs, x));
		garble(&fs, at + cursor, at + end);
		x = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
		CHECK(!x || pool_page(&fs, x));
		garble(&fs, at + cursor, at + end);
		if (daxfs_alloc_pages(&op, 2, xs) == 2)
			CHECK(pool_page(&fs, xs[0]) && pool_page(&fs, xs[1]));
	}
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

static void test_off_page(void)
{
	garbled_case(8, 8 + 64 * PG, false);
}

static void test_below_pool(void)
{
	garbled_case(-64 * (s64)PG, 0, false);
}

static void test_past_pool(void)
{
	garbled_case(0, 64 * PG, true);
}

static void test_past_region(void)
{
	garbled_case(1ULL << 40, (1ULL << 40) + 64 * PG, true);
}

int main(void)
{
	RUN(test_off_page);
	RUN(test_below_pool);
	RUN(test_past_pool);
	RUN(test_past_region);
	return t_done();
}
