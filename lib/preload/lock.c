// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Advisory locks on region files: fcntl record locks (F_GETLK, F_SETLK,
 * F_SETLKW), open file description locks (F_OFD_*) and flock(2), held in
 * the region by the core (docs/locks.md), so programs on two hosts that
 * lock one file exclude each other.  Each process is its own host: its
 * POSIX locks are owned by its pid; OFD and flock locks by the open file
 * description (an id made of the description table's random number and
 * the description's index: the same in every process that shares the
 * description, fork children and exec'ed images included).  POSIX drops
 * a process's locks on a file when it closes any descriptor of it; OFD
 * and flock locks go with the last close of the description in every
 * process.
 *
 * Those are the description's, not the process's, as on Linux: every
 * request on them is DAXFS_LCK_SHARED, so the records move to the host
 * of whichever process acts on the description (docs/locks.md
 * "Descriptions shared across hosts").  The host that holds them (the
 * carrier) may end while others still hold the description: it does not
 * leave then (state.c), and the heartbeat of each survivor takes them
 * over once it sees the carrier's process gone (pl_lock_watch), before
 * the carrier's lease runs out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>

#include "preload.h"

/* Set once this process asked for a lock: until then a close has no
 * lock to drop and skips the lock table. */
static _Atomic int took_locks;

bool pl_lock_took(void)
{
	return atomic_load(&took_locks);
}

static uint32_t type_of(short l_type)
{
	return l_type == F_RDLCK ? DAXFS_LCK_RD :
	       l_type == F_WRLCK ? DAXFS_LCK_WR : DAXFS_LCK_UN;
}

/* struct flock (l_whence resolved to base) -> inclusive byte range */
static int range_of(const struct flock *fl, int64_t base,
		    struct daxfs_lock_req *r)
{
	int64_t start = base + fl->l_start, len = fl->l_len;

	if (len < 0) {
		start += len;
		len = -len;
	}
	if (start < 0)
		return -EINVAL;
	r->start = (uint64_t)start;
	r->end = len ? (uint64_t)start + (uint64_t)len - 1 : DAXFS_LOCK_EOF;
	return 0;
}

static void report(const struct daxfs_lock_req *r, struct flock *fl)
{
	if (r->type == DAXFS_LCK_UN) {
		fl->l_type = F_UNLCK;
		return;
	}
	fl->l_type = r->type == DAXFS_LCK_RD ? F_RDLCK : F_WRLCK;
	fl->l_whence = SEEK_SET;
	fl->l_start = (off_t)r->start;
	fl->l_len = r->end == DAXFS_LOCK_EOF ? 0 :
		    (off_t)(r->end - r->start + 1);
	fl->l_pid = r->kind == DAXFS_LCK_POSIX ? (pid_t)r->pid : -1;
}

int pl_lock(int fd, int cmd, struct flock *fl)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_lock_req r = { .kind = DAXFS_LCK_POSIX };
	int ofd = cmd == F_OFD_GETLK || cmd == F_OFD_SETLK ||
		  cmd == F_OFD_SETLKW;
	struct pl_desc *d;
	struct daxfs_attr a;
	int64_t base = 0;
	uint64_t ino;
	int acc, err = 0;

	if (!h)
		return -1;
	if (fl->l_type != F_RDLCK && fl->l_type != F_WRLCK &&
	    fl->l_type != F_UNLCK)
		return pl_fail(-EINVAL);
	if (ofd && fl->l_pid)
		return pl_fail(-EINVAL);
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	ino = d->ino;
	acc = atomic_load(&d->flags) & (O_ACCMODE | O_PATH);
	if (fl->l_whence == SEEK_CUR)
		base = (int64_t)atomic_load(&d->off);
	if (ofd) {
		r.kind = DAXFS_LCK_OFD | DAXFS_LCK_SHARED;
		r.owner = pl_fd_lock_owner(d);
	}
	pl_fd_put(d);
	if (fl->l_whence == SEEK_END) {
		err = daxfs_fstat(h, ino, &a);
		base = (int64_t)a.size;
	} else if (fl->l_whence != SEEK_SET && fl->l_whence != SEEK_CUR) {
		err = -EINVAL;
	}
	if (!err)
		err = range_of(fl, base, &r);
	if (err)
		return pl_fail(err);
	r.type = type_of(fl->l_type);
	if (cmd == F_GETLK || cmd == F_OFD_GETLK) {
		if (r.type == DAXFS_LCK_UN)
			return pl_fail(-EINVAL);
		err = daxfs_getlk(h, ino, &r);
		if (!err)
			report(&r, fl);
		return err ? pl_fail(err) : 0;
	}
	/* a read lock needs a readable open, a write lock a writable one
	 * (Linux's check_fmode_for_setlk) */
	if ((acc & O_PATH) ||
	    (r.type == DAXFS_LCK_RD && (acc & O_ACCMODE) == O_WRONLY) ||
	    (r.type == DAXFS_LCK_WR && (acc & O_ACCMODE) == O_RDONLY))
		return pl_fail(-EBADF);
	atomic_store(&took_locks, 1);
	err = daxfs_lock(h, ino, &r,
			 cmd == F_SETLKW || cmd == F_OFD_SETLKW ? -1 : 0);
	return err ? pl_fail(err) : 0;
}

