// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Symlink targets up to PATH_MAX - 1 bytes: both record forms (header
 * record up to DAXFS_SYMLINK_REC_MAX, bare page above), fsck, hostile
 * records, freeing, and the crash story of a creation (a dead creator's
 * record is freed by recovery).
 */
#include "tutil.h"
#include "core/inode.h"
#include "tcheck.h"
#include "core/dir.h"
#include "core/symlink.h"

#define MiB (1ULL << 20)
#define REGION (64 * MiB)
#define ROOT 1ULL
/* mirrors core/namei.c's intent encoding (docs/namespace.md) */
#define META(kind, step, fl) ((u64)(kind) | (u64)(step) << 8 | (u64)(fl) << 16)
#define K_CREATE 3

static void *region;
static struct daxfs_fs A, B;
static char tgt[DAXFS_SYMLINK_MAX + 2];

struct probs {
	u32 symlink_errors;
	u32 others;		/* any other problem but "a host is live" */
	u64 ino;		/* inode of the last symlink problem */
};

static void on_problem(void *ctx, const struct daxfs_check_problem *p)
{
	struct probs *pr = ctx;

	if (p->code == DAXFS_CHK_SYMLINK && p->severity == DAXFS_CHK_ERROR) {
		pr->symlink_errors++;
		pr->ino = p->ino;
	} else if (p->code != DAXFS_CHK_HOST_LIVE) {
		pr->others++;
	}
}

static void fsck(struct daxfs_check_result *res, struct probs *pr)
{
	memset(pr, 0, sizeof(*pr));
	CHECK_EQ(t_fsck(region, REGION, false, on_problem, pr, res), 0);
}

static void fsck_clean(void)
{
	struct daxfs_check_result res;
	struct probs pr;

	fsck(&res, &pr);
	CHECK_EQ(pr.symlink_errors + pr.others, 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
}

/* A target of len bytes, different for each length. */
static const char *target(u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		tgt[i] = 'a' + (char)((i * 7 + len) % 26);
	tgt[len] = 0;
	return tgt;
}

static int mkl(const char *name, u32 len, u64 *ino)
{
	return daxfs_symlink(&A, ROOT, name, strlen(name), target(len), len,
			     0, 0, ino);
}

static struct daxfs_inode *rec(u64 ino)
{
	struct daxfs_iref ref;
	struct daxfs_op op;

	CHECK_EQ(daxfs_op_begin(&A, &op), 0);
	CHECK_EQ(daxfs_inode_get(&op, ino, &ref), 0);
	daxfs_op_end(&op);
	return ref.ip;
}

static bool reads_back(u64 ino, u32 len)
{
	static char buf[DAXFS_SYMLINK_MAX + 16];

	target(len);
	memset(buf, 0, sizeof(buf));
	return daxfs_readlink(&A, ino, buf, sizeof(buf)) == (int)len &&
	       !memcmp(buf, tgt, len);
}

static void t_lengths(void)
{
	static const u32 lens[] = { 1, 504, 505, 4088, 4089, 4094, 4095 };
	struct daxfs_inode *ip;
	struct daxfs_symlink *sl;
	struct daxfs_attr at;
	char name[16], small[8];
	u64 ino[7], x, root;
	u32 i;

	for (i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "l%u", lens[i]);
		CHECK_EQ(mkl(name, lens[i], &ino[i]), 0);
	}
	for (i = 0; i < 7; i++) {
		CHECK(reads_back(ino[i], lens[i]));
		CHECK_EQ(daxfs_getattr(&A, ino[i], &at), 0);
		CHECK_EQ(at.size, lens[i]);
		/* a short buffer gets a prefix and the full length */
		CHECK_EQ(daxfs_readlink(&A, ino[i], small, sizeof(small)), lens[i]);
		ip = rec(ino[i]);
		root = daxfs_load(&ip->root);
		if (lens[i] <= DAXFS_SYMLINK_REC_MAX) {
			/* the form older code writes and reads, unchanged */
			CHECK_EQ(root & (DAXFS_OFF_ALIGN - 1), 0);
			sl = daxfs_ptr(&A, root, sizeof(*sl), DAXFS_OFF_ALIGN);
			CHECK(sl && sl->len == lens[i]);
		} else {
			CHECK_EQ(root & (DAXFS_PAGE_SIZE - 1), DAXFS_SYMLINK_BARE);
		}
	}
	CHECK_EQ(mkl("l4096", 4096, &x), -ENAMETOOLONG);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "l4096", 5, &x), -ENOENT);
	fsck_clean();
	for (i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "l%u", lens[i]);
		CHECK_EQ(daxfs_unlink(&A, ROOT, name, strlen(name)), 0);
		CHECK_EQ(daxfs_readlink(&A, ino[i], small, sizeof(small)), -ENOENT);
	}
	fsck_clean();
}

static void reclaim_all(void)
{
	daxfs_reclaim_all(&A);
}

/* Unlink gives the bare page back (after reclamation). */
static void t_free(void)
{
	u64 before, mid, ino;
	int round;

	/* warm up: the root's trie keeps its nodes */
	CHECK_EQ(mkl("fr", 4095, &ino), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "fr", 2), 0);
	reclaim_all();
	before = t_used(&A);
	for (round = 0; round < 3; round++) {
		CHECK_EQ(mkl("fr", 4095, &ino), 0);
		mid = t_used(&A);
		CHECK(mid >= before + DAXFS_PAGE_SIZE);
		CHECK_EQ(daxfs_unlink(&A, ROOT, "fr", 2), 0);
		reclaim_all();
		CHECK_EQ(t_used(&A), before);
	}
	fsck_clean();
}

