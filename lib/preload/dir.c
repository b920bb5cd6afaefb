// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Directories: getdents64 on a region directory descriptor, the DIR
 * stream calls on top of it, and the working directory.
 *
 * A directory description's offset is a listing cursor: 0 and 1 stand for
 * "." and "..", 2 for the start of the library's listing, any other value
 * is a library position (hash + 2, stable while the directory changes),
 * DAXFS_POS_EOF the end.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"
#include "lib/copy.h"

#define PL_DIR_MAGIC	0xdaf5d1d0u
#define BATCH		64

struct pl_linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct pl_dir {
	uint32_t magic;
	int fd;
	size_t len, at;		/* bytes in buf, next record */
	int64_t last_off;	/* d_off of the last record returned */
	char buf[32768];
};

static size_t put_ent(char *out, size_t room, uint64_t ino, int64_t off,
		      unsigned int type, const char *name, size_t nlen)
{
	size_t rec = (offsetof(struct pl_linux_dirent64, d_name) + nlen + 1 +
		      7) & ~(size_t)7;
	struct pl_linux_dirent64 *de = (void *)out;

	if (rec > room)
		return 0;
	memset(out, 0, rec);
	de->d_ino = ino;
	de->d_off = off;
	de->d_reclen = rec;
	de->d_type = type;
	memcpy(de->d_name, name, nlen);
	return rec;
}

static ssize_t region_getdents(struct pl_desc *d, struct daxfs_handle *h,
			       char *out, size_t count)
{
	struct daxfs_dirent_info ents[BATCH];
	uint64_t cur = atomic_load(&d->off), next, ino;
	char up[PL_PATH_MAX + 4];
	struct pl_gone g;
	size_t used = 0, rec;
	int n, i;

	if (d->kind != PL_KIND_DIR)
		return -ENOTDIR;
	/* a removed directory lists nothing, not even its dots: ENOENT,
	 * as the kernel says (readdir takes it for the end) */
	if (pl_gone_load(d, &g))
		return -ENOENT;
	while (cur < 2) {
		ino = d->ino;
		if (cur == 1) {
			snprintf(up, sizeof(up), "%s/..", d->path);
			if (daxfs_path_resolve(h, up, 0, &ino))
				ino = d->ino;
		}
		rec = put_ent(out + used, count - used, ino, cur + 1, DT_DIR,
			      "..", cur + 1);
		if (!rec)
			goto full;
		used += rec;
		cur++;
		atomic_store(&d->off, cur);
	}
	while (cur != DAXFS_POS_EOF) {
		n = daxfs_readdir_chunk(h, d->ino, cur == 2 ? 0 : cur, ents,
					BATCH, &next);
		if (n < 0)
			return used ? (ssize_t)used : n;
		for (i = 0; i < n; i++) {
			int64_t off = i + 1 < n ? (int64_t)ents[i + 1].pos
						: (int64_t)next;
			rec = put_ent(out + used, count - used, ents[i].ino, off,
				      ents[i].dtype, ents[i].name,
				      ents[i].name_len);
			if (!rec) {
				cur = ents[i].pos;
				atomic_store(&d->off, cur);
				goto full;
			}
			used += rec;
		}
		cur = next;
		atomic_store(&d->off, cur);
		if (!n)
			break;
	}
	return used;
full:
	return used ? (ssize_t)used : -EINVAL;
}

static ssize_t fd_getdents(int fd, void *buf, size_t count)
{
	struct daxfs_handle *h = pl_handle();
	struct pl_desc *d;
	ssize_t n;

	if (!h)
		return -1;
	/* as fd_io (io.c): a blocking fault outside the map's lock */
	daxfs_user_touch(buf, count);
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	n = region_getdents(d, h, buf, count);
	pl_fd_put(d);
	return n < 0 ? pl_fail(n) : n;
}

PUBLIC ssize_t getdents64(int fd, void *buf, size_t count)
{
	REAL(ssize_t, getdents64, int, void *, size_t);

	if (!pl_fd_is_region(fd))
		return real_getdents64(fd, buf, count);
	return fd_getdents(fd, buf, count);
}

/* glibc reads these with its internal getdents64 */
PUBLIC ssize_t getdirentries64(int fd, char *buf, size_t n, off64_t *base)
{
	off64_t at = lseek64(fd, 0, SEEK_CUR);
	ssize_t r;

	if (at < 0)
		return -1;
	r = getdents64(fd, buf, n);
	if (r >= 0)
		*base = at;
	return r;
}

