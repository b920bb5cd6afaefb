// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: record locks (getlk/setlk) and flock through the core's
 * cluster-wide locks (docs/locks.md), so a lock taken through this mount
 * is seen by every other host of the region: another FUSE mount, a
 * libdaxfs tool, a `daxfs run` program, a kernel mount.
 *
 * The kernel names the owner: for fcntl locks the process's open-files
 * table (or the open file, for OFD locks), for flock the open file; we
 * pass its lock_owner to the core as the owner id, so every owner is
 * (this host, lock_owner).  The kernel does not send POSIX unlocks at
 * close: it sends flush with the closer's lock_owner, and release with
 * FUSE_RELEASE_FLOCK_UNLOCK after a flock, and we drop the locks there.
 * It names no owner at the last close of a file with OFD locks only, so
 * each open file (fi->fh) remembers the owners that asked for fcntl
 * locks through it and have not flushed it since; at release those are
 * the open file's own (OFD) owners: a process that asked had a
 * descriptor of it, and closing that descriptor flushed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/file.h>

#include "dfuse.h"

/* How long one wait of an F_SETLKW or a blocking flock lasts before the
 * worker looks whether the caller was interrupted (a signal). */
#define DFUSE_LOCK_SLICE_MS	100

struct dfuse_lockers {
	uint64_t join;			/* daxfs_handle_joins() at open */
	struct daxfs_fcache fc;		/* for read and write (calloc: 0) */
	pthread_mutex_t lock;
	uint64_t *owner;
	size_t nr, cap;
};

static struct dfuse_lockers *lockers_of(const struct fuse_file_info *fi)
{
	return (struct dfuse_lockers *)(uintptr_t)fi->fh;
}

int dfuse_locks_open(struct fuse_file_info *fi, uint64_t join)
{
	struct dfuse_lockers *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->join = join;
	pthread_mutex_init(&l->lock, NULL);
	fi->fh = (uint64_t)(uintptr_t)l;
	return 0;
}

uint64_t dfuse_file_join(const struct fuse_file_info *fi)
{
	const struct dfuse_lockers *l = lockers_of(fi);

	return l ? l->join : 0;
}

struct daxfs_fcache *dfuse_file_cache(const struct fuse_file_info *fi)
{
	struct dfuse_lockers *l = lockers_of(fi);

	return l ? &l->fc : NULL;
}

void dfuse_locks_forget(struct fuse_file_info *fi)
{
	struct dfuse_lockers *l = lockers_of(fi);

	if (!l)
		return;
	pthread_mutex_destroy(&l->lock);
	free(l->owner);
	free(l);
	fi->fh = 0;
}

/* Remembers owner (add) or forgets it; -ENOLCK when there is no memory
 * to remember it (the lock is not taken then). */
static int lockers_note(const struct fuse_file_info *fi, uint64_t owner,
			bool add)
{
	struct dfuse_lockers *l = lockers_of(fi);
	uint64_t *grown;
	size_t i;
	int err = 0;

	if (!l)
		return add ? -ENOLCK : 0;
	pthread_mutex_lock(&l->lock);
	for (i = 0; i < l->nr && l->owner[i] != owner; i++)
		;
	if (i < l->nr && !add) {
		l->owner[i] = l->owner[--l->nr];
	} else if (i == l->nr && add) {
		if (l->nr == l->cap) {
			grown = realloc(l->owner, (l->cap * 2 + 4) *
					sizeof(*grown));
			if (!grown) {
				err = -ENOLCK;
				goto out;
			}
			l->owner = grown;
			l->cap = l->cap * 2 + 4;
		}
		l->owner[l->nr++] = owner;
	}
out:
	pthread_mutex_unlock(&l->lock);
	return err;
}

static void req_of(uint64_t owner, uint32_t kind, const struct flock *l,
		   struct daxfs_lock_req *r)
{
	r->owner = owner;
	r->kind = kind;
	r->type = l->l_type == F_RDLCK ? DAXFS_LCK_RD :
		  l->l_type == F_WRLCK ? DAXFS_LCK_WR : DAXFS_LCK_UN;
	/* libfuse hands us SEEK_SET ranges, l_len 0 for "to EOF" */
	r->start = (uint64_t)l->l_start;
	r->end = l->l_len > 0 ? (uint64_t)(l->l_start + l->l_len - 1) :
		 DAXFS_LOCK_EOF;
	r->pid = (uint32_t)l->l_pid;	/* 0 (unlocks): this server's */
}

