// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The page stack's extents (format 12, docs/alloc.md "Free extents"):
 * pages freed next to each other come back as one entry, a take of many
 * pages is one contiguous piece, an aged pool (bump spent) still gives
 * writes contiguous pages, extents never exceed DAXFS_FREE_EXTENT_MAX, a
 * garbled extent word is refused, and four hosts allocating and freeing
 * pieces of random sizes never get a page twice.
 */
#include <pthread.h>

#include "tutil.h"
#include "tpool.h"

#define MiB (1ULL << 20)
#define PG DAXFS_PAGE_SIZE

static u64 ext_head(struct daxfs_fs *fs)
{
	return daxfs_load(&fs->state->free_head[DAXFS_CLASS_PAGE].head.off);
}

static u64 ext_link(struct daxfs_fs *fs, u64 w)
{
	return ((struct daxfs_free_obj *)(fs->base +
					  (w & ~DAXFS_FREE_EXTENT_MASK)))->next;
}

static u64 ext_len(u64 w)
{
	return (w & DAXFS_FREE_EXTENT_MASK) + 1;
}

/* Extent word w (last | (pages - 1)) covers the n pages from first (it
 * may be larger: pages freed before that border them joined it). */
static bool ext_holds(u64 w, u64 first, u64 n)
{
	u64 b = (w & ~DAXFS_FREE_EXTENT_MASK) + PG, a = b - ext_len(w) * PG;

	return a <= first && b >= first + n * PG;
}

/* Entries and pages of the page stack (quiescent callers only). */
static void ext_walk(struct daxfs_fs *fs, u64 *entries, u64 *pages)
{
	u64 w = ext_head(fs);

	*entries = *pages = 0;
	while (w && *entries < (1u << 24)) {
		CHECK(ext_len(w) <= DAXFS_FREE_EXTENT_MAX);
		++*entries;
		*pages += ext_len(w);
		w = ext_link(fs, w);
	}
}

/* Takes every page the pool gives (the bump is then spent) and frees
 * them all again: the pool is aged.  Returns how many there were. */
static u64 age_pool(struct daxfs_op *op)
{
	return t_count_pages(op, 1u << 22);
}

/* Pages freed one by one in address order, up or down, come back as
 * one extent; two ranges apart stay two. */
static void test_frees_merge(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	void *r = t_setup(&fs, 8 * MiB, NULL);
	u64 offs[64], e0, p0, e, p, i, got;

	daxfs_op_begin(&fs, &op);
	ext_walk(&fs, &e0, &p0);
	got = daxfs_alloc_pages(&op, 64, offs);
	CHECK_EQ(got, 64);
	for (i = 1; i < 64; i++)
		CHECK_EQ(offs[i], offs[0] + i * PG);
	for (i = 0; i < 32; i++)	/* up */
		CHECK_EQ(daxfs_free_now(&op, offs[i], DAXFS_CLASS_PAGE), 0);
	ext_walk(&fs, &e, &p);
	CHECK_EQ(p, p0 + 32);
	CHECK(e <= e0 + 1);
	CHECK(ext_holds(ext_head(&fs), offs[0], 32));
	for (i = 64; i-- > 48; )	/* down, apart from the first 32 */
		CHECK_EQ(daxfs_free_now(&op, offs[i], DAXFS_CLASS_PAGE), 0);
	ext_walk(&fs, &e, &p);
	CHECK_EQ(p, p0 + 48);
	CHECK_EQ(ext_head(&fs), offs[63] | 15);	/* named by its last page */
	CHECK(ext_holds(ext_link(&fs, ext_head(&fs)), offs[0], 32));
	/* the gap closes from above the lower extent: it grows in place,
	 * but it is not on top, so a third entry comes and goes */
	for (i = 32; i < 48; i++)
		CHECK_EQ(daxfs_free_now(&op, offs[i], DAXFS_CLASS_PAGE), 0);
	ext_walk(&fs, &e, &p);
	CHECK_EQ(p, p0 + 64);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, 8 * MiB);
	t_region_free(r, 8 * MiB);
}

/* With the bump spent, a write's take of many pages is one contiguous
 * piece off the stack, and single pages come off the top extent's front,
 * in address order. */
