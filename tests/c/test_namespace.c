// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Namespace unit tests: every operation and error code, one host. */
#include "tutil.h"
#include "core/inode.h"
#include "core/dir.h"

#define MiB (1ULL << 20)
#define ROOT 1ULL

static struct daxfs_fs fs;

static int mk(u64 dir, const char *n, u64 *ino)
{
	return daxfs_mknod(&fs, dir, n, strlen(n), DAXFS_S_IFREG | 0644, 0, 0, 0, ino);
}

static int md(u64 dir, const char *n, u64 *ino)
{
	return daxfs_mkdir(&fs, dir, n, strlen(n), 0755, 0, 0, ino);
}

static int lk(u64 dir, const char *n, u64 *ino)
{
	u64 tmp;

	return daxfs_lookup(&fs, dir, n, strlen(n), ino ? ino : &tmp);
}

static int rn(u64 sd, const char *s, u64 dd, const char *d, u32 fl)
{
	return daxfs_rename(&fs, sd, s, strlen(s), dd, d, strlen(d), fl);
}

static struct daxfs_attr ga(u64 ino)
{
	struct daxfs_attr a;

	memset(&a, 0, sizeof(a));
	daxfs_getattr(&fs, ino, &a);
	return a;
}

/* readdir collector */
struct coll {
	char names[512][64];
	u64 inos[512];
	u32 n, stop_every, since;
};

static int fill(void *ctx, const char *name, u32 len, u64 ino, u32 dt, u64 pos)
{
	struct coll *c = ctx;

	if (c->stop_every && c->since++ == c->stop_every) {
		c->since = 0;
		return 1;
	}
	if (c->n < 512 && len < 64) {
		memcpy(c->names[c->n], name, len);
		c->names[c->n][len] = 0;
		c->inos[c->n] = ino;
		c->n++;
	}
	return 0;
}

static void list(u64 dir, struct coll *c, u32 chunk)
{
	u64 pos = 0;
	int guard = 0;

	memset(c, 0, sizeof(*c));
	c->stop_every = chunk;
	while (pos != DAXFS_POS_EOF && guard++ < 100000)
		CHECK_EQ(daxfs_readdir(&fs, dir, &pos, fill, c), 0);
}

static int count_name(struct coll *c, const char *n)
{
	u32 i;
	int k = 0;

	for (i = 0; i < c->n; i++)
		k += !strcmp(c->names[i], n);
	return k;
}

static void t_create_lookup(void)
{
	u64 a, b, d;
	struct daxfs_attr at, rt0, rt1;
	char longname[300];

	rt0 = ga(ROOT);
	CHECK_EQ(mk(ROOT, "alpha", &a), 0);
	CHECK_EQ(lk(ROOT, "alpha", &b), 0);
	CHECK_EQ(a, b);
	at = ga(a);
	CHECK_EQ(at.mode, DAXFS_S_IFREG | 0644);
	CHECK_EQ(at.nlink, 1);
	rt1 = ga(ROOT);
	CHECK(rt1.mtime_ns >= rt0.mtime_ns && rt1.change > rt0.change);
	/* -EEXIST names the inode found (libdaxfs' create opens it) */
	b = 0;
	CHECK_EQ(mk(ROOT, "alpha", &b), -EEXIST);
	CHECK_EQ(b, a);
	b = 0;
	CHECK_EQ(md(ROOT, "alpha", &b), -EEXIST);
	CHECK_EQ(b, a);
	CHECK_EQ(lk(ROOT, "nope", NULL), -ENOENT);
	CHECK_EQ(mk(ROOT, "", &b), -EINVAL);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "", 0, DAXFS_S_IFREG, 0, 0, 0, &b), -EINVAL);
	CHECK_EQ(mk(ROOT, ".", &b), -EINVAL);
	CHECK_EQ(mk(ROOT, "..", &b), -EINVAL);
	CHECK_EQ(mk(ROOT, "a/b", &b), -EINVAL);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "x\0y", 3, DAXFS_S_IFREG, 0, 0, 0, &b), -EINVAL);
	memset(longname, 'n', sizeof(longname));
	longname[256] = 0;
	CHECK_EQ(mk(ROOT, longname, &b), -ENAMETOOLONG);
	longname[255] = 0;
	CHECK_EQ(mk(ROOT, longname, &b), 0);
	CHECK_EQ(lk(ROOT, longname, &d), 0);
	CHECK_EQ(b, d);
	CHECK_EQ(mk(a, "child", &b), -ENOTDIR);
	CHECK_EQ(lk(a, "child", NULL), -ENOTDIR);
	CHECK_EQ(mk(999999, "child", &b), -ENOENT);
	CHECK_EQ(lk(ROOT, ".", &b), 0);
	CHECK_EQ(b, ROOT);
	CHECK_EQ(lk(ROOT, "..", &b), 0);
	CHECK_EQ(b, ROOT);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, longname, 255), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "alpha", 5), 0);
	CHECK_EQ(ga(ROOT).size, 0);
}

