/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * DaxFS on-memory format, version 1.  The single source of truth; the prose
 * version with invariants and crash stories is docs/format.md.
 *
 * Everything here lives in a region of memory that several hosts map at the
 * same time.  All multi-byte fields are little-endian (the core refuses to
 * build on big-endian hosts).  Every struct has an explicit size checked by a
 * static assert below.  Offsets stored in the region are byte offsets from the
 * start of the region; 0 always means "none" (offset 0 is the superblock).
 */
#ifndef DAXFS_FORMAT_H
#define DAXFS_FORMAT_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#define DAXFS_STATIC_ASSERT(cond) static_assert(cond, #cond)
#else
/* The same __u64 as the kernel uapi headers (unsigned long long), so
 * user-space files may include linux/ headers alongside this one. */
#include <linux/types.h>
#define DAXFS_STATIC_ASSERT(cond) _Static_assert(cond, #cond)
#endif

#define DAXFS_BLOCK_SIZE	4096u
#define DAXFS_BLOCK_SHIFT	12
#define DAXFS_CACHELINE		64u

/* ---------------------------------------------------------------------
 * Superblock: the first 4 KiB of the region.  Written once by mkfs and
 * never modified afterwards (mutable shared state lives in the state
 * page), so a CRC32C over the fixed header is meaningful.
 */
#define DAXFS_MAGIC		0x42535F5346584144ULL	/* "DAXFS_SB" */
#define DAXFS_VERSION		15u	/* 15: the attribute epoch */
/* The first version with state.attr_epoch: every change of what a
 * permission check reads (mode, owners, the access ACL, the immutable
 * and append-only flags) adds one to it after the change is published,
 * and a front end that saw the word unchanged since it loaded an inode's
 * permission attributes answers from them with no look at the record.
 * A version 14 host would change a mode without adding, and a version 15
 * host would keep answering from the old one (docs/kernel.md
 * "Permission checks and the attribute epoch"). */
#define DAXFS_VERSION_ATTR_EPOCH	15u
#define DAXFS_VERSION_V14	14u	/* 14: rewrites mark the change counter */
/* The first version whose change counter of a regular file may carry
 * DAXFS_CHANGE_WRITTEN: a rewrite that changes no attribute marks the
 * counter instead of moving it, and a getattr folds the mark into the
 * count.  A version 13 front end would take a marked word that still
 * reads the same for bytes unchanged, and keep a page cache of bytes a
 * rewrite replaced (docs/files.md "The change counter of a rewrite"). */
#define DAXFS_VERSION_WRITTEN	14u
#define DAXFS_VERSION_V13	13u	/* 13: changes in flight in counters */
/* The first version whose inode change counters say that an entry change
 * is in flight (DAXFS_CHANGE_FLIGHT): a change of a directory's entries,
 * and a removal of an inode's name, raises the counter before it is
 * published and lowers it after.  A version 12 host would publish with
 * no raise, and a version 13 host would trust a name it had cached across
 * that change (docs/kernel.md "Changes in flight"). */
#define DAXFS_VERSION_FLIGHT	13u
#define DAXFS_VERSION_V12	12u	/* 12: free page extents */
/* The first version whose page free stack may hold extents: a stack word
 * (the head's off, a link) is last | (pages - 1), DAXFS_FREE_EXTENT_MAX
 * pages at most (struct daxfs_free_obj).  A version 11 reader would take
 * such a word for a misaligned offset (docs/alloc.md "Free extents"). */
#define DAXFS_VERSION_EXTENTS	12u
#define DAXFS_VERSION_V11	11u	/* 11: 2 MiB runs in file radix trees */
/* The first version whose radix slots may name a run of 512 contiguous
 * data pages (DAXFS_RADIX_RUN).  A version 10 reader would take the run
 * for a leaf node and read its data as slot words (docs/files.md). */
#define DAXFS_VERSION_RUNS	11u
#define DAXFS_VERSION_V10	10u	/* 10: RENAME_WHITEOUT in the rename intent */
/* The first version whose rename intent (kind 1) may carry
 * DAXFS_RENAME_WHITEOUT: the old name's leaf is swapped for a leaf naming
 * a whiteout node (a[5]) whose link the rename raised, and the old
 * directory keeps its entry count.  A version 9 recoverer would undo the
 * count and leave the whiteout's link raised (docs/recovery.md). */
#define DAXFS_VERSION_WHITEOUT	10u
#define DAXFS_VERSION_V9	9u	/* 9: inode attribute flags */
/* The first version whose inode flags may carry the chattr(1) bits
 * DAXFS_IF_IMMUTABLE .. DAXFS_IF_SYNC (docs/attrs.md) */
#define DAXFS_VERSION_ATTRS	9u
#define DAXFS_VERSION_V8	8u	/* 8: unwritten data pages */
/* The first version whose data page words may carry DAXFS_RADIX_UNWRITTEN
 * (preallocated or zeroed pages that hold only zeros, docs/files.md) */
#define DAXFS_VERSION_UNWRITTEN	8u
#define DAXFS_VERSION_V7	7u	/* 7: strict writes out of place */
/* The first version whose strict overwrites go through a redo record
 * (FILE_WRITE intent a[6], struct daxfs_redo, docs/modes.md) */
#define DAXFS_VERSION_REDO	7u
#define DAXFS_VERSION_V6	6u	/* 6: extended attributes */
/* The first version with extended attributes (XATTR keys, docs/xattr.md) */
#define DAXFS_VERSION_XATTR	6u
#define DAXFS_VERSION_V5	5u	/* 5: cluster-wide lock table */
/* The first version with the lock table (state.lock_root, docs/locks.md) */
#define DAXFS_VERSION_LOCKS	5u
#define DAXFS_VERSION_V4	4u	/* 4: a regular file's write gate */
/* Older versions the tools can convert in place (fsck.daxfs --convert). */
#define DAXFS_VERSION_V1	1u
#define DAXFS_VERSION_V2	2u	/* 2: 16-byte free-stack heads */
#define DAXFS_VERSION_V3	3u	/* 3: heartbeat is a renewal counter */

/* Feature flags.  Unknown incompat bits: refuse to mount.  Unknown
 * ro_compat bits: mount read-only only.  Unknown compat bits: ignore. */
#define DAXFS_FEAT_INCOMPAT_BASE	(1u << 0)	/* base image present */
#define DAXFS_FEAT_INCOMPAT_OVERLAY	(1u << 1)	/* writable overlay */
#define DAXFS_FEAT_INCOMPAT_PCACHE	(1u << 2)	/* shared page cache */
/* Set by every format since open sets: hosts publish their open files
 * (daxfs_host.open_set, state.open_hosts) and may write bare symlink
 * pages and compaction hints; code that does none of that must not join.
 * Images without it (made before) are still accepted. */
