// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Host table, leases, lanes, dead-host declaration and recovery.
 * Protocol, invariants and crash story: docs/hosts.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "file.h"
#include "openset.h"
#include "lock.h"
#include "pcache.h"
#include "xattr-int.h"

#define OP_BEGIN_ROUNDS		1000000u	/* lane waits, each round yields */
#define CHECK_DEAD_ROUNDS	1000000u

static u64 lease_ns(struct daxfs_fs *fs)
{
	return (u64)fs->lease_ms * 1000000ULL;
}

/*
 * Leases (docs/hosts.md "Leases"): a host adds 1 to its heartbeat counter
 * at each renewal; an observer keys what it saw on (state word, counter)
 * and times how long that pair stays the same with its own monotonic
 * clock.  No clock value crosses hosts, so a wall clock stepped on any
 * host, or skewed between hosts, declares nobody dead.
 *
 * The pair is updated under a try-lock: a thread that finds it busy
 * judges the lease UNKNOWN, which never declares anyone dead (the caller
 * looks again later).  Without it a thread could pair a new counter with
 * another thread's old first-seen time and expire a live host.
 */
static enum daxfs_lease obs_update(struct daxfs_fs *fs, u32 slot, s64 age_ns)
{
	struct daxfs_host *h = daxfs_host_at(fs, slot);
	struct daxfs_host_obs *o;
	enum daxfs_lease ret = DAXFS_LEASE_UNKNOWN;
	u64 w, hb;
	s64 now;
	u32 idle = 0;
	bool fresh;

	if (!fs->obs || slot >= fs->sb.max_hosts)
		return DAXFS_LEASE_UNKNOWN;
	o = &fs->obs[slot];
	if (!daxfs_cas32(&o->busy, &idle, 1))
		return DAXFS_LEASE_UNKNOWN;
	w = daxfs_load(&h->state);
	hb = daxfs_load(&h->heartbeat);
	now = daxfs_mono_ns();
	fresh = !o->seen_ns || o->state != w;
	if (fresh)
		o->changes = 0;
	else if (o->hb != hb && o->changes < 0xffffffffu)
		o->changes++;
	if (fresh || o->hb != hb || age_ns) {
		o->state = w;
		o->hb = hb;
		o->seen_ns = now - age_ns;
		/* never 0 ("nothing seen"), even at boot */
		if (!o->seen_ns)
			o->seen_ns = -1;
	}
	if ((u64)(now - o->seen_ns) > lease_ns(fs))
		ret = DAXFS_LEASE_EXPIRED;
	else if (o->changes)
		ret = DAXFS_LEASE_LIVE;
	daxfs_store32(&o->busy, 0);
	return ret;
}

bool daxfs_host_expired(struct daxfs_fs *fs, u32 slot)
{
	return obs_update(fs, slot, 0) == DAXFS_LEASE_EXPIRED;
}

enum daxfs_lease daxfs_host_lease(struct daxfs_fs *fs, u32 slot)
{
	return obs_update(fs, slot, 0);
}

void daxfs_host_obs_backdate(struct daxfs_fs *fs, u32 slot, s64 age_ns)
{
	obs_update(fs, slot, age_ns > 0 ? age_ns : 1);
}

u32 daxfs_hosts_observe(struct daxfs_fs *fs)
{
	u32 slot, st, n = 0;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		st = daxfs_host_st(daxfs_load(&daxfs_host_at(fs, slot)->state));
		if (slot == fs->host || st == DAXFS_HOST_FREE ||
		    st == DAXFS_HOST_DEAD)
			continue;
		if (obs_update(fs, slot, 0) == DAXFS_LEASE_UNKNOWN)
			n++;
	}
	return n;
}

bool daxfs_host_alive(struct daxfs_fs *fs, u32 slot, u64 gen)
{
	if (slot >= fs->sb.max_hosts)
		return false;
	if (daxfs_load(&daxfs_host_at(fs, slot)->state) !=
	    daxfs_host_word(gen, DAXFS_HOST_ALIVE))
		return false;
	if (slot == fs->host && gen == fs->host_gen)
		return true;
	return !daxfs_host_expired(fs, slot);
}

/*
 * After a lane was claimed at epoch e: announces the epoch current after
 * the claim (an advance may have slipped in between the load of e and the
 * claim), then the full fence.  The claim is one side of a Dekker pair
 * with daxfs_epoch_try_advance (docs/design.md "Memory ordering"): our
 * lane store before our first load of anything the epoch protects, the
 * advancer's epoch CAS before its scan of the lanes.  Without the fence a
 * weakly ordered CPU may satisfy our loads before the claim is visible,
 * and an advancer that saw the lane still free may free what we read.
 * The claim's own CAS is that fence when nothing was stored after it: a
 * successful daxfs_cas is a full barrier (compat.h: a locked instruction
 * on x86, a fully ordered cmpxchg in the kernel, the trailing fence of
 * daxfs_rmw_fence elsewhere), so only a re-announce fences again.
 */
