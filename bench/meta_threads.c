// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * meta_threads: creates per second of several threads of one host, in one
 * directory or each in its own, through libdaxfs (docs/benchmarks.md
 * "Metadata from several threads and hosts").
 *
 *   meta_threads REGION THREADS same|own [SECONDS] [BASE]
 *
 * REGION must exist (mkfs.daxfs); each thread makes files d<k>/f<k>-<i>
 * (k: its number plus BASE, or BASE alone with "same"), and once it has
 * KEEP of them unlinks its oldest before each create, so the directory
 * stays the same size.  Run two at once with other BASEs for two hosts.
 * Output: one line, "THREADS same|own: N creates/s" (wall clock, all
 * threads together; each create is one create and, after the first
 * KEEP, one unlink).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "bench.h"

#define KEEP	20000

static struct daxfs_handle *h;
static int same, base;
static volatile int stop;

static void die(const char *what, const char *path, int err)
{
	fprintf(stderr, "meta_threads: %s %s: %s\n", what, path, strerror(-err));
	exit(1);
}

static void *run(void *arg)
{
	long k = (long)arg + base, d = same ? base : k;
	unsigned long n = 0;
	char path[64];
	int err;

	while (!stop) {
		snprintf(path, sizeof(path), "/d%ld/f%ld-%lu", d, k, n % KEEP);
		if (n >= KEEP) {
			err = daxfs_path_unlink(h, path);
			if (err)
				die("unlink", path, err);
		}
		err = daxfs_path_create(h, path, 0644, DAXFS_CREATE_EXCL, NULL);
		if (err != 1)
			die("create", path, err);
		n++;
	}
	return (void *)n;
}

int main(int argc, char **argv)
{
	struct timespec secs = { 1, 0 };
	unsigned long total = 0;
	pthread_t th[64];
	char path[32];
	long i, n;
	void *done;
	double t0;
	int err;

	if (argc < 4 || (n = atol(argv[2])) < 1 || n > 64) {
		fprintf(stderr, "usage: meta_threads REGION THREADS same|own [SECONDS] [BASE]\n");
		return 2;
	}
	same = !strcmp(argv[3], "same");
	if (argc > 4)
		secs.tv_sec = atol(argv[4]);
	if (argc > 5)
		base = atoi(argv[5]);
	err = daxfs_region_open(argv[1], 0, &h);
	if (err)
		die("open", argv[1], err);
	for (i = 0; i < (same ? 1 : n); i++) {
		snprintf(path, sizeof(path), "/d%ld", i + base);
		err = daxfs_path_mkdir(h, path, 0755);
		if (err && err != -EEXIST)
			die("mkdir", path, err);
	}
	t0 = bench_now();
	for (i = 0; i < n; i++)
		pthread_create(&th[i], NULL, run, (void *)i);
	nanosleep(&secs, NULL);
	stop = 1;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], &done);
		total += (unsigned long)done;
	}
	printf("%ld %s: %.0f creates/s\n", n, same ? "same" : "own",
	       total / (bench_now() - t0));
	daxfs_region_close(h);
	return 0;
}
