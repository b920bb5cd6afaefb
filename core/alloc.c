// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pool allocator: free stacks per size class in the state page, each head
 * an {offset, 64-bit tag} pair changed only by a 16-byte CAS,
 * per-host batches of pages carved from the bump pointer, contiguous page
 * runs for file data.  Invariants and crash story: docs/alloc.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "mapped.h"

#define CAS_TRIES	(1u << 20)	/* bound on contended CAS loops */
#define BATCH_LOCK	1ULL		/* alloc_cursor while a lane refills */
#define BATCH_TAKING	2ULL		/* cursor | 2 | lane << 3: that lane
					 * moves [cursor, ...) into its hold */
#define BATCH_LANE_SHIFT 3

/* The cursor is locked (a refill, or a take into a lane's hold) */
static bool batch_locked(u64 c)
{
	return c & (DAXFS_PAGE_SIZE - 1);
}

/* Approximate length of the page stack (signed: pushes and pops update it
 * after their CAS, so it may lag either way for a moment). */
#define PAGE_STACK(fs)	daxfs_state_word(fs, page_stack)

/* Test hook between a pop's head load and its CAS, where a delayed host
 * sits in the ABA race (tests/c/test_free_aba.c includes this file with
 * its own definition); nothing in any real build. */
#ifndef DAXFS_POP_WINDOW
#define DAXFS_POP_WINDOW(fs, class)	do { } while (0)
#endif

u64 daxfs_class_size(unsigned int class)
{
	if (class < DAXFS_CLASS_PAGE)
		return 64ULL << class;
	if (class == DAXFS_CLASS_PAGE)
		return DAXFS_PAGE_SIZE;
	return 0;
}

int daxfs_size_class(u64 bytes)
{
	unsigned int c;

	for (c = 0; c < DAXFS_NR_CLASSES; c++)
		if (bytes <= daxfs_class_size(c))
			return (int)c;
	return -EINVAL;
}

static struct daxfs_free_head *head_word(struct daxfs_fs *fs,
					 unsigned int class)
{
	return &fs->state->free_head[class].head;
}

/*
 * A head's two words, loaded one after the other: the pair may mix two
 * moments, but the tag grows on every change and never repeats, so a
 * mixed pair matches no state: a CAS with it fails, and a comparison
 * with it (head_same) says "changed".  Callers read links only after it.
 */
static void head_load(struct daxfs_free_head *hw, struct daxfs_free_head *h)
{
	h->tag = daxfs_load(&hw->tag);
	h->off = daxfs_load(&hw->off);
}

static bool head_same(struct daxfs_free_head *hw,
		      const struct daxfs_free_head *h)
{
	return daxfs_load(&hw->tag) == h->tag && daxfs_load(&hw->off) == h->off;
}

/* Installs {off, tag + 1} if the head is still *h; else *h = current. */
static bool head_cas(struct daxfs_free_head *hw, struct daxfs_free_head *h,
		     u64 off)
{
	return daxfs_cas16(&hw->off, &h->off, off, h->tag + 1);
}

/* Objects are aligned to their size (pages to 4 KiB).  A free object is
 * loaded (its link): one on a page listed bad after the mount reads as
 * corrupt, so the stack stops there (the rest waits for fsck) instead of
 * a machine check, and the page is never handed out again. */
static struct daxfs_free_obj *obj_ptr(struct daxfs_fs *fs, u64 off,
				      unsigned int class)
{
	u64 size = daxfs_class_size(class);

	return daxfs_meta_ptr(fs, off, size, size);
}

/* The page stack was seen empty: a counter that still says otherwise
 * (a crash between a pop and its decrement) is reset.  p was loaded before
 * the head, so a push that landed since makes the CAS fail. */
static void page_stack_empty(struct daxfs_fs *fs, u64 p)
{
	if (p)
		daxfs_cas(PAGE_STACK(fs), &p, 0);
}

/*
 * Persistent media: an allocator word that moved to hand out an object is
 * written back before the object can be published (its publisher drains
 * before the publishing CAS).  Else a power loss can keep the object on
 * a free stack, in a batch or above the bump while a file uses it, and
 * the next allocation hands it out twice (tests/powerfail.py).
 */
static void alloc_word_flush(struct daxfs_fs *fs, const void *w, u64 len)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(w, len);
}

/* A small class's stack (the page class links extents: page_take) */
static u64 stack_pop(struct daxfs_fs *fs, unsigned int class)
{
	struct daxfs_free_head *hw = head_word(fs, class), h;
	struct daxfs_free_obj *o;
	u64 off, next;
	u32 i;

	if (fs->flags & DAXFS_FS_NO_FREE)
		return 0;	/* links not trusted yet (fsck's recovery) */
	head_load(hw, &h);
	for (i = 0; i < CAS_TRIES; i++) {
		off = h.off;
		if (!off)
			return 0;
		o = obj_ptr(fs, off, class);
		if (!o)
			return 0;	/* corrupt head: treat as empty */
		/* o may be popped and reused meanwhile: next is then garbage,
		 * but the tag has moved on, for good, so our CAS fails */
		next = daxfs_load(&o->next);
		if (next && !obj_ptr(fs, next, class)) {
			if (!head_same(hw, &h)) {
				head_load(hw, &h);
				continue;
			}
			return 0;	/* corrupt link: stop using the stack */
		}
		DAXFS_POP_WINDOW(fs, class);
		if (head_cas(hw, &h, next)) {
			alloc_word_flush(fs, hw, sizeof(*hw));
			return off;
		}
		daxfs_faa(daxfs_state_word(fs, stat_cas_fail), 1);
	}
	return 0;
}

/* ---- the page stack's extents (format 12, docs/alloc.md "Free extents") ---- */