static void lane_announce(struct daxfs_fs *fs, struct daxfs_lane *lane, u64 e)
{
	u64 g;
	u32 k;

	for (k = 0; k < 4; k++) {
		g = daxfs_load(daxfs_state_word(fs, epoch));
		if (g == e)
			break;
		daxfs_store(&lane->epoch, g);
		e = g;
	}
	if (k)
		daxfs_fence();
}

/* Claims any free lane of our host without waiting (recovery work must
 * not wait for lanes our own threads hold while they wait for it). */
static void try_lane(struct daxfs_fs *fs, struct daxfs_op *op)
{
	struct daxfs_lane *lane;
	u64 zero, e;
	u32 i;

	op->fs = fs;
	op->lane = NULL;
	op->lane_idx = 0;
	op->has_claim = false;
	op->rhost = NULL;
	op->later = NULL;
	if (fs->host == DAXFS_NO_HOST)
		return;
	for (i = 0; i < DAXFS_LANES; i++) {
		lane = daxfs_lane_at(fs, fs->host, i);
		zero = 0;
		e = daxfs_load(daxfs_state_word(fs, epoch));
		if (daxfs_cas(&lane->epoch, &zero, e)) {
			lane_announce(fs, lane, e);
			op->lane = lane;
			op->lane_idx = i;
			return;
		}
	}
}

/* A host of ours declared dead meanwhile leaves its lane alone: it is
 * recovery's, and the slot may have a new host already (daxfs_op_end) */
static void release_lane(struct daxfs_op *op)
{
	if (op->lane && daxfs_host_still_mine(op->fs))
		daxfs_store(&op->lane->epoch, 0);
	op->lane = NULL;
}

/* Does slot carry work that needs a lane of ours to finish (namespace
 * roll-forward/back and settling its opens retire and allocate)? */
static bool needs_lane(struct daxfs_fs *fs, u32 slot)
{
	u64 op;
	u32 i;

	if (daxfs_load(&daxfs_host_at(fs, slot)->open_set))
		return true;	/* its open set: settling frees */
	for (i = 0; i < DAXFS_LANES; i++) {
		op = daxfs_load(&daxfs_lane_at(fs, slot, i)->intent.op);
		if (op == DAXFS_INTENT_RENAME || op == DAXFS_INTENT_OPEN_PUT ||
		    op == DAXFS_INTENT_XATTR)
			return true;
	}
	return false;
}

/*
 * One recoverer at a time (docs/hosts.md "One recoverer at a time").  A
 * recovery claim is the dead slot's (state, heartbeat) pair as its holder
 * last set it: (RECOVERING(gen), counter).  Taking it (from DEAD, or over
 * a recovery whose lease ran out), renewing it and ending it (FREE, or
 * DEAD to hand it back) are each one 16-byte CAS from the pair the caller
 * holds, and each takes or renews by raising the counter, which nothing
 * lowers: so at most one survivor holds a claim, and one overtaken (or
 * whose slot was freed and joined since: a new generation) never holds it
 * again.  The holder renews before each lane and each slot-level step, so
 * a recovery that makes progress keeps its lease, and one that lost it
 * stops before its next change.
 */
DAXFS_STATIC_ASSERT(__builtin_offsetof(struct daxfs_host, heartbeat) == 8);

static bool claim_renew(struct daxfs_op *rop)
{
	u64 exp[2] = { rop->rclaim[0], rop->rclaim[1] };

	if (!daxfs_cas16(&rop->rhost->state, exp, exp[0], exp[1] + 1))
		return false;
	rop->rclaim[1]++;
	return true;
}

/* Takes the claim on slot h from the pair {w, hb} we found: the
 * RECOVERING(gen) pair we hold after it, in claim[] */
static bool claim_take(struct daxfs_host *h, u64 w, u64 hb, u64 *claim)
{
	u64 rw = daxfs_host_word(daxfs_host_gen(w), DAXFS_HOST_RECOVERING);

	claim[0] = w;
	claim[1] = hb;
	if (!daxfs_cas16(&h->state, claim, rw, hb + 1))
		return false;
	claim[0] = rw;
	claim[1] = hb + 1;
	return true;
}

/*
 * Recovers one lane: slot's lane idx, of a dead host (rop->rhost set: our
 * claim on slot), or rop's own lane after our claim was overtaken (see
 * own_lane_recover).  false: the claim was overtaken; the lane is left
 * as it is.  Limbo goes to dest.
 */
