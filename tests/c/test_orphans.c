// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Orphans (DAXFS_FS_KEEP_ORPHANS, used by daxfs.ko for POSIX unlink of
 * open files): the last unlink / rename-over of a non-directory on a
 * keeping host leaves the inode usable by number with nlink 0 until
 * daxfs_inode_release(); other hosts and non-last unlinks behave as
 * before; a crashed host's orphans are dropped by fsck.
 */
#include "tutil.h"
#include "tfile.h"
#include "tcheck.h"

#define MiB (1ULL << 20)
#define SIZE (64 * MiB)
#define ROOT 1ULL

static struct daxfs_fs fa, fb;		/* A keeps orphans, B does not */
static void *region;

static u64 mk(struct daxfs_fs *fs, const char *n)
{
	u64 ino = 0;

	CHECK_EQ(daxfs_mknod(fs, ROOT, n, strlen(n), DAXFS_S_IFREG | 0644, 0, 0, 0, &ino), 0);
	return ino;
}

static int ga(struct daxfs_fs *fs, u64 ino, struct daxfs_attr *a)
{
	memset(a, 0, sizeof(*a));
	return daxfs_getattr(fs, ino, a);
}

static int lk(struct daxfs_fs *fs, const char *n)
{
	u64 ino;

	return daxfs_lookup(fs, ROOT, n, strlen(n), &ino);
}

static void settle(void)
{
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
}

static void test_unlink_keeps_open_file(void)
{
	char buf[64] = "";
	struct daxfs_attr a;
	u64 ino, used0;

	settle();
	used0 = t_used(&fa);
	ino = mk(&fa, "f");
	CHECK_EQ(t_pwrite(&fa, ino, "hello", 5, 0), 5);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "f", 1), 0);
	CHECK_EQ(lk(&fa, "f"), -ENOENT);
	/* still there by number, with no link, on every host */
	CHECK_EQ(ga(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(a.size, 5);
	CHECK_EQ(ga(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(t_pwrite(&fa, ino, " world", 6, 5), 6);
	CHECK_EQ(t_pread(&fa, ino, buf, sizeof(buf), 0), 11);
	CHECK(!memcmp(buf, "hello world", 11));
	CHECK_EQ(daxfs_truncate(&fa, ino, 3 * DAXFS_BLOCK_SIZE), 0);
	/* no new name for it */
	CHECK_EQ(daxfs_link(&fa, ino, ROOT, "g", 1), -ENOENT);
	CHECK_EQ(lk(&fa, "g"), -ENOENT);
	/* the last local user goes: freed, space back */
	CHECK_EQ(daxfs_inode_release(&fa, ino), 0);
	CHECK_EQ(ga(&fa, ino, &a), -ENOENT);
	CHECK_EQ(daxfs_inode_release(&fa, ino), 0);	/* twice: nothing */
	settle();
	CHECK_EQ(t_used(&fa), used0);
}

static void test_release_of_named_file_is_noop(void)
{
	struct daxfs_attr a;
	u64 ino;

	ino = mk(&fa, "n");
	CHECK_EQ(daxfs_inode_release(&fa, ino), 0);
	CHECK_EQ(ga(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 1);
	/* two names: the first unlink keeps nothing, the last one keeps */
	CHECK_EQ(daxfs_link(&fa, ino, ROOT, "n2", 2), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "n", 1), 0);
	CHECK_EQ(daxfs_inode_release(&fa, ino), 0);
	CHECK_EQ(ga(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "n2", 2), 0);
	CHECK_EQ(ga(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_inode_release(&fa, ino), 0);
	CHECK_EQ(ga(&fa, ino, &a), -ENOENT);
}

static void test_non_keeping_host_frees(void)
{
	struct daxfs_attr a;
	u64 ino;

	ino = mk(&fb, "b");
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "b", 1), 0);
	CHECK_EQ(ga(&fa, ino, &a), -ENOENT);
	/* a keeping host dropped one of two links, the other host the last */
	ino = mk(&fa, "c");
	CHECK_EQ(daxfs_link(&fa, ino, ROOT, "c2", 2), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "c", 1), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "c2", 2), 0);
	CHECK_EQ(ga(&fa, ino, &a), -ENOENT);
}

static void test_rename_over_keeps_victim(void)
{
	struct daxfs_attr a;
	u64 src, victim, d = 0;

	src = mk(&fa, "s");
	victim = mk(&fa, "v");
	CHECK_EQ(t_pwrite(&fa, victim, "old", 3, 0), 3);
	CHECK_EQ(daxfs_rename(&fa, ROOT, "s", 1, ROOT, "v", 1, 0), 0);
	CHECK_EQ(ga(&fa, victim, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(ga(&fa, src, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(daxfs_inode_release(&fa, victim), 0);
	CHECK_EQ(ga(&fa, victim, &a), -ENOENT);
	/* directories are never kept */
	CHECK_EQ(daxfs_mkdir(&fa, ROOT, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_rmdir(&fa, ROOT, "d", 1), 0);
	CHECK_EQ(ga(&fa, d, &a), -ENOENT);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "v", 1), 0);
	CHECK_EQ(daxfs_inode_release(&fa, src), 0);
}

static void check_region(bool repair, struct daxfs_check_result *res)
{
	CHECK_EQ(t_fsck(region, SIZE, repair, NULL, NULL, res), 0);
}

/* A host that dies holding an orphan: fsck reports it, -y drops it. */
static void test_crashed_host_orphan_dropped_by_fsck(void)
{
	struct daxfs_check_result res;
	struct daxfs_attr a;
	u64 ino;

	ino = mk(&fa, "crash");
	CHECK_EQ(t_pwrite(&fa, ino, "data", 4, 2 * DAXFS_BLOCK_SIZE), 4);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "crash", 5), 0);
	daxfs_host_leave(&fa);		/* gone without releasing */
	daxfs_host_leave(&fb);
	check_region(false, &res);
	CHECK_EQ(res.orphans, 1);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	check_region(true, &res);
	CHECK_EQ(res.dropped, 1);
	check_region(false, &res);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR] + res.nr[DAXFS_CHK_WARN], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	CHECK_EQ(ga(&fb, ino, &a), -ENOENT);
	daxfs_host_leave(&fb);
}

int main(void)
{
	struct daxfs_format_opts o;

	memset(&o, 0, sizeof(o));
	region = t_setup(&fa, SIZE, &o);
	fa.flags |= DAXFS_FS_KEEP_ORPHANS;
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	RUN(test_unlink_keeps_open_file);
	RUN(test_release_of_named_file_is_noop);
	RUN(test_non_keeping_host_frees);
	RUN(test_rename_over_keeps_victim);
	RUN(test_crashed_host_orphan_dropped_by_fsck);
	return t_done();
}
