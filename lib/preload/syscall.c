// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * syscall(): programs that make a file call through libc's generic entry
 * point (fsx's copy_file_range, Rust's statx and copy_file_range, newer
 * calls glibc had no wrapper for yet) get the interposed call, as if they
 * had called it by name.  Without this a region descriptor, an O_PATH
 * reservation of /dev/null, reached the kernel: EBADF, or the kernel's
 * file of that path.  Each number goes to the libc function of the same
 * meaning, ours where we have one, libc's otherwise (same result as the
 * kernel's); the few whose libc form differs are converted here.  Other
 * numbers go to libc's syscall() untouched.  docs/preload.md "syscall".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "preload.h"

#undef syscall

#define A(i, type)	((type)(a[i]))

static long (*real_sys(void))(long, ...)
{
	static long (*real)(long, ...);

	if (!real)
		real = (long (*)(long, ...))pl_real("syscall");
	return real;
}

/* The kernel's, never rerouted: what this library's own calls use. */
long pl_syscall(long nr, ...)
{
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	return real_sys()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* posix_fadvise returns the error, the system call -1 and errno. */
static long errno_result(int err)
{
	if (!err)
		return 0;
	errno = err;
	return -1;
}

static long sys_getcwd(char *buf, size_t size)
{
	if (!buf) {		/* glibc would allocate; the kernel faults */
		errno = EFAULT;
		return -1;
	}
	if (!getcwd(buf, size))
		return -1;
	return (long)strlen(buf) + 1;	/* the kernel counts the NUL */
}

/* utimensat(fd, NULL, ...) is futimens(fd) to the kernel; glibc refuses
 * a null path. */
static long sys_utimensat(int dirfd, const char *path,
			  const struct timespec *t, int flags)
{
	if (!path && !flags)
		return futimens(dirfd, t);
	return utimensat(dirfd, path, t, flags);
}

/* openat2 without RESOLVE_* restrictions is an openat. */
static long sys_openat2(long *a)
{
	const struct open_how *how = A(2, const struct open_how *);

	if (how && A(3, size_t) >= sizeof(*how) && !how->resolve &&
	    !(how->flags >> 32))
		return openat(A(0, int), A(1, const char *), (int)how->flags,
			      (mode_t)how->mode);
	return real_sys()(SYS_openat2, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A file call by number: the interposed call of that name, or -ENOSYS
 * when nr is not one (*handled = 0). */
static long file_call(long nr, long *a, int *handled)
{
	*handled = 1;
	switch (nr) {
	case SYS_read:
		return read(A(0, int), A(1, void *), A(2, size_t));
	case SYS_write:
		return write(A(0, int), A(1, const void *), A(2, size_t));
	case SYS_pread64:
		return pread64(A(0, int), A(1, void *), A(2, size_t),
			       A(3, off_t));
	case SYS_pwrite64:
		return pwrite64(A(0, int), A(1, const void *), A(2, size_t),
				A(3, off_t));
	case SYS_readv:
		return readv(A(0, int), A(1, const struct iovec *), A(2, int));
	case SYS_writev:
		return writev(A(0, int), A(1, const struct iovec *), A(2, int));
	/* 64-bit: pos_l is the whole offset, pos_h is not used */
	case SYS_preadv:
		return preadv64(A(0, int), A(1, const struct iovec *),
				A(2, int), A(3, off_t));
	case SYS_pwritev:
		return pwritev64(A(0, int), A(1, const struct iovec *),
				 A(2, int), A(3, off_t));
	case SYS_preadv2:
		return preadv64v2(A(0, int), A(1, const struct iovec *),
				  A(2, int), A(3, off_t), A(5, int));
	case SYS_pwritev2:
		return pwritev64v2(A(0, int), A(1, const struct iovec *),
				   A(2, int), A(3, off_t), A(5, int));
	case SYS_lseek:
		return lseek64(A(0, int), A(1, off_t), A(2, int));
	case SYS_close:
		return close(A(0, int));
	case SYS_close_range:
		return close_range(A(0, unsigned int), A(1, unsigned int),
				   A(2, int));
	case SYS_dup:
		return dup(A(0, int));
#ifdef SYS_dup2
	case SYS_dup2:
		return dup2(A(0, int), A(1, int));
#endif
	case SYS_dup3:
		return dup3(A(0, int), A(1, int), A(2, int));
	case SYS_fcntl:
		return fcntl(A(0, int), A(1, int), a[2]);
	case SYS_ioctl:
		return ioctl(A(0, int), A(1, unsigned long), a[2]);
	case SYS_flock:
		return flock(A(0, int), A(1, int));
	case SYS_fsync:
		return fsync(A(0, int));
	case SYS_fdatasync:
		return fdatasync(A(0, int));
	case SYS_ftruncate:
		return ftruncate64(A(0, int), A(1, off_t));
	case SYS_truncate:
		return truncate64(A(0, const char *), A(1, off_t));
	case SYS_fallocate:
		return fallocate64(A(0, int), A(1, int), A(2, off_t),
				   A(3, off_t));
	case SYS_fadvise64:
		return errno_result(posix_fadvise64(A(0, int), A(1, off_t),
						    A(2, off_t), A(3, int)));
	case SYS_sendfile:
		return sendfile64(A(0, int), A(1, int), A(2, off_t *),
				  A(3, size_t));
	case SYS_splice:
		return splice(A(0, int), A(1, off_t *), A(2, int),
			      A(3, off_t *), A(4, size_t), A(5, unsigned int));
	case SYS_copy_file_range:
		return copy_file_range(A(0, int), A(1, off_t *), A(2, int),
				       A(3, off_t *), A(4, size_t),
				       A(5, unsigned int));
	case SYS_getdents64:
		return getdents64(A(0, int), A(1, void *), A(2, size_t));
	case SYS_mmap:
		return (long)mmap64(A(0, void *), A(1, size_t), A(2, int),
				    A(3, int), A(4, int), A(5, off_t));
	case SYS_munmap:
		return munmap(A(0, void *), A(1, size_t));
	case SYS_mprotect:
		return mprotect(A(0, void *), A(1, size_t), A(2, int));
	case SYS_mremap:
		return (long)mremap(A(0, void *), A(1, size_t), A(2, size_t),
				    A(3, int), A(4, void *));
#ifdef SYS_open
	case SYS_open:
		return open64(A(0, const char *), A(1, int), A(2, mode_t));
	case SYS_creat:
		return creat64(A(0, const char *), A(1, mode_t));
#endif
	case SYS_openat:
		return openat64(A(0, int), A(1, const char *), A(2, int),
				A(3, mode_t));
	case SYS_openat2:
		return sys_openat2(a);
#ifdef SYS_stat
	case SYS_stat:
		return stat64(A(0, const char *), A(1, struct stat64 *));
	case SYS_lstat:
		return lstat64(A(0, const char *), A(1, struct stat64 *));
#endif
	case SYS_fstat:
		return fstat64(A(0, int), A(1, struct stat64 *));
	case SYS_newfstatat:
		return fstatat64(A(0, int), A(1, const char *),
				 A(2, struct stat64 *), A(3, int));
	case SYS_statx:
		return statx(A(0, int), A(1, const char *), A(2, int),
			     A(3, unsigned int), A(4, struct statx *));
	case SYS_statfs:
		return statfs64(A(0, const char *), A(1, struct statfs64 *));
	case SYS_fstatfs:
		return fstatfs64(A(0, int), A(1, struct statfs64 *));
#ifdef SYS_access
	case SYS_access:
		return access(A(0, const char *), A(1, int));
#endif
	/* the system call has no flags; faccessat2 has */
	case SYS_faccessat:
		return faccessat(A(0, int), A(1, const char *), A(2, int), 0);
	case SYS_faccessat2:
		return faccessat(A(0, int), A(1, const char *), A(2, int),
				 A(3, int));
#ifdef SYS_unlink
	case SYS_unlink:
		return unlink(A(0, const char *));
	case SYS_rmdir:
		return rmdir(A(0, const char *));
	case SYS_mkdir:
		return mkdir(A(0, const char *), A(1, mode_t));
	case SYS_rename:
		return rename(A(0, const char *), A(1, const char *));
	case SYS_link:
		return link(A(0, const char *), A(1, const char *));
	case SYS_symlink:
		return symlink(A(0, const char *), A(1, const char *));
	case SYS_readlink:
		return readlink(A(0, const char *), A(1, char *), A(2, size_t));
	case SYS_chmod:
		return chmod(A(0, const char *), A(1, mode_t));
	case SYS_chown:
		return chown(A(0, const char *), A(1, uid_t), A(2, gid_t));
	case SYS_lchown:
		return lchown(A(0, const char *), A(1, uid_t), A(2, gid_t));
	case SYS_mknod:
		return mknod(A(0, const char *), A(1, mode_t), A(2, dev_t));
#endif
	case SYS_unlinkat:
		return unlinkat(A(0, int), A(1, const char *), A(2, int));
	case SYS_mkdirat:
		return mkdirat(A(0, int), A(1, const char *), A(2, mode_t));
	case SYS_mknodat:
		return mknodat(A(0, int), A(1, const char *), A(2, mode_t),
			       A(3, dev_t));
#ifdef SYS_renameat
	case SYS_renameat:
		return renameat(A(0, int), A(1, const char *), A(2, int),
				A(3, const char *));
#endif
	case SYS_renameat2:
		return renameat2(A(0, int), A(1, const char *), A(2, int),
				 A(3, const char *), A(4, unsigned int));
	case SYS_linkat:
		return linkat(A(0, int), A(1, const char *), A(2, int),
			      A(3, const char *), A(4, int));
	case SYS_symlinkat:
		return symlinkat(A(0, const char *), A(1, int),
				 A(2, const char *));
	case SYS_readlinkat:
		return readlinkat(A(0, int), A(1, const char *), A(2, char *),
				  A(3, size_t));
	case SYS_fchmod:
		return fchmod(A(0, int), A(1, mode_t));
	/* the system call has no flags */
	case SYS_fchmodat:
		return fchmodat(A(0, int), A(1, const char *), A(2, mode_t), 0);
	case SYS_fchown:
		return fchown(A(0, int), A(1, uid_t), A(2, gid_t));
	case SYS_fchownat:
		return fchownat(A(0, int), A(1, const char *), A(2, uid_t),
				A(3, gid_t), A(4, int));
	case SYS_utimensat:
		return sys_utimensat(A(0, int), A(1, const char *),
				     A(2, const struct timespec *), A(3, int));
	case SYS_chdir:
		return chdir(A(0, const char *));
	case SYS_fchdir:
		return fchdir(A(0, int));
	case SYS_getcwd:
		return sys_getcwd(A(0, char *), A(1, size_t));
	case SYS_getxattr:
		return getxattr(A(0, const char *), A(1, const char *),
				A(2, void *), A(3, size_t));
	case SYS_lgetxattr:
		return lgetxattr(A(0, const char *), A(1, const char *),
				 A(2, void *), A(3, size_t));
	case SYS_fgetxattr:
		return fgetxattr(A(0, int), A(1, const char *), A(2, void *),
				 A(3, size_t));
	case SYS_setxattr:
		return setxattr(A(0, const char *), A(1, const char *),
				A(2, const void *), A(3, size_t), A(4, int));
	case SYS_lsetxattr:
		return lsetxattr(A(0, const char *), A(1, const char *),
				 A(2, const void *), A(3, size_t), A(4, int));
	case SYS_fsetxattr:
		return fsetxattr(A(0, int), A(1, const char *),
				 A(2, const void *), A(3, size_t), A(4, int));
	case SYS_listxattr:
		return listxattr(A(0, const char *), A(1, char *),
				 A(2, size_t));
	case SYS_llistxattr:
		return llistxattr(A(0, const char *), A(1, char *),
				  A(2, size_t));
	case SYS_flistxattr:
		return flistxattr(A(0, int), A(1, char *), A(2, size_t));
	case SYS_removexattr:
		return removexattr(A(0, const char *), A(1, const char *));
	case SYS_lremovexattr:
		return lremovexattr(A(0, const char *), A(1, const char *));
	case SYS_fremovexattr:
		return fremovexattr(A(0, int), A(1, const char *));
	}
	*handled = 0;
	return -ENOSYS;
}

PUBLIC long syscall(long nr, ...)
{
	long a[6], r;
	va_list ap;
	int i, handled;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	r = file_call(nr, a, &handled);
	if (handled)
		return r;
	return real_sys()(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
