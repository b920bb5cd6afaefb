// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * create_path: the core calls of one daxfs.ko create-and-open, two ways,
 * natively (docs/benchmarks.md "The kernel's create path").
 *
 *   create_path REGION [N] [ROUNDS]
 *
 * direct: daxfs_mknod(S_IFREG), then daxfs_open_get and daxfs_open_put
 *         (what the module did before the held create: create, then the
 *         open publishes the file in the host's open set, close retracts)
 * held:   daxfs_tmpfile (made unnamed and held: the open-set entry is
 *         published here), daxfs_link_created, then daxfs_open_put (the
 *         open takes the hold over; close retracts)
 *
 * Each round makes N files each way in a fresh directory, the order of the
 * two alternating per round, then unlinks them (not timed).  REGION is a
 * new region file (created, removed afterwards).  CSV on stdout:
 *   round,way,n,seconds,us_per_create
 * For instruction counts run it under `valgrind --tool=callgrind
 * --toggle-collect=way_direct --toggle-collect=way_held` (one round).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static void fail(const char *what, int err)
{
	fprintf(stderr, "create_path: %s: %s\n", what, strerror(err));
	exit(1);
}

static char name[32];

static unsigned int name_of(int i)
{
	return (unsigned int)snprintf(name, sizeof(name), "f%07d", i);
}

/* noinline: callgrind's --toggle-collect names them */
__attribute__((noinline)) static void way_direct(struct daxfs_fs *fs, u64 dir, int n)
{
	u64 ino;
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_mknod(fs, dir, name, name_of(i), 0100644, 0, 0, 0, &ino);
		if (!err)
			err = daxfs_open_get(fs, ino);
		if (!err)
			err = daxfs_open_put(fs, ino);
		if (err)
			fail("direct create", -err);
	}
}

__attribute__((noinline)) static void way_held(struct daxfs_fs *fs, u64 dir, int n)
{
	u64 ino;
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_tmpfile(fs, dir, 0644, 0, 0, &ino);
		if (!err)
			err = daxfs_link_created(fs, ino, dir, name, name_of(i),
						 NULL);
		if (!err)
			err = daxfs_open_put(fs, ino);
		if (err)
			fail("held create", -err);
	}
}

static void empty(struct daxfs_fs *fs, u64 dir, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_unlink(fs, dir, name, name_of(i));
		if (err)
			fail("unlink", -err);
	}
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20000;
	int rounds = argc > 3 ? atoi(argv[3]) : 6;
	struct daxfs_handle *h;
	struct daxfs_fs *fs;
	int r, k, err;

	if (argc < 2 || n <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: create_path REGION [N] [ROUNDS]\n");
		return 2;
	}
	err = bench_new_region(argv[1], 256ull << 20, 60000, &h);
	if (err)
		fail(argv[1], -err);
	fs = daxfs_handle_fs(h);
	printf("round,way,n,seconds,us_per_create\n");
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < 2; k++) {
			int held = (r + k) % 2;
			char dname[16];
			u64 dir;
			double t0;

			snprintf(dname, sizeof(dname), "d%d%s", r, held ? "h" : "d");
			err = daxfs_mkdir(fs, fs->sb.root_ino, dname, strlen(dname), 040755, 0, 0,
					  &dir);
			if (err)
				fail("mkdir", -err);
			t0 = bench_now();
			if (held)
				way_held(fs, dir, n);
			else
				way_direct(fs, dir, n);
			t0 = bench_now() - t0;
			printf("%d,%s,%d,%.6f,%.3f\n", r, held ? "held" : "direct", n, t0,
			       t0 * 1e6 / n);
			empty(fs, dir, n);
		}
	}
	daxfs_region_close(h);
	unlink(argv[1]);
	return 0;
}
