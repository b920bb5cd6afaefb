/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * File data: the per-file radix tree (core/radix.c) and the read, write,
 * truncate and map paths built on it (core/file.c).  Protocols, invariants
 * and crash story: docs/files.md.
 */
#ifndef DAXFS_FILE_H
#define DAXFS_FILE_H

#include "compat.h"
#include "daxfs_core.h"

/*
 * inode.root of a regular file:
 *   0                    empty
 *   DAXFS_RADIX_SEALED   data dropped for good (file freed, nlink 0)
 *   page offset | 0      "direct" (height 0): the data page of block 0,
 *                        the only block the file maps
 *   node offset | h      a tree of height h (1..4)
 *
 * Radix slot values:
 *   0                    empty (hole)
 *   DAXFS_RADIX_SEALED   the node holding this slot is being dropped by a
 *                        truncate; nothing may be inserted here.  Readers
 *                        treat it as a hole, writers help finish the drop
 *                        and retry from the root.
 *   page offset          a 4 KiB aligned pool page (child node or data)
 *   data page | DAXFS_RADIX_UNWRITTEN  (format 8; a leaf slot or a direct
 *                        root) a page that holds only zeros: made by
 *                        fallocate or zeroed whole by ZERO_RANGE
 */
#define DAXFS_RADIX_SEALED	1ULL

/* Blocks mapped by a tree of the given height (height 0, a direct root:
 * block 0 only). */
static inline u64 daxfs_radix_span(u32 height)
{
	return height >= DAXFS_RADIX_MAX_HEIGHT + 1 ? 0 :
	       1ULL << (DAXFS_RADIX_BITS * height);
}

/* Smallest tree height whose tree maps block blk (1..4; 0 when too large;
 * never 0 for block 0: see daxfs_radix_insert for direct roots). */
static inline u32 daxfs_radix_height_for(u64 blk)
{
	u32 h;

	for (h = 1; h <= DAXFS_RADIX_MAX_HEIGHT; h++)
		if (blk < daxfs_radix_span(h))
			return h;
	return 0;
}

/*
 * Read-side lookup of blk in the tree whose root word the caller loaded
 * into *root (a snapshot the caller keeps alive: for a direct root the
 * slot returned is that word itself).  On success one of:
 *  - *slots != NULL: every block b in [*lo, *hi) has slot value
 *    (*slots)[b - *lo] (load it with daxfs_load; 0 / SEALED is a hole);
 *  - *run != 0: [*lo, *hi) is a 2 MiB run (format 11), block b's page is
 *    *run + (b - *lo) * 4096, written data;
 *  - neither: the whole range [blk, *hi) is unmapped (missing subtree;
 *    the caller may clamp it).
 * daxfs_leaf_word gives a block's word in every case.  -EUCLEAN on a
 * corrupt tree.
 */
int daxfs_radix_leaf(struct daxfs_fs *fs, const u64 *root, u64 blk,
		     const u64 **slots, u64 *run, u64 *lo, u64 *hi);

/* The word of block blk alone (daxfs_leaf_word of what daxfs_radix_leaf
 * gives, 0 for a hole) in *word: a read of one block. */
int daxfs_radix_word(struct daxfs_fs *fs, const u64 *root, u64 blk,
		     u64 *word);

/* A level-2 slot word v that names a run: the run's first page, or 0
 * when v names none or is garbage (other low bits, not 2 MiB aligned,
 * outside the pool: daxfs_ptr's alignment check). */
static inline u64 daxfs_radix_run_of(struct daxfs_fs *fs, u64 v)
{
	u64 r = v & ~DAXFS_RADIX_RUN;

	return (v & DAXFS_RADIX_RUN) &&
	       daxfs_ptr(fs, r, DAXFS_RUN_SIZE, DAXFS_RUN_SIZE) ? r : 0;
}

/* The word of block b (in [lo, hi)) of a leaf daxfs_radix_leaf gave: a
 * slot's value, a run's page (never unwritten), or 0 for a hole. */
static inline u64 daxfs_leaf_word(const u64 *slots, u64 run, u64 lo, u64 b)
{
	if (slots)
		return daxfs_load(&slots[b - lo]);
	return run ? run + ((b - lo) << DAXFS_BLOCK_SHIFT) : 0;
}

/* Value of one leaf slot as a data page pointer: NULL for a hole or a
 * sealed slot; -EUCLEAN (via *err) on garbage (the unwritten flag aside,
 * not a page of the pool).  Inline: every read and rewrite calls it once
 * a page, and the call cost more than the checks (bench/ins_op.sh). */
static inline void *daxfs_radix_page(struct daxfs_fs *fs, u64 v, int *err)
{
	u64 pg = v & ~(u64)DAXFS_RADIX_UNWRITTEN;
	void *p = NULL;

	if (!v || v == DAXFS_RADIX_SEALED)
		return NULL;
	if (pg && !(pg & (DAXFS_BLOCK_SIZE - 1)))
		p = daxfs_ptr(fs, pg, DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE);
	if (!p)
		*err = -EUCLEAN;
	return p;
}

