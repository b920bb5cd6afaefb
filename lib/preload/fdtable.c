// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Descriptors of region files.
 *
 * A region file's descriptor is a real kernel descriptor, an O_PATH open
 * of /dev/null: the kernel hands out the number (no clash with the
 * program's other files), dup2/close_range/F_SETFD act on it, and a call
 * that escapes interposition fails with EBADF instead of touching another
 * file.  fdmap[fd] names the open file description (struct pl_desc): its
 * offset, flags and inode.  Descriptions live in one MAP_SHARED memfd that
 * fork and exec hand down, so a parent, its children and what they exec
 * share offsets as POSIX says.  refs in a description counts the
 * descriptors of all those processes; those of a process that dies
 * without closing are given back by the others (fdledger.c).
 *
 * A reservation is a duplicate of one O_PATH open of /dev/null kept for
 * that (the template): F_DUPFD from 0 gives the lowest free number, as
 * open(2) does, for a quarter of what a path open costs (0.75 us against
 * 3.2 us with the close, docs/benchmarks.md "Preload descriptors").  The
 * table's memfd and the template are the preload's own descriptors: a
 * close or dup2 of their number moves them first, a range close skips
 * them (pl_own_fd, pl_own_move).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "preload.h"
#include "lib/posix-locks.h"

#define TABLE_SIZE	((size_t)PL_DESC_MAX * sizeof(struct pl_desc))
/* the descriptions, one page (struct table_head), then the references
 * of each process (fdledger.c) */
#define TABLE_LEDGER	(TABLE_SIZE + PL_PATH_MAX)
#define TABLE_MAP	(TABLE_LEDGER + PL_LEDGER_SIZE)

/* After the descriptions: what the whole table shares. */
struct table_head {
	/* random, made with the table: lock owner ids are made of it
	 * (pl_fd_lock_owner), so that they differ from every other
	 * table's, on every host */
	uint64_t lock_nonce;
	/* the ledger's entries below this may have been taken (fdledger.c):
	 * never lowered, so a scan stops at the tree's busiest moment */
	_Atomic uint32_t ledger_used;
};
#define TABLE_FD_MIN	900

static struct pl_desc *table;
static int table_fd = -1;
static int tmpl_fd = -1;		/* O_PATH /dev/null, close-on-exec */
static uint64_t table_ino;
static _Atomic uint16_t fdmap[PL_FD_MAX];	/* desc index + 1 */

/*
 * The host whose opens this process takes over (docs/preload.md "fork
 * and exec"), so that a file with no name left stays open across the
 * hand-over: the fork parent's slot, or the slot of the image before
 * exec (prev_retire: that host is ours to retire once its opens are);
 * DAXFS_NO_HOST none.  pl_reopen_all consumes it.
 */
static uint32_t prev_slot = DAXFS_NO_HOST;
static uint64_t prev_gen;
static uint64_t prev_table;	/* the table's address in that image */
static int prev_retire;
static uint32_t fork_slot = DAXFS_NO_HOST;	/* parent, at fork */
static int exec_handover;	/* pl_exec_env(1) named our host */
static int exec_waits;		/* pl_exec_env named a wait descriptor */
static int prev_wait_fd = -1;	/* spawned: close once reopened */
/* our descriptors per description: a row others give back once we have
 * ended (fdledger.c) */
#define localref pl_refrow
/* The directory descriptions we hold (localref > 0), for a removal to
 * find those it leaves without a directory (pl_fd_gone_mark) without a
 * walk of the whole table; a fork child inherits them with localref. */
static uint16_t dirs[PL_DESC_MAX];
static unsigned int ndirs;
static unsigned int alloc_hint;
/* descriptions handed out: PL_DESC_MAX, or fewer for the tests that fill
 * the table (DAXFS_PRELOAD_DESC_MAX, docs/preload.md "What fails") */
static unsigned int desc_limit = PL_DESC_MAX;
static pthread_rwlock_t map_lock = PTHREAD_RWLOCK_INITIALIZER;
/* Moves when the map lock is taken for writing and again before it is
 * let go: odd while the map may change.  pl_fd_peek's readers take no
 * lock (docs/preload.md "Reads without a lock"). */
static _Atomic unsigned int map_seq;

_Static_assert(sizeof(struct pl_desc) == PL_PATH_MAX, "desc size");
_Static_assert(sizeof(struct pl_gone) <= sizeof(struct daxfs_fcache),
	       "a removed directory's attributes take the file cache's room");

static int sys_fcntl(int fd, int cmd, long arg)
{
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

static struct table_head *head(void)
{
	return (struct table_head *)((char *)table + TABLE_SIZE);
}

static int table_map(int fd)
{
	/* the descriptions and the table page; the ledger after them is
	 * mapped when first needed (fdledger.c) */
	void *p = mmap(NULL, TABLE_LEDGER, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);

	if (p == MAP_FAILED)
		return -errno;
	table = p;
	pl_ledger_attach(&head()->ledger_used);
	if (getenv("DAXFS_PRELOAD_DESC_MAX"))
		desc_limit = (unsigned int)strtoul(
				getenv("DAXFS_PRELOAD_DESC_MAX"), NULL, 10);
	if (!desc_limit || desc_limit > PL_DESC_MAX)
		desc_limit = PL_DESC_MAX;
	return 0;
}

/* fd moved out of the way of the small numbers programs expect to get
 * (kept where it is when the limit on descriptors is lower), but never
 * left on 0, 1 or 2, which a program started with them closed reads and
 * writes as its own (daxfs_fd_above_std): -EMFILE then. */
static int fd_high(int fd, int cmd)
{
	int hi = sys_fcntl(fd, cmd, TABLE_FD_MIN);

	if (hi < 0 && fd > STDERR_FILENO)
		return fd;
	if (hi < 0)
		hi = sys_fcntl(fd, cmd, STDERR_FILENO + 1);
	syscall(SYS_close, fd);
	return hi < 0 ? -EMFILE : hi;
}

/* 64 random bits, for the table's lock owner ids */
static uint64_t nonce(void)
{
	struct timespec ts;
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == sizeof(v))
		return v;
	clock_gettime(CLOCK_REALTIME, &ts);
	return daxfs_mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
			   ((uint64_t)getpid() << 44));
}

