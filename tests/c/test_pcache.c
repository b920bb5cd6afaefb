// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Shared page cache (split mode), core level: several hosts (threads with
 * their own struct daxfs_fs on one shared mapping) read base files whose
 * data lives in "backing files" simulated by a callback that synthesises
 * each byte from its offset and counts every backing read.
 *
 * Covered: correct data (hits, misses, eviction under pressure, > 4 GiB
 * offsets), copy-on-write into the overlay, no duplicate fills across
 * hosts, pinned slots never evicted, hosts without backing access served
 * by hosts with access (and a bounded error when nobody serves), a host
 * dying mid-fill or while pinning, identity check of backing files,
 * statistics and the checker; and a bounded wait whose wall clock is
 * stepped back by an hour (clock_gettime interposed: tclock.h).
 */
#include "tfile.h"
#include "tbase.h"
#include "tclock.h"
#include "core/pcache.h"

#define REGION		(48 * MiB)
#define BSIZE		(64 * 1024)
#define F1_PAGES	300ULL			/* ino 2: backing 0 */
#define F1_SIZE		(F1_PAGES * 4096 - 123)
#define F2_SIZE		(5 * GiB + 777)		/* ino 3: backing 1, sparse */
#define BK0_SIZE	(4096 + F1_PAGES * 4096)
#define BK1_SIZE	(4096 + 5 * GiB + 4096)

/* ---- the simulated backing store ---- */

static u64 bk_reads[2][F1_PAGES + 8];	/* per page of backing 0 / 1 (mod) */
static u64 bk_total;
static volatile int bk_block;		/* reads spin while set */
static volatile int bk_blocked;		/* a read is spinning */
static volatile int bk_fail;		/* reads fail with this errno */
static __thread int tl_block_me;	/* this thread's reads hang */
static void *r_global;

static u64 word_at(u32 idx, u64 off)
{
	return daxfs_mix64(off ^ ((u64)idx << 60) ^ 0x5555);
}

static void fill_expected(u32 idx, u64 off, u8 *dst, u64 len)
{
	u64 i, cur = ~0ULL, w = 0;

	for (i = 0; i < len; i++) {
		u64 o = off + i;

		if ((o & ~7ULL) != cur) {
			cur = o & ~7ULL;
			w = word_at(idx, cur);
		}
		dst[i] = (u8)(w >> ((o & 7) * 8));
	}
}

static int n_complaints;

static int bk_read(void *ctx, u32 idx, u64 off, void *dst, u32 len)
{
	u64 size = idx ? BK1_SIZE : BK0_SIZE, pg = off >> 12;

	(void)ctx;
	__atomic_fetch_add(&bk_total, 1, __ATOMIC_SEQ_CST);
	if (idx < 2)
		__atomic_fetch_add(&bk_reads[idx][pg % (F1_PAGES + 8)], 1,
				   __ATOMIC_SEQ_CST);
	if (bk_block && tl_block_me) {
		bk_blocked = 1;
		while (bk_block)
			usleep(1000);
	}
	if (bk_fail)
		return -bk_fail;
	memset(dst, 0, len);
	if (off < size)
		fill_expected(idx, off, dst, size - off < len ? size - off : len);
	return 0;
}

static const struct daxfs_backing_ops bk_ops = { .read = bk_read };

static void bk_reset(void)
{
	memset(bk_reads, 0, sizeof(bk_reads));
	bk_total = 0;
	bk_block = 0;
	bk_blocked = 0;
	bk_fail = 0;
}

/* ---- region with a split-mode base image ---- */

static struct daxfs_backing_desc descs[2];
static u64 g_pc_size;
static u32 g_lease = 10000;

