// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * open, close, dup and fcntl: the calls that make and unmake descriptors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/fs.h>

#include "preload.h"
#include "daxfs/libdaxfs-ino.h"

static _Atomic int cur_umask = -1;

mode_t pl_umask(void)
{
	int m = atomic_load(&cur_umask);

	if (m < 0) {
		REAL(mode_t, umask, mode_t);
		m = real_umask(022);
		real_umask(m);
		atomic_store(&cur_umask, m);
	}
	return m;
}

PUBLIC mode_t umask(mode_t mask)
{
	REAL(mode_t, umask, mode_t);
	mode_t old = real_umask(mask);

	atomic_store(&cur_umask, mask & 0777);
	return old;
}

static int kind_of(uint32_t mode)
{
	if (S_ISREG(mode))
		return PL_KIND_REG;
	if (S_ISDIR(mode))
		return PL_KIND_DIR;
	return PL_KIND_PATH;
}

/*
 * The directory part of the raw region path raw (its last name dropped:
 * *last points at that name, its trailing slashes cut off) resolved as
 * the kernel walks it into dir: symlinks followed, ".." taken from where
 * the names led.  One that leaves the region is the kernel's: its path
 * with the last name after it (-DAXFS_EOUTSIDE, pl_outside).  kpath: a
 * scratch buffer of PL_PATH_MAX (the caller's: stacks may be small, see
 * docs/preload.md "Threads with small stacks").
 */
static int target_dir(struct daxfs_handle *h, char *raw, char *dir,
		      const char **last, char *kpath)
{
	struct daxfs_attr a;
	size_t n = strlen(raw), p;
	int err;

	while (n > 1 && raw[n - 1] == '/')
		n--;
	raw[n] = 0;
	/* raw is absolute: its parent is at least "/"; cut it off with a
	 * NUL of its own, the name moved one up (raw has room: its
	 * buffer holds two paths) */
	p = pl_parent_len(raw);
	memmove(raw + p + 1, raw + p, n - p + 1);
	raw[p] = 0;
	*last = raw + p + 1;
	err = pl_region_resolve(h, raw, dir);
	if (pl_outside(err, kpath))
		return daxfs_link_outside(h, kpath, strlen(kpath), *last) ?:
		       -ENOENT;
	return err ?: pl_region_dir(h, dir, &a);
}

/*
 * O_CREAT (without O_EXCL) through a dangling symlink creates the file
 * the link names, as the kernel does: "echo > link" made nothing and
 * failed with ENOENT.  Follows the links from rpath (a missing name)
 * into tpath: "" when rpath is no symlink, else the missing target, its
 * directory resolved as the kernel walks it (target_dir: "s/../f" is
 * made in the directory above where s leads, not beside the link; a
 * name before ".." that is missing, no directory or a link loop fails as
 * it does there).  0, or an error: EISDIR for a target that ends in a
 * slash or a dot (once what comes before resolves), whether it exists or
 * not; -DAXFS_EOUTSIDE for a target out of the region (the kernel's to
 * make).
 */
