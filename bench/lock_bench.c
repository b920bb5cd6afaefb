// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * lock_bench: how fast a lock waiter on another host gets a lock that is
 * given up (docs/locks.md "Measurements").  Two processes, each its own
 * libdaxfs host of one region: the holder takes a write lock, lets the
 * waiter block on it (daxfs_lock with timeout -1), holds it for a random
 * 1-5 ms (so the waiter is deep in its back-off), then unlocks; the waiter
 * notes when it holds the lock.  Both read CLOCK_MONOTONIC of one machine.
 * Also reports the waiter's CPU time per second of waiting.  Mode
 * "remote" unlocks through the core (no futex wake), as a holder on
 * another machine (a VM guest, another kernel) would: the waiter then
 * finds the change by its bounded back-off alone.
 *
 *   lock_bench REGION [ROUNDS [local|remote]]   (REGION is created)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

struct shared {
	volatile int held;		/* round the holder holds the lock in */
	volatile int blocked;		/* round the waiter is about to block in */
	volatile int got;		/* round the waiter got the lock in */
	volatile long long t_unlock, t_got;
	volatile double cpu_s, wait_s;
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static struct daxfs_handle *open_file(const char *path, uint64_t *ino)
{
	struct daxfs_handle *h;
	int err = daxfs_region_open(path, 0, &h);

	if (!err)
		err = daxfs_path_resolve(h, "/lockfile", 1, ino);
	if (err) {
		fprintf(stderr, "lock_bench: %s: %s\n", path, daxfs_strerror(err));
		exit(1);
	}
	return h;
}

static struct daxfs_lock_req wr(void)
{
	struct daxfs_lock_req r = {
		.end = DAXFS_LOCK_EOF, .type = DAXFS_LCK_WR,
		.kind = DAXFS_LCK_POSIX,
	};

	return r;
}

static void waiter(const char *path, struct shared *s, int rounds)
{
	struct daxfs_lock_req r;
	struct daxfs_handle *h;
	double c0, waited = 0;
	long long t0;
	uint64_t ino;
	int i;

	h = open_file(path, &ino);
	c0 = cpu_s();
	for (i = 1; i <= rounds; i++) {
		while (s->held != i)
			usleep(50);
		s->blocked = i;
		r = wr();
		t0 = now_ns();
		if (daxfs_lock(h, ino, &r, -1))
			exit(1);
		s->t_got = now_ns();
		waited += (s->t_got - t0) / 1e9;
		s->got = i;
		daxfs_unlock(h, ino, DAXFS_LCK_POSIX, 0, 0, DAXFS_LOCK_EOF);
	}
	s->cpu_s = cpu_s() - c0;
	s->wait_s = waited;
	daxfs_region_close(h);
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct daxfs_mkfs_opts mo = { .force = 1 };
	int rounds = argc > 2 ? atoi(argv[2]) : 300, i, st;
	bool remote = argc > 3 && !strcmp(argv[3], "remote");
	struct daxfs_lock_req r;
	struct daxfs_handle *h;
	long long *lat;
	struct shared *s;
	uint64_t ino;
	pid_t pid;

	if (argc < 2 || rounds < 1) {
		fprintf(stderr, "usage: lock_bench REGION [ROUNDS]\n");
		return 2;
	}
	st = daxfs_region_create(argv[1], 64 << 20, &mo);
	if (!st)
		st = daxfs_region_open(argv[1], 0, &h);
	if (!st)	/* 1: created */
		st = daxfs_path_create(h, "/lockfile", 0644, 0, &ino);
	if (st < 0) {
		fprintf(stderr, "lock_bench: cannot make %s: %s\n", argv[1],
			daxfs_strerror(st));
		return 1;
	}
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	lat = calloc(rounds, sizeof(*lat));
	if (s == MAP_FAILED || !lat)
		return 1;
	memset(s, 0, sizeof(*s));
	pid = fork();
	if (!pid) {
		waiter(argv[1], s, rounds);
		_exit(0);
	}
	srand(1);
	for (i = 1; i <= rounds; i++) {
		r = wr();
		if (daxfs_lock(h, ino, &r, -1))
			return 1;
		s->held = i;
		while (s->blocked != i)
			usleep(20);
		usleep(1000 + rand() % 4000);
		s->t_unlock = now_ns();
		r.type = DAXFS_LCK_UN;
		if (remote)
			daxfs_lock_set(daxfs_handle_fs(h), ino, &r, 0);
		else
			daxfs_unlock(h, ino, DAXFS_LCK_POSIX, 0, 0,
				     DAXFS_LOCK_EOF);
		while (s->got != i)
			usleep(20);
		lat[i - 1] = s->t_got - s->t_unlock;
	}
	waitpid(pid, &st, 0);
	qsort(lat, rounds, sizeof(*lat), cmp);
	printf("lock hand-over across hosts (%s unlocker), %d rounds "
	       "(holder kept it 1-5 ms):\n", remote ? "remote" : "local", rounds);
	printf("  latency us: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n",
	       lat[rounds / 2] / 1e3, lat[rounds * 9 / 10] / 1e3,
	       lat[rounds * 99 / 100] / 1e3, lat[rounds - 1] / 1e3);
	printf("  waiter CPU: %.3f s in %.3f s of waiting (%.2f%%)\n",
	       s->cpu_s, s->wait_s, 100 * s->cpu_s / (s->wait_s ? s->wait_s : 1));
	daxfs_region_close(h);
	unlink(argv[1]);
	return 0;
}
