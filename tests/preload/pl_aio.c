// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * POSIX AIO on a file of directory DIR (tests/test_preload.py compares
 * the output with tmpfs): aio_write, aio_read, aio_fsync, an appending
 * descriptor, a read past the end, lio_listio (waiting, and not with a
 * signal), notification by signal (SI_ASYNCIO) and by thread, aio_cancel
 * of a finished request.  Until 2026-12-05 glibc's helper thread reached
 * the kernel with the region descriptor's stand-in: EBADF.
 *   pl_aio DIR
 */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static atomic_int signals, sig_code_ok, threads;

static void on_signal(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	signals++;
	if (si->si_code == SI_ASYNCIO && si->si_value.sival_int == 42)
		sig_code_ok++;
}

static void on_thread(union sigval v)
{
	if (v.sival_int == 7)
		threads++;
}

/* Notification by SIGRTMIN with the value on_signal checks. */
static void by_signal(struct sigevent *sev)
{
	memset(sev, 0, sizeof(*sev));
	sev->sigev_notify = SIGEV_SIGNAL;
	sev->sigev_signo = SIGRTMIN;
	sev->sigev_value.sival_int = 42;
}

/* Up to 2 s for a notification to count. */
static void wait_count(atomic_int *count)
{
	int i;

	for (i = 0; i < 200 && !*count; i++)
		usleep(10000);
}

static void wait_for(struct aiocb *cb)
{
	const struct aiocb *l[1] = { cb };

	while (aio_error(cb) == EINPROGRESS)
		aio_suspend(l, 1, NULL);
}

static void done(const char *what, struct aiocb *cb)
{
	int err;

	wait_for(cb);
	err = aio_error(cb);
	printf("%s: error %s return %zd\n", what, err ? strerror(err) : "0",
	       aio_return(cb));
}

static struct aiocb cb_of(int fd, void *buf, size_t n, off_t off)
{
	struct aiocb cb;

	memset(&cb, 0, sizeof(cb));
	cb.aio_fildes = fd;
	cb.aio_buf = buf;
	cb.aio_nbytes = n;
	cb.aio_offset = off;
	return cb;
}

int main(int argc, char **argv)
{
	char rd[64] = { 0 }, a[] = "first ", b[] = "second ", c[] = "third";
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO };
	struct aiocb w, r, f, l1, l2, l3;
	struct aiocb *list[3] = { &l1, &l2, &l3 };
	struct sigevent sev;
	ssize_t n;
	int fd, i;

	if (argc != 2 || chdir(argv[1]))
		return 2;
	sigaction(SIGRTMIN, &sa, NULL);
	fd = open("data", O_CREAT | O_RDWR | O_TRUNC, 0644);

	w = cb_of(fd, "hello aio", 9, 0);
	printf("aio_write: %d\n", aio_write(&w));
	done("aio_write", &w);
	r = cb_of(fd, rd, sizeof(rd) - 1, 6);
	printf("aio_read: %d\n", aio_read(&r));
	done("aio_read", &r);
	printf("read: [%s]\n", rd);
	r = cb_of(fd, rd, 10, 100);
	aio_read(&r);
	done("aio_read past the end", &r);
	f = cb_of(fd, NULL, 0, 0);
	printf("aio_fsync: %d\n", aio_fsync(O_SYNC, &f));
	done("aio_fsync", &f);
	i = aio_fsync(12345, &f);
	printf("aio_fsync bad op: %d %s\n", i, strerror(errno));
	printf("aio_cancel done: %s\n", aio_cancel(fd, &w) == AIO_ALLDONE ?
	       "AIO_ALLDONE" : "other");

	/* notification: a signal, then a thread */
	w = cb_of(fd, "!", 1, 9);
	by_signal(&w.aio_sigevent);
	aio_write(&w);
	done("signalled write", &w);
	wait_count(&signals);
	printf("signals %d with SI_ASYNCIO %d\n", signals, sig_code_ok);
	r = cb_of(fd, rd, 10, 0);
	r.aio_sigevent.sigev_notify = SIGEV_THREAD;
	r.aio_sigevent.sigev_notify_function = on_thread;
	r.aio_sigevent.sigev_value.sival_int = 7;
	aio_read(&r);
	done("thread-notified read", &r);
	wait_count(&threads);
	printf("threads %d\n", threads);

	/* lio_listio: two writes and a read, waiting */
	l1 = cb_of(fd, a, 6, 20);
	l1.aio_lio_opcode = LIO_WRITE;
	l2 = cb_of(fd, b, 7, 26);
	l2.aio_lio_opcode = LIO_WRITE;
	memset(rd, 0, sizeof(rd));
	l3 = cb_of(fd, rd, 4, 0);
	l3.aio_lio_opcode = LIO_READ;
	printf("lio_listio wait: %d\n", lio_listio(LIO_WAIT, list, 3, NULL));
	for (i = 0; i < 3; i++)
		done("listed", list[i]);
	printf("listed read: [%s]\n", rd);
	/* and not waiting, with a signal for the list */
	l1 = cb_of(fd, c, 5, 33);
	l1.aio_lio_opcode = LIO_WRITE;
	by_signal(&sev);
	signals = 0;
	printf("lio_listio nowait: %d\n", lio_listio(LIO_NOWAIT, list, 1, &sev));
	done("listed nowait", &l1);
	wait_count(&signals);
	printf("list signals %d\n", signals);
	close(fd);

	/* an appending descriptor appends, whatever the offset */
	fd = open("data", O_WRONLY | O_APPEND);
	w = cb_of(fd, "+end", 4, 0);
	aio_write(&w);
	done("appending write", &w);
	close(fd);
	fd = open("data", O_RDONLY);
	memset(rd, 0, sizeof(rd));
	n = read(fd, rd, sizeof(rd) - 1);
	for (i = 0; i < n; i++)
		rd[i] = rd[i] ? rd[i] : '.';
	printf("file: [%.*s]\n", (int)n, rd);
	close(fd);
	return 0;
}
