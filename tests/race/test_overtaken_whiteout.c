// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An overtaken recoverer must not store 0 in the nlink of a whiteout node
 * that another holder named since (docs/recovery.md "Acts of an
 * overtaken recoverer").
 *
 * B dies in rename(s, u, WHITEOUT) at step 1 + PUBLISHING, not published
 * (made by hand: the node from daxfs_tmpnode, held by B's open set, its
 * nlink raised to 1 in step 0; the two leaves; the intent).  L holds the
 * node open by number meanwhile.  A claims B's recovery, reads the intent
 * and stalls, its own host alive, before the roll-back (race point
 * "dirent" on the whiteout's leaf, its first: ns_recover finding the
 * node).  C takes the recovery over: the roll-back stores the node's
 * nlink 0, the drop of B's opens leaves it to L's.  L links it to w
 * (linkat of a nameless file it holds: nlink 0 -> 1).  A resumes.  The
 * node must keep nlink 1 and its name after L lets it go.  Before, A
 * stored 0 again: a named node at nlink 0, freed under its name by L's
 * close (fsck: the name dangling).
 */
#include "overtaken.h"

static struct daxfs_fs L;
static u64 w;
static int l_rc = -1;

void daxfs_race_point(const char *name, const void *p)
{
	if (ov_stalled(name, p))
		l_rc = daxfs_link_unnamed(&L, w, ROOT, "w", 1);
}

int main(void)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_dent de;
	struct daxfs_attr at;
	struct daxfs_op op;
	u64 s = 0, x = 0, a[6] = { ROOT, ROOT, 0, 0, 0, 0 };
	u32 fl = DAXFS_RENAME_WHITEOUT;

	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mknod(&A, ROOT, "s", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &s), 0);
	CHECK_EQ(daxfs_tmpnode(&B, ROOT, DAXFS_S_IFCHR, 0, 0, 0, &w), 0);
	ov_b_begin(&op, "s", &de);
	a[2] = de.leaf;
	a[3] = daxfs_dirent_new(&op, "u", 1, daxfs_name_hash(&B, "u", 1), s,
			       OV_DT_REG, 0);
	a[5] = daxfs_dirent_new(&op, "s", 1, daxfs_name_hash(&B, "s", 1), w,
			       daxfs_mode_dtype(DAXFS_S_IFCHR), 0);
	ov_intent(&op, a, NS_KIND_RENAME, 0, fl);
	daxfs_store32(&t_ip(&B, w)->nlink, 1);		/* step 0's revive */
	daxfs_store(&op.lane->intent.a[6],
		    NS_META(NS_KIND_RENAME, 1, fl | RN_PUBLISHING));
	ov_hold(daxfs_dirent_at(&B, a[2]));
	t_age(&A, B.host);		/* B dies */
	CHECK_EQ(daxfs_open_get(&L, w), 0);

	ov_recover_stalled(a[5]);
	fprintf(stderr, "L's link %d\n", l_rc);
	CHECK_EQ(l_rc, 0);
	CHECK_EQ(daxfs_getattr(&L, w, &at), 0);
	fprintf(stderr, "the node, named w: nlink %u\n", at.nlink);
	CHECK_EQ(at.nlink, 1);

	/* L lets it go: named, it stays */
	CHECK_EQ(daxfs_open_put(&L, w), 0);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "w", 1, &x), 0);
	CHECK_EQ(x, w);
	CHECK_EQ(daxfs_getattr(&L, w, &at), 0);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "s", 1, &x), 0);
	CHECK_EQ(x, s);
	CHECK_EQ(daxfs_lookup(&L, ROOT, "u", 1, &x), -ENOENT);
	ov_finish(region, &L);
	return t_done();
}
