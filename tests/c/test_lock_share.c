// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Locks of an open file description shared by processes that are each a
 * host (docs/locks.md "Descriptions shared across hosts").  A request
 * marked DAXFS_LCK_SHARED moves the owner's records to the requesting
 * host first, so it neither conflicts with them nor leaves them behind;
 * daxfs_lock_adopt_owner moves them from a host only while that host is
 * ALIVE.  Races: two adopters at once (one gets them, the other none)
 * and an adopter against the host being declared dead (the records are
 * the adopter's locks, or no locks at all: never held by both).  The
 * exec hand-over's whole-host adopt takes nothing from a host declared
 * dead either (it took the stale records, and with them a lock another
 * host may hold by then).
 */
#include <pthread.h>

#include "tutil.h"

#define MiB (1ULL << 20)
#define SIZE (16 * MiB)
#define INO 77
#define X 0x5eed0001ULL		/* the shared description's id */
#define Y 0x5eed0002ULL		/* another description's */
#define ROUNDS 200

static void *region;
static struct daxfs_fs fh[3];
static struct t_renewer rn[3];

static struct daxfs_lock_req fl(u64 owner, u32 type, u32 kind)
{
	struct daxfs_lock_req r = {
		.start = 0, .end = DAXFS_LOCK_EOF, .owner = owner,
		.type = type, .kind = kind, .pid = 7,
	};

	return r;
}

#define FL_SH	(DAXFS_LCK_FLOCK | DAXFS_LCK_SHARED)

/* The host slot of the lock in the way of another owner's write flock
 * on ino, or -1. */
static int holder(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_lock_req r = fl(0xdead, DAXFS_LCK_WR, DAXFS_LCK_FLOCK);

	CHECK_EQ(daxfs_lock_get(fs, ino, &r), 0);
	return r.type == DAXFS_LCK_UN ? -1 : (int)r.host;
}

/* fs finds the lock free, takes it with *g, and gives it back (*g
 * becomes the unlock) */
static void takes_it(struct daxfs_fs *fs, struct daxfs_lock_req *g)
{
	CHECK_EQ(holder(fs, INO), -1);
	CHECK_EQ(daxfs_lock_set(fs, INO, g, 0), 0);
	g->type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(fs, INO, g, 0), 0);
}

static void declare_dead(struct daxfs_fs *fs, u32 slot, u64 gen)
{
	u64 w = daxfs_host_word(gen, DAXFS_HOST_ALIVE);

	daxfs_cas(&daxfs_host_at(fs, slot)->state, &w,
		  daxfs_host_word(gen, DAXFS_HOST_DEAD));
}

static void setup(void)
{
	struct daxfs_format_opts o = { .max_hosts = 8 };
	int i;

	region = t_setup_hosts(fh, 3, SIZE, &o);
	for (i = 0; i < 3; i++)
		t_renew_start(&rn[i], &fh[i]);
}

static void teardown(void)
{
	int i;

	for (i = 0; i < 3; i++)
		t_leave_kept(&fh[i], &rn[i]);
	t_region_free(region, SIZE);
}

/* Requests of one description from two hosts act on the same lock. */
static void test_shared_requests(void)
{
	struct daxfs_lock_req r = fl(X, DAXFS_LCK_WR, FL_SH);

	CHECK_EQ(daxfs_lock_set(&fh[0], INO, &r, 0), 0);
	CHECK_EQ(r.kind, FL_SH);	/* the caller's request is kept */
	CHECK_EQ(holder(&fh[2], INO), (int)fh[0].host);
	/* the other host's request of it: no conflict; the lock moves */
	r = fl(X, DAXFS_LCK_WR, FL_SH);
	CHECK_EQ(daxfs_lock_set(&fh[1], INO, &r, 0), 0);
	CHECK_EQ(holder(&fh[2], INO), (int)fh[1].host);
	/* without the mark the same id on a third host is another owner */
	r = fl(X, DAXFS_LCK_WR, DAXFS_LCK_FLOCK);
	CHECK_EQ(daxfs_lock_set(&fh[2], INO, &r, 0), -EAGAIN);
	/* converted to shared by the first host: others may share it */
	r = fl(X, DAXFS_LCK_RD, FL_SH);
	CHECK_EQ(daxfs_lock_set(&fh[0], INO, &r, 0), 0);
	r = fl(Y, DAXFS_LCK_RD, DAXFS_LCK_FLOCK);
	CHECK_EQ(daxfs_lock_set(&fh[2], INO, &r, 0), 0);
	r.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[2], INO, &r, 0), 0);
	/* its F_GETLK sees its own lock as no conflict, and moves nothing */
	r = fl(X, DAXFS_LCK_WR, FL_SH);
	CHECK_EQ(daxfs_lock_get(&fh[1], INO, &r), 0);
	CHECK_EQ(r.type, DAXFS_LCK_UN);
	CHECK_EQ(r.kind, FL_SH);
	CHECK_EQ(holder(&fh[2], INO), (int)fh[0].host);
	/* one record, wherever it went */
	CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 1);
	/* a POSIX owner is a process: never shared */
	r = fl(X, DAXFS_LCK_WR, DAXFS_LCK_POSIX | DAXFS_LCK_SHARED);
	CHECK_EQ(daxfs_lock_set(&fh[1], INO, &r, 0), -EINVAL);
	/* the unlock from the second host releases it */
	r = fl(X, DAXFS_LCK_UN, FL_SH);
	CHECK_EQ(daxfs_lock_set(&fh[1], INO, &r, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 0);
}

