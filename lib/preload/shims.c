// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * glibc calls built on its internal system calls: lockf (fcntl), futimes,
 * lutimes and futimesat (utimensat), pathconf (statfs), syncfs,
 * getwd (getcwd), ftok (stat),
 * sync_file_range and readahead.  The preload never sees those inner
 * calls, so on a region descriptor or path these answered EBADF or ENOENT
 * (the kernel's, for the stand-in of a region descriptor or a path it
 * does not have).  Here each is made from the preload's own calls.
 * tests/test_preload.py::test_libc_file_calls_are_covered lists glibc's
 * file calls that take a descriptor or a path and finds each here, in
 * another preload file, or in its list of calls that need nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "preload.h"

/* lockf(3) on fcntl record locks, as glibc makes it: [cur, cur + len)
 * (len 0: to the end, negative: before cur). */
static int region_lockf(int fd, int cmd, off_t len)
{
	struct flock fl = { .l_whence = SEEK_CUR, .l_start = 0, .l_len = len };

	switch (cmd) {
	case F_TEST:
		fl.l_type = F_RDLCK;
		if (fcntl(fd, F_GETLK, &fl))
			return -1;
		if (fl.l_type == F_UNLCK || fl.l_pid == getpid())
			return 0;
		return pl_fail(-EACCES);
	case F_ULOCK:
		fl.l_type = F_UNLCK;
		return fcntl(fd, F_SETLK, &fl);
	case F_LOCK:
		fl.l_type = F_WRLCK;
		return fcntl(fd, F_SETLKW, &fl);
	case F_TLOCK:
		fl.l_type = F_WRLCK;
		return fcntl(fd, F_SETLK, &fl);
	}
	return pl_fail(-EINVAL);
}

PUBLIC int lockf(int fd, int cmd, off_t len)
{
	REAL(int, lockf, int, int, off_t);

	if (!pl_fd_is_region(fd))
		return real_lockf(fd, cmd, len);
	return region_lockf(fd, cmd, len);
}

PUBLIC int lockf64(int fd, int cmd, off_t len)
{
	return lockf(fd, cmd, len);
}

/* struct timeval pair to the timespec pair utimensat takes; NULL: now */
static const struct timespec *ts_of(const struct timeval tv[2],
				    struct timespec ts[2])
{
	int i;

	if (!tv)
		return NULL;
	for (i = 0; i < 2; i++) {
		ts[i].tv_sec = tv[i].tv_sec;
		ts[i].tv_nsec = tv[i].tv_usec * 1000;
	}
	return ts;
}

/* glibc refuses a microsecond count out of range before the call */
static int tv_bad(const struct timeval tv[2])
{
	return tv && (tv[0].tv_usec < 0 || tv[0].tv_usec >= 1000000 ||
		      tv[1].tv_usec < 0 || tv[1].tv_usec >= 1000000);
}

PUBLIC int futimes(int fd, const struct timeval tv[2])
{
	struct timespec ts[2];

	if (tv_bad(tv))
		return pl_fail(-EINVAL);
	return futimens(fd, ts_of(tv, ts));
}

PUBLIC int lutimes(const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	if (tv_bad(tv))
		return pl_fail(-EINVAL);
	return utimensat(AT_FDCWD, path, ts_of(tv, ts), AT_SYMLINK_NOFOLLOW);
}

PUBLIC int futimesat(int dirfd, const char *path, const struct timeval tv[2])
{
	struct timespec ts[2];

	if (tv_bad(tv))
		return pl_fail(-EINVAL);
	if (!path)
		return futimens(dirfd, ts_of(tv, ts));
	return utimensat(dirfd, path, ts_of(tv, ts), 0);
}

/* What pathconf and fpathconf say of a region file: the core's limits,
 * the rest as Linux says them for most file systems. */
static long region_conf(int name)
{
	switch (name) {
	case _PC_LINK_MAX:
		return 0x7fffffff;	/* core/inode.h DAXFS_LINK_MAX */
	case _PC_NAME_MAX:
		return 255;
	case _PC_PATH_MAX:
		return PATH_MAX;
	case _PC_PIPE_BUF:
		return PIPE_BUF;
	case _PC_CHOWN_RESTRICTED:
	case _PC_NO_TRUNC:
	case _PC_2_SYMLINKS:
		return 1;
	case _PC_FILESIZEBITS:
		return 64;
	case _PC_SYMLINK_MAX:
	case _PC_MAX_CANON:
	case _PC_MAX_INPUT:
	case _PC_VDISABLE:
		return -1;	/* no limit, or not a terminal: errno unchanged */
	}
	return pl_fail(-EINVAL);
}

PUBLIC long pathconf(const char *path, int name)
{
	REAL(long, pathconf, const char *, int);
	char buf[PL_PATH_MAX];
	struct daxfs_handle *h;
	struct daxfs_attr a;
	int r = pl_route(AT_FDCWD, path, buf), err;

	if (r < 0)
		return -1;
	if (r != PL_REGION)
		return real_pathconf(PL_KPATH(r, path, buf), name);
	/* the file must exist (glibc's statfs says so first); a link out of
	 * the region names a kernel file, whose limits are the kernel's */
	h = pl_handle();
	if (!h)
		return -1;
	err = pl_self.on ? 0 : daxfs_path_stat(h, buf, &a);
	if (pl_outside(err, buf))
		return real_pathconf(buf, name);
	if (err)
		return pl_fail(err);
	return region_conf(name);
}

PUBLIC long fpathconf(int fd, int name)
{
	REAL(long, fpathconf, int, int);

	if (!pl_fd_is_region(fd))
		return real_fpathconf(fd, name);
	return region_conf(name);
}

/* syncfs: the region's stores are the file system's; what fsync of this
 * file makes durable (docs/modes.md) is what there is to sync. */
PUBLIC int syncfs(int fd)
{
	REAL(int, syncfs, int);

	if (!pl_fd_is_region(fd))
		return real_syncfs(fd);
	return fsync(fd);
}

PUBLIC int sync_file_range(int fd, off_t off, off_t n, unsigned int flags)
{
	REAL(int, sync_file_range, int, off_t, off_t, unsigned int);

	if (!pl_fd_is_region(fd))
		return real_sync_file_range(fd, off, n, flags);
	if (off < 0 || n < 0 || (flags & ~(SYNC_FILE_RANGE_WAIT_BEFORE |
					   SYNC_FILE_RANGE_WRITE |
					   SYNC_FILE_RANGE_WAIT_AFTER)))
		return pl_fail(-EINVAL);
	return fdatasync(fd);
}

/* readahead: the region is memory, nothing to read ahead */
PUBLIC ssize_t readahead(int fd, off64_t off, size_t n)
{
	REAL(ssize_t, readahead, int, off64_t, size_t);

	if (!pl_fd_is_region(fd))
		return real_readahead(fd, off, n);
	return 0;
}

/* getwd(3): getcwd with a PATH_MAX buffer; the error's words in buf. */
PUBLIC char *getwd(char *buf)
{
	if (getcwd(buf, PATH_MAX))
		return buf;
	snprintf(buf, PATH_MAX, "%s", strerror(errno));
	return NULL;
}

/* ftok(3): the key from the file's inode and device numbers, as glibc
 * makes it. */
PUBLIC key_t ftok(const char *path, int id)
{
	struct stat st;

	if (stat(path, &st))
		return -1;
	return (key_t)((st.st_ino & 0xffff) | ((st.st_dev & 0xff) << 16) |
		       ((unsigned int)(id & 0xff) << 24));
}
