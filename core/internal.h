/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers shared by the core's .c files (not part of the public API).
 * Owned by the infra side: region words, host/lane/claim encodings,
 * liveness and intent records.  docs/hosts.md, docs/reclaim.md.
 */
#ifndef DAXFS_INTERNAL_H
#define DAXFS_INTERNAL_H

#include "compat.h"
#include "daxfs_core.h"

#define DAXFS_PAGE_SIZE		((u64)DAXFS_BLOCK_SIZE)
#define DAXFS_OFF_ALIGN		64ULL	/* every pool object is 64-byte aligned */

#define DAXFS_DEFAULT_MAX_HOSTS	64u
#define DAXFS_DEFAULT_LEASE_MS	10000u
#define DAXFS_DEFAULT_PROBE	64u
#define DAXFS_MIN_AUTO_BUCKETS	1024ULL
#define DAXFS_MIN_POOL_PAGES	8ULL
#define DAXFS_BATCH_PAGES	64u	/* per-host page reservation */
#define DAXFS_RECLAIM_EVERY	64u	/* op_end runs reclaim this often */
#define DAXFS_RECLAIM_BATCH_MIN	64u	/* ... or when the open batch is this full */

/*
 * lane.epoch values: 0 = lane free; DAXFS_EPOCH_IDLE = lane owned but the
 * owner holds no references (reclaim at op_end), does not hold back the
 * epoch; anything else = the epoch announced by the op holding the lane.
 */
#define DAXFS_EPOCH_IDLE	(~0ULL)

/* Private uses of lane.pad[] (owner-written, see docs/format.md). */
#define DAXFS_LANE_OPS		0	/* ops completed on this lane */
#define DAXFS_LANE_OV_BUCKET	1	/* nested OV_INSERT intent: bucket + 1 */
#define DAXFS_LANE_OV_KEY	2	/* nested OV_INSERT intent: key */
#define DAXFS_LANE_HOLD_PAGES	3	/* pages allocated, not yet published:
					 * first | (count - 1), 0 none */
#define DAXFS_LANE_HOLD_CHAIN	4	/* limbo chain taken by a reclaimer
					 * and not yet processed, or a small-
					 * object chain being compacted:
					 * first | (class + 1); 0 none */
#define DAXFS_HOLD_MAX_PAGES	DAXFS_RUN_PAGES	/* a 2 MiB run (format 11) */

/* Address of a state-page counter: daxfs_state_word(fs, epoch). */
#define daxfs_state_word(fs, field)	(&(fs)->state->field.v)

/*
 * Limbo reserve (docs/alloc.md): ordinary page allocations leave this
 * many pages of the page stack + bump for limbo batch pages, so deleting
 * works on a full pool.  One op deleting the largest possible file needs
 * pool_pages / DAXFS_LIMBO_ENTRIES batch pages (nothing it retires is
 * freed before the op ends), hence the proportional part; every joined
 * host gets a few more for lanes retiring at the same time.
 */
#define DAXFS_RESERVE_DIV	256u	/* pool_pages / 256: 2x one-op worst case */
#define DAXFS_RESERVE_PER_HOST	4u	/* pages per non-FREE host slot */
/*
 * Open sets (docs/open-files.md "On a full pool"): the reserve also keeps
 * this many pages for every non-FREE host that has no open-set page yet,
 * so that a host can open (and so read, and close) files on a full pool.
 * Only a host's first set page may come from it; the bound per host is
 * this, far below DAXFS_OPEN_MAX_PAGES.
 */
#define DAXFS_RESERVE_OPEN_PAGES	1u

static inline struct daxfs_fs *daxfs_op_fs(const struct daxfs_op *op)
{
	return op->fs;
}

static inline bool daxfs_is_pow2(u64 x)
{
	return x && !(x & (x - 1));
}

static inline u64 daxfs_round_up(u64 x, u64 a)
{
	return (x + a - 1) & ~(a - 1);
}

/* ---- hosts ---- */

static inline u64 daxfs_host_word(u64 gen, u32 st)
{
	return (gen << DAXFS_HOST_GEN_SHIFT) | st;
}

static inline u32 daxfs_host_st(u64 word)
{
	return (u32)(word & DAXFS_HOST_STATE_MASK);
}

static inline u64 daxfs_host_gen(u64 word)
{
	return word >> DAXFS_HOST_GEN_SHIFT;
}

static inline struct daxfs_host *daxfs_host_at(struct daxfs_fs *fs, u32 slot)
{
	return &fs->hosts[slot];
}

