// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A program with its own functions of the names of file calls, each made
 * with syscall() by number, as gnulib's replacements are (patch defines
 * renameat2 so): the preload routes those numbers to its interposed
 * calls, which must stay its own.  Until 2026-12-05 they bound to the
 * program's functions, which called syscall() again: patch died of a
 * stack overflow.  Output compared with tmpfs (tests/test_preload.py).
 *   pl_wrappers DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int renameat2(int olddirfd, const char *oldpath, int newdirfd,
	      const char *newpath, unsigned int flags)
{
	return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd,
			    newpath, flags);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & (O_CREAT | O_TMPFILE))
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

int unlinkat(int dirfd, const char *path, int flags)
{
	return (int)syscall(SYS_unlinkat, dirfd, path, flags);
}

int statx(int dirfd, const char *path, int flags, unsigned int mask,
	  struct statx *stx)
{
	return (int)syscall(SYS_statx, dirfd, path, flags, mask, stx);
}

static void show(const char *what, long r)
{
	printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "",
	       r < 0 ? strerror(errno) : "");
}

int main(int argc, char **argv)
{
	struct statx stx;
	char buf[16] = { 0 };
	int fd;

	if (argc != 2 || chdir(argv[1]))
		return 2;
	fd = openat(AT_FDCWD, "a", O_CREAT | O_RDWR, 0640);
	show("openat", fd >= 0);
	show("write", write(fd, "wrapped", 7));
	close(fd);
	show("renameat2", renameat2(AT_FDCWD, "a", AT_FDCWD, "b", 0));
	show("renameat2 noreplace", renameat2(AT_FDCWD, "b", AT_FDCWD, "b",
					      RENAME_NOREPLACE));
	show("statx", statx(AT_FDCWD, "b", 0, STATX_BASIC_STATS, &stx));
	printf("statx size %llu mode %o\n", (unsigned long long)stx.stx_size,
	       stx.stx_mode & 07777);
	fd = openat(AT_FDCWD, "b", O_RDONLY);
	show("read", read(fd, buf, sizeof(buf) - 1));
	printf("data: %s\n", buf);
	close(fd);
	show("unlinkat", unlinkat(AT_FDCWD, "b", 0));
	show("unlinkat again", unlinkat(AT_FDCWD, "b", 0));
	return 0;
}
