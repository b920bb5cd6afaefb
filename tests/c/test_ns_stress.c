// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Namespace under load: 100,000 entries in one directory, readdir
 * stability under concurrent change, and several hosts (threads, each
 * with its own struct daxfs_fs on the same region) racing creates,
 * renames and rmdir.
 */
#include "tutil.h"
#include "core/inode.h"
#include "core/dir.h"

#define MiB (1ULL << 20)
#define ROOT 1ULL
#define NHOSTS 4
#define REGION (512 * MiB)

static void *region;
static struct daxfs_fs hosts[NHOSTS];

static int mkf(struct daxfs_fs *fs, u64 dir, const char *n)
{
	u64 ino;

	return daxfs_mknod(fs, dir, n, strlen(n), DAXFS_S_IFREG | 0644, 0, 0, 0, &ino);
}

/* ---- readdir into a name -> count table ---- */

struct seen {
	u32 cap;
	u8 *cnt;		/* indexed by the number in the name */
	const char *prefix;
	u64 other;		/* names without the prefix */
	u32 stop_every, since;
	u64 total;
};

static int fill_seen(void *ctx, const char *name, u32 len, u64 ino, u32 dt,
		     u64 pos)
{
	struct seen *s = ctx;
	size_t pl = strlen(s->prefix);
	char buf[64];
	long v;

	if (s->stop_every && s->since++ == s->stop_every) {
		s->since = 0;
		return 1;
	}
	s->total++;
	if (pos < 2)
		return 0;
	if (len < pl + 1 || len >= sizeof(buf) || memcmp(name, s->prefix, pl)) {
		s->other++;
		return 0;
	}
	memcpy(buf, name + pl, len - pl);
	buf[len - pl] = 0;
	v = strtol(buf, NULL, 10);
	if (v >= 0 && (u32)v < s->cap && s->cnt[v] < 255)
		s->cnt[v]++;
	return 0;
}

static int list_seen(struct daxfs_fs *fs, u64 dir, struct seen *s)
{
	u64 pos = 0;
	u32 guard = 0;
	int err = 0;

	memset(s->cnt, 0, s->cap);
	s->other = 0;
	s->total = 0;
	s->since = 0;
	while (pos != DAXFS_POS_EOF && guard++ < 10000000 && !err)
		err = daxfs_readdir(fs, dir, &pos, fill_seen, s);
	return err;
}

/* ---- 100,000 entries ---- */

static void t_big_dir(void)
{
	struct daxfs_fs *fs = &hosts[0];
	const u32 n = 100000;
	struct seen s = { .cap = n, .prefix = "file-" };
	char name[32];
	u64 d, ino;
	u32 i, bad = 0, ones = 0;
	double t0, t1, t2, t3;
	struct daxfs_attr a;

	CHECK_EQ(daxfs_mkdir(fs, ROOT, "big", 3, 0755, 0, 0, &d), 0);
	t0 = t_now();
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "file-%u", i);
		bad += mkf(fs, d, name) != 0;
	}
	t1 = t_now();
	CHECK_EQ(bad, 0);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "file-%u", i);
		bad += daxfs_lookup(fs, d, name, strlen(name), &ino) != 0;
	}
	t2 = t_now();
	CHECK_EQ(bad, 0);
	s.cnt = calloc(n, 1);
	s.stop_every = 1000;
	CHECK_EQ(list_seen(fs, d, &s), 0);
	t3 = t_now();
	for (i = 0; i < n; i++)
		ones += s.cnt[i] == 1;
	CHECK_EQ(ones, n);
	CHECK_EQ(s.other, 0);
	CHECK_EQ(daxfs_getattr(fs, d, &a), 0);
	CHECK_EQ(a.size, n);
	printf("  100k: create %.2fs lookup %.2fs readdir %.2fs\n", t1 - t0,
	       t2 - t1, t3 - t2);
	CHECK(t1 - t0 < 20 && t2 - t1 < 20 && t3 - t2 < 20);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "file-%u", i);
		bad += daxfs_unlink(fs, d, name, strlen(name)) != 0;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(daxfs_rmdir(fs, ROOT, "big", 3), 0);
	free(s.cnt);
}

/* ---- readdir stability ---- */

