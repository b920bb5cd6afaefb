// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A host declared dead inside its bucket claim still runs (the residual
 * window of every claim, docs/locks.md "Crash story"): while the next
 * claimer replaces its own records, the zombie stores into the slots it
 * just counted as free.  lk_apply stored each new piece in "the next
 * free slot" without checking and went through NULL (an oops in
 * daxfs.ko).  Built by `make race`: the hook fills every free slot of
 * the bucket with records of a dead host right after the owner's old
 * records were cleared.  The set must fail with -EUCLEAN, not crash.
 */
#include "../c/tutil.h"

#define REGION (16 * 1024 * 1024ULL)

static struct daxfs_lock_bucket *victim;
static u64 zombie;		/* a host word of a slot that is not ALIVE */

void daxfs_race_point(const char *name, const void *p)
{
	u32 i;

	if (!victim || p != victim || strcmp(name, "lock.apply"))
		return;
	for (i = 0; i < DAXFS_LOCK_RECS; i++)
		if (!victim->rec[i].host)
			victim->rec[i].host = zombie;
	victim = NULL;
}

int main(void)
{
	struct daxfs_format_opts o = { .max_hosts = 4 };
	struct daxfs_lock_req r = {
		.start = 0, .end = 9, .owner = 1, .type = DAXFS_LCK_WR,
		.kind = DAXFS_LCK_POSIX,
	};
	struct daxfs_lock_root *root;
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, &o);
	u32 i;

	CHECK_EQ(daxfs_lock_set(&fs, 5, &r, 0), 0);
	root = (struct daxfs_lock_root *)(fs.base + fs.state->lock_root);
	for (i = 0; i < DAXFS_LOCK_BUCKETS && !victim; i++)
		if (root->bucket[i])
			victim = (struct daxfs_lock_bucket *)(fs.base +
							     root->bucket[i]);
	CHECK(victim != NULL);
	zombie = daxfs_claim_word(3, 77);	/* slot 3 is FREE */
	/* splits [0,9] into [0,2] [3,5] [6,9]: three pieces to store */
	r.type = DAXFS_LCK_RD;
	r.start = 3;
	r.end = 5;
	CHECK_EQ(daxfs_lock_set(&fs, 5, &r, 0), -EUCLEAN);
	/* the zombie's records are no locks: the next set drops them */
	r.type = DAXFS_LCK_WR;
	r.start = 0;
	r.end = 9;
	CHECK_EQ(daxfs_lock_set(&fs, 5, &r, 0), 0);
	CHECK_EQ(daxfs_lock_list(&fs, 5, NULL, NULL), 1);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
