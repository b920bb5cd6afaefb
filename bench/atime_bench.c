// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * atime_bench: what an atime store costs a read (docs/kernel.md
 * "Timestamps", docs/benchmarks.md "atime").  One 4 KiB page read again
 * and again through libdaxfs, natively:
 *   noatime / relatime   daxfs_pread alone (relatime stores once per write
 *                        or per day: nothing per read)
 *   strictatime          daxfs_pread + the store daxfs.ko's ->update_time
 *                        makes: daxfs_setattr(ATIME), a core op that
 *                        stores the inode record's atime word
 * Usage: atime_bench [REGION] [N]   (default /dev/shm/daxfs-atime-bench,
 * 1000000 reads each).  Prints ns per read for both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"


static void die(const char *what, int err)
{
	fprintf(stderr, "atime_bench: %s: %s\n", what, daxfs_strerror(err));
	exit(1);
}

static double run(struct daxfs_handle *h, uint64_t ino, long n, int store)
{
	struct daxfs_attr a = { 0 };
	char buf[4096];
	double t = bench_now();
	long i;
	int err;

	for (i = 0; i < n; i++) {
		if (daxfs_pread(h, ino, buf, sizeof(buf), 0) != sizeof(buf))
			die("pread", -EIO);
		if (!store)
			continue;
		a.atime_ns = (int64_t)(bench_now() * 1e9);
		err = daxfs_setattr(daxfs_handle_fs(h), ino, DAXFS_ATTR_ATIME, &a);
		if (err)
			die("setattr", err);
	}
	return (bench_now() - t) / n * 1e9;
}

int main(int argc, char **argv)
{
	const char *region = argc > 1 ? argv[1] : "/dev/shm/daxfs-atime-bench";
	long n = argc > 2 ? atol(argv[2]) : 1000000;
	struct daxfs_handle *h;
	char page[4096];
	double plain = 1e18, store = 1e18, t;
	uint64_t ino;
	int err, r;

	err = bench_new_region(region, 16 << 20, 0, &h);
	if (err)
		die(region, err);
	err = daxfs_path_create(h, "/f", 0644, 0, &ino);
	if (err < 0)
		die("create", err);
	memset(page, 'a', sizeof(page));
	if (daxfs_pwrite(h, ino, page, sizeof(page), 0) != sizeof(page))
		die("pwrite", -EIO);
	/* interleaved, best of 5: a shared machine's noise only adds */
	for (r = 0; r < 5; r++) {
		t = run(h, ino, n, 0);
		plain = t < plain ? t : plain;
		t = run(h, ino, n, 1);
		store = t < store ? t : store;
	}
	printf("4 KiB read, noatime/relatime: %.0f ns\n", plain);
	printf("4 KiB read, strictatime (+ atime store): %.0f ns (+%.0f ns, %.2fx)\n",
	       store, store - plain, store / plain);
	daxfs_region_close(h);
	unlink(region);
	return 0;
}
