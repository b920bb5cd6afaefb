// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Data calls on region descriptors: loads and stores into the region
 * through libdaxfs, no system call.  A kernel descriptor goes to libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload.h"
#include "lib/copy.h"

#define IO_MAX	0x7ffff000L	/* what Linux moves in one call */

enum { IO_READ, IO_WRITE };

/* An append under a file size limit: checked against the size now (an
 * append racing it may pass the limit by its own length). */
static int append_limited(struct daxfs_handle *h, struct pl_desc *d,
			  const void *buf, size_t *len)
{
	struct daxfs_attr st;
	int err;

	if (!pl_fsize_limited())
		return 0;
	err = daxfs_fstat(h, d->ino, &st);
	return err ? err : pl_fsize_write(st.size, len);
}

/* Why d refuses a transfer in direction dir (-errno), or 0. */
static int io_refused(const struct pl_desc *d, int dir, int acc)
{
	if (acc & O_PATH)
		return -EBADF;
	if (d->kind == PL_KIND_DIR)
		return dir == IO_READ ? -EISDIR : -EBADF;
	if (dir == IO_READ && (acc & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (dir == IO_WRITE && (acc & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	return 0;
}

/*
 * One transfer on a region descriptor.  off < 0: at (and advancing) the
 * description's offset.  Returns the count or -errno.
 */
/* The kernel's rw_verify_area, before the count is cut to IO_MAX: a
 * negative count, or an end past the largest offset, is EINVAL (reads
 * there answered 0 bytes, writes EFBIG). */
static int rw_verify(uint64_t at, size_t len)
{
	return (ssize_t)len < 0 || at > (uint64_t)INT64_MAX - len ? -EINVAL : 0;
}

static ssize_t region_io(struct pl_desc *d, int dir, void *buf, size_t len,
			 off_t off)
{
	struct daxfs_handle *h = pl_handle();
	int acc = atomic_load(&d->flags) & (O_ACCMODE | O_PATH | O_APPEND);
	uint64_t at;
	int64_t n;

	if (!h)
		return -errno;
	n = io_refused(d, dir, acc);
	if (n)
		return n;
	n = rw_verify(off < 0 ? atomic_load(&d->off) : (uint64_t)off, len);
	if (n)
		return n;
	if (len > IO_MAX)
		len = IO_MAX;
	if (dir == IO_READ) {
		at = off < 0 ? atomic_load(&d->off) : (uint64_t)off;
		n = daxfs_pread_fc(h, d->ino, &d->fc, buf, len, at);
	} else if (acc & O_APPEND) {
		/* Linux appends even with pwrite on O_APPEND. */
		n = append_limited(h, d, buf, &len);
		if (!n)
			n = daxfs_append_fc(h, d->ino, &d->fc, buf, len, &at);
	} else {
		at = off < 0 ? atomic_load(&d->off) : (uint64_t)off;
		n = pl_fsize_write(at, &len);
		if (!n)
			n = daxfs_pwrite_fc(h, d->ino, &d->fc, buf, len, at);
	}
	if (n > 0 && off < 0)
		atomic_store(&d->off, at + n);
	return n;
}

/*
 * A read at an offset with no lock and no lane (docs/preload.md "Reads
 * without a lock"): the map's sequence around it stands in for the map
 * lock, the lane-free read (daxfs_pread_try) for the lib call.  -EAGAIN:
 * read the locked way; anything that read would report an error for goes
 * there.  Only pread: a read at the description's offset
 * stores the offset after the read, which must not land in a
 * description reused meanwhile (a close and an open by other threads).
 */
static ssize_t read_try(int fd, void *buf, size_t len, uint64_t at)
{
	struct daxfs_handle *h = pl_handle_ready();
	struct pl_desc *d;
	unsigned int seq;
	int64_t n;

	d = h ? pl_fd_peek(fd, &seq) : NULL;
	if (!d || d->kind != PL_KIND_REG ||
	    io_refused(d, IO_READ, atomic_load(&d->flags)))
		return -EAGAIN;
	if (len > IO_MAX)
		len = IO_MAX;
	n = daxfs_pread_try(h, d->ino, &d->fc, buf, len, at);
	if (n < 0 || !pl_fd_peek_still(seq))
		return -EAGAIN;
	return n;
}

/* What region_io will copy of buf, faulted in with no lock held. */
static void touch_io(const void *buf, size_t len)
{
	daxfs_user_touch(buf, len > IO_MAX ? IO_MAX : len);
}

static ssize_t fd_io(int fd, int dir, void *buf, size_t len, off_t off)
{
	struct pl_desc *d;
	ssize_t n;

	if (dir == IO_READ && off >= 0 && !rw_verify((uint64_t)off, len)) {
		n = read_try(fd, buf, len, (uint64_t)off);
		if (n >= 0)
			return n;
	}
	pl_handle();	/* lock order: handle before the map */
	/* a fault that blocks waits here, not holding the map (every
	 * open of the process waits for it) nor a lane */
	touch_io(buf, len);
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	n = region_io(d, dir, buf, len, off);
	pl_fd_put(d);
	return n < 0 ? pl_fail(n) : n;
}

PUBLIC ssize_t read(int fd, void *buf, size_t len)
{
	REAL(ssize_t, read, int, void *, size_t);

	if (!pl_fd_is_region(fd))
		return real_read(fd, buf, len);
	return fd_io(fd, IO_READ, buf, len, -1);
}

PUBLIC ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		abort();
	return read(fd, buf, len);
}

PUBLIC ssize_t write(int fd, const void *buf, size_t len)
{
	REAL(ssize_t, write, int, const void *, size_t);

	if (!pl_fd_is_region(fd))
		return real_write(fd, buf, len);
	return fd_io(fd, IO_WRITE, (void *)buf, len, -1);
}

PUBLIC ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	REAL(ssize_t, pread64, int, void *, size_t, off_t);

	if (!pl_fd_is_region(fd))
		return real_pread64(fd, buf, len, off);
	if (off < 0)
		return pl_fail(-EINVAL);
	return fd_io(fd, IO_READ, buf, len, off);
}

PUBLIC ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	return pread64(fd, buf, len, off);
}

PUBLIC ssize_t __pread_chk(int fd, void *buf, size_t len, off_t off,
			   size_t buflen)
{
	if (len > buflen)
		abort();
	return pread64(fd, buf, len, off);
}

PUBLIC ssize_t __pread64_chk(int fd, void *buf, size_t len, off_t off,
			     size_t buflen)
{
	return __pread_chk(fd, buf, len, off, buflen);
}

PUBLIC ssize_t pwrite64(int fd, const void *buf, size_t len, off_t off)
{
	REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);

	if (!pl_fd_is_region(fd))
		return real_pwrite64(fd, buf, len, off);
	if (off < 0)
		return pl_fail(-EINVAL);
	return fd_io(fd, IO_WRITE, (void *)buf, len, off);
}