#define DAXFS_FEAT_INCOMPAT_OPEN_SETS	(1u << 3)
#define DAXFS_FEAT_INCOMPAT_SUPP	(DAXFS_FEAT_INCOMPAT_BASE | \
					 DAXFS_FEAT_INCOMPAT_OVERLAY | \
					 DAXFS_FEAT_INCOMPAT_PCACHE | \
					 DAXFS_FEAT_INCOMPAT_OPEN_SETS)
#define DAXFS_FEAT_RO_COMPAT_SUPP	0u
#define DAXFS_FEAT_COMPAT_SUPP		0u

enum daxfs_region_kind {
	DAXFS_RGN_NONE = 0,
	DAXFS_RGN_STATE = 1,	/* struct daxfs_state, one page */
	DAXFS_RGN_HOSTS = 2,	/* struct daxfs_host[max_hosts] */
	DAXFS_RGN_BUCKETS = 3,	/* struct daxfs_bucket[nr_buckets] */
	DAXFS_RGN_POOL = 4,	/* allocator-managed 4 KiB blocks */
	DAXFS_RGN_BASE = 5,	/* read-only base image */
	DAXFS_RGN_PCACHE = 6,	/* shared page cache (docs/pcache.md) */
	DAXFS_RGN_LANES = 7,	/* struct daxfs_lane[max_hosts][DAXFS_LANES] */
	DAXFS_RGN_MAX = 8,
};

struct daxfs_region_desc {
	__u32 kind;		/* enum daxfs_region_kind */
	__u32 flags;
	__u64 offset;		/* 4 KiB aligned */
	__u64 size;		/* bytes, 4 KiB multiple */
	__u64 reserved;
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_region_desc) == 32);

#define DAXFS_LABEL_LEN 32

struct daxfs_super {
	__u64 magic;			/* DAXFS_MAGIC */
	__u32 version;			/* DAXFS_VERSION */
	__u32 header_size;		/* sizeof(struct daxfs_super) */
	__u32 feat_compat;
	__u32 feat_incompat;
	__u32 feat_ro_compat;
	__u32 flags;
	__u8 uuid[16];
	__u64 total_size;		/* region size in bytes */
	__u32 block_size;		/* DAXFS_BLOCK_SIZE */
	__u32 max_hosts;		/* entries in the host table */
	__u64 hash_key[2];		/* SipHash key for names (random per fs) */
	__u64 root_ino;
	__u64 first_dyn_ino;		/* inode numbers below are base inodes */
	__u64 nr_buckets;		/* power of two */
	__u32 probe_window;		/* buckets probed per key, power of two */
	__u32 lease_ms;			/* host lease length */
	__s64 created_ns;		/* CLOCK_REALTIME at mkfs */
	char label[DAXFS_LABEL_LEN];
	struct daxfs_region_desc regions[DAXFS_RGN_MAX];
	__u8 reserved[100];
	__u32 csum;			/* CRC32C of the bytes before this field */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_super) == 512);

/* ---------------------------------------------------------------------
 * State page: mutable cluster-wide words, one per cache line so that
 * hosts hammering one counter do not slow down the others.
 */
#define DAXFS_STATE_MAGIC	0x5441545346584144ULL	/* "DAXFSTAT" */

/* Allocator size classes.  Small objects are carved from 4 KiB pages. */
enum daxfs_class {
	DAXFS_CLASS_64 = 0,
	DAXFS_CLASS_128 = 1,
	DAXFS_CLASS_256 = 2,
	DAXFS_CLASS_512 = 3,
	DAXFS_CLASS_PAGE = 4,
	DAXFS_NR_CLASSES = 5,
};

struct daxfs_line {
	__u64 v;
	__u64 pad[7];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_line) == DAXFS_CACHELINE);

/*
 * Free-stack head (version 2): the top object's offset and a count of the
 * head's changes, replaced together by one 16-byte CAS (daxfs_cas16), so
 * a pop whose view is stale always fails: the tag is 64 bits and cannot
 * wrap in any delay a live host can have (docs/alloc.md "Free stacks").
 * Version 1 packed a 20-bit tag above a 44-bit offset in one word.
 */
struct daxfs_free_head {
	__u64 off;			/* top object, or 0: empty */
	__u64 tag;			/* +1 on every change of the head */
} __attribute__((aligned(16)));
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_free_head) == 16);

/*
 * The head's line; the small classes' lines also carry the compaction
 * hint in their pad words (docs/alloc.md "Compaction hint"); all advisory,
 * 0 = unknown: compaction runs.  Kept in the head's own line: a free's
 * counter FAA hits the line its push CAS just wrote.
 */
struct daxfs_free_line {
	struct daxfs_free_head head;
	__u64 pad[6];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_free_line) == DAXFS_CACHELINE);

#define DAXFS_FREE_PUSHED	0	/* objects pushed onto the stack except
					 * by a compaction pass of its own chain
					 * (frees, carved pages, other passes'
					 * and recovery's returns); wraps */
#define DAXFS_FREE_COMPACT_DUE	1	/* 0 unknown, else the PUSHED value
					 * from which a pass may find a page */
#define DAXFS_FREE_COMPACT_RUNS	2	/* passes that took a chain (stat) */
DAXFS_STATIC_ASSERT(DAXFS_FREE_COMPACT_RUNS <
		    sizeof(((struct daxfs_free_line *)0)->pad) / sizeof(__u64));

/* Version 1's head word: 20-bit tag above a 44-bit offset in 64-byte
 * units, its hint words at pad[0..2] of a struct daxfs_line.  Only the
 * converter reads it. */
#define DAXFS_V1_FREE_TAG_SHIFT	44
#define DAXFS_V1_FREE_OFF_MASK	((1ULL << DAXFS_V1_FREE_TAG_SHIFT) - 1)

struct daxfs_state {
	__u64 magic;			/* DAXFS_STATE_MAGIC */
	__u64 pad0[7];
	struct daxfs_line bump;		/* next never-used pool offset */
	struct daxfs_line next_ino;	/* next dynamic inode number */
	struct daxfs_line epoch;	/* global reclamation epoch (>= 1) */
	struct daxfs_line used_bytes;	/* pool bytes allocated (df) */
	struct daxfs_line rename_claim;	/* 0 or daxfs_claim_word() */
	struct daxfs_free_line free_head[DAXFS_NR_CLASSES]; /* stack heads */
	struct daxfs_line stat_cas_fail;	/* statistics, advisory */
	struct daxfs_line stat_inserts;	/* published overlay keys */
	struct daxfs_line page_stack;	/* ~pages on the page free stack
					 * (signed, self-healing; alloc.md) */
	__u64 open_hosts[4];		/* bit s: host slot s may have open-set
					 * entries (docs/open-files.md); was
					 * reserved, 0 on older images */
	__u64 lock_root;		/* version 5: struct daxfs_lock_root of
					 * the cluster's advisory locks, 0 none
					 * yet (docs/locks.md); was pad, 0 */
	__u64 pad1[3];
	/* version 15: +1 after every published change of an inode's
	 * permission attributes, and at every recovery of a dead host (>= 1;
	 * docs/kernel.md "Permission checks and the attribute epoch") */
	struct daxfs_line attr_epoch;
	__u8 reserved[4096 - 64 * (11 + DAXFS_NR_CLASSES)];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_state) == 4096);
