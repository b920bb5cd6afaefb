// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Walks that leave the region (docs/libdaxfs.md): with a link prefix, a
 * symlink whose absolute target lies outside it, or ".." from the root
 * after a relative target climbed there, ends the walk with
 * -DAXFS_EOUTSIDE and daxfs_path_outside() names the kernel path: the
 * target or the prefix's parent, then the rest of the path; a final
 * link's target alone, with the path's own trailing slash.  Without a
 * prefix nothing leaves.  Every path call reports it, the modifying
 * ones included, and none changes the region on its way out. */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tutil.h"
#include "daxfs/libdaxfs.h"

#define MiB		(1ULL << 20)

static char path[64];
static struct daxfs_handle *h;

/* err is -DAXFS_EOUTSIDE and the kernel path is want. */
static bool left_for(int err, const char *want)
{
	if (err != -DAXFS_EOUTSIDE) {
		fprintf(stderr, "  err %d, not outside (want %s)\n", err, want);
		return false;
	}
	if (strcmp(daxfs_path_outside(), want)) {
		fprintf(stderr, "  kernel path '%s', want '%s'\n",
			daxfs_path_outside(), want);
		return false;
	}
	return true;
}

static void make_links(void)
{
	CHECK_EQ(daxfs_path_mkdir(h, "/d", 0755), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/usr/lib", "/d/out"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/usr/bin/python3", "/d/py"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "py", "/d/py2"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/mnt/daxfs/d", "/in"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "../../etc", "/d/up"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/mnt/daxfs2/x", "/near"), 0);
}

static void test_targets_outside_the_prefix_leave(void)
{
	struct daxfs_attr a;
	uint64_t ino;

	CHECK_EQ(daxfs_set_link_prefix(h, "/mnt/daxfs/"), 0);
	CHECK(left_for(daxfs_path_stat(h, "/d/out/x/y", &a), "/usr/lib/x/y"));
	CHECK(left_for(daxfs_path_stat(h, "/d/py", &a), "/usr/bin/python3"));
	CHECK(left_for(daxfs_path_stat(h, "/d/py2", &a), "/usr/bin/python3"));
	CHECK(left_for(daxfs_path_stat(h, "/d/py/", &a), "/usr/bin/python3/"));
	CHECK(left_for(daxfs_path_stat(h, "/d/out/", &a), "/usr/lib/"));
	CHECK(left_for(daxfs_path_stat(h, "/near", &a), "/mnt/daxfs2/x"));
	/* a final link not followed is the region's own */
	CHECK_EQ(daxfs_path_lstat(h, "/d/py", &a), 0);
	CHECK(S_ISLNK(a.mode));
	/* below the prefix: the region's file, through two links */
	CHECK_EQ(daxfs_path_resolve(h, "/in/py", 0, &ino), 0);
	CHECK_EQ(daxfs_path_lstat(h, "/d/py", &a), 0);
	CHECK_EQ(ino, a.ino);
	/* ".." above the root: the prefix's parent */
	CHECK(left_for(daxfs_path_stat(h, "/d/up/passwd", &a), "/mnt/etc/passwd"));
	CHECK_EQ(daxfs_set_link_prefix(h, "/daxfs"), 0);
	CHECK(left_for(daxfs_path_stat(h, "/d/up/passwd", &a), "/etc/passwd"));
	CHECK(left_for(daxfs_path_stat(h, "/in", &a), "/mnt/daxfs/d"));
}

static void test_every_call_reports_it(void)
{
	char buf[64];
	uint64_t ino;

	CHECK_EQ(daxfs_set_link_prefix(h, "/daxfs"), 0);
	CHECK(left_for(daxfs_path_mkdir(h, "/d/out/new", 0755), "/usr/lib/new"));
	CHECK(left_for(daxfs_path_create(h, "/d/out/f", 0644, 0, &ino),
		       "/usr/lib/f"));
	CHECK(left_for(daxfs_path_unlink(h, "/d/out/f"), "/usr/lib/f"));
	CHECK(left_for(daxfs_path_rmdir(h, "/d/out/x"), "/usr/lib/x"));
	CHECK(left_for(daxfs_path_symlink(h, "t", "/d/out/l"), "/usr/lib/l"));
	CHECK(left_for(daxfs_path_readlink(h, "/d/out/l", buf, sizeof(buf)),
		       "/usr/lib/l"));
	CHECK(left_for(daxfs_path_truncate(h, "/d/py", 0), "/usr/bin/python3"));
	CHECK(left_for(daxfs_path_chmod(h, "/d/py", 0600), "/usr/bin/python3"));
	CHECK(left_for(daxfs_path_rename(h, "/d/out/a", "/d/b", 0),
		       "/usr/lib/a"));
	CHECK(left_for(daxfs_path_link(h, "/d/py", "/d/out/hard"),
		       "/usr/lib/hard"));
	/* nothing was made in the region on the way */
	CHECK_EQ(daxfs_path_resolve(h, "/d/b", 0, &ino), -ENOENT);
	CHECK_EQ(daxfs_path_resolve(h, "/usr", 0, &ino), -ENOENT);
}

