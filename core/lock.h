/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Internals of the cluster-wide lock table (core/lock.c, docs/locks.md)
 * shared with recovery (core/hosts.c) and the checker (core/check.c).
 * The public calls (daxfs_lock_set and friends) are in daxfs_core.h.
 */
#ifndef DAXFS_LOCK_H
#define DAXFS_LOCK_H

#include "compat.h"
#include "daxfs_core.h"

/* One record as loaded once from the region (daxfs_lock_rec_load). */
struct daxfs_lock_view {
	u64 host, owner, ino, start, end;
	u32 type, kind, pid;
	bool waiting;
};

/* Loads p once into r; false when free (r->host 0) or not a valid
 * record (r->host != 0: corrupt, left for fsck). */
bool daxfs_lock_rec_load(struct daxfs_lock_rec *p, struct daxfs_lock_view *r);
/* Our host word in records (0 for a host-less fs). */
u64 daxfs_lock_me(struct daxfs_fs *fs);
/* The bucket every lock of ino lives in. */
u32 daxfs_lock_bucket_index(u64 ino);
/* Would r's POSIX owner, waiting behind cf, close a cycle of owners
 * waiting for each other (on any hosts)?  Reads every bucket: call it
 * outside any claim (core/lock-deadlock.c). */
bool daxfs_lock_deadlock(struct daxfs_fs *fs, const struct daxfs_lock_req *r,
			 const struct daxfs_lock_view *cf);

static inline u32 daxfs_lock_class(u32 kind)
{
	return kind == DAXFS_LCK_FLOCK;	/* flock vs the record locks */
}

static inline bool daxfs_lock_overlap(u64 s1, u64 e1, u64 s2, u64 e2)
{
	return s1 <= e2 && s2 <= e1;
}

/* The root page, validated (magic, nr_buckets), or NULL: none or bad. */
struct daxfs_lock_root *daxfs_lock_root_get(struct daxfs_fs *fs);
/* Bucket page i of root, validated (magic, index), or NULL. */
struct daxfs_lock_bucket *daxfs_lock_bucket_at(struct daxfs_fs *fs,
					       struct daxfs_lock_root *root,
					       u32 i);
/* A record's host word names no ALIVE host of that generation: the lock
 * is gone with its host (left, dead, recovering, or slot reused). */
bool daxfs_lock_host_stale(struct daxfs_fs *fs, u64 host);
/* daxfs_lock_rec_check: what a record slot holds (*ino: its inode) */
#define DAXFS_LOCK_REC_FREE	0
#define DAXFS_LOCK_REC_LIVE	1	/* a lock (or waiter) of a live host */
#define DAXFS_LOCK_REC_STALE	2	/* valid, but its host is gone */
#define DAXFS_LOCK_REC_BAD	3	/* not a valid record */
int daxfs_lock_rec_check(struct daxfs_fs *fs, struct daxfs_lock_rec *p,
			 u64 *ino);
/*
 * Recovery and leave: drops every record of a host that is not ALIVE any
 * more, and every record of host word also (non-zero: our own at leave),
 * bucket by bucket under each bucket's claim, and wakes their waiters.
 * Needs op->lane (a host-less caller changes nothing: stale records are
 * ignored by everyone and dropped by the next claimer of their bucket).
 */
void daxfs_lock_sweep(struct daxfs_op *op, u64 also);

#endif /* DAXFS_LOCK_H */
