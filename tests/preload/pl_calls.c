// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Calls every interposed call once in DIR and prints what a user would
 * check, without inode numbers or times of day.  tests/test_preload.py
 * runs it under `daxfs run` (DIR in the region) and on tmpfs and compares
 * the outputs byte for byte.
 *
 * Usage: pl_calls DIR | pl_calls --child FD (exec hand-over check)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <limits.h>
#include <sys/ipc.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int show(const char *what, long r)
{
	printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "",
	       r < 0 ? strerror(errno) : "");
	return (int)r;
}

static void show_stat(const char *what, const struct stat *st)
{
	printf("%s: mode %o nlink %lu size %lld\n", what, st->st_mode,
	       (unsigned long)st->st_nlink,
	       S_ISDIR(st->st_mode) ? 0LL : (long long)st->st_size);
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list(const char *what, DIR *d)
{
	char *names[64];
	struct dirent *e;
	int n = 0, i;

	while ((e = readdir(d)) && n < 64)
		names[n++] = strdup(e->d_name);
	qsort(names, n, sizeof(names[0]), cmp_name);
	printf("%s:", what);
	for (i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

/* fallocate's punch, preallocation and the holes lseek finds
 * (docs/files.md "fallocate"); tmpfs has no ZERO_RANGE, so not here. */
static void hole_calls(void)
{
	static char page[4096];
	struct stat st;
	int fd, i, n;

	memset(page, 'x', sizeof(page));
	fd = show("open holes", open("h", O_CREAT | O_RDWR | O_TRUNC, 0600));
	for (i = 0; i < 5; i++)
		show("write page", write(fd, page, sizeof(page)));
	show("punch", fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				4096 + 10, 2 * 4096));
	show("punch no keep", fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096));
	show("lseek hole 0", lseek(fd, 0, SEEK_HOLE));
	show("lseek data 8192", lseek(fd, 8192, SEEK_DATA));
	show("lseek hole 12288", lseek(fd, 12288, SEEK_HOLE));
	for (i = 0; i < 5; i++) {
		char *z;

		show("pread page", pread(fd, page, sizeof(page), i * 4096L));
		z = memchr(page, 0, sizeof(page));
		for (n = 0; z && z + n < page + sizeof(page) && !z[n]; n++)
			;
		printf("page %d: zeros at %ld, %d of them\n", i,
		       z ? (long)(z - page) : -1L, n);
	}
	show("keep size", fallocate(fd, FALLOC_FL_KEEP_SIZE, 8 * 4096, 4096));
	show("stat keep size", fstat(fd, &st));
	printf("size: %lld\n", (long long)st.st_size);
	show("lseek data past end", lseek(fd, 5 * 4096, SEEK_DATA));
	show("fallocate empty", fallocate(fd, 0, 0, 0));
	show("posix_fallocate grow", posix_fallocate(fd, 0, 6 * 4096));
	show("stat grown", fstat(fd, &st));
	printf("size: %lld\n", (long long)st.st_size);
	close(fd);
	fd = show("open rdonly", open("h", O_RDONLY));
	show("fallocate rdonly", fallocate(fd, 0, 0, 4096));
	close(fd);
}

static void data_calls(void)
{
	char buf[64] = { 0 }, a[4] = "abc", b[4] = "def";
	struct iovec iov[2] = { { a, 3 }, { b, 3 } };
	struct stat st;
	int fd, fd2;

	fd = show("open creat", open("f", O_CREAT | O_RDWR | O_EXCL, 0640));
	show("open excl again", open("f", O_CREAT | O_RDWR | O_EXCL, 0640));
	show("write", write(fd, "hello world", 11));
	show("lseek cur", lseek(fd, 0, SEEK_CUR));
	show("pwrite", pwrite(fd, "W", 1, 6));
	show("lseek set", lseek(fd, 0, SEEK_SET));
	show("read", read(fd, buf, sizeof(buf)));
	printf("data: %s\n", buf);
	show("read eof", read(fd, buf, sizeof(buf)));
	show("writev", writev(fd, iov, 2));
	show("pwritev", pwritev(fd, iov, 2, 20));
	memset(buf, 0, sizeof(buf));
	show("preadv", preadv(fd, iov, 2, 0));
	printf("iov: %.3s %.3s\n", a, b);
	show("pread hole", pread(fd, buf, 10, 15));
	printf("hole: %d %d\n", buf[0], buf[2]);
	show("lseek end", lseek(fd, 0, SEEK_END));
	show("lseek data", lseek(fd, 3, SEEK_DATA));
	show("lseek hole", lseek(fd, 3, SEEK_HOLE));
	show("lseek data past end", lseek(fd, 100, SEEK_DATA));
	show("fstat", fstat(fd, &st));
	show_stat("fstat", &st);
	show("ftruncate", ftruncate(fd, 5));
	show("fsync", fsync(fd));
	show("fdatasync", fdatasync(fd));
	show("stat", stat("f", &st));
	show_stat("stat", &st);
	show("fallocate", fallocate(fd, 0, 0, 100));
	show("posix_fallocate", posix_fallocate(fd, 0, 200));
	show("stat after fallocate", stat("f", &st));
	show_stat("stat", &st);
	show("truncate", truncate("f", 11));
	fd2 = show("open append", open("f", O_WRONLY | O_APPEND));
	show("write append", write(fd2, "!", 1));
	show("lseek after append", lseek(fd2, 0, SEEK_CUR));
	show("read wronly", read(fd2, buf, 1));
	show("close", close(fd2));
	show("close again", close(fd2));
	show("open trunc", fd2 = open("f2", O_CREAT | O_WRONLY | O_TRUNC, 0600));
	show("write f2", write(fd2, "0123456789", 10));
	close(fd2);
	fd2 = open("f2", O_RDONLY);
	show("lseek f2", lseek(fd2, 0, SEEK_SET));
	show("sendfile", sendfile(fd, fd2, NULL, 4));
	show("copy_file_range", copy_file_range(fd2, NULL, fd, NULL, 3, 0));
	close(fd2);
	show("fstat", fstat(fd, &st));
	show_stat("after copies", &st);
	close(fd);
}

/* Lengths the compiler cannot see: with _FORTIFY_SOURCE these become
 * __read_chk, __pread_chk, __readlink_chk, __getcwd_chk, __realpath_chk. */
static void fortify_calls(void)
{
	volatile size_t len = 4;
	char buf[64] = { 0 }, rp[4096];
	int fd = open("f2", O_RDONLY);

	show("read len", read(fd, buf, len));
	show("pread len", pread(fd, buf + 4, len, 4));
	printf("fortify data: %s\n", buf);
	close(fd);
	symlink("f2", "fl");
	memset(buf, 0, sizeof(buf));
	show("readlink len", readlink("fl", buf, len));
	printf("fortify link: %s\n", buf);
	show("getcwd len", getcwd(rp, len * 1024) != NULL);
	show("realpath", realpath("fl", rp) != NULL);
	printf("realpath tail: %s\n", strrchr(rp, '/'));
	unlink("fl");
}

static void fd_calls(void)
{
	char buf[16] = { 0 };
	int fd, d1, d2, fl;

	fd = open("f", O_RDONLY);
	d1 = show("dup", dup(fd));
	show("read dup", read(d1, buf, 5));
	show("lseek shared", lseek(fd, 0, SEEK_CUR));
	d2 = show("dup2", dup2(fd, 40));
	show("dup3", dup3(fd, 41, O_CLOEXEC));
	show("getfd 41", fcntl(41, F_GETFD));
	show("getfd 40", fcntl(40, F_GETFD));
	show("f_dupfd", fcntl(fd, F_DUPFD, 50));
	fl = fcntl(fd, F_GETFL);
	show("getfl accmode", fl & O_ACCMODE);
	show("setfl append", fcntl(fd, F_SETFL, fl | O_APPEND));
	show("getfl append", !!(fcntl(fd, F_GETFL) & O_APPEND));
	{
		struct pollfd pf[2] = { { fd, POLLIN | POLLOUT, 0 },
					{ 0, 0, 0 } };
		fd_set rs, ws;
		struct timeval tv = { 0, 0 };

		show("poll", poll(pf, 2, 1000));
		printf("poll revents: %#x %#x\n", pf[0].revents, pf[1].revents);
		FD_ZERO(&rs);
		FD_ZERO(&ws);
		FD_SET(fd, &rs);
		FD_SET(fd, &ws);
		show("select", select(fd + 1, &rs, &ws, NULL, &tv));
		printf("select: %d %d\n", FD_ISSET(fd, &rs), FD_ISSET(fd, &ws));
	}
	show("dup2 over region", dup2(0, 40));
	show("close 41", close(41));
	show("close 50", close(50));
	show("close d1", close(d1));
	show("close d2", close(d2));
	close(fd);
}

static void meta_calls(void)
{
	struct timespec t[2] = { { 1000000000, 0 }, { 1200000000, 5 } };
	struct stat st;
	struct statx sx;
	char buf[64] = { 0 };
	int fd;

	show("mkdir", mkdir("d", 0750));
	show("mkdir again", mkdir("d", 0750));
	show("mkdirat", mkdirat(AT_FDCWD, "d/sub", 0700));
	show("rmdir not empty", rmdir("d"));
	show("symlink", symlink("f", "sl"));
	show("readlink", readlink("sl", buf, sizeof(buf)));
	show("readlink no room", readlink("sl", buf, 0));
	printf("target: %s\n", buf);
	show("lstat", lstat("sl", &st));
	printf("lstat link: %d\n", S_ISLNK(st.st_mode));
	show("stat via link", stat("sl", &st));
	show_stat("stat via link", &st);
	show("link", link("f", "hard"));
	show("stat hard", stat("hard", &st));
	show_stat("hard", &st);
	show("rename", rename("hard", "hard2"));
	show("renameat2 noreplace", renameat2(AT_FDCWD, "hard2", AT_FDCWD, "f",
					      RENAME_NOREPLACE));
	/* the whiteout: a character device 0/0 at the old name */
	show("renameat2 whiteout", renameat2(AT_FDCWD, "hard2", AT_FDCWD, "hard3",
					     RENAME_WHITEOUT));
	show("lstat whiteout", lstat("hard2", &st));
	printf("whiteout: chr %d rdev %lu nlink %lu\n", S_ISCHR(st.st_mode),
	       (unsigned long)st.st_rdev, (unsigned long)st.st_nlink);
	show("unlink whiteout", unlink("hard2"));
	show("rename back", rename("hard3", "hard2"));
	show("unlink", unlink("hard2"));
	show("unlink missing", unlink("hard2"));
	show("unlink dir", unlink("d"));
	show("chmod", chmod("f", 0604));
	fd = open("f", O_RDONLY);
	show("fchmod", fchmod(fd, 0644));
	show("fstat", fstat(fd, &st));
	show_stat("after fchmod", &st);
	show("futimens", futimens(fd, t));
	show("fstat", fstat(fd, &st));
	printf("mtime: %ld.%ld\n", (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	close(fd);
	show("utimensat", utimensat(AT_FDCWD, "f", t, 0));
	show("statx", statx(AT_FDCWD, "f", 0, STATX_BASIC_STATS, &sx));
	printf("statx: mode %o size %llu atime %lld\n", sx.stx_mode,
	       (unsigned long long)sx.stx_size, (long long)sx.stx_atime.tv_sec);
	show("access r", access("f", R_OK));
	show("access missing", access("nope", F_OK));
	show("faccessat", faccessat(AT_FDCWD, "d", X_OK, 0));
	show("chown same", chown("f", getuid(), getgid()));
	show("open missing", open("nope", O_RDONLY));
	show("open dir for write", open("d", O_WRONLY));
	show("open notdir", open("f/x", O_RDONLY));
	show("open O_DIRECTORY file", open("f", O_RDONLY | O_DIRECTORY));
	show("rename across", rename("f2", "/proc/pl-calls-never"));
}

static void dir_calls(void)
{
	char cwd[4096];
	DIR *d;
	int fd, sub;

	struct dirent **sl;
	struct statvfs vfs;
	int n, i;

	d = opendir(".");
	list("opendir", d);
	closedir(d);
	n = show("scandir", scandir(".", &sl, NULL, alphasort));
	printf("scandir:");
	for (i = 0; i < n; i++) {
		printf(" %s", sl[i]->d_name);
		free(sl[i]);
	}
	printf("\n");
	free(sl);
	show("statvfs", statvfs(".", &vfs));
	printf("namemax: %lu\n", (unsigned long)vfs.f_namemax);
	fd = open("d", O_RDONLY | O_DIRECTORY);
	sub = show("openat rel dirfd", openat(fd, "new", O_CREAT | O_WRONLY, 0600));
	close(sub);
	show("fstatat dirfd", fstatat(fd, "new", &(struct stat){ 0 }, 0));
	show("unlinkat dirfd", unlinkat(fd, "new", 0));
	show("unlinkat rmdir", unlinkat(fd, "sub", AT_REMOVEDIR));
	d = fdopendir(dup(fd));
	list("fdopendir", d);
	closedir(d);
	show("chdir", chdir("d"));
	show("creat in cwd", sub = creat("c", 0644));
	close(sub);
	show("getcwd", getcwd(cwd, sizeof(cwd)) != NULL);
	printf("cwd tail: %s\n", strrchr(cwd, '/'));
	show("stat up", access("../f", F_OK));
	show("fchdir", fchdir(fd));
	show("chdir up", chdir(".."));
	show("unlink c", unlink("d/c"));
	show("rmdir", rmdir("d"));
	close(fd);
}

static void stdio_calls(void)
{
	char buf[32] = { 0 };
	FILE *f;
	int fd;

	f = fopen("s", "w+");
	show("fopen", f != NULL);
	show("fileno valid", fcntl(fileno(f), F_GETFD) >= 0);
	show("fprintf", fprintf(f, "line %d\n", 42));
	show("fseek", fseek(f, 0, SEEK_SET));
	show("fread", fread(buf, 1, sizeof(buf), f));
	printf("stdio: %s", buf);
	show("ftell", ftell(f));
	show("fclose", fclose(f));
	fd = open("s", O_RDONLY);
	f = fdopen(fd, "r");
	show("fgets", fgets(buf, sizeof(buf), f) != NULL);
	printf("fgets: %s", buf);
	show("fclose fdopen", fclose(f));
	f = fopen("s", "a");
	fputs("more\n", f);
	fclose(f);
	f = fopen("s", "r");
	while (fgets(buf, sizeof(buf), f))
		printf("append: %s", buf);
	fclose(f);
	show("fopen missing", fopen("nope", "r") != NULL);
	/* dprintf writes with glibc's own write: the preload formats it
	 * (a long one past any small buffer too) */
	fd = open("s", O_WRONLY | O_APPEND);
	show("dprintf", dprintf(fd, "dprintf %d %s\n", 7, "x"));
	show("dprintf long", dprintf(fd, "%2000d\n", 5));
	close(fd);
	f = fopen("s", "r");
	while (fgets(buf, sizeof(buf), f))
		if (buf[0] != ' ')
			printf("after dprintf: %s", buf);
	show("ftell after dprintf", ftell(f));
	fclose(f);
}

static void mmap_calls(void)
{
	int fd = open("f2", O_RDONLY);
	char *p = mmap(NULL, 10, PROT_READ, MAP_PRIVATE, fd, 0);

	show("mmap private", p != MAP_FAILED);
	if (p != MAP_FAILED) {
		printf("mmap: %.10s\n", p);
		show("munmap", munmap(p, 10));
	}
	close(fd);
}

static void process_calls(const char *self)
{
	char buf[8] = { 0 }, arg[16];
	int fd = open("f2", O_RDONLY), st;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		read(fd, buf, 3);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	show("offset after child read", lseek(fd, 0, SEEK_CUR));
	fflush(stdout);
	snprintf(arg, sizeof(arg), "%d", fd);
	pid = fork();
	if (pid == 0) {
		execl(self, self, "--child", arg, (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	show("child status", WEXITSTATUS(st));
	show("offset after exec read", lseek(fd, 0, SEEK_CUR));
	show("system", system("exit 3") >> 8);
	close(fd);
}

/* What a walk reported, sorted (the order of entries is the
 * filesystem's). */
static char walk_lines[32][160];
static int walk_n, walk_skips;	/* FTW_ACTIONRETVAL: skip "skip" */

static int walk_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int on_nftw(const char *p, const struct stat *st __attribute__((unused)),
		   int type, struct FTW *f)
{
	if (walk_n < 32)
		snprintf(walk_lines[walk_n++], 160, "%s type %d base %d level %d",
			 p, type, f->base, f->level);
	if (walk_skips && strstr(p, "skip"))
		return FTW_SKIP_SUBTREE;
	return strstr(p, "stop") ? FTW_STOP : 0;
}

static int on_ftw(const char *p, const struct stat *st __attribute__((unused)),
		  int type)
{
	if (walk_n < 32)
		snprintf(walk_lines[walk_n++], 160, "%s type %d", p, type);
	return 0;
}

static void show_walk(const char *what, int r)
{
	int i;

	qsort(walk_lines, walk_n, sizeof(walk_lines[0]), walk_cmp);
	show(what, r);
	for (i = 0; i < walk_n; i++)
		printf("  %s\n", walk_lines[i]);
	walk_n = 0;
}

/* ftw and nftw over a small tree with links. */
static void walk_calls(void)
{
	mkdir("w", 0755);
	mkdir("w/a", 0755);
	mkdir("w/a/b", 0755);
	mkdir("w/skip", 0755);
	mkdir("w/skip/in", 0755);
	close(open("w/f", O_CREAT | O_WRONLY, 0644));
	close(open("w/a/g", O_CREAT | O_WRONLY, 0644));
	symlink("f", "w/ln");
	symlink("nowhere", "w/dangling");
	show_walk("nftw", nftw("w", on_nftw, 4, 0));
	show_walk("nftw phys depth", nftw("w", on_nftw, 4,
					  FTW_PHYS | FTW_DEPTH));
	/* from a relative start: below it the walk stands in the parent */
	show_walk("nftw chdir", nftw("w", on_nftw, 4, FTW_CHDIR));
	walk_skips = 1;
	show_walk("nftw actionretval", nftw("w", on_nftw, 4,
					    FTW_PHYS | FTW_ACTIONRETVAL));
	walk_skips = 0;
	show_walk("ftw", ftw("w/a", on_ftw, 4));
	show_walk("nftw missing", nftw("w/missing", on_nftw, 4, 0));
	mkdir("w/a/b/stop", 0755);
	show_walk("nftw stop", nftw("w/a/b", on_nftw, 4, FTW_PHYS));
}

/* libc calls whose system calls glibc makes inside itself: remove,
 * mkfifo[at], glob, ftw, nftw. */
/* glibc calls made of its internal system calls (lib/preload/shims.c) */
static void shim_calls(void)
{
	struct timeval tv[2] = { { 100, 0 }, { 200, 500 } };
	char tmpl[] = "tXXXXXX", tmpl2[] = "uXXXXXX.s", dents[4096];
	struct stat st;
	off64_t base = -1;
	char *(*mktemp_fn)(char *), *(*getwd_fn)(char *), wd[PATH_MAX];
	int fd = open("shim", O_RDWR | O_CREAT, 0644), d;

	show("write shim", write(fd, "0123456789", 10));
	show("lockf tlock", lockf(fd, F_TLOCK, 5));
	show("lockf test", lockf(fd, F_TEST, 5));
	show("lockf ulock", lockf(fd, F_ULOCK, 5));
	show("lockf bad", lockf(fd, 99, 5));
	show("futimes", futimes(fd, tv));
	fstat(fd, &st);
	printf("futimes: %ld %ld\n", (long)st.st_mtime, st.st_mtim.tv_nsec);
	show("futimesat", futimesat(AT_FDCWD, "shim", NULL));
	show("symlink shl", symlink("shim", "shl"));
	show("lutimes", lutimes("shl", tv));
	lstat("shl", &st);
	printf("lutimes: %ld\n", (long)st.st_mtime);
	show("lchmod file", lchmod("shim", 0600));
	show("lchmod link", lchmod("shl", 0600));
	fstat(fd, &st);
	printf("lchmod: %o\n", st.st_mode & 07777);
	show("pathconf name", pathconf("shim", _PC_NAME_MAX));
	show("pathconf no_trunc", pathconf(".", _PC_NO_TRUNC));
	show("pathconf missing", pathconf("nope", _PC_NAME_MAX));
	show("fpathconf", fpathconf(fd, _PC_PATH_MAX));
	show("syncfs", syncfs(fd));
	show("sync_file_range", sync_file_range(fd, 0, 10,
						SYNC_FILE_RANGE_WRITE));
	show("readahead", readahead(fd, 0, 10));
	show("ftok", ftok("shim", 1) != -1);
	show("ftok missing", ftok("nope", 1));
	close(fd);
	getwd_fn = (char *(*)(char *))dlsym(RTLD_DEFAULT, "getwd");
	printf("getwd: %s\n", getwd_fn(wd) ? wd : "NULL");
	d = open(".", O_RDONLY | O_DIRECTORY);
	show("getdirentries64 some", getdirentries64(d, dents, sizeof(dents),
						     &base) > 0);
	printf("getdirentries64 base: %lld\n", (long long)base);
	close(d);
	show("mkstemps64", (fd = mkstemps64(tmpl2, 2)) >= 0);
	close(fd);
	show("made", stat(tmpl2, &st));
	/* looked up, not linked: the linker warns of any program naming it */
	mktemp_fn = (char *(*)(char *))dlsym(RTLD_DEFAULT, "mktemp");
	show("mktemp", strlen(mktemp_fn(tmpl)));
	show("mktemp free", stat(tmpl, &st));
	unlink(tmpl2);
	unlink("shl");
	unlink("shim");
}

static void libc_internal_calls(void)
{
	struct stat st;
	glob_t g;
	size_t i;

	show("mkdir g", mkdir("g", 0755));
	show("mkfifo", mkfifo("g/fifo", 0640));
	show("lstat fifo", lstat("g/fifo", &st));
	printf("fifo: %d mode %o\n", S_ISFIFO(st.st_mode), st.st_mode & 07777);
	show("mkfifoat", mkfifoat(AT_FDCWD, "g/fifo2", 0600));
	close(open("g/file.txt", O_CREAT | O_WRONLY, 0644));
	show("mkdir g/sub", mkdir("g/sub", 0755));
	show("glob", glob("g/*i*", 0, NULL, &g));
	for (i = 0; i < g.gl_pathc; i++)
		printf("glob match: %s\n", g.gl_pathv[i]);
	globfree(&g);
	show("glob none", glob("g/*.none", 0, NULL, &g));
	show("remove file", remove("g/file.txt"));
	show("remove dir", remove("g/sub"));
	show("remove fifo", remove("g/fifo"));
	show("remove missing", remove("g/missing"));
	show("remove nonempty", remove("g"));
	show("remove fifo2", remove("g/fifo2"));
	show("remove g", remove("g"));
	walk_calls();
	shim_calls();
}

int main(int argc, char **argv)
{
	char buf[8] = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--child")) {
		show("child read", read(atoi(argv[2]), buf, 4));
		printf("child data: %s\n", buf);
		return 5;
	}
	if (argc != 2 || chdir(argv[1])) {
		fprintf(stderr, "usage: pl_calls DIR\n");
		return 2;
	}
	umask(022);
	data_calls();
	hole_calls();
	fortify_calls();
	fd_calls();
	meta_calls();
	dir_calls();
	stdio_calls();
	mmap_calls();
	libc_internal_calls();
	process_calls(argv[0]);
	return 0;
}
