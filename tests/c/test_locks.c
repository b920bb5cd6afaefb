// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Cluster-wide advisory locks (core/lock.c, docs/locks.md).  The core's
 * answers to random lock/unlock sequences of several owners on three
 * hosts are compared with a byte-map model of Linux's rules (conflicts,
 * replacing, splitting and merging an owner's ranges, flock apart from
 * record locks); then the cross-host cases: a dead holder's locks go
 * with its lease, leave drops a host's locks, EDEADLK across two hosts,
 * a full bucket is ENOLCK, and threads on separate hosts exclude each
 * other around a shared counter.
 */
#include <sched.h>
#include <unistd.h>

#include "tutil.h"

#define MiB (1ULL << 20)
#define SIZE (16 * MiB)
#define NPOS 40		/* model bytes 0..38, and 39 = "39 to EOF" */
#define NOWN 5

static void *region;
static struct daxfs_fs fh[3];

struct owner {
	int host;
	u64 id;
	u32 kind;
};

/* Two owners on host 0 (POSIX, and an OFD with the same id: a different
 * owner), one POSIX owner with the same id on host 1, an OFD on host 2,
 * and a flock owner on host 1 (its own class). */
static const struct owner own[NOWN] = {
	{ 0, 1, DAXFS_LCK_POSIX }, { 0, 1, DAXFS_LCK_OFD },
	{ 1, 1, DAXFS_LCK_POSIX }, { 2, 9, DAXFS_LCK_OFD },
	{ 1, 4, DAXFS_LCK_FLOCK },
};
static u32 model[NOWN][NPOS];

static void setup(void)
{
	struct daxfs_format_opts o = { .max_hosts = 8 };

	region = t_setup_hosts(fh, 3, SIZE, &o);
}

static void teardown(void)
{
	int i;

	for (i = 0; i < 3; i++)
		daxfs_host_leave(&fh[i]);
	t_region_free(region, SIZE);
}

static struct daxfs_lock_req req(int o, u32 type, u64 s, u64 e)
{
	struct daxfs_lock_req r = {
		.start = s, .end = e, .owner = own[o].id, .type = type,
		.kind = own[o].kind, .pid = 100 + o,
	};

	return r;
}

static bool pos_in(u32 p, u64 s, u64 e)
{
	if (p == NPOS - 1)
		return e == DAXFS_LOCK_EOF;
	return s <= p && p <= e;
}

static bool model_conflict(int o, u32 type, u64 s, u64 e)
{
	int x;
	u32 p;

	if (type == DAXFS_LCK_UN)
		return false;
	for (x = 0; x < NOWN; x++) {
		if (x == o || (own[x].kind == DAXFS_LCK_FLOCK) !=
			      (own[o].kind == DAXFS_LCK_FLOCK))
			continue;
		for (p = 0; p < NPOS; p++)
			if (pos_in(p, s, e) && model[x][p] &&
			    (type == DAXFS_LCK_WR || model[x][p] == DAXFS_LCK_WR))
				return true;
	}
	return false;
}

struct seen {
	u32 map[NOWN][NPOS];
	u32 recs[NOWN];
	u32 bad;
};

static int owner_of(u32 host, u64 id, u32 kind)
{
	int o;

	for (o = 0; o < NOWN; o++)
		if (fh[own[o].host].host == host && own[o].id == id &&
		    own[o].kind == kind)
			return o;
	return -1;
}

static void collect(void *ctx, u64 ino, const struct daxfs_lock_req *l,
		    bool waiting)
{
	struct seen *s = ctx;
	int o = owner_of(l->host, l->owner, l->kind);
	u32 p;

	if (o < 0 || waiting || ino != 7) {
		s->bad++;
		return;
	}
	s->recs[o]++;
	for (p = 0; p < NPOS; p++) {
		if (!pos_in(p, l->start, l->end))
			continue;
		if (s->map[o][p])
			s->bad++;	/* an owner's records overlap */
		s->map[o][p] = l->type;
	}
}

/* Maximal runs of one type: Linux merges an owner's adjacent ranges of
 * the same type, so that is how many records the owner should have. */
static u32 runs(const u32 *m)
{
	u32 p, n = 0;

	for (p = 0; p < NPOS; p++)
		if (m[p] && (!p || m[p - 1] != m[p]))
			n++;
	return n;
}

static void compare_with_model(void)
{
	struct seen s;
	int o;

	memset(&s, 0, sizeof(s));
	daxfs_lock_list(&fh[0], 7, collect, &s);
	CHECK_EQ(s.bad, 0);
	for (o = 0; o < NOWN; o++) {
		CHECK(!memcmp(s.map[o], model[o], sizeof(model[o])));
		CHECK_EQ(s.recs[o], runs(model[o]));
	}
}

