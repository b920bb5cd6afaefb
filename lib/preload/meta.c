// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Attribute and namespace calls.  A call whose paths all route to the
 * region is served by libdaxfs; one that mixes region and kernel paths
 * (rename, link across) fails with EXDEV as between two filesystems.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <utime.h>
#include <sys/time.h>
#include <time.h>

#include "preload.h"
#include "lib/timens.h"

/* Routes (dirfd, path); PL_REGION with h set, or a kernel route. */
#define ROUTE_OR_KERNEL(dirfd, path, buf, r, h)			\
	int r = pl_route(dirfd, path, buf);				\
	struct daxfs_handle *h = NULL;					\
	if (r < 0)							\
		return -1;						\
	if (r == PL_REGION && !(h = pl_handle()))			\
		return -1

static int ret_err(int err)
{
	return err < 0 ? pl_fail(err) : 0;
}

/* Attributes of a region descriptor (any kind); a removed directory's
 * from what was kept of it, never by its number. */
static int fd_attr(int fd, struct daxfs_attr *a)
{
	struct daxfs_handle *h = pl_handle();
	struct pl_gone g;
	struct pl_desc *d;
	int err = 0;

	if (!h)
		return -errno;
	d = pl_fd_get(fd);
	if (!d)
		return -EBADF;
	if (pl_gone_load(d, &g))
		pl_gone_attr(d->ino, &g, a);
	else
		err = daxfs_fstat(h, d->ino, a);
	pl_fd_put(d);
	return err;
}

/*
 * A call that may remove directory rpath (rmdir, a rename over it),
 * when this process holds descriptions of it: the attributes they are
 * to answer from once it is gone.  Read before the call, as nothing is
 * left after it.  a->ino 0: nothing to keep.
 */
static void gone_before(struct daxfs_handle *h, const char *rpath,
			struct daxfs_attr *a)
{
	if (!pl_fd_dirs_held() || daxfs_path_lstat(h, rpath, a) ||
	    !S_ISDIR(a->mode) || !pl_fd_dir_held(a->ino))
		a->ino = 0;
}

/* The call made: if directory a->ino is now gone, its descriptions here
 * answer from a (pl_fd_gone_mark).  Only once its number names nothing:
 * the call may have removed another directory put under the name
 * meanwhile, and this one, alive, is then left as it is. */
static void gone_after(struct daxfs_handle *h, const struct daxfs_attr *a)
{
	struct daxfs_attr now;
	struct timespec ts;
	struct pl_gone g;

	if (!a->ino || daxfs_fstat(h, a->ino, &now) != -ENOENT)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	g.uid = a->uid;
	g.gid = a->gid;
	g.pad = 0;
	g.atime_ns = a->atime_ns;
	g.mtime_ns = a->mtime_ns;
	g.ctime_ns = daxfs_timespec_to_ns(&ts);	/* the removal's, as Linux */
	atomic_store(&g.mode, a->mode);
	pl_fd_gone_mark(a->ino, &g);
}

/*
 * A change to the attributes of removed directory ino (g: what was kept
 * of it): Linux makes it in the inode an open file still pins, and fstat
 * shows it; here it is made to what is kept, for every description of it
 * this process holds (pl_fd_gone_mark).  The change time moves as the
 * kernel moves it.
 */
static int gone_setattr(uint64_t ino, struct pl_gone g, uint32_t valid,
			const struct daxfs_attr *a)
{
	struct timespec ts;

	if (valid & DAXFS_ATTR_MODE)
		g.mode = (g.mode & S_IFMT) | (a->mode & 07777);
	if (valid & DAXFS_ATTR_UID)
		g.uid = a->uid;
	if (valid & DAXFS_ATTR_GID)
		g.gid = a->gid;
	if (valid & DAXFS_ATTR_ATIME)
		g.atime_ns = a->atime_ns;
	if (valid & DAXFS_ATTR_MTIME)
		g.mtime_ns = a->mtime_ns;
	if (valid & DAXFS_ATTR_CTIME) {
		clock_gettime(CLOCK_REALTIME, &ts);
		g.ctime_ns = daxfs_timespec_to_ns(&ts);
	}
	pl_fd_gone_mark(ino, &g);
	return 0;
}

/* Region attributes for (dirfd, path, flags), or 1: ask the kernel. */
static int at_attr(int dirfd, const char *path, int flags,
		   struct daxfs_attr *a, char *buf, int *r)
{
	struct daxfs_handle *h;
	int fd, err;

	/* "/proc/self/fd/N" (fdlink.c): the open file, by its number */
	if (!(flags & AT_SYMLINK_NOFOLLOW) && (fd = pl_fd_link_exact(path)) >= 0) {
		*r = PL_KERNEL;
		return fd_attr(fd, a);
	}
	if (path && !path[0] && (flags & AT_EMPTY_PATH)) {
		*r = PL_KERNEL;
		if (dirfd == AT_FDCWD)
			path = ".";
		else if (!pl_fd_is_region(dirfd))
			return 1;
		else
			return fd_attr(dirfd, a);
	}
	*r = pl_route(dirfd, path, buf);
	if (*r < 0)
		return -errno;
	if (*r != PL_REGION)
		return 1;
	h = pl_handle();
	if (!h)
		return -errno;
	if (pl_self.on) {
		pl_gone_attr(pl_self.ino, &pl_self.g, a);
		return 0;
	}
	err = (flags & AT_SYMLINK_NOFOLLOW) ? daxfs_path_lstat(h, buf, a)
					    : daxfs_path_stat(h, buf, a);
	if (pl_outside(err, buf)) {
		*r = PL_KERNEL_ABS;
		return 1;
	}
	return err;
}

PUBLIC int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
	REAL(int, fstatat64, int, const char *, struct stat64 *, int);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	int r, err = at_attr(dirfd, path, flags, &a, buf, &r);

	if (err == 1)
		return real_fstatat64(dirfd, PL_KPATH(r, path, buf), st, flags);
	if (err)
		return pl_fail(err);
	pl_attr_to_stat(&a, (struct stat *)st);
	return 0;
}

PUBLIC int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
	return fstatat64(dirfd, path, (struct stat64 *)st, flags);
}

PUBLIC int stat64(const char *path, struct stat64 *st)
{
	return fstatat64(AT_FDCWD, path, st, 0);
}

PUBLIC int stat(const char *path, struct stat *st)
{
	return fstatat64(AT_FDCWD, path, (struct stat64 *)st, 0);
}

