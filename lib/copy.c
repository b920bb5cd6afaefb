// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Which copies libdaxfs makes (copy.h): asked of the CPU once. */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "copy.h"
#include "core/compat.h"	/* DAXFS_NT_MIN */

bool lib_copy_movsb;
unsigned long lib_copy_nt_min = DAXFS_NT_WRITE_MIN;
unsigned long lib_copy_nt_jump_min = DAXFS_NT_MIN;
bool lib_copy_paced = true;
unsigned long lib_copy_cached_span;

/* The first line of dir/name as a string in buf (n bytes); false when
 * it cannot be read. */
static bool read_line(const char *dir, const char *name, char *buf, size_t n)
{
	char path[PATH_MAX];
	FILE *f;
	bool ok;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, (int)n, f) != NULL;
	fclose(f);
	return ok;
}

/* "32768K" (the kernel's format; M and G taken too) as bytes, 0 if not. */
static unsigned long size_bytes(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	switch (*end) {
	case 'K': return v << 10;
	case 'M': return v << 20;
	case 'G': return v << 30;
	default: return *end == '\n' || !*end ? v : 0;
	}
}

/*
 * The size of the highest cache level the kernel describes under dir
 * (/sys/devices/system/cpu/cpuN/cache: level, type and size of each
 * indexN): the cache of one core complex, which the core shares with
 * the others in it.  0 where there is none.  sysconf's
 * _SC_LEVEL3_CACHE_SIZE only where the kernel says nothing: on an AMD
 * EPYC guest glibc answered 320 MiB where the kernel (and lscpu) say
 * 32 MiB, and rewrites of 64 MiB files took the cached copy, which lost
 * to the streamed one there (docs/benchmarks.md, session 57).
 */
unsigned long lib_copy_llc_sysfs(const char *dir)
{
	unsigned long best = 0;
	int i, best_level = 0;

	for (i = 0; i < 16; i++) {
		char sub[PATH_MAX], buf[64];
		int level;

		snprintf(sub, sizeof(sub), "%s/index%d", dir, i);
		if (!read_line(sub, "level", buf, sizeof(buf)))
			continue;
		level = atoi(buf);
		if (read_line(sub, "type", buf, sizeof(buf)) &&
		    !strncmp(buf, "Instruction", 11))
			continue;
		if (level <= best_level ||
		    !read_line(sub, "size", buf, sizeof(buf)))
			continue;
		best_level = level;
		best = size_bytes(buf);
	}
	return best;
}

/* A quarter of the last-level cache: room for the file's lines beside
 * the program's own and another writer's.  0 where the size is unknown. */
static unsigned long cached_span(void)
{
	long llc = (long)lib_copy_llc_sysfs(LIB_COPY_SYS_CACHE);

#ifdef _SC_LEVEL3_CACHE_SIZE
	if (llc <= 0)
		llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (llc <= 0)
		llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	return llc > 0 ? (unsigned long)llc / 4 : 0;
}

static void copy_choose(void)
{
	const char *out = getenv("DAXFS_OUTCOPY");
	const char *in = getenv("DAXFS_INCOPY");
	const char *min = getenv("DAXFS_INCOPY_MIN");
	const char *span = getenv("DAXFS_CACHED_SPAN");
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	/* leaf 7, EBX bit 9: enhanced REP MOVSB/STOSB */
	lib_copy_movsb = (!out || strcmp(out, "memcpy")) &&
			 __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
			 (b & (1u << 9));
#else
	(void)out;
#endif
	/* a choice fixed for an A/B measurement is not paced */
	lib_copy_paced = !(in && (!strcmp(in, "nt") || !strcmp(in, "cached") ||
				  !strcmp(in, "sequential"))) && !(min && *min);
	lib_copy_cached_span = span && *span ? strtoul(span, NULL, 0) :
			       lib_copy_paced ? cached_span() : 0;
	if (in && !strcmp(in, "nt"))
		lib_copy_nt_min = lib_copy_nt_jump_min = 0;
	else if (in && !strcmp(in, "cached"))
		lib_copy_nt_min = lib_copy_nt_jump_min = ~0UL;
	if (min && *min)
		lib_copy_nt_min = strtoul(min, NULL, 0);
	if (in && !strcmp(in, "sequential"))
		lib_copy_nt_jump_min = lib_copy_nt_min;	/* by length only */
}

void lib_copy_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, copy_choose);
}
