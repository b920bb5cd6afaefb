/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Times in the region are s64 nanoseconds (docs/format.md).  The front ends
 * that hand out struct timespec (the preload, daxfs-fuse) convert here, the
 * way the kernel does: nanoseconds of a time before 1970 are never negative
 * (floor division), and seconds beyond the range are clamped to the range
 * daxfs.ko sets as s_time_min/max (kernel/super.c), never overflowed.
 */
#ifndef DAXFS_LIB_TIMENS_H
#define DAXFS_LIB_TIMENS_H

#include <stdint.h>
#include <time.h>

#define DAXFS_NSEC		1000000000LL
/* KTIME_SEC_MAX - 1: every nanosecond of these seconds fits in an s64 */
#define DAXFS_TIME_SEC_MAX	(INT64_MAX / DAXFS_NSEC - 1)
#define DAXFS_TIME_SEC_MIN	(-DAXFS_TIME_SEC_MAX)

static inline int64_t daxfs_ts_to_ns(int64_t sec, long nsec)
{
	if (sec > DAXFS_TIME_SEC_MAX)
		sec = DAXFS_TIME_SEC_MAX;
	if (sec < DAXFS_TIME_SEC_MIN)
		sec = DAXFS_TIME_SEC_MIN;
	return sec * DAXFS_NSEC + nsec;
}

static inline void daxfs_ns_to_ts(int64_t ns, int64_t *sec, long *nsec)
{
	int64_t s = ns / DAXFS_NSEC, r = ns % DAXFS_NSEC;

	if (r < 0) {
		r += DAXFS_NSEC;
		s--;
	}
	*sec = s;
	*nsec = (long)r;
}

static inline void daxfs_ns_to_timespec(struct timespec *t, int64_t ns)
{
	int64_t sec;

	daxfs_ns_to_ts(ns, &sec, &t->tv_nsec);
	t->tv_sec = (time_t)sec;
}

static inline int64_t daxfs_timespec_to_ns(const struct timespec *t)
{
	return daxfs_ts_to_ns((int64_t)t->tv_sec, t->tv_nsec);
}

#endif /* DAXFS_LIB_TIMENS_H */
