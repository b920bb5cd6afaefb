// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A lincheck worker: one host (its own daxfs_region_open) that runs the
 * random operations of each round and records them (lc.h); with -P, several
 * threads do so on the one handle, each a client with its own slot (races
 * between threads of one host, not only between hosts).  Operations
 * collide on purpose: 4 names in a namespace round, 2 files and offsets on
 * a 512-byte grid in a data round (so that writes end exactly where
 * others begin or end, as defect 6 needs).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/daxfs/libdaxfs.h"
#include "tests/lincheck/lc.h"

#define GRID	512

const char *const lc_names[LC_NAMES] = { "a", "b", "c", "d" };

struct worker {
	struct daxfs_handle *h;
	struct lc_shm *s;
	struct lc_slot *slot;
	uint64_t rnd;
	unsigned char buf[LC_MAX_SIZE + GRID];
};

static void path_of(struct worker *w, int64_t i, char *p, size_t n)
{
	snprintf(p, n, "%s/%s", w->s->dir, lc_names[i]);
}

static unsigned int pick(struct worker *w, unsigned int n)
{
	return lc_rand(&w->rnd) % n;
}

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

static uint64_t type_of(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0100000: return 1;
	case 0040000: return 2;
	case 0120000: return 3;
	}
	return 9;
}

static void pick_ns(struct worker *w, struct lc_rec *r)
{
	static const uint32_t ops[] = {
		LC_CREATE, LC_CREATE, LC_UNLINK, LC_MKDIR, LC_RMDIR,
		LC_RENAME, LC_RENAME, LC_RENAME, LC_LINK, LC_SYMLINK,
		LC_STAT, LC_STAT, LC_STAT, LC_READDIR, LC_TRUNC,
	};
	static const int64_t rflags[] = {
		0, DAXFS_RENAME_NOREPLACE, DAXFS_RENAME_EXCHANGE,
		DAXFS_RENAME_EXCHANGE,
	};

	do
		r->op = ops[pick(w, sizeof(ops) / sizeof(ops[0]))];
	while ((r->op == LC_RENAME && w->s->no_rename) ||
	       (r->op == LC_LINK && w->s->no_link));
	r->a = pick(w, LC_NAMES);
	do
		r->b = pick(w, LC_NAMES);
	while (r->b == r->a);
	if (r->op == LC_CREATE)
		r->c = pick(w, 2);
	else if (r->op == LC_RENAME)
		r->c = rflags[pick(w, 4)];
	else if (r->op == LC_TRUNC)
		r->c = pick(w, 4) * 100;
}

static void run_ns(struct worker *w, struct lc_rec *r)
{
	char p[128], q[128];
	struct daxfs_attr st;
	uint64_t ino = 0, mask = 0;
	int64_t res = 0;

	path_of(w, r->a, p, sizeof(p));
	path_of(w, r->b, q, sizeof(q));
	switch (r->op) {
	case LC_CREATE:
		res = daxfs_path_create(w->h, p, 0644,
					r->c ? DAXFS_CREATE_EXCL : 0, &ino);
		r->o2 = res >= 0 ? ino : 0;
		break;
	case LC_UNLINK:
		res = daxfs_path_unlink(w->h, p);
		break;
	case LC_MKDIR:
		res = daxfs_path_mkdir(w->h, p, 0755);
		break;
	case LC_RMDIR:
		res = daxfs_path_rmdir(w->h, p);
		break;
	case LC_RENAME:
		res = daxfs_path_rename(w->h, p, q, r->c);
		break;
	case LC_LINK:
		res = daxfs_path_link(w->h, p, q);
		break;
	case LC_SYMLINK:
		/* never resolves: the model needs no symlink following */
		res = daxfs_path_symlink(w->h, "nowhere", p);
		break;
	case LC_STAT:
		res = daxfs_path_lstat(w->h, p, &st);
		if (!res) {
			r->o1 = type_of(st.mode) | (uint64_t)st.nlink << 8;
			r->o2 = type_of(st.mode) == 1 ? st.ino : 0;
			r->o3 = type_of(st.mode) == 1 ? st.size : 0;
		}
		break;
	case LC_READDIR:
		res = daxfs_path_readdir(w->h, w->s->dir, rd_cb, &mask);
		r->o1 = mask;
		break;
	case LC_TRUNC:
		res = daxfs_path_truncate(w->h, p, r->c);
		break;
	}
	r->res = res;
}

