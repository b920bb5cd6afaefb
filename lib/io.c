// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: file I/O by inode number through the core's read/write actors.
 * The actors run inside the core's operation (a lane is claimed): they only
 * copy memory.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "libdaxfs-internal.h"
#include "posix-locks.h"
#include "ntcopy.h"
#include "copy.h"
#include "pace.h"

struct copy_ctx {
	uint8_t *user;			/* next byte of the caller's buffer */
	uint8_t *start;			/* its first byte */
	bool stream;			/* a write: streaming stores */
};

/* An atomic read starts over (daxfs_read_atomic). */
static void read_restart(void *ctx)
{
	struct copy_ctx *c = ctx;

	c->user = c->start;
}

static u64 read_actor(void *ctx, const void *src, u64 len)
{
	struct copy_ctx *c = ctx;

	if (src)
		daxfs_copy_cached(c->user, src, len);
	else
		memset(c->user, 0, len);	/* hole */
	c->user += len;
	return len;
}

static u64 write_actor(void *ctx, void *dst, u64 len)
{
	struct copy_ctx *c = ctx;

	/* daxfs_copy_fenced fences the whole write once */
	if (c->stream)
		daxfs_copy_nt_unfenced(dst, c->user, len);
	else
		daxfs_copy_cached(dst, c->user, len);
	c->user += len;
	return len;
}

/* inlined into each entry point, as when there was one: the per-call
 * cost is what bench/ins_op.sh measures */
static inline __attribute__((always_inline))
int64_t do_pread(struct daxfs_handle *h, uint64_t ino, struct daxfs_fcache *fc,
		 void *buf, uint64_t len, uint64_t off)
{
	struct copy_ctx c = { buf, buf, false };
	int err = lib_files_check(h, ino);

	if (err)
		return err;
	if (!len)
		return 0;
	if (len > INT64_MAX)
		len = INT64_MAX;
	daxfs_user_touch(buf, len);
	/* strict: never part of another strict write (docs/modes.md) */
	if (h->flags & (DAXFS_OPEN_STRICT | DAXFS_OPEN_ATOMIC_READ))
		return daxfs_read_atomic_fc(&h->fs, ino, fc, off, len,
					    read_actor, read_restart, &c);
	return daxfs_read_fc(&h->fs, ino, fc, off, len, read_actor, &c);
}

/* lib_writable(), then -ESTALE for a file opened before a rejoin. */
static int lib_writable_file(struct daxfs_handle *h, uint64_t ino)
{
	int err = lib_writable(h);

	return err ? err : lib_files_check(h, ino);
}

/* A write that streams by the rules above but rewrites what its open
 * file wrote, within the cache's span (lib/copy.h).  fc's counts are
 * hints like write_end: threads racing on them only pick a copy. */
static bool write_in_cache(const struct daxfs_fcache *fc, uint64_t len,
			   uint64_t off)
{
	return daxfs_write_in_cache(len, off,
				    (uint64_t)daxfs_load32(&fc->reach) << 12,
				    (uint64_t)daxfs_load32(&fc->wrote) << 12);
}

/* Counts a write of n bytes at off in fc's hints, saturating. */
static void note_written(struct daxfs_fcache *fc, uint64_t off, uint64_t n)
{
	uint64_t pages = (n + 4095) >> 12, end = (off + n + 4095) >> 12;
	uint32_t w = daxfs_load32(&fc->wrote);

	daxfs_store32(&fc->wrote, pages < UINT32_MAX - w ?
				  w + (uint32_t)pages : UINT32_MAX);
	if (end > daxfs_load32(&fc->reach))
		daxfs_store32(&fc->reach,
			      end < UINT32_MAX ? (uint32_t)end : UINT32_MAX);
}

