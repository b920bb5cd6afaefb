/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * One participant of the 16-byte CAS check (tests/vm/test_kernel_cas16.py):
 * guests (cas16mod.ko) and the host (hostcas16) each add 1 to both halves
 * of one 16-byte word in the shared memory, iters times, with the core's
 * own daxfs_cas16.  If the CAS is atomic across QEMU processes, both halves
 * end at parties * iters and every pair a failed CAS hands back is equal.
 *
 * A guest goes on past iters until it has seen min_retries failed CASes,
 * so the check never passes without contention, however the machine
 * schedules the parties.  iters == 0 (the host): go on until every other
 * party has finished, so each runs against it all along.  st->done says
 * how many increments a party made.
 *
 * Layout of the shared page (zeroed beforehand): w[0..1] the word,
 * w[8] arrivals (start barrier), w[16] finishers.
 */
#ifndef DAXFS_CAS16_CHECK_H
#define DAXFS_CAS16_CHECK_H

#include "compat.h"

#define CAS16_WAIT_NS	(300ULL * 1000000000ULL)

/* Waiting for the others (guests boot for seconds) must not burn a CPU
 * of the machine the guests run on. */
#ifdef __KERNEL__
#include <linux/delay.h>
#define cas16_pause()	usleep_range(100, 200)
#else
#include <unistd.h>
#define cas16_pause()	usleep(100)
#endif

struct cas16_stats {
	u64 lo, hi;		/* the word when everybody finished */
	u64 done;		/* our increments */
	u64 retries;		/* failed CASes: the contention was real */
	u64 torn;		/* plain two-load reads with unequal halves */
	u64 bad_pairs;		/* unequal pairs returned by a failed CAS */
};

/* Waits until *ctr reaches n; -ETIMEDOUT after CAS16_WAIT_NS. */
static inline int cas16_wait(u64 *ctr, u64 n)
{
	s64 end = daxfs_now_ns() + (s64)CAS16_WAIT_NS;

	while (daxfs_load(ctr) < n) {
		if (daxfs_now_ns() > end)
			return -ETIMEDOUT;
		cas16_pause();
	}
	return 0;
}

static inline void cas16_add(u64 *w, struct cas16_stats *st)
{
	u64 exp[2];

	exp[0] = daxfs_load(&w[0]);
	exp[1] = daxfs_load(&w[1]);
	if (exp[0] != exp[1])
		st->torn++;
	while (!daxfs_cas16(w, exp, exp[0] + 1, exp[1] + 1)) {
		st->retries++;
		if (exp[0] != exp[1])
			st->bad_pairs++;
	}
	st->done++;
}

static inline int cas16_hammer(u64 *w, u64 iters, u64 min_retries,
			       u64 parties, struct cas16_stats *st)
{
	s64 end = daxfs_now_ns() + (s64)CAS16_WAIT_NS;
	int err;

	daxfs_faa(&w[8], 1);
	err = cas16_wait(&w[8], parties);
	if (err)
		return err;
	for (;;) {
		if (iters && st->done >= iters && st->retries >= min_retries)
			break;
		if (!iters && daxfs_load(&w[16]) >= parties - 1)
			break;
		if (daxfs_now_ns() > end)
			return -ETIMEDOUT;
		cas16_add(w, st);
	}
	daxfs_faa(&w[16], 1);
	err = cas16_wait(&w[16], parties);
	st->lo = daxfs_load(&w[0]);
	st->hi = daxfs_load(&w[1]);
	return err;
}

#endif /* DAXFS_CAS16_CHECK_H */
