/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Pages this process is known to map (docs/hosts.md "Fencing"): a write
 * need not fault them in before its fence check.
 *
 * A user-space host that stores into a page not yet in its page tables
 * takes a fault, and a stop is taken on the way out of a fault: inside
 * the window between daxfs_copy_fenced's check and its copy.  So the copy
 * loads each target page first.  For a page that is mapped the load buys
 * nothing, and on a line not in the cache it costs a random 4 KiB write
 * about a third of its time (docs/benchmarks.md "Known-mapped pages").
 * The front end keeps one bit per page it mapped on purpose (the whole
 * region with DAXFS_OPEN_PREFAULT, each fresh batch it populated, pages
 * given to daxfs_region_populate) and the load is made for the others.
 *
 * A set bit is a hint and is never cleared: should the kernel unmap a
 * page again (swap, migration), its fault falls into the window, as every
 * fault did before the load existed.  The front end empties the map where
 * page tables go whole (the child of a fork).  The kernel keeps none
 * (fs->mapped NULL): it maps the region at mount.
 */
#ifndef DAXFS_CORE_MAPPED_H
#define DAXFS_CORE_MAPPED_H

#include "compat.h"
#include "daxfs_core.h"

static inline bool daxfs_known_mapped(const struct daxfs_fs *fs, const u8 *p)
{
	u64 pg;

	if (!fs->mapped)
		return false;
	pg = (u64)(p - fs->base) >> DAXFS_BLOCK_SHIFT;
	return (daxfs_once(fs->mapped[pg / 64]) >> (pg % 64)) & 1;
}

/* A write's target page, before the fence check (daxfs_copy_fenced). */
static inline void daxfs_fault_in_page(const struct daxfs_fs *fs, u8 *p)
{
	if (!daxfs_known_mapped(fs, p))
		daxfs_fault_in_write(p);
}

/* Records [off, off + len) of the region as mapped by this process;
 * threads may mark at once (a CAS per word that gains bits). */
static inline void daxfs_mapped_mark(struct daxfs_fs *fs, u64 off, u64 len)
{
	u64 pg, last, n, bits, old, *w;

	if (!fs->mapped || !len || off >= fs->size)
		return;
	if (len > fs->size - off)
		len = fs->size - off;
	pg = off >> DAXFS_BLOCK_SHIFT;
	last = (off + len - 1) >> DAXFS_BLOCK_SHIFT;
	while (pg <= last) {
		n = 64 - pg % 64;
		if (n > last - pg + 1)
			n = last - pg + 1;
		bits = (n == 64 ? ~0ULL : (1ULL << n) - 1) << (pg % 64);
		w = &fs->mapped[pg / 64];
		old = daxfs_once(*w);
		while ((old & bits) != bits && !daxfs_cas(w, &old, old | bits))
			;
		pg += n;
	}
}

#endif
