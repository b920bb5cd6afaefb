// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A program holding a region file runs popen with LD_PRELOAD taken out
 * of its environment, so the shell never takes the entry its parent
 * prepared for it (lib/preload/fdledger.c), nor the references it was
 * given; then it closes the file.  More rounds than the table has
 * descriptions: pclose must give back what the shell never took, so each
 * close is the description's last and the last open works.  Until session
 * 58 only system gave it back, and popen's leaked one description per
 * round until opens failed with ENFILE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[4096], line[64];
	int rounds, i, fd;
	FILE *f;

	if (argc != 3)
		return 2;
	rounds = atoi(argv[2]);
	unsetenv("LD_PRELOAD");
	for (i = 0; i < rounds; i++) {
		snprintf(path, sizeof(path), "%s/f%d", argv[1], i);
		fd = open(path, O_RDWR | O_CREAT, 0644);
		if (fd < 0) {
			printf("open %d: %s\n", i, strerror(errno));
			return 0;
		}
		f = popen("echo shell", "r");
		if (!f || !fgets(line, sizeof(line), f) ||
		    strcmp(line, "shell\n")) {
			printf("popen %d failed\n", i);
			return 1;
		}
		if (pclose(f) != 0) {
			printf("pclose %d: not 0\n", i);
			return 1;
		}
		close(fd);
	}
	printf("%d rounds of popen: ok\n", rounds);
	return 0;
}
