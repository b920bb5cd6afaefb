// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Plain stores counted for the crash build's `store:N` (lib/crash.c,
 * docs/recovery.md "Killed after any store").
 *
 * The core's atomics pass through daxfs_dirty (core/compat.h), which
 * counts them; a plain C store into the region (a record or an intent
 * word written before its publication, a field a claim's holder owns)
 * does not.  With DAXFS_CRASH_PLAIN=1 these count too: the crash build
 * compiles every file with GCC's outline address-sanitizer calls for
 * writes only (`-fsanitize=kernel-address`, Makefile CRASH_PLAIN_FLAGS),
 * and the calls land here.  No shadow memory and no checking: a store
 * whose address lies in a mapped region counts, before it is made, so a
 * kill there is a host stopped after the store before it.  A block copy
 * into the region (memcpy, memset, memmove, which the compiler does not
 * instrument) counts once per cache line, so a cut can also fall inside
 * a record's copy.  Streaming stores of file data count the same way, a
 * line each (daxfs_crash_line, called by core/compat.h's
 * daxfs_stream_lines), and the string move of lib/copy.h is a memcpy in
 * this build, so that a cut can fall inside a write's data too.
 *
 * Without DAXFS_CRASH_PLAIN each call is a load and a branch.
 */
#if defined(DAXFS_CRASH_POINTS) && defined(DAXFS_CRASH_PLAIN)

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/compat.h"
#include "crash-plain.h"

#define NO_SAN	__attribute__((no_sanitize_address, used))
#define MAX_RANGES 16

static struct {
	uintptr_t lo, hi;	/* [lo, hi): hi 0 is a free slot */
} ranges[MAX_RANGES];
static int plain = -1;	/* -1 not read yet, 0 off, 1 on */

NO_SAN static int plain_on(void)
{
	int on = __atomic_load_n(&plain, __ATOMIC_RELAXED);
	const char *env;

	if (on >= 0)
		return on;
	env = getenv("DAXFS_CRASH_PLAIN");
	on = env && *env && strcmp(env, "0");
	__atomic_store_n(&plain, on, __ATOMIC_RELAXED);
	return on;
}

/* lib/region.c, after it maps a region writable and before it unmaps */
NO_SAN void daxfs_crash_map(void *base, uint64_t len)
{
	int i;

	for (i = 0; i < MAX_RANGES; i++) {
		uintptr_t free_hi = 0;

		if (__atomic_load_n(&ranges[i].hi, __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&ranges[i].lo, (uintptr_t)base, __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(&ranges[i].hi, &free_hi,
						(uintptr_t)base + len, false,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
	/* more regions than slots: the rest go uncounted */
}

NO_SAN void daxfs_crash_unmap(void *base)
{
	int i;

	for (i = 0; i < MAX_RANGES; i++)
		if (__atomic_load_n(&ranges[i].lo, __ATOMIC_RELAXED) == (uintptr_t)base &&
		    __atomic_load_n(&ranges[i].hi, __ATOMIC_RELAXED))
			__atomic_store_n(&ranges[i].hi, 0, __ATOMIC_RELEASE);
}

NO_SAN static int in_region(uintptr_t a, size_t size)
{
	int i;

	for (i = 0; i < MAX_RANGES; i++) {
		uintptr_t hi = __atomic_load_n(&ranges[i].hi, __ATOMIC_ACQUIRE);
		uintptr_t lo = __atomic_load_n(&ranges[i].lo, __ATOMIC_RELAXED);

		if (hi && a < hi && a + size > lo)
			return 1;
	}
	return 0;
}

NO_SAN static void plain_store(uintptr_t a, size_t size)
{
	if (size && plain_on() && in_region(a, size))
		daxfs_crash_store();
}

#define STORE_HOOK(n)							\
NO_SAN void __asan_store##n##_noabort(void *a)			\
{									\
	plain_store((uintptr_t)a, n);						\
}									\
NO_SAN void __asan_store##n(void *a)				\
{									\
	plain_store((uintptr_t)a, n);						\
}
STORE_HOOK(1)
STORE_HOOK(2)
STORE_HOOK(4)
STORE_HOOK(8)
STORE_HOOK(16)

NO_SAN void __asan_storeN_noabort(void *a, long size)
{
	plain_store((uintptr_t)a, size);
}

NO_SAN void __asan_storeN(void *a, long size)
{
	plain_store((uintptr_t)a, size);
}

/* core/compat.h: one streamed line, before it is stored */
NO_SAN void daxfs_crash_line(const void *d)
{
	plain_store((uintptr_t)d, 64);
}

/* Reads are not instrumented (asan-instrument-reads=0); these only keep
 * a stray reference from failing the link. */
NO_SAN void __asan_loadN_noabort(void *a, long size) { }
NO_SAN void __asan_handle_no_return(void) { }

/*
 * Block copies (linked with --wrap): a copy into the region counts once
 * per 64-byte line it writes, each before its line, so a kill leaves the
 * lines before it written and the rest not.
 */
void *__real_memcpy(void *d, const void *s, size_t n);
void *__real_memset(void *d, int c, size_t n);
void *__real_memmove(void *d, const void *s, size_t n);

/* One line's part of a block copy: memcpy from src + off, or memset to
 * the byte c when src is NULL. */
NO_SAN static void copy_part(char *d, const char *src, int c, size_t off,
			     size_t k)
{
	if (src)
		__real_memcpy(d + off, src + off, k);
	else
		__real_memset(d + off, c, k);
}

NO_SAN static void *by_lines(void *d, const void *src, int c, size_t n)
{
	uintptr_t a = (uintptr_t)d;
	size_t done = 0;

	if (!n || !plain_on() || !in_region(a, n)) {
		copy_part(d, src, c, 0, n);
		return d;
	}
	while (done < n) {
		size_t room = 64 - ((a + done) & 63);
		size_t k = n - done < room ? n - done : room;

		daxfs_crash_store();
		copy_part(d, src, c, done, k);
		done += k;
	}
	return d;
}

NO_SAN void *__wrap_memcpy(void *d, const void *s, size_t n)
{
	return by_lines(d, s, 0, n);
}

NO_SAN void *__wrap_memset(void *d, int c, size_t n)
{
	return by_lines(d, NULL, c, n);
}

/* An overlapping move is one count: its line order is not a store order
 * worth cutting, and splitting it would change what it copies. */
NO_SAN void *__wrap_memmove(void *d, const void *s, size_t n)
{
	plain_store((uintptr_t)d, n);
	return __real_memmove(d, s, n);
}

#else
/* ISO C forbids an empty translation unit */
typedef int daxfs_crash_plain_disabled;
#endif /* DAXFS_CRASH_POINTS && DAXFS_CRASH_PLAIN */