static int dangling_target(struct daxfs_handle *h, const char *rpath,
			   char *tpath)
{
	char tgt[PL_PATH_MAX], next[2 * PL_PATH_MAX + 2];
	struct daxfs_attr a;
	const char *p, *last;
	int i, len, slash, dots, err;
	size_t n;

	tpath[0] = 0;
	for (i = 0; i <= DAXFS_SYMLOOP_MAX; i++) {
		p = tpath[0] ? tpath : rpath;
		if (daxfs_path_lstat(h, p, &a) || !S_ISLNK(a.mode))
			return 0;
		if (i == DAXFS_SYMLOOP_MAX)
			break;
		len = daxfs_link_may_follow(h, p);
		if (len)
			return len;
		len = daxfs_path_readlink(h, p, tgt, sizeof(tgt));
		if (len < 0)
			return len;
		if ((size_t)len >= sizeof(tgt))
			return -ENAMETOOLONG;
		err = daxfs_link_outside(h, tgt, (size_t)len, NULL);
		if (err)
			return err;	/* the kernel's file to make */
		len = (int)daxfs_link_in_region(h, tgt, (size_t)len);
		dots = pl_last_dots(tgt);
		slash = tgt[len - 1] == '/';
		/* relative: from the link's directory; absolute: the region's
		 * root (docs/preload.md "Symlinks") */
		n = strlen(p);
		while (n > 1 && p[n - 1] != '/')
			n--;
		snprintf(next, sizeof(next), "%.*s/%s",
			 tgt[0] == '/' ? 0 : (int)n, p, tgt);
		/* p (tpath) is in next now: tpath takes the resolved
		 * directory, tgt is scratch */
		if (dots) {
			/* "x/.", "x/..": a directory, nothing to create */
			err = pl_region_resolve(h, next, tpath);
			return err ?: pl_region_dir(h, tpath, &a) ?: -EISDIR;
		}
		err = target_dir(h, next, tpath, &last, tgt);
		if (err)
			return err;
		/* "x/": the kernel refuses the slash before it looks x up */
		if (slash)
			return -EISDIR;
		n = strlen(tpath);
		if (n + strlen(last) + 2 > PL_PATH_MAX)
			return -ENAMETOOLONG;
		if (n > 1)
			tpath[n++] = '/';
		strcpy(tpath + n, last);
	}
	return -ELOOP;
}

/*
 * An open of "." from a removed directory (pl_self): the kernel opens
 * the directory's inode again; here a description that answers from
 * what was kept of it, as the others of it do.
 */
static int open_gone(int flags)
{
	int acc = flags & O_ACCMODE, fd;

	if (flags & O_PATH)
		flags = O_PATH | (flags & O_CLOEXEC);
	else if (acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC)))
		return pl_fail(-EISDIR);
	fd = pl_fd_install(pl_self.ino, PL_KIND_DIR, flags, pl_self.path);
	if (fd >= 0)
		pl_fd_gone_mark(pl_self.ino, &pl_self.g);
	return fd;
}

/* pl_open_region's looks for an O_CREAT whose inode keeps going. */
#define OPEN_CREATE_ROUNDS	1024

static int open_found(struct daxfs_handle *h, const char *rpath, int flags,
		      struct daxfs_attr *ap, int created, int *rfd);
static int do_openat(int dirfd, const char *path, int flags, mode_t mode,
		     int large);

/*
 * An open's region error: one whose walk left the region (a symlink to a
 * kernel file, pl_outside) opens that file with the kernel, a descriptor
 * of its own (the number reserved for a region file, *rfd, given back
 * first); any other fails.
 */
static int open_fail(int err, int flags, mode_t mode, int *rfd)
{
	REAL(int, openat, int, const char *, int, ...);
	char kpath[PL_PATH_MAX];

	if (!pl_outside(err, kpath))
		return pl_fail(err);
	pl_fd_unreserve(*rfd);
	*rfd = -1;
	return real_openat(AT_FDCWD, kpath, flags, mode);
}

/*
 * O_TMPFILE: a file with no name in directory rpath, held by the
 * descriptor (the handle's hold from daxfs_path_tmpfile goes once the
 * description has its own).  Without O_EXCL it may be given a name
 * (linkat through /proc/self/fd or AT_EMPTY_PATH, meta.c link_fd): the
 * description keeps PL_O_LINKABLE in its flags for that (Linux keeps
 * O_TMPFILE in f_flags, and I_LINKABLE in the inode).
 */
static int open_tmpfile(struct daxfs_handle *h, const char *rpath, int flags,
			mode_t mode)
{
	int acc = flags & O_ACCMODE, fd, err;
	uint64_t ino;

	/* as Linux: write access, and never O_CREAT */
	if (acc == O_RDONLY || acc == O_ACCMODE || (flags & O_CREAT))
		return pl_fail(-EINVAL);
	err = daxfs_path_tmpfile(h, rpath, mode & ~pl_umask() & 07777, &ino);
	if (err) {
		int no = -1;

		return open_fail(err, flags, mode, &no);
	}
	flags &= ~O_TMPFILE;
	if (!(flags & O_EXCL))
		flags |= PL_O_LINKABLE;
	fd = pl_fd_install(ino, PL_KIND_REG, flags, rpath);
	daxfs_file_close(h, ino);
	return fd;
}