/* A host-less mount (nohost) holds no locks: the core's -EROFS is
 * ENOLCK to the caller, as daxfs.ko says it (kernel/lock.c). */
static int lock_errno(int err)
{
	return err == -EROFS ? ENOLCK : -err;
}

/* Sets r, waiting (wait) until it is granted, the core finds a deadlock
 * or the caller is interrupted; a worker thread of the session waits. */
static int set_lock(fuse_req_t req, struct dfuse *d, uint64_t ino,
		    const struct daxfs_lock_req *r, bool wait)
{
	struct daxfs_lock_req t;
	int err;

	for (;;) {
		t = *r;
		err = daxfs_lock(d->h, ino, &t, wait ? DFUSE_LOCK_SLICE_MS : 0);
		if (err != -EAGAIN || !wait)
			return err;
		if (fuse_req_interrupted(req))
			return -EINTR;
	}
}

void dfuse_getlk(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 struct flock *lock)
{
	struct dfuse *d = fuse_req_userdata(req);
	struct daxfs_lock_req r = { 0 };
	int err;

	req_of(fi->lock_owner, DAXFS_LCK_POSIX, lock, &r);
	err = daxfs_getlk(d->h, dfuse_ino(d, node), &r);
	if (err)
		return (void)fuse_reply_err(req, lock_errno(err));
	if (r.type == DAXFS_LCK_UN) {
		lock->l_type = F_UNLCK;
		return (void)fuse_reply_lock(req, lock);
	}
	lock->l_type = r.type == DAXFS_LCK_RD ? F_RDLCK : F_WRLCK;
	lock->l_whence = SEEK_SET;
	lock->l_start = (off_t)r.start;
	lock->l_len = r.end == DAXFS_LOCK_EOF ? 0 :
		      (off_t)(r.end - r.start + 1);
	/* the holder's pid on its host; the kernel shows 0 for a pid that
	 * does not exist in this mount's pid namespace */
	lock->l_pid = (pid_t)r.pid;
	fuse_reply_lock(req, lock);
}

void dfuse_setlk(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 struct flock *lock, int sleep)
{
	struct dfuse *d = fuse_req_userdata(req);
	struct daxfs_lock_req r = { 0 };
	int err = 0;

	req_of(fi->lock_owner, DAXFS_LCK_POSIX, lock, &r);
	if (r.type != DAXFS_LCK_UN)
		err = lockers_note(fi, fi->lock_owner, true);
	if (!err)
		err = set_lock(req, d, dfuse_ino(d, node), &r, sleep);
	fuse_reply_err(req, lock_errno(err));
}

void dfuse_flock(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 int op)
{
	struct dfuse *d = fuse_req_userdata(req);
	struct daxfs_lock_req r;

	if (daxfs_flock_req(op, fi->lock_owner, &r))
		return (void)fuse_reply_err(req, EINVAL);
	fuse_reply_err(req, lock_errno(set_lock(req, d, dfuse_ino(d, node),
						&r, !(op & LOCK_NB))));
}

void dfuse_locks_flush(struct dfuse *d, uint64_t ino,
		       const struct fuse_file_info *fi)
{
	if (d->ro)
		return;
	lockers_note(fi, fi->lock_owner, false);
	daxfs_unlock(d->h, ino, DAXFS_LCK_POSIX, fi->lock_owner, 0,
		     DAXFS_LOCK_EOF);
}

void dfuse_locks_release(struct dfuse *d, uint64_t ino,
			 struct fuse_file_info *fi)
{
	struct dfuse_lockers *l = lockers_of(fi);
	size_t i;

	if (!d->ro && fi->flock_release)
		daxfs_unlock(d->h, ino, DAXFS_LCK_FLOCK, fi->lock_owner, 0,
			     DAXFS_LOCK_EOF);
	/* no other thread uses the open file once it is released */
	for (i = 0; !d->ro && l && i < l->nr; i++)
		daxfs_unlock(d->h, ino, DAXFS_LCK_POSIX, l->owner[i], 0,
			     DAXFS_LOCK_EOF);
	dfuse_locks_forget(fi);
}