DAXFS_STATIC_ASSERT(__builtin_offsetof(struct daxfs_state, open_hosts) %
		    DAXFS_CACHELINE == 0);
DAXFS_STATIC_ASSERT(__builtin_offsetof(struct daxfs_state, free_head) %
		    DAXFS_CACHELINE == 0);
DAXFS_STATIC_ASSERT(__builtin_offsetof(struct daxfs_state, attr_epoch) ==
		    64 * (10 + DAXFS_NR_CLASSES));

/*
 * A free object's first word links to the next free object (offset or 0).
 * The page class (version 12) links extents: the head's off and every
 * link are last | (pages - 1), an extent of 1 to DAXFS_FREE_EXTENT_MAX
 * contiguous free pages named by its last page, which holds the link to
 * the next extent; the other pages hold nothing (docs/alloc.md "Free
 * extents").
 * One-page entries (low bits 0) are what version 11 wrote.
 */
struct daxfs_free_obj {
	__u64 next;
};

#define DAXFS_FREE_EXTENT_MAX	4096u
#define DAXFS_FREE_EXTENT_MASK	((__u64)DAXFS_BLOCK_SIZE - 1)
DAXFS_STATIC_ASSERT(DAXFS_FREE_EXTENT_MAX - 1 <= DAXFS_FREE_EXTENT_MASK);

/* ---------------------------------------------------------------------
 * Host table.  One slot per participating host (kernel mount or user
 * process).  The state word carries a generation that increases every
 * time the slot changes hands, so a claim recorded as (slot, generation)
 * can always be told apart from a later owner of the same slot.
 */
enum daxfs_host_state {
	DAXFS_HOST_FREE = 0,
	DAXFS_HOST_ALIVE = 1,
	DAXFS_HOST_DEAD = 2,		/* lease expired, recovery pending */
	DAXFS_HOST_RECOVERING = 3,	/* one survivor is recovering it */
};

#define DAXFS_HOST_STATE_MASK	0xffULL
#define DAXFS_HOST_GEN_SHIFT	8

#define DAXFS_HOST_KIND_USER	1u
#define DAXFS_HOST_KIND_KERNEL	2u

/* Intent record: what a host is in the middle of, for recovery. */
enum daxfs_intent_op {
	DAXFS_INTENT_NONE = 0,
	DAXFS_INTENT_OV_INSERT = 1,	/* a[0]=bucket index, a[1]=key */
	DAXFS_INTENT_RENAME = 2,	/* see docs/namespace.md */
	DAXFS_INTENT_FILE_WRITE = 3,	/* a[0]=ino, a[1]=first byte, a[2]=end,
					 * a[3]=gate claim (0: a plain write),
					 * a[4]=block | check << 36 and
					 * a[5]=page of the page being
					 * published (docs/recovery.md),
					 * a[6]=redo record | committed
					 * (version 7, struct daxfs_redo) */
	DAXFS_INTENT_OPEN_PUT = 4,	/* a[0]=ino: entry removed, settle it */
	DAXFS_INTENT_XATTR = 5,		/* a[0]=ino, a[1]=new set, a[2]=old
					 * set, a[3]=retire step, a[4]=new
					 * set's class + 1, a[5]=inode record,
					 * a[6]=phase (docs/xattr.md) */
};

struct daxfs_intent {
	__u64 op;
	__u64 a[7];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_intent) == 64);

/*
 * Redo record of a strict overwrite (version 7, docs/modes.md "Strict
 * overwrites out of place").  One pool page; a write of more than
 * DAXFS_REDO_PAGES blocks chains several.  Log page i of record k holds
 * the new bytes of file block (off >> 12) + k * DAXFS_REDO_PAGES + i at
 * their offsets in the block.  Named by the writer's FILE_WRITE intent
 * (a[DAXFS_REDO_WORD] = the first record's offset, 4 KiB aligned) while
 * it runs; the same word | DAXFS_REDO_COMMITTED, one 8-byte store, once
 * every log page and record is on the media: from then on recovery
 * replays it (copies the bytes in place, moves the size up to off + len),
 * before that it discards it.  0: no record.
 */
#define DAXFS_REDO_MAGIC	0x4f44455253584144ULL	/* "DAXSREDO" */
#define DAXFS_REDO_WORD		6	/* FILE_WRITE intent a[6] */
#define DAXFS_REDO_COMMITTED	1ULL	/* its low bit */
#define DAXFS_REDO_PAGES	504

struct daxfs_redo {
	__u64 magic;			/* DAXFS_REDO_MAGIC */
	__u64 ino;			/* the file written */
	__u64 off;			/* the write: [off, off + len) */
	__u64 len;			/* (the same in every record) */
	__u64 next;			/* next record page, 0: last */
	__u32 index;			/* k: this record's place in the chain */
	__u32 count;			/* log pages listed in page[] */
	__u64 done;			/* first record: the bytes logged, what a
					 * replay copies (< len when the source
					 * faulted), set before the commit */
	__u64 pad;
	__u64 page[DAXFS_REDO_PAGES];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_redo) == DAXFS_BLOCK_SIZE);

#define DAXFS_HOST_NAME_LEN 32

