// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * FILE streams on region files.  glibc's fopen opens and reads through
 * its internal system calls, which no preload can see, so a region stream
 * is a fopencookie stream whose cookie is our descriptor; fileno() gives
 * that descriptor back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload.h"

#define MAX_STREAMS	1024

struct cookie {
	int fd;
	FILE *f;
};

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cookie *streams[MAX_STREAMS];

static ssize_t ck_read(void *c, char *buf, size_t len)
{
	return read(((struct cookie *)c)->fd, buf, len);
}

static ssize_t ck_write(void *c, const char *buf, size_t len)
{
	ssize_t n = write(((struct cookie *)c)->fd, buf, len);

	/* fopencookie: a write returns 0 on error, never -1. */
	return n < 0 ? 0 : n;
}

static int ck_seek(void *c, off64_t *off, int whence)
{
	off_t r = lseek(((struct cookie *)c)->fd, *off, whence);

	if (r < 0)
		return -1;
	*off = r;
	return 0;
}

static int ck_close(void *c)
{
	struct cookie *ck = c;
	int i, r;

	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i] == ck)
			streams[i] = NULL;
	pthread_mutex_unlock(&streams_lock);
	r = close(ck->fd);
	free(ck);
	return r;
}

static int mode_flags(const char *mode)
{
	int fl;

	switch (mode[0]) {
	case 'r':
		fl = O_RDONLY;
		break;
	case 'w':
		fl = O_WRONLY | O_CREAT | O_TRUNC;
		break;
	case 'a':
		fl = O_WRONLY | O_CREAT | O_APPEND;
		break;
	default:
		return -1;
	}
	for (mode++; *mode && *mode != ','; mode++) {
		if (*mode == '+')
			fl = (fl & ~O_ACCMODE) | O_RDWR;
		else if (*mode == 'x')
			fl |= O_EXCL;
		else if (*mode == 'e')
			fl |= O_CLOEXEC;
	}
	return fl;
}

static FILE *stream_for(int fd, const char *mode)
{
	cookie_io_functions_t io = {
		.read = ck_read, .write = ck_write, .seek = ck_seek,
		.close = ck_close,
	};
	struct cookie *ck = malloc(sizeof(*ck));
	int i;

	if (!ck)
		return NULL;
	ck->fd = fd;
	ck->f = fopencookie(ck, mode, io);
	if (!ck->f) {
		free(ck);
		return NULL;
	}
	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS && streams[i]; i++)
		;
	if (i < MAX_STREAMS)
		streams[i] = ck;
	pthread_mutex_unlock(&streams_lock);
	if (i == MAX_STREAMS)
		pl_debug("more than %d region streams: fileno() of fd %d "
			 "gives -1", MAX_STREAMS, fd);
	return ck->f;
}

static FILE *do_fopen(const char *path, const char *mode, int large)
{
	char buf[PL_PATH_MAX];
	int link = pl_fd_link_exact(path);
	int r = link >= 0 ? PL_REGION : pl_route(AT_FDCWD, path, buf), fl, fd;
	FILE *f;

	if (r < 0)
		return NULL;
	if (r != PL_REGION) {
		if (large) {
			REAL(FILE *, fopen64, const char *, const char *);
			return real_fopen64(PL_KPATH(r, path, buf), mode);
		}
		REAL(FILE *, fopen, const char *, const char *);
		return real_fopen(PL_KPATH(r, path, buf), mode);
	}
	fl = mode_flags(mode);
	if (fl < 0) {
		errno = EINVAL;
		return NULL;
	}
	/* "/dev/stdout" of a region descriptor: its file (fdlink.c) */
	fd = link >= 0 ? pl_open_fd_link(link, fl, 0666)
		       : pl_open_region(buf, fl, 0666);
	if (fd < 0)
		return NULL;
	/* fdopen: a link out of the region opened a kernel file */
	f = fdopen(fd, mode);
	if (!f)
		close(fd);
	return f;
}

PUBLIC FILE *fopen(const char *path, const char *mode)
{
	return do_fopen(path, mode, 0);
}

PUBLIC FILE *fopen64(const char *path, const char *mode)
{
	return do_fopen(path, mode, 1);
}

PUBLIC FILE *fdopen(int fd, const char *mode)
{
	REAL(FILE *, fdopen, int, const char *);

	if (!pl_fd_is_region(fd))
		return real_fdopen(fd, mode);
	return stream_for(fd, mode);
}

