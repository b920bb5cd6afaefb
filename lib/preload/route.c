// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Path routing: a path goes to the region when, made absolute against the
 * current directory or the directory descriptor and normalized ("."
 * dropped, ".." pops a component), it is DIR or lies below DIR.  A ".."
 * after a name inside the region pops from where the name led
 * (physical_before_dotdot: through a symlink, not lexically); elsewhere
 * ".." is lexical, and for a kernel path it is only used to decide: the
 * kernel gets the path as the program wrote it.
 *
 * The current directory may be a region directory (chdir below DIR): then
 * relative paths are resolved against it here, and a relative path that
 * climbs out of DIR is handed to the kernel as an absolute path, never
 * relative to the kernel's stale working directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

static pthread_mutex_t cwd_lock = PTHREAD_MUTEX_INITIALIZER;
static char kcwd[PL_PATH_MAX];	/* the kernel's working directory */
static char vcwd[PL_PATH_MAX];	/* region working directory, "" if none */
static int kcwd_err;		/* kcwd "": why getcwd gave no name */
/* vcwd is a directory removed under a descriptor that fchdir took it
 * from (mode 0: it is not known to be): ino and what was kept of it */
static uint64_t vcwd_gone_ino;
static struct pl_gone vcwd_gone;

__thread struct pl_self pl_self;

/*
 * The route's buffers, one set per thread, 16 KiB: not static TLS, which
 * glibc puts on every thread's stack (with 37 KiB of it, node's 32 KiB
 * signal thread failed to start: "pthread_create: Invalid argument"), and
 * not on the stack, where a signal handler on a small alternate stack may
 * route an open.  mmap, which a handler may call; unmapped at the
 * thread's exit.  A handler that routes while its thread is routing
 * shares them, as it shared the static TLS before.
 */
struct route_scratch {
	char full[2 * PL_PATH_MAX + 2];
	char above_full[PL_PATH_MAX];
	char self_path[PL_PATH_MAX];
};
static __thread struct route_scratch *scratch
	__attribute__((tls_model("initial-exec")));
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static bool scratch_key_ok;

static void scratch_exit(void *p)
{
	scratch = NULL;
	munmap(p, sizeof(struct route_scratch));
}

static void scratch_key_init(void)
{
	scratch_key_ok = !pthread_key_create(&scratch_key, scratch_exit);
}

static struct route_scratch *route_scratch(void)
{
	void *p;