static void *setup(struct daxfs_fs *fs, u64 cache_pages, u32 window)
{
	struct daxfs_format_opts o = { .base_size = BSIZE, .root_ino = 1,
				       .first_dyn_ino = 4 };
	void *r = t_region(REGION);
	struct daxfs_base_inode *bi;
	struct daxfs_base_dirent *de;
	u8 *b;
	u64 i;
	int err;

	memset(descs, 0, sizeof(descs));
	descs[0].size = BK0_SIZE;
	descs[1].size = BK1_SIZE;
	for (i = 0; i < 16; i++) {
		descs[0].id[i] = (u8)(i + 1);
		descs[1].id[i] = (u8)(i + 101);
	}
	g_pc_size = (cache_pages + 4) * 4096;
	o.pcache_size = g_pc_size;
	o.pcache_window = window;
	o.nr_backing = 2;
	o.backing = descs;
	o.lease_ms = g_lease;
	b = t_format_base(r, REGION, &o);
	bi = (void *)(b + 4096);
	de = (void *)(b + 8192);
	bi[0].mode = DAXFS_S_IFDIR | 0755;
	bi[0].nlink = 2;
	bi[0].count = 2;
	bi[0].parent = 1;
	bi[1].mode = DAXFS_S_IFREG | 0644;
	bi[1].nlink = 1;
	bi[1].size = F1_SIZE;
	bi[1].data = 4096;
	bi[1].count = 0;
	bi[2].mode = DAXFS_S_IFREG | 0644;
	bi[2].nlink = 1;
	bi[2].size = F2_SIZE;
	bi[2].data = 4096;
	bi[2].count = 1;
	t_base_dirent(de, 0, "a", 2, 8);
	t_base_dirent(de, 1, "b", 3, 8);
	t_base_header(b, 3, 4096, 2, 8192, 16384, BSIZE - 16384, DAXFS_BASE_F_BACKING);
	err = daxfs_fs_open(fs, r, REGION, DAXFS_FS_VALIDATE);
	if (!err)
		t_obs_attach(fs);
	if (!err)
		err = daxfs_host_join(fs, "t0", 1, DAXFS_HOST_KIND_USER);
	if (err) {
		fprintf(stderr, "open failed: %d\n", err);
		exit(2);
	}
	daxfs_pcache_set_backing(fs, &bk_ops, NULL, 3, 2000);
	bk_reset();
	return r;
}

/* Another host on the same region. reach = 0: no backing access. */
static void host_open(struct daxfs_fs *fs, void *r, const char *name, u64 reach,
		      u32 timeout_ms)
{
	int err = daxfs_fs_open(fs, r, REGION, 0);

	if (!err)
		t_obs_attach(fs);
	if (!err)
		err = daxfs_host_join(fs, name, 2, DAXFS_HOST_KIND_USER);
	if (err) {
		fprintf(stderr, "host open failed: %d\n", err);
		exit(2);
	}
	daxfs_pcache_set_backing(fs, reach ? &bk_ops : NULL, NULL, reach, timeout_ms);
}

static void teardown(struct daxfs_fs *fs, void *r)
{
	daxfs_pcache_detach(fs);
	daxfs_host_leave(fs);
	t_region_free(r, REGION);
}

/* Reads [off, off + len) of ino and compares with the backing content
 * (file 2 = backing 0 from 4096, file 3 = backing 1 from 4096). */
static int check_range(struct daxfs_fs *fs, u64 ino, u64 off, u64 len)
{
	static __thread u8 got[2 << 20], want[2 << 20];
	u32 idx = ino == 2 ? 0 : 1;
	s64 n = t_pread(fs, ino, got, len, off);

	if (n != (s64)len) {
		if (n_complaints++ < 5)
			fprintf(stderr, "read ino %llu off %llu len %llu: %lld\n",
			(unsigned long long)ino, (unsigned long long)off,
			(unsigned long long)len, (long long)n);
		return -1;
	}
	fill_expected(idx, 4096 + off, want, len);
	if (memcmp(got, want, len)) {
		if (n_complaints++ < 5)
			fprintf(stderr, "data mismatch ino %llu off %llu\n",
			(unsigned long long)ino, (unsigned long long)off);
		return -1;
	}
	return 0;
}

static struct daxfs_pcache_stats stats(struct daxfs_fs *fs)
{
	struct daxfs_pcache_stats st;

	daxfs_pcache_stats(fs, &st);
	return st;
}

static s64 check_clean(struct daxfs_fs *fs)
{
	struct daxfs_pcache_report rep;

	return daxfs_pcache_check(fs, false, &rep);
}

/* ------------------------------------------------------------------ */

