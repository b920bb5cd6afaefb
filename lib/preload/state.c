// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Configuration from the environment `daxfs run` sets, and the region
 * handle, opened on the first call that needs it: a process that never
 * touches DIR never joins the host table.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "preload.h"
#include "lib/timens.h"

struct pl_config pl_cfg;

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct daxfs_handle *handle;
static atomic_int need_reopen;
__thread int pl_opening_region;

void *pl_real(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (!p) {
		/* Without the real call nothing can be forwarded safely. */
		static const char msg[] = "daxfs-preload: missing libc symbol\n";

		syscall(SYS_write, 2, msg, sizeof(msg) - 1);
		abort();
	}
	return p;
}

void pl_debug(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	if (!pl_cfg.debug)
		return;
	n = snprintf(buf, sizeof(buf), "daxfs-preload[%d]: ", (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	syscall(SYS_write, 2, buf, n);
}

int pl_fail(int neg_errno)
{
	/* a walk that left the region is made again on the kernel where
	 * the call can (pl_outside); one that cannot names no region file */
	errno = neg_errno == -DAXFS_EOUTSIDE ? ENOENT : -neg_errno;
	return -1;
}

int pl_outside(long err, char *buf)
{
	const char *k = daxfs_path_outside();
	size_t n;

	if (err != -DAXFS_EOUTSIDE)
		return 0;
	n = strlen(k);
	if (n >= PL_PATH_MAX)
		return 0;
	memcpy(buf, k, n + 1);
	return 1;
}

static void copy_env(char *dst, size_t size, const char *name, const char *def)
{
	const char *v = getenv(name);

	if (!v || !*v)
		v = def;
	snprintf(dst, size, "%s", v ? v : "");
}

/* The libdaxfs flags of the consistency mode (docs/modes.md). */
static unsigned int mode_flags(void)
{
	unsigned int pf = pl_cfg.prefault ? DAXFS_OPEN_PREFAULT : 0;

	switch (pl_cfg.mode) {
	case PL_MODE_SYNC:
		return DAXFS_OPEN_SYNC | pf;
	case PL_MODE_STRICT:
		return DAXFS_OPEN_STRICT | pf;
	default:
		return pf;
	}
}

__attribute__((constructor)) void pl_init(void)
{
	const char *mode, *pf;

	copy_env(pl_cfg.region, sizeof(pl_cfg.region), "DAXFS_PRELOAD_REGION",
		 getenv("DAXFS_REGION"));
	copy_env(pl_cfg.at, sizeof(pl_cfg.at), "DAXFS_PRELOAD_AT", "/daxfs");
	pl_cfg.at_len = strlen(pl_cfg.at);
	while (pl_cfg.at_len > 1 && pl_cfg.at[pl_cfg.at_len - 1] == '/')
		pl_cfg.at[--pl_cfg.at_len] = 0;
	mode = getenv("DAXFS_PRELOAD_MODE");
	pl_cfg.mode = PL_MODE_POSIX;
	if (mode && !strcmp(mode, "sync"))
		pl_cfg.mode = PL_MODE_SYNC;
	else if (mode && !strcmp(mode, "strict"))
		pl_cfg.mode = PL_MODE_STRICT;
	else if (mode && *mode && strcmp(mode, "posix"))
		pl_debug("unknown mode %s: using posix", mode);
	pl_cfg.debug = getenv("DAXFS_DEBUG") && *getenv("DAXFS_DEBUG");
	/* daxfs run --prefault (docs/preload.md "Pre-faulting") */
	pf = getenv("DAXFS_PRELOAD_REGION_PREFAULT");
	pl_cfg.prefault = pf && !strcmp(pf, "1");
	pl_cfg.enabled = pl_cfg.region[0] && pl_cfg.at[0] == '/';
	pl_kcwd_refresh();
	pl_exec_import();
	pl_run_comm_import();
	/* the image before exec is still the host of our files: take them
	 * over now (pl_reopen_all), before its lease runs out */
	if (pl_cfg.enabled && pl_exec_takeover_due())
		pl_handle();
	pl_exec_wait_done();
	pl_std_fix(0);
	pl_std_fix(1);
	pl_std_fix(2);
}

/*
 * A process that carries the OFD or flock locks of a description another
 * process still holds (a daemon's parent that exits after fork) does not
 * leave: its records would die with its slot.  Its slot stays ALIVE
 * until its lease runs out, and the holders' heartbeats take the locks
 * over once they see this process gone (lock.c pl_lock_watch;
 * docs/locks.md "Descriptions shared across hosts").
 */
static void leave(void)
{
	uint64_t carry[PL_EXIT_CARRY_MAX][2];
	unsigned int n = pl_exit_release(carry);
	struct daxfs_handle *h = pl_handle_peek();

	/* more than carry takes: some may be ours (fdtable.c) */
	if (h && n && (n > PL_EXIT_CARRY_MAX ||
		       pl_lock_carried(h, (const uint64_t (*)[2])carry, n))) {
		pl_debug("not leaving: we hold locks of descriptions others "
			 "still hold");
		return;
	}
	pl_map_stop();
	pthread_mutex_lock(&handle_lock);
	if (handle)
		daxfs_region_close(handle);
	handle = NULL;
	pthread_mutex_unlock(&handle_lock);
}

/*
 * _exit skips destructors, and shells (dash) leave through it: without
 * this the host would stay in the table until its lease ran out and a
 * survivor declared it dead.  No stdio flush here: _exit does none.
 */
PUBLIC void _exit(int status)
{
	REAL(void, _exit, int);

	leave();
	real__exit(status);
	__builtin_unreachable();
}

PUBLIC void _Exit(int status)
{
	_exit(status);
}

__attribute__((destructor)) static void pl_fini(void)
{
	/* Region streams still buffer data that exit would flush after
	 * this destructor, when the descriptors are no longer ours. */
	fflush(NULL);
	leave();
}

/* fs.protected_symlinks of this host's kernel: region links follow its
 * rule, as on a mount (lib/path.c may_follow). */
static int protected_symlinks(void)
{
	char c = '0';
	long fd = syscall(SYS_openat, AT_FDCWD,
			  "/proc/sys/fs/protected_symlinks",
			  O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (syscall(SYS_read, fd, &c, 1) != 1)
			c = '0';
		syscall(SYS_close, fd);
	}
	return c == '1';
}

struct daxfs_handle *pl_handle(void)
{
	struct daxfs_handle *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
	int err;

	if (h && !atomic_load(&need_reopen))
		return h;
	pthread_mutex_lock(&handle_lock);
	if (!handle) {
		pl_opening_region = 1;
		err = daxfs_region_open(pl_cfg.region, mode_flags(), &h);
		/* a region this user may only read is served read-only, as
		 * mount falls back for a write-protected device (and the
		 * daxfs tool's reading commands): changes fail with EROFS.
		 * Before, every call failed with EACCES, reads too */
		if (err == -EACCES || err == -EROFS || err == -EPERM)
			err = daxfs_region_open(pl_cfg.region, mode_flags() |
						DAXFS_OPEN_RDONLY, &h);
		pl_opening_region = 0;
		if (err) {
			pthread_mutex_unlock(&handle_lock);
			pl_debug("%s: %s", pl_cfg.region, daxfs_strerror(err));
			errno = err == -EINVAL ? ENODEV : -err;
			return NULL;
		}
		/* absolute symlink targets under DIR are the region's, as
		 * on a mount at DIR */
		daxfs_set_link_prefix(h, pl_cfg.at);
		/* take over the locks of shared descriptions whose carrier
		 * ended (lock.c) */
		daxfs_set_heartbeat_hook(h, pl_lock_watch, NULL);
		daxfs_set_link_protect(h, protected_symlinks());
		__atomic_store_n(&handle, h, __ATOMIC_RELEASE);
		atomic_store(&need_reopen, 1);
	}
	if (atomic_exchange(&need_reopen, 0))
		pl_reopen_all(handle);
	h = handle;
	pthread_mutex_unlock(&handle_lock);
	return h;
}

/* The handle as it is (no open, no re-publication): for callers that
 * hold the descriptor map. */
struct daxfs_handle *pl_handle_peek(void)
{
	return __atomic_load_n(&handle, __ATOMIC_ACQUIRE);
}

struct daxfs_handle *pl_handle_ready(void)
{
	struct daxfs_handle *h = __atomic_load_n(&handle, __ATOMIC_ACQUIRE);

	return h && !atomic_load(&need_reopen) ? h : NULL;
}

/* Finishes a pending re-publication (after fork or a failed exec)
 * without opening a region that was never opened. */
void pl_handle_settle(void)
{
	if (pl_handle_peek() && atomic_load(&need_reopen))
		pl_handle();
}

/* exec: leave the host table now (the new image joins again when it
 * needs to); if exec fails, the next call opens the region again. */
void pl_handle_drop(void)
{
	pl_map_stop();
	pthread_mutex_lock(&handle_lock);
	if (handle)
		daxfs_region_close(handle);
	__atomic_store_n(&handle, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&handle_lock);
}

/* fork child: libdaxfs joins as a new host by itself; the open-set
 * entries of the inherited files are the parent's, so publish ours. */
static void child_after_fork(void)
{
	pthread_mutex_init(&handle_lock, NULL);
	atomic_store(&need_reopen, 1);
	pl_fork_child();
	pl_spawn_fork_child();
}

__attribute__((constructor)) static void pl_init_fork(void)
{
	pthread_atfork(NULL, NULL, child_after_fork);
}

dev_t pl_dev(void)
{
	/* One device number for the whole region, unlikely to be a real
	 * one: find -xdev, du and cp -a compare (st_dev, st_ino). */
	return makedev(0xdaf, 0x5);
}

void pl_attr_to_stat(const struct daxfs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = pl_dev();
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = a->rdev;
	st->st_size = a->size;
	st->st_blksize = 4096;
	st->st_blocks = a->blocks * 8;
	daxfs_ns_to_timespec(&st->st_atim, a->atime_ns);
	daxfs_ns_to_timespec(&st->st_mtim, a->mtime_ns);
	daxfs_ns_to_timespec(&st->st_ctim, a->ctime_ns);
}