	if (scratch)
		return scratch;
	p = mmap(NULL, sizeof(*scratch), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_once(&scratch_once, scratch_key_init);
	if (scratch_key_ok)
		pthread_setspecific(scratch_key, p);
	scratch = p;
	return scratch;
}

/*
 * One step of a path walk over the absolute path being built in out
 * (length *n): takes the next component of *p, drops ".", pops for "..",
 * appends anything else.  Returns the appended component's length (0
 * when it was "." or "..", or -ENAMETOOLONG), or -1 at the end of *p.
 * *slash tells whether the component was followed by a slash.
 */
int pl_path_step(const char **p, char *out, size_t *n, int *slash)
{
	const char *s = *p, *e;
	size_t len;

	while (*s == '/')
		s++;
	if (!*s)
		return -1;
	e = strchrnul(s, '/');
	len = e - s;
	*p = e;
	*slash = *e == '/';
	if (len == 1 && s[0] == '.')
		return 0;
	if (len == 2 && s[0] == '.' && s[1] == '.') {
		while (*n > 1 && out[*n - 1] != '/')
			(*n)--;
		if (*n > 1)
			(*n)--;
		out[*n] = 0;
		return 0;
	}
	if (*n + len + 2 >= PL_PATH_MAX)
		return -ENAMETOOLONG;
	if (*n > 1)
		out[(*n)++] = '/';
	memcpy(out + *n, s, len);
	*n += len;
	out[*n] = 0;
	return (int)len;
}

bool pl_next_dotdot(const char *p)
{
	while (*p == '/')
		p++;
	return p[0] == '.' && p[1] == '.' && (!p[2] || p[2] == '/');
}

static int under_at(const char *norm);

/*
 * Before a ".." that follows a name of the caller's own path: out (length
 * *n, absolute, lexical so far) as the kernel would have walked it, so
 * that ".." is taken from where the names led.  Only a region path below
 * DIR needs it (DIR itself is no link, and a base, the working directory
 * or a directory descriptor, is kept physical: dir.c pl_physical).  0:
 * out is physical; 1: it left the region (a symlink to a kernel file),
 * out is then the kernel path followed by rest; or -errno: a name before
 * ".." is missing (ENOENT) or no directory (ENOTDIR), as in the kernel.
 */
static __attribute__((noinline)) int physical_before_dotdot(char *out, size_t *n,
							   const char *rest)
{
	char rp[PL_PATH_MAX + 1], res[PL_PATH_MAX];
	size_t at = pl_cfg.at_len > 1 ? pl_cfg.at_len : 0;
	struct daxfs_handle *h;
	int err;

	if (!under_at(out) || *n <= at + 1)
		return 0;
	h = pl_handle();
	if (!h)
		return -errno;
	/* "x/": a name followed by ".." must be a directory */
	snprintf(rp, sizeof(rp), "%s/", out + at);
	err = pl_region_resolve(h, rp, res);
	if (pl_outside(err, res)) {
		if ((size_t)snprintf(out, PL_PATH_MAX, "%s/%s", res, rest) >=
		    PL_PATH_MAX)
			return -ENAMETOOLONG;
		return 1;
	}
	if (err)
		return err;
	if (at + strlen(res) >= PL_PATH_MAX)
		return -ENAMETOOLONG;
	*n = (size_t)snprintf(out, PL_PATH_MAX, "%.*s%s", (int)at, pl_cfg.at,
			      at && !res[1] ? "" : res);
	return 0;
}

/*
 * Normalizes the absolute path in into out; keeps one trailing slash,
 * and puts one where the last component was "." or "..": "f/." must be
 * a directory, as "f/" (it was f itself, and stat("file/.") succeeded).
 * Lexical but for ".." after a name of the caller's own part (from own
 * on; NULL: none): that is taken from where the names led in the region
 * (physical_before_dotdot), as the kernel does through a symlink.  0, 1
 * when the path left the region (out: the kernel path), or -errno.
 */
static int normalize(const char *in, const char *own, char *out)
{
	size_t n = 1;
	int slash = 0, dir = 0, r;
	bool named = false;

	strcpy(out, "/");
	for (;;) {
		if (named && pl_next_dotdot(in)) {
			r = physical_before_dotdot(out, &n, in);
			if (r)
				return r;
			named = false;
		}
		r = pl_path_step(&in, out, &n, &slash);
		if (r < 0)
			break;
		dir = slash || !r;
		if (r > 0 && own && in - r >= own)
			named = true;
	}
	if (r == -ENAMETOOLONG)
		return r;
	if (dir && n > 1)
		out[n++] = '/';
	out[n] = 0;
	return 0;
}

/*
 * A relative path from a kernel working directory without a name (deeper
 * than PATH_MAX, removed): without ".." it stays below that directory, the
 * kernel's; with ".." it may climb into DIR, which cannot be told here.
 */
static int unnamed_cwd(const char *path, int err)
{
	const char *s = path;

	while ((s = strstr(s, ".."))) {
		if ((s == path || s[-1] == '/') && (!s[2] || s[2] == '/'))
			return pl_fail(-err);
		s += 2;
	}
	return PL_KERNEL;
}

static int under_at(const char *norm)
{
	size_t l = pl_cfg.at_len;

	if (l == 1)
		return 1;
	return !strncmp(norm, pl_cfg.at, l) && (norm[l] == 0 || norm[l] == '/');
}

/*
 * Where relative path leads from a removed directory: 0 to the directory
 * itself (".", "./."), 1 through ".." first to its parent, which its old
 * path still names (docs/preload.md "Directory descriptors"), -ENOENT to
 * a name in it: the kernel finds none in a removed directory, where a
 * lookup by the old path would find what was made there since.
 */
static int gone_rel(const char *path)
{
	const char *s = path;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			return 0;
		if (s[0] != '.')
			return -ENOENT;
		if (!s[1] || s[1] == '/') {
			s++;
			continue;
		}
		return s[1] == '.' && (!s[2] || s[2] == '/') ? 1 : -ENOENT;
	}
}