static void random_range(u64 *rng, u64 *s, u64 *e, u32 kind)
{
	if (kind == DAXFS_LCK_FLOCK) {
		*s = 0;
		*e = DAXFS_LOCK_EOF;
		return;
	}
	*s = t_rand(rng) % NPOS;
	if (*s == NPOS - 1 || t_rand(rng) % 5 == 0)
		*e = DAXFS_LOCK_EOF;
	else
		*e = *s + t_rand(rng) % (NPOS - 1 - *s);
}

static void test_model(void)
{
	u64 rng = 0x1234567, s, e;
	int i, o, err, fails = 0;
	u32 type, p;

	memset(model, 0, sizeof(model));
	for (i = 0; i < 20000; i++) {
		struct daxfs_lock_req r;
		bool conflict;

		o = t_rand(&rng) % NOWN;
		type = t_rand(&rng) % 3;
		random_range(&rng, &s, &e, own[o].kind);
		conflict = model_conflict(o, type, s, e);
		if (t_rand(&rng) % 4 == 0 && type != DAXFS_LCK_UN) {
			/* F_GETLK: what it reports conflicts, from elsewhere */
			r = req(o, type, s, e);
			CHECK_EQ(daxfs_lock_get(&fh[own[o].host], 7, &r), 0);
			CHECK_EQ(r.type != DAXFS_LCK_UN, conflict);
			if (r.type != DAXFS_LCK_UN) {
				int x = owner_of(r.host, r.owner, r.kind);

				CHECK(x >= 0 && x != o);
				CHECK(r.start <= e && s <= r.end);
				CHECK(x >= 0 && (u32)(100 + x) == r.pid);
			}
			continue;
		}
		r = req(o, type, s, e);
		err = daxfs_lock_set(&fh[own[o].host], 7, &r, 0);
		if (err != (conflict ? -EAGAIN : 0) && fails++ < 5)
			fprintf(stderr, "op %d owner %d type %u [%llu,%llx]: %d\n",
				i, o, type, (unsigned long long)s,
				(unsigned long long)e, err);
		CHECK_EQ(err, conflict ? -EAGAIN : 0);
		if (!conflict)
			for (p = 0; p < NPOS; p++)
				if (pos_in(p, s, e))
					model[o][p] = type;
		if (i % 16 == 0)
			compare_with_model();
	}
	compare_with_model();
	/* clean up: everyone unlocks everything */
	for (o = 0; o < NOWN; o++) {
		struct daxfs_lock_req r = req(o, DAXFS_LCK_UN, 0,
					      DAXFS_LOCK_EOF);

		CHECK_EQ(daxfs_lock_set(&fh[own[o].host], 7, &r, 0), 0);
	}
	memset(model, 0, sizeof(model));
	compare_with_model();
}

/* A holder's host dies: its lock stands until its lease runs out, then
 * the next request recovers the host and gets the lock. */
static void test_dead_holder(void)
{
	struct daxfs_fs d;
	struct daxfs_lock_req r = req(0, DAXFS_LCK_WR, 0, 99);
	struct daxfs_lock_req w = req(2, DAXFS_LCK_WR, 50, 60);
	u64 seq;

	CHECK_EQ(t_join(&d, region, SIZE), 0);
	CHECK_EQ(daxfs_lock_set(&d, 11, &r, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 11, &w, 0), -EAGAIN);
	seq = w.seq;
	CHECK(!daxfs_lock_changed(&fh[1], 11, seq));
	/* F_GETLK shows the other host's owner */
	w.type = DAXFS_LCK_RD;
	CHECK_EQ(daxfs_lock_get(&fh[1], 11, &w), 0);
	CHECK_EQ(w.host, d.host);
	CHECK_EQ(w.pid, 100);
	CHECK_EQ(w.type, DAXFS_LCK_WR);
	/* d stops renewing (dies) and a lease passes */
	t_age(&fh[0], d.host);
	w = req(2, DAXFS_LCK_WR, 50, 60);
	CHECK_EQ(daxfs_lock_set(&fh[1], 11, &w, 0), 0);
	CHECK(daxfs_lock_changed(&fh[1], 11, seq));
	w.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[1], 11, &w, 0), 0);
	t_obs_detach(&d);
}