/*
 * Pages just handed out are about to be written: the first line of the
 * first is asked for now, ahead of the copy.  A 4 KiB first write on an
 * aged pool took 14% longer without it, and one on a fresh pool 10%
 * longer (docs/benchmarks.md "Aged pools"): a one-page pop used to load
 * that line (the page's link).
 */
static void pages_handed(struct daxfs_fs *fs, u64 first)
{
	daxfs_prefetch_store(fs->base + first);
}

/* A word names an extent by its last page, which holds the link */
static u64 ext_last(u64 w)
{
	return w & ~DAXFS_FREE_EXTENT_MASK;
}

static u64 ext_pages(u64 w)
{
	return (w & DAXFS_FREE_EXTENT_MASK) + 1;
}

static u64 ext_word(u64 last, u64 pages)
{
	return last | (pages - 1);
}

/* The last page of extent word w (its link), if the whole extent lies in
 * the pool (a stray store can make a word name anything: it is never
 * trusted). */
static struct daxfs_free_obj *ext_ptr(struct daxfs_fs *fs, u64 w)
{
	u64 last = ext_last(w), n = ext_pages(w);

	if (last < fs->pool_off || last >= fs->pool_end ||
	    n - 1 > (last - fs->pool_off) / DAXFS_PAGE_SIZE)
		return NULL;
	return obj_ptr(fs, last, DAXFS_CLASS_PAGE);
}

/*
 * Up to want contiguous pages off the page stack with one CAS: the front
 * of the top extent, which keeps its last page and the link there (the
 * head's count shrinks, nothing else is written), or the whole extent
 * when it has no more than want (the head moves to its link, read as a
 * pop reads it).  Only the front: taking the back would store the link
 * into a page that a racing take of the front may already be writing.
 * Returns the first page and *got, or 0 (also when the top extent has
 * fewer than min).
 */
static u64 page_take(struct daxfs_fs *fs, u64 want, u64 min, u64 *got)
{
	struct daxfs_free_head *hw = head_word(fs, DAXFS_CLASS_PAGE), h;
	struct daxfs_free_obj *o;
	u64 w, n, to, take, first, p = daxfs_load(PAGE_STACK(fs));
	u32 i;

	if (!want || (fs->flags & DAXFS_FS_NO_FREE))
		return 0;
	head_load(hw, &h);
	for (i = 0; i < CAS_TRIES; i++) {
		w = h.off;
		if (!w) {
			page_stack_empty(fs, p);
			return 0;
		}
		o = ext_ptr(fs, w);
		if (!o)
			return 0;	/* corrupt head: treat as empty */
		n = ext_pages(w);
		if (n < min)
			return 0;
		first = ext_last(w) - (n - 1) * DAXFS_PAGE_SIZE;
		if (n > want) {
			take = want;
			to = ext_word(ext_last(w), n - want);
		} else {
			take = n;
			to = daxfs_load(&o->next);
			if (to && !ext_ptr(fs, to)) {
				if (!head_same(hw, &h)) {
					head_load(hw, &h);
					continue;
				}
				return 0;	/* corrupt link */
			}
		}
		/* no page handed out lies on a page the media lists bad (one
		 * load when none is): the stack stops there, as at a bad
		 * link, and the rest waits for fsck (docs/kernel.md) */
		if (!daxfs_meta_ptr(fs, first, take * DAXFS_PAGE_SIZE,
				    DAXFS_PAGE_SIZE))
			return 0;
		DAXFS_POP_WINDOW(fs, DAXFS_CLASS_PAGE);
		if (head_cas(hw, &h, to)) {
			pages_handed(fs, first);
			alloc_word_flush(fs, hw, sizeof(*hw));
			daxfs_faa(PAGE_STACK(fs), -take);
			*got = take;
			return first;
		}
		daxfs_faa(daxfs_state_word(fs, stat_cas_fail), 1);
	}
	return 0;
}

/*
 * Pushes the n (<= DAXFS_FREE_EXTENT_MAX) free pages from first with one
 * CAS.  Pages that border the top extent join it: just below it, the
 * head's count grows and nothing else is written; just above, our last
 * page takes the top's link and becomes the extent's last.  Pages freed
 * one by one from the top of a range down (a file's, from limbo: its
 * pages are retired in block order and freed last first) come back as
 * one extent, with no store into any of them.
 */
static void pages_push(struct daxfs_fs *fs, u64 first, u64 n)
{
	struct daxfs_free_head *hw = head_word(fs, DAXFS_CLASS_PAGE), h;
	u64 last = first + (n - 1) * DAXFS_PAGE_SIZE, w, m, top, to;
	struct daxfs_free_obj *o, *t;
	u32 i;

	o = n ? ext_ptr(fs, ext_word(last, n)) : NULL;
	if (!o || n > DAXFS_FREE_EXTENT_MAX || (fs->flags & DAXFS_FS_NO_FREE))
		return;		/* refuse to free garbage; fsck rebuilds */
	head_load(hw, &h);
	for (i = 0; i < CAS_TRIES; i++) {
		w = h.off;
		t = w ? ext_ptr(fs, w) : NULL;
		top = ext_last(w);
		m = ext_pages(w);
		if (t && m + n <= DAXFS_FREE_EXTENT_MAX &&
		    last + m * DAXFS_PAGE_SIZE == top) {
			to = ext_word(top, m + n);	/* just below */
		} else if (t && m + n <= DAXFS_FREE_EXTENT_MAX &&
			   top + DAXFS_PAGE_SIZE == first) {
			/* just above: the top's link, read after the head
			 * as a pop reads it: stale only if the head moved */
			daxfs_store(&o->next, daxfs_load(&t->next));
			to = ext_word(last, m + n);
		} else {
			daxfs_store(&o->next, w);
			to = ext_word(last, n);
		}
		/* persistent media: the link before the head that names it */
		if (ext_last(to) == last)
			alloc_word_flush(fs, &o->next, sizeof(o->next));
		if (head_cas(hw, &h, to))
			break;
	}
	if (i < CAS_TRIES)
		daxfs_faa(PAGE_STACK(fs), n);
}

