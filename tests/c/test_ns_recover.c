// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Crash stories of rename and rmdir: a second host runs the first steps
 * of the protocol by hand (through the same internal calls the core
 * uses), then "dies" (its lease is aged); a survivor's recovery must roll
 * the operation forward or back as docs/namespace.md says.
 */
#include "tutil.h"
#include "core/inode.h"
#include "core/dir.h"

#define MiB (1ULL << 20)
#define REGION (64 * MiB)
#define ROOT 1ULL
/* mirrors core/namei.c's intent encoding (docs/namespace.md) */
#define META(kind, step, fl) ((u64)(kind) | (u64)(step) << 8 | (u64)(fl) << 16)
#define K_RENAME 1
#define K_RMDIR 2

static void *region;
static struct daxfs_fs A, B;

static void make_old(struct daxfs_fs *fs)
{
	t_age(fs, fs->host);
}

static void rejoin_b(void)
{
	CHECK_EQ(t_join(&B, region, REGION), 0);
}

static u64 find_leaf(struct daxfs_op *op, u64 dir, const char *n, u64 *ino)
{
	struct daxfs_iref ref;
	struct daxfs_dent de;

	if (daxfs_inode_get(op, dir, &ref))
		return 0;
	if (daxfs_dir_find(op, &ref, n, strlen(n),
			   daxfs_name_hash(op->fs, n, strlen(n)), &de))
		return 0;
	*ino = de.ino;
	return de.leaf;
}

static void step(struct daxfs_op *op, u64 meta)
{
	daxfs_store(&op->lane->intent.a[6], meta);
}

static void begin_intent(struct daxfs_op *op, u64 a0, u64 a1, u64 a2, u64 a3,
			 u64 a4, u64 a5, u64 meta)
{
	daxfs_intent_arg(op, 4, a4);
	daxfs_intent_arg(op, 5, a5);
	daxfs_intent_arg(op, 6, meta);
	daxfs_intent_set(op, DAXFS_INTENT_RENAME, a0, a1, a2, a3);
}

static void t_rename_roll_forward(void)
{
	struct daxfs_inode *sdp, *ddp, *ip;
	struct daxfs_attr at;
	struct daxfs_op op;
	u64 d1, d2, f, ino, sleaf, nleaf, x;

	CHECK_EQ(daxfs_mkdir(&A, ROOT, "f1", 2, 0755, 0, 0, &d1), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "f2", 2, 0755, 0, 0, &d2), 0);
	CHECK_EQ(daxfs_mknod(&A, d1, "a", 1, DAXFS_S_IFREG | 0644, 0, 0, 0, &f), 0);
	CHECK_EQ(daxfs_mknod(&A, ROOT, "unrelated", 9, DAXFS_S_IFREG, 0, 0, 0, &x), 0);
	/* B: rename f1/a -> f2/moved, dies after publishing the new name */
	CHECK_EQ(daxfs_op_begin(&B, &op), 0);
	CHECK_EQ(daxfs_dir_writable(&op, d1, &sdp), 0);
	CHECK_EQ(daxfs_dir_writable(&op, d2, &ddp), 0);
	sleaf = find_leaf(&op, d1, "a", &ino);
	CHECK(sleaf != 0);
	daxfs_store(daxfs_state_word(&B, rename_claim), daxfs_my_claim(&B));
	nleaf = daxfs_dirent_new(&op, "moved", 5, daxfs_name_hash(&B, "moved", 5),
				 f, 8, 0);
	begin_intent(&op, d1, d2, sleaf, nleaf, 0, 0, META(K_RENAME, 0, 0));
	CHECK_EQ(daxfs_inode_get_writable(&op, f, &ip), 0);
	CHECK_EQ(daxfs_nlink_inc(ip), 0);
	CHECK_EQ(daxfs_dir_count_add(ddp), 0);
	step(&op, META(K_RENAME, 1, 0));
	CHECK_EQ(daxfs_dir_link(&op, ddp, nleaf, false), 0);
	step(&op, META(K_RENAME, 2, 0));
	make_old(&B);		/* B dies here, holding the claim */
	/* A's next rename needs the claim: declares B dead, recovers */
	CHECK_EQ(daxfs_rename(&A, ROOT, "unrelated", 9, ROOT, "unrelated2", 10, 0), 0);
	CHECK_EQ(daxfs_lookup(&A, d1, "a", 1, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&A, d2, "moved", 5, &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(daxfs_getattr(&A, f, &at), 0);
	CHECK_EQ(at.nlink, 1);
	CHECK_EQ(daxfs_getattr(&A, d1, &at), 0);
	CHECK_EQ(at.size, 0);
	CHECK_EQ(daxfs_getattr(&A, d2, &at), 0);
	CHECK_EQ(at.size, 1);
	CHECK_EQ(daxfs_load(daxfs_state_word(&A, rename_claim)), 0);
	rejoin_b();
}

static void t_rename_roll_back(void)
{
	struct daxfs_inode *sdp, *ddp, *ip;
	struct daxfs_attr at;
	struct daxfs_op op;
	u64 d1, d2, sub, ino, sleaf, nleaf, x, v;

	CHECK_EQ(daxfs_mkdir(&A, ROOT, "b1", 2, 0755, 0, 0, &d1), 0);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "b2", 2, 0755, 0, 0, &d2), 0);
	CHECK_EQ(daxfs_mkdir(&A, d1, "sub", 3, 0755, 0, 0, &sub), 0);
	/* B: rename b1/sub -> b2/sub, dies before publishing */
	CHECK_EQ(daxfs_op_begin(&B, &op), 0);
	CHECK_EQ(daxfs_dir_writable(&op, d1, &sdp), 0);
	CHECK_EQ(daxfs_dir_writable(&op, d2, &ddp), 0);
	sleaf = find_leaf(&op, d1, "sub", &ino);
	daxfs_store(daxfs_state_word(&B, rename_claim), daxfs_my_claim(&B));
	nleaf = daxfs_dirent_new(&op, "sub", 3, daxfs_name_hash(&B, "sub", 3),
				 sub, 4, 0);
	begin_intent(&op, d1, d2, sleaf, nleaf, 0, 0, META(K_RENAME, 0, 0));
	CHECK_EQ(daxfs_inode_get_writable(&op, sub, &ip), 0);
	v = daxfs_load(&ip->aux);
	CHECK(daxfs_cas(&ip->aux, &v, v | DAXFS_DIR_MOVING));
	CHECK_EQ(daxfs_nlink_inc(ddp), 0);
	CHECK_EQ(daxfs_dir_count_add(ddp), 0);
	step(&op, META(K_RENAME, 1, 0));
	make_old(&B);
	CHECK_EQ(daxfs_recover_dead_hosts(&A), 1);
	CHECK_EQ(daxfs_lookup(&A, d1, "sub", 3, &x), 0);
	CHECK_EQ(daxfs_lookup(&A, d2, "sub", 3, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&A, sub, "..", 2, &x), 0);
	CHECK_EQ(x, d1);
	CHECK_EQ(daxfs_load(&ip->aux) & DAXFS_DIR_MOVING, 0);
	CHECK_EQ(daxfs_load(daxfs_state_word(&A, rename_claim)), 0);
	/* counts raised before the crash stay high (fsck trims them) */
	CHECK_EQ(daxfs_getattr(&A, d2, &at), 0);
	CHECK(at.nlink >= 2);
	/* the directory works normally again */
	CHECK_EQ(daxfs_rename(&A, d1, "sub", 3, d2, "sub", 3, 0), 0);
	CHECK_EQ(daxfs_rmdir(&A, d2, "sub", 3), 0);
	rejoin_b();
}

