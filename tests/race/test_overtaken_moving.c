// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An overtaken recoverer's rename roll-back must not clear a MOVING mark
 * that a live rename took since (docs/recovery.md "Acts of an overtaken
 * recoverer").
 *
 * B dies in rename(d, u), d a directory, at step 0 with d pinned (MOVING,
 * pin marked done; made by hand).  A claims B's recovery, reads the intent
 * and stalls, its own host alive, before the roll-back clears d's MOVING
 * (race point "dirent" on the new leaf: ns_recover loading it).  C takes
 * the recovery over, rolls B's rename back, clears d's MOVING and, all
 * intents cleared, B's rename claim.  L then renames d to v: it takes the
 * claim and pins d (MOVING); there (race point rename.counting) A resumes,
 * in a thread of its own, and runs to its end.  d's MOVING must still be
 * set when A is done.  Before, A's clear_bits cleared it: an rmdir of d
 * (empty) could then remove it under L's rename, which went on to name
 * the freed directory v.
 */
#include "overtaken.h"

static struct daxfs_fs L;

void daxfs_race_point(const char *name, const void *p)
{
	ov_thread_hook(name, p);
}

int main(void)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_op op;
	u64 d = 0, x = 0, nleaf;

	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "d", 1, 0755, 0, 0, &d), 0);

	/* B, in rename(d, u): claim, intent, d MOVING (pin 1 done) */
	nleaf = ov_rename_pinned(&B, &op, d, &ov_dip);
	t_age(&A, B.host);		/* B dies */

	ov_thread_start("dirent", daxfs_dirent_at(&A, nleaf), 1);
	CHECK_EQ(ov_overtake(), 1);
	CHECK_EQ(ov_moving(), 0);

	/* L renames d to v while A, resumed, ends its recovery */
	/* rename.counting names ddir's record */
	ov_live_arm("rename.counting", t_ip(&A, ROOT), ov_moving);
	CHECK_EQ(daxfs_rename(&L, ROOT, "d", 1, ROOT, "v", 1, 0), 0);
	CHECK_EQ(ovl_armed, 0);
	fprintf(stderr, "A recovered %d; L's MOVING still set when A was done: %d\n",
		ova_rc, ovl_kept);
	CHECK_EQ(ovl_kept, 1);
	CHECK_EQ(ov_moving(), 0);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "v", 1, &x), 0);
	CHECK_EQ(x, d);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "d", 1, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "u", 1, &x), -ENOENT);
	ov_finish(region, &L);
	return t_done();
}
