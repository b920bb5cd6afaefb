// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Lane-free reads (docs/files.md "Lane-free reads").
 *
 * A read normally runs in an op: its lane's epoch keeps every tree node
 * and page it finds from being reused until it ends.  This read takes no
 * lane.  It reads as a seqlock reader does, with the file's write gate
 * (core/filegate.c) as the lock: gate sequence, gate open, the read
 * proper (walk, copy), a read fence, gate still open, sequence unchanged,
 * record still published.  It holds because nothing is cut out of a
 * file's tree except
 *   - under a closed gate (a shrink, a punch, a zeroing), whose opening
 *     moves the sequence, or
 *   - after the sequence moved (daxfs_gate_seq_move: a writer finishing a
 *     dead truncater's drop, the final drop of the file),
 * and what is cut is reused only after the op that cut it ended.  So a
 * reader that loaded one byte of reused memory (a node or page that went
 * to another file) sees the sequence moved or the gate closed at its
 * second look (the cut came before the reuse, the reuse before that
 * byte), and says -EAGAIN: the caller reads again in an op.  A reader
 * that passes the second look read only the file's own nodes and pages,
 * as a read in an op at the moment of its first look would have.
 *
 * Until that second look, what the actor was handed may be anything in
 * the region, another file's bytes included: only for a front end whose
 * process maps the whole region anyway (libdaxfs).  daxfs.ko must not
 * copy this way to a user's buffer.  Only overlay files with no base
 * image (nothing to pin in a page cache) read this way.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "file.h"
#include "filegate.h"
#include "file-int.h"

s64 daxfs_read_optimistic(struct daxfs_fs *fs, u64 ino,
			  const struct daxfs_fcache *fc, u64 off, u64 len,
			  daxfs_read_actor_t actor, void *ctx)
{
	struct daxfs_fc_look lk;
	struct daxfs_inode *ip;
	struct fview v;
	u64 seq;
	s64 ret;

	if (daxfs_fc_look(fs, ino, fc, &lk))
		return -EAGAIN;
	ip = lk.ip;
	/* the op's read gives what differs: -EISDIR, a base image */
	if (!daxfs_record_own_file(ip))
		return -EAGAIN;
	seq = daxfs_gate_seq(ip);
	if (daxfs_gate_peek(ip))
		return -EAGAIN;
	/* no base image (the flags above): the record's own size and root;
	 * any error may be reused memory's: the op's read tells */
	if (daxfs_view_own(ip, &v))
		return -EAGAIN;
#ifdef DAXFS_BUG_OPTREAD_NO_SECOND_LOOK
	/* re-introduced defect (docs/testing.md): trusts the first look */
	ret = daxfs_view_read(NULL, fs, &v, off, len, actor, ctx);
	return ret < 0 ? -EAGAIN : ret;
#endif
	ret = daxfs_view_read(NULL, fs, &v, off, len, actor, ctx);
	if (ret < 0)
		return -EAGAIN;
	/* the data loads before the second look */
	daxfs_rmb();
	if (daxfs_gate_peek(ip) || daxfs_gate_seq(ip) != seq ||
	    !daxfs_fc_look_holds(fs, &lk))
		return -EAGAIN;
	return ret;
}