static bool recover_lane(struct daxfs_op *rop, struct daxfs_lane *lane,
			 u32 slot, u32 idx, u32 dest)
{
	struct daxfs_fs *fs = rop->fs;
	u64 b;

	daxfs_ov_recover_lane(fs, rop, lane);
	/* before the namespace: a free it rolls forward takes the inode's
	 * xattr claim, which this lane may hold */
	daxfs_xattr_recover_lane(rop, lane, slot, idx);
	switch (daxfs_load(&lane->intent.op)) {
	case DAXFS_INTENT_RENAME:
		/* not on our own lane: no recovery begins a namespace op,
		 * and the rename claim this would release is our host's,
		 * which another thread of ours may hold */
		if (rop->rhost)
			daxfs_rename_recover(rop, lane);
		break;
	case DAXFS_INTENT_FILE_WRITE:
		daxfs_file_recover(rop, lane);
		break;
	case DAXFS_INTENT_OPEN_PUT:
		daxfs_open_recover_lane(rop, lane);
		break;
	}
	/* the intent's recovery can take long: the claim may have been
	 * overtaken meanwhile, and the slot freed and joined, so that this
	 * lane is a new host's op now */
	if (rop->rhost && !claim_renew(rop))
		return false;
	daxfs_crash_point("recover.lane");
	daxfs_race_point("recover.lane_done", lane);
	daxfs_store(&lane->intent.op, DAXFS_INTENT_NONE);
	daxfs_hold_recover(fs, lane, dest);
	b = daxfs_load(&lane->limbo_open);
	if (b && daxfs_cas(&lane->limbo_open, &b, 0))
		daxfs_limbo_seal(fs, dest, b);
	daxfs_store(&lane->owner, 0);
	daxfs_store(&lane->epoch, 0);
	return true;
}

/*
 * Our claim was overtaken while rop may have been inside a step of its
 * own: an open-set entry taken and not settled, pages held, an overlay
 * claim pending, its intent on its own lane.  It stopped at a fence, as
 * an op of a host declared dead stops, and nobody recovers the lane of a
 * live host: so we recover it as a dead op's lane, with the same code, as
 * an op of our own host only (rhost cleared).  The lane's epoch is still
 * announced, so what its intent names is still readable; recovering it
 * ends with the epoch cleared, which releases the lane.  A host of ours
 * declared dead meanwhile leaves it all to the recovery of its own slot,
 * and touches nothing (the lane may be a new host's).
 */
static void own_lane_recover(struct daxfs_op *rop)
{
	struct daxfs_fs *fs = rop->fs;

	rop->rhost = NULL;
	if (rop->lane && daxfs_host_still_mine(fs))
		recover_lane(rop, rop->lane, fs->host, rop->lane_idx, fs->host);
	rop->lane = NULL;
}

/*
 * Releases everything a dead (or leaving) host's slot holds, under the
 * claim in claim[] (renewed as it goes: the pair we hold at the end is
 * left there).  Every step is idempotent, so a recoverer that dies
 * half-way can be replaced.  Returns -EAGAIN, having changed nothing,
 * when a namespace intent needs a lane and we have none free (host-less
 * recoverer, or all our lanes busy): the caller hands the slot back to
 * DEAD for a recoverer that has one.  -ESTALE: our claim was overtaken;
 * we stopped before the step we had not renewed it for.
 */