struct daxfs_host {
	__u64 state;			/* gen << 8 | enum daxfs_host_state */
	__u64 heartbeat;		/* renewal counter: the owner adds 1 at
					 * each renewal (a recoverer at its
					 * claim and at each lane and step of
					 * its recovery: with state, its claim,
					 * docs/hosts.md); observers time its
					 * changes with their own monotonic
					 * clock (version 2: CLOCK_REALTIME ns) */
	__u64 map_epoch;		/* (was an unused epoch word) 0: maps no
					 * pool page; else the epoch at which its
					 * last completed mapping revalidation
					 * started (docs/reclaim.md) */
	__s64 joined_ns;
	__u32 pid;
	__u32 kind;			/* DAXFS_HOST_KIND_* */
	__u64 ops;			/* operations done, advisory */
	__u64 pass_wanted;		/* (was pad) advisory: a host waiting for
					 * space asks this mapping host for a
					 * pass announcing at least this epoch
					 * (docs/reclaim.md "Asking for a pass") */
	__u64 pad0;
	char name[DAXFS_HOST_NAME_LEN];	/* hostname, NUL padded */
	__u64 alloc_cursor;		/* batch reservation [cursor, end) */
	__u64 alloc_end;
	__u64 limbo_sealed;		/* chain of sealed limbo batches */
	__s64 recovered_ns;		/* CLOCK_REALTIME when a survivor finished
					 * recovering the slot's last dead owner;
					 * 0 after a clean leave or a join */
	__u64 recovered_by;		/* claim word (gen << 16 | slot + 1) of
					 * that survivor, 0 if host-less */
	__u64 open_set;			/* first struct daxfs_open_page of the
					 * host's open set, 0 none (was pad;
					 * docs/open-files.md) */
	/* (was pad) advisory, user-space hosts: the process that owns the
	 * slot, so that a joiner on the same machine can tell at once that
	 * it is gone (docs/hosts.md "Processes gone").  Valid only while
	 * proc_gen is the slot's generation: stored last by the owner after
	 * its join, 0 from older code and kernel hosts. */
	__u64 proc_gen;
	__u64 proc_boot[2];		/* the kernel's boot_id */
	__u64 proc_pidns;		/* inode of the owner's pid namespace */
	__u64 proc_start;		/* start time of pid, clock ticks */
	__u64 proc_timens;		/* inode of its time namespace, which
					 * the start time is read in */
	__u64 pad1[8];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_host) == 256);

/*
 * Lanes: a host runs many operations at once (threads, kernel tasks), so
 * each operation claims one of its host's lanes for its duration.  The
 * lane carries the operation's announced epoch and its intent record.
 */
#define DAXFS_LANES 32

struct daxfs_lane {
	__u64 epoch;			/* 0 free; else epoch announced by the op */
	__u64 owner;			/* thread/task id, advisory */
	__u64 limbo_open;		/* batch being filled by this lane, or 0 */
	__u64 pad[5];
	struct daxfs_intent intent;
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_lane) == 128);

#define DAXFS_MAX_HOSTS 256

/*
 * Open sets (docs/open-files.md): the inodes a host holds open, one entry
 * per open, in a chain of pool pages headed by daxfs_host.open_set.  Only
 * the owning host writes entries (CAS 0 <-> ino); every unlinker scans.
 */
#define DAXFS_OPEN_MAGIC	0x4e45504f46584144ULL	/* "DAXFOPEN" */
#define DAXFS_OPEN_ENTRIES	504
#define DAXFS_OPEN_MAX_PAGES	16	/* per host: then -ENFILE */
#define DAXFS_OPEN_PF_HW	1u	/* page keeps hw (older pages: scan all) */

struct daxfs_open_page {
	__u64 magic;			/* DAXFS_OPEN_MAGIC */
	__u64 next;			/* next page of the set, or 0 */
	__u32 slot;			/* owning host slot */
	__u32 flags;			/* DAXFS_OPEN_PF_*; was reserved (0) */
	__u64 hw;			/* with DAXFS_OPEN_PF_HW: entries only
					 * at indices below hw (grows only) */
	__u64 reserved[4];
	__u64 ino[DAXFS_OPEN_ENTRIES];	/* 0 free, else an inode number */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_open_page) == 4096);

/* ---------------------------------------------------------------------
 * Advisory file locks (version 5, docs/locks.md): POSIX record locks, OFD
 * locks and flock of every host, in a table of pool pages that every host
 * reads.  state.lock_root -> root page -> up to DAXFS_LOCK_BUCKETS bucket
 * pages (made on first use); an inode's locks all live in bucket
 * daxfs_mix64(ino) % DAXFS_LOCK_BUCKETS.  A bucket changes only under its
 * claim word; a record is published by its host word (stored last).
 */
#define DAXFS_LOCK_ROOT_MAGIC	0x544f4f524b434c44ULL	/* "DLCKROOT" */
#define DAXFS_LOCK_BKT_MAGIC	0x544b42534b434c44ULL	/* "DLCKSBKT" */
#define DAXFS_LOCK_BUCKETS	256
#define DAXFS_LOCK_RECS		63	/* records per bucket page */

/* rec.flags */
#define DAXFS_LOCK_TYPE_MASK	3u	/* 1 read (shared), 2 write */
#define DAXFS_LOCK_KIND_SHIFT	4
#define DAXFS_LOCK_KIND_MASK	(3u << DAXFS_LOCK_KIND_SHIFT) /* POSIX 1,
					 * OFD 2, FLOCK 3 */
#define DAXFS_LOCK_WAITING	(1u << 8)	/* a blocked POSIX request,
						 * not a lock (deadlock
						 * detection) */

/* bucket.claim: (lane + 1) << 58 | daxfs_claim_word() of the holder */
#define DAXFS_LOCK_CLAIM_LANE_SHIFT	58

struct daxfs_lock_root {
	__u64 magic;			/* DAXFS_LOCK_ROOT_MAGIC */
	__u32 nr_buckets;		/* DAXFS_LOCK_BUCKETS */
	__u32 reserved0;
	__u64 reserved[6];
	__u64 bucket[DAXFS_LOCK_BUCKETS];	/* bucket page, 0: none yet */
	__u64 pad[512 - 8 - DAXFS_LOCK_BUCKETS];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_lock_root) == 4096);

struct daxfs_lock_rec {
	__u64 host;			/* 0 free; else daxfs_claim_word(slot,
					 * gen) of the holder's host (stored
					 * last, cleared first) */
	__u64 owner;			/* the host's owner id (a process for
					 * POSIX, an open file for OFD/flock) */
	__u64 ino;
	__u64 start;			/* first byte */
	__u64 end;			/* last byte (inclusive); ~0: EOF */
	__u32 flags;			/* DAXFS_LOCK_* */
	__u32 pid;			/* shown by F_GETLK */
	__u64 reserved[2];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_lock_rec) == 64);