PUBLIC ssize_t pwrite(int fd, const void *buf, size_t len, off_t off)
{
	return pwrite64(fd, buf, len, off);
}

/* Vectors: one region_io per segment, stopping at the first short one
 * (not atomic as one call, see docs/preload.md). */
static ssize_t region_iov(int fd, int dir, const struct iovec *iov, int cnt,
			  off_t off)
{
	struct pl_desc *d;
	ssize_t total = 0, n = 0;
	size_t sum = 0;
	int i;

	if (cnt < 0 || cnt > IOV_MAX)
		return pl_fail(-EINVAL);
	pl_handle();
	for (i = 0; i < cnt; i++) {	/* as fd_io */
		touch_io(iov[i].iov_base, iov[i].iov_len);
		sum = sum + iov[i].iov_len < sum ? SIZE_MAX :
		      sum + iov[i].iov_len;
	}
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	/* the whole vector first, as the kernel: no segment moves if its
	 * sum is refused */
	n = rw_verify(off < 0 ? atomic_load(&d->off) : (uint64_t)off, sum);
	if (n) {
		pl_fd_put(d);
		return pl_fail(n);
	}
	for (i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		n = region_io(d, dir, iov[i].iov_base, iov[i].iov_len,
			      off < 0 ? -1 : off + total);
		if (n <= 0)
			break;
		total += n;
		if ((size_t)n < iov[i].iov_len)
			break;
	}
	pl_fd_put(d);
	if (n < 0 && !total)
		return pl_fail(n);
	return total;
}

PUBLIC ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, readv, int, const struct iovec *, int);

	if (!pl_fd_is_region(fd))
		return real_readv(fd, iov, cnt);
	return region_iov(fd, IO_READ, iov, cnt, -1);
}

