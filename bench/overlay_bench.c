// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * overlay_bench: rates of the hash overlay and of file creation with one
 * and two hosts.
 *
 * Every worker is a forked process that maps the region file itself
 * (open + mmap MAP_SHARED) and joins the host table as its own host
 * (daxfs_fs_open + daxfs_host_join), so two workers coordinate exactly as
 * two hosts would: through 64-bit CAS on the shared mapping, nothing else.
 * A separate anonymous shared page carries the start barrier and results;
 * it is never touched while timing.
 *
 * Tests (each on a freshly formatted region):
 *   insert-disjoint   each worker inserts its own N keys
 *   insert-same       every worker inserts the same N keys in the same order;
 *                     exactly one must win each key (checked afterwards:
 *                     the stored value is the reported winner's)
 *   lookup-disjoint   random lookups of the worker's own keys (time bound)
 *   lookup-hot        every worker looks up the same 64 hot keys
 *   mknod-disjoint    each worker creates files with its own names in one
 *                     directory (time bound)
 *   mknod-same        every worker creates the same names; one must win
 *
 * One op = one daxfs_op_begin + one call + daxfs_op_end (what a front end
 * pays per call).  CAS success: claim-CAS failures counted by the core
 * (state.stat_cas_fail) against wins: wins / (wins + fails).
 *
 * Output: CSV lines on stdout
 *   suite,test,procs,ops,seconds,rate_ops_s,wins,exists,cas_fail,cas_success,check
 *
 * usage: overlay_bench [-n keys] [-m names] [-t seconds] [-p maxprocs]
 *                      [-f region] [-x test]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

#define MAXP		8
#define BENCH_KEY_TYPE	13		/* a key type nothing else uses */
#define HOT_KEYS	64

struct result {
	uint64_t ops, wins, exists, errs;
	double secs;
	int64_t first_err;
};

struct ctl {
	volatile int ready;
	volatile int go;
	struct result r[MAXP];
	uint8_t won[];			/* insert-same / mknod-same: winner + 1 */
};

static const char *region = "/dev/shm/daxfs-bench-overlay";
static uint64_t nkeys = 1u << 20;
static double dur = 0.5;
static uint64_t nsame = 50000;
static const char *only;		/* -x: run only this test */	/* names in mknod-same */
static uint64_t region_size;
static struct ctl *ctl;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "overlay_bench: %s: %s\n", what, daxfs_strerror(err));
	exit(1);
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static uint64_t bkey(uint64_t i)
{
	return daxfs_key(BENCH_KEY_TYPE, i + 1);
}

/* Fresh region: mkfs, then allocate its tmpfs pages so that page
 * allocation by the kernel is not what we time (DAX memory has none). */
static void fresh_region(uint64_t buckets)
{
	struct daxfs_mkfs_opts o;
	int fd, err;

	memset(&o, 0, sizeof(o));
	o.force = 1;
	o.nr_buckets = buckets;
	o.lease_ms = 60000;
	unlink(region);
	err = daxfs_region_create(region, region_size, &o);
	if (err)
		die("mkfs", err);
	fd = open(region, O_RDWR);
	if (fd < 0 || posix_fallocate(fd, 0, region_size)) {
		perror("fallocate");
		exit(1);
	}
	close(fd);
}

struct host {
	struct daxfs_fs fs;
	void *base;
};

