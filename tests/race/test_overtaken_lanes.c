// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A recoverer overtaken before it reads a dead lane must not act on the
 * live op of a new host it finds there, in the lane recoveries beside the
 * namespace roll: the overlay's, the xattr change's, a file write's and
 * a shrink's, an unnamed file's (docs/recovery.md "Lane recoveries of an
 * overtaken recoverer").
 *
 * B dies with an op begun and nothing in flight.  A claims B's recovery
 * and, in a thread of its own, stalls at the start of that op's lane
 * (race point recover.lane).  C takes the recovery over and frees the
 * slot; a new host N joins it and runs a real op on B's old lane.  At a
 * point inside N's op, A resumes and runs to its end: N's words must be
 * as N left them when A is done, and N's op must end as it would have
 * alone (fsck clean).  Before, each case found A acting on N's op:
 *  - "overlay" (an insert, the lane's intent) and "overlay-nested" (a
 *    create's insert, the lane's pad words): N's pending claim tombed and
 *    its intent word (or pad word) zeroed;
 *  - "overlay-read": B dies with an insert claimed; A stalls after it
 *    read B's intent (race point ov.recover_read), and N's insert of the
 *    same key claims the bucket C withdrew: A tombed N's claim and
 *    zeroed N's intent word (a CAS from OV_INSERT would match N's too:
 *    only the look at the claim tells them apart);
 *  - "xattr": N's new set forgotten from its intent (a1 0), its claim on
 *    the inode's xattr word released, its intent word zeroed;
 *  - "truncate": the file's gate, closed by N's shrink, opened under it;
 *  - "write": N's page, named in its intent between its hold and its
 *    radix insert, freed by A, then mapped by N (a page both free and in
 *    a file);
 *  - "strict": N's atomic overwrite, its redo record committed (a6):
 *    the record claimed by A (a6 0) and freed with its log pages, which N
 *    then applies from and frees again;
 *  - "tmpfile": N's unnamed file, published, not yet in N's open set,
 *    given the ORPHAN mark (with nlink 0 and no holder: free for any
 *    settler to take) and its intent word marked settling.
 */
#include "overtaken.h"
#include "core/xattr.h"
#include "core/filegate.h"

#define OV_KEY daxfs_key(DAXFS_KEY_INODE, 1ULL << 40)
#define OV_VAL 0x123440ULL

static struct daxfs_fs N;
static struct daxfs_lane *blane;
static u64 f;			/* the case's file, made by A */
static u64 seen[3];		/* N's words at its point */
static u8 buf[DAXFS_PAGE_SIZE];

struct lcase {
	const char *name;
	const char *a_point;	/* A's stall, on B's lane */
	void (*b_op)(struct daxfs_op *bop);	/* B's op when it dies */
	const char *point;	/* in N's op, on B's old lane */
	void (*n_op)(void);
	void (*note)(void);	/* at N's point, before A resumes */
	int (*kept)(void);	/* after A: N's words as N left them? */
};

static struct daxfs_intent *bin(void)
{
	return &blane->intent;
}

static struct daxfs_bucket *bucket(u64 idx)
{
	return &N.buckets[idx];
}

/* overlay: an insert with the lane's intent */
static void ov_n_op(void)
{
	struct daxfs_op op;

	CHECK_EQ(daxfs_op_begin(&N, &op), 0);
	CHECK(op.lane == blane);
	CHECK_EQ(daxfs_ov_insert(&op, OV_KEY, OV_VAL), 0);
	CHECK_EQ(daxfs_ov_delete(&op, OV_KEY, OV_VAL), 0);
	daxfs_op_end(&op);
}

static void ov_note(void)
{
	seen[0] = daxfs_load(&bin()->a[0]);
	seen[1] = daxfs_load(&bin()->a[1]);
}

static int ov_kept(void)
{
	return daxfs_load(&bin()->op) == DAXFS_INTENT_OV_INSERT &&
	       daxfs_load(&bucket(seen[0])->key) ==
	       (seen[1] | DAXFS_KEY_PENDING);
}

/* B dies with an insert of OV_KEY claimed in its home bucket (by hand:
 * the intent, then the claim with B's token, docs/overlay.md) */
