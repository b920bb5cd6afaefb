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
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "libdaxfs-internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

/* Is dev a tmpfs mounted huge=advise? */
static bool shmem_huge_advise(dev_t dev)
{
	char line[4096];
	unsigned int ma, mi;
	bool found = false;
	const char *sep;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*u %*u %u:%u", &ma, &mi) != 2 ||
		    makedev(ma, mi) != dev)
			continue;
		sep = strstr(line, " - tmpfs ");
		found = sep && strstr(sep, "huge=advise");
	}
	fclose(f);
	return found;
}

/*
 * A tmpfs mounted huge=advise gives 2 MiB pages only to faults in a
 * mapping advised MADV_HUGEPAGE: fallocate(2) has no mapping and fills
 * the file with 4 KiB pages, which stay small.  So there the new region
 * is faulted in through an advised, aligned mapping (lib_map_region).
 * What that leaves out (a full tmpfs: no SIGBUS, populating just stops)
 * is left to fallocate, which reports it.  huge=always and within_size
 * give fallocate 2 MiB pages itself; huge=never gives none.
 */
static void populate_huge(int fd, uint64_t size)
{
	struct lib_mapping m;

	if (lib_map_region(fd, DAXFS_TARGET_FILE, PROT_READ | PROT_WRITE, &size, &m))
		return;
	madvise(m.map, size, MADV_POPULATE_WRITE);
	munmap(m.area, m.reserved);
}

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
	/* mkfs only: another host's stores must not race the populating */
	if (exclusive && shmem_huge_advise(st.st_dev)) {
		populate_huge(fd, size);
		if (fstat(fd, &st) < 0)
			return -errno;
		if ((uint64_t)st.st_blocks * 512 >= size)
			return 0;
	}
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
