// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Epoch-based reclamation across hosts.  An object unlinked from every
 * shared structure is retired into the retiring lane's open limbo batch (a
 * pool page); a full or idle batch is sealed with the global epoch and
 * pushed on the host's chain; a batch sealed at s is freed once the global
 * epoch reached s + 2, i.e. once every op that could have seen its objects
 * has ended.  Invariants and crash story: docs/reclaim.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#ifndef __KERNEL__
bool (*daxfs_walk_stop)(void);	/* tests only (compat.h) */
#endif

#define CAS_TRIES	(1u << 20)

/* A batch on a page listed bad after the mount reads as no batch: the
 * chain is cut there (the rest leaks to fsck), never loaded. */
static struct daxfs_limbo *limbo_ptr(struct daxfs_fs *fs, u64 off)
{
	return daxfs_meta_ptr(fs, off, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE);
}

static u64 max_batches(struct daxfs_fs *fs)
{
	return (fs->pool_end - fs->pool_off) / DAXFS_PAGE_SIZE;
}

/* Pushes the linked batches first..last on slot's sealed chain. */
static void chain_push(struct daxfs_fs *fs, u32 slot, u64 first, u64 last)
{
	u64 *hw = &daxfs_host_at(fs, slot)->limbo_sealed, h;
	struct daxfs_limbo *lb = limbo_ptr(fs, last);
	u32 i;

	if (!lb)
		return;
	h = daxfs_load(hw);
	for (i = 0; i < CAS_TRIES; i++) {
		daxfs_store(&lb->next, h);
		if (daxfs_cas(hw, &h, first))
			return;
	}
}

/* Takes slot's whole chain (a swap to 0: no ABA for whole-chain takes). */
static u64 chain_take(struct daxfs_fs *fs, u32 slot)
{
	u64 *hw = &daxfs_host_at(fs, slot)->limbo_sealed, h;
	u32 i;

	h = daxfs_load(hw);
	/* from the take's CAS to the hold's (chain_process) the chain is
	 * named nowhere: a death there leaks it (docs/reclaim.md) */
	daxfs_crash_window("reclaim.take");
	for (i = 0; h && i < CAS_TRIES; i++)
		if (daxfs_cas(hw, &h, 0))
			return h;
	daxfs_crash_window(NULL);
	return 0;
}

void daxfs_limbo_seal(struct daxfs_fs *fs, u32 slot, u64 batch)
{
	struct daxfs_limbo *lb = limbo_ptr(fs, batch);

	if (!lb || (fs->flags & DAXFS_FS_NO_FREE))
		return;
	/* every entry was unlinked before this load: readers that could
	 * still see them announced an epoch <= this one */
	daxfs_store(&lb->epoch, daxfs_load(daxfs_state_word(fs, epoch)));
	chain_push(fs, slot, batch, batch);
}

void daxfs_limbo_splice(struct daxfs_fs *fs, u32 slot, u64 chain)
{
	struct daxfs_limbo *lb;
	u64 last = chain, next, n;

	lb = limbo_ptr(fs, chain);
	if (!lb || (fs->flags & DAXFS_FS_NO_FREE))
		return;
	for (n = 0; n < max_batches(fs); n++) {
		next = daxfs_load(&lb->next);
		if (!next)
			break;
		if (!limbo_ptr(fs, next)) {
			daxfs_store(&lb->next, 0);	/* corrupt tail: leak it */
			break;
		}
		last = next;
		lb = limbo_ptr(fs, next);
		/* yield only: the chain is named nowhere else now, so
		 * stopping would leak it (bounded by max_batches) */
		daxfs_walk_yield();
	}
	chain_push(fs, slot, chain, last);
}

bool daxfs_epoch_try_advance(struct daxfs_fs *fs)
{
	u64 *gw = daxfs_state_word(fs, epoch), g, w;
	struct daxfs_op op = { .fs = fs };
	struct daxfs_lane *lane;
	u32 slot, i;

	g = daxfs_load(gw);
	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		w = daxfs_load(&daxfs_host_at(fs, slot)->state);
		if (daxfs_host_st(w) == DAXFS_HOST_FREE)
			continue;
		for (i = 0; i < DAXFS_LANES; i++) {
			lane = daxfs_lane_at(fs, slot, i);
			if (daxfs_lane_quiet(daxfs_load(&lane->epoch), g))
				continue;
			/* a dead host must not hold the epoch back forever;
			 * one another survivor is recovering holds it until
			 * that ends (a try: the next reclaim looks again) */
			if (slot == fs->host ||
			    (daxfs_host_st(w) == DAXFS_HOST_ALIVE &&
			     !daxfs_host_expired(fs, slot)))
				return false;
			daxfs_host_try_dead(&op, slot);
			if (!daxfs_lane_quiet(daxfs_load(&lane->epoch), g))
				return false;
		}
	}
	return daxfs_cas(gw, &g, g + 1);
}