/* pl_route of a path that gone_rel() says is the removed directory
 * (ino, g, its old region path) itself. */
static int route_self(uint64_t ino, const struct pl_gone *g,
		      const char *path, char *out)
{
	pl_self.on = true;
	pl_self.ino = ino;
	pl_self.g = *g;
	snprintf(scratch->self_path, PL_PATH_MAX, "%s", path);
	pl_self.path = scratch->self_path;
	out[0] = 0;
	return PL_REGION;
}

/*
 * normalize() of a path with ".." in the caller's part (from byte own
 * on), from a copy: resolving the names before a ".." may route paths of
 * its own (the region's first open, in the same thread), which reuse the
 * thread's buffer full lies in.  Out of line, so that only such paths
 * pay its stack.
 */
static __attribute__((noinline)) int normalize_copy(const char *full,
						    size_t own, char *out)
{
	char copy[2 * PL_PATH_MAX + 2];

	snprintf(copy, sizeof(copy), "%s", full);
	return normalize(copy, copy + own, out);
}

/*
 * The kernel directories above DIR ("/", and "/mnt" for /mnt/daxfs), by
 * device and inode number, found once: a kernel descriptor of one of them
 * with a relative path that goes down into DIR ("daxfs/x" from "/") names
 * a region file.  Programs that walk a path a component at a time with
 * openat from "/" (rsync's receiver) need it: until 2026-12-05 the kernel
 * got "daxfs" relative to "/" and said ENOENT.
 */
#define ABOVE_MAX 32

static struct {
	dev_t dev;
	ino_t ino;
	size_t len;		/* of its path: pl_cfg.at's first len bytes */
	const char *next;	/* the component of DIR below it */
	size_t next_len;
} above[ABOVE_MAX];
static int nabove;
static pthread_once_t above_once = PTHREAD_ONCE_INIT;

static void above_find(void)
{
	char dir[PL_PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; i < pl_cfg.at_len && nabove < ABOVE_MAX; i++) {
		if (pl_cfg.at[i] != '/')
			continue;
		snprintf(dir, sizeof(dir), "%.*s", (int)(i ? i : 1), pl_cfg.at);
		if (syscall(SYS_newfstatat, AT_FDCWD, dir, &st, 0))
			return;
		above[nabove].dev = st.st_dev;
		above[nabove].ino = st.st_ino;
		above[nabove].len = i;
		above[nabove].next = pl_cfg.at + i + 1;
		above[nabove].next_len = strcspn(pl_cfg.at + i + 1, "/");
		nabove++;
	}
}

/* Kernel directory descriptor dirfd and relative path: the absolute path
 * in full when dirfd is above DIR and path goes down towards it. */
static bool from_above(int dirfd, const char *path, char *full, size_t size)
{
	size_t first = strcspn(path, "/");
	bool fetched = false;
	struct stat st;
	int i;

	if (pl_cfg.at_len <= 1 || path[0] == '/' || !first)
		return false;
	pthread_once(&above_once, above_find);
	for (i = 0; i < nabove; i++) {
		if (above[i].next_len != first ||
		    memcmp(above[i].next, path, first))
			continue;
		if (!fetched && syscall(SYS_fstat, dirfd, &st))
			return false;
		fetched = true;
		if (st.st_dev == above[i].dev && st.st_ino == above[i].ino)
			return (size_t)snprintf(full, size, "%.*s/%s",
						(int)above[i].len, pl_cfg.at,
						path) < size;
	}
	return false;
}

