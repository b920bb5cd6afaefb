// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The write gate of a regular file (docs/files.md "Append versus
 * truncate").  A regular file has no parent pointer, so its inode lends
 * that word to the gate (format version 4):
 *
 *   0          open: writes pass;
 *   claim word closed by the shrink of that host (daxfs_claim_word:
 *              slot and generation, so a dead holder can be told).
 *
 * A write names itself in its lane (FILE_WRITE intent: ino, range,
 * a[3] = 0), then a full fence, then loads the gate; a shrink CASes the
 * gate 0 -> its claim, then a full fence, then reads every lane.  Either
 * the write sees the gate closed (it withdraws its intent and waits), or
 * the shrink sees the intent (it waits until the write is done): no write
 * stores while a shrink works, so every outcome is a serial one.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "filegate.h"

/* Opens the gate if it is still cur: the sequence first, then the CAS. */
static bool gate_reopen(struct daxfs_inode *ip, u64 cur)
{
	if (daxfs_load(daxfs_gate_word(ip)) != cur)
		return false;
	daxfs_faa(daxfs_gate_seq_word(ip), 1);
	return daxfs_cas(daxfs_gate_word(ip), &cur, 0);
}

/* Rounds a write or a shrink waits for another's shrink inside its op. */
#define GATE_ROUNDS_IN_OP	64

/* One step of a wait on a live host; true when the task must stop. */
static bool gate_pause(u32 round)
{
	if (round & 15)
		daxfs_cpu_relax();
	else
		daxfs_yield();
	return daxfs_walk_yield();
}

/*
 * The holder named by claim can never open the gate itself: garbage (no
 * such slot), a slot now free or with another generation, or a host
 * whose lease ran out, which we declare dead and recover (its recovery
 * opens the gate from its intent).  A live holder is waited for.
 */
static bool holder_gone(struct daxfs_op *op, u64 claim)
{
	struct daxfs_fs *fs = op->fs;
	u32 slot = daxfs_claim_slot(claim);
	u64 gen = daxfs_claim_gen(claim), hw;

	if (slot >= fs->sb.max_hosts)
		return true;
	if (daxfs_host_alive(fs, slot, gen))
		return false;
	hw = daxfs_load(&daxfs_host_at(fs, slot)->state);
	if (daxfs_host_gen(hw) != gen ||
	    daxfs_host_st(hw) == DAXFS_HOST_FREE)
		return true;
	return daxfs_host_check_dead(op, slot) == 1;
}

bool daxfs_gate_retry_pause(u32 round)
{
	return gate_pause(round);
}

int daxfs_gate_op(struct daxfs_fs *fs, int (*fn)(struct daxfs_op *, void *),
		  void *arg)
{
	struct daxfs_op op;
	u32 round = 0;
	int err;

	do {
		err = daxfs_op_begin(fs, &op);
		if (err)
			return err;
		err = fn(&op, arg);
		daxfs_op_end(&op);
		if (err == DAXFS_GATE_RETRY && daxfs_gate_retry_pause(round++))
			return -EINTR;
	} while (err == DAXFS_GATE_RETRY);
	return err;
}

/*
 * Waits until the gate is open; take: and closes it with our claim.  A
 * gone holder's word is cleared here (a CAS from the very word: a new
 * holder's stays).  Only its own incarnation writes a claim word, so a
 * word seen gone stays gone: no ABA.  A live holder is waited for only
 * GATE_ROUNDS_IN_OP rounds: then DAXFS_GATE_RETRY (see filegate.h).
 */
static int gate_wait(struct daxfs_op *op, struct daxfs_inode *ip, bool take)
{
	u64 *gw = daxfs_gate_word(ip), mine = daxfs_my_claim(op->fs), cur;
	u32 round;

	for (round = 0;; round++) {
		if (daxfs_fenced(op))
			return -ESTALE;
		cur = daxfs_load(gw);
		if (!cur) {
			if (!take || daxfs_cas(gw, &cur, mine))
				return 0;
			continue;
		}
		if (holder_gone(op, cur)) {
			gate_reopen(ip, cur);
			continue;
		}
		if (round >= GATE_ROUNDS_IN_OP)
			return DAXFS_GATE_RETRY;
		if (gate_pause(round))
			return -EINTR;
	}
}

