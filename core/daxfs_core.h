/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The portable DaxFS core: what a host (kernel mount, user process) calls.
 *
 * Conventions:
 * - Every function returns 0 (or a byte count) on success and a negative
 *   errno on failure.  -EUCLEAN means the region holds something the core
 *   refuses to trust (corruption); the caller should suggest fsck.daxfs.
 * - The core never allocates host memory: the caller owns struct daxfs_fs.
 * - Everything read from the region is untrusted: offsets are checked
 *   with daxfs_ptr() before use and loops are bounded.
 * - Public entry points claim a lane (see format.h) for their duration;
 *   callbacks run inside that claim and must not block for long.
 */
#ifndef DAXFS_CORE_H
#define DAXFS_CORE_H

#include "compat.h"
#include "../include/daxfs/format.h"

#define DAXFS_NO_HOST		0xffffffffu

/* struct daxfs_fs.flags */
#define DAXFS_FS_RDONLY		(1u << 0)	/* no writes at all (fsck -n) */
#define DAXFS_FS_PERSISTENT	(1u << 1)	/* flush cache lines on update */
#define DAXFS_FS_VALIDATE	(1u << 2)	/* full base validation at open */
/* (1u << 3) was DAXFS_FS_KEEP_ORPHANS: every host now keeps a non-
 * directory whose last link goes while any host has it open
 * (daxfs_open_get, docs/open-files.md) */
#define DAXFS_FS_CONVERT	(1u << 4)	/* accept a version 1 image, for
						 * daxfs_convert_v1() only */
#define DAXFS_FS_POPULATE	(1u << 5)	/* map each fresh page batch
						 * at once (compat.h
						 * daxfs_populate) */
/*
 * fsck's recovery of dead hosts (core/check.c chk_recover_hosts), before
 * anything was checked: the words that name what a dead host held (its
 * holds, batch, limbo, free stack heads and links) may be bent onto
 * objects in use, and a free writes a link into what it frees, a pop
 * hands out what its head names.  So nothing is pushed or popped: free
 * stacks and limbo stay as they are, and what the recovery frees is
 * found unreachable by the walk and rebuilt into free space from it.
 */
#define DAXFS_FS_NO_FREE	(1u << 6)
/*
 * The front end renews the lease, reclaims and recovers dead hosts on its
 * own schedule, even when idle (daxfs.ko's lease work, docs/kernel.md):
 * a read's op then ends with daxfs_op_end_read's lane release alone.
 */
#define DAXFS_FS_UPKEEP		(1u << 7)

/*
 * Backing-store I/O for the shared page cache, supplied by the host (the
 * library: pread on the backing files; the kernel: kernel_read).  read
 * fills dst with len bytes at byte off of backing file idx (zeros past
 * its end) and returns 0 or -errno; -ENXIO, -ENODEV, -ENOENT, -EACCES
 * mean "this host cannot reach that file" (another host fills for it).
 * It may sleep.  docs/pcache.md.
 */
struct daxfs_backing_ops {
	int (*read)(void *ctx, u32 idx, u64 off, void *dst, u32 len);
	/* optional: sleep about usec while waiting for another host's fill
	 * (NULL: the core yields) */
	void (*sleep)(void *ctx, u32 usec);
};

/* This host's view of the PCACHE region (core/pcache.c). */
struct daxfs_pcache_view {
	struct daxfs_pcache_header *hdr;	/* NULL: no page cache */
	struct daxfs_pcache_live *live;
	struct daxfs_pcache_slot *slots;
	u64 *owner;			/* pin_owner[max_hosts] */
	u8 *pins;
	u8 *data;
	u64 nr_slots;
	u32 window;
	u32 pin_stride;
	u32 nr_backing;
	u32 timeout_ms;			/* bounded waits (0: 2 x lease) */
	u64 reach;			/* bit i: we can read backing file i */
	const struct daxfs_backing_ops *ops;
	void *ctx;
	u64 col_gen;			/* host_gen our pin column is claimed for */
	u64 st_hits, st_misses, st_fills, st_waits;	/* this host, advisory */
};

/*
 * What this observer saw of one host slot (docs/hosts.md "Leases"): the
 * slot's state word and heartbeat counter, and when (our monotonic clock)
 * that pair was first seen.  Private memory, never shared: each observer
 * times other hosts' renewals with its own clock.
 */
struct daxfs_host_obs {
	u64 state;
	u64 hb;
	s64 seen_ns;			/* 0: nothing seen yet */
	u32 busy;			/* try-lock: updates are pairs */
	u32 changes;			/* renewals seen under this state word */
};

enum daxfs_lease {
	DAXFS_LEASE_UNKNOWN = 0,	/* not watched long enough to tell */
	DAXFS_LEASE_LIVE = 1,		/* seen renewing, lease not run out */
	DAXFS_LEASE_EXPIRED = 2,	/* unchanged for more than a lease */
};

/* A change counter this host saw showing a change in flight, and since
 * when (daxfs_change_seen, core/flight.c). */
struct daxfs_heal_watch {
	u64 ino;
	s64 since;		/* daxfs_mono_ns() */
};
#define DAXFS_HEAL_WATCH	8
/* How long a counter must be seen in flight, with no settled sighting
 * reported between, before a front end scans the lanes for its raiser:
 * no live op holds a raise this long but a stopped one, which the scan
 * finds.  Only a cost bound: the scan alone decides a heal. */
#define DAXFS_HEAL_AFTER_NS	1000000000LL

/* Per-host view of one mounted region. */
struct daxfs_fs {
	u8 *base;			/* mapping of the whole region */
	u64 size;
	struct daxfs_super sb;		/* validated private copy */
	struct daxfs_state *state;
	struct daxfs_host *hosts;
	struct daxfs_lane *lanes;	/* [max_hosts * DAXFS_LANES] */
	struct daxfs_bucket *buckets;
	u64 nr_buckets;
	u64 pool_off;			/* pool region [pool_off, pool_end) */
	u64 pool_end;
	u64 base_off;			/* base region, 0 if none */
	u64 base_size;
	struct daxfs_base_header bh;	/* validated copy when base_off != 0 */
	u32 host;			/* our host slot or DAXFS_NO_HOST */
	u64 host_gen;			/* generation of our slot when joined */
	u32 flags;			/* DAXFS_FS_* */
	u32 lease_ms;
	struct daxfs_pcache_view pc;	/* shared page cache (core/pcache.h) */
	/* max_hosts zeroed entries the caller provides after
	 * daxfs_fs_open(); NULL: this fs declares no host dead */
	struct daxfs_host_obs *obs;
	s64 renewed_ns;			/* our last renewal, daxfs_mono_ns() */
	/* page batches this host installed (DAXFS_FS_POPULATE maps them
	 * from the second on: a host that writes one small file does not
	 * pay for 64 pages); a hint, updated without atomics */
	u32 batches;
	/* one bit per region page this process is known to map (the front
	 * end's, core/mapped.h); NULL: none kept, every write faults its
	 * page in first (the kernel keeps none: nothing to fault in) */
	u64 *mapped;
	/* the front end stopped this host: metadata it loads directly went
	 * bad (kernel/media.c).  Fenced as if declared dead; the front end
	 * sets `shut` too, so that daxfs_op_begin fails with -EIO (it loads
	 * only `shut`) */
	bool stopped;
	/* the host was shut down (FS_IOC_SHUTDOWN, kernel/shutdown.c;
	 * daxfs_region_shutdown): daxfs_op_begin fails with -EIO, but an op
	 * already in flight is not fenced and runs to its end, so that a
	 * shutdown leaves only whole ops behind (docs/kernel.md "Shutdown") */
	bool shut;
	/* the kernel's: the count of the device's bad-block list (NULL:
	 * none), so that the media checks below cost one load inline while
	 * nothing is listed.  Set by the front end before daxfs_fs_open,
	 * which keeps it. */
	const int *media_listed;
	/* counters seen with a change in flight, by ino % DAXFS_HEAL_WATCH:
	 * a hint shared by the host's threads without atomics (a torn entry
	 * costs one scan too many or too few, never a wrong heal) */
	struct daxfs_heal_watch heal_watch[DAXFS_HEAL_WATCH];
};

