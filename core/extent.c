// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Where a file has data: SEEK_DATA / SEEK_HOLE and the extents FIEMAP
 * lists (docs/files.md "fallocate").  A block has data when it has a
 * page in the radix tree or when visible base bytes back it; everything
 * else is a hole and reads as zeros.  An unwritten page (format 8) is
 * data for SEEK_DATA (a tool that skips holes never skips it) and an
 * extent of its own kind for FIEMAP.  Read only: one walk over a root
 * snapshot per call, like a read.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "file.h"
#include "file-int.h"

#define BLK		((u64)DAXFS_BLOCK_SIZE)
#define BLK_LO		(BLK - 1)
/* Blocks one extent holds at most (a long run is reported in pieces). */
#define EXT_MAX_BLOCKS	(1ULL << 24)

enum blk_kind { BLK_HOLE, BLK_PAGE, BLK_UNWRITTEN, BLK_BASE };

/* The tree's leaf slots around a block, reloaded when the walk leaves
 * them (slots NULL: [lo, hi) has no page). */
struct walk {
	const struct fview *v;
	u64 root;
	const u64 *slots;
	u64 run;			/* a 2 MiB run maps [lo, hi) */
	u64 lo, hi;
	u64 base_end;			/* blocks [0, base_end) show base bytes */
};

/* The kind of block b and, for a page, its region offset in *pg. */
static int classify(struct daxfs_fs *fs, struct walk *w, u64 b, u64 *pg)
{
	int err = 0;

	*pg = 0;
	if (w->v->ip && (b < w->lo || b >= w->hi)) {
		err = daxfs_radix_leaf(fs, &w->root, b, &w->slots, &w->run,
				       &w->lo, &w->hi);
		if (err)
			return err;
	}
	if (w->v->ip && (w->slots || w->run)) {
		u64 s = daxfs_leaf_word(w->slots, w->run, w->lo, b);

		if (daxfs_radix_page(fs, s, &err)) {
			*pg = s & ~DAXFS_RADIX_UNWRITTEN;
			return s & DAXFS_RADIX_UNWRITTEN ? BLK_UNWRITTEN :
			       BLK_PAGE;
		}
		if (err)
			return err;
	}
	return b < w->base_end ? BLK_BASE : BLK_HOLE;
}

/* The first block at or after b that may have data: skips a missing
 * subtree whole, and for a pristine base file (no tree: [lo, hi) is
 * everything) all that lies past its base bytes. */
static u64 skip_hole(struct walk *w, u64 b)
{
	if (w->slots || w->run || b < w->base_end)
		return b + 1;
	return w->hi > b + 1 ? w->hi : b + 1;
}

static int ext_next(struct daxfs_op *op, const struct fview *v, u64 off,
		    struct daxfs_extent *ext)
{
	struct daxfs_fs *fs = op->fs;
	u64 max = daxfs_radix_span(DAXFS_RADIX_MAX_HEIGHT);
	u64 b = off >> DAXFS_BLOCK_SHIFT, n = 0, pg, first = 0;
	struct walk w = { v, v->root, NULL, 0, 1, 0, 0 };
	u32 steps = 0;
	int kind = BLK_HOLE, k;

	if (v->base || v->bk)
		w.base_end = (v->limit + BLK_LO) >> DAXFS_BLOCK_SHIFT;
	if (!v->ip)
		w.hi = max;		/* a pristine base file: no tree */
	memset(ext, 0, sizeof(*ext));
	for (; b < max; ) {
		if (!(++steps & 4095) && daxfs_walk_yield())
			return -EINTR;
		k = classify(fs, &w, b, &pg);
		if (k < 0)
			return k;
		if (!n) {
			if (k == BLK_HOLE) {
				b = skip_hole(&w, b);
				continue;
			}
			kind = k;
			ext->logical = b << DAXFS_BLOCK_SHIFT;
			first = pg;
		} else if (k != kind || n >= EXT_MAX_BLOCKS ||
			   (k != BLK_BASE && pg != first + n * BLK)) {
			break;
		}
		n++;
		b++;
	}
	if (!n)
		return 0;
	ext->length = n << DAXFS_BLOCK_SHIFT;
	if (kind == BLK_PAGE || kind == BLK_UNWRITTEN) {
		ext->physical = first;
		if (kind == BLK_UNWRITTEN)
			ext->flags = DAXFS_EXTENT_UNWRITTEN;
	} else if (v->base) {
		ext->flags = DAXFS_EXTENT_BASE;
		ext->physical = (u64)(v->base - fs->base) + ext->logical;
	} else {
		ext->flags = DAXFS_EXTENT_BASE | DAXFS_EXTENT_NOPHYS;
	}
	return 0;
}

/* The file's view, for reading (a pristine base file included). */
static int ext_view(struct daxfs_op *op, u64 ino, struct fview *v)
{
	struct daxfs_iref ref;
	int err = daxfs_file_get(op, ino, &ref);

	return err ? err : daxfs_file_view(op->fs, &ref, v);
}

int daxfs_next_extent(struct daxfs_fs *fs, u64 ino, u64 off,
		      struct daxfs_extent *ext)
{
	struct daxfs_op op;
	struct fview v;
	int err;

	memset(ext, 0, sizeof(*ext));
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = ext_view(&op, ino, &v);
	if (!err)
		err = ext_next(&op, &v, off, ext);
	daxfs_op_end(&op);
	return err;
}

/* SEEK_DATA / SEEK_HOLE over one view: extents are walked until the
 * answer (a hole is a gap between extents, or the size). */
static int seek(struct daxfs_op *op, const struct fview *v, u64 off,
		int whence, u64 *res)
{
	struct daxfs_extent e;
	u64 pos = off;
	int err;

	if (off >= v->size)
		return -ENXIO;
	for (;;) {
		err = ext_next(op, v, pos, &e);
		if (err)
			return err;
		if (whence == DAXFS_SEEK_DATA) {
			if (!e.length || e.logical >= v->size)
				return -ENXIO;
			*res = e.logical > off ? e.logical : off;
			return 0;
		}
		if (!e.length || e.logical > pos) {
			*res = pos;
			return 0;
		}
		pos = e.logical + e.length;
		if (pos >= v->size) {
			*res = v->size;
			return 0;
		}
	}
}

int daxfs_seek_hole_data(struct daxfs_fs *fs, u64 ino, u64 off, int whence,
			 u64 *res)
{
	struct daxfs_op op;
	struct fview v;
	int err;

	if (whence != DAXFS_SEEK_DATA && whence != DAXFS_SEEK_HOLE)
		return -EINVAL;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = ext_view(&op, ino, &v);
	if (!err)
		err = seek(&op, &v, off, whence, res);
	daxfs_op_end(&op);
	return err;
}
