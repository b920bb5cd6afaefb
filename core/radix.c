// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-file radix tree of 4 KiB nodes (512 slots each) mapping file blocks
 * to 4 KiB data pages.  inode.root = node offset | height (1..4); a data
 * page offset | 0 ("direct", height 0: the file maps block 0 only and the
 * root IS that page); 0 empty; DAXFS_RADIX_SEALED dropped for good.
 *
 * Lock-free rules (docs/files.md):
 * - Slots only go 0 -> page/node (insert), page/node -> 0 (detach by a
 *   truncate of a node that stays), or x -> SEALED (the node is being
 *   dropped).  Whoever wins the CAS away from a page/node retires it, so
 *   every object is retired exactly once.
 * - The root goes 0 -> direct page | tree (insert), direct page -> node|1
 *   whose slot 0 is that page (growth: the page changes owner, nobody
 *   retires it), tree -> taller tree (growth), and direct page | tree ->
 *   0 / SEALED (truncate to 0 / final drop: the winner retires).
 * - A node is dropped by sealing every slot (bottom-up), then CASing the
 *   pointer to it 0.  A writer that meets a SEALED slot helps finish the
 *   drop and retries from the root, so a truncater dying half-way never
 *   wedges writers and no page is ever published into a detached node.
 * - Retired nodes and pages stay readable until every host has left the
 *   epoch (core/reclaim.c), so walkers never touch reused memory.
 * - A slot of a level-2 node may name a run (format 11): 512 contiguous,
 *   2 MiB aligned data pages, DAXFS_RADIX_RUN set, in place of a leaf.  It
 *   goes 0 -> run (one CAS publishes 512 pages), run -> 0 / SEALED (its
 *   winner retires the 512 pages), and run -> leaf naming the same pages
 *   (a split, before anything cuts part of it); never anything else.
 * - A word naming a data page (leaf slot, direct root) may carry
 *   DAXFS_RADIX_UNWRITTEN (format 8): the page holds only zeros.  It goes
 *   page -> page|U only under a closed gate after the page was zeroed
 *   (ZERO_RANGE), 0 -> page|U when fallocate publishes a zeroed page, and
 *   page|U -> page before anything stores into the page.  Clearing is
 *   always safe; setting is the direction that needs the zeros first.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "file.h"
#include "filegate.h"

#define RADIX_MASK	((u64)DAXFS_RADIX_FANOUT - 1)
#define PAGE_MASK_LO	((u64)DAXFS_BLOCK_SIZE - 1)
#define UNW		DAXFS_RADIX_UNWRITTEN
#define RUN		DAXFS_RADIX_RUN
#define RUN_LEVEL	2	/* runs are slots of level-2 nodes */
/* Livelock guard for CAS retry loops (each failure is someone's progress). */
#define RADIX_RETRIES	1000000u

static inline u32 radix_idx(u64 blk, u32 level)
{
	return (u32)((blk >> (DAXFS_RADIX_BITS * (level - 1))) & RADIX_MASK);
}

/* A slot or root value as a node/page pointer; NULL if it is garbage. */
static struct daxfs_radix_node *node_at(struct daxfs_fs *fs, u64 v)
{
	if (!v || (v & PAGE_MASK_LO))
		return NULL;
	return daxfs_ptr(fs, v, DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE);
}

/* A word naming a data page (leaf slot, direct root without its height):
 * node_at of the page, the unwritten flag aside. */
static void *page_at(struct daxfs_fs *fs, u64 v)
{
	return node_at(fs, v & ~UNW);
}

/* node_at for an index node a lookup reads (a data page's media errors
 * are the data copy's business: EIO for that page only) */
static struct daxfs_radix_node *index_at(struct daxfs_fs *fs, u64 v)
{
	struct daxfs_radix_node *n = node_at(fs, v);

	return n && !daxfs_media_bad(fs, v, DAXFS_BLOCK_SIZE) ? n : NULL;
}

/*
 * Decodes a root that is neither 0 nor SEALED: *height 1..4 and *node the
 * top node, or *height 0 and *node the data page of block 0 (direct).
 * Inlined: each read and write walks once (bench/ins_op.sh: a call cost
 * a 4 KiB read about 25 instructions).
 */