/* An open's answer fd, the reserved number rfd given back unless the
 * open filled it (errno kept). */
static int reserved_used(int fd, int rfd)
{
	int e = errno;

	if (fd != rfd)
		pl_fd_unreserve(rfd);
	errno = e;
	return fd;
}

/*
 * One look at rpath, and the open of what it finds or creates, in the
 * reserved number *rfd (-1 once given back or filled).  *gone: the answer
 * is -ENOENT from the inode found or made, which went before its
 * descriptor held it (its last name unlinked on another host).
 */
static int open_once(struct daxfs_handle *h, const char *rpath, int flags,
		     mode_t mode, int *rfd, int *gone)
{
	char tpath[PL_PATH_MAX] = "";
	int err, created = 0, fd;
	struct daxfs_attr a;
	unsigned int cf = 0;
	uint64_t ino;

	*gone = 0;
	/* O_CREAT|O_EXCL fails on any name that exists, a symlink
	 * included, which the create finds itself: no look first */
	if ((flags & (O_CREAT | O_EXCL | O_PATH)) == (O_CREAT | O_EXCL))
		err = -ENOENT;
	else if (flags & (O_NOFOLLOW | O_PATH))
		err = daxfs_path_lstat(h, rpath, &a);
	else
		err = daxfs_path_stat(h, rpath, &a);
	if (!err && (flags & O_CREAT) && (flags & O_EXCL))
		return pl_fail(-EEXIST);
	/* O_CREAT through a link to "f/" that the lookup refused (f a
	 * file: ENOTDIR; a link back to itself: ELOOP): the kernel refuses
	 * the slash before it looks f up */
	if (err && err != -ENOENT &&
	    (flags & (O_CREAT | O_EXCL | O_NOFOLLOW | O_PATH)) == O_CREAT) {
		int derr = dangling_target(h, rpath, tpath);

		if (derr)
			return open_fail(derr, flags, mode, rfd);
	}
	/* O_NOFOLLOW's symlink: O_DIRECTORY says ENOTDIR first */
	if (!err && S_ISLNK(a.mode) && !(flags & O_PATH))
		return pl_fail(flags & O_DIRECTORY ? -ENOTDIR : -ELOOP);
	if (err == -ENOENT && (flags & O_CREAT)) {
		if (flags & O_EXCL)
			cf |= DAXFS_CREATE_EXCL;
		else if (!(flags & (O_NOFOLLOW | O_PATH)) &&
			 (err = dangling_target(h, rpath, tpath)))
			return open_fail(err, flags, mode, rfd);
		else if (tpath[0])
			rpath = tpath;
		err = daxfs_path_create(h, rpath, mode & ~pl_umask() & 07777,
					cf, &ino);
		if (err < 0)
			return open_fail(err, flags, mode, rfd);
		err = daxfs_fstat(h, ino, &a);
		created = 1;
		*gone = err == -ENOENT;
	}
	if (err)
		return open_fail(err, flags, mode, rfd);
	/* a descriptor keeps the file's own path (dir.c pl_physical); the
	 * copy only when the lookup followed a link */
	if (!created && !S_ISLNK(a.mode) && daxfs_path_links_followed()) {
		if (rpath != tpath)
			strcpy(tpath, rpath);
		rpath = tpath;
		err = pl_physical(h, tpath);
		if (err)
			return pl_fail(err);
	}
	fd = open_found(h, rpath, flags, &a, created, rfd);
	*gone = fd < 0 && errno == ENOENT;
	return fd;
}


/*
 * open(2) of region path rpath.  With O_CREAT the answer in an existing
 * directory is the file, made or found: an inode that went between the
 * look (or the create) and the descriptor's hold is looked for again, as
 * daxfs_path_create's rounds do (tests/preload/test_create_churn.py).
 */
