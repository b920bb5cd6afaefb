// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A size change with times (what truncate(2) and open(O_TRUNC) ask of
 * daxfs.ko's setattr) runs as the truncate, then an op for the rest.  A
 * rename on another host that replaced the file's last name in between
 * freed the inode, and the second step's -ENOENT made the call fail
 * although every host had already seen the new size: a guest's
 * truncate(a, 100) answered ENOENT while an lstat on the host read size
 * 100 (the whiteout lincheck, session 32).  Built by `make race`: the
 * hook removes the file right after the truncate; the call must succeed.
 */
#include "../c/tutil.h"
#include "core/inode.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs other;
static u64 victim;
static int removed;

void daxfs_race_point(const char *name, const void *p)
{
	if (!victim || strcmp(name, "setattr.sized") ||
	    *(const u64 *)p != victim)
		return;
	victim = 0;
	removed = daxfs_unlink(&other, ROOT, "a", 1) == 0;
}

int main(void)
{
	struct daxfs_attr a = { .size = 100, .mtime_ns = 7, .ctime_ns = 7 };
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	u64 ino = 0;

	CHECK_EQ(t_join(&other, region, REGION), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "a", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), 0);
	victim = ino;
	CHECK_EQ(daxfs_setattr(&fs, ino, DAXFS_ATTR_SIZE | DAXFS_ATTR_MTIME |
			       DAXFS_ATTR_CTIME, &a), 0);
	CHECK(removed);
	CHECK_EQ(daxfs_getattr(&fs, ino, &a), -ENOENT);
	/* a plain size change on a removed inode still says so */
	CHECK_EQ(daxfs_setattr(&fs, ino, DAXFS_ATTR_SIZE, &a), -ENOENT);
	daxfs_host_leave(&other);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
