// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: extended attributes and POSIX ACLs (docs/xattr.md).  The
 * core stores the attributes; the handlers here route the user.,
 * trusted. and security. namespaces to it, and the kernel's generic ACL
 * code (posix_acl_*_xattr_handler, ->get_acl/->set_acl, posix_acl_chmod,
 * posix_acl_create) enforces ACLs, kept in system.posix_acl_* in Linux's
 * xattr layout.  Another host's change bumps the inode's change counter,
 * and the refresh that notices it drops the cached ACLs (inode.c).
 */
#include <linux/fs.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include <linux/xattr.h>

#include "daxfs_k.h"

/* prefix + name into full (XATTR_NAME_MAX + 1 bytes): its length, or
 * -ERANGE when too long */
static int full_name(const struct xattr_handler *h, const char *name,
		     char *full)
{
	size_t p = strlen(h->prefix), n = strlen(name);

	if (p + n > XATTR_NAME_MAX)
		return -ERANGE;
	memcpy(full, h->prefix, p);
	memcpy(full + p, name, n);
	full[p + n] = 0;
	return (int)(p + n);
}

static int daxfs_xattr_get(const struct xattr_handler *h,
			   struct dentry *unused, struct inode *inode,
			   const char *name, void *buffer, size_t size)
{
	char full[XATTR_NAME_MAX + 1];
	int len = full_name(h, name, full), n;

	if (len < 0)
		return len;
	n = daxfs_getxattr(DAXFS_FS(inode->i_sb), inode->i_ino, full, len,
			   buffer, size > U32_MAX ? U32_MAX : (u32)size);
	if (n == -ENODATA || n == -ERANGE || n == -EOPNOTSUPP)
		return n;
	return n < 0 ? daxfs_kerr_walked(inode->i_sb, n, "getxattr") : n;
}

static int daxfs_xattr_set(const struct xattr_handler *h,
			   DAXFS_IDMAP_T *idmap, struct dentry *unused,
			   struct inode *inode, const char *name,
			   const void *value, size_t size, int flags)
{
	struct super_block *sb = inode->i_sb;
	char full[XATTR_NAME_MAX + 1];
	struct daxfs_space_wait w = {};
	int len = full_name(h, name, full), err;

	if (len < 0)
		return len;
	if (size > DAXFS_XATTR_SIZE_MAX)
		return -E2BIG;
	do {
		if (value)
			err = daxfs_setxattr(DAXFS_FS(sb), inode->i_ino, full,
					     len, value, (u32)size, flags);
		else
			err = daxfs_removexattr(DAXFS_FS(sb), inode->i_ino,
						full, len);
	} while (daxfs_k_space_retry(sb, &w, err));
	if (err == -ENODATA || err == -EEXIST || err == -ENOSPC ||
	    err == -EPERM || err == -EOPNOTSUPP)
		return err;
	if (err)
		return daxfs_kerr_walked(sb, err, "setxattr");
	daxfs_refresh_inode(inode);	/* its ctime moved */
	return 0;
}

static bool daxfs_trusted_list(struct dentry *dentry)
{
	return capable(CAP_SYS_ADMIN);
}

static const struct xattr_handler daxfs_user_handler = {
	.prefix	= XATTR_USER_PREFIX,
	.get	= daxfs_xattr_get,
	.set	= daxfs_xattr_set,
};

static const struct xattr_handler daxfs_trusted_handler = {
	.prefix	= XATTR_TRUSTED_PREFIX,
	.list	= daxfs_trusted_list,
	.get	= daxfs_xattr_get,
	.set	= daxfs_xattr_set,
};

static const struct xattr_handler daxfs_security_handler = {
	.prefix	= XATTR_SECURITY_PREFIX,
	.get	= daxfs_xattr_get,
	.set	= daxfs_xattr_set,
};

const struct xattr_handler *daxfs_xattr_handlers[] = {
	&daxfs_user_handler,
	&daxfs_trusted_handler,
	&daxfs_security_handler,
	&DAXFS_ACL_ACCESS_HANDLER,
	&DAXFS_ACL_DEFAULT_HANDLER,
	NULL
};

/* May this caller see name in a listing? */
static bool list_visible(struct dentry *dentry, const char *name)
{
	if (!strncmp(name, XATTR_TRUSTED_PREFIX, XATTR_TRUSTED_PREFIX_LEN))
		return capable(CAP_SYS_ADMIN);
	if (!strncmp(name, XATTR_SYSTEM_PREFIX, XATTR_SYSTEM_PREFIX_LEN))
		return IS_POSIXACL(d_inode(dentry));
	return true;
}

ssize_t daxfs_k_listxattr(struct dentry *dentry, char *buf, size_t size)
{
	struct inode *inode = d_inode(dentry);
	size_t in = 0, out = 0, len;
	char *all;
	int n;

	all = kvmalloc(XATTR_LIST_MAX, GFP_KERNEL);
	if (!all)
		return -ENOMEM;
	n = daxfs_listxattr(DAXFS_FS(inode->i_sb), inode->i_ino, all,
			    XATTR_LIST_MAX);
	if (n < 0) {
		kvfree(all);
		return n == -ERANGE ? -E2BIG : daxfs_kerr_walked(inode->i_sb, n,
								  "listxattr");
	}
	while (in < (size_t)n) {
		len = strnlen(all + in, n - in) + 1;
		if (list_visible(dentry, all + in)) {
			if (size && out + len > size) {
				out = (size_t)-ERANGE;
				break;
			}
			if (size)
				memcpy(buf + out, all + in, len);
			out += len;
		}
		in += len;
	}
	kvfree(all);
	return (ssize_t)out;
}

/* ---- ACLs ---- */