uint64_t pl_fd_lock_owner(struct pl_desc *d)
{
	if (!atomic_load(&d->lk_used))
		atomic_store(&d->lk_used, 1);
	/* a bijection of the index: no two descriptions share one */
	return daxfs_mix64(head()->lock_nonce + (uint64_t)(d - table));
}

/* idx's owner id when a lock request was made on it, else 0 */
static uint64_t lock_owner_of(unsigned int idx)
{
	return atomic_load(&table[idx].lk_used) ?
	       pl_fd_lock_owner(&table[idx]) : 0;
}

static int table_create(void)
{
	struct stat st;
	int fd, err;

	fd = (int)syscall(SYS_memfd_create, "daxfs-preload-fds", 0);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, TABLE_MAP)) {
		err = -errno;
		syscall(SYS_close, fd);
		return err;
	}
	fd = fd_high(fd, F_DUPFD);
	if (fd < 0)
		return fd;
	err = table_map(fd);
	if (err || fstat(fd, &st)) {
		syscall(SYS_close, fd);
		return err ? err : -errno;
	}
	table_fd = fd;
	table_ino = st.st_ino;
	head()->lock_nonce = nonce();
	return 0;
}

int pl_fd_is_region(int fd)
{
	return fd >= 0 && fd < PL_FD_MAX && atomic_load_explicit(&fdmap[fd],
					memory_order_relaxed) != 0;
}

/* Whether fd is an O_TMPFILE open that may still be given a name
 * (open.c open_tmpfile); clear: it has had one now. */
bool pl_fd_linkable(int fd, bool clear)
{
	struct pl_desc *d = pl_fd_get(fd);
	bool linkable;

	if (!d)
		return false;
	linkable = atomic_load(&d->flags) & PL_O_LINKABLE;
	if (linkable && clear)
		atomic_fetch_and(&d->flags, ~PL_O_LINKABLE);
	pl_fd_put(d);
	return linkable;
}

struct pl_desc *pl_fd_get(int fd)
{
	unsigned int v;

	if (fd < 0 || fd >= PL_FD_MAX)
		return NULL;
	pthread_rwlock_rdlock(&map_lock);
	v = atomic_load(&fdmap[fd]);
	if (!v) {
		pthread_rwlock_unlock(&map_lock);
		return NULL;
	}
	return &table[v - 1];
}

void pl_fd_put(struct pl_desc *d)
{
	if (d)
		pthread_rwlock_unlock(&map_lock);
}

struct pl_desc *pl_fd_peek(int fd, unsigned int *seq)
{
	unsigned int v;

	if (fd < 0 || fd >= PL_FD_MAX)
		return NULL;
	*seq = atomic_load_explicit(&map_seq, memory_order_acquire);
	if (*seq & 1)
		return NULL;
	v = atomic_load_explicit(&fdmap[fd], memory_order_acquire);
	return v ? &table[v - 1] : NULL;
}

int pl_fd_peek_still(unsigned int seq)
{
	/* the description's loads before the second look */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&map_seq, memory_order_relaxed) == seq;
}

static void map_write_lock(void)
{
	pthread_rwlock_wrlock(&map_lock);
	atomic_fetch_add(&map_seq, 1);
}

/*
 * Lock order: the region handle's mutex, then the map.  A fork child's
 * first call re-publishes the inherited opens under the handle mutex
 * (taking the map for reading): settle that before holding the map, so
 * that local_put() never needs the handle mutex under it.
 */
void pl_fd_lock(void)
{
	pl_handle_settle();
	map_write_lock();
}

void pl_fd_unlock(void)
{
	atomic_fetch_add(&map_seq, 1);
	pthread_rwlock_unlock(&map_lock);
}

static int desc_alloc(void)
{
	unsigned int i, idx, pass;
	uint32_t zero;

	/* full: the references of processes that ended without closing
	 * are given back first */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < desc_limit; i++) {
			idx = (alloc_hint + i) % desc_limit;
			zero = 0;
			if (atomic_load(&table[idx].refs) == 0 &&
			    atomic_compare_exchange_strong(&table[idx].refs,
							   &zero, 1)) {
				alloc_hint = idx + 1;
				return (int)idx;
			}
		}
		if (!pl_ledger_reap(-1))
			break;
	}
	return -ENFILE;
}