/* The push of a chain whose last object lo (checked) links to the head. */
static void push_checked(struct daxfs_fs *fs, unsigned int class, u64 first,
			 struct daxfs_free_obj *lo)
{
	struct daxfs_free_head *hw = head_word(fs, class), h;
	u32 i;

	if (fs->flags & DAXFS_FS_NO_FREE)
		return;
	head_load(hw, &h);
	for (i = 0; i < CAS_TRIES; i++) {
		daxfs_store(&lo->next, h.off);
		if (head_cas(hw, &h, first))
			return;
	}
}

void daxfs_free_push_chain(struct daxfs_fs *fs, unsigned int class, u64 first,
			   u64 last)
{
	struct daxfs_free_obj *lo = obj_ptr(fs, last, class);

	if (!lo || !obj_ptr(fs, first, class))
		return;
	push_checked(fs, class, first, lo);
}

/* Objects pushed onto a small class's stack: the compaction hint's clock
 * (advisory, after the push; docs/alloc.md "Compaction hint"). */
static void count_pushed(struct daxfs_fs *fs, unsigned int class, u64 n)
{
	if (class < DAXFS_CLASS_PAGE)
		daxfs_faa(&fs->state->free_head[class].pad[DAXFS_FREE_PUSHED], n);
}

/* Puts a chain that daxfs_free_take_all took back as the whole stack,
 * if the stack is still empty (one CAS; false otherwise). */
bool daxfs_free_put_back(struct daxfs_fs *fs, unsigned int class, u64 first)
{
	struct daxfs_free_head *hw = head_word(fs, class), h;

	head_load(hw, &h);
	return !h.off && head_cas(hw, &h, first);
}

u64 daxfs_free_take_all(struct daxfs_fs *fs, unsigned int class)
{
	struct daxfs_free_head *hw = head_word(fs, class), h;
	u64 off;
	u32 i;

	if (fs->flags & DAXFS_FS_NO_FREE)
		return 0;
	head_load(hw, &h);
	for (i = 0; i < CAS_TRIES; i++) {
		off = h.off;
		if (!off)
			return 0;	/* empty, not corrupt */
		if (head_cas(hw, &h, 0))
			return off;
	}
	return 0;
}

/* One object: checked once (the chain push would check it twice more) */
void daxfs_free_obj(struct daxfs_fs *fs, u64 off, unsigned int class)
{
	struct daxfs_free_obj *o;
	u64 size;

	if (class >= DAXFS_NR_CLASSES)
		return;		/* refuse to free garbage */
	size = daxfs_class_size(class);
	o = daxfs_meta_ptr(fs, off, size, size);	/* obj_ptr's check */
	if (!o)
		return;
	if (class == DAXFS_CLASS_PAGE) {
		pages_push(fs, off, 1);
	} else {
		push_checked(fs, class, off, o);
		count_pushed(fs, class, 1);
	}
	daxfs_faa(daxfs_state_word(fs, used_bytes), -size);
}

void daxfs_pages_release(struct daxfs_fs *fs, u64 start, u64 end)
{
	u64 n;

	/* a batch's words garbled by a stray store: refuse (a leak), never
	 * loop on a range that holds no whole page (tests/test_chaos.py) */
	if (start >= end || ((start | end) & (DAXFS_PAGE_SIZE - 1)) ||
	    !daxfs_ptr(fs, start, end - start, DAXFS_PAGE_SIZE))
		return;
	/* the highest pages first: each lower piece lies just below the
	 * one pushed before it, and joins it while the sum fits */
	while (end > start) {
		n = (end - start) / DAXFS_PAGE_SIZE;
		if (n > DAXFS_FREE_EXTENT_MAX)
			n = DAXFS_FREE_EXTENT_MAX;
		end -= n * DAXFS_PAGE_SIZE;
		pages_push(fs, end, n);
	}
}

void daxfs_pages_free(struct daxfs_fs *fs, u64 start, u64 n)
{
	if (!n || !daxfs_ptr(fs, start, n * DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE))
		return;
	daxfs_pages_release(fs, start, start + n * DAXFS_PAGE_SIZE);
	daxfs_faa(daxfs_state_word(fs, used_bytes), -(n * DAXFS_PAGE_SIZE));
}

/* ---- limbo reserve (docs/alloc.md "Reserve") ---- */

static u64 pool_pages(struct daxfs_fs *fs)
{
	return (fs->pool_end - fs->pool_off) / DAXFS_PAGE_SIZE;
}

static u64 bump_left(struct daxfs_fs *fs)
{
	u64 b = daxfs_load(daxfs_state_word(fs, bump));

	if (b < fs->pool_off || b >= fs->pool_end)
		return 0;
	return (fs->pool_end - b) / DAXFS_PAGE_SIZE;
}

static u64 stack_pages(struct daxfs_fs *fs)
{
	s64 v = (s64)daxfs_load(PAGE_STACK(fs));

	return v > 0 ? (u64)v : 0;
}

/* hosts: non-FREE slots; setless: those of them without an open set */
static u64 reserve_for(struct daxfs_fs *fs, u64 hosts, u64 setless)
{
	u64 pages = pool_pages(fs), r;

	r = pages / DAXFS_RESERVE_DIV + DAXFS_RESERVE_PER_HOST * (hosts ? hosts : 1) +
	    DAXFS_RESERVE_OPEN_PAGES * setless;
	return r < pages / 4 ? r : pages / 4;
}

u64 daxfs_reserve_pages(struct daxfs_fs *fs)
{
	u64 hosts = 0, setless = 0;
	struct daxfs_host *h;
	u32 slot;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		h = daxfs_host_at(fs, slot);
		if (daxfs_host_st(daxfs_load(&h->state)) == DAXFS_HOST_FREE)
			continue;
		hosts++;
		/* a host with a set page has it counted in used_bytes */
		if (!daxfs_load(&h->open_set))
			setless++;
	}
	return reserve_for(fs, hosts, setless);
}

