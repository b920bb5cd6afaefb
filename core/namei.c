// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Namespace operations: attributes, lookup, create, link, unlink, rmdir,
 * symlinks, readdir and rename.  Protocols and crash stories:
 * docs/namespace.md.
 *
 * Counting rules (crash leaves counts high, never low): a link count or
 * entry count is raised before the name that justifies it is published
 * and lowered only after the name is gone.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "base.h"
#include "inode.h"
#include "openset.h"
#include "dir.h"
#include "symlink.h"
#include "ns-intent.h"

/* Large pristine base directories are imported before a writable host
 * looks names up in them (hashed instead of scanned). */
#define BASE_SCAN_MAX		64
/* Parent-pointer walks (subtree check) are bounded by this depth. */
#define DEPTH_MAX		4096
/* How many times an operation restarts after losing a race. */
#define NS_RETRIES		64
/* rounds a holder gives a remover between its mark and its CAS before it
 * takes the mark for a dead one's (leaf_give_way) */
#define LEAF_WAIT_ROUNDS	64

static bool writable(struct daxfs_op *op)
{
	return op->lane && !(op->fs->flags & DAXFS_FS_RDONLY);
}

/* Waits (bounded by a few leases of our monotonic clock, as leases are
 * timed: a stepped wall clock neither ends nor stretches a wait) for a
 * condition owned by a live host. */
struct waiter {
	s64 start;
	u32 rounds;
};

static bool wait_more(struct daxfs_op *op, struct waiter *w)
{
	s64 now = daxfs_mono_ns();

	if (!w->rounds++)
		w->start = now;
	if (now - w->start > 4LL * op->fs->lease_ms * 1000000LL)
		return false;
	if (w->rounds & 15)
		daxfs_cpu_relax();
	else
		daxfs_yield();
	return true;
}

struct rmdir_of {
	u64 ino;
	struct daxfs_lane *mine;
};

/* Is lane, in use and not ours, running (or left by) an rmdir of ino? */
static bool lane_rmdir_of(struct daxfs_lane *lane, const void *arg)
{
	const struct rmdir_of *r = arg;

	return lane != r->mine && daxfs_load(&lane->epoch) &&
	       daxfs_load(&lane->intent.op) == DAXFS_INTENT_RENAME &&
	       NS_KIND(daxfs_load(&lane->intent.a[6])) == NS_KIND_RMDIR &&
	       daxfs_load(&lane->intent.a[1]) == r->ino;
}

/*
 * The host whose rmdir holds directory ino DEAD: a lane in use (epoch
 * set), not ours, whose intent is an rmdir of ino.  DAXFS_NO_HOST if none:
 * that rmdir just ended (done or undone), or the DEAD is a residue nobody
 * will clear (docs/namespace.md).  The words are loaded once each and only
 * say how to wait: every answer still comes from the directory itself.
 */
static u32 rmdir_owner(struct daxfs_op *op, u64 ino)
{
	struct rmdir_of r = { ino, op->lane };

	if (!ino)
		return DAXFS_NO_HOST;
	return daxfs_lane_owner(op->fs, lane_rmdir_of, &r);
}

/*
 * Is the rmdir of directory ino still getting on?  Its owner is a thread
 * of our own host, or a host whose lease our own clock sees running, or
 * one a survivor is recovering.  An owner whose lease ran out is declared
 * dead and recovered here, as claim_get does: its recovery rolls the
 * rmdir forward.  No: no owner, or a dead one nobody could recover (no
 * free lane here).
 */
static bool rmdir_going(struct daxfs_op *op, u64 ino)
{
	u32 slot = rmdir_owner(op, ino), st;

	if (slot == DAXFS_NO_HOST)
		return false;
	if (slot == op->fs->host)
		return true;	/* ours: the caller checked our fence */
	if (daxfs_host_try_dead(op, slot) == 1)
		return true;	/* recovered (or gone) just now */
	st = daxfs_host_st(daxfs_load(&daxfs_host_at(op->fs, slot)->state));
	return st == DAXFS_HOST_ALIVE || st == DAXFS_HOST_RECOVERING;
}

/*
 * Waits for a half-done rmdir (directory ino DEAD but still named, 0 if
 * not known) of another op.  Until its name is gone the directory is
 * "still there" for everyone (docs/namespace.md, "Meeting a half-done
 * rmdir"), so the wait lasts as long as that rmdir gets on (rmdir_going):
 * a live owner finishes it, a dead one is recovered.  Only four leases
 * with no owner getting on end it (-EBUSY: a residue, a dead owner that
 * cannot be recovered yet); -ESTALE once our host is fenced; -EINTR on
 * a fatal signal (daxfs.ko).
 */
static int wait_rmdir(struct daxfs_op *op, struct waiter *w, u64 ino)
{
	if (!(w->rounds & 15)) {
		if (daxfs_fenced(op))
			return -ESTALE;
		/* no longer bounded by time: a killed task must not wait */
		if (daxfs_walk_yield())
			return -EINTR;
		if (rmdir_going(op, ino))
			w->start = daxfs_mono_ns();	/* its progress bounds us */
		else
			daxfs_reap_expired(op->fs);
	}
	return wait_more(op, w) ? 0 : -EBUSY;
}

/*
 * dir (record dp) refused a new name: DEAD, an rmdir committed.  Waits
 * until that rmdir is done (the directory freed: -ENOENT, after its name
 * went) or undone (0: try again), so that no one sees the name of a
 * directory that already refused a create.  -ENOENT as well when the
 * wait runs out.
 */
static int wait_dir_gone(struct daxfs_op *op, u64 dir, struct daxfs_inode *dp)
{
	struct waiter w = { 0 };
	struct daxfs_iref ref;
	int err;

	while (daxfs_load(&dp->aux) & DAXFS_DIR_DEAD) {
		if (daxfs_inode_get(op, dir, &ref) || ref.ip != dp)
			return -ENOENT;
		err = wait_rmdir(op, &w, dir);
		if (err)
			return err == -ESTALE || err == -EINTR ? err : -ENOENT;
	}
	return 0;
}

/* count+1 in dir for a new name, waiting out a half-done rmdir. */
static int count_add_live(struct daxfs_op *op, u64 dir, struct daxfs_inode *dp)
{
	int err;

	for (;;) {
		err = daxfs_dir_count_add(dp);	/* -ENOENT once rmdir'ed */
		if (err != -ENOENT)
			return err;
		err = wait_dir_gone(op, dir, dp);
		if (err)
			return err;
	}
}

/*
 * daxfs_dir_writable, but a directory DEAD and still named (a half-done
 * rmdir) is waited out rather than taken as gone at once.  The DEAD that
 * refused us may be gone by our second look: an rmdir that lost its leaf
 * to a rename undoes its mark (daxfs_rmdir).  The directory is then as
 * live as before, so we look again; it was ENOENT for a directory that
 * was named all along (lincheck, session 53: rmdir(c) answered ENOENT;
 * tests/race/test_dead_undone.c).  Every such retry needs another rmdir
 * to mark and unmark the directory, so a bound far above any real race
 * only guards against a record that refuses without DEAD (damage).
 */
static int dir_writable_live_fc(struct daxfs_op *op, u64 ino,
				struct daxfs_fcache *fc,
				struct daxfs_inode **dpp)
{
	struct daxfs_iref ref;
	u32 undone = 0;
	int err;

	for (;;) {
		err = fc ? daxfs_dir_writable_fc(op, ino, fc, dpp) :
			   daxfs_dir_writable(op, ino, dpp);
		if (err != -ENOENT || daxfs_inode_get(op, ino, &ref) || !ref.ip)
			return err;
		daxfs_race_point("dir.writable_refused", ref.ip);
		if (!(daxfs_load(&ref.ip->aux) & DAXFS_DIR_DEAD)) {
			if (++undone > NS_RETRIES)
				return err;
			continue;
		}
		err = wait_dir_gone(op, ino, ref.ip);
		if (err)
			return err;
	}
}

static int dir_writable_live(struct daxfs_op *op, u64 ino,
			     struct daxfs_inode **dpp)
{
	return dir_writable_live_fc(op, ino, NULL, dpp);
}

static int lookup_in(struct daxfs_op *op, u64 dir, const char *name, u32 len,
		     u64 *ino, u32 *type);

/*
 * Starts an operation that changes entry NAME of directory *DIR: the name
 * is valid, the op runs on a writable host and *dp is the directory's
 * record (copied up and imported).  On failure no op is left open.
 *
 * With pname, the directory is the entry pname of *dir, looked up inside
 * this op (a path's last two names in one op: daxfs_mknod_at), and *dir
 * becomes its inode; 0 when pname names no directory (none, a symlink,
 * another file: the caller resolves it itself) or could not be looked up
 * at all.  Nothing was changed then beyond what any lookup of pname does
 * (a big base directory imported for hashed lookups, dir_for_read): the
 * type is known from the dirent before the record is taken writable (a
 * copy-up of a base symlink or file).
 */
static int begin_entry_change_fc(struct daxfs_fs *fs, u64 *dir,
				 struct daxfs_fcache *dfc, const char *pname,
				 u32 plen, const char *name, u32 len,
				 struct daxfs_op *op, struct daxfs_inode **dp)
{
	u32 type = DAXFS_DT_DIR;
	u64 d = *dir;
	int err;

	if (pname)
		*dir = 0;
	err = daxfs_name_check(name, len);
	if (err)
		return err;
	err = daxfs_op_begin(fs, op);
	if (err)
		return err;
	err = writable(op) ? 0 : -EROFS;
	if (!err && pname)
		err = lookup_in(op, d, pname, plen, &d, &type);
	if (!err && type != DAXFS_DT_DIR)
		err = -ENOTDIR;
	if (err)
		goto out;
	/* dfc: the caller's cache of *dir's record, not of pname's */
	err = dir_writable_live_fc(op, d, pname ? NULL : dfc, dp);
	if (err != -ENOTDIR)
		*dir = d;	/* a directory, even if its record fails us */
	if (!err)
		return 0;
out:
	daxfs_op_end(op);
	return err;
}

static int begin_entry_change(struct daxfs_fs *fs, u64 *dir, const char *pname,
			      u32 plen, const char *name, u32 len,
			      struct daxfs_op *op, struct daxfs_inode **dp)
{
	return begin_entry_change_fc(fs, dir, NULL, pname, plen, name, len, op,
				     dp);
}

static u64 name_hash(struct daxfs_op *op, const char *name, u32 len)
{
	return daxfs_name_hash(op->fs, name, len);
}

/* Progress marks go to the lane that owns the intent: our own, or the
 * dead host's lane while recovering it (so that a recoverer dying too
 * leaves the marks for the next one). */
/* A mark in our own lane is a commit point: -ESTALE once we were declared
 * dead (the lane is recovery's, which decided from the marks it saw).
 * Marks in a dead lane (we recover it) are fenced by our recovery claim
 * only: once another survivor took the recovery over, the lane and its
 * marks are its own, or a new host's after the slot was joined. */
static int intent_step(struct daxfs_op *op, struct daxfs_lane *il, u32 kind,
		       u32 step, u32 fl)
{
	if (!il)
		return 0;
	if (il == op->lane ? daxfs_fenced(op) : daxfs_recovery_lost(op))
		return -ESTALE;
	daxfs_store(&il->intent.a[6], NS_META(kind, step, fl));
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(&il->intent, sizeof(il->intent));
	return 0;
}

/* Word i of our own intent, then the step mark, under one look at the
 * fence (intent_step's, on our lane): nothing but the two stores lies
 * between it and the mark. */
static int intent_arg_step(struct daxfs_op *op, u32 i, u64 v, u32 kind,
			   u32 step, u32 fl)
{
	int err;
	struct daxfs_intent *in = daxfs_intent_own(op, &err);

	if (!in)
		return err;
	daxfs_store(&in->a[i], v);
	daxfs_store(&in->a[6], NS_META(kind, step, fl));
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(in, sizeof(*in));
	return 0;
}

/*
 * Must op leave alone what an intent names?  A recovery op acts on the
 * dead op's behalf: only while its claim on the dead slot stands, as for
 * its marks (intent_step; its own liveness is not asked: while the claim
 * stands nobody else acts there).  Any other op: once fenced.  For the
 * acts that no mark can precede (docs/recovery.md "Acts of an overtaken
 * recoverer").
 */
static bool ns_fenced(struct daxfs_op *op)
{
	return op->rhost ? daxfs_recovery_lost(op) : daxfs_fenced(op);
}

/*
 * Forgets word i of a dead lane's intent, read as val, before the act it
 * names (the rename roll-back's frees of a3 and a5): by CAS, after a look
 * at our claim.  False, with nothing stored: val is 0, our claim was
 * overtaken (the one that took over forgets and acts; once it freed the
 * slot the lane may be a new host's, its words a live op's), or the word
 * holds something else (a second recoverer took it).  Of all recoverers,
 * overtaken or not, one at most takes a value, and only it acts.
 */
static bool intent_take(struct daxfs_op *op, struct daxfs_lane *il, u32 i,
			u64 val)
{
	if (!val || ns_fenced(op) || !daxfs_cas(&il->intent.a[i], &val, 0))
		return false;
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(&il->intent.a[i], sizeof(u64));
	return true;
}

/* Sets a[4..6] first: daxfs_intent_publish() stores the op code last, so
 * a recoverer never pairs it with a stale step word.  One look at the
 * fence for all eight stores: nothing but stores to our own lane lies
 * between it and the op code (docs/hosts.md "What is left"). */
static int intent_begin(struct daxfs_op *op, u64 a0, u64 a1, u64 a2, u64 a3,
			u64 a4, u64 a5, u64 meta)
{
	int err;
	struct daxfs_intent *in = daxfs_intent_own(op, &err);

	if (!in)
		return err;
	daxfs_store(&in->a[4], a4);
	daxfs_store(&in->a[5], a5);
	daxfs_store(&in->a[6], meta);
	daxfs_intent_publish(op, DAXFS_INTENT_RENAME, a0, a1, a2, a3);
	return 0;
}

/* ---- attributes ---- */

static void attr_fill(struct daxfs_fs *fs, const struct daxfs_iref *ref,
		      struct daxfs_attr *a)
{
	const struct daxfs_base_inode *bip = ref->bip;
	struct daxfs_inode *ip = ref->ip;

	memset(a, 0, sizeof(*a));
	a->ino = ref->ino;
	if (ip) {
		/*
		 * The counter first (an acquire): every change stores its
		 * fields and then moves it, so what follows is at least as
		 * new as the counter says.  Loaded last, a chmod landing in
		 * between paired the old mode with the new counter, and a
		 * front end trusting its cache by the counter kept the old
		 * mode for good (test_peek's test_race_attrs_by_counter).
		 */
		a->change = daxfs_load(&ip->change);
		a->mode = daxfs_load32(&ip->mode);
		a->uid = daxfs_load32(&ip->uid);
		a->gid = daxfs_load32(&ip->gid);
		a->nlink = daxfs_load32(&ip->nlink);
		a->size = daxfs_load(&ip->size);
		a->blocks = daxfs_load(&ip->blocks);
		a->atime_ns = (s64)daxfs_load((u64 *)&ip->atime_ns);
		a->mtime_ns = (s64)daxfs_load((u64 *)&ip->mtime_ns);
		a->ctime_ns = (s64)daxfs_load((u64 *)&ip->ctime_ns);
		/* a regular file's rdev word is its shrink count (core/file.c) */
		a->rdev = DAXFS_IS_REG(a->mode) ? 0 : daxfs_load(&ip->rdev);
		a->generation = daxfs_load32(&ip->generation);
		a->flags = daxfs_if_to_fl(daxfs_ip_attrs(ip));
		if (DAXFS_IS_DIR(a->mode))
			a->size = daxfs_load(&ip->aux) & DAXFS_DIR_COUNT_MASK;
		return;
	}
	a->mode = bip->mode;
	a->uid = bip->uid;
	a->gid = bip->gid;
	a->nlink = bip->nlink;
	a->size = DAXFS_IS_DIR(bip->mode) ? bip->count : bip->size;
	a->blocks = 0;		/* base data is not pool space */
	a->atime_ns = bip->mtime_ns;
	a->mtime_ns = bip->mtime_ns;
	a->ctime_ns = bip->mtime_ns;
	a->rdev = bip->rdev;
}