static volatile int churn_stop;
static u64 churn_dir;

static void *churn(void *arg)
{
	struct daxfs_fs *fs = arg;
	char name[32];
	u64 seed = 12345, i = 0;

	while (!churn_stop) {
		u32 k = (u32)(t_rand(&seed) % 3000);

		snprintf(name, sizeof(name), "tmp-%u", k);
		if (mkf(fs, churn_dir, name) == -EEXIST)
			daxfs_unlink(fs, churn_dir, name, strlen(name));
		i++;
	}
	return (void *)(uintptr_t)i;
}

static void t_readdir_stable(void)
{
	const u32 n = 3000;
	struct seen s = { .cap = n, .prefix = "keep-" };
	char name[32];
	pthread_t th;
	u32 i, pass, ones, dups = 0;
	void *ops;

	CHECK_EQ(daxfs_mkdir(&hosts[0], ROOT, "stable", 6, 0755, 0, 0, &churn_dir), 0);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "keep-%u", i);
		CHECK_EQ(mkf(&hosts[0], churn_dir, name), 0);
	}
	s.cnt = calloc(n, 1);
	churn_stop = 0;
	pthread_create(&th, NULL, churn, &hosts[1]);
	for (pass = 0; pass < 6; pass++) {
		s.stop_every = 3 + pass * 5;
		CHECK_EQ(list_seen(&hosts[0], churn_dir, &s), 0);
		for (i = 0, ones = 0; i < n; i++) {
			ones += s.cnt[i] == 1;
			dups += s.cnt[i] > 1;
		}
		CHECK_EQ(ones, n);
	}
	churn_stop = 1;
	pthread_join(th, &ops);
	CHECK_EQ(dups, 0);
	printf("  churn ops during listing: %llu\n", (unsigned long long)(uintptr_t)ops);
	free(s.cnt);
}

/* ---- create races between hosts ---- */

static u64 race_dir;
static int race_ok[NHOSTS], race_exist[NHOSTS], race_other[NHOSTS];

static void *racer(void *arg)
{
	int h = (int)(uintptr_t)arg;
	char name[32];
	int i, err;

	for (i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "same-%d", i);
		err = mkf(&hosts[h], race_dir, name);
		if (!err)
			race_ok[h]++;
		else if (err == -EEXIST)
			race_exist[h]++;
		else
			race_other[h]++;
		snprintf(name, sizeof(name), "own-%d-%d", h, i);
		if (mkf(&hosts[h], race_dir, name))
			race_other[h]++;
	}
	return NULL;
}

static void t_create_race(void)
{
	pthread_t th[NHOSTS];
	struct seen s = { .cap = 2000, .prefix = "same-" };
	int h, ok = 0, ex = 0, other = 0;
	u32 i, ones = 0;
	struct daxfs_attr a;

	CHECK_EQ(daxfs_mkdir(&hosts[0], ROOT, "race", 4, 0755, 0, 0, &race_dir), 0);
	for (h = 0; h < NHOSTS; h++)
		pthread_create(&th[h], NULL, racer, (void *)(uintptr_t)h);
	for (h = 0; h < NHOSTS; h++) {
		pthread_join(th[h], NULL);
		ok += race_ok[h];
		ex += race_exist[h];
		other += race_other[h];
	}
	CHECK_EQ(ok, 2000);
	CHECK_EQ(ex, 2000 * (NHOSTS - 1));
	CHECK_EQ(other, 0);
	s.cnt = calloc(2000, 1);
	CHECK_EQ(list_seen(&hosts[2], race_dir, &s), 0);
	for (i = 0; i < 2000; i++)
		ones += s.cnt[i] == 1;
	CHECK_EQ(ones, 2000);
	CHECK_EQ(s.other, 2000 * NHOSTS);
	CHECK_EQ(daxfs_getattr(&hosts[3], race_dir, &a), 0);
	CHECK_EQ(a.size, 2000 * (NHOSTS + 1));
	free(s.cnt);
}

/* ---- rename storms ---- */

#define NFILES 300
#define NSUB 16
static u64 dA, dB;