/*
 * Counts the page stack, at most limit entries.  The counter lags after
 * an fsck rebuild (or on an image older than it); a walk that saw no push
 * or pop meanwhile (same head, tag included, before and after: the
 * 64-bit tag never comes back) was a consistent snapshot, so it may
 * raise the counter to what it found.
 */
static u64 stack_count(struct daxfs_fs *fs, u64 limit)
{
	struct daxfs_free_head *hw = head_word(fs, DAXFS_CLASS_PAGE), h;
	struct daxfs_free_obj *o;
	u64 p, w, n = 0;

	p = daxfs_load(PAGE_STACK(fs));
	head_load(hw, &h);
	w = h.off;
	while (w && n < limit) {
		o = ext_ptr(fs, w);
		if (!o)
			break;
		n += ext_pages(w);
		w = daxfs_load(&o->next);
	}
	if (head_same(hw, &h) && (s64)p < (s64)n)
		daxfs_cas(PAGE_STACK(fs), &p, n);
	return n;
}

/*
 * How many of want pages an ordinary allocation may take from the page
 * stack and the bump without leaving fewer than the reserve there.  Far
 * from full this is two loads; near full it scans the host table and, if
 * the counter says no, counts the stack itself (bounded by the reserve).
 * Racing allocators may each pass and dip a little into the reserve:
 * that is what the per-host pages are for.
 */
static u64 general_room(struct daxfs_fs *fs, u64 want)
{
	u64 left = bump_left(fs), avail = left + stack_pages(fs), r;

	if (avail >= want + reserve_for(fs, fs->sb.max_hosts, fs->sb.max_hosts))
		return want;
	r = daxfs_reserve_pages(fs);
	if (avail < want + r && left < want + r)
		avail = left + stack_count(fs, want + r - left);
	if (avail <= r)
		return 0;
	return avail - r < want ? avail - r : want;
}

/* Up to want pages from the never-used part of the pool. */
static u64 bump_take(struct daxfs_fs *fs, u64 want, u64 min, u64 *got)
{
	u64 *bw = daxfs_state_word(fs, bump), b, n;
	u32 i;

	b = daxfs_load(bw);
	for (i = 0; i < CAS_TRIES; i++) {
		if (b < fs->pool_off || b >= fs->pool_end || (b & (DAXFS_PAGE_SIZE - 1)))
			return 0;
		n = (fs->pool_end - b) / DAXFS_PAGE_SIZE;
		if (n > want)
			n = want;
		if (n < min)
			return 0;
		if (daxfs_cas(bw, &b, b + n * DAXFS_PAGE_SIZE)) {
			alloc_word_flush(fs, bw, sizeof(*bw));
			*got = n;
			return b;
		}
	}
	return 0;
}

/* A batch [c, e) that may be used: whole pages of the pool.  The words
 * live in our host slot, where a stray store or a buggy peer can put
 * anything; what we hand out is stored into at once (tests/c/
 * test_batch_garbled.c: a SIGSEGV under the chaos host). */
static bool batch_ok(struct daxfs_fs *fs, u64 c, u64 e)
{
	return c >= fs->pool_off && c < e && e <= fs->pool_end &&
	       !((c | e) & (DAXFS_PAGE_SIZE - 1));
}

/* Cursor c, as loaded, is a plain one with n pages before the end. */
static bool batch_has(struct daxfs_fs *fs, struct daxfs_host *h, u64 c, u64 n)
{
	u64 e;

	if (!c || batch_locked(c))
		return false;
	e = daxfs_load(&h->alloc_end);
	return batch_ok(fs, c, e) && (e - c) / DAXFS_PAGE_SIZE >= n;
}

/*
 * How many of want pages a write of this host could take now: what is
 * left in its batch, then the general room (above the reserve).  A look,
 * not a reservation: a racing allocator may take them first.  Far from
 * full, two loads when the batch has them.
 */
u64 daxfs_alloc_room(struct daxfs_fs *fs, u64 want)
{
	struct daxfs_host *h;
	u64 c, e, have = 0;

	if (fs->host == DAXFS_NO_HOST)
		return 0;
	h = daxfs_host_at(fs, fs->host);
	c = daxfs_load(&h->alloc_cursor);
	if (c && !batch_locked(c)) {
		e = daxfs_load(&h->alloc_end);
		if (batch_ok(fs, c, e))
			have = (e - c) / DAXFS_PAGE_SIZE;
	}
	if (have >= want)
		return want;
	return have + general_room(fs, want - have);
}

/* Exactly n contiguous pages from our host's batch, or 0. */
static u64 batch_take(struct daxfs_fs *fs, u64 n)
{
	struct daxfs_host *h = daxfs_host_at(fs, fs->host);
	u64 c;
	u32 i;

	c = daxfs_load(&h->alloc_cursor);
	for (i = 0; i < CAS_TRIES; i++) {
		if (!batch_has(fs, h, c, n))
			return 0;
		if (daxfs_cas(&h->alloc_cursor, &c, c + n * DAXFS_PAGE_SIZE)) {
			pages_handed(fs, c);
			alloc_word_flush(fs, &h->alloc_cursor, 8);
			return c;
		}
	}
	return 0;
}

/*
 * Exactly n contiguous pages from our host's batch, named in op's page
 * hold before the cursor passes them (docs/alloc.md "Taking pages into
 * the hold"): the cursor is locked to our lane meanwhile, so that the
 * recoverer of a host that died in between tells from the hold whether
 * the pages left the batch (daxfs_batch_settle).  0: the batch cannot
 * give them (or we were declared dead meanwhile).
 */
