// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: 2 MiB pages for a region made before mkfs asked for them
 * (docs/libdaxfs.md "Huge pages").  mkfs collapses a new region on a
 * tmpfs itself (lib/allocate.c); this does the same for an existing one,
 * while hosts use it: the kernel unmaps each 2 MiB from every process,
 * copies it and maps the new page, and a store meanwhile waits in its
 * page fault, as khugepaged's collapses of live memory do.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libdaxfs-internal.h"

int daxfs_region_huge_pages(const char *path, uint64_t *huge, uint64_t *total)
{
	enum daxfs_target_kind kind;
	struct lib_mapping m;
	uint64_t size, len;
	int fd, err = 0;

	fd = daxfs_target_open(path, O_RDONLY, &kind, &size);
	if (fd < 0)
		return fd;
	len = size;
	*huge = 0;
	*total = size;
	if (kind == DAXFS_TARGET_DEVDAX ||
	    daxfs_target_page_size(fd) >= (2ULL << 20)) {
		*huge = size;
	} else if (kind == DAXFS_TARGET_FILE) {
		err = lib_map_region(fd, kind, PROT_READ, &len, &m);
		if (!err) {
			*huge = lib_collapse_huge(fd, m.map, len);
			munmap(m.area, m.reserved);
		}
	}
	close(fd);
	return err;
}
