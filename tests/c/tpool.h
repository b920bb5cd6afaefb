/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Pool helpers of the allocator tests (test_compact.c, test_walk_stop.c). */
#ifndef DAXFS_TPOOL_H
#define DAXFS_TPOOL_H

#include "tcheck.h"

/* Pages until ENOSPC, at most max (through the whole ENOSPC path:
 * reclaim, compaction); freed again. */
static inline u64 t_count_pages(struct daxfs_op *op, u64 max)
{
	u64 *pg = malloc(max * sizeof(*pg) + 8);
	u64 n = 0, x, i;

	while (n < max && (x = daxfs_alloc(op, DAXFS_CLASS_PAGE)))
		pg[n++] = x;
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(op, pg[i], DAXFS_CLASS_PAGE), 0);
	free(pg);
	return n;
}

/* fsck of the region after we left: clean, nothing leaked. */
static inline void t_check_clean(void *r, u64 size)
{
	struct daxfs_check_result res;

	CHECK_EQ(t_fsck(r, size, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	CHECK_EQ(res.used_bytes, res.reachable_bytes + res.limbo_bytes +
		 res.batch_bytes);
}

#endif /* DAXFS_TPOOL_H */
