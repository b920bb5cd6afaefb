// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A full pool while a mapping host holds reclamation back (docs/reclaim.md,
 * "Mapping hosts"): host M maps a page (daxfs_map_first) and runs no pass
 * for a while, as a stalled daxfs.ko guest does; host W fills the pool,
 * fails creates with ENOSPC again and again (each failure reclaims), then
 * truncates a file to 0; either with the reclaims that allocation failures
 * run, or with an explicit daxfs_reclaim_all after each failure (what a
 * host's periodic reclaim does).  The truncated pages must go to limbo, not leak:
 * once M announces a pass, everything comes back and fsck finds no leaked
 * byte.  (tests/vm/test_kernel_mmap_reuse.py leaked the victim's pages
 * this way on a loaded machine.)
 */
#include "tcheck.h"
#include "tfile.h"

#define PAGE 4096u
#define SIZE (4 * MiB)
#define VICTIM_PAGES 64u
#define TRIES 400u

static u64 fill_byte(void *ctx, void *dst, u64 len)
{
	memset(dst, 'o', len);
	return len;
}

/* Files of len bytes in dir until the first failure; returns the count. */
static u32 fill(struct daxfs_fs *fs, u64 dir, u32 n0, u64 len)
{
	char nm[32];
	u64 ino, pos;
	u32 n = n0;

	for (;; n++) {
		snprintf(nm, sizeof(nm), "f%u", n);
		if (daxfs_mknod(fs, dir, nm, strlen(nm), 0100644, 0, 0, 0,
				&ino))
			return n;
		if (daxfs_write(fs, ino, 0, len, 0, fill_byte, NULL, &pos) !=
		    (s64)len)
			return n + 1;
	}
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	(void)ctx;
	printf("    fsck: %s: %s (ino %llu off %llu have %llu want %llu)\n",
	       p->name, p->msg, (unsigned long long)p->ino,
	       (unsigned long long)p->off, (unsigned long long)p->have,
	       (unsigned long long)p->want);
}

static void run_case(bool reclaim_each)
{
	struct daxfs_check_result res;
	struct daxfs_fs w, m;
	u8 buf[VICTIM_PAGES * PAGE];
	u64 dir, victim, pg, ino;
	u32 n, t, fails = 0;
	char nm[32];
	void *r = t_setup(&w, SIZE, NULL);

	CHECK_EQ(t_join(&m, r, SIZE), 0);
	CHECK_EQ(daxfs_mknod(&w, 1, "victim", 6, 0100644, 0, 0, 0, &victim),
		 0);
	memset(buf, 'v', sizeof(buf));
	CHECK_EQ(t_pwrite(&w, victim, buf, sizeof(buf), 0), sizeof(buf));
	daxfs_map_first(&m);
	CHECK_EQ(daxfs_block_page(&m, victim, 1, &pg), 0);
	CHECK_EQ(daxfs_mkdir(&w, 1, "fill", 4, 040755, 0, 0, &dir), 0);
	n = fill(&w, dir, 0, 64 * 1024);
	n = fill(&w, dir, n, PAGE);
	/* the pool is full: every create fails and reclaims */
	for (t = 0; t < TRIES; t++) {
		snprintf(nm, sizeof(nm), "x%u", t);
		fails += daxfs_mknod(&w, dir, nm, strlen(nm), 0100644, 0, 0,
				     0, &ino) == -ENOSPC;
		if (reclaim_each)
			daxfs_reclaim_all(&w);
	}
	CHECK(fails > 0);
	CHECK_EQ(daxfs_truncate(&w, victim, 0), 0);
	/* M's pass: nothing is held back any more */
	daxfs_map_announce(&m, 0);
	daxfs_reclaim_all(&w);
	daxfs_host_leave(&m);
	daxfs_host_leave(&w);
	CHECK_EQ(t_fsck(r, SIZE, false, report, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	printf("  reclaim_each=%d: %u files, %u/%u ENOSPC, leaked %llu bytes\n",
	       reclaim_each, n, fails, TRIES,
	       (unsigned long long)res.leaked_bytes);
	t_region_free(r, SIZE);
}

static void test_truncate_on_full_pool_while_mapped(void)
{
	run_case(false);
	run_case(true);
}

int main(void)
{
	RUN(test_truncate_on_full_pool_while_mapped);
	return t_done();
}
