// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A recoverer overtaken stops before its next change (docs/hosts.md "One
 * recoverer at a time").  B dies in link(d, e) at step 2 (count+1, nlink+1
 * marked).  A claims B's recovery and stalls, its own host alive, for
 * longer than the recovery lease (the hook): C takes the recovery over,
 * rolls the link back and frees the slot.  The recovery lease was the
 * counter A raised once at its claim: A then went on from what it had
 * read, rolled the link back a second time (the leaf freed twice, d's
 * inode freed with its name left, the directory's count 0 with one name
 * in it) and cleared B's lanes, by then a new host's (found by an audit
 * of recovery).
 *
 * Each case runs alone and with a new host N that joins the freed slot
 * and begins an op in the hook (the same thread: the lane B's op had):
 * N's lane must keep its epoch, owner and intent words, its slot stay
 * ALIVE.  Where A stalls:
 *   step  - inside the link's roll-back, having read its step
 *           (core/dir.c race point "dirent" on the held leaf);
 *   lane  - at the start of B's lane, the lane's claim just renewed
 *           (core/hosts.c race point "recover.lane").
 * Then a recovery that makes progress keeps its lease: C looks between
 * two of A's lanes with the lease run out since the first (t_age) and
 * must leave the recovery to A.
 *
 * Last, A overtaken inside a step of its own: B died holding an unlinked
 * file open, and A stalls in the drop of B's open set between taking the
 * entry out and settling the file (core/openset.c race point
 * "open.removed").  C then finds no entry to settle; A's settle stops at
 * its fence, its own lane still naming the file (OPEN_PUT).  Nobody
 * recovers a live host's lane, so A recovers it itself: the file is
 * freed, A's lanes are clean (without that the file leaked, nlink 0).
 */
#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "core/dir.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

enum { AT_STEP, AT_LANE, RENEWS, OWN_LANE };

static struct daxfs_fs A, B, C, N;
static struct daxfs_op nop;
static const void *hook_p;
static const char *hook_name;
static int mode, newhost, armed, fired, c_rc, n_joined, n_began;
static u64 n_a6;
static struct daxfs_lane *first_lane;

static void overtake(void)
{
	/* A is stalled here past the recovery lease */
	t_age(&A, B.host);
	c_rc = daxfs_recover_dead_hosts(&C);
	if (!newhost)
		return;
	/* a new host takes the freed slot and starts an op there */
	n_joined = t_join(&N, A.base, REGION);
	n_began = daxfs_op_begin(&N, &nop);
	if (!n_began && nop.lane)
		n_a6 = daxfs_load(&nop.lane->intent.a[6]);
}

void daxfs_race_point(const char *name, const void *p)
{
	struct daxfs_op cop = { .fs = &C };

	if (!armed || strcmp(name, hook_name))
		return;
	if (mode == RENEWS) {
		/* the first lane: C's lease clock starts; the next: C looks */
		if (!first_lane) {
			first_lane = (struct daxfs_lane *)p;
			t_age(&C, B.host);
			return;
		}
		armed = 0;
		fired++;
		c_rc = daxfs_host_try_dead(&cop, B.host);
		return;
	}
	if (mode != OWN_LANE && p != hook_p)
		return;
	armed = 0;
	fired++;
	overtake();
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	(void)ctx;
	fprintf(stderr, "fsck: %s ino %llu have %llu want %llu: %s\n", p->name,
		(unsigned long long)p->ino, (unsigned long long)p->have,
		(unsigned long long)p->want, p->msg);
}

/* C and A leave; fsck -n must find no error */
static void leave_and_check(void *region)
{
	struct daxfs_check_result res;

	daxfs_host_leave(&C);
	daxfs_host_leave(&A);
	memset(&res, 0, sizeof(res));
	CHECK_EQ(t_fsck(region, REGION, false, report, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	t_region_free(region, REGION);
}

/* B: link(d, e) by hand up to step 2, then dies; its lane in *blane */
static u64 dead_linker(struct daxfs_dirent **held_de,
		       struct daxfs_lane **blane)
{
	struct daxfs_inode *dp, *ip;
	struct daxfs_iref ref;
	struct daxfs_dent de;
	struct daxfs_op op;
	u64 f = 0, leaf;

	CHECK_EQ(daxfs_mknod(&A, ROOT, "d", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &f), 0);
	CHECK_EQ(daxfs_op_begin(&B, &op), 0);
	*blane = op.lane;
	CHECK_EQ(daxfs_dir_writable(&op, ROOT, &dp), 0);
	CHECK_EQ(daxfs_inode_get(&op, ROOT, &ref), 0);
	CHECK_EQ(daxfs_dir_find(&op, &ref, "d", 1,
				daxfs_name_hash(&B, "d", 1), &de), 0);
	*held_de = daxfs_dirent_at(&B, de.leaf);
	daxfs_store(daxfs_state_word(&B, rename_claim), daxfs_my_claim(&B));
	daxfs_store32(&(*held_de)->removed,
		      daxfs_load32(&(*held_de)->removed) | DAXFS_DE_LINKING);
	leaf = daxfs_dirent_new(&op, "e", 1, daxfs_name_hash(&B, "e", 1), f,
				8, 0);
	CHECK(leaf != 0);
	daxfs_intent_arg(&op, 4, 0);
	daxfs_intent_arg(&op, 5, 0);
	daxfs_intent_arg(&op, 6, 4 | 0 << 8);
	daxfs_intent_set(&op, DAXFS_INTENT_RENAME, ROOT, f, leaf, de.leaf);
	CHECK_EQ(daxfs_dir_count_add(dp), 0);
	daxfs_store(&op.lane->intent.a[6], 4 | 1 << 8);
	CHECK_EQ(daxfs_inode_get_writable(&op, f, &ip), 0);
	CHECK_EQ(daxfs_nlink_inc(ip), 0);
	daxfs_store(&op.lane->intent.a[6], 4 | 2 << 8);
	t_age(&A, B.host);		/* B dies */
	return f;
}

static void run(int m, int nh)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_dirent *held_de;
	struct daxfs_lane *blane;
	struct daxfs_attr at;
	u64 f, x = 0, w;
	u32 bslot;
	int rc;

	fprintf(stderr, "-- %s%s\n", m == AT_STEP ? "step" : m == AT_LANE ?
		"lane" : "renews", nh ? " newhost" : "");
	mode = m;
	newhost = nh;
	fired = 0;
	c_rc = n_joined = n_began = -1;
	n_a6 = 0;
	first_lane = NULL;
	memset(&nop, 0, sizeof(nop));
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	bslot = B.host;
	f = dead_linker(&held_de, &blane);
	hook_name = m == AT_STEP ? "dirent" : "recover.lane";
	hook_p = m == AT_STEP ? (const void *)held_de : (const void *)blane;
	armed = 1;
	rc = daxfs_recover_dead_hosts(&A);
	fprintf(stderr, "A recovered %d, hook fired %d, C %d\n", rc, fired,
		c_rc);
	CHECK_EQ(fired, 1);
	w = daxfs_load(&A.hosts[bslot].state);
	if (m == RENEWS) {
		/* A renewed its claim at every lane: C left it alone */
		CHECK_EQ(c_rc, 0);
		CHECK_EQ(rc, 1);
		CHECK_EQ(daxfs_host_st(w), DAXFS_HOST_FREE);
		CHECK_EQ(daxfs_load(&A.hosts[bslot].recovered_by),
			 daxfs_my_claim(&A));
	} else {
		CHECK_EQ(c_rc, 1);
	}
	if (nh) {
		CHECK_EQ(n_joined, 0);
		CHECK_EQ(n_began, 0);
		CHECK_EQ(N.host, bslot);
		CHECK(nop.lane == blane);
		fprintf(stderr, "N's op: lane epoch %llu owner %llu a6 %#llx (was %#llx)\n",
			(unsigned long long)daxfs_load(&nop.lane->epoch),
			(unsigned long long)daxfs_load(&nop.lane->owner),
			(unsigned long long)daxfs_load(&nop.lane->intent.a[6]),
			(unsigned long long)n_a6);
		CHECK(daxfs_load(&nop.lane->epoch) != 0);
		CHECK(daxfs_load(&nop.lane->owner) != 0);
		CHECK_EQ(daxfs_load(&nop.lane->intent.a[6]), n_a6);
		CHECK_EQ(w, daxfs_host_word(N.host_gen, DAXFS_HOST_ALIVE));
		daxfs_op_end(&nop);
		daxfs_host_leave(&N);
	}
	CHECK_EQ(daxfs_lookup(&A, ROOT, "d", 1, &x), 0);
	CHECK_EQ(x, f);
	rc = daxfs_getattr(&A, f, &at);
	CHECK_EQ(rc, 0);
	CHECK_EQ(rc ? 0 : at.nlink, 1);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "e", 1, &x), -ENOENT);
	/* the link can be made again: the count and the claim are right */
	CHECK_EQ(daxfs_link(&C, f, ROOT, "e", 1), 0);
	CHECK_EQ(daxfs_unlink(&A, ROOT, "e", 1), 0);
	leave_and_check(region);
}