static void test_without_a_prefix_nothing_leaves(void)
{
	struct daxfs_attr a;

	CHECK_EQ(daxfs_set_link_prefix(h, NULL), 0);
	CHECK_EQ(daxfs_path_stat(h, "/d/py", &a), -ENOENT);
	/* ".." at the root stays there: /d/up is /etc in the region */
	CHECK_EQ(daxfs_path_stat(h, "/d/up/passwd", &a), -ENOENT);
	CHECK_EQ(daxfs_path_mkdir(h, "/etc", 0755), 0);
	CHECK_EQ(daxfs_path_stat(h, "/d/up", &a), 0);
	CHECK(S_ISDIR(a.mode));
	/* "/" as the prefix: the region is the whole tree */
	CHECK_EQ(daxfs_set_link_prefix(h, "/"), 0);
	CHECK_EQ(daxfs_path_stat(h, "/d/up", &a), 0);
	CHECK_EQ(daxfs_link_outside(h, "/usr", 4, NULL), 0);
	CHECK_EQ(daxfs_set_link_prefix(h, "/daxfs"), 0);
	CHECK(left_for(daxfs_link_outside(h, "/usr", 4, "/x"), "/usr/x"));
	CHECK_EQ(daxfs_link_outside(h, "/daxfs/x", 8, NULL), 0);
	CHECK_EQ(daxfs_link_outside(h, "rel", 3, NULL), 0);
}

/* protected_symlinks (daxfs_set_link_protect): the last name's link in a
 * sticky world-writable directory is followed only when it is the
 * follower's or the directory owner's; links on the way always are. */
static void test_protected_links(void)
{
	struct daxfs_attr a;
	uint32_t me = geteuid();

	CHECK_EQ(daxfs_set_link_prefix(h, "/daxfs"), 0);
	CHECK_EQ(daxfs_path_mkdir(h, "/tmp", 01777), 0);
	CHECK_EQ(daxfs_path_mkdir(h, "/plain", 0777), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/etc", "/tmp/mine"), 0);
	daxfs_set_creds(h, me + 1, me + 1);
	CHECK_EQ(daxfs_path_symlink(h, "/etc/passwd", "/tmp/evil"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/etc", "/tmp/evildir"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "../d", "/tmp/inner"), 0);
	CHECK_EQ(daxfs_path_symlink(h, "/etc/passwd", "/plain/other"), 0);
	daxfs_set_creds(h, me, me);
	/* off: followed */
	CHECK(left_for(daxfs_path_stat(h, "/tmp/evil", &a), "/etc/passwd"));
	daxfs_set_link_protect(h, 1);
	CHECK_EQ(daxfs_path_stat(h, "/tmp/evil", &a), -EACCES);
	CHECK_EQ(daxfs_path_stat(h, "/tmp/inner", &a), -EACCES);
	CHECK_EQ(daxfs_link_may_follow(h, "/tmp/evil"), -EACCES);
	/* not followed: the link itself */
	CHECK_EQ(daxfs_path_lstat(h, "/tmp/evil", &a), 0);
	/* on the way, the follower's own, elsewhere: followed */
	CHECK(left_for(daxfs_path_stat(h, "/tmp/evildir/x", &a), "/etc/x"));
	CHECK(left_for(daxfs_path_stat(h, "/tmp/mine", &a), "/etc"));
	CHECK(left_for(daxfs_path_stat(h, "/plain/other", &a), "/etc/passwd"));
	CHECK_EQ(daxfs_link_may_follow(h, "/plain/other"), 0);
	/* the directory's owner's link */
	CHECK_EQ(daxfs_path_chown(h, "/tmp", me + 1, me + 1), 0);
	CHECK(left_for(daxfs_path_stat(h, "/tmp/evil", &a), "/etc/passwd"));
	daxfs_set_link_protect(h, 0);
}

/* A thread's kernel path is its own (a thread that exits frees it:
 * walk_exit; valgrind --leak-check=full finds no leak in this program). */
static void *other_thread(void *arg)
{
	struct daxfs_attr a;

	return (void *)(long)left_for(daxfs_path_stat(h, "/d/out/z", &a),
				      "/usr/lib/z");
}

static void test_per_thread(void)
{
	struct daxfs_attr a;
	pthread_t t;
	void *ok;

	CHECK(left_for(daxfs_path_stat(h, "/d/py", &a), "/usr/bin/python3"));
	CHECK_EQ(pthread_create(&t, NULL, other_thread, NULL), 0);
	CHECK_EQ(pthread_join(t, &ok), 0);
	CHECK(ok);
	CHECK_EQ(strcmp(daxfs_path_outside(), "/usr/bin/python3"), 0);
}

int main(void)
{
	struct daxfs_mkfs_opts o;

	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-liboutside.%d",
		 (int)getpid());
	memset(&o, 0, sizeof(o));
	o.force = 1;
	if (daxfs_region_create(path, 32 * MiB, &o) ||
	    daxfs_region_open(path, 0, &h)) {
		fprintf(stderr, "mkfs or open failed\n");
		unlink(path);
		return 2;
	}
	make_links();
	RUN(test_targets_outside_the_prefix_leave);
	RUN(test_every_call_reports_it);
	RUN(test_without_a_prefix_nothing_leaves);
	RUN(test_protected_links);
	RUN(test_per_thread);
	daxfs_region_close(h);
	unlink(path);
	return t_done();
}
