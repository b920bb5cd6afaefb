// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * File data paths: read, write (with cluster-atomic append), truncate and
 * block mapping for DAX, on top of the radix tree in core/radix.c.
 *
 * Size protocol (docs/files.md): inode.size only grows by CAS-to-maximum;
 * it shrinks only in truncate, which closes the file's write gate
 * (core/filegate.c: no write of the file runs meanwhile, on any host),
 * then clears the cut-off bytes BEFORE lowering the size, so truncated
 * bytes never come back.
 * Ordinary writes are data-first (pages, then size), appends reserve
 * their range first (CAS size -> size + len) so appenders on different
 * hosts never overlap.  Every read loads the size once, at its start.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "base.h"
#include "file.h"
#include "pcache.h"
#include "filegate.h"
#include "redo.h"
#include "file-int.h"
#include "mapped.h"

#define BLK		((u64)DAXFS_BLOCK_SIZE)
#define BLK_LO		(BLK - 1)
#define WRITE_BATCH	64u	/* new pages allocated by one write step */
#define SIZE_RETRIES	100000u

/* The inode ino, which must be a regular file (-EISDIR, -EINVAL), found
 * through the caller's cache fc (may be NULL). */
int daxfs_file_get_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		      struct daxfs_iref *ref)
{
	int err = daxfs_inode_get_fc(op, ino, fc, ref);
	u32 mode;

	if (err)
		return err;
	mode = daxfs_iref_mode(ref);
	if (DAXFS_IS_DIR(mode))
		return -EISDIR;
	if (!DAXFS_IS_REG(mode))
		return -EINVAL;
	return 0;
}

int daxfs_file_get(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref)
{
	return daxfs_file_get_fc(op, ino, NULL, ref);
}

/*
 * A regular file about to be changed by this host: checks the type on the
 * (possibly pristine base) inode, then copies it up.  ref ends up naming
 * the writable record.
 */
int daxfs_file_writable_fc(struct daxfs_op *op, u64 ino,
			   struct daxfs_fcache *fc, struct daxfs_iref *ref,
			   struct daxfs_inode **ip)
{
	int err;

	if ((op->fs->flags & DAXFS_FS_RDONLY) || !op->lane)
		return -EROFS;
	err = daxfs_file_get_fc(op, ino, fc, ref);
	if (err)
		return err;
	/* the overlay record the lookup found is the writable one: a
	 * second lookup is needed only to copy a base file up */
	if (ref->ip) {
		*ip = ref->ip;
		return 0;
	}
	err = daxfs_inode_get_writable(op, ino, ip);
	if (err)
		return err;
	ref->ip = *ip;
	return 0;
}

int daxfs_file_writable(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref,
			struct daxfs_inode **ip)
{
	return daxfs_file_writable_fc(op, ino, NULL, ref, ip);
}

int daxfs_file_view(struct daxfs_fs *fs, const struct daxfs_iref *ref,
		    struct fview *v)
{
	const struct daxfs_base_inode *bip = ref->bip;
	struct daxfs_inode *ip = ref->ip;
	u64 lim = 0, bsize = 0, bdata = 0, bcount = 0;

	v->ip = ip;
	v->base = NULL;
	v->bk = false;
	v->root = 0;
	if (ip) {
		v->size = daxfs_load(&ip->size);
		v->root = daxfs_load(&ip->root);
		bip = NULL;
		if (daxfs_load32(&ip->flags) & DAXFS_IF_BASE) {
			bip = daxfs_base_inode(fs, daxfs_load(&ip->base_ino));
			if (!bip)
				return -EUCLEAN;
		}
	} else if (!bip) {
		return -EUCLEAN;
	}
	if (bip) {
		/* once each: the base lies in the region like the rest, and
		 * the extent checked below must be the extent used */
		bsize = daxfs_once(bip->size);
		bdata = daxfs_once(bip->data);
		bcount = daxfs_once(bip->count);
		daxfs_race_point("file.base", bip);
		if (ip) {
			lim = daxfs_load(&ip->aux);
			if (lim > bsize)
				lim = bsize;
		} else {
			v->size = bsize;
			lim = bsize;
		}
	}
	if (v->size > DAXFS_MAX_FILE_SIZE)
		return -EUCLEAN;
	if (lim && daxfs_base_backed(fs)) {
		if (!daxfs_pcache_extent_ok(fs, bcount, bdata, bsize))
			return -EUCLEAN;
		v->bk = true;
		v->bk_idx = (u32)bcount;
		v->bk_off = bdata;
	} else if (lim) {
		v->base = daxfs_base_ptr(fs, bdata, bsize);
		if (!v->base)
			return -EUCLEAN;
	}
	v->limit = lim;
	return 0;
}

static u8 *page_ptr(struct daxfs_fs *fs, u64 off)
{
	return daxfs_ptr(fs, off, BLK, BLK);
}

/* ------------------------------------------------------------------ */
/* read */

struct rrun {
	const u8 *src;			/* NULL: zeros */
	u64 len;
};

/* Hands the pending run to the actor; false when the actor stopped. */
static bool run_flush(struct rrun *r, daxfs_read_actor_t actor, void *ctx,
		      u64 *total)
{
	u64 c;

	if (!r->len)
		return true;
	c = actor(ctx, r->src, r->len);
	if (c > r->len)
		c = r->len;
	*total += c;
	if (c < r->len)
		return false;
	r->len = 0;
	return true;
}

/*
 * Where the pages that follow block blk's (word s, a valid page) in the
 * leaf stop being contiguous with it, as a byte offset of the file (at
 * most the leaf's end, and no further than needed for end): a read of
 * many pages takes them as one piece instead of one loop step each.  The
 * span's pages are checked with one daxfs_ptr of the whole span.
 */
static u64 span_end(struct daxfs_fs *fs, const u64 *slots, u64 lo, u64 hi,
		    u64 blk, u64 s, u64 end)
{
	u64 lim = ((end - 1) >> DAXFS_BLOCK_SHIFT) + 1, b = blk + 1;

	if (lim > hi)
		lim = hi;
	if (b < lim)
		b += daxfs_slots_contig(slots, lo, b, s + BLK, lim);
	if (b > blk + 1 &&
	    !daxfs_ptr(fs, s & ~(u64)DAXFS_RADIX_UNWRITTEN,
		       (b - blk) << DAXFS_BLOCK_SHIFT, BLK))
		b = blk + 1;	/* past the pool: each page checked alone */
	return b << DAXFS_BLOCK_SHIFT;
}

s64 daxfs_view_read_block(struct daxfs_fs *fs, u64 root, u64 off, u64 end,
			  daxfs_read_actor_t actor, void *ctx)
{
	u64 s, c;
	const u8 *p;
	/* root: our snapshot, the slot of a direct root */
	int err = daxfs_radix_word(fs, &root, off >> DAXFS_BLOCK_SHIFT, &s);

	if (err)
		return err;
	p = daxfs_radix_page(fs, s, &err);
	if (err)
		return err;
	c = actor(ctx, p ? p + (off & BLK_LO) : NULL, end - off);
	return c < end - off ? c : end - off;
}