static int getattr_in(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		      struct daxfs_attr *attr)
{
	struct daxfs_iref ref;
	int err = daxfs_inode_get_fc(op, ino, fc, &ref);

	if (err)
		return err;
	/* a rewrite's mark: folded where we may store, so that the word we
	 * give moves at the next rewrite (docs/files.md "The change counter
	 * of a rewrite"); a read-only host gives it marked */
	if (ref.ip && op->lane && !(op->fs->flags & DAXFS_FS_RDONLY) &&
	    DAXFS_IS_REG(daxfs_load32(&ref.ip->mode)))
		daxfs_change_fold(op, ref.ip);
	return daxfs_iref_attr(op->fs, &ref, attr);
}

int daxfs_iref_attr(struct daxfs_fs *fs, const struct daxfs_iref *ref,
		    struct daxfs_attr *attr)
{
	attr_fill(fs, ref, attr);
	/* no file is larger than the format can address: a size above it is
	 * damage (a kernel's i_size would go negative), not a size */
	return attr->size > DAXFS_MAX_FILE_SIZE ? -EUCLEAN : 0;
}

int daxfs_getattr_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		     struct daxfs_attr *attr)
{
	struct daxfs_op op;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = getattr_in(&op, ino, fc, attr);
	daxfs_op_end(&op);
	return err;
}

int daxfs_getattr(struct daxfs_fs *fs, u64 ino, struct daxfs_attr *attr)
{
	return daxfs_getattr_fc(fs, ino, NULL, attr);
}

/* chattr (docs/attrs.md): an immutable inode takes an access time alone
 * (a read's), an append-only one keeps its mode and owners; sizes are
 * daxfs_truncate's to refuse */
static int setattr_attrs(struct daxfs_inode *ip, u32 valid)
{
	u32 a = daxfs_ip_attrs(ip);

	if ((a & DAXFS_IF_IMMUTABLE) && (valid & ~DAXFS_ATTR_ATIME))
		return -EPERM;
	if ((a & DAXFS_IF_APPEND) &&
	    (valid & (DAXFS_ATTR_MODE | DAXFS_ATTR_UID | DAXFS_ATTR_GID)))
		return -EPERM;
	return 0;
}

/*
 * A chown of a non-directory drops S_ISUID, and S_ISGID where group
 * execution is on (S_ISGID alone marks mandatory locking), as Linux's
 * chown_common does for every caller, root included, and whatever the
 * new ids: chown(f, -1, -1) too.  A caller that sets the mode in the same
 * call decides it (the VFS does, for daxfs.ko and FUSE).
 */
static void chown_kill_setid(struct daxfs_inode *ip)
{
	u32 m = daxfs_load32(&ip->mode), n;

	do {
		if (DAXFS_IS_DIR(m))
			return;
		n = m & ~DAXFS_S_ISUID;
		if ((m & (DAXFS_S_ISGID | DAXFS_S_IXGRP)) ==
		    (DAXFS_S_ISGID | DAXFS_S_IXGRP))
			n &= ~DAXFS_S_ISGID;
		if (n == m)
			return;
	} while (!daxfs_cas32(&ip->mode, &m, n));
}

int daxfs_setattr(struct daxfs_fs *fs, u64 ino, u32 valid,
		  const struct daxfs_attr *attr)
{
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct daxfs_op op;
	u32 m;
	int err;

	if (valid & DAXFS_ATTR_SIZE) {
		err = daxfs_op_begin(fs, &op);
		if (err)
			return err;
		err = daxfs_inode_get(&op, ino, &ref);
		if (!err) {
			m = daxfs_iref_mode(&ref);
			if (DAXFS_IS_DIR(m))
				err = -EISDIR;
			else if (!DAXFS_IS_REG(m))
				err = -EINVAL;
		}
		daxfs_op_end(&op);
		if (err)
			return err;
		err = daxfs_truncate(fs, ino, attr->size);
		if (err)
			return err;
		daxfs_race_point("setattr.sized", &ino);
	}
	if (!(valid & ~DAXFS_ATTR_SIZE))
		return 0;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = writable(&op) ? daxfs_inode_get_writable(&op, ino, &ip) : -EROFS;
	if (err == -ENOENT && (valid & DAXFS_ATTR_SIZE)) {
		/*
		 * The size changed, then the inode went (its last name
		 * removed, no open keeping it): the call took effect at its
		 * truncate, and the times and mode left have no one to see
		 * them.  -ENOENT here made a guest's truncate(2) report
		 * failure for a cut every host had seen (the whiteout
		 * lincheck, session 32; tests/race/test_setattr_removed.c).
		 */
		err = 0;
		goto out;
	}
	if (!err && daxfs_fenced(&op))
		err = -ESTALE;
	if (!err)
		err = setattr_attrs(ip, valid);
	if (err)
		goto out;
	if (valid & DAXFS_ATTR_MODE) {
		m = daxfs_load32(&ip->mode);
		while (!daxfs_cas32(&ip->mode, &m,
				    (m & DAXFS_S_IFMT) | (attr->mode & 07777)))
			;
	}
	if (valid & DAXFS_ATTR_UID)
		daxfs_store32(&ip->uid, attr->uid);
	if (valid & DAXFS_ATTR_GID)
		daxfs_store32(&ip->gid, attr->gid);
	if ((valid & (DAXFS_ATTR_UID | DAXFS_ATTR_GID | DAXFS_ATTR_CHOWN)) &&
	    !(valid & DAXFS_ATTR_MODE))
		chown_kill_setid(ip);
	if (valid & DAXFS_ATTR_ATIME)
		daxfs_store((u64 *)&ip->atime_ns, (u64)attr->atime_ns);
	if (valid & DAXFS_ATTR_MTIME)
		daxfs_store((u64 *)&ip->mtime_ns, (u64)attr->mtime_ns);
	if (valid & DAXFS_ATTR_CTIME) {
		daxfs_store((u64 *)&ip->ctime_ns, (u64)attr->ctime_ns);
		daxfs_faa(&ip->change, 1);
	} else if (valid != DAXFS_ATTR_ATIME) {
		/* an access time alone (a read under relatime) changes
		 * nothing a program checks: ctime and change stay */
		daxfs_inode_touch(ip, DAXFS_TOUCH_CTIME);
	}
	/* last, with the counter moved: caches of permission checks */
	if (valid & (DAXFS_ATTR_MODE | DAXFS_ATTR_UID | DAXFS_ATTR_GID |
		     DAXFS_ATTR_CHOWN))
		daxfs_attr_epoch_bump(fs);
out:
	daxfs_op_end(&op);
	return err;
}

/* ---- lookup ---- */

/* Resolves dir for reading; imports big pristine base dirs on writable
 * hosts so that lookups are hashed. */
static int dir_for_read(struct daxfs_op *op, u64 dir, struct daxfs_iref *ref)
{
	struct daxfs_inode *dp;
	int err;

	err = daxfs_inode_get(op, dir, ref);
	if (err)
		return err;
	if (!DAXFS_IS_DIR(daxfs_iref_mode(ref)))
		return -ENOTDIR;
	if (ref->bip && ref->bip->count > BASE_SCAN_MAX && writable(op) &&
	    !daxfs_dir_writable(op, dir, &dp)) {
		ref->ip = dp;
		ref->bip = NULL;
	}
	return 0;
}

/* name in the directory ref.  *type (may be NULL): the DT_* type the
 * dirent gives ("." and "..": a directory), for a caller about to take
 * the inode as a directory. */
static int lookup_ref(struct daxfs_op *op, const struct daxfs_iref *ref,
		      const char *name, u32 len, u64 *ino, u32 *type)
{
	struct daxfs_dent de;
	int err;

	if (type)
		*type = DAXFS_DT_DIR;
	if (len == 1 && name[0] == '.') {
		*ino = ref->ino;
		return 0;
	}
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		*ino = daxfs_iref_parent(ref);
		return 0;
	}
	err = daxfs_name_check(name, len);
	if (err)
		return err;
	err = daxfs_dir_find(op, ref, name, len, name_hash(op, name, len), &de);
	if (err)
		return err;
	*ino = de.ino;
	if (type)
		*type = de.type;
	return 0;
}

static int lookup_in(struct daxfs_op *op, u64 dir, const char *name, u32 len,
		     u64 *ino, u32 *type)
{
	struct daxfs_iref ref;
	int err;

	err = dir_for_read(op, dir, &ref);
	return err ? err : lookup_ref(op, &ref, name, len, ino, type);
}

/*
 * The attributes of *ino, which name in ref was found naming.  No such
 * inode: an unlink freed it after our look, or the entry names none.  An
 * unlink (rmdir, a rename's replaced target) takes the name out before it
 * frees the inode, so a look again that still finds the name naming *ino
 * proves damage: -EUCLEAN, which every later look would meet too.  (An
 * open(O_CREAT) of such a name, taken for the create and missing for the
 * open, went round forever in daxfs.ko: tests/vm/test_kernel_chaos.py.)
 */
static int named_attr(struct daxfs_op *op, const struct daxfs_iref *ref,
		      const char *name, u32 len, const u64 *ino,
		      struct daxfs_fcache *fc, struct daxfs_attr *attr)
{
	int err = getattr_in(op, *ino, fc, attr);
	u64 again;

	if (err != -ENOENT || daxfs_name_check(name, len))	/* "." or ".." */
		return err;
	daxfs_rmb();	/* the inode's absence before the name's look */
	if (lookup_ref(op, ref, name, len, &again, NULL) || again != *ino)
		return err;
	return -EUCLEAN;
}

int daxfs_lookup_attr(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		      u64 *ino, struct daxfs_attr *attr)
{
	return daxfs_lookup_attr_fc(fs, dir, name, len, ino, 0, NULL, attr,
				    NULL);
}

/* The change counter that vouches for a lookup's answer while it stands:
 * expect's when given (its record's, 0 if it has none), else dir's. */
static u64 vouching_change(struct daxfs_op *op, const struct daxfs_iref *dref,
			   u64 expect, struct daxfs_fcache *fc)
{
	struct daxfs_iref ref;

	if (!expect)
		return dref->ip ? daxfs_load(&dref->ip->change) : 0;
	if (daxfs_inode_get_fc(op, expect, fc, &ref) || !ref.ip)
		return 0;
	return daxfs_load(&ref.ip->change);
}

int daxfs_lookup_attr_fc(struct daxfs_fs *fs, u64 dir, const char *name,
			 u32 len, u64 *ino, u64 expect,
			 struct daxfs_fcache *fc, struct daxfs_attr *attr,
			 u64 *dir_change)
{
	struct daxfs_iref dref;
	struct daxfs_op op;
	int err;

	if (dir_change)
		*dir_change = 0;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = dir_for_read(&op, dir, &dref);
	/* before the name: every change of dir's entries moves dir's, and
	 * every removal of a name of expect moves expect's, after it is
	 * published (docs/kernel.md "Dentries") */
	if (!err && dir_change)
		*dir_change = vouching_change(&op, &dref, expect, fc);
	if (!err)
		err = lookup_ref(&op, &dref, name, len, ino, NULL);
	if (!err && attr)
		err = named_attr(&op, &dref, name, len, ino,
				 *ino == expect ? fc : NULL, attr);
	daxfs_op_end(&op);
	return err;
}

int daxfs_lookup_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		    const char *name, u32 len, u64 *pdir, u64 *ino,
		    struct daxfs_attr *attr)
{
	struct daxfs_iref ref;
	struct daxfs_op op;
	u64 d;
	int err;

	*pdir = 0;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	/* pname not found, or not a directory (a symlink to follow, or
	 * ENOTDIR): the caller's walk answers it, *pdir stays 0 */
	err = lookup_in(&op, dir, pname, plen, &d, NULL);
	if (!err)
		err = dir_for_read(&op, d, &ref);
	if (err)
		goto out;
	*pdir = d;
	err = lookup_ref(&op, &ref, name, len, ino, NULL);
	if (!err && attr)
		err = named_attr(&op, &ref, name, len, ino, NULL, attr);
out:
	daxfs_op_end(&op);
	return err;
}

int daxfs_lookup(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		 u64 *ino)
{
	return daxfs_lookup_attr(fs, dir, name, len, ino, NULL);
}

/* ---- create ---- */

struct create_args {
	u32 mode, uid, gid;
	u64 rdev;
	const char *target;	/* symlinks */
	u32 tlen;
};

/* What a link, a create or an unlink gives its caller (struct
 * daxfs_linked): vouch, the inode's counter that stands for its new name;
 * the attributes of both after the touches, as a refresh right after the
 * call would load them (ino 0: damaged, or no ip); dir_pre, the
 * directory's counter right before the call's touch of it. */
static void linked_fill(struct daxfs_fs *fs, struct daxfs_linked *out,
			u64 vouch, u64 ino, struct daxfs_inode *ip, u64 dir,
			struct daxfs_inode *dp, u64 dir_pre)
{
	struct daxfs_iref ref = { .ino = ino, .ip = ip };

	out->vouch = vouch;
	out->dir_pre = dir_pre;
	if (!ip || daxfs_iref_attr(fs, &ref, &out->inode))
		out->inode.ino = 0;
	ref = (struct daxfs_iref){ .ino = dir, .ip = dp };
	if (daxfs_iref_attr(fs, &ref, &out->dir))
		out->dir.ino = 0;
}

/* name in *dirp, or in the directory pname of *dirp (begin_entry_change);
 * *out (may be NULL) as struct daxfs_linked says */
static int ns_create(struct daxfs_fs *fs, u64 *dirp, const char *pname,
		     u32 plen, const char *name, u32 len,
		     const struct create_args *a, u64 *inop,
		     struct daxfs_linked *out)
{
	bool isdir = DAXFS_IS_DIR(a->mode);
	struct daxfs_inode *dp, *ip;
	struct daxfs_iref dref;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 hash, ino, leaf, dir, c0, dpre;
	u32 fl, mode, gid;
	int err;

