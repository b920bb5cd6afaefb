// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: giving a region file all of its memory before it is used.
 *
 * A hole in a mapped file is allocated by the first store into it.  When
 * the filesystem holding the file is full (a full /dev/shm or tmpfs) that
 * store is a SIGBUS: the host dies in the middle of an operation, with a
 * lane claimed and a structure half published.  So the holes are filled
 * up front, where a failure is still a plain error (docs/tools.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "libdaxfs-internal.h"

int lib_file_allocate(int fd, uint64_t size, bool exclusive)
{
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0)
		return -errno;
	/* st_blocks counts 512-byte units: no hole can hide in a file that
	 * has at least its size allocated */
	if ((uint64_t)st.st_blocks * 512 >= size)
		return 0;
	do {
		if (exclusive) {
			/* mkfs: nobody else maps the file, so glibc may
			 * fall back to writing zeros where fallocate(2) is
			 * not supported */
			err = posix_fallocate(fd, 0, (off_t)size);
		} else {
			/* other hosts may be storing into the file: only
			 * fallocate(2) mode 0, which never writes data */
			err = fallocate(fd, 0, 0, (off_t)size) < 0 ? errno : 0;
		}
	} while (err == EINTR);
	switch (err) {
	case 0:
		return 0;
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return -ENOMEM;
	case EOPNOTSUPP:
		/* the filesystem cannot allocate ahead: holes stay
		 * (documented in libdaxfs.h) */
		return exclusive ? -EOPNOTSUPP : 0;
	default:
		return -err;
	}
}