/* Page of block blk (0 when none, never with the unwritten flag), read
 * only. */
int daxfs_radix_get(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		    u64 *page);

/* The first page of the run (format 11) holding block blk in *run, 0
 * when blk's 2 MiB is not one run. */
int daxfs_radix_run(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		    u64 *run);

/* daxfs_radix_get that also tells whether the page is unwritten. */
int daxfs_radix_lookup(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		       u64 *page, bool *unwritten);

/*
 * Clears the unwritten flag of page pg as block blk (format 8), before a
 * store into it: one CAS on the word naming it (written back and drained
 * on persistent media first).  Nothing when the flag is clear, or when
 * blk no longer has pg (detached meanwhile).  -ESTALE when fenced.
 */
int daxfs_radix_written(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
			u64 pg);

/* Sets it (ZERO_RANGE, the gate closed, after pg was zeroed whole). */
int daxfs_radix_unwritten(struct daxfs_op *op, struct daxfs_inode *ip,
			  u64 blk, u64 pg);

/*
 * Publishes page (zeroed or fully prepared, already flushed) as block
 * blk of ip, creating missing nodes and growing the tree.  Returns 0 and
 * *winner = 0 when our page went in (blocks += 1); when another page is
 * already there returns 0 with *winner = that page (ours is untouched:
 * the caller frees it).  -ENOSPC, -EUCLEAN, -EAGAIN (livelock guard).
 */
int daxfs_radix_insert(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
		       u64 page, u64 *winner);

/*
 * Makes the nodes on block blk's path exist (growing the tree), and
 * publishes nothing: a later insert of blk then needs no allocation, so
 * cannot fail with -ENOSPC (an append's first page).  *page: blk's page
 * now, 0 when none (never with the unwritten flag).
 */
int daxfs_radix_prepare(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 blk, u64 *page);

/*
 * Publishes the 2 MiB run at run (512 pages, aligned, filled and written
 * back) as blocks [blk, blk + 512) of ip, blk a multiple of 512: one CAS
 * of a level-2 slot 0 -> run, after creating missing nodes and growing
 * the tree to height 2 or more (blocks += 512).  1 when the slot holds a
 * leaf or another run already (the caller publishes page by page),
 * -ENOENT (file freed), -ENOSPC, -EFBIG, -ESTALE, -EUCLEAN, -EAGAIN.
 */
int daxfs_radix_insert_run(struct daxfs_op *op, struct daxfs_inode *ip,
			   u64 blk, u64 run);

/*
 * The last step of an insert: CAS leaf slot 0 -> page.  0 with *winner =
 * 0 when ours went in (blocks += 1), 0 with *winner = the page already
 * there, 1 when the slot is SEALED (its node is being dropped: insert
 * through the root, which helps), -ESTALE when fenced, -EUCLEAN.
 */
int daxfs_radix_publish(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 *slot, u64 page, u64 *winner);

/*
 * A leaf resolved once for a run of blocks (core/radix-cursor.c, docs/files.md
 * "Leaf cursor"): a multi-page read or write walks the tree once per 512
 * blocks, not once per block.  Lives for one op only (the node it names is
 * safe from reuse only while our epoch holds it).  Start with
 * daxfs_rcur_init; never copy one (a direct root's slot is its own word).
 */
struct daxfs_rcur {
	u64 root;		/* the root snapshot the leaf came from */
	const u64 *slots;	/* NULL and no run: [lo, hi) is a hole */
	u64 run;		/* a 2 MiB run maps [lo, hi) */
	u64 lo, hi;
};

static inline void daxfs_rcur_init(struct daxfs_rcur *lf)
{
	lf->slots = NULL;
	lf->run = 0;
	lf->lo = 1;
	lf->hi = 0;
}

/* Page of block blk (0 for a hole) through the cursor, re-resolved from a
 * fresh root when blk is outside the cached leaf. */
int daxfs_rcur_page(struct daxfs_fs *fs, struct daxfs_inode *ip,
		    struct daxfs_rcur *lf, u64 blk, u64 *page);

/* daxfs_rcur_page for a writer about to store into the page: an
 * unwritten page is cleared first (CAS on the cached leaf's slot, or
 * daxfs_radix_written). */
int daxfs_rcur_page_w(struct daxfs_op *op, struct daxfs_inode *ip,
		      struct daxfs_rcur *lf, u64 blk, u64 *page);

/*
 * How many blocks from blk on (below lim) have the leaf words w, w + BLK,
 * w + 2 BLK, ... in slots (which start at block lo): plain loads, no walk
 * and no CAS.  A word that differs in any bit (another page, a hole,
 * SEALED, the unwritten flag) ends the span.  The caller checks the
 * span's pages with one daxfs_ptr of the whole span.
 */