static void ov_b_op(struct daxfs_op *bop)
{
	u64 home = daxfs_mix64(OV_KEY) & (B.nr_buckets - 1);
	u64 exp[2] = { 0, 0 }, token = (1ULL << 63) |
		((B.host_gen << 24) & ~(1ULL << 63)) |
		((u64)bop->lane_idx << 16) | B.host;

	CHECK_EQ(daxfs_intent_set(bop, DAXFS_INTENT_OV_INSERT, home, OV_KEY,
				  0, 0), 0);
	exp[1] = daxfs_load(&B.buckets[home].value);
	CHECK_EQ(daxfs_load(&B.buckets[home].key), 0);
	CHECK(daxfs_cas16(&B.buckets[home].key, exp,
			  OV_KEY | DAXFS_KEY_PENDING, token));
}

/* overlay-nested: a create's insert of its inode, in the pad words */
static void ovn_n_op(void)
{
	u64 x = 0;

	CHECK_EQ(daxfs_mknod(&N, ROOT, "n", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &x), 0);
	CHECK_EQ(daxfs_lookup(&A, ROOT, "n", 1, &f), 0);
	CHECK_EQ(f, x);
}

static void ovn_note(void)
{
	seen[0] = daxfs_load(&blane->pad[DAXFS_LANE_OV_BUCKET]);
	seen[1] = daxfs_load(&blane->pad[DAXFS_LANE_OV_KEY]);
}

static int ovn_kept(void)
{
	return seen[0] &&
	       daxfs_load(&blane->pad[DAXFS_LANE_OV_BUCKET]) == seen[0] &&
	       daxfs_load(&bucket(seen[0] - 1)->key) ==
	       (seen[1] | DAXFS_KEY_PENDING);
}

/* xattr: a set's change, its new set built, not yet published */
static void xa_n_op(void)
{
	char v[4] = { 0 };

	CHECK_EQ(daxfs_setxattr(&N, f, "user.a", 6, "v", 1, 0), 0);
	CHECK_EQ(daxfs_getxattr(&A, f, "user.a", 6, v, sizeof(v)), 1);
	CHECK_EQ(v[0], 'v');
}

static void xa_note(void)
{
	seen[0] = daxfs_load(&bin()->a[1]);
	seen[1] = daxfs_load32(&t_ip(&C, f)->xattr_claim);
}

static int xa_kept(void)
{
	return seen[0] && seen[1] &&
	       daxfs_load(&bin()->op) == DAXFS_INTENT_XATTR &&
	       daxfs_load(&bin()->a[1]) == seen[0] &&
	       daxfs_load32(&t_ip(&C, f)->xattr_claim) == seen[1];
}

/* truncate: the gate closed by N's shrink, the tail cleared */
static void tr_n_op(void)
{
	struct daxfs_attr at;

	CHECK_EQ(daxfs_truncate(&N, f, 100), 0);
	CHECK_EQ(t_getattr(&A, f, &at), 0);
	CHECK_EQ(at.size, 100);
}

static void tr_note(void)
{
	seen[0] = daxfs_gate_peek(t_ip(&C, f));
}

static int tr_kept(void)
{
	return seen[0] && daxfs_load(&bin()->op) == DAXFS_INTENT_FILE_WRITE &&
	       daxfs_gate_peek(t_ip(&C, f)) == seen[0];
}

/* write: N's page named in its intent, out of its hold, not yet mapped */
static void wr_n_op(void)
{
	u8 back[DAXFS_PAGE_SIZE];

	/* into the hole at block 1: a new page */
	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(t_pwrite(&N, f, buf, sizeof(buf), sizeof(buf)),
		 (s64)sizeof(buf));
	CHECK_EQ(t_pread(&A, f, back, sizeof(back), sizeof(buf)),
		 (s64)sizeof(back));
	CHECK_EQ(memcmp(back, buf, sizeof(buf)), 0);
}

static void wr_note(void)
{
	seen[0] = daxfs_load(&bin()->a[DAXFS_WREC_PAGE]);
}

static int wr_kept(void)
{
	return seen[0] && daxfs_load(&bin()->a[DAXFS_WREC_PAGE]) == seen[0];
}

/* strict: N's atomic overwrite, its redo record committed, not applied */
static void st_n_op(void)
{
	struct wsrc w = { .src = buf };
	u8 back[DAXFS_PAGE_SIZE];

	memset(buf, 0x3c, sizeof(buf));
	CHECK_EQ(daxfs_write(&N, f, 0, sizeof(buf), DAXFS_WRITE_ATOMIC,
			     w_actor, &w, NULL), (s64)sizeof(buf));
	CHECK_EQ(t_pread(&A, f, back, sizeof(back), 0), (s64)sizeof(back));
	CHECK_EQ(memcmp(back, buf, sizeof(buf)), 0);
}