	if (out)
		memset(out, 0, sizeof(*out));
	err = begin_entry_change(fs, dirp, pname, plen, name, len, &op, &dp);
	if (err)
		return err;
	dir = *dirp;
	hash = name_hash(&op, name, len);
	dref.ino = dir;
	dref.ip = dp;
	dref.bip = NULL;
	/* cheap early answer; the trie insert below decides for real.  It
	 * names the inode found, so that an open(O_CREAT) of an existing
	 * name needs no second lookup (daxfs_core.h).  Before the flags, as
	 * in Linux: an existing name is EEXIST (and O_CREAT opens it) even
	 * in an immutable directory */
	if (!daxfs_dir_find(&op, &dref, name, len, hash, &de)) {
		if (inop)
			*inop = de.ino;
		err = -EEXIST;
		goto out;
	}
	/* an append-only directory gains names, an immutable one none */
	err = daxfs_attrs_deny(dp, DAXFS_IF_IMMUTABLE);
	if (err)
		goto out;
	/* intent CREATE (docs/recovery.md): a dead creator's half-made
	 * inode is rolled back, not left to fsck.  Increments are marked
	 * after they act (a rollback undoes only what is marked). */
	fl = isdir ? NS_FL_DIR : 0;
	/* Fenced (-ESTALE from a mark or a publishing helper): we were
	 * declared dead and recovery rolled this op back or forward from
	 * the marks it saw; go straight to op_end, undo nothing. */
	err = intent_begin(&op, dir, 0, 0, 0, 0, 0, NS_META(NS_KIND_CREATE, 0, fl));
	if (err)
		goto out;
	err = count_add_live(&op, dir, dp);
	if (err)
		goto out_intent;
	err = intent_step(&op, op.lane, NS_KIND_CREATE, 1, fl);
	if (err)
		goto out;
	daxfs_crash_point("create.counted");
	if (isdir) {
		err = daxfs_nlink_inc(dp);	/* the child's ".." */
		if (err)
			goto out_count;
		err = intent_step(&op, op.lane, NS_KIND_CREATE, 2, fl);
		if (err)
			goto out;
	}
	mode = a->mode;
	gid = a->gid;
	daxfs_setgid_dir(daxfs_load32(&dp->mode), daxfs_load32(&dp->gid),
			 &mode, &gid);
	/* records ino, record and trie root in the intent (a1, a3, a4) */
	err = daxfs_inode_create(&op, mode, a->uid, gid, a->rdev,
				 isdir ? 2 : 1, dir, &ino, &ip);
	if (err)
		goto out_nlink;
	err = intent_step(&op, op.lane, NS_KIND_CREATE, 3, fl);
	if (err)
		goto out;
	daxfs_crash_point("create.inode_published");
	if (a->target) {
		err = daxfs_link_rec_store(&op, ip, a->target, a->tlen);
		if (err)
			goto out_inode;
	}
	leaf = daxfs_dirent_new(&op, name, len, hash, ino,
				daxfs_mode_dtype(a->mode), 0);
	if (!leaf) {
		err = -ENOSPC;
		goto out_inode;
	}
	err = intent_arg_step(&op, 2, leaf, NS_KIND_CREATE, 4, fl);
	if (err)
		goto out;
	daxfs_crash_point("create.before_link");
	/* the new inode's counter before its name is published: nothing
	 * after touches it, so this vouches for the name (docs/kernel.md
	 * "Dentries") */
	c0 = daxfs_load(&ip->change);
	dpre = daxfs_change_raise(&op, dp);
	/* step 5 (linking) is marked right before the CAS */
	err = daxfs_dir_link_marked(&op, dp, leaf,
				    NS_META(NS_KIND_CREATE, 5, fl));
	if (err) {
		if (daxfs_fenced(&op))
			goto stale;
		daxfs_change_settle(&op, dp);
		if (daxfs_dirent_free(&op, leaf, false))
			goto stale;
		goto out_inode;
	}
	err = intent_step(&op, op.lane, NS_KIND_CREATE, 6, fl);
	if (err)
		goto out;	/* linked: recovery found the leaf */
	daxfs_crash_point("create.linked");
	daxfs_inode_settle_at(&op, dp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME,
			      daxfs_now_ns());
	if (out)
		linked_fill(fs, out, c0, ino, ip, dir, dp, dpre);
	daxfs_intent_clear(&op);
	if (inop)
		*inop = ino;
	goto out;
	/* in-process failure: drop the intent first, so that a crash
	 * while undoing leaves counts high rather than undone twice.
	 * Fenced: recovery undid what the marks said; undo nothing. */
out_inode:
	if (daxfs_fenced(&op))
		goto stale;
	daxfs_intent_clear(&op);
	daxfs_store32(&ip->nlink, 0);
	daxfs_inode_free(&op, ip);
out_nlink:
	if (daxfs_fenced(&op))
		goto stale;
	daxfs_intent_clear(&op);
	if (isdir)
		daxfs_nlink_dec(dp, 2);
out_count:
	if (daxfs_fenced(&op))
		goto stale;
	daxfs_intent_clear(&op);
	daxfs_dir_count_sub(dp);
out_intent:
	daxfs_intent_clear(&op);
	goto out;
stale:
	err = -ESTALE;
out:
	daxfs_op_end(&op);
	return err;
}

/*
 * Recovery's check before it frees leaf off, which a dead op's intent
 * names as one it made for ino and never published, in none of the
 * directories d1, d2 (either may be NULL) the intent names.  The region
 * is untrusted: a garbled intent may name a live leaf, and freeing it
 * would hand it to the next name while a directory still links it.  A
 * true one is unmarked (a leaf ever published in a directory may carry
 * REMOVED; none but a held source carries LINKING), names ino, is in
 * neither directory and, if ino is a directory, not in its parent (its
 * one name); anything else is refused and left to fsck.  A few hash
 * probes.  Not told apart: another link of ino's, in a third directory.
 */
static bool leaf_unpublished(struct daxfs_op *op, u64 off, u64 ino,
			     struct daxfs_inode *d1, struct daxfs_inode *d2)
{
	struct daxfs_dirent *de = off ? daxfs_dirent_at(op->fs, off) : NULL;
	struct daxfs_iref ref, pref;
	u64 hash;

	if (!de || daxfs_load32(&de->removed) || daxfs_load(&de->ino) != ino)
		return false;
	hash = daxfs_load(&de->hash);
	if ((d1 && daxfs_dir_has_leaf(op, d1, hash, off)) ||
	    (d2 && daxfs_dir_has_leaf(op, d2, hash, off)))
		return false;
	if (ino && !daxfs_inode_get(op, ino, &ref) && ref.ip &&
	    DAXFS_IS_DIR(daxfs_load32(&ref.ip->mode)) &&
	    !daxfs_inode_get(op, daxfs_load(&ref.ip->parent), &pref) &&
	    pref.ip && daxfs_dir_has_leaf(op, pref.ip, hash, off))
		return false;
	return true;
}

/* Recovery of a host that died after nlink 0: free the inode unless open
 * somewhere, or finish its free if the dead op had claimed it; a
 * concurrent freer is harmless (daxfs_orphan_settle_dead). */
static void free_if_unlinked(struct daxfs_op *op, u64 ino)
{
	if (ino)
		daxfs_orphan_settle_dead(op, ino);
}

/* The trie root of an unpublished record a dead creator's intent names
 * (a4, 0 if not named yet): the record's own, of the type the intent
 * says; a mismatch is garbage. */
static bool create_root_ok(struct daxfs_inode *ip, u64 a4, u32 fl)
{
	bool dir = DAXFS_IS_DIR(daxfs_load32(&ip->mode));
	u64 root = daxfs_load(&ip->root);

	if (dir != !!(fl & NS_FL_DIR))
		return false;
	return dir ? !a4 || a4 == root : !a4 && !root;
}

/*
 * A dead creator: committed once the leaf is in the directory (step 6,
 * or found there); else roll back.  Step 5 (linking) with the leaf gone
 * is ambiguous (published, then renamed or unlinked by another host):
 * left to fsck, counts high, never low.
 *
 * The roll-back marks each undo in the dead lane before it acts (il: step
 * = what is left, flag UNDO), as unlink's roll-forward does: a recoverer
 * that dies in here (or before the lane's intent is cleared) leaves the
 * next one only what it did not start, so no count is lowered twice and
 * no record freed twice (docs/recovery.md, "A recoverer that dies").
 */
static void create_recover(struct daxfs_op *op, struct daxfs_lane *il,
			   const u64 *a, u32 step, u32 fl)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_dirent *lde;
	struct daxfs_inode *dp, *ip;
	bool undo = fl & NS_FL_UNDO;
	u64 val = 0;

	fl &= ~NS_FL_UNDO;
	if (step >= 6 || daxfs_inode_get_writable(op, a[0], &dp))
		return;
	if (!undo) {
		/* committed: the leaf there, or marked removed (published,
		 * then unlinked or renamed by another host: step 5 with the
		 * leaf absent, docs/recovery.md "Published or not") */
		lde = a[2] ? daxfs_dirent_at(fs, a[2]) : NULL;
		if (lde && daxfs_dir_published(op, dp, lde->hash, a[2]))
			return;
		if (step >= 4 && a[2]) {
			/* not the leaf the intent says: garbage, leave it
			 * all (fsck) rather than free what may be live */
			if (!leaf_unpublished(op, a[2], a[1], dp, NULL))
				return;
			if (intent_step(op, il, NS_KIND_CREATE, 3,
					fl | NS_FL_UNDO))
				return;	/* overtaken: the next recoverer redoes */
			/* never published; fenced (this recoverer was
			 * declared dead itself): stop, the next one redoes */
			if (daxfs_dirent_free(op, a[2], false))
				return;
		}
	}
	/* the inode: published (step 3 on, or in the overlay already) or
	 * only allocated (before step 3); undo at 3 was marked after step 4 */
	if (!undo || step >= 3) {
		bool early = !undo && step < 3;

		if (intent_step(op, il, NS_KIND_CREATE, step < 2 ? step : 2,
				fl | NS_FL_UNDO))
			return;
		if (a[1] && a[3] && !daxfs_ov_lookup(op, daxfs_key(DAXFS_KEY_INODE, a[1]), &val) &&
		    val == a[3] && (ip = daxfs_ptr(fs, a[3], sizeof(*ip), DAXFS_OFF_ALIGN))) {
			/* published but never named: nobody else can know it */
			daxfs_store32(&ip->nlink, 0);
			daxfs_inode_free(op, ip);
		} else if (early && a[3] &&
			   daxfs_inode_unpublished(op, a[3], a[1], &ip) &&
			   create_root_ok(ip, a[4], fl)) {
			/* allocated, not (or no longer pending) in the
			 * overlay, and the record the intent says (else
			 * garbage: left to fsck); a4 may not be named yet */
			u64 root = daxfs_load(&ip->root);

			if (daxfs_free_now(op, a[3], DAXFS_CLASS_128))
				return;
			if (root && daxfs_free_now(op, root, DAXFS_CLASS_512))
				return;
		}
		if (daxfs_fenced(op))
			return;		/* ip's drop was fenced part-way */
		if (step > 2)
			step = 2;
	}
	if ((fl & NS_FL_DIR) && step >= 2) {
		if (intent_step(op, il, NS_KIND_CREATE, 1, fl | NS_FL_UNDO))
			return;
		daxfs_nlink_dec(dp, 2);
	}
	if (step >= 1) {
		if (intent_step(op, il, NS_KIND_CREATE, 0, fl | NS_FL_UNDO))
			return;
		daxfs_dir_count_sub(dp);
	}
	daxfs_crash_point("create.undone");
}

/*
 * The arguments of a new node of mode's type: a directory, a symlink to
 * target, or any type daxfs_node_mode takes (regular by default).
 */
static int node_args(u32 mode, u32 uid, u32 gid, u64 rdev,
		     const char *target, u32 tlen, struct create_args *a)
{
	*a = (struct create_args){ .uid = uid, .gid = gid };
	if (DAXFS_IS_DIR(mode)) {
		a->mode = DAXFS_S_IFDIR | (mode & 07777);
		return 0;
	}
	if (DAXFS_IS_LNK(mode)) {
		if (tlen == 0)
			return -ENOENT;
		if (tlen > DAXFS_SYMLINK_MAX)
			return -ENAMETOOLONG;
		a->mode = DAXFS_S_IFLNK | 0777;
		a->target = target;
		a->tlen = tlen;
		return 0;
	}
	if (daxfs_node_mode(mode, &rdev, &a->mode))
		return -EINVAL;
	a->rdev = rdev;
	return 0;
}

int daxfs_make_node(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		    const struct daxfs_node *nd, u64 *ino,
		    struct daxfs_linked *out)
{
	struct create_args a;
	int err = node_args(nd->mode, nd->uid, nd->gid, nd->rdev, nd->target,
			    nd->tlen, &a);

	if (err && out)
		memset(out, 0, sizeof(*out));
	return err ? err : ns_create(fs, &dir, NULL, 0, name, len, &a, ino,
				     out);
}

/* types daxfs_mknod does not make: daxfs_mkdir's and daxfs_symlink's */
static bool dir_or_link(u32 mode)
{
	return DAXFS_IS_DIR(mode) || DAXFS_IS_LNK(mode);
}

int daxfs_mknod(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		u32 mode, u32 uid, u32 gid, u64 rdev, u64 *ino)
{
	const struct daxfs_node nd = {
		.mode = mode, .uid = uid, .gid = gid, .rdev = rdev,
	};

	if (dir_or_link(mode))
		return -EINVAL;
	return daxfs_make_node(fs, dir, name, len, &nd, ino, NULL);
}

int daxfs_mknod_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		   const char *name, u32 len, u32 mode, u32 uid, u32 gid,
		   u64 rdev, u64 *pdir, u64 *ino)
{
	struct create_args a;
	int err = dir_or_link(mode) ? -EINVAL :
		  node_args(mode, uid, gid, rdev, NULL, 0, &a);

	*pdir = err ? 0 : dir;
	return err ? err : ns_create(fs, pdir, pname, plen, name, len, &a, ino,
				     NULL);
}

int daxfs_mkdir(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		u32 mode, u32 uid, u32 gid, u64 *ino)
{
	const struct daxfs_node nd = {
		.mode = DAXFS_S_IFDIR | (mode & 07777), .uid = uid, .gid = gid,
	};

	return daxfs_make_node(fs, dir, name, len, &nd, ino, NULL);
}

int daxfs_symlink(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		  const char *target, u32 tlen, u32 uid, u32 gid, u64 *ino)
{
	const struct daxfs_node nd = {
		.mode = DAXFS_S_IFLNK, .uid = uid, .gid = gid,
		.target = target, .tlen = tlen,
	};

	return daxfs_make_node(fs, dir, name, len, &nd, ino, NULL);
}

/* ---- link / unlink ---- */

static int claim_take(struct daxfs_op *op, struct waiter *w);
static void claim_release(struct daxfs_op *op);

/* The name a link was asked to copy (link(2)'s oldpath): sdir/sname. */
struct link_src {
	u64 dir;
	const char *name;
	u32 len;
};

/*
 * Holds leaf de against removal until a new name for its inode is
 * published: LINKING in its removed word (docs/namespace.md, "Link
 * racing the removal of its source").  Only the rename claim's holder
 * (a link, or a rename up to its step 1) holds leaves.  Dekker with
 * mark_removed (core/dir.c): we set LINKING then read REMOVED.  False,
 * with the hold dropped, when a remover marked it first: the leaf is
 * gone, or going, and the caller gives way.
 */
static bool leaf_hold(struct daxfs_dirent *de)
{
	u32 v = daxfs_load32(&de->removed);

	while (!(v & DAXFS_DE_LINKING) &&
	       !daxfs_cas32(&de->removed, &v, v | DAXFS_DE_LINKING))
		;
	daxfs_fence();
	v = daxfs_load32(&de->removed);
	if (!(v & DAXFS_DE_REMOVED))
		return true;
	while ((v & DAXFS_DE_LINKING) &&
	       !daxfs_cas32(&de->removed, &v, v & ~DAXFS_DE_LINKING))
		;
	return false;
}

/*
 * Lets a held leaf go (also for a dead holder, from its intent).  Not
 * once fenced (ns_fenced): LINKING names no holder, so the hold we would
 * drop may be another's by now.  A fenced live op's hold is recovery's to
 * let go; an overtaken recoverer's was let go by the one that took over,
 * which then released the dead host's rename claim, so a live linker may
 * hold the same leaf since (docs/recovery.md "Acts of an overtaken
 * recoverer").  Checked before every CAS: no atomic step can compare the
 * claim and the leaf's word.
 */
static void leaf_unhold(struct daxfs_op *op, u64 leaf)
{
	struct daxfs_dirent *de = leaf ? daxfs_dirent_at(op->fs, leaf) : NULL;
	u32 v;

	if (!de)
		return;
	v = daxfs_load32(&de->removed);
	while ((v & DAXFS_DE_LINKING) && !ns_fenced(op) &&
	       !daxfs_cas32(&de->removed, &v, v & ~DAXFS_DE_LINKING))
		;
}

/*
 * After a failed leaf_hold on leaf off of dp: its remover is normally
 * between its mark and its CAS and done in a moment.  A leaf still there
 * after a while had its remover die or give up there: refresh it
 * (daxfs_dir_refresh_leaf), or the name could never be held again (a
 * link answered -ENOENT, a rename -EAGAIN, for a name that is there).
 */
static void leaf_give_way(struct daxfs_op *op, struct daxfs_inode *dp,
			  u64 hash, u64 off)
{
	u32 n;

	for (n = 1; n <= LEAF_WAIT_ROUNDS; n++) {
		if (!daxfs_dir_has_leaf(op, dp, hash, off))
			return;
		if (n & 15)
			daxfs_cpu_relax();
		else
			daxfs_yield();
	}
	daxfs_dir_refresh_leaf(op, dp, off);
}

/*
 * Finds src under the rename claim and holds its leaf (leaf_hold) until
 * our new name is published.  A leaf marked REMOVED but still found in
 * the directory has a remover between its mark and its CAS: let it go
 * and look again.  *ino: the inode src must name (else -ENOENT), or 0
 * for whichever it names; *held: the leaf.
 */
