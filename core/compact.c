// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Compaction: small-object pages whose objects are all free go back to
 * the page stack.  A lane takes a whole class stack with one CAS, names it
 * in its lane (crash), sorts it by address in place, gives back the whole
 * pages and pushes the rest back with one CAS.  A per-class hint skips
 * passes that cannot find a page.  Protocol, races and crash story:
 * docs/alloc.md "Compaction" and "Compaction hint".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"

#define REC_CLASS_MASK	(DAXFS_OFF_ALIGN - 1)	/* class + 1 in the low bits */

/* A free object on a page listed bad reads as no object: the chain is
 * cut there (alloc.c obj_ptr) */
static struct daxfs_free_obj *node(struct daxfs_fs *fs, u64 off, u64 size)
{
	return daxfs_meta_ptr(fs, off, size, size);
}

/*
 * The link after off, re-validated on every walk (chain_check validated
 * the chain once, but a stray store can change a link afterwards): a
 * link that is no object of this class reads as the end of the chain,
 * so the walk cuts there and the rest leaks to fsck.
 */
static u64 next_of(struct daxfs_fs *fs, u64 off, u64 size)
{
	u64 next = daxfs_load(&((struct daxfs_free_obj *)(fs->base + off))->next);

	return node(fs, next, size) ? next : 0;
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
 * hold (a cycle: unusable, left to fsck), or CHAIN_STOPPED when the
 * task must stop (a fatal signal, daxfs_walk_yield): a cycle made by a
 * peer is pool / object size steps long.
 */
#define CHAIN_STOPPED	(~0ULL)

static u64 chain_check(struct daxfs_fs *fs, u64 first, u64 size, u64 *last)
{
	u64 off = first, next, n = 0, max = max_objs(fs, size);

	if (!node(fs, first, size))
		return 0;
	while (n < max) {
		n++;
		next = daxfs_load(&((struct daxfs_free_obj *)(fs->base + off))->next);
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
		if (daxfs_walk_yield())
			return CHAIN_STOPPED;
	}
	return 0;
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
 * Bottom-up merge sort of a validated, acyclic chain of n nodes by
 * address (Tatham's list merge sort): O(n log n), no extra memory.
 * After every merge pass the chain is whole again (head .. tail, tail
 * next 0): the record is moved to the new head and the CPU yielded there,
 * so a long sort never runs unrescheduled and a crash between passes
 * leaks nothing.  Returns the new head (*last the new tail), or 0 when a
 * recoverer took the record: nothing may be touched any more.
 */
static u64 chain_sort(struct daxfs_fs *fs, struct daxfs_lane *lane,
		      unsigned int class, u64 head, u64 n, u64 *rec, u64 *last)
{
	u64 insize = 1, p, q, e, tail, merges, psize, qsize, seen;
	u64 size = daxfs_class_size(class);

	for (;;) {
		p = head;
		head = 0;
		tail = 0;
		merges = 0;
		seen = 0;
		/* a pass places every node once: more than n means a link
		 * was changed into a cycle behind our back; stop there (the
		 * chain is cut at tail, the rest leaks to fsck) */
		while (p && seen < n) {
			merges++;
			q = p;
			for (psize = 0; psize < insize && q; psize++)
				q = next_of(fs, q, size);
			qsize = insize;
			while ((psize || (qsize && q)) && seen++ < n) {
				if (!psize || (qsize && q && q < p)) {
					e = q;
					q = next_of(fs, q, size);
					qsize--;
				} else {
					e = p;
					p = next_of(fs, p, size);
					psize--;
				}
				if (tail)
					set_next(fs, tail, e);
				else
					head = e;
				tail = e;
			}
			p = q;
			/* stop between merges: the merged part, then the
			 * rest as it was linked, is one whole chain again;
			 * the record names it, held for the resume */
			if (daxfs_walk_yield()) {
				set_next(fs, tail, p);
				if (rec_move(lane, rec, rec_word(head, class)))
					*rec = rec_word(head, class);
				return 0;
			}
		}
		if (tail)
			set_next(fs, tail, 0);
		*last = tail;
		if (!rec_move(lane, rec, rec_word(head, class)))
			return 0;
		*rec = rec_word(head, class);
		if (merges <= 1)
			return head;
		/* whole again and named by the record: a stop leaves it
		 * held, for daxfs_compact_resume */
		if (daxfs_walk_yield())
			return 0;
		insize *= 2;
	}
}

/*
 * Gives back the wholly free pages of the sorted private chain at *head,
 * unlinking each before pushing it (crash: that one page leaks, nothing
 * is freed twice).  Returns pages freed; *last is the kept tail, *most
 * the most objects of one page among those kept.
 */
static u64 compact_release_pages(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 unsigned int class, u64 *head, u64 *rec, u64 *last,
			 u64 *most)
{
	u64 size = daxfs_class_size(class), per = DAXFS_PAGE_SIZE / size;
	u64 prev = 0, cur = *head, page, end, after = 0, k, freed = 0;
	u64 steps = 0, max = max_objs(fs, size);

	/* bounded: a link changed into a cycle after the sort ends here */
	while (cur && steps++ < max) {
		page = cur & ~(DAXFS_PAGE_SIZE - 1);
		end = cur;
		for (k = 1; k <= per; k++) {
			after = next_of(fs, end, size);
			if (!after || (after & ~(DAXFS_PAGE_SIZE - 1)) != page)
				break;
			end = after;
		}
		if (k != per) {
			if (k > *most)
				*most = k;
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
		/* the chain is whole and named by the record: a stop
		 * leaves it held (as when a recoverer took it: the
		 * caller touches the record no more) */
		if (daxfs_walk_yield())
			return freed | (1ULL << 63);
	}
	*last = prev;
	return freed;
}

static u64 *hint_word(struct daxfs_fs *fs, unsigned int class, int i)
{
	return &fs->state->free_head[class].pad[i];
}

/*
 * The hint (docs/alloc.md "Compaction hint"): a pass that found no whole
 * page records how many more objects must be pushed onto the stack before
 * one can exist; until then passes are skipped.  Only ever skips work.
 */
static bool pass_useless(struct daxfs_fs *fs, unsigned int class)
{
	u64 due = daxfs_load(hint_word(fs, class, DAXFS_FREE_COMPACT_DUE));

	return due && (s64)(daxfs_load(hint_word(fs, class,
				DAXFS_FREE_PUSHED)) - due) < 0;
}

static void set_due(struct daxfs_fs *fs, unsigned int class, u64 due)
{
	daxfs_store(hint_word(fs, class, DAXFS_FREE_COMPACT_DUE), due);
}

/*
 * A pass stopped before its chain was checked: the chain goes back as the
 * class stack when that is still empty (one CAS, the common case: the
 * pool is full), else it stays held in the lane for the next
 * daxfs_compact_resume on it.  The record is cleared before the put-back
 * (a crash between leaks the chain, never pushes it twice).
 */
static void put_back(struct daxfs_fs *fs, struct daxfs_lane *lane,
		     unsigned int class, u64 first, u64 rec)
{
	u64 zero = 0;

	if (!rec_move(lane, &rec, 0))
		return;		/* a recoverer took it */
	if (!daxfs_free_put_back(fs, class, first))
		rec_move(lane, &zero, rec_word(first, class));
}

/* Compacts one small class; returns the pages given back. */
static u64 compact_class(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 unsigned int class)
{
	u64 size = daxfs_class_size(class), per = DAXFS_PAGE_SIZE / size;
	u64 first, last = 0, rec, freed, n, pushed, most = 0, zero;

	if (pass_useless(fs, class))
		return 0;
	/* read before the take: everything pushed later counts against it */
	pushed = daxfs_load(hint_word(fs, class, DAXFS_FREE_PUSHED));
	first = daxfs_free_take_all(fs, class);
	if (!first) {
		set_due(fs, class, pushed + per);
		return 0;
	}
	daxfs_faa(hint_word(fs, class, DAXFS_FREE_COMPACT_RUNS), 1);
	rec = rec_word(first, class);
	zero = 0;
	if (!rec_move(lane, &zero, rec)) {
		/* the lane names a chain we did not put there: a new owner
		 * of our slot cleared it and holds one (we are a zombie) */
		daxfs_free_put_back(fs, class, first);
		return 0;
	}
	n = chain_check(fs, first, size, &last);
	daxfs_race_point("compact.checked", fs->base + first);
	if (n == CHAIN_STOPPED) {
		put_back(fs, lane, class, first, rec);
		return 0;
	}
	if (!n) {
		rec_move(lane, &rec, 0);
		return 0;	/* looping chain: dropped, fsck rebuilds */
	}
	if (n >= per) {
		first = chain_sort(fs, lane, class, first, n, &rec, &last);
		if (!first)
			return 0;
	} else {
		most = n;	/* unsorted: runs say nothing */
	}
	daxfs_crash_point("alloc.compact");
	freed = compact_release_pages(fs, lane, class, &first, &rec, &last,
				      &most);
	if (freed >> 63)
		return freed & ~(1ULL << 63);
	/* clear the record, then give the rest back (crash between: leak) */
	if (!rec_move(lane, &rec, 0))
		return freed;
	n -= freed * per;
	if (first) {
		daxfs_free_push_chain(fs, class, first, last);
		/* other passes may hold pages split with ours: they learn */
		daxfs_faa(hint_word(fs, class, DAXFS_FREE_PUSHED), n);
	}
	/* our own return is no news to us; a page needs per - most more */
	set_due(fs, class, pushed + n + per - most);
	return freed;
}

/*
 * The lane still holds a compaction chain that a stopped pass left
 * (docs/alloc.md "Stopped walks"): check it again and give it back to its
 * stack.  True when the lane holds none any more.
 */
bool daxfs_compact_resume(struct daxfs_fs *fs, struct daxfs_lane *lane)
{
	u64 rec = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_CHAIN]);
	u64 first = rec & ~REC_CLASS_MASK, last = 0, n;
	unsigned int class;

	if (!rec)
		return true;
	if (!(rec & REC_CLASS_MASK))
		return false;	/* a limbo chain: reclaim's */
	class = (unsigned int)(rec & REC_CLASS_MASK) - 1;
	if (class >= DAXFS_CLASS_PAGE)
		return rec_move(lane, &rec, 0);
	n = chain_check(fs, first, daxfs_class_size(class), &last);
	if (n == CHAIN_STOPPED)
		return false;	/* still held: the next op on the lane */
	/* cleared first: a crash before the push leaks, never pushes twice */
	if (!rec_move(lane, &rec, 0))
		return false;	/* a recoverer took it */
	if (n) {
		daxfs_free_push_chain(fs, class, first, last);
		daxfs_faa(hint_word(fs, class, DAXFS_FREE_PUSHED), n);
	}
	return true;
}

u64 daxfs_compact(struct daxfs_op *op)
{
	struct daxfs_fs *fs = op->fs;
	u64 freed = 0;
	unsigned int class;

	if (!op->lane || !daxfs_host_still_mine(fs) ||
	    !daxfs_compact_resume(fs, op->lane))
		return 0;
	for (class = 0; class < DAXFS_CLASS_PAGE; class++) {
		if (class)
			daxfs_yield();	/* no chain held here */
		if (daxfs_fenced(op))
			break;
		freed += compact_class(fs, op->lane, class);
	}
	return freed;
}

bool daxfs_compact_recover(struct daxfs_fs *fs, u64 rec)
{
	unsigned int class;
	u64 first = rec & ~REC_CLASS_MASK, last = 0, n;

	if (!(rec & REC_CLASS_MASK))
		return false;	/* a limbo chain: not ours */
	class = (unsigned int)(rec & REC_CLASS_MASK) - 1;
	if (class >= DAXFS_CLASS_PAGE)
		return true;
	/* a stop leaks the chain (the record is gone already): fsck */
	n = chain_check(fs, first, daxfs_class_size(class), &last);
	if (n && n != CHAIN_STOPPED) {
		daxfs_free_push_chain(fs, class, first, last);
		daxfs_faa(hint_word(fs, class, DAXFS_FREE_PUSHED), n);
	}
	return true;
}
