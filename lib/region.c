// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: mapping a region, joining the host table, the heartbeat thread
 * and fork handling.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "libdaxfs-internal.h"
#include "copy.h"
#include "crash-plain.h"
#include "posix-locks.h"
#include "core/internal.h"

/* <linux/fs.h> (and <sys/mount.h>, which pulls in linux/types.h) clash
 * with the __u64 typedefs of format.h, so spell the ioctl out. */
#ifndef BLKGETSIZE64
#define BLKGETSIZE64	_IOR(0x12, 114, size_t)
#endif

#define DEVDAX_ALIGN	(2ULL << 20)
/* The PMD size of x86-64 and of arm64 with 4 KiB pages: a mapping at an
 * address aligned to it can take 2 MiB pages (hugetlbfs, shmem THP,
 * devdax). */
#define HUGE_ALIGN	(2ULL << 20)
#define HUGETLBFS_MAGIC	0x958458f6

/* All open handles, so the fork handlers can fix them up in the child. */
static pthread_mutex_t lib_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct daxfs_handle *lib_handles;
static pthread_once_t lib_atfork_once = PTHREAD_ONCE_INIT;
/* Bumped in every child: a handle joined under an older value belongs to
 * the parent's host and must join again before use. */
static volatile unsigned long lib_fork_gen;

/* The heartbeat waits on CLOCK_MONOTONIC: a step of the wall clock
 * neither stalls nor hurries it (docs/hosts.md "Leases"). */
static void cond_init_mono(pthread_cond_t *cond)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(cond, &a);
	pthread_condattr_destroy(&a);
}

static void lib_prepare_fork(void)
{
	struct daxfs_handle *h;

	pthread_mutex_lock(&lib_list_lock);
	for (h = lib_handles; h; h = h->next)
		pthread_mutex_lock(&h->lock);
	lib_call_prepare_fork();
}

static void lib_parent_fork(void)
{
	struct daxfs_handle *h;

	lib_call_parent_fork();
	for (h = lib_handles; h; h = h->next)
		pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&lib_list_lock);
}

static void lib_child_fork(void)
{
	struct daxfs_handle *h;

	/* The heartbeat threads do not exist here; the locks were taken by
	 * this very thread in prepare, so re-initialising them is safe. */
	lib_fork_gen++;
	lib_call_child_fork();
	lib_posix_locks_child_fork();
	for (h = lib_handles; h; h = h->next) {
		pthread_mutex_init(&h->lock, NULL);
		cond_init_mono(&h->cond);
		lib_gate_child_fork(h);
		lib_mapped_child_fork(h);
		/* a thread of the parent may have held a pair's try-lock */
		for (u32 i = 0; h->obs && i < h->fs.sb.max_hosts; i++)
			h->obs[i].busy = 0;
		h->hb_running = false;
		h->hb_stop = false;
		/* the next call takes a slot of our own (lib_rejoin) */
		h->need_rejoin = h->want_join;
	}
	pthread_mutex_init(&lib_list_lock, NULL);
}

static void lib_atfork_init(void)
{
	pthread_atfork(lib_prepare_fork, lib_parent_fork, lib_child_fork);
}

static int read_sysfs_u64(const char *path, uint64_t *v)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok)
		return -EIO;
	*v = strtoull(buf, NULL, 0);
	return 0;
}

/* A devdax device exposes its size in sysfs (dax_bus "size" attribute,
 * or the size of its dax region). */
static int devdax_size(const struct stat *st, uint64_t *size)
{
	static const char *const fmts[] = {
		"/sys/dev/char/%u:%u/size",
		"/sys/dev/char/%u:%u/device/size",
		"/sys/dev/char/%u:%u/device/dax_region/size",
		"/sys/dev/char/%u:%u/../size",
	};
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		snprintf(path, sizeof(path), fmts[i], major(st->st_rdev),
			 minor(st->st_rdev));
		if (!read_sysfs_u64(path, size) && *size)
			return 0;
	}
	return -ENODEV;
}

/*
 * A region's descriptor must not be 0, 1 or 2.  A program started with
 * one of them closed (a daemon, `prog >&-`) would get the region there
 * and later write its output into it: print() of a Python program with
 * stdout closed overwrote the superblock of the region it had just
 * opened (tests/test_std_descriptors.py).  Moved to 3 or above; -EMFILE,
 * fd closed, when no number there is free.
 */
