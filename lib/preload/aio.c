// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * POSIX asynchronous I/O on region descriptors (docs/preload.md "POSIX
 * AIO").  glibc runs a request in a helper thread with its own system
 * calls, which reach the kernel with the region descriptor's stand-in:
 * every request failed with EBADF.  A request on a region descriptor is
 * made here at once, with the preload's own calls, and completes before
 * the submitting call returns: its error code and return value are
 * stored in the control block, where glibc's aio_error, aio_return and
 * aio_suspend read them, then its notification is sent (a signal with
 * si_code SI_ASYNCIO, or a new thread).  Requests on kernel descriptors
 * go to glibc as before; lio_listio splits its list between the two.
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"

struct notify_call {
	void (*fn)(union sigval);
	union sigval value;
};

static void *notify_thread(void *arg)
{
	struct notify_call c = *(struct notify_call *)arg;

	free(arg);
	c.fn(c.value);
	return NULL;
}

/* Sends sev's notification of a completed request, as glibc's would. */
static void notify(const struct sigevent *sev)
{
	struct notify_call *c;
	int detach;
	pthread_t t;
	siginfo_t si;

	switch (sev->sigev_notify) {
	case SIGEV_SIGNAL:
	case SIGEV_THREAD_ID:
		memset(&si, 0, sizeof(si));
		si.si_signo = sev->sigev_signo;
		si.si_code = SI_ASYNCIO;
		si.si_pid = getpid();
		si.si_uid = getuid();
		si.si_value = sev->sigev_value;
		if (sev->sigev_notify == SIGEV_SIGNAL)
			syscall(SYS_rt_sigqueueinfo, getpid(), sev->sigev_signo,
				&si);
		else
			syscall(SYS_rt_tgsigqueueinfo, getpid(),
				sev->_sigev_un._tid, sev->sigev_signo, &si);
		break;
	case SIGEV_THREAD:
		c = malloc(sizeof(*c));
		if (!c)
			break;
		c->fn = sev->sigev_notify_function;
		c->value = sev->sigev_value;
		/* the program's attributes as given; nobody joins it */
		if (pthread_create(&t, sev->sigev_notify_attributes,
				   notify_thread, c)) {
			free(c);
			break;
		}
		if (!sev->sigev_notify_attributes ||
		    pthread_attr_getdetachstate(sev->sigev_notify_attributes,
						&detach) ||
		    detach == PTHREAD_CREATE_JOINABLE)
			pthread_detach(t);
		break;
	default:
		break;
	}
}

/* One request on a region descriptor, made now (op: LIO_READ, LIO_WRITE,
 * or O_SYNC / O_DSYNC for aio_fsync). */
static void region_request(struct aiocb *cb, int op, bool notify_it)
{
	void *buf = (void *)cb->aio_buf;
	ssize_t n;
	int fl;

	if (op == LIO_READ) {
		n = pread(cb->aio_fildes, buf, cb->aio_nbytes, cb->aio_offset);
	} else if (op == LIO_WRITE) {
		/* appending descriptors append, as glibc's helper does */
		fl = fcntl(cb->aio_fildes, F_GETFL);
		n = fl >= 0 && (fl & O_APPEND) ?
		    write(cb->aio_fildes, buf, cb->aio_nbytes) :
		    pwrite(cb->aio_fildes, buf, cb->aio_nbytes, cb->aio_offset);
	} else {
		n = op == O_DSYNC ? fdatasync(cb->aio_fildes) :
				    fsync(cb->aio_fildes);
	}
	cb->__return_value = n;
	cb->__error_code = n < 0 ? errno : 0;
	if (notify_it)
		notify(&cb->aio_sigevent);
}

PUBLIC int aio_read(struct aiocb *cb)
{
	REAL(int, aio_read, struct aiocb *);

	if (!pl_fd_is_region(cb->aio_fildes))
		return real_aio_read(cb);
	region_request(cb, LIO_READ, true);
	return 0;
}

PUBLIC int aio_write(struct aiocb *cb)
{
	REAL(int, aio_write, struct aiocb *);

	if (!pl_fd_is_region(cb->aio_fildes))
		return real_aio_write(cb);
	region_request(cb, LIO_WRITE, true);
	return 0;
}

PUBLIC int aio_fsync(int op, struct aiocb *cb)
{
	REAL(int, aio_fsync, int, struct aiocb *);

	if (!pl_fd_is_region(cb->aio_fildes))
		return real_aio_fsync(op, cb);
	if (op != O_SYNC && op != O_DSYNC)
		return pl_fail(-EINVAL);
	region_request(cb, op, true);
	return 0;
}

/*
 * The list's region requests are made here, the rest go to glibc's
 * lio_listio in a copy of the list without them.  With LIO_NOWAIT, sig
 * is sent when all are done: by glibc once its part is, by us when the
 * whole list was ours.
 */
PUBLIC int lio_listio(int mode, struct aiocb *const list[], int nent,
		      struct sigevent *sig)
{
	REAL(int, lio_listio, int, struct aiocb *const *, int,
	     struct sigevent *);
	struct aiocb **rest;
	int i, n = 0, failed = 0, r = 0, err;

	for (i = 0; i < nent; i++)
		if (list[i] && pl_fd_is_region(list[i]->aio_fildes))
			break;
	if (i == nent || (mode != LIO_WAIT && mode != LIO_NOWAIT))
		return real_lio_listio(mode, list, nent, sig);
	rest = calloc((size_t)nent, sizeof(*rest));
	if (!rest)
		return pl_fail(-EAGAIN);
	for (i = 0; i < nent; i++) {
		if (!list[i] || list[i]->aio_lio_opcode == LIO_NOP)
			continue;
		if (!pl_fd_is_region(list[i]->aio_fildes)) {
			rest[n++] = list[i];
			continue;
		}
		region_request(list[i], list[i]->aio_lio_opcode,
			       mode == LIO_NOWAIT);
		failed |= list[i]->__error_code != 0;
	}
	if (n)
		r = real_lio_listio(mode, rest, n, sig);
	else if (mode == LIO_NOWAIT && sig)
		notify(sig);
	err = errno;
	free(rest);
	if (!r && mode == LIO_WAIT && failed)
		return pl_fail(-EIO);
	errno = err;
	return r;
}

/* On 64-bit systems the 64 forms are the same calls. */
_Static_assert(sizeof(struct aiocb) == sizeof(struct aiocb64),
	       "aiocb64 is aiocb");

PUBLIC int aio_read64(struct aiocb64 *cb)
{
	return aio_read((struct aiocb *)cb);
}

PUBLIC int aio_write64(struct aiocb64 *cb)
{
	return aio_write((struct aiocb *)cb);
}

PUBLIC int aio_fsync64(int op, struct aiocb64 *cb)
{
	return aio_fsync(op, (struct aiocb *)cb);
}

PUBLIC int lio_listio64(int mode, struct aiocb64 *const list[], int nent,
			struct sigevent *sig)
{
	return lio_listio(mode, (struct aiocb *const *)list, nent, sig);
}
