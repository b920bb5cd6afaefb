// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A lock bucket's claim word that no lock op wrote (a peer's stray store):
 * one naming a live host, or this very op's lane.  A lock op holds the
 * claim for a few record stores, so a claim still held after three leases
 * is damage: the lock call says EUCLEAN instead of spinning for ever (it
 * did: only a dead holder's claim was taken over, and a live one, the
 * caller's own host included, was waited for with no bound).  A claim of
 * a host that is gone is still taken over at once, and the bucket works
 * again once the word is cleared.
 */
#include "tutil.h"
#include "core/lock.h"

#define SIZE (16 * 1024 * 1024ULL)
#define LEASE_MS 300
#define INO 77

static struct daxfs_fs fa, fb;

static u64 *claim_of(u64 ino)
{
	struct daxfs_lock_root *root = daxfs_lock_root_get(&fa);
	struct daxfs_lock_bucket *b;

	CHECK(root != NULL);
	if (!root)
		abort();
	b = daxfs_lock_bucket_at(&fa, root, daxfs_lock_bucket_index(ino));
	CHECK(b != NULL);
	if (!b)
		abort();
	return &b->claim;
}

static struct daxfs_lock_req wr(u64 owner)
{
	struct daxfs_lock_req r = {
		.start = 0, .end = 99, .owner = owner, .type = DAXFS_LCK_WR,
		.kind = DAXFS_LCK_POSIX, .pid = 100,
	};

	return r;
}

/* A claim of lane `lane` of the host of fs. */
static u64 claim_word(struct daxfs_fs *fs, u32 lane)
{
	return ((u64)(lane + 1) << DAXFS_LOCK_CLAIM_LANE_SHIFT) |
	       daxfs_lock_me(fs);
}

static void expect_euclean_soon(u64 forged, const char *who)
{
	struct daxfs_lock_req r = wr(1);
	double t = t_now();

	daxfs_store(claim_of(INO), forged);
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), -EUCLEAN);
	t = t_now() - t;
	printf("  a claim of %s: EUCLEAN after %.2f s (lease %d ms)\n", who,
	       t, LEASE_MS);
	/* the bound is three leases of our clock, with room for a slow
	 * machine: never the unbounded wait */
	CHECK(t < 60.0);
	CHECK_EQ(daxfs_load(claim_of(INO)), forged);	/* left for fsck */
}

static void test_forged_claims(void)
{
	struct daxfs_lock_req r = wr(1);
	u32 lane;

	/* the first lock makes the table */
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	r.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	r = wr(1);
	/* a live peer's lane: waited for three leases, then damage */
	expect_euclean_soon(claim_word(&fb, 3), "a live peer");
	/* our own host: another thread's op is waited for as a peer's is;
	 * our op's own lane is damage at once */
	for (lane = 0; lane < 3; lane++)
		expect_euclean_soon(claim_word(&fa, lane), "this host");
	/* a host slot no one holds: taken over, the lock is granted */
	daxfs_store(claim_of(INO), claim_word(&fb, 3) + 5);
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	r.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	/* cleared (as fsck does): works again, on both hosts */
	daxfs_store(claim_of(INO), claim_word(&fb, 3));
	r = wr(1);
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), -EUCLEAN);
	daxfs_store(claim_of(INO), 0);
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	r = wr(2);
	CHECK_EQ(daxfs_lock_set(&fb, INO, &r, 0), -EAGAIN);
	r = wr(1);
	r.type = DAXFS_LCK_UN;
	CHECK_EQ(daxfs_lock_set(&fa, INO, &r, 0), 0);
	r = wr(2);
	CHECK_EQ(daxfs_lock_set(&fb, INO, &r, 0), 0);
}

int main(void)
{
	struct daxfs_format_opts o = { .lease_ms = LEASE_MS, .max_hosts = 8 };
	struct t_renewer ra, rb;
	void *region;

	region = t_setup(&fa, SIZE, &o);
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	t_renew_start(&ra, &fa);
	t_renew_start(&rb, &fb);
	RUN(test_forged_claims);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	return t_done();
}
