// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * 4 KiB data calls through plain system calls, timed in CPU time of the
 * calling thread (CLOCK_THREAD_CPUTIME_ID: user and kernel time, page
 * faults included, time spent waiting for a CPU excluded), so that a
 * shared, loaded machine still compares the preload with tmpfs fairly.
 * bench/preload_fio.py --cpu runs it on tmpfs and under `daxfs run`, each
 * row in a fresh process (as fio's jobs are).  ROW: first (sequential
 * writes of a new file), rewrite, read (sequential), randread, randwrite,
 * append (O_APPEND writes to a new file), mapread (a new file written
 * in whole 2 MiB pieces, mapped MAP_SHARED from its second page on, every
 * page touched once, then one 8-byte load from each page in random order:
 * the cost of a TLB miss, and what 2 MiB mappings of runs save where the
 * region has huge pages; the offset puts the runs on 2 MiB boundaries only
 * where the mapping is placed for them).  Prints "ROW ns/op"; mapread
 * also "maptouch NS FAULTS": CPU ns per page of the first touch (the
 * faults) and the minor faults it took (one per page, or one per 2 MiB
 * mapped with a PMD).
 *
 * Usage: preload_io FILE MIB ROW
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BS	4096L
#define MAP_PASSES 16	/* mapread: loads per page */

static double cpu(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static long minor_faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* Page i of a random permutation of n pages (n a power of two). */
static long shuffle(long i, long n)
{
	return (i * 40503L + 12345L) & (n - 1);
}

static int pass(int fd, char *buf, long n, int wr, int rnd, const char *row)
{
	double t0 = cpu();
	long i, at;
	ssize_t r;

	for (i = 0; i < n; i++) {
		at = (rnd ? shuffle(i, n) : i) * BS;
		r = wr ? pwrite(fd, buf, BS, at) : pread(fd, buf, BS, at);
		if (r != BS)
			return perror(row), 1;
	}
	printf("%s %.0f\n", row, (cpu() - t0) / n);
	return 0;
}

/* Loads through a mapping: see the header. */
static int mapread(const char *path, long n)
{
	size_t len = (size_t)n * BS - BS;
	volatile unsigned long sink = 0;
	long i, piece = (2L << 20) / BS;
	double t0;
	char *buf, *m;
	long f0;
	int fd;

	unlink(path);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	buf = malloc(piece * BS);
	if (fd < 0 || !buf)
		return perror(path), 1;
	memset(buf, 'm', piece * BS);
	for (i = 0; i < n; i += piece)
		if (pwrite(fd, buf, piece * BS, i * BS) != piece * BS)
			return perror("mapread: write"), 1;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, BS);
	if (m == MAP_FAILED)
		return perror("mapread: mmap"), 1;
	f0 = minor_faults();
	t0 = cpu();
	for (i = 0; i < n - 1; i++)
		sink += m[i * BS];
	printf("maptouch %.0f %ld\n", (cpu() - t0) / (n - 1), minor_faults() - f0);
	t0 = cpu();
	for (i = 0; i < MAP_PASSES * n; i++)
		sink += *(unsigned long *)(m + (shuffle(i, n) % (n - 1)) * BS +
					   (i & 63) * 64);
	printf("mapread %.1f\n", (cpu() - t0) / (MAP_PASSES * n));
	return 0;
}

int main(int argc, char **argv)
{
	const char *row = argc == 4 ? argv[3] : "";
	int rnd = !strncmp(row, "rand", 4);
	int fresh = !strcmp(row, "first") || !strcmp(row, "append");
	int wr = fresh || strstr(row, "write") != NULL;
	long n, i;
	double t0;
	char *buf;
	int fd;

	if (argc != 4)
		return 2;
	n = atol(argv[2]) * (1L << 20) / BS;
	if (n < 1 || (n & (n - 1)))
		return fprintf(stderr, "MIB: a power of two\n"), 2;
	if (!strcmp(row, "mapread"))
		return n < 1024 ? 2 : mapread(argv[1], n);
	buf = aligned_alloc(BS, BS);
	memset(buf, 'w', BS);
	if (fresh)
		unlink(argv[1]);
	fd = open(argv[1], O_RDWR | (fresh ? O_CREAT : 0) |
		  (!strcmp(row, "append") ? O_APPEND : 0), 0644);
	if (fd < 0)
		return perror(argv[1]), 1;
	if (strcmp(row, "append"))
		return pass(fd, buf, n, wr, rnd, row);
	t0 = cpu();
	for (i = 0; i < n; i++)
		if (write(fd, buf, BS) != BS)
			return perror("append"), 1;
	printf("append %.0f\n", (cpu() - t0) / n);
	return 0;
}