/* The fence for reclaim's loops, which run on our lane hl: once we were
 * declared dead, recovery spliced back the chain our lane held (pad[4])
 * and someone else frees it; going on would free its entries twice. */
static bool lane_fenced(struct daxfs_fs *fs, struct daxfs_lane *hl)
{
	return hl && !daxfs_slot_ours(fs);
}

/*
 * Names the part of a taken chain not yet processed in the reclaimer's
 * lane, so that recovery of a dead reclaimer re-adopts it (the batches
 * and their objects are not leaked): one CAS from what the lane named
 * before.  False when that failed: we were declared dead and recovery
 * took the chain (or the slot's next owner cleared the lane), so the
 * rest is someone else's to free.  A store here let a host stopped
 * between its fence check and this step free a batch page that recovery
 * had spliced back for another host to free again, and name the rest of
 * the chain in a lane a new host owned (tests/test_zombie_fence.py,
 * point reclaim.emptied).
 */
static bool hold_chain(struct daxfs_lane *hl, u64 from, u64 to)
{
	return !hl || daxfs_cas(&hl->pad[DAXFS_LANE_HOLD_CHAIN], &from, to);
}

/* Frees the entries of a batch, last first, each claimed by one CAS on
 * the count: a reclaimer dying here leaks at most one object, and a
 * recoverer that re-adopts the batch (or a reclaimer declared dead and
 * resumed beside it) never frees an entry twice.  False when fenced (the
 * rest of the batch is recovery's). */
static bool free_entries(struct daxfs_fs *fs, struct daxfs_limbo *lb,
			 struct daxfs_lane *hl)
{
	u32 n = daxfs_load32(&lb->count);
	u64 ent;

	while (n) {
		/* a garbled count (a torn write, a stray store): as many
		 * as a batch holds; each failed CAS reloads n */
		if (n > DAXFS_LIMBO_ENTRIES) {
			if (daxfs_cas32(&lb->count, &n, DAXFS_LIMBO_ENTRIES))
				n = DAXFS_LIMBO_ENTRIES;
			continue;
		}
		if (lane_fenced(fs, hl))
			return false;
		ent = daxfs_load(&lb->entry[n - 1]);
		if (!daxfs_cas32(&lb->count, &n, n - 1))
			continue;
		n--;
		daxfs_free_obj(fs, ent & ~(DAXFS_OFF_ALIGN - 1),
			       (unsigned int)(ent & (DAXFS_OFF_ALIGN - 1)));
	}
	return true;
}

/*
 * The smallest mapping announcement of a live host, ~0 when no host maps
 * a pool page: a batch sealed at s waits until it is >= s + 2, i.e. until
 * every mapping host finished a revalidation pass that began after the
 * ops that unlinked the batch's objects ended (docs/reclaim.md, "Mapping
 * hosts").  A slot not ALIVE is ignored: a dead host's mappings went with
 * it; one expired but not yet declared dead still counts until
 * daxfs_reap_expired (every daxfs_reclaim) declares it.
 */
static u64 map_floor(struct daxfs_fs *fs)
{
	u64 floor = ~0ULL, e;
	struct daxfs_host *h;
	u32 slot;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		h = daxfs_host_at(fs, slot);
		e = daxfs_load(&h->map_epoch);
		if (!e || e >= floor ||
		    daxfs_host_st(daxfs_load(&h->state)) != DAXFS_HOST_ALIVE)
			continue;
		floor = e;
	}
	return floor;
}

/* The batch after off, 0 at the end or at a link that is no batch. */
static u64 batch_next(struct daxfs_fs *fs, u64 off)
{
	struct daxfs_limbo *lb = limbo_ptr(fs, off);
	u64 next = lb ? daxfs_load(&lb->next) : 0;

	return limbo_ptr(fs, next) ? next : 0;
}

/*
 * A taken chain is private, but a stray store or a buggy peer can have
 * linked it into a cycle; processing frees each batch page as it passes,
 * so a second lap would free batches (and their pages) twice.  Finds a
 * cycle with Brent's algorithm (O(length), no memory) and cuts the link
 * that closes it, so that every batch is visited once.  Bounded: a chain
 * holds at most max_batches distinct pages.
 */
