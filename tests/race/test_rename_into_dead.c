// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A rename that adds a name to directory q raises q's count in its step 0
 * (daxfs_dir_count_add), which an rmdir's DEAD mark refuses.  The rename
 * gave that refusal to its caller as ENOENT, also when the mark was an
 * rmdir's that was about to be undone (its leaf taken by another rename)
 * or only half done: ENOENT for a directory named all along (the audit of
 * transient marks, session 53).  Built by `make race`: at the race point
 * before the count, the hook marks q DEAD and undoes the mark at the
 * retry, so the rename must succeed; or it removes q for real (an rmdir
 * on another host that runs to its end), so the rename must give ENOENT
 * and leave x where it was.
 */
#include "../c/tfile.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs other;
static struct daxfs_inode *q_rec;
static int hits, removed = -1;
static bool undone_case;

void daxfs_race_point(const char *name, const void *p)
{
	u64 v;

	if (!q_rec || p != q_rec || strcmp(name, "rename.counting"))
		return;
	hits++;
	v = daxfs_load(&q_rec->aux);
	if (!undone_case) {
		q_rec = NULL;
		removed = daxfs_rmdir(&other, ROOT, "q", 1);
	} else if (hits == 1) {
		daxfs_store(&q_rec->aux, v | DAXFS_DIR_DEAD);
	} else {
		daxfs_store(&q_rec->aux, v & ~DAXFS_DIR_DEAD);
		q_rec = NULL;
	}
}

static void rename_into(struct daxfs_fs *fs, bool undone)
{
	u64 q = 0, x = 0, ino = 0;

	CHECK_EQ(daxfs_mkdir(fs, ROOT, "q", 1, DAXFS_S_IFDIR | 0755, 0, 0, &q),
		 0);
	CHECK_EQ(daxfs_mknod(fs, ROOT, "x", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &x), 0);
	hits = 0;
	undone_case = undone;
	q_rec = t_ip(fs, q);
	if (undone) {
		struct daxfs_inode *rec = q_rec;

		CHECK_EQ(daxfs_rename(fs, ROOT, "x", 1, q, "y", 1, 0), 0);
		/* the rmdir's undo, had the rename not waited for it */
		daxfs_store(&rec->aux, daxfs_load(&rec->aux) & ~DAXFS_DIR_DEAD);
		CHECK_EQ(hits, 2);
		CHECK_EQ(daxfs_lookup(fs, q, "y", 1, &ino), 0);
		CHECK_EQ(ino, x);
		CHECK_EQ(daxfs_lookup(fs, ROOT, "x", 1, &ino), -ENOENT);
		CHECK_EQ(daxfs_unlink(fs, q, "y", 1), 0);
		CHECK_EQ(daxfs_rmdir(fs, ROOT, "q", 1), 0);
	} else {
		CHECK_EQ(daxfs_rename(fs, ROOT, "x", 1, q, "y", 1, 0), -ENOENT);
		CHECK_EQ(removed, 0);
		CHECK_EQ(daxfs_lookup(fs, ROOT, "q", 1, &ino), -ENOENT);
		CHECK_EQ(daxfs_lookup(fs, ROOT, "x", 1, &ino), 0);
		CHECK_EQ(ino, x);
		CHECK_EQ(daxfs_unlink(fs, ROOT, "x", 1), 0);
	}
	q_rec = NULL;
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);

	CHECK_EQ(t_join(&other, region, REGION), 0);
	rename_into(&fs, true);
	rename_into(&fs, false);
	daxfs_host_leave(&other);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
