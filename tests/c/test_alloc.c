// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Allocator and reclamation: classes, zeroing, no double allocation
 * across hosts, ABA stress, ENOSPC, contiguous runs, epochs holding back
 * reuse while another host's op is open, used_bytes back to baseline. */
#include "tutil.h"

#define MiB (1ULL << 20)

static void test_classes(void)
{
	CHECK_EQ(daxfs_class_size(DAXFS_CLASS_64), 64);
	CHECK_EQ(daxfs_class_size(DAXFS_CLASS_512), 512);
	CHECK_EQ(daxfs_class_size(DAXFS_CLASS_PAGE), 4096);
	CHECK_EQ(daxfs_class_size(DAXFS_NR_CLASSES), 0);
	CHECK_EQ(daxfs_size_class(1), DAXFS_CLASS_64);
	CHECK_EQ(daxfs_size_class(65), DAXFS_CLASS_128);
	CHECK_EQ(daxfs_size_class(287), DAXFS_CLASS_512);
	CHECK_EQ(daxfs_size_class(4096), DAXFS_CLASS_PAGE);
	CHECK_EQ(daxfs_size_class(4097), -EINVAL);
}

static void test_basic(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 base, off[DAXFS_NR_CLASSES];
	unsigned int c;
	void *r = t_setup(&fs, 8 * MiB, NULL);
	u8 *p;

	base = t_used(&fs);
	daxfs_op_begin(&fs, &op);
	for (c = 0; c < DAXFS_NR_CLASSES; c++) {
		u64 sz = daxfs_class_size(c), i;
		int nz = 0;

		off[c] = daxfs_alloc(&op, c);
		p = daxfs_ptr(&fs, off[c], sz, sz);
		CHECK(p != NULL);
		for (i = 0; p && i < sz; i++)
			nz |= p[i];
		CHECK_EQ(nz, 0);
		if (p)
			memset(p, 0xab, sz);	/* dirty: the next user must get zeros */
	}
	CHECK_EQ(t_used(&fs), base + 64 + 128 + 256 + 512 + 4096);
	for (c = 0; c < DAXFS_NR_CLASSES; c++)
		CHECK_EQ(daxfs_free_now(&op, off[c], c), 0);
	CHECK_EQ(t_used(&fs), base);
	/* LIFO: the freed object comes back, zeroed */
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_256), off[DAXFS_CLASS_256]);
	p = daxfs_ptr(&fs, off[DAXFS_CLASS_256], 256, 256);
	CHECK(p && p[0] == 0 && p[255] == 0);
	CHECK_EQ(daxfs_free_now(&op, off[DAXFS_CLASS_256], DAXFS_CLASS_256), 0);
	daxfs_op_end(&op);
	/* host-less use allocates nothing */
	{
		struct daxfs_fs ro;
		struct daxfs_op rop;

		CHECK_EQ(daxfs_fs_open(&ro, r, 8 * MiB, DAXFS_FS_RDONLY), 0);
		CHECK_EQ(daxfs_op_begin(&ro, &rop), 0);
		CHECK(rop.lane == NULL);
		CHECK_EQ(daxfs_alloc(&rop, DAXFS_CLASS_64), 0);
		CHECK_EQ(daxfs_host_join(&ro, "x", 1, 1), -EROFS);
		daxfs_op_end(&rop);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, 8 * MiB);
}