/* A survivor takes the owner's OFD and flock locks of a host: only
 * those, only of that generation. */
static void test_adopt_owner(void)
{
	struct daxfs_lock_req f = fl(X, DAXFS_LCK_WR, FL_SH);
	struct daxfs_lock_req o = fl(X, DAXFS_LCK_WR,
				     DAXFS_LCK_OFD | DAXFS_LCK_SHARED);
	struct daxfs_lock_req p = fl(X, DAXFS_LCK_WR, DAXFS_LCK_POSIX);
	struct daxfs_lock_req y = fl(Y, DAXFS_LCK_WR, DAXFS_LCK_OFD);
	struct t_renewer drn;
	struct daxfs_fs d;

	o.end = 9;
	p.start = 100;
	p.end = 109;
	y.start = 50;
	y.end = 59;
	CHECK_EQ(t_join_kept(&d, &drn, region, SIZE), 0);
	CHECK_EQ(daxfs_lock_set(&d, INO, &f, 0), 0);
	CHECK_EQ(daxfs_lock_set(&d, INO, &o, 0), 0);
	CHECK_EQ(daxfs_lock_set(&d, INO, &p, 0), 0);
	CHECK_EQ(daxfs_lock_set(&d, INO, &y, 0), 0);
	CHECK_EQ(daxfs_lock_adopt_owner(&fh[0], d.host, d.host_gen + 1, INO,
					X), 0);
	CHECK_EQ(daxfs_lock_adopt_owner(&fh[0], fh[0].host, fh[0].host_gen,
					INO, X), -EINVAL);
	CHECK_EQ(daxfs_lock_adopt_owner(&fh[0], d.host, d.host_gen, INO, X),
		 2);
	CHECK_EQ(daxfs_lock_adopt_owner(&fh[0], d.host, d.host_gen, INO, X),
		 0);
	/* d ends: its POSIX lock and Y's go, X's stay, now host 0's */
	t_leave_kept(&d, &drn);
	t_obs_detach(&d);
	CHECK_EQ(holder(&fh[2], INO), (int)fh[0].host);
	CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 2);
	y.owner = 0xbeef;
	CHECK_EQ(daxfs_lock_set(&fh[2], INO, &y, 0), 0);
	y.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[2], INO, &y, 0), 0);
	f.type = o.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fh[0], INO, &f, 0), 0);
	CHECK_EQ(daxfs_lock_set(&fh[0], INO, &o, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 0);
}

/* A host declared dead (not yet recovered: its records still lie in
 * the bucket) holds no locks: neither adopt takes its records, and
 * another owner may lock at once. */
static void test_adopt_dead(void)
{
	struct daxfs_lock_req f = fl(X, DAXFS_LCK_WR, FL_SH);
	struct daxfs_lock_req g = fl(Y, DAXFS_LCK_WR, DAXFS_LCK_FLOCK);
	struct t_renewer drn;
	struct daxfs_fs d;

	CHECK_EQ(t_join_kept(&d, &drn, region, SIZE), 0);
	CHECK_EQ(daxfs_lock_set(&d, INO, &f, 0), 0);
	t_renew_stop(&drn);
	declare_dead(&fh[0], d.host, d.host_gen);
	CHECK_EQ(daxfs_lock_adopt_owner(&fh[0], d.host, d.host_gen, INO, X),
		 0);
	CHECK_EQ(daxfs_lock_adopt(&fh[1], d.host, d.host_gen, NULL), 0);
	takes_it(&fh[2], &g);
	daxfs_recover_dead_hosts(&fh[0]);
	t_obs_detach(&d);
}