PUBLIC int lstat64(const char *path, struct stat64 *st)
{
	return fstatat64(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

PUBLIC int lstat(const char *path, struct stat *st)
{
	return fstatat64(AT_FDCWD, path, (struct stat64 *)st,
			 AT_SYMLINK_NOFOLLOW);
}

PUBLIC int fstat64(int fd, struct stat64 *st)
{
	REAL(int, fstat64, int, struct stat64 *);
	struct daxfs_attr a;
	int err;

	if (!pl_fd_is_region(fd))
		return real_fstat64(fd, st);
	err = fd_attr(fd, &a);
	if (err)
		return pl_fail(err);
	pl_attr_to_stat(&a, (struct stat *)st);
	return 0;
}

PUBLIC int fstat(int fd, struct stat *st)
{
	return fstat64(fd, (struct stat64 *)st);
}

/* The stat ABI of binaries built before glibc 2.33. */
PUBLIC int __xstat(int ver, const char *path, struct stat *st)
{
	return stat(path, st);
}

PUBLIC int __xstat64(int ver, const char *path, struct stat64 *st)
{
	return stat64(path, st);
}

PUBLIC int __lxstat(int ver, const char *path, struct stat *st)
{
	return lstat(path, st);
}

PUBLIC int __lxstat64(int ver, const char *path, struct stat64 *st)
{
	return lstat64(path, st);
}

PUBLIC int __fxstat(int ver, int fd, struct stat *st)
{
	return fstat(fd, st);
}

PUBLIC int __fxstat64(int ver, int fd, struct stat64 *st)
{
	return fstat64(fd, st);
}

PUBLIC int __fxstatat(int ver, int dirfd, const char *path, struct stat *st,
		      int flags)
{
	return fstatat(dirfd, path, st, flags);
}

PUBLIC int __fxstatat64(int ver, int dirfd, const char *path,
			struct stat64 *st, int flags)
{
	return fstatat64(dirfd, path, st, flags);
}

static void ts_set(struct statx_timestamp *t, int64_t ns)
{
	int64_t sec;
	long nsec;

	daxfs_ns_to_ts(ns, &sec, &nsec);
	t->tv_sec = sec;
	t->tv_nsec = (uint32_t)nsec;
}

PUBLIC int statx(int dirfd, const char *path, int flags, unsigned int mask,
		 struct statx *sx)
{
	REAL(int, statx, int, const char *, int, unsigned int, struct statx *);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	int r, err = at_attr(dirfd, path, flags, &a, buf, &r);

	if (err == 1)
		return real_statx(dirfd, PL_KPATH(r, path, buf), flags, mask, sx);
	if (err)
		return pl_fail(err);
	memset(sx, 0, sizeof(*sx));
	sx->stx_mask = STATX_BASIC_STATS;
	sx->stx_blksize = 4096;
	sx->stx_nlink = a.nlink;
	sx->stx_uid = a.uid;
	sx->stx_gid = a.gid;
	sx->stx_mode = a.mode;
	sx->stx_ino = a.ino;
	sx->stx_size = a.size;
	sx->stx_blocks = a.blocks * 8;
	ts_set(&sx->stx_atime, a.atime_ns);
	ts_set(&sx->stx_mtime, a.mtime_ns);
	ts_set(&sx->stx_ctime, a.ctime_ns);
	sx->stx_rdev_major = major(a.rdev);
	sx->stx_rdev_minor = minor(a.rdev);
	sx->stx_dev_major = major(pl_dev());
	sx->stx_dev_minor = minor(pl_dev());
	return 0;
}

/* access(2) for region objects: the mode bits against the caller's ids
 * (the library itself checks nothing). */
static int region_access(const struct daxfs_attr *a, int amode, int eff)
{
	uid_t uid = eff ? geteuid() : getuid();
	unsigned int bits;

	if (amode == F_OK)
		return 0;
	if (uid == 0) {
		if ((amode & X_OK) && !S_ISDIR(a->mode) && !(a->mode & 0111))
			return -EACCES;
		return 0;
	}
	if (a->uid == uid)
		bits = a->mode >> 6;
	else if (a->gid == (eff ? getegid() : getgid()))
		bits = a->mode >> 3;
	else
		bits = a->mode;
	return ((bits & 7) & amode) == (unsigned int)amode ? 0 : -EACCES;
}

PUBLIC int faccessat(int dirfd, const char *path, int amode, int flags)
{
	REAL(int, faccessat, int, const char *, int, int);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	int r, err = at_attr(dirfd, path, flags & ~AT_EACCESS, &a, buf, &r);

	if (err == 1)
		return real_faccessat(dirfd, PL_KPATH(r, path, buf), amode,
				      flags);
	if (!err)
		err = region_access(&a, amode, flags & AT_EACCESS);
	return ret_err(err);
}

PUBLIC int access(const char *path, int amode)
{
	return faccessat(AT_FDCWD, path, amode, 0);
}

PUBLIC int euidaccess(const char *path, int amode)
{
	return faccessat(AT_FDCWD, path, amode, AT_EACCESS);
}

PUBLIC int eaccess(const char *path, int amode)
{
	return faccessat(AT_FDCWD, path, amode, AT_EACCESS);
}

PUBLIC int unlinkat(int dirfd, const char *path, int flags)
{
	REAL(int, unlinkat, int, const char *, int);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	int err;
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_unlinkat(dirfd, PL_KPATH(r, path, buf), flags);
	/* "d/." and "d/..": the kernel's answers (route.c pl_dots) */
	err = (flags & AT_REMOVEDIR) ? pl_dots(dirfd, path, -EINVAL, -ENOTEMPTY)
				     : pl_dots(dirfd, path, -EISDIR, -EISDIR);
	if (err)
		return pl_fail(err);
	if (!(flags & AT_REMOVEDIR)) {
		err = daxfs_path_unlink(h, buf);
	} else {
		gone_before(h, buf, &a);
		err = daxfs_path_rmdir(h, buf);
		if (!err)
			gone_after(h, &a);
	}
	if (pl_outside(err, buf))
		return real_unlinkat(dirfd, buf, flags);
	return ret_err(err);
}

PUBLIC int unlink(const char *path)
{
	return unlinkat(AT_FDCWD, path, 0);
}

PUBLIC int rmdir(const char *path)
{
	return unlinkat(AT_FDCWD, path, AT_REMOVEDIR);
}

/* glibc's remove, mkfifo and mkfifoat make their system calls inside
 * libc, where no preload sees them: a region path reached the kernel
 * (ENOENT).  The same calls, through ours. */
PUBLIC int remove(const char *path)
{
	int err;

	if (!unlink(path))
		return 0;
	err = errno;
	/* as glibc: a directory goes with rmdir */
	if (err != EISDIR)
		return -1;
	return rmdir(path);
}

PUBLIC int mkfifoat(int dirfd, const char *path, mode_t mode)
{
	return mknodat(dirfd, path, S_IFIFO | (mode & 07777), 0);
}

PUBLIC int mkfifo(const char *path, mode_t mode)
{
	return mkfifoat(AT_FDCWD, path, mode);
}

PUBLIC int mkdirat(int dirfd, const char *path, mode_t mode)
{
	REAL(int, mkdirat, int, const char *, mode_t);
	char buf[PL_PATH_MAX];
	int err;
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_mkdirat(dirfd, PL_KPATH(r, path, buf), mode);
	err = pl_dots(dirfd, path, -EEXIST, -EEXIST);
	if (err)
		return pl_fail(err);
	/* as the kernel's mkdir: S_ISGID comes from the parent (the core
	 * adds it, with the parent's group), never from mode */
	mode &= ~pl_umask() & 01777;
	err = daxfs_path_mkdir(h, buf, mode);
	if (pl_outside(err, buf))
		return real_mkdirat(dirfd, buf, mode);
	return ret_err(err);
}

PUBLIC int mkdir(const char *path, mode_t mode)
{
	return mkdirat(AT_FDCWD, path, mode);
}

PUBLIC int mknodat(int dirfd, const char *path, mode_t mode, dev_t dev)
{
	REAL(int, mknodat, int, const char *, mode_t, dev_t);
	char buf[PL_PATH_MAX];
	int err;
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_mknodat(dirfd, PL_KPATH(r, path, buf), mode, dev);
	err = pl_dots(dirfd, path, -EEXIST, -EEXIST);
	if (err)
		return pl_fail(err);
	err = daxfs_path_mknod(h, buf, (mode & S_IFMT) |
			       (mode & ~pl_umask() & 07777), dev);
	if (pl_outside(err, buf))
		return real_mknodat(dirfd, buf, mode, dev);
	return ret_err(err);
}

PUBLIC int mknod(const char *path, mode_t mode, dev_t dev)
{
	return mknodat(AT_FDCWD, path, mode, dev);
}

/* The error of a two-path call in the region: a path whose walk left the
 * region (pl_outside) names a kernel file, and a call across the two is
 * EXDEV, as between two filesystems (mv then copies).  0 stays 0. */
static int fail2(int err)
{
	if (err == -DAXFS_EOUTSIDE)
		err = -EXDEV;
	return ret_err(err);
}

/*
 * A two-path call's region error err: -DAXFS_EOUTSIDE when a walk left
 * the region.  When both paths lead out (their walks as lstat's: a final
 * name is not followed), b1 and b2 become their kernel paths, for the
 * call to be made there: 1.  Else 0 (one in the region: fail2's EXDEV).
 */
static int both_outside(struct daxfs_handle *h, int err, char *b1, char *b2)
{
	char k1[PL_PATH_MAX];
	struct daxfs_attr a;

	if (err != -DAXFS_EOUTSIDE ||
	    !pl_outside(daxfs_path_lstat(h, b1, &a), k1) ||
	    !pl_outside(daxfs_path_lstat(h, b2, &a), b2))
		return 0;
	strcpy(b1, k1);
	return 1;
}

/* Two-path calls: both in the region, both in the kernel, or EXDEV.
 * *self1: the old path is a removed directory itself (pl_self).  An
 * empty path is ENOENT, as the kernel's getname says, not a route: the
 * old one at once (unless empty1_ok: AT_EMPTY_PATH), the new one after
 * the old path's parent resolved, never EXDEV. */
static int route2(int d1, const char *p1, char *b1, int d2, const char *p2,
		  char *b2, int *r1, int *r2, struct pl_self *self1,
		  bool empty1_ok)
{
	int err;

	self1->on = false;
	*r2 = PL_KERNEL;
	if (!p1[0] && !empty1_ok) {
		*r1 = -1;
		return pl_fail(-ENOENT);
	}
	*r1 = pl_route(d1, p1, b1);
	if (*r1 < 0)
		return -1;
	self1->on = pl_self.on;
	if (pl_self.on) {
		self1->ino = pl_self.ino;
		self1->g = pl_self.g;
	}
	*r2 = p2[0] ? pl_route(d2, p2, b2) : pl_fail(-ENOENT);
	if (*r2 < 0) {
		/* the kernel resolves the old path's parent first */
		err = errno;
		if (*r1 == PL_REGION && (err = -pl_parent_err(d1, p1)) <= 0)
			err = errno;
		errno = err;
		return -1;
	}
	if ((*r1 == PL_REGION) != (*r2 == PL_REGION))
		return pl_fail(-EXDEV);
	return *r1 == PL_REGION;
}

/*
 * The region path x, physically (dir.c pl_region_resolve): with name, the
 * object x names (its parent resolved, its last name not followed, as a
 * rename takes it); without, its parent directory.  0, or an error (a
 * link out of the region: -DAXFS_EOUTSIDE).
 */
static int physical(struct daxfs_handle *h, const char *x, bool name,
		    char *out)
{
	char parent[PL_PATH_MAX];
	size_t n = pl_parent_len(x), end = strlen(x), p;
	struct daxfs_attr a;
	int err;

	while (end > n && x[end - 1] == '/')
		end--;
	p = n > 1 ? n - 1 : n;
	memcpy(parent, x, p);
	strcpy(parent + p, p ? "" : "/");
	/* one walk: a parent reached without a link is its own path */
	err = daxfs_path_stat(h, parent, &a);
	if (!err && daxfs_path_links_followed())
		err = pl_region_resolve(h, parent, out);
	else if (!err)
		strcpy(out, parent);
	if (err || !name || end == n)
		return err;
	if (strlen(out) + 1 + (end - n) >= PL_PATH_MAX)
		return -ENAMETOOLONG;
	if (out[1])
		strcat(out, "/");
	strncat(out, x + n, end - n);
	return 0;
}

/*
 * Whether the object region path anc names is the directory region path
 * path lies in, or one above it, as the kernel's lock_rename finds its
 * trap: by the directories themselves, so through symlinks too (a link
 * "c" to "." below a directory puts "c/x" in it).  Until 2026-12-05 the
 * paths were compared as written, and a link in between hid the relation
 * (the kernel's EINVAL or ENOTEMPTY became ENOTDIR or EISDIR: the
 * differential test's seeds 1141 and 942 of 1,500).
 */
static int below(struct daxfs_handle *h, const char *anc, const char *path)
{
	char a[PL_PATH_MAX], p[PL_PATH_MAX];
	size_t n;

	if (physical(h, anc, true, a) || physical(h, path, false, p))
		return 0;
	n = strlen(a);
	if (n == 1)
		return 1;		/* "/": every path's */
	return !strncmp(a, p, n) && (!p[n] || p[n] == '/');
}

/* Whether the last name of path is longer than a name may be. */
static bool last_too_long(const char *path)
{
	size_t end = strlen(path), start;

	while (end > 1 && path[end - 1] == '/')
		end--;
	for (start = end; start && path[start - 1] != '/'; start--)
		;
	return end - start > DAXFS_NAME_MAX;
}

/* What the kernel checks first on a rename: both parents resolve to
 * directories, then the old name (old: never followed, its attributes
 * into *a; ENOENT comes before the new name's ENAMETOOLONG), then the
 * new name's lookup (ENAMETOOLONG before a trailing slash's ENOTDIR and
 * the subdirectory checks).  0: they pass. */
static int rename_names_err(struct daxfs_handle *h, int d1, const char *p1,
			    int d2, const char *p2, const char *old,
			    struct daxfs_attr *a)
{
	int err = pl_parent_err(d1, p1);

	if (!err)
		err = pl_parent_err(d2, p2);
	if (!err)
		err = daxfs_path_lstat(h, old, a);
	return !err && last_too_long(p2) ? -ENAMETOOLONG : err;
}

/* The name itself, never followed, of region path src: "l/" is the
 * link l.  dst holds PL_PATH_MAX bytes. */
static void name_itself(char *dst, const char *src)
{
	size_t n;

	snprintf(dst, PL_PATH_MAX, "%s", src);
	for (n = strlen(dst); n > 1 && dst[n - 1] == '/'; )
		dst[--n] = 0;
}

/*
 * The kernel's look at the new name of a renameat2 with flags, right
 * after the old name's: RENAME_NOREPLACE and a name there is EEXIST; an
 * exchange with none is ENOENT, and with a non-directory named "f/" is
 * ENOTDIR.  new: the region path, never followed.
 */
static int rename_new_err(struct daxfs_handle *h, const char *new,
			  unsigned int flags)
{
	char name[PL_PATH_MAX];
	struct daxfs_attr a;
	int err;

	name_itself(name, new);
	err = daxfs_path_lstat(h, name, &a);
	if (flags & RENAME_NOREPLACE)
		return err == -ENOENT ? 0 : err ?: -EEXIST;
	if (err)
		return err;
	return !S_ISDIR(a.mode) && new[strlen(new) - 1] == '/' ? -ENOTDIR : 0;
}

/* renameat2 of region paths b1 to b2 (p1, p2 as the program wrote them):
 * 0 or -errno (-DAXFS_EOUTSIDE: a walk left the region). */
static int rename_region(struct daxfs_handle *h, int d1, const char *p1,
			 char *b1, int d2, const char *p2, char *b2,
			 unsigned int flags)
{
	char old[PL_PATH_MAX];
	struct daxfs_attr a, gone;
	int err;

	name_itself(old, b1);
	/* a dot, either side, is EBUSY (EEXIST as a target that must not
	 * be replaced), once both parents resolve (route.c pl_dots) */
	if (pl_last_dots(p1) || pl_last_dots(p2)) {
		err = pl_parent_err(d1, p1);
		if (!err)
			err = pl_parent_err(d2, p2);
		if (!err)
			err = !pl_last_dots(p1) && (flags & RENAME_NOREPLACE) ?
			      -EEXIST : -EBUSY;
		return err;
	}
	/* the new name as the kernel looks it up, before the checks below:
	 * NOREPLACE's EEXIST, an exchange's missing or non-directory peer */
	if (flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)) {
		err = rename_names_err(h, d1, p1, d2, p2, old, &a);
		if (!err)
			err = rename_new_err(h, b2, flags);
		if (err)
			return err;
	}
	/* a trailing slash asks for a directory: the kernel does not rename
	 * a file named "f/" or "f" to "g/" (an exchange looked at the new
	 * name's above) */
	if (b1[strlen(b1) - 1] == '/' ||
	    (!(flags & RENAME_EXCHANGE) && b2[strlen(b2) - 1] == '/')) {
		err = rename_names_err(h, d1, p1, d2, p2, old, &a);
		if (!err && !S_ISDIR(a.mode))
			err = -ENOTDIR;
		if (err)
			return err;
	}
	/* a directory into itself or below: EINVAL, and onto an ancestor
	 * of the old name: ENOTEMPTY (EINVAL for an exchange), before the
	 * types count, as in the kernel (below: one walk per path when no
	 * link is on the way) */
	if (below(h, b2, old))
		return rename_names_err(h, d1, p1, d2, p2, old, &a) ?:
		       (flags & RENAME_EXCHANGE) ? -EINVAL : -ENOTEMPTY;
	if (below(h, old, b2)) {
		err = rename_names_err(h, d1, p1, d2, p2, old, &a);
		if (err || S_ISDIR(a.mode))
			return err ?: -EINVAL;
	}
	/* a directory the new name named goes (not with an exchange) */
	if (flags & RENAME_EXCHANGE)
		gone.ino = 0;
	else
		gone_before(h, b2, &gone);
	err = daxfs_path_rename(h, b1, b2, flags);
	/* refused: the kernel's error is the first of its order */
	if (err)
		err = rename_names_err(h, d1, p1, d2, p2, old, &a) ?: err;
	else
		gone_after(h, &gone);
	return err;
}

PUBLIC int renameat2(int d1, const char *p1, int d2, const char *p2,
		     unsigned int flags)
{
	REAL(int, renameat2, int, const char *, int, const char *,
	     unsigned int);
	char b1[PL_PATH_MAX], b2[PL_PATH_MAX], old[PL_PATH_MAX];
	struct daxfs_handle *h;
	struct daxfs_attr a;
	struct pl_self self1;
	int r1, r2, err, k = route2(d1, p1, b1, d2, p2, b2, &r1, &r2, &self1,
					    false);

	/* a name in a removed directory routes nowhere (ENOENT), but its
	 * parent, the removed directory, resolves (route.c gone_rel): the
	 * kernel's errors of both parents, of a dot and of the old name
	 * (when that one routed) come first */
	if (k < 0 && errno == ENOENT && p1[0] && p2[0]) {
		err = pl_parent_err(d1, p1);
		if (!err)
			err = pl_parent_err(d2, p2);
		if (!err && (pl_last_dots(p1) || pl_last_dots(p2)))
			err = !pl_last_dots(p1) && (flags & RENAME_NOREPLACE) ?
			      -EEXIST : -EBUSY;
		if (!err && r1 == PL_REGION && (h = pl_handle())) {
			name_itself(old, b1);
			err = daxfs_path_lstat(h, old, &a);
		}
		return pl_fail(err ?: -ENOENT);
	}
	if (k < 0)
		return -1;
	if (!k)
		return real_renameat2(d1, PL_KPATH(r1, p1, b1), d2,
				      PL_KPATH(r2, p2, b2), flags);
	h = pl_handle();
	if (!h)
		return -1;
	err = rename_region(h, d1, p1, b1, d2, p2, b2, flags);
	if (both_outside(h, err, b1, b2))
		return real_renameat2(AT_FDCWD, b1, AT_FDCWD, b2, flags);
	return fail2(err);
}

PUBLIC int renameat(int d1, const char *p1, int d2, const char *p2)
{
	return renameat2(d1, p1, d2, p2, 0);
}

PUBLIC int rename(const char *p1, const char *p2)
{
	return renameat2(AT_FDCWD, p1, AT_FDCWD, p2, 0);
}

/*
 * The kernel looks a new name up before it refuses to link a directory
 * (EPERM) or a name with a trailing slash (ENOENT): an existing one is
 * EEXIST (trailing slash or not), a missing or non-directory parent its
 * own error.  0: the call may go on.
 */
static int new_name_err(struct daxfs_handle *h, const char *rpath)
{
	char name[PL_PATH_MAX];
	struct daxfs_attr a;
	size_t n;
	int err;

	snprintf(name, sizeof(name), "%s", rpath);
	n = strlen(name);
	while (n > 1 && name[n - 1] == '/')
		name[--n] = 0;
	err = daxfs_path_lstat(h, name, &a);
	if (!err)
		return -EEXIST;
	if (err != -ENOENT)
		return err;
	/* ENOENT: of the name or of its parent? */
	return pl_region_parent(h, name, &a);
}

/*
 * linkat with AT_SYMLINK_FOLLOW links what a symlink names: region path
 * path (PL_PATH_MAX bytes) becomes the name at the end of its chain of
 * symlinks, each target taken from the link's directory (an absolute one
 * from the region's root, as the preload resolves them).  Until
 * 2026-12-05 a symlink there was EOPNOTSUPP, where Linux links the file
 * (found by the two-host differential test's seed 524).
 */
static int follow_links(struct daxfs_handle *h, char *path)
{
	char tgt[PL_PATH_MAX], next[PL_PATH_MAX];
	struct daxfs_attr a;
	int hops, n, err;
	char *slash;

	for (hops = 0; hops < 40; hops++) {
		err = daxfs_path_lstat(h, path, &a);
		if (err || !S_ISLNK(a.mode))
			return err;
		err = daxfs_link_may_follow(h, path);
		if (err)
			return err;
		/* NUL-terminated, cut to the buffer */
		n = daxfs_path_readlink(h, path, tgt, sizeof(tgt));
		if (n < 0)
			return n;
		err = daxfs_link_outside(h, tgt, strlen(tgt), NULL);
		if (err)
			return err;	/* a kernel file: EXDEV (fail2) */
		daxfs_link_in_region(h, tgt, strlen(tgt));
		slash = strrchr(path, '/');
		if (tgt[0] == '/' || !slash)
			n = snprintf(next, sizeof(next), "%s", tgt);
		else
			n = snprintf(next, sizeof(next), "%.*s/%s",
				     (int)(slash - path), path, tgt);
		if (n >= (int)sizeof(next))
			return -ENAMETOOLONG;
		memcpy(path, next, n + 1);
	}
	return -ELOOP;
}

/*
 * linkat(AT_SYMLINK_FOLLOW) of "/proc/self/fd/N" (fdlink.c): a new name
 * for N's file, found by its number, as long as it has a name left (the
 * kernel's vfs_link: ENOENT at none).
 */
static int link_fd(int fd, int d2, const char *p2)
{
	char b2[PL_PATH_MAX];
	struct daxfs_handle *h;
	struct daxfs_attr a;
	int r = p2[0] ? pl_route(d2, p2, b2) : pl_fail(-ENOENT), err;

	if (r < 0)
		return -1;
	if (r != PL_REGION)
		return pl_fail(-EXDEV);
	h = pl_handle();
	if (!h)
		return -1;
	err = fd_attr(fd, &a) ?: pl_dots(d2, p2, -EEXIST, -EEXIST);
	if (!err && b2[strlen(b2) - 1] == '/')
		err = new_name_err(h, b2) ?: -ENOENT;
	if (!err && S_ISDIR(a.mode))
		err = new_name_err(h, b2) ?: -EPERM;
	/* no name left: an O_TMPFILE open without O_EXCL may give it its
	 * first (open.c open_tmpfile), as the kernel's I_LINKABLE */
	if (!err && !a.nlink && !pl_fd_linkable(fd, false))
		err = new_name_err(h, b2) ?: -ENOENT;	/* the new name's first */
	err = err ?: daxfs_link_open(h, a.ino, b2);
	if (!err && !a.nlink)
		pl_fd_linkable(fd, true);	/* named once: no more */
	return ret_err(err);
}

/* linkat of region paths b1 to b2 (p2 as the program wrote it): 0 or
 * -errno (-DAXFS_EOUTSIDE: a walk left the region). */
static int link_region(struct daxfs_handle *h, const char *b1, int d2,
		       const char *p2, const char *b2, int flags)
{
	char old[PL_PATH_MAX];
	struct daxfs_attr a;
	int err;

	if (flags & AT_SYMLINK_FOLLOW) {
		/* Link what the symlink names: resolve it first. */
		strcpy(old, b1);
		err = daxfs_path_stat(h, old, &a);
		if (!err)
			err = follow_links(h, old);
		if (err)
			return err;
		b1 = old;
	}
	/* the kernel looks the old path up first, then the new one */
	err = daxfs_path_lstat(h, b1, &a);
	if (!err)
		err = pl_dots(d2, p2, -EEXIST, -EEXIST);
	if (!err && S_ISDIR(a.mode))
		err = new_name_err(h, b2);
	/* a new name with a trailing slash: EEXIST where it exists, else
	 * its parent's error or ENOENT (never a link named "f") */
	if (!err && b2[strlen(b2) - 1] == '/') {
		err = new_name_err(h, b2);
		if (!err)
			err = -ENOENT;
	}
	return err ?: daxfs_path_link(h, b1, b2);
}

PUBLIC int linkat(int d1, const char *p1, int d2, const char *p2, int flags)
{
	REAL(int, linkat, int, const char *, int, const char *, int);
	char b1[PL_PATH_MAX], b2[PL_PATH_MAX];
	struct daxfs_handle *h;
	struct daxfs_attr a;
	struct pl_self self1;
	int r1, r2, err, k;

	if ((flags & AT_SYMLINK_FOLLOW) && (k = pl_fd_link_exact(p1)) >= 0)
		return link_fd(k, d2, p2);
	/* linkat(fd, "", AT_EMPTY_PATH) of a region file: the same */
	if ((flags & AT_EMPTY_PATH) && !p1[0] && pl_fd_is_region(d1))
		return link_fd(d1, d2, p2);
	k = route2(d1, p1, b1, d2, p2, b2, &r1, &r2, &self1,
		   flags & AT_EMPTY_PATH);

	if (k < 0) {
		/* the kernel looks the old path up before the new one: a
		 * missing old name is ENOENT even where the new path fails */
		err = errno;
		if (r1 == PL_REGION && !self1.on && (h = pl_handle()) &&
		    (k = (flags & AT_SYMLINK_FOLLOW) ? daxfs_path_stat(h, b1, &a)
						     : daxfs_path_lstat(h, b1, &a)))
			return pl_fail(k);
		errno = err;
		return -1;
	}
	if (!k)
		return real_linkat(d1, PL_KPATH(r1, p1, b1), d2,
				   PL_KPATH(r2, p2, b2), flags);
	h = pl_handle();
	if (!h)
		return -1;
	/* "." of a removed directory: a directory, which the kernel
	 * refuses (EPERM) once the new name passes its checks */
	if (self1.on) {
		pl_gone_attr(self1.ino, &self1.g, &a);
		err = pl_dots(d2, p2, -EEXIST, -EEXIST) ?: new_name_err(h, b2);
		if (!err && b2[strlen(b2) - 1] == '/')
			err = -ENOENT;
		return fail2(err ?: -EPERM);
	}
	err = link_region(h, b1, d2, p2, b2, flags);
	if (both_outside(h, err, b1, b2))
		return real_linkat(AT_FDCWD, b1, AT_FDCWD, b2, flags);
	return fail2(err);
}

PUBLIC int link(const char *p1, const char *p2)
{
	return linkat(AT_FDCWD, p1, AT_FDCWD, p2, 0);
}

PUBLIC int symlinkat(const char *target, int dirfd, const char *path)
{
	REAL(int, symlinkat, const char *, int, const char *);
	char buf[PL_PATH_MAX];
	int err;
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_symlinkat(target, dirfd, PL_KPATH(r, path, buf));
	err = pl_dots(dirfd, path, -EEXIST, -EEXIST);
	if (err)
		return pl_fail(err);
	/* "name/" is EEXIST where name exists, else ENOENT */
	if (buf[strlen(buf) - 1] == '/')
		return pl_fail(new_name_err(h, buf) ?: -ENOENT);
	err = daxfs_path_symlink(h, target, buf);
	if (pl_outside(err, buf))
		return real_symlinkat(target, dirfd, buf);
	return ret_err(err);
}

PUBLIC int symlink(const char *target, const char *path)
{
	return symlinkat(target, AT_FDCWD, path);
}

PUBLIC ssize_t readlinkat(int dirfd, const char *path, char *out, size_t size)
{
	REAL(ssize_t, readlinkat, int, const char *, char *, size_t);
	char buf[PL_PATH_MAX], tgt[PL_PATH_MAX];
	int n;
	/* the kernel takes an int, and no room is no call: before it
	 * looks at the path */
	if (!size || size > INT_MAX)
		return pl_fail(-EINVAL);
	n = pl_fd_link_exact(path);
	if (n >= 0 || (pl_cwd_link(path) && !*pl_cwd_link(path))) {
		n = n >= 0 ? pl_fd_link_target(n, tgt, sizeof(tgt))
			   : pl_cwd_link_target(tgt, sizeof(tgt));
		if (n < 0)
			return -1;
		n = (size_t)n > size ? (int)size : n;
		memcpy(out, tgt, n);
		return n;
	}
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_readlinkat(dirfd, PL_KPATH(r, path, buf), out, size);
	if (pl_self.on)
		return pl_fail(-EINVAL);	/* a removed directory: no link */
	n = daxfs_path_readlink(h, buf, tgt, sizeof(tgt));
	if (pl_outside(n, buf))
		return real_readlinkat(dirfd, buf, out, size);
	if (n < 0)
		return pl_fail(n);
	if ((size_t)n > size)
		n = size;
	memcpy(out, tgt, n);
	return n;
}

PUBLIC ssize_t readlink(const char *path, char *out, size_t size)
{
	return readlinkat(AT_FDCWD, path, out, size);
}

/* _FORTIFY_SOURCE forms. */
PUBLIC ssize_t __readlinkat_chk(int dirfd, const char *path, char *out,
				size_t size, size_t outlen)
{
	if (size > outlen)
		abort();
	return readlinkat(dirfd, path, out, size);
}

PUBLIC ssize_t __readlink_chk(const char *path, char *out, size_t size,
			      size_t outlen)
{
	return __readlinkat_chk(AT_FDCWD, path, out, size, outlen);
}

/* truncate of "/proc/self/fd/N" (fdlink.c): N's file by its number,
 * whatever N's access mode (truncate asks the file, not the open) */
static int fd_truncate(int fd, off_t len)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_attr a;
	int err;

	if (!h)
		return -1;
	err = fd_attr(fd, &a);
	if (!err && S_ISDIR(a.mode))
		err = -EISDIR;
	if (!err && pl_fsize_limited())
		err = pl_fsize_grow(a.size, len);
	if (!err)
		err = daxfs_ftruncate(h, a.ino, len);
	return ret_err(err);
}