static void t_mknod_types(void)
{
	u64 f, s, c, b, x;
	struct daxfs_attr at;

	CHECK_EQ(daxfs_mknod(&fs, ROOT, "fifo", 4, DAXFS_S_IFIFO | 0600, 1, 2, 0, &f), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "sock", 4, DAXFS_S_IFSOCK | 0600, 1, 2, 0, &s), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "chr", 3, DAXFS_S_IFCHR | 0600, 1, 2, 0x0501, &c), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "blk", 3, DAXFS_S_IFBLK | 0600, 1, 2, 0x0802, &b), 0);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "dir", 3, DAXFS_S_IFDIR | 0600, 1, 2, 0, &x), -EINVAL);
	CHECK_EQ(daxfs_mknod(&fs, ROOT, "plain", 5, 0644, 1, 2, 0, &x), 0);
	CHECK_EQ(ga(x).mode, DAXFS_S_IFREG | 0644);
	at = ga(c);
	CHECK_EQ(at.mode, DAXFS_S_IFCHR | 0600);
	CHECK_EQ(at.rdev, 0x0501);
	CHECK_EQ(at.uid, 1);
	CHECK_EQ(at.gid, 2);
	CHECK_EQ(ga(b).rdev, 0x0802);
	CHECK_EQ(ga(f).mode & DAXFS_S_IFMT, DAXFS_S_IFIFO);
	CHECK_EQ(ga(s).mode & DAXFS_S_IFMT, DAXFS_S_IFSOCK);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "fifo", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "sock", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "chr", 3), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "blk", 3), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "plain", 5), 0);
	CHECK_EQ(daxfs_getattr(&fs, f, &at), -ENOENT);
}

static void t_dirs(void)
{
	u64 d, e, f, g;
	u32 n0 = ga(ROOT).nlink;

	CHECK_EQ(md(ROOT, "d", &d), 0);
	CHECK_EQ(ga(d).nlink, 2);
	CHECK_EQ(ga(d).mode, DAXFS_S_IFDIR | 0755);
	CHECK_EQ(ga(ROOT).nlink, n0 + 1);
	CHECK_EQ(md(d, "e", &e), 0);
	CHECK_EQ(ga(d).nlink, 3);
	CHECK_EQ(lk(e, "..", &g), 0);
	CHECK_EQ(g, d);
	CHECK_EQ(mk(e, "f", &f), 0);
	CHECK_EQ(daxfs_rmdir(&fs, d, "e", 1), -ENOTEMPTY);
	CHECK_EQ(daxfs_rmdir(&fs, e, "f", 1), -ENOTDIR);
	CHECK_EQ(daxfs_unlink(&fs, d, "e", 1), -EISDIR);
	CHECK_EQ(daxfs_rmdir(&fs, d, "zz", 2), -ENOENT);
	CHECK_EQ(daxfs_rmdir(&fs, d, ".", 1), -EINVAL);
	CHECK_EQ(daxfs_unlink(&fs, e, "f", 1), 0);
	CHECK_EQ(daxfs_rmdir(&fs, d, "e", 1), 0);
	CHECK_EQ(ga(d).nlink, 2);
	CHECK_EQ(lk(d, "e", NULL), -ENOENT);
	CHECK_EQ(mk(e, "late", &f), -ENOENT);	/* removed dir takes no names */
	CHECK_EQ(md(d, "e", &e), 0);		/* name reusable */
	CHECK_EQ(daxfs_rmdir(&fs, d, "e", 1), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "d", 1), 0);
	CHECK_EQ(ga(ROOT).nlink, n0);
}