/* A host that leaves with locks held gives them back. */
static void test_leave_releases(void)
{
	struct daxfs_fs d;
	struct daxfs_lock_req r = req(0, DAXFS_LCK_RD, 0, DAXFS_LOCK_EOF);
	struct daxfs_lock_req w = req(2, DAXFS_LCK_WR, 5, 5);

	CHECK_EQ(t_join(&d, region, SIZE), 0);
	CHECK_EQ(daxfs_lock_set(&d, 12, &r, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 12, &w, 0), -EAGAIN);
	daxfs_host_leave(&d);
	CHECK_EQ(daxfs_lock_list(&fh[0], 12, NULL, NULL), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 12, &w, 0), 0);
	w.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[1], 12, &w, 0), 0);
	t_obs_detach(&d);
}

/*
 * The exec hand-over (docs/locks.md "Across exec"): host d holds a POSIX
 * lock (owner 1) and an OFD lock (owner 0x1010, inside the shifted
 * range) and waits for a third; host 0 adopts them, with OFD owners
 * moved by 0x1000 -> 0x8000, then retires d.  The locks stand as host
 * 0's, under the new owner; the waiting request went with d.
 */
static void test_adopt_across_exec(void)
{
	struct daxfs_fs d;
	struct daxfs_lock_req p = req(0, DAXFS_LCK_WR, 0, 9);
	struct daxfs_lock_req o = req(1, DAXFS_LCK_WR, 20, 29);
	struct daxfs_lock_req w = req(2, DAXFS_LCK_WR, 0, 0);
	struct daxfs_lock_req x = req(2, DAXFS_LCK_WR, 20, 20);
	struct daxfs_lock_req q = req(0, DAXFS_LCK_WR, 0, 0);
	struct daxfs_lock_req y = req(2, DAXFS_LCK_WR, 0, 0);
	struct daxfs_lock_shift sh = { .lo = 0x1000, .hi = 0x2000,
				       .to = 0x8000 };

	o.owner = 0x1010;
	CHECK_EQ(t_join(&d, region, SIZE), 0);
	CHECK_EQ(daxfs_lock_set(&d, 41, &p, 0), 0);
	CHECK_EQ(daxfs_lock_set(&d, 41, &o, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 42, &w, 0), 0);
	w = req(0, DAXFS_LCK_WR, 0, 0);
	CHECK_EQ(daxfs_lock_set(&d, 42, &w, DAXFS_LOCK_WAIT), -EAGAIN);
	CHECK_EQ(daxfs_lock_adopt(&fh[0], d.host, d.host_gen + 1, &sh), 0);
	CHECK_EQ(daxfs_lock_adopt(&fh[0], fh[0].host, fh[0].host_gen, &sh),
		 -EINVAL);
	/* a POSIX owner in the range is a process: it is not moved */
	q.owner = 0x1020;
	CHECK_EQ(daxfs_lock_set(&d, 43, &q, 0), 0);
	CHECK_EQ(daxfs_lock_adopt(&fh[0], d.host, d.host_gen, &sh), 3);
	y.type = DAXFS_LCK_RD;
	CHECK_EQ(daxfs_lock_get(&fh[1], 43, &y), 0);
	CHECK_EQ(y.owner, 0x1020);
	q.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[0], 43, &q, 0), 0);
	CHECK_EQ(daxfs_host_retire(&fh[0], d.host, d.host_gen), 0);
	/* held still, now by host 0 and the moved owner */
	x.type = DAXFS_LCK_RD;
	CHECK_EQ(daxfs_lock_get(&fh[1], 41, &x), 0);
	CHECK_EQ(x.host, fh[0].host);
	CHECK_EQ(x.owner, 0x8010);
	x = req(2, DAXFS_LCK_WR, 5, 5);
	CHECK_EQ(daxfs_lock_set(&fh[1], 41, &x, 0), -EAGAIN);
	/* host 0's owners unlock them: both ranges free */
	p.type = o.type = DAXFS_LCK_UN;
	o.owner = 0x8010;
	CHECK_EQ(daxfs_lock_set(&fh[0], 41, &p, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], 41, &o, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], 41, NULL, NULL), 0);
	/* the waiting request was d's: gone with it */
	w = req(2, DAXFS_LCK_UN, 0, 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 42, &w, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], 42, NULL, NULL), 0);
	t_obs_detach(&d);
}

/* Host 0 holds file 21 and waits for file 22; host 1 holds 22 and asks
 * to wait for 21: a cycle, EDEADLK for host 1. */
