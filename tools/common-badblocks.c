// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Known bad ranges of a target, for fsck.daxfs (tools/badblocks.h).
 *
 * The list has the format of /sys/block/pmemN/badblocks: one "SECTOR
 * COUNT" pair a line, in 512-byte sectors from the start of the device.
 * The checker works on whole 4 KiB pages, so each range is widened to
 * the pages it touches (the kernel module refuses reads of the whole
 * page too).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "include/daxfs/format.h"
#include "core/check.h"
#include "tools/badblocks.h"
#include "tools/common.h"

#define BB_SECTOR	512ULL
#define BB_PAGE		((uint64_t)DAXFS_BLOCK_SIZE)

static int bb_cmp(const void *a, const void *b)
{
	const unsigned long long *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Sorts the pairs and merges those that touch or overlap. */
static void bb_merge(struct bad_ranges *b)
{
	uint64_t i, n = 0;

	if (!b->n)
		return;
	qsort(b->r, b->n, 2 * sizeof(uint64_t), bb_cmp);
	for (i = 1; i < b->n; i++) {
		if (b->r[2 * i] <= b->r[2 * n + 1]) {
			if (b->r[2 * i + 1] > b->r[2 * n + 1])
				b->r[2 * n + 1] = b->r[2 * i + 1];
			continue;
		}
		n++;
		b->r[2 * n] = b->r[2 * i];
		b->r[2 * n + 1] = b->r[2 * i + 1];
	}
	b->n = n + 1;
}

static int bb_add(struct bad_ranges *b, uint64_t *cap, uint64_t start, uint64_t end)
{
	unsigned long long *r;

	if (b->n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		r = realloc(b->r, *cap * 2 * sizeof(*r));
		if (!r)
			return -ENOMEM;
		b->r = r;
	}
	b->r[2 * b->n] = start;
	b->r[2 * b->n + 1] = end;
	b->n++;
	return 0;
}

/* Parses the list in f; a malformed line is an error (a list half read
 * would let fsck load a bad page, or report fewer losses than there are). */
static int bb_parse(struct bad_ranges *b, FILE *f, uint64_t size)
{
	unsigned long long sector, count;
	uint64_t cap = 0, start, end;
	char line[256], extra;
	unsigned int nr = 0;
	int err;

	while (fgets(line, sizeof(line), f)) {
		nr++;
		if (line[strspn(line, " \t\r\n")] == '\0' || line[0] == '#')
			continue;
		if (sscanf(line, "%llu %llu %c", &sector, &count, &extra) != 2 || !count ||
		    sector > UINT64_MAX / BB_SECTOR ||
		    count > UINT64_MAX / BB_SECTOR - sector) {
			tool_err("%s: line %u: expected \"SECTOR COUNT\" (512-byte sectors)",
				 b->src, nr);
			return -EINVAL;
		}
		start = sector * BB_SECTOR / BB_PAGE * BB_PAGE;
		end = (sector + count) * BB_SECTOR;
		end = end > UINT64_MAX - BB_PAGE ? UINT64_MAX & ~(BB_PAGE - 1) :
		      (end + BB_PAGE - 1) / BB_PAGE * BB_PAGE;
		if (start >= size)
			continue;		/* beyond the region: nothing of ours */
		if (end > size)
			end = size;
		err = bb_add(b, &cap, start, end);
		if (err)
			return err;
	}
	if (ferror(f))
		return -EIO;
	bb_merge(b);
	return 0;
}

/* /sys/dev/block/MAJ:MIN/badblocks of a block device, or "" */
static void bb_sysfs_path(int fd, char *buf, size_t len)
{
	struct stat st;

	buf[0] = '\0';
	if (fstat(fd, &st) || !S_ISBLK(st.st_mode))
		return;
	snprintf(buf, len, "/sys/dev/block/%u:%u/badblocks", major(st.st_rdev),
		 minor(st.st_rdev));
}

int bad_ranges_load(struct bad_ranges *b, const char *list, int fd, uint64_t size)
{
	FILE *f;
	int err;

	memset(b, 0, sizeof(*b));
	if (list)
		snprintf(b->src, sizeof(b->src), "%s", list);
	else
		bb_sysfs_path(fd, b->src, sizeof(b->src));
	if (!b->src[0])
		return 0;
	f = fopen(b->src, "r");
	if (!f) {
		err = -errno;
		if (!list && err == -ENOENT)
			return 0;	/* a block device that keeps no list */
		tool_errno(-err, "cannot read the bad block list %s", b->src);
		return err;
	}
	err = bb_parse(b, f, size);
	fclose(f);
	if (err == -EIO)
		tool_errno(EIO, "cannot read the bad block list %s", b->src);
	return err;
}

const unsigned long long *bad_ranges_find(const struct bad_ranges *b, uint64_t off, uint64_t len)
{
	return daxfs_bad_range_find(b->r, b->n, off, len);
}

int bad_ranges_mask(const struct bad_ranges *b, void *base)
{
	uint64_t i;

	for (i = 0; i < b->n; i++) {
		void *p = (char *)base + b->r[2 * i];

		if (mmap(p, b->r[2 * i + 1] - b->r[2 * i], PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

int bad_ranges_write(const struct bad_ranges *b, const void *base, int fd)
{
	static const char zero[BB_PAGE];
	uint64_t i, off;
	ssize_t n;

	for (i = 0; i < b->n; i++) {
		/* a page at a time: the driver clears poison per write */
		for (off = b->r[2 * i]; off < b->r[2 * i + 1]; off += BB_PAGE) {
			n = pwrite(fd, base ? (const char *)base + off : zero, BB_PAGE,
				   (off_t)off);
			if (n != (ssize_t)BB_PAGE)
				return n < 0 ? -errno : -EIO;
		}
	}
	return fsync(fd) ? -errno : 0;
}

void bad_ranges_free(struct bad_ranges *b)
{
	free(b->r);
	b->r = NULL;
	b->n = 0;
}
