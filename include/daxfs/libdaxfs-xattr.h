/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs: extended attributes and POSIX ACLs (docs/xattr.md).  Names
 * are full names ("user.x", "trusted.x", "security.x",
 * "system.posix_acl_access", "system.posix_acl_default").  Each call is
 * one lib call (gate, -ESTALE, -ENOSPC retry), as the rest of the API.
 * As everywhere in libdaxfs, the calls themselves check no permissions;
 * daxfs_access() is the check a front end makes for its users.
 */
#ifndef DAXFS_LIBDAXFS_XATTR_H
#define DAXFS_LIBDAXFS_XATTR_H

#include "libdaxfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The value's length (size 0: only that), -ENODATA, -ERANGE. */
int daxfs_xattr_get(struct daxfs_handle *h, uint64_t ino, const char *name,
		    void *buf, size_t size);
/* flags: DAXFS_XATTR_CREATE / DAXFS_XATTR_REPLACE.  An access ACL is
 * checked (-EINVAL) and, as Linux does, folded into the mode: one that
 * says no more than the mode bits is not stored at all. */
int daxfs_xattr_set(struct daxfs_handle *h, uint64_t ino, const char *name,
		    const void *value, size_t size, int flags);
int daxfs_xattr_remove(struct daxfs_handle *h, uint64_t ino, const char *name);
/* NUL-terminated names; the list's length (size 0: only that). */
int daxfs_xattr_list(struct daxfs_handle *h, uint64_t ino, char *buf,
		     size_t size);

/* The same by path; follow != 0: a final symlink is followed. */
int daxfs_path_getxattr(struct daxfs_handle *h, const char *path, int follow,
			const char *name, void *buf, size_t size);
int daxfs_path_setxattr(struct daxfs_handle *h, const char *path, int follow,
			const char *name, const void *value, size_t size,
			int flags);
int daxfs_path_removexattr(struct daxfs_handle *h, const char *path,
			   int follow, const char *name);
int daxfs_path_listxattr(struct daxfs_handle *h, const char *path, int follow,
			 char *buf, size_t size);

/*
 * May a user (uid, gid, supplementary groups) access ino for mask (4
 * read, 2 write, 1 execute/search)?  The mode bits and the access ACL,
 * as Linux's generic_permission(): uid 0 may read and write anything and
 * execute what has an x bit (directories: search always).  0 or -EACCES.
 */
int daxfs_access(struct daxfs_handle *h, uint64_t ino, uint32_t uid,
		 uint32_t gid, const uint32_t *groups, size_t nr_groups,
		 uint32_t mask);

/*
 * A new object ino made in directory dir: inherits dir's default ACL as
 * Linux does (posix_acl_create): a directory gets it as its default ACL
 * too; the access ACL is the default masked by the mode asked for, and
 * the object's mode follows it.  0 when dir has no default ACL.
 */
int daxfs_acl_inherit(struct daxfs_handle *h, uint64_t dir, uint64_t ino);

#ifdef __cplusplus
}
#endif

#endif /* DAXFS_LIBDAXFS_XATTR_H */