static int recover_slot(struct daxfs_fs *fs, u32 slot, u64 *claim)
{
	struct daxfs_host *h = daxfs_host_at(fs, slot);
	struct daxfs_op rop;
	u32 dest, i;
	u64 chain;

	try_lane(fs, &rop);
	if (!rop.lane && needs_lane(fs, slot))
		return -EAGAIN;
	/* from here on every fence check of rop looks at the claim too */
	rop.rhost = h;
	rop.rclaim[0] = claim[0];
	rop.rclaim[1] = claim[1];
	/* limbo goes to us; with no host of our own it stays in the slot,
	 * where the next reclaimer (or the slot's next owner) adopts it */
	dest = rop.lane ? fs->host : slot;
	/* before the holds are freed: a take into one may be half done */
	if (!claim_renew(&rop))
		goto lost;
	daxfs_batch_settle(fs, slot);
	for (i = 0; i < DAXFS_LANES; i++) {
		/* a fresh claim for each lane: progress keeps the lease */
		if (!claim_renew(&rop))
			goto lost;
		daxfs_race_point("recover.lane", daxfs_lane_at(fs, slot, i));
		if (!recover_lane(&rop, daxfs_lane_at(fs, slot, i), slot, i,
				  dest))
			goto lost;
	}
	/* after the lanes (an entry a dead op was removing is settled
	 * either way); before the slot can be taken again */
	if (!claim_renew(&rop))
		goto lost;
	daxfs_open_drop(&rop, slot);
	daxfs_crash_point("recover.open_set");
	/* the dead host may have published a change of permission
	 * attributes and died before its bump of the attribute epoch; its
	 * lanes are settled (an xattr change finished or undone): the bump
	 * is ours (docs/kernel.md "Permission checks and the attribute
	 * epoch").  Again on a rerun: a bump too many costs a look. */
	daxfs_attr_epoch_bump(fs);
	/* its locks are no locks once the slot left ALIVE; the sweep frees
	 * their records and wakes the waiters behind them (docs/locks.md) */
	if (!claim_renew(&rop))
		goto lost;
	daxfs_lock_sweep(&rop, 0);
	/* the claim of a renamer or linker goes only now, with every
	 * intent of the slot cleared: until then it keeps live renames and
	 * links away from the marks a rerun of a lane above lets go
	 * (ns_recover, core/namei.c); also a claim taken before its intent
	 * named it (the claim word it looks for is built from the slot's
	 * generation: a new host's once the slot is joined) */
	if (!claim_renew(&rop))
		goto lost;
	daxfs_rename_claim_recover(fs, slot);
	if (dest != slot) {
		chain = daxfs_load(&h->limbo_sealed);
		while (chain && !daxfs_cas(&h->limbo_sealed, &chain, 0))
			;
		if (chain)
			daxfs_limbo_splice(fs, dest, chain);
	}
	/* the batch and the words below are a joined host's own */
	if (!claim_renew(&rop))
		goto lost;
	daxfs_host_batch_return(fs, slot);
	daxfs_store(&h->map_epoch, 0);
	daxfs_store(&h->pass_wanted, 0);
	/* the "recovered" marker daxfs info shows (docs/format.md) */
	daxfs_store(&h->recovered_by, daxfs_my_claim(fs));
	daxfs_store((u64 *)&h->recovered_ns, (u64)daxfs_now_ns());
	release_lane(&rop);
	claim[1] = rop.rclaim[1];
	return 0;
lost:
	own_lane_recover(&rop);
	return -ESTALE;
}

/*
 * Recovers slot under the claim we just took, and ends the claim: FREE
 * when done (1), DEAD again when we have no lane for it (0), for a
 * survivor that has one.  -ESTALE: overtaken, by a survivor that found
 * our recovery lease run out; it does the rest (a recoverer stalled that
 * long, while its own host stayed alive, used to go on from the steps it
 * had read, after the new one had finished and the slot had a new host).
 */
static int recover_claimed(struct daxfs_fs *fs, u32 slot, u64 *claim)
{
	u64 gen = daxfs_host_gen(claim[0]);
	int err = recover_slot(fs, slot, claim);
	u32 st = err ? DAXFS_HOST_DEAD : DAXFS_HOST_FREE;

	if (err == -ESTALE)
		return err;
	/* ours to end only while it stands: not over a new claimer's */
	if (!daxfs_cas16(&daxfs_host_at(fs, slot)->state, claim,
			 daxfs_host_word(gen, st), claim[1]))
		return -ESTALE;
	return err ? 0 : 1;
}

/*
 * wait: keep going while another survivor's recovery is running (callers
 * that need the slot gone), for at most two leases of our own clock;
 * else return 0 at once in that case.  A genuine recovery ends, or its
 * recovery lease runs out and we take over, within one lease of our
 * first look; only a recoverer that keeps failing and handing the slot
 * back, or a peer writing the slot's words, makes it last longer, and
 * no caller may wait on that without bound (-EAGAIN: not gone yet).
 */
static int check_dead(struct daxfs_op *op, u32 slot, bool wait)
{
	struct daxfs_fs *fs = op->fs;
	s64 until = 0;
	struct daxfs_host *h;
	u64 w, hb, gen, claim[2];
	u32 round;
	int err;

	if (slot >= fs->sb.max_hosts)
		return -EINVAL;
	if (slot == fs->host)
		return 0;
	h = daxfs_host_at(fs, slot);
	for (round = 0; round < CHECK_DEAD_ROUNDS; round++) {
		w = daxfs_load(&h->state);
		gen = daxfs_host_gen(w);
		switch (daxfs_host_st(w)) {
		case DAXFS_HOST_FREE:
			return 1;
		case DAXFS_HOST_ALIVE:
			if (!daxfs_host_expired(fs, slot))
				return round ? 1 : 0;
			daxfs_cas(&h->state, &w, daxfs_host_word(gen, DAXFS_HOST_DEAD));
			break;
		case DAXFS_HOST_DEAD:
			/* exactly one survivor wins the right to recover; the
			 * counter it raises is its recovery lease (observers
			 * time it afresh) and names its claim */
			if (!claim_take(h, w, daxfs_load(&h->heartbeat), claim))
				break;
			daxfs_crash_point("recover.claimed");
			err = recover_claimed(fs, slot, claim);
			if (err >= 0)
				return err;
			break;		/* overtaken: look again */
		default:	/* RECOVERING; or a word no host writes, taken
				 * over like a stalled recovery */
			if (!daxfs_host_expired(fs, slot)) {
				if (!wait)
					return 0;
				if (!until)
					until = daxfs_mono_ns() +
						2 * (s64)lease_ns(fs);
				else if (daxfs_mono_ns() > until)
					return -EAGAIN;
				daxfs_yield();	/* a live survivor is at it */
				break;
			}
			/* the recoverer died or stalled: take over from the
			 * pair that ran out, then redo the idempotent steps
			 * (the one stalled stops at its next renewal) */
			hb = daxfs_load(&h->heartbeat);
			if (!daxfs_host_expired(fs, slot) ||
			    !claim_take(h, w, hb, claim))
				break;
			err = recover_claimed(fs, slot, claim);
			if (err >= 0)
				return err;
			break;
		}
	}
	return -EAGAIN;
}

