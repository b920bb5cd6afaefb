// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Paced copies (lib/pace.h): a write of a page or more through an open
 * file's cache makes the copy that the program's own pace shows to be
 * faster.  Driven here by a made-up clock: a "program" whose cycle (a
 * write and its work up to the next) lasts one time with the cached copy
 * and another with streaming, so what the pace should choose is known.
 */
#include "tutil.h"
#include "lib/pace.h"

/* A program whose cycles last cached or streamed ticks by the copy made:
 * runs n paced writes through p from *now on; returns how many of the
 * last `tail` of them streamed. */
static unsigned run(struct daxfs_write_pace *p, uint64_t *now, unsigned n,
		    unsigned tail, uint64_t cached, uint64_t streamed)
{
	unsigned i, streams = 0;
	bool s;

	for (i = 0; i < n; i++) {
		s = daxfs_pace_stream(p, *now);
		if (i >= n - tail)
			streams += s;
		*now += s ? streamed : cached;
	}
	return streams;
}

/* A fresh cache streams, but for the round's tries of the cached copy. */
static void test_fresh_cache_streams(void)
{
	struct daxfs_write_pace p = { 0 };
	unsigned i;

	for (i = 0; i < PACE_TRY; i++)
		CHECK(!daxfs_pace_stream(&p, 1000 + i));
	for (; i < PACE_ROUND; i++)
		CHECK(daxfs_pace_stream(&p, 1000 + i));
}

/* A window of whole longest rounds, once the pace has settled on a copy
 * and its tries keep losing: only the tries take the other copy. */
#define SETTLED		(8 * PACE_ROUND_MAX)
#define WINDOW		(4 * PACE_ROUND_MAX)
#define TRIES		(4 * PACE_TRY)

/* A loop that only writes: the cached copy is faster and becomes the
 * usual one after the first round, and stays so. */
static void test_tight_loop_goes_cached(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;

	run(&p, &now, PACE_ROUND, 0, 200, 300);
	/* the next round tries streaming first, then caches */
	CHECK_EQ(run(&p, &now, PACE_TRY, PACE_TRY, 200, 300), PACE_TRY);
	CHECK_EQ(run(&p, &now, PACE_ROUND - PACE_TRY, PACE_ROUND - PACE_TRY,
		     200, 300), 0);
	/* later: the tries only, in rounds of the longest length */
	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 200, 300), TRIES);
}

/* Rounds whose tries lose get longer, twice as long a round, up to
 * PACE_ROUND_MAX: the blocks of tries start that far apart. */
static void test_losing_tries_come_less_often(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;
	unsigned i, start = 0, len = 0, blocks = 0, gap = PACE_ROUND;
	bool s, before = true;

	for (i = 0; i < 8 * PACE_ROUND_MAX; i++) {
		s = daxfs_pace_stream(&p, now);
		now += s ? 500 : 700;
		if (!s && before) {		/* a block of tries starts */
			if (blocks++) {
				CHECK_EQ(i - start, gap);
				if (gap < PACE_ROUND_MAX)
					gap *= 2;
			}
			start = i;
			len = 0;
		}
		len += !s;
		if (s && !before)		/* ... and ends */
			CHECK_EQ(len, PACE_TRY);
		before = s;
	}
	CHECK(blocks > 8);
}

/* A program that works between its writes: streaming stays. */
static void test_busy_program_streams(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;

	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 777, 500),
		 WINDOW - TRIES);
}

/* When the program changes its ways, the copy follows within the longest
 * round and one more, both ways. */
static void test_follows_a_change(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;

	run(&p, &now, SETTLED, 0, 200, 300);
	run(&p, &now, 2 * PACE_ROUND_MAX, 0, 777, 500);
	/* at most one block of tries in a short round */
	CHECK(run(&p, &now, PACE_ROUND, PACE_ROUND, 777, 500) >=
	      PACE_ROUND - PACE_TRY);
	run(&p, &now, SETTLED, 0, 777, 500);
	run(&p, &now, 2 * PACE_ROUND_MAX, 0, 200, 300);
	CHECK(run(&p, &now, PACE_ROUND, PACE_ROUND, 200, 300) <= PACE_TRY);
}

/* After a switch the rounds are short again: PACE_ROUND writes, then
 * twice, then four times as many.  (The first round's tries run on from
 * the old round's usual copy, the same one: the exact runs of tries found
 * start the second and the third.) */
