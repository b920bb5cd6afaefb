// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The descriptor links of /proc: "/proc/self/fd/N", "/dev/fd/N",
 * "/dev/stdout" and their kin name the file descriptor N is open on.
 * The kernel sees only what stands behind a region descriptor (an O_PATH
 * of /dev/null, fdtable.c reserve_fd), so these paths go through here:
 * without it, a program that wrote to "/dev/stdout" while its standard
 * output was a region file wrote into /dev/null, and was told it had
 * (docs/preload.md "Descriptor links").
 *
 * Only the absolute spellings of the calling process are known: a
 * descriptor link reached through a symlink of another name, through a
 * descriptor of /proc, or of another process goes to the kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

/* The descriptor number at s, or -1; *end gets what follows it. */
static int fd_number(const char *s, const char **end)
{
	long n = 0;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		n = n * 10 + (*s++ - '0');
		if (n >= PL_FD_MAX)
			return -1;
	}
	if (*s && *s != '/')
		return -1;
	*end = s;
	return (int)n;
}

/* s past prefix, or NULL where s does not start with it. */
static const char *past(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(s, prefix, n) ? NULL : s + n;
}

/* s past "/proc/self/WHAT", "/proc/thread-self/WHAT" or "/proc/PID/WHAT"
 * (this process's PID), or NULL. */
static const char *past_proc(const char *s, const char *what)
{
	char own[48];
	const char *p = past(s, "/proc/");

	if (!p)
		return NULL;
	snprintf(own, sizeof(own), "/proc/self/%s", what);
	if ((p = past(s, own)))
		return p;
	snprintf(own, sizeof(own), "/proc/thread-self/%s", what);
	if ((p = past(s, own)))
		return p;
	snprintf(own, sizeof(own), "/proc/%d/%s", (int)getpid(), what);
	return past(s, own);
}

int pl_fd_link(const char *path, const char **rest)
{
	static const char *const std[] = { "/dev/stdin", "/dev/stdout",
					   "/dev/stderr" };
	const char *s;
	int i, fd = -1;

	if (!path || path[0] != '/')
		return -1;
	for (i = 0; i < 3; i++) {
		if (!strcmp(path, std[i])) {
			*rest = path + strlen(path);
			fd = i;
		}
	}
	if (fd < 0) {
		s = past(path, "/dev/fd/");
		if (!s)
			s = past_proc(path, "fd/");
		if (s)
			fd = fd_number(s, rest);
	}
	return fd >= 0 && pl_fd_is_region(fd) ? fd : -1;
}

int pl_fd_link_exact(const char *path)
{
	const char *rest;
	int fd = pl_fd_link(path, &rest);

	return fd >= 0 && !*rest ? fd : -1;
}

/*
 * pl_route for a call that follows a final symlink: the exact link of a
 * region descriptor routes to the file itself.  A directory's goes as
 * "." from the descriptor (a removed one included); a file's as the
 * region path it was opened by, if that still names it: a file renamed
 * or removed since is ESTALE, not whatever has the name now.  (open and
 * stat reach such a file by its number: pl_open_fd_link, at_attr.)
 */
int pl_route_follow(int dirfd, const char *path, char *out)
{
	struct daxfs_handle *h;
	struct daxfs_attr a;
	struct pl_desc *d;
	uint64_t ino;
	int fd = pl_fd_link_exact(path), kind;

	if (fd < 0)
		return pl_route(dirfd, path, out);
	d = pl_fd_get(fd);
	if (!d)
		return pl_route(dirfd, path, out);
	kind = d->kind;
	ino = d->ino;
	snprintf(out, PL_PATH_MAX, "%s", d->path);
	pl_fd_put(d);
	if (kind == PL_KIND_DIR)
		return pl_route(fd, ".", out);
	pl_self.on = false;
	h = pl_handle();
	if (!h)
		return -1;
	if (daxfs_path_stat(h, out, &a) || a.ino != ino)
		return pl_fail(-ESTALE);
	return PL_REGION;
}

/*
 * What readlink says of the exact link of region descriptor fd: the
 * file's path under DIR, " (deleted)" after it when it has no name left,
 * as the kernel's d_path.  The length, or -1 (errno).
 */
int pl_fd_link_target(int fd, char *out, size_t size)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_attr a;
	struct pl_desc *d;
	bool gone;
	int n;

	if (!h)
		return -1;
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	gone = d->kind == PL_KIND_DIR ? pl_gone_load(d, &(struct pl_gone){ 0 })
				      : !daxfs_fstat(h, d->ino, &a) && !a.nlink;
	n = pl_dir_path(out, size, d->path, gone ? " (deleted)" : "");
	pl_fd_put(d);
	return n;
}

/*
 * "/proc/self/cwd" while the working directory is a region directory:
 * the kernel's is a stand-in (route.c), so the link and the paths below
 * it are taken here as "." and relative paths.  What follows the link
 * ("" or "/..."), or NULL for any other path or a kernel working
 * directory.
 */
const char *pl_cwd_link(const char *path)
{
	char v[PL_PATH_MAX];
	const char *rest = path && path[0] == '/' ? past_proc(path, "cwd") : NULL;

	if (!rest || (*rest && *rest != '/') || !pl_cwd_copy(v, sizeof(v)))
		return NULL;
	return rest;
}

/* readlink of "/proc/self/cwd" (pl_cwd_link): the region working
 * directory's path under DIR, as getcwd says, " (deleted)" after a
 * removed one's. */
int pl_cwd_link_target(char *out, size_t size)
{
	char v[PL_PATH_MAX];

	if (!pl_cwd_copy(v, sizeof(v)))
		return pl_fail(-ENOENT);
	return pl_dir_path(out, size, v, pl_cwd_gone() ? " (deleted)" : "");
}
