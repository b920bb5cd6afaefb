// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Leaf cursor: a write of many pages resolves the radix path once per leaf
 * (512 blocks) instead of once per page, and publishes each new page with
 * one CAS on the leaf slot it already holds (docs/files.md "Leaf cursor").
 *
 * Why a stale leaf is safe within one op: a node is detached only after
 * every slot of it was sealed (core/radix.c "Drop"), and it is reused only
 * after every host left the epoch it was retired in, which our op holds.
 * So a slot of a leaf we resolved in this op reads either the file's page
 * for that block, a hole, or SEALED (read as a hole), and a CAS 0 -> page
 * on it either lands in a node that is still attached (a later drop seals
 * and retires our page as it would any other) or fails on SEALED, when we
 * insert from the root, which helps the drop along.
 */
#include "internal.h"
#include "inode.h"
#include "file.h"

/* Inlined: the hit (blk inside the cached leaf) is two compares, and
 * as a call it cost a 4 KiB write 33 instructions (bench/ins_op.sh). */
static daxfs_always_inline int leaf_resolve(struct daxfs_fs *fs,
					     struct daxfs_inode *ip,
					     struct daxfs_rcur *lf, u64 blk)
{
	int err;

	if (blk >= lf->lo && blk < lf->hi)
		return 0;
	lf->root = daxfs_load(&ip->root);
	err = daxfs_radix_leaf(fs, &lf->root, blk, &lf->slots, &lf->run,
			       &lf->lo, &lf->hi);
	if (err)
		daxfs_rcur_init(lf);
	return err;
}

int daxfs_rcur_page(struct daxfs_fs *fs, struct daxfs_inode *ip,
		    struct daxfs_rcur *lf, u64 blk, u64 *page)
{
	int err = leaf_resolve(fs, ip, lf, blk);
	u64 v;

	*page = 0;
	if (err || (!lf->slots && !lf->run))
		return err;
	v = daxfs_leaf_word(lf->slots, lf->run, lf->lo, blk);
	if (!daxfs_radix_page(fs, v, &err))
		return err;
	*page = v & ~DAXFS_RADIX_UNWRITTEN;
	return 0;
}

int daxfs_rcur_page_w(struct daxfs_op *op, struct daxfs_inode *ip,
		      struct daxfs_rcur *lf, u64 blk, u64 *page)
{
	struct daxfs_fs *fs = op->fs;
	int err = leaf_resolve(fs, ip, lf, blk);
	u64 *slot, v;

	*page = 0;
	if (err)
		return err;
	if (lf->run) {
		/* a run's pages are never unwritten */
		*page = daxfs_leaf_word(NULL, lf->run, lf->lo, blk);
		return 0;
	}
	if (!lf->slots)
		return 0;
	slot = (u64 *)&lf->slots[blk - lf->lo];
	v = daxfs_load(slot);
	if (!daxfs_radix_page(fs, v, &err))
		return err;
	*page = v & ~DAXFS_RADIX_UNWRITTEN;
	if (!(v & DAXFS_RADIX_UNWRITTEN))
		return 0;
	/* a leaf slot of this op's tree: the CAS clears it in place (a
	 * failure means the slot moved: look again from the root) */
	if (slot != &lf->root) {
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_cas(slot, &v, *page)) {
			daxfs_pflush(fs, slot, 8);
			if (fs->flags & DAXFS_FS_PERSISTENT)
				daxfs_drain();
			return 0;
		}
	}
	/* a direct root (our snapshot word is no region word): through the
	 * root, and the snapshot is reloaded on the next use */
	daxfs_rcur_init(lf);
	return daxfs_radix_written(op, ip, blk, *page);
}

int daxfs_rcur_prepare(struct daxfs_op *op, struct daxfs_inode *ip,
		       struct daxfs_rcur *lf, u64 blk, u64 *page)
{
	struct daxfs_fs *fs = op->fs;
	int err = leaf_resolve(fs, ip, lf, blk);
	u64 v;

	*page = 0;
	if (err)
		return err;
	v = daxfs_leaf_word(lf->slots, lf->run, lf->lo, blk);
	if (v && v != DAXFS_RADIX_SEALED) {
		if (!daxfs_radix_page(fs, v, &err))
			return err;
		*page = v & ~DAXFS_RADIX_UNWRITTEN;
		return 0;
	}
	/* a leaf slot to take, or block 0 of an empty file (a direct root
	 * needs no node): nothing to make */
	if ((lf->slots && !v) || (!lf->root && !blk))
		return 0;
	/* through the root: the nodes it makes are not in the cursor */
	daxfs_rcur_init(lf);
	return daxfs_radix_prepare(op, ip, blk, page);
}

int daxfs_rcur_insert(struct daxfs_op *op, struct daxfs_inode *ip,
		      struct daxfs_rcur *lf, u64 blk, u64 page, u64 *winner)
{
	int err = leaf_resolve(op->fs, ip, lf, blk);

	if (err)
		return err;
	if (lf->run) {
		/* the block is a page of a run already */
		*winner = daxfs_leaf_word(NULL, lf->run, lf->lo, blk);
		return 0;
	}
	/* a direct root's "slot" is our snapshot word, not the region's */
	if (lf->slots && lf->slots != &lf->root) {
		err = daxfs_radix_publish(op, ip, (u64 *)&lf->slots[blk - lf->lo],
					  page, winner);
		if (err != 1)
			return err;
	}
	/* through the root: it may grow the tree or make the leaf, so the
	 * cached one (or the hole) is out of date */
	daxfs_rcur_init(lf);
	return daxfs_radix_insert(op, ip, blk, page, winner);
}
