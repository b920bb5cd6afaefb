// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: sync mode (DAXFS_OPEN_SYNC, docs/modes.md).  A call on a sync
 * handle logs the cache line of every shared word it stores (compat.h,
 * daxfs_dirty), and before it returns flushes the logged lines and drains:
 * every call that returned is on the persistent media.  Data and the
 * stores the core makes with plain writes (new records before their
 * publishing CAS) are flushed by the core itself (DAXFS_FS_PERSISTENT,
 * which a sync handle has).
 */
#include <stdlib.h>

#include "libdaxfs-internal.h"

__thread struct daxfs_dirty *daxfs_dirty_log
	__attribute__((tls_model("initial-exec")));

/* The log is full: write those lines back now (a later store to one of
 * them is logged again), and start over. */
void daxfs_dirty_spill(struct daxfs_dirty *d)
{
	u32 i;

	for (i = 0; i < d->n; i++)
		daxfs_flush((const void *)d->line[i], 64);
	d->n = 0;
}

/* One log per thread, kept for the thread's life (a few KiB). */
static __thread struct daxfs_dirty *thread_log;

int lib_sync_begin(void)
{
	if (!thread_log) {
		thread_log = calloc(1, sizeof(*thread_log));
		if (!thread_log)
			return -ENOMEM;
	}
	thread_log->n = 0;
	daxfs_dirty_log = thread_log;
	return 0;
}

void lib_sync_end(void)
{
	struct daxfs_dirty *d = daxfs_dirty_log;

	if (d) {
		daxfs_dirty_spill(d);
		daxfs_dirty_log = NULL;
	}
	daxfs_drain();
}
