// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The hash overlay: a global open-addressing table of typed 64-bit keys to
 * non-zero 64-bit values (e.g. INODE(ino) -> inode record offset).
 * A key is published through a claimed state (key | PENDING) recorded in
 * the inserting lane's intent, so a dead inserter's claim can be rolled
 * back.  Protocol, invariants and crash story: docs/overlay.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#define INSERT_ATTEMPTS		256u
#define WAIT_SPINS		256u
#define WAIT_YIELDS		200000u
#define WAIT_OWNER_EVERY	1024u

static bool key_ok(u64 key)
{
	return key && key != DAXFS_KEY_TOMB && !(key & DAXFS_KEY_PENDING);
}

static u64 ov_home(struct daxfs_fs *fs, u64 key)
{
	return daxfs_mix64(key) & (fs->nr_buckets - 1);
}

static u64 ov_idx(struct daxfs_fs *fs, u64 home, u32 i)
{
	return (home + i) & (fs->nr_buckets - 1);
}

static void ov_flush(struct daxfs_fs *fs, struct daxfs_bucket *b)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(b, sizeof(*b));
}

/* The published bucket of key (K == key, V != 0), or NULL. */
static struct daxfs_bucket *ov_find(struct daxfs_fs *fs, u64 key, u64 *value)
{
	u64 home = ov_home(fs, key), k, v;
	struct daxfs_bucket *b;
	u32 i;

	for (i = 0; i < fs->sb.probe_window; i++) {
		b = &fs->buckets[ov_idx(fs, home, i)];
		k = daxfs_load(&b->key);
		if (k == DAXFS_KEY_EMPTY)
			break;		/* never re-emptied: key is not further */
		if (k != key)
			continue;
		v = daxfs_load(&b->value);
		/* the value belongs to key only if K did not change around it */
		if (v && daxfs_load(&b->key) == key) {
			*value = v;
			return b;
		}
	}
	return NULL;
}

int daxfs_ov_lookup(struct daxfs_op *op, u64 key, u64 *value)
{
	if (!key_ok(key))
		return -EINVAL;
	return ov_find(op->fs, key, value) ? 0 : -ENOENT;
}

int daxfs_ov_lookup_at(struct daxfs_op *op, u64 key, u64 *value, u64 *idx)
{
	struct daxfs_bucket *b;

	if (!key_ok(key))
		return -EINVAL;
	b = ov_find(op->fs, key, value);
	if (!b)
		return -ENOENT;
	*idx = (u64)(b - op->fs->buckets);
	return 0;
}

/* Nested-safe intent: the lane's intent record when it is free, else the
 * lane's private OV words (an insert inside e.g. a rename keeps the
 * rename intent intact).  Returns which one was used. */
static int ov_intent_set(struct daxfs_op *op, u64 idx, u64 key)
{
	struct daxfs_lane *lane = op->lane;

	if (daxfs_load(&lane->intent.op) == DAXFS_INTENT_NONE) {
		daxfs_store(&lane->intent.a[0], idx);
		daxfs_store(&lane->intent.a[1], key);
		daxfs_store(&lane->intent.op, DAXFS_INTENT_OV_INSERT);
		if (op->fs->flags & DAXFS_FS_PERSISTENT)
			daxfs_flush(&lane->intent, sizeof(lane->intent));
		return 1;
	}
	daxfs_store(&lane->pad[DAXFS_LANE_OV_KEY], key);
	daxfs_store(&lane->pad[DAXFS_LANE_OV_BUCKET], idx + 1);
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(lane, 64);
	return 2;
}

static void ov_intent_clear(struct daxfs_op *op, int how)
{
	if (daxfs_fenced(op))
		return;		/* the lane is recovery's now */
	if (how == 1)
		daxfs_store(&op->lane->intent.op, DAXFS_INTENT_NONE);
	else
		daxfs_store(&op->lane->pad[DAXFS_LANE_OV_BUCKET], 0);
}

/*
 * Our claim token: the value word of a bucket we hold as key|PENDING.
 * Publication is one 16-byte CAS from {key|PENDING, token} to {key,
 * value}, so it lands only on our own claim: once a recoverer or a waiter
 * has withdrawn it, a re-claim of the same bucket for the same key by
 * another host (same key word) holds another token.  Unique among claims
 * in flight (slot, lane, and the slot's generation for a host declared
 * dead that still runs); bit 63 set, so never a value (values are
 * below 2^63, daxfs_ov_insert).
 */
#define OV_TOKEN	(1ull << 63)