int pl_open_region(const char *rpath, int flags, mode_t mode)
{
	struct daxfs_handle *h = pl_handle();
	int fd, gone, tries;

	if (!h)
		return -1;
	/* a path its description cannot keep (pl_fd_install) fails before
	 * the open creates or truncates anything */
	if (strlen(rpath) >= sizeof(((struct pl_desc *)0)->path))
		return pl_fail(-ENAMETOOLONG);
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return open_tmpfile(h, rpath, flags, mode);
	if (!rpath[0] && pl_self.on)
		return open_gone(flags);
	/* as Linux: a trailing slash names no file to create, and it
	 * refuses O_CREAT with O_DIRECTORY (since 6.4) */
	if ((flags & (O_CREAT | O_PATH)) == O_CREAT) {
		size_t n = strlen(rpath);

		if (flags & O_DIRECTORY)
			return pl_fail(-EINVAL);
		if (n > 1 && rpath[n - 1] == '/')
			return pl_fail(-EISDIR);
	}
	for (tries = 0;; tries++) {
		int rfd = pl_fd_reserve(flags);

		if (rfd < 0)
			return -1;
		fd = reserved_used(open_once(h, rpath, flags, mode, &rfd,
					     &gone), rfd);
		if (fd >= 0 || !gone || !(flags & O_CREAT) ||
		    tries >= OPEN_CREATE_ROUNDS)
			return fd;
	}
}

/* The open of a file found (or just created, created) at region path
 * rpath, with attributes *a, into reserved number *rfd: what the
 * kernel's may_open and do_open do once the lookup is over. */
static int open_found(struct daxfs_handle *h, const char *rpath, int flags,
		      struct daxfs_attr *ap, int created, int *rfd)
{
	int acc = flags & O_ACCMODE, err, kind;
	struct daxfs_attr a = *ap;

	kind = kind_of(a.mode);
	if ((flags & O_DIRECTORY) && kind != PL_KIND_DIR)
		return pl_fail(-ENOTDIR);
	if (flags & O_PATH)
		return pl_fd_install_at(*rfd, a.ino, kind,
					O_PATH | (flags & O_CLOEXEC), rpath);
	/* O_TRUNC asks for write access, to a directory too (may_open) */
	if (kind == PL_KIND_DIR &&
	    (acc != O_RDONLY || (flags & (O_CREAT | O_TRUNC))))
		return pl_fail(-EISDIR);
	if (kind == PL_KIND_PATH) {
		pl_debug("open %s: only regular files and directories can be "
			 "opened for I/O", rpath);
		return pl_fail(-ENXIO);
	}
	/* may_open's rules for chattr flags (docs/attrs.md); the core
	 * refuses the writes themselves on every host */
	err = daxfs_open_allowed(&a, flags);
	if (err)
		return pl_fail(err);
	/* O_RDONLY|O_TRUNC truncates too, as on Linux (POSIX leaves it
	 * unspecified; the kernel checks write permission only); an empty
	 * file as well, as that sets its mtime, but not one just made */
	if (kind == PL_KIND_REG && (flags & O_TRUNC) && !created) {
		/* no size to change: the times only */
		err = a.size ? daxfs_ftruncate(h, a.ino, 0)
			     : pl_ino_touch(h, a.ino);
		if (err)
			return pl_fail(err);
		a.size = 0;
	}
	if (kind == PL_KIND_REG && a.size)
		pl_prefault(a.ino, a.size);
	return pl_fd_install_at(*rfd, a.ino, kind, flags, rpath);
}

/*
 * open of "/proc/self/fd/N" (fdlink.c), N a region descriptor: a new
 * open file description of N's file, as the kernel's, found by its
 * number (renamed or removed since, it is still that file); a directory
 * as "." from N.
 */
