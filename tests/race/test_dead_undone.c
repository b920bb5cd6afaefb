// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An rmdir marks its directory DEAD, then finds that a rename took the
 * name it looked up, and undoes the mark (daxfs_rmdir).  Another op that
 * met the mark and looked again once it was gone answered ENOENT for a
 * directory that was named all along: the namespace lincheck saw
 * rmdir(c) give ENOENT right after its own exchange had made c that
 * directory, while another host's rmdir(b) of it came and went (session
 * 53).  Built by `make race`: the directory is marked DEAD as that rmdir
 * did, and the hook undoes the mark between the op's two looks.  Both an
 * rmdir of the directory and a create inside it must succeed.
 */
#include "../c/tfile.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_inode *marked;
static int undone;

void daxfs_race_point(const char *name, const void *p)
{
	u64 v;

	if (!marked || p != marked || strcmp(name, "dir.writable_refused"))
		return;
	v = daxfs_load(&marked->aux);
	daxfs_store(&marked->aux, v & ~DAXFS_DIR_DEAD);
	marked = NULL;
	undone++;
}

/* What the undone rmdir left for one moment: dir's record DEAD. */
static void mark_dead(struct daxfs_fs *fs, u64 dir)
{
	struct daxfs_inode *ip = t_ip(fs, dir);

	CHECK(ip != NULL);
	if (!ip)
		return;
	daxfs_store(&ip->aux, daxfs_load(&ip->aux) | DAXFS_DIR_DEAD);
	marked = ip;
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	u64 dir = 0, file = 0;
	struct daxfs_attr a;

	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "c", 1, DAXFS_S_IFDIR | 0755, 0, 0,
			     &dir), 0);
	/* a create inside it: the parent's writable look */
	mark_dead(&fs, dir);
	CHECK_EQ(daxfs_mknod(&fs, dir, "x", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &file), 0);
	CHECK_EQ(undone, 1);
	CHECK_EQ(daxfs_unlink(&fs, dir, "x", 1), 0);
	/* the rmdir of it: the child's writable look */
	mark_dead(&fs, dir);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "c", 1), 0);
	CHECK_EQ(undone, 2);
	CHECK_EQ(daxfs_getattr(&fs, dir, &a), -ENOENT);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
