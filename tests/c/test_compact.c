// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Compaction (docs/alloc.md "Compaction"): pages of small objects that
 * are all free come back as pages; half-free pages stay; nothing is lost
 * or handed out twice while other hosts allocate and free; a host that
 * dies holding a taken chain gets it pushed back by recovery. */
#include "tpool.h"

#define MiB (1ULL << 20)
#define SIZE (8 * MiB)
#define MAXOBJ (SIZE / 64)

static u64 objs[MAXOBJ];

/* Fills the pool with objects of class c, each tagged with its offset. */
static u64 fill(struct daxfs_op *op, unsigned int c)
{
	u64 n = 0, x;

	while (n < MAXOBJ && (x = daxfs_alloc(op, c))) {
		*(u64 *)(op->fs->base + x + 8) = x;
		objs[n++] = x;
	}
	return n;
}

/* Every class: fill, free all, then the pool gives as many pages as it
 * did before the fill; statfs agrees. */
static void test_all_free(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct daxfs_statfs st0, st;
	unsigned int c;
	u64 base, n0, n, i, used;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n0 = t_count_pages(&op, SIZE / 4096);
	base = t_used(&fs);
	daxfs_statfs(&fs, &st0);
	CHECK(n0 > 1000);
	for (c = 0; c < DAXFS_CLASS_PAGE; c++) {
		n = fill(&op, c);
		CHECK(n >= (n0 - 2) * (4096 / daxfs_class_size(c)));
		CHECK_EQ(t_count_pages(&op, SIZE / 4096), 0);
		for (i = 0; i < n; i++)
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
		CHECK_EQ(t_used(&fs), base);
		used = t_count_pages(&op, SIZE / 4096);
		CHECK(used + 1 >= n0 && used <= n0);
		CHECK_EQ(t_used(&fs), base);
		daxfs_statfs(&fs, &st);
		CHECK_EQ(st.free_bytes, st0.free_bytes);
	}
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
}

/* Half of every page freed: no page comes back, the live halves keep
 * their contents; freeing the other halves gives the pages back. */
