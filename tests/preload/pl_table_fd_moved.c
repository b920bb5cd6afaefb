// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A program replaces the preload's own descriptor of its description
 * table (dup2 of a kernel file onto that number, as a program that sets
 * up its descriptors for a child does), then forks for the first time:
 * the fork maps the table's ledger of references (lib/preload/fdledger.c)
 * and must map it from the table, which moved to another number, never
 * from what the program put in its place.  Run with a region directory
 * and a kernel file; prints what the child read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The number of the preload's table memfd, -1: none. */
static int table_fd(void)
{
	char link[300], target[256];
	struct dirent *de;
	int fd = -1;
	ssize_t n;
	DIR *d = opendir("/proc/self/fd");

	while (d && (de = readdir(d))) {
		snprintf(link, sizeof(link), "/proc/self/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (strstr(target, "daxfs-preload-fds"))
			fd = atoi(de->d_name);
	}
	if (d)
		closedir(d);
	return fd;
}

int main(int argc, char **argv)
{
	char path[4096], buf[16] = "";
	int fd, kfd, tfd, st;
	pid_t pid;

	if (argc != 3)
		return 2;
	snprintf(path, sizeof(path), "%s/moved", argv[1]);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || write(fd, "region", 6) != 6) {
		printf("open: %s\n", strerror(errno));
		return 1;
	}
	tfd = table_fd();
	kfd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (tfd < 0 || kfd < 0 || write(kfd, "kernel", 6) != 6) {
		printf("no table descriptor (%d) or kernel file\n", tfd);
		return 1;
	}
	if (dup2(kfd, tfd) != tfd) {
		printf("dup2: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(pread(fd, buf, 6, 0) == 6 && !memcmp(buf, "region", 6)
		      ? 0 : 3);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
		printf("the child died (signal %d)\n",
		       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
		return 1;
	}
	if (pread(kfd, buf, 6, 0) != 6)
		return 1;
	printf("child: %s, kernel file: %.6s\n",
	       WEXITSTATUS(st) ? "failed" : "read its region file", buf);
	return 0;
}
