// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unnamed files (O_TMPFILE): a regular file born with no name, held by
 * one entry in this host's open set exactly as a file whose last name was
 * unlinked while open (nlink 0, ORPHAN).  Its space comes back at the
 * last close on any host, or when its host dies: the open-set recovery
 * that frees unlinked open files covers it.  linkat() of it gives it a
 * first name.  Protocol and crash story: docs/open-files.md, "Unnamed
 * files".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "openset.h"

static void set_orphan(struct daxfs_inode *ip)
{
	u32 f = daxfs_load32(&ip->flags);

	while (!(f & DAXFS_IF_ORPHAN) &&
	       !daxfs_cas32(&ip->flags, &f, f | DAXFS_IF_ORPHAN))
		;
}

/* dir is a live directory; the new node's mode and gid as it gives
 * them (daxfs_setgid_dir) */
static int dir_live(struct daxfs_op *op, u64 dir, u32 *mode, u32 *gid)
{
	struct daxfs_iref ref;
	int err = daxfs_inode_get(op, dir, &ref);
	u32 dmode;

	if (err)
		return err == -ESTALE ? -ENOENT : err;
	dmode = daxfs_iref_mode(&ref);
	if (!DAXFS_IS_DIR(dmode))
		return -ENOTDIR;
	daxfs_setgid_dir(dmode, ref.ip ? daxfs_load32(&ref.ip->gid) :
			 ref.bip->gid, mode, gid);
	return 0;
}

/*
 * The intent OPEN_PUT with a[0] = 0 says "an unnamed file being made":
 * inode_create names its record (a[3]) and number (a[1]) in it before
 * either exists for anyone else.  The record is published with nlink 0
 * and no ORPHAN mark, which every reader takes for "gone", then our
 * entry goes in, then the mark: from there on it is an ordinary unlinked
 * open file and the intent can go.
 */
static int tmpfile(struct daxfs_op *op, u64 dir, const struct daxfs_inode *dp,
		   u32 mode, u32 uid, u32 gid, u64 rdev, u64 *inop,
		   struct daxfs_inode **ipp, struct daxfs_attr *attr)
{
	struct daxfs_inode *ip;
	u64 ino;
	int err;

