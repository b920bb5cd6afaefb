// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Threads opening, writing, dup'ing, reading and closing region files at
 * once, then checking every byte.  Prints one summary line; the same on
 * tmpfs and under `daxfs run` (tests/test_preload.py).
 *
 * Usage: pl_threads DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS	8
#define ROUNDS	40
#define BLOCKS	16

static const char *dir;
static int shared_fd;

static void *worker(void *arg)
{
	long id = (long)arg, bad = 0;
	char path[4096], buf[4096], want[4096];
	int r, b, fd, d;

	for (r = 0; r < ROUNDS; r++) {
		snprintf(path, sizeof(path), "%s/t%ld-%d", dir, id, r % 4);
		fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
		if (fd < 0)
			return (void *)-1L;
		memset(want, 'a' + (id + r) % 26, sizeof(want));
		for (b = 0; b < BLOCKS; b++)
			if (write(fd, want, sizeof(want)) != sizeof(want))
				bad++;
		d = dup(fd);
		for (b = 0; b < BLOCKS; b++) {
			if (pread(d, buf, sizeof(buf), (off_t)b * 4096) != 4096 ||
			    memcmp(buf, want, sizeof(buf)))
				bad++;
		}
		/* appends by every thread to one shared description */
		if (write(shared_fd, want, 64) != 64)
			bad++;
		close(d);
		close(fd);
	}
	return (void *)bad;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	long i, bad = 0;
	void *ret;
	char path[4096];
	off_t end;

	if (argc != 2)
		return 2;
	dir = argv[1];
	snprintf(path, sizeof(path), "%s/shared", dir);
	shared_fd = open(path, O_CREAT | O_RDWR | O_APPEND, 0644);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		bad += (long)ret;
	}
	end = lseek(shared_fd, 0, SEEK_END);
	printf("threads %d rounds %d bad %ld shared %lld\n", THREADS, ROUNDS,
	       bad, (long long)end);
	return bad != 0;
}