static void t_symlink(void)
{
	char buf[5000], tgt[4100];
	u64 s, f;

	CHECK_EQ(daxfs_symlink(&fs, ROOT, "sl", 2, "some/where", 10, 0, 0, &s), 0);
	CHECK_EQ(ga(s).mode, DAXFS_S_IFLNK | 0777);
	CHECK_EQ(ga(s).size, 10);
	CHECK_EQ(daxfs_readlink(&fs, s, buf, sizeof(buf)), 10);
	CHECK(!memcmp(buf, "some/where", 10));
	CHECK_EQ(daxfs_readlink(&fs, s, buf, 4), 10);
	CHECK_EQ(daxfs_symlink(&fs, ROOT, "sl", 2, "x", 1, 0, 0, &f), -EEXIST);
	CHECK_EQ(daxfs_symlink(&fs, ROOT, "s0", 2, "", 0, 0, 0, &f), -ENOENT);
	memset(tgt, 'y', sizeof(tgt));
	CHECK_EQ(daxfs_symlink(&fs, ROOT, "s1", 2, tgt, DAXFS_SYMLINK_MAX + 1, 0, 0, &f),
		 -ENAMETOOLONG);
	CHECK_EQ(daxfs_symlink(&fs, ROOT, "s2", 2, tgt, DAXFS_SYMLINK_MAX, 0, 0, &f), 0);
	CHECK_EQ(daxfs_readlink(&fs, f, buf, sizeof(buf)), DAXFS_SYMLINK_MAX);
	CHECK(!memcmp(buf, tgt, DAXFS_SYMLINK_MAX));
	CHECK_EQ(mk(ROOT, "plainfile", &f), 0);
	CHECK_EQ(daxfs_readlink(&fs, f, buf, sizeof(buf)), -EINVAL);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "plainfile", 9), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "sl", 2), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "s2", 2), 0);
	CHECK_EQ(daxfs_readlink(&fs, s, buf, sizeof(buf)), -ENOENT);
}

static void t_link(void)
{
	u64 f, d, x;
	struct daxfs_attr a0;

	CHECK_EQ(mk(ROOT, "orig", &f), 0);
	CHECK_EQ(md(ROOT, "ld", &d), 0);
	a0 = ga(f);
	CHECK_EQ(daxfs_link(&fs, f, d, "copy", 4), 0);
	CHECK_EQ(ga(f).nlink, 2);
	CHECK(ga(f).ctime_ns >= a0.ctime_ns);
	CHECK_EQ(daxfs_link(&fs, f, d, "copy", 4), -EEXIST);
	CHECK_EQ(ga(f).nlink, 2);
	CHECK_EQ(daxfs_link(&fs, d, ROOT, "dl", 2), -EPERM);
	CHECK_EQ(daxfs_link(&fs, f, f, "zz", 2), -ENOTDIR);
	CHECK_EQ(daxfs_link(&fs, 777777, d, "zz", 2), -ENOENT);
	CHECK_EQ(daxfs_link(&fs, f, d, "..", 2), -EINVAL);
	CHECK_EQ(lk(d, "copy", &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "orig", 4), 0);
	CHECK_EQ(ga(f).nlink, 1);
	CHECK_EQ(lk(d, "copy", &x), 0);
	CHECK_EQ(daxfs_unlink(&fs, d, "copy", 4), 0);
	CHECK_EQ(daxfs_getattr(&fs, f, &a0), -ENOENT);
	CHECK_EQ(daxfs_unlink(&fs, d, "copy", 4), -ENOENT);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "ld", 2), 0);
}