/* An operation in progress: one lane claimed, one epoch announced. */
struct daxfs_op {
	struct daxfs_fs *fs;
	struct daxfs_lane *lane;	/* NULL for host-less (read-only) use */
	u32 lane_idx;
	/* this op holds state.rename_claim: the claim word names only the
	 * host, which other threads of the host share (core/namei.c) */
	bool has_claim;
	/* set while the op recovers a dead host's slot (core/hosts.c):
	 * that slot, and our claim on it, its (state, heartbeat) pair as we
	 * last set it.  daxfs_fenced() fails the op once the pair is not
	 * that any more: another survivor took the recovery over (docs/
	 * hosts.md "One recoverer at a time").  NULL: not a recovery. */
	struct daxfs_host *rhost;
	u64 rclaim[2];
	/* set by an op that removes names: the leaves its removal takes out
	 * wait here until it marked the step that makes the removal its own
	 * (core/dir.h daxfs_dir_retire_later).  NULL: retired at once. */
	struct daxfs_retire_later *later;
};

/* ---- region open, format, hosts (core/super.c, core/hosts.c) ---- */

struct daxfs_format_opts {
	u64 nr_buckets;			/* 0: automatic */
	u32 max_hosts;			/* 0: automatic (64) */
	u32 lease_ms;			/* 0: 10000 */
	u64 base_size;			/* bytes reserved for a base image */
	u64 pcache_size;		/* bytes reserved for the page cache */
	const u8 *uuid;			/* 16 bytes, or NULL for zeros */
	const u64 *hash_key;		/* 2 words of randomness */
	const char *label;
	u64 first_dyn_ino;		/* 0: 2, or base inode count + 1 */
	u64 root_ino;			/* 0: create an empty root dir (ino 1) */
	u32 root_mode, root_uid, root_gid;	/* when creating the root */
	/* page cache (pcache_size > 0): probe window (0: 32) and the
	 * backing files the base image refers to (core/pcache.h) */
	u32 pcache_window;
	u32 nr_backing;
	const struct daxfs_backing_desc *backing;
	/* the region reads as zeros already (a new file): the bucket
	 * array is left as it is instead of written */
	bool zeroed;
};

/* Lays out an empty filesystem in [base, base + size).  A base image, if
 * any, is written afterwards by the caller into the BASE region and then
 * daxfs_format_finish() creates the root from it. */
int daxfs_format(void *base, u64 size, const struct daxfs_format_opts *o);

/* Validates the superblock and region table and fills *fs.  No host is
 * joined yet (fs->host == DAXFS_NO_HOST): read-only walks work. */
int daxfs_fs_open(struct daxfs_fs *fs, void *base, u64 size, u32 flags);

/* Joins the host table: claims a free (or dead-and-recovered) slot. */
int daxfs_host_join(struct daxfs_fs *fs, const char *name, u32 pid, u32 kind);
/* Renews our lease; returns -ESTALE when we were declared dead. */
int daxfs_host_renew(struct daxfs_fs *fs);
/* Leaves cleanly: releases lanes, hands limbo to the next reclaimer. */
void daxfs_host_leave(struct daxfs_fs *fs);
int daxfs_host_retire(struct daxfs_fs *fs, u32 slot, u64 gen);
/*
 * The locks of host slot (generation gen) become ours, before we retire
 * it (the exec hand-over, docs/locks.md "Across exec"): every record it
 * holds but its waiting requests; an OFD or flock owner in [sh->lo,
 * sh->hi) moves to sh->to + (owner - sh->lo) (sh may be NULL).  Returns
 * the records taken.
 */
struct daxfs_lock_shift {
	u64 lo, hi, to;
};
int daxfs_lock_adopt(struct daxfs_fs *fs, u32 slot, u64 gen,
		     const struct daxfs_lock_shift *sh);
/*
 * The OFD and flock locks of owner on ino that host slot (generation
 * gen) holds become ours: a survivor sharing the description takes them
 * from a carrier whose process ended (docs/locks.md "Descriptions shared
 * across hosts").  Only while that host is ALIVE with gen: once it is
 * not, its records are no locks and stay its own.  Returns the records
 * taken, or -errno.
 */
int daxfs_lock_adopt_owner(struct daxfs_fs *fs, u32 slot, u64 gen, u64 ino,
			   u64 owner);
int daxfs_host_abandon(struct daxfs_fs *fs);
/* Host state for info/fsck; *lease_age_ns: how long this observer has
 * seen the slot's heartbeat unchanged (-1: no observation table). */
int daxfs_host_state(struct daxfs_fs *fs, u32 slot, u32 *state, u64 *gen,
		     s64 *lease_age_ns);
/* One observation of every slot (cheap: two loads a slot).  Returns how
 * many slots other than ours are ALIVE or RECOVERING with a lease this
 * observer cannot judge yet (enum daxfs_lease); a tool watches until 0,
 * at most about one lease (docs/hosts.md "Leases"). */
u32 daxfs_hosts_observe(struct daxfs_fs *fs);
/* The lease of slot as this observer sees it now (observes it first). */
enum daxfs_lease daxfs_host_lease(struct daxfs_fs *fs, u32 slot);
/* Records the slot's current heartbeat as first seen age_ns ago: for
 * fsck's repair of a slot it has decided is dead, and for tests. */
void daxfs_host_obs_backdate(struct daxfs_fs *fs, u32 slot, s64 age_ns);

int daxfs_op_begin(struct daxfs_fs *fs, struct daxfs_op *op);
void daxfs_op_end(struct daxfs_op *op);
/* daxfs_op_end of an op that stored nothing: no periodic reclaim under
 * DAXFS_FS_UPKEEP (core/hosts.c) */
void daxfs_op_end_read(struct daxfs_op *op);

/* Declares every host whose lease expired DEAD and recovers it (its lanes,
 * pending overlay inserts, rename intent, limbo and page batch); returns
 * how many hosts were recovered, or -errno. */
int daxfs_recover_dead_hosts(struct daxfs_fs *fs);

/* ---- bounds-checked access ---- */

/* Pointer to [off, off + len) when it lies in the pool and off is aligned
 * to align; NULL otherwise.  Inline: a create checks some 35 offsets read
 * from the region, and most of them have a constant len and align. */
static inline void *daxfs_ptr(struct daxfs_fs *fs, u64 off, u64 len, u64 align)
{
	if (daxfs_unlikely(off < fs->pool_off || off >= fs->pool_end))
		return NULL;
	if (daxfs_unlikely(len > fs->pool_end - off))
		return NULL;
	if (align > 1 && (off & (align - 1)))
		return NULL;
	return fs->base + off;
}

/*
 * daxfs_ptr for metadata a lookup reads (inode records, dirents, trie and
 * radix nodes): also NULL (the caller's -EUCLEAN) when the range lies on
 * a known bad block of the media, so that a page that went bad after the
 * mount is never loaded (a load of poison is a machine check).  The
 * kernel checks the device's bad-block list (kernel/pmem.c); user space
 * has none (fsck.daxfs --badblocks masks the pages instead).
 */
static inline void *daxfs_meta_ptr(struct daxfs_fs *fs, u64 off, u64 len, u64 align);
/* What a pool page that the core loads directly holds (for the message
 * of daxfs_media_direct_bad). */
enum daxfs_media_what {
	DAXFS_MEDIA_OPEN_SET = 0,
	DAXFS_MEDIA_LOCKS = 1,
};
/*
 * Copies n bytes of file data from the region (src) to dst: 0, or -EIO
 * when src lies on a known bad block or a load finds poison, which in
 * kernel context would be a machine check (the base bytes a write keeps
 * around its own, a split-mode cache page, a strict write's log page).
 * User space has no poison to catch: a plain copy.
 */
#ifdef __KERNEL__
int daxfs_copy_data(struct daxfs_fs *fs, void *dst, const void *src, u64 n);
/* Is anything listed bad?  One load (the checks below ask it inline and
 * call the list only when it says yes). */
