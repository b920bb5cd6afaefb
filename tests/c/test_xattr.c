// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Extended attributes (docs/xattr.md): Linux's rules (names, flags,
 * ERANGE, E2BIG, ENOSPC), both set forms (inline and paged), unlink
 * freeing the set, fsck of good and hostile sets, atomic replace seen by
 * a reader on another host, and setters of different names on different
 * hosts losing no update.
 */
#include <unistd.h>

#include "tutil.h"
#include "tcheck.h"
#include "core/inode.h"

#define MiB (1ULL << 20)
#define REGION (64 * MiB)
#define ROOT 1ULL
#define S_REG (DAXFS_S_IFREG | 0644)

static void *region;
static struct daxfs_fs A, B;
static u8 big[DAXFS_XATTR_SIZE_MAX + 1];

struct probs {
	u32 xattr_errors, others;
};

static void on_problem(void *ctx, const struct daxfs_check_problem *p)
{
	struct probs *pr = ctx;

	if (p->code == DAXFS_CHK_XATTR && p->severity == DAXFS_CHK_ERROR)
		pr->xattr_errors++;
	else if (p->code != DAXFS_CHK_HOST_LIVE)
		pr->others++;
}

static void reclaim_all(void)
{
	daxfs_reclaim_all(&B);
	daxfs_reclaim_all(&A);
	daxfs_reclaim_all(&A);
}

static void fsck_clean(void)
{
	struct daxfs_check_result res;
	struct probs pr = { 0 };

	CHECK_EQ(t_fsck(region, REGION, false, on_problem, &pr, &res), 0);
	CHECK_EQ(pr.xattr_errors + pr.others, 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
}

static u64 mk(struct daxfs_fs *fs, const char *name, u32 mode)
{
	u64 ino = 0;

	CHECK_EQ(daxfs_mknod(fs, ROOT, name, strlen(name), mode, 0, 0, 0, &ino), 0);
	return ino;
}

static int set(struct daxfs_fs *fs, u64 ino, const char *n, const void *v,
	       u32 len, u32 flags)
{
	return daxfs_setxattr(fs, ino, n, strlen(n), v, len, flags);
}

static int get(struct daxfs_fs *fs, u64 ino, const char *n, void *buf, u32 size)
{
	return daxfs_getxattr(fs, ino, n, strlen(n), buf, size);
}

static void t_rules(void)
{
	char buf[512], name[300];
	u64 f = mk(&A, "rules", S_REG), l = 0;

	CHECK_EQ(set(&A, f, "user.a", "1", 1, 0), 0);
	CHECK_EQ(get(&B, f, "user.a", buf, sizeof(buf)), 1);
	CHECK_EQ(buf[0], '1');
	CHECK_EQ(set(&A, f, "user.a", "2", 1, DAXFS_XATTR_CREATE), -EEXIST);
	CHECK_EQ(set(&A, f, "user.b", "2", 1, DAXFS_XATTR_REPLACE), -ENODATA);
	CHECK_EQ(set(&A, f, "user.a", "22", 2, DAXFS_XATTR_REPLACE), 0);
	CHECK_EQ(get(&A, f, "user.a", NULL, 0), 2);
	CHECK_EQ(get(&A, f, "user.a", buf, 1), -ERANGE);
	CHECK_EQ(set(&A, f, "user.empty", "", 0, 0), 0);
	CHECK_EQ(get(&A, f, "user.empty", buf, sizeof(buf)), 0);
	CHECK_EQ(set(&A, f, "trusted.t", "t", 1, 0), 0);
	CHECK_EQ(set(&A, f, "security.s", "s", 1, 0), 0);
	CHECK_EQ(daxfs_listxattr(&B, f, NULL, 0),
		 sizeof("user.a") + sizeof("user.empty") + sizeof("trusted.t") +
		 sizeof("security.s"));
	CHECK_EQ(daxfs_listxattr(&B, f, buf, 5), -ERANGE);
	CHECK_EQ(daxfs_listxattr(&B, f, buf, sizeof(buf)), 39);
	CHECK(!memcmp(buf, "user.a\0user.empty\0trusted.t\0security.s\0", 39));
	CHECK_EQ(set(&A, f, "other.x", "1", 1, 0), -EOPNOTSUPP);
	CHECK_EQ(set(&A, f, "user.", "1", 1, 0), -EINVAL);
	CHECK_EQ(set(&A, f, "system.posix_acl_accessx", "1", 1, 0), -EOPNOTSUPP);
	CHECK_EQ(set(&A, f, DAXFS_XATTR_ACL_DEFAULT, "1", 1, 0), -EACCES);
	memset(name, 'n', sizeof(name));
	memcpy(name, "user.", 5);
	name[256] = 0;
	CHECK_EQ(set(&A, f, name, "1", 1, 0), -ERANGE);
	name[255] = 0;
	CHECK_EQ(set(&A, f, name, "1", 1, 0), 0);
	CHECK_EQ(get(&B, f, name, buf, sizeof(buf)), 1);
	CHECK_EQ(set(&A, f, "user.big", big, DAXFS_XATTR_SIZE_MAX + 1, 0), -E2BIG);
	CHECK_EQ(daxfs_removexattr(&B, f, "user.a", 6), 0);
	CHECK_EQ(daxfs_removexattr(&B, f, "user.a", 6), -ENODATA);
	CHECK_EQ(get(&A, f, "user.a", buf, sizeof(buf)), -ENODATA);
	/* user.* only on regular files and directories, as Linux */
	CHECK_EQ(daxfs_symlink(&A, ROOT, "ln", 2, "rules", 5, 0, 0, &l), 0);
	CHECK_EQ(set(&A, l, "user.a", "1", 1, 0), -EPERM);
	CHECK_EQ(get(&A, l, "user.a", buf, sizeof(buf)), -ENODATA);
	CHECK_EQ(set(&A, l, "trusted.a", "1", 1, 0), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "ln", 2), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "rules", 5), 0);
	CHECK_EQ(get(&A, f, "user.empty", buf, sizeof(buf)), -ENOENT);
	reclaim_all();
	fsck_clean();
}

