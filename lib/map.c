// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: shared mappings of file pages for a user-space host (the
 * LD_PRELOAD library's zero-copy MAP_SHARED).  The caller maps the pool
 * page itself (mmap of the region file at the page's offset) and becomes
 * a mapping host (docs/reclaim.md "Mapping hosts"): it announces an epoch
 * before its first lookup and runs revalidation passes, so that no page
 * it maps is reused for another file before a pass has moved off it.
 */
#include <errno.h>

#include <sys/stat.h>

#include "libdaxfs-internal.h"

static int do_map_page(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		       int alloc, uint64_t *off)
{
	int err = alloc ? lib_writable(h) : 0;
	u64 pg = 0;

	*off = 0;
	if (!err)
		err = lib_files_check(h, ino);
	if (err)
		return err;
	/*
	 * devdax and hugetlbfs map only in whole 2 MiB pieces; a host-less
	 * view (read-only, or not joined) has no slot to announce a pass
	 * epoch in, so nothing would hold a page it maps back from reuse
	 * for another file (docs/reclaim.md "Mapping hosts"): the caller
	 * copies instead, as for devdax.
	 */
	if (h->map_page > DAXFS_BLOCK_SIZE || h->fs.host == DAXFS_NO_HOST)
		return -ENODEV;
	if (alloc)
		err = daxfs_map_block(&h->fs, ino, pgoff, true, &pg);
	else
		err = daxfs_block_page(&h->fs, ino, pgoff, &pg);
	if (!err && ((alloc && !pg) || pg + DAXFS_BLOCK_SIZE > h->map_len))
		err = -EUCLEAN;		/* not a page of our mapping */
	*off = err ? 0 : pg;
	return err;
}

int daxfs_map_page(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		   int alloc, uint64_t *off)
{
	if (alloc && !(alloc & DAXFS_MAP_NOWAIT))
		LIB_CALL_SPACE(h, do_map_page(h, ino, pgoff, alloc, off));
	LIB_CALL(h, do_map_page(h, ino, pgoff, alloc, off));
}

static int do_map_first(struct daxfs_handle *h)
{
	daxfs_map_first(&h->fs);
	return 0;
}

int daxfs_map_begin(struct daxfs_handle *h)
{
	LIB_CALL(h, do_map_first(h));
}

static int64_t do_pass_epoch(struct daxfs_handle *h)
{
	return (int64_t)daxfs_map_pass_epoch(&h->fs);
}

int64_t daxfs_map_pass_begin(struct daxfs_handle *h)
{
	LIB_CALL(h, do_pass_epoch(h));
}

static int do_announce(struct daxfs_handle *h, uint64_t e)
{
	daxfs_map_announce(&h->fs, e);
	return 0;
}

static int do_pass_wanted(struct daxfs_handle *h)
{
	return daxfs_map_pass_asked(&h->fs);
}

int daxfs_map_pass_wanted(struct daxfs_handle *h)
{
	LIB_CALL(h, do_pass_wanted(h));
}

int daxfs_map_pass_end(struct daxfs_handle *h, uint64_t e)
{
	LIB_CALL(h, do_announce(h, e));
}

/*
 * The region's descriptor, for mmap of its pages: -EBADF once it is no
 * longer the region file.  A program that closes descriptors it does not
 * own (os.closerange(3, ...)) may have the number reused by a file of its
 * own, and a mapping of "region pages" would then show that file's bytes
 * (tests/test_std_descriptors.py).
 */
int daxfs_region_fd(struct daxfs_handle *h)
{
	struct stat st;

	if (h->fd < 0 || fstat(h->fd, &st) || st.st_dev != h->fd_dev ||
	    st.st_ino != h->fd_ino)
		return -EBADF;
	return h->fd;
}

/* A mapping keeps its file alive after the last close, as on Linux, and
 * its munmap drops no lock (unlike daxfs_file_close). */
int daxfs_map_hold(struct daxfs_handle *h, uint64_t ino)
{
	LIB_CALL_SPACE(h, lib_file_hold_mapped(h, ino));
}

int daxfs_map_hold_nowait(struct daxfs_handle *h, uint64_t ino)
{
	LIB_CALL(h, lib_file_hold_mapped(h, ino));
}

int daxfs_map_unhold(struct daxfs_handle *h, uint64_t ino)
{
	LIB_CALL(h, lib_file_unhold(h, ino));
}
