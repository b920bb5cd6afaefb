// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Metadata through plain system calls: create, stat and unlink N files in
 * DIR, then N appends of 4 KiB to one O_APPEND file, timing each phase.
 * bench/preload_fio.py --meta runs it on tmpfs and under `daxfs run`.
 * Prints "create|stat|unlink|append N ops/s", in CPU time of the thread
 * (user and kernel, waits for a CPU excluded: fair on a loaded machine).
 *
 * Usage: preload_meta DIR N
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	char path[4096], buf[4096];
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
	snprintf(path, sizeof(path), "%s/log", argv[1]);
	fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0644);
	if (fd < 0)
		return perror(path), 1;
	memset(buf, 'a', sizeof(buf));
	t0 = now();
	for (i = 0; i < n; i++) {
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			return perror(path), 1;
	}
	printf("append %.0f\n", n / (now() - t0));
	close(fd);
	unlink(path);
	return 0;
}
