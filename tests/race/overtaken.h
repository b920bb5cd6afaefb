/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Shared by the race tests of an overtaken recoverer's last acts
 * (docs/recovery.md "Acts of an overtaken recoverer"): hosts A
 * (recoverer, stalled by the test's race hook), B (dies by hand in a
 * namespace op), C (takes A's recovery over); the op B dies in; fsck.
 */
#ifndef DAXFS_RACE_OVERTAKEN_H
#define DAXFS_RACE_OVERTAKEN_H

#include <pthread.h>
#include <semaphore.h>

#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "core/dir.h"
#include "core/ns-intent.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL
#define RN_PUBLISHING 0x40u	/* core/namei.c */
#define RN_MOVED 0x20u		/* core/namei.c */
#define OV_RN_DONE_SHIFT 8	/* core/namei.c RN_DONE_SHIFT */
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

/* fs begins an op, takes the rename claim and finds name in dir: its
 * leaf in *de */
static inline void ov_begin(struct daxfs_fs *fs, struct daxfs_op *op,
			    u64 dir, const char *name, struct daxfs_dent *de)
{
	struct daxfs_iref ref;

	CHECK_EQ(daxfs_op_begin(fs, op), 0);
	CHECK_EQ(daxfs_inode_get(op, dir, &ref), 0);
	CHECK_EQ(daxfs_dir_find(op, &ref, name, strlen(name),
				daxfs_name_hash(fs, name, strlen(name)), de), 0);
	daxfs_store(daxfs_state_word(fs, rename_claim), daxfs_my_claim(fs));
}

/* B begins an op, takes the rename claim and finds name in the root:
 * its leaf in *de */
static inline void ov_b_begin(struct daxfs_op *op, const char *name,
			      struct daxfs_dent *de)
{
	ov_begin(&B, op, ROOT, name, de);
}

/* op's intent RENAME of kind at step with flags, words a0..a5 */
static inline void ov_intent(struct daxfs_op *op, const u64 *a, u32 kind,
			     u32 step, u32 fl)
{
	daxfs_intent_arg(op, 4, a[4]);
	daxfs_intent_arg(op, 5, a[5]);
	daxfs_intent_arg(op, 6, NS_META(kind, step, fl));
	daxfs_intent_set(op, DAXFS_INTENT_RENAME, a[0], a[1], a[2], a[3]);
}

static inline void ov_step(struct daxfs_op *op, u32 step, u32 fl)
{
	daxfs_store(&op->lane->intent.a[6], NS_META(NS_KIND_RENAME, step, fl));
}

/*
 * fs, in rename(dir/d, ndir/nname) of directory d, by hand: claim, the
 * new leaf, intent (words in a), d pinned (MOVING; its record in *dip).
 */
static inline void ov_rename_begin(struct daxfs_fs *fs, struct daxfs_op *op,
				   u64 *a, const char *nname, u64 d,
				   struct daxfs_inode **dip)
{
	struct daxfs_dent de;

	ov_begin(fs, op, a[0], "d", &de);
	a[2] = de.leaf;
	a[3] = daxfs_dirent_new(op, nname, 1, daxfs_name_hash(fs, nname, 1),
				d, daxfs_mode_dtype(DAXFS_S_IFDIR), 0);
	ov_intent(op, a, NS_KIND_RENAME, 0, 0);
	CHECK_EQ(daxfs_inode_get_writable(op, d, dip), 0);
	daxfs_store(&(*dip)->aux, daxfs_load(&(*dip)->aux) | DAXFS_DIR_MOVING);
}

/* fs, in rename(d, u) of directory d in the root: step 0, d pinned (pin
 * 1 marked done).  The new leaf. */
static inline u64 ov_rename_pinned(struct daxfs_fs *fs, struct daxfs_op *op,
				   u64 d, struct daxfs_inode **dip)
{
	u64 a[6] = { ROOT, ROOT, 0, 0, 0, 0 };

	ov_rename_begin(fs, op, a, "u", d, dip);
	ov_step(op, 0, 1u << OV_RN_DONE_SHIFT);
	return a[3];
}

/*
 * fs, in rename(p1/d, p2/d) of directory d: every step up to the mark of
 * step 3 (pins, the new name published, the old one removed), not the
 * unpin (d still MOVING, its parent word p1).  The new leaf.
 */
static inline u64 ov_rename_upto_unpin(struct daxfs_fs *fs,
				       struct daxfs_op *op, u64 p1, u64 p2,
				       u64 d, struct daxfs_inode **dip)
{
	struct daxfs_inode *p1p, *p2p;
	u64 a[6] = { p1, p2, 0, 0, 0, 0 };

	ov_rename_begin(fs, op, a, "d", d, dip);
	CHECK_EQ(daxfs_dir_writable(op, p1, &p1p), 0);
	CHECK_EQ(daxfs_dir_writable(op, p2, &p2p), 0);
	CHECK_EQ(daxfs_nlink_inc(p2p), 0);
	CHECK_EQ(daxfs_dir_count_add(p2p), 0);
	ov_step(op, 1, RN_PUBLISHING);
	CHECK_EQ(daxfs_dir_link(op, p2p, a[3], false), 0);
	ov_step(op, 2, 0);
	CHECK_EQ(daxfs_dir_swap(op, p1p, daxfs_dirent_at(fs, a[2])->hash, a[2],
				0), 0);
	ov_step(op, 2, RN_MOVED);
	ov_step(op, 3, 0);
	CHECK_EQ(daxfs_load(&(*dip)->parent), p1);
	return a[3];
}

/*
 * A in a thread of its own (ov_thread_start): it stalls at the nth hit of
 * race point `point` on p (ov_thread_stall, from the test's hook) until
 * ov_thread_resume lets it go on and waits for its end; ova_rc is its
 * answer.  Meanwhile the test lets C take over and a live op run.
 */
static pthread_t ova_thread;
static sem_t ova_stalled, ova_go;
static const char *ova_point;
static const void *ova_p;
static int ova_armed, ova_hits, ova_nth, ova_rc;

static inline void *ova_main(void *arg)
{
	(void)arg;
	ova_rc = daxfs_recover_dead_hosts(&A);
	return NULL;
}

static inline bool ov_thread_stall(const char *name, const void *p)
{
	if (!ova_armed || !pthread_equal(pthread_self(), ova_thread) ||
	    strcmp(name, ova_point) || p != ova_p || ++ova_hits != ova_nth)
		return false;
	ova_armed = 0;
	sem_post(&ova_stalled);
	sem_wait(&ova_go);	/* A stalls here */
	return true;
}

/* returns once A stalls */
static inline void ov_thread_start(const char *point, const void *p, int nth)
{
	sem_init(&ova_stalled, 0, 0);
	sem_init(&ova_go, 0, 0);
	ova_point = point;
	ova_p = p;
	ova_nth = nth;
	ova_hits = 0;
	ova_rc = -1;
	ova_armed = 1;
	CHECK_EQ(pthread_create(&ova_thread, NULL, ova_main, NULL), 0);
	sem_wait(&ova_stalled);
}

static inline void ov_thread_resume(void)
{
	sem_post(&ova_go);
	pthread_join(ova_thread, NULL);
	sem_destroy(&ova_stalled);
	sem_destroy(&ova_go);
}

/*
 * A, stalled in its thread, resumes and runs to its end when a live op of
 * the test reaches race point ovl_point on ovl_p (ov_thread_hook, the
 * test's hook); ovl_kept then says whether the live op's mark (ovl_mark)
 * was still set when A was done.
 */
static const char *ovl_point;
static const void *ovl_p;
static int (*ovl_mark)(void);
static int ovl_armed, ovl_kept;

static inline void ov_live_arm(const char *point, const void *p,
			       int (*mark)(void))
{
	ovl_point = point;
	ovl_p = p;
	ovl_mark = mark;
	ovl_kept = -1;
	ovl_armed = 1;
}

/* the hook of a test with A in a thread and a live op to resume it at */
static inline void ov_thread_hook(const char *name, const void *p)
{
	if (ov_thread_stall(name, p) || !ovl_armed ||
	    strcmp(name, ovl_point) || p != ovl_p)
		return;
	ovl_armed = 0;
	ov_thread_resume();	/* A resumes and ends */
	ovl_kept = ovl_mark();
}

/* the record of the directory a case renames (ov_rename_begin) */
static struct daxfs_inode *ov_dip;

static inline int ov_moving(void)
{
	return !!(daxfs_load(&ov_dip->aux) & DAXFS_DIR_MOVING);
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

/* the end of a case: every host leaves (live, if any, first), fsck -n
 * finds no error (space aside), the region goes */
static inline void ov_finish(void *region, struct daxfs_fs *live)
{
	if (live)
		daxfs_host_leave(live);
	daxfs_host_leave(&C);
	daxfs_host_leave(&A);
	ov_fsck(region, false);
	t_region_free(region, REGION);
}

#endif /* DAXFS_RACE_OVERTAKEN_H */
