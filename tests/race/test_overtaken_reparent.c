// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An overtaken recoverer's redo of a moved directory's unpin must not
 * undo what a live rename of that directory did since (docs/recovery.md
 * "Acts of an overtaken recoverer").
 *
 * B dies in rename(p1/d, p2/d), d a directory, with step 3 marked and
 * nothing of it done (d MOVING, its parent word p1; made by hand: the
 * pins, the new name published, the old one removed).  A claims B's
 * recovery, reads step 3 and stalls, its own host alive, before it redoes
 * d's part of the unpin (race point "dirent" on the new leaf: ns_recover
 * loading it).  C takes the recovery over, finishes B's rename (d's
 * parent p2, MOVING cleared) and, all intents cleared, B's rename claim.
 * L then renames p2/d to p3/d.  A resumes, in a thread of its own, and
 * runs to its end:
 *  - "after": once L's rename is done.  d's parent word must read p3, and
 *    a rename of p3 into d must be refused (a loop).  Before, A stored p2
 *    over it: is_ancestor() walked d -> p2 -> root, and the rename of p3
 *    into d succeeded, p3 and d each inside the other (cut off from the
 *    root).
 *  - "during": inside L's rename, d pinned (race point rename.counting).
 *    d's MOVING must still be set when A is done.  Before, A cleared it.
 */
#include "overtaken.h"

static struct daxfs_fs L;

void daxfs_race_point(const char *name, const void *p)
{
	ov_thread_hook(name, p);
}

static void run(bool during)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_op op;
	u64 p1 = 0, p2 = 0, p3 = 0, d = 0, nleaf, x = 0;
	int err;

	fprintf(stderr, "-- %s\n", during ? "during" : "after");
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p1", 2, 0755, 0, 0, &p1), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p2", 2, 0755, 0, 0, &p2), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p3", 2, 0755, 0, 0, &p3), 0);
	CHECK_EQ(daxfs_mkdir(&A, p1, "d", 1, 0755, 0, 0, &d), 0);
	nleaf = ov_rename_upto_unpin(&B, &op, p1, p2, d, &ov_dip);
	t_age(&A, B.host);		/* B dies */

	ov_thread_start("dirent", daxfs_dirent_at(&A, nleaf), 1);
	CHECK_EQ(ov_overtake(), 1);
	CHECK_EQ(daxfs_load(&ov_dip->parent), p2);
	CHECK_EQ(ov_moving(), 0);

	/* L renames p2/d to p3/d; A, resumed, ends its recovery inside it
	 * or after it */
	/* rename.counting names ddir's record */
	if (during)
		ov_live_arm("rename.counting", t_ip(&A, p3), ov_moving);
	CHECK_EQ(daxfs_rename(&L, p2, "d", 1, p3, "d", 1, 0), 0);
	CHECK_EQ(ovl_armed, 0);
	if (!during)
		ov_thread_resume();
	fprintf(stderr, "A recovered %d; d's parent %llu (p2 %llu, p3 %llu)\n",
		ova_rc, (unsigned long long)daxfs_load(&ov_dip->parent),
		(unsigned long long)p2, (unsigned long long)p3);
	CHECK_EQ(daxfs_load(&ov_dip->parent), p3);
	if (during) {
		fprintf(stderr, "L's MOVING still set when A was done: %d\n",
			ovl_kept);
		CHECK_EQ(ovl_kept, 1);
	} else {
		err = daxfs_rename(&L, ROOT, "p3", 2, d, "x", 1, 0);
		fprintf(stderr, "rename of p3 into d: %d\n", err);
		CHECK_EQ(err, -EINVAL);
	}
	CHECK_EQ(ov_moving(), 0);
	CHECK_EQ(daxfs_lookup(&L, p3, "d", 1, &x), 0);
	CHECK_EQ(x, d);
	CHECK_EQ(daxfs_lookup(&L, p2, "d", 1, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&L, p1, "d", 1, &x), -ENOENT);
	ov_finish(region, &L);
}

int main(void)
{
	run(false);
	run(true);
	return t_done();
}