static bool chain_cut_cycle(struct daxfs_fs *fs, u64 chain)
{
	u64 max = max_batches(fs), power = 1, lam = 1, steps = 0, t, h, i;
	struct daxfs_limbo *lb;

	t = chain;
	h = batch_next(fs, chain);
	while (h && t != h) {
		if (++steps > 2 * max + 2)
			return true;	/* cannot happen: h ends or meets t */
		if (power == lam) {
			t = h;
			power *= 2;
			lam = 0;
		}
		h = batch_next(fs, h);
		lam++;
		if (daxfs_walk_yield())
			return false;	/* stopped: nothing cut yet */
	}
	if (!h)
		return true;	/* ends: no cycle */
	/* the cycle is lam long; h runs lam ahead of t from the start, and
	 * they meet at the cycle's first batch */
	t = chain;
	h = chain;
	for (i = 0; i < lam; i++)
		h = batch_next(fs, h);
	for (i = 0; t != h && i <= max; i++) {
		t = batch_next(fs, t);
		h = batch_next(fs, h);
	}
	/* the batch lam - 1 after the first of the cycle closes it */
	for (i = 0; i + 1 < lam; i++)
		h = batch_next(fs, h);
	lb = limbo_ptr(fs, h);
	if (lb)
		daxfs_store(&lb->next, 0);
	return true;
}

/* Frees the eligible batches of chain; the rest goes back on slot's
 * chain one batch at a time.  hl (the reclaimer's lane, or NULL) names
 * the unprocessed remainder throughout (docs/recovery.md); held is what
 * it names now (0, or chain when we go on with a held chain). */
static void chain_process(struct daxfs_fs *fs, u64 chain, u32 slot,
			  struct daxfs_lane *hl, u64 held)
{
	u64 g = daxfs_load(daxfs_state_word(fs, epoch));
	u64 next, n, s, floor;
	struct daxfs_limbo *lb;
	bool ours;

	if (!chain || lane_fenced(fs, hl)) {
		daxfs_crash_window(NULL);
		return;		/* fenced: the taken chain leaks (fsck) */
	}
	/* after g: a host whose first mapping (daxfs_map_first) came
	 * before the advance to g is seen */
	daxfs_fence();
	floor = map_floor(fs);
	ours = hold_chain(hl, held, chain);
	daxfs_crash_window(NULL);	/* named in the lane: recovery's */
	if (!ours)
		return;		/* the lane is not ours any more: leaks */
	/* stopped (a fatal signal): the lane holds the chain, and the next
	 * reclaim on it goes on (reclaim_resume); without a lane, finish */
	if (!chain_cut_cycle(fs, chain) && hl)
		return;
	daxfs_crash_point("reclaim.popped");
	for (n = 0; chain && n < max_batches(fs); n++) {
		lb = limbo_ptr(fs, chain);
		if (!lb)
			break;		/* corrupt link: leak the rest */
		next = daxfs_load(&lb->next);
		if (lane_fenced(fs, hl))
			return;		/* recovery splices the chain back */
		s = daxfs_load(&lb->epoch);
		if (s + 2 <= g && s + 2 <= floor) {
			if (!free_entries(fs, lb, hl) || lane_fenced(fs, hl))
				return;
			daxfs_crash_point("reclaim.emptied");
			if (!hold_chain(hl, chain, next))
				return;
			daxfs_free_obj(fs, chain, DAXFS_CLASS_PAGE);
			daxfs_crash_point("reclaim.freed");
		} else {
			if (!hold_chain(hl, chain, next))
				return;
			chain_push(fs, slot, chain, chain);
		}
		chain = next;
		/* next is held already: a stop leaves it to reclaim_resume */
		if (daxfs_walk_yield() && hl)
			return;
	}
	hold_chain(hl, chain, 0);
}

/*
 * A reclaim or compaction stopped on this lane (a fatal signal) left its
 * chain held in the lane (docs/reclaim.md "Stopped walks"): go on with it
 * first, so that no new chain overwrites the word.  True when the lane
 * holds nothing any more.
 */
