// SPDX-License-Identifier: GPL-2.0 OR MIT
/* File data across hosts: 4 threads, each its own struct daxfs_fs joined
 * as its own host on one shared region.  Appends (every record once and
 * intact), concurrent extending writers (size == max end, data intact),
 * and writers racing truncates (no errors, no leaked pages). */
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
	u8 rec[REC];
	u64 i, k, pos;

	if (t_join(&fs, t->region, REGION)) {
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
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_append(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkfile(&fs);
	struct targ t[NT];
	pthread_t th[NT];
	u64 total = (u64)NT * NREC * REC, i, k, bad = 0;
	u8 *all = malloc(total + 4096);
	u8 *seen = calloc(NT, NREC);
	int j;

	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, ino, j, 0 };
		pthread_create(&th[j], NULL, append_thread, &t[j]);
	}
	for (j = 0; j < NT; j++) {
		pthread_join(th[j], NULL);
		CHECK_EQ(t[j].bad, 0);
	}
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
	daxfs_host_leave(&fs);
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
	u8 buf[CH];
	u64 i;

	if (t_join(&fs, t->region, REGION)) {
		t->bad++;
		return NULL;
	}
	for (i = (u64)t->id; i < (u64)NT * NCH; i += NT) {
		memset(buf, (int)(i % 255 + 1), CH);
		if (t_pwrite(&fs, t->ino, buf, CH, i * CH) != CH)
			t->bad++;
	}
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_extend(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkfile(&fs);
	struct targ t[NT];
	pthread_t th[NT];
	u64 total = (u64)NT * NCH * CH, i, bad = 0;
	u8 *all = malloc(total);
	int j;

	for (j = 0; j < NT; j++) {
		t[j] = (struct targ){ r, ino, j, 0 };
		pthread_create(&th[j], NULL, extend_thread, &t[j]);
	}
	for (j = 0; j < NT; j++) {
		pthread_join(th[j], NULL);
		CHECK_EQ(t[j].bad, 0);
	}
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->size), total);
	CHECK_EQ(t_pread(&fs, ino, all, total, 0), (s64)total);
	for (i = 0; i < total; i++)
		bad += all[i] != (u8)((i / CH) % 255 + 1);
	CHECK_EQ(bad, 0);
	free(all);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* Writers and a truncater race on one file; afterwards truncate to 0 and
 * reclaim: every page and node came back (no leak from lost races). */
static volatile int stop_flag;

static void *churn_writer(void *a)
{
	struct targ *t = a;
	struct daxfs_fs fs;
	static u8 buf[64 * 1024];
	u64 seed = 12345 + (u64)t->id, n;
	s64 w;

	if (t_join(&fs, t->region, REGION)) {
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
		if (n % 5 == 0)
			w = t_append(&fs, t->ino, buf, len % 5000 + 1, NULL);
		else
			w = t_pwrite(&fs, t->ino, buf, len, off);
		if (w <= 0)
			t->bad++;
		if (n % 7 == 0) {
			struct rcount rc = { 0 };

			if (daxfs_read(&fs, t->ino, off, len, rc_actor, &rc) < 0)
				t->bad++;
		}
	}
	daxfs_host_leave(&fs);
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
	{
		struct timespec ts = { 2, 0 };

		nanosleep(&ts, NULL);
	}
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

int main(void)
{
	RUN(test_append);
	RUN(test_extend);
	RUN(test_race_truncate);
	return t_done();
}