/* B holds g open, unlinked, with data, and dies; A recovers B and is
 * overtaken inside the settle of g (see the top) */
static void run_own_lane(void)
{
	void *region = t_setup(&A, REGION, NULL);
	static char buf[3 * 4096];
	struct daxfs_attr at;
	struct daxfs_lane *lane;
	u64 g;
	u32 i;
	int rc;

	fprintf(stderr, "-- own lane\n");
	mode = OWN_LANE;
	newhost = 0;
	fired = 0;
	c_rc = -1;
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	g = t_mkreg(&B, ROOT, "g");
	memset(buf, 'g', sizeof(buf));
	CHECK_EQ(t_pwrite(&B, g, buf, sizeof(buf), 0), (s64)sizeof(buf));
	CHECK_EQ(daxfs_open_get(&B, g), 0);
	CHECK_EQ(daxfs_unlink(&B, ROOT, "g", 1), 0);
	t_age(&A, B.host);		/* B dies */
	hook_name = "open.removed";
	armed = 1;
	rc = daxfs_recover_dead_hosts(&A);
	fprintf(stderr, "A recovered %d, hook fired %d, C %d\n", rc, fired,
		c_rc);
	CHECK_EQ(fired, 1);
	CHECK_EQ(c_rc, 1);
	CHECK_EQ(daxfs_getattr(&A, g, &at), -ENOENT);
	for (i = 0; i < DAXFS_LANES; i++) {
		lane = daxfs_lane_at(&A, A.host, i);
		CHECK_EQ(daxfs_load(&lane->intent.op), DAXFS_INTENT_NONE);
		CHECK_EQ(daxfs_load(&lane->epoch), 0);
		CHECK_EQ(daxfs_load(&lane->pad[DAXFS_LANE_HOLD_PAGES]), 0);
	}
	leave_and_check(region);
}

int main(void)
{
	run(AT_STEP, 0);
	run(AT_STEP, 1);
	run(AT_LANE, 0);
	run(AT_LANE, 1);
	run(RENEWS, 0);
	run_own_lane();
	return t_done();
}
