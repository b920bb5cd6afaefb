/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared page cache for split mode (core/pcache.c): base-image file data
 * lives in backing files on ordinary storage, and one cached copy of each
 * backing page in the PCACHE region serves every host.  Protocols,
 * invariants and crash story: docs/pcache.md.
 *
 * A host (the library, the kernel module) wires it up after
 * daxfs_fs_open() + daxfs_host_join():
 *
 *	daxfs_pcache_set_backing(fs, &ops, ctx, reach_mask, timeout_ms);
 *
 * where ops->read reads a backing file (it may sleep) and bit i of
 * reach_mask says this host can read backing file i.  A host that can
 * read none still reads cached pages and posts fill requests that hosts
 * with access serve from daxfs_pcache_serve() (call it whenever
 * daxfs_pcache_req_seq() changes; the library polls it from a helper
 * thread).  Before leaving the host table call daxfs_pcache_detach().
 */
#ifndef DAXFS_PCACHE_H
#define DAXFS_PCACHE_H

#include "compat.h"
#include "daxfs_core.h"

#define DAXFS_PCACHE_DEFAULT_WINDOW	32u
#define DAXFS_PC_NO_SLOT		(~0ULL)

/* A pinned cache slot: while held, the slot is never evicted. */
struct daxfs_pcache_pin {
	u64 slot;			/* DAXFS_PC_NO_SLOT: nothing pinned */
	u64 gen;			/* host generation that pinned it */
	u32 col;			/* host slot (pin column) */
	u32 pad;
};

static inline void daxfs_pcache_pin_init(struct daxfs_pcache_pin *pin)
{
	pin->slot = DAXFS_PC_NO_SLOT;
	pin->gen = 0;
	pin->col = 0;
	pin->pad = 0;
}

/* True when the base image keeps regular file data in backing files. */
static inline bool daxfs_base_backed(const struct daxfs_fs *fs)
{
	return fs->base_off && (fs->bh.flags & DAXFS_BASE_F_BACKING);
}

/* ---- format and open (called by core/super.c) ---- */

/* Lays out the PCACHE region described by sb (already filled in). */
int daxfs_pcache_format(u8 *base, const struct daxfs_super *sb,
			const struct daxfs_format_opts *o);
/* The header's checksum as it should read (CRC32C up to csum). */
u32 daxfs_pcache_header_csum(const struct daxfs_pcache_header *h);
/* Validates the PCACHE header and fills fs->pc; -EUCLEAN when bad. */
int daxfs_pcache_open(struct daxfs_fs *fs);
/* [off, off + len) lies in the data of backing file idx. */
bool daxfs_pcache_extent_ok(struct daxfs_fs *fs, u64 idx, u64 off, u64 len);

/* ---- host setup ---- */

void daxfs_pcache_set_backing(struct daxfs_fs *fs,
			      const struct daxfs_backing_ops *ops, void *ctx,
			      u64 reach, u32 timeout_ms);
/*
 * Identifies a backing file from its header and length: *idx = its index.
 * -EMEDIUMTYPE when it is not a backing file of this filesystem (bad
 * magic/checksum, unknown id, wrong size); -EOPNOTSUPP without a cache.
 */
int daxfs_pcache_backing_check(struct daxfs_fs *fs,
			       const struct daxfs_backing_header *bh,
			       u64 file_size, u32 *idx);
/* At join: releases cache claims an earlier generation of our host slot
 * left behind (core/hosts.c). */
void daxfs_pcache_joined(struct daxfs_fs *fs);
/* Releases this host's pin column (all its pins) before leaving. */
void daxfs_pcache_detach(struct daxfs_fs *fs);

/* ---- data access ---- */

/*
 * Pins the cached copy of backing page pgno of backing file idx, filling
 * it (or asking a host with access to fill it) on a miss.  *data points
 * to the 4 KiB page, read-only, valid until daxfs_pcache_put().  Errors:
 * -ETIMEDOUT (nobody filled it within the bounded wait), -EIO and other
 * errors of the backing read, -EBUSY (every candidate slot pinned),
 * -EOPNOTSUPP (no cache, or a host-less fs), -EUCLEAN.
 */