/* The description a give-back closed last (pl_fd_give_back), -1: none. */
static int gave_last = -1;

/*
 * count references of description idx given back for a process that
 * ended without closing (fdledger.c; map lock held): the last of them
 * closes it, as the last close does.  Its fields are read while we still
 * count them: at 0 the slot may be another open's at once.
 */
void pl_fd_give_back(unsigned int idx, unsigned int count)
{
	struct pl_desc *d = &table[idx];
	uint64_t ino = d->ino, id = lock_owner_of(idx);
	bool reg = d->kind == PL_KIND_REG;

	if (atomic_fetch_sub(&d->refs, count) != count)
		return;
	gave_last = (int)idx;
	if (reg && id)
		pl_lock_drop_desc(ino, id);
}

/* Others still count description idx, whose lock we may carry: those
 * that ended without closing are given back.  True when that closed it. */
static bool others_gone(unsigned int idx)
{
	gave_last = -1;
	pl_ledger_reap((int)idx);
	return gave_last == (int)idx;
}

/* idx, a directory's description, got its first (held) or lost its
 * last (!held) reference of ours; map lock held for writing. */
static void dirs_note(unsigned int idx, bool held)
{
	unsigned int i;

	if (table[idx].kind != PL_KIND_DIR)
		return;
	if (held) {
		dirs[ndirs++] = (uint16_t)idx;
		return;
	}
	for (i = 0; i < ndirs; i++) {
		if (dirs[i] == idx) {
			dirs[i] = dirs[--ndirs];
			return;
		}
	}
}

/* Takes this process's first reference to a description: publish the
 * open so another host's unlink keeps the file alive. */
static uint32_t our_slot(uint64_t *gen);

/*
 * The region's open of a file this process opens: a file with no name
 * left is one only while this host holds it open already, and then it
 * may be opened again ("/proc/self/fd/N" of an unlinked file, fdlink.c),
 * as Linux reopens a deleted file that is still open.
 */
static int file_open(struct daxfs_handle *h, uint64_t ino)
{
	int err = daxfs_file_open(h, ino);
	uint32_t slot;

	if (err != -ENOENT)
		return err;
	slot = our_slot(NULL);
	return slot == DAXFS_NO_HOST ? err : daxfs_file_open_held(h, ino, slot);
}

static int local_get(struct daxfs_handle *h, unsigned int idx)
{
	int err = 0;

	if (localref[idx]++ == 0 && table[idx].kind == PL_KIND_REG && h)
		err = file_open(h, table[idx].ino);
	if (err)
		localref[idx]--;
	else if (localref[idx] == 1)
		dirs_note(idx, true);
	return err;
}

/* Descriptions whose locks we may carry although we closed our last
 * descriptor of them (others still held them): looked at before we
 * leave (pl_exit_release).  Slot and lock id; 0: none. */
static struct {
	uint32_t idx;
	uint64_t id;
} closed_carry[PL_EXIT_CARRY_MAX];
/* one did not fit: we may carry locks we no longer know of */
static bool closed_carry_lost;

static void closed_carry_note(unsigned int idx, uint64_t id)
{
	unsigned int i, free = PL_EXIT_CARRY_MAX;

	for (i = 0; i < PL_EXIT_CARRY_MAX; i++) {
		if (closed_carry[i].id == id)
			return;
		if (free == PL_EXIT_CARRY_MAX && (!closed_carry[i].id ||
		    !atomic_load(&table[closed_carry[i].idx].refs)))
			free = i;
	}
	if (free < PL_EXIT_CARRY_MAX) {
		closed_carry[free].idx = idx;
		closed_carry[free].id = id;
	} else {
		closed_carry_lost = true;
	}
}

static void local_put(unsigned int idx)
{
	struct pl_desc *d = &table[idx];
	uint64_t ino = d->ino, id = lock_owner_of(idx);
	bool reg = d->kind == PL_KIND_REG, last;
	struct daxfs_handle *h;

	if (reg)
		pl_lock_drop_posix(ino);
	if (--localref[idx] == 0) {
		dirs_note(idx, false);
		h = reg ? pl_handle_peek() : NULL;
		if (h)
			daxfs_file_close(h, ino);
	}
	/* read before: once the count is 0 the slot may be another open's */
	last = atomic_fetch_sub(&d->refs, 1) == 1;
	if (!reg || !id)
		return;
	if (last)
		pl_lock_drop_desc(ino, id);
	else if (!localref[idx] && !others_gone(idx) && pl_lock_took())
		closed_carry_note(idx, id);
}

/* Whether this process holds a description of any directory: only then
 * is a removal worth a look at what it removes (meta.c gone_before). */
bool pl_fd_dirs_held(void)
{
	return __atomic_load_n(&ndirs, __ATOMIC_RELAXED) != 0;
}

