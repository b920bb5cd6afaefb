// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Shared page cache benchmarks (docs/benchmarks.md, "Shared page cache").
 *
 *   pcache_bench sweep REGION FILE BACKING...
 *	random 4 KiB reads of FILE (a split-mode base file) with working
 *	sets of 0.5x, 1x, 2x and 4x the cache: throughput, hit rate and
 *	backing reads per read.
 *   pcache_bench mem REGION FILE NHOSTS BACKING...
 *	NHOSTS processes (each its own host) read all of FILE; prints the
 *	bytes the cluster caches once (valid slots) against NHOSTS private
 *	page caches holding the file each.
 *
 * Build: make -C bench ../build/bench/pcache_bench; run: bench/pcache_run.sh
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct daxfs_handle *open_h(const char *region, char **bk, int nbk)
{
	struct daxfs_open_opts o = { 0 };
	struct daxfs_handle *h;
	int err;

	o.backing = (const char *const *)bk;
	o.nr_backing = (unsigned int)nbk;
	err = daxfs_region_open_opts(region, &o, &h);
	if (err) {
		fprintf(stderr, "open %s: %s\n", region, daxfs_strerror(err));
		exit(1);
	}
	return h;
}

static int sweep(const char *region, const char *file, char **bk, int nbk)
{
	static const double ratios[] = { 0.5, 1.0, 2.0, 4.0 };
	struct daxfs_handle *h = open_h(region, bk, nbk);
	struct daxfs_cache_info a, b;
	struct daxfs_attr st;
	uint64_t ino, cache_pages, file_pages, s = 88172645463325252ULL;
	char buf[4096];
	unsigned int r;

	if (daxfs_path_resolve(h, file, 1, &ino) || daxfs_fstat(h, ino, &st) ||
	    daxfs_cache_info(h, &a)) {
		fprintf(stderr, "%s: not a split-mode file\n", file);
		return 1;
	}
	cache_pages = a.nr_slots;
	file_pages = st.size / 4096;
	printf("ratio,ws_pages,cache_pages,reads,MiB_s,hit_rate,backing_reads_per_read\n");
	for (r = 0; r < sizeof(ratios) / sizeof(ratios[0]); r++) {
		uint64_t ws = (uint64_t)(ratios[r] * (double)cache_pages), i, n;
		double t0, t1;

		if (ws > file_pages)
			ws = file_pages;
		daxfs_cache_drop(h);
		for (i = 0; i < 3 * ws; i++)	/* warm up */
			daxfs_pread(h, ino, buf, 4096, (xs(&s) % ws) * 4096);
		n = 20 * ws > 200000 ? 20 * ws : 200000;
		daxfs_cache_info(h, &a);
		t0 = now();
		for (i = 0; i < n; i++)
			daxfs_pread(h, ino, buf, 4096, (xs(&s) % ws) * 4096);
		t1 = now();
		daxfs_cache_info(h, &b);
		printf("%.1f,%llu,%llu,%llu,%.0f,%.3f,%.3f\n", ratios[r],
		       (unsigned long long)ws, (unsigned long long)cache_pages,
		       (unsigned long long)n, n * 4096.0 / (t1 - t0) / (1 << 20),
		       (double)(b.host_hits - a.host_hits) / (double)n,
		       (double)(b.backing_reads - a.backing_reads) / (double)n);
	}
	daxfs_region_close(h);
	return 0;
}

static int mem(const char *region, const char *file, int nhosts, char **bk, int nbk)
{
	struct daxfs_handle *h = open_h(region, bk, nbk);
	struct daxfs_cache_info ci;
	struct daxfs_attr st;
	uint64_t ino, reads = 0;
	int i, status;

	uint64_t fills0;

	if (daxfs_path_resolve(h, file, 1, &ino) || daxfs_fstat(h, ino, &st))
		return 1;
	daxfs_cache_drop(h);
	daxfs_cache_info(h, &ci);
	fills0 = ci.fills;
	daxfs_region_close(h);
	for (i = 0; i < nhosts; i++) {
		if (fork() == 0) {
			struct daxfs_handle *c = open_h(region, bk, nbk);
			static char buf[1 << 20];
			uint64_t off;

			for (off = 0; off < st.size; off += sizeof(buf))
				daxfs_pread(c, ino, buf, sizeof(buf), off);
			daxfs_cache_info(c, &ci);
			daxfs_region_close(c);
			_exit((int)(ci.backing_reads > 250 ? 250 : ci.backing_reads));
		}
	}
	for (i = 0; i < nhosts; i++) {
		wait(&status);
		reads += WEXITSTATUS(status);
	}
	h = open_h(region, bk, nbk);
	daxfs_cache_info(h, &ci);
	daxfs_region_close(h);
	printf("hosts,file_bytes,daxfs_cached_bytes,private_caches_bytes,backing_reads\n");
	printf("%d,%llu,%llu,%llu,%llu\n", nhosts, (unsigned long long)st.size,
	       (unsigned long long)(ci.valid * 4096),
	       (unsigned long long)(nhosts * ((st.size + 4095) & ~4095ULL)),
	       (unsigned long long)(ci.fills - fills0));
	(void)reads;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "sweep"))
		return sweep(argv[2], argv[3], argv + 4, argc - 4);
	if (argc >= 6 && !strcmp(argv[1], "mem"))
		return mem(argv[2], argv[3], atoi(argv[4]), argv + 5, argc - 5);
	fprintf(stderr, "usage: pcache_bench sweep REGION FILE BACKING...\n"
		"       pcache_bench mem REGION FILE NHOSTS BACKING...\n");
	return 2;
}