PUBLIC ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	REAL(ssize_t, writev, int, const struct iovec *, int);

	if (!pl_fd_is_region(fd))
		return real_writev(fd, iov, cnt);
	return region_iov(fd, IO_WRITE, iov, cnt, -1);
}

#define IOV_AT(name, dir)						\
PUBLIC ssize_t name(int fd, const struct iovec *iov, int cnt, off_t off)\
{									\
	REAL(ssize_t, name, int, const struct iovec *, int, off_t);	\
									\
	if (!pl_fd_is_region(fd))					\
		return real_##name(fd, iov, cnt, off);			\
	if (off < 0)							\
		return pl_fail(-EINVAL);				\
	return region_iov(fd, dir, iov, cnt, off);			\
}

IOV_AT(preadv, IO_READ)
IOV_AT(preadv64, IO_READ)
IOV_AT(pwritev, IO_WRITE)
IOV_AT(pwritev64, IO_WRITE)

#define IOV_AT2(name, dir)						\
PUBLIC ssize_t name(int fd, const struct iovec *iov, int cnt, off_t off,\
		    int flags)						\
{									\
	REAL(ssize_t, name, int, const struct iovec *, int, off_t, int);\
									\
	if (!pl_fd_is_region(fd))					\
		return real_##name(fd, iov, cnt, off, flags);		\
	if (off < -1)							\
		return pl_fail(-EINVAL);				\
	return region_iov(fd, dir, iov, cnt, off);			\
}

IOV_AT2(preadv2, IO_READ)
IOV_AT2(preadv64v2, IO_READ)
IOV_AT2(pwritev2, IO_WRITE)
IOV_AT2(pwritev64v2, IO_WRITE)

static int desc_size(struct pl_desc *d, uint64_t *size)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_attr a;
	int err;

	if (!h)
		return -errno;
	err = daxfs_fstat(h, d->ino, &a);
	*size = a.size;
	return err;
}

PUBLIC off_t lseek64(int fd, off_t off, int whence)
{
	REAL(off_t, lseek64, int, off_t, int);
	struct pl_desc *d;
	uint64_t size = 0;
	int64_t pos = -1;
	int err = 0;

	if (!pl_fd_is_region(fd))
		return real_lseek64(fd, off, whence);
	pl_handle();
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	if (whence == SEEK_END)
		err = desc_size(d, &size);
	if (!err) {
		switch (whence) {
		case SEEK_SET:
			pos = off;
			break;
		case SEEK_CUR:
			pos = (int64_t)atomic_load(&d->off) + off;
			break;
		case SEEK_END:
			pos = (int64_t)size + off;
			break;
		case SEEK_DATA:	/* the real holes (core/extent.c) */
		case SEEK_HOLE:
			if (off < 0)
				err = -ENXIO;
			else
				err = daxfs_file_seek(pl_handle(), d->ino,
						      (uint64_t)off, whence,
						      (uint64_t *)&pos);
			break;
		default:
			err = -EINVAL;
		}
	}
	if (!err && pos < 0)
		err = -EINVAL;
	if (!err)
		atomic_store(&d->off, pos);
	pl_fd_put(d);
	return err ? pl_fail(err) : pos;
}

PUBLIC off_t lseek(int fd, off_t off, int whence)
{
	return lseek64(fd, off, whence);
}

/* fsync: in posix mode the region is the file's memory already. */
static int region_sync(int fd)
{
	struct pl_desc *d = pl_fd_get(fd);

	if (!d)
		return pl_fail(-EBADF);
	pl_fd_put(d);
	return 0;
}

PUBLIC int fsync(int fd)
{
	REAL(int, fsync, int);

	return pl_fd_is_region(fd) ? region_sync(fd) : real_fsync(fd);
}

PUBLIC int fdatasync(int fd)
{
	REAL(int, fdatasync, int);

	return pl_fd_is_region(fd) ? region_sync(fd) : real_fdatasync(fd);
}

