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
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>

#include "dfuse.h"

/* How long one wait of an F_SETLKW or a blocking flock lasts before the
 * worker looks whether the caller was interrupted (a signal). */
#define DFUSE_LOCK_SLICE_MS	100

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
		return (void)fuse_reply_err(req, -err);
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

	req_of(fi->lock_owner, DAXFS_LCK_POSIX, lock, &r);
	fuse_reply_err(req, -set_lock(req, d, dfuse_ino(d, node), &r, sleep));
}

void dfuse_flock(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 int op)
{
	struct dfuse *d = fuse_req_userdata(req);
	struct daxfs_lock_req r;

	if (daxfs_flock_req(op, fi->lock_owner, &r))
		return (void)fuse_reply_err(req, EINVAL);
	fuse_reply_err(req, -set_lock(req, d, dfuse_ino(d, node), &r,
				      !(op & LOCK_NB)));
}

void dfuse_locks_flush(struct dfuse *d, uint64_t ino,
		       const struct fuse_file_info *fi)
{
	if (!d->ro)
		daxfs_unlock(d->h, ino, DAXFS_LCK_POSIX, fi->lock_owner, 0,
			     DAXFS_LOCK_EOF);
}

void dfuse_locks_release(struct dfuse *d, uint64_t ino,
			 const struct fuse_file_info *fi)
{
	if (d->ro || !fi->flock_release)
		return;
	daxfs_unlock(d->h, ino, DAXFS_LCK_FLOCK, fi->lock_owner, 0,
		     DAXFS_LOCK_EOF);
	/* OFD locks of this open file have the same owner id */
	daxfs_unlock(d->h, ino, DAXFS_LCK_POSIX, fi->lock_owner, 0,
		     DAXFS_LOCK_EOF);
}
