/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Linearizability workload (docs/lincheck.md): the driver (lc_driver.c)
 * runs rounds, each on a fresh directory; K worker processes (lc_worker.c),
 * each its own host, run random operations on a few names or files there
 * and record every call and return in a shared memory page that is not
 * part of the region, so a SIGKILLed worker loses nothing it recorded.
 * Timestamps come from a fetch-add on a counter in that page: one order
 * that respects real time on every host.
 */
#ifndef LC_H
#define LC_H

#include <stddef.h>
#include <stdint.h>

#define LC_MAX_WORKERS	16
#define LC_MAX_OPS	64		/* per worker per round */
#define LC_NAMES	4		/* namespace rounds: a b c d */
#define LC_NEST_NAMES	12		/* nested rounds: and a/x a/y b/x ... */
#define LC_FILES	2		/* data rounds: f0 f1 */
#define LC_MAX_SIZE	12288		/* data rounds: offsets below this */

enum lc_mode { LC_MODE_NS = 0, LC_MODE_DATA = 1, LC_MODE_NEST = 2 };

/* Operation codes, shared with the checker (tools/lincheck/model_*.go). */
enum lc_op {
	/* namespace: a = name index, b = name index, c = flags/size */
	LC_CREATE = 1, LC_UNLINK, LC_MKDIR, LC_RMDIR, LC_RENAME, LC_LINK,
	LC_SYMLINK, LC_STAT, LC_READDIR, LC_TRUNC,
	/* data on file a: b = offset, c = length, d = fill byte */
	LC_PWRITE = 20, LC_APPEND, LC_FTRUNC, LC_READ, LC_FSTAT,
	/* fallocate of file a: b = offset, c = length, d = mode (-F) */
	LC_FALLOC,
};

/* d of an append by a client through the VFS (a guest's): 256 + the fill
 * byte.  write(2) with O_APPEND does not say where the bytes went, so its
 * o1 (the offset) is 0 and the checker checks it by the size alone. */
#define LC_VFS_APPEND	0x100

/* One operation.  call is stored last before the op runs and ret last
 * after it: a record with call and no ret is a pending operation. */
struct lc_rec {
	uint32_t op;
	uint32_t pad;
	int64_t a, b, c, d;
	int64_t res;			/* count or -errno */
	uint64_t o1, o2, o3;		/* outputs: ino, size, hash... */
	uint64_t call, ret;
};

struct lc_slot {
	int32_t pid;
	uint32_t ready;			/* joined the region */
	uint32_t done_round;		/* last round finished */
	uint32_t nr_recs;
	struct lc_rec recs[LC_MAX_OPS];
};

#define LC_MAGIC	0x4b43484e494c434cULL	/* "LCLINCHK": the page is set up */

struct lc_shm {
	uint64_t clock;			/* the logical clock (FAA) */
	uint64_t magic;			/* LC_MAGIC once the region is formatted
					 * (guests wait for it, then mount) */
	uint32_t round;			/* round workers may run (0: none) */
	uint32_t stop;
	uint32_t mode, ops;		/* this round */
	uint32_t no_rename;		/* -N: no rename in the mix */
	uint32_t no_trunc;		/* -T: no truncate in data rounds */
	uint32_t no_link;		/* -L: no link in namespace rounds */
	uint32_t whiteout;		/* -W: RENAME_WHITEOUT in the mix */
	uint32_t falloc;		/* -F: fallocate in data rounds */
	uint32_t delay_us;		/* -d: up to this pause before each op */
	uint32_t flip;			/* -X: a guest client lies once (test) */
	uint64_t seed;
	uint64_t inos[LC_FILES];	/* data rounds */
	char dir[64];			/* this round's directory */
	struct lc_slot slots[LC_MAX_WORKERS];
};

static inline uint64_t lc_tick(struct lc_shm *s)
{
	return __atomic_add_fetch(&s->clock, 1, __ATOMIC_SEQ_CST);
}

static inline uint64_t lc_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/* FNV-1a of a byte range: what a read saw, compared by the checker */
static inline uint64_t lc_hash(const unsigned char *p, uint64_t n)
{
	uint64_t h = 1469598103934665603ULL;

	while (n--) {
		h ^= *p++;
		h *= 1099511628211ULL;
	}
	return h;
}

extern const char *const lc_names[LC_NEST_NAMES];

/* A client: one slot's operations, run by a backend (lc_round.c is the
 * common part: what to run, records, rounds). */
struct lc_client {
	struct lc_shm *s;
	struct lc_slot *slot;
	uint64_t rnd;
	const char *root;		/* the mount point ("" for libdaxfs) */
	int vfs;			/* system calls through the VFS: creates
					 * are all O_EXCL, records say d = 1,
					 * appends LC_VFS_APPEND */
	void (*run_ns)(struct lc_client *c, struct lc_rec *r);
	void (*run_data)(struct lc_client *c, struct lc_rec *r);
	void *ctx;			/* the backend's */
	unsigned char buf[LC_MAX_SIZE + 512];
};

void lc_path(struct lc_client *c, int64_t i, char *p, size_t n);
uint64_t lc_type_of(uint32_t mode);
void lc_stat_rec(struct lc_rec *r, uint32_t mode, uint64_t nlink, uint64_t ino,
		 uint64_t size);
void *lc_client_main(void *arg);

int lc_worker_main(const char *region, const char *shm, int slot, int threads);

#endif