static void test_basic(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 512, 32);
	struct daxfs_pcache_stats st;
	u8 tail[200];
	u64 reads;

	CHECK_EQ(check_range(&fs, 2, 0, 128 * 1024), 0);
	CHECK_EQ(bk_total, 32);
	/* again: all hits */
	CHECK_EQ(check_range(&fs, 2, 0, 128 * 1024), 0);
	CHECK_EQ(bk_total, 32);
	/* unaligned, crossing pages, up to EOF (short read at EOF) */
	CHECK_EQ(check_range(&fs, 2, 5000, 70000), 0);
	CHECK_EQ(t_pread(&fs, 2, tail, sizeof(tail), F1_SIZE - 100), 100);
	CHECK_EQ(t_pread(&fs, 2, tail, sizeof(tail), F1_SIZE), 0);
	CHECK_EQ(check_range(&fs, 2, 0, F1_SIZE), 0);
	reads = bk_total;
	CHECK_EQ(reads, F1_PAGES);
	st = stats(&fs);
	CHECK_EQ(st.valid, F1_PAGES);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.pins, 0);
	CHECK_EQ(st.fills, F1_PAGES);
	CHECK_EQ(check_clean(&fs), 0);
	teardown(&fs, r);
}

/* > 4 GiB offsets in a backing file: pages around 4 GiB and at the end */
static void test_big(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 256, 32);
	u8 tail[1000];

	CHECK_EQ(check_range(&fs, 3, 4 * GiB - 6000, 20000), 0);
	CHECK_EQ(check_range(&fs, 3, 5 * GiB - 4096, 4096), 0);
	CHECK_EQ(t_pread(&fs, 3, tail, sizeof(tail), F2_SIZE - 500), 500);
	CHECK_EQ(check_range(&fs, 3, F2_SIZE - 777, 777), 0);
	CHECK_EQ(check_range(&fs, 3, 123, 9000), 0);
	teardown(&fs, r);
}

/* Writes go to the overlay; reads prefer overlay, then cache/backing. */
static void test_cow(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 256, 32);
	u8 buf[12288], want[12288];
	u64 before;

	memset(buf, 0xAB, 100);
	CHECK_EQ(t_pwrite(&fs, 2, buf, 100, 4096 + 10), 100);
	CHECK_EQ(t_pread(&fs, 2, buf, 12288, 0), 12288);
	fill_expected(0, 4096, want, 12288);
	memset(want + 4096 + 10, 0xAB, 100);
	CHECK(!memcmp(buf, want, 12288));
	/* the backing page was read once, the CoW page lives in the pool */
	CHECK_EQ(bk_reads[0][2], 1);
	before = bk_total;
	CHECK_EQ(t_pread(&fs, 2, buf, 12288, 0), 12288);
	CHECK(!memcmp(buf, want, 12288));
	CHECK_EQ(bk_total, before);
	/* drop the cache: the overlay page still wins */
	CHECK(daxfs_pcache_evict_all(&fs) > 0);
	CHECK_EQ(t_pread(&fs, 2, buf, 12288, 0), 12288);
	CHECK(!memcmp(buf, want, 12288));
	/* truncate then extend: no backing bytes come back */
	CHECK_EQ(daxfs_truncate(&fs, 2, 5000), 0);
	CHECK_EQ(daxfs_truncate(&fs, 2, 20000), 0);
	CHECK_EQ(t_pread(&fs, 2, buf, 12288, 4096), 12288);
	CHECK(!memcmp(buf, want + 4096, 904));
	memset(want, 0, sizeof(want));
	CHECK(!memcmp(buf + 904, want, 12288 - 904));
	/* map_block copies a backed block up through the cache */
	{
		u64 off = 0;
		u8 *p;

		CHECK_EQ(daxfs_map_block(&fs, 3, 100, false, &off), 0);
		p = daxfs_ptr(&fs, off, 4096, 4096);
		CHECK(p != NULL);
		fill_expected(1, 4096 + 100 * 4096, want, 4096);
		if (p)
			CHECK(!memcmp(p, want, 4096));
	}
	CHECK_EQ(check_clean(&fs), 0);
	teardown(&fs, r);
}

/* ---- many hosts at once ---- */

struct hctx {
	void *r;
	int id;
	u64 reach;
	u64 iters;
	u64 range_pages;	/* read pages [0, range) */
	bool write;
	int errors;
};

