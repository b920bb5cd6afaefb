// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An overtaken recoverer must not forget a3 and a5 of a lane that is a
 * new host's by then (docs/recovery.md "Acts of an overtaken
 * recoverer").
 *
 * B dies in rename(d, u) at step 0, nothing pinned (made by hand: the
 * intent, the new leaf).  A claims B's recovery, reads the intent and
 * stalls, its own host alive, before the roll-back forgets the leaves in
 * the dead lane (race point "dirent" on the new leaf, its first: ns_recover
 * loading it).  C takes the recovery over, rolls back (the new leaf
 * freed, a3 and a5 forgotten), clears the lane and frees the slot; a new
 * host N joins the slot and begins an op on B's old lane, a rename whose
 * intent names two leaves of N's own in a3 and a5.  A resumes.  N's a3
 * and a5 must be as N wrote them.  Before, A stored 0 in both: had N died
 * then, its recovery would have leaked its leaves (a3 0 ends the
 * roll-back), or run with words not its own.
 */
#include "overtaken.h"

static struct daxfs_fs N;
static struct daxfs_op nop;
static int n_joined;
static u64 n_a[6];

/* N: a rename of d to v, its leaves v (a3) and w (a5), at step 0 */
static void n_begins(void)
{
	struct daxfs_iref ref;
	struct daxfs_dent de;

	n_joined = t_join(&N, A.base, REGION);
	if (n_joined || daxfs_op_begin(&N, &nop))
		return;
	CHECK_EQ(daxfs_inode_get(&nop, ROOT, &ref), 0);
	CHECK_EQ(daxfs_dir_find(&nop, &ref, "d", 1,
				daxfs_name_hash(&N, "d", 1), &de), 0);
	n_a[0] = ROOT;
	n_a[1] = ROOT;
	n_a[2] = de.leaf;
	n_a[3] = daxfs_dirent_new(&nop, "v", 1, daxfs_name_hash(&N, "v", 1),
				  de.ino, OV_DT_REG, 0);
	n_a[5] = daxfs_dirent_new(&nop, "w", 1, daxfs_name_hash(&N, "w", 1),
				  de.ino, OV_DT_REG, 0);
	CHECK(n_a[3] && n_a[5]);
	daxfs_intent_arg(&nop, 4, 0);
	daxfs_intent_arg(&nop, 5, n_a[5]);
	daxfs_intent_arg(&nop, 6, NS_META(NS_KIND_RENAME, 0, 0));
	daxfs_intent_set(&nop, DAXFS_INTENT_RENAME, n_a[0], n_a[1], n_a[2],
			 n_a[3]);
}

void daxfs_race_point(const char *name, const void *p)
{
	if (ov_stalled(name, p))
		n_begins();
}

int main(void)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_lane *blane;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 f = 0, x = 0, a[6] = { ROOT, ROOT, 0, 0, 0, 0 };
	u32 bslot;

	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	bslot = B.host;
	CHECK_EQ(daxfs_mknod(&A, ROOT, "d", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &f), 0);
	ov_b_begin(&op, "d", &de);
	blane = op.lane;
	a[2] = de.leaf;
	a[3] = daxfs_dirent_new(&op, "u", 1, daxfs_name_hash(&B, "u", 1), f,
			       OV_DT_REG, 0);
	ov_intent(&op, a, NS_KIND_RENAME, 0, 0);
	t_age(&A, B.host);		/* B dies */

	ov_recover_stalled(a[3]);
	CHECK_EQ(n_joined, 0);
	CHECK_EQ(N.host, bslot);
	CHECK(nop.lane == blane);
	fprintf(stderr, "N's a3 %#llx (wrote %#llx), a5 %#llx (wrote %#llx)\n",
		(unsigned long long)daxfs_load(&blane->intent.a[3]),
		(unsigned long long)n_a[3],
		(unsigned long long)daxfs_load(&blane->intent.a[5]),
		(unsigned long long)n_a[5]);
	CHECK_EQ(daxfs_load(&blane->intent.a[3]), n_a[3]);
	CHECK_EQ(daxfs_load(&blane->intent.a[5]), n_a[5]);
	CHECK_EQ(daxfs_load(&blane->intent.op), DAXFS_INTENT_RENAME);

	/* N gives up its rename: nothing of it was published */
	daxfs_intent_clear(&nop);
	CHECK_EQ(daxfs_dirent_free(&nop, n_a[3], false), 0);
	CHECK_EQ(daxfs_dirent_free(&nop, n_a[5], false), 0);
	daxfs_op_end(&nop);
	daxfs_host_leave(&N);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "d", 1, &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "u", 1, &x), -ENOENT);
	daxfs_host_leave(&C);
	daxfs_host_leave(&A);
	ov_fsck(region, false);
	t_region_free(region, REGION);
	return t_done();
}