static u64 batch_take_held(struct daxfs_op *op, u64 n)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_host *h = daxfs_host_at(fs, fs->host);
	u64 c, lk;
	u32 i;

	c = daxfs_load(&h->alloc_cursor);
	for (i = 0; i < CAS_TRIES; i++) {
		if (!batch_has(fs, h, c, n))
			return 0;
		lk = c | BATCH_TAKING | ((u64)op->lane_idx << BATCH_LANE_SHIFT);
		if (!daxfs_cas(&h->alloc_cursor, &c, lk))
			continue;
		pages_handed(fs, c);
		alloc_word_flush(fs, &h->alloc_cursor, 8);
		daxfs_crash_point("alloc.take_locked");
		/* counted in use as the hold names them: recovery's free of
		 * the hold takes them off again */
		daxfs_faa(daxfs_state_word(fs, used_bytes), n * DAXFS_PAGE_SIZE);
		if (daxfs_hold_pages(op, c, (u32)n)) {
			/* declared dead: recovery settles lk and returns
			 * the pages with the batch, knowing nothing of our
			 * count (the hold never named them): take it off */
			daxfs_faa(daxfs_state_word(fs, used_bytes),
				  -(n * DAXFS_PAGE_SIZE));
			return 0;
		}
		daxfs_crash_point("alloc.take_held");
		/* a recoverer settled the lock (we were declared dead):
		 * the pages are its to free or return, not ours */
		if (!daxfs_cas(&h->alloc_cursor, &lk, c + n * DAXFS_PAGE_SIZE))
			return 0;
		alloc_word_flush(fs, &h->alloc_cursor, 8);
		return c;
	}
	return 0;
}

void daxfs_batch_settle(struct daxfs_fs *fs, u32 slot)
{
	struct daxfs_host *h = daxfs_host_at(fs, slot);
	u64 c = daxfs_load(&h->alloc_cursor), base, v, to;
	struct daxfs_lane *lane;

	if (!(c & BATCH_TAKING))
		return;
	base = c & ~(DAXFS_PAGE_SIZE - 1);
	lane = daxfs_lane_at(fs, slot, (u32)(c >> BATCH_LANE_SHIFT) &
			     (DAXFS_LANES - 1));
	v = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_PAGES]);
	/* the lane took into an empty hold: a hold starting at the locked
	 * cursor is the take's; its recovery frees it, the batch keeps the
	 * rest */
	to = base;
	if (v && (v & ~(DAXFS_PAGE_SIZE - 1)) == base)
		to = base + ((v & (DAXFS_PAGE_SIZE - 1)) + 1) * DAXFS_PAGE_SIZE;
	if (daxfs_cas(&h->alloc_cursor, &c, to))
		alloc_word_flush(fs, &h->alloc_cursor, 8);
}

/* Pages fresh from the bump, about to be written by this host: mapped in
 * one call where the front end asks for it (daxfs_populate), unless it
 * knows both ends mapped already (a whole pre-faulted region: a system
 * call per batch saved).  A hint either way: a page not known mapped is
 * faulted in before its copy (mapped.h). */
static void fresh_pages(struct daxfs_fs *fs, u64 start, u64 pages)
{
	u64 len = pages * DAXFS_PAGE_SIZE;

	if (!(fs->flags & DAXFS_FS_POPULATE) || !fs->batches++ ||
	    (daxfs_known_mapped(fs, fs->base + start) &&
	     daxfs_known_mapped(fs, fs->base + start + len - DAXFS_PAGE_SIZE)))
		return;
	if (daxfs_populate(fs->base + start, len))
		daxfs_mapped_mark(fs, start, len);
}

/*
 * The cursor's lock value for a refill by this host generation.  A host
 * declared dead while it refilled (a zombie, docs/hosts.md "Fencing")
 * had its slot reset by recovery, and a new host that joined the slot
 * may be refilling there by the time it resumes: with one lock value for
 * all, the zombie took that refill's lock for its own and installed its
 * batch over the new host's (tests/test_zombie_fence.py).
 */
static u64 refill_lock(struct daxfs_fs *fs)
{
	return BATCH_LOCK |
	       ((fs->host_gen << BATCH_LANE_SHIFT) & (DAXFS_PAGE_SIZE - 1));
}

/*
 * Installs a fresh batch of up to `pages` pages carved from the bump and
 * takes the first `take` of them.  alloc_cursor is locked while end and
 * cursor change so no lane sees a mixed pair; the old remainder goes to
 * the page stack.  Never from the page stack: a host killed while it
 * refills leaks what it took (recovery cannot know the range), and a
 * full pool's hosts would refill all the time (docs/alloc.md).
 */