static int link_hold(struct daxfs_op *op, const struct link_src *src,
		     u64 *ino, u64 *held)
{
	struct waiter w = { 0 };
	struct daxfs_dirent *de;
	struct daxfs_iref ref;
	struct daxfs_inode *sdp;
	struct daxfs_dent d;
	u64 hash;
	int err;

	err = daxfs_name_check(src->name, src->len);
	if (!err)
		err = dir_writable_live(op, src->dir, &sdp);	/* leaves */
	if (err)
		return err;
	hash = name_hash(op, src->name, src->len);
	ref = (struct daxfs_iref){ .ino = src->dir, .ip = sdp };
	for (;;) {
		err = daxfs_dir_find(op, &ref, src->name, src->len, hash, &d);
		if (err)
			return err;
		if ((*ino && d.ino != *ino) || !d.leaf)
			return -ENOENT;	/* the name went to another inode */
		if (d.type == DAXFS_DT_DIR)
			return -EPERM;
		de = daxfs_dirent_at(op->fs, d.leaf);
		if (!de)
			return -EUCLEAN;
		if (leaf_hold(de)) {
			*ino = d.ino;
			*held = d.leaf;
			return 0;
		}
		/* a remover got in first: give way, then look again */
		leaf_give_way(op, sdp, hash, d.leaf);
		if (!wait_more(op, &w))
			return -ENOENT;	/* a remover died between mark and CAS */
	}
}

/*
 * The waiting side of link_hold, for a remover that marked a leaf: the
 * holder is the rename claim's holder (LINKING is only set under it), so
 * wait while that host is ALIVE.  Once it is declared dead it is fenced:
 * it publishes nothing more, so its hold means nothing (its recovery
 * lets the leaf go).  A LINKING found while the claim is free or held by
 * this very op (a renamer, or the link itself copying a chain) is stale.
 * Held by another thread of our host (the claim word names only the
 * host): that thread is live, wait for it (it took LINKING as stale and
 * removed the leaf under a link in flight, docs/namespace.md "Threads of
 * one host").  No bound while the holder lives: a live link finishes, a
 * stopped one expires.
 */
int daxfs_link_hold_wait(struct daxfs_op *op, u32 *removed)
{
	struct daxfs_fs *fs = op->fs;
	u64 cur, gen;
	u32 slot, n = 0;

	while (daxfs_load32(removed) & DAXFS_DE_LINKING) {
		if (daxfs_fenced(op))
			return -ESTALE;
		cur = daxfs_load(daxfs_state_word(fs, rename_claim));
		slot = daxfs_claim_slot(cur);
		gen = daxfs_claim_gen(cur);
		if (!cur || slot >= fs->sb.max_hosts)
			return 0;
		if (cur == daxfs_my_claim(fs)) {
			if (op->has_claim)
				return 0;
			daxfs_yield();	/* another thread of ours links */
			continue;
		}
		if (daxfs_load(&daxfs_host_at(fs, slot)->state) !=
		    daxfs_host_word(gen, DAXFS_HOST_ALIVE))
			return 0;	/* declared dead: fenced */
		if (!daxfs_host_alive(fs, slot, gen)) {
			daxfs_host_check_dead(op, slot);
			continue;
		}
		if (++n & 15)
			daxfs_cpu_relax();
		else
			daxfs_yield();
	}
	return 0;
}

/* how ns_link names an inode: one with names, or our held unnamed one */
#define LINK_NAMED	0
#define LINK_UNNAMED	1	/* linkat(2) of an O_TMPFILE */
#define LINK_CREATED	2	/* open(O_CREAT) made it a moment ago */

/*
 * link(2).  Under the rename claim, so that a rename replacing or moving
 * the inode runs entirely before or after us (its target's link count
 * drops only at its step 5: a link in between would name an inode with no
 * name left).  With src, the source is looked up under the claim and its
 * leaf held against unlink too: the new name is published while the
 * source name still names the inode, or the link fails with -ENOENT once
 * that name is gone.
 */
static int link_in(struct daxfs_op *op, const struct link_src *src, u64 ino,
		   struct daxfs_inode *made, u64 dir, struct daxfs_inode *dp,
		   const char *name, u32 len, unsigned int how,
		   struct daxfs_linked *out)
{
	struct daxfs_fs *fs = op->fs;
	/* made: ino's record when this op made it (daxfs_create_held) */
	struct daxfs_inode *ip = made;
	struct daxfs_iref dref;
	struct daxfs_dent de;
	struct waiter w = { 0, 0 };
	u64 hash, leaf = 0, held = 0, c0 = 0, dpre;
	s64 now;
	u32 mode;
	int err;

	err = daxfs_attrs_deny(dp, DAXFS_IF_IMMUTABLE);
	if (err)
		return err;
	daxfs_crash_point("link.begin");
	hash = name_hash(op, name, len);
	dref = (struct daxfs_iref){ .ino = dir, .ip = dp };
	err = claim_take(op, &w);
	if (err)
		return err;
	/* a crash from the hold to the intent leaves LINKING without a
	 * record: stale once we are declared dead (the claim names us) */
	if (src) {
		err = link_hold(op, src, &ino, &held);
		if (err)
			goto out_claim;
	}
	/* a record made in this op (daxfs_create_held) is its own */
	err = ip ? 0 : daxfs_inode_get_writable(op, ino, &ip);
	if (err)
		goto out_unhold;
	mode = daxfs_load32(&ip->mode);
	/* no new name for an immutable or append-only inode (may_linkat) */
	if (DAXFS_IS_DIR(mode) || daxfs_attrs_deny(ip, DAXFS_IF_LOCKED)) {
		err = -EPERM;
		goto out_unhold;
	}
	/* the new name taken: -EEXIST at a moment the source (held) is
	 * there too, as Linux (source first, then the new name); the
	 * publish below decides for real */
	if (!daxfs_dir_find(op, &dref, name, len, hash, &de)) {
		err = -EEXIST;
		goto out_unhold;
	}
	leaf = daxfs_dirent_new(op, name, len, hash, ino, daxfs_mode_dtype(mode), 0);
	if (!leaf) {
		err = -ENOSPC;
		goto out_unhold;
	}
	/* intent LINK: increments marked after they act (docs/recovery.md);
	 * fenced (-ESTALE): recovery owns the rest, undo nothing */
	err = intent_begin(op, dir, ino, leaf, held, 0, 0, NS_META(NS_KIND_LINK, 0, 0));
	if (err)
		goto out_claim;
	daxfs_crash_point("link.held");
	daxfs_race_point("link.held", held ? daxfs_dirent_at(fs, held) : NULL);
	err = count_add_live(op, dir, dp);
	if (err)
		goto out_leaf;
	err = intent_step(op, op->lane, NS_KIND_LINK, 1, 0);
	if (err)
		goto out_claim;
	daxfs_crash_point("link.counted");
	/* before the name exists; an unnamed file of ours may have none */
	err = how == LINK_NAMED ? daxfs_nlink_inc(ip) : daxfs_nlink_revive(op, ip);
	if (err)
		goto out_count;
	err = intent_step(op, op->lane, NS_KIND_LINK, 2, 0);
	if (err)
		goto out_claim;
	daxfs_crash_point("link.nlink_raised");
	/* the inode's counter before its new name is published: with our
	 * one touch after it, what vouches for the name (daxfs_link_created) */
	c0 = daxfs_load(&ip->change);
	dpre = daxfs_change_raise(op, dp);
	/* step 3 (linking) is marked right before the CAS */
	err = daxfs_dir_link_marked(op, dp, leaf, NS_META(NS_KIND_LINK, 3, 0));
	if (err) {
		if (daxfs_fenced(op))
			goto stale;
		daxfs_change_settle(op, dp);
		daxfs_intent_clear(op);
		/* our +1 may be the last link by now (every name was
		 * unlinked meanwhile): then this frees the inode */
		daxfs_inode_put_link(op, ip);
		goto out_count;
	}
	err = intent_step(op, op->lane, NS_KIND_LINK, 4, 0);
	if (err)
		goto out_claim;
	daxfs_crash_point("link.published");
	/* one instant for both; a create's file was made now, as far as
	 * anyone can tell (its first name is its birth: open(O_CREAT)).  A
	 * record made in this op, moments ago and seen by nobody since,
	 * holds that instant already (daxfs_inode_create): no clock read */
	now = made ? (s64)daxfs_load((u64 *)&made->ctime_ns) : daxfs_now_ns();
	daxfs_inode_touch_at(ip, how == LINK_CREATED ? DAXFS_TOUCH_ALL :
			     DAXFS_TOUCH_CTIME, now);
	daxfs_inode_settle_at(op, dp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME, now);
	if (out)
		linked_fill(fs, out, c0 + 1, ino, ip, dir, dp, dpre);
	leaf_unhold(op, held);
	daxfs_intent_clear(op);
	goto out_claim;
out_count:
	if (daxfs_fenced(op))
		goto stale;
	daxfs_intent_clear(op);
	daxfs_dir_count_sub(dp);
out_leaf:
	if (daxfs_fenced(op))
		goto stale;
	daxfs_intent_clear(op);
	if (daxfs_dirent_free(op, leaf, false))
		goto stale;
out_unhold:
	leaf_unhold(op, held);
	goto out_claim;
stale:
	err = -ESTALE;
out_claim:
	/* fenced: the claim (and the hold) are recovery's to let go */
	if (!daxfs_fenced(op))
		claim_release(op);
	return err;
}

static int ns_link(struct daxfs_fs *fs, const struct link_src *src, u64 ino,
		   u64 dir, const char *name, u32 len, unsigned int how,
		   struct daxfs_linked *out)
{
	struct daxfs_inode *dp;
	struct daxfs_op op;
	int err;

	if (out)
		memset(out, 0, sizeof(*out));
	err = begin_entry_change(fs, &dir, NULL, 0, name, len, &op, &dp);
	if (err)
		return err;
	err = link_in(&op, src, ino, NULL, dir, dp, name, len, how, out);
	daxfs_op_end(&op);
	return err;
}


int daxfs_link(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
	       u32 len)
{
	return ns_link(fs, NULL, ino, dir, name, len, LINK_NAMED, NULL);
}

int daxfs_link_unnamed(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
		       u32 len)
{
	return ns_link(fs, NULL, ino, dir, name, len, LINK_UNNAMED, NULL);
}

int daxfs_link_created(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
		       u32 len, struct daxfs_linked *out)
{
	return ns_link(fs, NULL, ino, dir, name, len, LINK_CREATED, out);
}

/*
 * daxfs_tmpfile_attr and daxfs_link_created in one op: the same two
 * protocols, one after the other, with the same intents and marks in the
 * same order (docs/open-files.md "Unnamed files"), so a crash anywhere
 * leaves what one of the two calls would.  What the second call did again
 * is done once: the op's begin and end, the directory's lookup (the
 * link's writable record also gives the tmpfile its setgid), and the new
 * record's (made in this op, held by our entry: nobody frees it); and the
 * file's attributes are loaded once, after its naming (out->inode).
 */
int daxfs_create_held(struct daxfs_fs *fs, u64 dir, struct daxfs_fcache *dfc,
		      u32 mode, u32 uid, u32 gid, const char *name, u32 len,
		      u64 *ino, struct daxfs_linked *out)
{
	struct daxfs_inode *dp, *ip;
	struct daxfs_op op;
	int err;

	*ino = 0;
	if (out)
		memset(out, 0, sizeof(*out));
	err = begin_entry_change_fc(fs, &dir, dfc, NULL, 0, name, len, &op,
				    &dp);
	if (err)
		return err;
	/* the attributes as made are not loaded: the link's are the file's */
	err = daxfs_tmpfile_in(&op, dir, dp, mode, uid, gid, ino, &ip, NULL);
	if (err)
		*ino = 0;	/* fenced after it was held: recovery's */
	else
		err = link_in(&op, NULL, *ino, ip, dir, dp, name, len,
			      LINK_CREATED, out);
	daxfs_op_end(&op);
	return err;
}

int daxfs_link_name(struct daxfs_fs *fs, u64 sdir, const char *sname,
		    u32 slen, u64 ino, u64 dir, const char *name, u32 len)
{
	struct link_src src = { .dir = sdir, .name = sname, .len = slen };

	return ns_link(fs, &src, ino, dir, name, len, LINK_NAMED, NULL);
}

/*
 * name in *dirp, or in the directory pname of *dirp (begin_entry_change).
 * *out (may be NULL): the directory's attributes after our touch, and the
 * inode's when links are left to it (else its ino 0: gone, or an orphan
 * now, which a front end asks about); no vouch.
 */
/* A front end's caches of the records an unlink uses (daxfs_unlink_fc) */
struct unlink_caches {
	struct daxfs_fcache *dfc;	/* the directory's */
	u64 ino;			/* the inode it believes the name names */
	struct daxfs_fcache *fc;	/* and that one's */
};

static int ns_unlink(struct daxfs_fs *fs, u64 *dirp, const char *pname,
		     u32 plen, const char *name, u32 len,
		     const struct unlink_caches *uc, struct daxfs_linked *out)
{
	struct daxfs_retire_later later daxfs_noinit;	/* n set at use */
	struct daxfs_inode *dp;
	struct daxfs_iref dref;
	struct daxfs_dent de;
	struct daxfs_op op;
	struct daxfs_iref cref;
	u64 hash, dir, dpre = 0;
	u32 tries;
	bool found;
	int err, left = -1;
	s64 now;

	if (out)
		memset(out, 0, sizeof(*out));
	err = begin_entry_change_fc(fs, dirp, uc ? uc->dfc : NULL, pname, plen,
				    name, len, &op, &dp);
	if (err)
		return err;
	dir = *dirp;
	/* no name leaves an immutable or append-only directory */
	err = daxfs_attrs_deny(dp, DAXFS_IF_LOCKED);
	if (err)
		goto out;
	hash = name_hash(&op, name, len);
	dref = (struct daxfs_iref){ .ino = dir, .ip = dp };
	for (tries = 0; tries < NS_RETRIES; tries++) {
		err = daxfs_dir_find(&op, &dref, name, len, hash, &de);
		if (err)
			goto out;
		/* nor the name of such an inode (may_delete): its record is
		 * read once, for that, for its type and for its link count */
		found = !daxfs_inode_get_fc(&op, de.ino,
					    uc && de.ino == uc->ino ? uc->fc :
					    NULL, &cref);
		if (!found)
			cref.ip = NULL;
		if (daxfs_attrs_deny(cref.ip, DAXFS_IF_LOCKED)) {
			err = -EPERM;
			goto out;
		}
		if (de.type == DAXFS_DT_DIR ||
		    (found && DAXFS_IS_DIR(daxfs_iref_mode(&cref)))) {
			err = -EISDIR;
			goto out;
		}
		if (!de.leaf) {
			err = -EUCLEAN;
			goto out;
		}
		/* intent UNLINK: decrements marked before they act; each
		 * mark is fenced (-ESTALE: recovery rolls forward) */
		err = intent_begin(&op, dir, de.ino, de.leaf, 0, 0, 0,
				   NS_META(NS_KIND_UNLINK, 1, 0));
		if (err)
			goto out;
		dpre = daxfs_change_raise(&op, dp);
		daxfs_change_raise(&op, cref.ip);
		later.n = 0;
		op.later = &later;
		err = daxfs_dir_remove_dent(&op, dp, &de);
		if (err) {
			op.later = NULL;	/* nothing removed */
			if (daxfs_fenced(&op)) {
				err = -ESTALE;
				goto out;
			}
			daxfs_change_settle(&op, dp);
			daxfs_change_settle(&op, cref.ip);
			daxfs_intent_clear(&op);
			if (err == -ENOENT)
				continue;	/* the name changed: look again */
			goto out;
		}
		err = intent_step(&op, op.lane, NS_KIND_UNLINK, 2, 0);
		daxfs_dir_retire_later(&op);	/* ours now (step 2) */
		if (err)
			goto out;
		daxfs_crash_point("unlink.removed");
		err = intent_step(&op, op.lane, NS_KIND_UNLINK, 3, 0);
		if (err)
			goto out;
		daxfs_dir_count_sub(dp);
		daxfs_crash_point("unlink.counted");
		/* one instant for the directory and the file, as a link's */
		now = daxfs_now_ns();
		daxfs_inode_settle_at(&op, dp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME,
				      now);
		daxfs_change_settle(&op, cref.ip);
		err = intent_step(&op, op.lane, NS_KIND_UNLINK, 4, 0);
		if (err)
			goto out;
		/* the record read above, if any: an inode's record is never
		 * replaced in this op, only freed (nlink 0: nothing to drop),
		 * so it is the one daxfs_inode_unlinked would look up again */
		if (cref.ip)
			left = daxfs_inode_put_link_at(&op, cref.ip, now);
		else
			daxfs_inode_unlinked(&op, de.ino);
		err = intent_step(&op, op.lane, NS_KIND_UNLINK, 5, 0);
		if (err)
			goto out;
		daxfs_crash_point("unlink.freed");
		if (out) {
			/* a record with links left is not freed in our op */
			linked_fill(fs, out, 0, left > 0 ? de.ino : 0,
				    left > 0 ? cref.ip : NULL, dir, dp, dpre);
			/* the last link, and the free claimed already (by our
			 * settle, or another host's): nobody holds it open.
			 * The record, retired at most, is ours to read until
			 * the op ends. */
			out->gone = !left && !(daxfs_load32(&cref.ip->flags) &
					       DAXFS_IF_ORPHAN);
		}
		daxfs_intent_clear(&op);
		goto out;
	}
	err = -EAGAIN;
out:
	daxfs_op_end(&op);
	return err;
}