PUBLIC int truncate64(const char *path, off_t len)
{
	REAL(int, truncate64, const char *, off_t);
	char buf[PL_PATH_MAX];
	int fd, err;
	/* the kernel checks the length before the path */
	if (len < 0)
		return pl_fail(-EINVAL);
	fd = pl_fd_link_exact(path);
	if (fd >= 0)
		return fd_truncate(fd, len);
	ROUTE_OR_KERNEL(AT_FDCWD, path, buf, r, h);

	if (r != PL_REGION)
		return real_truncate64(PL_KPATH(r, path, buf), len);
	if (pl_self.on)
		return pl_fail(-EISDIR);	/* a removed directory */
	err = 0;
	if (pl_fsize_limited()) {
		struct daxfs_attr st;

		err = daxfs_path_stat(h, buf, &st);
		if (!err)
			err = pl_fsize_grow(st.size, len);
	}
	if (!err)
		err = daxfs_path_truncate(h, buf, len);
	if (pl_outside(err, buf))
		return real_truncate64(buf, len);
	return ret_err(err);
}

PUBLIC int truncate(const char *path, off_t len)
{
	return truncate64(path, len);
}

/* Attribute changes by inode for a region descriptor. */
static int fd_setattr(int fd, uint32_t valid, const struct daxfs_attr *a)
{
	struct daxfs_handle *h = pl_handle();
	struct pl_gone g;
	struct pl_desc *d;
	uint64_t ino;
	int err;

	if (!h)
		return -1;
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	if (pl_gone_load(d, &g)) {
		ino = d->ino;
		pl_fd_put(d);
		return ret_err(gone_setattr(ino, g, valid, a));
	}
	err = daxfs_setattr(daxfs_handle_fs(h), d->ino, valid, a);
	pl_fd_put(d);
	return ret_err(err);
}

