// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Shared and private mappings of a file in DIR, as a user checks them:
 * stores through a mapping are the file's bytes (read back with pread,
 * seen by a second mapping and by a fork child's stores), writes are seen
 * through the mapping, a hole maps as zeros, msync, mprotect, partial
 * munmap, MAP_PRIVATE copies.  tests/test_preload_mmap.py compares its
 * output under `daxfs run` with the output on tmpfs.
 *
 * Usage: pl_mmap DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define PG	4096

static void show(const char *what, long r)
{
	printf("%s: %ld%s%s\n", what, r, r < 0 ? " " : "",
	       r < 0 ? strerror(errno) : "");
}

static unsigned long sum(const unsigned char *p, size_t n)
{
	unsigned long s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

int main(int argc, char **argv)
{
	char path[4096], buf[PG];
	unsigned char *m, *m2, *pm;
	int fd, i, st;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "--map-exit")) {
		/* map a file and end at once: exit must not race the
		 * preload's pass thread */
		fd = open(argv[2], O_CREAT | O_RDWR, 0644);
		m = fd < 0 ? MAP_FAILED : mmap(NULL, PG, PROT_READ | PROT_WRITE,
					       MAP_SHARED, fd, 0);
		return m == MAP_FAILED;
	}
	if (argc != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/f", argv[1]);
	fd = open(path, O_CREAT | O_RDWR, 0644);
	show("open", fd);
	for (i = 0; i < 8; i++) {
		memset(buf, 'a' + i, PG);
		pwrite(fd, buf, PG, (off_t)i * PG);
	}
	m = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	show("mmap shared", m == MAP_FAILED ? -1 : 0);
	if (m == MAP_FAILED)
		return 1;
	printf("bytes: %c %c %c\n", m[0], m[3 * PG + 7], m[8 * PG - 1]);

	/* stores through the mapping are the file's bytes */
	memcpy(m + 2 * PG + 100, "mapped store", 12);
	pread(fd, buf, 12, 2 * PG + 100);
	printf("pread after store: %.12s\n", buf);
	/* and writes are seen through the mapping at once */
	pwrite(fd, "written", 7, 5 * PG);
	printf("map after pwrite: %.7s\n", m + 5 * PG);

	/* a second mapping of a part of the file sees the same pages */
	m2 = mmap(NULL, 2 * PG, PROT_READ, MAP_SHARED, fd, 2 * PG);
	show("mmap at offset", m2 == MAP_FAILED ? -1 : 0);
	printf("second mapping: %.12s\n", m2 + 100);
	m[2 * PG + 100] = 'M';
	printf("second sees store: %c\n", m2[100]);

	/* a fork child's stores reach the parent's mapping */
	pid = fork();
	if (pid == 0) {
		memcpy(m + 6 * PG, "from child", 10);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("child store: %.10s\n", m + 6 * PG);

	show("msync", msync(m, 8 * PG, MS_SYNC));
	show("mprotect ro", mprotect(m, 8 * PG, PROT_READ));
	printf("read after mprotect: %c\n", m[7 * PG]);
	show("mprotect rw", mprotect(m, 8 * PG, PROT_READ | PROT_WRITE));
	m[7 * PG] = 'Z';
	pread(fd, buf, 1, 7 * PG);
	printf("store after mprotect: %c\n", buf[0]);

	/* a partial munmap keeps the rest */
	show("munmap middle", munmap(m + 3 * PG, PG));
	printf("after partial munmap: %c %c\n", m[2 * PG], m[4 * PG]);

	/* the file grows over a hole: the hole maps as zeros, and a
	 * store there is the file's */
	show("ftruncate", ftruncate(fd, 12 * PG));
	pm = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 8 * PG);
	show("mmap hole", pm == MAP_FAILED ? -1 : 0);
	printf("hole sum: %lu\n", sum(pm, 4 * PG));
	memcpy(pm + PG, "in hole", 7);
	pread(fd, buf, 7, 9 * PG);
	printf("pread hole store: %.7s\n", buf);
	show("munmap", munmap(pm, 4 * PG));

	/* MAP_PRIVATE: a copy; stores stay private */
	pm = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	show("mmap private", pm == MAP_FAILED ? -1 : 0);
	pm[0] = 'P';
	printf("private store: map %c file %c\n", pm[0], m[0]);
	munmap(pm, PG);

	/* a read-only descriptor cannot map for writing */
	i = open(path, O_RDONLY);
	pm = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, i, 0);
	show("mmap rw of O_RDONLY", pm == MAP_FAILED ? -1 : 0);
	pm = mmap(NULL, PG, PROT_READ, MAP_SHARED, i, 0);
	printf("ro mapping: %c\n", pm == MAP_FAILED ? '-' : pm[0]);
	close(i);

	/* the mapping outlives the descriptor */
	close(fd);
	m[0] = 'C';
	fd = open(path, O_RDONLY);
	pread(fd, buf, 1, 0);
	printf("store after close: %c\n", buf[0]);
	printf("file sum: %lu\n", sum(m, 3 * PG));
	show("munmap all", munmap(m, 8 * PG) || munmap(m2, 2 * PG));
	close(fd);
	show("unlink", unlink(path));
	return 0;
}
