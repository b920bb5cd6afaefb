// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fallocate: preallocation (mode 0, KEEP_SIZE), PUNCH_HOLE and
 * ZERO_RANGE, on top of the radix tree and the write gate
 * (docs/files.md "fallocate").
 *
 * Preallocation changes no byte a reader can see (it fills holes with
 * pages that read as the holes did), so it takes the gate as a write of
 * the range does and moves the size like one (CAS-to-maximum).  A punch
 * or a zeroing changes bytes inside the file: it takes the gate as a
 * shrink does (no write of the file on any host runs meanwhile), so it
 * is one atomic step in every history.  Pages a punch detaches are
 * retired: no host reuses them until every host left the epoch in which
 * they were cut (docs/reclaim.md).
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "file.h"
#include "filegate.h"
#include "file-int.h"

#define BLK		((u64)DAXFS_BLOCK_SIZE)
#define BLK_LO		(BLK - 1)
/* Blocks one preallocation op fills at most: the op ends (and its epoch
 * with it) between chunks, so a huge fallocate holds back no reclaim. */
#define ALLOC_CHUNK	512u

#define FALLOC_KNOWN	(DAXFS_FALLOC_KEEP_SIZE | DAXFS_FALLOC_PUNCH_HOLE | \
			 DAXFS_FALLOC_ZERO_RANGE)

/*
 * Makes every block in [*blk, last) have a page (what the file showed
 * there: zeros, or base bytes), at most ALLOC_CHUNK of them; *blk moves
 * past the blocks done.  A page of zeros goes in unwritten (format 8).
 * -ENOSPC leaves the pages made so far: they read as the holes they
 * filled.
 */
static int fill_blocks(struct daxfs_op *op, const struct fview *v, u64 *blk,
		       u64 last)
{
	u64 b, pg, stop = last - *blk > ALLOC_CHUNK ? *blk + ALLOC_CHUNK : last;
	int err = 0;

	for (b = *blk; b < stop && !err; b++) {
		if (daxfs_fenced(op))
			return -ESTALE;
		err = daxfs_radix_get(op->fs, v->ip, b, &pg);
		if (!err && !pg)
			err = daxfs_block_make(op, v, b, true, &pg);
		if (!err)
			*blk = b + 1;
	}
	return err;
}

/*
 * A preallocation of [off, end) inside the gate as a write of that
 * range: one chunk of pages from *blk on, or (blk NULL) its last step:
 * without KEEP_SIZE the size moved to end as a write ending there moves
 * it (CAS-to-maximum, never down), and in any mode mtime and ctime, as
 * Linux's file_modified() in ext4's, xfs' and tmpfs' fallocate does.
 */