int pl_route(int dirfd, const char *path, char *out)
{
	struct route_scratch *sc;
	struct pl_gone g;
	struct pl_desc *d;
	const char *rest;
	char *full;
	int virt = 0, err = 0, n = 0, fd;

	pl_self.on = false;
	/* the library's own opens while it opens the region (the region
	 * file, its backing files) are the kernel's: a region file under DIR
	 * was looked for inside itself, and the open waited for its own lock
	 * for ever (tests/test_preload.py test_region_under_at) */
	if (!pl_cfg.enabled || !path || pl_opening_region)
		return PL_KERNEL;
	sc = route_scratch();
	if (!sc)
		return pl_fail(-ENOMEM);
	full = sc->full;
	/* "/proc/self/fd/N/x": x from region descriptor N (fdlink.c); the
	 * link itself goes on as the kernel's (pl_route_follow) */
	if (path[0] == '/' && (fd = pl_fd_link(path, &rest)) >= 0 && *rest) {
		while (*rest == '/')
			rest++;
		return pl_route(fd, *rest ? rest : ".", out);
	}
	/* "/proc/self/cwd[/x]" of a region working directory: "." (which
	 * no call can remove or rename) or x from it */
	if ((rest = pl_cwd_link(path))) {
		while (*rest == '/')
			rest++;
		return pl_route(AT_FDCWD, *rest ? rest : ".", out);
	}
	if (path[0] == '/') {
		n = snprintf(full, sizeof(sc->full), "%s", path);
	} else if (dirfd == AT_FDCWD) {
		pthread_mutex_lock(&cwd_lock);
		virt = vcwd[0] != 0;
		/* "" names nothing (ENOENT, as the kernel says), not the
		 * working directory: unlink("") would remove it.  Calls
		 * that take AT_EMPTY_PATH handle it before routing. */
		if (virt && !path[0]) {
			pthread_mutex_unlock(&cwd_lock);
			return pl_fail(-ENOENT);
		}
		if (virt && atomic_load(&vcwd_gone.mode) &&
		    (err = gone_rel(path)) <= 0) {
			if (!err)
				err = route_self(vcwd_gone_ino, &vcwd_gone,
						 vcwd, out);
			pthread_mutex_unlock(&cwd_lock);
			return err < 0 ? pl_fail(err) : err;
		}
		err = 0;
		if (virt)
			n = snprintf(full, sizeof(sc->full), "%s%s/%s", pl_cfg.at,
				     vcwd, path);
		else if (kcwd[0])
			n = snprintf(full, sizeof(sc->full), "%s/%s", kcwd, path);
		else
			err = kcwd_err;
		pthread_mutex_unlock(&cwd_lock);
		if (err)
			return unnamed_cwd(path, err);
	} else {
		d = pl_fd_get(dirfd);
		if (!d && from_above(dirfd, path, sc->above_full,
				     sizeof(sc->above_full)))
			return pl_route(AT_FDCWD, sc->above_full, out);
		if (!d)
			return PL_KERNEL;
		if (!path[0]) {		/* as above */
			pl_fd_put(d);
			return pl_fail(-ENOENT);
		}
		if (d->kind != PL_KIND_DIR) {
			pl_fd_put(d);
			return pl_fail(-ENOTDIR);
		}
		if (pl_gone_load(d, &g) && (err = gone_rel(path)) <= 0) {
			if (!err)
				err = route_self(d->ino, &g, d->path, out);
			pl_fd_put(d);
			return err < 0 ? pl_fail(err) : err;
		}
		virt = 1;
		n = snprintf(full, sizeof(sc->full), "%s%s/%s", pl_cfg.at, d->path,
			     path);
		pl_fd_put(d);
	}
	/* cut short, it would name another file */
	if (n < 0 || (size_t)n >= sizeof(sc->full))
		return pl_fail(-ENAMETOOLONG);
	rest = full + n - strlen(path);
	err = strstr(rest, "..") ? normalize_copy(full, rest - full, out)
				 : normalize(full, NULL, out);
	if (err < 0)
		return pl_fail(err);
	if (err)
		return PL_KERNEL_ABS;	/* a symlink led out of DIR */
	/* "/daxfs/.." names the kernel's "/": the kernel has no DIR. */
	if (!under_at(out))
		return virt || under_at(full) ? PL_KERNEL_ABS : PL_KERNEL;
	if (pl_cfg.at_len > 1) {
		memmove(out, out + pl_cfg.at_len, strlen(out + pl_cfg.at_len) + 1);
		if (!out[0])
			strcpy(out, "/");
	}
	return PL_REGION;
}

