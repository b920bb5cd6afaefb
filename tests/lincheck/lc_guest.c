// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * lc_guest PHYS SIZE PAGE SLOT MNT: one lincheck client inside a QEMU guest
 * (docs/lincheck.md, "Guests"), built static (build/vm-helpers/lc_guest).
 * It maps the shared page of lc.h at guest physical address PAGE (a second
 * nvdimm whose namespace was unbound: /dev/mem), waits until lc_run on the
 * host has formatted the region, mounts it with daxfs.ko (phys=PHYS,
 * size=SIZE) at MNT, and runs the rounds (namespace and data) of slot SLOT
 * through system calls on the mount, recording them in the page like every
 * other client, until lc_run says stop.
 *
 * What a system call cannot tell: open(O_CREAT) without O_EXCL does not say
 * whether it created the file, so this client's creates all have O_EXCL
 * (lc_round.c); its records carry d = 1, so that the checker applies the
 * VFS's order of errors (link: EEXIST before EPERM).  write(2) with
 * O_APPEND returns a count, not the offset it wrote at, so this client's
 * appends carry LC_VFS_APPEND in d and no offset, and the checker checks
 * them by the size alone.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lincheck/lc.h"

static int64_t err_of(long ret)
{
	return ret < 0 ? -errno : ret;
}

static int64_t readdir_mask(const char *dir, uint64_t *mask)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int i;

	if (!d)
		return -errno;
	errno = 0;
	while ((de = readdir(d))) {
		const char *n = de->d_name;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		for (i = 0; i < LC_NAMES; i++)
			if (!strcmp(n, lc_names[i]))
				*mask |= 1ull << i;
		if (!(n[0] >= 'a' && n[0] <= 'd' && !n[1]))
			*mask |= 1ull << 63;	/* a name nobody made */
	}
	i = errno;
	closedir(d);
	return -i;
}

/* -X (lc_run): this client lies once a round, about its first operation
 * that can be made to lie (run_ns, run_data): the checker must see it. */
static int lie_now(struct lc_client *c)
{
	static uint32_t lied;

	if (c->s->flip != (uint32_t)(c->slot - c->s->slots) + 1 ||
	    lied == c->s->round)
		return 0;
	lied = c->s->round;
	return 1;
}

static void run_ns(struct lc_client *c, struct lc_rec *r)
{
	char p[160], q[160], dir[160];
	struct stat st;
	uint64_t mask = 0;
	int64_t res = 0;
	int fd;

	lc_path(c, r->a, p, sizeof(p));
	lc_path(c, r->b, q, sizeof(q));
	switch (r->op) {
	case LC_CREATE:
		fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0644);
		res = fd < 0 ? -errno : 1;
		if (fd >= 0) {
			r->o2 = fstat(fd, &st) ? 0 : st.st_ino;
			close(fd);
		}
		break;
	case LC_UNLINK:
		res = err_of(unlink(p));
		break;
	case LC_MKDIR:
		res = err_of(mkdir(p, 0755));
		break;
	case LC_RMDIR:
		res = err_of(rmdir(p));
		break;
	case LC_RENAME:
		res = err_of(renameat2(AT_FDCWD, p, AT_FDCWD, q, r->c));
		break;
	case LC_LINK:
		res = err_of(link(p, q));
		break;
	case LC_SYMLINK:
		res = err_of(symlink("nowhere", p));
		break;
	case LC_STAT:
		res = err_of(lstat(p, &st));
		if (!res)
			lc_stat_rec(r, st.st_mode, st.st_nlink, st.st_ino,
				    st.st_size);
		break;
	case LC_READDIR:
		snprintf(dir, sizeof(dir), "%s%s", c->root, c->s->dir);
		res = readdir_mask(dir, &mask);
		r->o1 = mask;
		break;
	case LC_TRUNC:
		res = err_of(truncate(p, r->c));
		break;
	}
	/* -X: a mkdir that made its directory answers EEXIST */
	if (r->op == LC_MKDIR && res == 0 && lie_now(c))
		res = -EEXIST;
	r->res = res;
}

