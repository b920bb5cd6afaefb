// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A recoverer overtaken before it even reads a dead lane's intent must
 * not act on the live op it finds there (docs/recovery.md "Acts of an
 * overtaken recoverer").
 *
 * B dies in an op with nothing in flight yet.  A claims B's recovery and
 * stalls, its own host alive, at the start of that op's lane, before recover_lane
 * reads the intent (race point recover.lane).  C takes the recovery over
 * and frees the slot; a new host N joins it and begins, on B's old lane,
 * a rename of directory d (made by hand):
 *  - "pinned": rename(d, u) at step 0, d MOVING;
 *  - "moved": rename(p1/d, p2/d) with step 3 marked, before its unpin
 *    (d MOVING, its parent word p1).
 * A resumes and reads N's intent as a dead one.  d must still be MOVING,
 * its parent word p1 (N's own unpin has not run).  Before, A rolled
 * "pinned" back as far as its clear of MOVING, and redid "moved"'s unpin
 * of d early (parent p2, MOVING cleared): an rmdir of d could then
 * remove it under N's rename.
 */
#include "overtaken.h"

static struct daxfs_fs N;
static struct daxfs_op nop;
static struct daxfs_lane *blane;
static u64 p1, p2, d, nleaf;
static int armed, fired, moved;

void daxfs_race_point(const char *name, const void *p)
{
	if (!armed || strcmp(name, "recover.lane") || p != blane)
		return;
	armed = 0;
	fired++;
	CHECK_EQ(ov_overtake(), 1);
	CHECK_EQ(t_join(&N, A.base, REGION), 0);
	if (moved)
		nleaf = ov_rename_upto_unpin(&N, &nop, p1, p2, d, &ov_dip);
	else
		nleaf = ov_rename_pinned(&N, &nop, d, &ov_dip);
	CHECK(nop.lane == blane);
}

/* N ends its rename as it would have: rolled back, or unpinned and
 * counted (its own rename_finish, by hand) */
static void n_ends(void)
{
	struct daxfs_inode *p1p;

	if (moved) {
		daxfs_store(&ov_dip->parent, p2);
		CHECK_EQ(daxfs_dir_writable(&nop, p1, &p1p), 0);
		daxfs_dir_count_sub(p1p);
		daxfs_nlink_dec(p1p, 2);
	}
	daxfs_store(&ov_dip->aux, daxfs_load(&ov_dip->aux) & ~DAXFS_DIR_MOVING);
	daxfs_intent_clear(&nop);
	if (!moved)
		CHECK_EQ(daxfs_dirent_free(&nop, nleaf, false), 0);
	daxfs_store(daxfs_state_word(&N, rename_claim), 0);
	daxfs_op_end(&nop);
}

static void run(bool m)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_op bop;
	u64 x = 0, parent;
	int kept;

	fprintf(stderr, "-- %s\n", m ? "moved" : "pinned");
	moved = m;
	fired = 0;
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p1", 2, 0755, 0, 0, &p1), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p2", 2, 0755, 0, 0, &p2), 0);
	CHECK_EQ(daxfs_mkdir(&A, m ? p1 : ROOT, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_op_begin(&B, &bop), 0);
	blane = bop.lane;
	t_age(&A, B.host);		/* B dies */

	armed = 1;
	CHECK_EQ(daxfs_recover_dead_hosts(&A), 1);
	CHECK_EQ(fired, 1);
	kept = ov_moving();
	parent = daxfs_load(&ov_dip->parent);
	fprintf(stderr, "N's MOVING still set after A: %d; d's parent %llu (p1 %llu)\n",
		kept, (unsigned long long)parent, (unsigned long long)p1);
	CHECK_EQ(kept, 1);
	if (m)
		CHECK_EQ(parent, p1);
	CHECK_EQ(daxfs_load(&blane->intent.op), DAXFS_INTENT_RENAME);

	n_ends();
	daxfs_host_leave(&N);
	CHECK_EQ(daxfs_lookup(&A, m ? p2 : ROOT, "d", 1, &x), 0);
	CHECK_EQ(x, d);
	CHECK_EQ(daxfs_load(&ov_dip->parent), m ? p2 : ROOT);
	ov_finish(region, NULL);
}

int main(void)
{
	run(false);
	run(true);
	return t_done();
}