static void st_note(void)
{
	seen[0] = daxfs_load(&bin()->a[6]);
}

static int st_kept(void)
{
	return seen[0] && daxfs_load(&bin()->a[6]) == seen[0];
}

/* tmpfile: N's unnamed file published, before its open-set entry */
static void tm_n_op(void)
{
	u64 x = 0;

	CHECK_EQ(daxfs_tmpfile(&N, ROOT, 0600, 0, 0, &x), 0);
	CHECK(x != 0);
}

static struct daxfs_inode *tm_ip(void)
{
	return (struct daxfs_inode *)((u8 *)N.base + seen[0]);
}

static void tm_note(void)
{
	seen[0] = daxfs_load(&bin()->a[3]);
}

static int tm_kept(void)
{
	return seen[0] && daxfs_load(&bin()->a[3]) == seen[0] &&
	       !(daxfs_load32(&tm_ip()->flags) & DAXFS_IF_ORPHAN);
}

#define L "recover.lane"	/* A stalls before it reads the lane */

static const struct lcase cases[] = {
	{ "overlay", L, NULL, "ov_insert.claimed", ov_n_op, ov_note,
	  ov_kept },
	{ "overlay-nested", L, NULL, "ov_insert.claimed", ovn_n_op, ovn_note,
	  ovn_kept },
	{ "overlay-read", "ov.recover_read", ov_b_op, "ov_insert.claimed",
	  ov_n_op, ov_note, ov_kept },
	{ "xattr", L, NULL, "xattr.built", xa_n_op, xa_note, xa_kept },
	{ "truncate", L, NULL, "truncate.cleared", tr_n_op, tr_note, tr_kept },
	{ "write", L, NULL, "write.page_publishing", wr_n_op, wr_note,
	  wr_kept },
	{ "strict", L, NULL, "strict.committed", st_n_op, st_note, st_kept },
	{ "tmpfile", L, NULL, "tmpfile.published", tm_n_op, tm_note, tm_kept },
};

static const struct lcase *cur;
static int n_armed, kept;

void daxfs_race_point(const char *name, const void *p)
{
	if (ov_thread_stall(name, p) || !n_armed || strcmp(name, cur->point) ||
	    p != blane)
		return;
	n_armed = 0;
	cur->note();
	ov_thread_resume();	/* A resumes and ends */
	kept = cur->kept();
}

static void run(const struct lcase *c)
{
	void *region = t_setup(&A, REGION, NULL);
	struct daxfs_op bop;
	u32 bslot;

	fprintf(stderr, "-- %s\n", c->name);
	cur = c;
	kept = -1;
	memset(seen, 0, sizeof(seen));
	CHECK_EQ(t_join(&B, region, REGION), 0);
	CHECK_EQ(t_join(&C, region, REGION), 0);
	f = t_mkreg(&A, ROOT, "f");
	memset(buf, 0xa5, sizeof(buf));
	CHECK_EQ(t_pwrite(&A, f, buf, sizeof(buf), 0), (s64)sizeof(buf));
	CHECK_EQ(t_pwrite(&A, f, buf, sizeof(buf), 2 * sizeof(buf)),
		 (s64)sizeof(buf));
	bslot = B.host;
	CHECK_EQ(daxfs_op_begin(&B, &bop), 0);
	blane = bop.lane;
	if (c->b_op)
		c->b_op(&bop);
	t_age(&A, B.host);		/* B dies */

	ov_thread_start(c->a_point, blane, 1);	/* A stalls */
	CHECK_EQ(ov_overtake(), 1);
	CHECK_EQ(t_join(&N, region, REGION), 0);
	CHECK_EQ(N.host, bslot);
	n_armed = 1;
	c->n_op();
	if (n_armed) {		/* N never reached its point: A goes on */
		n_armed = 0;
		ov_thread_resume();
	}
	fprintf(stderr, "A recovered %d; N's words as N left them when A was done: %d\n",
		ova_rc, kept);
	CHECK_EQ(kept, 1);
	ov_finish(region, &N);
}

int main(void)
{
	u32 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run(&cases[i]);
	return t_done();
}
