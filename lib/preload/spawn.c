// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * posix_spawn's file actions with region files (docs/preload.md "Spawn
 * file actions").
 *
 * glibc's spawned child runs the actions with its own system calls, which
 * the preload never sees: a dup2 of a region descriptor copies only its
 * stand-in (an O_PATH open of /dev/null), and a region path does not
 * exist in the kernel.  So the actions a program adds are recorded here
 * as it adds them, and a spawn plans them first (pl_spawn_plan):
 *
 *  - an open of a region path is made here, close-on-exec, and becomes a
 *    dup2 of that descriptor (closed here once the spawn returns);
 *  - a chdir or fchdir to a region directory is dropped from the child's
 *    list and becomes the new image's region working directory;
 *  - a closefrom becomes a close of each descriptor it would close, the
 *    preload's own (the table the new image maps) left open;
 *  - what the actions leave at each descriptor they touch (a region
 *    description or none of ours) goes to pl_exec_env, so that the new
 *    image knows a dup2 target as the region file it is.
 *
 * Actions that involve no region file leave the program's list as it is.
 * Relative paths follow the chdir actions before them, as in the child.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"
#include "spawnplan.h"

enum { FA_CLOSE, FA_DUP2, FA_OPEN, FA_CHDIR, FA_FCHDIR, FA_CLOSEFROM,
       FA_TCSETPGRP };

struct fa_act {
	int tag;
	int fd;		/* the target; dup2's source is src */
	int src;
	int oflag;
	mode_t mode;
	char *path;
};

/* The actions added to one posix_spawn_file_actions_t, by its address. */
struct fa_rec {
	const void *key;
	struct fa_rec *next;
	struct fa_act *acts;
	size_t n, cap;
	bool broken;	/* an action not recorded (no memory): plan nothing */
};

static struct fa_rec *recs;
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;

/* A fork child: another thread of the parent may have held the lock. */
void pl_spawn_fork_child(void)
{
	pthread_mutex_init(&rec_lock, NULL);
}

static struct fa_rec **rec_find(const void *key)
{
	struct fa_rec **r;

	for (r = &recs; *r; r = &(*r)->next)
		if ((*r)->key == key)
			return r;
	return NULL;
}

static void rec_free(struct fa_rec *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->acts[i].path);
	free(r->acts);
	free(r);
}

static void rec_drop(const void *key)
{
	struct fa_rec **r, *dead;

	pthread_mutex_lock(&rec_lock);
	r = rec_find(key);
	dead = r ? *r : NULL;
	if (r)
		*r = dead->next;
	pthread_mutex_unlock(&rec_lock);
	if (dead)
		rec_free(dead);
}

static void rec_add(const void *key, const struct fa_act *a)
{
	struct fa_rec **r, *rec;
	struct fa_act *grown;

	pthread_mutex_lock(&rec_lock);
	r = rec_find(key);
	rec = r ? *r : NULL;
	if (!rec) {
		rec = calloc(1, sizeof(*rec));
		if (!rec)
			goto out;
		rec->key = key;
		rec->next = recs;
		recs = rec;
	}
	if (rec->broken)
		goto out;
	if (rec->n == rec->cap) {
		grown = realloc(rec->acts, (rec->cap * 2 + 4) * sizeof(*grown));
		if (!grown) {
			rec->broken = true;
			goto out;
		}
		rec->acts = grown;
		rec->cap = rec->cap * 2 + 4;
	}
	rec->acts[rec->n] = *a;
	if (a->path && !(rec->acts[rec->n].path = strdup(a->path))) {
		rec->broken = true;
		goto out;
	}
	rec->n++;
out:
	pthread_mutex_unlock(&rec_lock);
}

/* ---- the program's calls: glibc's, then the record ---- */

typedef posix_spawn_file_actions_t fa_t;

PUBLIC int posix_spawn_file_actions_init(fa_t *fa)
{
	REAL(int, posix_spawn_file_actions_init, fa_t *);

	rec_drop(fa);
	return real_posix_spawn_file_actions_init(fa);
}

PUBLIC int posix_spawn_file_actions_destroy(fa_t *fa)
{
	REAL(int, posix_spawn_file_actions_destroy, fa_t *);

	rec_drop(fa);
	return real_posix_spawn_file_actions_destroy(fa);
}

#define RECORD(fa, err, ...)						\
	do {								\
		if (!(err))						\
			rec_add(fa, &(struct fa_act){ __VA_ARGS__ });	\
		return err;						\
	} while (0)

