// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A lincheck worker: one host (its own daxfs_region_open) that runs the
 * random operations of each round (lc_round.c) through libdaxfs; with -P,
 * several threads do so on the one handle, each a client with its own
 * slot (races between threads of one host, not only between hosts).
 * Operations collide on purpose: 4 names in a namespace round, 2 files and
 * offsets on a 512-byte grid in a data round (so that writes end exactly
 * where others begin or end, as defect 6 needs).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/daxfs/libdaxfs.h"
#include "tests/lincheck/lc.h"

static int rd_cb(void *ctx, const char *name, uint32_t len, uint64_t ino,
		 uint32_t dtype, uint64_t pos)
{
	uint64_t *mask = ctx;
	int i;

	for (i = 0; i < LC_NAMES; i++)
		if (len == 1 && name[0] == lc_names[i][0])
			*mask |= 1ull << i;
	if (!(len == 1 && name[0] >= 'a' && name[0] <= 'd'))
		*mask |= 1ull << 63;	/* a name nobody made */
	return 0;
}

static void run_ns(struct lc_client *w, struct lc_rec *r)
{
	struct daxfs_handle *h = w->ctx;
	char p[128], q[128];
	struct daxfs_attr st;
	uint64_t ino = 0, mask = 0;
	int64_t res = 0;

	lc_path(w, r->a, p, sizeof(p));
	lc_path(w, r->b, q, sizeof(q));
	switch (r->op) {
	case LC_CREATE:
		res = daxfs_path_create(h, p, 0644,
					r->c ? DAXFS_CREATE_EXCL : 0, &ino);
		r->o2 = res >= 0 ? ino : 0;
		break;
	case LC_UNLINK:
		res = daxfs_path_unlink(h, p);
		break;
	case LC_MKDIR:
		res = daxfs_path_mkdir(h, p, 0755);
		break;
	case LC_RMDIR:
		res = daxfs_path_rmdir(h, p);
		break;
	case LC_RENAME:
		res = daxfs_path_rename(h, p, q, r->c);
		break;
	case LC_LINK:
		res = daxfs_path_link(h, p, q);
		break;
	case LC_SYMLINK:
		/* never resolves: the model needs no symlink following */
		res = daxfs_path_symlink(h, "nowhere", p);
		break;
	case LC_STAT:
		res = daxfs_path_lstat(h, p, &st);
		if (!res)
			lc_stat_rec(r, st.mode, st.nlink, st.ino, st.size);
		break;
	case LC_READDIR:
		res = daxfs_path_readdir(h, w->s->dir, rd_cb, &mask);
		r->o1 = mask;
		break;
	case LC_TRUNC:
		res = daxfs_path_truncate(h, p, r->c);
		break;
	}
	r->res = res;
}

/* Each client's per-open-file caches of the round's files (the ino
 * changes each round: a cache of the last round's file fails its check
 * and is refilled), so data rounds run through the cache's check. */
static struct daxfs_fcache fcs[LC_MAX_WORKERS][LC_FILES];

static void run_data(struct lc_client *w, struct lc_rec *r)
{
	struct daxfs_handle *h = w->ctx;
	uint64_t ino = w->s->inos[r->a], at = 0;
	struct daxfs_fcache *fc = &fcs[w->slot - w->s->slots][r->a];
	struct daxfs_attr st;
	int64_t res = 0;

	switch (r->op) {
	case LC_PWRITE:
		memset(w->buf, (int)r->d, r->c);
		res = daxfs_pwrite_fc(h, ino, fc, w->buf, r->c, r->b);
		break;
	case LC_APPEND:
		memset(w->buf, (int)r->d, r->c);
		res = daxfs_append_fc(h, ino, fc, w->buf, r->c, &at);
		r->o1 = at;
		break;
	case LC_FTRUNC:
		res = daxfs_ftruncate_fc(h, ino, fc, r->c);
		break;
	case LC_READ:
		res = daxfs_pread_fc(h, ino, fc, w->buf, r->c, r->b);
		r->o1 = lc_hash(w->buf, res > 0 ? res : 0);
		break;
	case LC_FSTAT:
		res = daxfs_fstat(h, ino, &st);
		r->o3 = st.size;
		break;
	case LC_FALLOC:
		res = daxfs_file_fallocate(h, ino, (int)r->d, r->b, r->c);
		break;
	}
	r->res = res;
}

/* The clients slot .. slot + threads - 1, one thread each, on one handle. */
int lc_worker_main(const char *region, const char *shm, int slot, int threads)
{
	static struct lc_client ws[LC_MAX_WORKERS];
	pthread_t tids[LC_MAX_WORKERS];
	struct daxfs_handle *h;
	struct lc_shm *s;
	int fd, err, i;

	if (slot < 0 || threads < 1 || slot + threads > LC_MAX_WORKERS)
		return 2;
	fd = open(shm, O_RDWR);
	if (fd < 0)
		return 2;
	s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (s == MAP_FAILED)
		return 2;
	err = daxfs_region_open(region, 0, &h);
	if (err) {
		fprintf(stderr, "worker %d: open: %s\n", slot,
			daxfs_strerror(err));
		return 2;
	}
	for (i = 0; i < threads; i++) {
		ws[i].ctx = h;
		ws[i].s = s;
		ws[i].slot = &s->slots[slot + i];
		ws[i].root = "";
		ws[i].run_ns = run_ns;
		ws[i].run_data = run_data;
	}
	for (i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, lc_client_main, &ws[i])) {
			fprintf(stderr, "worker %d: no thread\n", slot);
			return 2;
		}
	lc_client_main(&ws[0]);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	daxfs_region_close(h);
	return 0;
}