static void *reader_host(void *arg)
{
	struct hctx *c = arg;
	struct daxfs_fs fs;
	char name[16];
	u64 s = 0x1234567ULL * (c->id + 1), k;

	snprintf(name, sizeof(name), "h%d", c->id);
	host_open(&fs, c->r, name, c->reach, 5000);
	for (k = 0; k < c->iters; k++) {
		u64 pg = t_rand(&s) % c->range_pages;
		u64 len = 1 + t_rand(&s) % 9000;
		u64 off = pg * 4096 + t_rand(&s) % 4096;

		if (off >= F1_SIZE)
			continue;
		if (off + len > F1_SIZE)
			len = F1_SIZE - off;
		if (check_range(&fs, 2, off, len))
			c->errors++;
	}
	daxfs_pcache_detach(&fs);
	daxfs_host_leave(&fs);
	return NULL;
}

static void run_hosts(void *r, int n, u64 iters, u64 range, u64 reach)
{
	pthread_t th[16];
	struct hctx c[16];
	int i;

	for (i = 0; i < n; i++) {
		c[i] = (struct hctx){ .r = r, .id = i + 1, .reach = reach,
				      .iters = iters, .range_pages = range };
		pthread_create(&th[i], NULL, reader_host, &c[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ(c[i].errors, 0);
	}
}

/* Working set fits: every backing page read once for the whole cluster. */
static void test_no_dup_fills(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 1024, 32);
	struct daxfs_pcache_stats st;
	u64 i, max = 0;

	run_hosts(r, 8, 3000, F1_PAGES, 1);
	for (i = 0; i < F1_PAGES + 8; i++)
		if (bk_reads[0][i] > max)
			max = bk_reads[0][i];
	CHECK_EQ(max, 1);
	st = stats(&fs);
	CHECK_EQ(st.fills, bk_total);
	CHECK_EQ(st.evictions, 0);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.pins, 0);
	CHECK_EQ(check_clean(&fs), 0);
	printf("  8 hosts, %llu distinct pages touched, %llu backing reads\n",
	       (unsigned long long)st.valid, (unsigned long long)bk_total);
	teardown(&fs, r);
}

/* Working set 4x the cache: evictions, and still correct data. */
static void test_pressure(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 64, 16);
	struct daxfs_pcache_stats st;

	run_hosts(r, 8, 2000, F1_PAGES, 1);
	st = stats(&fs);
	CHECK(st.evictions > 0);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.pins, 0);
	CHECK(st.hand > 0);
	CHECK_EQ(check_clean(&fs), 0);
	printf("  64 slots, %llu fills, %llu evictions, hand %llu\n",
	       (unsigned long long)st.fills, (unsigned long long)st.evictions,
	       (unsigned long long)st.hand);
	teardown(&fs, r);
}

/* A pinned slot keeps its page through heavy pressure by other hosts. */
static void test_pinned_not_evicted(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 64, 16);
	struct daxfs_pcache_pin pin;
	struct daxfs_op op;
	const u8 *p = NULL;
	u8 want[4096];
	u64 slot;

	daxfs_op_begin(&fs, &op);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 1 + 7, &pin, &p), 0);
	daxfs_op_end(&op);
	slot = pin.slot;
	CHECK(slot != DAXFS_PC_NO_SLOT);
	fill_expected(0, 8 * 4096, want, 4096);
	run_hosts(r, 6, 2000, F1_PAGES, 1);
	CHECK(stats(&fs).evictions > 0);
	CHECK(p && !memcmp(p, want, 4096));
	CHECK_EQ(fs.pc.slots[slot].tag, (1ULL << 48) | 8);
	CHECK_EQ(fs.pc.slots[slot].state & 3, DAXFS_PC_VALID);
	CHECK_EQ(stats(&fs).pins, 1);
	daxfs_pcache_put(&fs, &pin);
	CHECK_EQ(stats(&fs).pins, 0);
	CHECK(daxfs_pcache_evict_all(&fs) > 0);
	CHECK_EQ(stats(&fs).valid, 0);
	teardown(&fs, r);
}

/* Hosts without backing access: served by a host with access. */
static volatile int serve_stop;

static void *server(void *arg)
{
	struct daxfs_fs *fs = arg;
	u64 seen = ~0ULL;

	while (!serve_stop) {
		u64 s = daxfs_pcache_req_seq(fs);

		if (s != seen) {
			seen = s;
			daxfs_pcache_serve(fs, 1000);
		}
		usleep(200);
	}
	return NULL;
}

