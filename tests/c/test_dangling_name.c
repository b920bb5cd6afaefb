// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A name whose entry names no inode (a peer's stray store changed its
 * inode number).  An unlink takes a name out before it frees the inode,
 * so a look that finds the name, then no inode, then the name naming it
 * still, has met damage: the lookups that load the inode say EUCLEAN at
 * once, and so does an open(O_CREAT) of the name (libdaxfs went round
 * 65,536 times, 10 s, to end with EAGAIN; daxfs.ko's create went round,
 * the name taken for the naming and missing for the open, until the
 * chaos test's guest timed out: tests/vm/test_kernel_chaos.py).
 *
 * And the other side: a name that other hosts unlink, or replace by a
 * rename, while it is looked up is never called damage.
 */
#include <pthread.h>
#include "tfile.h"
#include "core/inode.h"
#include "core/dir.h"
#include "daxfs/libdaxfs.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

/* two hosts on one region file: a and b */
static struct daxfs_handle *ha, *hb;
static struct daxfs_fs *fa, *fb;

/* The entry of name in dir names the inode number bad from now on. */
static void entry_names(struct daxfs_fs *fs, u64 dir, const char *name,
			u64 bad)
{
	struct daxfs_op op;
	struct daxfs_iref ref;
	struct daxfs_dent de;
	u64 *word;

	CHECK_EQ(daxfs_op_begin(fs, &op), 0);
	CHECK_EQ(daxfs_inode_get(&op, dir, &ref), 0);
	CHECK_EQ(daxfs_dir_find(&op, &ref, name, (u32)strlen(name),
				daxfs_name_hash(fs, name, (u32)strlen(name)),
				&de), 0);
	daxfs_op_end(&op);
	CHECK(de.leaf != 0);
	word = daxfs_ptr(fs, de.leaf, 8, 8);	/* the leaf's first word */
	CHECK(word && *word == de.ino);
	daxfs_store(word, bad);
}

static void test_damaged_name_is_euclean(void)
{
	struct daxfs_attr a;
	u64 d, f, other, ino, x, pd;
	double t;

	CHECK_EQ(daxfs_mkdir(fa, ROOT, "d", 1, 0755, 0, 0, &d), 0);
	f = t_mkreg(fa, d, "victim");
	other = t_mkreg(fa, d, "other");
	entry_names(fa, d, "victim", 999999);

	CHECK_EQ(daxfs_lookup(fa, d, "victim", 6, &ino), 0);
	CHECK_EQ(ino, 999999);		/* a lookup of the name alone */
	CHECK_EQ(daxfs_lookup_attr(fa, d, "victim", 6, &ino, &a), -EUCLEAN);
	CHECK_EQ(daxfs_lookup_attr(fb, d, "victim", 6, &ino, &a), -EUCLEAN);
	CHECK_EQ(daxfs_lookup_at(fa, ROOT, "d", 1, "victim", 6, &pd, &ino,
				 &a), -EUCLEAN);
	t = t_now();
	x = 0;
	CHECK_EQ(daxfs_create_held(fa, d, NULL, 0644, 0, 0, "victim", 6, &x,
				   NULL), -EEXIST);
	if (x)
		CHECK_EQ(daxfs_open_put(fa, x), 0);
	printf("  create_held of the damaged name: %.3f s\n", t_now() - t);
	/* the other names are what they were */
	CHECK_EQ(daxfs_lookup_attr(fa, d, "other", 5, &ino, &a), 0);
	CHECK_EQ(ino, other);
	CHECK_EQ(daxfs_getattr(fa, f, &a), 0);	/* leaked, not lost */
}

static void test_damaged_name_through_libdaxfs(void)
{
	struct daxfs_handle *h = hb;
	struct daxfs_attr st;
	uint64_t ino;
	u64 d;
	double t;

	CHECK_EQ(daxfs_mkdir(fa, ROOT, "l", 1, 0755, 0, 0, &d), 0);
	t_mkreg(fa, d, "victim");
	entry_names(fa, d, "victim", 999998);
	t = t_now();
	CHECK_EQ(daxfs_path_create(h, "/l/victim", 0644, 0, &ino), -EUCLEAN);
	printf("  daxfs_path_create of the damaged name: %.3f s\n",
	       t_now() - t);
	CHECK_EQ(daxfs_path_create(h, "/l/victim", 0644, DAXFS_CREATE_TRUNC,
				   &ino), -EUCLEAN);
	CHECK_EQ(daxfs_path_stat(h, "/l/victim", &st), -EUCLEAN);
	CHECK_EQ(daxfs_path_create(h, "/l/new", 0644, 0, &ino), 1);
}

/* ---- a name that goes while it is looked up is not damage ---- */

struct churn {
	u64 dir;
	volatile int stop;
	u64 rounds;
};

/* On host b: the name n is made, replaced by a rename and unlinked, over
 * and over. */
static void *churner(void *arg)
{
	struct churn *c = arg;
	u64 ino;

	while (!c->stop) {
		if (daxfs_mknod(fb, c->dir, "n", 1, DAXFS_S_IFREG | 0644, 0,
				0, 0, &ino) ||
		    daxfs_mknod(fb, c->dir, "m", 1, DAXFS_S_IFREG | 0644, 0,
				0, 0, &ino) ||
		    daxfs_rename(fb, c->dir, "m", 1, c->dir, "n", 1, 0) ||
		    daxfs_unlink(fb, c->dir, "n", 1)) {
			fprintf(stderr, "churn: a call failed\n");
			abort();
		}
		c->rounds++;
	}
	return NULL;
}

static void test_unlink_race_is_not_damage(void)
{
	struct churn c = { 0 };
	struct daxfs_attr a;
	u64 ino, found = 0, gone = 0, bad = 0;
	double end = t_now() + t_race_secs(2.0);
	pthread_t th;
	int err;

	CHECK_EQ(daxfs_mkdir(fa, ROOT, "c", 1, 0755, 0, 0, &c.dir), 0);
	CHECK_EQ(pthread_create(&th, NULL, churner, &c), 0);
	while (t_now() < end) {
		err = daxfs_lookup_attr(fa, c.dir, "n", 1, &ino, &a);
		if (!err)
			found++;
		else if (err == -ENOENT)
			gone++;
		else
			bad++;
	}
	c.stop = 1;
	CHECK_EQ(pthread_join(th, NULL), 0);
	printf("  %llu churn rounds: %llu looks found the name, %llu not, "
	       "%llu other answers\n", (unsigned long long)c.rounds,
	       (unsigned long long)found, (unsigned long long)gone,
	       (unsigned long long)bad);
	CHECK_EQ(bad, 0);
	CHECK(found > 0 && gone > 0);
}

int main(void)
{
	struct daxfs_mkfs_opts o;
	char path[64];

	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-dangling.%d",
		 (int)getpid());
	memset(&o, 0, sizeof(o));
	o.force = 1;
	if (daxfs_region_create(path, REGION, &o) ||
	    daxfs_region_open(path, 0, &ha) ||
	    daxfs_region_open(path, 0, &hb)) {
		fprintf(stderr, "mkfs or open failed\n");
		return 2;
	}
	fa = daxfs_handle_fs(ha);
	fb = daxfs_handle_fs(hb);
	RUN(test_damaged_name_is_euclean);
	RUN(test_damaged_name_through_libdaxfs);
	RUN(test_unlink_race_is_not_damage);
	daxfs_region_close(hb);
	daxfs_region_close(ha);
	unlink(path);
	return t_done();
}
