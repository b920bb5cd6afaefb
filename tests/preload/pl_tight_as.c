// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A program whose address-space limit (RLIMIT_AS, ulimit -v) leaves room
 * for the preload's description table and little more: its first open,
 * then a fork child that shares the description and reads through it,
 * then the closes.  The table's 64 MiB are mapped at the first open; the
 * ledger of references behind it (32 MiB, lib/preload/fdledger.c) only
 * at the first fork, and where it does not fit the process counts its
 * references privately instead: every call works.  Until session 58 the
 * whole memfd was mapped at the first open, and that open failed with
 * ENOMEM.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB	(1024ULL * 1024)

static unsigned long long vm_size(void)
{
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

int main(int argc, char **argv)
{
	char path[4096], buf[16];
	struct rlimit rl;
	struct stat st;
	int fd, status;
	pid_t pid;

	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/tight", argv[1]);
	/* the region mapped (any region call), the table not yet */
	if (stat(argv[1], &st)) {
		printf("stat: %s\n", strerror(errno));
		return 1;
	}
	rl.rlim_cur = rl.rlim_max = vm_size() + 64 * MIB + 12 * MIB;
	if (setrlimit(RLIMIT_AS, &rl)) {
		printf("setrlimit: %s\n", strerror(errno));
		return 1;
	}
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || write(fd, "tight", 5) != 5) {
		printf("open under the limit: %s\n", strerror(errno));
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		ssize_t n = pread(fd, buf, sizeof(buf), 0);

		close(fd);
		_exit(n == 5 && !memcmp(buf, "tight", 5) ? 0 : 3);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		printf("the child's read failed\n");
		return 1;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	printf("under the limit: open, fork, read, close: %s\n",
	       fd < 0 ? strerror(errno) : "ok");
	return 0;
}
