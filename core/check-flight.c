// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck of the changes in flight in an inode's change counter (format 13,
 * docs/kernel.md "Changes in flight").  Offline, after the dead hosts
 * were recovered, no op is running: a counter that still shows one left
 * a raise behind that recovery could not heal (a host fenced between its
 * checks and its raise, or a recoverer that died).  Such a directory is
 * never wrong, only looked up on every use; the repair moves its count
 * and clears what is in flight.  A dead host whose intent names the
 * inode is reported on its own (chk_hosts), and recovering it settles
 * the counter.  Checked only offline: on a live region, changes are in
 * flight all the time.
 *
 * And the mark of a rewrite (format 14, DAXFS_CHANGE_WRITTEN): any
 * regular file may carry it (a rewrite that no getattr has folded yet),
 * no other inode: nothing but a stray store marks a directory's or a
 * symlink's counter.  The repair folds it (count + 1).
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "check.h"

void chk_change_flight(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u64 w = daxfs_load(&ip->change);

	if (!c->live && (w & DAXFS_CHANGE_WRITTEN) &&
	    !DAXFS_IS_REG(daxfs_load32(&ip->mode))) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE,
			   "change counter of a file that is not regular carries a rewrite's mark",
			   ino, 0, w, 0, c->repair);
		if (c->repair) {
			w = daxfs_change_folded(w);
			daxfs_store(&ip->change, w);
		}
	}
	if (c->live || daxfs_change_settled(w) ||
	    daxfs_ns_raised_elsewhere(c->fs, NULL, ino))
		return;
	chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE,
		   "change counter shows an entry change in flight that no host is making",
		   ino, 0, w >> DAXFS_CHANGE_FLIGHT_SHIFT, 0, c->repair);
	if (c->repair)
		daxfs_store(&ip->change, daxfs_change_cleared(w));
}