static int prealloc_step(struct daxfs_op *op, u64 ino, u64 off, u64 end,
			 u64 *blk, bool keep)
{
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct fview v;
	int err;

	err = daxfs_file_writable(op, ino, &ref, &ip);
	/* the last step grows the file to end: the EOF page's tail reads as
	 * zeros first (core/eoftail.c) */
	if (!err && !blk && !keep)
		err = daxfs_eof_tail_clean(op, ip, ino, end);
	if (err)
		return err;
	err = daxfs_gate_enter(op, ip, ino, off, end);
	if (err)
		return err;
	/* inside the gate, as a write (docs/attrs.md): an append-only file
	 * may be preallocated and grown, as on Linux */
	err = daxfs_attrs_deny(ip, DAXFS_IF_IMMUTABLE);
	if (!err)
		err = daxfs_file_view(op->fs, &ref, &v);
	if (!err && blk) {
		err = fill_blocks(op, &v, blk,
				  (end + BLK_LO) >> DAXFS_BLOCK_SHIFT);
	} else if (!err) {
		if (!keep && v.size < end)
			daxfs_size_max(op->fs, ip, end);
		daxfs_inode_touch(ip, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
	}
	daxfs_intent_clear(op);
	return err;
}

/*
 * Zeroes [a, b) of block blk's page, if it has one (it stays).  An
 * unwritten page is zeroed too: a store through another host's stale
 * mapping may have put bytes there (docs/files.md "Unwritten pages"), and
 * ZERO_RANGE promises zeros.  mark (ZERO_RANGE) and the whole page zeroed: it becomes unwritten, after its zeros (on the media, for
 * persistent media): a crash in between leaves a page of zeros that is
 * plain data, never a flagged page that holds bytes.  The gate is
 * closed: no write stores into the page meanwhile (docs/files.md
 * "Unwritten pages").
 */
static int zero_in_page(struct daxfs_op *op, struct daxfs_inode *ip, u64 a,
			u64 b, bool mark)
{
	u64 pg, blk = a >> DAXFS_BLOCK_SHIFT;
	u8 *p;
	int err;

	if (a >= b)
		return 0;
	err = daxfs_radix_get(op->fs, ip, blk, &pg);
	if (err || !pg)
		return err;
	p = daxfs_ptr(op->fs, pg, BLK, BLK);
	if (!p)
		return -EUCLEAN;
	if (daxfs_fenced(op))
		return -ESTALE;
	memset(p + (a & BLK_LO), 0, b - a);
	daxfs_pflush(op->fs, p + (a & BLK_LO), b - a);
	if (!mark || b - a != BLK)
		return 0;
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_drain();
	daxfs_crash_point("falloc.zeroed_unmarked");
	return daxfs_radix_unwritten(op, ip, blk, pg);
}

/* Zeroes the bytes of [off, end) in the pages the blocks have; mark:
 * the whole pages become unwritten. */
static int zero_pages(struct daxfs_op *op, struct daxfs_inode *ip, u64 off,
		      u64 end, bool mark)
{
	u64 a, b;
	int err;

	for (a = off; a < end; a = b) {
		b = (a | BLK_LO) + 1;
		if (b > end)
			b = end;
		err = zero_in_page(op, ip, a, b, mark);
		if (err)
			return err;
		if (!(a & 0xffffff) && daxfs_walk_yield())
			return -EINTR;
	}
	return 0;
}

/*
 * ZERO_RANGE, the gate closed: first every block of the range gets a
 * page (a full pool fails here, before any byte changed), then the range
 * is zeroed in those pages.  Base bytes in the range are copied up with
 * their block and then zeroed: the base region is never written.
 */
static int zero_range(struct daxfs_op *op, struct fview *v, u64 off, u64 end)
{
	u64 blk = off >> DAXFS_BLOCK_SHIFT;
	u64 last = (end + BLK_LO) >> DAXFS_BLOCK_SHIFT;
	int err = 0;

	while (blk < last && !err) {
		err = fill_blocks(op, v, &blk, last);
		if (!err && daxfs_walk_yield())
			err = -EINTR;
	}
	if (err)
		return err;
	daxfs_crash_point("falloc.zero_filled");
	return zero_pages(op, v->ip, off, end, true);
}

/*
 * PUNCH_HOLE, the gate closed.  The partial pages at the ends are
 * zeroed in place; the whole pages in between are detached and retired,
 * and the nodes that covered only them.  Base bytes would show again
 * where an overlay page goes: when the punch covers the end of the
 * visible base bytes, the limit comes down to off (they are hidden for
 * good); otherwise the base part is zeroed in pages of its own.
 */
static int punch_range(struct daxfs_op *op, struct fview *v, u64 off, u64 end)
{
	u64 first = (off + BLK_LO) >> DAXFS_BLOCK_SHIFT;
	u64 last = end >> DAXFS_BLOCK_SHIFT;
	int err;

	if ((v->base || v->bk) && off < v->limit) {
		if (end < v->limit)
			return zero_range(op, v, off, end);
		daxfs_limit_min(op->fs, v->ip, off);
	}
	if (first > last) {
		/* inside one block */
		return zero_pages(op, v->ip, off, end, false);
	}
	err = zero_pages(op, v->ip, off, first << DAXFS_BLOCK_SHIFT, false);
	if (!err && (end & BLK_LO))
		err = zero_pages(op, v->ip, last << DAXFS_BLOCK_SHIFT, end,
				 false);
	if (err)
		return err;
	daxfs_crash_point("falloc.punch_zeroed");
	err = daxfs_radix_punch(op, v->ip, first, last);
	if (op->fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_drain();
	return err;
}

/* PUNCH_HOLE or ZERO_RANGE of [off, end): one atomic step (the gate
 * closed as for a shrink). */
static int change_range(struct daxfs_op *op, u64 ino, u32 mode, u64 off,
			u64 end)
{
	struct daxfs_inode *ip;
	struct daxfs_iref ref;
	struct fview v;
	int err;

	err = daxfs_file_writable(op, ino, &ref, &ip);
	if (err)
		return err;
	err = daxfs_gate_close(op, ip, ino);
	if (err)
		return err;
	/* nothing of an immutable or append-only file is cut or zeroed */
	err = daxfs_attrs_deny(ip, DAXFS_IF_LOCKED);
	if (err) {
		daxfs_gate_open(op, ip);
		return err;
	}
	err = daxfs_file_view(op->fs, &ref, &v);
	if (!err && (mode & DAXFS_FALLOC_PUNCH_HOLE))
		err = punch_range(op, &v, off, end);
	else if (!err)
		err = zero_range(op, &v, off, end);
	/* growing, the gate closed (no write in flight): what lies beyond
	 * the size in the EOF page is no write's (core/eoftail.c) */
	if (!err && !(mode & DAXFS_FALLOC_KEEP_SIZE) && end > v.size)
		err = daxfs_zero_tail(op->fs, ip, v.size);
	if (!err && !(mode & DAXFS_FALLOC_KEEP_SIZE))
		daxfs_size_max(op->fs, ip, end);
	/*
	 * Before the op ends, on every exit: hosts that map the file
	 * revalidate when the change counter moved, and a page detached here
	 * is reused only after a pass begun after this op (docs/reclaim.md
	 * "Mapping hosts").
	 */
	daxfs_inode_touch(ip, DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME);
	daxfs_gate_open(op, ip);
	return err;
}

/* Linux's checks, in its order: EOPNOTSUPP for a mode we lack, EINVAL
 * for an empty or negative range, EFBIG past the largest file. */
static int falloc_check(u32 mode, u64 off, u64 len)
{
	if (mode & ~FALLOC_KNOWN)
		return -EOPNOTSUPP;
	if ((mode & DAXFS_FALLOC_PUNCH_HOLE) &&
	    (mode & ~DAXFS_FALLOC_PUNCH_HOLE) != DAXFS_FALLOC_KEEP_SIZE)
		return -EOPNOTSUPP;
	if ((s64)off < 0 || !len || (s64)len < 0)
		return -EINVAL;
	if (off > DAXFS_MAX_FILE_SIZE || len > DAXFS_MAX_FILE_SIZE - off)
		return -EFBIG;
	return 0;
}

struct falloc_call {
	u64 ino, off, end;
	u32 mode;
	u64 *blk;
};

static int falloc_step(struct daxfs_op *op, void *arg)
{
	struct falloc_call *f = arg;

	if (f->mode & (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_ZERO_RANGE))
		return change_range(op, f->ino, f->mode, f->off, f->end);
	return prealloc_step(op, f->ino, f->off, f->end, f->blk,
			     f->mode & DAXFS_FALLOC_KEEP_SIZE);
}

/* One step in its own op, starting over while a live shrink holds the
 * gate (nothing done yet in that case). */
static int falloc_op(struct daxfs_fs *fs, u64 ino, u32 mode, u64 off,
		     u64 end, u64 *blk)
{
	struct falloc_call f = { ino, off, end, mode, blk };

	return daxfs_gate_op(fs, falloc_step, &f);
}

int daxfs_fallocate(struct daxfs_fs *fs, u64 ino, u32 mode, u64 off, u64 len)
{
	u64 end = off + len, blk = off >> DAXFS_BLOCK_SHIFT;
	u64 last = (end + BLK_LO) >> DAXFS_BLOCK_SHIFT;
	int err = falloc_check(mode, off, len);

	if (err)
		return err;
	if (mode & (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_ZERO_RANGE))
		return falloc_op(fs, ino, mode, off, end, NULL);
	while (blk < last) {
		err = falloc_op(fs, ino, mode, off, end, &blk);
		if (err)
			return err;
		if (daxfs_walk_yield())
			return -EINTR;
	}
	return falloc_op(fs, ino, mode, off, end, NULL);
}