int daxfs_pcache_get(struct daxfs_op *op, u32 idx, u64 pgno,
		     struct daxfs_pcache_pin *pin, const u8 **data);
void daxfs_pcache_put(struct daxfs_fs *fs, struct daxfs_pcache_pin *pin);

/* Hands [off, off + len) of backing file idx to actor, page by page, each
 * page pinned while the actor runs (zero copy).  Bytes consumed or -errno
 * when nothing was. */
s64 daxfs_pcache_read(struct daxfs_op *op, u32 idx, u64 off, u64 len,
		      daxfs_read_actor_t actor, void *ctx);
/* Copies [off, off + len) of backing file idx through the cache. */
int daxfs_pcache_copy(struct daxfs_op *op, u32 idx, u64 off, void *dst,
		      u64 len);

/*
 * Zero-copy mapping of file block blk for reading (mmap): *off = region
 * offset of the page showing it: an overlay page, a pinned cache slot
 * (pin->slot set; release with daxfs_pcache_unpin() when the mapping
 * goes), a base-region page, or 0 for a hole (reads as zeros).
 */
int daxfs_pcache_map_block(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *off,
			   struct daxfs_pcache_pin *pin);
static inline void daxfs_pcache_unpin(struct daxfs_fs *fs,
				      struct daxfs_pcache_pin *pin)
{
	daxfs_pcache_put(fs, pin);
}

/* Fills up to max slots other hosts asked for; returns how many. */
int daxfs_pcache_serve(struct daxfs_fs *fs, u32 max);
/* Releases the pins of hosts no longer alive; returns columns freed. */
int daxfs_pcache_reap(struct daxfs_fs *fs);
/* Changes whenever a fill request is posted (cheap to poll). */
u64 daxfs_pcache_req_seq(struct daxfs_fs *fs);
/* Evicts every unpinned VALID slot (tests, benchmarks, drop_caches);
 * returns how many. */
s64 daxfs_pcache_evict_all(struct daxfs_fs *fs);

/* ---- information and checking ---- */

struct daxfs_pcache_stats {
	u64 nr_slots, window, nr_backing;
	u64 free, pending, valid, evicting, requested;
	u64 referenced;			/* VALID with the CLOCK bit set */
	u64 pinned_slots, pins;		/* slots with pins, sum of pins */
	u64 hand, hand_pos;		/* slots swept, position (hand % n) */
	u64 columns;			/* pin columns owned */
	u64 fills, evictions, takeovers, served, timeouts, req_seq;
	u64 cache_bytes;		/* nr_slots * 4 KiB */
};
int daxfs_pcache_stats(struct daxfs_fs *fs, struct daxfs_pcache_stats *st);

/*
 * The header the cache region of sb must have, from the words h of the one
 * it has: everything but the backing descriptors (and the probe window,
 * when valid) derives from the superblock and the region's size, so a
 * stray store there is repairable (fsck: daxfs_check_pcache_fixup).
 * -EUCLEAN when the region cannot hold a cache at all.
 */
int daxfs_pcache_header_derive(const struct daxfs_super *sb,
			       const struct daxfs_pcache_header *h,
			       struct daxfs_pcache_header *want);

/* What daxfs_pcache_check() found (and, with repair, fixed). */
struct daxfs_pcache_report {
	u64 bad_state;			/* unknown state / owner fields */
	u64 bad_tag;			/* VALID/FREE slot with an impossible tag */
	u64 stale_claims;		/* PENDING/EVICTING of a dead host */
	u64 stale_pins;			/* pins in columns of dead hosts */
	u64 stale_owners;		/* pin columns owned by dead hosts */
	u64 duplicates;			/* two VALID slots with one tag */
	u64 repaired;
};
/* Offline/online check of the cache's shared state.  With repair, stale
 * claims are released, stale pins cleared, impossible slots freed.
 * Returns the number of problems left (0 clean) or -errno. */
s64 daxfs_pcache_check(struct daxfs_fs *fs, bool repair,
		       struct daxfs_pcache_report *rep);

#endif /* DAXFS_PCACHE_H */
