/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Inode records: resolution (overlay record or pristine base inode),
 * copy-up, link counts and times.  docs/inodes.md.
 */
#ifndef DAXFS_INODE_H
#define DAXFS_INODE_H

#include "compat.h"
#include "daxfs_core.h"

/* File type bits (Linux values; the kernel's S_IF* are the same). */
#define DAXFS_S_IFMT	0170000u
#define DAXFS_S_IFSOCK	0140000u
#define DAXFS_S_IFLNK	0120000u
#define DAXFS_S_IFREG	0100000u
#define DAXFS_S_IFBLK	0060000u
#define DAXFS_S_IFDIR	0040000u
#define DAXFS_S_IFCHR	0020000u
#define DAXFS_S_IFIFO	0010000u

#define DAXFS_S_ISUID	04000u
#define DAXFS_S_ISGID	02000u
#define DAXFS_S_IXGRP	00010u

#define DAXFS_IS_DIR(m)	(((m) & DAXFS_S_IFMT) == DAXFS_S_IFDIR)
#define DAXFS_IS_REG(m)	(((m) & DAXFS_S_IFMT) == DAXFS_S_IFREG)

/*
 * The mode of a new node that is neither a directory nor a symlink (mknod,
 * a nameless node): type 0 means a regular file; only devices keep rdev.
 * -EINVAL for any other type.
 */
static inline int daxfs_node_mode(u32 mode, u64 *rdev, u32 *out)
{
	u32 type = mode & DAXFS_S_IFMT ? mode & DAXFS_S_IFMT : DAXFS_S_IFREG;

	switch (type) {
	case DAXFS_S_IFREG:
	case DAXFS_S_IFIFO:
	case DAXFS_S_IFSOCK:
		*rdev = 0;
		break;
	case DAXFS_S_IFCHR:
	case DAXFS_S_IFBLK:
		break;
	default:
		return -EINVAL;
	}
	*out = type | (mode & 07777);
	return 0;
}
#define DAXFS_IS_LNK(m)	(((m) & DAXFS_S_IFMT) == DAXFS_S_IFLNK)

/* DT_* value of a mode (Linux: DT_x == S_IFx >> 12). */
static inline u32 daxfs_mode_dtype(u32 mode)
{
	return (mode & DAXFS_S_IFMT) >> 12;
}

#define DAXFS_DT_DIR	4u

/* Highest link count; beyond it link/mkdir return -EMLINK. */
#define DAXFS_LINK_MAX	0x7fffffffu

struct daxfs_iref {
	u64 ino;
	struct daxfs_inode *ip;			/* overlay record, or NULL */
	const struct daxfs_base_inode *bip;	/* pristine base inode, or NULL */
};

/* Read-only resolution: the overlay record if one is published, else the
 * base inode (never copied up).  -ENOENT if neither (or the record is a
 * dead base inode, nlink 0).  Validates record->ino == ino and magic
 * (else -EUCLEAN). */
int daxfs_inode_get(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref);
/* The same through the caller's cache of ino's record (may be NULL),
 * which it checks before use and fills after a lookup. */
int daxfs_inode_get_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		       struct daxfs_iref *ref);
/*
 * A lane-free look at ino's record through the caller's cache fc, the
 * core of daxfs_attr_peek and of the lane-free read (core/optread.c):
 * -EAGAIN when fc names no live published record of ino, or when an op
 * would be refused (a host shut down or declared dead, bad media).  The
 * record may be retired while the caller loads it: loads from it count
 * only when daxfs_fc_look_holds, called after them, says the bucket
 * still publishes it (inode.c has why that suffices).
 */
struct daxfs_fc_look {
	u64 rec, bucket, key;
	struct daxfs_inode *ip;
};
int daxfs_fc_look(struct daxfs_fs *fs, u64 ino,
		  const struct daxfs_fcache *fc, struct daxfs_fc_look *lk);
/* Inline: a lane-free read asks once per call (a call cost it 24
 * instructions). */
static inline bool daxfs_fc_look_holds(struct daxfs_fs *fs,
				       const struct daxfs_fc_look *lk)
{
	return daxfs_ov_holds(fs, lk->bucket, lk->key, lk->rec);
}
/* What a peek loads from a record: mode, link count, change counter and
 * size (a directory's: its entry count).  Acquires, in that order. */
static inline void daxfs_record_peek(struct daxfs_inode *ip,
				     struct daxfs_peek *pk)
{
	pk->mode = daxfs_load32(&ip->mode);
	pk->nlink = daxfs_load32(&ip->nlink);
	pk->change = daxfs_load(&ip->change);
	pk->size = DAXFS_IS_DIR(pk->mode) ?
		   daxfs_load(&ip->aux) & DAXFS_DIR_COUNT_MASK :
		   daxfs_load(&ip->size);
}
/* The attributes of a resolved inode, as daxfs_getattr gives them. */
int daxfs_iref_attr(struct daxfs_fs *fs, const struct daxfs_iref *ref,
		    struct daxfs_attr *attr);