s64 daxfs_view_read_span(struct daxfs_op *op, struct daxfs_fs *fs,
			 const struct fview *vp, u64 off, u64 end,
			 daxfs_read_actor_t actor, void *ctx)
{
	const u64 *slots = NULL;
	struct fview v = *vp;	/* v.root: the snapshot a direct root's
				 * slot points into */
	struct rrun run = { NULL, 0 };
	u64 pos, lo = 1, hi = 0, total = 0, pages = 0;
	int err;

	/* Each step advances pos by at least one byte: bounded by len. */
	for (pos = off; pos < end;) {
		u64 blk = pos >> DAXFS_BLOCK_SHIFT;
		u64 piece_end, hole_to;
		const u8 *src = NULL;

		if (blk < lo || blk >= hi) {
			/* v.root is our snapshot: a direct root's slot */
			err = daxfs_radix_leaf(fs, &v.root, blk, &slots,
					       &pages, &lo, &hi);
			if (err)
				return err;
		}
		hole_to = (blk + 1) << DAXFS_BLOCK_SHIFT;
		if (slots || pages) {
			u64 s = daxfs_leaf_word(slots, pages, lo, blk);
			u8 *p = daxfs_radix_page(fs, s, &err);

			if (err)
				return err;
			if (p)
				src = p + (pos & BLK_LO);
			if (p && pages)
				hole_to = hi << DAXFS_BLOCK_SHIFT;
			else if (p)
				hole_to = span_end(fs, slots, lo, hi, blk, s,
						   end);
		} else {
			hole_to = hi << DAXFS_BLOCK_SHIFT;
		}
		piece_end = end < hole_to ? end : hole_to;
		if (!src && v.bk && pos < v.limit) {
			/* split mode: this page of the backing file, pinned in
			 * the shared page cache while the actor runs */
			u64 pe = (blk + 1) << DAXFS_BLOCK_SHIFT;
			s64 c;

			if (piece_end > pe)
				piece_end = pe;
			if (piece_end > v.limit)
				piece_end = v.limit;
			if (!run_flush(&run, actor, ctx, &total))
				return total;
			c = daxfs_pcache_read(op, v.bk_idx, v.bk_off + pos,
					      piece_end - pos, actor, ctx);
			if (c < 0)
				return total ? (s64)total : c;
			total += (u64)c;
			if ((u64)c < piece_end - pos)
				return total;
			pos = piece_end;
			continue;
		}
		if (!src && v.base && pos < v.limit) {
			/* no overlay page: the base bytes still visible */
			src = v.base + pos;
			if (piece_end > v.limit)
				piece_end = v.limit;
		}
		if (run.len && ((!run.src && !src) ||
				(run.src && src && run.src + run.len == src))) {
			run.len += piece_end - pos;
		} else {
			if (!run_flush(&run, actor, ctx, &total))
				return total;
			run.src = src;
			run.len = piece_end - pos;
		}
		pos = piece_end;
	}
	run_flush(&run, actor, ctx, &total);
	return total;
}

s64 daxfs_ref_read(struct daxfs_op *op, const struct daxfs_iref *ref,
		   u64 off, u64 len, daxfs_read_actor_t actor, void *ctx)
{
	u32 mode = daxfs_iref_mode(ref);
	struct fview v;
	int err;

	if (DAXFS_IS_DIR(mode))
		return -EISDIR;
	if (!DAXFS_IS_REG(mode))
		return -EINVAL;
	err = daxfs_file_view(op->fs, ref, &v);
	if (err)
		return err;
	return daxfs_view_read(op, op->fs, &v, off, len, actor, ctx);
}

s64 daxfs_file_read(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		    u64 off, u64 len, daxfs_read_actor_t actor, void *ctx)
{
	struct daxfs_iref ref;
	int err;

	err = daxfs_inode_get_fc(op, ino, fc, &ref);
	if (err)
		return err;
	return daxfs_ref_read(op, &ref, off, len, actor, ctx);
}

s64 daxfs_read_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		  u64 off, u64 len, daxfs_read_actor_t actor, void *ctx)
{
	struct daxfs_op op;
	s64 ret;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	ret = daxfs_file_read(&op, ino, fc, off, len, actor, ctx);
	daxfs_op_end(&op);
	return ret;
}

s64 daxfs_read(struct daxfs_fs *fs, u64 ino, u64 off, u64 len,
	       daxfs_read_actor_t actor, void *ctx)
{
	return daxfs_read_fc(fs, ino, NULL, off, len, actor, ctx);
}

/* ------------------------------------------------------------------ */
/* write */

/* Bytes [from, to) of block blk as the file shows them without an overlay
 * page: base bytes below the limit, zeros above. */
static int prefill(struct daxfs_op *op, const struct fview *v, u64 blk,
		   u8 *page, u64 from, u64 to)
{
	u64 abs = (blk << DAXFS_BLOCK_SHIFT) + from;
	u64 n = 0;
	int err;

	if (from >= to)
		return 0;
	if ((v->base || v->bk) && abs < v->limit) {
		n = v->limit - abs;
		if (n > to - from)
			n = to - from;
		if (v->bk) {
			/* copy-on-write of the cached backing page */
			err = daxfs_pcache_copy(op, v->bk_idx, v->bk_off + abs,
						page + from, n);
			if (err)
				return err;
		} else {
			err = daxfs_copy_data(op->fs, page + from,
					      v->base + abs, n);
			if (err)
				return err;
		}
	}
	daxfs_zero_stream(page + from + n, to - from - n);
	return 0;
}

/* CAS-to-maximum: a write moves the size up to its end, never down. */
void daxfs_size_max(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 want)
{
	u64 s = daxfs_load(&ip->size);
	u32 tries;

	for (tries = 0; s < want && tries < SIZE_RETRIES; tries++) {
		if (daxfs_cas(&ip->size, &s, want)) {
			pflush(fs, &ip->size, 8);
			return;
		}
	}
}

/*
 * The caller's bytes for [a, b) of the file into dst (the pages of those
 * blocks, contiguous), a chunk of up to DAXFS_COPY_CHUNK bytes per actor
 * call with the fence before each: a host declared dead must not write
 * into a page that recovery freed (a held page) or that reclaim freed
 * since recovery dropped our epoch, as someone may reuse it.  What a host
 * paused inside a chunk's copy stores when it resumes is the window
 * docs/hosts.md "Fencing" leaves; a chunk bounds it.  Returns the bytes
 * copied; *err = -ESTALE when fenced.
 */
u64 daxfs_copy_fenced(struct daxfs_op *op, daxfs_write_actor_t actor,
		      void *ctx, u8 *dst, u64 a, u64 b, int *err)
{
	u64 done = 0, n, c, f;

	while (a + done < b) {
		n = DAXFS_COPY_CHUNK - ((a + done) & (DAXFS_COPY_CHUNK - 1));
		if (n > b - a - done)
			n = b - a - done;
		/* fault the chunk's pages in first unless known mapped
		 * (mapped.h): a task's stop is taken on the way out of a page
		 * fault, so a fault inside the copy would put the copy after
		 * the fence in time; this way only the copy itself is */
		for (f = 0; DAXFS_WRITE_FAULTS && f < n;
		     f += BLK - ((a + done + f) & BLK_LO))
			daxfs_fault_in_page(op->fs, dst + done + f);
		if (daxfs_fenced(op)) {
			*err = -ESTALE;
			break;
		}
		c = actor(ctx, dst + done, n);
		if (c > n)
			c = n;
		done += c;
		if (c < n)
			break;
	}
	/* the actors' streaming stores, once for the whole range: before
	 * the caller publishes a page or moves the size */
	daxfs_stream_fence();
	return done;
}

/*
 * Publishes page off (at pk) as block kb through the cursor: it holds our
 * bytes [ws, we) of the file and everything else the block shows, and the
 * write's record names it (daxfs_wrec_set).  A page that lost the race
 * has those bytes copied into the winner and is freed.  *done moves to
 * we, or to ws with *err on failure.  False when fenced: return at once,
 * recovery owns what is left.  Inlined: a call per page cost a fresh
 * write of 1 MiB 3% more instructions (bench/ins_op.sh).
 */
static daxfs_always_inline bool page_publish(struct daxfs_op *op,
						 const struct fview *v,
						 struct daxfs_rcur *lf, u64 kb,
						 u64 off, u8 *pk, u64 ws,
						 u64 we, u64 *done, int *err)
{
	struct daxfs_fs *fs = op->fs;
	u64 ks = kb << DAXFS_BLOCK_SHIFT, win = 0;
	u8 *wp;

	*err = daxfs_rcur_insert(op, v->ip, lf, kb, off, &win);
	if (*err == -ESTALE)
		return false;
	daxfs_wrec_clear(op);
	if (*err) {
		*done = ws;
		if (daxfs_free_now(op, off, DAXFS_CLASS_PAGE)) {
			*err = -ESTALE;
			return false;
		}
		return true;
	}
	if (win) {
		wp = page_ptr(fs, win);
		/* a preallocation's page may have won: it is no longer
		 * unwritten once ours go in */
		if (!daxfs_fenced(op))
			*err = daxfs_radix_written(op, v->ip, kb, win);
		if (daxfs_fenced(op)) {
			*err = -ESTALE;
			return false;
		}
		if (!*err && !wp)
			*err = -EUCLEAN;
		else if (!*err)
			*err = daxfs_copy_data(fs, wp + (ws - ks), pk + (ws - ks),
					       we - ws);
		if (*err)
			*done = ws;
		else
			pflush(fs, wp + (ws - ks), we - ws);
		if (daxfs_free_now(op, off, DAXFS_CLASS_PAGE)) {
			*err = -ESTALE;
			return false;
		}
	}
	if (!*err) {
		*done = we;
		daxfs_crash_point("write.page_published");
	}
	return true;
}

