// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * write_between: 4 KiB sequential rewrites of a 64 MiB file through
 * libdaxfs with the program's own work between two writes, a store to each
 * line of WORK KiB of private memory, as a program that computes what it
 * writes touches its own memory.  Which copy suits a 4 KiB write depends
 * on that (lib/copy.h, docs/benchmarks.md "Which copy a 4 KiB write
 * makes"): set DAXFS_INCOPY_MIN=8192 (cached) or leave the default
 * (streaming) and compare, side by side in one run.
 *
 *   write_between REGION WORK_KIB...
 *
 * Prints "WORK_KIB ns_per_write_and_work" per argument, 1 s of each; the
 * work alone is the same for both copies, so the difference is the
 * copy's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define FILE_SIZE	(64ull << 20)
#define BS		4096u

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double one(struct daxfs_handle *h, uint64_t ino, size_t work)
{
	static uint8_t buf[BS];
	struct daxfs_fcache fc = { 0 };
	uint8_t *w = calloc(1, work + 64);
	double t0, t;
	uint64_t off, n = 0;
	size_t i;

	if (!w)
		return -1;
	memset(buf, 7, sizeof(buf));
	t0 = now();
	do {
		for (off = 0; off < FILE_SIZE; off += BS) {
			if (daxfs_pwrite_fc(h, ino, &fc, buf, BS, off) != BS) {
				free(w);
				return -1;
			}
			n++;
			for (i = 0; i < work; i += 64)
				w[i]++;
		}
		t = now() - t0;
	} while (t < 1.0);
	free(w);
	return t * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	static uint8_t page[BS];
	struct daxfs_handle *h;
	uint64_t ino, off;
	int err, i;

	if (argc < 3) {
		fprintf(stderr, "usage: write_between REGION WORK_KIB...\n");
		return 2;
	}
	err = bench_new_region(argv[1], 2 * FILE_SIZE, 60000, &h);
	if (!err)
		err = daxfs_path_create(h, "/f", 0644, 0, &ino) < 0;
	for (off = 0; !err && off < FILE_SIZE; off += BS)
		err = daxfs_pwrite(h, ino, page, BS, off) != BS;
	if (err) {
		fprintf(stderr, "write_between: cannot set up %s\n", argv[1]);
		return 1;
	}
	for (i = 2; i < argc; i++)
		printf("%s %.0f\n", argv[i], one(h, ino, (size_t)atol(argv[i]) << 10));
	daxfs_region_close(h);
	unlink(argv[1]);
	return 0;
}