/* An unlink stamps the directory's mtime and ctime and the file's ctime
 * with one instant, as a link stamps both of its inodes (and as tmpfs
 * does): the file kept by a second name shows the directory's time. */
static void t_unlink_instant(void)
{
	struct daxfs_attr fa, da;
	u64 f;

	CHECK_EQ(mk(ROOT, "ui_a", &f), 0);
	CHECK_EQ(daxfs_link(&fs, f, ROOT, "ui_b", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "ui_a", 4), 0);
	fa = ga(f);
	da = ga(ROOT);
	CHECK_EQ(fa.nlink, 1);
	CHECK_EQ(da.mtime_ns, da.ctime_ns);
	CHECK_EQ(fa.ctime_ns, da.ctime_ns);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "ui_b", 4), 0);
	CHECK_EQ(daxfs_getattr(&fs, f, &fa), -ENOENT);
}

/* link by the source name (docs/namespace.md, "Link racing the removal
 * of its source"): that name must still name the inode. */
static void t_link_name(void)
{
	struct daxfs_attr a;
	u64 f, g, x;

	CHECK_EQ(mk(ROOT, "ln_a", &f), 0);
	CHECK_EQ(mk(ROOT, "ln_b", &g), 0);
	CHECK_EQ(daxfs_link_name(&fs, ROOT, "ln_a", 4, f, ROOT, "ln_c", 4), 0);
	CHECK_EQ(lk(ROOT, "ln_c", &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(ga(f).nlink, 2);
	/* the name now names another inode, or nothing: ENOENT */
	CHECK_EQ(daxfs_link_name(&fs, ROOT, "ln_b", 4, f, ROOT, "ln_d", 4), -ENOENT);
	CHECK_EQ(daxfs_link_name(&fs, ROOT, "ln_z", 4, f, ROOT, "ln_d", 4), -ENOENT);
	CHECK_EQ(lk(ROOT, "ln_d", &x), -ENOENT);
	CHECK_EQ(ga(f).nlink, 2);
	/* a failed link after the hold: the target name exists */
	CHECK_EQ(daxfs_link_name(&fs, ROOT, "ln_a", 4, f, ROOT, "ln_b", 4), -EEXIST);
	CHECK_EQ(daxfs_link_name(&fs, ROOT, "..", 2, f, ROOT, "ln_d", 4), -EINVAL);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "ln_a", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "ln_c", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "ln_b", 4), 0);
	CHECK_EQ(daxfs_getattr(&fs, f, &a), -ENOENT);
}

static void t_setattr(void)
{
	struct daxfs_attr a = { 0 }, b;
	u64 f, d;

	CHECK_EQ(mk(ROOT, "sa", &f), 0);
	CHECK_EQ(md(ROOT, "sd", &d), 0);
	a.mode = 0600 | DAXFS_S_IFDIR;	/* type bits ignored */
	a.uid = 42;
	a.gid = 43;
	a.atime_ns = 1000;
	a.mtime_ns = 2000;
	CHECK_EQ(daxfs_setattr(&fs, f, DAXFS_ATTR_MODE | DAXFS_ATTR_UID | DAXFS_ATTR_GID |
			       DAXFS_ATTR_ATIME | DAXFS_ATTR_MTIME, &a), 0);
	b = ga(f);
	CHECK_EQ(b.mode, DAXFS_S_IFREG | 0600);
	CHECK_EQ(b.uid, 42);
	CHECK_EQ(b.gid, 43);
	CHECK_EQ(b.atime_ns, 1000);
	CHECK_EQ(b.mtime_ns, 2000);
	CHECK(b.ctime_ns > 2000);
	a.ctime_ns = 3000;
	CHECK_EQ(daxfs_setattr(&fs, f, DAXFS_ATTR_CTIME, &a), 0);
	CHECK_EQ(ga(f).ctime_ns, 3000);
	a.size = 10;
	CHECK_EQ(daxfs_setattr(&fs, d, DAXFS_ATTR_SIZE, &a), -EISDIR);
	CHECK_EQ(daxfs_setattr(&fs, f, DAXFS_ATTR_SIZE, &a), 0);
	CHECK_EQ(ga(f).size, 10);
	CHECK_EQ(daxfs_setattr(&fs, 888888, DAXFS_ATTR_UID, &a), -ENOENT);
	CHECK_EQ(daxfs_unlink(&fs, ROOT, "sa", 2), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "sd", 2), 0);
}

