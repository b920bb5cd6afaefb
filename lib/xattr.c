// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: extended attributes and POSIX ACLs
 * (include/daxfs/libdaxfs-xattr.h, docs/xattr.md).  The core stores the
 * attributes; this adds the lib call, the access ACL's fold into the
 * mode, default ACL inheritance and the permission check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdaxfs-internal.h"
#include "daxfs/libdaxfs-xattr.h"
#include "copy.h"

#define ACL_ACCESS_LEN	23u
#define ACL_DEFAULT_LEN	24u
#define ACL_USER_OBJ	0x01u
#define ACL_GROUP_OBJ	0x04u
#define ACL_MASK	0x10u
#define ACL_OTHER	0x20u

static int name_len(const char *name, u32 *len)
{
	size_t n;

	if (!name)
		return -EFAULT;
	n = strlen(name);
	if (!n || n > DAXFS_XATTR_NAME_MAX)
		return -ERANGE;
	*len = (u32)n;
	return 0;
}

static bool is_acl_access(const char *name, u32 len)
{
	return len == ACL_ACCESS_LEN && !memcmp(name, DAXFS_XATTR_ACL_ACCESS, len);
}

static int clamp(size_t size, u32 *out)
{
	*out = size > DAXFS_XATTR_STREAM_MAX ? DAXFS_XATTR_STREAM_MAX : (u32)size;
	return 0;
}

static int do_get(struct daxfs_handle *h, uint64_t ino, const char *name,
		  void *buf, size_t size)
{
	u32 len, sz;
	int err = name_len(name, &len);

	if (err)
		return err;
	clamp(size, &sz);
	return daxfs_getxattr(&h->fs, ino, name, len, buf, sz);
}

/* An access ACL: valid, and the mode bits follow it (Linux's
 * posix_acl_update_mode); *drop: it says no more than the mode. */
static int acl_access_set(struct daxfs_handle *h, uint64_t ino,
			  const void *value, size_t size, bool *drop)
{
	struct daxfs_attr a, na = { 0 };
	u32 bits;
	int err;

	if (size > DAXFS_XATTR_SIZE_MAX ||
	    daxfs_acl_valid(value, (u32)size, drop) ||
	    daxfs_acl_mode(value, (u32)size, &bits))
		return -EINVAL;
	err = daxfs_getattr(&h->fs, ino, &a);
	if (err)
		return err;
	na.mode = (a.mode & ~0777u) | bits;
	return daxfs_setattr(&h->fs, ino, DAXFS_ATTR_MODE | DAXFS_ATTR_CTIME, &na);
}

static int do_set(struct daxfs_handle *h, uint64_t ino, const char *name,
		  const void *value, size_t size, int flags)
{
	bool drop = false;
	u32 len;
	int err = lib_writable(h);

	if (!err)
		err = name_len(name, &len);
	if (err)
		return err;
	if (size > DAXFS_XATTR_SIZE_MAX)
		return -E2BIG;
	if (is_acl_access(name, len)) {
		err = acl_access_set(h, ino, value, size, &drop);
		if (err)
			return err;
		if (drop) {
			err = daxfs_removexattr(&h->fs, ino, name, len);
			return err == -ENODATA ? 0 : err;
		}
	}
	return daxfs_setxattr(&h->fs, ino, name, len, value, (u32)size,
			      (u32)flags);
}

static int do_remove(struct daxfs_handle *h, uint64_t ino, const char *name)
{
	u32 len;
	int err = lib_writable(h);

	if (!err)
		err = name_len(name, &len);
	return err ? err : daxfs_removexattr(&h->fs, ino, name, len);
}

static int do_list(struct daxfs_handle *h, uint64_t ino, char *buf,
		   size_t size)
{
	u32 sz;

	clamp(size, &sz);
	return daxfs_listxattr(&h->fs, ino, buf, sz);
}

int daxfs_xattr_get(struct daxfs_handle *h, uint64_t ino, const char *name,
		    void *buf, size_t size)
{
	daxfs_user_touch(buf, size);	/* a blocking fault: not in the op */
	LIB_CALL(h, do_get(h, ino, name, buf, size));
}

int daxfs_xattr_set(struct daxfs_handle *h, uint64_t ino, const char *name,
		    const void *value, size_t size, int flags)
{
	daxfs_user_touch(value, size);
	LIB_CALL_SPACE(h, do_set(h, ino, name, value, size, flags));
}

int daxfs_xattr_remove(struct daxfs_handle *h, uint64_t ino, const char *name)
{
	LIB_CALL_SPACE(h, do_remove(h, ino, name));
}

int daxfs_xattr_list(struct daxfs_handle *h, uint64_t ino, char *buf,
		     size_t size)
{
	daxfs_user_touch(buf, size);
	LIB_CALL(h, do_list(h, ino, buf, size));
}

/* ---- by path ---- */

int daxfs_path_getxattr(struct daxfs_handle *h, const char *path, int follow,
			const char *name, void *buf, size_t size)
{
	uint64_t ino;
	int err = daxfs_path_resolve(h, path, follow, &ino);

	return err ? err : daxfs_xattr_get(h, ino, name, buf, size);
}

int daxfs_path_setxattr(struct daxfs_handle *h, const char *path, int follow,
			const char *name, const void *value, size_t size,
			int flags)
{
	uint64_t ino;
	int err = daxfs_path_resolve(h, path, follow, &ino);

	return err ? err : daxfs_xattr_set(h, ino, name, value, size, flags);
}

