// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: 2 MiB pages for a region file on a tmpfs (docs/libdaxfs.md
 * "Huge pages").  mkfs asks for them for a new region (lib/mkfs.c), and
 * daxfs_region_huge_pages for an existing one, while hosts use it: the
 * kernel unmaps each 2 MiB from every process, copies it and maps the new
 * page, and a store meanwhile waits in its page fault, as khugepaged's
 * collapses of live memory do.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "libdaxfs-internal.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25
#endif

#define HUGE_PAGE		(2ULL << 20)
#define TMPFS_MAGIC		0x01021994	/* statfs(2) */

/*
 * A tmpfs mounted huge=never (/dev/shm as distributions mount it) fills a
 * region with 4 KiB pages, and a random access then costs a TLB miss and a
 * page walk.  MADV_COLLAPSE (Linux 6.1) puts 2 MiB pages into the file
 * whatever its mount says; they stay in the file's page cache, so every
 * host's later mapping, 2 MiB aligned (lib_map_region), maps them whole.
 * Best effort: it copies each 2 MiB (about 1-3 ms each here, more when the
 * kernel must compact memory), and where the kernel is older, the memory
 * too fragmented or shmem_enabled says "deny", the region keeps its small
 * pages there.  One call per 2 MiB, so that the count is exact: a call is
 * cheap beside the copy.  Returns the bytes now on 2 MiB pages.
 */
static uint64_t collapse(int fd, void *map, uint64_t len)
{
	uint64_t off, huge = 0;
	struct statfs sfs;

	if (fstatfs(fd, &sfs) < 0 || (unsigned long)sfs.f_type != TMPFS_MAGIC)
		return 0;
	for (off = 0; off + HUGE_PAGE <= len; off += HUGE_PAGE) {
		int tries = 3, ret;

		/* EAGAIN: a page was busy for a moment (on a CPU's LRU
		 * list, locked): asked again, it usually goes */
		do {
			ret = madvise((uint8_t *)map + off, HUGE_PAGE,
				      MADV_COLLAPSE);
		} while (ret && errno == EAGAIN && --tries);
		if (!ret)
			huge += HUGE_PAGE;
		else if (errno == EINVAL)
			break;	/* no MADV_COLLAPSE here, or "deny" */
	}
	return huge;
}

uint64_t lib_region_huge(int fd, enum daxfs_target_kind kind, void *map,
			 uint64_t len, bool ask)
{
	if (kind == DAXFS_TARGET_DEVDAX || daxfs_target_page_size(fd) >= HUGE_PAGE)
		return len;
	return kind == DAXFS_TARGET_FILE && ask ? collapse(fd, map, len) : 0;
}

int daxfs_region_huge_pages(const char *path, uint64_t *huge, uint64_t *total)
{
	enum daxfs_target_kind kind;
	struct lib_mapping m;
	uint64_t size, len;
	int fd, err;

	fd = daxfs_target_open(path, O_RDONLY, &kind, &size);
	if (fd < 0)
		return fd;
	len = size;
	*huge = 0;
	*total = size;
	err = lib_map_region(fd, kind, PROT_READ, &len, &m);
	if (!err) {
		*huge = lib_region_huge(fd, kind, m.map, len, true);
		munmap(m.area, m.reserved);
	}
	close(fd);
	return err;
}
