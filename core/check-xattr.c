// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck of extended attributes (docs/xattr.md "fsck"): every XATTR key
 * names a valid set (bounds, lengths, entries) of an inode that exists
 * and is not dead, whose pieces no other object uses; they are marked
 * in use.  A key that fails is reported and, with repair, dropped (its
 * pieces go back to the free stacks with the space rebuild).  An inode's
 * xattr claim of a host that is not alive is cleared.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "check.h"
#include "xattr-set.h"

void chk_xattr_claim(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u32 cl = daxfs_load32(&ip->xattr_claim);
	u32 slot = (cl & DAXFS_XCLAIM_SLOT_MASK) - 1;
	struct daxfs_host *h;

	if (!cl)
		return;
	if (slot < c->fs->sb.max_hosts) {
		h = &c->fs->hosts[slot];
		if (chk_host_fresh(c, h) &&
		    (daxfs_host_gen(daxfs_load(&h->state)) &
		     DAXFS_XCLAIM_GEN_MASK) == cl >> DAXFS_XCLAIM_GEN_SHIFT)
			return;		/* a change in progress */
	}
	chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
		   DAXFS_CHK_XATTR, "xattr claim of a host that is not alive",
		   ino, 0, cl, 0, c->repair);
	if (c->repair)
		daxfs_store32(&ip->xattr_claim, 0);
}

/* Piece k of the set: pages first, the header last (its class size). */
static void piece(const struct daxfs_xset *xs, u32 k, u64 *off, u64 *len)
{
	if (k < xs->nr_pages) {
		*off = daxfs_xset_page(xs, k);
		*len = DAXFS_BLOCK_SIZE;
	} else {
		*off = xs->off;
		*len = daxfs_class_size(xs->class);
	}
}

/* Entries walk the stream exactly, each valid. */
static const char *chk_entries(const struct daxfs_xset *xs)
{
	struct daxfs_xent e;
	u32 pos = 0, i;

	for (i = 0; i < xs->count; i++) {
		if (pos >= xs->bytes || daxfs_xset_entry(xs, pos, &e))
			return "xattr entry invalid (name or value length)";
		pos += e.size;
	}
	return pos == xs->bytes ? NULL : "xattr entries do not fill the set";
}

/* Marks the set's pieces used; NULL, or why not (nothing marked). */
static const char *chk_mark_set(struct chk *c, const struct daxfs_xset *xs)
{
	u64 off, len;
	u32 k;

	for (k = 0; k <= xs->nr_pages; k++) {
		piece(xs, k, &off, &len);
		if (!off)
			return "xattr set page outside the pool or misaligned";
		if (chk_test_any(c, c->used, off, len))
			return "xattr set shares space with another object";
	}
	for (k = 0; k <= xs->nr_pages; k++) {
		piece(xs, k, &off, &len);
		if (!chk_mark(c, c->used, off, len)) {
			while (k--) {
				piece(xs, k, &off, &len);
				chk_set(c, c->used, off, len, false);
			}
			return "xattr set names one page twice";
		}
	}
	return NULL;
}

/* The inode the set belongs to: published, valid and not dead. */
static const char *chk_owner(struct chk *c, u64 ino)
{
	s64 b = chk_ov_find(c, daxfs_key(DAXFS_KEY_INODE, ino));
	struct daxfs_inode *ip;

	if (b < 0 || !(c->binfo[b] & CHK_I_VALID) ||
	    (c->binfo[b] & CHK_I_DROPPED))
		return "xattr set of an inode that does not exist";
	ip = daxfs_ptr(c->fs, daxfs_load(&c->fs->buckets[b].value),
		       sizeof(*ip), DAXFS_OFF_ALIGN);
	if (!ip || (!daxfs_load32(&ip->nlink) &&
		    !(daxfs_load32(&ip->flags) & DAXFS_IF_ORPHAN)))
		return "xattr set of a freed inode";
	return NULL;
}

void chk_xattrs(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	struct daxfs_xset xs;
	const char *why;
	u64 i, k, v, ino;
	u32 sev;

	for (i = 0; i < fs->nr_buckets && !c->stop; i++) {
		k = daxfs_load(&fs->buckets[i].key);
		v = daxfs_load(&fs->buckets[i].value);
		if (k == DAXFS_KEY_EMPTY || k == DAXFS_KEY_TOMB ||
		    (k & DAXFS_KEY_PENDING) || !v ||
		    (k >> DAXFS_KEY_TYPE_SHIFT) != DAXFS_KEY_XATTR ||
		    (c->binfo[i] & CHK_I_DROPPED))
			continue;
		ino = k & DAXFS_KEY_PAYLOAD_MASK;
		/* a bad set is corrupt whoever is live; an owner being
		 * freed (or a set being retired) may be a change under way */
		sev = DAXFS_CHK_ERROR;
		why = daxfs_xset_load(fs, v, ino, &xs);
		if (!why)
			why = chk_entries(&xs);
		if (!why && (why = chk_owner(c, ino)) && c->live)
			sev = DAXFS_CHK_WARN;
		if (!why && (why = chk_mark_set(c, &xs)) && c->live)
			sev = DAXFS_CHK_WARN;
		if (!why)
			continue;
		chk_report(c, sev, DAXFS_CHK_XATTR, why, ino, v, k, 0,
			   c->repair);
		if (c->repair)
			chk_tomb(c, i);
	}
}