/* Values of every size up to 64 KiB, inline and paged sets; the pool
 * gets every byte back once the file goes. */
static void t_sizes(void)
{
	static u8 out[DAXFS_XATTR_SIZE_MAX];
	static const u32 sizes[] = { 1, 100, 470, 471, 4000, 4096, 5000,
				     30000, DAXFS_XATTR_SIZE_MAX };
	char name[32];
	u64 before, f;
	u32 i, k;

	reclaim_all();
	before = t_used(&A);
	f = mk(&A, "sizes", S_REG);
	for (i = 0; i < sizeof(big); i++)
		big[i] = (u8)(i * 31 + 7);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			snprintf(name, sizeof(name), "user.s%u", i);
			CHECK_EQ(set(&A, f, name, big + k, sizes[i], 0), 0);
			CHECK_EQ(get(&B, f, name, out, sizeof(out)), sizes[i]);
			CHECK(!memcmp(out, big + k, sizes[i]));
		}
		fsck_clean();
	}
	/* the inode's whole set is capped: 3 more 64 KiB values fit, the
	 * next is -ENOSPC and changes nothing */
	for (i = 0; i < 8; i++) {
		int err;

		snprintf(name, sizeof(name), "user.more%u", i);
		err = set(&A, f, name, big, DAXFS_XATTR_SIZE_MAX, 0);
		if (err) {
			CHECK_EQ(err, -ENOSPC);
			CHECK_EQ(get(&A, f, name, NULL, 0), -ENODATA);
			break;
		}
	}
	CHECK(i >= 1 && i < 8);
	fsck_clean();
	CHECK_EQ(daxfs_unlink(&B, ROOT, "sizes", 5), 0);
	reclaim_all();
	CHECK_EQ(t_used(&A), before);
	fsck_clean();
}