static void test_runs(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	static u64 offs[300];
	u32 n, i;
	int contig = 1;
	void *r = t_setup(&fs, 16 * MiB, NULL);

	daxfs_op_begin(&fs, &op);
	n = daxfs_alloc_pages(&op, 16, offs);
	CHECK_EQ(n, 16);
	for (i = 1; i < n; i++)
		contig &= offs[i] == offs[0] + i * 4096ULL;
	CHECK(contig);
	n = daxfs_alloc_pages(&op, 300, offs);
	CHECK_EQ(n, 300);
	for (i = 1; i < n; i++)
		contig &= offs[i] == offs[0] + i * 4096ULL;
	CHECK(contig);
	for (i = 0; i < n; i++)
		CHECK(daxfs_ptr(&fs, offs[i], 4096, 4096) != NULL);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Tiny pool: allocation stops with 0 quickly, and frees make room. */
static void test_enospc(void)
{
	struct daxfs_format_opts o = { .nr_buckets = 16, .max_hosts = 2 };
	struct daxfs_fs fs;
	struct daxfs_op op;
	static u64 got[4096];
	u64 size = 64 * 4096, x, pages;
	u32 n = 0;
	double t0;
	void *r = t_setup(&fs, size, &o);

	pages = (fs.pool_end - fs.pool_off) / 4096;
	daxfs_op_begin(&fs, &op);
	t0 = t_now();
	while (n < 4096 && (x = daxfs_alloc(&op, DAXFS_CLASS_PAGE)))
		got[n++] = x;
	CHECK(n > 0 && n <= pages - daxfs_reserve_pages(&fs));
	/* root dir trie node + inode share 2 pages; the limbo reserve stays */
	CHECK(n >= pages - 2 - daxfs_reserve_pages(&fs));
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_64), 0);
	CHECK_EQ(daxfs_alloc_pages(&op, 4, got + n), 0);
	CHECK(t_now() - t0 < 1.0);
	CHECK_EQ(daxfs_free_now(&op, got[--n], DAXFS_CLASS_PAGE), 0);
	x = daxfs_alloc(&op, DAXFS_CLASS_64);
	CHECK(x != 0);
	CHECK_EQ(daxfs_free_now(&op, x, DAXFS_CLASS_64), 0);
	while (n)
		CHECK_EQ(daxfs_free_now(&op, got[--n], DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	CHECK(daxfs_alloc_pages(&op, 1, got) == 0);	/* op ended: no lane */
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/* ---- 4 hosts, ownership bitmap over 64-byte units ---- */

#define NT 4

struct own {
	void *r;
	u64 size;
	int id, errors;
	u8 *map;		/* one byte per 64-byte unit: owner id + 1 */
	u64 pool_off;
	int aba;		/* ABA mode: tight alloc/free of one class */
};

static int claim_units(struct own *o, u64 off, u64 sz, u8 who)
{
	u64 i, u = (off - o->pool_off) / 64;
	int bad = 0;

	for (i = 0; i < sz / 64; i++) {
		u8 zero = 0;

		if (!__atomic_compare_exchange_n(&o->map[u + i], &zero, who, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			bad++;
	}
	return bad;
}

static void release_units(struct own *o, u64 off, u64 sz)
{
	u64 i, u = (off - o->pool_off) / 64;

	for (i = 0; i < sz / 64; i++)
		__atomic_store_n(&o->map[u + i], 0, __ATOMIC_SEQ_CST);
}

static void *own_thread(void *arg)
{
	struct own *o = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;
	enum { HOLD = 256 };
	u64 held[HOLD], cls[HOLD], seed = 99 + o->id, i;
	u8 who = (u8)(o->id + 1);

	memset(held, 0, sizeof(held));
	if (t_join(&fs, o->r, o->size)) {
		o->errors++;
		return NULL;
	}
	for (i = 0; i < (o->aba ? 300000 : 60000); i++) {
		u64 slot = o->aba ? 0 : t_rand(&seed) % HOLD;
		unsigned int c = o->aba ? DAXFS_CLASS_64 :
			(unsigned int)(t_rand(&seed) % DAXFS_NR_CLASSES);
		u64 *w;

		daxfs_op_begin(&fs, &op);
		if (held[slot]) {
			w = daxfs_ptr(&fs, held[slot], 64, 64);
			if (!w || w[0] != ((u64)who << 56 | held[slot]))
				o->errors++;	/* someone else wrote our object */
			release_units(o, held[slot], daxfs_class_size(cls[slot]));
			CHECK_EQ(daxfs_free_now(&op, held[slot], cls[slot]), 0);
			held[slot] = 0;
		}
		held[slot] = daxfs_alloc(&op, c);
		cls[slot] = c;
		if (held[slot]) {
			o->errors += claim_units(o, held[slot], daxfs_class_size(c), who);
			w = daxfs_ptr(&fs, held[slot], 64, 64);
			w[0] = (u64)who << 56 | held[slot];
		} else {
			o->errors++;
		}
		daxfs_op_end(&op);
	}
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < HOLD; i++)
		if (held[i]) {
			release_units(o, held[i], daxfs_class_size(cls[i]));
			CHECK_EQ(daxfs_free_now(&op, held[i], cls[i]), 0);
		}
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	return NULL;
}

static void run_owners(int aba)
{
	struct t_renewer rn;
	struct own o[NT];
	pthread_t th[NT];
	struct daxfs_fs fs;
	u64 size = 64 * MiB, base;
	u8 *map;
	int i, errs = 0;
	void *r = t_setup(&fs, size, NULL);

	base = t_used(&fs);
	map = calloc((fs.pool_end - fs.pool_off) / 64, 1);
	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (i = 0; i < NT; i++) {
		o[i] = (struct own){ .r = r, .size = size, .id = i, .map = map,
				     .pool_off = fs.pool_off, .aba = aba };
		pthread_create(&th[i], NULL, own_thread, &o[i]);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		errs += o[i].errors;
	}
	t_renew_stop(&rn);
	CHECK_EQ(errs, 0);
	CHECK_EQ(t_used(&fs), base);
	free(map);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

static void test_no_double_alloc(void)
{
	run_owners(0);
}

static void test_aba_stress(void)
{
	run_owners(1);
}

/* ---- reclamation ---- */

static void test_epoch_holds_reuse(void)
{
	struct daxfs_fs a, b;
	struct daxfs_op opa, opb;
	u64 size = 16 * MiB, x, y, base, e0;
	int i, reused = 0;
	void *r = t_setup(&a, size, NULL);

	CHECK_EQ(t_join(&b, r, size), 0);
	base = t_used(&a);
	daxfs_op_begin(&a, &opa);
	x = daxfs_alloc(&opa, DAXFS_CLASS_128);
	daxfs_op_end(&opa);
	CHECK(x != 0);

	/* B holds an op open (as a reader that may still see x) */
	CHECK_EQ(daxfs_op_begin(&b, &opb), 0);
	daxfs_op_begin(&a, &opa);
	CHECK_EQ(daxfs_retire(&opa, x, DAXFS_CLASS_128), 0);
	daxfs_op_end(&opa);
	e0 = daxfs_load(daxfs_state_word(&a, epoch));
	daxfs_reclaim_all(&a);
	daxfs_reclaim_all(&a);
	/* the epoch moves at most once past B's announcement */
	CHECK(daxfs_load(daxfs_state_word(&a, epoch)) <= e0 + 1);
	CHECK(t_used(&a) >= base + 128);
	daxfs_op_begin(&a, &opa);
	for (i = 0; i < 200; i++) {
		y = daxfs_alloc(&opa, DAXFS_CLASS_128);
		reused |= y == x;
		CHECK_EQ(daxfs_free_now(&opa, y, DAXFS_CLASS_128), 0);
	}
	daxfs_op_end(&opa);
	CHECK_EQ(reused, 0);

	/* B's op ends: x becomes free */
	daxfs_op_end(&opb);
	daxfs_reclaim_all(&a);
	CHECK_EQ(t_used(&a), base);
	daxfs_op_begin(&a, &opa);
	CHECK_EQ(daxfs_alloc(&opa, DAXFS_CLASS_128), x);
	daxfs_op_end(&opa);

	daxfs_host_leave(&b);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/* Many allocate/retire cycles (objects, pages, runs): after reclaim_all
 * used_bytes is exactly the baseline again. */
static void test_churn_baseline(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 32 * MiB, base, seed = 4242, offs[8], i;
	u32 n, j;
	void *r = t_setup(&fs, size, NULL);

	base = t_used(&fs);
	for (i = 0; i < 20000; i++) {
		unsigned int c = (unsigned int)(t_rand(&seed) % (DAXFS_NR_CLASSES + 1));

		daxfs_op_begin(&fs, &op);
		if (c == DAXFS_NR_CLASSES) {
			n = daxfs_alloc_pages(&op, 8, offs);
			for (j = 0; j < n; j++)
				CHECK_EQ(daxfs_retire(&op, offs[j], DAXFS_CLASS_PAGE), 0);
		} else {
			u64 x = daxfs_alloc(&op, c);

			CHECK(x != 0);
			CHECK_EQ(daxfs_retire(&op, x, c), 0);
		}
		daxfs_op_end(&op);
	}
	CHECK(t_used(&fs) > base);
	daxfs_reclaim_all(&fs);
	CHECK_EQ(t_used(&fs), base);
	/* and the space is really reusable: the pool does not fill up */
	for (i = 0; i < 3; i++) {
		u64 k;

		for (k = 0; k < 20000; k++) {
			daxfs_op_begin(&fs, &op);
			n = daxfs_alloc_pages(&op, 8, offs);
			for (j = 0; j < n; j++)
				CHECK_EQ(daxfs_retire(&op, offs[j], DAXFS_CLASS_PAGE), 0);
			daxfs_op_end(&op);
			if (n != 8)
				break;
		}
		CHECK_EQ(k, 20000);
	}
	daxfs_reclaim_all(&fs);
	CHECK_EQ(t_used(&fs), base);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/* ---- limbo reserve ---- */

/* Pages on the page stack, walked (quiescent callers only): each word is
 * an extent, last | (pages - 1), linked from its last page (format 12). */
static u64 page_stack_len(struct daxfs_fs *fs)
{
	u64 w = daxfs_load(&fs->state->free_head[DAXFS_CLASS_PAGE].head.off);
	u64 n = 0;

	while (w && n < (1u << 24)) {
		n += (w & DAXFS_FREE_EXTENT_MASK) + 1;
		w = ((struct daxfs_free_obj *)(fs->base +
					       (w & ~DAXFS_FREE_EXTENT_MASK)))->next;
	}
	return n;
}

/* Bytes on all free stacks (quiescent callers only). */
static u64 free_stack_bytes(struct daxfs_fs *fs)
{
	u64 total = page_stack_len(fs) * DAXFS_PAGE_SIZE, off, n;
	unsigned int c;

	for (c = 0; c < DAXFS_CLASS_PAGE; c++) {
		off = daxfs_load(&fs->state->free_head[c].head.off);
		for (n = 0; off && n < (1u << 26); n++) {
			total += daxfs_class_size(c);
			off = ((struct daxfs_free_obj *)(fs->base + off))->next;
		}
	}
	return total;
}

/* used_bytes is exact: everything below the bump that is neither on a free
 * stack nor in a host batch (what fsck checks). */
static void check_exact(struct daxfs_fs *fs)
{
	u64 batch = 0, c, e;
	u32 s;

	for (s = 0; s < fs->sb.max_hosts; s++) {
		c = fs->hosts[s].alloc_cursor;
		e = fs->hosts[s].alloc_end;
		if (c > 1 && c < e)
			batch += e - c;
	}
	CHECK_EQ(t_used(fs), daxfs_load(daxfs_state_word(fs, bump)) - fs->pool_off -
		 free_stack_bytes(fs) - batch);
	CHECK_EQ(*daxfs_state_word(fs, page_stack), page_stack_len(fs));
}

/* Fills the pool with data pages, then drops them all in ONE op (like rm
 * of a file that filled the pool: nothing it retires can be freed before
 * the op ends, so every limbo batch page comes from the reserve), and
 * again with small objects retired one op each.  Every round ends at the
 * baseline: no space leaks, df reports the reserve as not free. */
static void test_reserve_fill_delete(void)
{
	struct daxfs_format_opts o = { .max_hosts = 8 };
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct daxfs_statfs st;
	u64 size = 4 * MiB, base, pages, res, *got, n, i, x;
	int round;
	void *r = t_setup(&fs, size, &o);

	pages = (fs.pool_end - fs.pool_off) / 4096;
	res = daxfs_reserve_pages(&fs);
	CHECK(res >= pages / DAXFS_LIMBO_ENTRIES + 1);
	got = calloc(pages * 64, sizeof(*got));
	base = t_used(&fs);
	daxfs_statfs(&fs, &st);
	CHECK_EQ(st.used_bytes, base + res * 4096);
	CHECK_EQ(st.used_bytes + st.free_bytes, st.pool_bytes);
	for (round = 0; round < 7; round++) {
		/* data pages, in runs and singles, until ENOSPC */
		n = 0;
		CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
		while (n + 16 <= pages && daxfs_alloc_pages(&op, round & 1 ? 1 : 16,
							    got + n) == (round & 1 ? 1u : 16u))
			n += round & 1 ? 1 : 16;
		while (n < pages && (x = daxfs_alloc(&op, DAXFS_CLASS_PAGE)))
			got[n++] = x;
		daxfs_op_end(&op);
		if (round < 6) {
			CHECK(n + res + 2 >= pages && n + res <= pages);
			daxfs_statfs(&fs, &st);
			CHECK(st.free_bytes < 8 * 4096);
			CHECK_EQ(st.used_bytes + st.free_bytes, st.pool_bytes);
		}
		/* one op drops them all */
		CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
		for (i = 0; i < n; i++)
			CHECK_EQ(daxfs_retire(&op, got[i], DAXFS_CLASS_PAGE), 0);
		daxfs_op_end(&op);
		daxfs_reclaim_all(&fs);
		CHECK_EQ(t_used(&fs), base);
		check_exact(&fs);
		if (round != 5)
			continue;

		/* small objects until ENOSPC, each retired by its own op (the
		 * pages they were carved from stay in their class: the last
		 * round above then finds few pages, and still ends at base) */
		n = 0;
		CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
		while (n < pages * 64 && (x = daxfs_alloc(&op, DAXFS_CLASS_64)))
			got[n++] = x;
		daxfs_op_end(&op);
		CHECK(n > (pages - res) * 60);
		for (i = 0; i < n; i++) {
			CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
			CHECK_EQ(daxfs_retire(&op, got[i], DAXFS_CLASS_64), 0);
			daxfs_op_end(&op);
		}
		daxfs_reclaim_all(&fs);
		CHECK_EQ(t_used(&fs), base);
		check_exact(&fs);
	}
	daxfs_statfs(&fs, &st);
	CHECK_EQ(st.used_bytes, base + res * 4096);
	free(got);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/* An fsck rebuild leaves the page-stack counter stale: a low counter must
 * not turn into ENOSPC while the stack holds pages (a counting walk fixes
 * it), a high one is reset when the stack is seen empty. */
static void test_reserve_counter_heals(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 2 * MiB, base, pages, *got, n = 0, i, x;
	u64 *ps;
	void *r = t_setup(&fs, size, NULL);

	ps = daxfs_state_word(&fs, page_stack);
	pages = (fs.pool_end - fs.pool_off) / 4096;
	got = calloc(pages, sizeof(*got));
	base = t_used(&fs);
	daxfs_op_begin(&fs, &op);
	while (n < pages && (x = daxfs_alloc(&op, DAXFS_CLASS_PAGE)))
		got[n++] = x;
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, got[i], DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(*ps, page_stack_len(&fs));
	*ps = 0;		/* as after an fsck rebuild */
	for (i = 0; i < n; i++) {
		got[i] = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
		CHECK(got[i] != 0);
	}
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, got[i], DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(t_used(&fs), base);
	*ps += 1000;		/* too high */
	for (i = 0; i < n; i++)
		got[i] = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_PAGE), 0);
	CHECK((s64)*ps <= 0);
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, got[i], DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&op);
	CHECK_EQ(t_used(&fs), base);
	free(got);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/*
 * fsck's recovery (DAXFS_FS_NO_FREE): free stack heads a stray store bent
 * onto objects in use are not popped, and what it frees gets no link
 * written into it.  Without the flag a free writes its link into the
 * page a bent hold names: the file that owns it changes (the fsck
 * sweep's "changed" failure, docs/testing.md "Long fsck sweeps").
 */
static void test_no_free_leaves_stacks_alone(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	void *r = t_setup(&fs, 8 * MiB, NULL);
	u64 page, small, got, spare;
	u8 *pp, *sp;
	u32 i;
	int same = 1;

	daxfs_op_begin(&fs, &op);
	page = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	small = daxfs_alloc(&op, DAXFS_CLASS_64);
	spare = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	pp = daxfs_ptr(&fs, page, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE);
	sp = daxfs_ptr(&fs, small, 64, 64);
	CHECK(pp && sp);
	if (!pp || !sp)
		return;
	/* in use (a file's bytes), each first word a valid link */
	memset(pp, 0, DAXFS_PAGE_SIZE);
	memset(pp + 8, 0xab, DAXFS_PAGE_SIZE - 8);
	memset(sp, 0, 64);
	memset(sp + 8, 0xcd, 56);
	/* the stray stores: both heads name the objects in use */
	daxfs_store(&fs.state->free_head[DAXFS_CLASS_PAGE].head.off, page);
	daxfs_store(&fs.state->free_head[DAXFS_CLASS_64].head.off, small);
	fs.flags |= DAXFS_FS_NO_FREE;
	got = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	CHECK(got != page);
	got = daxfs_alloc(&op, DAXFS_CLASS_64);
	CHECK(got != small);
	/* a recovery's frees of what bent holds name */
	daxfs_free_obj(&fs, page, DAXFS_CLASS_PAGE);
	daxfs_free_obj(&fs, small, DAXFS_CLASS_64);
	daxfs_pages_free(&fs, spare, 1);
	for (i = 8; i < DAXFS_PAGE_SIZE; i++)
		same &= pp[i] == 0xab;
	for (i = 8; i < 64; i++)
		same &= sp[i] == 0xcd;
	CHECK(same);
	CHECK_EQ(daxfs_load((u64 *)pp), 0);
	CHECK_EQ(daxfs_load((u64 *)sp), 0);
	CHECK_EQ(daxfs_load(&fs.state->free_head[DAXFS_CLASS_PAGE].head.off), page);
	CHECK_EQ(daxfs_load(&fs.state->free_head[DAXFS_CLASS_64].head.off), small);
	fs.flags &= ~DAXFS_FS_NO_FREE;
	daxfs_store(&fs.state->free_head[DAXFS_CLASS_PAGE].head.off, 0);
	daxfs_store(&fs.state->free_head[DAXFS_CLASS_64].head.off, 0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, 8 * MiB);
}

int main(void)
{
	RUN(test_classes);
	RUN(test_basic);
	RUN(test_runs);
	RUN(test_enospc);
	RUN(test_no_double_alloc);
	RUN(test_aba_stress);
	RUN(test_epoch_holds_reuse);
	RUN(test_churn_baseline);
	RUN(test_reserve_fill_delete);
	RUN(test_reserve_counter_heals);
	RUN(test_no_free_leaves_stacks_alone);
	return t_done();
}