/* Whether it holds one of directory ino. */
bool pl_fd_dir_held(uint64_t ino)
{
	unsigned int i;
	bool held = false;

	pthread_rwlock_rdlock(&map_lock);
	for (i = 0; table && i < ndirs && !held; i++)
		held = table[dirs[i]].ino == ino;
	pthread_rwlock_unlock(&map_lock);
	return held;
}

/* src's attributes into dst, and mode last (a release: a reader that
 * sees the mode sees the rest; mode 0 means not removed) */
static void gone_copy(struct pl_gone *dst, const struct pl_gone *src,
		      uint32_t mode)
{
	dst->uid = src->uid;
	dst->gid = src->gid;
	dst->atime_ns = src->atime_ns;
	dst->mtime_ns = src->mtime_ns;
	dst->ctime_ns = src->ctime_ns;
	atomic_store_explicit(&dst->mode, mode, memory_order_release);
}

/*
 * Directory ino is removed (g: its attributes, from before), or a
 * removed one's attributes changed: every description of it that this
 * process holds answers from g from now on (a description shared with
 * other processes, by fork or exec, for them too), and so does the
 * working directory when it is that directory.
 */
void pl_fd_gone_mark(uint64_t ino, const struct pl_gone *g)
{
	unsigned int i;

	pl_fd_lock();
	for (i = 0; table && i < ndirs; i++)
		if (table[dirs[i]].ino == ino)
			gone_copy(&table[dirs[i]].gone, g, atomic_load(&g->mode));
	pl_fd_unlock();
	pl_cwd_gone_update(ino, g);
}

/* What fstat says of removed directory ino, from what was kept of it:
 * no link left, and none of its entries (it was empty). */
void pl_gone_attr(uint64_t ino, const struct pl_gone *g, struct daxfs_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = atomic_load_explicit(&g->mode, memory_order_relaxed);
	a->uid = g->uid;
	a->gid = g->gid;
	a->atime_ns = g->atime_ns;
	a->mtime_ns = g->mtime_ns;
	a->ctime_ns = g->ctime_ns;
}

/* d's directory is removed (pl_fd_gone_mark): its attributes into *g. */
bool pl_gone_load(struct pl_desc *d, struct pl_gone *g)
{
	uint32_t mode;

	if (d->kind != PL_KIND_DIR)
		return false;
	mode = atomic_load_explicit(&d->gone.mode, memory_order_acquire);
	if (!mode)
		return false;
	gone_copy(g, &d->gone, mode);
	return true;
}

/* snprintf's "%s", truncated alike, at a tenth of its cost per open */
static void path_set(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	/* "d/." routes as "d/" (route.c normalize): keep "d", as chdir
	 * does, so getcwd after fchdir says no "d/" */
	while (n > 1 && src[n - 1] == '/')
		n--;

	memcpy(dst, src, n);
	dst[n] = 0;
}

/* A new reservation, the lowest free number; caller holds the map lock
 * (no close or dup2 of the template runs meanwhile). */
