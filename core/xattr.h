/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Extended attributes (format version 6): the calls every front end
 * makes, and the POSIX ACL evaluator of the front ends that check
 * permissions themselves.  Layout, protocol and crash story:
 * docs/xattr.md.  Included by daxfs_core.h.
 */
#ifndef DAXFS_XATTR_H
#define DAXFS_XATTR_H

/* daxfs_setxattr flags (the values of Linux's XATTR_CREATE/REPLACE) */
#define DAXFS_XATTR_CREATE	1u	/* -EEXIST if the name exists */
#define DAXFS_XATTR_REPLACE	2u	/* -ENODATA if it does not */

/* The full names of the ACL attributes (Linux's). */
#define DAXFS_XATTR_ACL_ACCESS	"system.posix_acl_access"
#define DAXFS_XATTR_ACL_DEFAULT	"system.posix_acl_default"

/*
 * name: the full name with its namespace prefix ("user.", "trusted.",
 * "security.", or one of the two ACL names), nlen bytes, no NUL needed.
 * Other prefixes: -EOPNOTSUPP; an empty name after the prefix: -EINVAL;
 * longer than DAXFS_XATTR_NAME_MAX: -ERANGE (as Linux).  "user." names
 * only on regular files and directories (else -EPERM); a default ACL only
 * on directories (else -EACCES).  Privilege checks (trusted.*) are the
 * front end's.
 */
/* Copies the value into buf (size 0: only its length) and returns its
 * length; -ENODATA when absent, -ERANGE when size is too small. */
int daxfs_getxattr(struct daxfs_fs *fs, u64 ino, const char *name, u32 nlen,
		   void *buf, u32 size);
/* Sets name to value (vlen <= DAXFS_XATTR_SIZE_MAX, else -E2BIG); the
 * whole set is replaced atomically.  -ENOSPC: the pool, or the inode's
 * attributes would not fit DAXFS_XATTR_STREAM_MAX. */
int daxfs_setxattr(struct daxfs_fs *fs, u64 ino, const char *name, u32 nlen,
		   const void *value, u32 vlen, u32 flags);
/* -ENODATA when absent. */
int daxfs_removexattr(struct daxfs_fs *fs, u64 ino, const char *name,
		      u32 nlen);
/* The names, each NUL-terminated, into buf (size 0: only the length);
 * returns the length, -ERANGE when size is too small. */
int daxfs_listxattr(struct daxfs_fs *fs, u64 ino, char *buf, u32 size);

/*
 * POSIX ACLs (core/acl.c): the Linux xattr layout of
 * system.posix_acl_access (a 4-byte version 2 header, then 8-byte
 * entries: u16 tag, u16 perm, u32 id, little-endian).
 */
struct daxfs_cred {
	u32 uid;
	u32 gid;
	const u32 *groups;		/* supplementary groups */
	u32 nr_groups;
};

/* May cred access an inode of this mode/uid/gid with the ACL acl (alen
 * bytes; NULL: none) for mask (4 read, 2 write, 1 execute)?  0 or
 * -EACCES; uid 0 is not special here (the caller's policy).  -EINVAL
 * for an ACL that is not valid. */
int daxfs_acl_permission(const struct daxfs_cred *cred, u32 mode, u32 uid,
			 u32 gid, const void *acl, u32 alen, u32 mask);
/* Checks an ACL value as Linux's posix_acl_valid() does: 0 or -EINVAL.
 * *equiv (may be NULL): the ACL says no more than the mode bits. */
int daxfs_acl_valid(const void *acl, u32 alen, bool *equiv);
/* Mode bits an ACL implies (owner/group-or-mask/other), for chmod sync. */
int daxfs_acl_mode(const void *acl, u32 alen, u32 *mode);

#endif /* DAXFS_XATTR_H */
