// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Free-stack ABA (docs/alloc.md "Free stacks"): a host delayed between
 * reading a stack head and its CAS, while another host does 2^20 pops and
 * pushes, must not install a stale next pointer: no object may be handed
 * out while it is still allocated.  The pause sits exactly in the pop's
 * window (DAXFS_POP_WINDOW, this file compiles the allocator itself with
 * it), so the test is deterministic and needs no timing.
 */
#include <pthread.h>
#include <sched.h>

static void pop_window(void);
#define DAXFS_POP_WINDOW(fs, class)	pop_window()
#include "../../core/alloc.c"
#include "tutil.h"

#define MiB		(1ULL << 20)
#define CYCLES		(1ULL << 19)	/* pop + push each: 2^20 CASes */

static __thread int armed;		/* the delayed host's thread */
static int paused, released;

/* The delayed host: first pop parks here until the other host is done. */
static void pop_window(void)
{
	if (!armed)
		return;
	armed = 0;
	__atomic_store_n(&paused, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&released, __ATOMIC_SEQ_CST))
		sched_yield();
}

struct delayed {
	void *r;
	u64 size;
	u64 got;
};

static void *delayed_host(void *arg)
{
	struct delayed *d = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;

	if (t_join(&fs, d->r, d->size))
		return NULL;
	daxfs_op_begin(&fs, &op);
	armed = 1;
	d->got = daxfs_alloc(&op, DAXFS_CLASS_64);
	daxfs_op_end(&op);
	/* stays joined: its object is still allocated */
	return NULL;
}

static void test_delayed_pop(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct delayed d = { .size = 16 * MiB };
	pthread_t th;
	u64 a, b, e, x, y, i;

	d.r = t_setup(&fs, d.size, NULL);
	/* a fresh page of 64-byte objects: stack A, B, E, ... */
	daxfs_op_begin(&fs, &op);
	x = daxfs_alloc(&op, DAXFS_CLASS_64);
	CHECK_EQ(daxfs_free_now(&op, x, DAXFS_CLASS_64), 0);
	a = daxfs_alloc(&op, DAXFS_CLASS_64);
	CHECK_EQ(daxfs_free_now(&op, a, DAXFS_CLASS_64), 0);
	daxfs_op_end(&op);

	/* the delayed host reads head A and A's next B, then stops */
	pthread_create(&th, NULL, delayed_host, &d);
	while (!__atomic_load_n(&paused, __ATOMIC_SEQ_CST))
		sched_yield();

	/* meanwhile: B and E are taken and stay allocated, A goes back on
	 * top (over E's successor), then 2^20 pops and pushes in all */
	daxfs_op_begin(&fs, &op);
	CHECK_EQ(daxfs_alloc(&op, DAXFS_CLASS_64), a);
	b = daxfs_alloc(&op, DAXFS_CLASS_64);
	e = daxfs_alloc(&op, DAXFS_CLASS_64);
	CHECK_EQ(daxfs_free_now(&op, a, DAXFS_CLASS_64), 0);
	for (i = 2; i < CYCLES; i++) {
		x = daxfs_alloc(&op, DAXFS_CLASS_64);
		CHECK_EQ(daxfs_free_now(&op, x, DAXFS_CLASS_64), 0);
	}
	daxfs_op_end(&op);

	__atomic_store_n(&released, 1, __ATOMIC_SEQ_CST);
	pthread_join(th, NULL);
	CHECK_EQ(d.got, a);	/* A was free: the delayed pop may have it */

	/* the next two allocations must be neither B nor E (still ours) */
	daxfs_op_begin(&fs, &op);
	x = daxfs_alloc(&op, DAXFS_CLASS_64);
	y = daxfs_alloc(&op, DAXFS_CLASS_64);
	daxfs_op_end(&op);
	CHECK(x && x != a && x != b && x != e);
	CHECK(y && y != a && y != b && y != e && y != x);
	if (x == b || y == b)
		fprintf(stderr, "object %#llx handed out twice\n",
			(unsigned long long)b);
	t_region_free(d.r, d.size);
}

int main(void)
{
	RUN(test_delayed_pop);
	return t_done();
}