static daxfs_always_inline int root_decode(struct daxfs_fs *fs, u64 root,
					   struct daxfs_radix_node **node,
					   u32 *height)
{
	u32 h = (u32)(root & DAXFS_RADIX_HEIGHT_MASK);

	if (h > DAXFS_RADIX_MAX_HEIGHT)
		return -EUCLEAN;
	/* a direct root names a data page: it may be unwritten */
	if (root & PAGE_MASK_LO & ~DAXFS_RADIX_HEIGHT_MASK & ~(h ? 0 : UNW))
		return -EUCLEAN;
	*node = h ? index_at(fs, root & ~PAGE_MASK_LO) :
		    node_at(fs, root & ~PAGE_MASK_LO);
	if (!*node)
		return -EUCLEAN;
	*height = h;
	return 0;
}

/* daxfs_radix_leaf's body, inlined into daxfs_radix_word too, where the
 * stores to the caller's words fold away. */
static daxfs_always_inline int radix_leaf(struct daxfs_fs *fs,
					  const u64 *root, u64 blk,
					  const u64 **slots, u64 *run,
					  u64 *lo, u64 *hi)
{
	struct daxfs_radix_node *node;
	u64 r = daxfs_load(root);
	u32 h, level;
	int err;

	*slots = NULL;
	*run = 0;
	*lo = blk;
	*hi = daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT);
	if (!r || r == DAXFS_RADIX_SEALED)
		return 0;		/* empty, or dropped for good */
	err = root_decode(fs, r, &node, &h);
	if (err)
		return err;
	if (!h) {
		/* direct: the caller's root word is the slot of block 0 */
		if (!blk) {
			*slots = root;
			*hi = 1;
		}
		return 0;
	}
	if (blk >= daxfs_radix_span(h))
		return 0;
	for (level = h; level > 1; level--) {
		u64 v = daxfs_load(&node->slot[radix_idx(blk, level)]);

		if (!v || v == DAXFS_RADIX_SEALED) {
			u64 span = daxfs_radix_span(level - 1);

			*hi = (blk & ~(span - 1)) + span;
			return 0;
		}
		if (level == RUN_LEVEL && (v & RUN)) {
			*run = daxfs_radix_run_of(fs, v);
			if (!*run)
				return -EUCLEAN;
			*lo = blk & ~RADIX_MASK;
			*hi = *lo + DAXFS_RADIX_FANOUT;
			return 0;
		}
		node = index_at(fs, v);
		if (!node)
			return -EUCLEAN;
	}
	*slots = node->slot;
	*lo = blk & ~RADIX_MASK;
	*hi = *lo + DAXFS_RADIX_FANOUT;
	return 0;
}

int daxfs_radix_leaf(struct daxfs_fs *fs, const u64 *root, u64 blk,
		     const u64 **slots, u64 *run, u64 *lo, u64 *hi)
{
	return radix_leaf(fs, root, blk, slots, run, lo, hi);
}

int daxfs_radix_word(struct daxfs_fs *fs, const u64 *root, u64 blk,
		     u64 *word)
{
	const u64 *slots;
	u64 run, lo, hi;
	int err = radix_leaf(fs, root, blk, &slots, &run, &lo, &hi);

	*word = err ? 0 : daxfs_leaf_word(slots, run, lo, blk);
	return err;
}

int daxfs_radix_lookup(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		       u64 *page, bool *unwritten)
{
	const u64 *slots;
	u64 r = daxfs_load(&ip->root), run, lo, hi, v;
	int err;

	*page = 0;
	*unwritten = false;
	err = daxfs_radix_leaf(fs, &r, blk, &slots, &run, &lo, &hi);
	if (err)
		return err;
	v = daxfs_leaf_word(slots, run, lo, blk);
	if (!v || v == DAXFS_RADIX_SEALED)
		return 0;
	if (!page_at(fs, v))
		return -EUCLEAN;
	*page = v & ~UNW;
	*unwritten = v & UNW;
	return 0;
}

int daxfs_radix_run(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		    u64 *run)
{
	const u64 *slots;
	u64 r = daxfs_load(&ip->root), lo, hi;

	/* *run stays 0 on every error (daxfs_radix_leaf) */
	return daxfs_radix_leaf(fs, &r, blk, &slots, run, &lo, &hi);
}

int daxfs_radix_get(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		    u64 *page)
{
	bool unw;

	return daxfs_radix_lookup(fs, ip, blk, page, &unw);
}

/*
 * The word that names block blk's data page in the region (the root for
 * a direct root, else its leaf slot) and its value; *word NULL when the
 * block has no page, or a page of a run (which has no word of its own
 * and is never unwritten).  The walk is daxfs_radix_leaf's, on the root
 * word itself: for a direct root the "slot" it gives is that word.
 */
