// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * LD_PRELOAD shim for tests/test_lease_clock.py: steps this process's
 * wall clock (CLOCK_REALTIME, gettimeofday, time) by DAXFS_TEST_STEP_S
 * seconds once DAXFS_TEST_STEP_AFTER_MS milliseconds have passed since
 * it was loaded, as settimeofday or an NTP step would on a real host.
 * CLOCK_MONOTONIC is left alone, as a real step leaves it.
 *
 * DAXFS_TEST_HOLD_WALL=1 (tests/test_fuse_hosts.py) instead holds the
 * wall clock (CLOCK_REALTIME and its coarse form) at its first reading:
 * every write falls in one tick, as rewrites in quick succession do, so a
 * rewrite finds the file's stamps fresh and only marks its change counter.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static clock_gettime_fn real_clock_gettime;
static long long step_s, after_ns, start_ns;
static int hold_wall;
static struct timespec held;

static long long mono_ns(void)
{
	struct timespec ts;

	real_clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((constructor)) static void clockstep_init(void)
{
	const char *s = getenv("DAXFS_TEST_STEP_S");
	const char *a = getenv("DAXFS_TEST_STEP_AFTER_MS");
	const char *h = getenv("DAXFS_TEST_HOLD_WALL");

	real_clock_gettime = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	step_s = s ? atoll(s) : 0;
	after_ns = (a ? atoll(a) : 0) * 1000000LL;
	start_ns = mono_ns();
	hold_wall = h && atoi(h);
	real_clock_gettime(CLOCK_REALTIME, &held);
}

static long long shift_s(void)
{
	return mono_ns() - start_ns >= after_ns ? step_s : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int ret;

	if (!real_clock_gettime)
		clockstep_init();
	if (hold_wall && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		*ts = held;
		return 0;
	}
	ret = real_clock_gettime(id, ts);
	if (!ret && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += shift_s();
	return ret;
}

int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;

	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!tv)
		return 0;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