static void test_aged_takes(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 8 * MiB, offs[64], n, i, got, a, b;
	void *r = t_setup(&fs, size, NULL);

	daxfs_op_begin(&fs, &op);
	n = age_pool(&op);
	CHECK(n > 1000);
	CHECK(daxfs_load(daxfs_state_word(&fs, bump)) + 64 * PG > fs.pool_end);
	got = daxfs_alloc_held(&op, 64, offs);
	CHECK_EQ(got, 64);
	for (i = 1; i < got; i++)
		CHECK_EQ(offs[i], offs[0] + i * PG);
	daxfs_pages_free(&fs, offs[0], got);
	CHECK_EQ(daxfs_hold_pages(&op, 0, 0), 0);
	a = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	b = daxfs_alloc(&op, DAXFS_CLASS_PAGE);
	CHECK(a && b);
	CHECK_EQ(b, a + PG);
	CHECK_EQ(daxfs_free_now(&op, a, DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(daxfs_free_now(&op, b, DAXFS_CLASS_PAGE), 0);
	/* everything is still there to take */
	CHECK_EQ(age_pool(&op), n);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, size);
	t_region_free(r, size);
}

/* A release larger than one extent splits at DAXFS_FREE_EXTENT_MAX. */
static void test_extent_max(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 64 * MiB, n = DAXFS_FREE_EXTENT_MAX + 128, *offs, e, p, i;
	void *r = t_setup(&fs, size, NULL);

	offs = calloc(n, sizeof(*offs));
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < n; i += 64)
		CHECK_EQ(daxfs_alloc_pages(&op, 64, offs + i), 64);
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, offs[i], DAXFS_CLASS_PAGE), 0);
	ext_walk(&fs, &e, &p);
	CHECK(p >= n);
	CHECK(e >= 2);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, size);
	t_region_free(r, size);
	free(offs);
}

/* A batch remainder whose words a stray store garbled (an end not on a
 * page, a range past the pool) is refused, not looped on or pushed. */
static void test_release_refuses_garbage(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 8 * MiB, NULL);
	u64 e0, p0, e, p, a = fs.pool_off + 16 * PG;

	ext_walk(&fs, &e0, &p0);
	daxfs_pages_release(&fs, a, a + 1);
	daxfs_pages_release(&fs, a + 1, a + PG + 1);
	daxfs_pages_release(&fs, fs.pool_end - PG, fs.pool_end + PG);
	daxfs_pages_release(&fs, a, a);
	ext_walk(&fs, &e, &p);
	CHECK_EQ(e, e0);
	CHECK_EQ(p, p0);
	daxfs_host_leave(&fs);
	t_region_free(r, 8 * MiB);
}

/* A stray store gives the head an extent running past the pool's end:
 * no page of it is handed out, and fsck names the stack. */
static void test_garbled_extent(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 8 * MiB, last, w, x;
	void *r = t_setup(&fs, size, NULL);
	struct daxfs_check_result res;
	u8 *seen;

	daxfs_op_begin(&fs, &op);
	age_pool(&op);
	last = fs.pool_end - PG;
	w = ext_head(&fs);
	CHECK(w != 0);
	fs.state->free_head[DAXFS_CLASS_PAGE].head.off = last | 7;
	seen = calloc((fs.pool_end - fs.pool_off) / PG, 1);
	while ((x = daxfs_alloc(&op, DAXFS_CLASS_PAGE))) {
		CHECK(x >= fs.pool_off && x < fs.pool_end);
		if (x < fs.pool_off || x >= fs.pool_end)
			break;
		CHECK(!seen[(x - fs.pool_off) / PG]);	/* once */
		seen[(x - fs.pool_off) / PG] = 1;
	}
	free(seen);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	CHECK_EQ(t_fsck(r, size, false, NULL, NULL, &res), 0);
	CHECK(res.nr[DAXFS_CHK_ERROR] > 0);
	/* repair rebuilds the stacks: clean again */
	CHECK_EQ(t_fsck(r, size, true, NULL, NULL, &res), 0);
	t_check_clean(r, size);
	t_region_free(r, size);
}

/* ---- four hosts on an aged pool: pieces of random sizes ---- */

#define NT	4
#define SLOTS	8
#define PIECE	48

struct owner {
	void *r;
	u64 size, pool_off;
	int id, errors;
	u8 *map;		/* one byte per pool page: owner id + 1 */
};