static inline bool daxfs_media_listed(const struct daxfs_fs *fs)
{
	return fs->media_listed && daxfs_unlikely(daxfs_once(*fs->media_listed));
}
bool daxfs_media_bad_listed(struct daxfs_fs *fs, u64 off, u64 len);
static inline bool daxfs_media_bad(struct daxfs_fs *fs, u64 off, u64 len)
{
	return daxfs_media_listed(fs) && daxfs_media_bad_listed(fs, off, len);
}
/*
 * The fixed metadata (state page, host table, lanes, overlay table, the
 * split-mode cache's header, owners, slots and pins), which the core loads
 * directly: true when a page of it is listed bad, and the host must stop
 * (the kernel's mount is then dead and fs->stopped set: kernel/media.c).
 * daxfs_op_begin asks first.
 */
bool daxfs_media_fixed_bad_listed(struct daxfs_fs *fs);
static inline bool daxfs_media_fixed_bad(struct daxfs_fs *fs)
{
	return daxfs_media_listed(fs) && daxfs_media_fixed_bad_listed(fs);
}
/*
 * The same for a pool page that the core loads directly (an open set
 * page, a lock table page), asked before the core follows a link to it:
 * true when [off, off + len) is listed bad, and the host stopped.
 */
bool daxfs_media_direct_bad_listed(struct daxfs_fs *fs, u64 off, u64 len,
				   u32 what);
static inline bool daxfs_media_direct_bad(struct daxfs_fs *fs, u64 off,
					  u64 len, u32 what)
{
	return daxfs_media_listed(fs) &&
	       daxfs_media_direct_bad_listed(fs, off, len, what);
}
#else
static inline int daxfs_copy_data(struct daxfs_fs *fs, void *dst,
				  const void *src, u64 n)
{
	memcpy(dst, src, n);
	return 0;
}

static inline bool daxfs_media_bad(struct daxfs_fs *fs, u64 off, u64 len)
{
	return false;
}

static inline bool daxfs_media_fixed_bad(struct daxfs_fs *fs)
{
	return false;
}

static inline bool daxfs_media_direct_bad(struct daxfs_fs *fs, u64 off, u64 len,
					  u32 what)
{
	return false;
}
#endif

static inline void *daxfs_meta_ptr(struct daxfs_fs *fs, u64 off, u64 len, u64 align)
{
	void *p = daxfs_ptr(fs, off, len, align);

	if (p && daxfs_unlikely(daxfs_media_bad(fs, off, len)))
		return NULL;
	return p;
}

/* ---- overlay (core/overlay.c) ---- */

int daxfs_ov_lookup(struct daxfs_op *op, u64 key, u64 *value);
/* The same, and the index of the bucket that publishes key (*idx). */
int daxfs_ov_lookup_at(struct daxfs_op *op, u64 key, u64 *value, u64 *idx);
/*
 * Whether bucket idx publishes key with value now (a cached lookup):
 * ov_find's test at one bucket, K == key, V == value, K again.  With at
 * most one bucket publishing a key (docs/overlay.md, invariant 2) a
 * bucket that passes is the one a lookup would return at the V load,
 * whatever the probe path looks like now (docs/open-files.md
 * "Per-open-file cache").  Inline: it replaces the probe on every call.
 */
static inline bool daxfs_ov_holds(struct daxfs_fs *fs, u64 idx, u64 key,
				  u64 value)
{
	struct daxfs_bucket *b;

	if (idx >= fs->nr_buckets || !value)
		return false;
	b = &fs->buckets[idx];
	return daxfs_load(&b->key) == key && daxfs_load(&b->value) == value &&
	       daxfs_load(&b->key) == key;
}
int daxfs_ov_insert(struct daxfs_op *op, u64 key, u64 value);	/* -EEXIST */
int daxfs_ov_replace(struct daxfs_op *op, u64 key, u64 old, u64 new_value);
int daxfs_ov_delete(struct daxfs_op *op, u64 key, u64 old);

/* ---- allocator and reclamation (core/alloc.c, core/reclaim.c) ---- */

u64 daxfs_class_size(unsigned int class);
int daxfs_size_class(u64 bytes);		/* smallest class, or -EINVAL */
/* Returns a zeroed object, or 0 when the pool is full (-ENOSPC). */
u64 daxfs_alloc(struct daxfs_op *op, unsigned int class);
/* Up to n pages, physically contiguous where possible; returns how many
 * were allocated (offsets in offs[]), 0 when the pool is full.  Pages are
 * NOT zeroed (callers overwrite or zero them). */
u32 daxfs_alloc_pages(struct daxfs_op *op, u32 n, u64 *offs);
/* Up to n physically contiguous pages (offsets in offs[]) for a write,
 * named in op's lane page hold, which must be empty: from the host batch
 * in one step (docs/alloc.md "Taking pages into the hold").  Returns how
 * many, 0 when the pool is full. */
u32 daxfs_alloc_held(struct daxfs_op *op, u32 n, u64 *offs);
/* How many of want pages a write could take now (a look, not a
 * reservation: racing allocators may take them first). */
u64 daxfs_alloc_room(struct daxfs_fs *fs, u64 want);
/*
 * daxfs_free_now, daxfs_retire (and daxfs_hold_pages): -ESTALE when the op
 * is fenced (our host slot is no longer ours: recovery may have freed the
 * object already, so it leaks to fsck instead).  The caller must then store
 * nothing more into the region and return the error: what it would touch
 * next may be a record recovery freed and another host reuses
 * (docs/hosts.md "Fencing").  0 otherwise.
 */
/* Frees an object nobody else can have seen (never published). */
daxfs_must_check int daxfs_free_now(struct daxfs_op *op, u64 off,
				     unsigned int class);
/* Frees a published-then-unlinked object once no host can read it. */
daxfs_must_check int daxfs_retire(struct daxfs_op *op, u64 off,
				   unsigned int class);
/* Advances the epoch when possible and frees what is safe. */
void daxfs_reclaim(struct daxfs_op *op);
/* Gives wholly free small-object pages back as pages (docs/alloc.md
 * "Compaction"); returns how many.  Runs by itself when a page allocation
 * is about to fail; O(n log n) in the free small objects. */
u64 daxfs_compact(struct daxfs_op *op);
/* Seals every open limbo batch of our host and frees everything that is
 * safe right now (a few advance+free rounds).  Needs a joined host. */
void daxfs_reclaim_all(struct daxfs_fs *fs);

/* ---- when the pool is empty (core/space.c, docs/reclaim.md) ---- */

/* Why the last daxfs_space_wait_next() waited or gave up. */
enum {
	DAXFS_SPACE_NONE = 0,		/* nothing pending: the ENOSPC stands */
	DAXFS_SPACE_LIVE = 1,		/* a live host's op holds the epoch */
	DAXFS_SPACE_DEAD = 2,		/* a dead host, not yet recovered */
	DAXFS_SPACE_LIMIT = 3,		/* waited as long as it ever does */
	DAXFS_SPACE_GAVE_UP = 4,	/* no host, read-only, or fenced */
	DAXFS_SPACE_FREED = 5,		/* the wait's reclaim freed space */
};

/* Retry state of one failing call; zero it before the first try.  Times
 * are daxfs_mono_ns(). */
struct daxfs_space_wait {
	s64 deadline_ns;		/* 0 until the first failure */
	u32 tries;
	u32 why;			/* DAXFS_SPACE_*, for diagnostics */
	s64 limit_ns;			/* the wait never goes past it */
	s64 start_ns;			/* the first failure */
	u32 freed;			/* re-runs because the wait freed space */
	bool settled;			/* the last look found nothing pending */
	u64 owed_epoch;			/* limbo sealed up to it is owed */
	bool saw_dead;			/* the last look found a dead host */
};

/* Outside any op: is freed space still coming (limbo behind an epoch a
 * lane holds back, or a dead host not yet recovered)?  Never sleeps. */
