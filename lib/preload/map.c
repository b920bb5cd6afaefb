// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Zero-copy MAP_SHARED mappings of region files (docs/preload.md "Shared
 * mappings").  The program's range is a run of mappings of the region
 * file itself, each page at the offset of the file page's pool page, so
 * loads and stores reach the shared memory with no copy.
 *
 * Page lifetimes: the process is a mapping host (docs/reclaim.md).  It
 * announces an epoch before its first lookup, and a pass thread, every
 * lease/4, looks every mapped page up again and moves the program's
 * mapping off each page that is no longer its file's page there
 * (truncated, punched, truncated and regrown), then announces the epoch
 * it began at.  No host frees a page retired after that epoch before the
 * next pass, so a mapping never shows another file's bytes.
 *
 * Every page below EOF gets a pool page when it is mapped (a hole is
 * filled, a base page copied up): one kind of page to revalidate.  A page
 * at or past EOF is an anonymous zero page (Linux would raise SIGBUS);
 * the pass maps the file's page there once the file has grown over it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload.h"

#define PG		4096UL
#define PG_ANON		0	/* pg[i]: an anonymous zero page */
#define PG_GONE		1	/* pg[i]: the program unmapped this page */
#define PG_NOSPACE	2	/* pg[i]: a hole the full pool could not fill:
				 * a zero page, never writable (a store
				 * faults, as Linux's SIGBUS), until a pass
				 * fills it */
#define MAP_MAX		(1UL << 36)	/* bytes in one mapping: 64 GiB */
#define HUGE_PG		(2UL << 20)	/* a run, and a PMD */

struct pl_map {
	struct pl_map *next;
	char *addr;
	uint64_t ino;
	uint64_t pgoff;		/* file page at addr */
	size_t n;		/* pages */
	size_t live;		/* pages not PG_GONE */
	uint64_t *pg;		/* region offset mapped at page i */
	unsigned char *prot;	/* page i's protection */
};

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_map *maps;
static int announced;		/* daxfs_map_begin since the last 0 */
/* signalled when announced becomes 1: the pass thread sleeps on it while
 * nothing is mapped, so an idle process never wakes for passes */
static pthread_cond_t announced_cond = PTHREAD_COND_INITIALIZER;
static int pass_started;
static pthread_t pass_thread;
/* leave/exec closes the handle: the pass thread must not be in it then
 * (a Dekker pair: no lock, so _exit from a signal handler cannot wait
 * for a lock its own thread holds) */
static _Atomic int stopped, in_pass;
static pid_t pass_pid;		/* the process our pass thread runs in */

static void *sys_mmap(void *addr, size_t len, int prot, int flags, int fd,
		      uint64_t off)
{
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

static int anon_pg(uint64_t pg)
{
	return pg == PG_ANON || pg == PG_NOSPACE;
}

static int page_prot(const struct pl_map *m, size_t i)
{
	return m->pg[i] == PG_NOSPACE ? m->prot[i] & ~PROT_WRITE : m->prot[i];
}

/* Maps pages [i, i + cnt) of m as recorded: runs of pages contiguous in
 * the region with one protection, one mmap each. */
static int place(struct daxfs_handle *h, struct pl_map *m, size_t i,
		 size_t cnt)
{
	size_t j, end = i + cnt;
	void *p;

	while (i < end) {
		if (m->pg[i] == PG_GONE) {
			i++;
			continue;
		}
		for (j = i + 1; j < end && m->prot[j] == m->prot[i]; j++) {
			if (anon_pg(m->pg[i]) ? m->pg[j] != m->pg[i] :
			    m->pg[j] != m->pg[i] + (j - i) * PG)
				break;
		}
		if (anon_pg(m->pg[i]))
			p = sys_mmap(m->addr + i * PG, (j - i) * PG,
				     page_prot(m, i),
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				     -1, 0);
		else
			p = sys_mmap(m->addr + i * PG, (j - i) * PG, m->prot[i],
				     MAP_SHARED | MAP_FIXED,
				     daxfs_region_fd(h), m->pg[i]);
		if (p == MAP_FAILED)
			return -errno;
		i = j;
	}
	return 0;
}

/* The page that file page blk should show: its pool page below EOF
 * (allocated for a hole), the zero page past it.  Never waits for space:
 * maps_lock is held, and the pass that lets freed space go needs it. */
static int target(struct daxfs_handle *h, uint64_t ino, uint64_t blk,
		  uint64_t size, uint64_t *pg)
{
	int err;

	*pg = PG_ANON;
	if (blk * PG >= size)
		return 0;
	err = daxfs_map_page(h, ino, blk, DAXFS_MAP_ALLOC | DAXFS_MAP_NOWAIT,
			     pg);
	if (err == -EROFS)	/* a read-only host: holes stay zero */
		err = daxfs_map_page(h, ino, blk, 0, pg);
	return err;
}

static int file_size(struct daxfs_handle *h, uint64_t ino, uint64_t *size)
{
	struct daxfs_attr a;
	int err = daxfs_fstat(h, ino, &a);

	*size = err ? 0 : a.size;
	return err;
}

/*
 * Looks every live page of m up again and remaps those that moved.  A
 * file that cannot be looked up any more shows zero pages (its pages are
 * no longer ours to keep).  maps_lock held.
 */
static int revalidate(struct daxfs_handle *h, struct pl_map *m)
{
	uint64_t size, pg;
	size_t i;
	int err, gone = file_size(h, m->ino, &size);

	for (i = 0; i < m->n; i++) {
		if (m->pg[i] == PG_GONE)
			continue;
		pg = PG_ANON;
		err = gone ? 0 : target(h, m->ino, m->pgoff + i, size, &pg);
		/* a hole the full pool cannot fill now: keeping the old page
		 * would keep our announcement, and with it every free in the
		 * cluster, behind until space came: it never would */
		if (err)
			pg = err == -ENOSPC ? PG_NOSPACE : PG_ANON;
		if (pg == m->pg[i])
			continue;
		m->pg[i] = pg;
		err = place(h, m, i, 1);
		if (err)
			return err;
	}
	return 0;
}

/* One pass over every mapping (docs/reclaim.md "Mapping hosts"). */
static void pass(struct daxfs_handle *h, uint64_t only_ino)
{
	struct pl_map *m;
	int64_t e = daxfs_map_pass_begin(h);
	int failed = 0;

	for (m = maps; m; m = m->next) {
		if ((!only_ino || m->ino == only_ino) && revalidate(h, m)) {
			pl_debug("mapping at %p: revalidation failed",
				 (void *)m->addr);
			failed = 1;
		}
	}
	/* A page we could not move off (mmap failed: the process's map
	 * count, memory) may be retired: keep the older announcement, which
	 * holds its reuse back, and try again at the next pass. */
	if (e <= 0 || only_ino || failed)
		return;
	daxfs_map_pass_end(h, maps ? (uint64_t)e : 0);
	if (!maps)
		announced = 0;
}

static unsigned int pass_ms = 2500;	/* lease/4, set before the thread */
#define ASK_MS	20u	/* how often an early pass is looked for */

/* maps_lock held. */
static void set_announced(int v)
{
	announced = v;
	if (v)
		pthread_cond_signal(&announced_cond);
}

/*
 * Nothing mapped (announced 0): no pass to run and no ask to answer
 * until a first mapping announces, which wakes us at once.  Sleeping a
 * whole tick here instead was tried: the thread slept through the next
 * mmap's announcement and answered no ask for up to a tick.
 */
static int wait_announced(void)
{
	int waited = 0;

	pthread_mutex_lock(&maps_lock);
	while (!announced || atomic_load(&stopped)) {
		pthread_cond_wait(&announced_cond, &maps_lock);
		waited = 1;
	}
	pthread_mutex_unlock(&maps_lock);
	return waited;
}

/* A pass every pass_ms, and between them as soon as a host waiting for
 * space asks for one (docs/reclaim.md "Asking for a pass"). */
static void *pass_main(void *arg)
{
	struct daxfs_handle *h = arg;
	unsigned int slice = pass_ms < ASK_MS ? pass_ms : ASK_MS, waited = 0;
	int run;
	struct timespec ts;

	for (;;) {
		if (wait_announced())
			waited = 0;
		ts.tv_sec = slice / 1000;
		ts.tv_nsec = (long)(slice % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		waited += slice;
		pthread_mutex_lock(&maps_lock);
		atomic_store(&in_pass, 1);
		run = !atomic_load(&stopped) && announced;
		h = run ? pl_handle_peek() : NULL;
		if (h && (waited >= pass_ms || daxfs_map_pass_wanted(h) == 1)) {
			pass(h, 0);
			waited = 0;
		}
		atomic_store(&in_pass, 0);
		pthread_mutex_unlock(&maps_lock);
	}
	return NULL;
}

/* maps_lock held. */
static int pass_start(struct daxfs_handle *h)
{
	sigset_t all, old;
	int err;

	if (pass_started)
		return 0;
	/* here, not in the thread: the thread touches the region only
	 * inside a pass, which exit waits for (pl_map_stop); a look before
	 * its first pass read the region after exit had unmapped it */
	if (daxfs_lease_ms(h) >= 4)
		pass_ms = daxfs_lease_ms(h) / 4;
	/* the program's signal handlers never run on our thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&pass_thread, NULL, pass_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_detach(pass_thread);
	/* for top -H, and for tests that watch its wakeups */
	pthread_setname_np(pass_thread, "daxfs-pass");
	pass_started = 1;
	pass_pid = getpid();
	return 0;
}

static struct pl_map *find_ino(uint64_t ino, const struct pl_map *except)
{
	struct pl_map *m;

	for (m = maps; m; m = m->next)
		if (m->ino == ino && m != except)
			return m;
	return NULL;
}

static void map_free(struct pl_map *m)
{
	free(m->pg);
	free(m->prot);
	free(m);
}

/* Takes m out of the list; its file's hold goes with the last mapping. */
static void unlink_map(struct daxfs_handle *h, struct pl_map *m)
{
	struct pl_map **pp;

	for (pp = &maps; *pp; pp = &(*pp)->next) {
		if (*pp == m) {
			*pp = m->next;
			break;
		}
	}
	if (h && !find_ino(m->ino, NULL))
		daxfs_map_unhold(h, m->ino);
	map_free(m);
}

/*
 * The last mapping went: no page of ours is mapped any more, so nothing
 * retired needs to wait for our next pass (docs/reclaim.md "Mapping
 * hosts": 0 when nothing is mapped).  Waiting for it instead held every
 * page freed meanwhile for up to a lease tick: a program that maps,
 * unmaps and frees in a loop (fsx) ran a 512 MiB region out of space.
 * maps_lock held, so no first mapping runs meanwhile.
 */
static void unannounce_if_unmapped(void)
{
	struct daxfs_handle *h = pl_handle_peek();

	if (maps || !announced || !h)
		return;
	if (!daxfs_map_pass_end(h, 0))
		announced = 0;
}

/* Pages of [addr, addr + len) stop being ours (munmap, a MAP_FIXED
 * mapping over them).  maps_lock held. */
static void forget(char *addr, size_t len)
{
	struct pl_map *m, *next;
	char *end = addr + len;
	size_t i;

	for (m = maps; m; m = next) {
		next = m->next;
		for (i = 0; i < m->n; i++) {
			char *a = m->addr + i * PG;

			if (a >= addr && a < end && m->pg[i] != PG_GONE) {
				m->pg[i] = PG_GONE;
				m->live--;
			}
		}
		if (!m->live)
			unlink_map(pl_handle_peek(), m);
	}
	unannounce_if_unmapped();
}

static int overlaps(const char *addr, size_t len)
{
	struct pl_map *m;

	for (m = maps; m; m = m->next)
		if (addr < m->addr + m->n * PG && m->addr < addr + len)
			return 1;
	return 0;
}

/* Region file ino as a shared mapping of len bytes from off at p (an
 * anonymous reservation).  maps_lock held. */
static int map_file(struct daxfs_handle *h, char *p, size_t len, int prot,
		    uint64_t ino, uint64_t off)
{
	struct pl_map *m = calloc(1, sizeof(*m));
	uint64_t size;
	size_t i;
	int err;

	if (!m)
		return -ENOMEM;
	m->addr = p;
	m->ino = ino;
	m->pgoff = off / PG;
	m->n = m->live = (len + PG - 1) / PG;
	m->pg = calloc(m->n, sizeof(*m->pg));
	m->prot = malloc(m->n);
	if (!m->pg || !m->prot) {
		map_free(m);
		return -ENOMEM;
	}
	memset(m->prot, prot, m->n);
	err = find_ino(ino, NULL) ? 0 : daxfs_map_hold_nowait(h, ino);
	if (err) {
		map_free(m);
		return err;
	}
	m->next = maps;
	maps = m;
	if (!announced) {
		/* before the first lookup (docs/reclaim.md) */
		err = daxfs_map_begin(h);
		set_announced(!err);
	}
	if (!err)
		err = pass_start(h);
	if (!err)
		err = file_size(h, ino, &size);
	for (i = 0; !err && i < m->n; i++)
		err = target(h, ino, m->pgoff + i, size, &m->pg[i]);
	if (!err)
		err = place(h, m, 0, m->n);
	if (err)
		unlink_map(h, m);
	return err;
}

/*
 * The address range for a new mapping: where the kernel would have put
 * it, but shifted so that the address of file offset off is congruent to
 * off modulo 2 MiB.  A run (2 MiB of the file in one aligned piece of the
 * pool, docs/files.md "Runs") then starts on a 2 MiB boundary, where a
 * region built of huge pages maps it with one PMD (docs/preload.md
 * "Huge pages").  Not where the program placed the mapping itself, nor
 * for mappings too short to hold a run.  maps_lock held.
 */
static void *reserve(void *addr, size_t len, int flags, uint64_t off)
{
	int rflags = (flags & ~(MAP_TYPE | MAP_POPULATE)) | MAP_PRIVATE |
		     MAP_ANONYMOUS;
	size_t extra = HUGE_PG - PG, lead;
	char *p = MAP_FAILED;

	/* len is at most MAP_MAX (pl_map_shared): len + extra cannot wrap */
	if (len >= HUGE_PG && !(flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)))
		p = sys_mmap(addr, len + extra, PROT_NONE, rflags, -1, 0);
	if (p == MAP_FAILED) {
		extra = 0;	/* not placed for runs: where the kernel puts it */
		p = sys_mmap(addr, len, PROT_NONE, rflags, -1, 0);
		if (p == MAP_FAILED)
			return p;
	}
	forget(p, len + extra);
	lead = extra ? (off - (uintptr_t)p) & (HUGE_PG - 1) : 0;
	if (lead)
		syscall(SYS_munmap, p, lead);
	if (extra - lead)
		syscall(SYS_munmap, p + lead + len, extra - lead);
	return p + lead;
}

/* The MAP_SHARED mmap of region descriptor fd (mmap64 in io.c). */
void *pl_map_shared(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_space_waiter w;
	struct pl_desc *d;
	uint64_t ino;
	int acc, kind, err, again, waiting = 0;
	void *p;

	if (!h)
		return MAP_FAILED;
	if (len > MAP_MAX) {
		/* each page is recorded and looked up at every pass */
		pl_debug("mmap MAP_SHARED of %zu bytes of region fd %d: more "
			 "than %lu", len, fd, MAP_MAX);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	if (!len || off < 0 || (off & (PG - 1)) ||
	    (flags & (MAP_GROWSDOWN | MAP_HUGETLB))) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	d = pl_fd_get(fd);
	if (!d) {
		errno = EBADF;
		return MAP_FAILED;
	}
	acc = atomic_load(&d->flags) & (O_ACCMODE | O_PATH);
	kind = d->kind;
	ino = d->ino;
	pl_fd_put(d);
	if (kind != PL_KIND_REG || (acc & O_PATH)) {
		errno = kind == PL_KIND_DIR ? ENODEV : EBADF;
		return MAP_FAILED;
	}
	if ((acc & O_ACCMODE) == O_WRONLY ||
	    ((prot & PROT_WRITE) && (acc & O_ACCMODE) != O_RDWR)) {
		errno = EACCES;
		return MAP_FAILED;
	}
	pthread_mutex_lock(&maps_lock);
	p = reserve(addr, len, flags, (uint64_t)off);
	if (p == MAP_FAILED) {
		pthread_mutex_unlock(&maps_lock);
		return p;
	}
	atomic_store(&stopped, 0);
	/* a full pool: wait for space with the lock dropped, so that our
	 * pass can announce meanwhile (our announcement may be what holds
	 * the space back); the reserved range stays ours */
	while ((err = map_file(h, p, len, prot, ino, (uint64_t)off)) ==
	       -ENOSPC) {
		pthread_mutex_unlock(&maps_lock);
		if (!waiting++)
			memset(&w, 0, sizeof(w));
		again = daxfs_space_wait(h, &w);
		pthread_mutex_lock(&maps_lock);
		if (again != 1)
			break;
	}
	if (err)
		syscall(SYS_munmap, p, len);
	pthread_mutex_unlock(&maps_lock);
	if (err) {
		pl_debug("mmap MAP_SHARED of region fd %d: %s", fd,
			 daxfs_strerror(err));
		errno = err == -ENOSPC || err == -ENOMEM ? ENOMEM :
			err == -EROFS ? EACCES : -err;
		return MAP_FAILED;
	}
	return p;
}

/* A MAP_FIXED mapping of anything over our pages replaces them. */
void *pl_map_fixed(void *(*real)(void *, size_t, int, int, int, off_t),
		   void *addr, size_t len, int prot, int flags, int fd,
		   off_t off)
{
	void *p;

	pthread_mutex_lock(&maps_lock);
	p = real(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		forget(p, len);
	pthread_mutex_unlock(&maps_lock);
	return p;
}

/* After this process cut a file: its own mappings see the cut now, as
 * on Linux, not at the next pass. */
void pl_map_cut(uint64_t ino)
{
	struct daxfs_handle *h = pl_handle_peek();

	if (!maps || !h)
		return;
	pthread_mutex_lock(&maps_lock);
	if (announced && find_ino(ino, NULL))
		pass(h, ino);
	pthread_mutex_unlock(&maps_lock);
}

/*
 * Before the handle is closed (exit, exec): no pass runs on it any more.
 * A new shared mapping (after a failed exec) announces and resumes.
 */
void pl_map_stop(void)
{
	atomic_store(&stopped, 1);
	/* a child forked by other means than fork() has no pass thread
	 * that could ever clear the flag it inherited */
	while (atomic_load(&in_pass) && pass_pid == getpid())
		sched_yield();
	announced = 0;
}

int pl_map_any(void)
{
	return maps != NULL;
}

/* fork: the list must not be mid-change in the child. */
void pl_map_fork_prepare(void)
{
	pthread_mutex_lock(&maps_lock);
}

void pl_map_fork_parent(void)
{
	pthread_mutex_unlock(&maps_lock);
}

/*
 * The child is a new host with the parent's mappings (threads do not
 * fork): it announces for them and runs its own passes at once, so they
 * stay covered when the parent ends.
 */
void pl_map_fork_child(void)
{
	struct daxfs_handle *h;
	struct pl_map *m;

	pthread_mutex_init(&maps_lock, NULL);
	/* the parent's pass thread may have been waiting on it */
	pthread_cond_init(&announced_cond, NULL);
	pass_started = 0;
	announced = 0;
	if (!maps || !(h = pl_handle()))
		return;
	pthread_mutex_lock(&maps_lock);
	/* the parent's holds are its host's: take ours, once per file */
	for (m = maps; m; m = m->next)
		if (find_ino(m->ino, NULL) == m && daxfs_map_hold(h, m->ino))
			pl_debug("fork child: mapped inode %llu not held",
				 (unsigned long long)m->ino);
	set_announced(!daxfs_map_begin(h));
	if (!announced || pass_start(h))
		pl_debug("fork child: inherited mappings not revalidated");
	else
		pass(h, 0);
	pthread_mutex_unlock(&maps_lock);
}

PUBLIC int munmap(void *addr, size_t len)
{
	int ret;

	if (!maps)
		return (int)syscall(SYS_munmap, addr, len);
	pthread_mutex_lock(&maps_lock);
	ret = (int)syscall(SYS_munmap, addr, len);
	if (!ret)
		forget(addr, len);
	pthread_mutex_unlock(&maps_lock);
	return ret;
}

/*
 * msync of shared mappings of region files.  Their stores go straight
 * into the files' pages, where no fault tells us of them (the kernel
 * moves the times at a write fault), so mtime and ctime move here, for
 * each file the range maps writable: POSIX marks them for update between
 * a store and the next msync with MS_SYNC or MS_ASYNC.  A range mapped
 * writable but never stored to moves them too.
 */
PUBLIC int msync(void *addr, size_t len, int flags)
{
	struct daxfs_handle *h = pl_handle_peek();
	struct pl_map *m;
	char *a = addr, *p;
	size_t i;
	int ret = (int)syscall(SYS_msync, addr, len, flags);

	if (ret || !maps || !h || !(flags & (MS_SYNC | MS_ASYNC)))
		return ret;
	/* core ops under maps_lock, as a pass makes them; a file mapped
	 * twice in the range is touched twice */
	pthread_mutex_lock(&maps_lock);
	for (m = maps; m; m = m->next) {
		for (i = 0; i < m->n; i++) {
			p = m->addr + i * PG;
			if (p + PG > a && p < a + len &&
			    (m->prot[i] & PROT_WRITE))
				break;
		}
		if (i < m->n)
			pl_ino_touch(h, m->ino);
	}
	pthread_mutex_unlock(&maps_lock);
	return 0;
}

PUBLIC int mprotect(void *addr, size_t len, int prot)
{
	struct pl_map *m;
	char *a = addr;
	size_t i;
	int ret;

	if (!maps)
		return (int)syscall(SYS_mprotect, addr, len, prot);
	pthread_mutex_lock(&maps_lock);
	ret = (int)syscall(SYS_mprotect, addr, len, prot);
	for (m = maps; !ret && m; m = m->next) {
		for (i = 0; i < m->n; i++) {
			char *p = m->addr + i * PG;

			if (p < a || p >= a + len)
				continue;
			m->prot[i] = prot;
			/* a hole with no page behind it yet stays unwritable */
			if (m->pg[i] == PG_NOSPACE && (prot & PROT_WRITE))
				syscall(SYS_mprotect, p, PG, page_prot(m, i));
		}
	}
	pthread_mutex_unlock(&maps_lock);
	return ret;
}

/* Moving a region mapping would move it away from its record: refused,
 * as a kernel that cannot move it says (the caller maps anew). */
PUBLIC void *mremap(void *old, size_t old_len, size_t new_len, int flags,
		    ...)
{
	void *new_addr = NULL;
	va_list ap;
	void *p;

	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!maps)
		return (void *)syscall(SYS_mremap, old, old_len, new_len, flags,
				       new_addr);
	pthread_mutex_lock(&maps_lock);
	if (overlaps(old, old_len ? old_len : 1) ||
	    ((flags & MREMAP_FIXED) && overlaps(new_addr, new_len))) {
		pthread_mutex_unlock(&maps_lock);
		pl_debug("mremap of a region file mapping at %p: not supported",
			 old);
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	pthread_mutex_unlock(&maps_lock);
	return p;
}
