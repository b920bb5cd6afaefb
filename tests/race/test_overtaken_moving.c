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
 *
 * "replaced": B's rename(d, t) replaces the empty directory t (pinned
 * DEAD|MOVING too).  After C's roll-back L, by hand, takes the claim and
 * pins t as a rename(x, t) of its own would; A resumes then.  t's
 * DEAD|MOVING must still be set when A is done.  Before, A cleared both:
 * a create in t could then succeed in the directory L's rename frees.
 */
#include "overtaken.h"

static struct daxfs_fs L;

void daxfs_race_point(const char *name, const void *p)
{
	ov_thread_hook(name, p);
}

#define DEAD_MOVING (DAXFS_DIR_DEAD | DAXFS_DIR_MOVING)

static int replaced_pins(struct daxfs_inode *tp)
{
	return (daxfs_load(&tp->aux) & DEAD_MOVING) == DEAD_MOVING;
}

static void run_replaced(void)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_inode *tp;
	struct daxfs_iref ref;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 d = 0, t = 0, x = 0, a[6] = { ROOT, ROOT, 0, 0, 0, 0 };
	int kept;

	fprintf(stderr, "-- replaced\n");
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "t", 1, 0755, 0, 0, &t), 0);

	/* B, in rename(d, t): claim, intent, d MOVING, t DEAD|MOVING (pins
	 * 1 and 2 done) */
	ov_rename_begin(&B, &op, a, "t", d, &ov_dip);
	CHECK_EQ(daxfs_inode_get(&op, ROOT, &ref), 0);
	CHECK_EQ(daxfs_dir_find(&op, &ref, "t", 1,
				daxfs_name_hash(&B, "t", 1), &de), 0);
	daxfs_store(&op.lane->intent.a[4], de.leaf);
	CHECK_EQ(daxfs_inode_get_writable(&op, t, &tp), 0);
	daxfs_store(&tp->aux, daxfs_load(&tp->aux) | DEAD_MOVING);
	ov_step(&op, 0, 3u << OV_RN_DONE_SHIFT);
	t_age(&A, B.host);		/* B dies */

	ov_thread_start("dirent", daxfs_dirent_at(&A, a[3]), 1);
	CHECK_EQ(ov_overtake(), 1);
	CHECK_EQ(daxfs_load(&tp->aux) & DEAD_MOVING, 0);

	/* L pins t for a rename of its own; A, resumed, ends */
	daxfs_store(daxfs_state_word(&L, rename_claim), daxfs_my_claim(&L));
	daxfs_store(&tp->aux, daxfs_load(&tp->aux) | DEAD_MOVING);
	ov_thread_resume();
	kept = replaced_pins(tp);
	fprintf(stderr, "A recovered %d; L's DEAD|MOVING still set when A was done: %d\n",
		ova_rc, kept);
	CHECK_EQ(kept, 1);

	/* L gives its rename up */
	daxfs_store(&tp->aux, daxfs_load(&tp->aux) & ~DEAD_MOVING);
	daxfs_store(daxfs_state_word(&L, rename_claim), 0);
	CHECK_EQ(ov_moving(), 0);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "d", 1, &x), 0);
	CHECK_EQ(x, d);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "t", 1, &x), 0);
	CHECK_EQ(x, t);
	ov_finish(region, &L);
}

static void run_source(void)

{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_op op;
	u64 d = 0, x = 0, nleaf;

	fprintf(stderr, "-- source\n");
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
}

int main(void)
{
	run_source();
	run_replaced();
	return t_done();
}