bool daxfs_space_pending(struct daxfs_fs *fs);
/* Outside any op, after a call failed with -ENOSPC: reclaims (reaping
 * expired hosts) and returns the milliseconds the front end should sleep
 * before running the call again (0: at once), or -1: give up, the ENOSPC
 * stands (nothing pending; a live host's op still holding the epoch after
 * about one lease plus a margin; dead hosts still unrecovered after four
 * times that). */
int daxfs_space_wait_next(struct daxfs_fs *fs, struct daxfs_space_wait *w);

/*
 * Hosts that map pool pages into processes (daxfs.ko's mmap) hold back
 * their reuse (docs/reclaim.md, "Mapping hosts").  daxfs_map_first before
 * the host's first mapping; a revalidation pass starts with e =
 * daxfs_map_pass_epoch, unmaps every page no longer in its file, then
 * calls daxfs_map_announce(fs, e), or (fs, 0) when nothing is mapped.
 */
void daxfs_map_first(struct daxfs_fs *fs);
u64 daxfs_map_pass_epoch(struct daxfs_fs *fs);
void daxfs_map_announce(struct daxfs_fs *fs, u64 e);
/* A host waiting for space asks a lagging mapping host for an early pass;
 * the mapping host polls daxfs_map_pass_asked between its ticks. */
void daxfs_map_ask_pass(struct daxfs_fs *fs, u32 slot, u64 want);
bool daxfs_map_pass_asked(struct daxfs_fs *fs);

/* ---- names (core/hash.c) ---- */

u64 daxfs_name_hash(const struct daxfs_fs *fs, const char *name, u32 len);
u64 daxfs_mix64(u64 key);
u32 daxfs_crc32c(u32 crc, const void *data, size_t len);

/* ---- inodes and namespace (core/inode.c, core/dir.c, core/namei.c) ---- */

struct daxfs_attr {
	u64 ino;
	u32 mode, uid, gid, nlink;
	u64 size, blocks;		/* blocks: 4 KiB units */
	s64 atime_ns, mtime_ns, ctime_ns;
	u64 rdev;
	u64 change;
	u32 generation;
	u32 flags;			/* DAXFS_FL_* (chattr); was padding */
};

/* daxfs_setattr valid mask */
#define DAXFS_ATTR_MODE		(1u << 0)
#define DAXFS_ATTR_UID		(1u << 1)
#define DAXFS_ATTR_GID		(1u << 2)
#define DAXFS_ATTR_SIZE		(1u << 3)
#define DAXFS_ATTR_ATIME	(1u << 4)
#define DAXFS_ATTR_MTIME	(1u << 5)
#define DAXFS_ATTR_CTIME	(1u << 6)
/* a chown, also of (-1, -1): a non-directory loses S_ISUID, and S_ISGID
 * with group execution, unless MODE is given too (as do UID and GID) */
#define DAXFS_ATTR_CHOWN	(1u << 7)

int daxfs_getattr(struct daxfs_fs *fs, u64 ino, struct daxfs_attr *attr);
int daxfs_setattr(struct daxfs_fs *fs, u64 ino, u32 valid,
		  const struct daxfs_attr *attr);

/*
 * Attribute flags (chattr(1), core/iflags.c, docs/attrs.md), with Linux's
 * FS_*_FL values (FS_IOC_GETFLAGS / FS_IOC_SETFLAGS).  Every host refuses
 * with -EPERM what an immutable or append-only inode forbids.
 */
#define DAXFS_FL_SYNC		0x00000008u	/* S: synchronous writes */
#define DAXFS_FL_IMMUTABLE	0x00000010u	/* i */
#define DAXFS_FL_APPEND		0x00000020u	/* a: append only */
#define DAXFS_FL_NODUMP		0x00000040u	/* d: no dump(8) */
#define DAXFS_FL_NOATIME	0x00000080u	/* A: no atime updates */
#define DAXFS_FL_SUPPORTED	(DAXFS_FL_SYNC | DAXFS_FL_IMMUTABLE | \
				 DAXFS_FL_APPEND | DAXFS_FL_NODUMP | \
				 DAXFS_FL_NOATIME)
/* What the caller may do, decided by the front end from its credentials
 * (the core knows no callers): */
#define DAXFS_MAY_OWNER		(1u << 0)	/* owns the inode, or CAP_FOWNER */
#define DAXFS_MAY_IMMUTABLE	(1u << 1)	/* CAP_LINUX_IMMUTABLE: i and a */
int daxfs_getflags(struct daxfs_fs *fs, u64 ino, u32 *flags);
/* Sets the inode's flags to flags (DAXFS_FL_*): -EOPNOTSUPP for another
 * bit, -EPERM without DAXFS_MAY_OWNER, or when i or a changes without
 * DAXFS_MAY_IMMUTABLE, or when an immutable inode that stays immutable
 * would change another flag than a.  Setting i or a on a regular file
 * waits for the writes in flight (its write gate): none stores after. */
int daxfs_setflags(struct daxfs_fs *fs, u64 ino, u32 flags, u32 may);

int daxfs_lookup(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		 u64 *ino);
/* daxfs_lookup, then daxfs_getattr of the inode found (attr non-NULL),
 * in one operation (a path walk needs both for every name it passes). */
int daxfs_lookup_attr(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		      u64 *ino, struct daxfs_attr *attr);
/* The same through fc, the cache of inode expect's record, when the name
 * maps to that inode (a front end revalidating its cached name).
 * *dir_change (may be NULL): a change counter loaded before the name was
 * looked up that vouches for the answer while it still shows this value
 * (docs/kernel.md "Dentries"): with expect, expect's (every removal of a
 * name of an inode moves its counter after it is published), else dir's
 * (every change of a directory's entries moves its counter after it is
 * published).  0: none (no record: a pristine base directory, whose
 * entries change only after a copy-up, or an expect that is gone). */
struct daxfs_fcache;
int daxfs_lookup_attr_fc(struct daxfs_fs *fs, u64 dir, const char *name,
			 u32 len, u64 *ino, u64 expect,
			 struct daxfs_fcache *fc, struct daxfs_attr *attr,
			 u64 *dir_change);
/*
 * The last two names of a path in one operation (libdaxfs' walk: the
 * directory a name is in is looked up in the op that uses it, not in one
 * of its own).  daxfs_lookup_attr of name in the directory called pname
 * in dir; *pdir: that directory, or 0 when pname names none (no such
 * name, a symlink, another file, an error before it was found: the
 * caller looks pname up itself, and gets what its walk answers there).
 */
int daxfs_lookup_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		    const char *name, u32 len, u64 *pdir, u64 *ino,
		    struct daxfs_attr *attr);
/* Regular files, FIFOs, sockets, device nodes (mode carries the type).
 * These three set *ino to the new inode, and on -EEXIST to the inode the
 * name had when they found it (as a daxfs_lookup would: it may be gone
 * already), or leave it as it was when the name appeared during the
 * create (a race lost at the link). */
int daxfs_mknod(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		u32 mode, u32 uid, u32 gid, u64 rdev, u64 *ino);
/* daxfs_mknod, daxfs_unlink of name in the directory called pname in
 * dir, looked up in the same operation; *pdir as daxfs_lookup_at's, and
 * with *pdir 0 nothing was changed that a lookup of pname would not
 * change (what pname names is not taken writable: no copy-up). */
int daxfs_mknod_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		   const char *name, u32 len, u32 mode, u32 uid, u32 gid,
		   u64 rdev, u64 *pdir, u64 *ino);
int daxfs_unlink_at(struct daxfs_fs *fs, u64 dir, const char *pname, u32 plen,
		    const char *name, u32 len, u64 *pdir);
int daxfs_mkdir(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		u32 mode, u32 uid, u32 gid, u64 *ino);
int daxfs_symlink(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		  const char *target, u32 tlen, u32 uid, u32 gid, u64 *ino);
/* Copies at most bufsize bytes, returns the target length. */
int daxfs_readlink(struct daxfs_fs *fs, u64 ino, char *buf, u32 bufsize);
/*
 * POSIX unlink of open files across hosts (core/openset.c,
 * docs/open-files.md).  daxfs_open_get publishes one open of ino in this
 * host's open set: while it stands, an unlink of the last name on any
 * host leaves the inode usable by number (nlink 0) instead of freeing it.
 * -ENOENT gone or already unlinked, -EISDIR a directory, -ENFILE this
 * host's set is full (DAXFS_OPEN_MAX_PAGES x DAXFS_OPEN_ENTRIES opens),
 * -ENOSPC no page for it.  A host-less (read-only) view publishes nothing
 * and gets 0.  daxfs_open_put undoes one get (-EBADF: none) and frees the
 * inode when that was the last hold anywhere on an unlinked file.
 */