static u64 batch_refill(struct daxfs_fs *fs, u64 pages, u64 take)
{
	struct daxfs_host *h = daxfs_host_at(fs, fs->host);
	u64 c, e, lk = refill_lock(fs), start, got = 0;

	c = daxfs_load(&h->alloc_cursor);
	if (batch_locked(c))
		return 0;
	/* end only changes under the lock: loaded before we take it, it
	 * is c's (after, a zombie could load a new owner's end and give
	 * back everything from its old cursor to there) */
	e = daxfs_load(&h->alloc_end);
	/* declared dead (a zombie whose take found the fence): the cursor
	 * may be a new owner's, and its batch is not ours to give back
	 * (tests/test_zombie_fence.py, fence.hold in batch_take_held) */
	if (!daxfs_host_still_mine(fs) ||
	    !daxfs_cas(&h->alloc_cursor, &c, lk))
		return 0;
	if (c && c < e)
		daxfs_pages_release(fs, c, e);
	/* dying here: cursor stays locked, nothing carved yet, so
	 * recovery has nothing to return and nothing leaks */
	daxfs_crash_point("alloc.batch_locked");
	/* the batch's part of the carve is counted in use until the batch
	 * words name it (the caller counted its take): a death in between
	 * leaks the carve with the counter right (docs/alloc.md) */
	daxfs_faa(daxfs_state_word(fs, used_bytes),
		  (pages - take) * DAXFS_PAGE_SIZE);
	start = bump_take(fs, pages, take, &got);
	if (!start) {
		daxfs_faa(daxfs_state_word(fs, used_bytes),
			  -((pages - take) * DAXFS_PAGE_SIZE));
		daxfs_cas(&h->alloc_cursor, &lk, 0);
		return 0;
	}
	/* declared dead since we locked: the slot was reset (maybe joined
	 * again); what we carved is named nowhere, so it goes back */
	if (daxfs_load(&h->alloc_cursor) != lk) {
		daxfs_faa(daxfs_state_word(fs, used_bytes),
			  -((pages - take) * DAXFS_PAGE_SIZE));
		daxfs_pages_release(fs, start, start + got * DAXFS_PAGE_SIZE);
		return 0;
	}
	daxfs_store(&h->alloc_end, start + got * DAXFS_PAGE_SIZE);
	/* a stop between that look and this CAS is the window every fence
	 * leaves (docs/hosts.md "Fencing"): the carve leaks */
	if (!daxfs_cas(&h->alloc_cursor, &lk, start + take * DAXFS_PAGE_SIZE))
		return 0;
	daxfs_faa(daxfs_state_word(fs, used_bytes),
		  -((pages - take) * DAXFS_PAGE_SIZE));
	alloc_word_flush(fs, &h->alloc_end, 8);
	alloc_word_flush(fs, &h->alloc_cursor, 8);
	fresh_pages(fs, start, got);
	return start;
}

void daxfs_host_batch_return(struct daxfs_fs *fs, u32 slot)
{
	struct daxfs_host *h = daxfs_host_at(fs, slot);
	u64 c = daxfs_load(&h->alloc_cursor), e = daxfs_load(&h->alloc_end);

	/* claim the remainder first, so a second recoverer finds nothing */
	if (c && !batch_locked(c) && c < e &&
	    daxfs_cas(&h->alloc_cursor, &c, e))
		daxfs_pages_release(fs, c, e);
	daxfs_store(&h->alloc_cursor, 0);
	daxfs_store(&h->alloc_end, 0);
}

/*
 * One page: page stack (the front of its top extent: the page freed
 * last), host batch, a new batch, then the bare bump.  Ordinary
 * allocations (limbo == false) leave the reserve alone; pages already in
 * our batch were carved under that rule, so they are ours.  Limbo batch
 * pages may use the reserve but never refill a batch with it.
 */
static u64 page_get(struct daxfs_fs *fs, bool limbo)
{
	u64 off, got, n;
	int i;

	if (limbo || general_room(fs, 1)) {
		off = page_take(fs, 1, 1, &got);
		if (off)
			return off;
	}
	for (i = 0; i < 4; i++) {
		off = batch_take(fs, 1);
		if (off)
			return off;
		if (limbo)
			break;
		n = general_room(fs, DAXFS_BATCH_PAGES);
		if (!n)
			break;
		off = batch_refill(fs, n, 1);
		if (off)
			return off;
	}
	if (!limbo && !general_room(fs, 1))
		return 0;
	off = bump_take(fs, 1, 1, &got);
	if (off)
		return off;
	/* the bump is exhausted; a refill may have raced us to the stack */
	return page_take(fs, 1, 1, &got);
}

static u64 alloc_once(struct daxfs_fs *fs, unsigned int class)
{
	u64 off, page, size, i, per;
	struct daxfs_free_obj *o;

	if (class == DAXFS_CLASS_PAGE)
		return page_get(fs, false);
	off = stack_pop(fs, class);
	if (off)
		return off;
	/* the caller counted one object; the rest of the page is counted
	 * too until it is pushed (docs/alloc.md "Counted before taken") */
	size = daxfs_class_size(class);
	per = DAXFS_PAGE_SIZE / size;
	daxfs_faa(daxfs_state_word(fs, used_bytes), (per - 1) * size);
	page = page_get(fs, false);
	if (!page) {
		daxfs_faa(daxfs_state_word(fs, used_bytes), -((per - 1) * size));
		return 0;
	}
	/* keep the first object, push the rest as one pre-linked chain */
	for (i = 1; i + 1 < per; i++) {
		o = (struct daxfs_free_obj *)(fs->base + page + i * size);
		daxfs_store(&o->next, page + (i + 1) * size);
	}
	daxfs_free_push_chain(fs, class, page + size, page + (per - 1) * size);
	count_pushed(fs, class, per - 1);	/* one free makes it whole */
	daxfs_faa(daxfs_state_word(fs, used_bytes), -((per - 1) * size));
	return page;
}

/* alloc_once, counted before it takes (docs/alloc.md "Counted before
 * taken"): a death in between leaves the counter high, never low; a
 * miss takes the count back. */
static u64 alloc_counted(struct daxfs_fs *fs, unsigned int class, u64 size)
{
	u64 off;

	daxfs_faa(daxfs_state_word(fs, used_bytes), size);
	off = alloc_once(fs, class);
	if (!off)
		daxfs_faa(daxfs_state_word(fs, used_bytes), -size);
	return off;
}

u64 daxfs_alloc(struct daxfs_op *op, unsigned int class)
{
	struct daxfs_fs *fs = op->fs;
	u64 off, size;

	if (!op->lane || class >= DAXFS_NR_CLASSES || !daxfs_host_still_mine(fs))
		return 0;
	size = daxfs_class_size(class);
	off = alloc_counted(fs, class, size);
	if (!off) {
		/* pool full: get back what limbo holds, then retry once; then
		 * turn wholly free small-object pages back into pages (a
		 * pass that cannot find one is skipped: the hint).  Not
		 * counted meanwhile: a death in those walks leaves the
		 * counter right (tests/test_compact.py) */
		daxfs_reclaim(op);
		off = alloc_counted(fs, class, size);
		if (!off && daxfs_compact(op))
			off = alloc_counted(fs, class, size);
		if (!off)
			return 0;
	}
	memset(fs->base + off, 0, size);
	/* persistent media: the zeros must be there after a power loss
	 * whether or not the caller stores over all of them (docs/modes.md) */
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(fs->base + off, size);
	return off;
}