static void test_half_free(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	unsigned int c = DAXFS_CLASS_128;
	u64 base, n0, n, i, bad = 0;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n0 = t_count_pages(&op, SIZE / 4096);
	base = t_used(&fs);
	n = fill(&op, c);
	for (i = 0; i < n; i++)
		if ((objs[i] / 128) & 1)
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
	CHECK_EQ(daxfs_compact(&op), 0);
	CHECK_EQ(t_count_pages(&op, SIZE / 4096), 0);
	for (i = 0; i < n; i++)
		if (!((objs[i] / 128) & 1) &&
		    *(u64 *)(fs.base + objs[i] + 8) != objs[i])
			bad++;
	CHECK_EQ(bad, 0);
	for (i = 0; i < n; i++)
		if (!((objs[i] / 128) & 1))
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
	CHECK_EQ(t_used(&fs), base);
	CHECK(daxfs_compact(&op) + 1 >= n0);
	CHECK(t_count_pages(&op, SIZE / 4096) + 1 >= n0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
}

/* ---- concurrency: owners of 64-byte units, one compactor ---- */

#define NT 3
#define ROUNDS 20000

#define HELD 8192

struct worker {
	void *r;
	int id, errors;
	u64 enospc, compacted;
	u8 *map;
	u64 pool_off;
};

/* Marks [off, off + sz) as ours; false if any unit was already owned. */
static bool claim(struct worker *w, u64 off, u64 sz)
{
	u64 i, u = (off - w->pool_off) / 64;
	bool ok = true;

	for (i = 0; i < sz / 64; i++) {
		u8 z = 0;

		if (!__atomic_compare_exchange_n(&w->map[u + i], &z, w->id + 1,
						 false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			ok = false;
	}
	return ok;
}

static void unclaim(struct worker *w, u64 off, u64 sz)
{
	u64 i, u = (off - w->pool_off) / 64;

	for (i = 0; i < sz / 64; i++)
		__atomic_store_n(&w->map[u + i], 0, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	struct worker *w = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct t_renewer rn;
	static __thread u64 held[HELD];
	static __thread u8 cls[HELD];
	u64 seed = 0x9e3779b97f4a7c15ULL * (w->id + 1), x, sz, k;
	u32 n = 0, i, j;

	/* a compaction pass is one op: no renewal at its end for as long
	 * as it runs, which starved of CPU can outlast a lease */
	if (t_join_kept(&fs, &rn, w->r, SIZE)) {
		w->errors++;
		return NULL;
	}
	for (i = 0; i < ROUNDS; i++) {
		daxfs_op_begin(&fs, &op);
		if (w->id == 0 && i % 500 == 0)
			w->compacted += daxfs_compact(&op);
		k = t_rand(&seed);
		if (n < HELD && (k & 3) != 0) {
			/* allocate, mostly small; the pool runs full */
			cls[n] = (k >> 8) % 8 == 0 ? DAXFS_CLASS_PAGE :
				 (k >> 12) % DAXFS_CLASS_PAGE;
			sz = daxfs_class_size(cls[n]);
			x = daxfs_alloc(&op, cls[n]);
			if (x) {
				if (!claim(w, x, sz))
					w->errors++;
				for (j = 0; j < sz / 8; j++)
					((u64 *)(fs.base + x))[j] = x ^ w->id;
				held[n++] = x;
			} else {
				w->enospc++;
			}
		} else if (n) {
			/* LIFO half the time: whole pages become free */
			j = (k >> 40) & 1 ? n - 1 : (u32)((k >> 16) % n);
			x = held[j];
			sz = daxfs_class_size(cls[j]);
			for (k = 0; k < sz / 8; k++)
				if (((u64 *)(fs.base + x))[k] != (x ^ w->id))
					w->errors++;
			unclaim(w, x, sz);
			CHECK_EQ(daxfs_free_now(&op, x, cls[j]), 0);
			held[j] = held[--n];
			cls[j] = cls[n];
		}
		daxfs_op_end(&op);
	}
	daxfs_op_begin(&fs, &op);
	while (n--) {
		unclaim(w, held[n], daxfs_class_size(cls[n]));
		CHECK_EQ(daxfs_free_now(&op, held[n], cls[n]), 0);
	}
	daxfs_op_end(&op);
	t_leave_kept(&fs, &rn);
	return NULL;
}

/* On a failed end state: each small class's stack (objects, whole pages
 * on it) beside its compaction hint, to tell a skipped pass (the hint)
 * from a pass that could not see the pages. */
static void dump_classes(struct daxfs_fs *fs)
{
	static u32 on_page[SIZE / 4096];
	unsigned int c;
	u64 off, n, whole, i, per, *pad;

	for (c = 0; c < DAXFS_CLASS_PAGE; c++) {
		per = 4096 / daxfs_class_size(c);
		memset(on_page, 0, sizeof(on_page));
		n = whole = 0;
		off = fs->state->free_head[c].head.off;
		while (off && n < MAXOBJ) {
			n++;
			if (++on_page[off / 4096 % (SIZE / 4096)] == per)
				whole++;
			off = ((struct daxfs_free_obj *)(fs->base + off))->next;
		}
		pad = fs->state->free_head[c].pad;
		fprintf(stderr, "class %u: %llu on the stack, %llu whole pages; "
			"pushed %llu due %llu runs %llu\n", c,
			(unsigned long long)n, (unsigned long long)whole,
			(unsigned long long)pad[DAXFS_FREE_PUSHED],
			(unsigned long long)pad[DAXFS_FREE_COMPACT_DUE],
			(unsigned long long)pad[DAXFS_FREE_COMPACT_RUNS]);
	}
	/* the page stack: extents named by their last page (alloc.md) */
	n = whole = 0;
	off = fs->state->free_head[DAXFS_CLASS_PAGE].head.off;
	while (off && n < SIZE / 4096) {
		n++;
		whole += (off & DAXFS_FREE_EXTENT_MASK) + 1;
		off = ((struct daxfs_free_obj *)(fs->base +
			(off & ~(u64)DAXFS_FREE_EXTENT_MASK)))->next;
	}
	fprintf(stderr, "page stack: %llu extents, %llu pages, counter %lld; "
		"bump left %llu pages; reserve %llu; used %llu\n",
		(unsigned long long)n, (unsigned long long)whole,
		(long long)*daxfs_state_word(fs, page_stack),
		(unsigned long long)((fs->pool_end -
			*daxfs_state_word(fs, bump)) / 4096),
		(unsigned long long)daxfs_reserve_pages(fs),
		(unsigned long long)*daxfs_state_word(fs, used_bytes));
	for (i = 0; i < fs->sb.max_hosts; i++)
		fprintf(stderr, "host %llu: state %#llx\n", (unsigned long long)i,
			(unsigned long long)daxfs_host_at(fs, i)->state);
	for (i = 0; i < (u64)fs->sb.max_hosts * DAXFS_LANES; i++)
		if (fs->lanes[i].pad[DAXFS_LANE_HOLD_CHAIN])
			fprintf(stderr, "lane %llu holds chain %#llx\n",
				(unsigned long long)i, (unsigned long long)
				fs->lanes[i].pad[DAXFS_LANE_HOLD_CHAIN]);
}

static void test_concurrent(void)
{
	struct daxfs_format_opts o = { .max_hosts = 8 };
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct worker w[NT];
	struct t_renewer rn;
	pthread_t t[NT];
	static u64 squeeze[SIZE / 4096];
	u64 base, n0, n, nsq = 0;
	int i;
	void *r = t_setup(&fs, SIZE, &o);
	u8 *map = calloc(SIZE / 64, 1);

	daxfs_op_begin(&fs, &op);
	n0 = t_count_pages(&op, SIZE / 4096);
	base = t_used(&fs);
	daxfs_op_end(&op);
	/* squeeze the pool so the workers hit ENOSPC and compaction whatever
	 * the scheduling: take every page, give 1 MiB back */
	daxfs_op_begin(&fs, &op);
	while (nsq < SIZE / 4096 &&
	       (squeeze[nsq] = daxfs_alloc(&op, DAXFS_CLASS_PAGE)))
		nsq++;
	for (i = 0; i < 256 && nsq; i++)
		CHECK_EQ(daxfs_free_now(&op, squeeze[--nsq], DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	/* we only wait while the workers run: keep our lease */
	t_renew_start(&rn, &fs);
	for (i = 0; i < NT; i++) {
		w[i] = (struct worker){ .r = r, .id = i, .map = map,
					.pool_off = fs.pool_off };
		pthread_create(&t[i], NULL, worker, &w[i]);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(w[i].errors, 0);
	}
	t_renew_stop(&rn);
	/* the pool did run full: every ENOSPC compacted while others ran */
	CHECK(w[0].enospc + w[1].enospc + w[2].enospc > 0);
	printf("enospc %llu, explicit compaction freed %llu pages\n",
	       (unsigned long long)(w[0].enospc + w[1].enospc + w[2].enospc),
	       (unsigned long long)w[0].compacted);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	while (nsq)
		CHECK_EQ(daxfs_free_now(&op, squeeze[--nsq], DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(t_used(&fs), base);
	daxfs_compact(&op);
	n = t_count_pages(&op, SIZE / 4096);
	CHECK(n + 8 >= n0);
	if (n + 8 < n0)
		dump_classes(&fs);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	free(map);
	t_region_free(r, SIZE);
}

/* A host that died holding a taken chain (named in its lane): recovery
 * pushes it back; fsck is clean and the space is whole. */
static void test_dead_holder(void)
{
	struct daxfs_fs fs, dead;
	struct daxfs_op op, dop;
	u64 base, n0, n, i, first;
	void *r = t_setup(&fs, SIZE, NULL);

	CHECK_EQ(t_join(&dead, r, SIZE), 0);
	daxfs_op_begin(&fs, &op);
	n0 = t_count_pages(&op, SIZE / 4096);
	base = t_used(&fs);
	n = fill(&op, DAXFS_CLASS_64);
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	daxfs_op_end(&op);
	/* the dead host took the stack and named it, then stopped */
	daxfs_op_begin(&dead, &dop);
	first = daxfs_free_take_all(&dead, DAXFS_CLASS_64);
	CHECK(first != 0);
	daxfs_store(&dop.lane->pad[DAXFS_LANE_HOLD_CHAIN],
		    first | (DAXFS_CLASS_64 + 1));
	CHECK_EQ(daxfs_load(&fs.state->free_head[DAXFS_CLASS_64].head.off), 0);
	/* its lease runs out: a survivor recovers it */
	t_age(&dead, dead.host);
	daxfs_op_begin(&fs, &op);
	CHECK_EQ(daxfs_host_check_dead(&op, dead.host), 1);
	CHECK_EQ(daxfs_load(&dop.lane->pad[DAXFS_LANE_HOLD_CHAIN]), 0);
	CHECK_EQ(t_used(&fs), base);
	CHECK(t_count_pages(&op, SIZE / 4096) + 1 >= n0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
}

/* Compaction time for N objects (printed; bench/ has the sweep). */
static void test_time(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 n, i, got, seed = 7, j, t;
	double t0;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n = fill(&op, DAXFS_CLASS_64);
	/* free in random order: the stack is then unsorted */
	for (i = n; i > 1; i--) {
		j = t_rand(&seed) % i;
		t = objs[i - 1];
		objs[i - 1] = objs[j];
		objs[j] = t;
	}
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	t0 = t_now();
	got = daxfs_compact(&op);
	printf("compacted %llu objects into %llu pages in %.1f ms\n",
	       (unsigned long long)n, (unsigned long long)got, (t_now() - t0) * 1e3);
	CHECK(got + 2 >= n / 64);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

/* ---- the hint (docs/alloc.md "Compaction hint") ---- */

static u64 runs(struct daxfs_fs *fs, unsigned int c)
{
	return daxfs_load(&fs->state->free_head[c].pad[DAXFS_FREE_COMPACT_RUNS]);
}

/* A full pool of pages with half their 64-byte objects free: the first
 * ENOSPC sorts, later ones do not; 31 more frees of one page (it still
 * has a live object) wake nothing; the 32nd makes it whole, and the next
 * ENOSPC compacts and gets exactly that page. */
static void test_hint_skips(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	unsigned int c = DAXFS_CLASS_64;
	u64 n, i, r0, page, got, k;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n = fill(&op, c);
	CHECK(n > 1000);
	for (i = 0; i < n; i++)
		if ((objs[i] / 64) & 1)
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	r0 = runs(&fs, c);
	CHECK(r0 > 0);
	for (i = 0; i < 1000; i++)
		CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(runs(&fs, c), r0);
	/* free the live halves of one page but one object */
	page = objs[n / 2] & ~4095ULL;
	for (i = 0, k = 0; i < n; i++)
		if ((objs[i] & ~4095ULL) == page && !((objs[i] / 64) & 1) &&
		    objs[i] != page) {
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
			k++;
		}
	CHECK_EQ(k, 31);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(runs(&fs, c), r0);
	CHECK_EQ(daxfs_free_now(&op, page, c), 0);
	got = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	CHECK_EQ(got, page);
	CHECK_EQ(runs(&fs, c), r0 + 1);
	CHECK_EQ(daxfs_free_now(&op, got, DAXFS_CLASS_PAGE), 0);
	for (i = 0; i < n; i++)
		if (!((objs[i] / 64) & 1) && (objs[i] & ~4095ULL) != page)
			CHECK_EQ(daxfs_free_now(&op, objs[i], c), 0);
	daxfs_compact(&op);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
}

/* A page carved into a class after a pass that found its stack empty is
 * whole after one free: the carve counts, so the next ENOSPC finds it. */
static void test_hint_carve(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 n, i, page, x, got, r1, held[64], np = 0, h128[1024], n128 = 0;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n = fill(&op, DAXFS_CLASS_64);
	/* and every page reclaim can still find (limbo of the setup) */
	while (np < 64 && (held[np] = daxfs_alloc(&op, DAXFS_CLASS_PAGE)))
		np++;
	/* the 128 stack runs empty: that pass records so */
	while (n128 < 1024 && (h128[n128] = daxfs_alloc(&op, DAXFS_CLASS_128)))
		n128++;
	CHECK(n128 > 0 && n128 < 1024);
	/* one more pass, on the empty 128 stack (the last one may predate
	 * pushes: then it skipped) */
	CHECK_EQ(daxfs_free_now(&op, h128[n128 - 1], DAXFS_CLASS_128), 0);
	h128[n128 - 1] = daxfs_alloc(&op, DAXFS_CLASS_128);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	r1 = runs(&fs, DAXFS_CLASS_128);
	/* one whole page of 64s back: the next ENOSPC path returns it and a
	 * 128 carves it */
	page = objs[n / 2] & ~4095ULL;
	for (i = 0; i < n; i++)
		if ((objs[i] & ~4095ULL) == page)
			CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	x = daxfs_alloc(&op, DAXFS_CLASS_128);
	CHECK_EQ(x, page);
	/* its 31 free objects are no whole page: nothing sorts them */
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(runs(&fs, DAXFS_CLASS_128), r1);
	CHECK_EQ(daxfs_free_now(&op, x, DAXFS_CLASS_128), 0);
	got = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	CHECK_EQ(got, page);
	CHECK_EQ(runs(&fs, DAXFS_CLASS_128), r1 + 1);
	CHECK_EQ(daxfs_free_now(&op, got, DAXFS_CLASS_PAGE), 0);
	for (i = 0; i < n; i++)
		if ((objs[i] & ~4095ULL) != page)
			CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	while (np)
		CHECK_EQ(daxfs_free_now(&op, held[--np], DAXFS_CLASS_PAGE), 0);
	while (n128)
		CHECK_EQ(daxfs_free_now(&op, h128[--n128], DAXFS_CLASS_128), 0);
	daxfs_compact(&op);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
}

/* Page allocation failures per second on a full pool of half-used pages,
 * with the hint and with it cleared before every try (each ENOSPC then
 * sorts, as before the hint).  Printed only; bench/ has the sweep. */
static void test_enospc_rate(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 n, i, fails, *due;
	double t0, hinted, blind;
	unsigned int c;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n = fill(&op, DAXFS_CLASS_64);
	for (i = 0; i < n; i++)
		if ((objs[i] / 64) & 1)
			CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	t0 = t_now();
	for (fails = 0; t_now() - t0 < 0.5; fails++)
		CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	hinted = fails / (t_now() - t0);
	t0 = t_now();
	for (fails = 0; t_now() - t0 < 0.5; fails++) {
		for (c = 0; c < DAXFS_CLASS_PAGE; c++) {
			due = &fs.state->free_head[c].pad[DAXFS_FREE_COMPACT_DUE];
			daxfs_store(due, 0);
		}
		CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	}
	blind = fails / (t_now() - t0);
	printf("ENOSPC/s on a full pool (%llu free 64 B objects): "
	       "%.0f with the hint, %.0f re-sorting each time\n",
	       (unsigned long long)(n / 2), hinted, blind);
	for (i = 0; i < n; i++)
		if (!((objs[i] / 64) & 1))
			CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
}

int main(void)
{
	RUN(test_all_free);
	RUN(test_half_free);
	RUN(test_dead_holder);
	RUN(test_hint_skips);
	RUN(test_hint_carve);
	RUN(test_concurrent);
	RUN(test_time);
	RUN(test_enospc_rate);
	return t_done();
}