int daxfs_open_get(struct daxfs_fs *fs, u64 ino);
/* daxfs_open_get that also opens an unlinked file (nlink 0) while host
 * slot's set still names it (the opener's fork parent, or its image
 * before exec): -ENOENT once that open is gone.  slot our own: while
 * another open of ours holds it (a mapping of a file a descriptor holds).
 * slot DAXFS_NO_HOST: plain daxfs_open_get. */
int daxfs_open_get_held(struct daxfs_fs *fs, u64 ino, u32 slot);
int daxfs_open_put(struct daxfs_fs *fs, u64 ino);
/* daxfs_open_put through the caller's cache of ino's record (may be
 * NULL): the settle after the entry's removal finds the record by it */
struct daxfs_fcache;
int daxfs_open_put_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc);
/* Frees ino if it is an unlinked orphan that no host holds open; 0 also
 * when it is not one (or gone). */
int daxfs_inode_release(struct daxfs_fs *fs, u64 ino);
/* Opens in slot's set (and its pages in *pages, may be NULL). */
u32 daxfs_open_count(struct daxfs_fs *fs, u32 slot, u32 *pages);
int daxfs_rmdir(struct daxfs_fs *fs, u64 dir, const char *name, u32 len);
/* link(2) of the name sdir/sname as dir/name: the inode that name names
 * when the link takes effect (ino 0), or -ENOENT if that is not ino (a
 * caller holding an inode: the kernel); -ENOENT once the name is gone,
 * however close the race (it is held until the new one is published,
 * docs/namespace.md). */
int daxfs_link_name(struct daxfs_fs *fs, u64 sdir, const char *sname,
		    u32 slen, u64 ino, u64 dir, const char *name, u32 len);
/* link by inode number alone (no source name to hold): serialized with
 * renames, but an unlink of the inode's last name racing it may leave
 * the new name on an inode that had none for an instant. */
int daxfs_link(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
	       u32 len);
/*
 * A change counter (daxfs_lookup_attr_fc's, a peek's, struct
 * daxfs_linked's) vouches for a name or a listing only when it shows no
 * entry change in flight (docs/kernel.md "Changes in flight").
 */
static inline bool daxfs_change_settled(u64 change)
{
	return !(change >> DAXFS_CHANGE_FLIGHT_SHIFT);
}

/*
 * A front end that vouches by counters saw ino's counter at w.  True when
 * it has been seen in flight for DAXFS_HEAL_AFTER_NS with no settled
 * sighting between (a front end may report only the sightings in flight;
 * then at most once a period): the front end should
 * heal it (daxfs_change_heal_now) where it may write.  A raise left by a
 * host fenced between its check and its add, or by a recoverer that died,
 * would otherwise keep every name under it looked up until fsck.  No op,
 * no store to the region.
 */
bool daxfs_change_seen(struct daxfs_fs *fs, u64 ino, u64 w);
/* The heal of ino's counter, now, in an op of its own: stored only when
 * no live intent may have raised it (core/flight.c).  True when it
 * stored. */
bool daxfs_change_heal_now(struct daxfs_fs *fs, u64 ino);

/* What a heal, fsck's repair or a conversion stores for change: the count
 * moved by one (so no front end takes it for a word it saw), nothing in
 * flight. */
static inline u64 daxfs_change_cleared(u64 change)
{
	return ((change & DAXFS_CHANGE_COUNT_MASK) + 1) & DAXFS_CHANGE_COUNT_MASK;
}

/* What a fold stores for a marked word (daxfs_change_fold): the count
 * moved by one, the mark clear, what is in flight kept. */
static inline u64 daxfs_change_folded(u64 change)
{
	return (change & ~(DAXFS_CHANGE_COUNT_MASK | DAXFS_CHANGE_WRITTEN)) |
	       daxfs_change_cleared(change);
}

/*
 * Whether bytes a front end copied after loading the counter as seen may
 * be older than the file's, now that it loads now: the word moved, or it
 * still carries a rewrite's mark, which a read-only host cannot fold (the
 * FUSE poller, tests/c/test_peek.c's observer).  Attributes need only the
 * first: a mark changes none.
 */
static inline bool daxfs_change_bytes_moved(u64 seen, u64 now)
{
	return now != seen || (now & DAXFS_CHANGE_WRITTEN);
}

/* Whether two words of one counter have the same count and flight bits:
 * no attribute changed between them (a rewrite's mark changes none). */
static inline bool daxfs_change_same_count(u64 a, u64 b)
{
	return !((a ^ b) & ~DAXFS_CHANGE_WRITTEN);
}

/*
 * Whether now is seen after exactly one fold of seen (a getattr's, on any
 * host) and nothing else: every other change adds to the count or to what
 * is in flight, and only a fold clears the mark and keeps the rest.  One
 * look-alike: from a seen with nothing in flight, a raise whose host died
 * and its heal (count + 1, all cleared) give the same word.  A raise is a
 * namespace op's (a link count, a ctime), never an extended attribute's,
 * so a caller that compares the link count misses no change that matters.
 */
static inline bool daxfs_change_only_folded(u64 seen, u64 now)
{
	return (seen & DAXFS_CHANGE_WRITTEN) && now == daxfs_change_folded(seen);
}

/*
 * O_TMPFILE (core/tmpfile.c, docs/open-files.md "Unnamed files"): a new
 * regular file with no name, held open by this host (one open-set entry,
 * as daxfs_open_get; the caller's daxfs_open_put ends it and frees it
 * unless it was linked).  dir only has to be a live directory.
 * daxfs_link_unnamed gives a file this host holds open its first name
 * (linkat of an O_TMPFILE descriptor); -ENOENT if we do not hold it.
 * daxfs_link_created is that for a create made as a held tmpfile: the
 * file's three times become the instant it was named, as open(O_CREAT);
 * *out (may be NULL; zeroed on failure) as struct daxfs_linked says.
 */
struct daxfs_linked {
	/* the change counter the file has after the call unless another
	 * host changed it or removed the name since it was published: it
	 * vouches for the name while it stands (daxfs_lookup_attr_fc,
	 * docs/kernel.md "Dentries") */
	u64 vouch;
	/* the file's and the directory's attributes right after, loaded in
	 * the call's op (ino 0: none): a front end's refresh needs no op */
	struct daxfs_attr inode, dir;
	/* the directory's change counter right before the call's one move
	 * of it: a front end whose last look at the directory saw this, and
	 * that finds dir.change one above, knows that nothing but the call
	 * changed the directory since (its cached ACLs stand) */
	u64 dir_pre;
	/* an unlink's: the last link went and the inode is freed (its
	 * free claimed in the call's op), so no host holds it open and a
	 * front end need not look whether it is an orphan */
	bool gone;
};
/*
 * daxfs_mknod, daxfs_mkdir (mode's type DAXFS_S_IFDIR) or daxfs_symlink
 * (DAXFS_S_IFLNK, to target) in one call, for a front end that keeps
 * names: also *out (may be NULL; zeroed on failure) as struct
 * daxfs_linked says, its vouch the new inode's counter from before its
 * name was published (nothing in the call touches it after).
 */
struct daxfs_node {
	u32 mode, uid, gid;
	u64 rdev;		/* a device's */
	const char *target;	/* a symlink's */
	u32 tlen;
};
int daxfs_make_node(struct daxfs_fs *fs, u64 dir, const char *name, u32 len,
		    const struct daxfs_node *nd, u64 *ino,
		    struct daxfs_linked *out);