struct daxfs_lock_bucket {
	__u64 magic;			/* DAXFS_LOCK_BKT_MAGIC */
	__u64 claim;			/* 0 or the modifying lane's claim */
	__u64 seq;			/* +1 after every change: waiters
					 * sleep until it moves */
	__u32 index;			/* position in the root */
	__u32 reserved0;
	__u64 reserved[4];
	struct daxfs_lock_rec rec[DAXFS_LOCK_RECS];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_lock_bucket) == 4096);

/* ---------------------------------------------------------------------
 * Hash overlay: open addressing over 16-byte buckets.  Keys are typed
 * (top 4 bits) and mixed by a real hash before choosing the bucket.
 *
 * key word:  0 empty | DAXFS_KEY_TOMB deleted | key | key + PENDING bit
 * value word: 0 (absent / being deleted) or the value (non-zero).
 * Protocol and crash story: docs/overlay.md.
 */
#define DAXFS_KEY_TYPE_SHIFT	60
#define DAXFS_KEY_PENDING	(1ULL << 59)
#define DAXFS_KEY_PAYLOAD_MASK	(DAXFS_KEY_PENDING - 1)
#define DAXFS_KEY_TOMB		(~0ULL)
#define DAXFS_KEY_EMPTY		0ULL

enum daxfs_key_type {
	DAXFS_KEY_INODE = 1,		/* payload: inode number */
	DAXFS_KEY_XATTR = 2,		/* payload: inode number; value: its
					 * struct daxfs_xattr_set (version 6) */
	DAXFS_KEY_TYPE_MAX = 14,
};

static inline __u64 daxfs_key(unsigned int type, __u64 payload)
{
	return ((__u64)type << DAXFS_KEY_TYPE_SHIFT) |
	       (payload & DAXFS_KEY_PAYLOAD_MASK);
}

struct daxfs_bucket {
	__u64 key;
	__u64 value;
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_bucket) == 16);

/* ---------------------------------------------------------------------
 * Inode record: 128 bytes from the 128-byte class.  Found through the
 * overlay (key DAXFS_KEY_INODE).  Fields change with atomic stores or
 * CAS only; see docs/format.md for which field follows which rule.
 */
#define DAXFS_INODE_MAGIC	0x444e49u	/* "IND" + version byte */

/* flags */
#define DAXFS_IF_BASE		(1u << 0)	/* copied up from a base inode */
/* nlink 0 and the free not decided yet: a host may still hold it open
 * (its open set names it); cleared by the one CAS that claims the free.
 * Meaningless while nlink > 0.  docs/open-files.md */
#define DAXFS_IF_ORPHAN		(1u << 1)
/*
 * Version 9: attribute flags a user sets with chattr(1) (docs/attrs.md),
 * changed by CAS on this word (the change word moves after), checked by
 * every host on every operation they forbid: no data, size, attribute,
 * xattr or name change of an immutable inode, nor new or removed names
 * in an immutable directory; an append-only file grows only at its end
 * and keeps its names; an append-only directory gains names, loses none.
 */
#define DAXFS_IF_IMMUTABLE	(1u << 2)	/* chattr +i */
#define DAXFS_IF_APPEND		(1u << 3)	/* chattr +a */
#define DAXFS_IF_NODUMP		(1u << 4)	/* chattr +d (advisory) */
#define DAXFS_IF_NOATIME	(1u << 5)	/* chattr +A: atime not moved */
#define DAXFS_IF_SYNC		(1u << 6)	/* chattr +S: writes synchronous */
#define DAXFS_IF_ATTRS		(DAXFS_IF_IMMUTABLE | DAXFS_IF_APPEND | \
				 DAXFS_IF_NODUMP | DAXFS_IF_NOATIME | \
				 DAXFS_IF_SYNC)
/* every bit a version 9 inode may carry; before: BASE and ORPHAN only */
#define DAXFS_IF_KNOWN		(DAXFS_IF_BASE | DAXFS_IF_ORPHAN | DAXFS_IF_ATTRS)

/* dir_state word of directories */
#define DAXFS_DIR_DEAD		(1ULL << 63)	/* rmdir'ed: no new entries */
#define DAXFS_DIR_IMPORTED	(1ULL << 62)	/* base entries imported */
#define DAXFS_DIR_MOVING	(1ULL << 61)	/* a rename is moving it */
#define DAXFS_DIR_COUNT_MASK	((1ULL << 48) - 1)

struct daxfs_inode {
	__u64 ino;
	__u32 magic;			/* DAXFS_INODE_MAGIC */
	__u32 flags;			/* DAXFS_IF_* */
	__u32 mode;			/* S_IFMT | permission bits */
	__u32 uid;
	__u32 gid;
	__u32 nlink;			/* dirs: 2 + subdirectories */
	__u64 size;			/* grows by CAS-to-maximum */
	__u64 blocks;			/* 4 KiB pages owned by this inode */
	__s64 atime_ns;
	__s64 mtime_ns;
	__s64 ctime_ns;
	__u64 rdev;			/* device nodes: Linux dev_t (huge encoding);
					 * regular files: 0 (unused) */
	__u64 root;			/* file: radix root | height
					 * (height 0: direct data page);
					 * dir: trie root node;
					 * symlink: target record, or
					 * page | DAXFS_SYMLINK_BARE */
	__u64 parent;			/* directories: parent inode number;
					 * regular files: the write gate, 0
					 * or the claim word of the shrinking
					 * host (docs/files.md "Append versus
					 * truncate", since version 4) */
	__u64 aux;			/* dir: dir_state word;
					 * file: base_limit (bytes of base data
					 * still visible) */
	__u64 base_ino;			/* base inode this one shadows, or 0 */
	__u64 change;			/* bumped on every change (revalidation):
					 * the count in the low 48 bits, the
					 * entry changes in flight above
					 * (DAXFS_CHANGE_FLIGHT, version 13) */
	__u32 generation;		/* NFS-style generation of this ino */
	__u32 xattr_claim;		/* version 6 (was reserved, 0): 0 or
					 * the claim of the lane changing the
					 * inode's xattrs (docs/xattr.md) */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_inode) == 128);

/*
 * inode.change (version 13, docs/kernel.md "Changes in flight"): an entry
 * change of a directory, or the removal of an inode's name, adds
 * DAXFS_CHANGE_FLIGHT before it publishes, and DAXFS_CHANGE_SETTLE (one
 * count up, one in flight down, in one add) after.  A word with no
 * change in flight that still reads the same vouches that none began.
 */
