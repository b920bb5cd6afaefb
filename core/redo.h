/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Strict overwrites out of place (format version 7, docs/modes.md
 * "Strict overwrites out of place"): the new bytes go to fresh log pages
 * named by a redo record, one 8-byte store in the writer's FILE_WRITE
 * intent commits them, then they are copied in place.  A crash before
 * the commit leaves the file as it was; after it, recovery replays the
 * copy.  So the write is whole or absent after a killed host or a power
 * loss.
 */
#ifndef DAXFS_REDO_H
#define DAXFS_REDO_H

#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "file-int.h"

/*
 * Writes [off, off + len) of the file seen by v, the caller holding its
 * write gate closed (daxfs_gate_close: no other write, append or shrink
 * of the file runs, on any host) with its FILE_WRITE intent in our lane.
 * Returns the bytes written (all of them, or fewer when the source
 * faults: then that prefix, still atomically) or -errno with nothing
 * changed that a reader can see (-ESTALE when fenced: recovery settles).
 */
s64 daxfs_redo_write(struct daxfs_op *op, const struct fview *v, u64 ino,
		     u64 off, u64 len, daxfs_write_actor_t actor, void *ctx);

/*
 * Recovery of a dead writer's FILE_WRITE intent (inside recover_slot,
 * before the lane's held pages are freed): a committed record is
 * replayed into ip (NULL: the file is gone, nothing to replay), then the
 * record and its log pages are freed, except those still in the lane's
 * held run (daxfs_hold_recover frees those).  Idempotent.
 */
void daxfs_redo_recover(struct daxfs_op *op, struct daxfs_lane *lane,
			struct daxfs_inode *ip);

/* fsck: calls fn on every page (records and log pages) of the valid
 * redo record a lane's intent names; the number of pages, or -EUCLEAN
 * when the record does not check out. */
s64 daxfs_redo_each_page(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 void (*fn)(void *ctx, u64 page), void *ctx);

#endif /* DAXFS_REDO_H */
