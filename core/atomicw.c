// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Atomic reads against atomic writes (strict mode, docs/modes.md).
 *
 * A DAXFS_WRITE_ATOMIC write (core/file.c) closes the file's write gate
 * as a shrink does, stores, and opens the gate again, moving the gate's
 * sequence just before (core/filegate.c; format version 7).
 * daxfs_read_atomic is the reader of that seqlock: sequence, gate open,
 * read, full fence, gate still open and sequence unchanged; else wait
 * for the gate and read again.  A reader that saw one byte of such a
 * write saw its gate CAS (before that byte), so its second look finds
 * the gate closed, or open again with the sequence moved: it reads
 * again.  Only closed gates (strict writes, shrinks, punches) move the
 * sequence, so plain writes never make an atomic read start over: the
 * kernel and FUSE read this way always (docs/modes.md).
 *
 * The sequence is 64 bits and only grows: no wrap.  Nothing is stored.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "file.h"
#include "filegate.h"
#include "file-int.h"

/* Read once more (not an errno the read paths return). */
#define READ_AGAIN	DAXFS_GATE_RETRY

/* What a peek loads (daxfs_attr_peek), from the inode the read found: a
 * base inode not copied up shows change 0, as its attributes do. */
static void read_peek(const struct daxfs_iref *ref, struct daxfs_peek *pk)
{
	const struct daxfs_base_inode *bip = ref->bip;

	if (ref->ip) {
		daxfs_record_peek(ref->ip, pk);
		return;
	}
	pk->mode = bip->mode;
	pk->nlink = bip->nlink;
	pk->size = bip->size;
	pk->change = 0;
}

/*
 * daxfs_ref_read of an overlay record ip.  A regular file with no base
 * image (daxfs_record_own_file) reads its own size and root inline,
 * in the order daxfs_file_view loads them, as the lane-free read does
 * (core/optread.c): a call and the base's branches less a read.
 */
static s64 read_record(struct daxfs_op *op, const struct daxfs_iref *ref,
		       struct daxfs_inode *ip, u64 off, u64 len,
		       daxfs_read_actor_t actor, void *ctx)
{
	struct fview v;

	if (!daxfs_record_own_file(ip))
		return daxfs_ref_read(op, ref, off, len, actor, ctx);
	if (daxfs_view_own(ip, &v))
		return -EUCLEAN;
	return daxfs_view_read(op, op->fs, &v, off, len, actor, ctx);
}

static s64 read_once(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		     u64 off, u64 len, daxfs_read_actor_t actor, void *ctx,
		     struct daxfs_peek *pk)
{
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	u64 seq;
	s64 ret;
	int err;

	err = daxfs_inode_get_fc(op, ino, fc, &ref);
	if (err)
		return err;
	if (pk)
		read_peek(&ref, pk);
	ip = ref.ip;
	/* a pristine base inode: a write copies it up first into a new
	 * record, and this read sees only the base image, all of it old */
	if (!ip)
		return daxfs_ref_read(op, &ref, off, len, actor, ctx);
	seq = daxfs_gate_seq(ip);
	if (daxfs_gate_peek(ip)) {
		err = daxfs_gate_wait_open(op, ip);
		return err ? err : READ_AGAIN;
	}
	ret = read_record(op, &ref, ip, off, len, actor, ctx);
	/* the data loads before the second look */
	daxfs_fence();
	if (daxfs_gate_peek(ip) || daxfs_gate_seq(ip) != seq)
		return READ_AGAIN;
	return ret;
}

s64 daxfs_read_atomic_fc(struct daxfs_fs *fs, u64 ino,
			 struct daxfs_fcache *fc, u64 off, u64 len,
			 daxfs_read_actor_t actor, void (*restart)(void *ctx),
			 void *ctx)
{
	return daxfs_read_atomic_peek(fs, ino, fc, off, len, actor, restart,
				      ctx, NULL);
}

s64 daxfs_read_atomic_peek(struct daxfs_fs *fs, u64 ino,
			   struct daxfs_fcache *fc, u64 off, u64 len,
			   daxfs_read_actor_t actor,
			   void (*restart)(void *ctx), void *ctx,
			   struct daxfs_peek *pk)
{
	struct daxfs_op op;
	u32 round;
	s64 ret;
	int err;

	for (round = 0;; round++) {
		err = daxfs_op_begin(fs, &op);
		if (err)
			return err;
		ret = read_once(&op, ino, fc, off, len, actor, ctx, pk);
		daxfs_op_end_read(&op);
		if (ret != READ_AGAIN)
			return ret;
		/* outside the op: a long writer holds no epoch back */
		if (daxfs_gate_retry_pause(round))
			return -EINTR;
		restart(ctx);
	}
}

s64 daxfs_read_atomic(struct daxfs_fs *fs, u64 ino, u64 off, u64 len,
		      daxfs_read_actor_t actor, void (*restart)(void *ctx),
		      void *ctx)
{
	return daxfs_read_atomic_fc(fs, ino, NULL, off, len, actor, restart,
				    ctx);
}
