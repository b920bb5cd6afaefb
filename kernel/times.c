// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: timestamps the VFS updates on its own schedule (docs/kernel.md
 * "Timestamps").
 *
 *  - atime: read(2), readdir and mmap call file_accessed(); the VFS
 *    decides by the mount's relatime (default), strictatime or noatime
 *    and calls ->update_time, which stores the time in the region, where
 *    every host sees it.  Without ->update_time the VFS changed only this
 *    host's inode, and the next refresh from the region undid it.
 *  - mtime/ctime after stores through a shared mapping: the write fault
 *    (->fault with FAULT_FLAG_WRITE, or ->pfn_mkwrite on a read-only PTE
 *    that a read fault mapped) runs file_update_time(), as ext4's DAX
 *    fault does; msync/fsync write-protects the file's mappings again
 *    (daxfs_k_times_wrprotect), so the next store after it faults and
 *    moves the times once more.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include "daxfs_k.h"

/*
 * The one store: the times the VFS asked for.  "Now" is the clock the
 * core stamps with (as daxfs_k_setattr), not the VFS's coarse one, which
 * lags it by up to a tick: a store fault right after a utime would set a
 * ctime before the one utime set.
 */
static int daxfs_store_times(struct inode *inode, u32 valid)
{
	struct daxfs_attr a = {};
	s64 now = daxfs_now_ns();
	int err;

	now -= now % inode->i_sb->s_time_gran;

	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return -EIO;
	if (valid & DAXFS_ATTR_ATIME)
		a.atime_ns = now;
	if (valid & DAXFS_ATTR_MTIME)
		a.mtime_ns = now;
	if (valid & DAXFS_ATTR_CTIME)
		a.ctime_ns = now;
	if (!valid)
		return 0;
	err = daxfs_setattr(DAXFS_FS(inode->i_sb), inode->i_ino, valid, &a);
	if (err)
		/* a read never fails for its atime: -ESTALE (gone) included */
		return err == -ESTALE || err == -ENOENT ? 0 :
		       daxfs_kerr(inode->i_sb, err, "update_time");
	/* an atime alone moves no change counter (core/namei.c), so no
	 * refresh would load it: this host's inode takes it here */
	if (valid & DAXFS_ATTR_ATIME) {
		struct timespec64 ts = ns_to_timespec64(now);

		spin_lock(&inode->i_lock);
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
		inode_set_atime_to_ts(inode, ts);
#else
		inode->i_atime = ts;
#endif
		spin_unlock(&inode->i_lock);
	}
	daxfs_refresh_inode(inode);
	return 0;
}

int daxfs_k_update_time(DAXFS_UPDATE_TIME_ARGS)
{
	if (daxfs_update_nowait())
		return -EAGAIN;
	return daxfs_store_times(inode, daxfs_update_attrs());
}

/*
 * A store through a shared mapping is about to be allowed: mtime and
 * ctime move, and the fault holds off a freeze (docs/kernel.md "Freeze")
 * until daxfs_k_fault_end, as every write system call does.  True when
 * it took that protection.
 */
bool daxfs_k_fault_start(struct vm_fault *vmf)
{
	struct file *file = vmf->vma->vm_file;

	if (!(vmf->flags & FAULT_FLAG_WRITE) || !(vmf->vma->vm_flags & VM_SHARED))
		return false;
	sb_start_pagefault(file_inode(file)->i_sb);
	file_update_time(file);
	return true;
}

void daxfs_k_fault_end(struct vm_fault *vmf, bool started)
{
	if (started)
		sb_end_pagefault(file_inode(vmf->vma->vm_file)->i_sb);
}

/* A read fault mapped the page read-only (a shared writable mapping asks
 * for write notification): the first store lands here. */
vm_fault_t daxfs_k_pfn_mkwrite(struct vm_fault *vmf)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	vm_fault_t ret = 0;
	bool started;
	u32 fl;

	/* the page is mapped already, so no map_block refuses the store:
	 * ask the region whether the file was locked since (any host) */
	if (daxfs_getflags(DAXFS_FS(inode->i_sb), inode->i_ino, &fl) ||
	    (fl & (DAXFS_FL_IMMUTABLE | DAXFS_FL_APPEND)))
		return VM_FAULT_SIGBUS;
	started = daxfs_k_fault_start(vmf);
	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		ret = VM_FAULT_SIGBUS;
	daxfs_k_fault_end(vmf, started);
	return ret;
}

/* msync/fsync: the next store through any shared mapping of the range
 * faults again (and moves mtime), as after ext4's DAX writeback. */
void daxfs_k_times_wrprotect(struct inode *inode, loff_t start, loff_t end)
{
	struct address_space *mapping = inode->i_mapping;

	if (!mapping_writably_mapped(mapping))
		return;
	if (end < start)
		return;
	unmap_mapping_range(mapping, start, end - start + 1, 0);
}
