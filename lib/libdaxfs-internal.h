/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs private definitions shared by the lib/ sources.
 */
#ifndef DAXFS_LIBDAXFS_INTERNAL_H
#define DAXFS_LIBDAXFS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "daxfs/libdaxfs.h"

struct daxfs_handle {
	struct daxfs_fs fs;		/* core view; fs.base is the mapping */
	void *map;			/* start of the mmap (== fs.base) */
	uint64_t map_len;
	uint64_t map_reserved;		/* bytes reserved for alignment */
	void *map_area;			/* start of the reservation */
	int fd;
	enum daxfs_target_kind kind;
	unsigned int flags;		/* DAXFS_OPEN_* */
	uint32_t uid, gid;		/* credentials for new objects */

	/* host membership; lock protects everything below */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t hb_thread;
	bool hb_running;
	bool hb_stop;
	bool want_join;			/* this handle is meant to be a host */
	bool need_rejoin;		/* declared dead: join again */
	unsigned long fork_gen;		/* lib_fork_gen when we (re)joined */
	uint64_t rejoins;

	struct daxfs_handle *next;	/* all open handles (fork handling) */
	struct lib_backing *bk;		/* split mode: backing files (backing.c) */
};

/* lib/backing.c: sets up split mode after the core open (init), stops the fill helper, releases the pin column while
 * still joined (detach), frees the backing state (free). */
int lib_backing_init(struct daxfs_handle *h);
void lib_backing_stop(struct daxfs_handle *h);
void lib_backing_detach(struct daxfs_handle *h);
void lib_backing_free(struct daxfs_handle *h);

/*
 * Every library entry point calls lib_enter() first: after a fork() it
 * makes the child join as a new host, after a lost lease it re-joins.
 * Returns 0 or -errno (join failure).
 */
int lib_enter(struct daxfs_handle *h);

/* lib_enter(), then -EROFS when h cannot write (read-only mapping or not
 * joined): the prologue of every modifying entry point. */
int lib_enter_writable(struct daxfs_handle *h);

#endif /* DAXFS_LIBDAXFS_INTERNAL_H */
