// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Walks that stop (docs/alloc.md and docs/reclaim.md "Stopped walks"): in
 * the kernel daxfs_walk_yield() returns true when the task got a fatal
 * signal, and a compaction or reclaim walk then ends at once.  Here the
 * hook daxfs_walk_stop makes the walk stop at its k-th step, for many k
 * over the whole walk.  Whatever the step, nothing is lost or freed twice:
 * a later compaction (or reclaim) gives every page back, and fsck of the
 * region after we left is clean, with nothing leaked.
 */
#include "tpool.h"

#define MiB (1ULL << 20)
#define SIZE (4 * MiB)
#define MAXOBJ (SIZE / 64)

static u64 objs[MAXOBJ];
static u64 stop_at, steps;

/* From step k on, as a fatal signal stays pending in the kernel. */
static bool stop_from(void)
{
	return ++steps >= stop_at && stop_at;
}

static u64 held_word(struct daxfs_op *op)
{
	return daxfs_load(&op->lane->pad[DAXFS_LANE_HOLD_CHAIN]);
}

/* The pool full of free 64-byte objects; compaction stopped at step k,
 * then run to the end: every page comes back.  Returns the steps a
 * whole compaction took when k is 0 (never stops). */
static u64 compact_stopped_at(u64 k)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 n0, n, i, got, base;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_op_begin(&fs, &op);
	n0 = t_count_pages(&op, SIZE / 4096);
	base = t_used(&fs);
	for (n = 0; n < MAXOBJ && (objs[n] = daxfs_alloc(&op, DAXFS_CLASS_64)); n++)
		;
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	CHECK_EQ(t_used(&fs), base);

	steps = 0;
	stop_at = k;
	daxfs_walk_stop = stop_from;
	got = daxfs_compact(&op);
	daxfs_walk_stop = NULL;
	if (k && steps >= k) {
		/* it ended there: each later walk stopped at its first step */
		CHECK(steps <= k + DAXFS_CLASS_PAGE);
		/* stopped: the chain went back to its stack, or is held in
		 * the lane; the next compaction resumes it */
		got += daxfs_compact(&op);
		CHECK_EQ(held_word(&op), 0);
	}
	CHECK_EQ(t_used(&fs), base);
	got += t_count_pages(&op, SIZE / 4096);
	CHECK(got + 1 >= n0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
	return steps;
}

static void test_compact_stops_anywhere(void)
{
	u64 total = compact_stopped_at(0), k, cases = 0;

	CHECK(total > MAXOBJ / 2);
	/* the check, every sort pass and the page release */
	for (k = 1; k <= total + 1; k += k < 16 ? 1 : total / 53 + 1, cases++)
		compact_stopped_at(k);
	CHECK(cases > 60);
}

static u64 held_any(struct daxfs_fs *fs)
{
	u64 v = 0;
	u32 i;

	for (i = 0; i < DAXFS_LANES && !v; i++)
		v = daxfs_load(&daxfs_lane_at(fs, fs->host, i)->pad[DAXFS_LANE_HOLD_CHAIN]);
	return v;
}

#define NB 6

/* NB sealed limbo batches of one page object each, all free at once;
 * a reclaim stopped at step k leaves the rest of the chain held in its
 * lane, and the next reclaim frees it: every page and object freed once.
 * Returns whether the stopped reclaim left a chain held. */
static bool reclaim_stopped_at(u64 k)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct daxfs_limbo *lb;
	u64 b[NB], x[NB], used0, i;
	bool held;
	void *r = t_setup(&fs, SIZE, NULL);

	daxfs_reclaim_all(&fs);
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < NB; i++) {
		CHECK_EQ(daxfs_alloc_pages(&op, 1, &b[i]), 1);
		CHECK_EQ(daxfs_alloc_pages(&op, 1, &x[i]), 1);
	}
	daxfs_op_end(&op);
	used0 = t_used(&fs);
	for (i = 0; i < NB; i++) {
		lb = (struct daxfs_limbo *)(fs.base + b[i]);
		memset(lb, 0, sizeof(*lb));
		lb->next = i + 1 < NB ? b[i + 1] : 0;
		lb->epoch = 1;		/* sealed long ago */
		lb->entry[0] = x[i] | DAXFS_CLASS_PAGE;
		lb->count = 1;
	}
	for (i = 0; i < 4; i++)
		daxfs_faa(daxfs_state_word(&fs, epoch), 1);
	daxfs_store(&daxfs_host_at(&fs, fs.host)->limbo_sealed, b[0]);

	steps = 0;
	stop_at = k;
	daxfs_walk_stop = stop_from;
	daxfs_reclaim_all(&fs);
	daxfs_walk_stop = NULL;
	held = held_any(&fs) != 0;
	daxfs_reclaim_all(&fs);
	CHECK_EQ(held_any(&fs), 0);
	CHECK_EQ(used0 - t_used(&fs), 2 * NB * DAXFS_BLOCK_SIZE);
	daxfs_host_leave(&fs);
	t_check_clean(r, SIZE);
	t_region_free(r, SIZE);
	return held;
}

static void test_reclaim_stops_anywhere(void)
{
	u64 k;

	/* stopped at its first step, the walk left the chain to the next */
	CHECK(reclaim_stopped_at(1));
	for (k = 2; k <= 4 * NB; k++)
		reclaim_stopped_at(k);
}

int main(void)
{
	RUN(test_compact_stops_anywhere);
	RUN(test_reclaim_stops_anywhere);
	return t_done();
}
