// SPDX-License-Identifier: GPL-2.0
/*
 * FIFREEZE / FITHAW on this host (docs/kernel.md "Freeze").
 *
 * The VFS does most of it: freeze_super() stops new write system calls
 * and write faults of shared mappings (daxfs_k_fault_start), waits for
 * those in flight, syncs, and then calls daxfs_freeze_fs.  What is left
 * to daxfs:
 *  - stores through mappings already writable would go on without a
 *    fault: every mapping of ours is write-protected here, so the next
 *    store faults and waits for the thaw;
 *  - the lease work's own writers (reclaim, dead-host recovery) take
 *    intwrite protection with a trylock and skip their turn while the
 *    filesystem is frozen.  Renewing the lease goes on: a frozen host is
 *    alive, and must not be recovered by the others.
 *
 * A freeze is per host, as a mount is: the other hosts of the region go
 * on writing.  A consistent copy of the whole region needs every host
 * frozen (or unmounted) first.
 */
#include "daxfs_k.h"

static void daxfs_freeze_wrprotect(struct inode *inode)
{
	daxfs_k_times_wrprotect(inode, 0, LLONG_MAX);
}

int daxfs_freeze_fs(struct super_block *sb)
{
	daxfs_mapped_each(DAXFS_SB(sb), daxfs_freeze_wrprotect);
	return 0;
}

int daxfs_unfreeze_fs(struct super_block *sb)
{
	return 0;
}
