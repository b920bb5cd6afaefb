// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Which copy daxfs_copy_out uses (outcopy.h): asked of the CPU once. */
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "outcopy.h"

bool lib_outcopy_movsb;

void lib_outcopy_init(void)
{
#if defined(__x86_64__)
	unsigned int a, b, c, d;
	const char *env = getenv("DAXFS_OUTCOPY");

	/* DAXFS_OUTCOPY=memcpy: the library's copy, for A/B measurements */
	if (env && !strcmp(env, "memcpy"))
		return;
	/* leaf 7, EBX bit 9: enhanced REP MOVSB/STOSB */
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9)))
		lib_outcopy_movsb = true;
#endif
}