static inline struct daxfs_lane *daxfs_lane_at(struct daxfs_fs *fs, u32 slot,
					       u32 idx)
{
	return &fs->lanes[(u64)slot * DAXFS_LANES + idx];
}

/* Our joined slot's state word still says ALIVE(our generation). */
static inline bool daxfs_slot_ours(struct daxfs_fs *fs)
{
	return daxfs_load(&daxfs_host_at(fs, fs->host)->state) ==
	       daxfs_host_word(fs->host_gen, DAXFS_HOST_ALIVE);
}

/* True while our slot is still ALIVE with our generation (a host that
 * was declared dead must not touch shared state any more). */
static inline bool daxfs_host_still_mine(struct daxfs_fs *fs)
{
	return fs->host != DAXFS_NO_HOST && daxfs_slot_ours(fs);
}

/*
 * A recovery op (op->rhost set, core/hosts.c) lost its claim on the dead
 * slot: the slot's (state, heartbeat) pair is no longer the one we last
 * set.  A survivor takes a stalled recovery over by raising the counter,
 * and the counter never comes back down, so a claim once overtaken never
 * stands again; a slot freed and joined since has a new generation in its
 * state word.  Two loads, no clock read.  The dead slot's lanes and words
 * are the new claimer's (or a new host's) from then on.
 */
static inline bool daxfs_recovery_lost(const struct daxfs_op *op)
{
	return op->rhost &&
	       (daxfs_load(&op->rhost->heartbeat) != op->rclaim[1] ||
		daxfs_load(&op->rhost->state) != op->rclaim[0]);
}

/*
 * The fence (docs/hosts.md "Fencing"): true once our slot is no longer
 * ALIVE(our generation), i.e. a survivor declared us dead and may already
 * have recovered (freed, rolled back) what this op holds; the slot may
 * even belong to a new host.  Checked immediately before every publishing
 * CAS/store of a mutating op, which then returns -ESTALE and writes
 * nothing more (no undo either: recovery did it).  One load of our own
 * state word, no clock read.  An op without a lane writes nothing.  A
 * recovery op is fenced by its claim on the dead slot too.
 */
static inline bool daxfs_fenced(const struct daxfs_op *op)
{
	/* tests shut the host down here (lib/crash.c "fence"): a shutdown
	 * must not stop an op in flight (docs/kernel.md "Shutdown") */
	daxfs_crash_point("fence");
	/* a recoverer overtaken: what it would do next, another does */
	if (daxfs_unlikely(daxfs_recovery_lost(op)))
		return true;
	/* a lane: joined; stopped (kernel/media.c): our slot's word may lie
	 * on a bad block, so not loaded */
	return op->lane && (daxfs_unlikely(daxfs_once(op->fs->stopped)) ||
			    !daxfs_slot_ours(op->fs));
}

/*
 * A claim word that one live holder keeps: a claim's holder keeps it for
 * a few stores, so one held for `leases` leases of our monotonic clock is
 * a word no live change wrote (a peer's stray store).  *since is 0 at the
 * first look (and after the word changed); true once the wait is over.
 */
static inline bool daxfs_claim_held_too_long(const struct daxfs_fs *fs,
					     s64 *since, u32 leases)
{
	s64 now = daxfs_mono_ns();

	if (!*since)
		*since = now;
	return now - *since > (s64)leases * fs->lease_ms * 1000000LL;
}

/*
 * Allocated-but-unreachable pages of an op (docs/recovery.md): a run of
 * contiguous pages the op holds (allocated, not yet published or freed)
 * is named in its lane so that recovery of a dead host frees it.  The
 * owner shrinks the run *before* it publishes or frees a page (a crash in
 * between leaks one page to fsck; it can never free a published one).
 */
static inline daxfs_must_check int daxfs_hold_pages(struct daxfs_op *op,
							 u64 first, u32 n)
{
	u64 *w;

	if (!op->lane)
		return 0;
	/* tests/test_zombie_fence.py stops a host here, before the check */
	daxfs_crash_point("fence.hold");
	if (daxfs_fenced(op))
		return -ESTALE;
	w = &op->lane->pad[DAXFS_LANE_HOLD_PAGES];
	daxfs_store(w, n ? first | (u64)(n - 1) : 0);
	/* persistent media: the shrunk run must be there before the page
	 * is published (the caller drains before its CAS), else recovery
	 * after a power loss frees a published page (tests/powerfail.py) */
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(w, sizeof(*w));
	return 0;
}

