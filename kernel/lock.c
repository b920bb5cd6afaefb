// SPDX-License-Identifier: GPL-2.0
/*
 * fcntl record locks, OFD locks and flock for daxfs.ko, held in the
 * region's lock table (core/lock.c, docs/locks.md) so that every host sees
 * them.  The VFS's own per-inode lists are kept as a mirror of this host's
 * part: it is what makes close(2), the last fput and exit call back into
 * ->lock and ->flock with F_UNLCK (locks_remove_posix/_flock only call
 * when the local list is not empty), and what /proc/locks shows.
 *
 * Order: a lock is taken in the region first, then recorded locally; an
 * unlock is dropped locally first, then in the region.  So a local
 * record of another owner that a region grant would conflict with is
 * always on its way out, and the local call may wait for it briefly.
 */
#include <linux/fs.h>
#include <linux/sched/signal.h>
#include <linux/hrtimer.h>
#include "daxfs_k.h"

static bool daxfs_k_lock_req(struct file *file, struct file_lock *fl,
			     u32 kind, struct daxfs_lock_req *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->owner = (u64)(unsigned long)(kind == DAXFS_LCK_FLOCK ? file :
					daxfs_fl_owner(fl));
	r->pid = (u32)daxfs_fl_pid(fl);
	switch (daxfs_fl_type(fl)) {
	case F_RDLCK:
		r->type = DAXFS_LCK_RD;
		break;
	case F_WRLCK:
		r->type = DAXFS_LCK_WR;
		break;
	case F_UNLCK:
		r->type = DAXFS_LCK_UN;
		break;
	default:
		return false;
	}
	if (kind == DAXFS_LCK_FLOCK) {
		r->end = DAXFS_LOCK_EOF;
		return true;
	}
	if (fl->fl_start < 0 || fl->fl_end < fl->fl_start)
		return false;
	r->start = (u64)fl->fl_start;
	r->end = fl->fl_end == OFFSET_MAX ? DAXFS_LOCK_EOF : (u64)fl->fl_end;
	return true;
}

static int daxfs_k_lock_errno(struct super_block *sb, int err)
{
	/* the host stopped: the lock table on a bad block (kernel/media.c) */
	if (err && READ_ONCE(DAXFS_SB(sb)->media_fixed))
		return -EIO;
	/* a host-less mount or one declared dead holds no locks */
	if (err == -EROFS || err == -ESTALE)
		return -ENOLCK;
	return err;
}

/*
 * Sets r in the region; wait: F_SETLKW, sleeping interruptibly for the
 * back-off between tries (another host cannot wake us: bounded polling of
 * the bucket's change counter, one load a look).
 * A signal ends the wait with -ERESTARTSYS, the waiting record dropped.
 */
static int daxfs_k_lock_set(struct super_block *sb, u64 ino,
			    struct daxfs_lock_req *r, bool wait)
{
	struct daxfs_fs *fs = DAXFS_FS(sb);
	u32 round = 0;
	ktime_t kt;
	int err;

	if (!DAXFS_SB(sb)->joined)
		return -ENOLCK;
	for (;;) {
		if (READ_ONCE(DAXFS_SB(sb)->dead))
			return -EIO;
		err = daxfs_lock_set(fs, ino, r, wait ? DAXFS_LOCK_WAIT : 0);
		if (err != -EAGAIN || !wait)
			return daxfs_k_lock_errno(sb, err);
		if (!daxfs_lock_changed(fs, ino, r->seq)) {
			kt = ktime_set(0, (unsigned long)daxfs_lock_backoff_us(round) *
					  NSEC_PER_USEC);
			set_current_state(TASK_INTERRUPTIBLE);
			schedule_hrtimeout_range(&kt, 10 * NSEC_PER_USEC,
						 HRTIMER_MODE_REL);
		}
		if (signal_pending(current)) {
			daxfs_lock_cancel(fs, ino, r);
			return -ERESTARTSYS;
		}
		round = daxfs_lock_changed(fs, ino, r->seq) ? 0 : round + 1;
	}
}