static int region_truncate(int fd, uint64_t size)
{
	struct daxfs_handle *h = pl_handle();
	struct daxfs_attr a;
	struct pl_desc *d;
	int err;

	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	if (!h)
		err = -errno;
	else if (d->kind != PL_KIND_REG || (atomic_load(&d->flags) & O_PATH) ||
		 (atomic_load(&d->flags) & O_ACCMODE) == O_RDONLY)
		/* the kernel: EINVAL for anything but a regular file open
		 * for writing, a directory too (truncate(2) says EISDIR) */
		err = -EINVAL;
	else if (!(err = pl_fsize_grow_ino(h, d->ino, size)) &&
		 !(err = daxfs_fstat(h, d->ino, &a)) &&
		 !(err = daxfs_ftruncate_fc(h, d->ino, &d->fc, size))) {
		pl_map_cut(d->ino);
		/* the kernel sets the times on every truncate, the size
		 * changed or not; the library only where it changed */
		if (a.size == size)
			err = pl_ino_touch(h, d->ino);
	}
	pl_fd_put(d);
	return err;
}

PUBLIC int ftruncate64(int fd, off_t len)
{
	REAL(int, ftruncate64, int, off_t);
	int err;

	if (!pl_fd_is_region(fd))
		return real_ftruncate64(fd, len);
	if (len < 0)
		return pl_fail(-EINVAL);
	err = region_truncate(fd, len);
	return err ? pl_fail(err) : 0;
}

PUBLIC int ftruncate(int fd, off_t len)
{
	return ftruncate64(fd, len);
}

/*
 * fallocate through the core (docs/files.md "fallocate"): mode 0 and
 * KEEP_SIZE allocate pages, PUNCH_HOLE frees them, ZERO_RANGE zeroes; a
 * descriptor not open for writing gets EBADF, as from the kernel.
 */
static int region_fallocate(int fd, int mode, off_t off, off_t len)
{
	struct daxfs_handle *h = pl_handle();
	struct pl_desc *d;
	int err = 0;

	if (off < 0 || len <= 0)
		return -EINVAL;
	d = pl_fd_get(fd);
	if (!d)
		return -EBADF;
	if (!h)
		err = -errno;
	else if ((atomic_load(&d->flags) & O_ACCMODE) == O_RDONLY ||
		 (atomic_load(&d->flags) & O_PATH))
		err = -EBADF;
	else if (d->kind != PL_KIND_REG)
		err = d->kind == PL_KIND_DIR ? -EISDIR : -ENODEV;
	else if (!(mode & FALLOC_FL_KEEP_SIZE))	/* a size that grows is a write's */
		err = pl_fsize_grow_ino(h, d->ino, (uint64_t)off + (uint64_t)len);
	if (!err)
		err = daxfs_file_fallocate(h, d->ino, mode, (uint64_t)off,
					   (uint64_t)len);
	pl_fd_put(d);
	return err;
}

PUBLIC int fallocate64(int fd, int mode, off_t off, off_t len)
{
	REAL(int, fallocate64, int, int, off_t, off_t);
	int err;

	if (!pl_fd_is_region(fd))
		return real_fallocate64(fd, mode, off, len);
	err = region_fallocate(fd, mode, off, len);
	return err ? pl_fail(err) : 0;
}

PUBLIC int fallocate(int fd, int mode, off_t off, off_t len)
{
	return fallocate64(fd, mode, off, len);
}

PUBLIC int posix_fallocate64(int fd, off_t off, off_t len)
{
	REAL(int, posix_fallocate64, int, off_t, off_t);

	if (!pl_fd_is_region(fd))
		return real_posix_fallocate64(fd, off, len);
	return -region_fallocate(fd, 0, off, len);
}

PUBLIC int posix_fallocate(int fd, off_t off, off_t len)
{
	return posix_fallocate64(fd, off, len);
}

PUBLIC int posix_fadvise64(int fd, off_t off, off_t len, int advice)
{
	REAL(int, posix_fadvise64, int, off_t, off_t, int);

	if (!pl_fd_is_region(fd))
		return real_posix_fadvise64(fd, off, len, advice);
	return 0;	/* nothing to read ahead: it is memory */
}

PUBLIC int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
	return posix_fadvise64(fd, off, len, advice);
}

/*
 * copy_file_range and sendfile with a region descriptor on either side:
 * a copy through a buffer, with the offsets each call's rules give.
 * once: one read and its write only (splice: a pipe gives what it has).
 */
