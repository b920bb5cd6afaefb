/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared by the race tests of an overtaken recoverer's last acts
 * (docs/recovery.md "Acts of an overtaken recoverer"): hosts A
 * (recoverer, stalled by the test's race hook), B (dies by hand in a
 * namespace op), C (takes A's recovery over); the op B dies in; fsck.
 */
#ifndef DAXFS_RACE_OVERTAKEN_H
#define DAXFS_RACE_OVERTAKEN_H

#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "core/dir.h"
#include "core/ns-intent.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL
#define RN_PUBLISHING 0x40u	/* core/namei.c */
#define OV_DT_REG daxfs_mode_dtype(DAXFS_S_IFREG)

static struct daxfs_fs A, B, C;

/* A, stalled past its recovery lease: C takes B's recovery over and
 * does all of it (B's slot FREE after); C's answer */
static inline int ov_overtake(void)
{
	t_age(&C, B.host);
	return daxfs_recover_dead_hosts(&C);
}

static const void *ov_hook_p;
static int ov_armed, ov_fired, ov_c_rc;

/* In the race hook: A's stall, at its first load of the leaf that
 * ov_recover_stalled names?  Then C has taken the recovery over. */
static inline bool ov_stalled(const char *name, const void *p)
{
	if (!ov_armed || strcmp(name, "dirent") || p != ov_hook_p)
		return false;
	ov_armed = 0;
	ov_fired++;
	ov_c_rc = ov_overtake();
	return true;
}

/* A recovers B, stalled (ov_stalled) at its first load of leaf */
static inline void ov_recover_stalled(u64 leaf)
{
	int rc;

	ov_hook_p = daxfs_dirent_at(&A, leaf);
	ov_fired = 0;
	ov_c_rc = -1;
	ov_armed = 1;
	rc = daxfs_recover_dead_hosts(&A);
	fprintf(stderr, "A recovered %d, hook fired %d, C %d\n", rc, ov_fired,
		ov_c_rc);
	CHECK_EQ(ov_fired, 1);
	CHECK_EQ(ov_c_rc, 1);
}

/* B begins an op, takes the rename claim and finds name in the root:
 * its leaf in *de */
static inline void ov_b_begin(struct daxfs_op *op, const char *name,
		       struct daxfs_dent *de)
{
	struct daxfs_iref ref;

	CHECK_EQ(daxfs_op_begin(&B, op), 0);
	CHECK_EQ(daxfs_inode_get(op, ROOT, &ref), 0);
	CHECK_EQ(daxfs_dir_find(op, &ref, name, 1,
				daxfs_name_hash(&B, name, 1), de), 0);
	daxfs_store(daxfs_state_word(&B, rename_claim), daxfs_my_claim(&B));
}

/* B's intent RENAME of kind at step with flags, words a0..a5 */
static inline void ov_b_intent(struct daxfs_op *op, const u64 *a, u32 kind,
			u32 step, u32 fl)
{
	daxfs_intent_arg(op, 4, a[4]);
	daxfs_intent_arg(op, 5, a[5]);
	daxfs_intent_arg(op, 6, NS_META(kind, step, fl));
	daxfs_intent_set(op, DAXFS_INTENT_RENAME, a[0], a[1], a[2], a[3]);
}

static inline void ov_hold(struct daxfs_dirent *de)
{
	daxfs_store32(&de->removed,
		      daxfs_load32(&de->removed) | DAXFS_DE_LINKING);
}

static u32 ov_errors;

/* errors other than space: a roll-back of a rename published in part
 * leaks its leaves and leaves counts high by design (docs/recovery.md) */
static inline void ov_report(void *ctx, const struct daxfs_check_problem *p)
{
	(void)ctx;
	if (p->severity < DAXFS_CHK_ERROR)
		return;
	fprintf(stderr, "fsck: %s ino %llu have %llu want %llu: %s\n",
		p->name, (unsigned long long)p->ino,
		(unsigned long long)p->have, (unsigned long long)p->want,
		p->msg);
	if (p->code != DAXFS_CHK_LEAK && p->code != DAXFS_CHK_USED_BYTES &&
	    (p->code != DAXFS_CHK_DIR_COUNT || !ctx))
		ov_errors++;
}

/* fsck -n of region with every host gone; space (and, with counts_high,
 * directory counts) left out when the case leaks by design */
static inline void ov_fsck(void *region, bool counts_high)
{
	struct daxfs_check_result res;

	ov_errors = 0;
	memset(&res, 0, sizeof(res));
	CHECK_EQ(t_fsck(region, REGION, false, ov_report,
			counts_high ? (void *)1 : NULL, &res), 0);
	CHECK_EQ(ov_errors, 0);
}

#endif /* DAXFS_RACE_OVERTAKEN_H */
