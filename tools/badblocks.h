/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Known bad ranges of a target for fsck.daxfs (tools/common-badblocks.c):
 * read from a list in the format of /sys/block/pmemN/badblocks ("SECTOR
 * COUNT" lines, 512-byte sectors from the start of the device), or from
 * that file itself for a pmem block device; kept away from the checker's
 * loads, or overwritten with zeros for a repair.  docs/fsck.md "Bad
 * ranges".
 */
#ifndef DAXFS_TOOLS_BADBLOCKS_H
#define DAXFS_TOOLS_BADBLOCKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct bad_ranges {
	unsigned long long *r;	/* sorted, disjoint [start, end) byte pairs, whole pages */
	uint64_t n;		/* pairs */
	char src[256];		/* where the list came from */
};

/*
 * Reads the list at path (list == NULL: the device's own list when fd is a
 * block device with one, else none) and widens each range to whole pages
 * of the region of size bytes.  Returns 0, or -errno with a message
 * printed.
 */
int bad_ranges_load(struct bad_ranges *b, const char *list, int fd, uint64_t size);
/* The first range that [off, off + len) meets, or NULL. */
const unsigned long long *bad_ranges_find(const struct bad_ranges *b, uint64_t off, uint64_t len);
/*
 * Puts private zero pages over the bad ranges of a mapping at base, so
 * that nothing loads from the media there (a load of a poisoned page is a
 * SIGBUS, and the device refuses a listed range).  Returns 0 or -errno.
 */
int bad_ranges_mask(const struct bad_ranges *b, void *base);
/*
 * Writes over the bad ranges through fd and syncs: zeros when base is NULL
 * (before a repair: can the device take them?), else what the masked pages
 * of the mapping at base now hold (zeros and the checker's repairs).  For
 * a pmem block device the driver clears the poison and the list entries.
 * Returns 0, or -errno of the first write that failed.
 */
int bad_ranges_write(const struct bad_ranges *b, const void *base, int fd);
void bad_ranges_free(struct bad_ranges *b);

/* What the checker found on a bad range (a DAXFS_CHK_MEDIA problem). */
struct bad_hit {
	uint64_t ino;		/* 0: not an inode's */
	uint64_t off;		/* the object */
	uint64_t page;		/* 1 + file page index for file data, else 0 */
	uint64_t range;		/* start of the bad range it lies on */
};

struct daxfs_fs;

/*
 * Prints, for each bad range, what lies on it: the fixed metadata (from
 * the superblock's layout), the objects the checker found there (hits,
 * files named by path where a walk from the root finds them), or free
 * space; zeroed: fsck wrote zeros there (-y).  fs may be NULL (not
 * opened): ranges only.
 */
void bad_ranges_report(FILE *out, const char *target, const struct bad_ranges *b,
		       struct daxfs_fs *fs, const struct bad_hit *hits, uint64_t nr_hits,
		       bool zeroed);

#endif
