// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Compaction: small-object pages whose objects are all free go back to
 * the page stack.  A lane takes a whole class stack with one CAS, names it
 * in its lane (crash), sorts it by address in place, gives back the whole
 * pages and pushes the rest back with one CAS.  Protocol, races and crash
 * story: docs/alloc.md "Compaction".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#define REC_CLASS_MASK	(DAXFS_OFF_ALIGN - 1)	/* class + 1 in the low bits */

static struct daxfs_free_obj *node(struct daxfs_fs *fs, u64 off, u64 size)
{
	return daxfs_ptr(fs, off, size, size);
}

static u64 next_of(struct daxfs_fs *fs, u64 off)
{
	return daxfs_load(&((struct daxfs_free_obj *)(fs->base + off))->next);
}

static void set_next(struct daxfs_fs *fs, u64 off, u64 next)
{
	daxfs_store(&((struct daxfs_free_obj *)(fs->base + off))->next, next);
}

/* Most objects of this size the pool can hold: a longer chain loops. */
static u64 max_objs(struct daxfs_fs *fs, u64 size)
{
	return (fs->pool_end - fs->pool_off) / size;
}

/*
 * Validates the private chain from first (every link in the pool and
 * class aligned, like a pop), cutting it at a bad link.  Returns its
 * length and its last node, or 0 when it is longer than the pool can
 * hold (a cycle: unusable, left to fsck).
 */
static u64 chain_check(struct daxfs_fs *fs, u64 first, u64 size, u64 *last)
{
	u64 off = first, next, n = 0, max = max_objs(fs, size);

	if (!node(fs, first, size))
		return 0;
	while (n < max) {
		n++;
		next = next_of(fs, off);
		if (!next) {
			*last = off;
			return n;
		}
		if (!node(fs, next, size)) {
			set_next(fs, off, 0);	/* corrupt link: the tail leaks */
			*last = off;
			return n;
		}
		off = next;
	}
	return 0;
}

/*
 * Bottom-up merge sort of a validated, acyclic chain of n nodes by
 * address (Tatham's list merge sort): O(n log n), no extra memory.
 * Returns the new head; *last gets the new tail.
 */
static u64 chain_sort(struct daxfs_fs *fs, u64 head, u64 *last)
{
	u64 insize = 1, p, q, e, tail, merges, psize, qsize;

	for (;;) {
		p = head;
		head = 0;
		tail = 0;
		merges = 0;
		while (p) {
			merges++;
			q = p;
			for (psize = 0; psize < insize && q; psize++)
				q = next_of(fs, q);
			qsize = insize;
			while (psize || (qsize && q)) {
				if (!psize || (qsize && q && q < p)) {
					e = q;
					q = next_of(fs, q);
					qsize--;
				} else {
					e = p;
					p = next_of(fs, p);
					psize--;
				}
				if (tail)
					set_next(fs, tail, e);
				else
					head = e;
				tail = e;
			}
			p = q;
		}
		if (tail)
			set_next(fs, tail, 0);
		*last = tail;
		if (merges <= 1)
			return head;
		insize *= 2;
	}
}

/* Moves the lane's record from old to new; false when a recoverer took it
 * (we were declared dead): then nothing may be touched any more. */
static bool rec_move(struct daxfs_lane *lane, u64 *old, u64 new_rec)
{
	return daxfs_cas(&lane->pad[DAXFS_LANE_HOLD_CHAIN], old, new_rec);
}

static u64 rec_word(u64 first, unsigned int class)
{
	return first ? first | (class + 1) : 0;
}

/*
 * Gives back the wholly free pages of the sorted private chain at *head,
 * unlinking each before pushing it (crash: that one page leaks, nothing
 * is freed twice).  Returns pages freed; *last is the kept tail.
 */
static u64 compact_release_pages(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 unsigned int class, u64 *head, u64 *rec, u64 *last)
{
	u64 size = daxfs_class_size(class), per = DAXFS_PAGE_SIZE / size;
	u64 prev = 0, cur = *head, page, end, after, k, freed = 0;

	while (cur) {
		page = cur & ~(DAXFS_PAGE_SIZE - 1);
		end = cur;
		for (k = 1; ; k++) {
			after = next_of(fs, end);
			if (!after || (after & ~(DAXFS_PAGE_SIZE - 1)) != page)
				break;
			end = after;
		}
		if (k != per) {
			prev = end;
			cur = after;
			continue;
		}
		if (prev) {
			set_next(fs, prev, after);
		} else {
			if (!rec_move(lane, rec, rec_word(after, class)))
				return freed | (1ULL << 63);
			*rec = rec_word(after, class);
			*head = after;
		}
		daxfs_pages_release(fs, page, page + DAXFS_PAGE_SIZE);
		freed++;
		daxfs_crash_point("alloc.compact");
		cur = after;
	}
	*last = prev;
	return freed;
}

/* Compacts one small class; returns the pages given back. */
static u64 compact_class(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 unsigned int class)
{
	u64 size = daxfs_class_size(class), first, last = 0, rec, freed, n;

	first = daxfs_free_take_all(fs, class);
	if (!first)
		return 0;
	rec = rec_word(first, class);
	daxfs_store(&lane->pad[DAXFS_LANE_HOLD_CHAIN], rec);
	n = chain_check(fs, first, size, &last);
	if (!n) {
		daxfs_store(&lane->pad[DAXFS_LANE_HOLD_CHAIN], 0);
		return 0;	/* looping chain: dropped, fsck rebuilds */
	}
	if (n >= DAXFS_PAGE_SIZE / size) {
		first = chain_sort(fs, first, &last);
		if (!rec_move(lane, &rec, rec_word(first, class)))
			return 0;
		rec = rec_word(first, class);
	}
	daxfs_crash_point("alloc.compact");
	freed = compact_release_pages(fs, lane, class, &first, &rec, &last);
	if (freed >> 63)
		return freed & ~(1ULL << 63);
	/* clear the record, then give the rest back (crash between: leak) */
	if (!rec_move(lane, &rec, 0))
		return freed;
	if (first)
		daxfs_free_push_chain(fs, class, first, last);
	return freed;
}

u64 daxfs_compact(struct daxfs_op *op)
{
	struct daxfs_fs *fs = op->fs;
	u64 freed = 0;
	unsigned int class;

	if (!op->lane || !daxfs_host_still_mine(fs) ||
	    daxfs_load(&op->lane->pad[DAXFS_LANE_HOLD_CHAIN]))
		return 0;
	for (class = 0; class < DAXFS_CLASS_PAGE; class++)
		freed += compact_class(fs, op->lane, class);
	return freed;
}

bool daxfs_compact_recover(struct daxfs_fs *fs, u64 rec)
{
	unsigned int class;
	u64 first = rec & ~REC_CLASS_MASK, last = 0;

	if (!(rec & REC_CLASS_MASK))
		return false;	/* a limbo chain: not ours */
	class = (unsigned int)(rec & REC_CLASS_MASK) - 1;
	if (class < DAXFS_CLASS_PAGE &&
	    chain_check(fs, first, daxfs_class_size(class), &last))
		daxfs_free_push_chain(fs, class, first, last);
	return true;
}