static void t_rename(void)
{
	u64 a, b, d1, d2, sub, x, f, g;
	struct daxfs_attr at;
	u32 rn0 = ga(ROOT).nlink;

	CHECK_EQ(md(ROOT, "r1", &d1), 0);
	CHECK_EQ(md(ROOT, "r2", &d2), 0);
	CHECK_EQ(mk(d1, "a", &a), 0);
	/* same dir */
	CHECK_EQ(rn(d1, "a", d1, "b", 0), 0);
	CHECK_EQ(lk(d1, "a", NULL), -ENOENT);
	CHECK_EQ(lk(d1, "b", &x), 0);
	CHECK_EQ(x, a);
	CHECK_EQ(ga(a).nlink, 1);
	CHECK_EQ(ga(d1).size, 1);
	/* across */
	CHECK_EQ(rn(d1, "b", d2, "c", 0), 0);
	CHECK_EQ(lk(d2, "c", &x), 0);
	CHECK_EQ(x, a);
	CHECK_EQ(ga(d1).size, 0);
	CHECK_EQ(ga(d2).size, 1);
	CHECK_EQ(rn(d1, "b", d2, "c", 0), -ENOENT);
	/* replace a file */
	CHECK_EQ(mk(d2, "victim", &b), 0);
	CHECK_EQ(rn(d2, "c", d2, "victim", DAXFS_RENAME_NOREPLACE), -EEXIST);
	CHECK_EQ(rn(d2, "c", d2, "victim", 0), 0);
	CHECK_EQ(daxfs_getattr(&fs, b, &at), -ENOENT);
	CHECK_EQ(lk(d2, "victim", &x), 0);
	CHECK_EQ(x, a);
	CHECK_EQ(ga(d2).size, 1);
	CHECK_EQ(ga(a).nlink, 1);
	/* onto itself / another link of the same inode: no-op */
	CHECK_EQ(rn(d2, "victim", d2, "victim", 0), 0);
	CHECK_EQ(daxfs_link(&fs, a, d1, "hl", 2), 0);
	CHECK_EQ(rn(d2, "victim", d1, "hl", 0), 0);
	CHECK_EQ(lk(d2, "victim", NULL), 0);
	CHECK_EQ(lk(d1, "hl", NULL), 0);
	CHECK_EQ(ga(a).nlink, 2);
	CHECK_EQ(daxfs_unlink(&fs, d1, "hl", 2), 0);
	/* exchange two files */
	CHECK_EQ(mk(d1, "other", &b), 0);
	CHECK_EQ(rn(d2, "victim", d1, "other", DAXFS_RENAME_EXCHANGE), 0);
	CHECK_EQ(lk(d2, "victim", &x), 0);
	CHECK_EQ(x, b);
	CHECK_EQ(lk(d1, "other", &x), 0);
	CHECK_EQ(x, a);
	CHECK_EQ(ga(a).nlink, 1);
	CHECK_EQ(ga(b).nlink, 1);
	CHECK_EQ(rn(d2, "victim", d1, "nothere", DAXFS_RENAME_EXCHANGE), -ENOENT);
	CHECK_EQ(rn(d2, "victim", d1, "x", DAXFS_RENAME_EXCHANGE |
		    DAXFS_RENAME_NOREPLACE), -EINVAL);
	CHECK_EQ(rn(d2, "victim", d1, "x", 8), -EINVAL);
	/* directories */
	CHECK_EQ(md(d1, "sub", &sub), 0);
	CHECK_EQ(ga(d1).nlink, 3);
	CHECK_EQ(rn(d1, "sub", d2, "sub", 0), 0);
	CHECK_EQ(ga(d1).nlink, 2);
	CHECK_EQ(ga(d2).nlink, 3);
	CHECK_EQ(lk(sub, "..", &x), 0);
	CHECK_EQ(x, d2);
	CHECK_EQ(rn(ROOT, "r2", sub, "inside", 0), -EINVAL);	/* own subtree */
	CHECK_EQ(rn(d2, "sub", sub, "self", 0), -EINVAL);
	CHECK_EQ(rn(d2, "sub", d2, "victim", 0), -ENOTDIR);
	CHECK_EQ(rn(d2, "victim", d2, "sub", 0), -EISDIR);
	CHECK_EQ(md(d1, "empty", &f), 0);
	CHECK_EQ(md(d1, "full", &g), 0);
	CHECK_EQ(mk(g, "content", &x), 0);
	CHECK_EQ(rn(d2, "sub", d1, "full", 0), -ENOTEMPTY);
	CHECK_EQ(ga(d1).nlink, 4);
	CHECK_EQ(rn(d2, "sub", d1, "empty", 0), 0);	/* over an empty dir */
	CHECK_EQ(daxfs_getattr(&fs, f, &at), -ENOENT);
	CHECK_EQ(ga(d1).nlink, 4);
	CHECK_EQ(ga(d2).nlink, 2);
	CHECK_EQ(lk(d1, "empty", &x), 0);
	CHECK_EQ(x, sub);
	CHECK_EQ(lk(sub, "..", &x), 0);
	CHECK_EQ(x, d1);
	/* exchange a dir with a file across dirs */
	CHECK_EQ(rn(d1, "full", d2, "victim", DAXFS_RENAME_EXCHANGE), 0);
	CHECK_EQ(ga(d1).nlink, 3);
	CHECK_EQ(ga(d2).nlink, 3);
	CHECK_EQ(lk(g, "..", &x), 0);
	CHECK_EQ(x, d2);
	CHECK_EQ(lk(d1, "full", &x), 0);
	CHECK_EQ(x, b);
	CHECK_EQ(ga(d1).size, 3);
	CHECK_EQ(ga(d2).size, 1);
	/* cleanup */
	CHECK_EQ(daxfs_unlink(&fs, g, "content", 7), 0);
	CHECK_EQ(daxfs_rmdir(&fs, d2, "victim", 6), 0);
	CHECK_EQ(daxfs_unlink(&fs, d1, "full", 4), 0);
	CHECK_EQ(daxfs_unlink(&fs, d1, "other", 5), 0);
	CHECK_EQ(daxfs_rmdir(&fs, d1, "empty", 5), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "r1", 2), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "r2", 2), 0);
	CHECK_EQ(ga(ROOT).nlink, rn0);
	CHECK_EQ(daxfs_load(daxfs_state_word(&fs, rename_claim)), 0);
}