static int reserve_fd(int cloexec)
{
	int fd;

	if (tmpl_fd < 0) {
		fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null",
				  O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		fd = fd_high(fd, F_DUPFD_CLOEXEC);
		if (fd < 0)
			return fd;
		tmpl_fd = fd;
	}
	fd = sys_fcntl(tmpl_fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	if (fd < 0)
		return -errno;
	if (fd >= PL_FD_MAX) {
		syscall(SYS_close, fd);
		return -EMFILE;
	}
	return fd;
}

/*
 * A descriptor number for an open, taken before the open changes anything
 * (a create, a truncate): Linux takes an unused descriptor before its
 * path walk, so an open past RLIMIT_NOFILE fails with EMFILE and makes
 * or truncates nothing.  Here it made the file first, then failed
 * (tests/test_preload.py test_open_past_the_descriptor_limit).  Filled by
 * pl_fd_install_at, or given back by pl_fd_unreserve.
 */
int pl_fd_reserve(int flags)
{
	int fd, err;

	if (!pl_handle())
		return -1;
	pl_fd_lock();
	err = table || !(err = table_create()) ? 0 : err;
	if (err)
		pl_debug("the description table (%zu MiB of address space) "
			 "cannot be made: %s", (size_t)(TABLE_LEDGER >> 20),
			 strerror(-err));
	fd = err ? err : reserve_fd(flags & O_CLOEXEC);
	pl_fd_unlock();
	return fd < 0 ? pl_fail(fd) : fd;
}

void pl_fd_unreserve(int fd)
{
	if (fd >= 0)
		syscall(SYS_close, fd);
}

/* The description of an open in reserved number fd; on failure fd stays
 * reserved (the caller gives it back). */
int pl_fd_install_at(int fd, uint64_t ino, int kind, int flags,
		     const char *path)
{
	struct daxfs_handle *h = pl_handle();
	int idx, err;

	if (!h)
		return -1;
	/* kept whole or not at all: *at calls resolve under it */
	if (strlen(path) >= sizeof(table->path))
		return pl_fail(-ENAMETOOLONG);
	pl_fd_lock();
	idx = desc_alloc();
	if (idx < 0) {
		pl_fd_unlock();
		return pl_fail(idx);
	}
	table[idx].kind = kind;
	table[idx].ino = ino;
	atomic_store(&table[idx].flags, flags & ~(O_CLOEXEC | O_CREAT |
		     O_EXCL | O_TRUNC | O_NOCTTY));
	atomic_store(&table[idx].off, 0);
	table[idx].fc = (struct daxfs_fcache){ 0 };
	atomic_store(&table[idx].lk_used, 0);
	path_set(table[idx].path, sizeof(table[idx].path), path);
	err = local_get(h, idx);
	if (err) {
		atomic_store(&table[idx].refs, 0);
		pl_fd_unlock();
		return pl_fail(err);
	}
	atomic_store(&fdmap[fd], idx + 1);
	pl_fd_unlock();
	return fd;
}

int pl_fd_install(uint64_t ino, int kind, int flags, const char *path)
{
	int fd = pl_fd_reserve(flags), got;

	if (fd < 0)
		return -1;
	got = pl_fd_install_at(fd, ino, kind, flags, path);
	if (got < 0) {
		int e = errno;

		pl_fd_unreserve(fd);
		errno = e;
	}
	return got;
}

/* Caller holds the map lock for writing. */
void pl_fd_drop_locked(int fd)
{
	unsigned int v = atomic_exchange(&fdmap[fd], 0);

	if (v)
		local_put(v - 1);
}

int pl_fd_release(int fd)
{
	if (!pl_fd_is_region(fd))
		return 0;
	pl_fd_lock();
	pl_fd_drop_locked(fd);
	pl_fd_unlock();
	return 1;
}

/* newfd (already a kernel duplicate of oldfd's reservation) takes
 * oldfd's description; caller holds the map lock. */
void pl_fd_alias(int newfd, int oldfd)
{
	unsigned int v = atomic_load(&fdmap[oldfd]);

	if (newfd < 0 || newfd >= PL_FD_MAX || !v)
		return;
	pl_fd_drop_locked(newfd);
	atomic_fetch_add(&table[v - 1].refs, 1);
	localref[v - 1]++;
	atomic_store(&fdmap[newfd], v);
}

/*
 * The ledger part of the table memfd (fdledger.c), mapped now, or NULL.
 * Through the table's descriptor as it is now: a program's close or dup2
 * onto it moves it first (pl_own_move), under the map lock, which our
 * caller holds; and only while it is still the table.
 */
void *pl_table_ledger_map(void)
{
	struct stat st;
	void *p;

	if (table_fd < 0 || fstat(table_fd, &st) || st.st_ino != table_ino ||
	    st.st_size != TABLE_MAP)
		return NULL;
	p = mmap(NULL, PL_LEDGER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 table_fd, TABLE_LEDGER);
	return p == MAP_FAILED ? NULL : p;
}

/* The preload's own descriptors must not be taken from under it. */
int pl_own_fd(int fd)
{
	return fd >= 0 && (fd == table_fd || fd == tmpl_fd);
}

/*
 * fd is about to be closed or replaced: if it is one of ours, it moves to
 * a higher number first.  The template, when it cannot move (no higher
 * number free), is given up and opened again when next needed.
 */
void pl_own_move(int fd)
{
	int hi;

	if (fd < 0)
		return;
	if (fd == table_fd) {
		hi = sys_fcntl(fd, F_DUPFD, fd + 1);
		if (hi >= 0)
			table_fd = hi;
	} else if (fd == tmpl_fd) {
		tmpl_fd = sys_fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
	}
}

/* Our descriptors in [first, last], in increasing order; returns how many. */
int pl_own_in(unsigned int first, unsigned int last, int out[2])
{
	int n = 0, a = table_fd, b = tmpl_fd;

	if (a > b) {
		a = tmpl_fd;
		b = table_fd;
	}
	if (a >= 0 && (unsigned int)a >= first && (unsigned int)a <= last)
		out[n++] = a;
	if (b >= 0 && b != a && (unsigned int)b >= first &&
	    (unsigned int)b <= last)
		out[n++] = b;
	return n;
}

static void refs_all(int delta)
{
	unsigned int fd, v;

	for (fd = 0; fd < PL_FD_MAX; fd++) {
		v = atomic_load(&fdmap[fd]);
		if (v)
			atomic_fetch_add(&table[v - 1].refs, (uint32_t)delta);
	}
}

/* Our host slot, DAXFS_NO_HOST when the region is not open here. */
static uint32_t our_slot(uint64_t *gen)
{
	struct daxfs_handle *h = pl_handle_peek();
	uint32_t slot;
	uint64_t g;

	if (!h || daxfs_handle_host(h, &slot, &g))
		return DAXFS_NO_HOST;
	if (gen)
		*gen = g;
	return slot;
}

/* The child's references first, then its counts (fdledger.c): a death
 * in between leaks them, never gives them back twice. */
void pl_fork_prepare(void)
{
	pl_fd_lock();
	if (table) {
		refs_all(1);
		pl_ledger_fork_prepare();
	}
	fork_slot = our_slot(NULL);
}

void pl_fork_parent(int failed, pid_t pid)
{
	if (table && !pl_ledger_fork_parent(failed, pid) && failed)
		refs_all(-1);
	pl_fd_unlock();
}

void pl_spawn_entry_get(struct pl_spawn_entry *e)
{
	e->word = pl_ledger_pending(&e->idx);
}

/* system's shell has ended, or the spawn failed (e->idx < 0: the child's
 * references were counted privately, given back here when failed): what
 * its image never took is given back. */
void pl_spawn_entry_over(const struct pl_spawn_entry *e, int failed)
{
	pl_fd_lock();
	if (table && e->idx >= 0)
		pl_ledger_spawn_over(e->idx, e->word);
	else if (table && failed)
		refs_all(-1);
	pl_fd_unlock();
}

void pl_fork_child(void)
{
	/* a fork made inside libc (daemon(3)) took no references for us */
	if (table && !pl_ledger_fork_child())
		refs_all(1);
	pthread_rwlock_init(&map_lock, NULL);
	/* pl_fork_prepare's lock is not held here: even again */
	atomic_store(&map_seq, (atomic_load(&map_seq) | 1) + 1);
	prev_slot = fork_slot;
	prev_retire = 0;
}

/*
 * Whether a fork child must take our opens over before we may close
 * them: a regular file of ours that has no name left is freed at our
 * last close unless the child published its own open first.  Map lock
 * held (pl_fork_prepare).
 */
int pl_fork_needs_handoff(void)
{
	struct daxfs_handle *h = pl_handle_peek();
	struct daxfs_attr a;
	unsigned int i;

	if (!table || !h || fork_slot == DAXFS_NO_HOST)
		return 0;
	for (i = 0; i < PL_DESC_MAX; i++) {
		if (!localref[i] || table[i].kind != PL_KIND_REG)
			continue;
		/* its locks are the child's too: it must be a host that
		 * can take them over when we end (lock.c pl_lock_watch) */
		if (atomic_load(&table[i].lk_used) && pl_lock_took())
			return 1;
		if (!daxfs_fstat(h, table[i].ino, &a) && !a.nlink)
			return 1;
	}
	return 0;
}

/* The regular descriptions we hold that have a lock owner id: (ino, id)
 * pairs, at most max, from description *from on; *from is set to where
 * the next look starts (PL_DESC_MAX: none left).  For the heartbeat's
 * look (lock.c). */
unsigned int pl_fd_locked(uint64_t (*c)[2], unsigned int max,
			  unsigned int *from)
{
	unsigned int i, n = 0;
	uint64_t id;

	if (!table) {
		*from = PL_DESC_MAX;
		return 0;
	}
	pthread_rwlock_rdlock(&map_lock);
	for (i = *from; i < PL_DESC_MAX && n < max; i++) {
		if (!localref[i] || table[i].kind != PL_KIND_REG)
			continue;
		id = lock_owner_of(i);
		if (!id)
			continue;
		c[n][0] = table[i].ino;
		c[n][1] = id;
		n++;
	}
	pthread_rwlock_unlock(&map_lock);
	*from = i;
	return n;
}

void pl_reopen_all(struct daxfs_handle *h)
{
	unsigned int i;
	int err;

	pthread_rwlock_rdlock(&map_lock);
	for (i = 0; table && i < PL_DESC_MAX; i++) {
		if (!localref[i] || table[i].kind != PL_KIND_REG)
			continue;
		err = daxfs_file_open_held(h, table[i].ino, prev_slot);
		if (err)
			pl_debug("reopen of inode %llu: %s",
				 (unsigned long long)table[i].ino,
				 daxfs_strerror(err));
	}
	pthread_rwlock_unlock(&map_lock);
	/* taken over: the image before exec gives us its locks (OFD and
	 * flock owners are the descriptions' ids, kept in the table: no
	 * shift), then is retired */
	if (prev_retire && prev_slot != DAXFS_NO_HOST) {
		if (daxfs_host_adopt_locks(h, prev_slot, prev_gen, 0, 0, 0) > 0) {
			/* still the process's: our closes drop them */
			pl_lock_inherited();
			lib_posix_locks_assume();
		}
		daxfs_host_retire_slot(h, prev_slot, prev_gen);
	}
	prev_slot = DAXFS_NO_HOST;
	prev_retire = 0;
}

/* The image before exec named its host for us to take over (its opens,
 * then the slot), or a spawning parent waits until we hold its opens:
 * join now, before that host's lease runs out or the parent closes. */
int pl_exec_takeover_due(void)
{
	return prev_retire || prev_wait_fd >= 0;
}

/* Our opens are published (or cannot be): let the spawning parent go on.
 * It waits for end-of-file, so a parent gone or not waiting costs no
 * SIGPIPE. */
void pl_exec_wait_done(void)
{
	REAL(int, close, int);

	if (prev_wait_fd < 0)
		return;
	real_close(prev_wait_fd);
	prev_wait_fd = -1;
}

/*
 * exec: "DAXFS_PRELOAD_FDS=T<tablefd>.<tableino>;<fd>.<desc>.<cloexec>,...
 * [H<slot>.<gen>.<table address> | P<slot>[.W<fd>]]"
 * The new image keeps the references of the descriptors that survive and
 * drops those exec closed.  Built by the caller of exec (the map lock is
 * not needed: only this thread runs past exec).  When a regular file
 * survives, the last part names our host: H (handover, an exec of this
 * process) for the new image to take its opens over and then retire it,
 * P (a spawned process) only to take the opens over; W, the descriptor
 * the spawned image closes once it has (wait_fd, -1 for none).
 *
 * chg: what a spawn's file actions leave at some descriptors (spawn.c;
 * NULL for none).  Such a descriptor's own entry goes as closed, and a
 * region file the actions put there goes with a reference of its own,
 * taken here (pl_exec_env_undo gives them back when the spawn fails).
 */
static int entry_put(char *buf, size_t *n, size_t size, unsigned int fd,
		     unsigned int idx, int cloexec)
{
	if (*n >= size - 32)
		return 0;
	*n += snprintf(buf + *n, size - *n, "%u.%u.%d,", fd, idx, cloexec);
	return !cloexec && table[idx].kind == PL_KIND_REG;
}

static const struct pl_fd_change *change_at(const struct pl_fd_change *chg,
					    size_t nchg, unsigned int fd)
{
	size_t i;

	for (i = 0; i < nchg; i++)
		if (chg[i].fd == (int)fd)
			return &chg[i];
	return NULL;
}

char *pl_exec_env(int handover, int wait_fd, const struct pl_fd_change *chg,
		  size_t nchg)
{
	static char buf[1 << 18];
	unsigned int fd, v, regs = 0;
	uint32_t slot;
	uint64_t gen = 0;
	size_t n, i;
	int fl;

	exec_handover = 0;
	exec_waits = 0;
	if (!table)
		return NULL;
	n = snprintf(buf, sizeof(buf), "DAXFS_PRELOAD_FDS=T%d.%llu;",
		     table_fd, (unsigned long long)table_ino);
	n += pl_ledger_env(buf + n, sizeof(buf) - n);
	for (fd = 0; fd < PL_FD_MAX; fd++) {
		v = atomic_load(&fdmap[fd]);
		if (!v)
			continue;
		fl = change_at(chg, nchg, fd) ? FD_CLOEXEC :
		     sys_fcntl(fd, F_GETFD, 0);
		regs += entry_put(buf, &n, sizeof(buf), fd, v - 1,
				  fl >= 0 && (fl & FD_CLOEXEC));
	}
	for (i = 0; i < nchg; i++) {
		if (chg[i].desc < 0 || chg[i].fd >= PL_FD_MAX)
			continue;
		atomic_fetch_add(&table[chg[i].desc].refs, 1);
		pl_ledger_child_add(chg[i].desc, 1);
		regs += entry_put(buf, &n, sizeof(buf), chg[i].fd, chg[i].desc,
				  0);
	}
	/* a fork child that has made no region call yet still has its
	 * parent's handle: it joins now (as its first call would), or the
	 * new image would take over, and retire, the parent's host */
	if (regs)
		pl_handle_settle();
	slot = our_slot(&gen);
	if (regs && slot != DAXFS_NO_HOST && handover) {
		snprintf(buf + n, sizeof(buf) - n, "H%u.%llu.%llx", slot,
			 (unsigned long long)gen,
			 (unsigned long long)(uintptr_t)table);
		exec_handover = 1;
	} else if (regs && slot != DAXFS_NO_HOST) {
		n += snprintf(buf + n, sizeof(buf) - n, "P%u", slot);
		if (wait_fd >= 0 && n < sizeof(buf) - 16) {
			snprintf(buf + n, sizeof(buf) - n, ".W%d", wait_fd);
			exec_waits = 1;
		}
	}
	return buf;
}

/* The spawn pl_exec_env(chg) was built for did not happen. */
void pl_exec_env_undo(const struct pl_fd_change *chg, size_t nchg)
{
	size_t i;

	for (i = 0; table && i < nchg; i++)
		if (chg[i].desc >= 0 && chg[i].fd < PL_FD_MAX) {
			pl_ledger_child_add(chg[i].desc, -1);
			atomic_fetch_sub(&table[chg[i].desc].refs, 1);
		}
}

bool pl_fd_table_made(void)
{
	return table != NULL;
}

/* fd's description (index), -1 for a kernel descriptor. */
int pl_fd_desc(int fd)
{
	unsigned int v;

	if (fd < 0 || fd >= PL_FD_MAX)
		return -1;
	v = atomic_load(&fdmap[fd]);
	return v ? (int)v - 1 : -1;
}

/* Description idx's region path, when it is a directory's. */
int pl_desc_dir(int idx, char *path, size_t size)
{
	struct pl_desc *d;
	int err;

	if (idx < 0 || idx >= PL_DESC_MAX || !table)
		return -EBADF;
	pthread_rwlock_rdlock(&map_lock);
	d = &table[idx];
	err = !atomic_load(&d->refs) ? -EBADF :
	      d->kind != PL_KIND_DIR ? -ENOTDIR : 0;
	if (!err)
		snprintf(path, size, "%s", d->path);
	pthread_rwlock_unlock(&map_lock);
	return err;
}

/* The spawn about to run names a wait descriptor (pl_exec_env). */
int pl_exec_waits(void)
{
	return exec_waits;
}

/* The exec about to run hands our host over (pl_exec_env(1)): keep it. */
int pl_exec_handing_over(void)
{
	return exec_handover;
}

static int is_reservation(int fd)
{
	struct stat st;
	int fl = sys_fcntl(fd, F_GETFL, 0);

	if (fl < 0 || !(fl & O_PATH) || fstat(fd, &st))
		return 0;
	return S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3);
}

