// SPDX-License-Identifier: GPL-2.0 OR MIT
/* File data across hosts: 4 threads, each its own struct daxfs_fs joined
 * as its own host on one shared region.  Appends (every record once and
 * intact), concurrent extending writers (size == max end, data intact),
 * and writers racing truncates (no errors, no leaked pages). */
#include <sched.h>
#include "tfile.h"

#define NT 4
#define REGION (128 * MiB)
#define REC 100			/* record size: straddles blocks */
#define NREC 3000		/* records per host */

struct targ {
	void *region;
	u64 ino;
	int id;
	u64 bad;
};

static void *append_thread(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u8 rec[REC];
	u64 i, k, pos;

	if (t_join_kept(&fs, &rn, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	for (i = 0; i < NREC; i++) {
		u32 sum = 0;

		memset(rec, 0, sizeof(rec));
		rec[0] = 0xA5;
		rec[1] = (u8)t->id;
		memcpy(rec + 2, &i, 8);
		for (k = 10; k < REC - 4; k++) {
			rec[k] = (u8)(t->id * 37 + i * 11 + k);
			sum += rec[k];
		}
		memcpy(rec + REC - 4, &sum, 4);
		if (t_append(&fs, t->ino, rec, REC, &pos) != REC || pos % REC)
			t->bad++;
	}
	t_leave_kept(&fs, &rn);
	return NULL;
}

static void test_append(void)
{
	struct t_renewer rn;
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkfile(&fs);
	struct targ t[NT];
	pthread_t th[NT];
	u64 total = (u64)NT * NREC * REC, i, k, bad = 0;
	u8 *all = malloc(total + 4096);
	u8 *seen = calloc(NT, NREC);
	int j;

	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, ino, j, 0 };
		pthread_create(&th[j], NULL, append_thread, &t[j]);
	}
	for (j = 0; j < NT; j++) {
		pthread_join(th[j], NULL);
		CHECK_EQ(t[j].bad, 0);
	}
	t_renew_stop(&rn);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->size), total);
	CHECK_EQ(t_pread(&fs, ino, all, total + 4096, 0), (s64)total);
	for (i = 0; i < total; i += REC) {
		u8 *rec = all + i;
		u32 sum = 0, want;
		u64 seq;

		memcpy(&seq, rec + 2, 8);
		for (k = 10; k < REC - 4; k++)
			sum += rec[k];
		memcpy(&want, rec + REC - 4, 4);
		if (rec[0] != 0xA5 || rec[1] >= NT || seq >= NREC || sum != want ||
		    seen[rec[1] * NREC + seq]++) {
			bad++;
			continue;
		}
	}
	for (i = 0; i < (u64)NT * NREC; i++)
		bad += seen[i] != 1;
	CHECK_EQ(bad, 0);
	free(all);
	free(seen);
	t_leave_kept(&fs, &rn);
	t_region_free(r, REGION);
}

/* Thread j writes chunks j, j + NT, j + 2NT ... of CH bytes each (not
 * block aligned), so every write extends the file past the others. */
#define CH 3001
#define NCH 2000

static void *extend_thread(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u8 buf[CH];
	u64 i;

	if (t_join_kept(&fs, &rn, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	for (i = (u64)t->id; i < (u64)NT * NCH; i += NT) {
		memset(buf, (int)(i % 255 + 1), CH);
		if (t_pwrite(&fs, t->ino, buf, CH, i * CH) != CH)
			t->bad++;
	}
	t_leave_kept(&fs, &rn);
	return NULL;
}

static void test_extend(void)
{
	struct t_renewer rn;
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkfile(&fs);
	struct targ t[NT];
	pthread_t th[NT];
	u64 total = (u64)NT * NCH * CH, i, bad = 0;
	u8 *all = malloc(total);
	int j;

	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, ino, j, 0 };
		pthread_create(&th[j], NULL, extend_thread, &t[j]);
	}
	for (j = 0; j < NT; j++) {
		pthread_join(th[j], NULL);
		CHECK_EQ(t[j].bad, 0);
	}
	t_renew_stop(&rn);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->size), total);
	CHECK_EQ(t_pread(&fs, ino, all, total, 0), (s64)total);
	for (i = 0; i < total; i++)
		bad += all[i] != (u8)((i / CH) % 255 + 1);
	CHECK_EQ(bad, 0);
	free(all);
	t_leave_kept(&fs, &rn);
	t_region_free(r, REGION);
}

/* Writers and a truncater race on one file; afterwards truncate to 0 and
 * reclaim: every page and node came back (no leak from lost races). */
static volatile int stop_flag;
static void sleep_renew(struct daxfs_fs *fs, int n);