static int page_word(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 blk,
		     u64 **word, u64 *val)
{
	const u64 *slots;
	u64 run, lo, hi;
	int err;

	*word = NULL;
	err = daxfs_radix_leaf(fs, &ip->root, blk, &slots, &run, &lo, &hi);
	if (err || !slots)
		return err;
	*word = (u64 *)&slots[blk - lo];
	*val = daxfs_load(*word);
	return 0;
}

/*
 * Moves the flag of the word naming page pg as block blk: from `from`
 * (0 or UNW) to `to`.  Nothing when the word names another page or none
 * (detached meanwhile) or already has `to`.  A failed CAS on the root
 * walks again (a grower may have moved a direct page into a node); on a
 * leaf slot it looks at what won.  On persistent media the word is on
 * the media before we return, so a store that follows a clear cannot
 * reach the media ahead of it.
 */
static int flag_move(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
		     u64 pg, u64 from, u64 to)
{
	struct daxfs_fs *fs = op->fs;
	u32 tries;
	u64 *word, v;
	int err;

	for (tries = 0; tries < RADIX_RETRIES; tries++) {
		err = page_word(fs, ip, blk, &word, &v);
		if (err || !word)
			return err;
		for (;;) {
			/* the root grew since the walk: the page is in a
			 * node now (growth moves the word, flag and all) */
			if (word == &ip->root && (v & DAXFS_RADIX_HEIGHT_MASK))
				break;
			if (v != (pg | from))
				return 0;	/* done, or not our page */
			if (daxfs_fenced(op))
				return -ESTALE;
			if (daxfs_cas(word, &v, pg | to)) {
				daxfs_pflush(fs, word, 8);
				if (fs->flags & DAXFS_FS_PERSISTENT)
					daxfs_drain();
				return 0;
			}
			if (word == &ip->root)
				break;		/* walk again */
		}
	}
	return -EAGAIN;
}

int daxfs_radix_written(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
			u64 pg)
{
	return flag_move(op, ip, blk, pg, UNW, 0);
}

int daxfs_radix_unwritten(struct daxfs_op *op, struct daxfs_inode *ip,
			  u64 blk, u64 pg)
{
	return flag_move(op, ip, blk, pg, 0, UNW);
}

static void blocks_sub(struct daxfs_inode *ip)
{
	daxfs_faa(&ip->blocks, (u64)-1);
}

/*
 * Once per leaf node that a sweep, a seal or a drop visits: a file of tens
 * of TiB is millions of leaves in one op, past the kernel's soft-lockup
 * threshold without a resched.  The walk never stops early, fatal signal
 * or not: a half-swept truncate would leave pages past the new size for a
 * later extend to expose, and a half-dropped file would leak.  The walk is
 * bounded by the file's leaves, and preemption inside an op is what any
 * host may suffer anyway (docs/files.md "Sweeps yield").
 */
static void sweep_yield(void)
{
	(void)daxfs_walk_yield();
}

static int run_split(struct daxfs_op *op, u64 *slot, u64 *v, bool reserve);

/*
 * The run *v of *slot taken out whole, by one CAS to `to` (0 or SEALED):
 * only when the pool has no page for the leaf of run_split (a drop on a
 * full pool must not fail, and the limbo reserve is for its retires).  The winner lowers
 * the block count first (see seal_node), then retires the 512 pages; a
 * host killed among those retires leaks the rest.  0: taken; 1: the CAS
 * failed (*v reloaded: split or cut by someone else); <0: error.
 */
static int run_take(struct daxfs_op *op, struct daxfs_inode *ip, u64 *slot,
		    u64 *v, u64 to)
{
	u64 r = daxfs_radix_run_of(op->fs, *v);
	u32 k;

	if (!r)
		return -EUCLEAN;
	if (daxfs_fenced(op))
		return -ESTALE;
	if (!daxfs_cas(slot, v, to))
		return 1;
	daxfs_faa(&ip->blocks, -(u64)DAXFS_RUN_PAGES);
	daxfs_pflush(op->fs, slot, 8);
	for (k = 0; k < DAXFS_RUN_PAGES; k++)
		if (daxfs_retire(op, r + (u64)k * DAXFS_BLOCK_SIZE,
				 DAXFS_CLASS_PAGE))
			return -ESTALE;	/* fenced: the rest leak (fsck) */
	return 0;
}

/*
 * Seals every slot of node (at level; 1 = leaf) and, below it, of every
 * child, retiring what each winning CAS takes out.  Idempotent: several
 * hosts may seal the same node at once.  Recursion depth <= 4.
 */