/*
 * Fills n fresh pages for blocks [blk, blk + n) with the bytes of [pos,
 * end) that fall there (one actor call per physically contiguous run),
 * completes each used page (base bytes / zeros), then publishes it.  A
 * page that lost the publication race has its written bytes copied into
 * the winner.  Returns bytes written; *err on failure.
 */
static u64 write_new(struct daxfs_op *op, const struct fview *v,
		     struct daxfs_rcur *lf, u64 blk, u32 n, u64 *offs,
		     u64 pos, u64 end,
		     daxfs_write_actor_t actor, void *ctx, int *err)
{
	struct daxfs_fs *fs = op->fs;
	u64 wend = (blk + n) << DAXFS_BLOCK_SHIFT;
	u64 done = pos;
	u32 i = 0, j, k;

	if (wend > end)
		wend = end;
	while (i < n) {
		u64 a, b, c;
		u8 *p0;

		for (j = i + 1; j < n && offs[j] == offs[j - 1] + BLK; j++)
			;
		p0 = daxfs_ptr(fs, offs[i], (u64)(j - i) * BLK, BLK);
		if (!p0) {
			*err = -EUCLEAN;
			break;
		}
		a = (blk + i) << DAXFS_BLOCK_SHIFT;
		if (a < pos)
			a = pos;
		b = (blk + j) << DAXFS_BLOCK_SHIFT;
		if (b > wend)
			b = wend;
		c = daxfs_copy_fenced(op, actor, ctx, p0 + (a & BLK_LO), a, b,
				      err);
		if (*err)
			return done - pos;	/* fenced: recovery frees the hold */
		for (k = i; k < j; k++) {
			u64 kb = blk + k, ks = kb << DAXFS_BLOCK_SHIFT;
			u64 ws = ks > a ? ks : a;
			u64 we = ks + BLK < a + c ? ks + BLK : a + c;
			u8 *pk = p0 + (u64)(k - i) * BLK;

			/* page k leaves the lane's hold before it is
			 * published or freed; one to publish is named in
			 * the intent until its insert returned, so that
			 * recovery frees it unless the file maps it
			 * (docs/recovery.md "Pages a write holds") */
			if (!*err && ws < we)
				daxfs_wrec_set(op, kb, offs[k]);
			/* fenced: recovery frees what the hold named, and
			 * another host may reuse it: no store more */
			if (daxfs_hold_pages(op, offs[k] + BLK, n - k - 1))
				goto fenced;
			if (*err || ws >= we) {
				if (daxfs_free_now(op, offs[k],
						   DAXFS_CLASS_PAGE))
					goto fenced;
				continue;
			}
			*err = prefill(op, v, kb, pk, 0, ws - ks);
			if (!*err)
				*err = prefill(op, v, kb, pk, we - ks, BLK);
			if (*err) {
				daxfs_wrec_clear(op);
				done = ws;
				if (daxfs_free_now(op, offs[k],
						   DAXFS_CLASS_PAGE))
					goto fenced;
				continue;
			}
			pflush(fs, pk, BLK);
			pdrain(fs);
			daxfs_crash_point("write.page_publishing");
			daxfs_race_point("write.page_publishing", op->lane);
			if (!page_publish(op, v, lf, kb, offs[k], pk, ws, we,
					  &done, err))
				return done - pos;
		}
		if (*err || c < b - a) {
			for (k = j; k < n; k++)
				if (daxfs_hold_pages(op, offs[k] + BLK,
						     n - k - 1) ||
				    daxfs_free_now(op, offs[k],
						   DAXFS_CLASS_PAGE))
					goto fenced;
			break;
		}
		i = j;
	}
	return done - pos;
fenced:
	*err = -ESTALE;
	return done - pos;
}

/*
 * 2 MiB runs (format 11, docs/files.md "Runs"): a write that covers a
 * whole 2 MiB-aligned piece of a plain file (no base bytes) where the
 * tree has no leaf yet gets it as one run.  Only whole pieces: a run for
 * part of one would hold zeros nobody wrote, counted in st_blocks.
 */
static bool run_wanted(const struct fview *v, const struct daxfs_rcur *lf,
		       u64 pos, u64 end)
{
	u64 blk = pos >> DAXFS_BLOCK_SHIFT;

	return !(pos & (DAXFS_RUN_SIZE - 1)) && end - pos >= DAXFS_RUN_SIZE &&
	       !v->base && !v->bk && !lf->slots && !lf->run &&
	       lf->lo <= blk && lf->hi >= blk + DAXFS_RUN_PAGES &&
	       blk + DAXFS_RUN_PAGES <=
	       daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT);
}

/* Zeros from byte c of the run at p to its end: a short copy (a source
 * that faulted) leaves the rest as a hole would read. */
static void run_zero(u8 *p, u64 c)
{
	u64 head = -c & BLK_LO;

	memset(p + c, 0, head);
	for (c += head; c < DAXFS_RUN_SIZE; c += BLK)
		daxfs_zero_stream(p + c, BLK);
}

/*
 * A run whose slot another writer took first (a leaf or a run): the pages
 * holding our bytes [pos, pos + c) go in one by one as write_new's do
 * (into the winner's pages where they lost), the others go back.  On
 * entry the write's record names the run and the hold is empty.
 */
static daxfs_noinline u64 run_scatter(struct daxfs_op *op,
				      const struct fview *v,
				      struct daxfs_rcur *lf, u64 blk, u64 r,
				      u64 pos, u64 c, int *err)
{
	struct daxfs_fs *fs = op->fs;
	u64 done = pos;
	u32 k;

	daxfs_rcur_init(lf);
	/* the record goes from the run to its page 0 (which holds our
	 * first bytes), the other pages back into the hold first: a
	 * recoverer in between frees only what the hold does not name */
	if (daxfs_hold_pages(op, r + BLK, DAXFS_RUN_PAGES - 1))
		goto fenced;
	daxfs_wrec_set(op, blk, r);
	for (k = 0; k < DAXFS_RUN_PAGES; k++) {
		u64 kb = blk + k, ks = kb << DAXFS_BLOCK_SHIFT;
		u64 off = r + (u64)k * BLK;
		u64 ws = ks > pos ? ks : pos;
		u64 we = ks + BLK < pos + c ? ks + BLK : pos + c;

		if (!*err && ws < we)
			daxfs_wrec_set(op, kb, off);
		if (daxfs_hold_pages(op, off + BLK, DAXFS_RUN_PAGES - k - 1))
			goto fenced;
		if (*err || ws >= we) {
			if (daxfs_free_now(op, off, DAXFS_CLASS_PAGE))
				goto fenced;
			continue;
		}
		if (!page_publish(op, v, lf, kb, off, fs->base + off, ws, we,
				  &done, err))
			break;
	}
	return done - pos;
fenced:
	*err = -ESTALE;
	return done - pos;
}

/*
 * Writes [pos, min(end, pos + 2 MiB)) into a fresh run and publishes it
 * with one CAS (daxfs_radix_insert_run).  Returns the bytes written;
 * *taken false (and nothing done) when the pool had no run to give.
 * Out of line, as run_scatter: inlined, they made write_raw too big to
 * take write_new in, and a 4 KiB first write cost 2% more instructions.
 */
