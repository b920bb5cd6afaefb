// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ftw and nftw under the region: glibc's walk lists and stats inside
 * libc, where no preload sees it, so a tree under the region was empty.
 * A walk that starts in the region is made here, with our opendir,
 * readdir and stat; any other goes to libc.  The callback sees what
 * glibc's would: the same type flags, base and level, pre-order or
 * FTW_DEPTH post-order, FTW_PHYS, FTW_CHDIR, FTW_ACTIONRETVAL.
 * FTW_MOUNT has nothing to do (the region is one filesystem); nopenfd
 * is not needed (the walk holds no kernel descriptors).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

typedef int (*nftw_fn)(const char *, const struct stat *, int,
		       struct FTW *);
typedef int (*ftw_fn)(const char *, const struct stat *, int);

struct walk {
	nftw_fn fn;		/* nftw's callback, or NULL */
	ftw_fn old;		/* ftw's */
	int flags;
	char path[PL_PATH_MAX];
};

static int call(struct walk *w, const struct stat *st, int type, int base,
		int level)
{
	struct FTW f = { .base = base, .level = level };

	if (w->old)
		return w->old(w->path, st, type);
	return w->fn(w->path, st, type, &f);
}

/* What the callback's return means for the walk: 0 go on, else stop
 * with it (FTW_ACTIONRETVAL: FTW_SKIP_* are handled by the caller). */
static int stops(struct walk *w, int r)
{
	if (!(w->flags & FTW_ACTIONRETVAL))
		return r;
	return r == FTW_STOP ? r : 0;
}

static int walk_dir(struct walk *w, size_t len, int base, int level,
		    const struct stat *st);

/*
 * What the calls on the object at w->path use: below the start with
 * FTW_CHDIR the walk stands in its parent, so its name (as glibc's);
 * w->path, as the caller wrote it, may be relative to where it began.
 */
static const char *at_name(struct walk *w, int base, int level)
{
	return (w->flags & FTW_CHDIR) && level ? w->path + base : w->path;
}

/* One object at w->path (len bytes; its name starts at base). */
static int visit(struct walk *w, size_t len, int base, int level)
{
	const char *name = at_name(w, base, level);
	struct stat st;
	int r, type;

	if ((w->flags & FTW_PHYS) ? lstat(name, &st) : stat(name, &st)) {
		int err = errno;

		/* a dangling symlink when we follow them */
		if (!(w->flags & FTW_PHYS) && !lstat(name, &st) &&
		    S_ISLNK(st.st_mode))
			type = w->old ? FTW_NS : FTW_SLN;
		else
			type = FTW_NS;
		/* as glibc: a start that is not there is an error */
		if (!level && type == FTW_NS) {
			errno = err;
			return -1;
		}
		r = call(w, &st, type, base, level);
		return stops(w, r);
	}
	if (S_ISDIR(st.st_mode))
		return walk_dir(w, len, base, level, &st);
	type = S_ISLNK(st.st_mode) ? FTW_SL : FTW_F;
	r = call(w, &st, type, base, level);
	return (w->flags & FTW_ACTIONRETVAL) && r == FTW_SKIP_SIBLINGS ?
	       r : stops(w, r);
}