/*
 * dprintf and vdprintf write with glibc's internal write, which the
 * preload does not see: on a region descriptor they said EBADF.  The text
 * is formatted here and written with write(), whole (as glibc's stream
 * does, retrying a short write).
 */
PUBLIC int vdprintf(int fd, const char *fmt, va_list ap)
{
	REAL(int, vdprintf, int, const char *, va_list);
	char small[512], *buf = small;
	size_t done = 0;
	va_list again;
	ssize_t w;
	int n;

	if (!pl_fd_is_region(fd))
		return real_vdprintf(fd, fmt, ap);
	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		buf = malloc((size_t)n + 1);
		if (!buf) {
			va_end(again);
			return -1;
		}
		vsnprintf(buf, (size_t)n + 1, fmt, again);
	}
	va_end(again);
	while (n > 0 && done < (size_t)n) {
		w = write(fd, buf + done, (size_t)n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			n = -1;
			break;
		}
		done += (size_t)w;
	}
	if (buf != small)
		free(buf);
	return n;
}

PUBLIC int dprintf(int fd, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vdprintf(fd, fmt, ap);
	va_end(ap);
	return n;
}

/* _FORTIFY_SOURCE forms (flag: the checks glibc would make of fmt) */
PUBLIC int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	return vdprintf(fd, fmt, ap);
}

PUBLIC int __dprintf_chk(int fd, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vdprintf(fd, fmt, ap);
	va_end(ap);
	return n;
}

static int stream_fd(FILE *f)
{
	int i, fd = -2;

	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < MAX_STREAMS; i++)
		if (streams[i] && streams[i]->f == f)
			fd = streams[i]->fd;
	pthread_mutex_unlock(&streams_lock);
	return fd;
}

PUBLIC int fileno(FILE *f)
{
	REAL(int, fileno, FILE *);
	int fd = real_fileno(f);

	return fd >= 0 ? fd : (fd = stream_fd(f)) >= 0 ? fd : real_fileno(f);
}

PUBLIC int fileno_unlocked(FILE *f)
{
	return fileno(f);
}

PUBLIC FILE *freopen(const char *path, const char *mode, FILE *f)
{
	REAL(FILE *, freopen, const char *, const char *, FILE *);
	char buf[PL_PATH_MAX];
	int r = path ? pl_route_follow(AT_FDCWD, path, buf) : PL_KERNEL;

	if (r < 0)
		return NULL;
	if (r == PL_REGION) {
		/* A cookie stream cannot take the place of stdin/stdout. */
		pl_debug("freopen of region path %s: not supported", buf);
		errno = EOPNOTSUPP;
		return NULL;
	}
	return real_freopen(PL_KPATH(r, path, buf), mode, f);
}

PUBLIC FILE *freopen64(const char *path, const char *mode, FILE *f)
{
	return freopen(path, mode, f);
}

/*
 * stdin, stdout and stderr read and write through glibc's internal calls
 * too.  While descriptor 0, 1 or 2 is a region file (a shell redirection
 * before exec, or dup2 onto it), the program's std stream is a cookie
 * stream on it; the original comes back when the descriptor stops being
 * a region file.
 */
static FILE *std_saved[3];
static FILE *std_ours[3];

static FILE **std_var(int fd)
{
	return fd == 0 ? &stdin : fd == 1 ? &stdout : &stderr;
}

void pl_std_fix(int fd)
{
	static const char *const modes[3] = { "r", "w", "w" };
	FILE **var, *f;

	if (fd < 0 || fd > 2)
		return;
	var = std_var(fd);
	if (pl_fd_is_region(fd)) {
		if (std_ours[fd] && *var == std_ours[fd])
			return;
		f = stream_for(fd, modes[fd]);
		if (!f)
			return;
		if (fd == 2)
			setvbuf(f, NULL, _IONBF, 0);
		if (!std_ours[fd])
			std_saved[fd] = *var;
		std_ours[fd] = f;
		*var = f;
		return;
	}
	if (std_ours[fd] && *var == std_ours[fd]) {
		fflush(std_ours[fd]);
		*var = std_saved[fd];
		/* Not fclose: that would close the kernel descriptor now at
		 * fd; the cookie and its FILE are left behind (small). */
		std_ours[fd] = NULL;
	}
}