static int seal_node(struct daxfs_op *op, struct daxfs_inode *ip,
		     struct daxfs_radix_node *node, u32 level)
{
	struct daxfs_fs *fs = op->fs;
	u32 i, tries;
	int err;

	if (level == 1)
		sweep_yield();
	for (i = 0; i < DAXFS_RADIX_FANOUT; i++) {
		u64 *slot = &node->slot[i];
		u64 v = daxfs_load(slot);

		for (tries = 0; v != DAXFS_RADIX_SEALED; tries++) {
			struct daxfs_radix_node *child = NULL;

			if (tries >= RADIX_RETRIES)
				return -EAGAIN;
			if (level == RUN_LEVEL && (v & RUN)) {
				/* as a leaf: see run_split */
				err = run_split(op, slot, &v, false);
				if (err == -ENOSPC) {
					err = run_take(op, ip, slot, &v,
						       DAXFS_RADIX_SEALED);
					if (!err)
						break;
				}
				if (err < 0)
					return err;
				continue;
			}
			if (v) {
				child = level > 1 ? node_at(fs, v) :
					page_at(fs, v);
				if (!child)
					return -EUCLEAN;
				if (level > 1) {
					err = seal_node(op, ip, child, level - 1);
					if (err)
						return err;
				}
			}
			if (daxfs_fenced(op))
				return -ESTALE;
			if (daxfs_cas(slot, &v, DAXFS_RADIX_SEALED)) {
				/*
				 * The count right after the CAS, before the
				 * retire: a host stopped at the retire's fence
				 * and declared dead returns from it and must
				 * store nothing more, ip's record included,
				 * which recovery may have freed and another
				 * file reuse by then (tests/
				 * test_zombie_fence.py, extra_ops).
				 */
				if (child) {
					if (level == 1)
						blocks_sub(ip);
					if (daxfs_retire(op, v & ~UNW,
							 DAXFS_CLASS_PAGE))
						return -ESTALE;
				}
				break;
			}
		}
	}
	daxfs_pflush(fs, node, sizeof(*node));
	return 0;
}

/* Finishes dropping node (reached through *pslot == pv): seal, unhook
 * (*pslot -> to: 0, or DAXFS_RADIX_SEALED for the root of a file being
 * freed), retire.  Used by truncate, by the final drop and by writers that
 * find a SEALED slot (they always unhook to 0). */
static int drop_at(struct daxfs_op *op, struct daxfs_inode *ip, u64 *pslot,
		   u64 pv, struct daxfs_radix_node *node, u32 level, u64 to)
{
	u64 expect = pv;
	int err;

	err = seal_node(op, ip, node, level);
	if (err)
		return err;
	if (daxfs_fenced(op))
		return -ESTALE;
	if (daxfs_cas(pslot, &expect, to)) {
		daxfs_pflush(op->fs, pslot, sizeof(*pslot));
		return daxfs_retire(op, pv & ~PAGE_MASK_LO, DAXFS_CLASS_PAGE);
	}
	return 0;
}

/* A fresh zeroed node, written back before anyone can see it. */
static u64 new_node(struct daxfs_op *op)
{
	u64 off = daxfs_alloc(op, DAXFS_CLASS_PAGE);

	if (off)
		daxfs_pflush(op->fs, daxfs_ptr(op->fs, off, DAXFS_BLOCK_SIZE,
					       DAXFS_BLOCK_SIZE),
			     DAXFS_BLOCK_SIZE);
	return off;
}

int daxfs_radix_publish(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 *slot, u64 page, u64 *winner)
{
	u64 v = 0;

	*winner = 0;
	if (daxfs_fenced(op))
		return -ESTALE;
	/* the count first (docs/files.md "Block count"): a death between
	 * the two leaves it high, as a removal's does */
	daxfs_faa(&ip->blocks, 1);
	if (daxfs_cas(slot, &v, page)) {
		daxfs_pflush(op->fs, slot, 8);
		return 0;
	}
	daxfs_faa(&ip->blocks, (u64)-1);
	if (v == DAXFS_RADIX_SEALED)
		return 1;
	if (!page_at(op->fs, v))
		return -EUCLEAN;
	*winner = v & ~UNW;
	return 0;
}

/* The last step of a run's publication: CAS level-2 slot 0 -> run.  0
 * when it went in (blocks += 512), 1 when the slot holds a leaf or a run
 * already, 2 when it is SEALED (help the drop, retry). */
