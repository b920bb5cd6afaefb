// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck of the lock table (docs/locks.md "fsck"): its pages are in use;
 * pages that fail validation, records that are not valid locks, records
 * and bucket claims of hosts that are no longer alive are reported and,
 * with repair (no live host), cleared.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "check.h"
#include "lock.h"

/* The host a record or claim names is alive: ALIVE with that generation
 * and a lease this observer has not seen run out. */
static bool chk_lock_host_alive(struct chk *c, u64 host)
{
	u32 slot = (u32)(host & 0xffff) - 1;

	return !daxfs_lock_host_stale(c->fs, host) &&
	       chk_host_fresh(c, &c->fs->hosts[slot]);
}

static void chk_lock_bucket(struct chk *c, struct daxfs_lock_bucket *b, u64 off)
{
	struct daxfs_fs *fs = c->fs;
	u32 sev = c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR;
	u64 claim = daxfs_load(&b->claim), ino;
	u32 i;
	int st;

	if (claim && !chk_lock_host_alive(c, claim &
			((1ULL << DAXFS_LOCK_CLAIM_LANE_SHIFT) - 1))) {
		chk_report(c, sev, DAXFS_CHK_LOCK,
			   "lock bucket claimed by a host that is not alive",
			   0, off, claim, 0, c->repair);
		if (c->repair)
			daxfs_store(&b->claim, 0);
	}
	for (i = 0; i < DAXFS_LOCK_RECS; i++) {
		st = daxfs_lock_rec_check(fs, &b->rec[i], &ino);
		if (st == DAXFS_LOCK_REC_FREE ||
		    (st == DAXFS_LOCK_REC_LIVE &&
		     chk_lock_host_alive(c, daxfs_load(&b->rec[i].host))))
			continue;
		if (st == DAXFS_LOCK_REC_BAD)
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOCK,
				   "lock record invalid", ino,
				   off + 64 + 64ULL * i,
				   daxfs_load(&b->rec[i].host), 0, c->repair);
		else
			chk_report(c, sev, DAXFS_CHK_LOCK,
				   "lock held by a host that is not alive (dead or gone)",
				   ino, off + 64 + 64ULL * i,
				   daxfs_load(&b->rec[i].host), 0, c->repair);
		if (c->repair)
			daxfs_store(&b->rec[i].host, 0);
	}
}

void chk_locks(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	struct daxfs_lock_root *root;
	struct daxfs_lock_bucket *b;
	u64 off = daxfs_load(&fs->state->lock_root), boff;
	u32 i;

	if (!off)
		return;
	root = daxfs_lock_root_get(fs);
	if (!root || !chk_mark(c, c->used, off, DAXFS_BLOCK_SIZE)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOCK,
			   "lock table root page invalid or linked twice", 0,
			   off, 0, 0, c->repair);
		if (c->repair)
			daxfs_store(&fs->state->lock_root, 0);
		c->space_dirty = true;
		return;
	}
	for (i = 0; i < DAXFS_LOCK_BUCKETS; i++) {
		boff = daxfs_load(&root->bucket[i]);
		if (!boff)
			continue;
		b = daxfs_lock_bucket_at(fs, root, i);
		if (!b || !chk_mark(c, c->used, boff, DAXFS_BLOCK_SIZE)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOCK,
				   "lock bucket page invalid or linked twice",
				   0, boff, i, 0, c->repair);
			if (c->repair)
				daxfs_store(&root->bucket[i], 0);
			c->space_dirty = true;
			continue;
		}
		chk_lock_bucket(c, b, boff);
	}
}