static daxfs_noinline u64 write_run(struct daxfs_op *op,
				    const struct fview *v,
				    struct daxfs_rcur *lf, u64 pos, u64 end,
				    daxfs_write_actor_t actor, void *ctx,
				    int *err, bool *taken)
{
	struct daxfs_fs *fs = op->fs;
	u64 blk = pos >> DAXFS_BLOCK_SHIFT, r, c;
	u64 wend = end - pos < DAXFS_RUN_SIZE ? end : pos + DAXFS_RUN_SIZE;
	u8 *p;
	int ret;

	r = daxfs_alloc_run_held(op);
	*taken = r != 0;
	p = r ? daxfs_ptr(fs, r, DAXFS_RUN_SIZE, DAXFS_RUN_SIZE) : NULL;
	if (!p)
		return 0;
	c = daxfs_copy_fenced(op, actor, ctx, p, pos, wend, err);
	if (*err)
		return 0;	/* fenced: recovery frees the hold */
	if (!c) {
		*err = daxfs_hold_pages(op, 0, 0);
		if (!*err)
			daxfs_run_free(op, r);
		return 0;
	}
	run_zero(p, c);
	pflush(fs, p, DAXFS_RUN_SIZE);
	pdrain(fs);
	/* named in the record until its insert returned (as a page in
	 * write_new): recovery frees it unless the file maps it */
	daxfs_wrec_set(op, blk, r | DAXFS_RADIX_RUN);
	*err = daxfs_hold_pages(op, 0, 0);
	if (*err)
		return 0;
	daxfs_crash_point("write.run_publishing");
	ret = daxfs_radix_insert_run(op, v->ip, blk, r);
	if (ret == -ESTALE) {
		*err = ret;
		return 0;
	}
	if (ret == 1)
		return run_scatter(op, v, lf, blk, r, pos, c, err);
	daxfs_wrec_clear(op);
	daxfs_rcur_init(lf);
	if (ret) {
		daxfs_run_free(op, r);
		*err = ret;
		return 0;
	}
	daxfs_crash_point("write.run_published");
	return c;
}

/*
 * Gives back the page an append held for its first block and did not use
 * (*held, 0 none).  -ESTALE when fenced: recovery frees it (the hold
 * names it).
 */
static int held_release(struct daxfs_op *op, u64 *held)
{
	u64 pg = *held;

	if (!pg)
		return 0;
	*held = 0;
	if (daxfs_hold_pages(op, 0, 0) ||
	    daxfs_free_now(op, pg, DAXFS_CLASS_PAGE))
		return -ESTALE;
	return 0;
}

/*
 * Writes [off, off + len); returns bytes written or -errno (nothing).
 * *held (0 none): a page in the lane's hold, taken by append_reserve,
 * for the first hole; 0 once used.
 */
static s64 write_raw(struct daxfs_op *op, const struct fview *v,
		     struct daxfs_rcur *lf, u64 off, u64 len,
		     daxfs_write_actor_t actor, void *ctx, u64 *held)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_inode *ip = v->ip;
	u64 offs[WRITE_BATCH] daxfs_noinit;	/* filled by the allocation */
	u64 pos = off, end = off + len;
	int err = 0;

	while (pos < end && !err) {
		u64 blk = pos >> DAXFS_BLOCK_SHIFT;
		u64 pg, q, run_end, c, nb, want;
		u32 nmiss, got;

		/* an existing page is no longer unwritten from here on */
		err = daxfs_rcur_page_w(op, ip, lf, blk, &pg);
		if (err)
			break;
		if (pg) {
			/* existing pages: in place, contiguous ones at once */
			u64 nblk;
			u8 *p;

			run_end = (blk + 1) << DAXFS_BLOCK_SHIFT;
			while (run_end < end) {
				nb = run_end >> DAXFS_BLOCK_SHIFT;
				q = daxfs_rcur_contig(lf, nb, pg + (nb - blk) * BLK,
						      ((end - 1) >> DAXFS_BLOCK_SHIFT) + 1);
				if (q) {
					run_end += q << DAXFS_BLOCK_SHIFT;
					continue;
				}
				/* the next leaf, or an unwritten page */
				if (daxfs_rcur_settled(lf, nb))
					break;
				err = daxfs_rcur_page_w(op, ip, lf, nb, &q);
				if (err || q != pg + (nb - blk) * BLK)
					break;
				run_end += BLK;
			}
			err = 0;
			if (run_end > end)
				run_end = end;
			nblk = ((run_end - 1) >> DAXFS_BLOCK_SHIFT) - blk + 1;
			p = daxfs_ptr(fs, pg, nblk * BLK, BLK);
			if (!p) {
				err = -EUCLEAN;
				break;
			}
			want = run_end - pos;
			c = daxfs_copy_fenced(op, actor, ctx,
					      p + (pos & BLK_LO), pos, run_end,
					      &err);
			if (err)
				break;
			pflush(fs, p + (pos & BLK_LO), c);
			pos += c;
			if (c < want)
				break;
			continue;
		}
		if (run_wanted(v, lf, pos, end)) {
			bool taken;

			/* a run needs the hold to itself */
			err = held_release(op, held);
			if (err)
				break;

			want = (end - pos < DAXFS_RUN_SIZE ? end - pos :
				DAXFS_RUN_SIZE);
			c = write_run(op, v, lf, pos, end, actor, ctx, &err,
				      &taken);
			if (taken) {
				pos += c;
				if (c < want)
					break;
				continue;
			}
		}
		/* holes: allocate up to WRITE_BATCH pages, contiguous if we can */
		for (nmiss = 1; nmiss < WRITE_BATCH &&
		     ((blk + nmiss) << DAXFS_BLOCK_SHIFT) < end; nmiss++) {
			err = daxfs_rcur_page(fs, ip, lf, blk + nmiss, &q);
			if (err || q)
				break;
		}
		if (err)
			break;
		if (*held) {
			offs[0] = *held;
			*held = 0;
			got = 1;
		} else {
			got = daxfs_alloc_held(op, nmiss, offs);
		}
		if (!got) {
			/* declared dead: no page for a zombie, and not for
			 * want of space */
			err = daxfs_fenced(op) ? -ESTALE : -ENOSPC;
			break;
		}
		daxfs_crash_point("alloc.pages_held");
		nb = (blk + got) << DAXFS_BLOCK_SHIFT;
		want = (nb < end ? nb : end) - pos;
		c = write_new(op, v, lf, blk, got, offs, pos, end, actor, ctx,
			      &err);
		pos += c;
		if (c < want)
			break;
	}
	if (pos > off && err != -ESTALE)
		return (s64)(pos - off);
	return err;
}

/*
 * DAXFS_WRITE_WHOLE: whether the pool can give now the pages that
 * [off, off + len) lacks (its holes, and a leaf per 512 of them), so that
 * the write stores all of it, or nothing and returns -ENOSPC for the
 * front end's space wait to run it again (docs/reclaim.md "Short writes").
 * Far from full it looks at the batch only; near full it counts the
 * holes.  A look, not a reservation: an allocator racing us on a nearly
 * full pool can still make the write short.
 */
static int write_room(struct daxfs_op *op, const struct fview *v,
		      struct daxfs_rcur *lf, u64 off, u64 len)
{
	struct daxfs_fs *fs = op->fs;
	u64 blk = off >> DAXFS_BLOCK_SHIFT;
	u64 last = (off + len - 1) >> DAXFS_BLOCK_SHIFT;
	u64 span = last - blk + 1, holes = 0, need, pg;
	int err;

	/* one block: its page (and path) is taken before its copy, so a
	 * full pool fails it whole anyway */
	if (span == 1 || daxfs_alloc_room(fs, span + 1) > span)
		return 0;
	for (; blk <= last; blk++) {
		err = daxfs_rcur_page(fs, v->ip, lf, blk, &pg);
		if (err)
			return err;
		holes += !pg;
	}
	if (!holes)
		return 0;
	need = holes + holes / DAXFS_RADIX_FANOUT + 1;
	return daxfs_alloc_room(fs, need) < need ? -ENOSPC : 0;
}

/* Makes every byte at or beyond s read as zero (pages beyond detached). */
static int clear_from(struct daxfs_op *op, struct daxfs_inode *ip, u64 s)
{
	int err;

	if (daxfs_fenced(op))
		return -ESTALE;
	err = daxfs_zero_tail(op->fs, ip, s);
	if (err)
		return err;
	err = daxfs_radix_trim(op, ip, (s + BLK_LO) >> DAXFS_BLOCK_SHIFT);
	pdrain(op->fs);
	return err;
}

/*
 * Whether an append makes its first page before reserving (below).
 * DAXFS_BUG_SHORT_GIVEBACK (docs/testing.md) brings back defect 6 whole:
 * appends that fail on a full pool after reserving, and give back.
 */
static bool prepare_first_page(void)
{
#ifdef DAXFS_BUG_SHORT_GIVEBACK
	return false;
#else
	return true;
#endif
}

/*
 * Reserves [*off, *off + *len) at the end for an append: appenders never
 * overlap.  Called inside the gate: no shrink runs until the append is
 * done, so the reservation stands.  Before each reserving CAS, the first
 * step of the copy is made to need no allocation: the block where the
 * range would start has its page, or its tree path exists and a page for
 * it is in the lane's hold (*held; write_raw publishes it with our bytes,
 * so it is never zeroed first).  An append that reserved therefore stores
 * at least one byte (unless its source faults), and a full pool fails it
 * here, before it took effect, instead of after (a reservation cannot be
 * given back when a later append or write lies beyond it).
 */
