// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A garbled intent in a dead peer's lane must not make recovery free a
 * live object (docs/recovery.md, "Garbled intents"; the region is
 * untrusted, docs/design.md).
 *
 * Host B's lane gets an intent that names live objects as its own
 * unpublished ones, B is declared dead and A recovers it; then A makes
 * enough files and directories to reuse anything freed, and the live
 * objects must be intact and fsck must find no error:
 *
 *   tmpfile   OPEN_PUT {0, 0, 0, a3 = record of the named file v}
 *   tmpfile2  OPEN_PUT {0, w, 0, a3 = record of v} (another number)
 *   create0   CREATE step 0 {a0 root, a3 = record of directory sub,
 *             a4 = its trie root}
 *   create4   CREATE step 4 {a0 root, a1 = directory sub/x, a2 = its
 *             leaf in sub}
 *   link0     LINK step 0 {a0 root, a1 = v, a2 = the leaf of sub/w}
 *   rename0   RENAME step 0 {a0 = a1 = root, a2 = the leaf of s,
 *             a3 = the leaf of sub/w, a5 = the leaf of v}
 *
 * Recovery used to free each (daxfs_free_obj checks only range and
 * alignment): the next mknod got the same record (two inodes sharing
 * one, fsck "inode record number differs from its key"), or a leaf still
 * linked in a directory went to a new name.  Found by an audit of what
 * recovery frees.  Built by `make race` (ASan); no hook needed.
 */
#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "core/dir.h"
#include "core/ns-intent.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

void daxfs_race_point(const char *name, const void *p)
{
	(void)name;
	(void)p;
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	(void)ctx;
	fprintf(stderr, "  fsck: %s ino %llu off %#llx: %s\n", p->name,
		(unsigned long long)p->ino, (unsigned long long)p->off, p->msg);
}

struct tree {
	u64 v, w, s, sub, x;	/* inode numbers */
	u64 v_rec, sub_rec, sub_root;
	u64 v_leaf, w_leaf, s_leaf, x_leaf;
};

static u64 rec_off(struct daxfs_fs *fs, u64 ino)
{
	return (u64)((u8 *)t_ip(fs, ino) - fs->base);
}

static u64 leaf_of(struct daxfs_fs *fs, u64 dir, const char *name)
{
	struct daxfs_iref ref;
	struct daxfs_dent de;
	struct daxfs_op op;
	u32 len = (u32)strlen(name);

	CHECK_EQ(daxfs_op_begin(fs, &op), 0);
	CHECK_EQ(daxfs_inode_get(&op, dir, &ref), 0);
	CHECK_EQ(daxfs_dir_find(&op, &ref, name, len,
				daxfs_name_hash(fs, name, len), &de), 0);
	daxfs_op_end(&op);
	return de.leaf;
}

static void make_tree(struct daxfs_fs *fs, struct tree *t)
{
	CHECK_EQ(daxfs_mknod(fs, ROOT, "v", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &t->v), 0);
	CHECK_EQ(daxfs_mknod(fs, ROOT, "s", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &t->s), 0);
	CHECK_EQ(daxfs_mkdir(fs, ROOT, "sub", 3, 0755, 0, 0, &t->sub), 0);
	CHECK_EQ(daxfs_mknod(fs, t->sub, "w", 1, DAXFS_S_IFREG | 0644, 0, 0,
			     0, &t->w), 0);
	CHECK_EQ(daxfs_mkdir(fs, t->sub, "x", 1, 0755, 0, 0, &t->x), 0);
	t->v_rec = rec_off(fs, t->v);
	t->sub_rec = rec_off(fs, t->sub);
	t->sub_root = daxfs_load(&t_ip(fs, t->sub)->root);
	t->v_leaf = leaf_of(fs, ROOT, "v");
	t->s_leaf = leaf_of(fs, ROOT, "s");
	t->w_leaf = leaf_of(fs, t->sub, "w");
	t->x_leaf = leaf_of(fs, t->sub, "x");
}

