/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A writable mapping of a region, told to the crash build so that its
 * plain stores count for store:N (lib/crash-plain.c).  Nothing elsewhere.
 */
#ifndef DAXFS_LIB_CRASH_PLAIN_H
#define DAXFS_LIB_CRASH_PLAIN_H

#include <stdint.h>

#if defined(DAXFS_CRASH_POINTS) && defined(DAXFS_CRASH_PLAIN)
void daxfs_crash_map(void *base, uint64_t len);
void daxfs_crash_unmap(void *base);
#else
#define daxfs_crash_map(base, len)	do { } while (0)
#define daxfs_crash_unmap(base)		do { } while (0)
#endif

#endif