int pl_open_fd_link(int fd, int flags, mode_t mode)
{
	struct daxfs_handle *h = pl_handle();
	char path[PL_PATH_MAX];
	struct daxfs_attr a;
	struct pl_desc *d;
	uint64_t ino;
	int kind, err, rfd;

	if (!h)
		return -1;
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	kind = d->kind;
	ino = d->ino;
	snprintf(path, sizeof(path), "%s", d->path);
	pl_fd_put(d);
	if (kind == PL_KIND_DIR)
		return do_openat(fd, ".", flags, mode, 0);
	/* it exists: O_EXCL fails, O_CREAT has nothing to make */
	if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
		return pl_fail(-EEXIST);
	err = daxfs_fstat(h, ino, &a);
	if (err)
		return pl_fail(err);
	rfd = pl_fd_reserve(flags);
	if (rfd < 0)
		return -1;
	return reserved_used(open_found(h, path, flags, &a, 0, &rfd), rfd);
}

/* The region file libdaxfs keeps open must not take the small numbers
 * the program expects its own opens to get. */
static int move_high(int fd)
{
	REAL(int, fcntl, int, int, ...);
	REAL(int, close, int);
	int hi;

	if (fd < 0)
		return fd;
	hi = real_fcntl(fd, F_DUPFD_CLOEXEC, 800);
	if (hi < 0)
		return fd;
	real_close(fd);
	return hi;
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode,
		     int large)
{
	char buf[PL_PATH_MAX];
	int r;

	/* flags the kernel refuses before it looks at the path (a region
	 * directory descriptor that is no directory would say ENOTDIR) */
	if ((flags & (O_CREAT | O_DIRECTORY | O_PATH)) == (O_CREAT | O_DIRECTORY))
		return pl_fail(-EINVAL);
	/* O_NOFOLLOW opens (O_PATH) or refuses (ELOOP) the link itself */
	if (!(flags & O_NOFOLLOW) && (r = pl_fd_link_exact(path)) >= 0)
		return pl_open_fd_link(r, flags, mode);
	r = pl_route(dirfd, path, buf);
	/* "f/" in a removed directory routes nowhere (ENOENT), but the
	 * kernel refuses O_CREAT's slash once the parent resolves, and the
	 * removed directory does (route.c gone_rel) */
	if (r < 0 && errno == ENOENT && path[0] &&
	    (flags & (O_CREAT | O_PATH)) == O_CREAT &&
	    path[strlen(path) - 1] == '/' && !pl_parent_err(dirfd, path))
		return pl_fail(-EISDIR);
	if (r < 0)
		return -1;
	if (r == PL_REGION) {
		/* O_CREAT of "d/.": the error of d, else EEXIST (O_EXCL) or
		 * EISDIR (routing made it "d/", which is EISDIR even where
		 * d is missing) */
		r = flags & O_EXCL ? -EEXIST : -EISDIR;
		if ((flags & (O_CREAT | O_PATH)) == O_CREAT &&
		    (r = pl_dots(dirfd, path, r, r)))
			return pl_fail(r);
		/* and "d/f/": the error of d first, then EISDIR */
		if ((flags & (O_CREAT | O_PATH)) == O_CREAT &&
		    path[strlen(path) - 1] == '/' &&
		    (r = pl_parent_err(dirfd, path)))
			return pl_fail(r);
		return pl_open_region(buf, flags, mode);
	}
	if (large) {
		REAL(int, openat64, int, const char *, int, ...);
		r = real_openat64(dirfd, PL_KPATH(r, path, buf), flags, mode);
	} else {
		REAL(int, openat, int, const char *, int, ...);
		r = real_openat(dirfd, PL_KPATH(r, path, buf), flags, mode);
	}
	return pl_opening_region ? move_high(r) : r;
}

#define MODE_ARG(flags, mode)					\
	do {							\
		va_list ap;					\
		va_start(ap, flags);				\
		mode = (flags & (O_CREAT | O_TMPFILE)) ?	\
			va_arg(ap, mode_t) : 0;			\
		va_end(ap);					\
	} while (0)

PUBLIC int open(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return do_openat(AT_FDCWD, path, flags, mode, 0);
}

PUBLIC int open64(const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return do_openat(AT_FDCWD, path, flags, mode, 1);
}

PUBLIC int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return do_openat(dirfd, path, flags, mode, 0);
}

PUBLIC int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode;

	MODE_ARG(flags, mode);
	return do_openat(dirfd, path, flags, mode, 1);
}