static void *churn_writer(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	static u8 buf[64 * 1024];
	u64 seed = 12345 + (u64)t->id, n;
	s64 w;

	if (t_join_kept(&fs, &rn, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	for (n = 0; !__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE); n++) {
		u64 off = t_rand(&seed) % (8 * MiB), len = 1 + t_rand(&seed) % sizeof(buf);

		if (t->id == 0) {
			if (daxfs_truncate(&fs, t->ino, t_rand(&seed) % (6 * MiB)))
				t->bad++;
			continue;
		}
		/* the truncater may be starved on a loaded machine: appends
		 * alone must not fill the region (ENOSPC is not the point) */
		if (n % 5 == 0 && daxfs_load(&t_ip(&fs, t->ino)->size) < 16 * MiB)
			w = t_append(&fs, t->ino, buf, len % 5000 + 1, NULL);
		else if (n % 5 == 0)
			w = 1;
		else
			w = t_pwrite(&fs, t->ino, buf, len, off);
		/* ENOSPC: a thread descheduled inside an op holds the epoch
		 * while the truncater's frees wait in limbo; the front ends
		 * retry it (docs/reclaim.md "When the pool is empty") */
		if (w == -ENOSPC)
			continue;
		if (w <= 0) {
			if (t->bad++ < 3)
				fprintf(stderr, "  churn writer %d: write/append: %lld\n",
					t->id, (long long)w);
		}
		if (n % 7 == 0) {
			struct rcount rc = { 0 };

			if (daxfs_read(&fs, t->ino, off, len, rc_actor, &rc) < 0)
				t->bad++;
		}
	}
	t_leave_kept(&fs, &rn);
	return NULL;
}

static void test_race_truncate(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkfile(&fs), base;
	struct targ t[NT];
	pthread_t th[NT];
	struct daxfs_inode *ip = t_ip(&fs, ino);
	int j;

	base = t_usedbytes(&fs);
	stop_flag = 0;
	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, ino, j, 0 };
		pthread_create(&th[j], NULL, churn_writer, &t[j]);
	}
	sleep_renew(&fs, 40);		/* 2 s, our lease kept fresh */
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
	for (j = 0; j < NT; j++) {
		pthread_join(th[j], NULL);
		CHECK_EQ(t[j].bad, 0);
	}
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK_EQ(daxfs_load(&ip->blocks), 0);
	CHECK_EQ(daxfs_load(&ip->root), 0);
	{
		u64 end = t_usedbytes(&fs);

		fprintf(stderr, "  race: used base %llu end %llu\n",
			(unsigned long long)base, (unsigned long long)end);
		CHECK(end - base < 16 * 4096);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/*
 * Direct roots (a file of block 0 only, docs/files.md) across hosts.
 * Phase 1, per fresh file, all 4 hosts at once: host k writes its own
 * quarter of block 0 (racing to publish the direct root; losers copy into
 * the winner) and one block far out (racing to grow the tree from the
 * direct root to height 1..4).  Every byte must be there afterwards.
 * Phase 2: writers at block 0 and at growing offsets race a truncater
 * that mostly truncates to 0 (detaching the direct root or the whole tree)
 * and a final drop: no errors, and all space comes back.
 */
#define NDF 200
static const u64 far_blk[NT] = { 1, 600, 512ULL * 512 + 3,
				 512ULL * 512 * 512 + 9 };
static u64 dfiles[NDF];
static volatile u32 dbar;

static volatile u32 ddone;

static void dbarrier(u32 round)
{
	__atomic_add_fetch(&dbar, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&dbar, __ATOMIC_ACQUIRE) < (round + 1) * NT)
		sched_yield();		/* 4 hosts may share fewer cores */
}

/* Joins the threads, renewing the main host's lease meanwhile (a loaded
 * machine can take longer than a lease: then we'd be declared dead). */
static void join_renew(struct daxfs_fs *fs, pthread_t *th)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	int j;

	while (__atomic_load_n(&ddone, __ATOMIC_ACQUIRE) < NT) {
		nanosleep(&ts, NULL);
		CHECK_EQ(daxfs_host_renew(fs), 0);
	}
	for (j = 0; j < NT; j++)
		pthread_join(th[j], NULL);
}

/* Sleeps n x 50 ms, renewing the main host's lease. */
static void sleep_renew(struct daxfs_fs *fs, int n)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };

	while (n-- > 0) {
		nanosleep(&ts, NULL);
		CHECK_EQ(daxfs_host_renew(fs), 0);
	}
}

