// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: what of the region this process has mapped on purpose.  The
 * whole region at open (DAXFS_OPEN_PREFAULT), or ranges through
 * daxfs_region_populate (the preload's files at open); the core adds the
 * fresh batches it populates.  A writer skips its fault-in load for pages
 * recorded here (core/mapped.h, docs/libdaxfs.md "Pre-faulting the
 * region").
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "libdaxfs-internal.h"
#include "core/internal.h"
#include "core/mapped.h"

static uint64_t bitmap_bytes(const struct daxfs_handle *h)
{
	uint64_t pages = (h->map_len + DAXFS_PAGE_SIZE - 1) / DAXFS_PAGE_SIZE;

	return (pages + 63) / 64 * 8;
}

/*
 * One bit per page, in memory that costs nothing until a bit is set (an
 * anonymous mapping: a TiB of region takes 32 MiB of address space).
 * Without it (the mapping refused) every write faults its page in first,
 * as before.
 */
void lib_mapped_init(struct daxfs_handle *h)
{
	void *p = mmap(NULL, bitmap_bytes(h), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	h->fs.mapped = p == MAP_FAILED ? NULL : p;
}

void lib_mapped_free(struct daxfs_handle *h)
{
	if (h->fs.mapped)
		munmap(h->fs.mapped, bitmap_bytes(h));
	h->fs.mapped = NULL;
}

/* A fork's child has none of the parent's page tables for the region (a
 * shared mapping's entries are not copied): it knows of no mapped page. */
void lib_mapped_child_fork(struct daxfs_handle *h)
{
	if (h->fs.mapped)
		madvise(h->fs.mapped, bitmap_bytes(h), MADV_DONTNEED);
}

/*
 * DAXFS_OPEN_PREFAULT: the whole mapping entered in the page tables now,
 * after lib_map_region's huge-page advice so that shmem huge=advise still
 * maps 2 MiB pages.  A kernel older than 5.14 refuses the madvise: then
 * every page is loaded once instead (a shared mapping maps a page
 * writable on a read fault where it may be written).
 */
void lib_prefault(struct daxfs_handle *h)
{
	volatile const uint8_t *p = h->map;
	uint64_t off;

	if (!daxfs_region_populate(h, h->map, h->map_len))
		return;
	for (off = 0; off < h->map_len; off += DAXFS_PAGE_SIZE)
		(void)p[off];
	daxfs_mapped_mark(&h->fs, 0, h->map_len);
}

int daxfs_region_populate(struct daxfs_handle *h, const void *p,
			  uint64_t len)
{
	const uint8_t *base = h->map, *q = p;
	uint64_t off;

	if (q < base || q >= base + h->map_len)
		return -EINVAL;
	off = (uint64_t)(q - base);
	if (len > h->map_len - off)
		len = h->map_len - off;
	if (madvise((void *)((uintptr_t)q & ~(uintptr_t)(DAXFS_PAGE_SIZE - 1)),
		    len + (off & (DAXFS_PAGE_SIZE - 1)),
		    (h->flags & DAXFS_OPEN_RDONLY) ? MADV_POPULATE_READ :
		    MADV_POPULATE_WRITE))
		return -errno;
	daxfs_mapped_mark(&h->fs, off, len);
	return 0;
}
