/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs: the namespace calls by directory inode number and name, for
 * front ends that keep their own inode numbers (the FUSE mount,
 * docs/fuse.md).  Each runs as one lib call (the call gate, -ESTALE after
 * being declared dead, and the -ENOSPC retry of the path API: see
 * docs/libdaxfs.md).  Names are single components, NUL-terminated; "."
 * and ".." are the caller's business.  uid/gid own new objects (the
 * caller's credentials, per call: threads of one handle serve different
 * users).  No permission checks are made.
 */
#ifndef DAXFS_LIBDAXFS_INO_H
#define DAXFS_LIBDAXFS_INO_H

#include "libdaxfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Looks name up in dir; *ino and *st (may be NULL) describe what it is.
 * "." is dir itself (of any type), ".." a directory's parent. */
int daxfs_ino_lookup(struct daxfs_handle *h, uint64_t dir, const char *name,
		     uint64_t *ino, struct daxfs_attr *st);
/* mode carries the type: S_IFREG, S_IFIFO, S_IFSOCK, S_IFCHR, S_IFBLK. */
int daxfs_ino_mknod(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev,
		    uint64_t *ino);
int daxfs_ino_mkdir(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t *ino);
int daxfs_ino_symlink(struct daxfs_handle *h, uint64_t dir, const char *name,
		      const char *target, uint32_t uid, uint32_t gid,
		      uint64_t *ino);
/* As daxfs_path_readlink: the full target length, NUL-terminated when it
 * fits; -EINVAL when ino is not a symlink. */
int daxfs_ino_readlink(struct daxfs_handle *h, uint64_t ino, char *buf,
		       size_t bufsize);
int daxfs_ino_unlink(struct daxfs_handle *h, uint64_t dir, const char *name);
int daxfs_ino_rmdir(struct daxfs_handle *h, uint64_t dir, const char *name);
int daxfs_ino_link(struct daxfs_handle *h, uint64_t ino, uint64_t dir,
		   const char *name);
/* flags: DAXFS_RENAME_NOREPLACE, DAXFS_RENAME_EXCHANGE, DAXFS_RENAME_WHITEOUT
 * (the whiteout, a character device 0/0, owned by the handle's uid and
 * gid; with daxfs_ino_rename_as by uid and gid). */
int daxfs_ino_rename(struct daxfs_handle *h, uint64_t sdir, const char *sname,
		     uint64_t ddir, const char *dname, unsigned int flags);
int daxfs_ino_rename_as(struct daxfs_handle *h, uint64_t sdir, const char *sname,
			uint64_t ddir, const char *dname, unsigned int flags,
			uint32_t uid, uint32_t gid);
/* The core's setattr (DAXFS_ATTR_* in valid); a size needs a regular file. */
int daxfs_ino_setattr(struct daxfs_handle *h, uint64_t ino, uint32_t valid,
		      const struct daxfs_attr *a);
/* chattr(1) (docs/attrs.md): flags are DAXFS_FL_*; may is what the
 * caller's credentials allow: DAXFS_MAY_OWNER (owner or CAP_FOWNER),
 * DAXFS_MAY_IMMUTABLE (CAP_LINUX_IMMUTABLE, to change i or a).  The
 * flags read back in daxfs_attr.flags. */
int daxfs_ino_setflags(struct daxfs_handle *h, uint64_t ino, uint32_t flags,
		       uint32_t may);
/* may_open's rules for those flags, for front ends that open files
 * themselves: -EPERM for a write open of an immutable file, or for an
 * append-only one without O_APPEND or with O_TRUNC; else 0. */
int daxfs_open_allowed(const struct daxfs_attr *a, int oflags);
/*
 * Lists dir from *pos (0: the start, with "." and ".." at positions 0
 * and 1).  cb returns non-zero to stop; the entry it stopped on comes
 * again from the *pos stored on return (DAXFS_POS_EOF at the end).  cb
 * runs inside the core's operation: it must only copy memory.
 */
int daxfs_ino_readdir(struct daxfs_handle *h, uint64_t dir, uint64_t *pos,
		      daxfs_dir_cb cb, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* DAXFS_LIBDAXFS_INO_H */