/*
 * The claim token lane's host put in a bucket it claimed: gen, the slot's
 * generation its host joined with (the dead slot's, for a recoverer).
 */
static u64 ov_lane_token(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 u64 gen)
{
	u64 idx = (u64)(lane - fs->lanes);

	return OV_TOKEN | ((gen << 24) & ~OV_TOKEN) |
	       ((idx % DAXFS_LANES) << 16) | (idx / DAXFS_LANES);
}

static u64 ov_token(struct daxfs_op *op)
{
	return ov_lane_token(op->fs, op->lane, op->fs->host_gen);
}

static void tomb_if_pending(struct daxfs_fs *fs, u64 idx, u64 key)
{
	u64 exp = key | DAXFS_KEY_PENDING;

	if (idx >= fs->nr_buckets || !key_ok(key))
		return;
	daxfs_cas(&fs->buckets[idx].key, &exp, DAXFS_KEY_TOMB);
}

/* Withdraws the claim of key in bucket idx if it is still the one token
 * names: never another host's claim of the same key in the same bucket
 * (one that joined the slot since has another generation) */
static void tomb_claim(struct daxfs_fs *fs, u64 idx, u64 key, u64 token)
{
	u64 exp[2] = { key | DAXFS_KEY_PENDING, token };

	if (idx >= fs->nr_buckets || !key_ok(key))
		return;
	daxfs_cas16(&fs->buckets[idx].key, exp, DAXFS_KEY_TOMB, token);
}

/*
 * A recovery op overtaken (docs/recovery.md "Lane recoveries of an
 * overtaken recoverer"): the lane may be a new host's by now.  rop NULL:
 * our own host leaving, which nobody else recovers.
 */
static bool ov_lost(const struct daxfs_op *rop)
{
	return rop && daxfs_recovery_lost(rop);
}

void daxfs_ov_recover_lane(struct daxfs_fs *fs, const struct daxfs_op *rop,
			   struct daxfs_lane *lane)
{
	u64 gen = rop && rop->rhost ? daxfs_host_gen(rop->rclaim[0]) :
		  fs->host_gen;
	u64 token = ov_lane_token(fs, lane, gen), op, idx, key, nested;

	if (ov_lost(rop))
		return;
	op = daxfs_load(&lane->intent.op);
	if (op == DAXFS_INTENT_OV_INSERT) {
		idx = daxfs_load(&lane->intent.a[0]);
		key = daxfs_load(&lane->intent.a[1]);
		daxfs_race_point("ov.recover_read", lane);
		if (ov_lost(rop))
			return;
		tomb_claim(fs, idx, key, token);
		/* from the value read: not over a later intent of the lane */
		if (ov_lost(rop) || !daxfs_cas(&lane->intent.op, &op,
					      DAXFS_INTENT_NONE))
			return;
	}
	nested = daxfs_load(&lane->pad[DAXFS_LANE_OV_BUCKET]);
	if (nested) {
		key = daxfs_load(&lane->pad[DAXFS_LANE_OV_KEY]);
		if (ov_lost(rop))
			return;
		tomb_claim(fs, nested - 1, key, token);
		if (ov_lost(rop))
			return;
		daxfs_cas(&lane->pad[DAXFS_LANE_OV_BUCKET], &nested, 0);
	}
}

struct ov_pending {
	u64 idx, key;
};

/* Does lane record a pending insert of key in bucket idx? */
static bool ov_lane_pending(struct daxfs_lane *lane, const void *arg)
{
	const struct ov_pending *p = arg;

	if (daxfs_load(&lane->intent.op) == DAXFS_INTENT_OV_INSERT &&
	    daxfs_load(&lane->intent.a[0]) == p->idx &&
	    daxfs_load(&lane->intent.a[1]) == p->key)
		return true;
	return daxfs_load(&lane->pad[DAXFS_LANE_OV_BUCKET]) == p->idx + 1 &&
	       daxfs_load(&lane->pad[DAXFS_LANE_OV_KEY]) == p->key;
}

/* Host slot whose lane records a pending insert of key in bucket idx. */
static int ov_owner(struct daxfs_fs *fs, u64 idx, u64 key)
{
	struct ov_pending p = { idx, key };
	u32 slot = daxfs_lane_owner(fs, ov_lane_pending, &p);

	return slot == DAXFS_NO_HOST ? -1 : (int)slot;
}

/*
 * Waits for another inserter's claim on bucket idx to resolve (published
 * or withdrawn).  A live inserter resolves in well under a microsecond;
 * a dead one is found through its lane intent and recovered.  Returns the
 * key word found afterwards, or key | PENDING when it gave up: after
 * WAIT_YIELDS yields or two leases of our own clock, whichever comes
 * first (a yield can take a whole time slice on a busy machine).
 */