/* 1 when the last component of path, as written, is ".", 2 for "..",
 * 0 for a plain name ("d/..", ".", "d/./" are dots). */
int pl_last_dots(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n >= 2 && path[n - 1] == '.' && path[n - 2] == '.' &&
	    (n == 2 || path[n - 3] == '/'))
		return 2;
	if (n >= 1 && path[n - 1] == '.' && (n == 1 || path[n - 2] == '/'))
		return 1;
	return 0;
}

/* The length of path's parent: trailing slashes and the last component
 * dropped ("/a/b/c" -> "/a/b/", "x" -> 0). */
size_t pl_parent_len(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n && path[n - 1] != '/')
		n--;
	return n;
}

/* 0 when region path rpath is a directory (its attributes in *a),
 * -ENOTDIR when it is something else, or the lookup's error. */
int pl_region_dir(struct daxfs_handle *h, const char *rpath,
		  struct daxfs_attr *a)
{
	int err = daxfs_path_stat(h, rpath, a);

	return err ? err : S_ISDIR(a->mode) ? 0 : -ENOTDIR;
}

/* pl_region_dir of the parent of region path rpath. */
int pl_region_parent(struct daxfs_handle *h, const char *rpath,
		     struct daxfs_attr *a)
{
	char parent[PL_PATH_MAX];
	size_t n = pl_parent_len(rpath);

	if (n >= sizeof(parent))
		return -ENAMETOOLONG;
	memcpy(parent, rpath, n);
	parent[n] = 0;
	return pl_region_dir(h, n ? parent : "/", a);
}

/*
 * The error of resolving the parent of path as written (path less its
 * last component, "." for none) to a directory, 0 when it is one: the
 * kernel resolves the parent of a name to change before it looks at
 * the name.
 */
int pl_parent_err(int dirfd, const char *path)
{
	char rest[PL_PATH_MAX], buf[PL_PATH_MAX];
	struct daxfs_handle *h;
	struct daxfs_attr a;
	size_t n = pl_parent_len(path);
	int r;

	if (n >= sizeof(rest))
		return -ENAMETOOLONG;
	if (n)
		memcpy(rest, path, n);
	else
		rest[n++] = '.';
	rest[n] = 0;
	r = pl_route(dirfd, rest, buf);
	if (r < 0)
		return -errno;
	if (pl_self.on)
		return 0;	/* a removed directory, but a directory */
	h = pl_handle();
	if (r != PL_REGION || !h)
		return 0;
	return pl_region_dir(h, buf, &a);
}

/*
 * A name-changing call (create, remove, rename) whose path, as written,
 * ends in "." or ".." ("d/.", "..", "d/../"): the kernel resolves the
 * rest, then refuses, as a dot is no name to change.  Routing drops the
 * dot lexically ("d/." is d, "d/.." d's parent), so without this
 * rmdir("d/.") removed d and mkdir("d/.") made d.  Returns 0 when the
 * last component is a plain name; else the error of resolving the rest
 * to a directory, or dot_err ("."), dotdot_err ("..").
 */
int pl_dots(int dirfd, const char *path, int dot_err, int dotdot_err)
{
	int dots = pl_last_dots(path), err;

	if (!dots)
		return 0;
	err = pl_parent_err(dirfd, path);
	if (err)
		return err;
	return dots == 1 ? dot_err : dotdot_err;
}

/* region_path "/x/y" ("/" for the root), or NULL: the kernel's again. */
int pl_cwd_set(const char *region_path)
{
	pthread_mutex_lock(&cwd_lock);
	snprintf(vcwd, sizeof(vcwd), "%s", region_path ? region_path : "");
	atomic_store(&vcwd_gone.mode, 0);
	pthread_mutex_unlock(&cwd_lock);
	return 0;
}