/* A directory's attributes and default ACL; rmdir frees them. */
static void t_dir(void)
{
	u8 acl[28] = { 2, 0, 0, 0, 1, 0, 7, 0, 0xff, 0xff, 0xff, 0xff,
		       4, 0, 5, 0, 0xff, 0xff, 0xff, 0xff,
		       0x20, 0, 5, 0, 0xff, 0xff, 0xff, 0xff };
	u64 before, d = 0;
	char buf[64];

	reclaim_all();
	before = t_used(&A);
	CHECK_EQ(daxfs_mkdir(&A, ROOT, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(set(&A, d, "user.d", "dir", 3, 0), 0);
	CHECK_EQ(set(&A, d, DAXFS_XATTR_ACL_DEFAULT, acl, sizeof(acl), 0), 0);
	CHECK_EQ(get(&B, d, DAXFS_XATTR_ACL_DEFAULT, buf, sizeof(buf)), 28);
	CHECK_EQ(daxfs_rmdir(&B, ROOT, "d", 1), 0);
	reclaim_all();
	CHECK_EQ(t_used(&A), before);
	fsck_clean();
}

/* The key names a set fsck must not trust: reported, and -y drops it. */
static void t_hostile(void)
{
	struct daxfs_check_result res;
	struct daxfs_xattr_set *h;
	struct probs pr = { 0 };
	struct daxfs_op op;
	u64 f = mk(&A, "hostile", S_REG), v = 0;
	char buf[8];

	CHECK_EQ(set(&A, f, "user.h", "x", 1, 0), 0);
	CHECK_EQ(daxfs_op_begin(&A, &op), 0);
	CHECK_EQ(daxfs_ov_lookup(&op, daxfs_key(DAXFS_KEY_XATTR, f), &v), 0);
	daxfs_op_end(&op);
	h = daxfs_ptr(&A, v, sizeof(*h), 64);
	CHECK(h != NULL);
	h->bytes = 1u << 30;		/* runs far outside */
	CHECK_EQ(get(&B, f, "user.h", buf, sizeof(buf)), -EUCLEAN);
	CHECK_EQ(set(&B, f, "user.h", "y", 1, 0), -EUCLEAN);
	CHECK_EQ(t_fsck(region, REGION, false, on_problem, &pr, &res), 0);
	CHECK_EQ(pr.xattr_errors, 1);
	memset(&pr, 0, sizeof(pr));
	CHECK_EQ(t_fsck(region, REGION, true, on_problem, &pr, &res), 0);
	CHECK_EQ(pr.xattr_errors, 1);
	/* -f declared A and B dead: they join again */
	t_obs_detach(&A);
	t_obs_detach(&B);
	CHECK_EQ(t_join(&A, region, REGION), 0);
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(get(&B, f, "user.h", buf, sizeof(buf)), -ENODATA);
	CHECK_EQ(set(&B, f, "user.h", "y", 1, 0), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "hostile", 7), 0);
	reclaim_all();
	fsck_clean();
}

/* ---- the ACL evaluator ---- */

struct ace {
	u16 tag, perm;
	u32 id;
};

/* Linux's xattr layout: version 2, then the entries. */
static u32 acl_make(u8 *buf, const struct ace *e, u32 n)
{
	u32 i;

	buf[0] = 2;
	buf[1] = buf[2] = buf[3] = 0;
	for (i = 0; i < n; i++)
		memcpy(buf + 4 + 8 * i, &e[i], 8);
	return 4 + 8 * n;
}

static void t_acl(void)
{
	/* owner 100 rw, user 200 rwx, group 300 r, group 400 rw, mask rw,
	 * other none: user::rw- user:200:rwx group::r-- group:400:rw-
	 * mask::rw- other::--- */
	static const struct ace full[] = {
		{ 1, 6, ~0u }, { 2, 7, 200 }, { 4, 4, ~0u }, { 8, 6, 400 },
		{ 0x10, 6, ~0u }, { 0x20, 0, ~0u },
	};
	static const struct ace unsorted[] = {
		{ 1, 6, ~0u }, { 4, 4, ~0u }, { 2, 7, 200 }, { 0x10, 6, ~0u },
		{ 0x20, 0, ~0u },
	};
	static const struct ace nomask[] = {
		{ 1, 6, ~0u }, { 2, 7, 200 }, { 4, 4, ~0u }, { 0x20, 0, ~0u },
	};
	static const struct ace minimal[] = {
		{ 1, 6, ~0u }, { 4, 4, ~0u }, { 0x20, 4, ~0u },
	};
	u32 g400[] = { 400 }, g300[] = { 300 };
	struct daxfs_cred owner = { 100, 1, NULL, 0 };
	struct daxfs_cred named = { 200, 1, NULL, 0 };
	struct daxfs_cred grp = { 500, 300, NULL, 0 };
	struct daxfs_cred sup = { 500, 1, g400, 1 };
	struct daxfs_cred both = { 500, 1, g300, 1 };
	struct daxfs_cred other = { 500, 1, NULL, 0 };
	u8 acl[128];
	u32 len = acl_make(acl, full, 6), mode = 0;
	bool equiv = true;

	CHECK_EQ(daxfs_acl_valid(acl, len, &equiv), 0);
	CHECK(!equiv);
	CHECK_EQ(daxfs_acl_permission(&owner, 0100600, 100, 300, acl, len, 6), 0);
	CHECK_EQ(daxfs_acl_permission(&owner, 0100600, 100, 300, acl, len, 1), -EACCES);
	/* named user: rwx through mask rw- */
	CHECK_EQ(daxfs_acl_permission(&named, 0100600, 100, 300, acl, len, 6), 0);
	CHECK_EQ(daxfs_acl_permission(&named, 0100600, 100, 300, acl, len, 1), -EACCES);
	CHECK_EQ(daxfs_acl_permission(&grp, 0100600, 100, 300, acl, len, 4), 0);
	CHECK_EQ(daxfs_acl_permission(&grp, 0100600, 100, 300, acl, len, 2), -EACCES);
	CHECK_EQ(daxfs_acl_permission(&sup, 0100600, 100, 300, acl, len, 6), 0);
	/* a matching group that does not grant: denied, other not asked */
	CHECK_EQ(daxfs_acl_permission(&both, 0100604, 100, 300, acl, len, 2), -EACCES);
	CHECK_EQ(daxfs_acl_permission(&other, 0100600, 100, 300, acl, len, 4), -EACCES);
	CHECK_EQ(daxfs_acl_mode(acl, len, &mode), 0);
	CHECK_EQ(mode, 0660);
	/* without an ACL: the mode bits */
	CHECK_EQ(daxfs_acl_permission(&other, 0100604, 100, 300, NULL, 0, 4), 0);
	CHECK_EQ(daxfs_acl_permission(&grp, 0100640, 100, 300, NULL, 0, 2), -EACCES);
	/* Linux refuses these */
	len = acl_make(acl, unsorted, 5);
	CHECK_EQ(daxfs_acl_valid(acl, len, NULL), -EINVAL);
	len = acl_make(acl, nomask, 4);
	CHECK_EQ(daxfs_acl_valid(acl, len, NULL), -EINVAL);
	len = acl_make(acl, minimal, 3);
	CHECK_EQ(daxfs_acl_valid(acl, len, &equiv), 0);
	CHECK(equiv);
	acl[0] = 1;
	CHECK_EQ(daxfs_acl_valid(acl, len, NULL), -EINVAL);
	CHECK_EQ(daxfs_acl_valid(acl, len - 1, NULL), -EINVAL);
}

/* ---- hosts at once ---- */

#define NR_SETTERS 4
#define ROUNDS 300

struct worker {
	void *region;
	u64 ino;
	int id;
	volatile int *stop;
	u64 bad;
};

/* Value of round r of setter id: every byte the same, length varies. */
static u32 val_len(int id, u32 r)
{
	return 1 + (u32)((r * 977 + (u32)id * 131) % 9000);
}

static void *setter(void *arg)
{
	struct worker *w = arg;
	struct daxfs_fs fs;
	static __thread u8 v[9001];
	char name[16];
	u32 r, len;

	if (t_join(&fs, w->region, REGION))
		return (void *)1;
	snprintf(name, sizeof(name), "user.w%d", w->id);
	for (r = 1; r <= ROUNDS; r++) {
		len = val_len(w->id, r);
		memset(v, (int)(r & 0xff), len);
		if (set(&fs, w->ino, name, v, len, 0))
			w->bad++;
	}
	daxfs_host_leave(&fs);
	t_obs_detach(&fs);
	return NULL;
}

/* Is (len, first byte) the value of one of setter id's rounds? */
static bool round_of(int id, u32 len, u8 b)
{
	u32 r;

	for (r = b; r <= ROUNDS; r += 256)
		if (r && len == val_len(id, r))
			return true;
	return false;
}

/* Reads every setter's value over and over: each read is one round's
 * whole value (its length and its byte), never a mix. */
static void *reader(void *arg)
{
	struct worker *w = arg;
	static u8 v[9001];
	struct daxfs_fs fs;
	char name[16];
	int i, n, k;

	if (t_join(&fs, w->region, REGION))
		return (void *)1;
	while (!*w->stop) {
		for (i = 0; i < NR_SETTERS; i++) {
			snprintf(name, sizeof(name), "user.w%d", i);
			n = get(&fs, w->ino, name, v, sizeof(v));
			if (n == -ENODATA)
				continue;
			if (n <= 0 || !round_of(i, (u32)n, v[0])) {
				w->bad++;
				continue;
			}
			for (k = 1; k < n; k++)
				if (v[k] != v[0])
					w->bad++;
		}
	}
	daxfs_host_leave(&fs);
	t_obs_detach(&fs);
	return NULL;
}

static void t_hosts(void)
{
	struct worker w[NR_SETTERS + 1];
	pthread_t th[NR_SETTERS + 1];
	volatile int stop = 0;
	static u8 v[9001];
	char name[16];
	u64 f = mk(&A, "shared", S_REG);
	struct t_renewer ra, rb;
	int i, n;

	/* A and B only wait meanwhile: keep their leases */
	t_renew_start(&ra, &A);
	t_renew_start(&rb, &B);
	for (i = 0; i <= NR_SETTERS; i++) {
		w[i] = (struct worker){ region, f, i, &stop, 0 };
		pthread_create(&th[i], NULL, i < NR_SETTERS ? setter : reader,
			       &w[i]);
	}
	for (i = 0; i < NR_SETTERS; i++) {
		CHECK(pthread_join(th[i], NULL) == 0);
		CHECK_EQ(w[i].bad, 0);
	}
	stop = 1;
	CHECK(pthread_join(th[NR_SETTERS], NULL) == 0);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	CHECK_EQ(w[NR_SETTERS].bad, 0);
	/* no lost update: every setter's last value is there */
	for (i = 0; i < NR_SETTERS; i++) {
		snprintf(name, sizeof(name), "user.w%d", i);
		n = get(&A, f, name, v, sizeof(v));
		CHECK_EQ(n, val_len(i, ROUNDS));
		CHECK_EQ(v[0], ROUNDS & 0xff);
	}
	CHECK_EQ(daxfs_listxattr(&A, f, NULL, 0), NR_SETTERS * 8);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "shared", 6), 0);
	reclaim_all();
	fsck_clean();
}