static void *direct_grow_thread(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u8 buf[1024];
	u32 i;

	if (t_join_kept(&fs, &rn, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	memset(buf, 0x30 + t->id, sizeof(buf));
	for (i = 0; i < NDF; i++) {
		dbarrier(i);
		/* half the hosts grow first, half publish block 0 first */
		if (t->id & 1) {
			if (t_pwrite(&fs, dfiles[i], buf, 100,
				     far_blk[t->id] * 4096 + 7) != 100)
				t->bad++;
		}
		if (t_pwrite(&fs, dfiles[i], buf, sizeof(buf),
			     (u64)t->id * 1024) != (s64)sizeof(buf))
			t->bad++;
		if (!(t->id & 1)) {
			if (t_pwrite(&fs, dfiles[i], buf, 100,
				     far_blk[t->id] * 4096 + 7) != 100)
				t->bad++;
		}
	}
	t_leave_kept(&fs, &rn);
	__atomic_add_fetch(&ddone, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static void *direct_churn_thread(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	static u8 buf[3 * 4096];
	u64 seed = 777 + (u64)t->id, n;
	s64 w;

	if (t_join_kept(&fs, &rn, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	for (n = 0; !__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE); n++) {
		u64 rnd = t_rand(&seed), off, len;

		if (t->id == 0) {
			u64 to = rnd % 4 ? 0 : rnd % 3 ? 100 : 9000;

			if (daxfs_truncate(&fs, t->ino, to))
				t->bad++;
			continue;
		}
		if (rnd % 3) {
			off = rnd % 4000;		/* inside block 0 */
			len = 1 + (rnd >> 20) % (4096 - off);
		} else {
			off = far_blk[(rnd >> 8) % NT] * 4096 + rnd % 4096;
			len = 1 + (rnd >> 20) % sizeof(buf);
		}
		w = t_pwrite(&fs, t->ino, buf, len, off);
		if (w != (s64)len)
			t->bad++;
		if (n % 5 == 0) {
			struct rcount rc = { 0 };

			if (daxfs_read(&fs, t->ino, 0, 8192, rc_actor, &rc) < 0)
				t->bad++;
		}
	}
	t_leave_kept(&fs, &rn);
	__atomic_add_fetch(&ddone, 1, __ATOMIC_ACQ_REL);
	return NULL;
}

static void test_direct_race(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 base, used, i, k, bad = 0;
	struct targ t[NT];
	pthread_t th[NT];
	u8 buf[4096];
	int j;

	for (i = 0; i < NDF; i++)
		dfiles[i] = t_mkfile(&fs);
	base = t_usedbytes(&fs);
	dbar = 0;
	ddone = 0;
	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, 0, j, 0 };
		pthread_create(&th[j], NULL, direct_grow_thread, &t[j]);
	}
	join_renew(&fs, th);
	for (j = 0; j < NT; j++)
		CHECK_EQ(t[j].bad, 0);
	for (i = 0; i < NDF; i++) {
		struct daxfs_inode *ip = t_ip(&fs, dfiles[i]);

		if (daxfs_load(&ip->blocks) != 1 + NT ||
		    (daxfs_load(&ip->root) & 7) != 4 ||
		    t_pread(&fs, dfiles[i], buf, 4096, 0) != 4096)
			bad++;
		for (k = 0; k < 4096; k++)
			bad += buf[k] != 0x30 + k / 1024;
		for (j = 0; j < NT; j++) {
			if (t_pread(&fs, dfiles[i], buf, 100,
				    far_blk[j] * 4096 + 7) != 100)
				bad++;
			for (k = 0; k < 100; k++)
				bad += buf[k] != 0x30 + j;
		}
	}
	CHECK_EQ(bad, 0);
	used = t_usedbytes(&fs) - base;
	/* per file: 5 data pages + 10 nodes (1 + 2 + 3 + 4 by level); a
	 * node or page that lost a race was freed, not kept */
	CHECK_EQ(used, (u64)NDF * 15 * 4096);
	for (i = 0; i < NDF; i++)
		CHECK_EQ(daxfs_truncate(&fs, dfiles[i], 0), 0);
	CHECK_EQ(t_usedbytes(&fs), base);

	/* phase 2 */
	for (i = 0; i < 2; i++) {
		struct daxfs_inode *ip = t_ip(&fs, dfiles[i]);

		stop_flag = 0;
		ddone = 0;
		for (j = 0; j < NT; j++) {
			t[j] = (struct targ){ r, dfiles[i], j, 0 };
			pthread_create(&th[j], NULL, direct_churn_thread, &t[j]);
		}
		sleep_renew(&fs, 20);
		if (i == 1) {
			/* the final drop while writers still write: they
			 * get -ENOENT / short counts from now on */
			struct daxfs_op op;

			daxfs_op_begin(&fs, &op);
			daxfs_file_drop_data(&op, ip);
			daxfs_op_end(&op);
			CHECK_EQ(daxfs_load(&ip->root), DAXFS_RADIX_SEALED);
		}
		__atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
		join_renew(&fs, th);
		for (j = 0; j < NT; j++)
			if (i == 0)
				CHECK_EQ(t[j].bad, 0);
		if (i == 0) {
			CHECK_EQ(daxfs_truncate(&fs, dfiles[i], 0), 0);
			CHECK_EQ(daxfs_load(&ip->root), 0);
		} else {
			CHECK_EQ(daxfs_load(&ip->root), DAXFS_RADIX_SEALED);
		}
		CHECK_EQ(daxfs_load(&ip->blocks), 0);
		used = t_usedbytes(&fs);
		fprintf(stderr, "  direct race %llu: used base %llu end %llu\n",
			(unsigned long long)i, (unsigned long long)base,
			(unsigned long long)used);
		CHECK_EQ(used, base);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_append);
	RUN(test_extend);
	RUN(test_race_truncate);
	RUN(test_direct_race);
	return t_done();
}