static ssize_t copy_fds(int in, off_t *in_off, int out, off_t *out_off,
			size_t len, bool once)
{
	static __thread char *buf;
	size_t chunk = 1 << 20;
	ssize_t total = 0, r, w;

	if (!buf && !(buf = malloc(chunk)))
		return pl_fail(-ENOMEM);
	while ((size_t)total < len) {
		size_t want = len - total < chunk ? len - total : chunk;

		r = in_off ? pread64(in, buf, want, *in_off)
			   : read(in, buf, want);
		if (r <= 0) {
			if (r < 0 && !total)
				return -1;
			break;
		}
		w = out_off ? pwrite64(out, buf, r, *out_off)
			    : write(out, buf, r);
		if (w < 0 && !total)
			return -1;
		if (w <= 0)
			break;
		if (in_off)
			*in_off += w;
		else if (w < r)
			lseek64(in, w - r, SEEK_CUR);
		if (out_off)
			*out_off += w;
		total += w;
		if (once || w < r)
			break;
	}
	return total;
}

/* Where fd's next read or write goes: *off, or the descriptor's offset. */
static int64_t cfr_pos(int fd, const off_t *off)
{
	return off ? *off : lseek64(fd, 0, SEEK_CUR);
}

/*
 * copy_file_range's checks, in Linux's order (generic_copy_file_checks):
 * regular files only, in readable, out writable and not O_APPEND, no
 * wrap, the length cut to in's end, and no overlap within one file.
 * 0 and *len cut, or -errno.
 */
static int cfr_checks(int in, const off_t *in_off, int out,
		      const off_t *out_off, size_t *len)
{
	struct stat si, so;
	int64_t pi, po;
	int fi, fo;

	if (fstat(in, &si) || fstat(out, &so))
		return -errno;
	if (S_ISDIR(si.st_mode) || S_ISDIR(so.st_mode))
		return -EISDIR;
	if (!S_ISREG(si.st_mode) || !S_ISREG(so.st_mode))
		return -EINVAL;
	fi = fcntl(in, F_GETFL);
	fo = fcntl(out, F_GETFL);
	if (fi < 0 || fo < 0 || (fi & O_ACCMODE) == O_WRONLY ||
	    (fo & O_ACCMODE) == O_RDONLY || (fo & O_APPEND))
		return -EBADF;
	pi = cfr_pos(in, in_off);
	po = cfr_pos(out, out_off);
	if (pi < 0 || po < 0)
		return -EINVAL;
	if ((uint64_t)pi + *len < (uint64_t)pi ||
	    (uint64_t)po + *len < (uint64_t)po)
		return -EOVERFLOW;
	if (pi >= si.st_size)
		*len = 0;
	else if (*len > (uint64_t)(si.st_size - pi))
		*len = si.st_size - pi;
	if (si.st_dev == so.st_dev && si.st_ino == so.st_ino &&
	    (uint64_t)po + *len > (uint64_t)pi &&
	    (uint64_t)po < (uint64_t)pi + *len)
		return -EINVAL;
	return 0;
}

PUBLIC ssize_t copy_file_range(int in, off_t *in_off, int out, off_t *out_off,
			       size_t len, unsigned int flags)
{
	REAL(ssize_t, copy_file_range, int, off_t *, int, off_t *, size_t,
	     unsigned int);
	int err;

	if (!pl_fd_is_region(in) && !pl_fd_is_region(out))
		return real_copy_file_range(in, in_off, out, out_off, len,
					    flags);
	if (flags)
		return pl_fail(-EINVAL);
	err = cfr_checks(in, in_off, out, out_off, &len);
	if (err)
		return pl_fail(err);
	return len ? copy_fds(in, in_off, out, out_off, len, false) : 0;
}

PUBLIC ssize_t sendfile64(int out, int in, off_t *off, size_t len)
{
	REAL(ssize_t, sendfile64, int, int, off_t *, size_t);

	if (!pl_fd_is_region(in) && !pl_fd_is_region(out))
		return real_sendfile64(out, in, off, len);
	return copy_fds(in, off, out, NULL, len, false);
}

PUBLIC ssize_t sendfile(int out, int in, off_t *off, size_t len)
{
	return sendfile64(out, in, off, len);
}

static bool is_pipe(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISFIFO(st.st_mode);
}

/*
 * splice's checks for a region descriptor on one side and a pipe on the
 * other, in Linux's order (do_splice): the offset of a pipe is ESPIPE,
 * the region side must be open for the direction (EBADF) and not
 * O_APPEND when written (EINVAL).  0 or -errno.
 */
