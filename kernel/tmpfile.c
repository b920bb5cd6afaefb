// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: O_TMPFILE, linkat() of it, and RENAME_WHITEOUT: what
 * overlayfs needs from its upper and work directories (docs/kernel.md
 * "O_TMPFILE and whiteouts").
 */
#include <linux/fs.h>
#include <linux/cred.h>
#include <linux/namei.h>
#include "daxfs_k.h"

static int daxfs_k_gone(struct super_block *sb)
{
	return READ_ONCE(DAXFS_SB(sb)->dead) ? -EIO : 0;
}

/*
 * The core makes the file already held by this host's open set (one
 * entry, as the first open of a file publishes).  That entry becomes
 * the open of this struct file: nr_opens is 1 before finish_open, so
 * daxfs_open only counts, and one less after it, so the file's release
 * is the last one and withdraws the entry (freeing the file unless it
 * was linked meanwhile).
 */
int daxfs_k_tmpfile(DAXFS_IDMAP_T *idmap, struct inode *dir, struct file *file,
		    umode_t mode)
{
	struct super_block *sb = dir->i_sb;
	struct daxfs_space_wait w = {};
	struct posix_acl *dacl, *acl;
	struct daxfs_inode_info *ei;
	struct inode *inode;
	u32 uid, gid;
	u64 ino;
	int err;

	err = daxfs_k_gone(sb);
	if (err)
		return err;
	mode |= S_IFREG;
	/* the umask, or the directory's default ACL, as for a create: with
	 * SB_POSIXACL the VFS leaves both to us (xfstests generic/389) */
	err = daxfs_k_acl_create(dir, &mode, &dacl, &acl);
	if (err)
		return err;
	daxfs_new_owner(dir, &mode, &uid, &gid);
	do {
		err = daxfs_tmpfile(DAXFS_FS(sb), dir->i_ino, mode, uid, gid, &ino);
	} while (daxfs_k_space_retry(sb, &w, err));
	if (err) {
		posix_acl_release(dacl);
		posix_acl_release(acl);
		return daxfs_kerr(sb, err, "tmpfile");
	}
	inode = daxfs_iget(sb, ino);
	if (IS_ERR(inode)) {
		posix_acl_release(dacl);
		posix_acl_release(acl);
		daxfs_open_put(DAXFS_FS(sb), ino);
		return PTR_ERR(inode);
	}
	err = daxfs_k_acl_init(inode, dacl, acl);	/* releases both */
	if (err) {
		iput(inode);
		daxfs_open_put(DAXFS_FS(sb), ino);
		return err;
	}
	ei = DAXFS_I(inode);
	mutex_lock(&ei->open_lock);
	ei->nr_opens++;			/* the core's entry */
	mutex_unlock(&ei->open_lock);
	ei->orphan = true;		/* eviction settles it once more */
	set_nlink(inode, 1);		/* d_tmpfile drops it to 0 */
	d_tmpfile(file, inode);
	daxfs_dentry_nameless(file->f_path.dentry);
	err = finish_open_simple(file, 0);
	/* the core's count goes: the entry is this file's open now (daxfs_open
	 * counted it), or nobody's when ->open did not run or failed */
	mutex_lock(&ei->open_lock);
	if (!--ei->nr_opens)
		daxfs_open_put(DAXFS_FS(sb), ino);
	mutex_unlock(&ei->open_lock);
	return err;
}

/* linkat() of an O_TMPFILE descriptor (the VFS allows it for I_LINKABLE
 * inodes only): the core gives the held, nameless inode its first name. */
int daxfs_k_link_tmpfile(struct inode *inode, struct inode *dir, struct dentry *dentry)
{
	struct super_block *sb = dir->i_sb;
	struct daxfs_space_wait w = {};
	int err;

	do {
		err = daxfs_link_unnamed(DAXFS_FS(sb), inode->i_ino, dir->i_ino,
					 dentry->d_name.name, dentry->d_name.len);
	} while (daxfs_k_space_retry(sb, &w, err));
	if (err == -EEXIST)
		d_drop(dentry);
	if (err)
		return daxfs_kerr(sb, err, "link");
	daxfs_refresh_inode(dir);
	daxfs_refresh_inode(inode);
	DAXFS_I(inode)->orphan = false;
	ihold(inode);
	d_instantiate(dentry, inode);
	return 0;
}

/*
 * RENAME_WHITEOUT, before the rename: the whiteout (a character device
 * 0/0, as vfs_whiteout makes) is made nameless and held by this host, so
 * that a full pool fails the call before the rename did anything
 * (xfstests generic/626).  daxfs_rename_wh then swaps the old name for
 * it in the rename's own step, under the rename's intent: a crash leaves
 * the rename undone (the held node goes with the dead host's opens) or
 * done with the whiteout named (docs/kernel.md).  No dentry is made: the
 * old name's next lookup finds the whiteout.
 */
int daxfs_k_whiteout_make(struct inode *dir, u64 *ino)
{
	struct super_block *sb = dir->i_sb;
	struct daxfs_space_wait w = {};
	umode_t mode = S_IFCHR | WHITEOUT_MODE;
	u32 uid, gid;
	int err;

	daxfs_new_owner(dir, &mode, &uid, &gid);
	do {
		err = daxfs_tmpnode(DAXFS_FS(sb), dir->i_ino, mode, uid, gid,
				    new_encode_dev(WHITEOUT_DEV), ino);
	} while (daxfs_k_space_retry(sb, &w, err));
	return daxfs_kerr(sb, err, "whiteout");
}