static int append_reserve(struct daxfs_op *op, const struct fview *v,
			  struct daxfs_rcur *lf, u64 *off, u64 *len, u64 *held)
{
	struct daxfs_inode *ip = v->ip;
	u64 s = daxfs_load(&ip->size), ready = ~0ULL, pg;
	u32 tries;
	int err;

	for (tries = 0;; tries++) {
		if (tries >= SIZE_RETRIES)
			return -EAGAIN;
		if (s >= DAXFS_MAX_FILE_SIZE)
			return -EFBIG;
		if (*len > DAXFS_MAX_FILE_SIZE - s)
			*len = DAXFS_MAX_FILE_SIZE - s;
		if (prepare_first_page() && *len &&
		    s >> DAXFS_BLOCK_SHIFT != ready) {
			ready = s >> DAXFS_BLOCK_SHIFT;
			err = daxfs_rcur_prepare(op, ip, lf, ready, &pg);
			if (err)
				return err;
			if (!pg && !*held &&
			    !daxfs_alloc_held(op, 1, held))
				return daxfs_fenced(op) ? -ESTALE : -ENOSPC;
		}
		if (daxfs_fenced(op))
			return -ESTALE;
		if (!*len || daxfs_cas(&ip->size, &s, s + *len))
			break;
	}
	pflush(op->fs, &ip->size, 8);
	*off = s;
	return 0;
}

/*
 * An append stored w bytes of [off, off + len).  The reservation made
 * the size cover the range and only shrinks lower it (none ran since:
 * the gate), so the size is never moved up here.  The unused tail of a
 * short append is not given back: a CAS s + len -> s + w would cut a
 * write that ended in that tail (defect 6); it reads as zeros.
 */
static s64 append_done(struct daxfs_fs *fs, struct daxfs_inode *ip,
		       u64 off, u64 len, s64 w)
{
#ifdef DAXFS_BUG_APPEND_TRUNCATE
	/* re-introduced defect 2 (docs/testing.md): the CAS-to-max */
	if (w > 0)
		daxfs_size_max(fs, ip, off + (u64)w);
#else
	/* nothing stored (a bad block at the first byte, a fence; the
	 * front ends hand no source that faults, and -ENOSPC cannot happen
	 * here: append_reserve readied the first page): the call has no
	 * effect, so the reservation goes back.  The race of defect 6
	 * stays for this case only: a write that ended exactly at off +
	 * len meanwhile (docs/files.md "What is left"). */
	if (w <= 0) {
		u64 exp = off + len;

		if (daxfs_cas(&ip->size, &exp, off))
			pflush(fs, &ip->size, 8);
	}
#endif
#ifdef DAXFS_BUG_SHORT_GIVEBACK
	/* re-introduced defect 6 (docs/testing.md): the give-back */
	if (w < 0 || (u64)w < len) {
		u64 exp = off + len;

		if (daxfs_cas(&ip->size, &exp, off + (w > 0 ? (u64)w : 0)))
			pflush(fs, &ip->size, 8);
	}
#endif
	return w;
}

/*
 * Whether this write takes part in the gate.  DAXFS_BUG_APPEND_TRUNCATE
 * (docs/testing.md) brings back the append of defect 2: it ignores the
 * gate and names no intent, so shrinks neither wait for it nor stop it.
 */
static bool write_gated(bool append)
{
#ifdef DAXFS_BUG_APPEND_TRUNCATE
	return !append;
#else
	return true;
#endif
}

/* The write is done: out of the gate (an atomic write opens it). */
static void write_leave(struct daxfs_op *op, struct daxfs_inode *ip,
			bool atomic)
{
	if (atomic)
		daxfs_gate_open(op, ip);
	else
		daxfs_intent_clear(op);
}

/* A write's attributes after it, still in its op: what a refresh right
 * after the call would load unless another host changed the file since
 * (none, ino 0, if the record is damaged) */
static void write_attr_fill(struct daxfs_fs *fs, const struct daxfs_iref *ref,
			    struct daxfs_attr *attr)
{
	if (attr && daxfs_iref_attr(fs, ref, attr))
		attr->ino = 0;
}

static s64 file_write(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		      u64 off, u64 len, u32 flags, daxfs_write_actor_t actor,
		      void *ctx, u64 *ppos, struct daxfs_attr *attr, u64 expect,
		      bool *moved)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct fview v daxfs_noinit;	/* daxfs_file_view's, read after it */
	bool append = flags & DAXFS_WRITE_APPEND;
	bool atomic = flags & DAXFS_WRITE_ATOMIC;
	bool gated = write_gated(append) || atomic;
	/* may mark the counter, if it changes no attribute (below) */
	bool mark = (flags & DAXFS_WRITE_MARK) && !append && !atomic;
	struct daxfs_rcur lf;
	u64 held = 0, blocks;
	s64 w;
	int err;

	daxfs_rcur_init(&lf);
	err = daxfs_file_writable_fc(op, ino, fc, &ref, &ip);
	if (err)
		return err;
	/* before any store, the eof tail's included: the caller's checks
	 * were made on attributes of another counter (a rewrite's mark
	 * changes none) */
	if ((flags & DAXFS_WRITE_IF_CHANGE) &&
	    !daxfs_change_same_count(daxfs_load(&ip->change), expect)) {
		write_attr_fill(fs, &ref, attr);
		return DAXFS_WRITE_CHANGED;
	}
	if (!append) {
		if (off >= DAXFS_MAX_FILE_SIZE)
			return len ? -EFBIG : 0;
		if (len > DAXFS_MAX_FILE_SIZE - off)
			len = DAXFS_MAX_FILE_SIZE - off;
		if (!len) {
			if (ppos)
				*ppos = off;
			write_attr_fill(fs, &ref, attr);
			return 0;
		}
		/* past a gap after EOF: the EOF page's tail reads as zeros
		 * first (core/eoftail.c) */
		err = daxfs_eof_tail_clean(op, ip, ino, off);
		if (err)
			return err;
	}
	/* inside the gate from here on: no shrink runs until we are done.
	 * The intent also tells recovery where we store (an append's range
	 * once reserved), in case we die before the size covers it. */
	if (atomic) {
		/* an atomic write closes the gate as a shrink does: no other
		 * write of the file runs, and daxfs_read_atomic readers wait
		 * (core/atomicw.c) */
		err = daxfs_gate_close(op, ip, ino);
		if (err)
			return err;
	} else if (gated) {
		err = daxfs_gate_enter(op, ip, ino, append ? 0 : off,
				       append ? 0 : off + len);
		if (err)
			return err;
	}
	/*
	 * In the gate, which daxfs_setflags closes before it locks the
	 * file: a write that passes this check completes before the flag
	 * is set (docs/attrs.md "Ordering").  An append-only file takes
	 * appends only.
	 */
	err = daxfs_attrs_deny(ip, append ? DAXFS_IF_IMMUTABLE :
				   DAXFS_IF_LOCKED);
	/* the view after the gate: a shrink may have lowered base_limit */
	if (!err)
		err = daxfs_file_view(fs, &ref, &v);
	if (!err && (flags & DAXFS_WRITE_WHOLE) && len)
		err = write_room(op, &v, &lf, append ? v.size : off, len);
	if (!err && append && atomic) {
		/* alone in the file (our gate): the size cannot move, so the
		 * data goes beyond EOF first and the size CAS publishes it
		 * all at once, also on the media (docs/modes.md) */
		off = v.size;
		if (off >= DAXFS_MAX_FILE_SIZE)
			err = -EFBIG;
		else if (len > DAXFS_MAX_FILE_SIZE - off)
			len = DAXFS_MAX_FILE_SIZE - off;
	} else if (!err && append) {
		err = append_reserve(op, &v, &lf, &off, &len, &held);
		if (!err && gated && !atomic && daxfs_intent_set(op,
				DAXFS_INTENT_FILE_WRITE, ino, off, off + len, 0))
			err = -ESTALE;
		if (!err)
			daxfs_crash_point("append.reserved");
	}
	if ((err || !len) && held_release(op, &held))
		err = -ESTALE;
	if (err || !len) {
		if (gated)
			write_leave(op, ip, atomic);
		if (!err && ppos)
			*ppos = off;
		if (!err)
			write_attr_fill(fs, &ref, attr);
		return err;
	}
	if (ppos)
		*ppos = off;
	blocks = daxfs_load(&ip->blocks);

	/* a strict write over existing bytes goes out of place, so that
	 * a crash leaves all of it or none (core/redo.c); wholly beyond
	 * EOF, the size CAS below publishes it at once anyway */