PUBLIC ssize_t getdirentries(int fd, char *buf, size_t n, off_t *base)
{
	return getdirentries64(fd, buf, n, (off64_t *)base);
}

static int is_ours(DIR *dir)
{
	return dir && ((struct pl_dir *)dir)->magic == PL_DIR_MAGIC;
}

PUBLIC DIR *fdopendir(int fd)
{
	REAL(DIR *, fdopendir, int);
	struct pl_desc *d;
	struct pl_dir *pd;
	int kind;

	if (!pl_fd_is_region(fd))
		return real_fdopendir(fd);
	d = pl_fd_get(fd);
	if (!d) {
		errno = EBADF;
		return NULL;
	}
	kind = d->kind;
	pl_fd_put(d);
	if (kind != PL_KIND_DIR) {
		errno = ENOTDIR;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->magic = PL_DIR_MAGIC;
	pd->fd = fd;
	fcntl(fd, F_SETFD, FD_CLOEXEC);	/* as glibc's fdopendir does */
	return (DIR *)pd;
}

PUBLIC DIR *opendir(const char *path)
{
	REAL(DIR *, opendir, const char *);
	char buf[PL_PATH_MAX];
	DIR *dir;
	int r = pl_route_follow(AT_FDCWD, path, buf), fd;

	if (r < 0)
		return NULL;
	if (r != PL_REGION)
		return real_opendir(PL_KPATH(r, path, buf));
	fd = pl_open_region(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	dir = fdopendir(fd);
	if (!dir)
		close(fd);
	return dir;
}

PUBLIC struct dirent64 *readdir64(DIR *dir)
{
	REAL(struct dirent64 *, readdir64, DIR *);
	struct pl_dir *pd = (struct pl_dir *)dir;
	struct pl_linux_dirent64 *de;
	int saved = errno;
	ssize_t n;

	if (!is_ours(dir))
		return real_readdir64(dir);
	if (pd->at >= pd->len) {
		n = fd_getdents(pd->fd, pd->buf, sizeof(pd->buf));
		if (n <= 0) {
			/* the end, errno unchanged; as glibc's, ENOENT (a
			 * removed directory) is one too */
			if (!n || errno == ENOENT)
				errno = saved;
			return NULL;
		}
		pd->len = n;
		pd->at = 0;
	}
	de = (void *)(pd->buf + pd->at);
	pd->at += de->d_reclen;
	pd->last_off = de->d_off;
	return (struct dirent64 *)de;
}

PUBLIC struct dirent *readdir(DIR *dir)
{
	REAL(struct dirent *, readdir, DIR *);

	if (!is_ours(dir))
		return real_readdir(dir);
	return (struct dirent *)readdir64(dir);
}

PUBLIC int closedir(DIR *dir)
{
	REAL(int, closedir, DIR *);
	struct pl_dir *pd = (struct pl_dir *)dir;
	int r;

	if (!is_ours(dir))
		return real_closedir(dir);
	pd->magic = 0;
	r = close(pd->fd);
	free(pd);
	return r;
}

PUBLIC int dirfd(DIR *dir)
{
	REAL(int, dirfd, DIR *);

	return is_ours(dir) ? ((struct pl_dir *)dir)->fd : real_dirfd(dir);
}

PUBLIC void rewinddir(DIR *dir)
{
	REAL(void, rewinddir, DIR *);
	struct pl_dir *pd = (struct pl_dir *)dir;

	if (!is_ours(dir)) {
		real_rewinddir(dir);
		return;
	}
	lseek(pd->fd, 0, SEEK_SET);
	pd->len = pd->at = 0;
	pd->last_off = 0;
}

PUBLIC long telldir(DIR *dir)
{
	REAL(long, telldir, DIR *);

	return is_ours(dir) ? (long)((struct pl_dir *)dir)->last_off
			    : real_telldir(dir);
}

PUBLIC void seekdir(DIR *dir, long pos)
{
	REAL(void, seekdir, DIR *, long);
	struct pl_dir *pd = (struct pl_dir *)dir;

	if (!is_ours(dir)) {
		real_seekdir(dir, pos);
		return;
	}
	lseek(pd->fd, pos, SEEK_SET);
	pd->len = pd->at = 0;
	pd->last_off = pos;
}

/* Region path rpath made the working directory's (in place): a
 * directory, its own path (pl_physical), no trailing slash.  0 or
 * -errno.  chdir and a spawn's chdir action (spawn.c). */
int pl_chdir_target(struct daxfs_handle *h, char *rpath)
{
	struct daxfs_attr a;
	int err = daxfs_path_stat(h, rpath, &a);

	if (!err && !S_ISDIR(a.mode))
		err = -ENOTDIR;
	if (!err)
		err = pl_physical(h, rpath);
	if (!err && rpath[1] && rpath[strlen(rpath) - 1] == '/')
		rpath[strlen(rpath) - 1] = 0;
	return err;
}

static int kernel_chdir(const char *kpath)
{
	REAL(int, chdir, const char *);
	int err = real_chdir(kpath);

	if (!err) {
		pl_cwd_set(NULL);
		pl_kcwd_refresh();
	}
	return err;
}

PUBLIC int chdir(const char *path)
{
	char buf[PL_PATH_MAX];
	struct daxfs_handle *h;
	int r = pl_route_follow(AT_FDCWD, path, buf), err;

	if (r < 0)
		return -1;
	if (r != PL_REGION)
		return kernel_chdir(PL_KPATH(r, path, buf));
	h = pl_handle();
	if (!h)
		return -1;
	/* "." of a removed working directory: it stays */
	if (pl_self.on)
		return 0;
	err = pl_chdir_target(h, buf);
	if (pl_outside(err, buf))
		return kernel_chdir(buf);
	if (err)
		return pl_fail(err);
	pl_kcwd_detach();
	return pl_cwd_set(buf);
}

PUBLIC int fchdir(int fd)
{
	REAL(int, fchdir, int);
	char path[PL_PATH_MAX];
	struct pl_gone g;
	struct pl_desc *d;
	uint64_t ino;
	bool gone;
	int err;

	if (!pl_fd_is_region(fd)) {
		err = real_fchdir(fd);
		if (!err) {
			pl_cwd_set(NULL);
			pl_kcwd_refresh();
		}
		return err;
	}
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	err = d->kind == PL_KIND_DIR ? 0 : -ENOTDIR;
	snprintf(path, sizeof(path), "%s", d->path);
	ino = d->ino;
	gone = pl_gone_load(d, &g);
	pl_fd_put(d);
	if (err)
		return pl_fail(err);
	pl_kcwd_detach();
	/* the kernel goes into a removed directory too: a working
	 * directory with no name, where no name is found */
	if (gone) {
		pl_cwd_set_gone(path, ino, &g);
		return 0;
	}
	return pl_cwd_set(path);
}

PUBLIC char *getcwd(char *buf, size_t size)
{
	REAL(char *, getcwd, char *, size_t);
	char v[PL_PATH_MAX], full[2 * PL_PATH_MAX];
	size_t len;

	if (!pl_cwd_copy(v, sizeof(v)))
		return real_getcwd(buf, size);
	/* a removed one has no name (glibc's getcwd says so for the
	 * kernel's "(unreachable)") */
	if (pl_cwd_gone()) {
		errno = ENOENT;
		return NULL;
	}
	pl_dir_path(full, sizeof(full), v, "");
	len = strlen(full) + 1;
	if (!buf) {
		if (size && size < len) {
			errno = ERANGE;
			return NULL;
		}
		buf = malloc(size > len ? size : len);
		if (!buf)
			return NULL;
	} else if (size < len) {
		errno = size ? ERANGE : EINVAL;
		return NULL;
	}
	memcpy(buf, full, len);
	return buf;
}

PUBLIC char *__getcwd_chk(char *buf, size_t size, size_t buflen)
{
	if (size > buflen)
		abort();
	return getcwd(buf, size);
}

PUBLIC char *get_current_dir_name(void)
{
	return getcwd(NULL, 0);
}

/* ".." from the region's root, p at it: DIR's parent, and what follows,
 * are the kernel's (-DAXFS_EOUTSIDE, daxfs_path_outside). */
static int outside_above(struct daxfs_handle *h, const char *p)
{
	size_t n = pl_cfg.at_len;

	while (*p == '/')
		p++;
	p += 2;
	while (n && pl_cfg.at[n - 1] != '/')
		n--;
	if (n > 1)
		n--;
	return daxfs_link_outside(h, pl_cfg.at, n, p) ?: -ENOENT;
}

/*
 * Resolves the symlinks of region path in (absolute, normalized) into out,
 * one component at a time: a relative target replaces the component, an
 * absolute one starts again at the region's root, ".." pops.  A target
 * that leaves the region (an absolute one outside DIR, ".." from its
 * root) ends it with -DAXFS_EOUTSIDE (pl_outside gives the kernel path).
 */
int pl_region_resolve(struct daxfs_handle *h, const char *in, char *out)
{
	/* as long as the core's walk takes (lib/path.c) */
	char rest[3 * PL_PATH_MAX], tgt[PL_PATH_MAX];
	struct daxfs_attr a;
	size_t n = 1, tlen, plen;
	int loops = 0, slash, len, err;
	const char *p;

	snprintf(rest, sizeof(rest), "%s", in);
	strcpy(out, "/");
	p = rest;
	for (;;) {
		/* ".." from the root (a relative target climbed there)
		 * leaves the region, as the walk's does (lib/path.c) */
		if (n == 1 && pl_cfg.at_len > 1 && pl_next_dotdot(p))
			return outside_above(h, p);
		len = pl_path_step(&p, out, &n, &slash);
		if (len == -1)
			break;
		if (len < 0)
			return len;
		if (!len)
			continue;
		err = daxfs_path_lstat(h, out, &a);
		if (err)
			return err;
		/* a name followed by a slash ("f/", or a link's target
		 * "f/") must be a directory, as in the kernel's walk: the
		 * next lookup catches it unless nothing follows */
		if (!S_ISLNK(a.mode) && slash && !S_ISDIR(a.mode))
			return -ENOTDIR;
		if (!S_ISLNK(a.mode))
			continue;
		if (++loops > DAXFS_SYMLOOP_MAX)
			return -ELOOP;
		err = daxfs_path_readlink(h, out, tgt, sizeof(tgt));
		if (err < 0)
			return err;
		if ((size_t)err >= sizeof(tgt))
			return -ENAMETOOLONG;
		tlen = (size_t)err;
		err = daxfs_link_outside(h, tgt, tlen, p);
		if (err)
			return err;
		daxfs_link_in_region(h, tgt, tlen);
		/* drop the link's own component, then walk its target */
		n -= len;
		if (n > 1)
			n--;
		out[n] = 0;
		if (tgt[0] == '/') {
			strcpy(out, "/");
			n = 1;
		}
		/* target + what is left (which starts with its '/'), in
		 * place, so that a slash ending the target is seen as such;
		 * cut short, the walk would end at another file */
		tlen = strlen(tgt);
		plen = strlen(p);
		if (tlen + plen >= sizeof(rest))
			return -ENAMETOOLONG;
		memmove(rest + tlen, p, plen + 1);
		memcpy(rest, tgt, tlen);
		p = rest;
	}
	return 0;
}

/*
 * Region path rpath, which the path call just made found, as the file's
 * own path (in place): resolved when the call's walk followed a symlink.
 * A working directory and a directory descriptor keep the path that ".."
 * from them climbs (route.c takes the base as it is): through a link "l"
 * to "d/e", "l/.." is d, as in the kernel, not where l is.
 */
int pl_physical(struct daxfs_handle *h, char *rpath)
{
	char res[PL_PATH_MAX];
	int err;

	if (!daxfs_path_links_followed())
		return 0;
	err = pl_region_resolve(h, rpath, res);
	if (!err)
		strcpy(rpath, res);
	return err;
}

/* realpath of region path rpath, symlinks inside the region resolved. */
static char *region_realpath(const char *rpath, char *out)
{
	char res[PL_PATH_MAX], full[2 * PL_PATH_MAX];
	struct daxfs_handle *h = pl_handle();
	int err;

	if (!h)
		return NULL;
	err = pl_region_resolve(h, rpath, res);
	if (pl_outside(err, res)) {
		REAL(char *, realpath, const char *, char *);

		return real_realpath(res, out);
	}
	if (err) {
		errno = -err;
		return NULL;
	}
	pl_dir_path(full, sizeof(full), res, "");
	if (strlen(full) >= PL_PATH_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (!out)
		return strdup(full);
	strcpy(out, full);
	return out;
}

PUBLIC char *realpath(const char *path, char *out)
{
	REAL(char *, realpath, const char *, char *);
	char buf[PL_PATH_MAX];
	int r = path ? pl_route_follow(AT_FDCWD, path, buf) : PL_KERNEL;

	/* a path we cannot route is not handed to libc's walk as written:
	 * from a region cwd it would resolve in the kernel's (another dir) */
	if (r < 0)
		return NULL;
	/* "." of a removed directory: it has no path (getcwd's ENOENT) */
	if (r == PL_REGION && pl_self.on) {
		errno = ENOENT;
		return NULL;
	}
	if (r == PL_REGION)
		return region_realpath(buf, out);
	return real_realpath(PL_KPATH(r, path, buf), out);
}

PUBLIC char *canonicalize_file_name(const char *path)
{
	return realpath(path, NULL);
}

/* The deprecated reentrant forms, still in old programs. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
PUBLIC int readdir64_r(DIR *dir, struct dirent64 *entry,
		       struct dirent64 **result)
{
	REAL(int, readdir64_r, DIR *, struct dirent64 *, struct dirent64 **);
	struct dirent64 *e;
	int saved = errno;

	if (!is_ours(dir))
		return real_readdir64_r(dir, entry, result);
	errno = 0;
	e = readdir64(dir);
	if (!e) {
		*result = NULL;
		if (errno)
			return errno;
		errno = saved;
		return 0;
	}
	memcpy(entry, e, offsetof(struct dirent64, d_name));
	snprintf(entry->d_name, sizeof(entry->d_name), "%s", e->d_name);
	*result = entry;
	errno = saved;
	return 0;
}

PUBLIC int readdir_r(DIR *dir, struct dirent *entry, struct dirent **result)
{
	REAL(int, readdir_r, DIR *, struct dirent *, struct dirent **);

	if (!is_ours(dir))
		return real_readdir_r(dir, entry, result);
	return readdir64_r(dir, (struct dirent64 *)entry,
			   (struct dirent64 **)result);
}

#pragma GCC diagnostic pop

/*
 * scandir: glibc's opens the directory with its internal opendir, so a
 * region directory is listed here with ours.
 */
typedef int (*scan_filter)(const struct dirent64 *);
typedef int (*scan_cmp)(const struct dirent64 **, const struct dirent64 **);

static int region_scandir(DIR *dir, struct dirent64 ***out, scan_filter sel,
			  scan_cmp cmp)
{
	struct dirent64 *e, **v = NULL, **nv, *c;
	size_t n = 0, cap = 0;
	int err = 0;

	while ((e = readdir64(dir))) {
		if (sel && !sel(e))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = ENOMEM;
				break;
			}
			v = nv;
		}
		c = malloc(e->d_reclen);
		if (!c) {
			err = ENOMEM;
			break;
		}
		memcpy(c, e, e->d_reclen);
		v[n++] = c;
	}
	closedir(dir);
	if (err) {
		while (n)
			free(v[--n]);
		free(v);
		errno = err;
		return -1;
	}
	if (cmp && n > 1)
		qsort(v, n, sizeof(*v), (int (*)(const void *, const void *))cmp);
	*out = v;
	return (int)n;
}

PUBLIC int scandirat64(int dirfd, const char *path, struct dirent64 ***out,
		       scan_filter sel, scan_cmp cmp)
{
	REAL(int, scandirat64, int, const char *, struct dirent64 ***,
	     scan_filter, scan_cmp);
	char buf[PL_PATH_MAX];
	int r = pl_route_follow(dirfd, path, buf), fd;
	DIR *dir;

	if (r < 0)
		return -1;
	if (r != PL_REGION)
		return real_scandirat64(dirfd, PL_KPATH(r, path, buf), out, sel,
					cmp);
	fd = pl_open_region(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return -1;
	}
	return region_scandir(dir, out, sel, cmp);
}

PUBLIC int scandir64(const char *path, struct dirent64 ***out,
		     scan_filter sel, scan_cmp cmp)
{
	return scandirat64(AT_FDCWD, path, out, sel, cmp);
}

/* struct dirent is struct dirent64 on 64-bit Linux. */
_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64), "dirent");

PUBLIC int scandirat(int dirfd, const char *path, struct dirent ***out,
		     int (*sel)(const struct dirent *),
		     int (*cmp)(const struct dirent **, const struct dirent **))
{
	return scandirat64(dirfd, path, (struct dirent64 ***)out,
			   (scan_filter)sel, (scan_cmp)cmp);
}

PUBLIC int scandir(const char *path, struct dirent ***out,
		   int (*sel)(const struct dirent *),
		   int (*cmp)(const struct dirent **, const struct dirent **))
{
	return scandirat(AT_FDCWD, path, out, sel, cmp);
}

/* _FORTIFY_SOURCE form (resolved_len: the caller's buffer size). */
PUBLIC char *__realpath_chk(const char *path, char *out, size_t resolved_len)
{
	if (out && resolved_len < PL_PATH_MAX)
		abort();
	return realpath(path, out);
}