PUBLIC int fchmodat(int dirfd, const char *path, mode_t mode, int flags)
{
	REAL(int, fchmodat, int, const char *, mode_t, int);
	char buf[PL_PATH_MAX];
	int fd = flags & AT_SYMLINK_NOFOLLOW ? -1 : pl_fd_link_exact(path);
	int err;

	if (fd >= 0)
		return fchmod(fd, mode);	/* by the open file (fdlink.c) */
	ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

	if (r != PL_REGION)
		return real_fchmodat(dirfd, PL_KPATH(r, path, buf), mode, flags);
	if (flags & ~AT_SYMLINK_NOFOLLOW)
		return pl_fail(-EINVAL);
	/* glibc: a symlink's mode cannot change (EOPNOTSUPP), anything
	 * else's does (lchmod, chmod -h) */
	if (pl_self.on) {
		struct daxfs_attr a = { .mode = mode };

		return ret_err(gone_setattr(pl_self.ino, pl_self.g,
					    DAXFS_ATTR_MODE | DAXFS_ATTR_CTIME,
					    &a));
	}
	err = 0;
	if (flags & AT_SYMLINK_NOFOLLOW) {
		struct daxfs_attr a;

		err = daxfs_path_lstat(h, buf, &a);
		if (!err && S_ISLNK(a.mode))
			err = -EOPNOTSUPP;
	}
	if (!err)
		err = daxfs_path_chmod(h, buf, mode & 07777);
	if (pl_outside(err, buf))
		return real_fchmodat(dirfd, buf, mode, flags);
	return ret_err(err);
}