static void host_open(struct host *h, int id)
{
	char name[32];
	int fd, err;

	fd = open(region, O_RDWR);
	if (fd < 0) {
		perror(region);
		exit(1);
	}
	h->base = mmap(NULL, region_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, 0);
	close(fd);
	if (h->base == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	err = daxfs_fs_open(&h->fs, h->base, region_size, 0);
	if (err)
		die("daxfs_fs_open", err);
	snprintf(name, sizeof(name), "bench%d", id);
	err = daxfs_host_join(&h->fs, name, (uint32_t)getpid(),
			      DAXFS_HOST_KIND_USER);
	if (err)
		die("daxfs_host_join", err);
}

static void host_close(struct host *h)
{
	daxfs_host_leave(&h->fs);
	munmap(h->base, region_size);
}

static uint64_t cas_fail(struct host *h)
{
	return __atomic_load_n(&h->fs.state->stat_cas_fail.v, __ATOMIC_RELAXED);
}

static void barrier(int nproc)
{
	__atomic_fetch_add(&ctl->ready, 1, __ATOMIC_SEQ_CST);
	while (!ctl->go)
		__builtin_ia32_pause();
}

static void start_workers(int nproc)
{
	while (__atomic_load_n(&ctl->ready, __ATOMIC_SEQ_CST) < nproc)
		usleep(100);
	__atomic_store_n(&ctl->go, 1, __ATOMIC_SEQ_CST);
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

enum test {
	T_INSERT_DISJOINT, T_INSERT_SAME, T_LOOKUP_DISJOINT, T_LOOKUP_HOT,
	T_MKNOD_DISJOINT, T_MKNOD_SAME,
};
static const char *test_name[] = {
	"insert-disjoint", "insert-same", "lookup-disjoint", "lookup-hot",
	"mknod-disjoint", "mknod-same",
};

static void note_err(struct result *r, int err)
{
	r->errs++;
	if (!r->first_err)
		r->first_err = err;
}

static void op_or_die(struct host *h, struct daxfs_op *op)
{
	int err = daxfs_op_begin(&h->fs, op);

	if (err)
		die("daxfs_op_begin", err);
}

/* lookups of keys [lo, lo + n) for dur seconds; hot: the first HOT_KEYS */
static void do_lookups(struct host *h, struct result *r, uint64_t lo,
		       uint64_t n, uint64_t seed)
{
	struct daxfs_op op;
	u64 v;
	uint64_t i, s = seed | 1, ops = 0;
	double t0 = now(), t;
	int err;

	for (;;) {
		for (i = 0; i < 1024; i++) {
			uint64_t k = lo + xorshift(&s) % n;

			op_or_die(h, &op);
			err = daxfs_ov_lookup(&op, bkey(k), &v);
			daxfs_op_end(&op);
			if (err || v != k + 1)
				note_err(r, err ? err : -EIO);
		}
		ops += 1024;
		t = now();
		if (t - t0 >= dur)
			break;
	}
	r->ops = ops;
	r->secs = t - t0;
}

static void worker(enum test t, int id, int nproc)
{
	struct result *r = &ctl->r[id];
	struct host h;
	struct daxfs_op op;
	u64 v;
	uint64_t i, lo, root;
	double t0;
	char name[64];
	int err, len;

	host_open(&h, id);
	root = h.fs.sb.root_ino;
	memset(r, 0, sizeof(*r));

	/* lookups need the keys first: each worker inserts its own range
	 * before the barrier (insert-same style tests insert after it) */
	if (t == T_LOOKUP_DISJOINT || (t == T_LOOKUP_HOT && id == 0)) {
		uint64_t n = (t == T_LOOKUP_HOT) ? HOT_KEYS : nkeys;

		lo = (t == T_LOOKUP_HOT) ? 0 : id * nkeys;
		for (i = 0; i < n; i++) {
			op_or_die(&h, &op);
			err = daxfs_ov_insert(&op, bkey(lo + i), lo + i + 1);
			daxfs_op_end(&op);
			if (err)
				die("insert (setup)", err);
		}
	}

	barrier(nproc);

	switch (t) {
	case T_INSERT_DISJOINT:
	case T_INSERT_SAME:
		lo = (t == T_INSERT_DISJOINT) ? id * nkeys : 0;
		t0 = now();
		for (i = 0; i < nkeys; i++) {
			/* value names the inserting worker */
			op_or_die(&h, &op);
			err = daxfs_ov_insert(&op, bkey(lo + i),
					      ((uint64_t)(id + 1) << 48) | (lo + i));
			daxfs_op_end(&op);
			if (!err) {
				r->wins++;
				if (t == T_INSERT_SAME)
					ctl->won[i] = (uint8_t)(id + 1);
			} else if (err == -EEXIST) {
				r->exists++;
			} else {
				note_err(r, err);
			}
		}
		r->secs = now() - t0;
		r->ops = nkeys;
		break;
	case T_LOOKUP_DISJOINT:
		do_lookups(&h, r, id * nkeys, nkeys, 0x9e3779b97f4a7c15ull * (id + 1));
		break;
	case T_LOOKUP_HOT:
		do_lookups(&h, r, 0, HOT_KEYS, 0x9e3779b97f4a7c15ull * (id + 1));
		break;
	case T_MKNOD_DISJOINT:
	case T_MKNOD_SAME: {
		t0 = now();
		for (i = 0;; i++) {
			if (t == T_MKNOD_SAME && i >= nsame)
				break;
			if (t == T_MKNOD_DISJOINT && (i & 255) == 0 &&
			    now() - t0 >= dur)
				break;
			len = snprintf(name, sizeof(name), "f%d-%llu",
				       t == T_MKNOD_SAME ? 0 : id,
				       (unsigned long long)i);
			err = daxfs_mknod(&h.fs, root, name, (uint32_t)len,
					  0100644, 0, 0, 0, &v);
			if (!err) {
				r->wins++;
				if (t == T_MKNOD_SAME)
					ctl->won[i] = (uint8_t)(id + 1);
			} else if (err == -EEXIST) {
				r->exists++;
			} else {
				note_err(r, err);
				if (err == -ENOSPC)
					break;
			}
		}
		r->secs = now() - t0;
		r->ops = i;
		break;
	}
	}
	host_close(&h);
	_exit(0);
}

/* after insert-same / mknod-same: the value under each key must be the
 * one its reported winner stored */
static int check_same(enum test t, uint64_t n, int nproc)
{
	struct host h;
	struct daxfs_op op;
	u64 v, ino;
	uint64_t i, bad = 0;
	char name[64];
	int err, len;

	host_open(&h, 99);
	for (i = 0; i < n; i++) {
		if (t == T_INSERT_SAME) {
			op_or_die(&h, &op);
			err = daxfs_ov_lookup(&op, bkey(i), &v);
			daxfs_op_end(&op);
			if (err || !ctl->won[i] || (v >> 48) != ctl->won[i] ||
			    (v & 0xffffffffffffull) != i)
				bad++;
		} else {
			len = snprintf(name, sizeof(name), "f0-%llu",
				       (unsigned long long)i);
			err = daxfs_lookup(&h.fs, h.fs.sb.root_ino, name,
					   (uint32_t)len, &ino);
			if (err || !ctl->won[i])
				bad++;
		}
	}
	host_close(&h);
	return bad ? -1 : 0;
}

static void run(enum test t, int nproc)
{
	uint64_t buckets, wins = 0, exists = 0, errs = 0, ops = 0, cf0, cf1;
	double secs = 0, rate = 0;
	int i, status;
	int64_t first_err = 0;
	struct host h;
	const char *check = "-";

	/* load factor <= 1/4 at the end of any test */
	buckets = pow2_at_least(4 * nkeys * (uint64_t)nproc + 4 * 65536);
	if (t == T_MKNOD_DISJOINT)
		buckets = pow2_at_least(4u << 20);
	/* buckets (16 B each) + pool: the mknod tests need about 450 bytes
	 * per empty file (inode record, dirent, trie nodes) at up to
	 * ~1.5 M creates/s */
	region_size = buckets * 16 + (32ull << 20);
	if (t == T_MKNOD_DISJOINT)
		region_size += (uint64_t)(dur * 1.5e6 * 512);
	if (t == T_MKNOD_SAME)
		region_size += nsame * 1024;
	region_size = (region_size + (2ull << 20) - 1) & ~((2ull << 20) - 1);
	fresh_region(buckets);
	memset(ctl, 0, sizeof(*ctl) + nkeys);

	host_open(&h, 98);
	cf0 = cas_fail(&h);
	host_close(&h);

	for (i = 0; i < nproc; i++) {
		pid_t p = fork();

		if (p < 0) {
			perror("fork");
			exit(1);
		}
		if (p == 0)
			worker(t, i, nproc);
	}
	start_workers(nproc);
	for (i = 0; i < nproc; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "overlay_bench: worker failed\n");
			exit(1);
		}
	}
	host_open(&h, 98);
	cf1 = cas_fail(&h);
	host_close(&h);

	for (i = 0; i < nproc; i++) {
		struct result *r = &ctl->r[i];

		ops += r->ops;
		wins += r->wins;
		exists += r->exists;
		errs += r->errs;
		if (r->secs > secs)
			secs = r->secs;
		if (r->first_err && !first_err)
			first_err = r->first_err;
	}
	if (errs)
		fprintf(stderr, "overlay_bench: %s/%d: %llu errors, first: %s\n",
			test_name[t], nproc, (unsigned long long)errs,
			daxfs_strerror((int)first_err));
	rate = secs > 0 ? ops / secs : 0;
	if (t == T_INSERT_SAME || t == T_MKNOD_SAME) {
		uint64_t n = t == T_INSERT_SAME ? nkeys : nsame;
		int ok = wins == n && wins + exists == n * nproc &&
			 check_same(t, n, nproc) == 0;

		check = ok ? "ok" : "FAIL";
	} else if (t == T_INSERT_DISJOINT) {
		check = wins == nkeys * nproc ? "ok" : "FAIL";
	}
	if (errs)
		check = "FAIL";
	printf("overlay,%s,%d,%llu,%.4f,%.0f,%llu,%llu,%llu,", test_name[t],
	       nproc, (unsigned long long)ops, secs, rate,
	       (unsigned long long)wins, (unsigned long long)exists,
	       (unsigned long long)(cf1 - cf0));
	if (t == T_INSERT_DISJOINT || t == T_INSERT_SAME || t == T_MKNOD_DISJOINT ||
	    t == T_MKNOD_SAME)
		printf("%.5f", wins + (cf1 - cf0) ?
		       (double)wins / (wins + (cf1 - cf0)) : 1.0);
	printf(",%s\n", check);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int c, maxp = 2, np;
	enum test t;

	while ((c = getopt(argc, argv, "n:m:t:p:f:x:")) != -1) {
		switch (c) {
		case 'n': nkeys = strtoull(optarg, NULL, 0); break;
		case 'm': nsame = strtoull(optarg, NULL, 0); break;
		case 't': dur = atof(optarg); break;
		case 'p': maxp = atoi(optarg); break;
		case 'f': region = optarg; break;
		case 'x': only = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n keys] [-m names] [-t seconds] "
				"[-p maxprocs] [-f region] [-x test]\n", argv[0]);
			return 2;
		}
	}
	if (nsame > nkeys)
		nsame = nkeys;
	if (maxp < 1 || maxp > MAXP || nkeys < HOT_KEYS)
		return 2;
	ctl = mmap(NULL, sizeof(*ctl) + nkeys, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		return 1;
	printf("suite,test,procs,ops,seconds,rate_ops_s,wins,exists,cas_fail,"
	       "cas_success,check\n");
	for (t = T_INSERT_DISJOINT; t <= T_MKNOD_SAME; t++)
		for (np = 1; np <= maxp; np++) {
			if ((t == T_INSERT_SAME || t == T_MKNOD_SAME) && np == 1)
				continue;
			if (only && strcmp(only, test_name[t]))
				continue;
			run(t, np);
		}
	unlink(region);
	return 0;
}