void pl_exec_import(void)
{
	const char *s = getenv("DAXFS_PRELOAD_FDS");
	unsigned long long ino, tbase, word;
	unsigned int fd, idx;
	struct stat st;
	int tfd, cl, used, row;
	bool counted = false;

	if (!s || sscanf(s, "T%d.%llu;%n", &tfd, &ino, &used) != 2)
		goto out;
	/* another build's table (an exec'ed program under another preload)
	 * is not ours to read: its size tells, before a load past its end
	 * would fault */
	if (fstat(tfd, &st) || st.st_ino != ino || st.st_size != TABLE_MAP ||
	    table_map(tfd))
		goto out;
	table_fd = tfd;
	table_ino = ino;
	s += used;
	/* the counts of the image before us (exec) or prepared for us
	 * (spawn): those of the descriptors we keep are there already */
	if (sscanf(s, "R%d.%llx;%n", &row, &word, &used) == 2) {
		s += used;
		counted = pl_ledger_import(row, word);
	}
	while (sscanf(s, "%u.%u.%d,%n", &fd, &idx, &cl, &used) == 3) {
		s += used;
		if (fd >= PL_FD_MAX || idx >= PL_DESC_MAX)
			continue;
		if (cl || !is_reservation(fd)) {
			if (counted)
				localref[idx]--;
			atomic_fetch_sub(&table[idx].refs, 1);
			continue;
		}
		atomic_store(&fdmap[fd], idx + 1);
		if (!counted && localref[idx]++ == 0)
			dirs_note(idx, true);
	}
	for (idx = 0; counted && idx < PL_DESC_MAX; idx++)
		if (localref[idx])
			dirs_note(idx, true);
	if (sscanf(s, "H%u.%llu.%llx", &prev_slot, &ino, &tbase) == 3) {
		prev_gen = ino;
		prev_table = tbase;
		prev_retire = 1;
	} else if (sscanf(s, "P%u%n", &prev_slot, &used) == 1) {
		if (sscanf(s + used, ".W%d", &prev_wait_fd) != 1)
			prev_wait_fd = -1;
	} else {
		prev_slot = DAXFS_NO_HOST;
	}
out:
	unsetenv("DAXFS_PRELOAD_FDS");
}

