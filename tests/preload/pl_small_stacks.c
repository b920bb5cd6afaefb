// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Threads with small stacks, as programs make them: one of
 * PTHREAD_STACK_MIN that only starts, and one of 32 KiB (node's signal
 * thread) that works on region files.  glibc puts the static TLS of every
 * library on each thread's stack and refuses a stack it leaves too
 * little (EINVAL): a preload with large thread-local buffers made such
 * threads fail to start.  Prints the same on tmpfs and under `daxfs run`
 * (tests/test_preload.py).
 *
 * Usage: pl_small_stacks DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir;

static void *idle(void *arg)
{
	return arg;
}

/* Small frames only: the thread has 32 KiB in all. */
static void *files(void *arg)
{
	static char path[512], buf[16];
	struct stat st;
	long ok = 0;
	int fd;

	(void)arg;
	snprintf(path, sizeof(path), "%s/small-stack", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0 && write(fd, "from a thread", 13) == 13 &&
	    pread(fd, buf, 13, 0) == 13 && !memcmp(buf, "from a thread", 13) &&
	    !fstat(fd, &st) && st.st_size == 13 && !close(fd) &&
	    !stat(path, &st) && !unlink(path))
		ok = 1;
	return (void *)ok;
}

static void start(const char *what, size_t stack, void *(*fn)(void *))
{
	pthread_attr_t at;
	pthread_t t;
	void *ret = NULL;
	int err;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, stack);
	err = pthread_create(&t, &at, fn, (void *)1L);
	pthread_attr_destroy(&at);
	if (err) {
		printf("%s: pthread_create: %s\n", what, strerror(err));
		return;
	}
	pthread_join(t, &ret);
	printf("%s: started, %s\n", what, ret ? "ok" : "failed");
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	dir = argv[1];
	start("PTHREAD_STACK_MIN", PTHREAD_STACK_MIN, idle);
	start("32 KiB, files", 32768, files);
	return 0;
}
