// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Owners as Linux gives them (core/namei.c): a chown drops a file's
 * set-id bits, and a set-group-ID directory gives what is made in it its
 * group (and a new directory the bit).  The differential test's chown
 * calls found both missing outside daxfs.ko (docs/testing.md "Further
 * call families").
 */
#include "tfile.h"
#include "tpool.h"

#define REGION (16 * MiB)
#define ROOT 1ULL

static u32 mode_of(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a;

	CHECK_EQ(t_getattr(fs, ino, &a), 0);
	return a.mode & 07777;
}

static void set_mode(struct daxfs_fs *fs, u64 ino, u32 mode)
{
	struct daxfs_attr a = { .mode = mode };

	CHECK_EQ(daxfs_setattr(fs, ino, DAXFS_ATTR_MODE, &a), 0);
}

static int chown_ids(struct daxfs_fs *fs, u64 ino, u32 valid, u32 uid,
		     u32 gid)
{
	struct daxfs_attr a = { .uid = uid, .gid = gid, .mode = 04755 };

	return daxfs_setattr(fs, ino, valid, &a);
}

/* S_ISUID goes, S_ISGID with group execution goes, S_ISGID alone (the
 * mandatory-locking mark) stays; also for chown(-1, -1); not for a
 * directory; a mode given in the same call is taken as it is. */
static void test_chown_kills_setid(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, ROOT, "f"), d;

	set_mode(&fs, f, 06755);
	CHECK_EQ(chown_ids(&fs, f, DAXFS_ATTR_UID, 1000, 0), 0);
	CHECK_EQ(mode_of(&fs, f), 0755);
	set_mode(&fs, f, 06745);
	CHECK_EQ(chown_ids(&fs, f, DAXFS_ATTR_GID, 0, 1000), 0);
	CHECK_EQ(mode_of(&fs, f), 02745);
	set_mode(&fs, f, 04711);
	CHECK_EQ(chown_ids(&fs, f, DAXFS_ATTR_CHOWN | DAXFS_ATTR_CTIME, 0, 0),
		 0);
	CHECK_EQ(mode_of(&fs, f), 0711);
	CHECK_EQ(chown_ids(&fs, f, DAXFS_ATTR_UID | DAXFS_ATTR_MODE, 7, 0), 0);
	CHECK_EQ(mode_of(&fs, f), 04755);
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "d", 1, DAXFS_S_IFDIR | 02755, 0, 0,
			     &d), 0);
	CHECK_EQ(chown_ids(&fs, d, DAXFS_ATTR_UID, 1000, 0), 0);
	CHECK_EQ(mode_of(&fs, d), 02755);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* A file, a directory, a symlink, an unnamed file and a held create made
 * in a set-group-ID directory get its group, whatever the caller gave; the
 * directory the bit too. */
static void test_setgid_directory(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	struct daxfs_attr a;
	u64 d, f, e, l, t, plain;

	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "d", 1, DAXFS_S_IFDIR | 02775, 0, 500,
			     &d), 0);
	CHECK_EQ(daxfs_mknod(&fs, d, "f", 1, DAXFS_S_IFREG | 0644, 1000, 1000,
			     0, &f), 0);
	CHECK_EQ(t_getattr(&fs, f, &a), 0);
	CHECK_EQ(a.gid, 500);
	CHECK_EQ(a.uid, 1000);
	CHECK_EQ(a.mode & 07777, 0644);
	CHECK_EQ(daxfs_mkdir(&fs, d, "e", 1, DAXFS_S_IFDIR | 0755, 1000, 1000,
			     &e), 0);
	CHECK_EQ(t_getattr(&fs, e, &a), 0);
	CHECK_EQ(a.gid, 500);
	CHECK_EQ(a.mode & 07777, 02755);
	CHECK_EQ(daxfs_symlink(&fs, d, "l", 1, "f", 1, 1000, 1000, &l), 0);
	CHECK_EQ(t_getattr(&fs, l, &a), 0);
	CHECK_EQ(a.gid, 500);
	/* an unnamed file (O_TMPFILE) too */
	CHECK_EQ(daxfs_tmpfile(&fs, d, 0600, 1000, 1000, &t), 0);
	CHECK_EQ(t_getattr(&fs, t, &a), 0);
	CHECK_EQ(a.gid, 500);
	CHECK_EQ(daxfs_open_put(&fs, t), 0);
	/* and a file made and named in one op (daxfs.ko's create), which
	 * takes the group from the directory record its naming uses */
	CHECK_EQ(daxfs_create_held(&fs, d, NULL, 0640, 1000, 1000, "h", 1, &t,
				   NULL), 0);
	CHECK_EQ(t_getattr(&fs, t, &a), 0);
	CHECK_EQ(a.gid, 500);
	CHECK_EQ(a.uid, 1000);
	CHECK_EQ(a.mode, DAXFS_S_IFREG | 0640);
	CHECK_EQ(daxfs_open_put(&fs, t), 0);
	/* outside it, the caller's */
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "p", 1, DAXFS_S_IFDIR | 0755, 1000,
			     1000, &plain), 0);
	CHECK_EQ(t_getattr(&fs, plain, &a), 0);
	CHECK_EQ(a.gid, 1000);
	CHECK_EQ(a.mode & 07777, 0755);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_chown_kills_setid);
	RUN(test_setgid_directory);
	return t_done();
}