/* For modification: copies a base inode up on first use (one winner via
 * overlay insert; losers free theirs and use the winner's). */
/* A copy-up record of base inode ino in ip (zeroed, not yet published):
 * what daxfs_inode_get_writable() publishes, and fsck's offline copy-up. */
void daxfs_inode_fill_from_base(struct daxfs_inode *ip, u64 ino,
				const struct daxfs_base_inode *bip);
int daxfs_inode_get_writable(struct daxfs_op *op, u64 ino,
			     struct daxfs_inode **ip);
/* The same through fc (may be NULL), a front end's cache of ino's record
 * (struct daxfs_fcache): a live record it still names is the one a lookup
 * would find; else looked up, and fc set as daxfs_inode_get_fc sets it. */
int daxfs_inode_get_writable_fc(struct daxfs_op *op, u64 ino,
				struct daxfs_fcache *fc,
				struct daxfs_inode **ip);

/* Time/change bookkeeping: what = DAXFS_TOUCH_ATIME|MTIME|CTIME */
#define DAXFS_TOUCH_ATIME	(1u << 0)
#define DAXFS_TOUCH_MTIME	(1u << 1)
#define DAXFS_TOUCH_CTIME	(1u << 2)
#define DAXFS_TOUCH_ALL		(DAXFS_TOUCH_ATIME | DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME)
void daxfs_inode_touch(struct daxfs_inode *ip, u32 what);
/* the same, at WHEN: the times one operation sets are equal */
void daxfs_inode_touch_at(struct daxfs_inode *ip, u32 what, s64 when);
/*
 * Changes in flight (docs/kernel.md "Changes in flight", format.h
 * DAXFS_CHANGE_FLIGHT).  An op that changes a directory's entries, or
 * removes an inode's name, raises each such counter after its intent
 * names the inode and before it publishes, and settles it (one add: the
 * count up, the raise down) after the publish, in the same op, whatever
 * the outcome, so that no record is settled after it could be reused.
 * raise returns the word before (0 for no ip); settle_at is a touch that
 * settles.  Neither acts once op is fenced.  A host fenced in between
 * leaves its raise: recovery heals it (daxfs_change_heal), fsck clears
 * what is left.  daxfs_change_settled:
 * daxfs_core.h.
 */
u64 daxfs_change_raise(struct daxfs_op *op, struct daxfs_inode *ip);
void daxfs_change_settle(struct daxfs_op *op, struct daxfs_inode *ip);
void daxfs_inode_settle_at(struct daxfs_op *op, struct daxfs_inode *ip,
			   u32 what, s64 when);
/*
 * A write's touch: mtime and ctime become the coarse clock's now
 * (daxfs_coarse_ns, the clock Linux stamps writes with) unless both are
 * already fresh: at most DAXFS_WRITE_STAMP_NS older than it, or ahead of
 * it by no more than DAXFS_COARSE_TICK_NS (a fine stamp of this tick: a
 * create's, a truncate's, another host's write).  The change counter
 * moves by one, except after a rewrite that changed no attribute
 * (bytes_only: no size moved, no page allocated) when the stamps stay:
 * that one marks it (DAXFS_CHANGE_WRITTEN) unless it is marked already.
 * Writers of one file on several CPUs then store to its record about
 * once per tick, not once per call, and no write reads the fine clock
 * but one that finds a stamp further ahead (a coarse clock that lags,
 * or a time set into the future: docs/files.md "Time stamps of writes",
 * "The change counter of a rewrite").  Returns whether the count moved.
 */
#define DAXFS_WRITE_STAMP_NS	1000000LL
/* the longest tick of Linux's coarse clock (HZ=100) */
#define DAXFS_COARSE_TICK_NS	10000000LL
bool daxfs_inode_touch_write(struct daxfs_inode *ip, bool bytes_only);
/* Folds a rewrite's mark into the count (count + 1, mark clear), in op
 * (a lane: the record cannot be reused under the CAS), before a getattr
 * loads the attributes: the bytes it then reads are at least as new as
 * the word it gives.  No store on a fenced host. */
void daxfs_change_fold(struct daxfs_op *op, struct daxfs_inode *ip);

/* Mode of a resolved inode (record or base). */
static inline u32 daxfs_iref_mode(const struct daxfs_iref *ref)
{
	if (ref->ip)
		return daxfs_load32(&ref->ip->mode);
	return ref->bip->mode;
}

