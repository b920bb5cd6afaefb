// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * "The pool is empty, but space is on its way": after a call failed with
 * -ENOSPC, frees the limbo that every host's chain holds, tells whether
 * freed space still waits behind an epoch that some lane holds back (a
 * slow op, or a dead host whose lease has not run out yet), and paces the
 * front end's retries.  Runs only outside any op and never sleeps: the
 * front end sleeps between tries, holding no lane.
 * Protocol, invariants and crash story: docs/reclaim.md "When the pool is
 * empty".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#define SPACE_MARGIN_MS		1000u	/* recovery + two advances after expiry */
#define SPACE_MAX_SLEEP_MS	50u
#define SPACE_LIMIT_WAITS	4	/* dead hosts: at most 4 waits in all */
#define SPACE_FREED_RERUNS	8	/* at once, after a reclaim that freed */

static bool batch_nonempty(struct daxfs_fs *fs, u64 b)
{
	struct daxfs_limbo *lb;

	if (!b)
		return false;
	lb = daxfs_ptr(fs, b, sizeof(*lb), DAXFS_PAGE_SIZE);
	return lb && daxfs_load32(&lb->count);
}

/* Why space is still on its way (space_pending); the values are
 * daxfs_space_wait.why's (daxfs_core.h) */
enum space_why {
	SPACE_NONE = DAXFS_SPACE_NONE,	/* nothing comes free by waiting */
	SPACE_LIVE = DAXFS_SPACE_LIVE,	/* a live host's op (or map pass) */
	SPACE_DEAD = DAXFS_SPACE_DEAD,	/* a host dead or silent, unrecovered */
};

/* A lane of slot holds the epoch back: why, as this observer sees it.  A
 * host whose counter it has not seen move (UNKNOWN) may be dead: its
 * lease runs out within one lease of our first look, never later. */
static enum space_why holder(struct daxfs_fs *fs, u32 slot)
{
	if (slot == fs->host ||
	    daxfs_host_lease(fs, slot) == DAXFS_LEASE_LIVE)
		return SPACE_LIVE;
	return SPACE_DEAD;
}

/*
 * One pass over the host table and the lanes (failure path only).  Space
 * is pending when a host other than us is dead, being recovered or past its
 * lease (recovery frees its batch and held pages and unblocks the epoch),
 * or when limbo exists anywhere while a lane holds the epoch back (it will
 * end its op or expire) or a mapping host's announcement lags (its next
 * revalidation pass moves it).  Limbo with nothing holding the epoch is
 * freed by the wait's own reclaim (every host's chain,
 * daxfs_reclaim_for_space) or sits in another live host's open batch: not
 * pending for us.
 *
 * owed (0: no bound) is the epoch of the wait's first look: every batch
 * sealed before it has s <= owed and is free to go once the epoch and
 * every mapping announcement reached owed + 2.  Past that, what holds the
 * epoch back holds only limbo retired after the call began, which the call
 * is not owed: where other hosts churn, limbo always exists and a mapping
 * host is always an epoch or two behind, and the wait used to run to its
 * deadline on every failing call (docs/reclaim.md "When the pool is
 * empty").
 */
static enum space_why space_pending(struct daxfs_fs *fs, u64 owed)
{
	u64 g = daxfs_load(daxfs_state_word(fs, epoch)), w, e, floor = ~0ULL;
	enum space_why held = SPACE_NONE, why;
	struct daxfs_host *h;
	struct daxfs_lane *lane;
	bool limbo = false;
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
			return SPACE_DEAD;
		/* a mapping host behind the epoch holds frees back until its
		 * next revalidation pass (docs/reclaim.md "Mapping hosts") */
		e = daxfs_load(&h->map_epoch);
		if (e && e < floor)
			floor = e;
		/* its pass lets the owed limbo go: ask for it now rather
		 * than at its next tick */
		if (owed && e && e < owed + 2 && slot != fs->host)
			daxfs_map_ask_pass(fs, slot, owed + 2);
		if (e && e != g && !held)
			held = SPACE_LIVE;
		for (i = 0; i < DAXFS_LANES; i++) {
			lane = daxfs_lane_at(fs, slot, i);
			if (held != SPACE_DEAD &&
			    !daxfs_lane_quiet(daxfs_load(&lane->epoch), g)) {
				why = holder(fs, slot);
				if (why > held)
					held = why;
			}
			if (!limbo && batch_nonempty(fs, daxfs_load(&lane->limbo_open)))
				limbo = true;
		}
	}
	if (!limbo || (owed && g >= owed + 2 && floor >= owed + 2))
		return SPACE_NONE;
	return held;
}

