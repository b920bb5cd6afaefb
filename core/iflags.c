// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Attribute flags (chattr(1) / lsattr(1), format version 9): immutable,
 * append-only, nodump, noatime and sync, held in the inode record's flags
 * word beside BASE and ORPHAN, so that every host enforces what another
 * host set.  The checks themselves sit where each operation decides
 * (core/file.c, falloc.c, namei.c, xattr.c); docs/attrs.md has the
 * rules, the ordering against writes in flight and the crash story.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "filegate.h"

static const struct {
	u32 iflag, fl;
} fl_map[] = {
	{ DAXFS_IF_IMMUTABLE, DAXFS_FL_IMMUTABLE },
	{ DAXFS_IF_APPEND, DAXFS_FL_APPEND },
	{ DAXFS_IF_NODUMP, DAXFS_FL_NODUMP },
	{ DAXFS_IF_NOATIME, DAXFS_FL_NOATIME },
	{ DAXFS_IF_SYNC, DAXFS_FL_SYNC },
};

#define NR_FL	(sizeof(fl_map) / sizeof(fl_map[0]))
#define ALL_IF	(DAXFS_IF_IMMUTABLE | DAXFS_IF_APPEND | DAXFS_IF_NODUMP | \
		 DAXFS_IF_NOATIME | DAXFS_IF_SYNC)

u32 daxfs_if_to_fl(u32 iflags)
{
	u32 fl = 0, i;

	/* most files have none: every getattr, read and write comes here */
	if (!(iflags & ALL_IF))
		return 0;
	for (i = 0; i < NR_FL; i++)
		if (iflags & fl_map[i].iflag)
			fl |= fl_map[i].fl;
	return fl;
}

static u32 fl_to_if(u32 fl)
{
	u32 iflags = 0, i;

	for (i = 0; i < NR_FL; i++)
		if (fl & fl_map[i].fl)
			iflags |= fl_map[i].iflag;
	return iflags;
}

int daxfs_getflags(struct daxfs_fs *fs, u64 ino, u32 *flags)
{
	struct daxfs_attr a;
	int err = daxfs_getattr(fs, ino, &a);

	if (!err)
		*flags = a.flags;
	return err;
}

/* Linux's (ext4's) permission rules, on the flags seen now. */
static int flags_allowed(u32 old, u32 want, u32 may)
{
	if ((old ^ want) & DAXFS_IF_LOCKED && !(may & DAXFS_MAY_IMMUTABLE))
		return -EPERM;
	/* an immutable inode that stays so: only a may change with it */
	if (old & want & DAXFS_IF_IMMUTABLE &&
	    (old ^ want) & ~DAXFS_IF_LOCKED)
		return -EPERM;
	return 0;
}

struct setflags_call {
	u64 ino;
	u32 want, may;
};

static int setflags_step(struct daxfs_op *op, void *arg)
{
	struct setflags_call *s = arg;
	struct daxfs_inode *ip;
	bool gate = false;
	u32 f;
	int err;

	if (!op->lane || (op->fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	err = daxfs_inode_get_writable(op, s->ino, &ip);
	if (err)
		return err;
	f = daxfs_load32(&ip->flags);
	err = flags_allowed(f & DAXFS_IF_ATTRS, s->want, s->may);
	if (err)
		return err;
	/*
	 * Locking a regular file: close its write gate first, which waits
	 * until no write (or truncate, fallocate) of it is in flight on any
	 * host.  Writes check the flags inside the gate, so once the CAS
	 * below is done none stores again (docs/attrs.md "Ordering").
	 */
	if (DAXFS_IS_REG(daxfs_load32(&ip->mode)) &&
	    (s->want & ~f & DAXFS_IF_LOCKED)) {
		err = daxfs_gate_close(op, ip, s->ino);
		if (err)
			return err;
		gate = true;
	}
	for (;;) {
		if (daxfs_fenced(op)) {
			err = -ESTALE;
			break;
		}
		err = flags_allowed(f & DAXFS_IF_ATTRS, s->want, s->may);
		if (err)
			break;
		if (daxfs_cas32(&ip->flags, &f,
				(f & ~DAXFS_IF_ATTRS) | s->want))
			break;
	}
	if (!err) {
		daxfs_pflush(op->fs, &ip->flags, sizeof(ip->flags));
		daxfs_crash_point("setflags.set");
		/* other hosts' caches revalidate on the change word */
		daxfs_inode_touch(ip, DAXFS_TOUCH_CTIME);
		/* and their permission checks on the epoch, last */
		if ((f ^ s->want) & DAXFS_IF_LOCKED)
			daxfs_attr_epoch_bump(op->fs);
	}
	if (gate)
		daxfs_gate_open(op, ip);
	return err;
}

int daxfs_setflags(struct daxfs_fs *fs, u64 ino, u32 flags, u32 may)
{
	struct setflags_call s = { ino, fl_to_if(flags), may };

	if (flags & ~DAXFS_FL_SUPPORTED)
		return -EOPNOTSUPP;
	if (!(may & DAXFS_MAY_OWNER))
		return -EPERM;
	/* another host's shrink held the gate: nothing changed, retry */
	return daxfs_gate_op(fs, setflags_step, &s);
}