/*
 * In a set-group-ID directory (dmode, dgid: the directory's, loaded in the
 * creating op) a new node takes the directory's group, and a new
 * directory the S_ISGID bit too, as Linux's inode_init_owner gives them,
 * whoever the caller: creates (core/namei.c) and unnamed files
 * (core/tmpfile.c).  daxfs.ko's VFS did so already; libdaxfs, the preload
 * and FUSE gave the caller's group until 2026-12-05.
 */
static inline void daxfs_setgid_dir(u32 dmode, u32 dgid, u32 *mode, u32 *gid)
{
	if (!(dmode & DAXFS_S_ISGID))
		return;
	*gid = dgid;
	if (DAXFS_IS_DIR(*mode))
		*mode |= DAXFS_S_ISGID;
}

/* Parent directory of a resolved directory. */
static inline u64 daxfs_iref_parent(const struct daxfs_iref *ref)
{
	if (ref->ip)
		return daxfs_load(&ref->ip->parent);
	return ref->bip->parent;
}

/* The chattr flags (DAXFS_IF_ATTRS bits) of a record; a pristine base
 * inode has none (setting one copies it up). */
static inline u32 daxfs_ip_attrs(struct daxfs_inode *ip)
{
	return ip ? daxfs_load32(&ip->flags) & DAXFS_IF_ATTRS : 0;
}

/* -EPERM when the record carries one of deny (DAXFS_IF_IMMUTABLE,
 * DAXFS_IF_APPEND): what chattr forbids (docs/attrs.md). */
static inline int daxfs_attrs_deny(struct daxfs_inode *ip, u32 deny)
{
	return daxfs_ip_attrs(ip) & deny ? -EPERM : 0;
}

#define DAXFS_IF_LOCKED	(DAXFS_IF_IMMUTABLE | DAXFS_IF_APPEND)

/* Region flag bits <-> DAXFS_FL_* (core/iflags.c). */
u32 daxfs_if_to_fl(u32 iflags);

/* Link counts (CAS loops).  nlink_inc fails with -ENOENT on a dying inode
 * (nlink 0) and -EMLINK at DAXFS_LINK_MAX; nlink_dec never goes below
 * floor and returns the new count, or -1 when it was already at floor
 * (so exactly one caller sees the step to 0). */
int daxfs_nlink_inc(struct daxfs_inode *ip);
int daxfs_nlink_dec(struct daxfs_inode *ip, u32 floor);

/* Allocates and publishes a new inode record (nlink set, times now).
 * *ipp receives the record; the caller links it into a directory. */
int daxfs_inode_create(struct daxfs_op *op, u32 mode, u32 uid, u32 gid,
		       u64 rdev, u32 nlink, u64 parent, u64 *ino,
		       struct daxfs_inode **ipp);
/* Recovery: is the record at off one a dead op allocated and never
 * published, as its intent says (ino: the number the intent names, or 0)?
 * False for anything else, which recovery must not free (a garbled
 * intent); *ipp (may be NULL) gets the record. */
bool daxfs_inode_unpublished(struct daxfs_op *op, u64 off, u64 ino,
			     struct daxfs_inode **ipp);
/* Frees a record whose last link is gone: unpublishes it (dynamic inos)
 * or leaves it as a dead nlink-0 marker (base inos, so the base inode
 * never resurrects), drops file data, symlink target and the dir trie. */
void daxfs_inode_free(struct daxfs_op *op, struct daxfs_inode *ip);
/* ino's record whatever its link count (daxfs_inode_get hides one at
 * nlink 0 without the ORPHAN mark): for finishing its free in recovery. */
int daxfs_inode_get_dying(struct daxfs_op *op, u64 ino, struct daxfs_inode **ipp);
/* Drop one link of ino (after a name was removed).  At zero a directory
 * is freed; a non-directory is marked DAXFS_IF_ORPHAN first and freed
 * unless a host holds it open (docs/open-files.md). */
void daxfs_inode_unlinked(struct daxfs_op *op, u64 ino);
/* Drops a link (or a pin: link, rename) we hold on ip; frees it when that
 * was the last one.  Never "cannot reach 0": between our +1 and this -1
 * every name may have been unlinked on other hosts, and then we are the
 * one who takes nlink to 0 and must free (else the inode leaks).
 * Returns the links left (0: it was the last), or -1 when none was
 * dropped. */
int daxfs_inode_put_link(struct daxfs_op *op, struct daxfs_inode *ip);
/* The same, its ctime stamped with now (the instant of the caller's other
 * stamps, read once; 0: read the clock) */
int daxfs_inode_put_link_at(struct daxfs_op *op, struct daxfs_inode *ip,
			    s64 now);

/* Persistent media: write back a record before publishing it. */
static inline void daxfs_pflush(struct daxfs_fs *fs, const void *p, u64 len)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(p, len);
}

#endif /* DAXFS_INODE_H */
