/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The write gate of a regular file (docs/files.md "Append versus
 * truncate"): a shrink excludes every write of that file, on every host.
 * Writes share the gate among themselves; a shrink closes it, waits for
 * the writes in flight (named in their lanes' FILE_WRITE intents), does
 * its work alone and opens it again.  A dead holder on either side is
 * recovered from its lane's intent.
 */
#ifndef DAXFS_FILEGATE_H
#define DAXFS_FILEGATE_H

#include "compat.h"
#include "daxfs_core.h"

/*
 * Returned by daxfs_gate_enter and daxfs_gate_close when a live host's
 * shrink kept the gate closed for GATE_ROUNDS_IN_OP rounds: the caller
 * ends its op and starts over (daxfs_gate_retry_pause in between).
 * Waiting inside the op would keep its epoch announced, and a file
 * truncated over and over would then hold back reclamation on every
 * host -- including of the pages its own shrinks free: -ENOSPC.
 */
#define DAXFS_GATE_RETRY	(-EINPROGRESS)

/* Between two tries of an op that met a closed gate (no op open): a
 * pause; true when the task must stop (a fatal signal in the kernel). */
bool daxfs_gate_retry_pause(u32 round);

/* Runs fn(op, arg) in an op of its own, and again (after a pause) while
 * it returns DAXFS_GATE_RETRY: it did nothing then.  -EINTR on a stop. */
int daxfs_gate_op(struct daxfs_fs *fs, int (*fn)(struct daxfs_op *, void *),
		  void *arg);

/*
 * A write of [off, end) to file ino is about to store: records it in the
 * lane (FILE_WRITE intent, a[3] = 0) and passes the gate, waiting a
 * little while a shrink holds it.  0, -ESTALE (fenced), -EINTR (fatal
 * signal) or DAXFS_GATE_RETRY.  The caller clears the intent
 * (daxfs_intent_clear) when the write is done.
 */
int daxfs_gate_enter(struct daxfs_op *op, struct daxfs_inode *ip, u64 ino,
		     u64 off, u64 end);

/*
 * A shrink of file ino: records it in the lane (FILE_WRITE intent with an
 * empty range, a[3] = our claim word), closes the gate and waits until no
 * write of the file is in flight.  0, or -ESTALE / -EINTR / -EAGAIN /
 * DAXFS_GATE_RETRY (another shrink holds it) with the gate not held and
 * the intent cleared.
 */
int daxfs_gate_close(struct daxfs_op *op, struct daxfs_inode *ip, u64 ino);

/* Opens the gate closed by daxfs_gate_close and clears the intent. */
void daxfs_gate_open(struct daxfs_op *op, struct daxfs_inode *ip);

/* Recovery of a dead shrinker (its FILE_WRITE intent's a[3] = claim):
 * opens the gate if that claim still holds it. */
void daxfs_gate_recover(struct daxfs_fs *fs, struct daxfs_inode *ip,
			u64 claim);

/* A regular file has no parent pointer: its inode lends that word to
 * the gate (format version 4). */
static inline u64 *daxfs_gate_word(struct daxfs_inode *ip)
{
	return &ip->parent;
}

/*
 * The gate's sequence (format version 7: a regular file's rdev word,
 * unused since version 4): moves by one before every opening of a closed
 * gate, so an atomic reader (core/atomicw.c) that saw the gate open twice
 * knows whether it was closed and opened in between.  64 bits, only
 * grows: no wrap.  Any value is valid.
 */
static inline u64 *daxfs_gate_seq_word(struct daxfs_inode *ip)
{
	return &ip->rdev;
}

/* For atomic and lane-free readers (core/atomicw.c, core/optread.c): the
 * gate word now, 0 when open, and the gate's sequence.  Inline: a
 * lane-free read loads each twice (a call cost it 4 instructions each). */
static inline u64 daxfs_gate_peek(struct daxfs_inode *ip)
{
	return daxfs_load(daxfs_gate_word(ip));
}

static inline u64 daxfs_gate_seq(struct daxfs_inode *ip)
{
	return daxfs_load(daxfs_gate_seq_word(ip));
}

/* A wait until the gate is open (clearing a gone holder's word), bounded
 * as a write's: 0, -ESTALE, -EINTR or DAXFS_GATE_RETRY. */
/* Moves the sequence with the gate open: before a drop that cuts tree
 * nodes or pages out of the file with no closed gate of its own (a
 * writer finishing a dead truncater's drop, the final drop), so that a
 * lane-free reader (core/optread.c) that walked into them reads again. */
void daxfs_gate_seq_move(struct daxfs_inode *ip);
/* Persistent media: writes the gate word back (not drained). */
void daxfs_gate_persist(struct daxfs_fs *fs, struct daxfs_inode *ip);
int daxfs_gate_wait_open(struct daxfs_op *op, struct daxfs_inode *ip);

#endif /* DAXFS_FILEGATE_H */