#ifdef DAXFS_BUG_CHANGE_BEFORE_DATA
	/* re-introduced defect (docs/testing.md): the counter moves (or is
	 * marked) before the bytes are there, and a front end keeps bytes
	 * older than it */
	*moved = daxfs_inode_touch_write(ip, mark && off + len <= v.size);
#endif
	if (atomic && off < v.size)
		w = daxfs_redo_write(op, &v, ino, off, len, actor, ctx);
	else
		w = write_raw(op, &v, &lf, off, len, actor, ctx, &held);
	if (held_release(op, &held))
		w = -ESTALE;
	if (append)
		daxfs_crash_point("append.written");
	/* fenced (write_raw, or now): recovery zeroes what we put beyond
	 * EOF (FILE_WRITE intent); the size must not move */
	if (w == -ESTALE || daxfs_fenced(op))
		return -ESTALE;
	if (w > 0)
		pdrain(fs);
	if (append && !atomic) {
		w = append_done(fs, ip, off, len, w);
	} else if (w > 0) {
		daxfs_size_max(fs, ip, off + (u64)w);
		daxfs_crash_point("write.size_moved");
	}
	/* the counter moves (or is marked) after the bytes are there: a
	 * front end reads them after loading it (docs/files.md "The change
	 * counter of a rewrite"); a rewrite within the size that allocated
	 * no page changed no attribute */
#ifndef DAXFS_BUG_CHANGE_BEFORE_DATA
	if (w > 0)
		*moved = daxfs_inode_touch_write(ip, mark &&
				off + (u64)w <= v.size &&
				daxfs_load(&ip->blocks) == blocks);
#endif
	if (w >= 0)	/* after our own touch */
		write_attr_fill(fs, &ref, attr);
	if (gated)
		write_leave(op, ip, atomic);
	return w;
}

s64 daxfs_write_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		   u64 off, u64 len, u32 flags, daxfs_write_actor_t actor,
		   void *ctx, u64 *pos)
{
	return daxfs_write_attr(fs, ino, fc, off, len, flags, actor, ctx, pos,
				NULL, NULL);
}

s64 daxfs_write_attr(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		     u64 off, u64 len, u32 flags, daxfs_write_actor_t actor,
		     void *ctx, u64 *pos, struct daxfs_attr *attr, bool *moved)
{
	struct daxfs_op op;
	u32 round = 0;
	u64 expect = 0;
	bool unused;
	s64 ret;
	int err;

	if (!moved)
		moved = &unused;
	*moved = false;		/* file_write sets it only once it wrote */
	if (!attr)
		flags &= ~DAXFS_WRITE_IF_CHANGE;
	else if (flags & DAXFS_WRITE_IF_CHANGE)
		expect = attr->change;
	do {
		err = daxfs_op_begin(fs, &op);
		if (err)
			return err;
		if (attr)
			attr->ino = 0;
		ret = file_write(&op, ino, fc, off, len, flags, actor, ctx,
				 pos, attr, expect, moved);
		daxfs_op_end(&op);
		/* nothing stored yet: a shrink held the gate */
		if (ret == DAXFS_GATE_RETRY && daxfs_gate_retry_pause(round++))
			return -EINTR;
	} while (ret == DAXFS_GATE_RETRY);
	return ret;
}

s64 daxfs_write(struct daxfs_fs *fs, u64 ino, u64 off, u64 len, u32 flags,
		daxfs_write_actor_t actor, void *ctx, u64 *pos)
{
	return daxfs_write_fc(fs, ino, NULL, off, len, flags, actor, ctx, pos);
}

/* ------------------------------------------------------------------ */
/* truncate */

void daxfs_limit_min(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s)
{
	u64 l = daxfs_load(&ip->aux);
	u32 tries;

	for (tries = 0; l > s && tries < SIZE_RETRIES; tries++)
		if (daxfs_cas(&ip->aux, &l, s))
			pflush(fs, &ip->aux, 8);
}

/* What a truncate did, for the timestamps and the change counter. */
struct tstate {
	bool changed;		/* the size moved */
	bool trimmed;		/* pages or bytes were cleared */
};

/*
 * Extend to size: bytes in [cur, size) read as zero because a shrink
 * cleared them before lowering the size; nothing to clear here (clearing
 * would race with writes in flight just beyond EOF), so no gate either.
 * 1: the size is above size now (a write moved it meanwhile): shrink.
 */
static int file_extend(struct daxfs_op *op, struct daxfs_inode *ip, u64 size,
		       struct tstate *ts)
{
	u64 cur = daxfs_load(&ip->size);
	u32 tries;

	for (tries = 0; tries < SIZE_RETRIES; tries++) {
		if (cur > DAXFS_MAX_FILE_SIZE)
			return -EUCLEAN;
		if (cur == size)
			return 0;
		if (cur > size)
			return 1;
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_cas(&ip->size, &cur, size)) {
			pflush(op->fs, &ip->size, 8);
			ts->changed = true;
			return 0;
		}
	}
	return -EAGAIN;
}

/*
 * Shrink to size, the gate closed: no write of the file is in flight or
 * can start, so the size moves only by extending truncates (which make
 * the CAS fail: start over).  Hide base bytes, clear, then lower: a
 * truncater dying at any point leaves no truncated byte beyond EOF.
 * size == the size: only the clear (the pages a KEEP_SIZE preallocation
 * left beyond EOF go, as on ext4 and XFS).
 */
static int file_shrink(struct daxfs_op *op, struct daxfs_inode *ip, u64 size,
		       struct tstate *ts)
{
	u32 tries;
	int err;

	for (tries = 0; tries < SIZE_RETRIES; tries++) {
		u64 cur = daxfs_load(&ip->size);

		if (cur > DAXFS_MAX_FILE_SIZE)
			return -EUCLEAN;
		if (cur < size) {
			err = file_extend(op, ip, size, ts);
			if (err != 1)
				return err;
			continue;
		}
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_load32(&ip->flags) & DAXFS_IF_BASE)
			daxfs_limit_min(op->fs, ip, size);
		ts->trimmed = true;
		err = clear_from(op, ip, size);
		if (err)
			return err;
		daxfs_crash_point("truncate.cleared");
		daxfs_race_point("truncate.cleared", op->lane);
		if (cur == size)
			return 0;	/* nothing to lower */
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_cas(&ip->size, &cur, size)) {
			pflush(op->fs, &ip->size, 8);
			daxfs_crash_point("truncate.size");
			ts->changed = true;
			return 0;
		}
	}
	return -EAGAIN;
}

static int next_page(struct daxfs_op *op, u64 ino, u64 *blk, u64 end,
		     u64 *pg);

/*
 * Whether a page lies wholly at or beyond size (a KEEP_SIZE
 * preallocation's, or a dead write's): a same-size truncate drops them.
 * An error says yes: the shrink that follows meets and reports it.
 */
static bool pages_beyond(struct daxfs_op *op, u64 ino, u64 size)
{
	u64 blk = (size + BLK_LO) >> DAXFS_BLOCK_SHIFT, pg = 0;
	u64 end = daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT);

	while (blk < end && !pg)
		if (next_page(op, ino, &blk, end, &pg))
			return true;
	return pg != 0;
}

