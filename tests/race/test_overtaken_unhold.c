// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An overtaken recoverer must not let go of a hold a live linker took
 * since (docs/recovery.md "Acts of an overtaken recoverer").
 *
 * B dies holding d's leaf (LINKING): in link(d, e) at step 2, or in
 * rename(d, u) at step 1 + PUBLISHING, not published (made by hand).  A
 * claims B's recovery, reads the intent and stalls, its own host alive,
 * right before it lets the leaf go (race point "dirent" on d's leaf:
 * inside leaf_unhold; for the rename its second, the first is the raise
 * of the counters).  C takes the recovery over, rolls B's op back, drops
 * B's hold and, all intents cleared, B's rename claim.  L then links d to
 * f: it takes the claim and holds d's leaf; there (race point link.held)
 * A resumes, in a thread of its own, and runs to its end.  L's hold must
 * still be set when A is done, L's link succeed and fsck find nothing.
 * Before, A's leaf_unhold cleared L's LINKING: an unlink of d could then
 * remove it under L's link.
 */
#include "overtaken.h"

static struct daxfs_fs L;
static struct daxfs_dirent *held;
static int c_rc;

static int holding(void)
{
	return !!(daxfs_load32(&held->removed) & DAXFS_DE_LINKING);
}

void daxfs_race_point(const char *name, const void *p)
{
	ov_thread_hook(name, p);
}

/* B, in link(d, e): claim, hold, intent, count+1, nlink+1; then dies */
static void b_dies_in_link(u64 f)
{
	struct daxfs_inode *dp, *ip;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 a[6] = { ROOT, f, 0, 0, 0, 0 };

	ov_b_begin(&op, "d", &de);
	held = daxfs_dirent_at(&B, de.leaf);
	ov_hold(held);
	a[2] = daxfs_dirent_new(&op, "e", 1, daxfs_name_hash(&B, "e", 1), f,
			       OV_DT_REG, 0);
	a[3] = de.leaf;
	ov_intent(&op, a, NS_KIND_LINK, 0, 0);
	CHECK_EQ(daxfs_dir_writable(&op, ROOT, &dp), 0);
	CHECK_EQ(daxfs_dir_count_add(dp), 0);
	daxfs_store(&op.lane->intent.a[6], NS_META(NS_KIND_LINK, 1, 0));
	CHECK_EQ(daxfs_inode_get_writable(&op, f, &ip), 0);
	CHECK_EQ(daxfs_nlink_inc(ip), 0);
	daxfs_store(&op.lane->intent.a[6], NS_META(NS_KIND_LINK, 2, 0));
}

/* B, in rename(d, u): claim, intent, d's leaf held, step 1 + PUBLISHING;
 * the new leaf never published (no pins: their roll-back leaves them
 * high, see ov_fsck); then dies */
static void b_dies_in_rename(u64 f)
{
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 a[6] = { ROOT, ROOT, 0, 0, 0, 0 };

	ov_b_begin(&op, "d", &de);
	held = daxfs_dirent_at(&B, de.leaf);
	a[2] = de.leaf;
	a[3] = daxfs_dirent_new(&op, "u", 1, daxfs_name_hash(&B, "u", 1), f,
			       OV_DT_REG, 0);
	ov_intent(&op, a, NS_KIND_RENAME, 0, 0);
	ov_hold(held);
	daxfs_store(&op.lane->intent.a[6],
		    NS_META(NS_KIND_RENAME, 1, RN_PUBLISHING));
}

static void run(bool link)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_attr at;
	u64 f = 0, x = 0;

	fprintf(stderr, "-- %s\n", link ? "link" : "rename");
	c_rc = -1;
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mknod(&A, ROOT, "d", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &f), 0);
	if (link)
		b_dies_in_link(f);
	else
		b_dies_in_rename(f);
	t_age(&A, B.host);		/* B dies */

	ov_thread_start("dirent", held, link ? 1 : 2);
	c_rc = ov_overtake();
	CHECK_EQ(c_rc, 1);
	CHECK_EQ(daxfs_load32(&held->removed) & DAXFS_DE_LINKING, 0);

	/* L links d to f while A, resumed, ends its recovery */
	ov_live_arm("link.held", held, holding);
	CHECK_EQ(daxfs_link_name(&L, ROOT, "d", 1, f, ROOT, "f", 1), 0);
	CHECK_EQ(ovl_armed, 0);
	fprintf(stderr, "A recovered %d; L's hold still set when A was done: %d\n",
		ova_rc, ovl_kept);
	CHECK_EQ(ovl_kept, 1);
	CHECK_EQ(daxfs_load32(&held->removed) & DAXFS_DE_LINKING, 0);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "f", 1, &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "d", 1, &x), 0);
	CHECK_EQ(daxfs_getattr(&L, f, &at), 0);
	CHECK_EQ(at.nlink, 2);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "e", 1, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "u", 1, &x), -ENOENT);
	ov_finish(region, &L);
}

int main(void)
{
	run(true);
	run(false);
	return t_done();
}
