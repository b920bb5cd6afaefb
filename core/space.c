// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * "The pool is empty, but space is on its way": after a call failed with
 * -ENOSPC, tells whether freed space still waits in limbo behind an epoch
 * that some lane holds back (a slow op, or a dead host whose lease has not
 * run out yet), and paces the front end's retries.  Runs only outside any
 * op and never sleeps: the front end sleeps between tries, holding no lane.
 * Protocol, invariants and crash story: docs/reclaim.md "When the pool is
 * empty".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#define SPACE_MARGIN_MS		1000u	/* recovery + two advances after expiry */
#define SPACE_MAX_SLEEP_MS	50u

static bool batch_nonempty(struct daxfs_fs *fs, u64 b)
{
	struct daxfs_limbo *lb;

	if (!b)
		return false;
	lb = daxfs_ptr(fs, b, sizeof(*lb), DAXFS_PAGE_SIZE);
	return lb && daxfs_load32(&lb->count);
}

/*
 * One pass over the host table and the lanes (failure path only).  Space
 * is pending when a host other than us is dead, being recovered or past its
 * lease (recovery frees its batch and held pages and unblocks the epoch),
 * or when limbo exists anywhere while a lane holds the epoch back (it will
 * end its op or expire) or a mapping host's announcement lags (its next
 * lease tick moves it).  Limbo of live hosts with nothing holding the
 * epoch is theirs to free: not pending for us.
 */
bool daxfs_space_pending(struct daxfs_fs *fs)
{
	u64 g = daxfs_load(daxfs_state_word(fs, epoch)), w, e;
	bool limbo = false, held = false;
	struct daxfs_host *h;
	struct daxfs_lane *lane;
	u32 slot, i, st;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		h = daxfs_host_at(fs, slot);
		if (daxfs_load(&h->limbo_sealed))
			limbo = true;
		w = daxfs_load(&h->state);
		st = daxfs_host_st(w);
		if (st == DAXFS_HOST_FREE)
			continue;
		if (slot != fs->host &&
		    (st != DAXFS_HOST_ALIVE || daxfs_host_expired(fs, slot)))
			return true;
		/* a mapping host behind the epoch holds frees back until its
		 * next revalidation pass (docs/reclaim.md "Mapping hosts") */
		e = daxfs_load(&h->map_epoch);
		if (e && e != g)
			held = true;
		for (i = 0; i < DAXFS_LANES; i++) {
			lane = daxfs_lane_at(fs, slot, i);
			if (!daxfs_lane_quiet(daxfs_load(&lane->epoch), g))
				held = true;
			if (!limbo && batch_nonempty(fs, daxfs_load(&lane->limbo_open)))
				limbo = true;
		}
	}
	return limbo && held;
}

/* How long a failing call may wait: a dead host is declared dead once its
 * lease ran out (at most one lease after it stopped renewing), then a
 * survivor recovers it and the epoch advances twice. */
static s64 wait_ns(struct daxfs_fs *fs)
{
	u64 ms = fs->lease_ms + (fs->lease_ms / 2 > SPACE_MARGIN_MS ?
				 fs->lease_ms / 2 : SPACE_MARGIN_MS);

	return (s64)(ms * 1000000ULL);
}

int daxfs_space_wait_next(struct daxfs_fs *fs, struct daxfs_space_wait *w)
{
	s64 now = daxfs_now_ns();
	u32 ms;

	if (fs->host == DAXFS_NO_HOST || (fs->flags & DAXFS_FS_RDONLY) ||
	    !daxfs_host_still_mine(fs))
		return -1;
	if (!w->deadline_ns)
		w->deadline_ns = now + wait_ns(fs);
	else if (now >= w->deadline_ns)
		return -1;
	/* outside any op: our own lanes are idle, so this seals our open
	 * batches, reaps expired hosts and frees what two advances allow */
	daxfs_reclaim_all(fs);
	if (!w->tries++)
		return 0;	/* once at once: the op's own lane held it back */
	if (!daxfs_space_pending(fs))
		return -1;
	ms = 1u << (w->tries < 7 ? w->tries - 1 : 6);
	return (int)(ms < SPACE_MAX_SLEEP_MS ? ms : SPACE_MAX_SLEEP_MS);
}
