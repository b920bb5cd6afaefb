// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_stall MNT NTHREADS - user buffers whose page faults block, inside a
 * guest (static: the busybox initramfs has no libc; docs/kernel.md "User
 * buffers").
 *
 * NTHREADS threads (more than the 32 lanes of a host) each pread, pwrite
 * or getdents64 on the daxfs mount at MNT with a buffer page registered
 * with userfaultfd and left missing, so that each blocks in its page
 * fault.  While they all wait, the main thread checks that the mount still
 * works (create, write 4 MiB, readdir, unlink) and that the space of the
 * unlinked file comes back (no lane holds back the epoch).  Then it
 * resolves the faults and checks every thread's result.
 * Prints "key=value" lines; exit status 0 when everything held.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PG		4096
#define MAXT		256
#define PROBE_PAGES	1024
#define WAIT_S		30	/* liveness bound: the correct path takes ms */

enum kind { K_READ, K_WRITE, K_DIR };

struct worker {
	pthread_t tid;
	enum kind kind;
	int fd;
	char *page;
	long ret;
	int err;
};

static const char *mnt;
static struct worker w[MAXT];
static int nthreads;
static int failed;

static void fill(char *p, int seed)
{
	for (int i = 0; i < PG; i++)
		p[i] = (char)('a' + (i + seed) % 26);
}

static void fail(const char *what, int err)
{
	printf("fail=%s:%s\n", what, strerror(err));
	failed = 1;
}

static void *work(void *arg)
{
	struct worker *x = arg;

	switch (x->kind) {
	case K_READ:
		x->ret = pread(x->fd, x->page, PG, 0);
		break;
	case K_WRITE:
		x->ret = pwrite(x->fd, x->page, PG, 0);
		break;
	case K_DIR:
		x->ret = syscall(SYS_getdents64, x->fd, x->page, PG);
		break;
	}
	x->err = x->ret < 0 ? errno : 0;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Unique fault addresses seen, until all threads wait or WAIT_S pass. */
static int wait_faults(int uffd, char *area)
{
	static char seen[MAXT];
	int n = 0;
	double end = now_s() + WAIT_S;

	while (n < nthreads && now_s() < end) {
		struct pollfd pfd = { .fd = uffd, .events = POLLIN };
		struct uffd_msg msg;
		long i;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		i = (long)((char *)(uintptr_t)msg.arg.pagefault.address - area) / PG;
		if (i >= 0 && i < nthreads && !seen[i]) {
			seen[i] = 1;
			n++;
		}
	}
	return n;
}

static unsigned long free_blocks(void)
{
	struct statvfs st;

	if (statvfs(mnt, &st))
		return 0;
	return st.f_bfree;
}

/* What the user would do while the others wait: all must work, and the
 * space of an unlinked file must come back. */
static void probe(void)
{
	char path[512], *buf;
	unsigned long base, f = 0;
	double end;
	int fd, i;

	base = free_blocks();
	snprintf(path, sizeof(path), "%s/probe", mnt);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0)
		return fail("probe_open", errno);
	buf = malloc(PG);
	fill(buf, 7);
	for (i = 0; i < PROBE_PAGES; i++)
		if (write(fd, buf, PG) != PG) {
			fail("probe_write", errno);
			break;
		}
	free(buf);
	close(fd);
	printf("probe_free_before=%lu probe_free_written=%lu\n", base, free_blocks());
	if (unlink(path))
		return fail("probe_unlink", errno);
	end = now_s() + WAIT_S;
	while (now_s() < end) {
		f = free_blocks();
		/* metadata pages (inode and name objects) may stay in
		 * their pools: a little slack, far below the file's size */
		if (f + 16 >= base)
			break;
		usleep(100000);
	}
	printf("probe_free_after=%lu\n", f);
	if (f + 16 < base)
		fail("space_not_reclaimed", EBUSY);
}

static int open_target(int i, enum kind k)
{
	char path[512];

	if (k == K_DIR) {
		snprintf(path, sizeof(path), "%s/d", mnt);
		return open(path, O_RDONLY | O_DIRECTORY);
	}
	if (k == K_READ) {
		snprintf(path, sizeof(path), "%s/d/src", mnt);
		return open(path, O_RDONLY);
	}
	snprintf(path, sizeof(path), "%s/dst%d", mnt, i);
	return open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
}

static void make_src(void)
{
	char path[512], buf[PG];
	int fd;

	/* in a directory of its own: a getdents that waits on its fault
	 * holds that directory's lock (the VFS's, in any filesystem), so
	 * the probe must not create names there */
	snprintf(path, sizeof(path), "%s/d", mnt);
	if (mkdir(path, 0755) && errno != EEXIST)
		fail("mkdir", errno);
	snprintf(path, sizeof(path), "%s/d/src", mnt);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	fill(buf, 0);
	if (fd < 0 || pwrite(fd, buf, PG, 0) != PG)
		fail("src", errno);
	if (fd >= 0)
		close(fd);
}

static void check_worker(int i)
{
	struct worker *x = &w[i];
	char want[PG], got[PG], what[64];
	char path[512];
	int fd;

	snprintf(what, sizeof(what), "thread%d_kind%d", i, x->kind);
	if (x->ret < 0)
		return fail(what, x->err);
	switch (x->kind) {
	case K_READ:
		fill(want, 0);
		if (x->ret != PG || memcmp(x->page, want, PG))
			fail(what, EIO);
		break;
	case K_WRITE:
		fill(want, i);
		snprintf(path, sizeof(path), "%s/dst%d", mnt, i);
		fd = open(path, O_RDONLY);
		if (x->ret != PG || fd < 0 || pread(fd, got, PG, 0) != PG ||
		    memcmp(got, want, PG))
			fail(what, EIO);
		if (fd >= 0)
			close(fd);
		break;
	case K_DIR:
		if (x->ret <= 0 || !memmem(x->page, x->ret, "src", 4))
			fail(what, EIO);
		break;
	}
	close(x->fd);
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {};
	char *area, src[PG];
	int uffd, i, n;

	if (argc != 3)
		return fprintf(stderr, "usage: uffd_stall MNT NTHREADS\n"), 2;
	mnt = argv[1];
	nthreads = atoi(argv[2]);
	if (nthreads < 3 || nthreads > MAXT)
		return fprintf(stderr, "NTHREADS: 3..%d\n", MAXT), 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	make_src();

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api))
		return printf("fail=userfaultfd:%s\n", strerror(errno)), 1;
	area = mmap(NULL, (size_t)nthreads * PG, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		return printf("fail=mmap:%s\n", strerror(errno)), 1;
	reg.range.start = (uintptr_t)area;
	reg.range.len = (size_t)nthreads * PG;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		return printf("fail=uffd_register:%s\n", strerror(errno)), 1;

	for (i = 0; i < nthreads; i++) {
		w[i].kind = i % 5 == 4 ? K_DIR : (i % 2 ? K_WRITE : K_READ);
		w[i].page = area + (size_t)i * PG;
		w[i].fd = open_target(i, w[i].kind);
		if (w[i].fd < 0)
			return printf("fail=open_target%d:%s\n", i, strerror(errno)), 1;
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&w[i].tid, NULL, work, &w[i]);

	n = wait_faults(uffd, area);
	printf("blocked=%d of %d\n", n, nthreads);
	if (n < nthreads)
		failed = 1;
	probe();

	/* resolve: each page gets its thread's bytes (what a writer sends) */
	for (i = 0; i < nthreads; i++) {
		struct uffdio_copy cp = {
			.dst = (uintptr_t)w[i].page, .src = (uintptr_t)src,
			.len = PG,
		};

		fill(src, i);
		if (ioctl(uffd, UFFDIO_COPY, &cp) && errno != EEXIST)
			fail("uffd_copy", errno);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].tid, NULL);
	for (i = 0; i < nthreads; i++)
		check_worker(i);
	printf("result=%s\n", failed ? "FAIL" : "ok");
	return failed;
}