static int claim(struct owner *o, u64 off, u8 who)
{
	u8 zero = 0;

	return !__atomic_compare_exchange_n(&o->map[(off - o->pool_off) / PG],
					    &zero, who, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
}

static void unclaim(struct owner *o, u64 off)
{
	__atomic_store_n(&o->map[(off - o->pool_off) / PG], 0, __ATOMIC_SEQ_CST);
}

/* Frees a slot's pages: up, down or contiguous pieces at once. */
static void free_slot(struct owner *o, struct daxfs_fs *fs,
		      struct daxfs_op *op, u64 *pg, u64 n, u64 how, u8 who)
{
	u64 i, j, *w;

	for (i = 0; i < n; i++) {
		w = daxfs_ptr(fs, pg[i], 8, 8);
		if (!w || *w != ((u64)who << 56 | pg[i]))
			o->errors++;	/* someone else wrote our page */
		unclaim(o, pg[i]);
	}
	if (how == 0) {
		for (i = 0; i < n; i++)
			CHECK_EQ(daxfs_free_now(op, pg[i], DAXFS_CLASS_PAGE), 0);
	} else if (how == 1) {
		for (i = n; i-- > 0; )
			CHECK_EQ(daxfs_free_now(op, pg[i], DAXFS_CLASS_PAGE), 0);
	} else {
		for (i = 0; i < n; i = j) {
			for (j = i + 1; j < n && pg[j] == pg[j - 1] + PG; j++)
				;
			daxfs_pages_free(fs, pg[i], j - i);
		}
	}
}

static void *owner_main(void *arg)
{
	struct owner *o = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 pg[SLOTS][PIECE], cnt[SLOTS] = { 0 }, seed = 7 + o->id, i, s, k;
	u8 who = (u8)(o->id + 1);

	if (t_join(&fs, o->r, o->size)) {
		o->errors++;
		return NULL;
	}
	for (i = 0; i < 20000; i++) {
		s = t_rand(&seed) % SLOTS;
		daxfs_op_begin(&fs, &op);
		if (cnt[s]) {
			free_slot(o, &fs, &op, pg[s], cnt[s], t_rand(&seed) % 3,
				  who);
			cnt[s] = 0;
		} else {
			cnt[s] = daxfs_alloc_pages(&op, 1 + t_rand(&seed) % PIECE,
						   pg[s]);
			for (k = 0; k < cnt[s]; k++) {
				o->errors += claim(o, pg[s][k], who);
				*(u64 *)(fs.base + pg[s][k]) =
					(u64)who << 56 | pg[s][k];
			}
		}
		daxfs_op_end(&op);
	}
	daxfs_op_begin(&fs, &op);
	for (s = 0; s < SLOTS; s++)
		free_slot(o, &fs, &op, pg[s], cnt[s], 2, who);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_hosts_race_pieces(void)
{
	struct t_renewer rn;
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct owner o[NT];
	pthread_t th[NT];
	u64 size = 8 * MiB, base, n;
	int i, errs = 0;
	u8 *map;
	void *r = t_setup(&fs, size, NULL);

	daxfs_op_begin(&fs, &op);
	n = age_pool(&op);
	daxfs_op_end(&op);
	base = t_used(&fs);
	map = calloc((fs.pool_end - fs.pool_off) / PG, 1);
	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (i = 0; i < NT; i++) {
		o[i] = (struct owner){ .r = r, .size = size, .id = i,
				       .pool_off = fs.pool_off, .map = map };
		pthread_create(&th[i], NULL, owner_main, &o[i]);
	}
	for (i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		errs += o[i].errors;
	}
	t_renew_stop(&rn);
	CHECK_EQ(errs, 0);
	CHECK_EQ(t_used(&fs), base);
	daxfs_op_begin(&fs, &op);
	CHECK_EQ(age_pool(&op), n);	/* nothing lost */
	daxfs_op_end(&op);
	free(map);
	daxfs_host_leave(&fs);
	t_check_clean(r, size);
	t_region_free(r, size);
}

int main(void)
{
	RUN(test_frees_merge);
	RUN(test_aged_takes);
	RUN(test_extent_max);
	RUN(test_release_refuses_garbage);
	RUN(test_garbled_extent);
	RUN(test_hosts_race_pieces);
	return t_done();
}
