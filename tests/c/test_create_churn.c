// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * open(O_CREAT) of one name while other hosts create and unlink it
 * (daxfs_path_create, what the preload's open and the Python binding's
 * create call).  In an existing directory the answer is always the file:
 * made now (1) or found (0).  Found by an audit of retry bounds (session
 * 53): with four hosts churning one name, the create gave ENOENT (the
 * inode it found was unlinked and freed before its getattr: 255,112 times
 * in 15 s) and EAGAIN (16 rounds lost in a row: 77 times).  Each host is
 * a thread with its own handle on one region, as in test_lib_rejoin.c.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "tutil.h"
#include "daxfs/libdaxfs.h"

#define MiB		(1ULL << 20)
#define REGION		(64 * MiB)
#define HOSTS		4
#define RUN_NS		1500000000LL	/* per kind of churn */

static char path[64];
static volatile int stop;

struct churner {
	int kind;		/* 0: create, unlink; 1: create O_TRUNC */
	long made, found, failed;
	int first_err;
};

static s64 mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (s64)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void *churn(void *arg)
{
	struct churner *c = arg;
	struct daxfs_handle *h;
	uint64_t ino;
	u8 b = 'x';
	int r;

	if (daxfs_region_open(path, 0, &h)) {
		c->failed++;
		return NULL;
	}
	while (!stop) {
		r = daxfs_path_create(h, "/x", 0644,
				      c->kind ? DAXFS_CREATE_TRUNC : 0, &ino);
		if (r == 1) {
			c->made++;
		} else if (r == 0) {
			c->found++;
		} else {
			if (!c->failed++)
				c->first_err = r;
			continue;
		}
		/* bytes, so that the next O_TRUNC has something to cut */
		daxfs_pwrite(h, ino, &b, 1, 0);
		daxfs_path_unlink(h, "/x");
	}
	daxfs_region_close(h);
	return NULL;
}

static void run_churn(int kind)
{
	struct churner c[HOSTS];
	pthread_t th[HOSTS];
	long made = 0, found = 0;
	s64 end;
	int i;

	memset(c, 0, sizeof(c));
	stop = 0;
	for (i = 0; i < HOSTS; i++) {
		c[i].kind = kind;
		pthread_create(&th[i], NULL, churn, &c[i]);
	}
	end = mono() + RUN_NS;
	while (mono() < end)
		usleep(10000);
	stop = 1;
	for (i = 0; i < HOSTS; i++) {
		pthread_join(th[i], NULL);
		if (c[i].failed)
			fprintf(stderr, "  host %d: %ld creates failed, the first "
				"with %d\n", i, c[i].failed, c[i].first_err);
		CHECK_EQ(c[i].failed, 0);
		made += c[i].made;
		found += c[i].found;
	}
	fprintf(stderr, "  %s: %ld made, %ld found\n",
		kind ? "O_TRUNC" : "plain", made, found);
	CHECK(made > 0);
}

static void test_create_while_others_churn(void)
{
	run_churn(0);
}

static void test_create_trunc_while_others_churn(void)
{
	run_churn(1);
}

int main(void)
{
	struct daxfs_mkfs_opts o;

	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-churn.%d", (int)getpid());
	memset(&o, 0, sizeof(o));
	o.force = 1;
	if (daxfs_region_create(path, REGION, &o)) {
		fprintf(stderr, "mkfs failed\n");
		return 2;
	}
	RUN(test_create_while_others_churn);
	RUN(test_create_trunc_while_others_churn);
	unlink(path);
	return t_done();
}