/* n contiguous pages: from the batch, else a fresh run (n >= batch size)
 * or a fresh batch whose head we take. */
static u64 run_get(struct daxfs_fs *fs, u32 n)
{
	u64 off, got = 0, room;

	off = batch_take(fs, n);
	if (off)
		return off;
	if (n >= DAXFS_BATCH_PAGES) {
		off = general_room(fs, n) == n ? bump_take(fs, n, n, &got) : 0;
		if (off)
			fresh_pages(fs, off, n);
		return off;
	}
	room = general_room(fs, DAXFS_BATCH_PAGES);
	return room >= n ? batch_refill(fs, room, n) : 0;
}

/* Up to n pages, in as few contiguous pieces as the page stack's extents
 * allow (each piece a take of one CAS), then page by page. */
static u32 pages_gather(struct daxfs_fs *fs, u32 n, u64 *offs)
{
	u64 off, got, room, k;
	u32 i = 0;

	while (i < n) {
		room = general_room(fs, n - i);
		got = 0;
		off = room ? page_take(fs, room, 1, &got) : 0;
		if (!off) {
			off = page_get(fs, false);
			got = 1;
		}
		if (!off)
			break;
		for (k = 0; k < got; k++)
			offs[i++] = off + k * DAXFS_PAGE_SIZE;
	}
	return i;
}

u32 daxfs_alloc_pages(struct daxfs_op *op, u32 n, u64 *offs)
{
	struct daxfs_fs *fs = op->fs;
	u64 start;
	u32 i = 0, pass;

	if (!op->lane || !n || !daxfs_host_still_mine(fs))
		return 0;
	/* counted before taken (docs/alloc.md); what we did not get is
	 * taken off after */
	daxfs_faa(daxfs_state_word(fs, used_bytes), (u64)n * DAXFS_PAGE_SIZE);
	start = n > 1 ? run_get(fs, n) : 0;
	if (start) {
		for (i = 0; i < n; i++)
			offs[i] = start + (u64)i * DAXFS_PAGE_SIZE;
	} else {
		for (pass = 0; pass < 3 && !i; pass++) {
			/* not counted during the walks: a death in them
			 * leaves the counter right (tests/test_compact.py) */
			if (pass)
				daxfs_faa(daxfs_state_word(fs, used_bytes),
					  -((u64)n * DAXFS_PAGE_SIZE));
			if (pass == 1)
				daxfs_reclaim(op);
			else if (pass == 2 && !daxfs_compact(op))
				return 0;
			if (pass)
				daxfs_faa(daxfs_state_word(fs, used_bytes),
					  (u64)n * DAXFS_PAGE_SIZE);
			i = pages_gather(fs, n, offs);
		}
	}
	if (i < n)
		daxfs_faa(daxfs_state_word(fs, used_bytes),
			  -((u64)(n - i) * DAXFS_PAGE_SIZE));
	return i;
}

/* A fresh batch for a take into the hold; false when none can be had. */
static bool held_refill(struct daxfs_fs *fs, u32 n)
{
	u64 room;

	if (n > DAXFS_BATCH_PAGES)
		return false;
	room = general_room(fs, DAXFS_BATCH_PAGES);
	return room >= n && batch_refill(fs, room, 0);
}

u32 daxfs_alloc_held(struct daxfs_op *op, u32 n, u64 *offs)
{
	struct daxfs_fs *fs = op->fs;
	u64 start = 0, room, took = 0;
	u32 got, i;

	if (!op->lane || !n || !daxfs_host_still_mine(fs))
		return 0;
	/* one page: the page stack first, as for every page (page_get) */
	if (n > 1 || !daxfs_load(&head_word(fs, DAXFS_CLASS_PAGE)->off)) {
		start = batch_take_held(op, n);
		if (!start && held_refill(fs, n))
			start = batch_take_held(op, n);
	}
	if (start) {
		daxfs_crash_point("alloc.pages_taken");
		for (i = 0; i < n; i++)
			offs[i] = start + (u64)i * DAXFS_PAGE_SIZE;
		return n;
	}
	/* the page stack (its top extent, or the front of it: one
	 * contiguous piece), the bump, a full pool's reclaim: these pages
	 * are ours from their CAS until the hold names them (the one
	 * window left, docs/alloc.md) */
	room = general_room(fs, n);
	/* counted before taken (docs/alloc.md), the surplus taken off */
	if (room)
		daxfs_faa(daxfs_state_word(fs, used_bytes),
			  room * DAXFS_PAGE_SIZE);
	start = room ? page_take(fs, room, 1, &took) : 0;
	if (room && (!start || took < room))
		daxfs_faa(daxfs_state_word(fs, used_bytes),
			  -((room - (start ? took : 0)) * DAXFS_PAGE_SIZE));
	if (start) {
		got = (u32)took;
	} else {
		got = daxfs_alloc_pages(op, n, offs);
		if (!got)
			return 0;
		start = offs[0];
		/* the lane names one contiguous run: keep the contiguous
		 * head, give the rest back */
		for (i = 1; i < got &&
		     offs[i] == start + (u64)i * DAXFS_PAGE_SIZE; i++)
			;
		while (got > i)
			daxfs_free_obj(fs, offs[--got], DAXFS_CLASS_PAGE);
	}
	if (daxfs_hold_pages(op, start, got)) {
		/* declared dead: named nowhere yet, so recovery cannot have
		 * freed them, and they go back (daxfs_free_now would refuse,
		 * fenced); a kill before the hold leaks them (the window
		 * docs/alloc.md names) */
		daxfs_pages_free(fs, start, got);
		return 0;
	}
	for (i = 0; i < got; i++)
		offs[i] = start + (u64)i * DAXFS_PAGE_SIZE;
	return got;
}