int daxfs_unlink(struct daxfs_fs *fs, u64 dir, const char *name, u32 len)
{
	return ns_unlink(fs, &dir, NULL, 0, name, len, NULL, NULL);
}

int daxfs_unlink_attr(struct daxfs_fs *fs, u64 dir, const char *name,
		      u32 len, struct daxfs_linked *out)
{
	return ns_unlink(fs, &dir, NULL, 0, name, len, NULL, out);
}

int daxfs_unlink_fc(struct daxfs_fs *fs, u64 dir, struct daxfs_fcache *dfc,
		    const char *name, u32 len, u64 ino, struct daxfs_fcache *fc,
		    struct daxfs_linked *out)
{
	const struct unlink_caches uc = { .dfc = dfc, .ino = ino, .fc = fc };

	return ns_unlink(fs, &dir, NULL, 0, name, len, &uc, out);
}

int daxfs_unlink_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		    const char *name, u32 len, u64 *pdir)
{
	*pdir = dir;
	return ns_unlink(fs, pdir, pname, plen, name, len, NULL, NULL);
}

/* A dead linker: committed once the leaf is in the directory, or marked
 * removed (published, then unlinked); else, step 3 (linking) included,
 * roll back what is marked.  Each undo is marked in the dead lane
 * before it acts (UNDO, step = what is left), as create_recover does: a
 * repeat after a dying recoverer never drops the link count twice. */
static void link_recover(struct daxfs_op *op, struct daxfs_lane *il,
			 const u64 *a, u32 step, u32 fl)
{
	struct daxfs_dirent *lde;
	struct daxfs_inode *dp;

	leaf_unhold(op, a[3]);	/* the source leaf it held */
	if (step >= 4 || daxfs_inode_get_writable(op, a[0], &dp))
		return;
	if (!(fl & NS_FL_UNDO)) {
		/* committed: there, or marked removed (step 3 with the
		 * leaf absent: published, then unlinked) */
		lde = daxfs_dirent_at(op->fs, a[2]);
		if (lde && daxfs_dir_published(op, dp, lde->hash, a[2]))
			return;
		/* not the leaf the intent says: garbage, leave it all */
		if (!leaf_unpublished(op, a[2], a[1], dp, NULL))
			return;
		if (intent_step(op, il, NS_KIND_LINK, step, NS_FL_UNDO))
			return;	/* overtaken: the next recoverer redoes */
		if (daxfs_dirent_free(op, a[2], false))
			return;		/* fenced recoverer: the next redoes */
	}
	if (step >= 2) {
		if (intent_step(op, il, NS_KIND_LINK, 1, NS_FL_UNDO))
			return;
		daxfs_inode_unlinked(op, a[1]);	/* ours: frees at 0 */
	}
	if (step >= 1) {
		if (intent_step(op, il, NS_KIND_LINK, 0, NS_FL_UNDO))
			return;
		daxfs_dir_count_sub(dp);
	}
	daxfs_crash_point("link.undone");
}

/* A dead unlinker: the name is gone from step 2 on, so roll forward
 * (each step marked in the dead lane before it acts); step 1 means the
 * leaf may or may not have been removed by us: still there = nothing
 * happened; gone = ambiguous (someone else may have), left high. */
static void unlink_recover(struct daxfs_op *op, struct daxfs_lane *il,
			   const u64 *a, u32 step)
{
	struct daxfs_inode *dp;

	if (daxfs_inode_get_writable(op, a[0], &dp))
		return;
	if (step <= 1)
		return;
	if (step == 2) {
		if (intent_step(op, il, NS_KIND_UNLINK, 3, 0))
			return;	/* overtaken: the next recoverer redoes */
		daxfs_dir_count_sub(dp);
		step = 3;
	}
	if (step == 3) {
		if (intent_step(op, il, NS_KIND_UNLINK, 4, 0))
			return;
		daxfs_inode_unlinked(op, a[1]);
	} else if (step == 4) {
		free_if_unlinked(op, a[1]);	/* dropped to 0, not freed */
	}
	intent_step(op, il, NS_KIND_UNLINK, 5, 0);
}

/* ---- rename claim ---- */

/* w: the caller's waiter, so that the claim and what the caller waits
 * for after it share one bound (a few leases in all, not each). */
static int claim_get(struct daxfs_op *op, struct waiter *w)
{
	struct daxfs_fs *fs = op->fs;
	u64 *word = daxfs_state_word(fs, rename_claim);
	u64 mine = daxfs_my_claim(fs), cur, hw;
	u32 slot;

	do {
		if (daxfs_fenced(op))
			return -ESTALE;
		cur = 0;
		if (daxfs_cas(word, &cur, mine))
			return 0;
		slot = daxfs_claim_slot(cur);
		if (slot >= fs->sb.max_hosts) {
			/* garbage: nobody can own it */
			if (daxfs_cas(word, &cur, mine))
				return 0;
			continue;
		}
		if (daxfs_host_alive(fs, slot, daxfs_claim_gen(cur)))
			continue;
		hw = daxfs_load(&daxfs_host_at(fs, slot)->state);
		/* no wait for a recovery another survivor runs: this
		 * loop looks again, within its own bound (wait_more) */
		if (daxfs_host_gen(hw) != daxfs_claim_gen(cur) ||
		    daxfs_host_st(hw) == DAXFS_HOST_FREE ||
		    daxfs_host_try_dead(op, slot) == 1) {
			/* holder gone and recovered: take over */
			if (daxfs_cas(word, &cur, mine))
				return 0;
		}
	} while (wait_more(op, w));
	return -EBUSY;
}

/* The claim word names our host, not this op: the op remembers that it is
 * the holder (daxfs_link_hold_wait tells it from our other threads). */
static int claim_take(struct daxfs_op *op, struct waiter *w)
{
	int err = claim_get(op, w);

	op->has_claim = !err;
	return err;
}

static void claim_release(struct daxfs_op *op)
{
	u64 mine = daxfs_my_claim(op->fs);

	op->has_claim = false;
	daxfs_cas(daxfs_state_word(op->fs, rename_claim), &mine, 0);
}

static void clear_bits(struct daxfs_op *op, struct daxfs_inode *ip, u64 bits);

/* Waits while a rename holds dp MOVING; the holder's death is handled
 * by declaring it dead (its recovery clears the bit). */
static int wait_not_moving(struct daxfs_op *op, struct daxfs_inode *dp,
			   u64 *v, struct waiter *w)
{
	u64 cur;
	u32 slot;

	cur = daxfs_load(daxfs_state_word(op->fs, rename_claim));
	slot = daxfs_claim_slot(cur);
	if (cur && slot < op->fs->sb.max_hosts && slot != op->fs->host &&
	    !daxfs_host_alive(op->fs, slot, daxfs_claim_gen(cur)))
		daxfs_host_try_dead(op, slot);	/* our caller loops */
	cur = daxfs_load(daxfs_state_word(op->fs, rename_claim));
	slot = daxfs_claim_slot(cur);
	if (!cur || slot >= op->fs->sb.max_hosts ||
	    !daxfs_host_alive(op->fs, slot, daxfs_claim_gen(cur))) {
		/* No live renamer: a MOVING bit is only set under the rename
		 * claim, so holding the claim ourselves proves it stale
		 * (damage, or a rename whose recovery could not run). */
		if (!claim_take(op, w)) {
			clear_bits(op, dp, DAXFS_DIR_MOVING);
			claim_release(op);
			*v = daxfs_load(&dp->aux);
			return 0;
		}
	}
	if (!wait_more(op, w))
		return -EBUSY;
	*v = daxfs_load(&dp->aux);
	return 0;
}

/* ---- rmdir ---- */

/* Steps after the directory is DEAD (ours) and its name is removed. */
/*
 * A directory whose free a dead host's step marked as done (rmdir's step
 * 5, a rename's step 5 over a directory): it may have died inside the
 * free (the record at nlink 0 is hidden from lookups); each piece of the
 * free goes to the one CAS that wins it, so finishing it is safe
 * (daxfs_orphan_settle_dead).  Only a directory still DEAD: a number
 * freed and used again is a live directory.  rmdir marks step 5, then
 * stores nlink 0: a DEAD directory without MOVING is only ever an
 * rmdir's, and only one rmdir wins the mark (rmdir_recover), so one still
 * at 2 is the dead rmdir's, its store not made yet (before session 59 it
 * was left named nowhere at nlink 2, for fsck).  A rename's target may
 * still be at 2 (the mark comes first, then the parent's count, then
 * nlink 0); its DEAD|MOVING is the dead rename's own pin, set under the
 * rename claim that the dead host holds until its slot is done.  Either
 * store of 0 is ours to redo, while our claim on the slot stands.
 */
static void dir_free_dead(struct daxfs_op *op, u64 ino, bool renamed)
{
	struct daxfs_inode *cp;
	u64 aux;

	if (daxfs_inode_get_dying(op, ino, &cp) ||
	    !DAXFS_IS_DIR(daxfs_load32(&cp->mode)))
		return;
	aux = daxfs_load(&cp->aux);
	if (!(aux & DAXFS_DIR_DEAD))
		return;
	if (renamed == !!(aux & DAXFS_DIR_MOVING) && daxfs_load32(&cp->nlink)) {
		if (ns_fenced(op))
			return;
		daxfs_store32(&cp->nlink, 0);
	}
	if (!daxfs_load32(&cp->nlink))
		daxfs_inode_free(op, cp);
}

