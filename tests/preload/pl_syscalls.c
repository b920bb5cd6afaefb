// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * File calls made through libc's syscall() by number, as fsx (its
 * copy_file_range), Rust's standard library (statx, copy_file_range) and
 * programs using calls newer than their libc do.  Prints what a user
 * would check; tests/test_preload.py runs it under `daxfs run` (DIR in
 * the region) and on tmpfs and compares the outputs byte for byte.
 *
 * Usage: pl_syscalls DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static long show(const char *what, long r)
{
	printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "",
	       r < 0 ? strerror(errno) : "");
	return r;
}

static void show_bytes(const char *what, const char *p, long n)
{
	printf("%s: %.*s\n", what, n > 0 ? (int)n : 0, p);
}

/* Names in a getdents64 buffer, sorted (the order is the filesystem's). */
static void show_dents(const char *what, char *buf, long n)
{
	char names[16][64];
	int k = 0, i, j;
	long at;

	for (at = 0; at < n && k < 16;) {
		unsigned short reclen = *(unsigned short *)(buf + at + 16);

		snprintf(names[k++], 64, "%s", buf + at + 19);
		at += reclen;
	}
	for (i = 0; i < k; i++)
		for (j = i + 1; j < k; j++)
			if (strcmp(names[i], names[j]) > 0) {
				char t[64];

				memcpy(t, names[i], 64);
				memcpy(names[i], names[j], 64);
				memcpy(names[j], t, 64);
			}
	printf("%s:", what);
	for (i = 0; i < k; i++)
		printf(" %s", names[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	char path[4096], path2[4096], buf[8192], cwd[4096];
	struct iovec iov[2];
	struct open_how how;
	struct statx stx;
	struct stat st;
	off_t o1, o2;
	int fd, fd2, dfd;
	char *m;
	long n;

	if (argc != 2)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(path, sizeof(path), "%s/f", argv[1]);
	fd = show("open", syscall(SYS_openat, AT_FDCWD, path,
				  O_CREAT | O_RDWR | O_TRUNC, 0644));
	show("write", syscall(SYS_write, fd, "0123456789", 10));
	show("pwrite64", syscall(SYS_pwrite64, fd, "abc", 3, 20));
	n = show("pread64", syscall(SYS_pread64, fd, buf, sizeof(buf), 0));
	printf("hole is zero: %d\n", n == 23 && buf[15] == 0);
	show("lseek", syscall(SYS_lseek, fd, 2, SEEK_SET));
	n = show("read", syscall(SYS_read, fd, buf, 4));
	show_bytes("read bytes", buf, n);
	iov[0] = (struct iovec){ "xy", 2 };
	iov[1] = (struct iovec){ "zw", 2 };
	show("pwritev", syscall(SYS_pwritev, fd, iov, 2, 4, 0));
	iov[0] = (struct iovec){ buf, 3 };
	iov[1] = (struct iovec){ buf + 3, 5 };
	n = show("preadv", syscall(SYS_preadv, fd, iov, 2, 2, 0));
	show_bytes("preadv bytes", buf, n);
	show("writev", syscall(SYS_writev, fd, iov, 1));
	show("fsync", syscall(SYS_fsync, fd));
	show("fdatasync", syscall(SYS_fdatasync, fd));
	show("fstat", syscall(SYS_fstat, fd, &st));
	printf("fstat size %lld mode %o\n", (long long)st.st_size, st.st_mode);
	show("statx", syscall(SYS_statx, AT_FDCWD, path, 0, STATX_BASIC_STATS,
			      &stx));
	printf("statx size %llu nlink %u\n", (unsigned long long)stx.stx_size,
	       stx.stx_nlink);
	show("newfstatat", syscall(SYS_newfstatat, AT_FDCWD, path, &st, 0));
	printf("newfstatat size %lld\n", (long long)st.st_size);

	/* copy_file_range in one file, as fsx does, then to another */
	o1 = 0;
	o2 = 100;
	show("copy_file_range", syscall(SYS_copy_file_range, fd, &o1, fd, &o2,
					10, 0));
	printf("offsets after: %lld %lld\n", (long long)o1, (long long)o2);
	n = show("pread copy", syscall(SYS_pread64, fd, buf, 10, 100));
	show_bytes("copied bytes", buf, n);
	snprintf(path2, sizeof(path2), "%s/g", argv[1]);
	fd2 = show("creat g", syscall(SYS_openat, AT_FDCWD, path2,
				      O_CREAT | O_RDWR, 0600));
	o1 = 20;
	show("copy to g", syscall(SYS_copy_file_range, fd, &o1, fd2, NULL, 3,
				  0));
	n = show("read g", syscall(SYS_pread64, fd2, buf, 16, 0));
	show_bytes("g bytes", buf, n);
	show("sendfile", syscall(SYS_sendfile, fd2, fd, NULL, 4));
	{
		int p[2];
		loff_t at = 1;

		if (pipe(p))
			return 1;
		show("splice to pipe", syscall(SYS_splice, fd, &at, p[1], NULL,
					       5, 0));
		show("splice from pipe", syscall(SYS_splice, p[0], NULL, fd2,
						 NULL, 16, 0));
		n = show("read g again", syscall(SYS_pread64, fd2, buf, 16, 0));
		show_bytes("g bytes", buf, n);
		close(p[0]);
		close(p[1]);
	}

	show("fallocate", syscall(SYS_fallocate, fd, 0, 0, 8192));
	show("punch", syscall(SYS_fallocate, fd,
			      FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			      4096));
	show("ftruncate", syscall(SYS_ftruncate, fd, 6000));
	show("fstat after", syscall(SYS_fstat, fd, &st));
	printf("size %lld\n", (long long)st.st_size);
	show("fadvise64", syscall(SYS_fadvise64, fd, 0, 0,
				  POSIX_FADV_SEQUENTIAL));
	show("fcntl getfl", syscall(SYS_fcntl, fd, F_GETFL) & O_ACCMODE);
	show("flock", syscall(SYS_flock, fd, LOCK_EX | LOCK_NB));

	/* a shared mapping made by number sees the file's bytes */
	show("pwrite page", syscall(SYS_pwrite64, fd, "mapped!", 7, 4096));
	m = (char *)syscall(SYS_mmap, NULL, 8192, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		show("mmap", -1);
	} else {
		show_bytes("mmap bytes", m + 4096, 7);
		memcpy(m + 4096, "MAPPED", 6);
		show("munmap", syscall(SYS_munmap, m, 8192));
		n = show("pread mapped", syscall(SYS_pread64, fd, buf, 7,
						 4096));
		show_bytes("after store", buf, n);
	}

	/* descriptors */
	fd2 = show("dup", syscall(SYS_dup, fd) >= 0);
	show("dup3", syscall(SYS_dup3, fd, 40, O_CLOEXEC));
	n = show("pread via dup3", syscall(SYS_pread64, 40, buf, 3, 0));
	show_bytes("dup3 bytes", buf, n);
	show("close 40", syscall(SYS_close, 40));
	show("pread closed", syscall(SYS_pread64, 40, buf, 3, 0));
	show("close", syscall(SYS_close, fd));

	/* openat2 without restrictions */
	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY;
	fd = show("openat2", syscall(SYS_openat2, AT_FDCWD, path, &how,
				     sizeof(how)) >= 0);

	/* names */
	snprintf(path2, sizeof(path2), "%s/d", argv[1]);
	show("mkdirat", syscall(SYS_mkdirat, AT_FDCWD, path2, 0755));
	dfd = syscall(SYS_openat, AT_FDCWD, path2, O_RDONLY | O_DIRECTORY);
	show("open dir", dfd >= 0);
	show("mknodat", syscall(SYS_mknodat, dfd, "fifo", S_IFIFO | 0600, 0));
	show("symlinkat", syscall(SYS_symlinkat, "../f", dfd, "ln"));
	n = show("readlinkat", syscall(SYS_readlinkat, dfd, "ln", buf, 64));
	show_bytes("link", buf, n);
	show("linkat", syscall(SYS_linkat, AT_FDCWD, path, dfd, "hard", 0));
	show("renameat2", syscall(SYS_renameat2, dfd, "hard", dfd, "hard2",
				  RENAME_NOREPLACE));
	show("renameat2 noreplace", syscall(SYS_renameat2, dfd, "hard2", dfd,
					    "ln", RENAME_NOREPLACE));
	show("fchmodat", syscall(SYS_fchmodat, dfd, "hard2", 0640));
	show("faccessat", syscall(SYS_faccessat, dfd, "hard2", R_OK));
	show("faccessat2", syscall(SYS_faccessat2, dfd, "ln", F_OK,
				   AT_SYMLINK_NOFOLLOW));
	show("fstatat", syscall(SYS_newfstatat, dfd, "hard2", &st, 0));
	printf("hard2 mode %o nlink %lu\n", st.st_mode,
	       (unsigned long)st.st_nlink);
	show("utimensat null path", syscall(SYS_utimensat, dfd, NULL, NULL,
					    0));
	n = show("getdents64", syscall(SYS_getdents64, dfd, buf, sizeof(buf)));
	show_dents("entries", buf, n);
	show("fchdir", syscall(SYS_fchdir, dfd));
	n = show("getcwd", syscall(SYS_getcwd, cwd, sizeof(cwd)) > 0);
	printf("cwd ends in /d: %d\n",
	       !strcmp(cwd + strlen(cwd) - 2, "/d"));
	show("unlinkat rel", syscall(SYS_unlinkat, AT_FDCWD, "fifo", 0));
	show("unlinkat", syscall(SYS_unlinkat, dfd, "ln", 0));
	show("unlinkat hard2", syscall(SYS_unlinkat, dfd, "hard2", 0));
	show("chdir ..", syscall(SYS_chdir, ".."));
	show("close dir", syscall(SYS_close, dfd));
	show("rmdir", syscall(SYS_unlinkat, AT_FDCWD, path2, AT_REMOVEDIR));
	show("truncate", syscall(SYS_truncate, path, 3));
	show("stat after truncate", syscall(SYS_newfstatat, AT_FDCWD, path,
					    &st, 0));
	printf("size %lld\n", (long long)st.st_size);
	show("unlink", syscall(SYS_unlinkat, AT_FDCWD, path, 0));
	show("open gone", syscall(SYS_openat, AT_FDCWD, path, O_RDONLY));
	return 0;
}
