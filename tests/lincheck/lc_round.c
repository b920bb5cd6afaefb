// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * What every lincheck client does, whatever runs its operations (lc.h):
 * picks each round's random operations, records their calls and returns
 * in the shared page, and waits for the next round.  The backends:
 * lc_worker.c (a libdaxfs host) and lc_guest.c (system calls on a daxfs.ko
 * mount inside a QEMU guest).
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "include/daxfs/libdaxfs.h"
#include "tests/lincheck/lc.h"

#define GRID	512

/* name i >= 4 is slot (i - 4) % 2 under name (i - 4) / 2 (nested rounds) */
const char *const lc_names[LC_NEST_NAMES] = {
	"a", "b", "c", "d", "a/x", "a/y", "b/x", "b/y", "c/x", "c/y", "d/x",
	"d/y",
};

void lc_path(struct lc_client *c, int64_t i, char *p, size_t n)
{
	snprintf(p, n, "%s%s/%s", c->root, c->s->dir, lc_names[i]);
}

static unsigned int pick(struct lc_client *c, unsigned int n)
{
	return lc_rand(&c->rnd) % n;
}

uint64_t lc_type_of(uint32_t mode)
{
	switch (mode & 0170000) {
	case 0100000: return 1;
	case 0040000: return 2;
	case 0120000: return 3;
	}
	return 9;
}

/* What an lstat saw: type and link count, a file's inode number and size. */
void lc_stat_rec(struct lc_rec *r, uint32_t mode, uint64_t nlink, uint64_t ino,
		 uint64_t size)
{
	uint64_t t = lc_type_of(mode);

	r->o1 = t | nlink << 8;
	r->o2 = t == 1 ? ino : 0;
	r->o3 = t == 1 ? size : 0;
}

/* A name of a namespace round; in a nested one, half of them under a
 * directory (a mkdir mostly makes one of the four it could be). */
static int64_t pick_name(struct lc_client *c, uint32_t op)
{
	if (c->s->mode != LC_MODE_NEST || pick(c, op == LC_MKDIR ? 4 : 2) != 0)
		return pick(c, LC_NAMES);
	return LC_NAMES + pick(c, LC_NEST_NAMES - LC_NAMES);
}

static void pick_ns(struct lc_client *c, struct lc_rec *r)
{
	static const uint32_t ops[] = {
		LC_CREATE, LC_CREATE, LC_UNLINK, LC_MKDIR, LC_RMDIR,
		LC_RENAME, LC_RENAME, LC_RENAME, LC_LINK, LC_SYMLINK,
		LC_STAT, LC_STAT, LC_STAT, LC_READDIR, LC_TRUNC,
	};
	/* the last only with -W (the first four keep their seeds' draws) */
	static const int64_t rflags[] = {
		0, DAXFS_RENAME_NOREPLACE, DAXFS_RENAME_EXCHANGE,
		DAXFS_RENAME_EXCHANGE, DAXFS_RENAME_WHITEOUT,
	};

	do
		r->op = ops[pick(c, sizeof(ops) / sizeof(ops[0]))];
	while ((r->op == LC_RENAME && c->s->no_rename) ||
	       (r->op == LC_LINK && c->s->no_link));
	r->a = pick_name(c, r->op);
	do
		r->b = pick_name(c, r->op);
	while (r->b == r->a);
	/* a system call cannot tell "created" from "opened" without
	 * O_EXCL: a VFS client's creates all have it */
	if (r->op == LC_CREATE)
		r->c = c->vfs ? 1 : pick(c, 2);
	else if (r->op == LC_RENAME)
		r->c = rflags[pick(c, c->s->whiteout ? 5 : 4)];
	else if (r->op == LC_TRUNC)
		r->c = pick(c, 4) * 100;
	r->d = c->vfs;		/* the VFS's errno order (link) */
}

