// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * poll and select with region descriptors.  The kernel answers POLLNVAL
 * for the O_PATH reservation; a region file is a regular file, always
 * ready for reading and writing, so it is answered here, and the kernel
 * is asked about the rest (without waiting when a region file is ready).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>

#include "preload.h"

#define FILE_READY	(POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

/* Copies fds, hiding region entries from the kernel (fd -1).  Returns
 * how many region entries are ready, or -1 when there are none. */
static int poll_split(const struct pollfd *fds, nfds_t n, struct pollfd *copy)
{
	int region = 0, ready = 0;
	nfds_t i;

	for (i = 0; i < n; i++) {
		copy[i] = fds[i];
		if (!pl_fd_is_region(fds[i].fd))
			continue;
		region = 1;
		copy[i].fd = -1;
		ready += (fds[i].events & FILE_READY) != 0;
	}
	return region ? ready : -1;
}

static int poll_merge(struct pollfd *fds, nfds_t n, const struct pollfd *copy,
		      int kernel)
{
	int total = kernel;
	nfds_t i;

	for (i = 0; i < n; i++) {
		/* the kernel zeroed the hidden entries' revents */
		if (copy[i].fd == -1 && fds[i].fd >= 0) {
			fds[i].revents = fds[i].events & FILE_READY;
			total += fds[i].revents != 0;
		} else {
			fds[i].revents = copy[i].revents;
		}
	}
	return total;
}

PUBLIC int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		 const sigset_t *mask)
{
	REAL(int, ppoll, struct pollfd *, nfds_t, const struct timespec *,
	     const sigset_t *);
	static const struct timespec zero;
	struct pollfd *copy;
	int ready, r;

	if (!n || !fds)
		return real_ppoll(fds, n, ts, mask);
	copy = malloc(n * sizeof(*copy));
	if (!copy)
		return pl_fail(-ENOMEM);
	ready = poll_split(fds, n, copy);
	if (ready < 0) {
		free(copy);
		return real_ppoll(fds, n, ts, mask);
	}
	r = real_ppoll(copy, n, ready ? &zero : ts, mask);
	if (r >= 0)
		r = poll_merge(fds, n, copy, r);
	free(copy);
	return r;
}

PUBLIC int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, (timeout % 1000) * 1000000L };

	return ppoll(fds, n, timeout < 0 ? NULL : &ts, NULL);
}

PUBLIC int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t len)
{
	if (len / sizeof(*fds) < n)
		abort();
	return poll(fds, n, timeout);
}

/* select: region descriptors are ready for reading and writing, never
 * exceptional; they are taken out of the sets the kernel sees. */
static int select_split(int nfds, fd_set *r, fd_set *w, fd_set *e,
			fd_set *rr, fd_set *rw)
{
	int fd, region = 0;

	FD_ZERO(rr);
	FD_ZERO(rw);
	for (fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		if (!pl_fd_is_region(fd))
			continue;
		if (r && FD_ISSET(fd, r)) {
			FD_CLR(fd, r);
			FD_SET(fd, rr);
			region++;
		}
		if (w && FD_ISSET(fd, w)) {
			FD_CLR(fd, w);
			FD_SET(fd, rw);
			region++;
		}
		if (e)
			FD_CLR(fd, e);
	}
	return region;
}

static int select_merge(int nfds, fd_set *r, fd_set *w, const fd_set *rr,
			const fd_set *rw, int kernel)
{
	int fd;

	for (fd = 0; fd < nfds && fd < FD_SETSIZE; fd++) {
		if (FD_ISSET(fd, rr)) {
			FD_SET(fd, r);
			kernel++;
		}
		if (FD_ISSET(fd, rw)) {
			FD_SET(fd, w);
			kernel++;
		}
	}
	return kernel;
}

PUBLIC int pselect(int nfds, fd_set *r, fd_set *w, fd_set *e,
		   const struct timespec *ts, const sigset_t *mask)
{
	REAL(int, pselect, int, fd_set *, fd_set *, fd_set *,
	     const struct timespec *, const sigset_t *);
	static const struct timespec zero;
	fd_set rr, rw;
	int k;

	if (!select_split(nfds, r, w, e, &rr, &rw))
		return real_pselect(nfds, r, w, e, ts, mask);
	k = real_pselect(nfds, r, w, e, &zero, mask);
	if (k < 0)
		return k;
	return select_merge(nfds, r, w, &rr, &rw, k);
}

PUBLIC int select(int nfds, fd_set *r, fd_set *w, fd_set *e,
		  struct timeval *tv)
{
	struct timespec ts;

	if (tv) {
		ts.tv_sec = tv->tv_sec;
		ts.tv_nsec = tv->tv_usec * 1000;
	}
	return pselect(nfds, r, w, e, tv ? &ts : NULL, NULL);
}