static int splice_checks(int region, int pipe_fd, const off_t *pipe_off,
			 bool to_region)
{
	int fl = fcntl(region, F_GETFL);

	if (!is_pipe(pipe_fd))
		return -EINVAL;		/* splice needs a pipe on one side */
	if (pipe_off)
		return -ESPIPE;
	if (fl < 0)
		return -EBADF;
	if (to_region ? (fl & O_ACCMODE) == O_RDONLY || (fl & O_PATH)
		      : (fl & O_ACCMODE) == O_WRONLY || (fl & O_PATH))
		return -EBADF;
	if (to_region && (fl & O_APPEND))
		return -EINVAL;
	return 0;
}

/* Whether the pipe can be read (POLLIN) or written (POLLOUT) now: a
 * splice with SPLICE_F_NONBLOCK must not wait for it. */
static bool pipe_ready(int fd, short ev)
{
	struct pollfd p = { .fd = fd, .events = ev };

	return poll(&p, 1, 0) == 1 && (p.revents & (ev | POLLHUP));
}

/*
 * splice between a region file and a pipe: one pass of copy_fds, as much
 * as the pipe gives or takes in one step (a pipe's worth, 64 KiB; a page
 * with SPLICE_F_NONBLOCK, which never waits on the pipe: EAGAIN).  The
 * file side moves its offset, or *off, as splice does.  Until 2026-12-05
 * the kernel got the region descriptor's stand-in: EBADF.
 */
PUBLIC ssize_t splice(int in, off_t *in_off, int out, off_t *out_off,
		      size_t len, unsigned int flags)
{
	REAL(ssize_t, splice, int, off_t *, int, off_t *, size_t,
	     unsigned int);
	bool to_region = pl_fd_is_region(out), nonblock;
	int pipe_fd = to_region ? in : out, err;
	size_t step = 1 << 16;

	if (!to_region && !pl_fd_is_region(in))
		return real_splice(in, in_off, out, out_off, len, flags);
	if (pl_fd_is_region(in) && to_region)
		return pl_fail(-EINVAL);	/* no pipe */
	err = splice_checks(to_region ? out : in, pipe_fd,
			    to_region ? in_off : out_off, to_region);
	if (err)
		return pl_fail(err);
	nonblock = (flags & SPLICE_F_NONBLOCK) ||
		   (fcntl(pipe_fd, F_GETFL) & O_NONBLOCK);
	if (nonblock) {
		step = PIPE_BUF;	/* a write this small never waits */
		if (!pipe_ready(pipe_fd, to_region ? POLLIN : POLLOUT))
			return pl_fail(-EAGAIN);
	}
	if (!len)
		return 0;
	return copy_fds(in, to_region ? NULL : in_off, out,
			to_region ? out_off : NULL, len < step ? len : step,
			true);
}

/*
 * mmap of a region file: a shared mapping maps the file's pages
 * themselves (map.c); a private one gets a copy of the file (what
 * MAP_PRIVATE promises until the file changes).  A MAP_FIXED mapping of
 * anything over a shared region mapping replaces it (map.c forgets it).
 */
PUBLIC void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off)
{
	REAL(void *, mmap64, void *, size_t, int, int, int, off_t);
	void *p;
	ssize_t n, done = 0;

	if ((flags & MAP_ANONYMOUS) || !pl_fd_is_region(fd)) {
		if ((flags & MAP_FIXED) && pl_map_any())
			return pl_map_fixed(real_mmap64, addr, len, prot,
					    flags, fd, off);
		return real_mmap64(addr, len, prot, flags, fd, off);
	}
	if ((flags & MAP_TYPE) != MAP_PRIVATE)
		return pl_map_shared(addr, len, prot, flags, fd, off);
	p = real_mmap64(addr, len, PROT_READ | PROT_WRITE,
			(flags & ~MAP_TYPE) | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	while ((size_t)done < len) {
		n = pread64(fd, (char *)p + done, len - done, off + done);
		if (n < 0) {
			munmap(p, len);
			return MAP_FAILED;
		}
		if (n == 0)
			break;
		done += n;
	}
	if (prot != (PROT_READ | PROT_WRITE) && mprotect(p, len, prot)) {
		munmap(p, len);
		return MAP_FAILED;
	}
	return p;
}

PUBLIC void *mmap(void *addr, size_t len, int prot, int flags, int fd,
		  off_t off)
{
	return mmap64(addr, len, prot, flags, fd, off);
}