/* One more description whose locks we may carry: counted always, kept in
 * c while it has room. */
static void carry_add(uint64_t (*c)[2], unsigned int *n, uint64_t ino,
		      uint64_t id)
{
	if (*n < PL_EXIT_CARRY_MAX) {
		c[*n][0] = ino;
		c[*n][1] = id;
	}
	(*n)++;
}

/*
 * Drops this process's references.  Returns in c the (ino, lock id) of
 * descriptions that others still hold and whose locks we may carry (held
 * until now, or closed earlier while others held them): the caller must
 * not leave while it carries them (lock.c pl_lock_carried).  Their number
 * may be above PL_EXIT_CARRY_MAX, the most c takes: then the caller
 * cannot tell and must assume it carries some.
 */
unsigned int pl_exit_release(uint64_t (*c)[2])
{
	unsigned int fd, i, n = 0;
	uint64_t id, ino;
	uint32_t left, held;
	bool reg;

	if (!table)
		return 0;
	map_write_lock();
	/* The references are dropped per description below. */
	for (fd = 0; fd < PL_FD_MAX; fd++)
		atomic_store(&fdmap[fd], 0);
	for (fd = 0; fd < PL_DESC_MAX; fd++) {
		if (!localref[fd])
			continue;
		id = lock_owner_of(fd);
		ino = table[fd].ino;
		reg = table[fd].kind == PL_KIND_REG;
		/* our count first, then refs: a death in between leaks */
		held = localref[fd];
		localref[fd] = 0;
		left = atomic_fetch_sub(&table[fd].refs, held) - held;
		/* our host may stay a while (state.c leave): the POSIX
		 * locks go now, as at any close */
		if (reg)
			pl_lock_drop_posix(ino);
		if (!reg || !id)
			continue;
		if (!left)	/* the last close */
			pl_lock_drop_desc(ino, id);
		else if (others_gone(fd))
			continue;	/* closed by the give-back */
		else
			carry_add(c, &n, ino, id);
	}
	for (i = 0; i < PL_EXIT_CARRY_MAX; i++) {
		fd = closed_carry[i].idx;
		id = closed_carry[i].id;
		if (!id || !atomic_load(&table[fd].refs) ||
		    !atomic_load(&table[fd].lk_used))
			continue;
		carry_add(c, &n, table[fd].ino, id);
	}
	if (closed_carry_lost)
		n = PL_EXIT_CARRY_MAX + 1;
	ndirs = 0;
	pl_ledger_leave();
	pl_fd_unlock();
	return n;
}