static void test_a_switch_starts_short_rounds(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;
	unsigned i, run_len = 0, found = 0, starts[3];
	bool s;

	run(&p, &now, SETTLED, 0, 200, 300);	/* cached, long rounds */
	for (i = 0; i < 4 * PACE_ROUND_MAX && found < 3; i++) {
		s = daxfs_pace_stream(&p, now);
		now += s ? 500 : 777;		/* now streaming is faster */
		if (!s) {
			run_len++;
			continue;
		}
		/* a cached run of exactly the tries: the new copy's rounds */
		if (run_len == PACE_TRY)
			starts[found++] = i - PACE_TRY;
		run_len = 0;
	}
	CHECK_EQ(found, 3);
	if (found == 3) {
		CHECK_EQ(starts[1] - starts[0], 2 * PACE_ROUND);
		CHECK_EQ(starts[2] - starts[1], 4 * PACE_ROUND);
	}
}

/* Less than 1/16 faster is not enough to switch (a noisy clock must not
 * flap between the two). */
static void test_small_difference_keeps_the_copy(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1;

	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 950, 1000),
		 WINDOW - TRIES);
	/* 1/8 faster is */
	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 875, 1000), TRIES);
}

/* Cycles of PACE_IDLE ticks or more are idle time and say nothing about
 * the copy: a program that pauses after each streamed write must not look
 * slow with streaming.  Nor does a clock that ran backwards (the thread
 * moved to a CPU whose clock is behind).  With nothing to compare, the
 * rounds stay short. */
static void test_idle_and_backward_cycles_do_not_count(void)
{
	struct daxfs_write_pace p = { 0 };
	uint64_t now = 1ull << 40;
	unsigned short_rounds = WINDOW / PACE_ROUND;

	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 300, PACE_IDLE),
		 WINDOW - short_rounds * PACE_TRY);
	CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 300, -(uint64_t)50),
		 WINDOW - short_rounds * PACE_TRY);
}

/* Whatever a caller's cache holds (not zeroed, or torn by threads racing
 * on it), the pace gives a copy and then runs its rounds as usual. */
static void test_garbage_recovers(void)
{
	struct daxfs_write_pace p;
	uint64_t now;
	unsigned seed = 1, k;

	for (k = 0; k < 1000; k++) {
		p.last = (uint32_t)rand_r(&seed) << 1 ^ (uint32_t)rand_r(&seed);
		p.state = (uint32_t)rand_r(&seed) << 1 ^ (uint32_t)rand_r(&seed);
		p.sum[0] = (uint32_t)rand_r(&seed) * 3u;
		p.sum[1] = (uint32_t)rand_r(&seed) * 5u;
		now = p.last + (uint64_t)rand_r(&seed);
		CHECK_EQ(run(&p, &now, SETTLED + WINDOW, WINDOW, 200, 300),
			 TRIES);
	}
}

/*
 * A write reads the clock only where daxfs_pace_timed says a cycle it
 * ends or starts counts: a pace given the clock at those writes only
 * chooses as one given it at every write, through switches both ways and
 * idle cycles, counting the same cycles, and a program whose choice is clear reads it at fewer than
 * one write in ten.
 */
static void test_untimed_writes_choose_the_same(void)
{
	struct daxfs_write_pace every = { 0 }, some = { 0 };
	static const uint64_t cycles[][2] = {	/* cached, streamed */
		{ 200, 300 }, { 777, 500 }, { 300, PACE_IDLE }, { 875, 1000 },
		{ 200, 300 },
	};
	uint64_t now = 1;
	unsigned phase, i, timed = 0, settled_timed = 0, diff = 0;
	bool a, b;

	for (phase = 0; phase < 5; phase++) {
		for (i = 0; i < SETTLED + WINDOW; i++) {
			bool t = daxfs_pace_timed(&some);

			a = daxfs_pace_stream(&every, now);
			b = daxfs_pace_stream(&some, t ? now : 0);
			/* the same cycles counted: the same sums */
			diff += a != b || every.state != some.state ||
				every.sum[0] != some.sum[0] ||
				every.sum[1] != some.sum[1];
			timed += t;
			if (phase == 4 && i >= SETTLED)
				settled_timed += t;
			now += cycles[phase][!a];
		}
	}
	CHECK_EQ(diff, 0);
	CHECK(timed < 5 * (SETTLED + WINDOW));
	/* the last window: longest rounds, 64 timed writes in each */
	CHECK_EQ(settled_timed, WINDOW / PACE_ROUND_MAX *
		 (PACE_TRY - PACE_SETTLE + 1 + PACE_USUAL + 1));
}

int main(void)
{
	RUN(test_fresh_cache_streams);
	RUN(test_tight_loop_goes_cached);
	RUN(test_losing_tries_come_less_often);
	RUN(test_busy_program_streams);
	RUN(test_follows_a_change);
	RUN(test_a_switch_starts_short_rounds);
	RUN(test_small_difference_keeps_the_copy);
	RUN(test_idle_and_backward_cycles_do_not_count);
	RUN(test_garbage_recovers);
	RUN(test_untimed_writes_choose_the_same);
	return t_done();
}