/*
 * The page a write is publishing (docs/recovery.md "Pages a write
 * holds"), in its FILE_WRITE intent: a[4] = block | check << 36, a[5] =
 * page (0: none).  The check (daxfs_wrec_check() of page and block, 28
 * bits) tells a record from the words an older intent of the lane left;
 * a block number fits in 36 bits (512^4 blocks).  a[6] is a strict
 * write's redo word (core/redo.c).  Set before the page leaves the hold,
 * cleared once its radix insert returned: recovery frees the page unless
 * the file maps it at that block.
 */
#define DAXFS_WREC_BLK		4
#define DAXFS_WREC_PAGE		5
#define DAXFS_WREC_BLK_BITS	36
#define DAXFS_WREC_BLK_MASK	((1ULL << DAXFS_WREC_BLK_BITS) - 1)

static inline u64 daxfs_wrec_check(u64 page, u64 blk)
{
	u64 h = page ^ (blk * 0x9e3779b97f4a7c15ULL) ^ 0x5752454350414745ULL;

	h *= 0xff51afd7ed558ccdULL;
	return h >> DAXFS_WREC_BLK_BITS;	/* the top 28 bits */
}

/* a[4]: the block and the check of (page, block) in one word */
static inline u64 daxfs_wrec_word(u64 page, u64 blk)
{
	return (blk & DAXFS_WREC_BLK_MASK) |
	       daxfs_wrec_check(page, blk) << DAXFS_WREC_BLK_BITS;
}

/* Only a write's intent carries a record (a fault's op names none). */
static inline bool daxfs_wrec_ok(struct daxfs_op *op)
{
	return op->lane && !daxfs_fenced(op) &&
	       op->lane->intent.op == DAXFS_INTENT_FILE_WRITE;
}

static inline void daxfs_wrec_set(struct daxfs_op *op, u64 blk, u64 page)
{
	struct daxfs_intent *in;

	if (!daxfs_wrec_ok(op))
		return;
	in = &op->lane->intent;
	daxfs_store(&in->a[DAXFS_WREC_BLK], daxfs_wrec_word(page, blk));
	daxfs_store(&in->a[DAXFS_WREC_PAGE], page);
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(&in->a[DAXFS_WREC_BLK], 2 * sizeof(u64));
}

static inline void daxfs_wrec_clear(struct daxfs_op *op)
{
	if (daxfs_wrec_ok(op))
		daxfs_store(&op->lane->intent.a[DAXFS_WREC_PAGE], 0);
}

/* Recovery of a dead lane's record (core/file.c), before its gate opens. */
void daxfs_wrec_recover(struct daxfs_op *op, struct daxfs_lane *lane,
			struct daxfs_inode *ip);

/* Cluster-wide claims (e.g. state.rename_claim) name their owner. */
static inline u64 daxfs_claim_word(u32 slot, u64 gen)
{
	return (gen << 16) | (u64)(slot + 1);
}

static inline u32 daxfs_claim_slot(u64 claim)
{
	return (u32)(claim & 0xffff) - 1;
}

static inline u64 daxfs_claim_gen(u64 claim)
{
	return claim >> 16;
}

/* Our own claim word (0 for a host-less fs). */
static inline u64 daxfs_my_claim(struct daxfs_fs *fs)
{
	if (fs->host == DAXFS_NO_HOST)
		return 0;
	return daxfs_claim_word(fs->host, fs->host_gen);
}

/* True when the lease of slot has run out (state not checked). */
bool daxfs_host_expired(struct daxfs_fs *fs, u32 slot);
/* True while slot is ALIVE with generation gen and its lease is fresh
 * (our own slot counts as alive while we hold it). */
bool daxfs_host_alive(struct daxfs_fs *fs, u32 slot, u64 gen);
/* If slot is expired, declares it DEAD (CAS) and recovers it (or finishes
 * a stalled recovery).  Returns 1 when the slot's former owner is gone
 * (dead and recovered, or FREE), 0 when it is alive, -errno on error.
 * Never touches our own slot. */
int daxfs_host_check_dead(struct daxfs_op *op, u32 slot);
/* The same without waiting for a recovery another survivor is running
 * (0 then): for callers that look again later anyway. */
int daxfs_host_try_dead(struct daxfs_op *op, u32 slot);
/* The slot of a host (not FREE) with a lane for which match(lane, arg)
 * holds, the first found; DAXFS_NO_HOST if none.  For waiters that look
 * for the owner of what they wait on: a hint, the caller checks again. */
u32 daxfs_lane_owner(struct daxfs_fs *fs,
		     bool (*match)(struct daxfs_lane *lane, const void *arg),
		     const void *arg);