static inline __attribute__((always_inline))
int64_t do_write(struct daxfs_handle *h, uint64_t ino, struct daxfs_fcache *fc,
		 const void *buf, uint64_t len, uint64_t off, u32 flags,
		 uint64_t *at)
{
	struct copy_ctx c = { (uint8_t *)buf, (uint8_t *)buf,
			      daxfs_write_streams(len) };
	u64 pos = off;
	int64_t n;
	int err = lib_writable_file(h, ino);
	/* a write that jumps streams at a shorter length (lib/copy.h);
	 * threads sharing fc may race on the hint: it only picks a copy */
	bool placed = fc && !(flags & DAXFS_WRITE_APPEND), paced = fc != NULL;

	if (err)
		return err;
	if (!(flags & DAXFS_WRITE_APPEND) &&
	    (off > DAXFS_MAX_FILE_SIZE || len > DAXFS_MAX_FILE_SIZE - off))
		return -EFBIG;
	if (len > INT64_MAX)
		return -EINVAL;
	if (h->flags & DAXFS_OPEN_STRICT)
		flags |= DAXFS_WRITE_ATOMIC;
	/* a rewrite marks the change counter: we keep no attributes by it */
	flags |= DAXFS_WRITE_MARK;
	daxfs_user_touch(buf, len);
	if (placed) {
		u64 end = daxfs_load(&fc->write_end);

		c.stream = daxfs_write_streams_at(len, off, end);
		paced = daxfs_write_continues(len, off, end);
	}
	/* a write that continues the last, or an append, makes the copy
	 * the program's pace asks for (lib/pace.h); one that jumps has no
	 * lines prefetched and streams, as does a long one */
	if (placed && c.stream && write_in_cache(fc, len, off))
		c.stream = false;
	else if (paced && c.stream && len < DAXFS_PACE_MAX && lib_copy_paced)
		c.stream = daxfs_pace_stream_now(&fc->pace);
	n = daxfs_write_fc(&h->fs, ino, fc, off, len, flags, write_actor, &c,
			   &pos);
	if (placed && n > 0) {
		daxfs_store(&fc->write_end, off + (u64)n);
		note_written(fc, off, (u64)n);
	}
	if (n >= 0 && at)
		*at = (flags & DAXFS_WRITE_APPEND) ? pos : off;
	return n;
}

#define APPEND	DAXFS_WRITE_APPEND
#define WHOLE	DAXFS_WRITE_WHOLE

static int do_ftruncate(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, uint64_t size)
{
	int err = lib_writable_file(h, ino);

	if (err)
		return err;
	if (size > DAXFS_MAX_FILE_SIZE)
		return -EFBIG;
	return daxfs_truncate_fc(&h->fs, ino, fc, size);
}

/* slot: a host that holds ino open, so that a file with no name left
 * opens too (daxfs_file_open_held); DAXFS_NO_HOST none */
static int file_hold(struct daxfs_handle *h, uint64_t ino, u32 slot)
{
	int err = daxfs_open_get_held(&h->fs, ino, slot);

	if (err || (h->flags & DAXFS_OPEN_RDONLY) || h->fs.host == DAXFS_NO_HOST)
		return err;
	err = lib_files_add(h, ino);
	if (err)
		daxfs_open_put(&h->fs, ino);
	return err;
}

int lib_file_hold(struct daxfs_handle *h, uint64_t ino)
{
	return file_hold(h, ino, DAXFS_NO_HOST);
}

/* A mapping's hold: also of a file with no name left while an open of
 * this handle (the descriptor mapped) holds it, as Linux maps a deleted
 * file that is still open. */
int lib_file_hold_mapped(struct daxfs_handle *h, uint64_t ino)
{
	return file_hold(h, ino, h->fs.host);
}

static int do_file_close(struct daxfs_handle *h, uint64_t ino)
{
	struct daxfs_lock_req un = {
		.end = DAXFS_LOCK_EOF,
		.type = DAXFS_LCK_UN, .kind = DAXFS_LCK_POSIX,
	};

	/* close(2) drops the process's POSIX locks on the file */
	if (h->fs.host != DAXFS_NO_HOST && lib_posix_locks_maybe()) {
		un.owner = (u64)getpid();
		daxfs_lock_set(&h->fs, ino, &un, 0);
	}
	return lib_file_unhold(h, ino);
}

int lib_file_unhold(struct daxfs_handle *h, uint64_t ino)
{
	/* opened before a rejoin: its open-set entry is gone already */
	if (lib_files_put(h, ino))
		return -ESTALE;
	return daxfs_open_put(&h->fs, ino);
}

/* The public entry points: each runs its do_ variant as one lib call
 * (LIB_CALL, libdaxfs-internal.h). */

int64_t daxfs_pread(struct daxfs_handle *h, uint64_t ino, void *buf,
		    uint64_t len, uint64_t off)
{
	LIB_CALL(h, do_pread(h, ino, NULL, buf, len, off));
}