PUBLIC int chmod(const char *path, mode_t mode)
{
	return fchmodat(AT_FDCWD, path, mode, 0);
}

/* glibc's lchmod calls fchmodat with its internal call */
PUBLIC int lchmod(const char *path, mode_t mode)
{
	return fchmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW);
}

PUBLIC int fchmod(int fd, mode_t mode)
{
	REAL(int, fchmod, int, mode_t);
	struct daxfs_attr a;
	int err;

	if (!pl_fd_is_region(fd))
		return real_fchmod(fd, mode);
	err = fd_attr(fd, &a);
	if (err)
		return pl_fail(err);
	a.mode = (a.mode & S_IFMT) | (mode & 07777);
	return fd_setattr(fd, DAXFS_ATTR_MODE | DAXFS_ATTR_CTIME, &a);
}

PUBLIC int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid,
		    int flags)
{
	REAL(int, fchownat, int, const char *, uid_t, gid_t, int);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	uint32_t valid = (uid != (uid_t)-1 ? DAXFS_ATTR_UID : 0) |
			 (gid != (gid_t)-1 ? DAXFS_ATTR_GID : 0) |
			 DAXFS_ATTR_CTIME | DAXFS_ATTR_CHOWN;
	int fd;

	a.uid = uid;
	a.gid = gid;
	if (!path[0] && (flags & AT_EMPTY_PATH) &&
	    pl_fd_is_region(dirfd))
		return fd_setattr(dirfd, valid, &a);
	fd = flags & AT_SYMLINK_NOFOLLOW ? -1 : pl_fd_link_exact(path);
	if (fd >= 0)
		return fd_setattr(fd, valid, &a);	/* fdlink.c */
	{
		ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

		if (r != PL_REGION)
			return real_fchownat(dirfd, PL_KPATH(r, path, buf), uid,
					     gid, flags);
		if (pl_self.on)
			return ret_err(gone_setattr(pl_self.ino, pl_self.g,
						    valid, &a));
		fd = (flags & AT_SYMLINK_NOFOLLOW) ?
		     daxfs_path_lchown(h, buf, uid, gid) :
		     daxfs_path_chown(h, buf, uid, gid);
		if (pl_outside(fd, buf))
			return real_fchownat(dirfd, buf, uid, gid, flags);
		return ret_err(fd);
	}
}