struct racer {
	pthread_barrier_t *go;
	struct daxfs_fs *fs;	/* the adopter, or NULL: declares dead */
	struct daxfs_fs *d;
	int got;
};

static void *race_main(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(r->go);
	if (r->fs)
		r->got = daxfs_lock_adopt_owner(r->fs, r->d->host,
						r->d->host_gen, INO, X);
	else
		declare_dead(&fh[0], r->d->host, r->d->host_gen);
	return NULL;
}

static void race(struct racer *a, struct racer *b)
{
	pthread_barrier_t go;
	pthread_t t[2];

	pthread_barrier_init(&go, NULL, 2);
	a->go = b->go = &go;
	pthread_create(&t[0], NULL, race_main, a);
	pthread_create(&t[1], NULL, race_main, b);
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	pthread_barrier_destroy(&go);
}

/* Two survivors adopt at once: one of them gets the lock. */
static void test_two_adopters(void)
{
	struct daxfs_lock_req f;
	struct t_renewer drn;
	struct daxfs_fs d;
	int i, w, wins[2] = { 0, 0 };

	for (i = 0; i < ROUNDS; i++) {
		struct racer a = { .fs = &fh[1], .d = &d };
		struct racer b = { .fs = &fh[2], .d = &d };

		CHECK_EQ(t_join_kept(&d, &drn, region, SIZE), 0);
		f = fl(X, DAXFS_LCK_WR, FL_SH);
		CHECK_EQ(daxfs_lock_set(&d, INO, &f, 0), 0);
		race(&a, &b);
		CHECK(a.got >= 0 && b.got >= 0);
		CHECK_EQ(a.got + b.got, 1);
		w = a.got ? 1 : 2;
		wins[w - 1]++;
		t_leave_kept(&d, &drn);
		t_obs_detach(&d);
		/* d is gone: the lock stands, the winner's */
		CHECK_EQ(holder(&fh[0], INO), (int)fh[w].host);
		f.type = DAXFS_LCK_UN;
		CHECK_EQ(daxfs_lock_set(&fh[w], INO, &f, 0), 0);
		CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 0);
	}
	printf("two adopters: first won %d, second %d of %d\n", wins[0],
	       wins[1], ROUNDS);
}

/* An adopter while the host is declared dead: the lock is the
 * adopter's, or nobody's. */
static void test_adopt_vs_dead(void)
{
	struct daxfs_lock_req f, g;
	struct t_renewer drn;
	struct daxfs_fs d;
	int i, kept = 0;

	for (i = 0; i < ROUNDS; i++) {
		struct racer a = { .fs = &fh[1], .d = &d };
		struct racer b = { .fs = NULL, .d = &d };

		CHECK_EQ(t_join_kept(&d, &drn, region, SIZE), 0);
		f = fl(X, DAXFS_LCK_WR, FL_SH);
		CHECK_EQ(daxfs_lock_set(&d, INO, &f, 0), 0);
		t_renew_stop(&drn);
		race(&a, &b);
		CHECK(a.got == 0 || a.got == 1);
		g = fl(Y, DAXFS_LCK_WR, DAXFS_LCK_FLOCK);
		if (a.got) {
			kept++;
			CHECK_EQ(holder(&fh[0], INO), (int)fh[1].host);
			CHECK_EQ(daxfs_lock_set(&fh[0], INO, &g, 0), -EAGAIN);
			f.type = DAXFS_LCK_UN;
			CHECK_EQ(daxfs_lock_set(&fh[1], INO, &f, 0), 0);
		} else {
			takes_it(&fh[0], &g);
		}
		daxfs_recover_dead_hosts(&fh[0]);
		t_obs_detach(&d);
		CHECK_EQ(daxfs_lock_list(&fh[0], INO, NULL, NULL), 0);
	}
	printf("adopter vs declared dead: adopted %d, lost %d of %d\n", kept,
	       ROUNDS - kept, ROUNDS);
}

int main(void)
{
	setup();
	RUN(test_shared_requests);
	RUN(test_adopt_owner);
	RUN(test_adopt_dead);
	RUN(test_two_adopters);
	RUN(test_adopt_vs_dead);
	teardown();
	return t_done();
}