int64_t daxfs_pwrite(struct daxfs_handle *h, uint64_t ino, const void *buf,
		     uint64_t len, uint64_t off)
{
	LIB_CALL_WRITE(h, do_write(h, ino, NULL, buf, len, off, WHOLE, NULL),
		       do_write(h, ino, NULL, buf, len, off, 0, NULL));
}

int64_t daxfs_append(struct daxfs_handle *h, uint64_t ino, const void *buf,
		     uint64_t len, uint64_t *at)
{
	LIB_CALL_WRITE(h, do_write(h, ino, NULL, buf, len, 0, APPEND | WHOLE,
				   at),
		       do_write(h, ino, NULL, buf, len, 0, APPEND, at));
}

int daxfs_ftruncate(struct daxfs_handle *h, uint64_t ino, uint64_t size)
{
	LIB_CALL_SPACE(h, do_ftruncate(h, ino, NULL, size));
}

/* The same through the caller's per-open-file cache (not nested in the
 * calls above: bench/ins_op.sh counts either kind by name). */

/*
 * A read through fc first tries the lane-free way (core/optread.c): no
 * call guard, no lane.  Only when no rejoin is due or running and no
 * open is stale: what the guard and lib_files_check would otherwise
 * settle first.  -EAGAIN from it: the read in a call, as before.
 */
static inline __attribute__((always_inline))
int64_t pread_try(struct daxfs_handle *h, uint64_t ino,
		  struct daxfs_fcache *fc, void *buf, uint64_t len, uint64_t off)
{
	struct copy_ctx c = { buf, buf, false };

	if (!fc || !len || len > INT64_MAX ||
	    __atomic_load_n(&h->need_rejoin, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&h->gate_closed, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&h->nr_stale, __ATOMIC_ACQUIRE))
		return -EAGAIN;
	daxfs_user_touch(buf, len);
	return daxfs_read_optimistic(&h->fs, ino, fc, off, len, read_actor,
				     &c);
}

int64_t daxfs_pread_try(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, void *buf, uint64_t len,
			uint64_t off)
{
	return pread_try(h, ino, fc, buf, len, off);
}

/* Out of line: the guard's frame (six saved registers and its locals)
 * is paid only by a read that the lane-free way sent back. */
static __attribute__((noinline))
int64_t pread_fc_call(struct daxfs_handle *h, uint64_t ino,
		      struct daxfs_fcache *fc, void *buf, uint64_t len,
		      uint64_t off)
{
	LIB_CALL(h, do_pread(h, ino, fc, buf, len, off));
}

int64_t daxfs_pread_fc(struct daxfs_handle *h, uint64_t ino,
		       struct daxfs_fcache *fc, void *buf, uint64_t len,
		       uint64_t off)
{
	int64_t n = pread_try(h, ino, fc, buf, len, off);

	if (n != -EAGAIN)
		return n;
	return pread_fc_call(h, ino, fc, buf, len, off);
}

int64_t daxfs_pwrite_fc(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, const void *buf, uint64_t len,
			uint64_t off)
{
	LIB_CALL_WRITE(h, do_write(h, ino, fc, buf, len, off, WHOLE, NULL),
		       do_write(h, ino, fc, buf, len, off, 0, NULL));
}

int64_t daxfs_append_fc(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, const void *buf, uint64_t len,
			uint64_t *at)
{
	LIB_CALL_WRITE(h, do_write(h, ino, fc, buf, len, 0, APPEND | WHOLE,
				   at),
		       do_write(h, ino, fc, buf, len, 0, APPEND, at));
}

int daxfs_ftruncate_fc(struct daxfs_handle *h, uint64_t ino,
		       struct daxfs_fcache *fc, uint64_t size)
{
	LIB_CALL_SPACE(h, do_ftruncate(h, ino, fc, size));
}

int daxfs_file_open(struct daxfs_handle *h, uint64_t ino)
{
	LIB_CALL_SPACE(h, lib_file_hold(h, ino));
}

int daxfs_file_open_held(struct daxfs_handle *h, uint64_t ino, uint32_t slot)
{
	LIB_CALL_SPACE(h, file_hold(h, ino, slot));
}

int daxfs_file_close(struct daxfs_handle *h, uint64_t ino)
{
	LIB_CALL(h, do_file_close(h, ino));
}
