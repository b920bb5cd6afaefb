// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Exec of a region file (docs/preload.md "Running region files").
 *
 * The kernel cannot open a region path, so an exec of one (execve, the
 * exec family's PATH search, fexecve of a region descriptor, posix_spawn)
 * is prepared here first, with the kernel's rules:
 *
 *  - "#!interpreter [arg]": the interpreter is exec'ed with argv
 *    [interpreter, arg, the path as given, argv[1], ...]; it runs under
 *    the preload and reads the script by that path.  An interpreter that
 *    is itself a region file is prepared in turn, at most 4 deep (ELOOP);
 *  - anything else is copied into a close-on-exec memfd, which the kernel
 *    execs by "/proc/self/fd/N" (ENOEXEC from the kernel as for any file).
 *
 * Execute permission is checked as exec checks it (the effective ids);
 * reading the copy needs no read permission, as the kernel's exec does
 * not (the preload enforces no mode bits on opens, docs/preload.md
 * "Credentials").  Set-user-ID bits are ignored, as on a nosuid mount.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"
#include "runfile.h"

#define SHEBANG_MAX	256	/* the kernel's BINPRM_BUF_SIZE */
#define INTERP_DEPTH	4	/* the kernel's BINPRM_MAX_RECURSION */
#define COPY_CHUNK	(1 << 20)

/* argv for interpreter interp [arg] running script: the old argv[0]
 * goes, as the kernel does. */
static int argv_interp(struct pl_run *r, char *const argv[], char *interp,
		       char *arg, const char *script)
{
	size_t n = 0, k = 0, i;
	char **out;

	while (argv && argv[n])
		n++;
	out = malloc((n + 4) * sizeof(*out));
	if (!out)
		return pl_fail(-ENOMEM);
	out[k++] = interp;
	if (arg)
		out[k++] = arg;
	out[k++] = (char *)script;
	for (i = 1; i < n; i++)
		out[k++] = argv[i];
	out[k] = NULL;
	free(r->argv);
	r->argv = out;
	return 0;
}

/* "#!interp [arg]" in buf (n bytes): interp and arg point into a line
 * kept in r; -ENOEXEC for no interpreter. */
static int shebang(struct pl_run *r, const char *buf, size_t n, char **interp,
		   char **arg)
{
	char *line, *p, *end;

	if (r->nlines == INTERP_DEPTH + 1)
		return -ELOOP;
	line = strndup(buf + 2, n - 2);
	if (!line)
		return -ENOMEM;
	r->lines[r->nlines++] = line;
	end = strchr(line, '\n');
	if (end)
		*end = 0;
	for (p = line; *p == ' ' || *p == '\t'; p++)
		;
	*interp = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	end = p + strlen(p);
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\r'))
		*--end = 0;
	*arg = *p ? p : NULL;
	return **interp ? 0 : -ENOEXEC;
}

/* A copy of region file src (read with pread: its offset is the
 * program's) in a close-on-exec memfd named name. */
static int copy_to_memfd(int src, const char *name)
{
	char *buf = malloc(COPY_CHUNK), shown[64];
	off_t off = 0;
	ssize_t n = 1;
	int mfd, err = 0;

	if (!buf)
		return pl_fail(-ENOMEM);
	/* a memfd's name is at most 249 bytes; ps shows 15 anyway */
	snprintf(shown, sizeof(shown), "%s", name);
	mfd = memfd_create(shown, MFD_CLOEXEC);
	while (mfd >= 0 && n > 0) {
		n = pread(src, buf, COPY_CHUNK, off);
		if (n > 0 && write(mfd, buf, (size_t)n) != n)
			n = -1;
		off += n > 0 ? n : 0;
	}
	if (mfd >= 0 && n < 0) {
		err = errno;
		close(mfd);
		mfd = -1;
		errno = err;
	}
	free(buf);
	return mfd;
}

/* Region file src (path: how the caller named it, for the script's
 * argument) ready for the kernel in r. */
static int prepare_file(struct pl_run *r, int src, const char *path,
			char *const argv[], int depth)
{
	char buf[SHEBANG_MAX], *interp, *arg;
	const char *base;
	struct stat st;
	ssize_t n;
	int err;

	if (fstat(src, &st))
		return -1;
	if (!S_ISREG(st.st_mode))
		return pl_fail(-EACCES);
	n = pread(src, buf, sizeof(buf), 0);
	if (n < 0)
		return -1;
	if (n >= 2 && buf[0] == '#' && buf[1] == '!') {
		err = shebang(r, buf, (size_t)n, &interp, &arg);
		if (err)
			return pl_fail(err);
		if (argv_interp(r, argv, interp, arg, path))
			return -1;
		/* the interpreter's argv is ours now: it goes on with it */
		return pl_run_prepare_at(r, interp, -1, r->argv, depth + 1);
	}
	base = strrchr(path, '/');
	r->memfd = copy_to_memfd(src, base ? base + 1 : path);
	if (r->memfd < 0)
		return -1;
	snprintf(r->kpath, sizeof(r->kpath), "/proc/self/fd/%d", r->memfd);
	return 0;
}

/* Whether region path rpath is a link to a kernel file (a venv's
 * "bin/python" to "/usr/bin/python3"): then rpath becomes its path. */
static bool leads_out(char *rpath)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_attr a;

	return h && pl_outside(daxfs_path_stat(h, rpath, &a), rpath);
}