/* A remover that marked a leaf removed waits here while a link holds it
 * (DAXFS_DE_LINKING, core/namei.c): 0 once released or found stale,
 * -ESTALE when we are fenced. */
int daxfs_link_hold_wait(struct daxfs_op *op, u32 *removed);

/* Namespace roll-forward/back for a dead host's lane whose intent op is
 * DAXFS_INTENT_RENAME: rename, rmdir, create, link, unlink (core/namei.c).  op is the recovering host's op
 * (op->lane may be NULL when the recoverer has not joined yet). */
void daxfs_rename_recover(struct daxfs_op *op, struct daxfs_lane *dead_lane);
/* Changes in flight (core/flight.c): the inodes whose counters the
 * namespace intent in ln may have raised (~0: any); whether an intent in
 * a lane other than skip's (may be NULL) may have raised ino's; and the
 * heal of ino's counter by a recoverer of skip's lane (skip NULL: by any
 * host, daxfs_change_seen), true when it stored. */
#define DAXFS_NS_RAISED_MAX	4
int daxfs_ns_intent_inos(struct daxfs_fs *fs, struct daxfs_lane *ln,
			 u64 ino[DAXFS_NS_RAISED_MAX]);
bool daxfs_ns_raised_elsewhere(struct daxfs_fs *fs, struct daxfs_lane *skip,
			       u64 ino);
bool daxfs_change_heal(struct daxfs_op *op, struct daxfs_lane *skip, u64 ino);
/* The rename claim, if dead host slot still holds it (its lanes are
 * recovered: no intent of it needs the claim any more). */
void daxfs_rename_claim_recover(struct daxfs_fs *fs, u32 slot);

/* ---- intent records (one per lane) ---- */

/* The stores of daxfs_intent_set, for a caller that looked at the fence
 * right before them (op->lane set): arguments first, then the op code
 * (release), so recovery never sees an op code with stale arguments. */
static inline void daxfs_intent_publish(struct daxfs_op *op, u64 code,
					u64 a0, u64 a1, u64 a2, u64 a3)
{
	struct daxfs_intent *in = &op->lane->intent;

	daxfs_store(&in->a[0], a0);
	daxfs_store(&in->a[1], a1);
	daxfs_store(&in->a[2], a2);
	daxfs_store(&in->a[3], a3);
	if (code == DAXFS_INTENT_FILE_WRITE) {
		/* no page being published (a[5]), no redo record yet
		 * (a[6]): an older intent's words must not be taken for
		 * either; a[4] counts only while a[5] is set */
		daxfs_store(&in->a[DAXFS_WREC_PAGE], 0);
		daxfs_store(&in->a[DAXFS_REDO_WORD], 0);
	}
	daxfs_store(&in->op, code);
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(in, sizeof(*in));
}

/*
 * Our own lane's intent, for a run of plain stores to it under this one
 * look at the fence (nothing but those stores may follow before the
 * last of them: docs/hosts.md "What is left").  NULL with *err 0 when the
 * op has no lane (nothing to record); NULL with -ESTALE once we were
 * declared dead (the lane is recovery's, or a new host's).
 */
static inline struct daxfs_intent *daxfs_intent_own(struct daxfs_op *op,
						    int *err)
{
	*err = 0;
	if (!op->lane)
		return NULL;
	if (daxfs_fenced(op)) {
		*err = -ESTALE;
		return NULL;
	}
	return &op->lane->intent;
}

static inline int daxfs_intent_set(struct daxfs_op *op, u64 code, u64 a0,
				   u64 a1, u64 a2, u64 a3)
{
	int err;

	if (daxfs_intent_own(op, &err))
		daxfs_intent_publish(op, code, a0, a1, a2, a3);
	return err;
}

/* Sets one more argument word (i < 7) of the current intent. */
static inline int daxfs_intent_arg(struct daxfs_op *op, u32 i, u64 v)
{
	if (!op->lane || i >= 7)
		return 0;
	if (daxfs_fenced(op))
		return -ESTALE;
	daxfs_store(&op->lane->intent.a[i], v);
	return 0;
}

static inline void daxfs_intent_clear(struct daxfs_op *op)
{
	if (!op->lane || daxfs_fenced(op))
		return;
	daxfs_store(&op->lane->intent.op, DAXFS_INTENT_NONE);
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(&op->lane->intent, sizeof(op->lane->intent));
}

/* ---- allocator internals (core/alloc.c) ---- */

/* Pushes the pre-linked chain first..last (first word = next) onto the
 * free stack of class; no accounting. */
void daxfs_free_push_chain(struct daxfs_fs *fs, unsigned int class, u64 first,
			   u64 last);
