// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Metadata through plain system calls: create, stat and unlink N files in
 * DIR, timing each phase.  bench/preload_fio.py --meta runs it on tmpfs
 * and under `daxfs run`.  Prints "create|stat|unlink N ops/s".
 *
 * Usage: preload_meta DIR N
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct stat st;
	long i, n;
	double t0;
	int fd;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0 || close(fd))
			return perror(path), 1;
	}
	printf("create %.0f\n", n / (now() - t0));
	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		if (stat(path, &st))
			return perror(path), 1;
	}
	printf("stat %.0f\n", n / (now() - t0));
	t0 = now();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/f%ld", argv[1], i);
		if (unlink(path))
			return perror(path), 1;
	}
	printf("unlink %.0f\n", n / (now() - t0));
	return 0;
}
