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
 * So a shutdown is exactly that: the host fences itself (the core's
 * fs->stopped: every publishing CAS in flight stops, every new op fails
 * with EIO), stops renewing, and drops its mappings; it never leaves its
 * slot.  Another host, or this one's next mount, finds the lease expired
 * and recovers the slot as after a real crash.  That is the point for
 * the tests that use it: each shutdown runs recovery.
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
	WRITE_ONCE(sbi->fs.stopped, true);
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