int daxfs_unlink(struct daxfs_fs *fs, u64 dir, const char *name, u32 len);
/* The same, with *out (may be NULL; zeroed on failure) as struct
 * daxfs_linked says, but no vouch: the directory's attributes after, and
 * the inode's when it has links left (else out->inode.ino 0: it went, or
 * is an orphan held open somewhere). */
int daxfs_unlink_attr(struct daxfs_fs *fs, u64 dir, const char *name,
		      u32 len, struct daxfs_linked *out);
/* The same through the caches of a front end that keeps them (struct
 * daxfs_fcache; each may be NULL): dfc of dir's record, fc of the record
 * of ino, the inode it believes the name names (used only if it still
 * does).  A record a cache still names is the one a lookup would find. */
int daxfs_unlink_fc(struct daxfs_fs *fs, u64 dir, struct daxfs_fcache *dfc,
		    const char *name, u32 len, u64 ino, struct daxfs_fcache *fc,
		    struct daxfs_linked *out);
int daxfs_tmpfile(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid, u32 gid,
		  u64 *ino);
/* The same, with the file's attributes right after, loaded in the call's
 * op (attr->ino 0: none): a front end attaches its inode with no op. */
int daxfs_tmpfile_attr(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid,
		       u32 gid, u64 *ino, struct daxfs_attr *attr);
/* The same for a node of any type but a directory or symlink (mode holds
 * the type; rdev for a device): the whiteout a RENAME_WHITEOUT leaves is
 * made this way first, so that a full pool fails the call before the
 * rename did anything (kernel/tmpfile.c). */
int daxfs_tmpnode(struct daxfs_fs *fs, u64 dir, u32 mode, u32 uid, u32 gid,
		  u64 rdev, u64 *ino);
int daxfs_link_unnamed(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
		       u32 len);
int daxfs_link_created(struct daxfs_fs *fs, u64 ino, u64 dir, const char *name,
		       u32 len, struct daxfs_linked *out);
/*
 * daxfs_tmpfile_attr, then daxfs_link_created, in one op (the kernel's
 * create of a regular file): *ino is set once the file is made and held,
 * also when its naming then fails (-EEXIST, -ENOSPC...: the caller's
 * daxfs_open_put frees it, or it calls daxfs_link_created again); 0 when
 * no file was made.  out as daxfs_link_created's (the file's attributes
 * once named; none for a file made but not named: a getattr gives them);
 * dfc (may be NULL) the caller's cache of dir's record, as
 * daxfs_unlink_fc's.
 */
int daxfs_create_held(struct daxfs_fs *fs, u64 dir, struct daxfs_fcache *dfc,
		      u32 mode, u32 uid, u32 gid, const char *name, u32 len,
		      u64 *ino, struct daxfs_linked *out);

#define DAXFS_RENAME_NOREPLACE	(1u << 0)	/* same values as Linux */
#define DAXFS_RENAME_EXCHANGE	(1u << 1)
#define DAXFS_RENAME_WHITEOUT	(1u << 2)
/* DAXFS_RENAME_WHITEOUT needs a whiteout: daxfs_rename_whiteout makes one
 * (a character device 0/0 owned by uid, gid), or daxfs_rename_wh takes wh,
 * a nameless node this host holds (daxfs_tmpnode), which the caller's
 * daxfs_open_put lets go afterwards (freeing it if the rename failed).
 * Either way the old name is replaced by the whiteout in the rename's own
 * step, under its intent: all or nothing, also across a crash
 * (docs/recovery.md "Namespace protocols"). */
int daxfs_rename(struct daxfs_fs *fs, u64 sdir, const char *sname, u32 slen,
		 u64 ddir, const char *dname, u32 dlen, u32 flags);
int daxfs_rename_wh(struct daxfs_fs *fs, u64 sdir, const char *sname, u32 slen,
		    u64 ddir, const char *dname, u32 dlen, u32 flags, u64 wh);
int daxfs_rename_whiteout(struct daxfs_fs *fs, u64 sdir, const char *sname,
			  u32 slen, u64 ddir, const char *dname, u32 dlen,
			  u32 flags, u32 uid, u32 gid);

/* readdir: positions 0 and 1 are "." and ".."; entries follow in hash
 * order and their position is hash + 2 (never 0 or 1).  *pos is the
 * position to resume at.  The callback returns non-zero to stop; the
 * entry it stopped on is returned again at the next call. */
#define DAXFS_POS_EOF	(~0ULL)
typedef int (*daxfs_filldir_t)(void *ctx, const char *name, u32 len,
			       u64 ino, u32 dtype, u64 pos);
int daxfs_readdir(struct daxfs_fs *fs, u64 dir, u64 *pos,
		  daxfs_filldir_t fill, void *ctx);

/* ---- file data (core/file.c) ---- */

/* Read: the callback is called for successive pieces of [off, off+len)
 * clamped to the file size; src == NULL means "len zero bytes" (a hole).
 * It returns how many bytes it consumed (< len stops the read, e.g. on
 * a fault).  Returns bytes read or -errno. */
typedef u64 (*daxfs_read_actor_t)(void *ctx, const void *src, u64 len);
s64 daxfs_read(struct daxfs_fs *fs, u64 ino, u64 off, u64 len,
	       daxfs_read_actor_t actor, void *ctx);

/* Write: the callback fills dst (len bytes, inside allocated file pages)
 * and returns how many bytes it wrote.  With DAXFS_WRITE_APPEND the
 * range is reserved atomically at the end of the file and *pos returns
 * where the data went.  The size grows by CAS-to-maximum. */
#define DAXFS_WRITE_APPEND	(1u << 0)
/* The write is atomic for readers that read with daxfs_read_atomic, on
 * every host: it holds the file's write gate closed while it stores
 * (core/atomicw.c, docs/modes.md "strict"). */
#define DAXFS_WRITE_ATOMIC	(1u << 1)
/* All of the write or, for want of space, nothing: -ENOSPC before it
 * stores a byte when the pool cannot give its new pages now, so that a
 * space wait can run it again whole.  Without it a write that meets the
 * full pool part-way returns the bytes it stored (docs/reclaim.md "Short
 * writes"). */
#define DAXFS_WRITE_WHOLE	(1u << 2)
/*
 * Only if the file's change counter is still attr->change (daxfs_write_attr
 * only): the caller made its checks (limits, set-id bits, flags) on
 * attributes it cached at that counter, and no peek before the call proved
 * them current.  When the record's counter differs, nothing is stored,
 * attr gets the record's attributes and the call returns
 * DAXFS_WRITE_CHANGED: the caller checks again on those and retries
 * (docs/kernel.md "Writes checked on cached attributes").
 */
#define DAXFS_WRITE_IF_CHANGE	(1u << 3)
#define DAXFS_WRITE_CHANGED	(-EREMCHG)
/*
 * A rewrite that changes no attribute (no size moved, no page allocated,
 * the stamps fresh) marks the change counter (DAXFS_CHANGE_WRITTEN)
 * instead of moving it, and only loads it while it is marked: writers of
 * one file on several CPUs then share its line (docs/files.md "The change
 * counter of a rewrite").  A front end that counts its own writes' moves
 * of the counter (daxfs.ko, docs/kernel.md "Data") takes them from
 * daxfs_write_attr's *moved.
 */
#define DAXFS_WRITE_MARK	(1u << 4)
/* The actor may copy with streaming (weakly ordered) stores and leave them
 * unfenced: the core fences once after the copies of a range, before it
 * publishes a page or moves the size (core/file.c daxfs_copy_fenced). */
typedef u64 (*daxfs_write_actor_t)(void *ctx, void *dst, u64 len);
s64 daxfs_write(struct daxfs_fs *fs, u64 ino, u64 off, u64 len, u32 flags,
		daxfs_write_actor_t actor, void *ctx, u64 *pos);

/* A read that never sees part of a DAXFS_WRITE_ATOMIC write: it waits
 * while the file's gate is closed and reads again when a write or a
 * truncate ran meanwhile (core/atomicw.c).  Same contract as daxfs_read;
 * before reading again it calls restart(ctx), which must make the actor
 * start over at the first byte. */