static const char *acl_name(int type)
{
	return type == ACL_TYPE_ACCESS ? XATTR_NAME_POSIX_ACL_ACCESS :
					 XATTR_NAME_POSIX_ACL_DEFAULT;
}

struct posix_acl *daxfs_k_get_acl(struct inode *inode, int type, bool rcu)
{
	struct daxfs_fs *fs = DAXFS_FS(inode->i_sb);
	const char *name = acl_name(type);
	u32 len = (u32)strlen(name);
	struct posix_acl *acl;
	void *buf;
	int n;

	if (rcu)
		return ERR_PTR(-ECHILD);
	for (;;) {
		n = daxfs_getxattr(fs, inode->i_ino, name, len, NULL, 0);
		if (n == -ENODATA)
			return NULL;
		if (n < 0)
			return ERR_PTR(daxfs_kerr(inode->i_sb, n, "get_acl"));
		buf = kmalloc(n ? n : 1, GFP_KERNEL);
		if (!buf)
			return ERR_PTR(-ENOMEM);
		n = daxfs_getxattr(fs, inode->i_ino, name, len, buf, (u32)n);
		if (n != -ERANGE)	/* else another host made it longer */
			break;
		kfree(buf);
	}
	if (n == -ENODATA)
		acl = NULL;
	else if (n < 0)
		acl = ERR_PTR(daxfs_kerr(inode->i_sb, n, "get_acl"));
	else
		acl = posix_acl_from_xattr(&init_user_ns, buf, n);
	kfree(buf);
	return acl;
}

/* Stores acl (NULL: removes it) as type's attribute. */
static int acl_store(struct inode *inode, struct posix_acl *acl, int type)
{
	struct super_block *sb = inode->i_sb;
	const char *name = acl_name(type);
	struct daxfs_space_wait w = {};
	size_t size = 0;
	void *buf = NULL;
	int err;

	if (acl) {
		buf = daxfs_acl_to_xattr(acl, &size);
		if (IS_ERR(buf))
			return PTR_ERR(buf);
	}
	do {
		if (acl)
			err = daxfs_setxattr(DAXFS_FS(sb), inode->i_ino, name,
					     strlen(name), buf, size, 0);
		else
			err = daxfs_removexattr(DAXFS_FS(sb), inode->i_ino,
						name, strlen(name));
	} while (daxfs_k_space_retry(sb, &w, err));
	if (err == -ENODATA)
		err = 0;
	if (err && err != -ENOSPC)
		err = daxfs_kerr(sb, err, "set_acl");
	if (!err)
		set_cached_acl(inode, type, acl);
	kfree(buf);
	return err;
}

/*
 * posix_acl_update_mode() starts from i_mode, which hides a regular file's
 * set-id bits without trust_suid: give back those it would have kept (the
 * S_ISGID of an owner in the group, or of a caller with CAP_FSETID:
 * xfstests generic/375).
 */
static umode_t daxfs_acl_keep_setid(DAXFS_IDMAP_T *idmap, struct inode *inode,
				    umode_t was, umode_t mode)
{
	umode_t hidden = was & ~inode->i_mode & (S_ISUID | S_ISGID);

	mode |= hidden & S_ISUID;
	if ((hidden & S_ISGID) &&
	    (in_group_p(inode->i_gid) ||
	     capable_wrt_inode_uidgid(idmap, inode, CAP_FSETID)))
		mode |= S_ISGID;
	return mode;
}

int daxfs_k_set_acl(DAXFS_IDMAP_T *idmap, DAXFS_SET_ACL_T *at,
		    struct posix_acl *acl, int type)
{
	struct inode *inode = daxfs_set_acl_inode(at);
	struct daxfs_attr a = {};
	umode_t was, mode;
	int err;

	/* from the region's mode: i_mode may hide set-id bits */
	err = daxfs_refresh_inode(inode);
	if (err)
		return err;
	was = (inode->i_mode & S_IFMT) | (DAXFS_I(inode)->mode & 07777);
	mode = was;
	if (type == ACL_TYPE_ACCESS && acl) {
		/* the mode follows the ACL; one the mode says all of goes */
		err = posix_acl_update_mode(idmap, inode, &mode, &acl);
		if (err)
			return err;
		mode = daxfs_acl_keep_setid(idmap, inode, was, mode);
	}
	err = acl_store(inode, acl, type);
	if (err || mode == was)
		return err ? err : daxfs_refresh_inode(inode);
	a.mode = (DAXFS_I(inode)->mode & ~07777) | (mode & 07777);
	err = daxfs_setattr(DAXFS_FS(inode->i_sb), inode->i_ino,
			    DAXFS_ATTR_MODE | DAXFS_ATTR_CTIME, &a);
	if (err)
		return daxfs_kerr(inode->i_sb, err, "setattr");
	return daxfs_refresh_inode(inode);
}

int daxfs_k_acl_create(struct inode *dir, umode_t *mode,
		       struct posix_acl **dacl, struct posix_acl **acl)
{
	*dacl = NULL;
	*acl = NULL;
	if (S_ISLNK(*mode))
		return 0;
	return posix_acl_create(dir, mode, dacl, acl);
}

int daxfs_k_acl_init(struct inode *inode, struct posix_acl *dacl,
		     struct posix_acl *acl)
{
	int err = 0;

	if (dacl)
		err = acl_store(inode, dacl, ACL_TYPE_DEFAULT);
	if (acl && !err)
		err = acl_store(inode, acl, ACL_TYPE_ACCESS);
	posix_acl_release(dacl);
	posix_acl_release(acl);
	return err;
}

int daxfs_k_acl_chmod(DAXFS_IDMAP_T *idmap, struct dentry *dentry, umode_t mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
	return posix_acl_chmod(idmap, dentry, mode);
#else
	return posix_acl_chmod(idmap, d_inode(dentry), mode);
#endif
}
