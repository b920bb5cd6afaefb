// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Which copies libdaxfs makes (copy.h): asked of the CPU once. */
#include <pthread.h>
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

/* A quarter of the last-level cache: room for the file's lines beside
 * the program's own and another writer's.  0 where the size is unknown. */
static unsigned long cached_span(void)
{
	long llc = 0;

#ifdef _SC_LEVEL3_CACHE_SIZE
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
