// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck of strict writes' redo records (format version 7, core/redo.c):
 * a lane whose FILE_WRITE intent names a record (a[6]) owns the record
 * pages and the log pages they list until the write ends.  Offline, dead
 * hosts were recovered before this runs (replayed or dropped), so a
 * record left here belongs to a live host: its pages are in use.  A
 * record that does not check out is reported; -y unnames it (its pages
 * then show as leaked and go back).
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "check.h"
#include "redo.h"

static void mark_page(void *ctx, u64 page)
{
	struct chk *c = ctx;

	if (!chk_mark(c, c->used, page, DAXFS_BLOCK_SIZE))
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_CROSSLINK,
			   "strict-write redo page also used elsewhere", 0,
			   page, 0, 0, false);
}

void chk_redo(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 i, n = (u64)fs->sb.max_hosts * DAXFS_LANES;

	for (i = 0; i < n; i++) {
		struct daxfs_lane *ln = &fs->lanes[i];

		if (daxfs_redo_each_page(fs, ln, mark_page, c) >= 0)
			continue;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LANE,
			   "lane names an invalid strict-write redo record",
			   daxfs_load(&ln->intent.a[0]),
			   daxfs_load(&ln->intent.a[DAXFS_REDO_WORD]), 0, 0,
			   c->repair);
		if (!c->repair)
			continue;
		daxfs_store(&ln->intent.a[DAXFS_REDO_WORD], 0);
		c->space_dirty = true;
	}
}