static int run_publish(struct daxfs_op *op, struct daxfs_inode *ip,
		       u64 *slot, u64 word)
{
	u64 v = 0;

	if (daxfs_fenced(op))
		return -ESTALE;
	daxfs_faa(&ip->blocks, DAXFS_RUN_PAGES);	/* the count first */
	if (daxfs_cas(slot, &v, word)) {
		daxfs_pflush(op->fs, slot, 8);
		return 0;
	}
	daxfs_faa(&ip->blocks, -(u64)DAXFS_RUN_PAGES);
	return v == DAXFS_RADIX_SEALED ? 2 : 1;
}

/*
 * What index slot *slot holds, after putting a fresh node there if it
 * held 0: our node, or whatever beat our CAS to it.  That may be another
 * writer's node, SEALED, or, in a level-2 slot, another writer's run
 * published between our load and our CAS, so the caller judges *v only
 * after this returns (a run taken for a node was -EUCLEAN to a page
 * writer racing a run writer: tests/race/test_run_beats_node.c).
 */
static int slot_filled(struct daxfs_op *op, u64 *slot, u64 *v)
{
	u64 nn;

	*v = daxfs_load(slot);
	if (*v)
		return 0;
	nn = new_node(op);
	if (!nn)
		return -ENOSPC;
	if (daxfs_fenced(op))
		return -ESTALE;
	daxfs_race_point("radix.slot_empty", slot);
	if (daxfs_cas(slot, v, nn)) {
		daxfs_pflush(op->fs, slot, 8);
		*v = nn;
		return 0;
	}
	return daxfs_free_now(op, nn, DAXFS_CLASS_PAGE) ? -ESTALE : 0;
}

/*
 * Publishes word at the tree level `stop` for block blk: a data page in
 * a leaf slot (stop 1, or a direct root), or a run in a level-2 slot
 * (stop RUN_LEVEL, blk the run's first block), creating missing nodes and
 * growing the tree.  Returns 0 when ours went in (*winner = 0), or when
 * a page is already there (*winner = it: a page of a run counts); 1 when
 * a run finds its slot taken (a leaf or another run).
 */
static int place(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
		 u64 word, u32 stop, u64 *winner)
{
	struct daxfs_fs *fs = op->fs;
	u32 tries;
	int err;

	*winner = 0;
	if (blk >= daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT))
		return -EFBIG;
	for (tries = 0; tries < RADIX_RETRIES; tries++) {
		struct daxfs_radix_node *node, *n;
		u64 r = daxfs_load(&ip->root);
		u64 *pslot, *slot, pv, v, nn;
		u32 h, level;

		if (r == DAXFS_RADIX_SEALED)
			return -ENOENT;	/* the file was freed (last link) */
		/* the fence: page may be one recovery freed (held) */
		if (daxfs_fenced(op))
			return -ESTALE;
		if (!r && !blk && stop == 1) {
			/* direct: the page itself becomes the root */
			if (!word)
				return 0;	/* prepare: no node needed */
			daxfs_faa(&ip->blocks, 1);	/* the count first */
			if (daxfs_cas(&ip->root, &r, word)) {
				daxfs_pflush(fs, &ip->root, 8);
				return 0;
			}
			daxfs_faa(&ip->blocks, (u64)-1);
			continue;
		}
		if (!r) {
			h = daxfs_radix_height_for(blk);
			if (h < stop)
				h = stop;
			nn = new_node(op);
			if (!nn)
				return -ENOSPC;
			if (daxfs_fenced(op))
				return -ESTALE;	/* nn leaks to fsck */
			if (daxfs_cas(&ip->root, &r, nn | h))
				daxfs_pflush(fs, &ip->root, 8);
			else if (daxfs_free_now(op, nn, DAXFS_CLASS_PAGE))
				return -ESTALE;
			continue;
		}
		err = root_decode(fs, r, &node, &h);
		if (err)
			return err;
		if (!h && !blk && stop == 1) {
			/* direct root: block 0 already has its page */
			*winner = r & ~PAGE_MASK_LO;
			return 0;
		}
		if (blk >= daxfs_radix_span(h) || h < stop) {
			/* Grow: the old tree (or the direct page of block 0,
			 * h == 0) becomes slot 0 of a new root. */
			nn = new_node(op);
			if (!nn)
				return -ENOSPC;
			n = node_at(fs, nn);
			if (!n)
				return -EUCLEAN;
			/* a direct root's word moves whole, flag and all */
			daxfs_store(&n->slot[0], h ? r & ~PAGE_MASK_LO : r);
			daxfs_pflush(fs, n, 8);
			if (daxfs_fenced(op))
				return -ESTALE;
			if (daxfs_cas(&ip->root, &r, nn | (h + 1)))
				daxfs_pflush(fs, &ip->root, 8);
			else if (daxfs_free_now(op, nn, DAXFS_CLASS_PAGE))
				return -ESTALE;
			continue;
		}
		pslot = &ip->root;
		pv = r;
		for (level = h; level > stop; level--) {
			slot = &node->slot[radix_idx(blk, level)];
			err = slot_filled(op, slot, &v);
			if (err)
				return err;
			if (v == DAXFS_RADIX_SEALED)
				goto help;
			if (level == RUN_LEVEL && (v & RUN)) {
				/* the block is a page of a run */
				*winner = daxfs_radix_run_of(fs, v);
				if (!*winner)
					return -EUCLEAN;
				*winner += radix_idx(blk, 1) * DAXFS_BLOCK_SIZE;
				return 0;
			}
			n = node_at(fs, v);
			if (!n)
				return -EUCLEAN;
			pslot = slot;
			pv = v;
			node = n;
		}
		slot = &node->slot[radix_idx(blk, stop)];
		if (!word) {
			/* daxfs_radix_prepare: the path exists */
			v = daxfs_load(slot);
			if (v == DAXFS_RADIX_SEALED)
				goto help;
			if (v && !page_at(fs, v))
				return -EUCLEAN;
			*winner = v & ~UNW;
			return 0;
		}
		err = stop == 1 ? daxfs_radix_publish(op, ip, slot, word, winner) :
		      run_publish(op, ip, slot, word);
		if (err != (stop == 1 ? 1 : 2))
			return err;
help:
		/* node is being dropped by a truncate: finish it, retry.
		 * That truncate's gate is open again (it died): the
		 * sequence moves for the lane-free readers, as a closed
		 * gate's opening would (core/optread.c). */
		if (daxfs_fenced(op))
			return -ESTALE;
		daxfs_gate_seq_move(ip);
		err = drop_at(op, ip, pslot, pv, node, level, 0);
		if (err)
			return err;
	}
	return -EAGAIN;
}