int daxfs_gate_enter(struct daxfs_op *op, struct daxfs_inode *ip, u64 ino,
		     u64 off, u64 end)
{
	int err;

	for (;;) {
		if (daxfs_intent_set(op, DAXFS_INTENT_FILE_WRITE, ino, off, end,
				     0))
			return -ESTALE;
		/* our intent before our look (the shrink: its gate CAS
		 * before its look at the lanes) */
		daxfs_fence();
		if (!daxfs_load(daxfs_gate_word(ip)))
			return 0;
		daxfs_intent_clear(op);
		err = gate_wait(op, ip, false);
		if (err)
			return err;
	}
}

/* A lane whose op is a write of ino that passed (or is passing) the
 * gate: a FILE_WRITE intent with a[3] = 0, in an op. */
static bool lane_writes(struct daxfs_lane *l, u64 ino)
{
	u64 e = daxfs_load(&l->epoch);

	return e && e != DAXFS_EPOCH_IDLE &&
	       daxfs_load(&l->intent.op) == DAXFS_INTENT_FILE_WRITE &&
	       daxfs_load(&l->intent.a[0]) == ino &&
	       !daxfs_load(&l->intent.a[3]);
}

/*
 * Waits until no write of ino that may have passed the gate is in
 * flight.  A write that starts now sees the gate closed and withdraws,
 * so each lane is waited for once.  A write whose host died is settled
 * by declaring it dead: recovery clears its intent.
 */
static int gate_drain(struct daxfs_op *op, u64 ino)
{
	struct daxfs_fs *fs = op->fs;
	u32 slot, i, round = 0;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		struct daxfs_host *h = daxfs_host_at(fs, slot);

		if (daxfs_host_st(daxfs_load(&h->state)) == DAXFS_HOST_FREE)
			continue;
		for (i = 0; i < DAXFS_LANES; i++) {
			struct daxfs_lane *l = daxfs_lane_at(fs, slot, i);

			while (l != op->lane && lane_writes(l, ino)) {
				u64 hw = daxfs_load(&h->state);

				if (daxfs_fenced(op))
					return -ESTALE;
				if (!daxfs_host_alive(fs, slot,
						      daxfs_host_gen(hw)))
					daxfs_host_check_dead(op, slot);
				if (gate_pause(round++))
					return -EINTR;
			}
		}
	}
	return 0;
}

int daxfs_gate_close(struct daxfs_op *op, struct daxfs_inode *ip, u64 ino)
{
	int err;

	if (daxfs_intent_set(op, DAXFS_INTENT_FILE_WRITE, ino, 0, 0,
			     daxfs_my_claim(op->fs)))
		return -ESTALE;
	err = gate_wait(op, ip, true);
	if (!err) {
		/* our gate CAS before our look at the lanes */
		daxfs_fence();
		err = gate_drain(op, ino);
		if (err)
			daxfs_gate_open(op, ip);
	}
	if (err)
		daxfs_intent_clear(op);
	return err;
}

void daxfs_gate_open(struct daxfs_op *op, struct daxfs_inode *ip)
{
	daxfs_gate_recover(op->fs, ip, daxfs_my_claim(op->fs));
	daxfs_intent_clear(op);
}

void daxfs_gate_recover(struct daxfs_fs *fs, struct daxfs_inode *ip,
			u64 claim)
{
	if (gate_reopen(ip, claim) && (fs->flags & DAXFS_FS_PERSISTENT))
		daxfs_flush(daxfs_gate_word(ip), 8);
}

void daxfs_gate_persist(struct daxfs_fs *fs, struct daxfs_inode *ip)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(daxfs_gate_word(ip), 8);
}

void daxfs_gate_seq_move(struct daxfs_inode *ip)
{
	/* a full barrier: before every store of the drop that follows */
	daxfs_faa(daxfs_gate_seq_word(ip), 1);
}

int daxfs_gate_wait_open(struct daxfs_op *op, struct daxfs_inode *ip)
{
	return gate_wait(op, ip, false);
}