bool daxfs_space_pending(struct daxfs_fs *fs)
{
	return space_pending(fs, 0) != SPACE_NONE;
}

/* How long a failing call waits for a live host's op: a host that died
 * silent is declared dead once its lease ran out (at most one lease after
 * our first look), then a survivor recovers it and the epoch advances
 * twice. */
static s64 wait_ns(struct daxfs_fs *fs)
{
	u64 ms = fs->lease_ms + (fs->lease_ms / 2 > SPACE_MARGIN_MS ?
				 fs->lease_ms / 2 : SPACE_MARGIN_MS);

	return (s64)(ms * 1000000ULL);
}

int daxfs_space_wait_next(struct daxfs_fs *fs, struct daxfs_space_wait *w)
{
	/* monotonic: a wall clock stepped forward must not end the wait */
	s64 now = daxfs_mono_ns();
	enum space_why why;
	bool freed, settled;
	u64 used;
	u32 ms;

	w->why = DAXFS_SPACE_GAVE_UP;
	if (fs->host == DAXFS_NO_HOST || (fs->flags & DAXFS_FS_RDONLY) ||
	    !daxfs_host_still_mine(fs))
		return -1;
	if (!w->deadline_ns) {
		w->start_ns = now;
		w->deadline_ns = now + wait_ns(fs);
		w->limit_ns = now + SPACE_LIMIT_WAITS * wait_ns(fs);
	} else if (now >= w->limit_ns) {
		w->why = DAXFS_SPACE_LIMIT;
		return -1;
	}
	/* outside any op: our own lanes are idle, so this seals our open
	 * batches, reaps expired hosts and frees what two advances allow,
	 * on every host's chain */
	used = daxfs_load(daxfs_state_word(fs, used_bytes));
	daxfs_reclaim_for_space(fs);
	freed = daxfs_load(daxfs_state_word(fs, used_bytes)) < used;
	/* after the reclaim, which sealed our own open batches; and again
	 * after a look that saw a dead host (its recovery seals its batches
	 * later, and the call is owed them) */
	if (!w->tries || w->saw_dead)
		w->owed_epoch = daxfs_load(daxfs_state_word(fs, epoch));
	why = space_pending(fs, w->owed_epoch);
	/* not read back from w->why: a look that freed space says FREED
	 * there, and may have seen a dead host all the same */
	w->saw_dead = why == SPACE_DEAD;
	settled = w->settled;
	w->settled = why == SPACE_NONE;
	w->why = (u32)why;
	if (!w->tries++)
		return 0;	/* once at once: the op's own lane held it back */
	/* this reclaim freed space (a dead host's recovery let the epoch
	 * move, and all its limbo went at once): the call has not seen that
	 * space yet.  Another host's allocations can hide a free here (the
	 * rule below still re-runs the call once).  Bounded: where other
	 * hosts churn a pool full of live data, their frees would otherwise
	 * keep us re-running up to the limit. */
	if (freed && w->freed < SPACE_FREED_RERUNS) {
		w->freed++;
		w->why = DAXFS_SPACE_FREED;
		return 0;
	}
	/* a dead host is recovered within about a lease of our look, however
	 * many die one after the other: wait for it (up to the limit, for a
	 * peer that garbles the host table); a live host's slow op only up to
	 * the deadline, counted from the last look that still saw a dead
	 * host (the epoch its lane held back moves only after its recovery:
	 * a live op found then gets its whole wait) */
	if (why == SPACE_DEAD && w->deadline_ns < now + wait_ns(fs))
		w->deadline_ns = now + wait_ns(fs);
	/* nothing pending: nothing more comes free by waiting, so a call
	 * that starts now sees every byte the wait could wait for.  The
	 * ENOSPC stands only when the call failed again after a look that
	 * already found nothing pending.  Limbo also goes between two looks,
	 * not in the look's reclaim: the failing call's own op end reclaims
	 * (daxfs_op_end, every DAXFS_RECLAIM_EVERY ops), recovers the dead
	 * host and frees all behind it after the call's allocation failed */
	if (why == SPACE_NONE)
		return settled ? -1 : 0;
	if (why == SPACE_LIVE && now >= w->deadline_ns)
		return -1;
	ms = 1u << (w->tries < 7 ? w->tries - 1 : 6);
	return (int)(ms < SPACE_MAX_SLEEP_MS ? ms : SPACE_MAX_SLEEP_MS);
}