/* _FORTIFY_SOURCE entry points: no mode (O_CREAT is refused by them). */
PUBLIC int __open_2(const char *path, int flags)
{
	return do_openat(AT_FDCWD, path, flags, 0, 0);
}

PUBLIC int __open64_2(const char *path, int flags)
{
	return do_openat(AT_FDCWD, path, flags, 0, 1);
}

PUBLIC int __openat_2(int dirfd, const char *path, int flags)
{
	return do_openat(dirfd, path, flags, 0, 0);
}

PUBLIC int __openat64_2(int dirfd, const char *path, int flags)
{
	return do_openat(dirfd, path, flags, 0, 1);
}

PUBLIC int creat(const char *path, mode_t mode)
{
	return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 0);
}

PUBLIC int creat64(const char *path, mode_t mode)
{
	return do_openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, 1);
}

PUBLIC int close(int fd)
{
	REAL(int, close, int);
	int r;

	if (pl_own_fd(fd)) {
		pl_fd_lock();	/* no reservation is made from it meanwhile */
		pl_own_move(fd);
		pl_fd_unlock();
	}
	pl_fd_release(fd);
	r = real_close(fd);
	pl_std_fix(fd);
	return r;
}

PUBLIC int dup(int fd)
{
	REAL(int, dup, int);
	int r;

	if (!pl_fd_is_region(fd))
		return real_dup(fd);
	pl_fd_lock();
	r = real_dup(fd);
	if (r >= 0)
		pl_fd_alias(r, fd);
	pl_fd_unlock();
	return r;
}

static int do_dup3(int oldfd, int newfd, int flags, int is_dup2)
{
	REAL(int, dup3, int, int, int);
	REAL(int, dup2, int, int);
	int r;

	if (oldfd == newfd || (!pl_fd_is_region(oldfd) &&
	    !pl_fd_is_region(newfd) && !pl_own_fd(newfd)))
		return is_dup2 ? real_dup2(oldfd, newfd)
			       : real_dup3(oldfd, newfd, flags);
	pl_fd_lock();
	pl_own_move(newfd);
	r = is_dup2 ? real_dup2(oldfd, newfd) : real_dup3(oldfd, newfd, flags);
	if (r >= 0) {
		if (pl_fd_is_region(oldfd))
			pl_fd_alias(newfd, oldfd);
		else
			pl_fd_drop_locked(newfd);
	}
	pl_fd_unlock();
	if (r >= 0)
		pl_std_fix(newfd);
	return r;
}

PUBLIC int dup2(int oldfd, int newfd)
{
	return do_dup3(oldfd, newfd, 0, 1);
}

PUBLIC int dup3(int oldfd, int newfd, int flags)
{
	return do_dup3(oldfd, newfd, flags, 0);
}

static int region_fcntl(int fd, int cmd, long arg)
{
	REAL(int, fcntl, int, int, ...);
	struct pl_desc *d;
	int r, keep;

	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		pl_fd_lock();
		r = real_fcntl(fd, cmd, arg);
		if (r >= 0)
			pl_fd_alias(r, fd);
		pl_fd_unlock();
		return r;
	case F_GETFL:
		d = pl_fd_get(fd);
		if (!d)
			return pl_fail(-EBADF);
		r = atomic_load(&d->flags) | O_LARGEFILE;
		pl_fd_put(d);
		return r;
	case F_SETFL:
		d = pl_fd_get(fd);
		if (!d)
			return pl_fail(-EBADF);
		keep = atomic_load(&d->flags) & ~(O_APPEND | O_NONBLOCK);
		atomic_store(&d->flags, keep | (arg & (O_APPEND | O_NONBLOCK)));
		pl_fd_put(d);
		return 0;
	case F_GETLK:
	case F_SETLK:
	case F_SETLKW:
	case F_OFD_GETLK:
	case F_OFD_SETLK:
	case F_OFD_SETLKW:
		return pl_lock(fd, cmd, (struct flock *)arg);
	default:
		/* F_GETFD/F_SETFD and the rest act on the reservation. */
		return real_fcntl(fd, cmd, arg);
	}
}

