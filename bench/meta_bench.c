// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * meta_bench: the DaxFS paper's Figure 4 (metadata operations on 1,000
 * files): create, stat, readdir and unlink of N empty files in one new
 * directory.
 *
 *   meta_bench posix DIR [N] [LISTINGS]   system calls on any mounted
 *                                        filesystem (daxfs.ko, tmpfs,
 *                                        ext4 -o dax): open(O_CREAT|O_EXCL)
 *                                        + close, stat, opendir/readdir,
 *                                        unlink
 *   meta_bench daxfs REGION [N] [LISTINGS] [WARM]  the same through
 *                                        libdaxfs on a new region file
 *                                        REGION (created, removed
 *                                        afterwards); WARM (default 0):
 *                                        untimed passes first that create
 *                                        and unlink N files in another
 *                                        directory, so that the timed
 *                                        pass does not fault in fresh
 *                                        region pages for every file (a
 *                                        long-lived region's steady state)
 *
 * DIR must not exist (it is created and removed).  readdir lists the whole
 * directory LISTINGS times (default 10) and checks that every listing has
 * N entries.  Output: CSV on stdout
 *   op,n,seconds,us_per_op
 * where us_per_op is per file (per listing for readdir).  With
 * DAXFS_BENCH_CPU=1 in the environment, seconds are the thread's CPU time
 * instead of the wall clock (bench/ab_meta.sh on a loaded machine).
 * DAXFS_BENCH_STATS=K stats every file K times (default 1; stat's figure
 * stays per call), so that a profile of the whole run is mostly stat's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"


static void report(const char *op, int n, double secs, int per)
{
	printf("%s,%d,%.6f,%.3f\n", op, n, secs, secs * 1e6 / per);
	fflush(stdout);
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "meta_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static struct daxfs_handle *h;
static int cpu_clock;

static double now(void)
{
	return cpu_clock ? bench_cpu_now() : bench_now();
}

static int count_cb(void *ctx, const char *name, uint32_t len, uint64_t ino,
		    uint32_t dtype, uint64_t pos)
{
	(*(int *)ctx)++;
	return 0;
}

/* Creates and unlinks n files in a directory of their own, then frees
 * what no host can still read: their records are on the free lists. */
static int warm_pass(int n)
{
	char path[64];
	int i, err = daxfs_path_mkdir(h, "/warm", 0755);

	for (i = 0; !err && i < n; i++) {
		snprintf(path, sizeof(path), "/warm/file-%06d", i);
		err = daxfs_path_create(h, path, 0644, DAXFS_CREATE_EXCL, NULL);
		err = err < 0 ? err : 0;
	}
	for (i = 0; !err && i < n; i++) {
		snprintf(path, sizeof(path), "/warm/file-%06d", i);
		err = daxfs_path_unlink(h, path);
	}
	if (!err)
		err = daxfs_path_rmdir(h, "/warm");
	if (!err)
		err = daxfs_region_reclaim(h);
	return err < 0 ? err : 0;
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : 1000;
	int listings = argc > 4 ? atoi(argv[4]) : 10;
	int warm = argc > 5 ? atoi(argv[5]) : 0;
	int lib, i, k, fd, err, cnt, stats = 1;
	char path[4096];
	const char *dir;
	double t0;

	if (argc < 3 || (strcmp(argv[1], "posix") && strcmp(argv[1], "daxfs"))) {
		fprintf(stderr, "usage: meta_bench posix DIR [N] [LISTINGS]\n"
			"       meta_bench daxfs REGION [N] [LISTINGS] [WARM]\n");
		return 2;
	}
	lib = !strcmp(argv[1], "daxfs");
	cpu_clock = getenv("DAXFS_BENCH_CPU") && atoi(getenv("DAXFS_BENCH_CPU"));
	if (getenv("DAXFS_BENCH_STATS") && atoi(getenv("DAXFS_BENCH_STATS")) > 0)
		stats = atoi(getenv("DAXFS_BENCH_STATS"));
	if (lib) {
		/* 64 MiB, or about 4 KiB per file for large N (a file
		 * takes 2.5 KiB of region with its share of the trie) */
		uint64_t size = (uint64_t)n << 12;

		err = bench_new_region(argv[2], size > 64ull << 20 ? size : 64ull << 20,
				       60000, &h);
		if (err)
			fail(argv[2], -err);
		for (k = 0; !err && k < warm; k++)
			err = warm_pass(n);
		dir = "/meta";
		if (!err)
			err = daxfs_path_mkdir(h, dir, 0755);
	} else {
		dir = argv[2];
		err = mkdir(dir, 0755) ? -errno : 0;
	}
	if (err)
		fail(dir, -err);
	printf("op,n,seconds,us_per_op\n");

	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/file-%06d", dir, i);
		if (lib) {
			err = daxfs_path_create(h, path, 0644, DAXFS_CREATE_EXCL, NULL);
			err = err < 0 ? err : 0;
		} else {
			fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
			err = fd < 0 ? -errno : close(fd);
		}
		if (err)
			fail(path, -err);
	}
	report("create", n, now() - t0, n);

	t0 = now();
	for (i = 0; i < n * stats; i++) {
		snprintf(path, sizeof(path), "%s/file-%06d", dir, i % n);
		if (lib) {
			struct daxfs_attr st;

			err = daxfs_path_stat(h, path, &st);
		} else {
			struct stat st;

			err = stat(path, &st) ? -errno : 0;
		}
		if (err)
			fail(path, -err);
	}
	report("stat", n, now() - t0, n * stats);

	t0 = now();
	for (k = 0; k < listings; k++) {
		cnt = 0;
		if (lib) {
			err = daxfs_path_readdir(h, dir, count_cb, &cnt);
			if (err < 0)
				fail(dir, -err);
		} else {
			DIR *d = opendir(dir);
			struct dirent *e;

			if (!d)
				fail(dir, errno);
			while ((e = readdir(d)))
				if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
					cnt++;
			closedir(d);
		}
		if (cnt != n) {
			fprintf(stderr, "meta_bench: listing %d has %d entries, want %d\n",
				k, cnt, n);
			return 1;
		}
	}
	report("readdir", n, now() - t0, listings);

	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/file-%06d", dir, i);
		err = lib ? daxfs_path_unlink(h, path) : (unlink(path) ? -errno : 0);
		if (err)
			fail(path, -err);
	}
	report("unlink", n, now() - t0, n);
	if (lib) {
		daxfs_path_rmdir(h, dir);
		daxfs_region_close(h);
		unlink(argv[2]);
	} else {
		rmdir(dir);
	}
	return 0;
}