PUBLIC int chown(const char *path, uid_t uid, gid_t gid)
{
	return fchownat(AT_FDCWD, path, uid, gid, 0);
}

PUBLIC int lchown(const char *path, uid_t uid, gid_t gid)
{
	return fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW);
}

PUBLIC int fchown(int fd, uid_t uid, gid_t gid)
{
	REAL(int, fchown, int, uid_t, gid_t);

	if (!pl_fd_is_region(fd))
		return real_fchown(fd, uid, gid);
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH);
}

static int64_t ts_ns(const struct timespec *t, int which)
{
	if (!t || t[which].tv_nsec == UTIME_NOW)
		return DAXFS_UTIME_NOW;
	if (t[which].tv_nsec == UTIME_OMIT)
		return DAXFS_UTIME_OMIT;
	return daxfs_timespec_to_ns(&t[which]);
}

/* The attributes a utimens call with times t (NULL: now) sets. */
static uint32_t times_attr(const struct timespec t[2], struct daxfs_attr *a)
{
	struct timespec now;
	uint32_t valid = DAXFS_ATTR_CTIME;
	int64_t v[2];
	int i;

	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < 2; i++) {
		v[i] = ts_ns(t, i);
		if (v[i] == DAXFS_UTIME_NOW)
			v[i] = daxfs_timespec_to_ns(&now);
		if (v[i] != DAXFS_UTIME_OMIT)
			valid |= i ? DAXFS_ATTR_MTIME : DAXFS_ATTR_ATIME;
	}
	memset(a, 0, sizeof(*a));
	a->atime_ns = v[0];
	a->mtime_ns = v[1];
	a->ctime_ns = daxfs_timespec_to_ns(&now);
	return valid;
}