static void *stormer(void *arg)
{
	int h = (int)(uintptr_t)arg;
	struct daxfs_fs *fs = &hosts[h];
	u64 seed = 777 + h;
	char n1[32], n2[32];
	int i, err, bad = 0;

	for (i = 0; i < 3000; i++) {
		u64 r = t_rand(&seed);
		u32 k = (u32)(r % NFILES);
		bool sub = (r >> 20) % 8 == 0;
		bool ab = (r >> 30) & 1;
		u64 s = ab ? dA : dB, d = ab ? dB : dA;

		if (sub)
			snprintf(n1, sizeof(n1), "sub-%u", k % NSUB);
		else
			snprintf(n1, sizeof(n1), "f-%u", k);
		memcpy(n2, n1, sizeof(n1));
		if ((r >> 40) % 4 == 0 && !sub) {
			/* exchange with another file of the other dir */
			snprintf(n2, sizeof(n2), "f-%u", (u32)((r >> 8) % NFILES));
			err = daxfs_rename(fs, s, n1, strlen(n1), d, n2, strlen(n2),
					   DAXFS_RENAME_EXCHANGE);
		} else {
			err = daxfs_rename(fs, s, n1, strlen(n1), d, n2, strlen(n2),
					   DAXFS_RENAME_NOREPLACE);
		}
		if (err && err != -ENOENT && err != -EEXIST)
			bad++;
	}
	return (void *)(uintptr_t)bad;
}

static void t_rename_storm(void)
{
	struct seen sa = { .cap = NFILES, .prefix = "f-" };
	struct seen sb = { .cap = NFILES, .prefix = "f-" };
	struct seen qa = { .cap = NSUB, .prefix = "sub-" };
	struct seen qb = { .cap = NSUB, .prefix = "sub-" };
	pthread_t th[NHOSTS];
	struct daxfs_attr a, b;
	u64 ino;
	char n[32];
	int h, bad = 0;
	u32 i, once = 0, subs_once = 0, nsubA = 0, nl_ok = 0;
	void *rv;

	CHECK_EQ(daxfs_mkdir(&hosts[0], ROOT, "A", 1, 0755, 0, 0, &dA), 0);
	CHECK_EQ(daxfs_mkdir(&hosts[0], ROOT, "B", 1, 0755, 0, 0, &dB), 0);
	for (i = 0; i < NFILES; i++) {
		snprintf(n, sizeof(n), "f-%u", i);
		CHECK_EQ(mkf(&hosts[0], i % 2 ? dA : dB, n), 0);
	}
	for (i = 0; i < NSUB; i++) {
		snprintf(n, sizeof(n), "sub-%u", i);
		CHECK_EQ(daxfs_mkdir(&hosts[0], dA, n, strlen(n), 0755, 0, 0, &ino), 0);
		snprintf(n, sizeof(n), "inner-%u", i);
		CHECK_EQ(mkf(&hosts[0], ino, n), 0);
	}
	for (h = 0; h < NHOSTS; h++)
		pthread_create(&th[h], NULL, stormer, (void *)(uintptr_t)h);
	for (h = 0; h < NHOSTS; h++) {
		pthread_join(th[h], &rv);
		bad += (int)(uintptr_t)rv;
	}
	CHECK_EQ(bad, 0);
	sa.cnt = calloc(NFILES, 1);
	sb.cnt = calloc(NFILES, 1);
	qa.cnt = calloc(NSUB, 1);
	qb.cnt = calloc(NSUB, 1);
	CHECK_EQ(list_seen(&hosts[1], dA, &sa), 0);
	CHECK_EQ(list_seen(&hosts[1], dB, &sb), 0);
	CHECK_EQ(list_seen(&hosts[1], dA, &qa), 0);
	CHECK_EQ(list_seen(&hosts[1], dB, &qb), 0);
	for (i = 0; i < NFILES; i++) {
		once += sa.cnt[i] + sb.cnt[i] == 1;
		snprintf(n, sizeof(n), "f-%u", i);
		if (!daxfs_lookup(&hosts[2], sa.cnt[i] ? dA : dB, n, strlen(n), &ino) &&
		    !daxfs_getattr(&hosts[2], ino, &a) && a.nlink == 1)
			nl_ok++;
	}
	for (i = 0; i < NSUB; i++) {
		subs_once += qa.cnt[i] + qb.cnt[i] == 1;
		nsubA += qa.cnt[i];
		snprintf(n, sizeof(n), "sub-%u", i);
		if (!daxfs_lookup(&hosts[2], qa.cnt[i] ? dA : dB, n, strlen(n), &ino)) {
			u64 p = 0;

			daxfs_lookup(&hosts[2], ino, "..", 2, &p);
			CHECK_EQ(p, qa.cnt[i] ? dA : dB);
		}
	}
	CHECK_EQ(once, NFILES);
	CHECK_EQ(nl_ok, NFILES);
	CHECK_EQ(subs_once, NSUB);
	CHECK_EQ(daxfs_getattr(&hosts[3], dA, &a), 0);
	CHECK_EQ(daxfs_getattr(&hosts[3], dB, &b), 0);
	CHECK_EQ(a.size + b.size, NFILES + NSUB);
	CHECK_EQ(a.size, sa.total - 2);
	CHECK_EQ(b.size, sb.total - 2);
	CHECK_EQ(a.nlink, 2 + nsubA);
	CHECK_EQ(b.nlink, 2 + NSUB - nsubA);
	CHECK_EQ(daxfs_load(daxfs_state_word(&hosts[0], rename_claim)), 0);
	free(sa.cnt);
	free(sb.cnt);
	free(qa.cnt);
	free(qb.cnt);
}

