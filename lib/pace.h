/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Which copy a write of a page or more makes, chosen by the program's own
 * pace (docs/libdaxfs.md "Paced copies").
 *
 * Streaming stores skip the reads for ownership of the target lines and
 * leave the caller's cache alone, but the write's fence then waits for
 * them to reach memory; cached stores return at once and pay later, when
 * their dirty lines are evicted.  Which is faster depends on what the
 * program does between writes: a loop that only writes gains from the
 * cached copy (189-209 ns against 308-336 a 4 KiB rewrite,
 * bench/write_between with no work between), one that touches 32 KiB of
 * its own memory in between from streaming (491-526 against 759-827).  No length or vendor rule
 * knows that; the clock between two writes does.
 *
 * So a write through a per-open-file cache that the length rule streams
 * and that continues the last one, or appends, is paced, if it is shorter
 * than DAXFS_PACE_MAX (one that jumps has no lines prefetched, and a long
 * one evicts its own lines: streaming them wins either way).  Paced
 * writes go in rounds.  The first PACE_TRY writes of a round make the
 * other copy than the usual one, the rest the usual one, and each write
 * is timed from its start to the start of the next (the write and the
 * program's work after it).  Counted are the tries but the first
 * PACE_SETTLE (the caches change state then) and the round's last
 * PACE_USUAL, but no cycle of PACE_IDLE ticks or more (the program was
 * doing something else).  When a round ends with the tries at least 1/16
 * shorter on average, the tried copy becomes the usual one and the next
 * round is PACE_ROUND writes long; when they lost, the next round is
 * twice as long as this one, up to PACE_ROUND_MAX, so that a program
 * whose choice is clear pays for few tries.  A zeroed cache starts out
 * streaming, with a short round.
 *
 * Threads sharing a cache race on these fields with plain loads and
 * stores: a lost update makes one round's choice worse, never a wrong
 * byte, as both copies write the same bytes.
 */
#ifndef DAXFS_LIB_PACE_H
#define DAXFS_LIB_PACE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "core/daxfs_core.h"

#define PACE_ROUND	128	/* writes in a round, at first */
#define PACE_ROUND_MAX	1024	/* ... after rounds whose tries lost */
#define PACE_TRY	8	/* the round's first, the other copy */
#define PACE_SETTLE	2	/* cycles not counted after a switch */
#define PACE_USUAL	56	/* the round's last cycles, counted */
#define PACE_IDLE	(1u << 20)	/* ticks: about 0.3-1 ms */

/* state: bits 0-9 the phase in the round, 10-11 the round's length
 * (PACE_ROUND shifted by them), bit 12 the usual copy is the cached one,
 * bits 16-23 and 24-31 the tried and usual cycles counted */
#define PACE_PHASE	(PACE_ROUND_MAX - 1)
#define PACE_LONGER	10
#define PACE_CACHED	(1u << 12)

/* A clock that only has to be monotonic on one CPU for a moment. */
static inline uint64_t pace_clock(void)
{
#if defined(__x86_64__)
	return __rdtsc();
#else
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

/* Is the cycle of the write at phase (of a round len long) counted? */
static inline bool pace_counted(uint32_t phase, uint32_t len)
{
	return (phase >= PACE_SETTLE && phase < PACE_TRY) ||
	       phase >= len - PACE_USUAL;
}

/*
 * Whether the cycle that the next paced write through p ends, or the one
 * it starts, is counted: only then does it read the clock.  The others
 * pass 0 for now, which counts nothing.  An `rdtsc` costs 16 ns on an
 * Intel Xeon (docs/benchmarks.md "Writes without the fine clock, and
 * rewrites of a file the cache holds"), and a program whose choice is
 * clear spends 64 of every 1,024 writes timed.
 */
static inline bool daxfs_pace_timed(const struct daxfs_write_pace *p)
{
	uint32_t st = daxfs_load32(&p->state);
	uint32_t len = PACE_ROUND << ((st >> PACE_LONGER) & 3);
	uint32_t phase = st & PACE_PHASE;

	if (phase >= len)
		phase = 0;
	return pace_counted(phase, len) ||
	       pace_counted((phase ? phase : len) - 1, len);
}

/*
 * Whether the paced write starting at clock now through p streams (now
 * 0: a write daxfs_pace_timed says needs no clock).  The
 * cycle that now ends is counted for the write before (at phase prev): a
 * tried one after the first PACE_SETTLE of its round, a usual one among
 * the round's last PACE_USUAL.
 */
static inline bool daxfs_pace_stream(struct daxfs_write_pace *p, uint64_t now)
{
	uint32_t last = daxfs_load32(&p->last);
	uint32_t st = daxfs_load32(&p->state);
	uint32_t longer = (st >> PACE_LONGER) & 3, len = PACE_ROUND << longer;
	uint32_t phase = st & PACE_PHASE, prev;
	uint32_t n_try = (st >> 16) & 0xff, n_use = st >> 24;
	uint32_t s_try = daxfs_load32(&p->sum[0]);
	uint32_t s_use = daxfs_load32(&p->sum[1]);
	bool cached = st & PACE_CACHED;
	/* modulo 2^32: a cycle of 2^32 ticks or more (a second or two)
	 * may alias to a short one, one in 4,096 of them: a hint's error */
	uint32_t cycle = (uint32_t)now - last;

	if (phase >= len)	/* a cache never zeroed, or torn */
		phase = 0;
	prev = (phase ? phase : len) - 1;
	/* a clock that ran backwards gives a cycle too long to count */
	if (last && now && cycle < PACE_IDLE && pace_counted(prev, len)) {
		if (prev < PACE_TRY) {
			s_try += (uint32_t)cycle;
			n_try++;
		} else {
			s_use += (uint32_t)cycle;
			n_use++;
		}
	}
	if (!phase) {
		/* the tried copy's mean at least 1/16 below the usual's:
		 * it becomes the usual one; tries that lose come less often */
		if (n_try && n_use &&
		    (uint64_t)s_try * n_use * 16 < (uint64_t)s_use * n_try * 15) {
			cached = !cached;
			longer = 0;
		} else if (n_try && n_use && longer < 3) {
			longer++;
		}
		len = PACE_ROUND << longer;
		s_try = s_use = n_try = n_use = 0;
	}
	daxfs_store32(&p->last, (uint32_t)now);
	daxfs_store32(&p->sum[0], s_try);
	daxfs_store32(&p->sum[1], s_use);
	daxfs_store32(&p->state, (phase + 1 < len ? phase + 1 : 0) |
				 longer << PACE_LONGER |
				 (cached ? PACE_CACHED : 0) |
				 (n_try & 0xff) << 16 | (n_use & 0xff) << 24);
	/* tries make the other copy */
	return (phase < PACE_TRY) == cached;
}

/* daxfs_pace_stream for the write starting now, the clock read only
 * where the cycle it ends or starts counts */
static inline bool daxfs_pace_stream_now(struct daxfs_write_pace *p)
{
	return daxfs_pace_stream(p, daxfs_pace_timed(p) ? pace_clock() : 0);
}

#endif
