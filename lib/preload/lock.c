// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Record locks (fcntl F_GETLK/F_SETLK/F_SETLKW) on region files, between
 * the processes of one host: each locked region file has a stand-in file
 * in /dev/shm (one directory per region, named by the region file's
 * device and inode numbers), and the lock is taken on the stand-in by the
 * kernel.  So waiting, deadlock detection (EDEADLK) and release at process
 * death are the kernel's.  POSIX drops a process's locks on a file when
 * it closes any descriptor of that file: closing a region descriptor
 * closes the stand-in.  Hosts that do not share /dev/shm (other VMs) do
 * not see these locks: cluster-wide locks come from the core later.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload.h"

#define MAX_LOCKED	256

static pthread_mutex_t lock_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t ino;
	int fd;
} standins[MAX_LOCKED];
static int nr_standins;

static int standin_dir(char *out, size_t size)
{
	struct stat st;

	if (stat(pl_cfg.region, &st))
		return -errno;
	snprintf(out, size, "/dev/shm/.daxfs-locks-%llx-%llx",
		 (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	if (mkdir(out, 01777) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The stand-in descriptor for ino, opened on first use (mutex held). */
static int standin(uint64_t ino)
{
	REAL(int, openat, int, const char *, int, ...);
	REAL(int, fcntl, int, int, ...);
	REAL(int, close, int);
	char dir[128], path[192];
	int i, fd, hi, err;

	for (i = 0; i < nr_standins; i++)
		if (standins[i].ino == ino)
			return standins[i].fd;
	if (nr_standins == MAX_LOCKED)
		return -ENOLCK;
	err = standin_dir(dir, sizeof(dir));
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/%llu", dir, (unsigned long long)ino);
	fd = real_openat(AT_FDCWD, path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	hi = real_fcntl(fd, F_DUPFD_CLOEXEC, 800);
	if (hi >= 0) {
		real_close(fd);
		fd = hi;
	}
	standins[nr_standins].ino = ino;
	standins[nr_standins++].fd = fd;
	return fd;
}

int pl_lock(int fd, int cmd, struct flock *fl)
{
	REAL(int, fcntl, int, int, ...);
	struct daxfs_handle *h = pl_handle();
	struct pl_desc *d;
	struct flock k;
	struct daxfs_attr a;
	int64_t base = 0;
	uint64_t ino;
	int sfd, r, err = 0;

	if (!h)
		return -1;
	d = pl_fd_get(fd);
	if (!d)
		return pl_fail(-EBADF);
	ino = d->ino;
	if (fl->l_whence == SEEK_CUR)
		base = atomic_load(&d->off);
	pl_fd_put(d);
	if (fl->l_whence == SEEK_END) {
		err = daxfs_fstat(h, ino, &a);
		base = a.size;
	}
	if (err)
		return pl_fail(err);
	k = *fl;
	k.l_whence = SEEK_SET;
	k.l_start = base + fl->l_start;
	pthread_mutex_lock(&lock_mutex);
	sfd = standin(ino);
	pthread_mutex_unlock(&lock_mutex);
	if (sfd < 0)
		return pl_fail(sfd);
	r = real_fcntl(sfd, cmd, &k);
	if (!r && cmd == F_GETLK) {
		fl->l_type = k.l_type;
		fl->l_pid = k.l_pid;
		if (k.l_type != F_UNLCK) {
			fl->l_whence = SEEK_SET;
			fl->l_start = k.l_start;
			fl->l_len = k.l_len;
		}
	}
	return r;
}

/* A descriptor of ino was closed: the process's locks on it go. */
void pl_lock_drop(uint64_t ino)
{
	REAL(int, close, int);
	int i;

	pthread_mutex_lock(&lock_mutex);
	for (i = 0; i < nr_standins; i++) {
		if (standins[i].ino != ino)
			continue;
		real_close(standins[i].fd);
		standins[i] = standins[--nr_standins];
		break;
	}
	pthread_mutex_unlock(&lock_mutex);
}

/* fork: the child holds no locks, and must not close the parent's
 * stand-ins' locks... closing an inherited descriptor would not touch
 * them (locks belong to the process), so the child just forgets. */
void pl_lock_fork_child(void)
{
	REAL(int, close, int);
	int i;

	for (i = 0; i < nr_standins; i++)
		real_close(standins[i].fd);
	nr_standins = 0;
	pthread_mutex_init(&lock_mutex, NULL);
}
