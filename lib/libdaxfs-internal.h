/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs private definitions shared by the lib/ sources.
 */
#ifndef DAXFS_LIBDAXFS_INTERNAL_H
#define DAXFS_LIBDAXFS_INTERNAL_H

#include <limits.h>
#include <pthread.h>
#include <sys/types.h>
#include <signal.h>
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
	struct daxfs_host_obs *obs;	/* fs.obs: leases as we time them */
	void *map;			/* start of the mmap (== fs.base) */
	uint64_t map_len;
	uint64_t map_reserved;		/* bytes reserved for alignment */
	void *map_area;			/* start of the reservation */
	uint64_t map_page;		/* its page size (hugetlbfs: 2 MiB) */
	int fd;
	dev_t fd_dev;		/* what fd is: daxfs_region_fd checks */
	ino_t fd_ino;
	enum daxfs_target_kind kind;
	unsigned int flags;		/* DAXFS_OPEN_* */
	uint32_t uid, gid;		/* credentials for new objects */
	/* absolute symlink targets below it name the region's own files
	 * (daxfs_set_link_prefix); 0 length: none */
	char link_prefix[PATH_MAX];
	uint32_t link_plen;
	bool link_protect;		/* daxfs_set_link_protect */

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
	/* daxfs_set_heartbeat_hook: run by the heartbeat after each renewal */
	void (*hb_hook)(struct daxfs_handle *h, void *arg);
	void *hb_hook_arg;
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
/* mapped.c: the region's pages this process maps (core/mapped.h) */
void lib_mapped_init(struct daxfs_handle *h);
void lib_mapped_free(struct daxfs_handle *h);
void lib_mapped_child_fork(struct daxfs_handle *h);
void lib_prefault(struct daxfs_handle *h);

/*
 * A thread of the library's own (the heartbeat, the backing helper): it
 * starts with every signal blocked, so that the signals sent to the
 * process reach the program's threads, never ours.  A program's alarm()
 * that bounds a lock wait ran its handler on the heartbeat thread and the
 * wait went on (lib/locks.c); sigwait() in a program that blocks its
 * signals lost them to ours (tests/test_lock_signals.py).
 */
static inline int lib_thread_create(pthread_t *t, void *(*fn)(void *),
				    void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/* lib/hostproc.c: slots of processes gone (docs/hosts.md) */
void lib_host_proc_note(struct daxfs_handle *h);
int lib_host_proc_reap(struct daxfs_fs *fs);
bool lib_hosts_settling(struct daxfs_fs *fs);
bool lib_hosts_unnamed(struct daxfs_fs *fs);
bool lib_proc_ended(u32 pid, u64 start);
int lib_proc_self(u64 *start, u64 *pidns, u64 *timens);

int lib_backing_init(struct daxfs_handle *h);
void lib_backing_stop(struct daxfs_handle *h);
void lib_backing_detach(struct daxfs_handle *h);
void lib_backing_free(struct daxfs_handle *h);

#include "call.h"

/* lib/files.c: the files this handle holds open.  add/put record
 * daxfs_file_open/close (put returns 1 for a file opened before a rejoin,
 * whose open-set entry recovery dropped); check is -ESTALE for such a
 * file; rejoined (called under the rejoin) marks them all stale, or
 * forgets them in a fork child. */
int lib_files_add(struct daxfs_handle *h, uint64_t ino);
int lib_files_put(struct daxfs_handle *h, uint64_t ino);
int lib_files_check(struct daxfs_handle *h, uint64_t ino);
void lib_files_rejoined(struct daxfs_handle *h, bool forked);

/* lib/io.c: an open-set entry for ino (as daxfs_file_open) and its
 * release without the POSIX lock drop of a close (a mapping's hold). */
int lib_file_hold(struct daxfs_handle *h, uint64_t ino);
int lib_file_hold_mapped(struct daxfs_handle *h, uint64_t ino);
int lib_file_unhold(struct daxfs_handle *h, uint64_t ino);

/* lib/allocate.c: allocates every hole of the region file fd up to size
 * (nothing to do when it has none).  -ENOMEM when its filesystem has no
 * room for them.  exclusive (mkfs, nobody maps the file): may write zeros
 * where fallocate(2) is unsupported; else such a file keeps its holes. */
int lib_file_allocate(int fd, uint64_t size, bool exclusive);

/* lib/hugepages.c: the bytes of the region fd (of kind, map: its 2 MiB
 * aligned mapping of len bytes) on pages of 2 MiB or more: all of a devdax
 * device or a hugetlbfs file; of a file on a tmpfs, with ask, what the
 * kernel gives when asked now (MADV_COLLAPSE); else 0. */
uint64_t lib_region_huge(int fd, enum daxfs_target_kind kind, void *map,
			 uint64_t len, bool ask);

/* A region mapping and the reservation around it (region.c). */
struct lib_mapping {
	void *map;			/* the target, huge-page aligned */
	void *area;			/* start of the reservation */
	uint64_t reserved;		/* its length: munmap(area, reserved) */
};
int lib_map_region(int fd, enum daxfs_target_kind kind, int prot,
		   uint64_t *len, struct lib_mapping *m);

/* -EROFS when h cannot write (read-only mapping or not joined): the
 * prologue of every modifying call. */
int lib_writable(struct daxfs_handle *h);

/* Every open handle shuts down (lib/crash.c, DAXFS_CRASH_STOP=shutdown). */
void lib_shutdown_all(void);

#endif /* DAXFS_LIBDAXFS_INTERNAL_H */