static void rmdir_finish(struct daxfs_op *op, struct daxfs_lane *il,
			 struct daxfs_inode *dp, struct daxfs_inode *cp, u32 from)
{
	if (from <= 3) {
		if (intent_step(op, il, NS_KIND_RMDIR, 3, 0))
			return;		/* fenced */
		daxfs_dir_count_sub(dp);
	}
	if (from <= 4) {
		if (intent_step(op, il, NS_KIND_RMDIR, 4, 0))
			return;
		daxfs_nlink_dec(dp, 2);
		daxfs_inode_touch(dp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
	}
	if (from <= 5) {
		if (intent_step(op, il, NS_KIND_RMDIR, 5, 0))
			return;
		daxfs_store32(&cp->nlink, 0);
		daxfs_inode_free(op, cp);
	}
}

/* Our DEAD mark on cp (aux was v before it) goes: the name we marked
 * for moved; the caller looks again. */
static void rmdir_undo_dead(struct daxfs_op *op, struct daxfs_inode *cp, u64 v)
{
	v |= DAXFS_DIR_DEAD;
	daxfs_cas(&cp->aux, &v, v & ~DAXFS_DIR_DEAD);
	daxfs_intent_clear(op);
}

int daxfs_rmdir(struct daxfs_fs *fs, u64 dir, const char *name, u32 len)
{
	struct daxfs_retire_later later daxfs_noinit;	/* n set at use */
	struct daxfs_inode *dp, *cp;
	struct daxfs_iref dref;
	struct daxfs_dent de;
	struct waiter w = { 0 }, wd = { 0 };
	struct daxfs_op op;
	bool other;
	u64 hash, v;
	u32 tries;
	int err;

	err = begin_entry_change(fs, &dir, NULL, 0, name, len, &op, &dp);
	if (err)
		return err;
	err = daxfs_attrs_deny(dp, DAXFS_IF_LOCKED);
	if (err)
		goto out;
	hash = name_hash(&op, name, len);
	dref = (struct daxfs_iref){ .ino = dir, .ip = dp };
	for (tries = 0; tries < NS_RETRIES;) {
		err = daxfs_dir_find(&op, &dref, name, len, hash, &de);
		if (err)
			goto out;
		if (de.type != DAXFS_DT_DIR) {
			err = -ENOTDIR;
			goto out;
		}
		/* imports a base child: its count must be real */
		err = dir_writable_live(&op, de.ino, &cp);
		if (!err)
			err = daxfs_attrs_deny(cp, DAXFS_IF_LOCKED);
		if (err)
			goto out;
		err = intent_begin(&op, dir, de.ino, de.leaf, 0, 0, 0,
				   NS_META(NS_KIND_RMDIR, 0, 0));
		if (err)
			goto out;
		daxfs_crash_point("rmdir.found");
		v = daxfs_load(&cp->aux);
		other = false;
		for (;;) {
			if (v & DAXFS_DIR_MOVING) {
				err = wait_not_moving(&op, cp, &v, &w);
				if (err)
					goto out_intent;
				continue;
			}
			if (v & DAXFS_DIR_DEAD) {
				other = true;	/* another rmdir's, half done */
				break;
			}
			if (v & DAXFS_DIR_COUNT_MASK) {
				err = -ENOTEMPTY;
				goto out_intent;
			}
			if (daxfs_fenced(&op)) {
				err = -ESTALE;
				goto out;
			}
			if (daxfs_cas(&cp->aux, &v, v | DAXFS_DIR_DEAD))
				break;
		}
		if (other) {
			/* still there until that rmdir removes the name: wait
			 * for it (a dead one is recovered), then look again */
			daxfs_intent_clear(&op);
			err = wait_rmdir(&op, &wd, de.ino);
			if (!err)
				continue;
			goto out;	/* -EBUSY, -ESTALE */
		}
		/*
		 * A rename may have moved the directory between our lookup
		 * and the DEAD CAS (its MOVING came and went).  DEAD keeps
		 * renames out from here on, so the leaf is looked at once,
		 * now, before step 1: recovery reads "step 1, leaf gone" as
		 * our own removal, and would free a directory that another
		 * name still holds (docs/namespace.md, "Rmdir racing a
		 * rename of the directory").
		 */
		if (!daxfs_dir_has_leaf(&op, dp, hash, de.leaf)) {
			rmdir_undo_dead(&op, cp, v);
			tries++;
			continue;
		}
		err = intent_step(&op, op.lane, NS_KIND_RMDIR, 1, 0);
		if (err)
			goto out;	/* recovery: DEAD without MOVING */
		daxfs_crash_point("rmdir.dead");
		daxfs_change_raise(&op, dp);
		daxfs_change_raise(&op, cp);
		later.n = 0;
		op.later = &later;
		err = daxfs_dir_remove_dent(&op, dp, &de);
		if (err) {
			op.later = NULL;	/* nothing removed */
			if (daxfs_fenced(&op)) {
				err = -ESTALE;
				goto out;
			}
			daxfs_change_settle(&op, dp);
			daxfs_change_settle(&op, cp);
			/* the leaf went after all (damage): undo, retry */
			rmdir_undo_dead(&op, cp, v);
			if (err == -ENOENT) {
				tries++;
				continue;
			}
			goto out;
		}
		err = intent_step(&op, op.lane, NS_KIND_RMDIR, 2, 0);
		daxfs_dir_retire_later(&op);	/* ours now (step 2) */
		if (err)
			goto out;
		daxfs_crash_point("rmdir.unlinked");
		daxfs_change_settle(&op, dp);
		daxfs_change_settle(&op, cp);
		rmdir_finish(&op, op.lane, dp, cp, 3);
		if (daxfs_fenced(&op)) {
			err = -ESTALE;
			goto out;
		}
		daxfs_crash_point("rmdir.done");
		daxfs_intent_clear(&op);
		goto out;
	}
	err = -EAGAIN;
	goto out;
out_intent:
	daxfs_intent_clear(&op);	/* fenced: touches nothing */
out:
	daxfs_op_end(&op);
	return err;
}

static void rmdir_recover(struct daxfs_op *op, struct daxfs_lane *il,
			  const u64 *a, u32 step)
{
	struct daxfs_inode *dp, *cp;
	u64 v;

	if (step == 5) {
		dir_free_dead(op, a[1], false);
		return;
	}
	if (daxfs_inode_get_writable(op, a[0], &dp) ||
	    daxfs_inode_get_writable(op, a[1], &cp))
		return;		/* finished, or nothing to do */
	v = daxfs_load(&cp->aux);
	/* DEAD without MOVING on a directory is only ever set by rmdir,
	 * and only one rmdir wins it: ours if the step says so or if the
	 * leaf is gone (nobody else removes a DEAD directory's name). */
	if (!(v & DAXFS_DIR_DEAD) || (v & DAXFS_DIR_MOVING))
		return;
	if (step < 2) {
		struct daxfs_dirent *de = daxfs_dirent_at(op->fs, a[2]);

		if (de && daxfs_dir_has_leaf(op, dp, de->hash, a[2])) {
			if (daxfs_dir_remove_leaf(op, dp, a[2]))
				return;
		} else if (step < 1) {
			return;		/* not ours (or never marked) */
		}
		step = 2;
	}
	rmdir_finish(op, il, dp, cp, step + 1);
}

/* ---- rename ---- */

/* flag kept with the rename flags in the intent: the old name had
 * already been unlinked by someone else (who dropped its link). */
#define RN_SRC_GONE	0x80u
/* marks that remove ambiguity for recovery (docs/recovery.md):
 * step 1 + PUBLISHING: the publish CAS may have happened (else it has
 * not, and the roll-back may free the leaves and undo the counts);
 * step 2 + MOVED: the old name's swap is done (GONE says how). */
#define RN_PUBLISHING	0x40u
#define RN_MOVED	0x20u
/* step 0's pins so far (rename_once's `done`), marked after each acts:
 * recovery undoes exactly those.  An older recoverer ignores the bits
 * and leaves the counts high, as it always did. */
#define RN_DONE_SHIFT	8
#define RN_DONE_MASK	0x3fu

struct rn {
	u64 sdir, ddir;
	struct daxfs_inode *sdp, *ddp;
	struct daxfs_dent src, tgt;
	bool has_tgt, sisdir, tisdir;
	u32 flags;		/* DAXFS_RENAME_* | RN_SRC_GONE */
	u64 nleaf;		/* new leaf for dname -> src */
	u64 sleaf;		/* new leaf for sname: whiteout or -> tgt or
				 * -> wh (RENAME_WHITEOUT) */
	u64 wh;			/* RENAME_WHITEOUT: the whiteout node */
	struct daxfs_inode *whp;
	bool dangling;		/* this try: a name found, its inode not */
	u64 dead;		/* this try: a directory DEAD but named */
	/* the counters this try raised (rename_raise), NULL: none */
	struct daxfs_inode *raised[4];
};

/*
 * Before the publish: the counters of both directories, and of the
 * records of the inodes whose names move or go (the source; the target,
 * replaced or exchanged), say that a change is in flight (docs/kernel.md
 * "Changes in flight").  The intent names them all: the directories in
 * a[0] and a[1], the inodes by the leaves in a[2] and a[4].  After pin(),
 * so that a base source has its record.
 */
static void rename_raise(struct daxfs_op *op, struct rn *r)
{
	struct daxfs_iref ref;
	int i;

	r->raised[0] = r->sdp;
	r->raised[1] = r->ddp;
	r->raised[2] = !daxfs_inode_get(op, r->src.ino, &ref) ? ref.ip : NULL;
	r->raised[3] = r->has_tgt && !daxfs_inode_get(op, r->tgt.ino, &ref) ?
		       ref.ip : NULL;
	for (i = 0; i < 4; i++)
		daxfs_change_raise(op, r->raised[i]);
}

/* In the op that raised them: a record freed since is retired, not yet
 * reused (docs/reclaim.md). */
static void rename_settle(struct daxfs_op *op, struct rn *r)
{
	int i;

	for (i = 0; i < 4; i++) {
		daxfs_change_settle(op, r->raised[i]);
		r->raised[i] = NULL;
	}
}

static int set_moving(struct daxfs_inode *ip, bool dead_too)
{
	u64 v = daxfs_load(&ip->aux);

	for (;;) {
		/* MOVING is only set under the rename claim, which we hold:
		 * one found here is stale (damage) and is taken over */
		if (v & DAXFS_DIR_DEAD)
			return -EAGAIN;
		if (dead_too && (v & DAXFS_DIR_COUNT_MASK))
			return -ENOTEMPTY;
		if (daxfs_cas(&ip->aux, &v, v | DAXFS_DIR_MOVING |
			      (dead_too ? DAXFS_DIR_DEAD : 0)))
			return 0;
	}
}

/*
 * Clears a pin's marks (MOVING; DEAD|MOVING of a replaced directory).
 * Not once fenced (ns_fenced): the marks name no holder, and both are
 * only ever set under the rename claim.  An overtaken recoverer's clear
 * (the roll-back of step 0 or 1, the unpin it redoes from step 3, or any
 * of these read from a lane that is a new host's by then) would take
 * away the marks of a rename that the claim's next holder made since
 * (docs/recovery.md "Acts of an overtaken recoverer").  Checked before
 * every CAS, as leaf_unhold: a CAS from the value the dead op left
 * cannot tell its MOVING from a live rename's, and no atomic step
 * compares the claim and aux.  Enough because the dead host's rename
 * claim goes only after every intent of its slot is cleared, by the
 * recoverer whose claim stands: between the check and the CAS the new
 * claimer would have to finish every lane and the slot, and a renamer
 * take the claim and pin this directory.
 */
static void clear_bits(struct daxfs_op *op, struct daxfs_inode *ip, u64 bits)
{
	u64 v = daxfs_load(&ip->aux);

	while ((v & bits) && !ns_fenced(op))
		if (daxfs_cas(&ip->aux, &v, v & ~bits))
			return;
}

/*
 * RENAME_WHITEOUT: the whiteout node's link for the old name, raised in
 * step 0, goes back to 0 where the old name never became the whiteout's
 * (rolled back, or the old name gone to an unlinker).  A store, not a
 * decrement: nobody but this rename can have named the node (nameless,
 * held by the renamer's open set), so it is right however often a
 * recoverer repeats it.  The hold then frees it (daxfs_open_put, or the
 * dead host's open-set drop, which recovery runs after the lanes).  Not
 * once fenced (ns_fenced): an overtaken recoverer may find the node held
 * by another open since the one that took over dropped the dead host's,
 * and named by a link of that holder (docs/recovery.md "Acts of an
 * overtaken recoverer").
 */
static void wh_unname(struct daxfs_op *op, struct rn *r)
{
	if (r->whp && !ns_fenced(op))
		daxfs_store32(&r->whp->nlink, 0);
}

/* Is anc an ancestor of (or equal to) dir?  Walks parent pointers. */
static int is_ancestor(struct daxfs_op *op, u64 anc, u64 dir)
{
	struct daxfs_iref ref;
	u64 cur = dir;
	u32 depth;
	int err;

	for (depth = 0; depth < DEPTH_MAX; depth++) {
		if (cur == anc)
			return 1;
		if (cur == op->fs->sb.root_ino)
			return 0;
		err = daxfs_inode_get(op, cur, &ref);
		if (err)
			return err == -ENOENT ? -ENOENT : err;
		cur = daxfs_iref_parent(&ref);
	}
	return -EUCLEAN;
}

/* The inode named by a rename side: grab a link (files) or MOVING (dirs)
 * so that nothing frees or rmdirs it while it has two names. */
static int pin(struct daxfs_op *op, const struct daxfs_dent *d, bool isdir)
{
	struct daxfs_inode *ip;
	int err;

	err = daxfs_inode_get_writable(op, d->ino, &ip);
	if (err)
		return err;
	return isdir ? set_moving(ip, false) : daxfs_nlink_inc(ip);
}

/*
 * A moved directory's part of unpin: its parent word moves from the
 * directory it leaves (from) to the one it enters (to; 0: the same one),
 * MOVING cleared.  Idempotent, so a recoverer may do it again.
 *
 * Not once fenced (ns_fenced): an overtaken recoverer redoing it from
 * step 3 (or reading a new host's rename at step 3 from the lane) would
 * put back an old parent over a rename of the directory since, and
 * is_ancestor() walks those words (a loop let in), or clear that
 * rename's MOVING.  The check comes right before the parent word's
 * change, and a recovery op changes it by CAS from `from`, the value the
 * dead op left (its own store, to `to`, may have landed: then nothing is
 * left to do; anything else is another rename's).  The check alone
 * leaves its window open to a whole rename of the directory (clear_bits
 * says what must fit in it); the CAS narrows it to one that moved the
 * directory back to `from` exactly.  A live renamer, holder of the claim,
 * stores: the word is `from` unless damaged, which the store mends.
 */
static void unpin_dir(struct daxfs_op *op, u64 ino, u64 from, u64 to)
{
	struct daxfs_inode *ip;

	if (daxfs_inode_get_writable(op, ino, &ip) || ns_fenced(op))
		return;
	if (to && op->rhost)
		daxfs_cas(&ip->parent, &from, to);
	else if (to)
		daxfs_store(&ip->parent, to);
	clear_bits(op, ip, DAXFS_DIR_MOVING);
	daxfs_inode_touch(ip, DAXFS_TOUCH_CTIME);
}

/* The pin of a rename side that moves from one directory to another
 * (to 0: no move; see unpin_dir). */
static void unpin(struct daxfs_op *op, u64 ino, bool isdir, u64 from, u64 to)
{
	struct daxfs_inode *ip;

	if (isdir) {
		unpin_dir(op, ino, from, to);
		return;
	}
	if (!daxfs_inode_get_writable(op, ino, &ip))
		daxfs_inode_put_link(op, ip);
}

/* Everything after the new name is published and the old one removed.
 * Each step is marked before it acts, so a recoverer resuming after the
 * mark may skip it (counts stay high), never repeat it. */
static void rename_finish(struct daxfs_op *op, struct daxfs_lane *il,
			  struct rn *r, u32 from)
{
	bool xchg = r->flags & DAXFS_RENAME_EXCHANGE;
	bool gone = r->flags & RN_SRC_GONE;
	bool cross = r->sdir != r->ddir;

