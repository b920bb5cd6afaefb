// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * linkat() of an unnamed file may take its link count 0 -> 1 only while
 * this host holds it open (daxfs_nlink_revive).  The check ran once, on
 * the first look: a file with a name there (count 1) whose name another
 * host unlinked before the CAS handed back 0, and the next round revived
 * it although nothing held it, so the settler that freed it at the
 * unlink left the new name on a freed inode.  Reachable by
 * daxfs_link_open on a file the handle does not hold (the audit of CAS
 * losers, session 53).  Built by `make race`: the hook unlinks the name
 * between the look and the CAS.  The link must fail with ENOENT, leave
 * no name, and fsck must find nothing.
 */
#include "../c/tfile.h"
#include "../c/tcheck.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs other;
static struct daxfs_inode *victim;
static int unlinked = -1;

void daxfs_race_point(const char *name, const void *p)
{
	if (!victim || p != victim || strcmp(name, "nlink.revive"))
		return;
	victim = NULL;
	unlinked = daxfs_unlink(&other, ROOT, "a", 1);
}

int main(void)
{
	struct daxfs_check_result res;
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	struct daxfs_attr a;
	u64 ino = 0, found;

	CHECK_EQ(t_join(&other, region, REGION), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "a", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), 0);
	victim = t_ip(&fs, ino);
	CHECK_EQ(daxfs_link_unnamed(&fs, ino, ROOT, "n", 1), -ENOENT);
	CHECK_EQ(unlinked, 0);
	CHECK_EQ(daxfs_lookup(&fs, ROOT, "n", 1, &found), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fs, ino, &a), -ENOENT);
	daxfs_host_leave(&other);
	daxfs_host_leave(&fs);
	memset(&res, 0, sizeof(res));
	CHECK_EQ(t_fsck(region, REGION, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	t_region_free(region, REGION);
	return t_done();
}
