// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Pre-faulting a file's pages at open (docs/benchmarks.md, "Through the
 * preload: CPU time per call").  Each process maps the region afresh, so
 * its first load or store to each page of a file takes a minor fault
 * (about as long as the 4 KiB copy itself), where tmpfs' kernel path
 * takes none.  At open, the pages the file already has are mapped in one
 * madvise(MADV_POPULATE_WRITE) per run contiguous in the region
 * (daxfs_region_populate, which also spares the writes their fault-in
 * load): no exception per page, and no fault in the I/O that follows.  Bounded
 * (PREFAULT_MAX pages per open) so that opening a huge file stays cheap;
 * pages past the bound fault as before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "preload.h"

#define PG		4096UL
#define PREFAULT_MAX	65536UL		/* pages: 256 MiB per open */

static int enabled = -1;

/* mapped, and recorded so that writes skip their fault-in (core/mapped.h) */
static void populate(struct daxfs_handle *h, const char *start,
		     const char *end)
{
	if (start && end > start &&
	    daxfs_region_populate(h, start, end - start) == -EINVAL)
		enabled = 0;	/* an older kernel: stop trying */
}

void pl_prefault(uint64_t ino, uint64_t size)
{
	struct daxfs_handle *h = pl_handle_peek();
	const char *run = NULL, *end = NULL;
	const void *p;
	uint64_t blk, n = (size + PG - 1) / PG;

	if (enabled < 0) {
		const char *e = getenv("DAXFS_PRELOAD_PREFAULT");

		enabled = !e || *e != '0';
	}
	if (!h || !enabled)
		return;
	if (n > PREFAULT_MAX)
		n = PREFAULT_MAX;
	for (blk = 0; blk < n && enabled; blk++) {
		if (daxfs_page_locate(h, ino, blk, &p))
			break;
		if (p && p == end) {
			end += PG;
			continue;
		}
		populate(h, run, end);
		run = p;
		end = p ? (const char *)p + PG : NULL;
	}
	if (enabled)
		populate(h, run, end);
}