int daxfs_host_check_dead(struct daxfs_op *op, u32 slot)
{
	return check_dead(op, slot, true);
}

int daxfs_host_try_dead(struct daxfs_op *op, u32 slot)
{
	return check_dead(op, slot, false);
}

u32 daxfs_lane_owner(struct daxfs_fs *fs,
		     bool (*match)(struct daxfs_lane *lane, const void *arg),
		     const void *arg)
{
	u32 slot, i;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		if (daxfs_host_st(daxfs_load(&daxfs_host_at(fs, slot)->state)) ==
		    DAXFS_HOST_FREE)
			continue;
		for (i = 0; i < DAXFS_LANES; i++)
			if (match(daxfs_lane_at(fs, slot, i), arg))
				return slot;
	}
	return DAXFS_NO_HOST;
}

/* Declares every expired slot dead and recovers it (or a stalled
 * recovery); !wait: skips slots another survivor is recovering. */
static int reap(struct daxfs_fs *fs, bool wait)
{
	struct daxfs_op op = { .fs = fs };
	u32 slot, st, n = 0;
	u64 w;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		if (slot == fs->host)
			continue;
		w = daxfs_load(&daxfs_host_at(fs, slot)->state);
		st = daxfs_host_st(w);
		if (st == DAXFS_HOST_FREE)
			continue;
		if (st != DAXFS_HOST_DEAD && !daxfs_host_expired(fs, slot))
			continue;
		if (check_dead(&op, slot, wait) == 1)
			n++;
	}
	return (int)n;
}

void daxfs_reap_expired(struct daxfs_fs *fs)
{
	if (!(fs->flags & DAXFS_FS_RDONLY) && daxfs_host_still_mine(fs))
		reap(fs, false);
}

int daxfs_recover_dead_hosts(struct daxfs_fs *fs)
{
	if (fs->flags & DAXFS_FS_RDONLY)
		return -EROFS;
	return reap(fs, true);
}

/*
 * A FREE slot's lanes hold nothing: its last owner's leave or recovery
 * released every lane.  What a joiner finds there anyway is garbage (a
 * stray store, a garbled image): a lane that looks busy would keep every
 * op of ours waiting for a lane it can never get (daxfs_op_begin), and a
 * hold or an open batch would be freed or filled as ours.  Forgotten, not
 * freed: what it names may be in use (fsck finds what leaks).
 */
static void lanes_forget(struct daxfs_fs *fs, u32 slot)
{
	struct daxfs_lane *lane;
	u32 i, w;

	for (i = 0; i < DAXFS_LANES; i++) {
		lane = daxfs_lane_at(fs, slot, i);
		daxfs_store(&lane->intent.op, DAXFS_INTENT_NONE);
		daxfs_store(&lane->limbo_open, 0);
		for (w = DAXFS_LANE_OV_BUCKET; w <= DAXFS_LANE_HOLD_CHAIN; w++)
			daxfs_store(&lane->pad[w], 0);
		daxfs_store(&lane->owner, 0);
		daxfs_store(&lane->epoch, 0);
	}
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(daxfs_lane_at(fs, slot, 0),
			    DAXFS_LANES * sizeof(struct daxfs_lane));
}

