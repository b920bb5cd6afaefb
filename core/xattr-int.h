/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Extended attributes: what the rest of the core calls (core/xattr.c).
 */
#ifndef DAXFS_XATTR_INT_H
#define DAXFS_XATTR_INT_H

#include "compat.h"
#include "daxfs_core.h"

/* Deletes ip's attribute set and retires it (the inode is being freed:
 * nlink 0 and no longer an orphan). */
void daxfs_xattr_drop(struct daxfs_op *op, struct daxfs_inode *ip);
/* Recovery of lane `lane_idx` of dead slot `slot`: finishes or undoes
 * its DAXFS_INTENT_XATTR and frees the inode claim it held. */
void daxfs_xattr_recover_lane(struct daxfs_op *rop, struct daxfs_lane *lane,
			      u32 slot, u32 lane_idx);

#endif /* DAXFS_XATTR_INT_H */
