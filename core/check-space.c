// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Checker, space part: free stacks, leaked space, the used_bytes counter
 * and, in repair mode, the rebuild of every free stack, the bump pointer
 * and used_bytes from reachability (what the walk did not reach is free:
 * repairs only run with no other host live, so limbo can go too).
 */
#include "compat.h"
#include "daxfs_core.h"
#include "check.h"

static u64 chk_cls_size(u32 cls)
{
	return cls < DAXFS_CLASS_PAGE ? 64ULL << cls : DAXFS_BLOCK_SIZE;
}

/* One free-stack entry: an object, or (page class) an extent of n pages
 * (format 12: the word is last | (n - 1)); *link: where its link lies */
static void chk_entry(u32 cls, u64 w, u64 *off, u64 *sz, u64 *link)
{
	u64 n = (w & DAXFS_FREE_EXTENT_MASK) + 1;

	*off = *link = w;
	*sz = chk_cls_size(cls);
	if (cls == DAXFS_CLASS_PAGE) {
		*link = w & ~DAXFS_FREE_EXTENT_MASK;
		*off = *link - (n - 1) * DAXFS_BLOCK_SIZE;
		*sz = n * DAXFS_BLOCK_SIZE;
		if (*off > *link)
			*off = 0;	/* wraps below 0: invalid */
	}
}

static void chk_freelist(struct chk *c, u32 cls)
{
	struct daxfs_fs *fs = c->fs;
	u64 w = daxfs_load(&fs->state->free_head[cls].head.off);
	u64 off, sz, link, n;

	for (n = 0; w && n <= c->units; n++) {
		struct daxfs_free_obj *o;

		chk_entry(cls, w, &off, &sz, &link);
		o = daxfs_ptr(fs, link, chk_cls_size(cls), chk_cls_size(cls));
		if (!o || !daxfs_ptr(fs, off, sz, chk_cls_size(cls)) ||
		    off < fs->pool_off || off + sz > c->bump) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_FREELIST,
				   "free stack links to an invalid object (rest of stack lost)",
				   0, w, cls, n, c->repair);
			c->space_dirty = true;
			return;
		}
		if (chk_test_any(c, c->used, off, sz)) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_FREE_INUSE,
				   "object on a free stack is still in use", 0, w,
				   cls, n, c->repair);
			c->space_dirty = true;
			return;
		}
		if (!chk_mark(c, c->freed, off, sz)) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_FREELIST,
				   "object freed twice or free stack loops", 0, w,
				   cls, n, c->repair);
			c->space_dirty = true;
			return;
		}
		c->freelist_bytes += sz;
		w = daxfs_load(&o->next);
	}
	if (w) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_FREELIST,
			   "free stack longer than the pool", 0, w, cls, n,
			   c->repair);
		c->space_dirty = true;
	}
}

void chk_space(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 words = (c->units + 63) / 64, i, leaked = 0, first_leak = 0;
	u64 bump_units = (c->bump - fs->pool_off) >> 6;
	u64 reach = 0, above = 0, expect;
	u32 cls;

	chk_progress(c, 5, 0, words);
	for (cls = 0; cls < DAXFS_NR_CLASSES; cls++)
		chk_freelist(c, cls);
	c->r->free_bytes = c->freelist_bytes;
	for (i = 0; i < words; i++) {
		u64 u = c->used[i], f = c->freed[i], lim;

		reach += (u64)daxfs_popcount64(u);
		if ((i & 0xffff) == 0)
			chk_progress(c, 5, i, words);
		if (i * 64 >= bump_units) {
			above += (u64)daxfs_popcount64(u);
			continue;
		}
		lim = bump_units - i * 64;
		if (lim < 64) {
			above += (u64)daxfs_popcount64(u & ~((1ULL << lim) - 1));
			u |= ~((1ULL << lim) - 1);
		}
		if (~(u | f)) {
			if (!leaked)
				first_leak = fs->pool_off + ((i * 64 +
					(u64)daxfs_ctz64(~(u | f))) << 6);
			leaked += (u64)daxfs_popcount64(~(u | f));
		}
	}
	c->r->reachable_bytes = reach << 6;
	c->r->leaked_bytes = leaked << 6;
	if (above) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_STATE,
			   "objects in use above the allocation frontier (bump)", 0,
			   c->bump, above << 6, 0, c->repair);
		c->space_dirty = true;
	}
	if (leaked) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_LEAK,
			   "space allocated but reachable from nothing (bytes in have)",
			   0, first_leak, leaked << 6, 0, c->repair);
		c->space_dirty = true;
	}
	expect = (c->bump - fs->pool_off) - c->freelist_bytes - c->r->batch_bytes;
	if (c->r->used_bytes != expect) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_USED_BYTES, "used_bytes counter wrong", 0, 0,
			   c->r->used_bytes, expect, c->repair);
		c->space_dirty = true;
	}
}