/* ---- rmdir vs create ---- */

static volatile int go;
static u64 rc_parent;
static int rc_rmdir, rc_create;

static void *rc_rm(void *arg)
{
	while (!go)
		;
	rc_rmdir = daxfs_rmdir(&hosts[1], rc_parent, "x", 1);
	return NULL;
}

static void *rc_mk(void *arg)
{
	u64 d = (u64)(uintptr_t)arg;

	while (!go)
		;
	rc_create = mkf(&hosts[2], d, "child");
	return NULL;
}

static void t_rmdir_race(void)
{
	pthread_t t1, t2;
	int i, bad = 0, rm_won = 0, mk_won = 0;
	u64 d, ino;

	CHECK_EQ(daxfs_mkdir(&hosts[0], ROOT, "rc", 2, 0755, 0, 0, &rc_parent), 0);
	for (i = 0; i < 300; i++) {
		CHECK_EQ(daxfs_mkdir(&hosts[0], rc_parent, "x", 1, 0755, 0, 0, &d), 0);
		go = 0;
		pthread_create(&t1, NULL, rc_rm, NULL);
		pthread_create(&t2, NULL, rc_mk, (void *)(uintptr_t)d);
		go = 1;
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		if (rc_rmdir == 0) {
			rm_won++;
			bad += rc_create != -ENOENT;
			bad += daxfs_lookup(&hosts[0], rc_parent, "x", 1, &ino) != -ENOENT;
		} else {
			mk_won++;
			bad += rc_rmdir != -ENOTEMPTY || rc_create != 0;
			bad += daxfs_unlink(&hosts[0], d, "child", 5) != 0;
			bad += daxfs_rmdir(&hosts[0], rc_parent, "x", 1) != 0;
		}
	}
	CHECK_EQ(bad, 0);
	printf("  rmdir won %d, create won %d\n", rm_won, mk_won);
	CHECK_EQ(daxfs_rmdir(&hosts[0], ROOT, "rc", 2), 0);
}

int main(void)
{
	struct daxfs_format_opts o = { .nr_buckets = 1 << 18 };
	struct t_renewer rn[NHOSTS];
	int h;

	region = t_setup(&hosts[0], REGION, &o);
	for (h = 1; h < NHOSTS; h++)
		if (t_join(&hosts[h], region, REGION)) {
			fprintf(stderr, "join failed\n");
			return 2;
		}
	/* most tests work through a few hosts while the rest idle */
	for (h = 0; h < NHOSTS; h++)
		t_renew_start(&rn[h], &hosts[h]);
	RUN(t_big_dir);
	RUN(t_readdir_stable);
	RUN(t_create_race);
	RUN(t_rename_storm);
	RUN(t_rmdir_race);
	for (h = 0; h < NHOSTS; h++)
		t_renew_stop(&rn[h]);
	return t_done();
}