/* A pool too small for the value: -ENOSPC and the old value stays. */
static void t_full(void)
{
	struct daxfs_fs s;
	void *r = t_setup(&s, 2 * MiB, NULL);
	u64 ino = 0;
	char buf[8];
	u32 i;
	int err = 0;

	CHECK_EQ(daxfs_mknod(&s, ROOT, "f", 1, S_REG, 0, 0, 0, &ino), 0);
	CHECK_EQ(set(&s, ino, "user.keep", "old", 3, 0), 0);
	for (i = 0; i < 200 && !err; i++) {
		char name[16];

		snprintf(name, sizeof(name), "user.f%u", i);
		err = set(&s, ino, name, big, DAXFS_XATTR_SIZE_MAX / 4, 0);
	}
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(daxfs_getxattr(&s, ino, "user.keep", 9, buf, sizeof(buf)), 3);
	CHECK(!memcmp(buf, "old", 3));
	daxfs_host_leave(&s);
	t_region_free(r, 2 * MiB);
}

/* A claim word naming a live host that holds no claim (a corrupt
 * region): a setter gives up with -EUCLEAN after a few leases instead of
 * spinning for ever; one naming a gone host is taken over at once. */
static void t_bogus_claim(void)
{
	struct daxfs_format_opts o = { .lease_ms = 100 };
	struct t_renewer rn;
	struct daxfs_fs s, t;
	struct daxfs_inode *ip;
	struct daxfs_op op;
	void *r = t_setup(&s, 16 * MiB, &o);
	u64 ino = 0;
	u32 live;

	CHECK_EQ(t_join(&t, r, 16 * MiB), 0);
	CHECK_EQ(daxfs_mknod(&s, ROOT, "f", 1, S_REG, 0, 0, 0, &ino), 0);
	CHECK_EQ(daxfs_op_begin(&s, &op), 0);
	CHECK_EQ(daxfs_inode_get_writable(&op, ino, &ip), 0);
	daxfs_op_end(&op);
	/* t's slot and generation, lane 31: t is alive and renewing */
	live = (t.host + 1) | 31u << DAXFS_XCLAIM_LANE_SHIFT |
	       (u32)(t.host_gen & DAXFS_XCLAIM_GEN_MASK) << DAXFS_XCLAIM_GEN_SHIFT;
	daxfs_store32(&ip->xattr_claim, live);
	t_renew_start(&rn, &t);
	CHECK_EQ(daxfs_setxattr(&s, ino, "user.a", 6, "1", 1, 0), -EUCLEAN);
	t_renew_stop(&rn);
	/* a slot that is FREE: stale, taken over */
	daxfs_store32(&ip->xattr_claim, 200 | 3u << DAXFS_XCLAIM_LANE_SHIFT);
	CHECK_EQ(daxfs_setxattr(&s, ino, "user.a", 6, "1", 1, 0), 0);
	CHECK_EQ(daxfs_load32(&ip->xattr_claim), 0);
	daxfs_host_leave(&t);
	daxfs_host_leave(&s);
	t_region_free(r, 16 * MiB);
}

int main(void)
{
	region = t_setup(&A, REGION, NULL);
	CHECK_EQ(t_join(&B, region, REGION), 0);
	RUN(t_rules);
	RUN(t_sizes);
	RUN(t_dir);
	RUN(t_hostile);
	RUN(t_acl);
	RUN(t_hosts);
	RUN(t_full);
	RUN(t_bogus_claim);
	return t_done();
}