int daxfs_host_join(struct daxfs_fs *fs, const char *name, u32 pid, u32 kind)
{
	struct daxfs_op op = { .fs = fs };
	struct daxfs_host *h;
	u32 slot, round, i, st;
	u64 w, gen;
	int n;

	if (fs->flags & DAXFS_FS_RDONLY)
		return -EROFS;
	if (fs->host != DAXFS_NO_HOST)
		return -EALREADY;
	for (round = 0; round < 3; round++) {
		for (slot = 0; slot < fs->sb.max_hosts; slot++) {
			h = daxfs_host_at(fs, slot);
			w = daxfs_load(&h->state);
			if (daxfs_host_st(w) != DAXFS_HOST_FREE)
				continue;
			gen = daxfs_host_gen(w) + 1;
			/* observers key on the state word too: the new
			 * generation's lease is timed from when they see it */
			if (!daxfs_cas(&h->state, &w,
				       daxfs_host_word(gen, DAXFS_HOST_ALIVE)))
				continue;
			daxfs_faa(&h->heartbeat, 1);
			daxfs_store((u64 *)&fs->renewed_ns, (u64)daxfs_mono_ns());
			h->joined_ns = daxfs_now_ns();
			h->pid = pid;
			h->kind = kind;
			daxfs_store(&h->ops, 0);
			daxfs_store(&h->map_epoch, 0);
			daxfs_store(&h->pass_wanted, 0);
			daxfs_store(&h->alloc_end, 0);
			daxfs_store(&h->alloc_cursor, 0);
			daxfs_store((u64 *)&h->recovered_ns, 0);
			daxfs_store(&h->recovered_by, 0);
			daxfs_store(&h->proc_gen, 0);	/* the owner's, if any */
			lanes_forget(fs, slot);
			for (i = 0; i < DAXFS_HOST_NAME_LEN; i++) {
				h->name[i] = name ? name[i] : 0;
				if (name && !name[i])
					name = NULL;
			}
			h->name[DAXFS_HOST_NAME_LEN - 1] = 0;
			/* persistent media: a host that loses power must be
			 * found ALIVE in its slot, to be recovered (its batch
			 * returned) like any dead host */
			if (fs->flags & DAXFS_FS_PERSISTENT) {
				daxfs_flush(h, sizeof(*h));
				daxfs_drain();
			}
			fs->host = slot;
			fs->host_gen = gen;
			daxfs_open_summary_join(fs);
			daxfs_pcache_joined(fs);
			/* hosts that died idle block nothing, so nobody else
			 * would notice them: every joiner looks */
			reap(fs, false);
			return 0;
		}
		/* table full: free the slots of hosts whose lease ran out */
		n = 0;
		for (slot = 0; slot < fs->sb.max_hosts; slot++) {
			w = daxfs_load(&daxfs_host_at(fs, slot)->state);
			st = daxfs_host_st(w);
			if (st == DAXFS_HOST_FREE ||
			    (st != DAXFS_HOST_DEAD && !daxfs_host_expired(fs, slot)))
				continue;
			if (daxfs_host_check_dead(&op, slot) == 1)
				n++;
		}
		if (!n)
			break;
	}
	return -EBUSY;		/* host table full */
}

int daxfs_host_renew(struct daxfs_fs *fs)
{
	struct daxfs_host *h;

	if (fs->host == DAXFS_NO_HOST)
		return -EINVAL;
	h = daxfs_host_at(fs, fs->host);
	if (daxfs_load(&h->state) != daxfs_host_word(fs->host_gen, DAXFS_HOST_ALIVE))
		return -ESTALE;
	/* an add, not a store: a recoverer may bump it too */
	daxfs_faa(&h->heartbeat, 1);
	daxfs_store((u64 *)&fs->renewed_ns, (u64)daxfs_mono_ns());
	return 0;
}

/*
 * A host that shut itself down (kernel/shutdown.c) and whose ops have all
 * ended gives up its slot as a crash would leave it, but marked DEAD at
 * once: the next host to look (a join, a reclaim pass) recovers it
 * without waiting out the lease.  Nothing of ours can race the recoverer:
 * no op is running, and fs->shut refuses any that would start.
 */
int daxfs_host_abandon(struct daxfs_fs *fs)
{
	u64 w;

	if (fs->host == DAXFS_NO_HOST)
		return -EINVAL;
	w = daxfs_host_word(fs->host_gen, DAXFS_HOST_ALIVE);
	if (!daxfs_cas(&daxfs_host_at(fs, fs->host)->state, &w,
		       daxfs_host_word(fs->host_gen, DAXFS_HOST_DEAD)))
		return -ESTALE;	/* declared dead already */
	return 0;
}

/*
 * Declares host slot, of generation gen, dead now and recovers it: the
 * new image of a process after exec retires the slot of the image before
 * it, which stayed the host (its opens, its locks) until the new one had
 * joined and taken over its opens (docs/preload.md "exec").  -ESTALE when
 * slot is not that host alive any more (it was declared dead meanwhile:
 * others recover it).  The image before exec runs no more code, so
 * nothing races the recovery but a late exec that failed: it finds
 * itself fenced, as any host declared dead does.
 */
