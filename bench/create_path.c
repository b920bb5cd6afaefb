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
 * held:   daxfs_tmpfile_attr (made unnamed and held: the open-set entry
 *         is published here), daxfs_link_created, then daxfs_open_put
 *         (the open takes the hold over; close retracts), with the
 *         attributes daxfs.ko asks of each
 * named:  the same two in one op (daxfs_create_held, daxfs.ko's create
 *         since session 59), then daxfs_open_put
 *
 * Each round makes N files each way in a fresh directory, the order of the
 * ways turning per round, then unlinks them as daxfs.ko does
 * (daxfs_unlink_attr, in unlink_all).  REGION is a new region file
 * (created, removed afterwards).  CSV on stdout:
 *   round,way,n,seconds,us_per_create
 * For instruction counts run it under `valgrind --tool=callgrind
 * --toggle-collect=way_direct --toggle-collect=way_held
 * --toggle-collect=way_named --toggle-collect=unlink_all` (one round).
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
/* what daxfs.ko asks the calls for */
static struct daxfs_attr attr;
static struct daxfs_linked ln;
static struct daxfs_fcache dfc, *fcs;
static u64 *inos;

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
		err = daxfs_tmpfile_attr(fs, dir, 0644, 0, 0, &ino, &attr);
		if (!err)
			err = daxfs_link_created(fs, ino, dir, name, name_of(i),
						 &ln);
		if (!err)
			err = daxfs_open_put(fs, ino);
		if (err)
			fail("held create", -err);
	}
}

__attribute__((noinline)) static void way_named(struct daxfs_fs *fs, u64 dir, int n)
{
	u64 ino;
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_create_held(fs, dir, &dfc, 0644, 0, 0, name,
					name_of(i), &ino, &ln);
		if (!err)
			err = daxfs_open_put(fs, ino);
		if (err)
			fail("named create", -err);
	}
}

/* each file's record cache, as its inode in daxfs.ko keeps it (filled
 * by a getattr, as by an open, a close or a stat there), and the
 * directory's: not timed */
static void fill_caches(struct daxfs_fs *fs, u64 dir, int n)
{
	struct daxfs_attr a;
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_lookup(fs, dir, name, name_of(i), &inos[i]);
		if (!err)
			err = daxfs_getattr_fc(fs, inos[i], &fcs[i], &a);
		if (err)
			fail("getattr", -err);
	}
	err = daxfs_getattr_fc(fs, dir, &dfc, &a);
	if (err)
		fail("getattr", -err);
}

__attribute__((noinline)) static void unlink_all(struct daxfs_fs *fs, u64 dir, int n)
{
	int i, err;

	for (i = 0; i < n; i++) {
		err = daxfs_unlink_fc(fs, dir, &dfc, name, name_of(i), inos[i],
				      &fcs[i], &ln);
		if (err)
			fail("unlink", -err);
	}
}

static void (*const ways[])(struct daxfs_fs *, u64, int) = {
	way_direct, way_held, way_named,
};
static const char *const way_names[] = { "direct", "held", "named" };

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
	fcs = calloc(n, sizeof(*fcs));
	inos = calloc(n, sizeof(*inos));
	if (!fcs || !inos)
		fail("calloc", ENOMEM);
	printf("round,way,n,seconds,us_per_create\n");
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < 3; k++) {
			int w = (r + k) % 3;
			char dname[16];
			u64 dir;
			double t0;

			snprintf(dname, sizeof(dname), "d%d%c", r, way_names[w][0]);
			err = daxfs_mkdir(fs, fs->sb.root_ino, dname, strlen(dname), 040755, 0, 0,
					  &dir);
			if (err)
				fail("mkdir", -err);
			t0 = bench_now();
			ways[w](fs, dir, n);
			t0 = bench_now() - t0;
			printf("%d,%s,%d,%.6f,%.3f\n", r, way_names[w], n, t0,
			       t0 * 1e6 / n);
			fill_caches(fs, dir, n);
			unlink_all(fs, dir, n);
		}
	}
	daxfs_region_close(h);
	unlink(argv[1]);
	return 0;
}