static void test_no_access(void)
{
	struct daxfs_fs fs, nf;
	void *r = setup(&fs, 256, 32);
	pthread_t th;
	struct daxfs_pcache_stats st;
	u8 buf[8192];
	double t0;
	s64 n;

	/* nobody serves: a bounded wait, then -ETIMEDOUT, nothing wedged
	 * (the bound is generous: only "not forever" is tested, a loaded
	 * machine may stretch the 300 ms wait a lot) */
	host_open(&nf, r, "noacc", 0, 300);
	t0 = t_now();
	n = t_pread(&nf, 2, buf, 4096, 0);
	CHECK_EQ(n, -ETIMEDOUT);
	CHECK(t_now() - t0 < 60.0);
	st = stats(&fs);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(st.timeouts, 1);
	/* already cached pages are readable without access */
	CHECK_EQ(check_range(&fs, 2, 40960, 8192), 0);
	CHECK_EQ(check_range(&nf, 2, 40960, 8192), 0);
	/* with a server: every page readable, backing read once each */
	serve_stop = 0;
	pthread_create(&th, NULL, server, &fs);
	daxfs_host_leave(&nf);
	bk_reset();
	run_hosts(r, 4, 500, 100, 0);
	serve_stop = 1;
	pthread_join(th, NULL);
	st = stats(&fs);
	CHECK(st.served > 0);
	CHECK_EQ(st.pending, 0);
	CHECK(bk_total <= 100);
	CHECK_EQ(check_clean(&fs), 0);
	printf("  %llu requests served for hosts without access\n",
	       (unsigned long long)st.served);
	teardown(&fs, r);
}

/*
 * Makes a host that renews nothing look dead NOW: its heartbeat is set
 * two leases into the past.  The tests used to make hosts die by a short
 * real lease (200-300 ms) and sleeping past it, which a loaded machine
 * breaks both ways: the live hosts' renewer threads (and the worker
 * hosts, which renew only every 64 ops) can be starved past such a lease
 * and get declared dead themselves.  With the normal lease (10 s) for
 * everyone and the victim aged explicitly, nothing depends on timing.
 */
static void age_host(struct daxfs_fs *victim)
{
	struct daxfs_host *h = daxfs_host_at(victim, victim->host);

	(void)h;
	t_age(victim, victim->host);
}

/* A host dies in the middle of a fill: the others take the slot over
 * once its lease runs out; nobody waits forever. */
struct dying {
	struct daxfs_fs fs;
	s64 ret;
};

static void *dying_filler(void *arg)
{
	struct dying *d = arg;
	u8 buf[4096];

	tl_block_me = 1;	/* this host's backing reads hang */
	d->ret = t_pread(&d->fs, 2, buf, 4096, 4096 * 20);
	return NULL;
}

static void wait_too_long(int sig)
{
	static const char msg[] = "test_wall_clock_step_back: the wait outlived 15 s\n";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(3);
	_exit(1);
}

/* The same bounded wait with nobody serving, but the wall clock steps back
 * an hour 100 ms into the wait: it still ends at its 300 ms bound.  With
 * the deadline on the wall clock only the loop's iteration cap ended it,
 * 47 s later on the build machine, so WALL_WAIT_MAX_S is far above a
 * loaded machine's 300 ms and far below that. */
#define WALL_WAIT_MAX_S	15
static void test_wall_clock_step_back(void)
{
	struct daxfs_fs fs, nf;
	void *r = setup(&fs, 256, 32);
	u8 buf[4096];
	s64 n, first, second;
	double t0;

	/* the shim steps: once its moment passed, an hour behind */
	first = daxfs_now_ns();
	t_wall_step_at_ns = t_mono_ns_raw();
	second = daxfs_now_ns();
	t_wall_step_at_ns = 0;
	CHECK(first - second > T_WALL_STEP_NS - 1000000000LL);

	host_open(&nf, r, "noacc", 0, 300);
	signal(SIGALRM, wait_too_long);
	alarm(WALL_WAIT_MAX_S);
	/* 100 ms into the 300 ms wait: its deadline is set by then */
	t_wall_step_at_ns = t_mono_ns_raw() + 100000000LL;
	t0 = t_now();
	n = t_pread(&nf, 2, buf, 4096, 0);
	t_wall_step_at_ns = 0;
	alarm(0);
	CHECK_EQ(n, -ETIMEDOUT);
	CHECK(t_now() - t0 < WALL_WAIT_MAX_S);
	daxfs_host_leave(&nf);
	teardown(&fs, r);
}

