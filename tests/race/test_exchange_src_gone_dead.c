// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * rename(s/a, b, EXCHANGE) of a file a and a directory T (b), across
 * directories.  An unlink of s/a on another host, after the exchange
 * published b -> a's file (step 1) and before it swapped s/a (step 2),
 * leaves the directory T to go under s/a by an insert, count+1 first
 * (rename_src_gone).  With s now empty, an rmdir of s may mark it DEAD;
 * the count+1 failed and T was left with no name (to fsck), also when
 * that rmdir then undid its mark and s stayed (the audit of transient
 * marks, session 53).  Built by `make race`: the hook unlinks s/a at the
 * exchange's step 2 and marks s DEAD before the count; a thread undoes
 * the mark 50 ms later, as that rmdir would.  The exchange must wait and
 * name T under s/a.
 */
#include <pthread.h>
#include <unistd.h>

#include "../c/tfile.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs other;
static u64 sdir, tdir;
static struct daxfs_inode *s_rec;
static int unlinked = -1, marked;
static pthread_t undoer;

static void *undo_mark(void *arg)
{
	(void)arg;
	usleep(50 * 1000);
	daxfs_store(&s_rec->aux, daxfs_load(&s_rec->aux) & ~DAXFS_DIR_DEAD);
	return NULL;
}

void daxfs_race_point(const char *name, const void *p)
{
	const struct daxfs_dirent *de = p;

	if (!tdir)
		return;
	if (!strcmp(name, "dirent") && unlinked < 0 && de->ino == tdir &&
	    de->name_len == 1 && de->name[0] == 'a') {
		/* step 2's read of the leaf it swaps in */
		unlinked = daxfs_unlink(&other, sdir, "a", 1);
	} else if (!strcmp(name, "rename.src_gone_count") && p == s_rec &&
		   !marked) {
		marked = 1;
		daxfs_store(&s_rec->aux,
			    daxfs_load(&s_rec->aux) | DAXFS_DIR_DEAD);
		pthread_create(&undoer, NULL, undo_mark, NULL);
	}
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	u64 f = 0, t = 0, ino = 0;
	struct daxfs_attr at;

	CHECK_EQ(t_join(&other, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "s", 1, DAXFS_S_IFDIR | 0755, 0, 0,
			     &sdir), 0);
	CHECK_EQ(daxfs_mknod(&fs, sdir, "a", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &f), 0);
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "b", 1, DAXFS_S_IFDIR | 0755, 0, 0,
			     &t), 0);
	s_rec = t_ip(&fs, sdir);
	tdir = t;
	CHECK_EQ(daxfs_rename(&fs, sdir, "a", 1, ROOT, "b", 1,
			      DAXFS_RENAME_EXCHANGE), 0);
	tdir = 0;
	CHECK_EQ(unlinked, 0);
	CHECK_EQ(marked, 1);
	if (marked)
		pthread_join(undoer, NULL);
	CHECK_EQ(daxfs_lookup(&fs, ROOT, "b", 1, &ino), 0);
	CHECK_EQ(ino, f);
	/* T has a name: the old one */
	CHECK_EQ(daxfs_lookup(&fs, sdir, "a", 1, &ino), 0);
	CHECK_EQ(ino, t);
	CHECK_EQ(daxfs_getattr(&fs, t, &at), 0);
	CHECK_EQ(at.nlink, 2);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "s", 1), -ENOTEMPTY);
	daxfs_host_leave(&other);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
