// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A rerun of a dead linker's or renamer's recovery must leave alone the
 * marks that a live link or rename took since (docs/recovery.md, "A
 * recoverer that dies").
 *
 * B dies in link(d, e) at step 2, or in rename(s, u) of a directory at
 * step 1 + PUBLISHING, not published (made by hand: the rename claim, d's
 * leaf held LINKING or s marked MOVING, the intent).  A recovers B (the
 * hold let go, or MOVING cleared) and dies at recover.lane_done for B's lane,
 * before B's intent is cleared: the hook longjmps out.  L then links d to
 * f, or renames s to v: it takes the rename claim and holds d's leaf, or
 * marks s MOVING; there (race points link.held, rename.counting) C
 * recovers A and whatever is left of B.
 *
 * The recovery used to release the claim right after the lane's roll,
 * before its intent was cleared: L took the free claim at once, and C's
 * rerun of B's lane let go of L's hold on d (leaf_unhold), or cleared
 * L's MOVING on s (clear_bits), with no look at whose they were: an
 * unlink of d, or an rmdir of s, could then run under L's link or rename.
 * Now the claim names B until all of B's intents are cleared: L first
 * takes B's stalled recovery over (B's lease is out), reruns it, and only
 * then gets the claim; C finds nothing of B left.  L's mark must stand
 * and its call succeed (and after the link, fsck find nothing; the
 * rename's roll-back leaves counts high and the leaf leaked, by design).
 * Found by an audit of the recovery reruns.
 */
#include <setjmp.h>
#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "core/dir.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL
#define NS_LINK 4
#define NS_RENAME 1
#define RN_PUBLISHING 0x40

static struct daxfs_fs A, B, C, L;
static struct daxfs_lane *blane;
static jmp_buf die;
static int a_armed, l_armed, kept = -1, c_recovered = -1;
static const char *l_point;
static const void *l_ptr;
static u32 *mark32;		/* link: the held leaf's removed word */
static u64 *mark64;		/* rename: the directory's aux word */

static int mark_set(void)
{
	if (mark32)
		return !!(daxfs_load32(mark32) & DAXFS_DE_LINKING);
	return !!(daxfs_load(mark64) & DAXFS_DIR_MOVING);
}

void daxfs_race_point(const char *name, const void *p)
{
	if (a_armed && !strcmp(name, "recover.lane_done") && p == blane) {
		a_armed = 0;
		longjmp(die, 1);	/* A dies here */
	}
	if (l_armed && !strcmp(name, l_point) && p == l_ptr) {
		l_armed = 0;
		t_age(&C, A.host);
		c_recovered = daxfs_recover_dead_hosts(&C);
		kept = mark_set();
	}
}

static void b_op(struct daxfs_op *op, const char *name,
		 struct daxfs_inode **dp, struct daxfs_dent *de)
{
	struct daxfs_iref ref;

	CHECK_EQ(daxfs_op_begin(&B, op), 0);
	blane = op->lane;
	CHECK_EQ(daxfs_dir_writable(op, ROOT, dp), 0);
	CHECK_EQ(daxfs_inode_get(op, ROOT, &ref), 0);
	CHECK_EQ(daxfs_dir_find(op, &ref, name, 1,
				daxfs_name_hash(&B, name, 1), de), 0);
	daxfs_store(daxfs_state_word(&B, rename_claim), daxfs_my_claim(&B));
}

/* B, in link(d, e): claim, hold, intent, count+1, nlink+1; then dies */
static void b_dies_in_link(u64 f)
{
	struct daxfs_inode *dp, *ip;
	struct daxfs_dirent *held;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 leaf;

	b_op(&op, "d", &dp, &de);
	held = daxfs_dirent_at(&B, de.leaf);
	daxfs_store32(&held->removed,
		      daxfs_load32(&held->removed) | DAXFS_DE_LINKING);
	mark32 = &held->removed;
	l_ptr = held;
	leaf = daxfs_dirent_new(&op, "e", 1, daxfs_name_hash(&B, "e", 1), f,
				8, 0);
	daxfs_intent_arg(&op, 4, 0);
	daxfs_intent_arg(&op, 5, 0);
	daxfs_intent_arg(&op, 6, NS_LINK);
	daxfs_intent_set(&op, DAXFS_INTENT_RENAME, ROOT, f, leaf, de.leaf);
	CHECK_EQ(daxfs_dir_count_add(dp), 0);
	daxfs_store(&op.lane->intent.a[6], NS_LINK | 1 << 8);
	CHECK_EQ(daxfs_inode_get_writable(&op, f, &ip), 0);
	CHECK_EQ(daxfs_nlink_inc(ip), 0);
	daxfs_store(&op.lane->intent.a[6], NS_LINK | 2 << 8);
}

/* B, in rename(s, u): claim, intent, s MOVING, step 1 + PUBLISHING; the
 * new leaf never published; then dies (the count pin left out: the
 * roll-back of this step leaves counts as they are) */
static void b_dies_in_rename(u64 s)
{
	struct daxfs_inode *dp, *sp;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 leaf;

	b_op(&op, "s", &dp, &de);
	leaf = daxfs_dirent_new(&op, "u", 1, daxfs_name_hash(&B, "u", 1), s,
				DAXFS_DT_DIR, 0);
	daxfs_intent_arg(&op, 4, 0);
	daxfs_intent_arg(&op, 5, 0);
	daxfs_intent_arg(&op, 6, NS_RENAME);
	daxfs_intent_set(&op, DAXFS_INTENT_RENAME, ROOT, ROOT, de.leaf, leaf);
	CHECK_EQ(daxfs_inode_get_writable(&op, s, &sp), 0);
	daxfs_store(&sp->aux, daxfs_load(&sp->aux) | DAXFS_DIR_MOVING);
	mark64 = &sp->aux;
	l_ptr = dp;		/* rename.counting names ddir's record */
	daxfs_store(&op.lane->intent.a[6],
		    NS_RENAME | 1 << 8 | RN_PUBLISHING << 16);
}

static void run(bool link)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_check_result res;
	struct daxfs_attr at;
	u64 f = 0, s = 0, found;

	mark32 = NULL;
	mark64 = NULL;
	kept = c_recovered = -1;
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	CHECK_EQ(t_join(&L, region, REGION), 0);
	CHECK_EQ(daxfs_mknod(&A, ROOT, "d", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &f), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "s", 1, 0755, 0, 0, &s), 0);
	if (link)
		b_dies_in_link(f);
	else
		b_dies_in_rename(s);
	t_age(&A, B.host);

	a_armed = 1;
	if (!setjmp(die))
		daxfs_recover_dead_hosts(&A);
	CHECK_EQ(a_armed, 0);
	CHECK_EQ(daxfs_load(&blane->intent.op), DAXFS_INTENT_RENAME);
	CHECK_EQ(mark_set(), 0);	/* A's roll let B's go */

	/* a lease later: B's recovery has stalled; L links or renames */
	t_age(&L, B.host);
	l_point = link ? "link.held" : "rename.counting";
	l_armed = 1;
	if (link)
		CHECK_EQ(daxfs_link_name(&L, ROOT, "d", 1, f, ROOT, "f", 1), 0);
	else
		CHECK_EQ(daxfs_rename(&L, ROOT, "s", 1, ROOT, "v", 1, 0), 0);
	CHECK_EQ(l_armed, 0);
	CHECK(c_recovered >= 0);
	fprintf(stderr, "%s: L's mark still set when C had recovered: %d\n",
		link ? "link" : "rename", kept);
	CHECK_EQ(kept, 1);
	CHECK_EQ(mark_set(), 0);	/* L's own, let go */
	if (link) {
		CHECK_EQ(daxfs_lookup(&L, ROOT, "f", 1, &found), 0);
		CHECK_EQ(found, f);
		CHECK_EQ(daxfs_lookup(&L, ROOT, "e", 1, &found), -ENOENT);
		CHECK_EQ(daxfs_getattr(&L, f, &at), 0);
		CHECK_EQ(at.nlink, 2);
	} else {
		CHECK_EQ(daxfs_lookup(&L, ROOT, "v", 1, &found), 0);
		CHECK_EQ(found, s);
		CHECK_EQ(daxfs_lookup(&L, ROOT, "s", 1, &found), -ENOENT);
		CHECK_EQ(daxfs_lookup(&L, ROOT, "u", 1, &found), -ENOENT);
	}
	daxfs_host_leave(&C);
	daxfs_host_leave(&L);
	if (link) {
		memset(&res, 0, sizeof(res));
		CHECK_EQ(t_fsck(region, REGION, false, NULL, NULL, &res), 0);
		CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	}
	t_region_free(region, REGION);
}

int main(void)
{
	run(true);
	run(false);
	return t_done();
}