static void test_death_mid_fill(void)
{
	struct daxfs_fs fs, other;
	struct t_renewer rn;
	struct dying d;
	pthread_t th;
	struct daxfs_pcache_stats st;
	void *r;
	double t0;

	r = setup(&fs, 256, 32);
	t_renew_start(&rn, &fs);
	host_open(&d.fs, r, "dying", 1, 60000);
	bk_block = 1;
	pthread_create(&th, NULL, dying_filler, &d);
	while (!bk_blocked)
		usleep(1000);
	/* the filler hangs inside its backing read and renews nothing: to
	 * the cluster it is a dead host holding a PENDING slot */
	CHECK_EQ(stats(&fs).pending, 1);
	age_host(&d.fs);	/* its lease has run out */
	host_open(&other, r, "other", 1, 5000);
	t0 = t_now();
	CHECK_EQ(check_range(&other, 2, 4096 * 20, 4096), 0);
	CHECK(t_now() - t0 < 60.0);	/* not forever (no tight bound) */
	CHECK(stats(&fs).takeovers >= 1);
	CHECK_EQ(bk_reads[0][21], 2);	/* the dead one's + the takeover */
	daxfs_host_leave(&other);
	bk_block = 0;			/* the zombie wakes up: harmless */
	pthread_join(th, NULL);
	st = stats(&fs);
	CHECK_EQ(st.pending, 0);
	CHECK_EQ(check_range(&fs, 2, 4096 * 20, 4096), 0);
	t_renew_stop(&rn);
	CHECK_EQ(stats(&fs).pending, 0);
	teardown(&fs, r);
}

/*
 * A dead owner's fill claim names it by host slot and the low 24 bits of
 * its generation.  Nobody reads that page for a while; meanwhile the host
 * slot is joined 2^24 more times (one store stands for those joins and
 * leaves here), so its new owner's generation has the same low 24 bits.
 * The new owner must still be able to read the page: the old claim is
 * not its own and must not pass for a live host's.
 */
static void test_stale_owner_generation(void)
{
	struct daxfs_fs fs, other;
	struct t_renewer rn;
	struct dying d;
	struct daxfs_op op;
	struct daxfs_host *h;
	pthread_t th;
	u64 w;
	u32 slot;
	void *r;

	r = setup(&fs, 256, 32);
	t_renew_start(&rn, &fs);
	host_open(&d.fs, r, "dying", 1, 60000);
	slot = d.fs.host;
	bk_block = 1;
	pthread_create(&th, NULL, dying_filler, &d);
	while (!bk_blocked)
		usleep(1000);
	CHECK_EQ(stats(&fs).pending, 1);
	age_host(&d.fs);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	CHECK_EQ(daxfs_host_check_dead(&op, slot), 1);	/* recovered: FREE */
	daxfs_op_end(&op);
	CHECK_EQ(stats(&fs).pending, 1);	/* the claim is still there */
	h = daxfs_host_at(&fs, slot);
	w = daxfs_load(&h->state);
	CHECK_EQ(daxfs_host_st(w), DAXFS_HOST_FREE);
	daxfs_store(&h->state, daxfs_host_word(daxfs_host_gen(w) +
					       DAXFS_PC_OGEN_MASK,
					       DAXFS_HOST_FREE));
	host_open(&other, r, "other", 1, 3000);
	CHECK_EQ(other.host, slot);
	CHECK_EQ(other.host_gen & DAXFS_PC_OGEN_MASK,
		 d.fs.host_gen & DAXFS_PC_OGEN_MASK);
	CHECK_EQ(check_range(&other, 2, 4096 * 20, 4096), 0);
	daxfs_host_leave(&other);
	bk_block = 0;			/* the zombie wakes up: harmless */
	pthread_join(th, NULL);
	CHECK_EQ(stats(&fs).pending, 0);
	CHECK_EQ(check_range(&fs, 2, 4096 * 20, 4096), 0);
	t_renew_stop(&rn);
	teardown(&fs, r);
}

/* A host dies while pinning: once its lease expires its pins are
 * released exactly (its column is zeroed) and the slot can go. */