#define DAXFS_CHANGE_FLIGHT_SHIFT	48
#define DAXFS_CHANGE_FLIGHT		(1ULL << DAXFS_CHANGE_FLIGHT_SHIFT)
#define DAXFS_CHANGE_SETTLE		(1ULL - DAXFS_CHANGE_FLIGHT)
/*
 * Version 14 (docs/files.md "The change counter of a rewrite"): bit 47 of
 * a regular file's counter says that its bytes were rewritten since the
 * count last moved.  A rewrite that changes no attribute (no size, no
 * page allocated, stamps fresh) sets it, after its bytes are visible,
 * unless it is set already: writers of one file then only load the word.
 * A getattr that may store (a writable host, in an op) folds it: count
 * + 1, bit clear.  So two words that read the same, bit included, say
 * that no attribute changed between them, and, without the bit, that no
 * byte did either.  The count is the 47 bits below.
 */
#define DAXFS_CHANGE_WRITTEN		(1ULL << 47)
#define DAXFS_CHANGE_COUNT_MASK		(DAXFS_CHANGE_WRITTEN - 1)

/* ---------------------------------------------------------------------
 * Extended attributes (version 6, docs/xattr.md).  The overlay key
 * XATTR(ino) names the inode's whole attribute set, an immutable record:
 * a change builds a new set out of place and publishes it with one CAS
 * of the bucket's value, under the inode's xattr_claim.  The set is a
 * header object (a small class, or a page) followed by its entry stream,
 * inline (nr_pages 0: the stream follows the header) or in nr_pages
 * whole pages listed in page[] (the stream runs across them in order).
 * Entries: struct daxfs_xattr_ent, the full name ("user.x"), the value,
 * padding to 8 bytes.
 */
#define DAXFS_XATTR_MAGIC	0x52545841u	/* "AXTR" */
#define DAXFS_XATTR_NAME_MAX	255u		/* full name, prefix incl. */
#define DAXFS_XATTR_SIZE_MAX	65536u		/* one value */
#define DAXFS_XATTR_MAX_PAGES	60u		/* header fits 512 bytes */
#define DAXFS_XATTR_STREAM_MAX	(DAXFS_XATTR_MAX_PAGES * DAXFS_BLOCK_SIZE)
#define DAXFS_XATTR_INLINE_MAX	(512u - 32u)	/* stream in the header */

struct daxfs_xattr_set {
	__u64 ino;			/* owner (= the key's inode) */
	__u32 magic;			/* DAXFS_XATTR_MAGIC */
	__u32 count;			/* entries, >= 1 */
	__u32 bytes;			/* length of the entry stream */
	__u32 nr_pages;			/* 0: inline stream */
	__u64 reserved;
	__u64 page[];			/* nr_pages page offsets, or the
					 * inline stream */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_xattr_set) == 32);

struct daxfs_xattr_ent {
	__u8 name_len;			/* 1..DAXFS_XATTR_NAME_MAX */
	__u8 reserved0;
	__u16 reserved1;
	__u32 value_len;		/* 0..DAXFS_XATTR_SIZE_MAX */
	/* name_len + value_len bytes, then zeros to an 8-byte multiple */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_xattr_ent) == 8);

/* xattr_claim: slot + 1 in bits 0-8, lane in 9-13, the low 18 bits of
 * the host generation above (daxfs_xattr_claim_word, core/xattr.c) */
#define DAXFS_XCLAIM_SLOT_MASK	0x1ffu
#define DAXFS_XCLAIM_LANE_SHIFT	9
#define DAXFS_XCLAIM_LANE_MASK	0x1fu
#define DAXFS_XCLAIM_GEN_SHIFT	14
#define DAXFS_XCLAIM_GEN_MASK	0x3ffffu

/* DAXFS_INTENT_XATTR a[6]: what recovery finds to do */
#define DAXFS_XATTR_PHASE_CLAIM	0	/* claim taken or being taken: free it */
#define DAXFS_XATTR_PHASE_SET	1	/* a[1..4] valid: finish or undo */
#define DAXFS_XATTR_PHASE_DONE	2	/* all done but the claim's release */

/* ---------------------------------------------------------------------
 * Directories: a hash trie per directory.  Nodes hold 64 slots indexed
 * by successive 6-bit groups of the 64-bit name hash (most significant
 * first), so a depth-first walk visits names in hash order and a readdir
 * position is simply a hash value.  Docs: docs/directories.md.
 */
#define DAXFS_TRIE_FANOUT	64
#define DAXFS_TRIE_BITS		6
#define DAXFS_TRIE_MAX_DEPTH	11	/* 64 bits / 6 rounded up */

/* slot tag in the low bits (objects are 64-byte aligned) */
#define DAXFS_SLOT_LEAF		1ULL
#define DAXFS_SLOT_NODE		2ULL
#define DAXFS_SLOT_TAG_MASK	63ULL

struct daxfs_trie_node {
	__u64 slot[DAXFS_TRIE_FANOUT];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_trie_node) == 512);

#define DAXFS_NAME_MAX		255

/* dirent flags */
#define DAXFS_DF_WHITEOUT	(1u << 0)	/* hides a base entry */
#define DAXFS_DF_FROM_BASE	(1u << 1)	/* name exists in the base image:
						 * removing it leaves a whiteout */

/* dirent.removed: a host found this leaf in a directory and is taking it
 * out (or copying it within its chain); set before that CAS, never
 * cleared.  Proof that the leaf was published, which recovery reads
 * when the leaf is no longer there (docs/recovery.md, "Published or
 * not").  Older code leaves it 0. */
#define DAXFS_DE_REMOVED	1u
/* dirent.removed: a link(2) (or a rename, up to its step 1) holding the
 * rename claim is giving this leaf's inode a new name and needs this one
 * to stay until it is published; a remover that marked REMOVED waits
 * while it is set (docs/namespace.md, "Link racing the removal of its
 * source").  Cleared by its holder (or its recovery); set only under the rename
 * claim, so one found while the claim is free (or ours) is stale.
 * Older code neither sets nor waits for it. */
#define DAXFS_DE_LINKING	2u

/* Directory entry: immutable once published (but for `removed`); a
 * rename publishes a new one. */
struct daxfs_dirent {
	__u64 ino;
	__u64 hash;			/* name hash (readdir position) */
	__u64 next;			/* full-hash collision chain, or 0 */
	__u16 name_len;
	__u8 type;			/* DT_* value */
	__u8 flags;			/* DAXFS_DF_* */
	__u32 removed;			/* DAXFS_DE_REMOVED | DAXFS_DE_LINKING */
	char name[];			/* name_len bytes, no NUL */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_dirent) == 32);