s64 daxfs_read_atomic(struct daxfs_fs *fs, u64 ino, u64 off, u64 len,
		      daxfs_read_actor_t actor, void (*restart)(void *ctx),
		      void *ctx);

int daxfs_truncate(struct daxfs_fs *fs, u64 ino, u64 size);

/*
 * Per-open-file cache of where the inode's record is: the overlay bucket
 * that publishes INODE(ino) and the record's offset, so that a call
 * checks one bucket instead of hashing and probing (docs/open-files.md
 * "Per-open-file cache").  The caller owns it (in its open-file object)
 * and zeroes it at open; the core fills it and checks it on every use,
 * inside the call's op: a cache that fails the check (the record was
 * freed, moved, reused, overwritten, or the words are torn or garbage)
 * is dropped and the inode looked up as without one.  It holds region
 * offsets only, so processes that map the region at other addresses may
 * share it, and threads may use it at once without a lock (each word is
 * loaded and stored whole; any mix of words passes only when it names
 * the record a lookup finds).  NULL: no cache.
 */
struct daxfs_fcache {
	u64 rec;			/* offset of the inode record; 0: none */
	u64 bucket;			/* overlay bucket publishing it */
	/* where the last write through this open file ended: a front
	 * end's hint for the copy it makes (lib/copy.h); never read by
	 * the core */
	u64 write_end;
	/* pages written through this open file, and the page after the
	 * furthest one written (both saturating): a front end's hint that
	 * the program rewrites what it wrote (lib/copy.h); never read by
	 * the core */
	u32 wrote;
	u32 reach;
	/* the copy libdaxfs' writes make, as the program's pace shows
	 * it (lib/pace.h); also never read by the core */
	struct daxfs_write_pace {
		/* clock at the last paced write, its low 32 bits: only
		 * cycles shorter than 2^20 ticks count */
		u32 last;
		u32 state;		/* round's phase, usual copy, counts */
		u32 sum[2];		/* the round's cycles: tried, usual */
	} pace;
};
/*
 * A lane-free look at ino's record through fc (docs/kernel.md "Peeks"):
 * its change counter, size (a directory: its entry count), link count and
 * mode, when fc names ino's live published record before and after they
 * are loaded.  -EAGAIN otherwise (no cache, one that no longer fits, a
 * host shut down or declared dead): make the core op instead.  Takes no
 * lane, writes nothing, never sleeps: callable where a front end cannot
 * block (the kernel's RCU path walk).  Equal values mean what an op's
 * getattr would have found equal at that moment.
 */
struct daxfs_peek {
	u64 change, size;
	u32 nlink, mode;
};
int daxfs_attr_peek(struct daxfs_fs *fs, u64 ino,
		    const struct daxfs_fcache *fc, struct daxfs_peek *pk);
/*
 * The cluster's attribute epoch (format 15, docs/kernel.md "Permission
 * checks and the attribute epoch"): +1 after every published change of
 * an inode's mode, owners, access ACL or immutable/append-only flags, and
 * at every recovery of a dead host.  Load it before the attributes; while
 * it reads the same, they still hold.  0 when this fs may answer from no
 * cache (shut down, declared dead, bad media).  Never sleeps.
 */
u64 daxfs_attr_epoch(struct daxfs_fs *fs);
void daxfs_attr_epoch_bump(struct daxfs_fs *fs);
s64 daxfs_read_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		  u64 off, u64 len, daxfs_read_actor_t actor, void *ctx);
/*
 * daxfs_read_fc with no op (core/optread.c, docs/files.md "Lane-free
 * reads"): a seqlock reader of the file's write gate.  -EAGAIN when it
 * cannot answer (no cache, not an overlay-only regular file, the gate
 * closed or moved during the read, an error): then make the op's read,
 * with the actor's context reset.  Before it returns the actor may have
 * been handed any bytes of the region: never a buffer whose reader may
 * not see the whole region (daxfs.ko's user copies).
 */
s64 daxfs_read_optimistic(struct daxfs_fs *fs, u64 ino,
			  const struct daxfs_fcache *fc, u64 off, u64 len,
			  daxfs_read_actor_t actor, void *ctx);
s64 daxfs_write_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		   u64 off, u64 len, u32 flags, daxfs_write_actor_t actor,
		   void *ctx, u64 *pos);
/* daxfs_write_fc that also gives the file's attributes after the write
 * (attr->ino 0: none, as after an error), loaded in the write's own op:
 * the front end's refresh after a write needs no op of its own.  *moved
 * (moved may be NULL): whether the write moved the change counter's count
 * (by one); false when it wrote nothing or only marked it
 * (DAXFS_WRITE_MARK). */
s64 daxfs_write_attr(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		     u64 off, u64 len, u32 flags, daxfs_write_actor_t actor,
		     void *ctx, u64 *pos, struct daxfs_attr *attr, bool *moved);
s64 daxfs_read_atomic_fc(struct daxfs_fs *fs, u64 ino,
			 struct daxfs_fcache *fc, u64 off, u64 len,
			 daxfs_read_actor_t actor, void (*restart)(void *ctx),
			 void *ctx);
int daxfs_truncate_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		      u64 size);
/* daxfs_read_atomic_fc that also gives what a peek loads (pk, may be
 * NULL: mode, link count, size, change counter), in the read's own op
 * before its data: a front end that finds them equal to its inode's needs
 * no op of its own; else it refreshes (docs/kernel.md "Coherence").
 * pk->mode stays as the caller set it when the read found no inode. */
s64 daxfs_read_atomic_peek(struct daxfs_fs *fs, u64 ino,
			   struct daxfs_fcache *fc, u64 off, u64 len,
			   daxfs_read_actor_t actor,
			   void (*restart)(void *ctx), void *ctx,
			   struct daxfs_peek *pk);
/* daxfs_getattr through the cache: a front end that revalidates its
 * inode before every read and write (daxfs.ko) pays no overlay probe */
int daxfs_getattr_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		     struct daxfs_attr *attr);

/* For mmap/DAX: region offset of the page holding file block blk,
 * allocating (zeroed) when alloc is set.  *off = 0 for a hole. */
int daxfs_map_block(struct daxfs_fs *fs, u64 ino, u64 blk, bool alloc,
		    u64 *off);

/* For a 2 MiB mapping (daxfs.ko's PMD faults, docs/kernel.md "PMD
 * mappings of runs"): *run = the region offset of the run (format 11, docs/files.md
 * "Runs") that holds block blk, 0 when blk's aligned 2 MiB is not one run.
 * writable: the caller maps it for stores, refused (-EPERM) for an
 * immutable or append-only file as daxfs_map_block refuses it.  Changes
 * nothing. */
int daxfs_block_run(struct daxfs_fs *fs, u64 ino, u64 blk, bool writable,
		    u64 *run);

/* For revalidating mappings of borrowed pages (a base-region page or a
 * cache slot shown for blk): *borrowed is set when blk still has no
 * overlay page and its base data is still visible, a whole page (or the
 * base file's partial last page) below EOF.  Changes nothing. */
int daxfs_block_borrowed(struct daxfs_fs *fs, u64 ino, u64 blk, bool *borrowed);
/* The overlay (pool) page of block blk in *pg, 0 when it has none; never
 * allocates or copies up (mapping revalidation). */
int daxfs_block_page(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *pg);
/* daxfs_block_page that also tells whether the page is unwritten (a
 * mapping host drops its mapping of such a page: a store through it
 * must fault first, which clears the flag; docs/files.md). */
int daxfs_block_state(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *pg,
		      bool *unwritten);
/* The first block at or after *blk and before end that has an overlay
 * (pool) page: *blk gets that block and *pg its page.  *pg 0: none in
 * [old *blk, new *blk), and the walk goes on at *blk while it is below
 * end (each call reads a bounded number of slots; missing subtrees are
 * skipped whole, so a sparse file of 2^48 bytes costs a few calls). */
int daxfs_next_page(struct daxfs_fs *fs, u64 ino, u64 *blk, u64 end, u64 *pg);

/* ---- fallocate, holes and extents (core/falloc.c, core/extent.c,
 * docs/files.md "fallocate") ---- */

