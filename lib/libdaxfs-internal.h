/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs private definitions shared by the lib/ sources.
 */
#ifndef DAXFS_LIBDAXFS_INTERNAL_H
#define DAXFS_LIBDAXFS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "daxfs/libdaxfs.h"

/* In-flight call counters per handle: one per thread slot, the last one
 * shared by the threads beyond LIB_CALL_SLOTS (call.c). */
#define LIB_CALL_SLOTS	64

struct lib_inflight {
	unsigned long n;
} __attribute__((aligned(64)));

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

	/* Our host slot's state word in the region and its value while the
	 * slot is ours (NULL: not joined); set by a join (region.c). */
	const u64 *slot_state;
	u64 slot_alive;

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
	struct lib_open *opens;		/* files open on this handle (files.c) */
	size_t nr_opens, cap_opens;
	size_t nr_stale;		/* of them opened before a rejoin */

	struct daxfs_handle *next;	/* all open handles (fork handling) */
	struct lib_backing *bk;		/* split mode: backing files (backing.c) */

	/* The call gate (call.c): a rejoin closes it and waits for the
	 * calls counted in inflight, so fs.host/fs.host_gen never change
	 * under a call.  rejoin_lock: one rejoin at a time. */
	pthread_mutex_t rejoin_lock;
	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cond;
	int gate_closed;
	struct lib_inflight inflight[LIB_CALL_SLOTS + 1];
};

/* lib/backing.c: sets up split mode after the core open (init), stops the fill helper, releases the pin column while
 * still joined (detach), frees the backing state (free). */
int lib_backing_init(struct daxfs_handle *h);
void lib_backing_stop(struct daxfs_handle *h);
void lib_backing_detach(struct daxfs_handle *h);
void lib_backing_free(struct daxfs_handle *h);

/*
 * One public call on a handle (call.c).  lib_call_begin() joins again
 * first when needed (after a fork(), or after this host was declared
 * dead), then counts the call in h->inflight until lib_call_end(), so a
 * rejoin (which closes the gate and waits for those counters) never runs
 * under a call.  lib_call_end() turns the call's result into -ESTALE when
 * the slot the call started on is no longer ours: recovery may have rolled
 * the call back, its outcome is unknown.  A call made by a thread already
 * inside a call on the same handle (nesting) just runs.
 */
struct lib_call {
	struct daxfs_handle *h;
	struct lib_call *up;		/* the call this one runs inside */
	unsigned int slot;		/* h->inflight index counting it */
	bool nested;
};

int lib_call_begin(struct daxfs_handle *h, struct lib_call *c);
int64_t lib_call_end(struct lib_call *c, int64_t ret);
/* Is this thread inside a call on h? */
bool lib_call_inside(struct daxfs_handle *h);

/* The gate: init/destroy with the handle; close waits for the calls in
 * flight and keeps new ones out until open (one closer at a time);
 * child_fork resets it in a fork child.  The call_*_fork hooks guard the
 * process-wide thread slots. */
void lib_gate_init(struct daxfs_handle *h);
void lib_gate_destroy(struct daxfs_handle *h);
void lib_gate_close(struct daxfs_handle *h);
void lib_gate_open(struct daxfs_handle *h);
void lib_gate_child_fork(struct daxfs_handle *h);
void lib_call_prepare_fork(void);
void lib_call_parent_fork(void);
void lib_call_child_fork(void);

/* region.c: joins again when h was declared dead or belongs to a fork
 * parent's host (closes the gate for that); 0 at once otherwise. */
int lib_rejoin(struct daxfs_handle *h);

/*
 * After a call's body returned ret: run it again?  Only for -ENOSPC while
 * freed space is still on its way (docs/reclaim.md "When the pool is
 * empty"), and never inside another call of this thread (that one may hold
 * a lane: a readdir callback).  Sleeps between tries, bounded by about one
 * lease.
 */
bool lib_space_retry(struct lib_call *c, struct daxfs_space_wait *w,
		     int64_t ret);

#define LIB_CALL_(h, expr, retry)					\
	do {								\
		struct lib_call lib_c_;					\
		struct daxfs_space_wait lib_w_ = { 0, 0 };		\
		int64_t lib_r_ = lib_call_begin((h), &lib_c_);		\
									\
		if (!lib_r_) {						\
			do						\
				lib_r_ = (expr);			\
			while ((retry) &&				\
			       lib_space_retry(&lib_c_, &lib_w_, lib_r_)); \
		}							\
		return lib_call_end(&lib_c_, lib_r_);			\
	} while (0)

/* The body of every public entry point: runs expr as one lib call. */
#define LIB_CALL(h, expr)	LIB_CALL_(h, expr, false)
/* The same for a call whose -ENOSPC had no effect (the core rolled it
 * back), so that running it again is safe: waits out space in limbo. */
#define LIB_CALL_SPACE(h, expr)	LIB_CALL_(h, expr, true)

/* lib/files.c: the files this handle holds open.  add/put record
 * daxfs_file_open/close (put returns 1 for a file opened before a rejoin,
 * whose open-set entry recovery dropped); check is -ESTALE for such a
 * file; rejoined (called under the rejoin) marks them all stale, or
 * forgets them in a fork child. */
int lib_files_add(struct daxfs_handle *h, uint64_t ino);
int lib_files_put(struct daxfs_handle *h, uint64_t ino);
int lib_files_check(struct daxfs_handle *h, uint64_t ino);
void lib_files_rejoined(struct daxfs_handle *h, bool forked);

/* -EROFS when h cannot write (read-only mapping or not joined): the
 * prologue of every modifying call. */
int lib_writable(struct daxfs_handle *h);

#endif /* DAXFS_LIBDAXFS_INTERNAL_H */
