/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copies into the region with non-temporal stores (docs/files.md "Data
 * copies with streaming stores").  A cached store of a line not in the
 * cache reads the line first (a read for ownership) and later writes it
 * back: twice the memory traffic of a streaming store, which writes the
 * line once.  The region is large and mostly not in this host's cache,
 * and the bytes a write stores are mostly read by other hosts or much
 * later: measured here (bench/ntcopy_bench, random blocks into a 64 MiB-
 * 1 GiB shared mapping) streaming stores copy 2-4 KiB blocks 1.4-1.6x and
 * 64 KiB-1 MiB blocks 1.7-1.9x as fast; 1 KiB blocks gain nothing.  Into
 * a mapping that fits the cache (16 MiB) they lose (0.57-1x).
 *
 * Streaming stores are weakly ordered: daxfs_copy_nt ends with a store
 * fence, so that they are visible before any later store (a size or
 * pointer a reader follows), as cached stores are under x86's total store
 * order.  daxfs_copy_nt_unfenced, libdaxfs' write actor for writes of
 * 8 KiB or more (shorter ones copy through the cache: lib/copy.h),
 * leaves that fence to daxfs_copy_fenced, which makes one for the whole
 * write.
 * Short copies and the partial lines at either end go through the cache:
 * a partial streaming line costs more than a cached one.
 */
#ifndef DAXFS_LIB_NTCOPY_H
#define DAXFS_LIB_NTCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/compat.h"	/* DAXFS_NT_MIN, daxfs_stream_lines */

#if defined(__x86_64__)
/* Not fenced: a write actor's copy, which daxfs_copy_fenced fences once
 * for the whole write (core/compat.h daxfs_stream_fence). */
static inline void daxfs_copy_nt_unfenced(void *dst, const void *src,
					  size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	size_t head, body;

	if (len < DAXFS_NT_MIN) {
		memcpy(d, s, len);
		return;
	}
	/* a page-aligned write has no partial line: no libc call for it */
	head = (size_t)(-(uintptr_t)d & 63);
	if (head) {
		memcpy(d, s, head);
		d += head;
		s += head;
		len -= head;
	}
	body = len & ~(size_t)63;
	daxfs_stream_lines(d, s, body);
	if (len > body)
		memcpy(d + body, s + body, len - body);
}
#else
/* elsewhere plain copies: the ordering above would need its own fences */
static inline void daxfs_copy_nt_unfenced(void *dst, const void *src,
					  size_t len)
{
	memcpy(dst, src, len);
}
#endif

static inline void daxfs_copy_nt(void *dst, const void *src, size_t len)
{
	daxfs_copy_nt_unfenced(dst, src, len);
	daxfs_stream_fence();
}

#endif
