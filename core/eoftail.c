// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The tail of the EOF page.  A process may store through a mapping of a
 * file's last page past EOF (POSIX allows it; the bytes are not the
 * file's), and a write whose host died before moving the size leaves its
 * bytes there too.  When the file grows past such bytes they would show
 * as file data (xfstests generic/363).  So an extension that leaves a gap
 * after the old EOF -- a write or fallocate starting beyond it, a
 * truncate up -- first makes the tail of the EOF page read as zeros.
 *
 * It cannot just zero: a write of another host may be storing into that
 * tail right now, ahead of moving the size (docs/files.md "Size
 * protocol").  So it looks first (read only, no gate), and only when the
 * tail holds a non-zero byte it closes the file's write gate as a shrink
 * does: every write in flight is done and none starts, so whatever lies
 * beyond the size then is no write's, and it zeroes from the size to the
 * page end.  Protocol, invariant and crash story: docs/files.md
 * "Invariant: bytes beyond EOF".
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "file.h"
#include "file-int.h"
#include "filegate.h"

#define BLK		((u64)DAXFS_BLOCK_SIZE)
#define BLK_LO		(BLK - 1)

/* The overlay page of the block holding byte s, NULL when it has none. */
static u8 *eof_page(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s,
		    int *err)
{
	u64 pg;
	u8 *p;

	*err = daxfs_radix_get(fs, ip, s >> DAXFS_BLOCK_SHIFT, &pg);
	if (*err || !pg)
		return NULL;
	p = daxfs_ptr(fs, pg, BLK, BLK);
	if (!p)
		*err = -EUCLEAN;
	return p;
}

int daxfs_zero_tail(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s)
{
	u8 *p;
	int err;

	if (!(s & BLK_LO))
		return 0;
	p = eof_page(fs, ip, s, &err);
	if (!p)
		return err;
	memset(p + (s & BLK_LO), 0, BLK - (s & BLK_LO));
	pflush(fs, p + (s & BLK_LO), BLK - (s & BLK_LO));
	return 0;
}

/* Whether bytes [a, b) of page p hold a non-zero byte: a word at a time
 * (a tail is up to 4 KiB, looked at on every extension past a gap). */
static bool bytes_nonzero(const u8 *p, u64 a, u64 b)
{
	for (; a < b && (a & 7); a++)
		if (daxfs_once(p[a]))
			return true;
	for (; a + 8 <= b; a += 8)
		if (daxfs_once(*(const u64 *)(p + a)))
			return true;
	for (; a < b; a++)
		if (daxfs_once(p[a]))
			return true;
	return false;
}

/* Whether [s, end) of the page holding s (end within it, or its end)
 * holds a non-zero byte.  Racy by design: only a hint that closing the
 * gate is worth it. */
static bool tail_dirty(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s,
		       u64 end)
{
	const u8 *p;
	int err;

	p = eof_page(fs, ip, s, &err);
	if (!p)
		return err != 0;	/* the zeroing meets and reports it */
	return bytes_nonzero(p, s & BLK_LO, ((end - 1) & BLK_LO) + 1);
}

/* s: the size the caller loaded, unaligned and below from */
int daxfs_eof_tail_look(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 ino, u64 s, u64 from)
{
	u64 end = (s | BLK_LO) + 1;
	int err;

	if (!tail_dirty(op->fs, ip, s, from < end ? from : end))
		return 0;
	err = daxfs_gate_close(op, ip, ino);
	if (err)
		return err;
	if (daxfs_fenced(op)) {
		err = -ESTALE;
	} else {
		/* no write in flight: beyond the size is no write's */
		err = daxfs_zero_tail(op->fs, ip, daxfs_load(&ip->size));
		pdrain(op->fs);
		daxfs_crash_point("eoftail.zeroed");
	}
	daxfs_gate_open(op, ip);
	return err;
}
