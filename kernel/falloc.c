// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: fallocate(2), lseek(2)'s SEEK_DATA / SEEK_HOLE and FIEMAP
 * over the core (core/falloc.c, core/extent.c; docs/files.md
 * "fallocate").  Other hosts' mappings of punched pages go through the
 * usual path: the core bumps the change counter inside its op, and their
 * lease pass zaps what the file no longer shows (docs/kernel.md).
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/falloc.h>
#include <linux/fiemap.h>
#include "daxfs_k.h"

#define DAXFS_FALLOC_MODES	(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | \
				 FALLOC_FL_ZERO_RANGE)

/*
 * The VFS checked the range (EINVAL, EFBIG against s_maxbytes), the file
 * mode and the immutable and append-only flags.  This host's faults wait on the
 * invalidate lock from the first unmap until the pages are gone, as in
 * setattr's truncate: a fault in between would map a page the punch
 * frees, or a hole's zero page where a page now is.
 */
long daxfs_k_fallocate(struct file *file, int mode, loff_t off, loff_t len)
{
	struct inode *inode = file_inode(file);
	struct super_block *sb = inode->i_sb;
	struct address_space *mapping = inode->i_mapping;
	struct daxfs_space_wait w = { 0 };
	u64 start = round_down((u64)off, PAGE_SIZE);
	u64 end = round_up((u64)off + (u64)len, PAGE_SIZE);
	int err;

	if (mode & ~DAXFS_FALLOC_MODES)
		return -EOPNOTSUPP;
	if (!S_ISREG(inode->i_mode))
		return -ENODEV;
	inode_lock(inode);
	/* a size that grows is a write's: RLIMIT_FSIZE (with SIGXFSZ) and
	 * the largest file, as ext4 checks (xfstests generic/228) */
	if (!(mode & FALLOC_FL_KEEP_SIZE) && off + len > i_size_read(inode)) {
		err = inode_newsize_ok(inode, off + len);
		if (err)
			goto out;
	}
	/* a change of the file's bytes, as a write: the set-id bits go by
	 * the region's mode, which i_mode may hide (xfstests generic/684,
	 * a punch by an unprivileged user), then the rest */
	err = daxfs_refresh_inode(inode);
	if (!err)
		err = daxfs_k_kill_privs(inode);
	if (!err)
		err = file_remove_privs(file);
	if (err)
		goto out;
	filemap_invalidate_lock(mapping);
	unmap_mapping_range(mapping, start, end - start, 1);
	do {
		err = daxfs_fallocate(DAXFS_FS(sb), inode->i_ino, (u32)mode,
				      (u64)off, (u64)len);
	} while (daxfs_k_space_retry(sb, &w, err));
	unmap_mapping_range(mapping, start, end - start, 1);
	daxfs_mmap_drop_range(inode, start, end);
	daxfs_refresh_inode(inode);
	filemap_invalidate_unlock(mapping);
out:
	inode_unlock(inode);
	if (err == -EOPNOTSUPP || err == -EINVAL || err == -EFBIG ||
	    err == -ENOSPC)
		return err;
	return daxfs_kerr(sb, err, "fallocate");
}

/* SEEK_DATA / SEEK_HOLE: the core reads the size and the tree itself. */
loff_t daxfs_k_seek_hole_data(struct file *file, loff_t off, int whence)
{
	struct inode *inode = file_inode(file);
	u64 res = 0;
	int err;

	if (off < 0)
		return -ENXIO;
	err = daxfs_seek_hole_data(DAXFS_FS(inode->i_sb), inode->i_ino,
				   (u64)off, whence, &res);
	if (err == -ENXIO || err == -EINTR)
		return err;
	if (err)
		return daxfs_kerr(inode->i_sb, err, "lseek");
	return vfs_setpos(file, (loff_t)res, inode->i_sb->s_maxbytes);
}

static u32 fiemap_flags(const struct daxfs_extent *e)
{
	/* base bytes: shared by every host and never written */
	if (e->flags & DAXFS_EXTENT_NOPHYS)
		return FIEMAP_EXTENT_UNKNOWN | FIEMAP_EXTENT_SHARED;
	if (e->flags & DAXFS_EXTENT_BASE)
		return FIEMAP_EXTENT_SHARED;
	/* fallocated or zeroed pages that hold only zeros (format 8) */
	if (e->flags & DAXFS_EXTENT_UNWRITTEN)
		return FIEMAP_EXTENT_UNWRITTEN;
	return 0;
}

/* FIEMAP: physical addresses are offsets in the region.  One extent is
 * looked up ahead, to flag the last. */
int daxfs_k_fiemap(struct inode *inode, struct fiemap_extent_info *fi,
		   u64 start, u64 len)
{
	struct daxfs_fs *fs = DAXFS_FS(inode->i_sb);
	struct daxfs_extent cur, next;
	u64 end;
	int err;

	err = fiemap_prep(inode, fi, start, &len, 0);
	if (err)
		return err;
	end = len > U64_MAX - start ? U64_MAX : start + len;
	err = daxfs_next_extent(fs, inode->i_ino, start, &cur);
	while (!err && cur.length && cur.logical < end) {
		u32 flags = fiemap_flags(&cur);

		err = daxfs_next_extent(fs, inode->i_ino,
					cur.logical + cur.length, &next);
		if (err)
			break;
		if (!next.length)
			flags |= FIEMAP_EXTENT_LAST;
		err = fiemap_fill_next_extent(fi, cur.logical, cur.physical,
					      cur.length, flags);
		if (err)
			break;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cur = next;
	}
	if (err == 1)
		return 0;	/* the caller's array is full */
	if (err == -EINTR || err == -EFAULT)
		return err;
	return err ? daxfs_kerr(inode->i_sb, err, "fiemap") : 0;
}