/* Data rounds: each operation opens its file by path (the files are never
 * renamed or removed in the round), so opens race the other clients' writes
 * and truncates too. */
static void run_data(struct lc_client *c, struct lc_rec *r)
{
	static const int flags[] = {
		[LC_PWRITE] = O_WRONLY, [LC_APPEND] = O_WRONLY | O_APPEND,
		[LC_FTRUNC] = O_WRONLY, [LC_READ] = O_RDONLY,
		[LC_FSTAT] = O_RDONLY, [LC_FALLOC] = O_WRONLY,
	};
	char p[160];
	struct stat st;
	int64_t res = 0;
	int fd;

	snprintf(p, sizeof(p), "%s%s/f%d", c->root, c->s->dir, (int)r->a);
	fd = open(p, flags[r->op]);
	if (fd < 0) {
		r->res = -errno;
		return;
	}
	switch (r->op) {
	case LC_PWRITE:
		memset(c->buf, (int)r->d, r->c);
		res = err_of(pwrite(fd, c->buf, r->c, r->b));
		break;
	case LC_APPEND:
		/* no offset: o1 stays 0 (LC_VFS_APPEND, lc.h) */
		memset(c->buf, (int)(r->d & 0xff), r->c);
		res = err_of(write(fd, c->buf, r->c));
		break;
	case LC_FTRUNC:
		res = err_of(ftruncate(fd, r->c));
		break;
	case LC_READ:
		res = err_of(pread(fd, c->buf, r->c, r->b));
		r->o1 = lc_hash(c->buf, res > 0 ? res : 0);
		break;
	case LC_FSTAT:
		res = err_of(fstat(fd, &st));
		r->o3 = res ? 0 : st.st_size;
		/* -X: a size off the 512-byte grid, which no client makes */
		if (!res && lie_now(c))
			r->o3++;
		break;
	case LC_FALLOC:
		res = err_of(fallocate(fd, (int)r->d, r->b, r->c));
		break;
	}
	close(fd);
	r->res = res;
}

int main(int argc, char **argv)
{
	static struct lc_client cl;
	unsigned long long page;
	char opts[128];
	size_t len = (sizeof(struct lc_shm) + 4095) & ~4095ul;
	struct lc_shm *s;
	int fd, slot, i;

	if (argc != 6) {
		fprintf(stderr, "usage: lc_guest PHYS SIZE PAGE SLOT MNT\n");
		return 2;
	}
	page = strtoull(argv[3], NULL, 0);
	slot = atoi(argv[4]);
	if (slot < 0 || slot >= LC_MAX_WORKERS)
		return 2;
	fd = open("/dev/mem", O_RDWR);
	if (fd < 0) {
		perror("lc_guest: /dev/mem");
		return 2;
	}
	s = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);
	close(fd);
	if (s == MAP_FAILED) {
		perror("lc_guest: mmap /dev/mem");
		return 2;
	}
	/* the host formats the region first (10 minutes at most) */
	for (i = 0; __atomic_load_n(&s->magic, __ATOMIC_ACQUIRE) != LC_MAGIC;
	     i++) {
		if (i == 60000) {
			fprintf(stderr, "lc_guest: no lc_run\n");
			return 2;
		}
		usleep(10000);
	}
	snprintf(opts, sizeof(opts), "phys=%s,size=%s", argv[1], argv[2]);
	if (mount("none", argv[5], "daxfs", 0, opts)) {
		perror("lc_guest: mount");
		return 2;
	}
	fprintf(stderr, "lc_guest: slot %d mounted %s\n", slot, opts);
	cl.s = s;
	cl.slot = &s->slots[slot];
	cl.root = argv[5];
	cl.vfs = 1;
	cl.run_ns = run_ns;
	cl.run_data = run_data;
	lc_client_main(&cl);
	if (umount(argv[5])) {
		perror("lc_guest: umount");
		return 1;
	}
	return 0;
}