static int file_truncate(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
			 u64 size)
{
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct tstate ts = { false, false };
	int err;

	if (size > DAXFS_MAX_FILE_SIZE)
		return -EFBIG;
	err = daxfs_file_writable_fc(op, ino, fc, &ref, &ip);
	if (err)
		return err;
	/* growing: the EOF page's tail reads as zeros first */
	err = daxfs_eof_tail_clean(op, ip, ino, size);
	if (err)
		return err;
	/* extending is a write for the gate: an atomic write, which holds
	 * the size still while it stores beyond EOF, excludes it */
	err = daxfs_gate_enter(op, ip, ino, 0, 0);
	if (err)
		return err;
	/* Linux refuses every truncate of an append-only file, growing
	 * ones too (vfs_truncate, ftruncate): so do we, on every host */
	err = daxfs_attrs_deny(ip, DAXFS_IF_LOCKED);
	if (err) {
		daxfs_intent_clear(op);
		return err;
	}
	err = file_extend(op, ip, size, &ts);
	/* the same size: a shrink to it when pages lie beyond it */
	if (!err && !ts.changed && pages_beyond(op, ino, size))
		err = 1;
	daxfs_intent_clear(op);
	if (err == 1) {
		err = daxfs_gate_close(op, ip, ino);
		if (!err) {
			err = file_shrink(op, ip, size, &ts);
			daxfs_gate_open(op, ip);
		}
	}
	/*
	 * After the pages left the tree, before the op ends, on every exit:
	 * hosts that map the file revalidate when the change counter moved,
	 * and only a pass begun after this op lets the pages be reused
	 * (docs/reclaim.md, "Mapping hosts").
	 */
	if (ts.changed)
		daxfs_inode_touch(ip, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
	else if (ts.trimmed)
		daxfs_faa(&ip->change, 1);
	return err;
}

struct truncate_call {
	u64 ino, size;
	struct daxfs_fcache *fc;
};

static int truncate_op(struct daxfs_op *op, void *arg)
{
	struct truncate_call *t = arg;

	return file_truncate(op, t->ino, t->fc, t->size);
}

int daxfs_truncate_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		      u64 size)
{
	struct truncate_call t = { ino, size, fc };

	/* another host's shrink held the gate: we changed nothing, retry */
	return daxfs_gate_op(fs, truncate_op, &t);
}

int daxfs_truncate(struct daxfs_fs *fs, u64 ino, u64 size)
{
	return daxfs_truncate_fc(fs, ino, NULL, size);
}

/* ------------------------------------------------------------------ */
/* block mapping (mmap / DAX) */

/* The file's view and, when the overlay has one, the page of block blk
 * (*pg, 0 when none; *unw: it is unwritten); -EFBIG past the largest
 * file. */
static int block_look(struct daxfs_op *op, u64 ino, u64 blk,
		      struct daxfs_iref *ref, struct fview *v, u64 *pg,
		      bool *unw)
{
	int err;

	*pg = 0;
	*unw = false;
	if (blk >= daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT))
		return -EFBIG;
	err = daxfs_file_get(op, ino, ref);
	if (err)
		return err;
	err = daxfs_file_view(op->fs, ref, v);
	if (err)
		return err;
	return ref->ip ? daxfs_radix_lookup(op->fs, ref->ip, blk, pg, unw) : 0;
}

static int block_find(struct daxfs_op *op, u64 ino, u64 blk,
		      struct daxfs_iref *ref, struct fview *v, u64 *pg)
{
	bool unw;

	return block_look(op, ino, blk, ref, v, pg, &unw);
}

/*
 * Publishes a fresh page for block blk of the writable file v->ip,
 * holding what the file shows there (base bytes below the limit, zeros
 * above); *off = the block's page (ours, or the one that won the race).
 * unwritten (fallocate): ours goes in flagged when it holds only zeros
 * (no base bytes), and a winner keeps its flag.  Else (a writer will
 * store into it) a winner's flag is cleared.
 */
int daxfs_block_make(struct daxfs_op *op, const struct fview *v, u64 blk,
		     bool unwritten, u64 *off)
{
	struct daxfs_fs *fs = op->fs;
	u64 pg, win, word;
	u8 *p;
	int err;

	if ((v->base || v->bk) && (blk << DAXFS_BLOCK_SHIFT) < v->limit)
		unwritten = false;	/* base bytes: not zeros */

	/* held, then named as being published: as write_new's pages */
	if (!daxfs_alloc_held(op, 1, &pg))
		return daxfs_fenced(op) ? -ESTALE : -ENOSPC;
	p = page_ptr(fs, pg);
	err = p ? prefill(op, v, blk, p, 0, BLK) : -EUCLEAN;
	if (err) {
		if (daxfs_hold_pages(op, 0, 0))
			return -ESTALE;
		if (p && daxfs_free_now(op, pg, DAXFS_CLASS_PAGE))
			return -ESTALE;
		return err;
	}
	pflush(fs, p, BLK);
	pdrain(fs);
	daxfs_wrec_set(op, blk, pg);
	if (daxfs_hold_pages(op, 0, 0))
		return -ESTALE;	/* recovery frees pg (the hold named it) */
	daxfs_crash_point("write.page_publishing");
	daxfs_race_point("write.page_publishing", op->lane);
	word = unwritten ? pg | DAXFS_RADIX_UNWRITTEN : pg;
	err = daxfs_radix_insert(op, v->ip, blk, word, &win);
	if (err != -ESTALE)
		daxfs_wrec_clear(op);
	if ((err || win) && daxfs_free_now(op, pg, DAXFS_CLASS_PAGE))
		return -ESTALE;		/* fenced: pg leaked */
	if (!err && win && !unwritten)
		err = daxfs_radix_written(op, v->ip, blk, win);
	/* a base or backing block moved, or a hole got its page: other hosts
	 * that map the base page, the cache slot or the zero page for the
	 * hole revalidate when the change counter moves */
	if (!err && !win)
		daxfs_faa(&v->ip->change, 1);
	if (!err)
		*off = win ? win : pg;
	return err;
}

static int map_block(struct daxfs_op *op, u64 ino, u64 blk, bool alloc,
		     u64 *off)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct fview v;
	u64 pg;
	bool base_blk;
	int err;

	*off = 0;
	err = block_find(op, ino, blk, &ref, &v, &pg);
	/* a shared writable mapping's fault: stores land anywhere, so no
	 * immutable or append-only file (Linux maps neither writable) */
	if (!err && alloc)
		err = daxfs_attrs_deny(ref.ip, DAXFS_IF_LOCKED);
	if (!err && pg && alloc && ref.ip && op->lane &&
	    !(fs->flags & DAXFS_FS_RDONLY))
		/* a writable mapping: stores may follow without us */
		err = daxfs_radix_written(op, ref.ip, blk, pg);
	if (err || pg) {
		*off = err ? 0 : pg;
		return err;
	}
	base_blk = (v.base || v.bk) && (blk << DAXFS_BLOCK_SHIFT) < v.limit;
	if (!alloc && !base_blk)
		return 0;		/* a hole */
	if ((fs->flags & DAXFS_FS_RDONLY) || !op->lane) {
		/* Read-only host: map the base page itself when it is a
		 * whole, aligned page of base data. */
		u64 boff = v.base ? (u64)(v.base - fs->base) +
				    (blk << DAXFS_BLOCK_SHIFT) : 0;

		if (base_blk && v.base && !(boff & BLK_LO) &&
		    ((blk + 1) << DAXFS_BLOCK_SHIFT) <= v.limit) {
			*off = boff;
			return 0;
		}
		return -EROFS;
	}
	/* Allocate (or copy a base block up) so the mapping is a pool page
	 * nobody else shares: the base region is never written. */
	err = daxfs_inode_get_writable(op, ino, &ip);
	if (err)
		return err;
	ref.ip = ip;
	err = daxfs_file_view(fs, &ref, &v);
	if (err)
		return err;
	return daxfs_block_make(op, &v, blk, false, off);
}

int daxfs_map_block(struct daxfs_fs *fs, u64 ino, u64 blk, bool alloc,
		    u64 *off)
{
	struct daxfs_op op;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = map_block(&op, ino, blk, alloc, off);
	daxfs_op_end(&op);
	return err;
}

int daxfs_block_run(struct daxfs_fs *fs, u64 ino, u64 blk, bool writable,
		    u64 *run)
{
	struct daxfs_op op;
	struct daxfs_iref ref;
	int err;

	*run = 0;
	if (blk >= daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT))
		return 0;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = daxfs_file_get(&op, ino, &ref);
	/* as map_block: no immutable or append-only file mapped writable */
	if (!err && writable)
		err = daxfs_attrs_deny(ref.ip, DAXFS_IF_LOCKED);
	if (!err && ref.ip)
		err = daxfs_radix_run(fs, ref.ip, blk, run);
	daxfs_op_end(&op);
	return err;
}