static void t_rmdir_crash(void)
{
	struct daxfs_inode *dp, *cp;
	struct daxfs_attr at;
	struct daxfs_op op;
	u64 d, c, leaf, ino, v, x;
	u32 n0;

	CHECK_EQ(daxfs_mkdir(&A, ROOT, "rp", 2, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_mkdir(&A, d, "victim", 6, 0755, 0, 0, &c), 0);
	n0 = 3;
	CHECK_EQ(daxfs_op_begin(&B, &op), 0);
	CHECK_EQ(daxfs_dir_writable(&op, d, &dp), 0);
	CHECK_EQ(daxfs_dir_writable(&op, c, &cp), 0);
	leaf = find_leaf(&op, d, "victim", &ino);
	begin_intent(&op, d, c, leaf, 0, 0, 0, META(K_RMDIR, 0, 0));
	v = daxfs_load(&cp->aux);
	CHECK(daxfs_cas(&cp->aux, &v, v | DAXFS_DIR_DEAD));
	step(&op, META(K_RMDIR, 1, 0));
	/* dead directory still named: a create in it waits for the rmdir
	 * to finish (docs/namespace.md, "Meeting a half-done rmdir"): it
	 * recovers the expired host, which rolls the rmdir forward, and
	 * then fails: the directory's name is gone by then */
	make_old(&B);
	CHECK_EQ(daxfs_mknod(&A, c, "x", 1, DAXFS_S_IFREG, 0, 0, 0, &x), -ENOENT);
	CHECK_EQ(daxfs_recover_dead_hosts(&A), 0);	/* done by the wait */
	CHECK_EQ(daxfs_lookup(&A, d, "victim", 6, &x), -ENOENT);
	CHECK_EQ(daxfs_getattr(&A, c, &at), -ENOENT);
	CHECK_EQ(daxfs_getattr(&A, d, &at), 0);
	CHECK_EQ(at.nlink, n0 - 1);
	CHECK_EQ(at.size, 0);
	CHECK_EQ(daxfs_rmdir(&A, ROOT, "rp", 2), 0);
	rejoin_b();
}

int main(void)
{
	region = t_setup(&A, REGION, NULL);
	rejoin_b();
	RUN(t_rename_roll_forward);
	RUN(t_rename_roll_back);
	RUN(t_rmdir_crash);
	return t_done();
}