/* F_GETLK: the first conflicting lock of any host, or F_UNLCK. */
static int daxfs_k_getlk(struct super_block *sb, u64 ino,
			 struct daxfs_lock_req *r, struct file_lock *fl)
{
	int err;

	if (!DAXFS_SB(sb)->joined)
		return -ENOLCK;
	err = daxfs_lock_get(DAXFS_FS(sb), ino, r);
	if (err)
		return daxfs_k_lock_errno(sb, err);
	if (r->type == DAXFS_LCK_UN) {
		daxfs_fl_type(fl) = F_UNLCK;
		return 0;
	}
	daxfs_fl_type(fl) = r->type == DAXFS_LCK_WR ? F_WRLCK : F_RDLCK;
	fl->fl_start = (loff_t)r->start;
	fl->fl_end = r->end >= (u64)OFFSET_MAX ? OFFSET_MAX : (loff_t)r->end;
	/* an OFD holder has no process: Linux shows -1 */
	daxfs_fl_pid(fl) = r->kind == DAXFS_LCK_OFD ? -1 : (pid_t)r->pid;
	return 0;
}

/* The region's part, then the local mirror (unlock: the other way). */
static int daxfs_k_lock_both(struct file *file, struct file_lock *fl,
			     u32 kind, bool wait)
{
	struct inode *inode = file_inode(file);
	struct daxfs_lock_req r;
	unsigned int flags;
	int err;

	if (!daxfs_k_lock_req(file, fl, kind, &r))
		return -EINVAL;
	if (r.type == DAXFS_LCK_UN) {
		err = locks_lock_file_wait(file, fl);
		return daxfs_k_lock_set(inode->i_sb, inode->i_ino, &r, false) ?:
		       err;
	}
	err = daxfs_k_lock_set(inode->i_sb, inode->i_ino, &r, wait);
	if (err)
		return err;
	/* granted in the region: any local record in the way is being
	 * dropped right now, so wait for it even for F_SETLK */
	flags = daxfs_fl_flags(fl);
	daxfs_fl_flags(fl) |= FL_SLEEP;
	err = locks_lock_file_wait(file, fl);
	daxfs_fl_flags(fl) = flags;
	return err;
}

int daxfs_k_lock(struct file *file, int cmd, struct file_lock *fl)
{
	struct inode *inode = file_inode(file);
	struct daxfs_lock_req r;
	u32 kind;

	if (!(daxfs_fl_flags(fl) & FL_POSIX))
		return -ENOLCK;
	kind = daxfs_fl_flags(fl) & FL_OFDLCK ? DAXFS_LCK_OFD : DAXFS_LCK_POSIX;
	/*
	 * The last fput removes the description's OFD locks with a plain
	 * POSIX unlock whose owner is the file (locks_remove_file ->
	 * locks_remove_posix(filp, filp)).  A POSIX owner is a files_struct,
	 * never a file: this is the OFD owner, and the region keeps kinds
	 * apart (core/lock.c same owner), so say which.
	 */
	if (kind == DAXFS_LCK_POSIX && daxfs_fl_type(fl) == F_UNLCK &&
	    daxfs_fl_owner(fl) == (fl_owner_t)file)
		kind = DAXFS_LCK_OFD;
	if (IS_GETLK(cmd)) {
		if (!daxfs_k_lock_req(file, fl, kind, &r) ||
		    r.type == DAXFS_LCK_UN)
			return -EINVAL;
		return daxfs_k_getlk(inode->i_sb, inode->i_ino, &r, fl);
	}
	return daxfs_k_lock_both(file, fl, kind, IS_SETLKW(cmd));
}

int daxfs_k_flock(struct file *file, int cmd, struct file_lock *fl)
{
	if (!(daxfs_fl_flags(fl) & FL_FLOCK))
		return -ENOLCK;
	return daxfs_k_lock_both(file, fl, DAXFS_LCK_FLOCK,
				 IS_SETLKW(cmd) ||
				 (daxfs_fl_flags(fl) & FL_SLEEP));
}