PUBLIC int posix_spawn_file_actions_addclose(fa_t *fa, int fd)
{
	REAL(int, posix_spawn_file_actions_addclose, fa_t *, int);

	RECORD(fa, real_posix_spawn_file_actions_addclose(fa, fd),
	       .tag = FA_CLOSE, .fd = fd);
}

PUBLIC int posix_spawn_file_actions_adddup2(fa_t *fa, int fd, int newfd)
{
	REAL(int, posix_spawn_file_actions_adddup2, fa_t *, int, int);

	RECORD(fa, real_posix_spawn_file_actions_adddup2(fa, fd, newfd),
	       .tag = FA_DUP2, .fd = newfd, .src = fd);
}

PUBLIC int posix_spawn_file_actions_addopen(fa_t *fa, int fd, const char *path,
					    int oflag, mode_t mode)
{
	REAL(int, posix_spawn_file_actions_addopen, fa_t *, int, const char *,
	     int, mode_t);

	RECORD(fa, real_posix_spawn_file_actions_addopen(fa, fd, path, oflag,
							 mode),
	       .tag = FA_OPEN, .fd = fd, .path = (char *)path, .oflag = oflag,
	       .mode = mode);
}

PUBLIC int posix_spawn_file_actions_addchdir_np(fa_t *fa, const char *path)
{
	REAL(int, posix_spawn_file_actions_addchdir_np, fa_t *, const char *);

	RECORD(fa, real_posix_spawn_file_actions_addchdir_np(fa, path),
	       .tag = FA_CHDIR, .fd = -1, .path = (char *)path);
}

PUBLIC int posix_spawn_file_actions_addfchdir_np(fa_t *fa, int fd)
{
	REAL(int, posix_spawn_file_actions_addfchdir_np, fa_t *, int);

	RECORD(fa, real_posix_spawn_file_actions_addfchdir_np(fa, fd),
	       .tag = FA_FCHDIR, .fd = -1, .src = fd);
}

PUBLIC int posix_spawn_file_actions_addclosefrom_np(fa_t *fa, int from)
{
	REAL(int, posix_spawn_file_actions_addclosefrom_np, fa_t *, int);

	RECORD(fa, real_posix_spawn_file_actions_addclosefrom_np(fa, from),
	       .tag = FA_CLOSEFROM, .fd = -1, .src = from);
}

PUBLIC int posix_spawn_file_actions_addtcsetpgrp_np(fa_t *fa, int fd)
{
	REAL(int, posix_spawn_file_actions_addtcsetpgrp_np, fa_t *, int);

	RECORD(fa, real_posix_spawn_file_actions_addtcsetpgrp_np(fa, fd),
	       .tag = FA_TCSETPGRP, .fd = -1, .src = fd);
}

/* ---- the plan ---- */

/* After the actions so far, fd is region description desc (-1: none of
 * ours); cloexec: an open asked close-on-exec, closed after the last. */
static int change_set(struct pl_spawn_plan *p, int fd, int desc, bool cloexec)
{
	struct pl_fd_change *grown;
	size_t i;

	for (i = 0; i < p->nchg; i++)
		if (p->chg[i].fd == fd) {
			p->chg[i].desc = desc;
			p->chg[i].cloexec = cloexec;
			return 0;
		}
	if (p->nchg == p->cchg) {
		grown = realloc(p->chg, (p->cchg * 2 + 8) * sizeof(*grown));
		if (!grown)
			return ENOMEM;
		p->chg = grown;
		p->cchg = p->cchg * 2 + 8;
	}
	p->chg[p->nchg++] = (struct pl_fd_change){ .fd = fd, .desc = desc,
						   .cloexec = cloexec };
	return 0;
}

/* The region description at fd when the actions so far have run. */
static int desc_at(const struct pl_spawn_plan *p, int fd)
{
	size_t i;

	for (i = 0; i < p->nchg; i++)
		if (p->chg[i].fd == fd)
			return p->chg[i].desc;
	return pl_fd_desc(fd);
}

/*
 * Where path goes in the child, after the chdir actions so far: PL_REGION
 * (rpath: the region path; full: the path as the program would give it
 * from here), PL_KERNEL or PL_KERNEL_ABS (PL_KPATH(r, path, rpath)), or
 * -1 with errno set.
 */
