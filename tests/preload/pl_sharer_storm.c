// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fork children that share a parent's descriptions, dup and close them,
 * read through them, and are killed (SIGKILL) at random moments, round
 * after round, while the parent closes and reopens (docs/preload.md
 * "References of processes that end without closing").  What must hold,
 * as on Linux: every descriptor reads its own file's bytes until it is
 * closed (a description freed early, while a descriptor still named it,
 * and taken by another open would read another file), and the killed
 * children's references are given back, so the table (64 descriptions in
 * the test, DAXFS_PRELOAD_DESC_MAX) does not fill up.  Each child's first
 * read joins it as a host while its killed siblings' slots fill the host
 * table: until session 57 a joiner that lost the race to declare those
 * dead failed that read with EBUSY (lib/region.c do_join).
 *   pl_sharer_storm DIR ROUNDS SEED
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILES		8
#define CHILDREN	6

static char dir[4096];

static int open_file(int i)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/f%d", dir, i);
	return open(path, O_RDWR);
}

/* fd reads file i's bytes: "f<i>" */
static int reads_own(int fd, int i)
{
	char want[16], got[8] = "";
	ssize_t n;

	snprintf(want, sizeof(want), "f%d", i);
	n = pread(fd, got, 2, 0);
	if (n == 2 && !memcmp(got, want, 2))
		return 1;
	printf("fd %d of f%d: pread %zd (%s) \"%.2s\"\n", fd, i, n,
	       n < 0 ? strerror(errno) : "", got);
	return 0;
}

static void child(unsigned int seed, const int *fds)
{
	int fd[FILES * 2], file[FILES * 2], n = 0, i, k;

	srand(seed);
	for (i = 0; i < FILES; i++) {
		file[n] = i;
		fd[n++] = fds[i];
		if (rand() % 2) {
			file[n] = i;
			fd[n++] = dup(fds[i]);
		}
	}
	for (k = 0; k < 200; k++) {
		i = rand() % n;
		if (fd[i] >= 0 && !reads_own(fd[i], file[i])) {
			printf("child: descriptor of f%d fails to read its own file\n",
			       file[i]);
			fflush(stdout);
			_exit(3);
		}
		if (rand() % 8 == 0 && fd[i] >= 0) {
			close(fd[i]);
			fd[i] = -1;
		}
		if (rand() % 16 == 0)
			usleep(rand() % 200);
	}
	pause();
	_exit(0);
}

int main(int argc, char **argv)
{
	int fds[FILES], i, r, rounds, bad = 0, opened = 0, st, fd;
	pid_t kids[CHILDREN];
	char name[16];

	if (argc != 4)
		return 2;
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	rounds = atoi(argv[2]);
	srand((unsigned int)atoi(argv[3]));
	for (i = 0; i < FILES; i++) {
		char path[4200];

		snprintf(path, sizeof(path), "%s/f%d", dir, i);
		fd = open(path, O_RDWR | O_CREAT, 0644);
		snprintf(name, sizeof(name), "f%d", i);
		if (fd < 0 || write(fd, name, 2) != 2)
			return 1;
		close(fd);
	}
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < FILES; i++)
			fds[i] = open_file(i);
		for (i = 0; i < FILES; i++)
			if (fds[i] < 0) {
				printf("round %d: open f%d: %s\n", r, i,
				       strerror(errno));
				return 1;
			}
		for (i = 0; i < CHILDREN; i++) {
			unsigned int seed = (unsigned int)rand();

			kids[i] = fork();
			if (kids[i] == 0)
				child(seed, fds);
		}
		/* close some of ours while the children work, then kill
		 * them at random moments */
		for (i = 0; i < FILES; i += 2)
			close(fds[i]);
		for (i = 0; i < CHILDREN; i++) {
			usleep(rand() % 3000);
			kill(kids[i], SIGKILL);
		}
		for (i = 0; i < CHILDREN; i++) {
			if (waitpid(kids[i], &st, 0) == kids[i] &&
			    WIFEXITED(st) && WEXITSTATUS(st) == 3)
				bad++;
		}
		for (i = 1; i < FILES; i += 2) {
			if (!reads_own(fds[i], i))
				bad++;
			close(fds[i]);
		}
	}
	/* every description back: the table holds 64 new opens again */
	for (i = 0; i < 64; i++) {
		fd = open_file(i % FILES);
		if (fd < 0)
			break;
		opened++;
		if (!reads_own(fd, i % FILES))
			bad++;
	}
	printf("descriptors that failed to read their own file: %d\n", bad);
	printf("opens after %d rounds: %d of 64\n", rounds, opened);
	return 0;
}
