// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A write's time stamps when the coarse clock lags the fine one by more
 * than a tick: a guest whose vCPU the host holds back runs its ticks late,
 * and an emulated guest saw its coarse clock 24 ms behind a chmod's fine
 * stamp.  The write then set mtime and ctime before the chmod's ctime
 * (tests/vm test_kernel_timestamps_one_clock, once in a CI rehearsal).
 * This program makes the lag happen every time: it interposes
 * clock_gettime (tclock.h), so that CLOCK_REALTIME_COARSE reads LAG_NS behind
 * CLOCK_REALTIME for the core linked into it.  No stamp may move back, and
 * a write's mtime and ctime stay equal; a stamp set into the future by
 * utimens is still replaced by the write, as on Linux.
 */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tutil.h"
#include "tclock.h"
#include "daxfs/libdaxfs.h"

#define MiB		(1ULL << 20)
#define LAG_NS		30000000LL	/* three of the longest ticks */

static char path[64];
static struct daxfs_handle *h;

static s64 fine_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void test_the_clock_lags(void)
{
	struct timespec c, f;

	clock_gettime(CLOCK_REALTIME_COARSE, &c);
	clock_gettime(CLOCK_REALTIME, &f);
	CHECK(f.tv_sec * 1000000000LL + f.tv_nsec -
	      (c.tv_sec * 1000000000LL + c.tv_nsec) >= LAG_NS);
}

/* chmod (a fine stamp), then writes at once: none moves a stamp back */
static void test_write_after_fine_stamp(void)
{
	struct daxfs_attr before, after;
	uint64_t ino;
	int i;

	CHECK_EQ(daxfs_path_create(h, "/f", 0644, DAXFS_CREATE_EXCL, &ino), 1);
	CHECK_EQ(daxfs_pwrite(h, ino, "a", 1, 0), 1);
	for (i = 0; i < 20; i++) {
		CHECK_EQ(daxfs_path_chmod(h, "/f", i & 1 ? 0600 : 0644), 0);
		CHECK_EQ(daxfs_fstat(h, ino, &before), 0);
		CHECK_EQ(daxfs_pwrite(h, ino, "b", 1, i), 1);
		CHECK_EQ(daxfs_fstat(h, ino, &after), 0);
		CHECK(after.ctime_ns >= before.ctime_ns);
		CHECK(after.mtime_ns >= before.mtime_ns);
		CHECK_EQ(after.mtime_ns, after.ctime_ns);
		if (after.ctime_ns < before.ctime_ns)
			fprintf(stderr, "  round %d: ctime %lld -> %lld\n", i,
				(long long)before.ctime_ns,
				(long long)after.ctime_ns);
	}
}

/* mtime set an hour ahead: the next write stamps now, as Linux does */
static void test_future_mtime_replaced(void)
{
	struct daxfs_attr a;
	uint64_t ino;
	s64 hour = 3600LL * 1000000000LL;

	CHECK_EQ(daxfs_path_create(h, "/g", 0644, DAXFS_CREATE_EXCL, &ino), 1);
	CHECK_EQ(daxfs_path_utimens(h, "/g", DAXFS_UTIME_OMIT, fine_now() + hour),
		 0);
	CHECK_EQ(daxfs_pwrite(h, ino, "c", 1, 0), 1);
	CHECK_EQ(daxfs_fstat(h, ino, &a), 0);
	CHECK(a.mtime_ns < fine_now() + 1000000000LL);
	CHECK_EQ(a.mtime_ns, a.ctime_ns);
}

int main(void)
{
	struct daxfs_mkfs_opts o;

	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-stamplag.%d",
		 (int)getpid());
	memset(&o, 0, sizeof(o));
	o.force = 1;
	t_coarse_lag_ns = LAG_NS;
	if (daxfs_region_create(path, 32 * MiB, &o) ||
	    daxfs_region_open(path, 0, &h)) {
		fprintf(stderr, "mkfs or open failed\n");
		unlink(path);
		return 2;
	}
	RUN(test_the_clock_lags);
	RUN(test_write_after_fine_stamp);
	RUN(test_future_mtime_replaced);
	daxfs_region_close(h);
	unlink(path);
	return t_done();
}
