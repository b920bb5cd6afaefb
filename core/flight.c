// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Changes in flight (docs/kernel.md "Changes in flight"): a namespace op
 * raises the change counters of the directories whose entries it changes
 * and of the inodes whose names it removes, after its intent names them
 * and before it publishes (core/inode.c daxfs_change_raise).  A host that
 * dies in between leaves its raise; recovery cannot tell whether the
 * raise was made (the add and any record of it are two stores), so it
 * heals: a counter that shows changes in flight, and that no live intent
 * may have raised, gets its count moved and nothing in flight, by CAS.
 *
 * Why the CAS is safe: every raiser's intent is visible before its raise
 * (a locked add orders the stores before it).  So a raise in the word we
 * loaded has its intent in our scan, unless its op settled since, which
 * moved the word; and a raise made after our load moved the word too.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "dir.h"
#include "ns-intent.h"

/* The inode a leaf names, or ~0 when it cannot be read: it may then name
 * any inode. */
static u64 leaf_ino(struct daxfs_fs *fs, u64 leaf)
{
	struct daxfs_dirent *de;

	if (!leaf)
		return 0;
	de = daxfs_dirent_at(fs, leaf);
	return de ? daxfs_load(&de->ino) : ~0ULL;
}

int daxfs_ns_intent_inos(struct daxfs_fs *fs, struct daxfs_lane *ln,
			 u64 ino[DAXFS_NS_RAISED_MAX])
{
	struct daxfs_intent *in = &ln->intent;
	int n = 0;

	if (daxfs_load(&in->op) != DAXFS_INTENT_RENAME)
		return 0;
	daxfs_rmb();	/* the op code is published after its words */
	ino[n++] = daxfs_load(&in->a[0]);
	switch (NS_KIND(daxfs_load(&in->a[6]))) {
	case NS_KIND_CREATE:
	case NS_KIND_LINK:
		break;
	case NS_KIND_RENAME:
		ino[n++] = leaf_ino(fs, daxfs_load(&in->a[2]));
		ino[n++] = leaf_ino(fs, daxfs_load(&in->a[4]));
		ino[n++] = daxfs_load(&in->a[1]);
		break;
	case NS_KIND_UNLINK:
	case NS_KIND_RMDIR:
		ino[n++] = daxfs_load(&in->a[1]);
		break;
	default:	/* damage: it may have raised anything */
		ino[n++] = ~0ULL;
	}
	return n;
}

bool daxfs_ns_raised_elsewhere(struct daxfs_fs *fs, struct daxfs_lane *skip,
			     u64 ino)
{
	u64 i, lanes = (u64)fs->sb.max_hosts * DAXFS_LANES;
	u64 named[DAXFS_NS_RAISED_MAX];
	int k, n;

	for (i = 0; i < lanes; i++) {
		if (&fs->lanes[i] == skip)
			continue;
		n = daxfs_ns_intent_inos(fs, &fs->lanes[i], named);
		for (k = 0; k < n; k++)
			if (named[k] == ino || named[k] == ~0ULL)
				return true;
	}
	return false;
}

bool daxfs_change_heal(struct daxfs_op *op, struct daxfs_lane *skip, u64 ino)
{
	struct daxfs_iref ref;
	u64 w;
	int tries;

	if (!ino || ino == ~0ULL || daxfs_fenced(op) ||
	    daxfs_inode_get(op, ino, &ref) || !ref.ip)
		return false;
	w = daxfs_load(&ref.ip->change);
	for (tries = 0; tries < 4 && !daxfs_change_settled(w); tries++) {
		daxfs_rmb();	/* the scan's loads after the word's */
		if (daxfs_ns_raised_elsewhere(op->fs, skip, ino))
			return false;	/* its own settle lowers it */
		if (daxfs_cas(&ref.ip->change, &w, daxfs_change_cleared(w)))
			return true;
	}
	return false;
}

/*
 * Online, the same heal with no lane skipped: the argument above holds for
 * any host that loads the word before it scans.  A live op's raise is
 * named by its intent until its settle, so the heal takes only raises
 * that no op will lower: a fenced host's late add, a dead recoverer's.
 * A zombie's settle that lands after the heal wraps the field, which
 * shows a change in flight again (never a settled word), and the next
 * sighting heals that too.
 */
bool daxfs_change_heal_now(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_op op;
	bool healed;

	if ((fs->flags & DAXFS_FS_RDONLY) || daxfs_op_begin(fs, &op))
		return false;
	/* a host that has not joined stores nothing */
	healed = op.lane && daxfs_change_heal(&op, NULL, ino);
	daxfs_op_end(&op);
	return healed;
}

bool daxfs_change_seen(struct daxfs_fs *fs, u64 ino, u64 w)
{
	struct daxfs_heal_watch *hw = &fs->heal_watch[ino % DAXFS_HEAL_WATCH];
	s64 now;

	if (daxfs_change_settled(w)) {
		if (daxfs_load(&hw->ino) == ino)
			daxfs_store(&hw->ino, 0);
		return false;
	}
	now = daxfs_mono_ns();
	if (daxfs_load(&hw->ino) != ino) {
		daxfs_store((u64 *)&hw->since, (u64)now);
		daxfs_store(&hw->ino, ino);
		return false;
	}
	if (now - (s64)daxfs_load((u64 *)&hw->since) < DAXFS_HEAL_AFTER_NS)
		return false;
	/* one scan per period while the raise stays */
	daxfs_store((u64 *)&hw->since, (u64)now);
	return true;
}