PUBLIC int fcntl(int fd, int cmd, ...)
{
	REAL(int, fcntl, int, int, ...);
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	if (!pl_fd_is_region(fd))
		return real_fcntl(fd, cmd, arg);
	return region_fcntl(fd, cmd, arg);
}

PUBLIC int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, long);
	va_end(ap);
	return fcntl(fd, cmd, arg);
}

static void release_range(unsigned int first, unsigned int last)
{
	unsigned int fd;

	for (fd = first; fd <= last && fd < PL_FD_MAX; fd++)
		if (pl_fd_is_region(fd))
			pl_fd_drop_locked(fd);
}

/*
 * The descriptor table's memfd and the reservation template are ours, not
 * the program's: a range close (close_fds in Python's subprocess,
 * closefrom in daemons) skips them, or exec could not hand the region
 * files on.  Caller holds the map lock.
 */
static int close_range_keep(unsigned int first, unsigned int last, int flags)
{
	REAL(int, close_range, unsigned int, unsigned int, int);
	int own[2], n = pl_own_in(first, last, own), i, r = 0;

	for (i = 0; i < n && !r; i++) {
		if ((unsigned int)own[i] > first)
			r = real_close_range(first, own[i] - 1, flags);
		first = own[i] + 1;
	}
	if (!r && (!n || (unsigned int)own[n - 1] < last))
		r = real_close_range(first, last, flags);
	return r;
}

PUBLIC int close_range(unsigned int first, unsigned int last, int flags)
{
	int r;

	pl_fd_lock();
	if (flags & CLOSE_RANGE_CLOEXEC) {
		r = close_range_keep(first, last, flags);
		pl_fd_unlock();
		return r;
	}
	release_range(first, last);
	r = close_range_keep(first, last, flags);
	pl_fd_unlock();
	for (unsigned int fd = first; fd <= last && fd <= 2; fd++)
		pl_std_fix(fd);
	return r;
}

PUBLIC void closefrom(int lowfd)
{
	close_range(lowfd < 0 ? 0 : lowfd, ~0U, 0);
}

/* Whether this process has capability cap in its effective set. */
static bool pl_capable(unsigned int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	return data[cap / 32].effective & (1u << (cap % 32));
}

/*
 * lsattr / chattr on a region descriptor (docs/attrs.md): the kernel's
 * rules with this process's credentials, as the VFS would apply them:
 * the owner (or CAP_FOWNER) may change flags, i and a need
 * CAP_LINUX_IMMUTABLE.  The argument is an int, as for the kernel.
 */
static int pl_flags_ioctl(int fd, unsigned long req, void *arg)
{
	struct daxfs_handle *h = pl_handle();
	struct pl_desc *d = pl_fd_get(fd);
	struct daxfs_attr a;
	uint32_t may = 0;
	int err, fl;

	if (!d)
		return pl_fail(-EBADF);
	err = daxfs_fstat(h, d->ino, &a);
	if (!err && req == FS_IOC_GETFLAGS) {
		fl = (int)a.flags;
		memcpy(arg, &fl, sizeof(fl));
	} else if (!err) {
		memcpy(&fl, arg, sizeof(fl));
		if (a.uid == geteuid() || pl_capable(CAP_FOWNER))
			may |= DAXFS_MAY_OWNER;
		if (pl_capable(CAP_LINUX_IMMUTABLE))
			may |= DAXFS_MAY_IMMUTABLE;
		err = daxfs_ino_setflags(h, d->ino, (uint32_t)fl, may);
	}
	pl_fd_put(d);
	return err ? pl_fail(err) : 0;
}

PUBLIC int ioctl(int fd, unsigned long req, ...)
{
	REAL(int, ioctl, int, unsigned long, ...);
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!pl_fd_is_region(fd))
		return real_ioctl(fd, req, arg);
	if (req == FS_IOC_GETFLAGS || req == FS_IOC_SETFLAGS)
		return pl_flags_ioctl(fd, req, arg);
	pl_debug("ioctl %#lx on region fd %d: not supported", req, fd);
	return pl_fail(-ENOTTY);
}