static u64 ov_wait_pending(struct daxfs_op *op, u64 idx, u64 key)
{
	struct daxfs_fs *fs = op->fs;
	u64 *kw = &fs->buckets[idx].key, pend = key | DAXFS_KEY_PENDING, k;
	s64 until = daxfs_mono_ns() + 2000000LL * fs->lease_ms;
	int owner, orphan = 0;
	u32 i;

	for (i = 0; i < WAIT_SPINS; i++) {
		k = daxfs_load(kw);
		if (k != pend)
			return k;
		daxfs_cpu_relax();
	}
	for (i = 1; i <= WAIT_YIELDS; i++) {
		daxfs_yield();
		k = daxfs_load(kw);
		if (k != pend)
			return k;
		if (i % WAIT_OWNER_EVERY)
			continue;
		if (daxfs_mono_ns() > until)
			break;
		owner = ov_owner(fs, idx, key);
		if (owner >= 0) {
			orphan = 0;
			/* no wait inside: this loop looks again */
			if ((u32)owner != fs->host)
				daxfs_host_try_dead(op, (u32)owner);
		} else if (++orphan >= 2) {
			/* no lane claims it (torn state): withdraw it */
			tomb_if_pending(fs, idx, key);
		}
	}
	return daxfs_load(kw);
}

/*
 * After our claim at probe distance d: lose to any published copy, and to
 * a pending claim at a smaller distance; wait for pending claims at larger
 * distances (they lose to us if they saw us, or publish first).  Waits only
 * go towards larger distances, so they cannot form a cycle.
 * Returns 0 (we may publish), 1 (lost, retry), -EEXIST (published copy),
 * -EAGAIN (a claim at a larger distance stayed pending for two leases).
 */
static int ov_rescan(struct daxfs_op *op, u64 home, u32 d, u64 key)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_bucket *b;
	u64 k, idx;
	u32 i;

	for (i = 0; i < fs->sb.probe_window; i++) {
		if (i == d)
			continue;
		idx = ov_idx(fs, home, i);
		b = &fs->buckets[idx];
		k = daxfs_load(&b->key);
		if (k == DAXFS_KEY_EMPTY)
			break;
		if (k == (key | DAXFS_KEY_PENDING)) {
			if (i < d)
				return 1;
			k = ov_wait_pending(op, idx, key);
			if (k == (key | DAXFS_KEY_PENDING))
				return -EAGAIN;	/* stuck for two leases */
		}
		if (k == key && daxfs_load(&b->value))
			return -EEXIST;
	}
	return 0;
}

/*
 * Publishes (key, value) in b if b still holds our claim.  Without the
 * token check, a claimer stopped after its last fence check would store
 * its value over a bucket that, withdrawn meanwhile, another host has
 * claimed and published (docs/overlay.md, invariant 3).
 */
static bool ov_publish(struct daxfs_bucket *b, u64 key, u64 token, u64 value)
{
#ifdef DAXFS_BUG_OVERLAY_PLAIN_VALUE
	u64 k = key | DAXFS_KEY_PENDING;

	daxfs_store(&b->value, value);
	return daxfs_cas(&b->key, &k, key);
#else
	u64 exp[2] = { key | DAXFS_KEY_PENDING, token };

	return daxfs_cas16(&b->key, exp, key, value);
#endif
}