int daxfs_host_retire(struct daxfs_fs *fs, u32 slot, u64 gen)
{
	u64 w = daxfs_host_word(gen, DAXFS_HOST_ALIVE);
	struct daxfs_host *h;

	if (fs->host == DAXFS_NO_HOST)
		return -EROFS;	/* a host-less view stores nothing */
	if (slot >= fs->sb.max_hosts || slot == fs->host)
		return -EINVAL;
	h = daxfs_host_at(fs, slot);
	if (!daxfs_cas(&h->state, &w, daxfs_host_word(gen, DAXFS_HOST_DEAD)))
		return -ESTALE;
	daxfs_recover_dead_hosts(fs);
	/*
	 * A hand-over, not a death: when we recovered the slot ourselves,
	 * take the "recovered" marker off again, so that `daxfs info` shows
	 * a free slot, as after a clean leave (a joiner clears it anyway).
	 */
	if (daxfs_load(&h->recovered_by) == daxfs_my_claim(fs) &&
	    (daxfs_load(&h->state) & DAXFS_HOST_STATE_MASK) == DAXFS_HOST_FREE)
		daxfs_store((u64 *)&h->recovered_ns, 0);
	return 0;
}

void daxfs_host_leave(struct daxfs_fs *fs)
{
	struct daxfs_host *h;
	struct daxfs_lane *lane;
	u64 me;
	u32 i;

	if (fs->host == DAXFS_NO_HOST)
		return;
	h = daxfs_host_at(fs, fs->host);
	me = daxfs_host_word(fs->host_gen, DAXFS_HOST_ALIVE);
	if (daxfs_load(&h->state) == me) {
		struct daxfs_op op;

		/* opens never closed: dropped like a dead host's */
		if (!daxfs_op_begin(fs, &op)) {
			daxfs_open_drop(&op, fs->host);
			daxfs_lock_sweep(&op, daxfs_my_claim(fs));
			daxfs_op_end(&op);
		}
		/* our mappings are gone (the caller unmapped first) */
		daxfs_store(&h->map_epoch, 0);
		daxfs_store(&h->pass_wanted, 0);
		/* seals our open batches and frees what is already safe;
		 * the rest stays on the slot's chain for others to adopt */
		daxfs_reclaim_leaving(fs);
		daxfs_host_batch_return(fs, fs->host);
		for (i = 0; i < DAXFS_LANES; i++) {
			lane = daxfs_lane_at(fs, fs->host, i);
			daxfs_ov_recover_lane(fs, NULL, lane);
			daxfs_store(&lane->intent.op, DAXFS_INTENT_NONE);
			daxfs_hold_recover(fs, lane, fs->host);
			daxfs_store(&lane->epoch, 0);
		}
		daxfs_store((u64 *)&h->recovered_ns, 0);
		daxfs_cas(&h->state, &me,
			  daxfs_host_word(fs->host_gen, DAXFS_HOST_FREE));
	}
	fs->host = DAXFS_NO_HOST;
	fs->host_gen = 0;
}

int daxfs_host_state(struct daxfs_fs *fs, u32 slot, u32 *state, u64 *gen,
		     s64 *lease_age_ns)
{
	struct daxfs_host *h;
	u64 w;

	if (slot >= fs->sb.max_hosts)
		return -EINVAL;
	h = daxfs_host_at(fs, slot);
	w = daxfs_load(&h->state);
	if (state)
		*state = daxfs_host_st(w);
	if (gen)
		*gen = daxfs_host_gen(w);
	if (lease_age_ns) {
		struct daxfs_host_obs *o = fs->obs ? &fs->obs[slot] : NULL;

		*lease_age_ns = -1;
		if (o && slot != fs->host) {
			obs_update(fs, slot, 0);
			*lease_age_ns = daxfs_mono_ns() -
					(s64)daxfs_load((u64 *)&o->seen_ns);
		} else if (slot == fs->host) {
			*lease_age_ns = daxfs_mono_ns() -
					(s64)daxfs_load((u64 *)&fs->renewed_ns);
		}
	}
	return 0;
}