static void test_deadlock(void)
{
	struct daxfs_lock_req a = req(0, DAXFS_LCK_WR, 0, 0);
	struct daxfs_lock_req b = req(2, DAXFS_LCK_WR, 0, 0);

	CHECK_EQ(daxfs_lock_set(&fh[0], 21, &a, DAXFS_LOCK_WAIT), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 22, &b, DAXFS_LOCK_WAIT), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], 22, &a, DAXFS_LOCK_WAIT), -EAGAIN);
	CHECK_EQ(daxfs_lock_set(&fh[1], 21, &b, DAXFS_LOCK_WAIT), -EDEADLK);
	/* no cycle without the wait flag: a plain conflict */
	CHECK_EQ(daxfs_lock_set(&fh[1], 21, &b, 0), -EAGAIN);
	/* host 1 gives up 22: host 0's wait ends with the lock */
	b.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[1], 22, &b, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], 22, &a, DAXFS_LOCK_WAIT), 0);
	a.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[0], 21, &a, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], 22, &a, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], 0, NULL, NULL), 0);
}

/* The POSIX owner of host 0 blocks an OFD owner of the same host (they
 * conflict, as on Linux); a flock of the same file does not. */
static void test_classes(void)
{
	struct daxfs_lock_req p = req(0, DAXFS_LCK_WR, 0, DAXFS_LOCK_EOF);
	struct daxfs_lock_req d = req(1, DAXFS_LCK_RD, 3, 3);
	struct daxfs_lock_req f = req(4, DAXFS_LCK_WR, 0, DAXFS_LOCK_EOF);

	CHECK_EQ(daxfs_lock_set(&fh[0], 31, &p, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], 31, &d, 0), -EAGAIN);
	CHECK_EQ(daxfs_lock_set(&fh[1], 31, &f, 0), 0);
	p.type = f.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[0], 31, &p, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[1], 31, &f, 0), 0);
}

/* A bucket holds DAXFS_LOCK_RECS records: one more range is ENOLCK and
 * changes nothing; unlocking a middle byte needs a record too. */
static void test_full_bucket(void)
{
	struct daxfs_lock_req r;
	u32 i;

	for (i = 0; i < DAXFS_LOCK_RECS; i++) {
		r = req(0, DAXFS_LCK_WR, 2 * i, 2 * i);
		CHECK_EQ(daxfs_lock_set(&fh[0], 41, &r, 0), 0);
	}
	r = req(0, DAXFS_LCK_WR, 1000, 1000);
	CHECK_EQ(daxfs_lock_set(&fh[0], 41, &r, 0), -ENOLCK);
	r = req(0, DAXFS_LCK_RD, 0, 0);	/* a conversion fits */
	CHECK_EQ(daxfs_lock_set(&fh[0], 41, &r, 0), 0);
	r = req(0, DAXFS_LCK_UN, 0, DAXFS_LOCK_EOF);
	CHECK_EQ(daxfs_lock_set(&fh[0], 41, &r, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], 41, NULL, NULL), 0);
}

/* Threads, each its own host, add to a counter under a write lock. */
#define NTHREADS 4
#define ROUNDS 3000
static volatile u64 counter;

static void *worker(void *arg)
{
	struct daxfs_fs fs;
	struct t_renewer rn;
	struct daxfs_lock_req r;
	u32 round, i;
	u64 v;

	if (t_join_kept(&fs, &rn, region, SIZE))
		return (void *)1;
	for (i = 0; i < ROUNDS; i++) {
		r = req(0, DAXFS_LCK_WR, 10, 20);
		r.owner = (u64)(uintptr_t)arg;
		for (round = 0; daxfs_lock_set(&fs, 51, &r, DAXFS_LOCK_WAIT) ==
				-EAGAIN; round++) {
			u64 seq = r.seq;
			u32 us = daxfs_lock_backoff_us(round);

			if (!daxfs_lock_changed(&fs, 51, seq))
				usleep(us);
		}
		v = counter;
		sched_yield();
		counter = v + 1;
		r.type = DAXFS_LCK_UN;
		daxfs_lock_set(&fs, 51, &r, 0);
	}
	t_leave_kept(&fs, &rn);
	return NULL;
}

static void test_exclusion_threads(void)
{
	struct t_renewer rn[3];
	pthread_t t[NTHREADS];
	void *ret;
	int i;

	counter = 0;
	/* setup()'s hosts only wait meanwhile: keep their leases */
	for (i = 0; i < 3; i++)
		t_renew_start(&rn[i], &fh[i]);
	for (i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], &ret);
		CHECK(ret == NULL);
	}
	for (i = 0; i < 3; i++)
		t_renew_stop(&rn[i]);
	CHECK_EQ(counter, NTHREADS * ROUNDS);
}

int main(void)
{
	setup();
	RUN(test_model);
	RUN(test_classes);
	RUN(test_deadlock);
	RUN(test_full_bucket);
	RUN(test_leave_releases);
	RUN(test_dead_holder);
	RUN(test_adopt_across_exec);
	RUN(test_exclusion_threads);
	teardown();
	return t_done();
}