static bool reclaim_resume(struct daxfs_fs *fs, struct daxfs_lane *hl)
{
	u64 v = daxfs_load(&hl->pad[DAXFS_LANE_HOLD_CHAIN]);

	if (!v)
		return true;
	if (v & (DAXFS_OFF_ALIGN - 1))		/* a compaction chain */
		return daxfs_compact_resume(fs, hl);
	chain_process(fs, v, fs->host, hl, v);
	return !daxfs_load(&hl->pad[DAXFS_LANE_HOLD_CHAIN]);
}

/*
 * How far reclamation can go now: the global epoch, or the smallest
 * mapping announcement when a mapping host lags behind it.
 */
static u64 reclaim_horizon(struct daxfs_fs *fs)
{
	u64 g = daxfs_load(daxfs_state_word(fs, epoch));
	u64 floor = map_floor(fs);

	return floor < g ? floor : g;
}

/*
 * Seals lane's open batch when it holds anything and the reclamation
 * horizon moved past the epoch of its latest retire (the open batch's
 * epoch word; docs/reclaim.md); force seals whatever its age.  The batch
 * keeps that epoch: read after every entry's unlink, it is as good as a
 * seal-time read, so sealing late delays nothing.  Sealing early frees
 * nothing sooner while the horizon stands still (a slow op or a dead
 * host holds the epoch back, or a mapping host is between passes), but
 * every seal costs the next retire a fresh batch page: on a full pool,
 * the reclaim after each failed allocation would drain the limbo reserve
 * with nearly empty batches and leave retirers nothing but a leak (a
 * truncate's pages, tests/c/test_map_fullpool.c).
 */
static void seal_open(struct daxfs_fs *fs, struct daxfs_lane *lane,
		      bool force)
{
	u64 b = daxfs_load(&lane->limbo_open);
	struct daxfs_limbo *lb;

	if (!b)
		return;
	lb = limbo_ptr(fs, b);
	if (lb && (!daxfs_load32(&lb->count) ||
		   (!force && daxfs_load(&lb->epoch) >= reclaim_horizon(fs))))
		return;
	/* taken by one CAS, as recovery takes it (core/hosts.c recover_slot): a
	 * host declared dead between its load and here must not push the
	 * batch that recovery sealed onto a second chain */
	daxfs_crash_point("limbo.sealing");
	/* from this CAS to the push's the batch is named nowhere: a death
	 * there leaks it (docs/reclaim.md "Crash story") */
	daxfs_crash_window("limbo.seal");
	if (!daxfs_cas(&lane->limbo_open, &b, 0)) {
		daxfs_crash_window(NULL);
		return;
	}
	/* sealed at its latest retire's epoch, read after every entry's
	 * unlink (only this host's code fills its own lanes' batches) */
	if (lb)
		chain_push(fs, fs->host, b, b);
	daxfs_crash_window(NULL);
}

/* Batches left in FREE slots (a host left, or was recovered by a host
 * that had not joined yet) are adopted by whoever reclaims next. */
static void adopt_orphans(struct daxfs_fs *fs, struct daxfs_lane *hl)
{
	u32 slot;
	u64 chain;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		if (slot == fs->host ||
		    daxfs_host_st(daxfs_load(&daxfs_host_at(fs, slot)->state)) !=
		    DAXFS_HOST_FREE ||
		    !daxfs_load(&daxfs_host_at(fs, slot)->limbo_sealed))
			continue;
		if (lane_fenced(fs, hl))
			return;
		chain = chain_take(fs, slot);
		if (chain)
			chain_process(fs, chain, fs->host, hl, 0);
	}
}

/*
 * A call that failed with -ENOSPC frees what other live hosts' chains
 * hold, too (docs/reclaim.md "When the pool is empty"): a host that is
 * idle, or descheduled, between its own reclaims may sit on a pool's worth
 * of garbage that a dead host's lane held back until its recovery.  The
 * free rule depends on epochs only, never on whose chain a batch is on,
 * and the taken chain is named in our lane while we walk it, so this is
 * the reclaim of a FREE slot's chain; what is not yet eligible goes back
 * on its owner's chain (a chain pushed on a slot that left or died meanwhile
 * is adopted, or moved by its recovery, like any other).
 */
static void help_live(struct daxfs_fs *fs, struct daxfs_lane *hl)
{
	struct daxfs_host *h;
	u64 chain;
	u32 slot;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		h = daxfs_host_at(fs, slot);
		if (slot == fs->host || !daxfs_load(&h->limbo_sealed) ||
		    daxfs_host_st(daxfs_load(&h->state)) != DAXFS_HOST_ALIVE)
			continue;
		if (lane_fenced(fs, hl))
			return;
		chain = chain_take(fs, slot);
		if (chain)
			chain_process(fs, chain, slot, hl, 0);
	}
}