static void test_death_while_pinned(void)
{
	struct daxfs_fs fs, dead;
	struct t_renewer rn;
	struct daxfs_pcache_pin pin, mine;
	struct daxfs_pcache_report rep;
	struct daxfs_op op;
	const u8 *p;
	u64 slot;

	r_global = setup(&fs, 64, 16);
	t_renew_start(&rn, &fs);
	host_open(&dead, r_global, "dead", 1, 2000);
	daxfs_op_begin(&dead, &op);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 5, &pin, &p), 0);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 5, &pin, &p), 0);	/* 2 pins */
	daxfs_op_end(&op);
	slot = pin.slot;
	/* and a pin of a live host on another page */
	daxfs_op_begin(&fs, &op);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 6, &mine, &p), 0);
	daxfs_op_end(&op);
	CHECK_EQ(stats(&fs).pins, 3);
	/* "dead" stops renewing; the checker sees its pins as stale */
	age_host(&dead);
	CHECK_EQ(daxfs_pcache_check(&fs, false, &rep), 2);
	CHECK_EQ(rep.stale_owners, 1);
	CHECK_EQ(rep.stale_pins, 1);
	/* pressure: the dead host's pins go, ours stay */
	run_hosts(r_global, 4, 1500, F1_PAGES, 1);
	CHECK_EQ(stats(&fs).pins, 1);
	CHECK_EQ(fs.pc.slots[mine.slot].tag, (1ULL << 48) | 6);
	CHECK_EQ(fs.pc.slots[mine.slot].state & 3, DAXFS_PC_VALID);
	(void)slot;
	daxfs_pcache_put(&fs, &mine);
	CHECK_EQ(stats(&fs).pins, 0);
	CHECK_EQ(check_clean(&fs), 0);
	t_renew_stop(&rn);
	teardown(&fs, r_global);
}

/*
 * A host declared dead while it pins, reaped, and a new host joined in
 * its slot (so in its pin column) and pinned: the zombie wakes up and
 * reads.  Its pin must not land in the new owner's counter (it would
 * stay there for that host's lifetime: test_kernel_pcache_stale_unpin
 * saw 2 pins for 1), its fill must not store into a slot that may be
 * another page's by now, and its late put of its old pin must not take
 * the new owner's away.
 */
static void test_zombie_pins_not_in_new_column(void)
{
	struct daxfs_fs fs, zombie, other;
	struct daxfs_pcache_pin old, pin, theirs;
	struct t_renewer rn;
	struct daxfs_op op, zop;
	const u8 *p;
	u32 slot;
	void *r;

	r = setup(&fs, 64, 16);
	t_renew_start(&rn, &fs);
	host_open(&zombie, r, "zombie", 1, 60000);
	slot = zombie.host;
	CHECK_EQ(daxfs_op_begin(&zombie, &op), 0);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 5, &old, &p), 0);
	daxfs_op_end(&op);
	CHECK_EQ(stats(&fs).pins, 1);
	/* stopped inside an op (a read between its op_begin and its pin):
	 * a new op would be refused, this one goes on */
	CHECK_EQ(daxfs_op_begin(&zombie, &zop), 0);
	age_host(&zombie);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	CHECK_EQ(daxfs_host_check_dead(&op, slot), 1);
	daxfs_op_end(&op);
	CHECK(daxfs_pcache_reap(&fs) >= 0);
	CHECK_EQ(stats(&fs).pins, 0);		/* its column went */
	host_open(&other, r, "other", 1, 60000);
	CHECK_EQ(other.host, slot);
	CHECK_EQ(daxfs_op_begin(&other, &op), 0);
	CHECK_EQ(daxfs_pcache_get(&op, 0, 5, &theirs, &p), 0);
	daxfs_op_end(&op);
	CHECK_EQ(stats(&fs).pins, 1);
	/* the zombie reads the same page, then another one */
	CHECK_EQ(daxfs_pcache_get(&zop, 0, 5, &pin, &p), -ESTALE);
	CHECK_EQ(daxfs_pcache_get(&zop, 0, 6, &pin, &p), -ESTALE);
	/* a page nobody cached: it may claim a slot but not fill it, which
	 * may be another page's by then, and gives the claim back: nobody
	 * would meet it (the new owner of the slot joined before) */
	CHECK_EQ(bk_reads[0][7], 0);
	CHECK_EQ(daxfs_pcache_get(&zop, 0, 7, &pin, &p), -ESTALE);
	CHECK_EQ(bk_reads[0][7], 0);
	CHECK_EQ(check_clean(&fs), 0);
	daxfs_op_end(&zop);
	CHECK_EQ(check_range(&other, 2, 4096 * 7, 4096), 0);
	CHECK_EQ(daxfs_op_begin(&zombie, &zop), -ESTALE);
	CHECK_EQ(stats(&fs).pins, 1);
	daxfs_pcache_put(&zombie, &old);
	CHECK_EQ(stats(&fs).pins, 1);		/* not the new owner's */
	daxfs_pcache_put(&other, &theirs);
	CHECK_EQ(stats(&fs).pins, 0);
	daxfs_host_leave(&other);
	t_renew_stop(&rn);
	teardown(&fs, r);
}

