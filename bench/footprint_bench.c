// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * footprint_bench: one host's share of the memory when N hosts read one
 * dataset.  bench/evaluate.py starts N of these at once and sums their
 * /proc/PID/smaps_rollup.
 *
 *   footprint_bench daxfs REGION DIR   joins the region through libdaxfs and
 *                                      reads every file of DIR (in the
 *                                      region) with daxfs_pread: the data
 *                                      stays in the one shared region
 *   footprint_bench copy SRCDIR        reads every file of SRCDIR (a host
 *                                      directory) into private memory: one
 *                                      private copy per host, as N machines
 *                                      or VMs with their own page cache or
 *                                      tmpfs would hold
 *
 * Prints "ready BYTES" once the data has been read, then holds everything
 * until stdin is closed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

static struct daxfs_handle *h;
static const char *ddir;
static uint64_t total;
static char buf[1 << 20];

static int read_one(void *ctx, const char *name, uint32_t len, uint64_t ino,
		    uint32_t dtype, uint64_t pos)
{
	uint64_t off = 0;
	int64_t r;

	while ((r = daxfs_pread(h, ino, buf, sizeof(buf), off)) > 0) {
		off += r;
		total += r;
	}
	if (r < 0) {
		fprintf(stderr, "footprint_bench: %s/%.*s: %s\n", ddir, (int)len,
			name, daxfs_strerror((int)r));
		exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	char c;
	int err;

	if (argc == 4 && !strcmp(argv[1], "daxfs")) {
		err = daxfs_region_open(argv[2], 0, &h);
		if (err) {
			fprintf(stderr, "footprint_bench: %s: %s\n", argv[2],
				daxfs_strerror(err));
			return 1;
		}
		ddir = argv[3];
		err = daxfs_path_readdir(h, ddir, read_one, NULL);
		if (err < 0)
			return 1;
	} else if (argc == 3 && !strcmp(argv[1], "copy")) {
		DIR *d = opendir(argv[2]);
		struct dirent *e;
		char path[4096];

		if (!d) {
			perror(argv[2]);
			return 1;
		}
		while ((e = readdir(d))) {
			struct stat st;
			char *copy;
			int fd;
			ssize_t r;
			size_t off = 0;

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[2], e->d_name);
			fd = open(path, O_RDONLY);
			if (fd < 0 || fstat(fd, &st) || !(copy = malloc(st.st_size))) {
				perror(path);
				return 1;
			}
			while ((r = read(fd, copy + off, st.st_size - off)) > 0)
				off += r;
			close(fd);
			total += off;	/* copy is kept: the private copy */
		}
		closedir(d);
	} else {
		fprintf(stderr, "usage: footprint_bench daxfs REGION DIR | copy SRCDIR\n");
		return 2;
	}
	printf("ready %llu\n", (unsigned long long)total);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	if (h)
		daxfs_region_close(h);
	return 0;
}