static void pick_data(struct lc_client *c, struct lc_rec *r)
{
	static const uint32_t ops[] = {
		LC_PWRITE, LC_PWRITE, LC_PWRITE, LC_APPEND, LC_APPEND,
		LC_APPEND, LC_FTRUNC, LC_FTRUNC, LC_READ, LC_READ, LC_FSTAT,
	};

	/* fallocate modes: 0, KEEP_SIZE, PUNCH_HOLE | KEEP_SIZE, ZERO_RANGE
	 * and ZERO_RANGE | KEEP_SIZE (Linux's values) */
	static const uint32_t modes[] = { 0, 0x01, 0x03, 0x03, 0x10, 0x11 };

	do
		r->op = ops[pick(c, sizeof(ops) / sizeof(ops[0]))];
	while (r->op == LC_FTRUNC && c->s->no_trunc);
	if (c->s->falloc && pick(c, 4) == 0)
		r->op = LC_FALLOC;
	r->a = pick(c, LC_FILES);
	r->b = (int64_t)pick(c, LC_MAX_SIZE / GRID) * GRID;
	r->c = (int64_t)(1 + pick(c, 12)) * GRID;
	r->d = 1 + pick(c, 255);
	if (r->op == LC_APPEND && r->c > GRID * 8)
		r->c -= GRID * 4;
	if (r->b + r->c > LC_MAX_SIZE)
		r->c = LC_MAX_SIZE - r->b;
	if (r->op == LC_FTRUNC)
		r->c = (int64_t)pick(c, LC_MAX_SIZE / GRID / 2) * GRID;
	if (r->op == LC_FALLOC)
		r->d = modes[pick(c, sizeof(modes) / sizeof(modes[0]))];
	if (r->op == LC_APPEND && c->vfs)
		r->d |= LC_VFS_APPEND;
}

static void pause_us(unsigned int us)
{
	struct timespec ts = { 0, us * 1000L };

	nanosleep(&ts, NULL);
}

static void run_round(struct lc_client *c, uint32_t round)
{
	struct lc_shm *s = c->s;
	uint32_t i, n = s->ops;
	int data = s->mode == LC_MODE_DATA;

	c->rnd = s->seed * 0x9e3779b97f4a7c15ULL + (c->slot - s->slots) * 7919 +
		 round * 104729ULL + 1;
	__atomic_store_n(&c->slot->nr_recs, 0, __ATOMIC_RELEASE);
	for (i = 0; i < n && i < LC_MAX_OPS; i++) {
		struct lc_rec *r = &c->slot->recs[i];

		memset(r, 0, sizeof(*r));
		if (data)
			pick_data(c, r);
		else
			pick_ns(c, r);
		/* -d: spreads the fast clients' operations over the slow
		 * ones' (libdaxfs hosts beside guests under emulation) */
		if (s->delay_us)
			pause_us(pick(c, s->delay_us));
		__atomic_store_n(&c->slot->nr_recs, i + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&r->call, lc_tick(s), __ATOMIC_RELEASE);
		if (data)
			c->run_data(c, r);
		else
			c->run_ns(c, r);
		__atomic_store_n(&r->ret, lc_tick(s), __ATOMIC_RELEASE);
	}
	__atomic_store_n(&c->slot->done_round, round, __ATOMIC_RELEASE);
}

/* One client: runs each round the driver releases, until it stops. */
void *lc_client_main(void *arg)
{
	struct lc_client *c = arg;
	uint32_t round, r, idle = 0;

	round = __atomic_load_n(&c->s->round, __ATOMIC_ACQUIRE);
	__atomic_store_n(&c->slot->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&c->s->stop, __ATOMIC_ACQUIRE)) {
		r = __atomic_load_n(&c->s->round, __ATOMIC_ACQUIRE);
		if (r == round) {
			/* yield, not sleep: workers start a round together;
			 * but a long wait (rounds paced by slow guests)
			 * sleeps, leaving the CPU to them */
			if (++idle < 20000)
				sched_yield();
			else
				pause_us(100);
			continue;
		}
		idle = 0;
		round = r;
		run_round(c, round);
	}
	return NULL;
}
