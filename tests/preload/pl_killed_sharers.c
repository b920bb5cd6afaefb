// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A parent opens a file, forks a child that shares the description and
 * is killed (SIGKILL: it closes nothing itself), and closes: more times
 * than there are open file descriptions under the preload (16,384,
 * docs/preload.md).  Each description must be freed by the parent's
 * close, as on Linux, so the last open still works.  Until session 57
 * each killed child's reference stayed, and the opens failed with ENFILE
 * after 16,384 rounds (tests/test_preload.py).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096];
	int rounds, i, fd, st;
	pid_t pid;

	if (argc != 3)
		return 2;
	rounds = atoi(argv[2]);
	snprintf(path, sizeof(path), "%s/shared", argv[1]);
	for (i = 0; i < rounds; i++) {
		fd = open(path, O_RDWR | O_CREAT, 0644);
		if (fd < 0) {
			printf("open %d: %s\n", i, strerror(errno));
			return 1;
		}
		pid = fork();
		if (pid < 0) {
			printf("fork %d: %s\n", i, strerror(errno));
			return 1;
		}
		if (pid == 0) {
			kill(getpid(), SIGKILL);
			_exit(1);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFSIGNALED(st)) {
			printf("child %d did not die of SIGKILL\n", i);
			return 1;
		}
		close(fd);
	}
	fd = open(path, O_RDWR);
	printf("after %d killed sharers, an open: %s\n", rounds,
	       fd < 0 ? strerror(errno) : "ok");
	return 0;
}