static void t_readdir(void)
{
	struct coll c;
	char n[32];
	u64 d, x;
	int i, bad = 0;

	CHECK_EQ(md(ROOT, "rd", &d), 0);
	for (i = 0; i < 300; i++) {
		snprintf(n, sizeof(n), "e%d", i);
		CHECK_EQ(mk(d, n, &x), 0);
	}
	list(d, &c, 0);
	CHECK_EQ(c.n, 302);
	CHECK(!strcmp(c.names[0], ".") && c.inos[0] == d);
	CHECK(!strcmp(c.names[1], "..") && c.inos[1] == ROOT);
	for (i = 0; i < 300; i++) {
		snprintf(n, sizeof(n), "e%d", i);
		bad += count_name(&c, n) != 1;
	}
	CHECK_EQ(bad, 0);
	list(d, &c, 1);		/* one entry per call */
	CHECK_EQ(c.n, 302);
	for (i = 0; i < 300; i++) {
		snprintf(n, sizeof(n), "e%d", i);
		bad += count_name(&c, n) != 1;
		CHECK_EQ(daxfs_unlink(&fs, d, n, strlen(n)), 0);
	}
	CHECK_EQ(bad, 0);
	list(d, &c, 0);
	CHECK_EQ(c.n, 2);
	CHECK_EQ(mk(d, "plain", &x), 0);
	CHECK_EQ(daxfs_readdir(&fs, x, &(u64){0}, fill, &c), -ENOTDIR);
	CHECK_EQ(daxfs_unlink(&fs, d, "plain", 5), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "rd", 2), 0);
}