/*
 * The working directory becomes removed directory ino (fchdir of a
 * descriptor of it, or chdir(".") there): as in the kernel, getcwd then
 * fails with ENOENT, a name relative to it is ENOENT, "." is it and
 * ".." its parent (by the old path).
 */
void pl_cwd_set_gone(const char *region_path, uint64_t ino,
		     const struct pl_gone *g)
{
	pthread_mutex_lock(&cwd_lock);
	snprintf(vcwd, sizeof(vcwd), "%s", region_path);
	vcwd_gone_ino = ino;
	vcwd_gone = *g;
	pthread_mutex_unlock(&cwd_lock);
}

/* Removed directory ino has new attributes (pl_fd_gone_mark). */
void pl_cwd_gone_update(uint64_t ino, const struct pl_gone *g)
{
	pthread_mutex_lock(&cwd_lock);
	if (atomic_load(&vcwd_gone.mode) && vcwd_gone_ino == ino)
		vcwd_gone = *g;
	pthread_mutex_unlock(&cwd_lock);
}

bool pl_cwd_gone(void)
{
	return atomic_load(&vcwd_gone.mode) != 0;
}

/*
 * With a region working directory the kernel's must not be one that
 * holds files: a libc-internal call with a relative path (glob, nftw,
 * anything that escapes interposition) would silently use it.  Move the
 * kernel into an empty directory and remove it: relative lookups there
 * fail with ENOENT, and so does creating a file.
 */
void pl_kcwd_detach(void)
{
	char dir[] = "/tmp/.daxfs-cwd-XXXXXX";

	if (!mkdtemp(dir))
		return;
	syscall(SYS_chdir, dir);
	syscall(SYS_rmdir, dir);
}

/* Writes the region cwd ("/x/y") into buf; 0 when the cwd is the
 * kernel's. */
int pl_cwd_copy(char *buf, size_t size)
{
	int virt;

	pthread_mutex_lock(&cwd_lock);
	virt = vcwd[0] != 0;
	if (virt)
		snprintf(buf, size, "%s", vcwd);
	pthread_mutex_unlock(&cwd_lock);
	return virt;
}

void pl_kcwd_refresh(void)
{
	const char *v = getenv("DAXFS_PRELOAD_CWD");
	long r;

	pthread_mutex_lock(&cwd_lock);
	/* no name ("(unreachable)/x" is none either): not "/", where
	 * "daxfs/f" would be DIR's f */
	r = syscall(SYS_getcwd, kcwd, sizeof(kcwd));
	if (r < 0 || kcwd[0] != '/') {
		kcwd_err = r < 0 ? errno : ENOENT;
		kcwd[0] = 0;
	}
	pthread_mutex_unlock(&cwd_lock);
	if (v && v[0] == '/') {
		/* a spawn's chdir action to a region directory left the
		 * kernel's where the parent was (spawn.c) */
		if (kcwd[0])
			pl_kcwd_detach();
		pl_cwd_set(v);
		unsetenv("DAXFS_PRELOAD_CWD");
	}
}

/* exec: hand a region working directory to the new image.  A removed
 * one is not handed: the new image keeps the kernel's, an empty removed
 * directory (pl_kcwd_detach), where names fail with ENOENT and getcwd
 * too, as in the removed one; by its old path it would be what was made
 * there since. */
char *pl_cwd_env(void)
{
	static char buf[PL_PATH_MAX + 32];

	if (pl_cwd_gone() || !pl_cwd_copy(buf + 18, sizeof(buf) - 18))
		return NULL;
	memcpy(buf, "DAXFS_PRELOAD_CWD=", 18);
	return buf;
}

/* Region path rpath as the program sees it, under DIR ("/" is DIR
 * itself), then suffix; snprintf's length. */
int pl_dir_path(char *out, size_t size, const char *rpath, const char *suffix)
{
	bool root = !strcmp(rpath, "/") && pl_cfg.at_len > 1;

	return snprintf(out, size, "%s%s%s", pl_cfg.at_len > 1 ? pl_cfg.at : "",
			root ? "" : rpath, suffix);
}
