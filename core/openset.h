/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Per-host open sets and the settling of unlinked non-directories
 * (core/openset.c, docs/open-files.md).  The public calls
 * (daxfs_open_get/put, daxfs_inode_release) are in daxfs_core.h.
 */
#ifndef DAXFS_OPENSET_H
#define DAXFS_OPENSET_H

#include "compat.h"
#include "daxfs_core.h"

/* After nlink reached 0 or an entry was removed: fence, and free ino if
 * it is an unclaimed orphan (nlink 0, ORPHAN) that no open set names
 * (one CAS on the mark decides who frees).  Needs op->lane. */
void daxfs_orphan_settle(struct daxfs_op *op, u64 ino);
/* The same for ip, the record whose nlink this op just took to 0: a record
 * is never replaced, only freed, and a freed one stays readable until the
 * op ends (retired, not reused), so it needs no second lookup; if another
 * settler freed it meanwhile its mark is gone and nothing happens. */
void daxfs_orphan_settle_rec(struct daxfs_op *op, struct daxfs_inode *ip);
/* The same in the recovery of a host that died settling ino: also
 * finishes a free whose claim (the ORPHAN mark) was taken already. */
void daxfs_orphan_settle_dead(struct daxfs_op *op, u64 ino);
/* At join, after our slot is ALIVE: every slot with an open set gets its
 * summary bit (sets from before the summary existed); our own stale bit
 * goes (docs/open-files.md, "Summary"). */
void daxfs_open_summary_join(struct daxfs_fs *fs);
/* Entries naming ino in all open sets, every slot read (fsck: exact
 * whatever the summary says); *slot (may be NULL) gets the
 * first holder's slot. */
u32 daxfs_open_holders(struct daxfs_fs *fs, u64 ino, u32 *slot);
/* Recovery / leave: removes and settles every entry of slot's set, then
 * unlinks and retires its pages.  Idempotent; needs op->lane. */
void daxfs_open_drop(struct daxfs_op *op, u32 slot);
/* Recovery of a dead lane whose intent is DAXFS_INTENT_OPEN_PUT. */
void daxfs_open_recover_lane(struct daxfs_op *op, struct daxfs_lane *dead);
/* One entry for ino in our host's set, whatever the inode's state (an
 * unnamed file being made: core/tmpfile.c). */
int daxfs_open_insert(struct daxfs_op *op, u64 ino);
/* Does our host's set name ino? */
bool daxfs_open_held_here(struct daxfs_fs *fs, u64 ino);
/* Recovery of a dead maker of an unnamed file (OPEN_PUT intent with
 * a[0] 0; a[1] its number, a[3] its record), core/tmpfile.c: marks what
 * it does in dead's a[3] first, so that a rerun never frees it twice. */
void daxfs_tmpfile_recover(struct daxfs_op *op, struct daxfs_lane *dead);
/* The unnamed regular file of daxfs_create_held, made in the caller's
 * op in the live directory whose writable record is dp; *ipp its record. */
struct daxfs_inode;
struct daxfs_attr;
int daxfs_tmpfile_in(struct daxfs_op *op, u64 dir, const struct daxfs_inode *dp,
		     u32 mode, u32 uid, u32 gid, u64 *ino,
		     struct daxfs_inode **ipp, struct daxfs_attr *attr);
/* linkat() of an unnamed file we hold open: nlink may go 0 -> 1. */
int daxfs_nlink_revive(struct daxfs_op *op, struct daxfs_inode *ip);
/* Walks slot's set: pg NULL gives the first page; *n counts pages
 * (start at 0); NULL at the end, at a page that fails validation, or
 * after DAXFS_OPEN_MAX_PAGES. */
struct daxfs_open_page *daxfs_open_page_next(struct daxfs_fs *fs, u32 slot,
					     struct daxfs_open_page *pg, u32 *n);

#endif /* DAXFS_OPENSET_H */
