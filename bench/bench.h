/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the benchmark programs share: a monotonic clock in seconds and a
 * fresh region to measure on.
 */
#ifndef DAXFS_BENCH_H
#define DAXFS_BENCH_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

static inline double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of the calling thread, in seconds: on a machine whose other
 * load takes the cores away at random, the time the thread ran. */
static inline double bench_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * DAXFS_BENCH_SMALL_PAGES=1 keeps the bench's regions and copy ceilings on
 * /dev/shm's own pages, as before mkfs gave them 2 MiB ones: an A/B of
 * the page size (docs/benchmarks.md).
 */
static inline int bench_small_pages(void)
{
	const char *v = getenv("DAXFS_BENCH_SMALL_PAGES");

	return v && *v && strcmp(v, "0");
}

/*
 * A new region file PATH of SIZE bytes (an old one is replaced), made with
 * LEASE_MS (0: mkfs's default; a long one keeps a host that a loaded
 * machine pauses from being declared dead mid-run), and opened as a host.
 * 0 or a negative errno.
 */
static inline int bench_new_region(const char *path, uint64_t size, uint32_t lease_ms,
				   struct daxfs_handle **h)
{
	struct daxfs_mkfs_opts o;
	int err;

	memset(&o, 0, sizeof(o));
	o.small_pages = bench_small_pages();
	o.force = 1;
	o.lease_ms = lease_ms;
	unlink(path);
	err = daxfs_region_create(path, size, &o);
	return err ? err : daxfs_region_open(path, 0, h);
}

/*
 * A MAP_SHARED mapping of a new /dev/shm file PATH of SIZE bytes (the kind
 * of pages a region has: 2 MiB aligned, and 2 MiB pages where the kernel
 * gives them, as mkfs asks for, lib/hugepages.c), every byte set to FILL,
 * the file unlinked; NULL (the cause printed) on failure.  The copy
 * ceilings copy into it; munmap(m, size) undoes it.
 */
static inline uint8_t *bench_shm_map(const char *path, size_t size, int fill)
{
	const size_t huge = 2u << 20;
	uint8_t *area, *m;
	size_t head;
	int fd;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || posix_fallocate(fd, 0, size)) {
		perror(path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	area = mmap(NULL, size + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m = area == MAP_FAILED ? MAP_FAILED :
	    mmap(area + (-(uintptr_t)area & (huge - 1)), size,
		 PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	unlink(path);
	if (m == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	/* the reservation around the mapping goes */
	head = (size_t)(m - area);
	if (head)
		munmap(area, head);
	munmap(m + size, huge - head);
	memset(m, fill, size);
	if (!bench_small_pages())
		madvise(m, size & ~(huge - 1), 25 /* MADV_COLLAPSE */);
	return m;
}

#endif