/* mtime and ctime of ino to now, as a truncate that changes no size
 * sets them (open's O_TRUNC, ftruncate): 0 or -errno. */
int pl_ino_touch(struct daxfs_handle *h, uint64_t ino)
{
	static const struct timespec t[2] = { { .tv_nsec = UTIME_OMIT },
					      { .tv_nsec = UTIME_NOW } };
	struct daxfs_attr a;
	uint32_t valid = times_attr(t, &a);

	return daxfs_setattr(daxfs_handle_fs(h), ino, valid, &a);
}

/* Times of a symlink itself: by inode (the path call follows it). */
static int link_times(struct daxfs_handle *h, uint64_t ino,
		      const struct timespec t[2])
{
	struct daxfs_attr a;
	uint32_t valid = times_attr(t, &a);

	return ret_err(daxfs_setattr(daxfs_handle_fs(h), ino, valid, &a));
}

PUBLIC int utimensat(int dirfd, const char *path, const struct timespec t[2],
		     int flags)
{
	REAL(int, utimensat, int, const char *, const struct timespec *, int);
	char buf[PL_PATH_MAX];
	int fd = flags & AT_SYMLINK_NOFOLLOW ? -1 : pl_fd_link_exact(path);

	if (fd >= 0)
		return futimens(fd, t);		/* by the open file (fdlink.c) */

	{
		ROUTE_OR_KERNEL(dirfd, path, buf, r, h);

		if (r != PL_REGION)
			return real_utimensat(dirfd, PL_KPATH(r, path, buf), t,
					      flags);
		if (pl_self.on) {
			struct daxfs_attr a;
			uint32_t valid = times_attr(t, &a);

			return ret_err(gone_setattr(pl_self.ino, pl_self.g,
						    valid, &a));
		}
		fd = 0;
		if (flags & AT_SYMLINK_NOFOLLOW) {
			struct daxfs_attr a;

			fd = daxfs_path_lstat(h, buf, &a);
			if (!fd && S_ISLNK(a.mode))
				return link_times(h, a.ino, t);
		}
		if (!fd)
			fd = daxfs_path_utimens(h, buf, ts_ns(t, 0),
						ts_ns(t, 1));
		if (pl_outside(fd, buf))
			return real_utimensat(dirfd, buf, t, flags);
		return ret_err(fd);
	}
}