int daxfs_fd_above_std(int fd)
{
	int hi;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	close(fd);
	return hi < 0 ? -EMFILE : hi;
}

int daxfs_target_open(const char *path, int oflags, enum daxfs_target_kind *kind,
		      uint64_t *size)
{
	struct stat st;
	int fd, err;

	fd = open(path, oflags | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	fd = daxfs_fd_above_std(fd);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0)
		goto fail_errno;
	if (S_ISREG(st.st_mode)) {
		*kind = DAXFS_TARGET_FILE;
		*size = (uint64_t)st.st_size;
	} else if (S_ISBLK(st.st_mode)) {
		*kind = DAXFS_TARGET_BLOCK;
		if (ioctl(fd, BLKGETSIZE64, size) < 0)
			goto fail_errno;
	} else if (S_ISCHR(st.st_mode)) {
		*kind = DAXFS_TARGET_DEVDAX;
		err = devdax_size(&st, size);
		if (err) {
			close(fd);
			return err;
		}
	} else {
		close(fd);
		return -EINVAL;
	}
	return fd;

fail_errno:
	err = -errno;
	close(fd);
	return err;
}

#ifdef DAXFS_PMEM_TRACE
/* lib/pmem-trace.c: the test build's media copy of the region. */
void daxfs_pmem_trace_map(void *base, uint64_t len);
void daxfs_pmem_trace_unmap(void *base);
#else
#define daxfs_pmem_trace_map(base, len)	do { } while (0)
#define daxfs_pmem_trace_unmap(base)	do { } while (0)
#endif