static inline u64 daxfs_slots_contig(const u64 *slots, u64 lo, u64 blk,
				     u64 w, u64 lim)
{
	u64 b;

	for (b = blk; b < lim; b++, w += DAXFS_BLOCK_SIZE)
		if (daxfs_load(&slots[b - lo]) != w)
			break;
	return b - blk;
}

/*
 * daxfs_slots_contig in the leaf the cursor holds, for a rewrite of many
 * pages: how many blocks from blk on hold the written pages pg, pg + BLK,
 * ...; where it stops, daxfs_rcur_page_w takes over (the next leaf, an
 * unwritten page).
 */
static inline u64 daxfs_rcur_contig(const struct daxfs_rcur *lf, u64 blk,
				    u64 pg, u64 lim)
{
	if (blk < lf->lo || blk >= lf->hi)
		return 0;
	if (lim > lf->hi)
		lim = lf->hi;
	if (!lf->slots) {
		/* a run's pages are contiguous and never unwritten */
		if (!lf->run || daxfs_leaf_word(NULL, lf->run, lf->lo, blk) != pg)
			return 0;
		return lim - blk;
	}
	return daxfs_slots_contig(lf->slots, lf->lo, blk, pg, lim);
}

/*
 * Whether the cursor's leaf already answers for block blk what
 * daxfs_rcur_page_w would: blk lies in it and its word is no unwritten
 * page (whose mark the call clears).  A rewrite's span that
 * daxfs_rcur_contig ended at such a block ends there with no call: on a
 * file whose pages are not contiguous, that call was made twice a page.
 */
static inline bool daxfs_rcur_settled(const struct daxfs_rcur *lf, u64 blk)
{
	if (blk < lf->lo || blk >= lf->hi)
		return false;
	/* a run's pages are never unwritten; no slots and no run: a hole */
	if (!lf->slots)
		return true;
	return !(daxfs_load(&lf->slots[blk - lf->lo]) & DAXFS_RADIX_UNWRITTEN);
}

/* daxfs_radix_prepare through the cursor: a block inside the cached leaf
 * (the usual append) needs no walk, and the leaf stays cached for the
 * write that follows in the same op. */
int daxfs_rcur_prepare(struct daxfs_op *op, struct daxfs_inode *ip,
		       struct daxfs_rcur *lf, u64 blk, u64 *page);

/* daxfs_radix_insert through the cursor: one CAS on the cached leaf's
 * slot when there is one, else (and when it is sealed) the walk from the
 * root, after which the cursor is re-resolved on its next use. */
int daxfs_rcur_insert(struct daxfs_op *op, struct daxfs_inode *ip,
		      struct daxfs_rcur *lf, u64 blk, u64 page, u64 *winner);

/* Detaches and retires every data page of blocks >= first and every node
 * covering only such blocks (blocks -= pages detached).  first == 0 drops
 * the whole tree (inode.root -> 0), a direct root included.  A taller tree
 * is never shortened (nor turned back into a direct root). */
int daxfs_radix_trim(struct daxfs_op *op, struct daxfs_inode *ip, u64 first);

/* Detaches and retires the data pages of blocks [first, last) and the
 * nodes covering only such blocks (blocks -= pages detached): a hole
 * punched in the middle (core/falloc.c).  Nodes that also map blocks
 * outside the range stay; a direct root's page goes when first is 0. */
int daxfs_radix_punch(struct daxfs_op *op, struct daxfs_inode *ip, u64 first,
		      u64 last);

/*
 * Intent recorded in the lane by every write (a[0] = ino, a[1] = first
 * byte, a[2] = end, a[3] = 0) and every shrink (a[0] = ino, an empty
 * range, a[3] = the shrinker's claim word) of a regular file: the write
 * gate's half in the lanes (core/filegate.h).
 */

/* Recovery of a dead host's lane whose intent is DAXFS_INTENT_FILE_WRITE:
 * opens the write gate a dead shrinker closed; a dead write needs
 * nothing (docs/files.md "Crash story"). */
void daxfs_file_recover(struct daxfs_op *op, struct daxfs_lane *dead_lane);

/* ---- for the namespace side ---- */

/* Retires every data page and radix node of a file whose last link went
 * (or any regular file being freed).  Safe against concurrent readers and
 * writers still holding the record: they see holes / restart. */
void daxfs_file_drop_data(struct daxfs_op *op, struct daxfs_inode *ip);

/* daxfs_read_fc inside the caller's op (core/atomicw.c reads under one). */
s64 daxfs_file_read(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		    u64 off, u64 len, daxfs_read_actor_t actor, void *ctx);
/* The same for an inode the caller found in this op (-EISDIR, -EINVAL
 * unless a regular file). */
struct daxfs_iref;
s64 daxfs_ref_read(struct daxfs_op *op, const struct daxfs_iref *ref,
		   u64 off, u64 len, daxfs_read_actor_t actor, void *ctx);

#endif /* DAXFS_FILE_H */