PUBLIC int futimens(int fd, const struct timespec t[2])
{
	REAL(int, futimens, int, const struct timespec *);
	struct daxfs_attr a;
	uint32_t valid;

	if (!pl_fd_is_region(fd))
		return real_futimens(fd, t);
	/* by the open file's inode: the name it was opened by may name
	 * another file by now, or none */
	valid = times_attr(t, &a);
	return fd_setattr(fd, valid, &a);
}

PUBLIC int utimes(const char *path, const struct timeval tv[2])
{
	struct timespec t[2];

	if (!tv)
		return utimensat(AT_FDCWD, path, NULL, 0);
	t[0].tv_sec = tv[0].tv_sec;
	t[0].tv_nsec = tv[0].tv_usec * 1000;
	t[1].tv_sec = tv[1].tv_sec;
	t[1].tv_nsec = tv[1].tv_usec * 1000;
	return utimensat(AT_FDCWD, path, t, 0);
}

PUBLIC int utime(const char *path, const struct utimbuf *u)
{
	struct timespec t[2];

	if (!u)
		return utimensat(AT_FDCWD, path, NULL, 0);
	t[0].tv_sec = u->actime;
	t[0].tv_nsec = 0;
	t[1].tv_sec = u->modtime;
	t[1].tv_nsec = 0;
	return utimensat(AT_FDCWD, path, t, 0);
}

static void fill_statfs(struct daxfs_handle *h, struct statfs *s)
{
	struct daxfs_statfs st = { 0 };

	daxfs_region_statfs(h, &st);
	memset(s, 0, sizeof(*s));
	s->f_type = 0xdaf5;
	s->f_bsize = 4096;
	s->f_frsize = 4096;
	s->f_blocks = st.pool_bytes / 4096;
	s->f_bfree = st.free_bytes / 4096;
	s->f_bavail = daxfs_statfs_avail_blocks(&st);
	s->f_files = st.nr_buckets;
	s->f_ffree = st.nr_buckets - st.used_buckets;
	s->f_namelen = DAXFS_NAME_MAX;
}

PUBLIC int statfs(const char *path, struct statfs *s)
{
	REAL(int, statfs, const char *, struct statfs *);
	char buf[PL_PATH_MAX];
	struct daxfs_attr a;
	int err = pl_fd_link_exact(path);

	if (err >= 0)
		return fstatfs(err, s);		/* fdlink.c */
	ROUTE_OR_KERNEL(AT_FDCWD, path, buf, r, h);

	if (r != PL_REGION)
		return real_statfs(PL_KPATH(r, path, buf), s);
	err = pl_self.on ? 0 : daxfs_path_stat(h, buf, &a);
	if (pl_outside(err, buf))
		return real_statfs(buf, s);
	if (err)
		return pl_fail(err);
	fill_statfs(h, s);
	return 0;
}

PUBLIC int fstatfs(int fd, struct statfs *s)
{
	REAL(int, fstatfs, int, struct statfs *);
	struct daxfs_handle *h;

	if (!pl_fd_is_region(fd))
		return real_fstatfs(fd, s);
	h = pl_handle();
	if (!h)
		return -1;
	fill_statfs(h, s);
	return 0;
}

/* glibc's statvfs goes through its internal statfs. */
static void to_statvfs(const struct statfs *f, struct statvfs *v)
{
	memset(v, 0, sizeof(*v));
	v->f_bsize = f->f_bsize;
	v->f_frsize = f->f_frsize;
	v->f_blocks = f->f_blocks;
	v->f_bfree = f->f_bfree;
	v->f_bavail = f->f_bavail;
	v->f_files = f->f_files;
	v->f_ffree = f->f_ffree;
	v->f_favail = f->f_ffree;
	v->f_namemax = f->f_namelen;
}

PUBLIC int statvfs(const char *path, struct statvfs *v)
{
	REAL(int, statvfs, const char *, struct statvfs *);
	char buf[PL_PATH_MAX];
	struct statfs f;
	int r = pl_route_follow(AT_FDCWD, path, buf);

	if (r < 0)
		return -1;
	if (r != PL_REGION)
		return real_statvfs(PL_KPATH(r, path, buf), v);
	if (statfs(path, &f))
		return -1;
	to_statvfs(&f, v);
	return 0;
}

PUBLIC int fstatvfs(int fd, struct statvfs *v)
{
	REAL(int, fstatvfs, int, struct statvfs *);
	struct statfs f;

	if (!pl_fd_is_region(fd))
		return real_fstatvfs(fd, v);
	if (fstatfs(fd, &f))
		return -1;
	to_statvfs(&f, v);
	return 0;
}

PUBLIC int statvfs64(const char *path, struct statvfs64 *v)
{
	return statvfs(path, (struct statvfs *)v);
}

PUBLIC int fstatvfs64(int fd, struct statvfs64 *v)
{
	return fstatvfs(fd, (struct statvfs *)v);
}

PUBLIC int statfs64(const char *path, struct statfs64 *s)
{
	return statfs(path, (struct statfs *)s);
}

PUBLIC int fstatfs64(int fd, struct statfs64 *s)
{
	return fstatfs(fd, (struct statfs *)s);
}
