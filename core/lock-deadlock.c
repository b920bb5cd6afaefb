// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Deadlock detection for POSIX lock waiters (docs/locks.md "Deadlocks"):
 * the wait-for graph across hosts, from the waiting records every blocked
 * F_SETLKW publishes.  Runs outside any bucket claim.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "lock.h"

#define LK_DL_DEPTH	10u		/* wait-for chain steps, as Linux */
#define LK_DL_WIDTH	8u		/* owners followed per step */

/* An owner: its host word and id (POSIX owners in wait-for chains). */
struct lk_owner {
	u64 host, owner;
};

static bool owner_in(const struct lk_owner *set, u32 n, u64 host, u64 owner)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (set[i].host == host && set[i].owner == owner)
			return true;
	return false;
}

/*
 * The POSIX holders that block the waiting request w (another owner's
 * locks on w's range that conflict with it) go into next (at most
 * LK_DL_WIDTH, new ones only); true when one of them is `me`.
 * Read without the claim: a racing change may be missed or half seen,
 * which can only miss a cycle that is still forming or report one that
 * is being undone (docs/locks.md "Deadlocks").
 */
static bool lk_blockers(struct daxfs_fs *fs, struct daxfs_lock_root *root,
			const struct daxfs_lock_view *w, const struct lk_owner *me,
			struct lk_owner *next, u32 *nn)
{
	struct daxfs_lock_bucket *b;
	struct daxfs_lock_view x;
	u32 i;

	b = daxfs_lock_bucket_at(fs, root, daxfs_lock_bucket_index(w->ino));
	for (i = 0; b && i < DAXFS_LOCK_RECS; i++) {
		if (!daxfs_lock_rec_load(&b->rec[i], &x) || x.waiting ||
		    x.ino != w->ino || daxfs_lock_class(x.kind) ||
		    (x.host == w->host && x.owner == w->owner &&
		     x.kind == DAXFS_LCK_POSIX) ||
		    !daxfs_lock_overlap(x.start, x.end, w->start, w->end) ||
		    (x.type != DAXFS_LCK_WR && w->type != DAXFS_LCK_WR) ||
		    daxfs_lock_host_stale(fs, x.host))
			continue;
		if (x.kind != DAXFS_LCK_POSIX)
			continue;	/* OFD owners are never POSIX waiters */
		if (x.host == me->host && x.owner == me->owner)
			return true;
		if (*nn < LK_DL_WIDTH && !owner_in(next, *nn, x.host, x.owner))
			next[(*nn)++] = (struct lk_owner){ x.host, x.owner };
	}
	return false;
}

/* Every waiting record of the owners in cur: their blockers. */
static bool lk_dl_step(struct daxfs_fs *fs, struct daxfs_lock_root *root,
		       const struct lk_owner *cur, u32 nc,
		       const struct lk_owner *me, struct lk_owner *next,
		       u32 *nn)
{
	struct daxfs_lock_bucket *b;
	struct daxfs_lock_view x;
	u32 bi, i;

	for (bi = 0; bi < DAXFS_LOCK_BUCKETS; bi++) {
		b = daxfs_lock_bucket_at(fs, root, bi);
		for (i = 0; b && i < DAXFS_LOCK_RECS; i++) {
			if (!daxfs_lock_rec_load(&b->rec[i], &x) || !x.waiting ||
			    x.kind != DAXFS_LCK_POSIX ||
			    !owner_in(cur, nc, x.host, x.owner) ||
			    daxfs_lock_host_stale(fs, x.host))
				continue;
			if (lk_blockers(fs, root, &x, me, next, nn))
				return true;
		}
		daxfs_walk_yield();
	}
	return false;
}

/*
 * Would our POSIX owner waiting behind the first conflict cf close a
 * cycle?  Follows "owner X waits for a range that owner Y holds" from
 * cf's owner, LK_DL_DEPTH steps at most, up to LK_DL_WIDTH owners a step.
 */
bool daxfs_lock_deadlock(struct daxfs_fs *fs, const struct daxfs_lock_req *r,
			const struct daxfs_lock_view *cf)
{
	struct daxfs_lock_root *root = daxfs_lock_root_get(fs);
	struct lk_owner me = { daxfs_lock_me(fs), r->owner };
	struct lk_owner a[LK_DL_WIDTH], bset[LK_DL_WIDTH];
	struct lk_owner *cur = a, *next = bset, *t;
	u32 nc = 1, nn, depth;

	if (!root || cf->kind != DAXFS_LCK_POSIX)
		return false;
	a[0] = (struct lk_owner){ cf->host, cf->owner };
	for (depth = 0; depth < LK_DL_DEPTH && nc; depth++) {
		nn = 0;
		if (lk_dl_step(fs, root, cur, nc, &me, next, &nn))
			return true;
		t = cur;
		cur = next;
		next = t;
		nc = nn;
	}
	return false;
}