int daxfs_ov_insert(struct daxfs_op *op, u64 key, u64 value)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_bucket *b;
	u64 home, k, fk = 0, idx, token, exp[2];
	u32 attempt, i, W = fs->sb.probe_window;
	int fi, how, r;
	bool again;

	if (!key_ok(key) || !value || (value & OV_TOKEN))
		return -EINVAL;	/* such words are claim tokens */
	if (!op->lane)
		return -EROFS;
	home = ov_home(fs, key);
	token = ov_token(op);
	for (attempt = 0; attempt < INSERT_ATTEMPTS; attempt++) {
		fi = -1;
		again = false;
		for (i = 0; i < W && !again; i++) {
			idx = ov_idx(fs, home, i);
			b = &fs->buckets[idx];
			k = daxfs_load(&b->key);
			if (k == DAXFS_KEY_EMPTY || k == DAXFS_KEY_TOMB) {
				if (fi < 0) {
					fi = (int)i;
					fk = k;
				}
				if (k == DAXFS_KEY_EMPTY)
					break;
			} else if (k == key) {
				if (daxfs_load(&b->value))
					return -EEXIST;
				/* a delete half done: only its deleter may tomb
				 * it (a helper's CAS key -> TOMB could hit a
				 * later re-insert of the same key: ABA) */
			} else if (k == (key | DAXFS_KEY_PENDING)) {
				k = ov_wait_pending(op, idx, key);
				if (k == key && daxfs_load(&b->value))
					return -EEXIST;
				/* still pending after two leases: a claim
				 * nobody resolves (a peer keeps its owner's
				 * recovery going); waiting again per attempt
				 * would make hundreds of leases */
				if (k == (key | DAXFS_KEY_PENDING))
					return -EAGAIN;
				again = true;
			}
		}
		if (again)
			continue;
		if (fi < 0)
			return -ENOSPC;	/* probe window full */

		idx = ov_idx(fs, home, (u32)fi);
		b = &fs->buckets[idx];
		if (daxfs_fenced(op))
			return -ESTALE;
		how = ov_intent_set(op, idx, key);
		if (daxfs_fenced(op))
			return -ESTALE;	/* recovery reads a stale intent */
		/* K and V of a free bucket change only together (a claim),
		 * so a V read apart from K fails the CAS at worst */
		exp[0] = fk;
		exp[1] = daxfs_load(&b->value);
		if (!daxfs_cas16(&b->key, exp, key | DAXFS_KEY_PENDING, token)) {
			ov_intent_clear(op, how);
			daxfs_faa(daxfs_state_word(fs, stat_cas_fail), 1);
			continue;
		}
		daxfs_crash_point("ov_insert.claimed");
		daxfs_race_point("ov_insert.claimed", op->lane);
		daxfs_fence();
		r = ov_rescan(op, home, (u32)fi, key);
		if (r) {
			k = key | DAXFS_KEY_PENDING;
			if (daxfs_fenced(op))
				return -ESTALE;
			daxfs_cas(&b->key, &k, DAXFS_KEY_TOMB);
			ov_intent_clear(op, how);
			if (r < 0)
				return r;
			continue;
		}
		/* fenced: recovery TOMBs (or TOMBed) the pending claim */
		if (daxfs_fenced(op))
			return -ESTALE;
		daxfs_crash_point("ov_insert.publish");
		if (!ov_publish(b, key, token, value)) {
			/* withdrawn (by a recoverer that took us or the
			 * bucket's previous claimer for dead, or by a waiter)
			 * and maybe re-claimed: not ours any more */
			ov_intent_clear(op, how);
			continue;
		}
		ov_flush(fs, b);
		daxfs_crash_point("ov_insert.value");
		ov_intent_clear(op, how);
		daxfs_faa(daxfs_state_word(fs, stat_inserts), 1);
		return 0;
	}
	return -EAGAIN;
}

int daxfs_ov_replace(struct daxfs_op *op, u64 key, u64 old, u64 new_value)
{
	struct daxfs_bucket *b;
	u64 v;

	if (!key_ok(key) || !old || !new_value || (new_value & OV_TOKEN))
		return -EINVAL;
	if (!op->lane)
		return -EROFS;
	b = ov_find(op->fs, key, &v);
	if (!b)
		return -ENOENT;
	if (v != old)
		return -EAGAIN;
	if (daxfs_fenced(op))
		return -ESTALE;
	if (!daxfs_cas(&b->value, &old, new_value))
		return old ? -EAGAIN : -ENOENT;
	ov_flush(op->fs, b);
	return 0;
}

int daxfs_ov_delete(struct daxfs_op *op, u64 key, u64 old)
{
	struct daxfs_bucket *b;
	u64 v, exp[2];

	if (!key_ok(key) || !old)
		return -EINVAL;
	if (!op->lane)
		return -EROFS;
	b = ov_find(op->fs, key, &v);
	if (!b)
		return -ENOENT;
	if (v != old)
		return -EAGAIN;
	if (daxfs_fenced(op))
		return -ESTALE;
	/* {key, old} -> {TOMB, 0} in one 16-byte CAS, the linearization
	 * point: no bucket is ever half deleted.  (A CAS V old -> 0 then K
	 * key -> TOMB left one to fsck when the deleter died between the
	 * two: docs/overlay.md "Crash story".) */
	exp[0] = key;
	exp[1] = old;
	if (!daxfs_cas16(&b->key, exp, DAXFS_KEY_TOMB, 0))
		return exp[0] == key && exp[1] ? -EAGAIN : -ENOENT;
	daxfs_faa(daxfs_state_word(op->fs, stat_inserts), (u64)-1);
	ov_flush(op->fs, b);
	return 0;
}
