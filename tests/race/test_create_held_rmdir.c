// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs_create_held looks its directory up once, at the start of its op,
 * and makes the nameless file before it names it in that directory.
 * Another host's rmdir of the (still empty) directory in between must
 * not leave the name in a removed directory: the naming refuses it
 * (ENOENT, as a separate daxfs_link_created's lookup did), the file stays
 * made and held (ino set), our close frees it, and fsck finds nothing.
 * Built by `make race`: the hook removes the directory right after the
 * nameless file is published (race point "tmpfile.published").
 */
#include "../c/tfile.h"
#include "../c/tcheck.h"
#include "../c/tpool.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs other;
static bool armed;
static int removed = 1;

/* the directory goes once, right after the nameless file is published */
void daxfs_race_point(const char *name, const void *p)
{
	if (armed && !strcmp(name, "tmpfile.published")) {
		armed = false;
		removed = daxfs_rmdir(&other, ROOT, "d", 1);
	}
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	struct daxfs_fcache dfc = { 0 };
	struct daxfs_linked ln;
	struct daxfs_attr a;
	u64 d, ino = 0, found;

	CHECK_EQ(t_join(&other, region, REGION), 0);
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "d", 1, DAXFS_S_IFDIR | 0755, 0, 0, &d),
		 0);
	CHECK_EQ(daxfs_getattr_fc(&fs, d, &dfc, &a), 0);
	armed = true;
	CHECK_EQ(daxfs_create_held(&fs, d, &dfc, 0644, 0, 0, "f", 1, &ino, &ln),
		 -ENOENT);
	CHECK_EQ(removed, 0);
	CHECK(ino != 0);
	CHECK_EQ(ln.inode.ino, 0);
	CHECK_EQ(daxfs_lookup(&fs, ROOT, "d", 1, &found), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fs, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fs, ino), 0);
	CHECK_EQ(daxfs_getattr(&fs, ino, &a), -ENOENT);
	daxfs_host_leave(&other);
	daxfs_host_leave(&fs);
	t_check_clean(region, REGION);	/* nothing leaked either */
	t_region_free(region, REGION);
	return t_done();
}
