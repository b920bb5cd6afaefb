// SPDX-License-Identifier: GPL-2.0
/*
 * vm/helpers/trunc_fault FILE PAGES ROUNDS - run in a daxfs.ko guest by
 * vm/harden_kguest.py's trunc-fault scenario (tests/vm/test_kernel_hardening.py).
 *
 * One thread keeps faulting pages 1..PAGES-1 of a shared read-only mapping of
 * FILE; the main thread fills the file with a round's stamp, truncates it to
 * one page and regrows it.  Once ftruncate has returned, the mapping (the
 * same page tables the other thread faults into) must not show the bytes it
 * cut: beyond EOF an access gives SIGBUS, after the regrow it reads zeros.
 * A fault that ran between the truncate's unmap and its cut in the region
 * would map a page that the cut then frees (ext4 and xfs serialise the two
 * with invalidate_lock).  Prints "rounds=N stale=M"; exits 1 when M > 0.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096L

static __thread sigjmp_buf jb;
static __thread volatile int armed;
static atomic_int stop;
static char *map;
static long pages;

static void on_sigbus(int sig)
{
	if (!armed)
		abort();
	siglongjmp(jb, 1);
}

/* The byte at page p offset 0 through the mapping; -1 for SIGBUS. */
static int peek(long p)
{
	int v;

	if (sigsetjmp(jb, 1))
		return armed = 0, -1;
	armed = 1;
	v = *(volatile unsigned char *)(map + p * PAGE);
	armed = 0;
	return v;
}

static void *faulter(void *arg)
{
	long p;

	while (!atomic_load(&stop))
		for (p = 1; p < pages; p++)
			peek(p);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_sigbus, .sa_flags = SA_NODEFER };
	long rounds, r, p, stale = 0;
	pthread_t t;
	char *buf;
	int fd, rfd, v;

	if (argc != 4)
		return 2;
	pages = atol(argv[2]);
	rounds = atol(argv[3]);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	rfd = open(argv[1], O_RDONLY);
	buf = malloc(pages * PAGE);
	if (fd < 0 || rfd < 0 || !buf || ftruncate(fd, pages * PAGE))
		return perror(argv[1]), 2;
	/* read-only descriptor: read faults map what is there, never allocate */
	map = mmap(NULL, pages * PAGE, PROT_READ, MAP_SHARED, rfd, 0);
	if (map == MAP_FAILED)
		return perror("mmap"), 2;
	sigaction(SIGBUS, &sa, NULL);
	pthread_create(&t, NULL, faulter, NULL);
	for (r = 0; r < rounds; r++) {
		memset(buf, 'a' + r % 26, pages * PAGE);
		if (pwrite(fd, buf, pages * PAGE, 0) != pages * PAGE ||
		    ftruncate(fd, PAGE))
			return perror("pwrite/ftruncate"), 2;
		for (p = 1; p < pages; p++)
			if ((v = peek(p)) != -1) {
				stale++;
				fprintf(stderr, "round %ld: page %ld beyond EOF read %d\n",
					r, p, v);
			}
		if (ftruncate(fd, pages * PAGE))
			return perror("ftruncate"), 2;
		for (p = 1; p < pages; p++)
			if ((v = peek(p)) != 0) {
				stale++;
				fprintf(stderr, "round %ld: page %ld after regrow read %d\n",
					r, p, v);
			}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("rounds=%ld stale=%ld\n", rounds, stale);
	return stale ? 1 : 0;
}
