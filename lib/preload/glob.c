// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * glob: glibc's reads directories with its internal opendir and lstat,
 * which no preload sees, so a pattern under the region matched nothing.
 * GLOB_ALTDIRFUNC makes it call the functions we give it: ours.  A caller
 * that gives its own keeps them.  docs/preload.md "What is covered".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include "preload.h"

static void dir_close(void *d)
{
	closedir(d);
}

static void *dir_open(const char *path)
{
	return opendir(path);
}

static void *dir_read(void *d)
{
	return readdir(d);
}

static int path_lstat(const char *restrict path, struct stat *restrict st)
{
	return lstat(path, st);
}

static int path_stat(const char *restrict path, struct stat *restrict st)
{
	return stat(path, st);
}

/* Our directory functions for pg, unless the caller gave its own. */
static int with_ours(int flags, glob_t *pg)
{
	if ((flags & GLOB_ALTDIRFUNC) || !pl_cfg.enabled)
		return flags;
	pg->gl_closedir = dir_close;
	pg->gl_opendir = dir_open;
	pg->gl_readdir = (struct dirent *(*)(void *))dir_read;
	pg->gl_lstat = path_lstat;
	pg->gl_stat = path_stat;
	return flags | GLOB_ALTDIRFUNC;
}

PUBLIC int glob(const char *pattern, int flags,
		int (*errfunc)(const char *, int), glob_t *pg)
{
	REAL(int, glob, const char *, int, int (*)(const char *, int),
	     glob_t *);

	return real_glob(pattern, with_ours(flags, pg), errfunc, pg);
}

/* 64-bit: glob64_t and struct dirent64 are glob_t and struct dirent. */
_Static_assert(sizeof(glob64_t) == sizeof(glob_t), "glob64_t");

PUBLIC int glob64(const char *pattern, int flags,
		  int (*errfunc)(const char *, int), glob64_t *pg)
{
	REAL(int, glob64, const char *, int, int (*)(const char *, int),
	     glob64_t *);

	return real_glob64(pattern, with_ours(flags, (glob_t *)pg), errfunc,
			   pg);
}