int daxfs_op_begin(struct daxfs_fs *fs, struct daxfs_op *op)
{
	struct daxfs_host *h;
	struct daxfs_lane *lane;
	u64 me, e, zero;
	u32 start, round, i, idx;
	void *log;

	op->fs = fs;
	op->lane = NULL;
	op->lane_idx = 0;
	op->has_claim = false;
	op->rhost = NULL;
	op->later = NULL;
	/* a page of the lanes or the host table that went bad is never
	 * loaded (a machine check): the host stops instead; a host shut
	 * down (kernel/shutdown.c) starts nothing.  One load: a front end
	 * that sets fs->stopped sets fs->shut with it */
	if (daxfs_unlikely(daxfs_once(fs->shut) || daxfs_media_fixed_bad(fs)))
		return -EIO;
	if (fs->host == DAXFS_NO_HOST)
		return 0;
	h = daxfs_host_at(fs, fs->host);
	me = daxfs_host_word(fs->host_gen, DAXFS_HOST_ALIVE);
	if (daxfs_load(&h->state) != me)
		return -ESTALE;
	start = (u32)(daxfs_thread_id() % DAXFS_LANES);
	for (round = 0; round < OP_BEGIN_ROUNDS; round++) {
		for (i = 0; i < DAXFS_LANES; i++) {
			idx = (start + i) % DAXFS_LANES;
			lane = daxfs_lane_at(fs, fs->host, idx);
			if (daxfs_load(&lane->epoch))
				continue;
			e = daxfs_load(daxfs_state_word(fs, epoch));
			zero = 0;
			/* a lane's epoch is void after a power loss: not
			 * worth a write-back in sync mode (docs/modes.md) */
			log = daxfs_dirty_pause();
			if (!daxfs_cas(&lane->epoch, &zero, e)) {
				daxfs_dirty_resume(log);
				daxfs_cpu_relax();
				continue;
			}
			lane_announce(fs, lane, e);
			daxfs_dirty_resume(log);
			lane->owner = daxfs_thread_id();
			if (daxfs_load(&h->state) != me) {
				daxfs_store(&lane->epoch, 0);
				return -ESTALE;
			}
			op->lane = lane;
			op->lane_idx = idx;
			return 0;
		}
		daxfs_yield();
	}
	return -EBUSY;
}

/*
 * Implicit lease renewal every DAXFS_RECLAIM_EVERY ops of a lane: keeps a
 * busy host alive even when its front end's heartbeat is late, without a
 * clock read on every operation (it was 40% of a hot lookup).
 */
static void renew_if_due(struct daxfs_fs *fs)
{
	s64 last = (s64)daxfs_load((u64 *)&fs->renewed_ns);

	if ((u64)(daxfs_mono_ns() - last) > lease_ns(fs) / 4)
		daxfs_host_renew(fs);
}

static u32 open_batch_count(struct daxfs_fs *fs, struct daxfs_lane *lane)
{
	u64 b = daxfs_load(&lane->limbo_open);
	struct daxfs_limbo *lb;

	if (!b)
		return 0;
	lb = daxfs_ptr(fs, b, sizeof(*lb), DAXFS_PAGE_SIZE);
	return lb ? daxfs_load32(&lb->count) : 0;
}

/* Whether the op still holds its lane: not once we were declared dead
 * meanwhile, when recovery owns the lane (and the slot may have a new
 * owner): then touch nothing, and forget it. */
static bool lane_still_ours(struct daxfs_op *op)
{
	if (!op->lane)
		return false;
	if (daxfs_host_still_mine(op->fs))
		return true;
	op->lane = NULL;
	return false;
}

/* The lane back (epoch 0); the caller made sure it is still ours. */
static void lane_put(struct daxfs_op *op)
{
	void *log;

	log = daxfs_dirty_pause();
	daxfs_store(&op->lane->epoch, 0);
	daxfs_dirty_resume(log);
	op->lane = NULL;
}

/*
 * The end of a read's op where the front end keeps the host up on its own
 * schedule (DAXFS_FS_UPKEEP: daxfs.ko's lease work renews, reclaims and
 * recovers every lease/4 to lease): the lane back, and no count toward
 * daxfs_op_end's periodic reclaim, which a read, retiring nothing, only
 * ran for what other ops left.  Elsewhere (libdaxfs, FUSE) daxfs_op_end.
 */
void daxfs_op_end_read(struct daxfs_op *op)
{
	if (!(op->fs->flags & DAXFS_FS_UPKEEP)) {
		daxfs_op_end(op);
		return;
	}
	if (lane_still_ours(op))
		lane_put(op);
}

void daxfs_op_end(struct daxfs_op *op)
{
	struct daxfs_lane *lane = op->lane;
	u64 n;

	if (!lane_still_ours(op))
		return;
	n = lane->pad[DAXFS_LANE_OPS] + 1;
	lane->pad[DAXFS_LANE_OPS] = n;
	if (!(n % DAXFS_RECLAIM_EVERY))
		renew_if_due(op->fs);
	if (!(n % DAXFS_RECLAIM_EVERY) ||
	    open_batch_count(op->fs, lane) >= DAXFS_RECLAIM_BATCH_MIN) {
		/* we hold no references any more: do not hold back the epoch */
		daxfs_store(&lane->epoch, DAXFS_EPOCH_IDLE);
		daxfs_reclaim_quiet(op);
	}
	lane_put(op);
}
