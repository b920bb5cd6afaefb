// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The preload: extended attributes of region objects, through libdaxfs
 * (docs/xattr.md): the getxattr, listxattr, setxattr and removexattr
 * families, by path (l*: the final symlink not followed) and by
 * descriptor.  Kernel paths and descriptors go to the kernel.  No
 * privilege checks (as libdaxfs: the rights of whoever maps the region).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/xattr.h>	/* XATTR_REPLACE, without glibc's prototypes */

#include "preload.h"
#include "daxfs/libdaxfs-xattr.h"

static ssize_t ret_len(int64_t r)
{
	return r < 0 ? pl_fail((int)r) : (ssize_t)r;
}

/* The region object at region path rpath. */
static int path_ino(struct daxfs_handle **h, const char *rpath, int follow,
		    uint64_t *ino)
{
	*h = pl_handle();
	if (!*h)
		return -errno;
	return daxfs_path_resolve(*h, rpath, follow, ino);
}

/*
 * The region object of descriptor fd.  A directory this process removed
 * (docs/preload.md "Removed directories") is 1: the core freed it with
 * its attributes, which the kernel keeps until the last close; the
 * preload answers as for a directory that has none.
 */
static int fd_ino(struct daxfs_handle **h, int fd, uint64_t *ino)
{
	struct pl_gone g;
	struct pl_desc *d;
	int gone;

	*h = pl_handle();
	if (!*h)
		return -errno;
	d = pl_fd_get(fd);
	if (!d)
		return -EBADF;
	*ino = d->ino;
	gone = pl_gone_load(d, &g);
	pl_fd_put(d);
	return gone;
}

/* What each call answers for a removed directory (fd_ino's 1): no
 * attribute to get, replace or remove, none listed; a new one has
 * nowhere to go (the kernel would keep it with the inode). */
#define GONE_GET	-ENODATA
#define GONE_LIST	0
#define GONE_SET(f)	((f) & XATTR_REPLACE ? -ENODATA : -ENOENT)
#define GONE_REMOVE	-ENODATA

/* call: the kernel's; rcall: libdaxfs's on (h, ino); gone: the answer for
 * a removed directory (fd_ino). */
#define XATTR_PATH(name, follow, call, rcall, gone, ...)			\
PUBLIC ssize_t name(const char *path, __VA_ARGS__)			\
{									\
	REAL(ssize_t, name, const char *, __VA_ARGS__);		\
	struct daxfs_handle *h;						\
	uint64_t ino = 0;						\
	char xattr_buf[PL_PATH_MAX];					\
	int fd = (follow) ? pl_fd_link_exact(path) : -1;		\
	int r = fd >= 0 ? PL_REGION : pl_route(AT_FDCWD, path, xattr_buf);\
	int err;							\
									\
	if (r < 0)							\
		return -1;						\
	if (r != PL_REGION) {						\
		path = PL_KPATH(r, path, xattr_buf);			\
		return call;						\
	}								\
	/* "." of a removed directory (route.c pl_self) */		\
	if (fd < 0 && pl_self.on)					\
		return ret_len(gone);					\
	/* "/proc/self/fd/N": the open file (fdlink.c) */		\
	err = fd >= 0 ? fd_ino(&h, fd, &ino)				\
		      : path_ino(&h, xattr_buf, follow, &ino);		\
	if (pl_outside(err, xattr_buf)) {				\
		path = xattr_buf;	/* a link to a kernel file */	\
		return call;						\
	}								\
	if (err > 0)							\
		return ret_len(gone);					\
	return err ? pl_fail(err) : ret_len(rcall);			\
}

#define XATTR_FD(name, call, rcall, gone, ...)				\
PUBLIC ssize_t name(int fd, __VA_ARGS__)				\
{									\
	REAL(ssize_t, name, int, __VA_ARGS__);				\
	struct daxfs_handle *h;						\
	uint64_t ino = 0;						\
	int err;							\
									\
	if (!pl_fd_is_region(fd))					\
		return call;						\
	err = fd_ino(&h, fd, &ino);					\
	if (err > 0)							\
		return ret_len(gone);					\
	return err ? pl_fail(err) : ret_len(rcall);			\
}

#define GET(v, s)	daxfs_xattr_get(h, ino, n, v, s)
#define LIST(l, s)	daxfs_xattr_list(h, ino, l, s)
#define SET(v, s, f)	daxfs_xattr_set(h, ino, n, v, s, f)
#define REMOVE()	daxfs_xattr_remove(h, ino, n)

XATTR_PATH(getxattr, 1, real_getxattr(path, n, v, s), GET(v, s), GONE_GET,
	   const char *n, void *v, size_t s)
XATTR_PATH(lgetxattr, 0, real_lgetxattr(path, n, v, s), GET(v, s), GONE_GET,
	   const char *n, void *v, size_t s)
XATTR_FD(fgetxattr, real_fgetxattr(fd, n, v, s), GET(v, s), GONE_GET,
	 const char *n, void *v, size_t s)
XATTR_PATH(listxattr, 1, real_listxattr(path, l, s), LIST(l, s), GONE_LIST,
	   char *l, size_t s)
XATTR_PATH(llistxattr, 0, real_llistxattr(path, l, s), LIST(l, s),
	   GONE_LIST, char *l, size_t s)
XATTR_FD(flistxattr, real_flistxattr(fd, l, s), LIST(l, s), GONE_LIST,
	 char *l, size_t s)
XATTR_PATH(setxattr, 1, real_setxattr(path, n, v, s, f), SET(v, s, f),
	   GONE_SET(f), const char *n, const void *v, size_t s, int f)
XATTR_PATH(lsetxattr, 0, real_lsetxattr(path, n, v, s, f), SET(v, s, f),
	   GONE_SET(f), const char *n, const void *v, size_t s, int f)
XATTR_FD(fsetxattr, real_fsetxattr(fd, n, v, s, f), SET(v, s, f),
	 GONE_SET(f), const char *n, const void *v, size_t s, int f)
XATTR_PATH(removexattr, 1, real_removexattr(path, n), REMOVE(), GONE_REMOVE,
	   const char *n)
XATTR_PATH(lremovexattr, 0, real_lremovexattr(path, n), REMOVE(),
	   GONE_REMOVE, const char *n)
XATTR_FD(fremovexattr, real_fremovexattr(fd, n), REMOVE(), GONE_REMOVE,
	 const char *n)