/*
 * Symlink targets: 1..DAXFS_SYMLINK_MAX (PATH_MAX - 1) bytes.  inode.root
 * of an overlay symlink is one of (docs/inodes.md, "Symlink records"):
 *   rec (64-byte aligned): struct daxfs_symlink in the smallest class
 *       holding 8 + len bytes, len 1..DAXFS_SYMLINK_REC_MAX;
 *   page | DAXFS_SYMLINK_BARE: a bare 4 KiB page holding the target and a
 *       NUL; the length is inode.size, DAXFS_SYMLINK_REC_MAX + 1 ..
 *       DAXFS_SYMLINK_MAX (only targets the header record cannot hold);
 *   0: the target is in the base image (DAXFS_IF_BASE) or was dropped.
 * Bare pages came later within version 1 (older code rejects them as
 * corrupt; no feature flag, see docs/format.md).
 */
struct daxfs_symlink {
	__u32 len;
	__u32 reserved;
	char target[];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_symlink) == 8);
#define DAXFS_SYMLINK_MAX	(DAXFS_BLOCK_SIZE - 1)	/* PATH_MAX - 1 */
#define DAXFS_SYMLINK_REC_MAX	(DAXFS_BLOCK_SIZE - 8)	/* header form */
#define DAXFS_SYMLINK_BARE	1ULL	/* root tag: bare page, len = size */

/* ---------------------------------------------------------------------
 * File data: a radix tree of 4 KiB nodes with 512 slots per node.
 * inode.root = node offset | height (1..4); 0 = empty; 1 = data dropped
 * for good (file freed); data page offset | 0 (offset != 0, height 0) =
 * "direct": that page is block 0, the only block mapped (a small file
 * costs one page, no node).  Leaves point to 4 KiB data pages.  4 levels
 * map 2^48 bytes.  Direct roots came later within version 1: older code
 * never wrote height 0 with an offset, so old images read unchanged, but
 * older code (and an older fsck) treats a direct root as corrupt.
 */
#define DAXFS_RADIX_FANOUT	512
#define DAXFS_RADIX_BITS	9
#define DAXFS_RADIX_MAX_HEIGHT	4
#define DAXFS_RADIX_HEIGHT_MASK	7ULL
/*
 * Version 8: a word naming a data page (a leaf slot, or a direct root)
 * may carry this bit: the page was made by fallocate (or zeroed whole by
 * ZERO_RANGE) and holds only zeros ("unwritten", FIEMAP's
 * FIEMAP_EXTENT_UNWRITTEN).  Bit 3: bits 0..2 of a root are its height
 * and a slot value of 1 is SEALED; node words (interior slots, a root of
 * height 1..4) never carry it.  Cleared by CAS before any store into the
 * page (docs/files.md "Unwritten pages").
 */
#define DAXFS_RADIX_UNWRITTEN	8ULL
/*
 * Version 11: a slot of a level-2 node (one whose children are leaves)
 * may hold run | DAXFS_RADIX_RUN instead of a leaf pointer: run is the
 * offset of 512 contiguous data pages, aligned to 2 MiB, that are the
 * data of the slot's 512 blocks in order ("runs", docs/files.md).  Bit 4:
 * never set in a page or node offset, never on a root, never together
 * with DAXFS_RADIX_UNWRITTEN (a run is always written data).
 */
#define DAXFS_RADIX_RUN		16ULL
#define DAXFS_RUN_PAGES		512u
#define DAXFS_RUN_SIZE		(DAXFS_RUN_PAGES * DAXFS_BLOCK_SIZE)
#define DAXFS_MAX_FILE_SIZE	(1ULL << 48)

struct daxfs_radix_node {
	__u64 slot[DAXFS_RADIX_FANOUT];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_radix_node) == DAXFS_BLOCK_SIZE);

/* ---------------------------------------------------------------------
 * Reclamation: retired objects wait in per-host limbo batches until no
 * host can still be reading them.  Docs: docs/reclaim.md.
 */
#define DAXFS_LIMBO_ENTRIES	508

struct daxfs_limbo {
	__u64 next;			/* next sealed batch of the same host */
	__u64 epoch;			/* global epoch when sealed */
	__u32 count;
	__u32 reserved;
	__u64 reserved2;
	__u64 entry[DAXFS_LIMBO_ENTRIES];	/* offset | class */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_limbo) == DAXFS_BLOCK_SIZE);

/* ---------------------------------------------------------------------
 * Base image: a flat, read-only image validated in one pass.
 * Layout inside the base region: header page, inode table, dirent
 * array, data area.  Offsets below are relative to the base region.
 */
#define DAXFS_BASE_MAGIC	0x4553414253584144ULL	/* "DAXSBASE" */

struct daxfs_base_header {
	__u64 magic;
	__u32 version;
	__u32 header_size;
	__u64 nr_inodes;		/* inode i has number i + 1; root is 1 */
	__u64 inode_off;
	__u64 nr_dirents;
	__u64 dirent_off;
	__u64 data_off;
	__u64 data_size;
	__u32 meta_csum;		/* CRC32C of inode table + dirents */
	__u32 flags;			/* DAXFS_BASE_F_* (was reserved, 0) */
	__u64 reserved[6];
	__u32 pad;
	__u32 csum;			/* CRC32C of the bytes before this field */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_base_header) == 128);

/* base header flags */
#define DAXFS_BASE_F_BACKING	(1u << 0)	/* split mode: regular files' data
						 * lives in backing files (see
						 * struct daxfs_base_inode) */

/*
 * In split mode (DAXFS_BASE_F_BACKING, needs DAXFS_FEAT_INCOMPAT_PCACHE) a
 * regular file's data = byte offset in its backing file (4 KiB aligned,
 * >= DAXFS_BACKING_DATA_OFF) and count = index of that backing file in
 * the PCACHE header's backing table.  Symlink targets stay in the base
 * region.
 */
struct daxfs_base_inode {
	__u32 mode;
	__u32 uid;
	__u32 gid;
	__u32 nlink;
	__u64 size;			/* files/symlinks: bytes */
	__s64 mtime_ns;
	__u64 rdev;
	__u64 data;			/* file/symlink: data offset;
					 * dir: index of first dirent */
	__u64 count;			/* dir: number of dirents */
	__u64 parent;			/* dir: parent inode number */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_base_inode) == 64);

struct daxfs_base_dirent {
	__u64 ino;
	__u16 name_len;
	__u8 type;			/* DT_* */
	__u8 reserved[5];
	char name[256];			/* name_len bytes, NUL padded */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_base_dirent) == 272);

