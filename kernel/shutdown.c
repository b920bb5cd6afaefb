// SPDX-License-Identifier: GPL-2.0
/*
 * FS_IOC_SHUTDOWN: this host stops as if it had died (docs/kernel.md
 * "Shutdown").  The number is XFS_IOC_GOINGDOWN's and ext4's and f2fs'
 * (_IOR('X', 125, __u32)), so xfstests' godown and the programs written
 * for those filesystems work unchanged.
 *
 * A daxfs host has no journal to cut: every write is in the region when
 * it returns.  What a crash of this host means to the others is a slot
 * whose lease runs out, and recovery by a survivor (docs/recovery.md).
 * So a shutdown is exactly that: every new op fails with EIO (the core's
 * fs->shut), the host stops renewing and drops its mappings, and at
 * unmount it gives its slot up as DEAD.  Another host, or this one's next
 * mount, recovers the slot as after a real crash: its open files and its
 * locks.  That is the point for the tests that use it: each shutdown runs
 * recovery.  The ops in flight at the shutdown run to their end, as if
 * the crash had come just after them: stopped at a fence instead, they
 * would leave the residual windows of docs/recovery.md (a record
 * allocated and not yet named, a count marked and not yet dropped) for
 * fsck to find.
 */
#include "daxfs_k.h"

#define DAXFS_IOC_SHUTDOWN		_IOR('X', 125, __u32)
#define DAXFS_SHUTDOWN_DEFAULT		0	/* write back, then stop */
#define DAXFS_SHUTDOWN_LOGFLUSH		1	/* no log: as DEFAULT */
#define DAXFS_SHUTDOWN_NOLOGFLUSH	2	/* stop at once */

static int daxfs_shutdown(struct super_block *sb, u32 how)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(sb);

	if (how > DAXFS_SHUTDOWN_NOLOGFLUSH)
		return -EINVAL;
	if (READ_ONCE(sbi->dead))
		return 0;
	/* persistent media and split mode: what was written reaches the
	 * media or the backing files first, as a sync would */
	if (how != DAXFS_SHUTDOWN_NOLOGFLUSH && !sb_rdonly(sb)) {
		down_read(&sb->s_umount);
		sync_filesystem(sb);
		up_read(&sb->s_umount);
	}
	pr_warn("%s: shut down (FS_IOC_SHUTDOWN): this host stops as if it had crashed; every operation fails with EIO, the lease is no longer renewed and the next mount or another host recovers the slot\n",
		sb->s_id);
	WRITE_ONCE(sbi->shut, true);
	/* new ops fail with EIO; those in flight run to their end */
	WRITE_ONCE(sbi->fs.shut, true);
	WRITE_ONCE(sbi->dead, true);
	/* the lease work drops every mapping of ours at its next run */
	mod_delayed_work(system_long_wq, &sbi->lease_work, 0);
	return 0;
}

long daxfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct super_block *sb = file_inode(file)->i_sb;
	u32 how;

	switch (cmd) {
	case DAXFS_IOC_SHUTDOWN:
		if (!capable(CAP_SYS_ADMIN))
			return -EPERM;
		if (get_user(how, (u32 __user *)arg))
			return -EFAULT;
		return daxfs_shutdown(sb, how);
	default:
		return -ENOTTY;
	}
}