int daxfs_radix_insert(struct daxfs_op *op, struct daxfs_inode *ip, u64 blk,
		       u64 page, u64 *winner)
{
	return place(op, ip, blk, page, 1, winner);
}

int daxfs_radix_prepare(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 blk, u64 *page)
{
	return place(op, ip, blk, 0, 1, page);
}

int daxfs_radix_insert_run(struct daxfs_op *op, struct daxfs_inode *ip,
			   u64 blk, u64 run)
{
	u64 winner;

	if ((blk & RADIX_MASK) || !daxfs_radix_run_of(op->fs, run | RUN))
		return -EINVAL;
	return place(op, ip, blk, run | RUN, RUN_LEVEL, &winner);
}

/*
 * Detaches the data page that leaf slot holds (value v) and retires it.
 * A failed CAS means a concurrent writer put a new page there after the
 * cut (it is theirs), unless only the unwritten flag moved (an mmap
 * fault cleared it): the page is still ours to cut.
 */
static int leaf_cut(struct daxfs_op *op, struct daxfs_inode *ip, u64 *slot,
		    u64 v)
{
	u64 pg = v & ~UNW;
	u32 tries;

	for (tries = 0; (v & ~UNW) == pg; tries++) {
		if (tries >= RADIX_RETRIES)
			return -EAGAIN;
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_cas(slot, &v, 0)) {
			/* the count first: see seal_node */
			blocks_sub(ip);
			daxfs_pflush(op->fs, slot, 8);
			return daxfs_retire(op, pg, DAXFS_CLASS_PAGE);
		}
	}
	return 0;
}

/*
 * Turns the run *v of *slot into a leaf naming the same pages, so that
 * part or all of it can be cut page by page: one CAS run -> leaf.  A
 * whole run taken out by one CAS is followed by its 512 retires, and a
 * host killed among them leaked the rest (up to 511 pages) with nothing
 * left to say so; as a leaf, each page goes with its own CAS, and a kill
 * leaks at most one (tests/test_zombie_fence.py, extra_ops, killed or
 * stopped in the unlink of a file with a run).  So a whole run is taken
 * out at once (run_take) only when the pool has no page for the leaf: a
 * whole run's leaf does not come from the limbo reserve (reserve false),
 * which a drop on a full pool needs for its retires.  The pages move from
 * the run's word to the leaf's slots (nobody retires anything, blocks
 * stay).
 * A loser frees its leaf, never seen.  On return *v is what the slot
 * holds now: a leaf (ours or another splitter's), 0 or SEALED.  For a
 * cut of part of the run (reserve true) the node may come from the
 * reserve: a truncate must not fail on a full pool.
 */