int daxfs_path_removexattr(struct daxfs_handle *h, const char *path,
			   int follow, const char *name)
{
	uint64_t ino;
	int err = daxfs_path_resolve(h, path, follow, &ino);

	return err ? err : daxfs_xattr_remove(h, ino, name);
}

int daxfs_path_listxattr(struct daxfs_handle *h, const char *path, int follow,
			 char *buf, size_t size)
{
	uint64_t ino;
	int err = daxfs_path_resolve(h, path, follow, &ino);

	return err ? err : daxfs_xattr_list(h, ino, buf, size);
}

/* ---- ACLs ---- */

/* ino's ACL `name` into a new buffer (*acl NULL, *len 0: none). */
static int acl_load(struct daxfs_handle *h, uint64_t ino, const char *name,
		    void **acl, u32 *len)
{
	u32 nlen = (u32)strlen(name);
	void *buf;
	int n;

	*acl = NULL;
	*len = 0;
	for (;;) {
		n = daxfs_getxattr(&h->fs, ino, name, nlen, NULL, 0);
		if (n == -ENODATA)
			return 0;
		if (n < 0)
			return n;
		buf = malloc(n ? (size_t)n : 1);
		if (!buf)
			return -ENOMEM;
		n = daxfs_getxattr(&h->fs, ino, name, nlen, buf, (u32)n);
		if (n >= 0) {
			*acl = buf;
			*len = (u32)n;
			return 0;
		}
		free(buf);
		if (n != -ERANGE)	/* else it grew: again */
			return n == -ENODATA ? 0 : n;
	}
}

static int do_access(struct daxfs_handle *h, uint64_t ino,
		     const struct daxfs_cred *cred, uint32_t mask)
{
	struct daxfs_attr a;
	void *acl;
	u32 len;
	int err = daxfs_getattr(&h->fs, ino, &a);

	if (err)
		return err;
	mask &= 7;
	if (!cred->uid) {
		if (!(mask & 1) || S_ISDIR(a.mode) || (a.mode & 0111))
			return 0;
		return -EACCES;
	}
	err = acl_load(h, ino, DAXFS_XATTR_ACL_ACCESS, &acl, &len);
	if (err)
		return err;
	err = daxfs_acl_permission(cred, a.mode, a.uid, a.gid, acl, len, mask);
	free(acl);
	return err == -EINVAL ? -EACCES : err;
}

int daxfs_access(struct daxfs_handle *h, uint64_t ino, uint32_t uid,
		 uint32_t gid, const uint32_t *groups, size_t nr_groups,
		 uint32_t mask)
{
	struct daxfs_cred c = { uid, gid, groups, (u32)nr_groups };

	LIB_CALL(h, do_access(h, ino, &c, mask));
}

/* Linux's posix_acl_create_masq(): the default ACL masked by the mode;
 * the mode follows it.  true when the result says more than the mode. */
static bool acl_masq(u8 *acl, u32 len, u32 *mode)
{
	u8 *p, *group = NULL, *mask = NULL;
	u32 m = *mode, tag, perm;
	bool more = false;

	for (p = acl + 4; p + 8 <= acl + len; p += 8) {
		tag = (u32)p[0] | (u32)p[1] << 8;
		perm = (u32)p[2] | (u32)p[3] << 8;
		if (tag == ACL_USER_OBJ) {
			perm &= (m >> 6) & 7;
			m = (m & ~0700u) | perm << 6;
		} else if (tag == ACL_OTHER) {
			perm &= m & 7;
			m = (m & ~07u) | perm;
		} else if (tag == ACL_GROUP_OBJ) {
			group = p;
			continue;
		} else if (tag == ACL_MASK) {
			mask = p;
			more = true;
			continue;
		} else {
			more = true;
			continue;
		}
		p[2] = (u8)perm;
		p[3] = 0;
	}
	p = mask ? mask : group;
	if (p) {
		perm = ((u32)p[2] & (m >> 3)) & 7;
		m = (m & ~070u) | perm << 3;
		p[2] = (u8)perm;
		p[3] = 0;
	}
	*mode = m;
	return more;
}

static int do_inherit(struct daxfs_handle *h, uint64_t dir, uint64_t ino)
{
	struct daxfs_attr a, na = { 0 };
	void *acl;
	u32 len, mode;
	int err = daxfs_getattr(&h->fs, ino, &a);

	if (!err)
		err = acl_load(h, dir, DAXFS_XATTR_ACL_DEFAULT, &acl, &len);
	if (err || !acl)
		return err;
	if (daxfs_acl_valid(acl, len, NULL)) {
		free(acl);
		return 0;	/* a bad default ACL is not inherited */
	}
	if (S_ISDIR(a.mode))
		err = daxfs_setxattr(&h->fs, ino, DAXFS_XATTR_ACL_DEFAULT,
				     ACL_DEFAULT_LEN, acl, len, 0);
	mode = a.mode & 07777;
	if (!err && acl_masq(acl, len, &mode))
		err = daxfs_setxattr(&h->fs, ino, DAXFS_XATTR_ACL_ACCESS,
				     ACL_ACCESS_LEN, acl, len, 0);
	if (!err && mode != (a.mode & 07777)) {
		na.mode = (a.mode & ~07777u) | mode;
		err = daxfs_setattr(&h->fs, ino, DAXFS_ATTR_MODE, &na);
	}
	free(acl);
	return err;
}

int daxfs_acl_inherit(struct daxfs_handle *h, uint64_t dir, uint64_t ino)
{
	LIB_CALL_SPACE(h, do_inherit(h, dir, ino));
}