	if (!op->lane || (op->fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	/* dp: dir's record, which the caller's op made sure is a live
	 * directory's (daxfs_create_held): no second look */
	if (dp) {
		daxfs_setgid_dir(daxfs_load32(&dp->mode),
				 daxfs_load32(&dp->gid), &mode, &gid);
	} else {
		err = dir_live(op, dir, &mode, &gid);
		if (err)
			return err;
	}
	err = daxfs_intent_set(op, DAXFS_INTENT_OPEN_PUT, 0, 0, 0, 0);
	if (err)
		return err;
	err = daxfs_inode_create(op, mode, uid, gid, rdev, 0, dir, &ino, &ip);
	if (err)
		goto out;
	daxfs_crash_point("tmpfile.published");
	daxfs_race_point("tmpfile.published", op->lane);
	err = daxfs_open_insert(op, ino);
	if (err) {
		if (daxfs_fenced(op))
			return -ESTALE;	/* recovery frees it */
		daxfs_intent_clear(op);
		daxfs_inode_free(op, ip);
		return err;
	}
	daxfs_crash_point("tmpfile.held");
	set_orphan(ip);
	daxfs_pflush(op->fs, &ip->flags, sizeof(ip->flags));
	daxfs_crash_point("tmpfile.orphan");
	*inop = ino;
	if (ipp)
		*ipp = ip;
	if (attr) {
		struct daxfs_iref ref = { .ino = ino, .ip = ip };

		if (daxfs_iref_attr(op->fs, &ref, attr))
			attr->ino = 0;
	}
out:
	if (daxfs_fenced(op))
		return -ESTALE;
	daxfs_intent_clear(op);
	return err;
}

/* One op making a nameless node of mode (its type checked), with its
 * attributes after (attr may be NULL; ino 0: none). */
static int tmp_op(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid, u32 gid,
		  u64 rdev, u64 *ino, struct daxfs_attr *attr)
{
	struct daxfs_op op;
	int err;

	if (attr)
		attr->ino = 0;
	/* directories and symlinks are born with names */
	if (daxfs_node_mode(mode, &rdev, &mode))
		return -EINVAL;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = tmpfile(&op, dir, NULL, mode, uid, gid, rdev, ino, NULL, attr);
	daxfs_op_end(&op);
	return err;
}

int daxfs_tmpnode(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid, u32 gid,
		  u64 rdev, u64 *ino)
{
	return tmp_op(fs, dir, mode, uid, gid, rdev, ino, NULL);
}

int daxfs_tmpfile(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid, u32 gid,
		  u64 *ino)
{
	return daxfs_tmpfile_attr(fs, dir, mode, uid, gid, ino, NULL);
}

int daxfs_tmpfile_attr(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid,
		       u32 gid, u64 *ino, struct daxfs_attr *attr)
{
	return tmp_op(fs, dir, DAXFS_S_IFREG | (mode & 07777), uid, gid, 0,
		      ino, attr);
}

/* The held regular file of daxfs_create_held, in its op (dp: dir's
 * writable record); *ipp its record, ours until the op ends. */
int daxfs_tmpfile_in(struct daxfs_op *op, u64 dir, const struct daxfs_inode *dp,
		     u32 mode, u32 uid, u32 gid, u64 *ino,
		     struct daxfs_inode **ipp, struct daxfs_attr *attr)
{
	return tmpfile(op, dir, dp, DAXFS_S_IFREG | (mode & 07777), uid, gid,
		       0, ino, ipp, attr);
}

/* In a dead maker's a[3], beside the record (64-byte aligned): a
 * recoverer settles the published record; see daxfs_tmpfile_recover. */
#define TMP_SETTLING	1ULL

/*
 * Recovery of a dead maker (intent OPEN_PUT, a[0] 0): a record published
 * under its number (the overlay's own pending insert was resolved before
 * us) gets the mark and is settled, so the open-set drop that follows
 * frees it whether or not the entry went in (a named one, nlink > 0, is
 * left alone); a record never published is freed at once (nobody else
 * can know it), if it is one (daxfs_inode_unpublished: the lane is
 * untrusted, and may name a live inode's record).
 *
 * A recoverer can die here, or before the lane's intent is cleared, and
 * the next one runs this again.  So the dead lane's a[3] is changed by
 * CAS before each act (docs/recovery.md, "A recoverer that dies"): to 0
 * before the free of a record never published (a rerun finds nothing to
 * free; dying in between leaks it to fsck), to record | TMP_SETTLING
 * before the settle of a published one (a rerun settles again while it is
 * published, and does nothing once the settle freed it: without the mark
 * it read "not under its number" as "never published" and freed it a
 * second time).  Each CAS and the mark only while our claim on the slot
 * stands: a recoverer overtaken leaves a new host's words alone.
 */
void daxfs_tmpfile_recover(struct daxfs_op *op, struct daxfs_lane *dead)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_inode *ip;
	u64 ino = daxfs_load(&dead->intent.a[1]);
	u64 word = daxfs_load(&dead->intent.a[3]);
	u64 off = word & ~TMP_SETTLING, val = 0;

	if (!off)
		return;
	if (ino && !daxfs_ov_lookup(op, daxfs_key(DAXFS_KEY_INODE, ino), &val) &&
	    val == off) {
		if (daxfs_recovery_lost(op) ||
		    (!(word & TMP_SETTLING) &&
		     !daxfs_cas(&dead->intent.a[3], &word, off | TMP_SETTLING)))
			return;		/* not the word we read: leave it */
		ip = daxfs_ptr(fs, off, sizeof(*ip), DAXFS_OFF_ALIGN);
		if (ip && !daxfs_load32(&ip->nlink) &&
		    !daxfs_recovery_lost(op)) {
			set_orphan(ip);
			daxfs_orphan_settle(op, ino);
		}
		return;
	}
	if (word & TMP_SETTLING)
		return;		/* settled (and freed) by a recoverer before us */
	/* the lane may be garbage naming a live inode's record: free only
	 * a record that is the unpublished one the intent says; else
	 * forget it (fsck judges what is left) */
	if (daxfs_recovery_lost(op) ||
	    !daxfs_cas(&dead->intent.a[3], &word, 0) ||
	    !daxfs_inode_unpublished(op, off, ino, NULL))
		return;
	if (daxfs_free_now(op, off, DAXFS_CLASS_128))
		return;		/* fenced: off leaks to fsck */
}

/*
 * linkat() of an unnamed file: its count may go 0 -> 1, but only while
 * this host holds it open (the caller's descriptor): the entry keeps
 * every settler away, so the 0 is not final yet.  The ORPHAN mark stays
 * (meaningless while nlink > 0; the last unlink sets it again anyway).
 */
int daxfs_nlink_revive(struct daxfs_op *op, struct daxfs_inode *ip)
{
	u32 n = daxfs_load32(&ip->nlink);

	for (;;) {
		/* on every round: a failed CAS may hand back the 0 of an
		 * unlink on another host since our first look */
		if (!n && !daxfs_open_held_here(op->fs, daxfs_load(&ip->ino)))
			return -ENOENT;
		if (n >= DAXFS_LINK_MAX)
			return -EMLINK;
		daxfs_race_point("nlink.revive", ip);
		if (daxfs_cas32(&ip->nlink, &n, n + 1))
			return 0;
	}
}