static int run_split(struct daxfs_op *op, u64 *slot, u64 *v, bool reserve)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_radix_node *n;
	u64 r = daxfs_radix_run_of(fs, *v), nn;
	u32 k;

	if (!r)
		return -EUCLEAN;
	nn = daxfs_alloc(op, DAXFS_CLASS_PAGE);
	if (!nn && reserve)
		nn = daxfs_alloc_limbo_page(op);
	n = nn ? node_at(fs, nn) : NULL;
	if (!n)
		return -ENOSPC;
	/* named in the hold while we fill it (a truncate's or a punch's
	 * op holds nothing else): recovery frees it */
	if (daxfs_hold_pages(op, nn, 1))
		return -ESTALE;		/* nn leaks to fsck */
	for (k = 0; k < DAXFS_RADIX_FANOUT; k++)
		daxfs_store(&n->slot[k], r + (u64)k * DAXFS_BLOCK_SIZE);
	daxfs_pflush(fs, n, sizeof(*n));
	daxfs_crash_point("radix.run_splitting");
	/* out of the hold before it can be published: a crash between
	 * leaks it to fsck, never frees a published node */
	if (daxfs_hold_pages(op, 0, 0))
		return -ESTALE;		/* recovery frees nn */
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_drain();
	if (daxfs_fenced(op))
		return -ESTALE;		/* nn leaks to fsck */
	if (daxfs_cas(slot, v, nn)) {
		daxfs_pflush(fs, slot, 8);
		*v = nn;
		return 0;
	}
	return daxfs_free_now(op, nn, DAXFS_CLASS_PAGE);
}

static int sweep(struct daxfs_op *op, struct daxfs_inode *ip,
		 struct daxfs_radix_node *node, u32 level, u64 base, u64 first,
		 u64 last);

/* sweep of a level-2 slot that holds a run (blocks [cb, cb + 512)): the
 * run is split into a leaf first (run_split), which is then dropped when
 * the run lies wholly in [first, last), else swept. */
static int sweep_run(struct daxfs_op *op, struct daxfs_inode *ip, u64 *slot,
		     u64 v, u64 cb, u64 first, u64 last)
{
	bool whole = cb >= first && cb + DAXFS_RADIX_FANOUT <= last;
	struct daxfs_radix_node *leaf;
	u32 tries;
	int err;

	for (tries = 0; v & RUN; tries++) {
		if (tries >= RADIX_RETRIES)
			return -EAGAIN;
		err = run_split(op, slot, &v, !whole);
		if (err == -ENOSPC && whole) {
			err = run_take(op, ip, slot, &v, 0);
			if (!err)
				return 0;
		}
		if (err < 0)
			return err;
	}
	if (!v || v == DAXFS_RADIX_SEALED)
		return 0;	/* cut, or its node is being dropped */
	leaf = node_at(op->fs, v);
	if (!leaf)
		return -EUCLEAN;
	if (whole)
		return drop_at(op, ip, slot, v, leaf, 1, 0);
	return sweep(op, ip, leaf, 1, cb, first, last);
}

/* Detaches everything at blocks in [first, last) below node (covering
 * blocks [base, base + span(level))); the node itself stays, and so do
 * nodes that also cover blocks outside the range. */
static int sweep(struct daxfs_op *op, struct daxfs_inode *ip,
		 struct daxfs_radix_node *node, u32 level, u64 base, u64 first,
		 u64 last)
{
	struct daxfs_fs *fs = op->fs;
	u64 cspan = daxfs_radix_span(level - 1);
	u64 i = first > base ? (first - base) / cspan : 0;
	int err;

	if (level == 1)
		sweep_yield();
	for (; i < DAXFS_RADIX_FANOUT; i++) {
		u64 cb = base + i * cspan;
		u64 *slot = &node->slot[i];
		u64 v;
		struct daxfs_radix_node *child;

		if (cb >= last)
			break;
		v = daxfs_load(slot);
		if (!v || v == DAXFS_RADIX_SEALED)
			continue;
		if (level == RUN_LEVEL && (v & RUN)) {
			err = sweep_run(op, ip, slot, v, cb, first, last);
			if (err)
				return err;
			continue;
		}
		child = level > 1 ? node_at(fs, v) : page_at(fs, v);
		if (!child)
			return -EUCLEAN;
		if (cb < first || cb + cspan > last) {
			/* straddles an end of the range (level > 1) */
			err = sweep(op, ip, child, level - 1, cb, first, last);
			if (err)
				return err;
			continue;
		}
		if (level == 1) {
			err = leaf_cut(op, ip, slot, v);
			if (err)
				return err;
			continue;
		}
		err = drop_at(op, ip, slot, v, child, level - 1, 0);
		if (err)
			return err;
	}
	return 0;
}