static void test_identity(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 64, 16);
	struct daxfs_backing_header bh;
	u32 idx = 99;

	memset(&bh, 0, sizeof(bh));
	bh.magic = DAXFS_BACKING_MAGIC;
	bh.version = 1;
	bh.header_size = sizeof(bh);
	memcpy(bh.id, descs[1].id, 16);
	bh.index = 1;
	bh.nr_backing = 2;
	bh.size = BK1_SIZE;
	bh.data_off = 4096;
	bh.csum = daxfs_crc32c(0, &bh, __builtin_offsetof(struct daxfs_backing_header,
							  csum));
	/* the table was made without header checksums: no match yet */
	CHECK_EQ(daxfs_pcache_backing_check(&fs, &bh, BK1_SIZE, &idx), -EMEDIUMTYPE);
	fs.pc.hdr->backing[1].hdr_csum = bh.csum;
	/* (header checksum of the table changed: reopen must refuse) */
	{
		struct daxfs_fs f2;

		CHECK_EQ(daxfs_fs_open(&f2, r, REGION, 0), -EUCLEAN);
	}
	fs.pc.hdr->csum = daxfs_crc32c(0, fs.pc.hdr,
				       __builtin_offsetof(struct daxfs_pcache_header, csum));
	CHECK_EQ(daxfs_pcache_backing_check(&fs, &bh, BK1_SIZE, &idx), 0);
	CHECK_EQ(idx, 1);
	CHECK_EQ(daxfs_pcache_backing_check(&fs, &bh, BK1_SIZE - 1, &idx), -EMEDIUMTYPE);
	bh.id[3] ^= 1;
	CHECK_EQ(daxfs_pcache_backing_check(&fs, &bh, BK1_SIZE, &idx), -EMEDIUMTYPE);
	teardown(&fs, r);
}

/* Backing read errors are reported, and leave nothing behind. */
static void test_read_error(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 64, 16);
	u8 buf[4096];

	bk_fail = EIO;
	CHECK_EQ(t_pread(&fs, 2, buf, 4096, 0), -EIO);
	bk_fail = 0;
	CHECK_EQ(stats(&fs).pending, 0);
	CHECK_EQ(check_range(&fs, 2, 0, 4096), 0);
	teardown(&fs, r);
}

/* Stray stores into a free slot: both its state word (a REF bit) and its
 * tag.  Two problems, both repaired: the check must not call one of them
 * left (fsck -y exited 4, "1 error left uncorrected", and -n then found
 * the region clean). */
static void test_repair_counts_each_problem(void)
{
	struct daxfs_fs fs;
	void *r = setup(&fs, 64, 16);
	struct daxfs_pcache_report rep;
	u64 last = fs.pc.nr_slots - 1;

	CHECK_EQ(fs.pc.slots[last].state & 3, DAXFS_PC_FREE);
	fs.pc.slots[last].state |= DAXFS_PC_REF;
	fs.pc.slots[last].tag = (1ULL << 48) | 7;
	CHECK_EQ(daxfs_pcache_check(&fs, false, &rep), 2);
	CHECK_EQ(rep.bad_state, 1);
	CHECK_EQ(rep.bad_tag, 1);
	CHECK_EQ(daxfs_pcache_check(&fs, true, &rep), 0);
	CHECK_EQ(rep.repaired, 2);
	CHECK_EQ(check_clean(&fs), 0);
	teardown(&fs, r);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_repair_counts_each_problem);
	RUN(test_big);
	RUN(test_cow);
	RUN(test_no_dup_fills);
	RUN(test_pressure);
	RUN(test_pinned_not_evicted);
	RUN(test_no_access);
	RUN(test_wall_clock_step_back);
	RUN(test_death_mid_fill);
	RUN(test_death_while_pinned);
	RUN(test_stale_owner_generation);
	RUN(test_zombie_pins_not_in_new_column);
	RUN(test_identity);
	RUN(test_read_error);
	return t_done();
}