/* Takes class's whole free stack with one CAS (head -> empty, tag + 1);
 * returns its first object, 0 when it was empty. */
u64 daxfs_free_take_all(struct daxfs_fs *fs, unsigned int class);
bool daxfs_free_put_back(struct daxfs_fs *fs, unsigned int class, u64 first);
/* A dead lane's HOLD_CHAIN word named a compaction chain (class + 1 in
 * the low bits): pushes it back; false for a limbo chain (core/compact.c). */
bool daxfs_compact_recover(struct daxfs_fs *fs, u64 rec);
bool daxfs_compact_resume(struct daxfs_fs *fs, struct daxfs_lane *lane);
/* Returns the reserved, never-allocated pages [start, end) to the page
 * stack (host batch remainders); no accounting. */
void daxfs_pages_release(struct daxfs_fs *fs, u64 start, u64 end);
/* n contiguous pages that were in use (used_bytes falls) back as extents */
void daxfs_pages_free(struct daxfs_fs *fs, u64 start, u64 n);
/* Frees one accounted object (validates, pushes, used_bytes -= size). */
void daxfs_free_obj(struct daxfs_fs *fs, u64 off, unsigned int class);
/* A page for a limbo batch: may use the limbo reserve; accounted in
 * used_bytes like any page; 0 when the pool is really empty. */
u64 daxfs_alloc_limbo_page(struct daxfs_op *op);
/* A 2 MiB aligned run of 512 pages named in op's hold, or 0 (alloc.c). */
u64 daxfs_alloc_run_held(struct daxfs_op *op);
/* Gives back a run nobody can reach (neither published nor named). */
void daxfs_run_free(struct daxfs_op *op, u64 run);
u64 daxfs_alloc_open_page(struct daxfs_op *op);
/* daxfs_reclaim_all that also frees the eligible limbo on other live
 * hosts' chains (the -ENOSPC wait, core/space.c) */
void daxfs_reclaim_for_space(struct daxfs_fs *fs);
/* daxfs_reclaim_all that seals every open batch, however young (leave:
 * a batch left open in a lane that goes FREE would be lost). */
void daxfs_reclaim_leaving(struct daxfs_fs *fs);
/* Current size of the limbo reserve in pages (scans the host table). */
u64 daxfs_reserve_pages(struct daxfs_fs *fs);
/* Returns the host's unused batch [alloc_cursor, alloc_end) (leave and
 * recovery of a dead host). */
void daxfs_host_batch_return(struct daxfs_fs *fs, u32 slot);
/* Recovery of a dead slot, before its lanes: a cursor a lane locked to
 * take pages into its hold is set past them if the hold names them, else
 * back (docs/alloc.md "Taking pages into the hold"). */
void daxfs_batch_settle(struct daxfs_fs *fs, u32 slot);

/* ---- reclamation internals (core/reclaim.c) ---- */

/* A lane epoch word that does not hold the global epoch g back: no op,
 * an idle lane, or an op announced at g. */
static inline bool daxfs_lane_quiet(u64 e, u64 g)
{
	return !e || e == DAXFS_EPOCH_IDLE || e == g;
}

/* Seals batch off (epoch := global) and pushes it on slot's chain. */
void daxfs_limbo_seal(struct daxfs_fs *fs, u32 slot, u64 batch);
/* Splices a whole chain of sealed batches onto slot's chain. */
void daxfs_limbo_splice(struct daxfs_fs *fs, u32 slot, u64 chain);
/* One attempt to move the global epoch on; true when it moved. */
bool daxfs_epoch_try_advance(struct daxfs_fs *fs);
/* Reclaim at op_end time (lane set IDLE by the caller). */
void daxfs_reclaim_quiet(struct daxfs_op *op);
/* Declares expired hosts dead and recovers them without waiting for
 * recoveries other survivors are running (join, periodic reclaim). */
void daxfs_reap_expired(struct daxfs_fs *fs);

/* Frees what a dead lane holds (DAXFS_LANE_HOLD_*): pages to the free
 * stack, a taken limbo chain onto slot dest's chain (core/reclaim.c). */
void daxfs_hold_recover(struct daxfs_fs *fs, struct daxfs_lane *lane, u32 dest);

/* ---- overlay internals (core/overlay.c) ---- */

/* Rolls back a dead lane's pending overlay insert. */
void daxfs_ov_recover_lane(struct daxfs_fs *fs, const struct daxfs_op *rop,
			   struct daxfs_lane *lane);

#endif /* DAXFS_INTERNAL_H */