static int route(const struct pl_spawn_plan *p, const char *path, char *full,
		 char *rpath, bool follow)
{
	if (path[0] != '/' && p->cwd == PL_SPAWN_CWD_KERNEL)
		return PL_KERNEL;
	if (path[0] != '/' && p->cwd == PL_SPAWN_CWD_REGION) {
		if (pl_dir_path(full, PL_PATH_MAX, p->cwd_path, "/") +
		    strlen(path) >= PL_PATH_MAX)
			return pl_fail(-ENAMETOOLONG);
		strcat(full, path);
	} else {
		snprintf(full, PL_PATH_MAX, "%s", path);
	}
	return follow ? pl_route_follow(AT_FDCWD, full, rpath) :
			pl_route(AT_FDCWD, full, rpath);
}

static int plan_open(struct pl_spawn_plan *p, const struct fa_act *a,
		     char *full, char *rpath)
{
	REAL(int, posix_spawn_file_actions_addopen, fa_t *, int, const char *,
	     int, mode_t);
	REAL(int, posix_spawn_file_actions_adddup2, fa_t *, int, int);
	int r = route(p, a->path, full, rpath, false), fd, *grown;

	if (r < 0)
		return errno;
	if (r != PL_REGION)
		return real_posix_spawn_file_actions_addopen(&p->fa, a->fd,
				PL_KPATH(r, full, rpath), a->oflag, a->mode) ?:
		       change_set(p, a->fd, -1, false);
	p->region = true;
	grown = realloc(p->opened, (p->nopened + 1) * sizeof(*grown));
	if (!grown)
		return ENOMEM;
	p->opened = grown;
	fd = openat(AT_FDCWD, full, a->oflag | O_CLOEXEC, a->mode);
	if (fd < 0)
		return errno;
	p->opened[p->nopened++] = fd;
	/* an open the program asked close-on-exec is gone in the image:
	 * closed after the last action (a later one may dup2 from it) */
	return real_posix_spawn_file_actions_adddup2(&p->fa, fd, a->fd) ?:
	       change_set(p, a->fd, pl_fd_desc(fd), a->oflag & O_CLOEXEC);
}

static int plan_chdir(struct pl_spawn_plan *p, const struct fa_act *a,
		      char *full, char *rpath)
{
	REAL(int, posix_spawn_file_actions_addchdir_np, fa_t *, const char *);
	struct daxfs_handle *h;
	int r = route(p, a->path, full, rpath, true), err;

	if (r < 0)
		return errno;
	if (r != PL_REGION)
		goto kernel;
	p->region = true;
	if (pl_self.on)		/* "." of a removed working directory */
		return 0;
	h = pl_handle();
	if (!h)
		return errno;
	err = pl_chdir_target(h, rpath);
	if (pl_outside(err, rpath)) {
		r = PL_KERNEL_ABS;
		goto kernel;
	}
	if (err)
		return -err;
	p->cwd = PL_SPAWN_CWD_REGION;
	snprintf(p->cwd_path, sizeof(p->cwd_path), "%s", rpath);
	return 0;
kernel:
	p->cwd = PL_SPAWN_CWD_KERNEL;
	return real_posix_spawn_file_actions_addchdir_np(&p->fa,
					PL_KPATH(r, full, rpath));
}

static int plan_fchdir(struct pl_spawn_plan *p, const struct fa_act *a)
{
	REAL(int, posix_spawn_file_actions_addfchdir_np, fa_t *, int);
	int desc = desc_at(p, a->src);

	if (desc < 0) {
		p->cwd = PL_SPAWN_CWD_KERNEL;
		return real_posix_spawn_file_actions_addfchdir_np(&p->fa,
								  a->src);
	}
	p->region = true;
	p->cwd = PL_SPAWN_CWD_REGION;
	return -pl_desc_dir(desc, p->cwd_path, sizeof(p->cwd_path));
}

/* closefrom(from) as a close of each descriptor it would close, but ours:
 * those open here, and those the actions before it opened. */
static int plan_closefrom(struct pl_spawn_plan *p, int from)
{
	REAL(int, posix_spawn_file_actions_addclose, fa_t *, int);
	REAL(int, posix_spawn_file_actions_addclosefrom_np, fa_t *, int);
	struct dirent *e;
	size_t i, n = p->nchg;
	DIR *d;
	int fd, err = 0;

	if (!pl_fd_table_made())
		return real_posix_spawn_file_actions_addclosefrom_np(&p->fa,
								     from);
	p->region = true;
	d = opendir("/proc/self/fd");
	if (!d)
		return errno;
	while (!err && (e = readdir(d))) {
		fd = atoi(e->d_name);
		if (e->d_name[0] == '.' || fd < from || fd == dirfd(d) ||
		    pl_own_fd(fd))
			continue;
		err = real_posix_spawn_file_actions_addclose(&p->fa, fd) ?:
		      change_set(p, fd, -1, false);
	}
	closedir(d);
	for (i = 0; !err && i < n; i++)
		if (p->chg[i].fd >= from && p->chg[i].desc != -1)
			err = real_posix_spawn_file_actions_addclose(&p->fa,
							p->chg[i].fd) ?:
			      change_set(p, p->chg[i].fd, -1, false);
	return err;
}

