// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Space accounting for df.  Counters live in the state page, so statfs is
 * a handful of loads and one scan of the host table (reserve size).
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

int daxfs_statfs(struct daxfs_fs *fs, struct daxfs_statfs *st)
{
	u64 used, keys;

	memset(st, 0, sizeof(*st));
	st->pool_bytes = fs->pool_end - fs->pool_off;
	used = daxfs_load(daxfs_state_word(fs, used_bytes));
	if ((s64)used < 0)
		used = 0;		/* a crash between two counter updates */
	/* the limbo reserve is not free for files (ordinary allocations
	 * never take it): report it as used, so used + free = pool and df's
	 * "available" is what a write can really get (docs/alloc.md) */
	used += daxfs_reserve_pages(fs) * DAXFS_PAGE_SIZE;
	if (used > st->pool_bytes)
		used = st->pool_bytes;
	st->used_bytes = used;
	st->free_bytes = st->pool_bytes - used;
	st->nr_buckets = fs->nr_buckets;
	/* stat_inserts counts published overlay keys */
	keys = daxfs_load(daxfs_state_word(fs, stat_inserts));
	if ((s64)keys < 0)
		keys = 0;
	if (keys > fs->nr_buckets)
		keys = fs->nr_buckets;
	st->used_buckets = keys;
	/* inode keys plus base inodes not copied up (approximate) */
	st->inodes = keys + (fs->base_off ? fs->bh.nr_inodes : 0);
	return 0;
}
