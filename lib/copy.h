/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Copies between a caller's buffer and the region: which instruction
 * moves the bytes (docs/libdaxfs.md "File I/O by inode number").
 *
 * Out of the region (reads): glibc's memcpy moves a 4 KiB block with
 * vector loads and stores (its `rep movsb` threshold is 8 KiB where
 * AVX-512 is present).  Out of a region page not in the cache that is the
 * slower way here: 4 KiB blocks out of a 64 MiB shared mapping,
 * sequential, glibc 170-178 ns against `rep movsb` 110-111 ns on an AMD
 * EPYC; random blocks 255-271 either way (docs/benchmarks.md "Reads with
 * no lane, no lock, and `rep movsb`").  The kernel's copy_to_user, which
 * tmpfs reads with, is `rep movsb` too.  So blocks of DAXFS_MOVSB_MIN
 * bytes or more go through it where the CPU says it is fast (ERMS);
 * shorter ones, and every other architecture, through memcpy.
 *
 * Into the region (writes): streaming stores (lib/ntcopy.h) for writes of
 * DAXFS_NT_WRITE_MIN (4 KiB) or more, cached stores (the copy above) for
 * shorter ones.  A write's streaming stores end with one store fence,
 * which waits for them all to reach memory.  In a loop that does nothing
 * but write 4 KiB pages one after the other that wait costs more than the
 * reads for ownership it saves, on an AMD EPYC (io_bench, 4 KiB
 * sequential rewrites: 12,535-12,554 MiB/s streaming against 20,979-21,585
 * cached); on an Intel Xeon it does not (docs/benchmarks.md "Streaming
 * 4 KiB writes on Intel").  But a
 * program that touches 32 KiB or more of its own memory between two
 * writes, as any that computes what it writes does, loses its cached
 * copy's lines in between, and then streaming wins on the AMD EPYC too
 * (bench/write_between, ns a write and its work: 486-535 streaming against
 * 724-751 cached with 32 KiB between, 873-919 against 987-1,020 with 64
 * KiB; fio through the preload, 4 KiB sequential rewrites, 7,481-7,541
 * MiB/s against 5,637-6,229: docs/benchmarks.md "Which copy a 4 KiB write
 * makes").  So a page or more streams on every CPU, but for a write
 * through a per-open-file cache that continues the last one, or appends,
 * which is paced: it makes the cached copy where the program's pace shows
 * that to be faster (lib/pace.h).
 *
 * Shorter writes stream too when they jump, with a per-open-file cache
 * (daxfs_write_streams_at): one that neither starts where the last write
 * through that cache ended nor rewrites the range that ended there has its
 * lines fetched one by one, no prefetch helping, and streams from
 * DAXFS_NT_MIN (2 KiB), as daxfs.ko's copies do.
 *
 * But a write through a per-open-file cache that only rewrites bytes the
 * open file wrote before, within a range that fits in a quarter of the
 * last-level cache, once the open file has written as many bytes as that
 * range holds, makes the cached copy, paced or not (daxfs_write_in_cache):
 * a program that keeps rewriting such a range finds its lines in that
 * cache from one pass to the next, where streaming stores send each to
 * memory again.  No pace can see it: a few cached writes tried between
 * streamed ones find their lines in memory, and only a whole pass in the
 * cached copy brings them back (on an Intel Xeon with 300 MiB of L3 and a
 * 64 MiB file, 4 KiB rewrites 298-309 ns cached against 477-501 streamed
 * and 493-524 paced: docs/libdaxfs.md "Rewrites of a file the cache
 * holds").  A first write, an append, or a program's first
 * pass over a file make the copy they made before: their lines are not in
 * the cache, and a cached copy then fetches each first (a single rewrite
 * pass 1.4x slower cached, first 64 KiB writes 1.6x).  glibc's memcpy
 * draws a line like it: streaming stores only for copies longer than
 * about three quarters of the shared cache.
 *
 * DAXFS_OUTCOPY=memcpy and DAXFS_INCOPY=nt|cached in the environment fix
 * the choice, for A/B measurements; DAXFS_INCOPY=sequential chooses by
 * length only, and DAXFS_INCOPY_MIN=BYTES sets that length (8192: the AMD
 * choice before 2026-12-05); each of them turns pacing and the rule of the
 * cache's span off.  DAXFS_CACHED_SPAN=BYTES sets that span (0: no rule).
 */
#ifndef DAXFS_LIB_COPY_H
#define DAXFS_LIB_COPY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DAXFS_MOVSB_MIN		1024
#define DAXFS_NT_WRITE_MIN	4096
/* writes this long stream even when paced (lib/pace.h): a loop that only
 * writes 16 KiB blocks is faster streamed too (io_bench rewrites, 16 KiB:
 * 19,363-20,269 MiB/s streamed against 14,892-15,189 cached; 32 KiB
 * 22,666-22,901 against 11,191-14,527) */
#define DAXFS_PACE_MAX		16384

/* Set by the first lib_copy_init (every handle's open calls it). */
extern bool lib_copy_movsb;
extern unsigned long lib_copy_nt_min;	/* writes this long stream */
extern unsigned long lib_copy_nt_jump_min;	/* ... and these, random */
extern bool lib_copy_paced;	/* ... or the cached copy (lib/pace.h) */
extern unsigned long lib_copy_cached_span;	/* 0: no such rewrite */
void lib_copy_init(void);
/* The largest data cache the kernel describes in dir, in bytes (0: none);
 * lib_copy_cached_span is a quarter of it for LIB_COPY_SYS_CACHE. */
#define LIB_COPY_SYS_CACHE	"/sys/devices/system/cpu/cpu0/cache"
unsigned long lib_copy_llc_sysfs(const char *dir);

/* One string move of len bytes (x86-64; elsewhere memcpy, and in the
 * crash build too, where the wrapped memcpy counts its lines). */
static inline void daxfs_movsb(void *dst, const void *src, size_t len)
{
#if defined(__x86_64__) && !defined(DAXFS_CRASH_PLAIN)
	__asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len)
			 : : "memory");
#else
	memcpy(dst, src, len);
#endif
}

static inline void daxfs_copy_cached(void *dst, const void *src, size_t len)
{
	if (len >= DAXFS_MOVSB_MIN && lib_copy_movsb)
		daxfs_movsb(dst, src, len);
	else
		memcpy(dst, src, len);
}

/*
 * Loads one byte of each page of a caller's buffer before an op, so that
 * a fault that blocks (a userfaultfd range, a FUSE or NFS mapping) waits
 * here, holding no lane: inside the op it would hold back every host's
 * reclaim, and 32 such threads took every lane of the process
 * (docs/libdaxfs.md "User buffers").  A load is enough for a read's
 * buffer too: the page is then present, and the copy's store into it
 * takes only a quick copy-on-write fault, if any.
 */
static inline void daxfs_user_touch(const void *buf, size_t len)
{
	const volatile char *p = buf, *end = p + len;

	while (p < end) {
		(void)*p;
		p = (const volatile char *)(((uintptr_t)p | 4095) + 1);
	}
}

/* Streaming stores for a write of len bytes? */
static inline bool daxfs_write_streams(size_t len)
{
	return len >= lib_copy_nt_min;
}

/* Does a write of len bytes at off continue the last write through its
 * open file, which ended at end (a hint: 0 when there was none), or
 * rewrite the range that ended there? */
static inline bool daxfs_write_continues(size_t len, uint64_t off,
					 uint64_t end)
{
	return off == end || off + len == end;
}

/* daxfs_write_streams for such a write: one that jumps streams sooner */
static inline bool daxfs_write_streams_at(size_t len, uint64_t off,
					  uint64_t end)
{
	return len >= (daxfs_write_continues(len, off, end) ?
		       lib_copy_nt_min : lib_copy_nt_jump_min);
}

/* Does a write of len bytes at off only rewrite bytes below reach, the
 * end of the furthest write through its open file, when that range fits
 * in the cache (lib_copy_cached_span) and the open file has written as
 * many bytes already (written): the program rewrites what it wrote? */
static inline bool daxfs_write_in_cache(size_t len, uint64_t off,
					uint64_t reach, uint64_t written)
{
	return reach <= lib_copy_cached_span && written >= reach &&
	       off <= reach && len <= reach - off;
}

#endif