PUBLIC int flock(int fd, int op)
{
	REAL(int, flock, int, int);
	struct daxfs_handle *h;
	struct daxfs_lock_req r;
	struct pl_desc *d;
	uint64_t ino;
	int err;

	d = pl_fd_get(fd);
	if (!d)
		return real_flock(fd, op);
	ino = d->ino;
	err = daxfs_flock_req(op, pl_fd_lock_owner(d), &r);
	pl_fd_put(d);
	if (err)
		return pl_fail(err);
	r.kind |= DAXFS_LCK_SHARED;
	h = pl_handle();
	if (!h)
		return -1;
	atomic_store(&took_locks, 1);
	err = daxfs_lock(h, ino, &r, op & LOCK_NB ? 0 : -1);
	return err ? pl_fail(err) : 0;
}

/* The image before exec handed its locks over (pl_reopen_all): our
 * closes drop them as theirs would have. */
void pl_lock_inherited(void)
{
	atomic_store(&took_locks, 1);
}

/* This process closes a descriptor of ino: its POSIX locks on the file
 * go (close(2) semantics). */
void pl_lock_drop_posix(uint64_t ino)
{
	struct daxfs_handle *h = pl_handle_peek();

	if (h && atomic_load(&took_locks))
		daxfs_unlock(h, ino, DAXFS_LCK_POSIX, 0, 0, DAXFS_LOCK_EOF);
}

/* The last descriptor of a description (lock owner id) closed, in every
 * process: its OFD and flock locks go, whichever host holds them. */
void pl_lock_drop_desc(uint64_t ino, uint64_t id)
{
	struct daxfs_handle *h = pl_handle_peek();

	if (!h || !id)
		return;
	daxfs_unlock(h, ino, DAXFS_LCK_OFD | DAXFS_LCK_SHARED, id, 0,
		     DAXFS_LOCK_EOF);
	daxfs_unlock(h, ino, DAXFS_LCK_FLOCK | DAXFS_LCK_SHARED, id, 0,
		     DAXFS_LOCK_EOF);
}

/* Hosts other than ours holding OFD or flock records of one owner. */
struct carriers {
	uint64_t owner;
	uint32_t me;
	uint32_t n;
	uint32_t slot[8];
	bool mine;		/* one of ours too */
};

static void carriers_note(void *ctx, u64 ino, const struct daxfs_lock_req *l,
			  bool waiting)
{
	struct carriers *c = ctx;
	uint32_t i;

	(void)ino;
	if (waiting || l->owner != c->owner || l->kind == DAXFS_LCK_POSIX)
		return;
	if (l->host == c->me) {
		c->mine = true;
		return;
	}
	for (i = 0; i < c->n; i++)
		if (c->slot[i] == l->host)
			return;
	if (c->n < 8)
		c->slot[c->n++] = l->host;
}

static int carriers_of(struct daxfs_handle *h, uint64_t ino, uint64_t id,
		       struct carriers *c)
{
	uint64_t gen;

	memset(c, 0, sizeof(*c));
	c->owner = id;
	if (daxfs_handle_host(h, &c->me, &gen))
		return -1;
	return daxfs_lock_list_all(h, ino, carriers_note, c) < 0 ? -1 : 0;
}

/* The heartbeat's look at one description with a lock id: pair c. */
static void watch_one(struct daxfs_handle *h, const uint64_t *c)
{
	struct carriers cr;
	unsigned int j;
	uint64_t gen;

	if (carriers_of(h, c[0], c[1], &cr))
		return;
	for (j = 0; j < cr.n; j++) {
		if (daxfs_host_process_gone(h, cr.slot[j], &gen) != 1)
			continue;
		if (daxfs_host_adopt_owner_locks(h, cr.slot[j], gen, c[0],
						 c[1]) > 0) {
			atomic_store(&took_locks, 1);
			pl_debug("took over the locks of inode %llu from host "
				 "%u, whose process ended",
				 (unsigned long long)c[0], cr.slot[j]);
		}
	}
}

/* Descriptions the heartbeat looks at per beat, at most: its look must
 * not hold off the next renewal for long.  The next beat goes on where
 * this one stopped, so a process that holds more is looked at whole
 * every few beats. */
#define WATCH_PER_BEAT	512

/*
 * The heartbeat's look (a quarter of a lease): the locks of a description
 * we hold whose carrier's process has ended become ours, before that
 * host's lease runs out and its records die with it.  Two survivors may
 * both try: the core moves them under the bucket claim, to one of them.
 * Until session 58 it looked at the first 32 locked descriptions only,
 * and the locks of any after them went with their carrier's lease.
 */
void pl_lock_watch(struct daxfs_handle *h, void *arg)
{
	static unsigned int from;	/* the heartbeat thread's alone */
	unsigned int i, n, looked = 0;
	uint64_t c[32][2];

	(void)arg;
	if (from >= PL_DESC_MAX)
		from = 0;
	while (looked < WATCH_PER_BEAT && from < PL_DESC_MAX) {
		n = pl_fd_locked(c, 32, &from);
		for (i = 0; i < n; i++)
			watch_one(h, c[i]);
		looked += n;
	}
}

bool pl_lock_carried(struct daxfs_handle *h, const uint64_t (*c)[2],
		     unsigned int n)
{
	struct carriers cr;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!carriers_of(h, c[i][0], c[i][1], &cr) && cr.mine)
			return true;
	return false;
}