/*
 * A 2 MiB run for file data (format 11, docs/alloc.md "Runs"): 512
 * pages aligned to 2 MiB, from the never-used part of the pool only (the
 * page stack has lost every contiguity).  The bump skips to the next 2
 * MiB boundary; the pages skipped go to the page stack.  The run is named
 * in op's page hold before we return; between the bump's CAS and that,
 * a crash leaks the run and the skipped pages to fsck (the window every
 * bump allocation has, docs/alloc.md).  0 when the pool cannot give one:
 * the caller allocates page by page.
 */
u64 daxfs_alloc_run_held(struct daxfs_op *op)
{
	struct daxfs_fs *fs = op->fs;
	u64 *bw = daxfs_state_word(fs, bump), b, a = 0, skip = 0;
	u64 *uw = daxfs_state_word(fs, used_bytes);
	bool carved = false;
	u32 i;

	if (!op->lane || !daxfs_host_still_mine(fs) ||
	    general_room(fs, 2 * DAXFS_RUN_PAGES) < 2 * DAXFS_RUN_PAGES)
		return 0;
	/* the run and the pages it skips are counted before the carve
	 * (docs/alloc.md "Counted before taken"), the skip until it is on
	 * the page stack */
	daxfs_faa(uw, DAXFS_RUN_SIZE);
	b = daxfs_load(bw);
	for (i = 0; i < CAS_TRIES; i++) {
		if (b < fs->pool_off || b >= fs->pool_end ||
		    (b & (DAXFS_PAGE_SIZE - 1)))
			break;
		a = (b + DAXFS_RUN_SIZE - 1) & ~((u64)DAXFS_RUN_SIZE - 1);
		if (a > fs->pool_end || fs->pool_end - a < DAXFS_RUN_SIZE)
			break;
		if (a - b != skip) {
			daxfs_faa(uw, (a - b) - skip);
			skip = a - b;
		}
		if (daxfs_cas(bw, &b, a + DAXFS_RUN_SIZE)) {
			carved = true;
			break;
		}
	}
	if (!carved) {
		daxfs_faa(uw, -(DAXFS_RUN_SIZE + skip));
		return 0;
	}
	alloc_word_flush(fs, bw, sizeof(*bw));
	/* carved, named nowhere: a kill here leaks the run and the skip */
	daxfs_crash_point("alloc.run_carved");
	if (daxfs_hold_pages(op, a, DAXFS_RUN_PAGES)) {
		/* declared dead since our CAS: recovery cannot have seen the
		 * run or the skip (named nowhere yet), so they go back, as a
		 * zombie's batch carve does (batch_refill); a kill here
		 * leaks them (tests/test_zombie_fence.py, fence.hold) */
		daxfs_faa(uw, -(DAXFS_RUN_SIZE + skip));
		daxfs_pages_release(fs, b, a + DAXFS_RUN_SIZE);
		return 0;
	}
	daxfs_pages_release(fs, b, a);
	if (skip)
		daxfs_faa(uw, -skip);
	daxfs_crash_point("alloc.run_held");
	fresh_pages(fs, a, DAXFS_RUN_PAGES);
	return a;
}

/* Gives back a run that was never published (nor named anywhere). */
void daxfs_run_free(struct daxfs_op *op, u64 run)
{
	struct daxfs_fs *fs = op->fs;

	if (daxfs_fenced(op))
		return;		/* recovery may have freed it: leak to fsck */
	daxfs_faa(daxfs_state_word(fs, used_bytes), -(u64)DAXFS_RUN_SIZE);
	daxfs_pages_release(fs, run, run + DAXFS_RUN_SIZE);
}

u64 daxfs_alloc_limbo_page(struct daxfs_op *op)
{
	struct daxfs_fs *fs = op->fs;
	u64 off;

	if (!op->lane || !daxfs_host_still_mine(fs))
		return 0;
	/* counted before taken (docs/alloc.md) */
	daxfs_faa(daxfs_state_word(fs, used_bytes), DAXFS_PAGE_SIZE);
	off = page_get(fs, true);
	if (!off)
		daxfs_faa(daxfs_state_word(fs, used_bytes), -DAXFS_PAGE_SIZE);
	return off;
}

/*
 * A host's first open-set page (zeroed): ordinary space first, else the
 * reserve, which keeps DAXFS_RESERVE_OPEN_PAGES for every host without a
 * set (daxfs_reserve_pages), so opening works on a full pool.
 */
u64 daxfs_alloc_open_page(struct daxfs_op *op)
{
	u64 off = daxfs_alloc(op, DAXFS_CLASS_PAGE);

	if (off)
		return off;
	off = daxfs_alloc_limbo_page(op);
	if (off)
		memset(op->fs->base + off, 0, DAXFS_PAGE_SIZE);
	return off;
}

int daxfs_free_now(struct daxfs_op *op, u64 off, unsigned int class)
{
	/* fenced: recovery may have freed it already; leak it to fsck
	 * rather than free it twice.  No lane: the op was never ours to
	 * write with (daxfs_op_begin failed, -ESTALE when we were declared
	 * dead), and daxfs_fenced says false for lane-less ops, which
	 * write nothing (stop 46: a test that ignored op_begin's error
	 * freed pages after recovery had taken its slot) */
	daxfs_crash_point("fence.free");
	if (!op->lane || daxfs_fenced(op))
		return -ESTALE;
	daxfs_free_obj(op->fs, off, class);
	return 0;
}
