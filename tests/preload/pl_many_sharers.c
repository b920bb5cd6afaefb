// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A parent opens a file and forks N children that share its description
 * and stay alive, all at once (a server's pre-forked workers); they are
 * killed (SIGKILL: they close nothing themselves), the parent closes, and
 * then opens as many files as the table has descriptions.  The killed
 * children's references must be given back however many there were, so
 * the shared description is freed and every open works.  Until session 58
 * the registry of processes that count where others can give their
 * counts back (lib/preload/fdledger.c) had 256 entries: the children
 * beyond it counted privately, their references leaked, and the last
 * open failed with ENFILE.
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
	int children, opens, i, fd, st, ok = 0;
	char path[4096];
	pid_t *pids;

	if (argc != 4)
		return 2;
	children = atoi(argv[2]);
	opens = atoi(argv[3]);
	pids = calloc((size_t)children, sizeof(*pids));
	if (!pids)
		return 2;
	snprintf(path, sizeof(path), "%s/shared", argv[1]);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		printf("open: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < children; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			printf("fork %d: %s\n", i, strerror(errno));
			return 1;
		}
		if (pids[i] == 0) {
			for (;;)
				pause();
		}
	}
	for (i = 0; i < children; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < children; i++) {
		if (waitpid(pids[i], &st, 0) != pids[i] || !WIFSIGNALED(st)) {
			printf("child %d did not die of SIGKILL\n", i);
			return 1;
		}
	}
	close(fd);
	for (i = 0; i < opens; i++) {
		snprintf(path, sizeof(path), "%s/f%d", argv[1], i);
		fd = open(path, O_RDWR | O_CREAT, 0644);
		if (fd < 0) {
			printf("after %d killed sharers, open %d: %s\n",
			       children, i, strerror(errno));
			return 0;
		}
		ok++;
	}
	printf("after %d killed sharers, %d opens: ok\n", children, ok);
	return 0;
}