/* The mode bits of fallocate(2), with Linux's values. */
#define DAXFS_FALLOC_KEEP_SIZE	0x01u
#define DAXFS_FALLOC_PUNCH_HOLE	0x02u
#define DAXFS_FALLOC_ZERO_RANGE	0x10u
/*
 * Mode 0 / KEEP_SIZE: every block of [off, off + len) gets a page (holes
 * stay zero) and, without KEEP_SIZE, the size grows to off + len.
 * PUNCH_HOLE (with KEEP_SIZE): [off, off + len) reads as zeros and its
 * whole pages are freed.  ZERO_RANGE: the range reads as zeros, its
 * blocks keep (or get) pages; the size grows unless KEEP_SIZE.  -EINVAL,
 * -EFBIG, -EOPNOTSUPP (another mode), -ENOSPC (no byte changed: pages
 * made before it stay and read as the holes they filled).
 */
int daxfs_fallocate(struct daxfs_fs *fs, u64 ino, u32 mode, u64 off, u64 len);

/* lseek(2)'s whence values for holes */
#define DAXFS_SEEK_DATA		3
#define DAXFS_SEEK_HOLE		4
/* *res = the first data (or hole) byte at or after off, below the size
 * (EOF is a hole); -ENXIO when off is at or beyond EOF or no data
 * follows.  Data is a block with a page or with visible base bytes. */
int daxfs_seek_hole_data(struct daxfs_fs *fs, u64 ino, u64 off, int whence,
			 u64 *res);

/* One run of blocks with data, for FIEMAP: bytes [logical, logical +
 * length) of the file lie at region offset physical onwards. */
struct daxfs_extent {
	u64 logical;
	u64 physical;
	u64 length;			/* 0: no extent at or after the offset */
	u32 flags;			/* DAXFS_EXTENT_* */
	u32 pad;
};
#define DAXFS_EXTENT_BASE	(1u << 0)	/* shared, read-only base image */
#define DAXFS_EXTENT_NOPHYS	(1u << 1)	/* base bytes in a backing file */
/* pages that hold only zeros, made by fallocate or ZERO_RANGE (format 8,
 * FIEMAP_EXTENT_UNWRITTEN); data for SEEK_DATA all the same */
#define DAXFS_EXTENT_UNWRITTEN	(1u << 2)
/* The first extent that ends after off (it may start before off, at a
 * block boundary).  Runs of physically contiguous pages are one extent;
 * ext->length = 0 when no block at or after off has data. */
int daxfs_next_extent(struct daxfs_fs *fs, u64 ino, u64 off,
		      struct daxfs_extent *ext);

/* ---- advisory locks across hosts (core/lock.c, docs/locks.md) ---- */

#define DAXFS_LOCK_EOF		(~0ULL)	/* end of a lock "to EOF and beyond" */

enum daxfs_lock_type {
	DAXFS_LCK_UN = 0,		/* unlock */
	DAXFS_LCK_RD = 1,		/* shared */
	DAXFS_LCK_WR = 2,		/* exclusive */
};

enum daxfs_lock_kind {
	DAXFS_LCK_POSIX = 1,		/* fcntl F_SETLK: owner = a process */
	DAXFS_LCK_OFD = 2,		/* F_OFD_SETLK: owner = an open file */
	DAXFS_LCK_FLOCK = 3,		/* flock(2): whole file, own class */
};

/*
 * Or'ed into the kind of an OFD or flock request (set, get, cancel): the
 * owner is an open file description shared by processes that are each a
 * host (the preload after fork), and its id is the same in all of them
 * and unique across hosts.  Its records held by another live host are
 * this owner's: they move to us, under the bucket claim, before the
 * request (docs/locks.md "Descriptions shared across hosts").
 */
#define DAXFS_LCK_SHARED	(1u << 31)

/*
 * One lock request or one lock reported.  An owner is named by this
 * host's slot and generation plus owner, an id the front end picks and
 * keeps unique on this host while the owner holds locks (a process for
 * POSIX, an open file description for OFD and flock).  POSIX and OFD
 * locks conflict with each other; flock locks only with flock locks.
 */
struct daxfs_lock_req {
	u64 start, end;			/* bytes, inclusive; end may be EOF */
	u64 owner;
	u32 type;			/* enum daxfs_lock_type */
	u32 kind;			/* enum daxfs_lock_kind */
	u32 pid;			/* shown to F_GETLK on every host */
	u32 host;			/* daxfs_lock_get: the holder's slot */
	u64 seq;			/* -EAGAIN: change count to wait on */
};

/* daxfs_lock_set flags */
#define DAXFS_LOCK_WAIT		(1u << 0)	/* F_SETLKW: a POSIX request
						 * that conflicts is published
						 * as waiting and checked for
						 * a deadlock (-EDEADLK) */

/*
 * Sets (type RD/WR) or removes (UN) the owner's lock on [start, end] of
 * ino with Linux semantics: the owner's own locks in the range are
 * replaced, split or merged.  0; -EAGAIN a lock of another owner
 * conflicts (nothing changed; r->seq: wait with daxfs_lock_changed and
 * call again); -EDEADLK (WAIT, POSIX): waiting would close a cycle of
 * owners waiting for each other; -ENOLCK the inode's bucket is full or
 * no page for it; -EINVAL bad request.  A blocking caller that gives up
 * calls daxfs_lock_cancel.
 */
int daxfs_lock_set(struct daxfs_fs *fs, u64 ino, struct daxfs_lock_req *r,
		   u32 flags);
/* F_GETLK: r->type DAXFS_LCK_UN when r could be set, else r holds the
 * first conflicting lock (type, range, pid, host, owner, kind). */
int daxfs_lock_get(struct daxfs_fs *fs, u64 ino, struct daxfs_lock_req *r);
/* A waiter gives up (signal, timeout): its waiting record goes. */
void daxfs_lock_cancel(struct daxfs_fs *fs, u64 ino,
		       const struct daxfs_lock_req *r);
/* One load: has ino's bucket changed since r->seq was taken? */
bool daxfs_lock_changed(struct daxfs_fs *fs, u64 ino, u64 seq);
/* How long a waiter sleeps before its round-th look without a change
 * (microseconds: 20 doubling to 1000, docs/locks.md "Waiting"). */
u32 daxfs_lock_backoff_us(u32 round);
/* The change counter of ino's bucket, NULL when it has none yet: a front
 * end may sleep on it (libdaxfs: a futex on its low half, woken by
 * unlockers on the same machine). */
u64 *daxfs_lock_seq_word(struct daxfs_fs *fs, u64 ino);
/* Every lock (and waiter, flagged) of ino, or of every inode for ino 0
 * (fn may be NULL: a count):
 * fn gets the record's fields; returns how many were shown. */
typedef void (*daxfs_lock_fn)(void *ctx, u64 ino,
			      const struct daxfs_lock_req *l, bool waiting);
int daxfs_lock_list(struct daxfs_fs *fs, u64 ino, daxfs_lock_fn fn, void *ctx);

/* ---- space (core/statfs.c) ---- */

struct daxfs_statfs {
	u64 pool_bytes;			/* total pool */
	u64 used_bytes;			/* allocated objects */
	u64 free_bytes;
	u64 nr_buckets, used_buckets;	/* overlay */
	u64 inodes;			/* live inodes (approximate) */
};
int daxfs_statfs(struct daxfs_fs *fs, struct daxfs_statfs *st);

/*
 * Blocks df reports as available (f_bavail): the free pages less what one
 * file filling them needs for its own radix nodes (a leaf per 512 data
 * pages, a node per 512 leaves, and a root that may grow), so that a
 * write or fallocate of "available" bytes fits (xfstests generic/103).
 */
static inline u64 daxfs_statfs_avail_blocks(const struct daxfs_statfs *st)
{
	u64 f = st->free_bytes >> DAXFS_BLOCK_SHIFT;
	u64 nodes = (f + 511) / 512 + (f + 262143) / 262144 + 2;

	return f > nodes ? f - nodes : 0;
}

#include "xattr.h"	/* extended attributes and ACLs */

#endif /* DAXFS_CORE_H */