static int block_borrowed(struct daxfs_op *op, u64 ino, u64 blk, bool *borrowed)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip;
	struct daxfs_iref ref;
	struct fview v;
	u64 pg, lim, pos = blk << DAXFS_BLOCK_SHIFT;
	int err;

	*borrowed = false;
	err = block_find(op, ino, blk, &ref, &v, &pg);
	if (err == -EFBIG)
		return 0;
	if (err || pg)
		return err;	/* copied up: the overlay page is current */
	if (!v.base && !v.bk)
		return 0;
	bip = ref.ip ? daxfs_base_inode(fs, daxfs_load(&ref.ip->base_ino)) : ref.bip;
	if (!bip)
		return -EUCLEAN;
	lim = v.limit < v.size ? v.limit : v.size;
	/* as the read-only mappers require: a whole page of base data, or
	 * the base file's own partial last page, uncut */
	*borrowed = pos < lim &&
		    (pos + DAXFS_BLOCK_SIZE <= lim || lim == bip->size);
	return 0;
}

int daxfs_block_borrowed(struct daxfs_fs *fs, u64 ino, u64 blk, bool *borrowed)
{
	struct daxfs_op op;
	int err;

	*borrowed = false;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = block_borrowed(&op, ino, blk, borrowed);
	daxfs_op_end(&op);
	return err;
}

int daxfs_block_state(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *pg,
		      bool *unwritten)
{
	struct daxfs_op op;
	struct daxfs_iref ref;
	struct fview v;
	int err;

	*pg = 0;
	*unwritten = false;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = block_look(&op, ino, blk, &ref, &v, pg, unwritten);
	daxfs_op_end(&op);
	return err == -EFBIG ? 0 : err;
}

int daxfs_block_page(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *pg)
{
	bool unw;

	return daxfs_block_state(fs, ino, blk, pg, &unw);
}

/* Leaf slots one daxfs_next_page call reads at most, so that its caller
 * can check for signals and yield between calls on a huge tree. */
#define NEXT_PAGE_SCAN	4096u

static int next_page(struct daxfs_op *op, u64 ino, u64 *blk, u64 end, u64 *pg)
{
	struct daxfs_iref ref;
	const u64 *slots;
	u64 b = *blk, root, run, lo, hi, v;
	u32 scanned = 0;
	int err;

	err = daxfs_file_get(op, ino, &ref);
	if (err)
		return err;
	if (!ref.ip) {
		*blk = end;	/* a pristine base file: no overlay page */
		return 0;
	}
	root = daxfs_load(&ref.ip->root);
	while (b < end) {
		err = daxfs_radix_leaf(op->fs, &root, b, &slots, &run, &lo,
				       &hi);
		if (err)
			return err;
		if (run) {
			*blk = b;
			*pg = daxfs_leaf_word(NULL, run, lo, b);
			return 0;
		}
		if (!slots) {
			b = hi;		/* a whole missing subtree */
			if (++scanned >= NEXT_PAGE_SCAN)
				break;
			continue;
		}
		for (; b < hi && b < end; b++) {
			v = daxfs_load(&slots[b - lo]);
			if (daxfs_radix_page(op->fs, v, &err)) {
				*blk = b;
				*pg = v & ~DAXFS_RADIX_UNWRITTEN;
				return 0;
			}
			if (err)
				return err;
			if (++scanned >= NEXT_PAGE_SCAN) {
				*blk = b + 1;
				return 0;
			}
		}
	}
	*blk = b < end ? b : end;
	return 0;
}

int daxfs_next_page(struct daxfs_fs *fs, u64 ino, u64 *blk, u64 end, u64 *pg)
{
	u64 max = daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT);
	u64 lim = end < max ? end : max;	/* no block exists beyond */
	struct daxfs_op op;
	int err;

	*pg = 0;
	if (*blk >= lim) {
		*blk = end;
		return 0;
	}
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = next_page(&op, ino, blk, lim, pg);
	daxfs_op_end(&op);
	if (!err && !*pg && *blk >= lim)
		*blk = end;
	return err;
}

/* ------------------------------------------------------------------ */
/* recovery */

/*
 * A dead host's FILE_WRITE intent.  A shrinker's (a[3] = its claim, an
 * empty range): its gate opens, its truncate stays partly done.  A
 * writer's needs nothing: an append's range lies inside the size (torn:
 * its bytes or zeros), and what a write left beyond EOF is its own bytes
 * at their own place, which the next shrink clears or the next extension
 * shows (the dead write took effect, in part, before it).  Zeroing them
 * here instead would race live writes that extend the file over them.
 */
void daxfs_file_recover(struct daxfs_op *op, struct daxfs_lane *dead_lane)
{
	struct daxfs_intent *in = &dead_lane->intent;
	struct daxfs_iref ref;
	u64 ino, claim;

	/* each act only while our claim on the slot stands: one overtaken
	 * may find a new host's write here, its page not yet mapped, its
	 * gate closed (docs/recovery.md "Lane recoveries of an overtaken
	 * recoverer") */
	if (daxfs_recovery_lost(op) ||
	    daxfs_load(&in->op) != DAXFS_INTENT_FILE_WRITE)
		return;
	ino = daxfs_load(&in->a[0]);
	claim = daxfs_load(&in->a[3]);
	if (daxfs_inode_get(op, ino, &ref) || !ref.ip ||
	    !DAXFS_IS_REG(daxfs_load32(&ref.ip->mode)))
		ref.ip = NULL;
	/* while the gate is still closed or the dead write's intent still
	 * keeps shrinks out: the file's map at the block cannot change */
	if (ref.ip)
		daxfs_wrec_recover(op, dead_lane, ref.ip);
	/* a strict writer's redo record: replayed (committed) or dropped,
	 * before the gate opens to other writers (core/redo.c) */
	daxfs_redo_recover(op, dead_lane, ref.ip);
	if (ref.ip && claim && !daxfs_recovery_lost(op))
		daxfs_gate_recover(op->fs, ref.ip, claim);
}

/*
 * A dead write's record names run pg for blocks [blk, blk + 512): unless
 * the file maps it there (published: its first page is the block's), its
 * pages go back, but those the hold names (a scatter had begun,
 * run_scatter): the hold's recovery frees them.
 */
static void wrec_run_recover(struct daxfs_fs *fs, struct daxfs_inode *ip,
			     u64 blk, u64 pg, u64 hold)
{
	u64 first = hold & ~BLK_LO, last = first + ((hold & BLK_LO) + 1) * BLK;
	u64 r = daxfs_radix_run_of(fs, pg), cur, off;

	if ((blk & (DAXFS_RUN_PAGES - 1)) || !r)
		return;		/* garbled: leave it to fsck */
	if (daxfs_radix_get(fs, ip, blk, &cur) || cur == r)
		return;		/* published (or the map unreadable) */
	for (off = r; off < r + DAXFS_RUN_SIZE; off += BLK)
		if (!hold || off < first || off >= last)
			daxfs_free_obj(fs, off, DAXFS_CLASS_PAGE);
}

void daxfs_wrec_recover(struct daxfs_op *op, struct daxfs_lane *lane,
			struct daxfs_inode *ip)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_intent *in = &lane->intent;
	u64 pg = daxfs_load(&in->a[DAXFS_WREC_PAGE]);
	u64 word = daxfs_load(&in->a[DAXFS_WREC_BLK]);
	u64 blk = word & DAXFS_WREC_BLK_MASK;
	u64 hold = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_PAGES]);
	u64 first = hold & ~BLK_LO, cur;

	/* claim it first: a second recoverer finds nothing; and only
	 * while our claim on the slot stands (the lane may be a new
	 * host's, its page about to be mapped) */
	if (!pg || daxfs_recovery_lost(op) ||
	    !daxfs_cas(&in->a[DAXFS_WREC_PAGE], &pg, 0))
		return;
	if (word == daxfs_wrec_word(pg, blk) && (pg & DAXFS_RADIX_RUN)) {
		wrec_run_recover(fs, ip, blk, pg, hold);
		return;
	}
	if (word != daxfs_wrec_word(pg, blk) || !page_ptr(fs, pg))
		return;		/* not a record (or garbled): leave it */
	/* still in the hold (the owner died before shrinking it): the
	 * hold's recovery frees it */
	if (hold && pg >= first && pg < first + ((hold & BLK_LO) + 1) * BLK)
		return;
	if (daxfs_radix_get(fs, ip, blk, &cur) || cur == pg)
		return;		/* published (or the map unreadable) */
	daxfs_free_obj(fs, pg, DAXFS_CLASS_PAGE);
}