/* ---------------------------------------------------------------------
 * Shared page cache (split mode): bulk file data of the base image lives
 * in backing files on ordinary storage; one cached copy of each backing
 * page in the PCACHE region serves every host.  docs/pcache.md.
 *
 * PCACHE region layout (offsets relative to the region start):
 *   0            struct daxfs_pcache_header (fixed, CRC) + at
 *                DAXFS_PCACHE_LIVE_OFF struct daxfs_pcache_live (mutable)
 *   owner_off    __u64 pin_owner[max_hosts]: who owns pin column h
 *   meta_off     struct daxfs_pcache_slot[nr_slots]
 *   pins_off     __u8 pins[nr_slots][pin_stride]: pins of host h on slot i
 *                at byte i * pin_stride + h (pin_stride = max_hosts
 *                rounded up to 8)
 *   data_off     nr_slots pages of cached data (4 KiB aligned)
 */
#define DAXFS_PCACHE_MAGIC	0x4843435046584144ULL	/* "DAXFPCCH" */
#define DAXFS_PCACHE_MAX_BACKING 16
#define DAXFS_PCACHE_LIVE_OFF	2048u
#define DAXFS_PCACHE_REQ_RING	32

/* Backing files: each starts with one 4 KiB header page, data follows. */
#define DAXFS_BACKING_MAGIC	0x474b425346584144ULL	/* "DAXFSBKG" */
#define DAXFS_BACKING_DATA_OFF	4096u

struct daxfs_backing_header {
	__u64 magic;			/* DAXFS_BACKING_MAGIC */
	__u32 version;			/* DAXFS_VERSION */
	__u32 header_size;		/* sizeof */
	__u8 id[16];			/* random, also in the PCACHE table */
	__u32 index;			/* position in the backing table */
	__u32 nr_backing;		/* backing files of the filesystem */
	__u64 size;			/* file length in bytes (header incl.) */
	__u64 data_off;			/* DAXFS_BACKING_DATA_OFF */
	__u64 reserved[8];
	__u32 pad;
	__u32 csum;			/* CRC32C of the bytes before this field */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_backing_header) == 128);

/* One backing file as the filesystem expects it (identity check at
 * open: header magic/csum, id, index and size must match). */
struct daxfs_backing_desc {
	__u64 size;			/* bytes of the backing file */
	__u8 id[16];			/* = header id */
	__u32 hdr_csum;			/* = header csum */
	__u32 reserved;
	char name[32];			/* basename at mkfs, for messages */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_backing_desc) == 64);

/* The cache's own layout version: unchanged by superblock version 2. */
#define DAXFS_PCACHE_VERSION	1u

struct daxfs_pcache_header {
	__u64 magic;			/* DAXFS_PCACHE_MAGIC */
	__u32 version;			/* DAXFS_PCACHE_VERSION */
	__u32 header_size;		/* sizeof */
	__u64 nr_slots;			/* cache pages */
	__u32 window;			/* slots probed per tag (1..nr_slots) */
	__u32 pin_stride;		/* bytes of pin counters per slot */
	__u64 owner_off;
	__u64 meta_off;
	__u64 pins_off;
	__u64 data_off;
	__u32 nr_backing;		/* entries of backing[] in use */
	__u32 max_hosts;		/* = sb.max_hosts */
	__u64 reserved[6];
	struct daxfs_backing_desc backing[DAXFS_PCACHE_MAX_BACKING];
	__u32 pad;
	__u32 csum;			/* CRC32C of the bytes before this field */
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_pcache_header) == 1152);

/* Mutable cluster-wide words of the cache, one per cache line. */
struct daxfs_pcache_live {
	struct daxfs_line hand;		/* CLOCK sweep hand (slots swept, grows) */
	struct daxfs_line req_seq;	/* bumped by every posted fill request */
	struct daxfs_line req_overflow;	/* a request did not fit the ring */
	struct daxfs_line fills;	/* statistics below: advisory only */
	struct daxfs_line evictions;
	struct daxfs_line takeovers;	/* PENDING/EVICTING of dead owners */
	struct daxfs_line served;	/* requests filled for other hosts */
	struct daxfs_line timeouts;	/* requests nobody served in time */
	__u64 req_ring[DAXFS_PCACHE_REQ_RING];	/* 0 or slot index + 1 */
	__u64 reserved[64];
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_pcache_live) == 1280);
DAXFS_STATIC_ASSERT(DAXFS_PCACHE_LIVE_OFF + sizeof(struct daxfs_pcache_live)
		    <= DAXFS_BLOCK_SIZE);

/*
 * Slot metadata.  state word:
 *   bits 0-1   DAXFS_PC_FREE / PENDING / VALID / EVICTING
 *   bit  2     DAXFS_PC_REF: CLOCK reference bit (VALID)
 *   bit  3     DAXFS_PC_REQ: fill requested by a host without backing
 *              access (PENDING)
 *   bits 4-12  owner host slot + 1 while PENDING / EVICTING, else 0
 *   bits 13-36 low 24 bits of the owner's host generation
 *   bits 37-63 fill sequence: +1 every time the slot is claimed
 * tag word: 0 (none) or (backing index + 1) << 48 | backing page number;
 * written only by the owner of a PENDING slot, zeroed before FREE.
 */
enum daxfs_pc_state {
	DAXFS_PC_FREE = 0,
	DAXFS_PC_PENDING = 1,
	DAXFS_PC_VALID = 2,
	DAXFS_PC_EVICTING = 3,
};
#define DAXFS_PC_STATE_MASK	3ULL
#define DAXFS_PC_REF		(1ULL << 2)
#define DAXFS_PC_REQ		(1ULL << 3)
#define DAXFS_PC_OWNER_SHIFT	4
#define DAXFS_PC_OWNER_MASK	0x1ffULL
#define DAXFS_PC_OGEN_SHIFT	13
#define DAXFS_PC_OGEN_MASK	0xffffffULL
#define DAXFS_PC_SEQ_SHIFT	37
#define DAXFS_PC_SEQ_MASK	((1ULL << 27) - 1)
#define DAXFS_PC_TAG_IDX_SHIFT	48
#define DAXFS_PC_TAG_PG_MASK	((1ULL << DAXFS_PC_TAG_IDX_SHIFT) - 1)

/* pin_owner words: 0 unowned, daxfs_claim_word(slot, gen) of the host
 * using the column, or CLEANING | claim of the host zeroing it. */
#define DAXFS_PC_OWNER_CLEANING	(1ULL << 63)

struct daxfs_pcache_slot {
	__u64 state;
	__u64 tag;
};
DAXFS_STATIC_ASSERT(sizeof(struct daxfs_pcache_slot) == 16);

#endif /* DAXFS_FORMAT_H */
