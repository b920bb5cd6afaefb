// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Torn-write checker for strict mode (docs/modes.md, tests/test_modes.py):
 * one process writes whole-buffer patterns, another reads and checks that
 * every read shows one pattern whole.  A plain libc program: it runs under
 * `daxfs run --mode strict` (each process is its own host).
 *
 * Usage:
 *   pl_strict overwrite FILE N SIZE   N pwrites at 0 of SIZE bytes, the
 *                                     i-th all byte (i % 251) + 1
 *   pl_strict append FILE N SIZE      N appends of SIZE bytes, the same way
 *   pl_strict check FILE SIZE STOP    reads FILE until the file STOP
 *                                     exists (its last 64 records); every
 *                                     SIZE-byte record must
 *                                     be one byte value and the size a
 *                                     multiple of SIZE.  Prints
 *                                     "reads R torn T values V".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int die(const char *what)
{
	perror(what);
	return 2;
}

static int write_patterns(const char *path, long n, size_t size, int append)
{
	char *buf = malloc(size);
	int fd = open(path, O_WRONLY | O_CREAT | (append ? O_APPEND : 0), 0644);
	long i;

	if (!buf || fd < 0)
		return die("open");
	for (i = 0; i < n; i++) {
		memset(buf, (int)(i % 251) + 1, size);
		if ((append ? write(fd, buf, size) :
			      pwrite(fd, buf, size, 0)) != (ssize_t)size)
			return die("write");
	}
	close(fd);
	free(buf);
	return 0;
}

/* One read of whole records: 1 when some record is not one value. */
static int torn(const unsigned char *buf, size_t n, size_t size,
		unsigned char *seen)
{
	size_t r, i;

	if (n % size)
		return 1;
	for (r = 0; r < n; r += size) {
		for (i = 1; i < size; i++)
			if (buf[r + i] != buf[r])
				return 1;
		seen[buf[r]] = 1;
	}
	return 0;
}

static int check(const char *path, size_t size, const char *stop)
{
	size_t cap = 64 * size;
	unsigned char *buf = malloc(cap), seen[256] = { 0 };
	long reads = 0, bad = 0, values = 0;
	struct stat st;
	int fd = -1, i, last = 0;

	if (!buf)
		return die("malloc");
	while (!last) {
		size_t from;
		off_t end;
		ssize_t n;

		last = stat(stop, &st) == 0;	/* one more read after */
		if (fd < 0)
			fd = open(path, O_RDONLY);
		if (fd < 0) {
			if (errno != ENOENT)
				return die("open");
			continue;
		}
		/* the last records: a long file is read at its tail */
		end = lseek(fd, 0, SEEK_END);
		if (end < 0)
			return die("lseek");
		from = (size_t)end > cap ? ((size_t)end - cap) / size * size : 0;
		n = pread(fd, buf, cap, (off_t)from);
		if (n < 0)
			return die("pread");
		reads++;
		bad += torn(buf, (size_t)n, size, seen);
	}
	for (i = 1; i < 256; i++)
		values += seen[i];
	printf("reads %ld torn %ld values %ld\n", reads, bad, values);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "overwrite"))
		return write_patterns(argv[2], atol(argv[3]),
				      (size_t)atol(argv[4]), 0);
	if (argc == 5 && !strcmp(argv[1], "append"))
		return write_patterns(argv[2], atol(argv[3]),
				      (size_t)atol(argv[4]), 1);
	if (argc == 5 && !strcmp(argv[1], "check"))
		return check(argv[2], (size_t)atol(argv[3]), argv[4]);
	fprintf(stderr, "usage: pl_strict overwrite|append FILE N SIZE | "
		"check FILE SIZE STOP\n");
	return 2;
}
