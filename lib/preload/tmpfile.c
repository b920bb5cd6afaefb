// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * mkstemp and mkdtemp families: glibc creates the file with its internal
 * open, so a template under DIR is filled and created here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

static const char letters[] =
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

enum { NAME_ONLY = 2 };	/* mktemp: a name nothing has */

/* Fills the six X's before the suffix and makes the file (dir 0), the
 * directory (1) or nothing (NAME_ONLY); retries on EEXIST as glibc does.
 * Returns the file's descriptor or 0, -1 with errno. */
static int fill_and_make(char *tmpl, int suffixlen, int flags, int dir)
{
	size_t len = strlen(tmpl);
	char *x, buf[PL_PATH_MAX];
	unsigned char rnd[6];
	struct stat st;
	int tries, i, r;

	if (suffixlen < 0 || len < (size_t)suffixlen + 6 ||
	    memcmp(tmpl + len - suffixlen - 6, "XXXXXX", 6)) {
		errno = EINVAL;
		return -1;
	}
	x = tmpl + len - suffixlen - 6;
	for (tries = 0; tries < 1000; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
			return -1;
		for (i = 0; i < 6; i++)
			x[i] = letters[rnd[i] % (sizeof(letters) - 1)];
		if (pl_route(AT_FDCWD, tmpl, buf) != PL_REGION) {
			errno = EINVAL;
			return -1;
		}
		if (dir == NAME_ONLY)
			r = lstat(tmpl, &st) ? (errno == ENOENT ? 0 : -1)
					     : (errno = EEXIST, -1);
		else
			r = dir ? mkdir(tmpl, 0700)
				: pl_open_region(buf, O_RDWR | O_CREAT |
						 O_EXCL | (flags & ~O_ACCMODE),
						 0600);
		if (r >= 0 || errno != EEXIST)
			return r;
	}
	errno = EEXIST;
	return -1;
}

/* 1: tmpl is in the region, 0: the kernel's; -1 (errno set): neither,
 * and not libc's to create as written (in the kernel's DIR, say) */
static int in_region(const char *tmpl)
{
	char buf[PL_PATH_MAX];
	int r = pl_route(AT_FDCWD, tmpl, buf);

	return r < 0 ? -1 : r == PL_REGION;
}

PUBLIC int mkostemps(char *tmpl, int suffixlen, int flags)
{
	REAL(int, mkostemps, char *, int, int);
	int r = in_region(tmpl);

	if (r < 0)
		return -1;
	if (!r)
		return real_mkostemps(tmpl, suffixlen, flags);
	return fill_and_make(tmpl, suffixlen, flags, 0);
}

PUBLIC int mkstemp(char *tmpl)
{
	return mkostemps(tmpl, 0, 0);
}

PUBLIC int mkstemp64(char *tmpl)
{
	return mkostemps(tmpl, 0, 0);
}

PUBLIC int mkostemp(char *tmpl, int flags)
{
	return mkostemps(tmpl, 0, flags);
}

PUBLIC int mkostemp64(char *tmpl, int flags)
{
	return mkostemps(tmpl, 0, flags);
}

PUBLIC int mkstemps(char *tmpl, int suffixlen)
{
	return mkostemps(tmpl, suffixlen, 0);
}

PUBLIC int mkstemps64(char *tmpl, int suffixlen)
{
	return mkostemps(tmpl, suffixlen, 0);
}

PUBLIC int mkostemps64(char *tmpl, int suffixlen, int flags)
{
	return mkostemps(tmpl, suffixlen, flags);
}

PUBLIC char *mkdtemp(char *tmpl)
{
	REAL(char *, mkdtemp, char *);
	int r = in_region(tmpl);

	if (r < 0)
		return NULL;
	if (!r)
		return real_mkdtemp(tmpl);
	return fill_and_make(tmpl, 0, 0, 1) < 0 ? NULL : tmpl;
}

/* mktemp: glibc looks the names up with its internal lstat, which says
 * ENOENT for every region path: it could hand out a name a region file
 * has.  An empty string on failure, as glibc's. */
PUBLIC char *mktemp(char *tmpl)
{
	REAL(char *, mktemp, char *);
	int r = in_region(tmpl);

	if (!r)
		return real_mktemp(tmpl);
	if (r < 0 || fill_and_make(tmpl, 0, 0, NAME_ONLY) < 0)
		tmpl[0] = 0;
	return tmpl;
}
