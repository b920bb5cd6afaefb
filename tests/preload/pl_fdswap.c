// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Reads racing the descriptor they read through: reader threads pread
 * one descriptor number while another thread points that number at the
 * other of two files (dup2 of a fresh open, the old description closed)
 * and closes and reopens it.  The preload reads a pread without the map
 * lock (docs/preload.md "Reads without a lock"): a read must still come
 * whole from one of the files (all 'a' or all 'b'), or fail with EBADF
 * while the number is closed; never a mix, never other bytes.  Prints
 * one summary line, the same on tmpfs and under `daxfs run`.
 *
 * Usage: pl_fdswap DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define READERS	3
#define SECS	1.0
#define LEN	(64 * 1024)
#define BS	4096

static char path[2][4096];
static int num;				/* the descriptor number raced on */
static atomic_int stop;
static atomic_long reads, bad, ebadf;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *reader(void *arg)
{
	unsigned long seed = (unsigned long)arg * 2654435761UL + 1;
	static __thread char buf[BS];
	ssize_t n;
	int i;

	while (!atomic_load(&stop)) {
		seed = seed * 6364136223846793005UL + 1442695040888963407UL;
		n = pread(num, buf, BS, (off_t)((seed >> 33) % (LEN / BS)) * BS);
		if (n < 0 && errno == EBADF) {
			atomic_fetch_add(&ebadf, 1);
			continue;
		}
		atomic_fetch_add(&reads, 1);
		if (n != BS || (buf[0] != 'a' && buf[0] != 'b')) {
			atomic_fetch_add(&bad, 1);
			continue;
		}
		for (i = 1; i < BS; i++)
			if (buf[i] != buf[0])
				break;
		if (i < BS)
			atomic_fetch_add(&bad, 1);
	}
	return NULL;
}

static int make(const char *p, char c)
{
	static char blk[LEN];
	int fd = open(p, O_CREAT | O_TRUNC | O_WRONLY, 0644);

	memset(blk, c, sizeof(blk));
	if (fd < 0 || write(fd, blk, sizeof(blk)) != sizeof(blk))
		return -1;
	return close(fd);
}

int main(int argc, char **argv)
{
	pthread_t t[READERS];
	long swaps = 0, i;
	double end;
	int fd;

	if (argc != 2)
		return 2;
	snprintf(path[0], sizeof(path[0]), "%s/a", argv[1]);
	snprintf(path[1], sizeof(path[1]), "%s/b", argv[1]);
	if (make(path[0], 'a') || make(path[1], 'b'))
		return perror("make"), 1;
	num = open(path[0], O_RDONLY);
	if (num < 0)
		return perror("open"), 1;
	for (i = 0; i < READERS; i++)
		pthread_create(&t[i], NULL, reader, (void *)i);
	end = now() + SECS;
	while (now() < end) {
		fd = open(path[++swaps & 1], O_RDONLY);
		if (fd < 0 || dup2(fd, num) != num || close(fd))
			return perror("swap"), 1;
		if (swaps % 16 == 0) {
			/* closed for a moment, then the same number again */
			close(num);
			fd = open(path[swaps & 1], O_RDONLY);
			if (fd != num)
				return fprintf(stderr, "reopen got %d\n", fd), 1;
		}
	}
	atomic_store(&stop, 1);
	for (i = 0; i < READERS; i++)
		pthread_join(t[i], NULL);
	printf("fdswap bad %ld reads %s swaps %s\n", atomic_load(&bad),
	       atomic_load(&reads) > 1000 ? "many" : "few",
	       swaps > 100 ? "many" : "few");
	return 0;
}