static void pick_data(struct worker *w, struct lc_rec *r)
{
	static const uint32_t ops[] = {
		LC_PWRITE, LC_PWRITE, LC_PWRITE, LC_APPEND, LC_APPEND,
		LC_APPEND, LC_FTRUNC, LC_FTRUNC, LC_READ, LC_READ, LC_FSTAT,
	};

	/* fallocate modes: 0, KEEP_SIZE, PUNCH_HOLE | KEEP_SIZE, ZERO_RANGE
	 * and ZERO_RANGE | KEEP_SIZE (Linux's values) */
	static const uint32_t modes[] = { 0, 0x01, 0x03, 0x03, 0x10, 0x11 };

	do
		r->op = ops[pick(w, sizeof(ops) / sizeof(ops[0]))];
	while (r->op == LC_FTRUNC && w->s->no_trunc);
	if (w->s->falloc && pick(w, 4) == 0)
		r->op = LC_FALLOC;
	r->a = pick(w, LC_FILES);
	r->b = (int64_t)pick(w, LC_MAX_SIZE / GRID) * GRID;
	r->c = (int64_t)(1 + pick(w, 12)) * GRID;
	r->d = 1 + pick(w, 255);
	if (r->op == LC_APPEND && r->c > GRID * 8)
		r->c -= GRID * 4;
	if (r->b + r->c > LC_MAX_SIZE)
		r->c = LC_MAX_SIZE - r->b;
	if (r->op == LC_FTRUNC)
		r->c = (int64_t)pick(w, LC_MAX_SIZE / GRID / 2) * GRID;
	if (r->op == LC_FALLOC)
		r->d = modes[pick(w, sizeof(modes) / sizeof(modes[0]))];
}

static void run_data(struct worker *w, struct lc_rec *r)
{
	uint64_t ino = w->s->inos[r->a], at = 0;
	struct daxfs_attr st;
	int64_t res = 0;

	switch (r->op) {
	case LC_PWRITE:
		memset(w->buf, (int)r->d, r->c);
		res = daxfs_pwrite(w->h, ino, w->buf, r->c, r->b);
		break;
	case LC_APPEND:
		memset(w->buf, (int)r->d, r->c);
		res = daxfs_append(w->h, ino, w->buf, r->c, &at);
		r->o1 = at;
		break;
	case LC_FTRUNC:
		res = daxfs_ftruncate(w->h, ino, r->c);
		break;
	case LC_READ:
		res = daxfs_pread(w->h, ino, w->buf, r->c, r->b);
		r->o1 = lc_hash(w->buf, res > 0 ? res : 0);
		break;
	case LC_FSTAT:
		res = daxfs_fstat(w->h, ino, &st);
		r->o3 = st.size;
		break;
	case LC_FALLOC:
		res = daxfs_file_fallocate(w->h, ino, (int)r->d, r->b, r->c);
		break;
	}
	r->res = res;
}

static void run_round(struct worker *w, uint32_t round)
{
	struct lc_shm *s = w->s;
	uint32_t i, n = s->ops;
	int data = s->mode == LC_MODE_DATA;

	w->rnd = s->seed * 0x9e3779b97f4a7c15ULL + (w->slot - s->slots) * 7919 +
		 round * 104729ULL + 1;
	__atomic_store_n(&w->slot->nr_recs, 0, __ATOMIC_RELEASE);
	for (i = 0; i < n && i < LC_MAX_OPS; i++) {
		struct lc_rec *r = &w->slot->recs[i];

		memset(r, 0, sizeof(*r));
		if (data)
			pick_data(w, r);
		else
			pick_ns(w, r);
		__atomic_store_n(&w->slot->nr_recs, i + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&r->call, lc_tick(s), __ATOMIC_RELEASE);
		if (data)
			run_data(w, r);
		else
			run_ns(w, r);
		__atomic_store_n(&r->ret, lc_tick(s), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&w->slot->done_round, round, __ATOMIC_RELEASE);
}

/* One client: runs each round the driver releases, until it stops. */
static void *client_main(void *arg)
{
	struct worker *w = arg;
	uint32_t round, r;

	round = __atomic_load_n(&w->s->round, __ATOMIC_ACQUIRE);
	__atomic_store_n(&w->slot->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&w->s->stop, __ATOMIC_ACQUIRE)) {
		r = __atomic_load_n(&w->s->round, __ATOMIC_ACQUIRE);
		if (r == round) {
			/* yield, not sleep: workers start a round together */
			sched_yield();
			continue;
		}
		round = r;
		run_round(w, round);
	}
	return NULL;
}

/* The clients slot .. slot + threads - 1, one thread each, on one handle. */
int lc_worker_main(const char *region, const char *shm, int slot, int threads)
{
	static struct worker ws[LC_MAX_WORKERS];
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
		ws[i].h = h;
		ws[i].s = s;
		ws[i].slot = &s->slots[slot + i];
	}
	for (i = 1; i < threads; i++)
		if (pthread_create(&tids[i], NULL, client_main, &ws[i])) {
			fprintf(stderr, "worker %d: no thread\n", slot);
			return 2;
		}
	client_main(&ws[0]);
	for (i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	daxfs_region_close(h);
	return 0;
}