/*
 * Prepares the exec of path (fd < 0) or of region descriptor fd, with
 * argv.  1: not a region file, r->kpath is the path for the kernel as it
 * was (argv as it was, or r->argv when an interpreter line led here);
 * 0: r->kpath and r->argv (NULL: argv) are what the kernel execs;
 * -1: errno set.  pl_run_end frees what r holds.
 */
int pl_run_prepare_at(struct pl_run *r, const char *path, int fd,
		      char *const argv[], int depth)
{
	char rpath[PL_PATH_MAX], fdpath[32];
	int rt, src, err;

	if (depth > INTERP_DEPTH)
		return pl_fail(-ELOOP);
	if (fd < 0) {
		rt = pl_route(AT_FDCWD, path, rpath);
		if (rt < 0)
			return -1;
		if (rt == PL_REGION && leads_out(rpath))
			rt = PL_KERNEL_ABS;	/* rpath: the kernel's file */
		if (rt != PL_REGION) {
			snprintf(r->kpath, sizeof(r->kpath), "%s",
				 PL_KPATH(rt, path, rpath));
			return 1;
		}
	} else {
		snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
		path = fdpath;
	}
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS))
		return -1;
	src = open(path, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return -1;
	err = prepare_file(r, src, path, argv, depth);
	rt = errno;
	close(src);
	errno = rt;
	return err;
}

int pl_run_prepare(struct pl_run *r, const char *path, int fd,
		   char *const argv[])
{
	memset(r, 0, sizeof(*r));
	r->memfd = -1;
	return pl_run_prepare_at(r, path, fd, argv, 0);
}

void pl_run_end(struct pl_run *r)
{
	int err = errno;

	if (r->memfd >= 0)
		close(r->memfd);
	free(r->argv);
	r->argv = NULL;
	while (r->nlines)
		free(r->lines[--r->nlines]);
	r->memfd = -1;
	errno = err;
}

/* Whether a PATH entry of the exec family's search is in the region. */
static bool path_has_region(const char *list)
{
	char dir[PL_PATH_MAX], rpath[PL_PATH_MAX];
	const char *p = list, *end;
	size_t n;

	while (p) {
		end = strchr(p, ':');
		n = end ? (size_t)(end - p) : strlen(p);
		snprintf(dir, sizeof(dir), "%.*s", (int)n, n ? p : ".");
		if (pl_route(AT_FDCWD, dir, rpath) == PL_REGION)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/*
 * The exec family's PATH search for file (no slash in it) when PATH has a
 * region directory: the first entry where file exists and may be
 * executed, into out.  0, or -1 with errno (EACCES when one was found but
 * none may be executed, else ENOENT).  1: PATH has no region directory,
 * the kernel's search (glibc's) goes as it is.
 */
int pl_run_search(const char *file, char *out, size_t size)
{
	const char *list = getenv("PATH"), *p, *end;
	bool denied = false;
	struct stat st;
	size_t n;

	if (!list)
		list = "/bin:/usr/bin";
	if (!path_has_region(list))
		return 1;
	for (p = list; p; p = end ? end + 1 : NULL) {
		end = strchr(p, ':');
		n = end ? (size_t)(end - p) : strlen(p);
		if ((size_t)snprintf(out, size, "%.*s%s%s", (int)n, p,
				     n ? "/" : "", file) >= size)
			continue;
		/* a directory of that name is passed over, as execve's
		 * EACCES is */
		if (stat(out, &st) || !S_ISREG(st.st_mode))
			continue;
		if (!faccessat(AT_FDCWD, out, X_OK, AT_EACCESS))
			return 0;
		denied |= errno == EACCES;
	}
	return pl_fail(denied ? -EACCES : -ENOENT);
}

/* The new image of a region program takes the file's name (exec.c
 * run_comm_env). */
void pl_run_comm_import(void)
{
	const char *comm = getenv("DAXFS_PRELOAD_COMM");

	if (!comm)
		return;
	prctl(PR_SET_NAME, comm);
	unsetenv("DAXFS_PRELOAD_COMM");
}