/* Pushes [off, off + size) onto the list being built for class cls. */
static void chk_push(struct chk *c, u64 *heads, u32 cls, u64 off)
{
	struct daxfs_free_obj *o = (struct daxfs_free_obj *)(c->fs->base + off);

	daxfs_store(&o->next, heads[cls]);
	heads[cls] = off;
}

/* Pushes the n wholly free pages from first as one extent (none: n 0),
 * linked from its last page. */
static void chk_push_extent(struct chk *c, u64 *heads, u64 first, u64 n)
{
	u64 last = first + (n - 1) * DAXFS_BLOCK_SIZE;
	struct daxfs_free_obj *o = (struct daxfs_free_obj *)(c->fs->base + last);

	if (!n)
		return;
	daxfs_store(&o->next, heads[DAXFS_CLASS_PAGE]);
	heads[DAXFS_CLASS_PAGE] = last | (n - 1);
}

/* Frees the unused parts of a page in use (bitmap word w), largest first. */
static void chk_push_page(struct chk *c, u64 *heads, u64 page, u64 w)
{
	int k, h, q, u;

	for (k = 7; k >= 0; k--) {
		u64 b = (w >> (8 * k)) & 0xff;
		u64 base = page + (u64)k * 512;

		if (!b) {
			chk_push(c, heads, DAXFS_CLASS_512, base);
			continue;
		}
		for (h = 1; h >= 0; h--) {
			u64 hb = (b >> (4 * h)) & 0xf;

			if (!hb) {
				chk_push(c, heads, DAXFS_CLASS_256, base + h * 256);
				continue;
			}
			for (q = 1; q >= 0; q--) {
				u64 qb = (hb >> (2 * q)) & 3;

				if (!qb) {
					chk_push(c, heads, DAXFS_CLASS_128,
						 base + h * 256 + q * 128);
					continue;
				}
				for (u = 1; u >= 0; u--)
					if (!(qb & (1u << u)))
						chk_push(c, heads, DAXFS_CLASS_64,
							 base + h * 256 + q * 128 + u * 64);
			}
		}
	}
}

void chk_rebuild_space(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 heads[DAXFS_NR_CLASSES] = { 0 };
	u64 words = (c->units + 63) / 64, last = 0, i, used = 0, bump, ext_n = 0;
	u32 cls, slot, l;

	chk_progress(c, 6, 0, words);
	/* no host is live: limbo and alloc batches all go back */
	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		struct daxfs_host *h = &fs->hosts[slot];

		for (l = 0; l < DAXFS_LANES; l++)
			daxfs_store(&fs->lanes[slot * DAXFS_LANES + l].limbo_open, 0);
		daxfs_store(&h->limbo_sealed, 0);
		daxfs_store(&h->alloc_cursor, 0);
		daxfs_store(&h->alloc_end, 0);
	}
	for (i = 0; i < words; i++)
		if (c->used[i])
			last = i + 1;
	/* one bitmap word is one page: the frontier follows the last page
	 * that holds anything reachable */
	bump = fs->pool_off + last * DAXFS_BLOCK_SIZE;
	if (bump > fs->pool_end)
		bump = fs->pool_end;
	/* wholly free pages next to each other go back as one extent
	 * (format 12), from the top down: the stack ends lowest first */
	for (i = last; i-- > 0; ) {
		u64 page = fs->pool_off + i * DAXFS_BLOCK_SIZE;

		used += (u64)daxfs_popcount64(c->used[i]);
		if (!c->used[i] && ext_n < DAXFS_FREE_EXTENT_MAX) {
			ext_n++;
			continue;
		}
		chk_push_extent(c, heads, page + DAXFS_BLOCK_SIZE, ext_n);
		ext_n = !c->used[i];
		if (c->used[i])
			chk_push_page(c, heads, page, c->used[i]);
	}
	chk_push_extent(c, heads, fs->pool_off, ext_n);
	daxfs_fence();
	for (cls = 0; cls < DAXFS_NR_CLASSES; cls++) {
		struct daxfs_free_head *h = &fs->state->free_head[cls].head;

		/* offline (no live host): two plain stores; the tag still
		 * moves on, so it never repeats a value seen before */
		daxfs_store(&h->tag, daxfs_load(&h->tag) + 1);
		daxfs_store(&h->off, heads[cls]);
		/* the compaction hint described the old stack: unknown now,
		 * so the next ENOSPC sorts this one (docs/alloc.md) */
		daxfs_store(&fs->state->free_head[cls].pad[DAXFS_FREE_COMPACT_DUE], 0);
	}
	daxfs_store(&fs->state->bump.v, bump);
	daxfs_store(&fs->state->used_bytes.v, used << 6);
	c->r->rebuilt_space = true;
	chk_report(c, DAXFS_CHK_INFO, DAXFS_CHK_FREELIST,
		   "free space rebuilt from reachability (used bytes in have)", 0,
		   bump, used << 6, 0, false);
}