static void garble(struct daxfs_fs *fs, u64 op, u64 a0, u64 a1, u64 a2,
		   u64 a3, u64 a4, u64 a5, u64 a6)
{
	struct daxfs_lane *ln = daxfs_lane_at(fs, fs->host, 3);
	const u64 a[7] = { a0, a1, a2, a3, a4, a5, a6 };
	int i;

	for (i = 0; i < 7; i++)
		daxfs_store(&ln->intent.a[i], a[i]);
	daxfs_store(&ln->intent.op, op);
}

static void one(const char *name)
{
	struct daxfs_fs A, B;
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_check_result res;
	struct daxfs_attr at;
	struct tree t;
	u64 ino, found;
	char n[8];
	int i;
	unsigned long fails = t_fail;

	CHECK_EQ(t_join(&B, region, REGION), 0);
	make_tree(&A, &t);
	if (!strcmp(name, "tmpfile"))
		garble(&B, DAXFS_INTENT_OPEN_PUT, 0, 0, 0, t.v_rec, 0, 0, 0);
	else if (!strcmp(name, "tmpfile2"))
		garble(&B, DAXFS_INTENT_OPEN_PUT, 0, t.w, 0, t.v_rec, 0, 0, 0);
	else if (!strcmp(name, "create0"))
		garble(&B, DAXFS_INTENT_RENAME, ROOT, 0, 0, t.sub_rec,
		       t.sub_root, 0, NS_META(NS_KIND_CREATE, 0, NS_FL_DIR));
	else if (!strcmp(name, "create4"))
		garble(&B, DAXFS_INTENT_RENAME, ROOT, t.x, t.x_leaf, 0, 0, 0,
		       NS_META(NS_KIND_CREATE, 4, 0));
	else if (!strcmp(name, "link0"))
		garble(&B, DAXFS_INTENT_RENAME, ROOT, t.v, t.w_leaf, 0, 0, 0,
		       NS_META(NS_KIND_LINK, 0, 0));
	else if (!strcmp(name, "rename0"))
		garble(&B, DAXFS_INTENT_RENAME, ROOT, ROOT, t.s_leaf, t.w_leaf,
		       0, t.v_leaf, NS_META(NS_KIND_RENAME, 0, 0));
	t_age(&A, B.host);
	CHECK_EQ(daxfs_recover_dead_hosts(&A), 1);
	/* reuse whatever was freed: records, leaves, trie roots */
	for (i = 0; i < 12; i++) {
		snprintf(n, sizeof(n), "n%d", i);
		CHECK_EQ(daxfs_mknod(&A, ROOT, n, (u32)strlen(n),
				     DAXFS_S_IFREG | 0644, 0, 0, 0, &ino), 0);
		snprintf(n, sizeof(n), "d%d", i);
		CHECK_EQ(daxfs_mkdir(&A, ROOT, n, (u32)strlen(n), 0755, 0, 0,
				     &ino), 0);
	}
	CHECK_EQ(daxfs_getattr(&A, t.v, &at), 0);
	CHECK_EQ(at.ino, t.v);
	CHECK_EQ(daxfs_getattr(&A, t.sub, &at), 0);
	CHECK_EQ(at.ino, t.sub);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "v", 1, &found), 0);
	CHECK_EQ(found, t.v);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "s", 1, &found), 0);
	CHECK_EQ(found, t.s);
	CHECK_EQ(daxfs_lookup(&A, t.sub, "w", 1, &found), 0);
	CHECK_EQ(found, t.w);
	CHECK_EQ(daxfs_lookup(&A, t.sub, "x", 1, &found), 0);
	CHECK_EQ(found, t.x);
	daxfs_host_leave(&A);
	memset(&res, 0, sizeof(res));
	t_fsck(region, REGION, false, report, NULL, &res);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR] + res.nr[DAXFS_CHK_FATAL], 0);
	fprintf(stderr, "%s: %s\n", name, t_fail == fails ? "ok" : "FAILED");
	t_region_free(region, REGION);
}

int main(void)
{
	one("tmpfile");
	one("tmpfile2");
	one("create0");
	one("create4");
	one("link0");
	one("rename0");
	return t_done();
}
