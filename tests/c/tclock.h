/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Clocks that misbehave on purpose, for the C tests of what the core does
 * with time: the program that includes this header (one file of it)
 * interposes clock_gettime, so that the core linked into it reads
 *   - CLOCK_REALTIME_COARSE t_coarse_lag_ns behind CLOCK_REALTIME, as in a
 *     guest whose ticks run late (tests/c/test_stamp_lag.c);
 *   - once the monotonic clock passed t_wall_step_at_ns (0: never), the
 *     wall clock (CLOCK_REALTIME and its coarse form) T_WALL_STEP_NS
 *     behind, as after settimeofday or an NTP step (tests/c/test_pcache.c:
 *     a step in the middle of a wait, whatever the wait read before).
 * Reads go through the system call: there is no vDSO call to interpose.
 */
#ifndef DAXFS_TCLOCK_H
#define DAXFS_TCLOCK_H

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define T_WALL_STEP_NS	(3600LL * 1000000000LL)

static volatile long long t_coarse_lag_ns;
static volatile long long t_wall_step_at_ns;

static inline void t_ts_sub(struct timespec *ts, long long ns)
{
	ns = ts->tv_sec * 1000000000LL + ts->tv_nsec - ns;
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
}

static inline long long t_mono_ns_raw(void)
{
	struct timespec ts;

	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	bool coarse = id == CLOCK_REALTIME_COARSE;
	bool wall = coarse || id == CLOCK_REALTIME;

	if (syscall(SYS_clock_gettime, coarse && t_coarse_lag_ns ?
		    CLOCK_REALTIME : id, ts))
		return -1;
	if (coarse && t_coarse_lag_ns)
		t_ts_sub(ts, t_coarse_lag_ns);
	if (wall && t_wall_step_at_ns && t_mono_ns_raw() >= t_wall_step_at_ns)
		t_ts_sub(ts, T_WALL_STEP_NS);
	return 0;
}

#endif /* DAXFS_TCLOCK_H */