static void reclaim_round(struct daxfs_fs *fs, struct daxfs_lane *hl,
			  bool help)
{
	if (fs->flags & DAXFS_FS_NO_FREE)
		return;		/* limbo links not trusted yet: fsck */
	daxfs_epoch_try_advance(fs);
	/* advancing may have recovered others for a while: our slot's
	 * chain is only ours while we are still alive */
	if (lane_fenced(fs, hl) || (hl && !reclaim_resume(fs, hl)))
		return;
	chain_process(fs, chain_take(fs, fs->host), fs->host, hl, 0);
	adopt_orphans(fs, hl);
	if (help)
		help_live(fs, hl);
}

u64 daxfs_map_pass_epoch(struct daxfs_fs *fs)
{
	/* nothing the pass reads may be loaded before the epoch */
	daxfs_fence();
	return daxfs_load(daxfs_state_word(fs, epoch));
}

void daxfs_map_announce(struct daxfs_fs *fs, u64 e)
{
	if (!daxfs_host_still_mine(fs))
		return;		/* declared dead: the slot is not ours */
	/* every unmap of the pass is done before the word moves */
	daxfs_fence();
	daxfs_store(&daxfs_host_at(fs, fs->host)->map_epoch, e);
	daxfs_fence();
}

/* A host waiting for space asks slot for a pass announcing at least
 * want (docs/reclaim.md "Asking for a pass"): the word only grows, so
 * the largest ask stands. */
void daxfs_map_ask_pass(struct daxfs_fs *fs, u32 slot, u64 want)
{
	u64 *w = &daxfs_host_at(fs, slot)->pass_wanted;
	u64 old = daxfs_load(w);

	while (old < want && !daxfs_cas(w, &old, want))
		;
}

bool daxfs_map_pass_asked(struct daxfs_fs *fs)
{
	struct daxfs_host *h;
	u64 g, e, want;

	if (fs->host == DAXFS_NO_HOST)
		return false;	/* no slot: nobody can ask us */
	h = daxfs_host_at(fs, fs->host);
	g = daxfs_load(daxfs_state_word(fs, epoch));
	e = daxfs_load(&h->map_epoch);
	want = daxfs_load(&h->pass_wanted);

	/* a pass now announces g: worth it while ours lags g and an ask
	 * wants more.  A garbled word (a stray store) costs at most a pass
	 * per epoch advance, and nothing past g + 2. */
	return e && e < g && want > e && want <= g + 2;
}

void daxfs_map_first(struct daxfs_fs *fs)
{
	u64 *w;

	if (!daxfs_host_still_mine(fs))
		return;
	w = &daxfs_host_at(fs, fs->host)->map_epoch;
	if (daxfs_load(w))
		return;		/* an older announcement covers new mappings */
	daxfs_store(w, daxfs_load(daxfs_state_word(fs, epoch)));
	/* visible before any fault of the new mapping looks a page up */
	daxfs_fence();
}

void daxfs_hold_recover(struct daxfs_fs *fs, struct daxfs_lane *lane, u32 dest)
{
	u64 v = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_PAGES]);
	u64 first = v & ~(DAXFS_PAGE_SIZE - 1), n;

	n = (v & (DAXFS_PAGE_SIZE - 1)) + 1;
	/* claim first (a second recoverer finds nothing), then free */
	if (v && daxfs_cas(&lane->pad[DAXFS_LANE_HOLD_PAGES], &v, 0) &&
	    n <= DAXFS_HOLD_MAX_PAGES)
		daxfs_pages_free(fs, first, n);
	v = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_CHAIN]);
	if (v && daxfs_cas(&lane->pad[DAXFS_LANE_HOLD_CHAIN], &v, 0) &&
	    !daxfs_compact_recover(fs, v))
		daxfs_limbo_splice(fs, dest, v);
}

void daxfs_reclaim(struct daxfs_op *op)
{
	if (!op->lane || !daxfs_host_still_mine(op->fs))
		return;		/* host-less, or declared dead: hands off */
	/* hosts that died with idle lanes hold back no epoch, so only this
	 * periodic look frees their batch and limbo */
	daxfs_reap_expired(op->fs);
	/* advance first: a batch opened in this epoch is sealed only once
	 * the epoch moved (seal_open).  The round advances once more: from
	 * op_end our lane is IDLE, so both can succeed, and batches sealed
	 * one epoch ago are free at once. */
	daxfs_epoch_try_advance(op->fs);
	seal_open(op->fs, op->lane, false);
	reclaim_round(op->fs, op->lane, false);
}