static int walk_dir(struct walk *w, size_t len, int base, int level,
		    const struct stat *st)
{
	int depth = w->flags & FTW_DEPTH, r = 0, rs;
	struct dirent *e;
	char *cwd = NULL;
	DIR *d;

	/* as glibc: opened first; one that cannot be read is FTW_DNR, not
	 * FTW_D before it, and any other failure ends the walk */
	d = opendir(at_name(w, base, level));
	if (!d)
		return errno == EACCES ?
		       stops(w, call(w, st, FTW_DNR, base, level)) : -1;
	if (!depth)
		r = call(w, st, FTW_D, base, level);
	if (!depth && (w->flags & FTW_ACTIONRETVAL) &&
	    (r == FTW_SKIP_SUBTREE || r == FTW_SKIP_SIBLINGS)) {
		closedir(d);
		return r == FTW_SKIP_SIBLINGS ? r : 0;
	}
	if ((r = stops(w, r))) {
		closedir(d);
		return r;
	}
	if ((w->flags & FTW_CHDIR) && (!(cwd = getcwd(NULL, 0)) ||
				       chdir(at_name(w, base, level)))) {
		free(cwd);
		closedir(d);
		return -1;
	}
	while (!r && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (len + 1 + n >= sizeof(w->path)) {
			errno = ENAMETOOLONG;
			r = -1;
			break;
		}
		w->path[len] = '/';
		memcpy(w->path + len + 1, e->d_name, n + 1);
		rs = visit(w, len + 1 + n, (int)len + 1, level + 1);
		w->path[len] = 0;
		if ((w->flags & FTW_ACTIONRETVAL) && rs == FTW_SKIP_SIBLINGS)
			break;
		r = rs;
	}
	closedir(d);
	if (cwd) {
		if (chdir(cwd) && !r)
			r = -1;
		free(cwd);
	}
	if (r || !depth)
		return r;
	return stops(w, call(w, st, FTW_DP, base, level));
}

/*
 * A walk from dir with fn (nftw) or old (ftw): 1 when dir is not in the
 * region (libc's walk, then); else 0 and *ret, the walk's result.
 */
static int region_walk(const char *dir, nftw_fn fn, ftw_fn old, int flags,
		       int *ret)
{
	char buf[PL_PATH_MAX];
	size_t len = strlen(dir);
	int r = pl_route_follow(AT_FDCWD, dir, buf);
	const char *slash;
	struct walk *w;

	/* one we cannot route is not libc's to walk as written (in the
	 * kernel's DIR, or its cwd where ours is the region's) */
	if (r >= 0 && r != PL_REGION)
		return 1;
	*ret = -1;
	if (r < 0)
		return 0;
	if (len >= sizeof(w->path)) {
		errno = ENAMETOOLONG;
		return 0;
	}
	w = malloc(sizeof(*w));
	if (!w)
		return 0;
	w->fn = fn;
	w->old = old;
	w->flags = flags;
	memcpy(w->path, dir, len + 1);
	/* as glibc: trailing slashes stay, the base is after the last
	 * slash that is followed by a name */
	slash = len > 1 ? memrchr(dir, '/', len - 1) : NULL;
	*ret = visit(w, len, slash ? (int)(slash - dir) + 1 : 0, 0);
	if ((flags & FTW_ACTIONRETVAL) && *ret != FTW_STOP)
		*ret = 0;
	free(w);
	return 0;
}

PUBLIC int nftw(const char *dir, nftw_fn fn, int nopenfd, int flags)
{
	REAL(int, nftw, const char *, nftw_fn, int, int);
	int ret;

	if (region_walk(dir, fn, NULL, flags, &ret))
		ret = real_nftw(dir, fn, nopenfd, flags);
	return ret;
}

PUBLIC int ftw(const char *dir, ftw_fn fn, int nopenfd)
{
	REAL(int, ftw, const char *, ftw_fn, int);
	int ret;

	if (region_walk(dir, NULL, fn, 0, &ret))
		ret = real_ftw(dir, fn, nopenfd);
	return ret;
}

/* 64-bit: the 64 names take the same structures. */
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64");

PUBLIC int nftw64(const char *dir,
		  int (*fn)(const char *, const struct stat64 *, int,
			    struct FTW *),
		  int nopenfd, int flags)
{
	return nftw(dir, (nftw_fn)fn, nopenfd, flags);
}

PUBLIC int ftw64(const char *dir,
		 int (*fn)(const char *, const struct stat64 *, int),
		 int nopenfd)
{
	return ftw(dir, (ftw_fn)fn, nopenfd);
}