static void t_space_reuse(void)
{
	char n[32];
	u64 x, before, after;
	int i, round;

	before = t_used(&fs);
	for (round = 0; round < 5; round++) {
		for (i = 0; i < 500; i++) {
			snprintf(n, sizeof(n), "tmp%d", i);
			mk(ROOT, n, &x);
		}
		for (i = 0; i < 500; i++) {
			snprintf(n, sizeof(n), "tmp%d", i);
			daxfs_unlink(&fs, ROOT, n, strlen(n));
		}
	}
	for (i = 0; i < 300; i++) {
		struct daxfs_op op;

		daxfs_op_begin(&fs, &op);
		daxfs_reclaim(&op);
		daxfs_op_end(&op);
	}
	after = t_used(&fs);
	/* trie nodes stay; records and leaves come back */
	CHECK(after < before + 64 * 1024);
	printf("  used before %llu after %llu\n", (unsigned long long)before,
	       (unsigned long long)after);
}

/* daxfs_name_check reads names a word at a time: a NUL or '/' at any
 * place of any length is refused, and nothing else is. */
static void t_name_check(void)
{
	char n[DAXFS_NAME_MAX + 8];
	int bad = 0;
	u32 len, i;

	for (len = 1; len <= 40; len++) {
		memset(n, 'a', sizeof(n));
		/* the bytes after the name are never read */
		n[len] = '/';
		n[len + 1] = 0;
		bad += daxfs_name_check(n, len) != 0;
		for (i = 0; i < len; i++) {
			n[i] = '/';
			bad += daxfs_name_check(n, len) != -EINVAL;
			n[i] = 0;
			bad += daxfs_name_check(n, len) != -EINVAL;
			n[i] = (char)0xaf;	/* '/' | 0x80 */
			bad += daxfs_name_check(n, len) != 0;
			n[i] = 'a';
		}
	}
	memset(n, 0xff, sizeof(n));
	bad += daxfs_name_check(n, DAXFS_NAME_MAX) != 0;
	bad += daxfs_name_check(n, DAXFS_NAME_MAX + 1) != -ENAMETOOLONG;
	bad += daxfs_name_check(n, 0) != -EINVAL;
	bad += daxfs_name_check("..", 2) != -EINVAL;
	bad += daxfs_name_check(".", 1) != -EINVAL;
	bad += daxfs_name_check("...", 3) != 0;
	CHECK_EQ(bad, 0);
}

int main(void)
{
	t_setup(&fs, 64 * MiB, NULL);
	RUN(t_name_check);
	RUN(t_create_lookup);
	RUN(t_mknod_types);
	RUN(t_dirs);
	RUN(t_symlink);
	RUN(t_link);
	RUN(t_link_name);
	RUN(t_unlink_instant);
	RUN(t_setattr);
	RUN(t_rename);
	RUN(t_readdir);
	RUN(t_space_reuse);
	return t_done();
}