void daxfs_reclaim_quiet(struct daxfs_op *op)
{
	daxfs_reclaim(op);
}

/* force: seal every open batch (leave: no lane of ours may keep one);
 * help: free other live hosts' eligible limbo too (help_live) */
static void reclaim_all(struct daxfs_fs *fs, bool force, bool help)
{
	struct daxfs_op op;
	struct daxfs_lane *lane;
	u64 zero;
	u32 i;

	if (fs->host == DAXFS_NO_HOST || daxfs_op_begin(fs, &op) || !op.lane)
		return;
	daxfs_store(&op.lane->epoch, DAXFS_EPOCH_IDLE);
	daxfs_reap_expired(fs);
	daxfs_epoch_try_advance(fs);	/* see seal_open */
	for (i = 0; i < DAXFS_LANES; i++) {
		lane = daxfs_lane_at(fs, fs->host, i);
		if (lane == op.lane) {
			seal_open(fs, lane, force);
			continue;
		}
		/* an idle lane's batch: borrow the lane to seal it */
		zero = 0;
		if (!daxfs_cas(&lane->epoch, &zero, DAXFS_EPOCH_IDLE))
			continue;
		seal_open(fs, lane, force);
		daxfs_store(&lane->epoch, 0);
	}
	for (i = 0; i < 4; i++)
		reclaim_round(fs, op.lane, help);
	daxfs_store(&op.lane->epoch, 0);
}

void daxfs_reclaim_all(struct daxfs_fs *fs)
{
	reclaim_all(fs, false, false);
}

void daxfs_reclaim_for_space(struct daxfs_fs *fs)
{
	reclaim_all(fs, false, true);
}

void daxfs_reclaim_leaving(struct daxfs_fs *fs)
{
	reclaim_all(fs, true, false);
}

int daxfs_retire(struct daxfs_op *op, u64 off, unsigned int class)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_lane *lane = op->lane;
	struct daxfs_limbo *lb;
	u64 b, page;
	u32 c, tries;

	if (!lane || class >= DAXFS_NR_CLASSES || (off & (DAXFS_OFF_ALIGN - 1)))
		return 0;	/* host-less or not an object: leak (fsck) */
	daxfs_crash_point("fence.retire");	/* tests/test_zombie_fence.py */
	if (!daxfs_host_still_mine(fs))
		return -ESTALE;	/* declared dead: leak (fsck) */
	for (tries = 0; tries < 4; tries++) {
		if (daxfs_fenced(op))
			return -ESTALE;	/* recovery sealed our open batch: leak */
		b = daxfs_load(&lane->limbo_open);
		if (b) {
			lb = limbo_ptr(fs, b);
			if (!lb) {
				daxfs_store(&lane->limbo_open, 0);
				continue;
			}
			c = daxfs_load32(&lb->count);
			if (c < DAXFS_LIMBO_ENTRIES) {
				daxfs_store(&lb->entry[c], off | class);
				daxfs_store32(&lb->count, c + 1);
				/* the epoch after this entry's unlink: the
				 * open batch's word is its latest retire's */
				daxfs_store(&lb->epoch,
					    daxfs_load(daxfs_state_word(fs, epoch)));
				return 0;
			}
			/* one CAS: recovery seals the batch it takes the
			 * same way (recover_slot), so a host declared dead here never
			 * puts it on a second chain */
			if (daxfs_cas(&lane->limbo_open, &b, 0))
				daxfs_limbo_seal(fs, fs->host, b);
		}
		/* may dip into the limbo reserve (docs/alloc.md) */
		page = daxfs_alloc_limbo_page(op);
		if (page) {
			lb = limbo_ptr(fs, page);
			daxfs_store(&lb->next, 0);
			/* while open: the epoch of its latest retire
			 * (seal_open); none yet: the one it was opened at */
			daxfs_store(&lb->epoch,
				    daxfs_load(daxfs_state_word(fs, epoch)));
			daxfs_store32(&lb->count, 0);
			daxfs_store(&lane->limbo_open, page);
			continue;
		}
		daxfs_reclaim(op);
	}
	/* no page for a batch even after reclaiming and with the reserve:
	 * leak (fsck finds it); only more concurrent retirers than the
	 * reserve covers, on a full pool, get here */
	return 0;
}
