// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * N reads of 4 KiB blocks of a 1 MiB file through daxfs_pread_fc, for
 * bench/stores_op.sh: run under valgrind's lackey, the difference of two
 * runs with different N gives the stores one read makes and where they go.
 * Prints the destination buffer's and a stack variable's address.
 *   read_stores REGION N
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "include/daxfs/libdaxfs.h"
#include "core/daxfs_core.h"

#define FILE_SIZE (1u << 20)

int main(int argc, char **argv)
{
	static char buf[4096] __attribute__((aligned(4096)));
	static char data[FILE_SIZE];
	struct daxfs_mkfs_opts o;
	struct daxfs_handle *h;
	struct daxfs_fcache fc;
	uint64_t ino, i, n;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: read_stores REGION N\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 0);
	memset(&o, 0, sizeof(o));
	o.force = 1;
	o.lease_ms = 60000;
	unlink(argv[1]);
	err = daxfs_region_create(argv[1], 64 << 20, &o);
	if (!err)
		err = daxfs_region_open(argv[1], 0, &h);
	if (!err)
		err = daxfs_path_create(h, "/f", 0644, 0, &ino);
	if (err < 0) {
		fprintf(stderr, "read_stores: setup: %s\n", strerror(-err));
		return 1;
	}
	memset(data, 7, sizeof(data));
	if (daxfs_pwrite(h, ino, data, sizeof(data), 0) != sizeof(data))
		return 1;
	memset(&fc, 0, sizeof(fc));
	/* the first read fills the per-open-file cache */
	if (daxfs_pread_fc(h, ino, &fc, buf, 4096, 0) != 4096)
		return 1;
	printf("buf %p stack %p\n", (void *)buf, (void *)&fc);
	for (i = 0; i < n; i++)
		daxfs_pread_fc(h, ino, &fc, buf, 4096, i % (FILE_SIZE / 4096) * 4096);
	daxfs_region_close(h);
	unlink(argv[1]);
	return 0;
}
