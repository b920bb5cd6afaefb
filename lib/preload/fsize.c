// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * RLIMIT_FSIZE (ulimit -f) on region files, as the kernel applies it
 * (docs/preload.md "File size limit"): a write that would pass the limit
 * is cut short at it; a write that starts at or past it, and a truncate or
 * fallocate that grows a file past it, fail with EFBIG after SIGXFSZ.
 *
 * Reading the limit is a system call, too dear for every write: it is read
 * at the first check and again after each setrlimit/prlimit of it made
 * through libc in this process (the shell's ulimit, Python's resource).
 * A prlimit(1) from another process is seen only after this one sets the
 * limit itself.  With no limit (the usual case) a check is one load.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/resource.h>

#include "preload.h"

#define FSIZE_NONE	UINT64_MAX		/* RLIM_INFINITY */
#define FSIZE_UNREAD	(UINT64_MAX - 1)	/* no real limit has this value */

static _Atomic uint64_t fsize_limit = FSIZE_UNREAD;

static uint64_t fsize_get(void)
{
	uint64_t v = atomic_load_explicit(&fsize_limit, memory_order_relaxed);
	struct rlimit rl;

	if (v != FSIZE_UNREAD)
		return v;
	v = FSIZE_NONE;
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < FSIZE_UNREAD)
		v = rl.rlim_cur;
	atomic_store_explicit(&fsize_limit, v, memory_order_relaxed);
	return v;
}

static int fsize_exceeded(void)
{
	raise(SIGXFSZ);
	return -EFBIG;
}

int pl_fsize_write(uint64_t at, size_t *len)
{
	uint64_t limit = fsize_get();

	if (limit == FSIZE_NONE || !*len)
		return 0;
	if (at >= limit)
		return fsize_exceeded();
	if (*len > limit - at)
		*len = limit - at;
	return 0;
}

bool pl_fsize_limited(void)
{
	return fsize_get() != FSIZE_NONE;
}

int pl_fsize_grow(uint64_t size, uint64_t new_size)
{
	uint64_t limit = fsize_get();

	if (limit == FSIZE_NONE || new_size <= size || new_size <= limit)
		return 0;
	return fsize_exceeded();
}

int pl_fsize_grow_ino(struct daxfs_handle *h, uint64_t ino, uint64_t new_size)
{
	struct daxfs_attr st;
	int err;

	if (fsize_get() == FSIZE_NONE)
		return 0;
	err = daxfs_fstat(h, ino, &st);
	return err ? err : pl_fsize_grow(st.size, new_size);
}

static void fsize_changed(int res, int ret)
{
	if (!ret && res == RLIMIT_FSIZE)
		atomic_store(&fsize_limit, FSIZE_UNREAD);
}

PUBLIC int setrlimit(__rlimit_resource_t res, const struct rlimit *rl)
{
	REAL(int, setrlimit, __rlimit_resource_t, const struct rlimit *);
	int ret = real_setrlimit(res, rl);

	fsize_changed(res, ret);
	return ret;
}

PUBLIC int setrlimit64(__rlimit_resource_t res, const struct rlimit64 *rl)
{
	REAL(int, setrlimit64, __rlimit_resource_t, const struct rlimit64 *);
	int ret = real_setrlimit64(res, rl);

	fsize_changed(res, ret);
	return ret;
}

PUBLIC int prlimit(pid_t pid, __rlimit_resource_t res, const struct rlimit *rl,
		   struct rlimit *old)
{
	REAL(int, prlimit, pid_t, __rlimit_resource_t, const struct rlimit *,
	     struct rlimit *);
	int ret = real_prlimit(pid, res, rl, old);

	/* another process's limit moved nothing here; ours did, or may have */
	if (rl)
		fsize_changed(res, ret);
	return ret;
}

PUBLIC int prlimit64(pid_t pid, __rlimit_resource_t res,
		     const struct rlimit64 *rl, struct rlimit64 *old)
{
	REAL(int, prlimit64, pid_t, __rlimit_resource_t,
	     const struct rlimit64 *, struct rlimit64 *);
	int ret = real_prlimit64(pid, res, rl, old);

	if (rl)
		fsize_changed(res, ret);
	return ret;
}