static int plan_act(struct pl_spawn_plan *p, const struct fa_act *a,
		    char *full, char *rpath)
{
	REAL(int, posix_spawn_file_actions_addclose, fa_t *, int);
	REAL(int, posix_spawn_file_actions_adddup2, fa_t *, int, int);
	REAL(int, posix_spawn_file_actions_addtcsetpgrp_np, fa_t *, int);
	int desc;

	switch (a->tag) {
	case FA_CLOSE:
		if (desc_at(p, a->fd) != -1)
			p->region = true;
		return real_posix_spawn_file_actions_addclose(&p->fa, a->fd) ?:
		       change_set(p, a->fd, -1, false);
	case FA_DUP2:
		/* onto itself too: that clears close-on-exec in the child */
		desc = desc_at(p, a->src);
		if (desc >= 0 || desc_at(p, a->fd) != -1)
			p->region = true;
		return real_posix_spawn_file_actions_adddup2(&p->fa, a->src,
							     a->fd) ?:
		       change_set(p, a->fd, desc, false);
	case FA_OPEN:
		return plan_open(p, a, full, rpath);
	case FA_CHDIR:
		return plan_chdir(p, a, full, rpath);
	case FA_FCHDIR:
		return plan_fchdir(p, a);
	case FA_CLOSEFROM:
		return plan_closefrom(p, a->src);
	default:
		return real_posix_spawn_file_actions_addtcsetpgrp_np(&p->fa,
								     a->src);
	}
}

/*
 * Plans the caller's file actions fa (NULL: none); 0 or an errno, as
 * posix_spawn returns it.  Before pl_fork_prepare: the region opens made
 * here are then among the descriptors the spawn hands down.
 */
int pl_spawn_plan(const fa_t *fa, struct pl_spawn_plan *p)
{
	REAL(int, posix_spawn_file_actions_init, fa_t *);
	REAL(int, posix_spawn_file_actions_addclose, fa_t *, int);
	char full[PL_PATH_MAX], rpath[PL_PATH_MAX];
	struct fa_rec **r;
	size_t i;
	int err;

	memset(p, 0, sizeof(*p));
	p->cwd = PL_SPAWN_CWD_SAME;
	if (!fa || !pl_cfg.enabled)
		return 0;
	pthread_mutex_lock(&rec_lock);
	r = rec_find(fa);
	if (!r || (*r)->broken || !(*r)->n) {
		pthread_mutex_unlock(&rec_lock);
		return 0;
	}
	err = real_posix_spawn_file_actions_init(&p->fa);
	p->built = !err;
	for (i = 0; !err && i < (*r)->n; i++)
		err = plan_act(p, &(*r)->acts[i], full, rpath);
	pthread_mutex_unlock(&rec_lock);
	/* close-on-exec region opens: gone at exec, closed after the rest */
	for (i = 0; !err && i < p->nchg; i++)
		if (p->chg[i].cloexec) {
			err = real_posix_spawn_file_actions_addclose(&p->fa,
							p->chg[i].fd);
			p->chg[i].desc = -1;
			p->chg[i].cloexec = false;
		}
	if (err)
		pl_spawn_plan_end(p);
	return err;
}

/* The file actions the spawn runs: the plan's, or the caller's. */
const fa_t *pl_spawn_actions(const struct pl_spawn_plan *p, const fa_t *fa)
{
	return p->region ? &p->fa : fa;
}

/* What the new image is told of the descriptors: nothing when the
 * actions touch no region file (the image checks what survived). */
const struct pl_fd_change *pl_spawn_changes(const struct pl_spawn_plan *p,
					    size_t *n)
{
	*n = p->region ? p->nchg : 0;
	return p->region ? p->chg : NULL;
}

/* After the spawn, or a failed plan. */
void pl_spawn_plan_end(struct pl_spawn_plan *p)
{
	REAL(int, posix_spawn_file_actions_destroy, fa_t *);
	size_t i;

	for (i = 0; i < p->nopened; i++)
		close(p->opened[i]);
	if (p->built)
		real_posix_spawn_file_actions_destroy(&p->fa);
	free(p->opened);
	free(p->chg);
	memset(p, 0, sizeof(*p));
}
