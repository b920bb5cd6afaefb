/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copies out of the region into a caller's buffer (the read actor).
 *
 * glibc's memcpy moves a 4 KiB block with vector loads and stores (its
 * `rep movsb` threshold is 8 KiB where AVX-512 is present).  Out of a
 * region page not in the cache that is the slower way here: bench/
 * copy_bench, 4 KiB blocks out of a 64 MiB shared mapping, sequential,
 * glibc 170-178 ns against `rep movsb` 110-111 ns on an AMD EPYC; random
 * blocks 255-271 either way (docs/benchmarks.md "Copies out of the
 * region").  The string instruction's microcode fetches the source ahead
 * in whole lines, as the kernel's copy_to_user (also `rep movsb`) does for
 * tmpfs.  So blocks of DAXFS_OUTCOPY_MIN bytes or more go through it
 * where the CPU says it is fast (ERMS); shorter ones, and every other
 * architecture, through memcpy.
 */
#ifndef DAXFS_LIB_OUTCOPY_H
#define DAXFS_LIB_OUTCOPY_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#define DAXFS_OUTCOPY_MIN	1024

/* Set once by lib_outcopy_init (the first handle's open). */
extern bool lib_outcopy_movsb;
void lib_outcopy_init(void);

static inline void daxfs_copy_out(void *dst, const void *src, size_t len)
{
#if defined(__x86_64__)
	if (len >= DAXFS_OUTCOPY_MIN && lib_outcopy_movsb) {
		__asm__ volatile("rep movsb"
				 : "+D"(dst), "+S"(src), "+c"(len)
				 : : "memory");
		return;
	}
#endif
	memcpy(dst, src, len);
}

#endif
