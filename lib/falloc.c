// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: fallocate, SEEK_DATA / SEEK_HOLE and the extent list of a
 * file, by inode number (core/falloc.c, core/extent.c).
 */
#include <errno.h>

#include "libdaxfs-internal.h"

static int do_fallocate(struct daxfs_handle *h, uint64_t ino, int mode,
			uint64_t off, uint64_t len)
{
	int err = lib_writable(h);

	if (!err)
		err = lib_files_check(h, ino);
	if (err)
		return err;
	if (mode < 0)
		return -EOPNOTSUPP;
	return daxfs_fallocate(&h->fs, ino, (u32)mode, off, len);
}

static int do_seek(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		   int whence, uint64_t *res)
{
	u64 r = 0;
	int err = lib_files_check(h, ino);

	if (!err)
		err = daxfs_seek_hole_data(&h->fs, ino, off, whence, &r);
	if (!err)
		*res = r;
	return err;
}

static int do_extents(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		      uint64_t len, struct daxfs_extent *ext, unsigned int max)
{
	uint64_t end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	unsigned int n = 0;
	int err = lib_files_check(h, ino);

	while (!err && n < max && off < end) {
		err = daxfs_next_extent(&h->fs, ino, off, &ext[n]);
		if (err || !ext[n].length || ext[n].logical >= end)
			break;
		off = ext[n].logical + ext[n].length;
		n++;
	}
	return err ? err : (int)n;
}

int daxfs_file_fallocate(struct daxfs_handle *h, uint64_t ino, int mode,
			 uint64_t off, uint64_t len)
{
	LIB_CALL_SPACE(h, do_fallocate(h, ino, mode, off, len));
}

int daxfs_file_seek(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		    int whence, uint64_t *res)
{
	LIB_CALL(h, do_seek(h, ino, off, whence, res));
}

int daxfs_file_extents(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		       uint64_t len, struct daxfs_extent *ext, unsigned int max)
{
	LIB_CALL(h, do_extents(h, ino, off, len, ext, max));
}