/* Every corruption of a bare record's length or pointer is -EUCLEAN
 * (never an over-read) and an fsck error on that inode; undoing it
 * makes the symlink readable again. */
static void corrupt(u64 ino, u64 *word, u64 bad, u32 len)
{
	struct daxfs_check_result res;
	struct probs pr;
	u64 good = daxfs_load(word);
	char buf[16];

	daxfs_store(word, bad);
	CHECK_EQ(daxfs_readlink(&A, ino, buf, sizeof(buf)), -EUCLEAN);
	fsck(&res, &pr);
	CHECK_EQ(pr.symlink_errors, 1);
	CHECK_EQ(pr.ino, ino);
	daxfs_store(word, good);
	CHECK(reads_back(ino, len));
}

static void t_hostile(void)
{
	struct daxfs_inode *ip;
	struct daxfs_symlink *sl;
	u64 ino, sino, root, page;

	CHECK_EQ(mkl("h", 4095, &ino), 0);
	ip = rec(ino);
	root = daxfs_load(&ip->root);
	page = root & ~(DAXFS_PAGE_SIZE - 1);
	corrupt(ino, &ip->size, 4096, 4095);		/* past the page */
	corrupt(ino, &ip->size, 1ULL << 40, 4095);
	corrupt(ino, &ip->size, 4090, 4095);		/* no NUL there */
	corrupt(ino, &ip->size, 4088, 4095);		/* header-form length */
	corrupt(ino, &ip->root, page | 3, 4095);	/* unknown tag */
	corrupt(ino, &ip->root, page + 64 + DAXFS_SYMLINK_BARE, 4095);
	corrupt(ino, &ip->root, A.pool_end | DAXFS_SYMLINK_BARE, 4095);
	/* the header form: its length word */
	CHECK_EQ(mkl("hs", 4000, &sino), 0);
	ip = rec(sino);
	sl = daxfs_ptr(&A, daxfs_load(&ip->root), sizeof(*sl), DAXFS_OFF_ALIGN);
	CHECK(sl != NULL);
	if (sl) {	/* word 0 = len | reserved (0) << 32 */
		corrupt(sino, (u64 *)sl, DAXFS_SYMLINK_REC_MAX + 1, 4000);
		corrupt(sino, (u64 *)sl, 0, 4000);
	}
	CHECK_EQ(daxfs_unlink(&A, ROOT, "h", 1), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "hs", 2), 0);
	fsck_clean();
}

static void step(struct daxfs_op *op, u64 meta)
{
	daxfs_store(&op->lane->intent.a[6], meta);
}

static void make_old(struct daxfs_fs *fs)
{
	t_age(fs, fs->host);
}

/* B runs a symlink creation by hand (the steps of ns_create) and dies
 * before the name is published; recovery must free inode and page. */
static void t_crash_before_name(void)
{
	struct daxfs_inode *dp, *ip;
	struct daxfs_attr at;
	struct daxfs_op op;
	u64 before, ino, x;

	reclaim_all();
	before = t_used(&A);
	CHECK_EQ(daxfs_op_begin(&B, &op), 0);
	CHECK_EQ(daxfs_inode_get_writable(&op, ROOT, &dp), 0);
	daxfs_intent_arg(&op, 4, 0);
	daxfs_intent_arg(&op, 5, 0);
	daxfs_intent_arg(&op, 6, META(K_CREATE, 0, 0));
	daxfs_intent_set(&op, DAXFS_INTENT_RENAME, ROOT, 0, 0, 0);
	CHECK_EQ(daxfs_dir_count_add(dp), 0);
	step(&op, META(K_CREATE, 1, 0));
	CHECK_EQ(daxfs_inode_create(&op, DAXFS_S_IFLNK | 0777, 0, 0, 0, 1, ROOT,
				    &ino, &ip), 0);
	step(&op, META(K_CREATE, 3, 0));
	CHECK_EQ(daxfs_link_rec_store(&op, ip, target(4095), 4095), 0);
	CHECK_EQ(daxfs_load(&ip->root) & (DAXFS_PAGE_SIZE - 1), DAXFS_SYMLINK_BARE);
	/* published in root, so no longer named by the lane's hold
	 * (recovery would free it a second time) */
	CHECK_EQ(daxfs_load(&op.lane->pad[DAXFS_LANE_HOLD_PAGES]), 0);
	make_old(&B);
	CHECK_EQ(daxfs_recover_dead_hosts(&A), 1);
	CHECK_EQ(daxfs_getattr(&A, ino, &at), -ENOENT);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "x", 1, &x), -ENOENT);
	reclaim_all();
	CHECK_EQ(t_used(&A), before);
	fsck_clean();
	CHECK_EQ(t_join(&B, region, REGION), 0);
}

int main(void)
{
	region = t_setup(&A, REGION, NULL);
	CHECK_EQ(t_join(&B, region, REGION), 0);
	RUN(t_lengths);
	RUN(t_free);
	RUN(t_hostile);
	RUN(t_crash_before_name);
	return t_done();
}
