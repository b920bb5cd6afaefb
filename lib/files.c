// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: the files a handle holds open (daxfs_file_open), so that a
 * rejoin can tell which ones it lost.  Recovery of a host declared dead
 * drops its open-set entries: another host's unlink may then free such a
 * file and its inode number may come back as another file.  After such a
 * rejoin every file opened before it is stale: its I/O calls return
 * -ESTALE until it is closed (the close returns -ESTALE too, once).
 *
 * The table is only written by open/close (under h->lock) and by the
 * rejoin (which excludes every call); I/O looks only while some entry is
 * stale.
 */
#include <errno.h>
#include <stdlib.h>

#include "libdaxfs-internal.h"

struct lib_open {
	uint64_t ino;
	uint32_t count;			/* opens not closed yet */
	bool stale;			/* opened before a rejoin */
};

/* Index of ino's entry with the given staleness, or -1. */
static long find(struct daxfs_handle *h, uint64_t ino, bool stale)
{
	size_t i;

	for (i = 0; i < h->nr_opens; i++)
		if (h->opens[i].ino == ino && h->opens[i].stale == stale)
			return (long)i;
	return -1;
}

int lib_files_add(struct daxfs_handle *h, uint64_t ino)
{
	struct lib_open *o;
	long i;
	int err = 0;

	pthread_mutex_lock(&h->lock);
	i = find(h, ino, false);
	if (i >= 0) {
		h->opens[i].count++;
		goto out;
	}
	if (h->nr_opens == h->cap_opens) {
		size_t cap = h->cap_opens ? h->cap_opens * 2 : 16;

		o = realloc(h->opens, cap * sizeof(*o));
		if (!o) {
			err = -ENOMEM;
			goto out;
		}
		h->opens = o;
		h->cap_opens = cap;
	}
	h->opens[h->nr_opens++] = (struct lib_open){ ino, 1, false };
out:
	pthread_mutex_unlock(&h->lock);
	return err;
}

/* Drops one open of ino: 1 when it was stale (nothing to close in the
 * open set), 0 otherwise (also when unknown: the core answers). */
int lib_files_put(struct daxfs_handle *h, uint64_t ino)
{
	bool stale = true;
	long i;

	pthread_mutex_lock(&h->lock);
	i = find(h, ino, true);
	if (i < 0) {
		stale = false;
		i = find(h, ino, false);
	}
	if (i >= 0 && !--h->opens[i].count) {
		h->opens[i] = h->opens[--h->nr_opens];
		if (stale)
			__atomic_sub_fetch(&h->nr_stale, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&h->lock);
	return i >= 0 && stale;
}

int lib_files_check(struct daxfs_handle *h, uint64_t ino)
{
	long i;

	if (daxfs_likely(!__atomic_load_n(&h->nr_stale, __ATOMIC_ACQUIRE)))
		return 0;
	pthread_mutex_lock(&h->lock);
	i = find(h, ino, true);
	pthread_mutex_unlock(&h->lock);
	return i >= 0 ? -ESTALE : 0;
}

void lib_files_rejoined(struct daxfs_handle *h, bool forked)
{
	size_t i, n = 0;

	/* After a fork the opens are the parent's, still published by it:
	 * forget them (the child's close gets -EBADF from the core). */
	if (forked) {
		h->nr_opens = 0;
		h->nr_stale = 0;
		return;
	}
	/* Merge duplicates: one stale entry per inode. */
	for (i = 0; i < h->nr_opens; i++) {
		long j = find(h, h->opens[i].ino, true);

		if (j >= 0 && (size_t)j < n) {
			h->opens[j].count += h->opens[i].count;
			continue;
		}
		h->opens[n] = h->opens[i];
		h->opens[n++].stale = true;
	}
	h->nr_opens = n;
	h->nr_stale = n;
}