	if (from <= 3) {
		if (intent_step(op, il, NS_KIND_RENAME, 3, r->flags))
			return;		/* fenced */
		if (!gone || r->sisdir)
			unpin(op, r->src.ino, r->sisdir, r->sdir,
			      cross ? r->ddir : 0);
		if (xchg)
			unpin(op, r->tgt.ino, r->tisdir, r->ddir,
			      cross ? r->sdir : 0);
		daxfs_crash_point("rename.unpinned");
	} else {
		/*
		 * Step 3 marked by a host that died in it or after: a file's
		 * link it may have dropped is not dropped again, but a moved
		 * directory's parent word is redone (renames are still
		 * serialized by the dead host's claim, while our claim on
		 * its slot stands: unpin_dir).  Skipped, a word left naming
		 * the old directory let is_ancestor() miss a loop
		 * (tests/test_rename_unpin_crash.py).
		 */
		if (r->sisdir)
			unpin_dir(op, r->src.ino, r->sdir, cross ? r->ddir : 0);
		if (xchg && r->tisdir)
			unpin_dir(op, r->tgt.ino, r->ddir, cross ? r->sdir : 0);
	}
	if (from <= 4) {
		if (intent_step(op, il, NS_KIND_RENAME, 4, r->flags))
			return;
		/* a whiteout replaced the old name: same count */
		if (!xchg && !gone && !(r->flags & DAXFS_RENAME_WHITEOUT))
			daxfs_dir_count_sub(r->sdp);
		if (cross && r->sisdir && !(xchg && r->tisdir))
			daxfs_nlink_dec(r->sdp, 2);
		if (cross && xchg && r->tisdir && !r->sisdir)
			daxfs_nlink_dec(r->ddp, 2);
		daxfs_inode_touch(r->sdp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
		daxfs_inode_touch(r->ddp, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
		daxfs_crash_point("rename.counted");
	}
	/* recovery: died freeing the replaced file or directory */
	if (from == 6 && r->has_tgt && !xchg && !r->tisdir)
		free_if_unlinked(op, r->tgt.ino);
	if (from == 6 && r->has_tgt && !xchg && r->tisdir)
		dir_free_dead(op, r->tgt.ino, true);
	if (from <= 5 && r->has_tgt && !xchg) {
		if (intent_step(op, il, NS_KIND_RENAME, 5, r->flags))
			return;
		if (r->tisdir) {
			struct daxfs_inode *tp;

			daxfs_nlink_dec(r->ddp, 2);
			if (!daxfs_inode_get_writable(op, r->tgt.ino, &tp)) {
				daxfs_store32(&tp->nlink, 0);
				daxfs_inode_free(op, tp);
			}
		} else {
			/* kept while open on any host */
			daxfs_inode_unlinked(op, r->tgt.ino);
		}
		daxfs_crash_point("rename.done");
	}
}

/*
 * Step 2 found the old name gone: an unlinker (which does not take the
 * rename claim) removed it after step 1, and its -1 landed on the
 * source, which keeps its pin as the link for dname.  RN_SRC_GONE is
 * marked first, so that recovery knows who removed it.  An exchanged
 * directory must never end unnamed nor have its nlink lowered like a
 * file's: its new leaf goes under sname by an insert (count+1 first);
 * only if sname was taken again in that instant is it left to fsck
 * (/lost+found).  Also run by recovery, which may find that insert done.
 * Returns -ESTALE when fenced.
 */
static int rename_src_gone(struct daxfs_op *op, struct daxfs_lane *il,
			   struct rn *r)
{
	struct daxfs_dirent *sd;
	int err;

	r->flags |= RN_SRC_GONE;
	if (intent_step(op, il, NS_KIND_RENAME, 2, r->flags))
		return -ESTALE;
	if (!(r->flags & DAXFS_RENAME_EXCHANGE) || !r->tisdir || !r->sleaf)
		return 0;
	sd = daxfs_dirent_at(op->fs, r->sleaf);
	if (!sd || daxfs_dir_published(op, r->sdp, sd->hash, r->sleaf)) {
		r->sleaf = 0;		/* inserted before a crash */
		return 0;
	}
	for (;;) {
		daxfs_race_point("rename.src_gone_count", r->sdp);
		err = daxfs_dir_count_add(r->sdp);
		if (!err)
			break;
		/* DEAD: an rmdir of the old directory.  A live rename waits
		 * for it (recovery does not wait): undone, the name goes in
		 * after all; done, the directory went and T is left to fsck
		 * (tests/race/test_exchange_src_gone_dead.c) */
		if (err != -ENOENT || il != op->lane ||
		    wait_dir_gone(op, r->sdir, r->sdp))
			return daxfs_fenced(op) ? -ESTALE : 0;
	}
	err = daxfs_dir_link(op, r->sdp, r->sleaf, false);
	if (err == -ESTALE)
		return err;
	if (!err)
		r->sleaf = 0;		/* published */
	else
		daxfs_dir_count_sub(r->sdp);
	return 0;
}

/* After the MOVED mark (decrements are marked before they act): with the
 * old name gone, free the unpublished leaf for it, and drop the link an
 * exchanged file lost with dname (it cannot get sname). */
static void rename_gone_drop(struct daxfs_op *op, struct rn *r)
{
	if (!(r->flags & RN_SRC_GONE))
		return;
	if (r->sleaf && daxfs_dirent_free(op, r->sleaf, false))
		return;		/* fenced: store nothing more */
	if ((r->flags & DAXFS_RENAME_EXCHANGE) && !r->tisdir)
		daxfs_inode_unlinked(op, r->tgt.ino);
	wh_unname(op, r);
}

/*
 * Recovery of step 2 (not marked MOVED): who removed the old leaf a2?
 * Still there: nobody, swap it now.  Gone with a5 published (there, or
 * marked removed): the dead host's swap did.  Gone with a5 never
 * published: an unlinker did (the swap could not have succeeded).  Gone
 * and no a5 (a plain rename of an overlay name): cannot tell, assume an
 * unlinker (counts stay high, never low).
 */
static void rename_recover_old(struct daxfs_op *op, struct daxfs_lane *il,
			       struct rn *r)
{
	struct daxfs_dirent *sd = r->sleaf ? daxfs_dirent_at(op->fs, r->sleaf) : NULL;

	if (r->flags & RN_SRC_GONE)
		goto gone;
	if (daxfs_dir_has_leaf(op, r->sdp, r->src.hash, r->src.leaf)) {
		if (!daxfs_dir_swap(op, r->sdp, r->src.hash, r->src.leaf,
				    r->sleaf))
			goto moved;
	} else if (sd && daxfs_dir_published(op, r->sdp, sd->hash, r->sleaf)) {
		goto moved;
	}
gone:
	rename_src_gone(op, il, r);
moved:
	intent_step(op, il, NS_KIND_RENAME, 2, r->flags | RN_MOVED);
	rename_gone_drop(op, r);
}

/* Undoes the pre-publication steps (in-process failure only). */
static void rename_undo(struct daxfs_op *op, struct rn *r, u32 done)
{
	bool xchg = r->flags & DAXFS_RENAME_EXCHANGE;
	struct daxfs_inode *ip;

	if (daxfs_fenced(op))
		return;		/* recovery rolled step 0 back */
	if (done & 1)
		unpin(op, r->src.ino, r->sisdir, 0, 0);
	if ((done & 2) && !daxfs_inode_get_writable(op, r->tgt.ino, &ip)) {
		if (xchg)
			unpin(op, r->tgt.ino, r->tisdir, 0, 0);
		else
			clear_bits(op, ip, DAXFS_DIR_DEAD | DAXFS_DIR_MOVING);
	}
	if (done & 4)
		daxfs_nlink_dec(r->ddp, 2);
	if (done & 8)
		daxfs_nlink_dec(r->sdp, 2);
	if (done & 16)
		daxfs_dir_count_sub(r->ddp);
	if (done & 32)
		wh_unname(op, r);
}

/* Step 0's pins in `done` are acted: say so (marked after acting). */
static int mark_pins(struct daxfs_op *op, struct rn *r, u32 done)
{
	return intent_step(op, op->lane, NS_KIND_RENAME, 0,
			   r->flags | done << RN_DONE_SHIFT);
}

/* A name was found and its inode was not: an unlink freed it after our
 * lookup (the next try finds no name: retry), or the entry is damaged
 * (every try finds it: daxfs_rename gives up with -EUCLEAN). */
static int rn_missing(struct rn *r, int err)
{
	if (err != -ENOENT)
		return err;
	r->dangling = true;
	return -EAGAIN;
}

/*
 * An unlink does not take the rename claim: one that removed the source
 * after our lookup, and returned, must not see the rename publish the
 * new name afterwards (no order of the two explains it: the new name
 * would appear for an inode whose only name was gone, or the exchanged
 * target lose its name long after the source was gone).  So the source
 * leaf is held (leaf_hold) until step 1 has published; -EAGAIN: it was
 * removed (or is being), look again.  Past step 1 an unlink is the race
 * of "Exchange racing an unlink" (docs/namespace.md).
 */
static int rename_hold_src(struct daxfs_op *op, struct rn *r)
{
	struct daxfs_dirent *de = daxfs_dirent_at(op->fs, r->src.leaf);

	/* a directory is pinned MOVING, which keeps rmdir (its only
	 * remover) out, and its leaf is never refreshed: rmdir's recovery
	 * reads its leaf gone as its own removal */
	if (r->sisdir)
		return 0;
	if (!de)
		return -EUCLEAN;
	if (leaf_hold(de))
		return 0;
	leaf_give_way(op, r->sdp, r->src.hash, r->src.leaf);
	return -EAGAIN;
}

/*
 * chattr (docs/attrs.md), as Linux's may_delete / may_create: the source
 * directory loses a name, the target directory gains one (and loses the
 * one replaced); neither renamed nor replaced inode may be immutable or
 * append-only.
 */
static int rename_attrs(const struct rn *r, struct daxfs_inode *sip,
			struct daxfs_inode *tip)
{
	bool loses = r->has_tgt;

	if (daxfs_attrs_deny(r->sdp, DAXFS_IF_LOCKED) ||
	    daxfs_attrs_deny(r->ddp, loses ? DAXFS_IF_LOCKED :
				     DAXFS_IF_IMMUTABLE) ||
	    daxfs_attrs_deny(sip, DAXFS_IF_LOCKED) ||
	    (loses && daxfs_attrs_deny(tip, DAXFS_IF_LOCKED)))
		return -EPERM;
	return 0;
}

/*
 * A count+1 in directory dir (record dp) refused: DEAD.  An rmdir that
 * finished took the directory away (it is no longer dp): -ENOENT, the
 * rename comes after it.  Else the rmdir is half done or about to be
 * undone (its leaf taken by a rename: rmdir_undo_dead), and the
 * directory is still there: -EAGAIN, to wait for that rmdir (r->dead)
 * and look again, never an -ENOENT for a named directory
 * (tests/race/test_rename_into_dead.c).
 */
static int rename_dir_dead(struct daxfs_op *op, struct rn *r, u64 dir,
			   struct daxfs_inode *dp)
{
	struct daxfs_iref ref;

	if (daxfs_inode_get(op, dir, &ref) || ref.ip != dp)
		return -ENOENT;
	r->dead = dir;
	return -EAGAIN;
}

/*
 * RENAME_WHITEOUT: the caller's whiteout must be a nameless node (not a
 * directory) this host holds (daxfs_tmpnode): only then is its link
 * count this rename's alone until the old name becomes its name.
 */
static int rename_wh_get(struct daxfs_op *op, struct rn *r)
{
	struct daxfs_inode *ip;
	int err = daxfs_inode_get_writable(op, r->wh, &ip);

	if (err)
		return err == -ENOENT ? -EINVAL : err;
	if (DAXFS_IS_DIR(daxfs_load32(&ip->mode)) || daxfs_load32(&ip->nlink) ||
	    !daxfs_open_held_here(op->fs, r->wh))
		return -EINVAL;
	r->whp = ip;
	return 0;
}

static int rename_once(struct daxfs_op *op, struct rn *r, const char *sname,
		       u32 slen, const char *dname, u32 dlen)
{
	struct daxfs_retire_later later_buf daxfs_noinit;	/* n set at use */
	struct daxfs_retire_later *later = &later_buf;
	bool xchg = r->flags & DAXFS_RENAME_EXCHANGE;
	bool cross = r->sdir != r->ddir;
	struct daxfs_inode *sip, *tip = NULL;
	struct daxfs_iref ref;
	u64 sh, dh;
	u32 done = 0;
	int err;

	sh = name_hash(op, sname, slen);
	dh = name_hash(op, dname, dlen);
	ref = (struct daxfs_iref){ .ino = r->sdir, .ip = r->sdp };
	err = daxfs_dir_find(op, &ref, sname, slen, sh, &r->src);
	if (err)
		return err;
	ref = (struct daxfs_iref){ .ino = r->ddir, .ip = r->ddp };
	err = daxfs_dir_find(op, &ref, dname, dlen, dh, &r->tgt);
	if (err && err != -ENOENT)
		return err;
	r->has_tgt = !err;
	if (xchg && !r->has_tgt)
		return -ENOENT;
	if ((r->flags & DAXFS_RENAME_NOREPLACE) && r->has_tgt)
		return -EEXIST;
	if (!r->src.leaf || (r->has_tgt && !r->tgt.leaf))
		return -EUCLEAN;
	/* same inode (same name, or two links): nothing to do */
	if (r->has_tgt && r->tgt.ino == r->src.ino)
		return 0;
	err = daxfs_inode_get(op, r->src.ino, &ref);
	if (err)
		return rn_missing(r, err);
	r->sisdir = DAXFS_IS_DIR(daxfs_iref_mode(&ref));
	sip = ref.ip;
	r->tisdir = false;
	if (r->has_tgt) {
		err = daxfs_inode_get(op, r->tgt.ino, &ref);
		if (err)
			return rn_missing(r, err);
		r->tisdir = DAXFS_IS_DIR(daxfs_iref_mode(&ref));
		tip = ref.ip;
		if (!xchg && r->sisdir && !r->tisdir)
			return -ENOTDIR;
		if (!xchg && !r->sisdir && r->tisdir)
			return -EISDIR;
	}
	err = rename_attrs(r, sip, tip);
	if (err)
		return err;
	/* no directory into its own subtree (renames are serialized by the
	 * claim, so the parent chain cannot change under the walk) */
	if (r->sisdir && cross) {
		err = is_ancestor(op, r->src.ino, r->ddir);
		if (err)
			return err > 0 ? -EINVAL : err;
	}
	if (xchg && r->tisdir && cross) {
		err = is_ancestor(op, r->tgt.ino, r->sdir);
		if (err)
			return err > 0 ? -EINVAL : err;
	}
	if (r->has_tgt && r->tisdir && !xchg) {
		struct daxfs_inode *tp;

		err = daxfs_dir_writable(op, r->tgt.ino, &tp);	/* import */
		if (err == -ENOENT)
			r->dead = r->tgt.ino;	/* DEAD: being rmdir'ed */
		if (err)
			return err == -ENOENT ? -EAGAIN : err;
	}

	r->whp = NULL;
	if (r->wh) {
		err = rename_wh_get(op, r);
		if (err)
			return err;
	}

	/* both leaves before the intent: a full pool fails here, before
	 * anything moved */
	r->nleaf = daxfs_dirent_new(op, dname, dlen, dh, r->src.ino, r->src.type, 0);
	r->sleaf = 0;
	if (xchg)
		r->sleaf = daxfs_dirent_new(op, sname, slen, sh, r->tgt.ino,
					    r->tgt.type, 0);
	else if (r->whp)	/* dir_swap keeps a base name's mark */
		r->sleaf = daxfs_dirent_new(op, sname, slen, sh, r->wh,
					    daxfs_mode_dtype(daxfs_load32(&r->whp->mode)),
					    0);
	else if (r->src.flags & DAXFS_DF_FROM_BASE)
		r->sleaf = daxfs_dirent_new(op, sname, slen, sh, 0, 0,
					    DAXFS_DF_WHITEOUT | DAXFS_DF_FROM_BASE);
	if (!r->nleaf || ((xchg || r->whp || (r->src.flags & DAXFS_DF_FROM_BASE)) &&
			  !r->sleaf)) {
		err = -ENOSPC;
		goto free_leaves;
	}

	/* step 0: intent, then the pins and counts that must be high;
	 * each is fenced (-ESTALE: recovery owns the rest, see undo) */
	err = intent_begin(op, r->sdir, r->ddir, r->src.leaf, r->nleaf,
			   r->has_tgt ? r->tgt.leaf : 0, r->sleaf,
			   NS_META(NS_KIND_RENAME, 0, r->flags));
	if (err)
		return err;	/* the new leaves leak to fsck */
	/* -EAGAIN: src is a directory DEAD but still named (a half-done
	 * rmdir): still there until its name goes, so wait and look again
	 * (daxfs_rename), as for a DEAD target */
	err = pin(op, &r->src, r->sisdir);
	if (err == -EAGAIN && r->sisdir)
		r->dead = r->src.ino;
	if (err)
		goto undo;
	done |= 1;
	if (mark_pins(op, r, done))
		goto undo;
	if (r->has_tgt) {
		if (daxfs_fenced(op)) {
			err = -ESTALE;
			goto undo;
		}
		if (xchg) {
			err = pin(op, &r->tgt, r->tisdir);
		} else if (r->tisdir) {
			struct daxfs_inode *tp;

			err = daxfs_inode_get_writable(op, r->tgt.ino, &tp);
			if (!err)
				err = set_moving(tp, true);
			else	/* freed since the lookup (an rmdir ran to
				 * its end): look again, it may be gone */
				err = rn_missing(r, err);
		}
		if (err == -EAGAIN && r->tisdir)
			r->dead = r->tgt.ino;	/* set_moving: DEAD */
		if (err)
			goto undo;
		done |= 2;
		if (mark_pins(op, r, done))
			goto undo;
	}
	if (daxfs_fenced(op)) {
		err = -ESTALE;
		goto undo;
	}
	if (cross && r->sisdir && !(xchg && r->tisdir)) {
		err = daxfs_nlink_inc(r->ddp);
		if (err)
			goto undo;
		done |= 4;
		if (mark_pins(op, r, done))
			goto undo;
	}
	if (cross && xchg && r->tisdir && !r->sisdir) {
		err = daxfs_nlink_inc(r->sdp);
		if (err)
			goto undo;
		done |= 8;
		if (mark_pins(op, r, done))
			goto undo;
	}
	if (!r->has_tgt) {
		daxfs_race_point("rename.counting", r->ddp);
		err = daxfs_dir_count_add(r->ddp);
		if (err == -ENOENT)
			err = rename_dir_dead(op, r, r->ddir, r->ddp);
		if (err)
			goto undo;
		done |= 16;
		if (mark_pins(op, r, done))
			goto undo;
	}
	/* the whiteout's link for the old name, before it is named there
	 * (0 -> 1: ours, held and nameless, see wh_unname) */
	if (r->whp) {
		err = daxfs_nlink_revive(op, r->whp);
		if (err)
			goto undo;
		done |= 32;
		if (mark_pins(op, r, done))
			goto undo;
	}
	err = intent_step(op, op->lane, NS_KIND_RENAME, 1, r->flags);
	if (err)
		goto undo;
	daxfs_crash_point("rename.prepared");
	err = intent_step(op, op->lane, NS_KIND_RENAME, 1, r->flags | RN_PUBLISHING);
	if (err)
		goto undo;
	rename_raise(op, r);

	/* step 1: publish the new name (atomically replacing a target)
	 * while the source name still stands: held against unlink, or an
	 * unlink that got in since our lookup comes first (look again) */
	err = rename_hold_src(op, r);
	if (err)
		goto undo;
	if (r->has_tgt)
		err = daxfs_dir_swap(op, r->ddp, dh, r->tgt.leaf, r->nleaf);
	else
		err = daxfs_dir_link(op, r->ddp, r->nleaf, false);
	leaf_unhold(op, r->src.leaf);
	if (err) {
		if (err == -ENOENT || err == -EEXIST)
			err = -EAGAIN;	/* target changed: start over */
		goto undo;
	}
	daxfs_crash_point("rename.linked");	/* published, step 1 */
	err = intent_step(op, op->lane, NS_KIND_RENAME, 2, r->flags);
	if (err)
		return err;	/* published: recovery rolls forward */
	daxfs_crash_point("rename.published");

	/* step 2: drop (or exchange) the old name; its leaf is retired
	 * once MOVED says the swap was ours (step 1's target leaf need not
	 * wait: the new leaf there says the publish was ours) */
	later->n = 0;
	op->later = later;
	err = daxfs_dir_swap(op, r->sdp, sh, r->src.leaf, r->sleaf);
	if (err)
		op->later = NULL;	/* nothing removed */
	if (err == -ESTALE)
		return err;
	if (err && rename_src_gone(op, op->lane, r))
		return -ESTALE;
	err = intent_step(op, op->lane, NS_KIND_RENAME, 2, r->flags | RN_MOVED);
	daxfs_dir_retire_later(op);
	if (err)
		return err;
	daxfs_crash_point("rename.moved");
	rename_gone_drop(op, r);
	rename_finish(op, op->lane, r, 3);
	if (daxfs_fenced(op))
		return -ESTALE;
	/* after unpin: a moved directory's ".." is its parent word */
	rename_settle(op, r);
	daxfs_intent_clear(op);
	return 0;

undo:
	/* fenced: recovery rolled step 0/1 back.  Else decrements are
	 * marked before they act: step 0 with no pin, so that a crash in
	 * the undo leaves counts high, never undone twice (nothing was
	 * published: every way here is before the publishing CAS) */
	if (daxfs_fenced(op) ||
	    intent_step(op, op->lane, NS_KIND_RENAME, 0, r->flags))
		return -ESTALE;
	rename_settle(op, r);
	rename_undo(op, r, done);
	daxfs_intent_clear(op);
free_leaves:
	if ((r->nleaf && daxfs_dirent_free(op, r->nleaf, false)) ||
	    (r->sleaf && daxfs_dirent_free(op, r->sleaf, false)))
		return -ESTALE;
	return err;
}

/*
 * The retries of a rename ran out on -EAGAIN: a source or target being
 * rmdir'ed (r->dead: DEAD, name not yet removed), or a race lost again and
 * again.  Waits (wait_rmdir) as long as that rmdir gets on, whatever the
 * time (a live host finishes it, a dead one is recovered): the rename
 * answers only once the name is gone (docs/namespace.md, "Waiting for an
 * rmdir").  Without the claim while it waits, so that other renames and
 * links do not wait with it; then takes it again (the next try looks the
 * names up afresh).  Nonzero: the rename's answer when it gives up:
 * -EBUSY (four leases and no one getting on: a residue; or the claim, as
 * claim_take), -ESTALE (fenced), -EINTR.  It was -EAGAIN for the
 * residue, an errno rename(2) does not have (tests/c/test_dead_residue.c).
 */
static int rename_wait(struct daxfs_op *op, struct waiter *w, struct rn *r)
{
	int err;

	if (r->dead)
		claim_release(op);
	err = wait_rmdir(op, w, r->dead);
	if (err)
		return err;
	return r->dead ? claim_take(op, w) : 0;
}

int daxfs_rename_wh(struct daxfs_fs *fs, u64 sdir, const char *sname, u32 slen,
		    u64 ddir, const char *dname, u32 dlen, u32 flags, u64 wh)
{
	struct daxfs_op op;
	struct waiter w = { 0, 0 };
	struct rn r;
	u32 tries, dangling = 0;	/* tries in a row that found one */
	int err, werr;

	if (flags & ~(DAXFS_RENAME_NOREPLACE | DAXFS_RENAME_EXCHANGE |
		      DAXFS_RENAME_WHITEOUT))
		return -EINVAL;
	if ((flags & DAXFS_RENAME_EXCHANGE) &&
	    (flags & (DAXFS_RENAME_NOREPLACE | DAXFS_RENAME_WHITEOUT)))
		return -EINVAL;
	if (!(flags & DAXFS_RENAME_WHITEOUT) != !wh)
		return -EINVAL;
	err = daxfs_name_check(sname, slen);
	if (!err)
		err = daxfs_name_check(dname, dlen);
	if (err)
		return err;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	if (!writable(&op)) {
		err = -EROFS;
		goto out;
	}
	memset(&r, 0, sizeof(r));
	r.sdir = sdir;
	r.ddir = ddir;
	r.flags = flags;
	r.wh = wh;
	err = dir_writable_live(&op, sdir, &r.sdp);
	if (!err)
		err = dir_writable_live(&op, ddir, &r.ddp);
	if (err)
		goto out;
	err = claim_take(&op, &w);
	if (err)
		goto out;
	for (tries = 0;; tries++) {
		r.dangling = false;
		r.dead = 0;
		err = rename_once(&op, &r, sname, slen, dname, dlen);
		if (err != -EAGAIN)
			break;
		/* the unlink (or rmdir) that frees an inode removed its name
		 * first: a name that names no inode try after try is
		 * damage, and waiting leases for it helps nobody.  Counted
		 * apart from the tries, which a long wait for a slow rmdir
		 * uses up: then one look between its name's removal and
		 * its free said EUCLEAN (test_rename_rmdir_wait under load) */
		dangling = r.dangling ? dangling + 1 : 0;
		if (dangling > NS_RETRIES) {
			err = -EUCLEAN;
			break;
		}
		werr = tries >= NS_RETRIES ? rename_wait(&op, &w, &r) : 0;
		if (werr) {
			err = werr;
			break;
		}
		daxfs_yield();
	}
	if (op.has_claim)
		claim_release(&op);
out:
	daxfs_op_end(&op);
	return err;
}

int daxfs_rename(struct daxfs_fs *fs, u64 sdir, const char *sname, u32 slen,
		 u64 ddir, const char *dname, u32 dlen, u32 flags)
{
	return daxfs_rename_wh(fs, sdir, sname, slen, ddir, dname, dlen, flags, 0);
}

/* The whiteout a character device 0/0, as Linux's vfs_whiteout makes. */
int daxfs_rename_whiteout(struct daxfs_fs *fs, u64 sdir, const char *sname,
			  u32 slen, u64 ddir, const char *dname, u32 dlen,
			  u32 flags, u32 uid, u32 gid)
{
	u64 wh;
	int err;

	if (!(flags & DAXFS_RENAME_WHITEOUT))
		return daxfs_rename(fs, sdir, sname, slen, ddir, dname, dlen, flags);
	err = daxfs_tmpnode(fs, sdir, DAXFS_S_IFCHR, uid, gid, 0, &wh);
	if (err)
		return err;
#ifdef DAXFS_BUG_WHITEOUT_STEPS
	/* the old defect, for the linearizability checker (docs/lincheck.md):
	 * the rename, then the whiteout linked at the old name, as daxfs.ko
	 * did before format 10: the old name is missing in between (two
	 * names of one inode: nothing to do, as the VFS answers itself) */
	{
		u64 si = 0, di = 0;

		daxfs_lookup(fs, sdir, sname, slen, &si);
		daxfs_lookup(fs, ddir, dname, dlen, &di);
		err = daxfs_rename(fs, sdir, sname, slen, ddir, dname, dlen,
				   flags & ~DAXFS_RENAME_WHITEOUT);
		if (!err && si != di)
			err = daxfs_link_created(fs, wh, sdir, sname, slen,
						 NULL);
	}
#else
	err = daxfs_rename_wh(fs, sdir, sname, slen, ddir, dname, dlen, flags, wh);
#endif
	daxfs_open_put(fs, wh);
	return err;
}

/*
 * Roll a dead host's rename forward (new name published) or back (not
 * published); or finish its rmdir.  Runs while the dead host is not yet
 * recovered, so nothing its op could still see has been reused: the
 * leaves named by the intent are readable even if already retired.
 *
 * The rename claim a dead renamer or linker held is not released here
 * but by recover_slot once every lane's intent is cleared: a recoverer
 * that dies before the clear leaves the next one to run this again, and
 * that rerun lets go of LINKING holds and clears MOVING and DEAD|MOVING
 * marks with no look at who set them.  While the claim still names the
 * dead host nobody else can have set them (both are only ever set under
 * the claim), so the rerun touches only the dead op's own.
 */
static void ns_recover(struct daxfs_op *op, struct daxfs_lane *dead_lane)
{
	struct daxfs_fs *fs = op->fs;
	u64 a[7];
	u32 pins;
	struct daxfs_dirent *sl, *nl, *tl = NULL;
	bool published;
	struct rn r;
	u32 i, step;

	for (i = 0; i < 7; i++)
		a[i] = daxfs_load(&dead_lane->intent.a[i]);
	step = NS_STEP(a[6]);
	if (!op->lane)
		return;	/* cannot write without a lane: fsck finishes it */
	switch (NS_KIND(a[6])) {
	case NS_KIND_RMDIR:
		rmdir_recover(op, dead_lane, a, step);
		return;
	case NS_KIND_CREATE:
		create_recover(op, dead_lane, a, step, NS_FLAGS(a[6]));
		return;
	case NS_KIND_LINK:
		link_recover(op, dead_lane, a, step, NS_FLAGS(a[6]));
		return;
	case NS_KIND_UNLINK:
		unlink_recover(op, dead_lane, a, step);
		return;
	}
	if (NS_KIND(a[6]) != NS_KIND_RENAME)
		return;
	leaf_unhold(op, a[2]);	/* the source, held up to step 1 */
	memset(&r, 0, sizeof(r));
	r.sdir = a[0];
	r.ddir = a[1];
	r.flags = NS_FLAGS(a[6]) & ~(RN_DONE_MASK << RN_DONE_SHIFT);
	pins = (NS_FLAGS(a[6]) >> RN_DONE_SHIFT) & RN_DONE_MASK;
	sl = daxfs_dirent_at(fs, a[2]);
	nl = daxfs_dirent_at(fs, a[3]);
	if (a[4])
		tl = daxfs_dirent_at(fs, a[4]);
	if (!sl || !nl || (a[4] && !tl))
		return;
	if (daxfs_inode_get_writable(op, r.sdir, &r.sdp) ||
	    daxfs_inode_get_writable(op, r.ddir, &r.ddp))
		return;
	r.src = (struct daxfs_dent){ .ino = sl->ino, .hash = sl->hash,
				     .leaf = a[2], .type = sl->type,
				     .flags = sl->flags };
	r.sisdir = sl->type == DAXFS_DT_DIR;
	if (tl) {
		r.has_tgt = true;
		r.tgt = (struct daxfs_dent){ .ino = tl->ino, .hash = tl->hash,
					     .leaf = a[4], .type = tl->type,
					     .flags = tl->flags };
		r.tisdir = tl->type == DAXFS_DT_DIR;
	}
	r.nleaf = a[3];
	r.sleaf = a[5];
	if ((r.flags & DAXFS_RENAME_WHITEOUT) && a[5]) {
		/* the whiteout is named by its leaf, readable until the
		 * dead host's open set (its hold) is dropped after us; made
		 * by daxfs_tmpnode, it is no directory and keeps its ORPHAN
		 * mark: anything else is damage, left alone (fsck) */
		struct daxfs_dirent *wd = daxfs_dirent_at(fs, a[5]);

		if (wd && !daxfs_inode_get_writable(op, wd->ino, &r.whp) &&
		    !DAXFS_IS_DIR(daxfs_load32(&r.whp->mode)) &&
		    (daxfs_load32(&r.whp->flags) & DAXFS_IF_ORPHAN))
			r.wh = wd->ino;
		else
			r.whp = NULL;
	}
#ifdef DAXFS_BUG_EXCHANGE_RECOVERY
	/* the old defect, for the linearizability checker (docs/testing.md):
	 * a published leaf another host removed reads as "not published" */
	published = step >= 2 ||
		    (step == 1 && daxfs_dir_has_leaf(op, r.ddp, nl->hash, a[3]));
#else
	/* the leaf's removed mark tells a published leaf that someone took
	 * out again from one never published (docs/recovery.md) */
	published = step >= 2 ||
		    (step == 1 && (r.flags & RN_PUBLISHING) &&
		     daxfs_dir_published(op, r.ddp, nl->hash, a[3]));
#endif
	if (!published) {
		/* roll back: counts raised in step 0 stay high (fsck trims);
		 * the pins' flags are ours (renames are serialized), while
		 * our claim on the dead slot stands (clear_bits) */
		struct daxfs_inode *ip;

		if (r.sisdir && !daxfs_inode_get_writable(op, r.src.ino, &ip))
			clear_bits(op, ip, DAXFS_DIR_MOVING);
		if (r.has_tgt && r.tisdir &&
		    !daxfs_inode_get_writable(op, r.tgt.ino, &ip)) {
			u64 v = daxfs_load(&ip->aux);

			if (v & DAXFS_DIR_MOVING)
				clear_bits(op, ip, DAXFS_DIR_MOVING |
					   ((r.flags & DAXFS_RENAME_EXCHANGE) ?
					    0 : DAXFS_DIR_DEAD));
		}
		if (step == 1 && !(r.flags & RN_PUBLISHING)) {
			/* prepared, publish not tried: undo step 0 exactly
			 * (all of it was done before the mark) */
			bool xchg = r.flags & DAXFS_RENAME_EXCHANGE;
			bool cross = r.sdir != r.ddir;
			u32 done = 1;

			if (r.has_tgt)
				done |= 2;
			if (cross && r.sisdir && !(xchg && r.tisdir))
				done |= 4;
			if (cross && xchg && r.tisdir && !r.sisdir)
				done |= 8;
			if (!r.has_tgt)
				done |= 16;
			if (intent_step(op, dead_lane, NS_KIND_RENAME, 0,
					r.flags))
				return;	/* overtaken: the next recoverer redoes */
			rename_undo(op, &r, done);
		} else if (step == 0 && pins) {
			/* the pins marked done, marked undone first */
			if (intent_step(op, dead_lane, NS_KIND_RENAME, 0,
					r.flags))
				return;
			rename_undo(op, &r, pins & ~32u);
		}
		/* never published: the whiteout was never named */
		wh_unname(op, &r);
		if (step == 0 || !(r.flags & RN_PUBLISHING)) {
			/* never published: free the leaves (taken out of
			 * the dead lane first, intent_take: a second
			 * recoverer must not free them again, an overtaken
			 * one must not touch the lane), if they are the ones
			 * the intent says (else garbage: left to fsck) */
			u64 sino = (r.flags & DAXFS_RENAME_EXCHANGE) ? r.tgt.ino :
				   (r.flags & DAXFS_RENAME_WHITEOUT) ? r.wh : 0;
			bool nfree = leaf_unpublished(op, a[3], r.src.ino,
						      r.sdp, r.ddp);
			bool sfree = a[5] && leaf_unpublished(op, a[5], sino,
							      r.sdp, r.ddp);

			nfree = intent_take(op, dead_lane, 3, a[3]) && nfree;
			sfree = intent_take(op, dead_lane, 5, a[5]) && sfree;
			if ((nfree && daxfs_dirent_free(op, a[3], false)) ||
			    (sfree && daxfs_dirent_free(op, a[5], false)))
				return;	/* fenced recoverer */
		}
		return;
	}
	if (step == 2 && (r.flags & RN_MOVED)) {
		/* the swap is done and GONE says whether it happened */
	} else if (step <= 2) {
		rename_recover_old(op, dead_lane, &r);
		step = 2;
	}
	/* again where the dead host may have died before rename_gone_drop
	 * did it (idempotent, see wh_unname) */
	if (r.flags & RN_SRC_GONE)
		wh_unname(op, &r);
	rename_finish(op, dead_lane, &r, step + 1);
}

/*
 * The counters a dead host's namespace op may have raised, raised again
 * by its recoverer before the roll (a roll forward may publish: an
 * unlink's removal, a rename's step 2), so that no front end trusts a
 * name across it (docs/kernel.md "Changes in flight").  The dead lane's
 * intent, which names them, stays until the roll is done, so no other
 * heal takes these raises away.  NULL: no record, or no writes of ours.
 */
static struct daxfs_inode *recover_raise(struct daxfs_op *op, u64 ino)
{
	struct daxfs_iref ref;

	if (!ino || ino == ~0ULL || !op->lane || daxfs_fenced(op) ||
	    daxfs_inode_get(op, ino, &ref) || !ref.ip)
		return NULL;
	daxfs_change_raise(op, ref.ip);
	return ref.ip;
}

/*
 * Roll a dead host's namespace op forward or back (ns_recover) between a
 * raise and a settle of every counter it may have raised: the settle
 * moves them, as the dead host's own would have, so that a front end
 * trusting a name while the counter stands (docs/kernel.md "Dentries")
 * looks it up again (a move too many only costs a lookup).  Then the
 * dead host's own raises, if it made them, are healed.
 */
void daxfs_rename_recover(struct daxfs_op *op, struct daxfs_lane *dead_lane)
{
	struct daxfs_inode *held[DAXFS_NS_RAISED_MAX];
	u64 raised[DAXFS_NS_RAISED_MAX];
	int i, n;

	/* before the roll: it may retire the leaves that name them */
	n = daxfs_ns_intent_inos(op->fs, dead_lane, raised);
	for (i = 0; i < n; i++)
		held[i] = recover_raise(op, raised[i]);
	ns_recover(op, dead_lane);
	if (!op->lane || daxfs_fenced(op))
		return;		/* our raises: the next recoverer heals them */
	/* in our op: a record retired by the roll is not reused yet */
	for (i = 0; i < n; i++)
		daxfs_change_settle(op, held[i]);
	for (i = 0; i < n; i++)
		daxfs_change_heal(op, dead_lane, raised[i]);
}

void daxfs_rename_claim_recover(struct daxfs_fs *fs, u32 slot)
{
	u64 hw = daxfs_load(&daxfs_host_at(fs, slot)->state);
	u64 claim = daxfs_claim_word(slot, daxfs_host_gen(hw));

	daxfs_cas(daxfs_state_word(fs, rename_claim), &claim, 0);
}

/* ---- readdir ---- */

int daxfs_readdir(struct daxfs_fs *fs, u64 dir, u64 *pos,
		  daxfs_filldir_t fill, void *ctx)
{
	struct daxfs_op op;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = daxfs_dir_iterate(&op, dir, pos, fill, ctx);
	daxfs_op_end(&op);
	return err;
}