/* first > 0: sweep.  first == 0: drop the whole tree, unhooking the root
 * to `to` (0: truncate to 0; SEALED: the file is being freed). */
static int trim(struct daxfs_op *op, struct daxfs_inode *ip, u64 first,
		u64 to)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_radix_node *node;
	u32 h, tries;
	int err;

	for (tries = 0; tries < RADIX_RETRIES; tries++) {
		u64 r = daxfs_load(&ip->root);

		if (r == DAXFS_RADIX_SEALED)
			return 0;	/* already dropped for good */
		if (!r) {
			/* a writer may still create a root until the
			 * final drop closes the tree */
			if (daxfs_fenced(op))
				return -ESTALE;
			if (!to || daxfs_cas(&ip->root, &r, to))
				break;
			continue;
		}
		err = root_decode(fs, r, &node, &h);
		if (err)
			return err;
		if (first)
			return first >= daxfs_radix_span(h) ? 0 :
			       sweep(op, ip, node, h, 0, first, ~0ULL);
		if (!h) {
			/* direct: detach the page of block 0; the winner
			 * retires it (a grower may have moved it into a
			 * node first: then we drop that tree next round) */
			if (daxfs_fenced(op))
				return -ESTALE;
			if (daxfs_cas(&ip->root, &r, to)) {
				/* the count first: see seal_node */
				blocks_sub(ip);
				daxfs_pflush(fs, &ip->root, 8);
				if (daxfs_retire(op, r & ~PAGE_MASK_LO,
						 DAXFS_CLASS_PAGE))
					return -ESTALE;
			}
			continue;
		}
		/* Whole tree: the root may grow under us (or a helping
		 * writer may unhook it to 0); loop until it is `to`. */
		err = drop_at(op, ip, &ip->root, r, node, h, to);
		if (err)
			return err;
	}
	if (tries >= RADIX_RETRIES)
		return -EAGAIN;
	daxfs_pflush(fs, &ip->root, 8);
	return 0;
}

int daxfs_radix_trim(struct daxfs_op *op, struct daxfs_inode *ip, u64 first)
{
	return trim(op, ip, first, 0);
}

int daxfs_radix_punch(struct daxfs_op *op, struct daxfs_inode *ip, u64 first,
		      u64 last)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_radix_node *node;
	u32 h, tries;
	int err;

	if (first >= last)
		return 0;
	for (tries = 0; tries < RADIX_RETRIES; tries++) {
		u64 r = daxfs_load(&ip->root);

		if (!r || r == DAXFS_RADIX_SEALED)
			return 0;
		err = root_decode(fs, r, &node, &h);
		if (err)
			return err;
		if (h)
			return first >= daxfs_radix_span(h) ? 0 :
			       sweep(op, ip, node, h, 0, first, last);
		if (first)
			return 0;	/* direct: block 0 only */
		/* the direct page of block 0: one CAS takes it (a grower
		 * may have moved it into a node first: sweep that next) */
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_cas(&ip->root, &r, 0)) {
			blocks_sub(ip);	/* the count first: see seal_node */
			daxfs_pflush(fs, &ip->root, 8);
			return daxfs_retire(op, r & ~PAGE_MASK_LO,
					    DAXFS_CLASS_PAGE);
		}
	}
	return -EAGAIN;
}

void daxfs_file_drop_data(struct daxfs_op *op, struct daxfs_inode *ip)
{
	/*
	 * Final: the root ends as SEALED, so a writer that still holds the
	 * record (it resolved the inode before the last link went) cannot
	 * grow a new tree that nobody would ever reach: its insert fails
	 * with -ENOENT.  Errors (corrupt tree) leave the rest for fsck.
	 * The sequence first: a lane-free reader of a host declared dead
	 * may still be in the file (core/optread.c).
	 */
	daxfs_gate_seq_move(ip);
	(void)trim(op, ip, 0, DAXFS_RADIX_SEALED);
}