uint64_t daxfs_target_page_size(int fd)
{
	struct statfs sfs;

	if (!fstatfs(fd, &sfs) && (unsigned long)sfs.f_type == HUGETLBFS_MAGIC &&
	    sfs.f_bsize > 0)
		return (uint64_t)sfs.f_bsize;
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * Maps [0, *len) of fd shared at an address aligned to HUGE_ALIGN (or to
 * a hugetlbfs file's larger page size): reserve a larger anonymous area,
 * then map the target over an aligned part of it.  devdax needs that
 * alignment (and a length rounded down to it, stored back into *len);
 * for a hugetlbfs or shmem file it is what lets the kernel map 2 MiB
 * pages, one TLB entry where there would be 512 (docs/libdaxfs.md "Huge
 * pages").  A file mapping is also advised MADV_HUGEPAGE: shmem with
 * huge=advise then allocates 2 MiB pages, and khugepaged may collapse
 * small ones; elsewhere the advice does nothing.
 */
int lib_map_region(int fd, enum daxfs_target_kind kind, int prot,
		   uint64_t *len, struct lib_mapping *m)
{
	uint64_t align = HUGE_ALIGN, page = daxfs_target_page_size(fd);
	uint8_t *area, *aligned;
	uint64_t resv;
	void *p;

	if (page > align)
		align = page;
	if (kind == DAXFS_TARGET_DEVDAX)
		*len &= ~(DEVDAX_ALIGN - 1);
	if (!*len)
		return -EINVAL;
	resv = *len + align;
	area = mmap(NULL, resv, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0);
	if (area == MAP_FAILED)
		return -errno;
	aligned = (uint8_t *)(((uintptr_t)area + align - 1) & ~(uintptr_t)(align - 1));
	p = mmap(aligned, *len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(area, resv);
		return err;
	}
	if (kind == DAXFS_TARGET_FILE && page < HUGE_ALIGN)
		madvise(p, *len, MADV_HUGEPAGE);	/* advice only */
	m->map = p;
	m->area = area;
	m->reserved = resv;
	return 0;
}

static int map_target(struct daxfs_handle *h, int prot, uint64_t len)
{
	struct lib_mapping m;
	int err = lib_map_region(h->fd, h->kind, prot, &len, &m);

	if (err)
		return err;
	h->map = m.map;
	h->map_area = m.area;
	h->map_reserved = m.reserved;
	h->map_len = len;
	h->map_page = h->kind == DAXFS_TARGET_DEVDAX ? DEVDAX_ALIGN :
		      daxfs_target_page_size(h->fd);
	if (prot & PROT_WRITE)
		daxfs_crash_map(h->map, h->map_len);
	return 0;
}

static void unmap_target(struct daxfs_handle *h)
{
	daxfs_pmem_trace_unmap(h->map);
	daxfs_crash_unmap(h->map);
	if (h->map_area)
		munmap(h->map_area, h->map_reserved);
	h->map_area = NULL;
	h->map = NULL;
}

static void host_name(char *buf, size_t size)
{
	char hn[HOST_NAME_MAX + 1] = "";
	char pid[16];
	size_t plen, hlen;

	gethostname(hn, sizeof(hn) - 1);
	hn[sizeof(hn) - 1] = 0;
	plen = (size_t)snprintf(pid, sizeof(pid), ":%d", (int)getpid());
	hlen = strlen(hn);
	/* keep the pid whole: shorten the hostname to fit */
	if (hlen + plen + 1 > size)
		hlen = size > plen + 1 ? size - plen - 1 : 0;
	memcpy(buf, hn, hlen);
	memcpy(buf + hlen, pid, plen);
	buf[hlen + plen] = 0;
}

/* do_join's looks at a full table while slots are on their way to free
 * (1 ms apart) */
#define JOIN_FULL_ROUNDS	100

/*
 * A full table holding a user host killed inside its join, before it
 * stored its process identity (lib_host_proc_note): no process check can
 * judge that slot, only its lease, and a lease runs out only in the eyes
 * of a host that watched it
 * (core/hosts.c obs_update): this handle has watched nothing yet.  Before
 * session 60 the join then failed at once, however long those hosts had
 * been dead, and programs that retry with a fresh process never got in
 * while no long-lived host reaped (tests/test_lincheck.py's workers
 * killed at random stores, a table of 62 dead slots).  So watch the
 * table for a lease and a half, joining again an eighth of a lease
 * apart: the join declares expired slots dead and recovers them; if the
 * host is alive after all (it had just joined), -EBUSY comes that much
 * later.  A full table of hosts that did store their identity (or of
 * kernel hosts) is -EBUSY at once, as before.
 */
static int join_after_leases(struct daxfs_handle *h, const char *name)
{
	s64 lease_ns = (s64)h->fs.lease_ms * 1000000;
	s64 end = daxfs_mono_ns() + lease_ns + lease_ns / 2;
	useconds_t nap = (useconds_t)(h->fs.lease_ms * 1000 / 8);
	int err;

	do {
		usleep(nap ? nap : 1000);
		err = daxfs_host_join(&h->fs, name, (u32)getpid(),
				      DAXFS_HOST_KIND_USER);
	} while (err == -EBUSY && daxfs_mono_ns() < end);
	return err;
}

static int do_join(struct daxfs_handle *h)
{
	char name[DAXFS_HOST_NAME_LEN];
	int err, tries;

	host_name(name, sizeof(name));
	h->fs.host = DAXFS_NO_HOST;
	h->fs.host_gen = 0;
	h->slot_state = NULL;
	err = daxfs_host_join(&h->fs, name, (u32)getpid(), DAXFS_HOST_KIND_USER);
	/*
	 * A full table may hold slots of this machine's processes that
	 * ended without leaving: declared dead now, recovered by the join.
	 * Joiners beside us race for the same slots: one declares them all
	 * dead and the others find none left to declare, or find them
	 * still being recovered.  So look again while any slot is on its
	 * way to free; only a table of live hosts is EBUSY.  Before session
	 * 57 the loser of that race failed its first file call with EBUSY
	 * (tests/test_preload.py::test_sharers_killed_at_random).
	 */
	for (tries = 0; err == -EBUSY && tries < JOIN_FULL_ROUNDS; tries++) {
		if (!lib_host_proc_reap(&h->fs) && !lib_hosts_settling(&h->fs))
			break;
		if (tries)
			usleep(1000);
		err = daxfs_host_join(&h->fs, name, (u32)getpid(),
				      DAXFS_HOST_KIND_USER);
	}
	if (err == -EBUSY && lib_hosts_unnamed(&h->fs))
		err = join_after_leases(h, name);
	if (err)
		return err;
	daxfs_crash_point("join.unnamed");	/* tests/test_host_table_forks.py */
	lib_host_proc_note(h);
	/* what lib_call_end() checks with one load */
	h->slot_alive = daxfs_host_word(h->fs.host_gen, DAXFS_HOST_ALIVE);
	h->slot_state = &daxfs_host_at(&h->fs, h->fs.host)->state;
	return 0;
}

static void *heartbeat_main(void *arg)
{
	struct daxfs_handle *h = arg;
	uint64_t period_ms = h->fs.lease_ms / 4;
	struct timespec ts;
	int err;

	if (!period_ms)
		period_ms = 1;
	pthread_mutex_lock(&h->lock);
	while (!h->hb_stop) {
		/* monotonic: a wall clock stepped back would stall us */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += period_ms / 1000;
		ts.tv_nsec += (long)(period_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		if (h->hb_stop)
			break;
		if (h->need_rejoin || __atomic_load_n(&h->fs.shut, __ATOMIC_ACQUIRE))
			continue;
		err = daxfs_host_renew(&h->fs);
		/* time the others' renewals all along, so that a host
		 * that stops is known dead one lease later */
		daxfs_hosts_observe(&h->fs);
		/* Declared dead (stopped too long): a survivor recovered
		 * our old slot.  The next call joins again (lib_call_begin),
		 * once no call runs on the old slot any more. */
		if (err == -ESTALE)
			h->need_rejoin = true;
		if (!err && h->hb_hook) {
			/* it may call into the library: not under h->lock */
			pthread_mutex_unlock(&h->lock);
			h->hb_hook(h, h->hb_hook_arg);
			pthread_mutex_lock(&h->lock);
		}
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

void daxfs_set_heartbeat_hook(struct daxfs_handle *h,
			      void (*fn)(struct daxfs_handle *h, void *arg),
			      void *arg)
{
	pthread_mutex_lock(&h->lock);
	h->hb_hook_arg = arg;
	h->hb_hook = fn;
	pthread_mutex_unlock(&h->lock);
}

/* Called with h->lock held. */
static int start_heartbeat(struct daxfs_handle *h)
{
	int err;

	if (h->hb_running || (h->flags & DAXFS_OPEN_NO_HEARTBEAT))
		return 0;
	h->hb_stop = false;
	err = lib_thread_create(&h->hb_thread, heartbeat_main, h);
	if (err)
		return -err;
	h->hb_running = true;
	return 0;
}

/* Stops the heartbeat thread; called without h->lock. */
static void stop_heartbeat(struct daxfs_handle *h)
{
	bool running;

	pthread_mutex_lock(&h->lock);
	running = h->hb_running;
	h->hb_stop = true;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	if (running)
		pthread_join(h->hb_thread, NULL);
	h->hb_running = false;
}

/* Joins again when h belongs to a fork parent's host or was declared
 * dead (need_rejoin, set in a fork child too).  Closes the call gate:
 * waits for the calls running on the old slot to end.  A thread inside a
 * call on h cannot wait for itself: it goes on, on the old slot (the end
 * of that call reports -ESTALE) and a later call rejoins. */
int lib_rejoin(struct daxfs_handle *h)
{
	bool forked;
	int err = 0;

	if (daxfs_likely(!__atomic_load_n(&h->need_rejoin, __ATOMIC_ACQUIRE)))
		return 0;
	/* shut down: no new slot either (daxfs_op_begin refuses) */
	if (!h->want_join || lib_call_inside(h) ||
	    __atomic_load_n(&h->fs.shut, __ATOMIC_ACQUIRE))
		return 0;
	lib_gate_close(h);
	pthread_mutex_lock(&h->lock);
	if (h->need_rejoin) {
		/* In a fork child fs.host names the parent's slot: never
		 * touch it, just take a slot of our own. */
		forked = h->fork_gen != lib_fork_gen;
		err = do_join(h);
		if (!err) {
			lib_files_rejoined(h, forked);
			h->fork_gen = lib_fork_gen;
			__atomic_store_n(&h->need_rejoin, false, __ATOMIC_RELEASE);
			/* after the opens were marked stale: one who
			 * reads the new count finds them so */
			__atomic_add_fetch(&h->rejoins, 1, __ATOMIC_RELEASE);
			err = start_heartbeat(h);
		}
	}
	pthread_mutex_unlock(&h->lock);
	lib_gate_open(h);
	return err;
}

/* DAXFS_DEBUG set: why an ENOSPC stands, on stderr (a test that sets it
 * shows the line when it fails). */
static void space_gave_up(const struct daxfs_space_wait *w)
{
	static const char *const why[] = {
		"nothing pending", "a live host's op held the epoch too long",
		"a dead host", "waited as long as it ever does",
		"no host, read-only or fenced", "space freed, tried again",
	};
	const char *d = getenv("DAXFS_DEBUG");

	if (!d || !*d)
		return;
	fprintf(stderr, "libdaxfs[%d]: ENOSPC stands after %u tries, %lld ms: %s\n",
		(int)getpid(), w->tries,
		w->start_ns ? (long long)(daxfs_mono_ns() - w->start_ns) / 1000000 : 0LL,
		w->why < sizeof(why) / sizeof(why[0]) ? why[w->why] : "?");
}

/* One step of the space wait, outside the core op (no lane held):
 * sleeps as told and says whether to run the call again. */
static bool space_wait_step(struct daxfs_handle *h,
			    struct daxfs_space_wait *w)
{
	struct timespec ts;
	int ms = daxfs_space_wait_next(&h->fs, w);

	if (ms < 0) {
		space_gave_up(w);
		return false;
	}
	if (ms) {
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = (long)(ms % 1000) * 1000000L;
		nanosleep(&ts, NULL);
	}
	return true;
}

bool lib_space_retry(struct lib_call *c, struct daxfs_space_wait *w,
		     int64_t ret)
{
	if (ret != -ENOSPC || c->up)
		return false;
	return space_wait_step(c->h, w);
}

static int do_space_wait(struct daxfs_handle *h,
			 struct daxfs_space_waiter *pw)
{
	return space_wait_step(h, (struct daxfs_space_wait *)pw);
}

/* A caller's own wait for space (daxfs_map_page's DAXFS_MAP_NOWAIT):
 * outside any call of ours, so the caller holds no lane. */
int daxfs_space_wait(struct daxfs_handle *h, struct daxfs_space_waiter *w)
{
	_Static_assert(sizeof(struct daxfs_space_wait) <=
		       sizeof(struct daxfs_space_waiter), "waiter too small");
	LIB_CALL(h, do_space_wait(h, w));
}

int lib_writable(struct daxfs_handle *h)
{
	if (h->flags & DAXFS_OPEN_RDONLY)
		return -EROFS;
	if (h->fs.host == DAXFS_NO_HOST)
		return -EROFS;
	return 0;
}

static void list_add(struct daxfs_handle *h)
{
	pthread_mutex_lock(&lib_list_lock);
	h->next = lib_handles;
	lib_handles = h;
	pthread_mutex_unlock(&lib_list_lock);
}

static void list_del(struct daxfs_handle *h)
{
	struct daxfs_handle **pp;

	pthread_mutex_lock(&lib_list_lock);
	for (pp = &lib_handles; *pp; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	pthread_mutex_unlock(&lib_list_lock);
}

/* Releases what daxfs_region_open() set up (the host slot is left, or
 * was never taken, by the caller). */
static void handle_free(struct daxfs_handle *h)
{
	lib_backing_free(h);
	lib_mapped_free(h);
	unmap_target(h);
	if (h->fd >= 0)
		close(h->fd);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	lib_gate_destroy(h);
	free(h->opens);
	free(h->obs);
	free(h);
}

/* Fresh page batches mapped at once (DAXFS_FS_POPULATE) unless
 * DAXFS_POPULATE=0: for A/B runs (docs/benchmarks.md). */
static bool populate_wanted(void)
{
	const char *e = getenv("DAXFS_POPULATE");

	return !e || strcmp(e, "0");
}

int daxfs_region_open(const char *path, unsigned int flags,
		      struct daxfs_handle **out)
{
	struct daxfs_handle *h;
	struct stat st;
	uint64_t size;
	u32 fsflags = 0;
	int err, fd;

	*out = NULL;
	pthread_once(&lib_atfork_once, lib_atfork_init);
	/* aligned: the in-flight counters take a cache line each */
	if (posix_memalign((void **)&h, 64, sizeof(*h)))
		return -ENOMEM;
	memset(h, 0, sizeof(*h));
	h->fd = -1;
	/* strict is sync plus atomic writes and reads */
	if (flags & DAXFS_OPEN_STRICT)
		flags |= DAXFS_OPEN_SYNC;
	h->flags = flags;
	h->uid = (uint32_t)geteuid();
	h->gid = (uint32_t)getegid();
	pthread_mutex_init(&h->lock, NULL);
	cond_init_mono(&h->cond);
	lib_gate_init(h);
	lib_copy_init();

	fd = daxfs_target_open(path, (flags & DAXFS_OPEN_RDONLY) ? O_RDONLY : O_RDWR,
			       &h->kind, &size);
	if (fd < 0) {
		err = fd;
		goto fail;
	}
	h->fd = fd;
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	h->fd_dev = st.st_dev;
	h->fd_ino = st.st_ino;
	if (size < DAXFS_BLOCK_SIZE) {
		err = -EINVAL;
		goto fail;
	}
	/* a writer never stores into a hole (lib/allocate.c) */
	if (h->kind == DAXFS_TARGET_FILE && !(flags & DAXFS_OPEN_RDONLY)) {
		err = lib_file_allocate(fd, size, false);
		if (err)
			goto fail;
	}
	err = map_target(h, (flags & DAXFS_OPEN_RDONLY) ? PROT_READ :
			 PROT_READ | PROT_WRITE, size);
	if (err)
		goto fail;
	if (!(flags & DAXFS_OPEN_RDONLY))
		daxfs_pmem_trace_map(h->map, h->map_len);

	if (flags & DAXFS_OPEN_RDONLY)
		fsflags |= DAXFS_FS_RDONLY;
	if ((flags & (DAXFS_OPEN_PERSISTENT | DAXFS_OPEN_SYNC)) ||
	    h->kind != DAXFS_TARGET_FILE)
		fsflags |= DAXFS_FS_PERSISTENT;
	if (flags & DAXFS_OPEN_VALIDATE)
		fsflags |= DAXFS_FS_VALIDATE;
	/* pre-faulted: a batch's populate would only walk mapped pages,
	 * about 250 ns a page here (docs/benchmarks.md "Pre-faulted
	 * regions") */
	if (!(flags & (DAXFS_OPEN_RDONLY | DAXFS_OPEN_PREFAULT)) &&
	    populate_wanted())
		fsflags |= DAXFS_FS_POPULATE;
	err = daxfs_fs_open(&h->fs, h->map, h->map_len, fsflags);
	if (err)
		goto fail;
	h->fs.host = DAXFS_NO_HOST;
	/* what this process maps, for its writes (lib/mapped.c) */
	if (!(flags & DAXFS_OPEN_RDONLY))
		lib_mapped_init(h);
	if (flags & DAXFS_OPEN_PREFAULT)
		lib_prefault(h);
	h->obs = calloc(h->fs.sb.max_hosts, sizeof(*h->obs));
	if (!h->obs) {
		err = -ENOMEM;
		goto fail;
	}
	h->fs.obs = h->obs;
	err = lib_backing_init(h);	/* split mode: backing.c */
	if (err)
		goto fail;

	if (!(flags & (DAXFS_OPEN_RDONLY | DAXFS_OPEN_NOJOIN))) {
		/* sync: what joining stores is on the media on return */
		if (flags & DAXFS_OPEN_SYNC)
			err = lib_sync_begin();
		if (!err)
			err = do_join(h);
		if (flags & DAXFS_OPEN_SYNC)
			lib_sync_end();
		if (err)
			goto fail;
		h->want_join = true;
		h->fork_gen = lib_fork_gen;
		pthread_mutex_lock(&h->lock);
		err = start_heartbeat(h);
		pthread_mutex_unlock(&h->lock);
		if (err) {
			daxfs_host_leave(&h->fs);
			goto fail;
		}
	}
	list_add(h);
	*out = h;
	return 0;

fail:
	handle_free(h);
	return err;
}

void daxfs_region_close(struct daxfs_handle *h)
{
	if (!h)
		return;
	list_del(h);
	stop_heartbeat(h);
	lib_backing_stop(h);
	/* A fork child that never used the handle still carries the parent's
	 * slot in fs.host: leave only a slot that is ours. */
	if (h->want_join && h->fork_gen == lib_fork_gen &&
	    h->fs.host != DAXFS_NO_HOST) {
		if (__atomic_load_n(&h->fs.shut, __ATOMIC_ACQUIRE)) {
			/* as a crash leaves it, DEAD at once; -ESTALE:
			 * declared dead already, recovered or about to be */
			daxfs_host_abandon(&h->fs);
		} else {
			lib_backing_detach(h);
			daxfs_host_leave(&h->fs);
		}
	}
	handle_free(h);
}

void daxfs_region_shutdown(struct daxfs_handle *h)
{
	if (h)
		__atomic_store_n(&h->fs.shut, true, __ATOMIC_RELEASE);
}

/* DAXFS_CRASH_STOP=shutdown (lib/crash.c): every open handle shuts down. */
void lib_shutdown_all(void)
{
	struct daxfs_handle *h;

	pthread_mutex_lock(&lib_list_lock);
	for (h = lib_handles; h; h = h->next)
		daxfs_region_shutdown(h);
	pthread_mutex_unlock(&lib_list_lock);
}

/* The core view, for callers that use the core directly: joins again
 * when needed, but holds nothing (such callers get -ESTALE from the core
 * when declared dead). */
struct daxfs_fs *daxfs_handle_fs(struct daxfs_handle *h)
{
	lib_rejoin(h);
	return &h->fs;
}

uint64_t daxfs_handle_joins(struct daxfs_handle *h)
{
	return __atomic_load_n(&h->rejoins, __ATOMIC_ACQUIRE);
}

int daxfs_handle_host(struct daxfs_handle *h, uint32_t *slot, uint64_t *gen)
{
	if (h->fs.host == DAXFS_NO_HOST)
		return -ENOENT;
	*slot = h->fs.host;
	*gen = h->fs.host_gen;
	return 0;
}

int daxfs_host_retire_slot(struct daxfs_handle *h, uint32_t slot, uint64_t gen)
{
	LIB_CALL(h, daxfs_host_retire(&h->fs, slot, gen));
}

int daxfs_host_adopt_locks(struct daxfs_handle *h, uint32_t slot,
			   uint64_t gen, uint64_t lo, uint64_t hi, uint64_t to)
{
	struct daxfs_lock_shift sh = { .lo = lo, .hi = hi, .to = to };

	LIB_CALL(h, daxfs_lock_adopt(&h->fs, slot, gen, &sh));
}

int daxfs_host_adopt_owner_locks(struct daxfs_handle *h, uint32_t slot,
				 uint64_t gen, uint64_t ino, uint64_t owner)
{
	LIB_CALL(h, daxfs_lock_adopt_owner(&h->fs, slot, gen, ino, owner));
}

static int do_region_renew(struct daxfs_handle *h)
{
	if (h->fs.host == DAXFS_NO_HOST)
		return 0;
	return daxfs_host_renew(&h->fs);	/* -ESTALE: see lib_call_end() */
}

int daxfs_region_renew(struct daxfs_handle *h)
{
	LIB_CALL(h, do_region_renew(h));
}

void daxfs_set_creds(struct daxfs_handle *h, uint32_t uid, uint32_t gid)
{
	h->uid = uid;
	h->gid = gid;
}

static int do_region_reclaim(struct daxfs_handle *h)
{
	int err = lib_writable(h);

	if (err)
		return err;
	daxfs_reclaim_all(&h->fs);
	return 0;
}

int daxfs_fs_watch_hosts(struct daxfs_fs *fs)
{
	s64 end = daxfs_mono_ns() + (s64)fs->lease_ms * 1250000LL +
		  100000000LL;
	struct timespec ts = { 0, 10000000L };
	u32 n;

	if (!fs->obs)
		fs->obs = calloc(fs->sb.max_hosts, sizeof(*fs->obs));
	if (!fs->obs)
		return -ENOMEM;
	/* a live host renews every lease/4, a dead one is judged after a
	 * lease: at most about a lease, less when all are seen renewing */
	while ((n = daxfs_hosts_observe(fs)) && daxfs_mono_ns() < end)
		nanosleep(&ts, NULL);
	return (int)n;
}

int daxfs_region_watch_hosts(struct daxfs_handle *h)
{
	return daxfs_fs_watch_hosts(&h->fs);
}

int daxfs_region_reclaim(struct daxfs_handle *h)
{
	LIB_CALL(h, do_region_reclaim(h));
}
