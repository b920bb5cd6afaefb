// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Peeks (daxfs_attr_peek, docs/kernel.md "Peeks"): a look at an inode's
 * record with no core op, through a front end's cache of it.  Host A
 * peeks while host B changes the file, removes it, reuses its record,
 * garbles the record or its bucket, and while A itself is declared dead
 * or shut down.  A peek must give what a getattr gives at that moment, or
 * -EAGAIN; never another record's values.
 *
 * And the directory change counter the kernel trusts a name by: every
 * change of a directory's entries, made by any host, moves it, and the
 * counter a lookup gives (daxfs_lookup_attr_fc's dir_change) is loaded
 * before the name, so the answer it came with stands while it does.
 * A raise that nobody will settle (a fenced host's late add) is healed by
 * a host that keeps seeing it, never while a live op's intent names it.
 */
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tfile.h"
#include "core/ns-intent.h"
#include "core/openset.h"
#include "lib/ntcopy.h"

#define REGION	(32 * MiB)
#define ROOT	1

static struct daxfs_fs fa, fb;
static void *region;

/* A's cache of ino's record, filled by a getattr through it */
static struct daxfs_fcache cached(u64 ino)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;

	CHECK_EQ(daxfs_getattr_fc(&fa, ino, &fc, &a), 0);
	CHECK(fc.rec != 0);
	return fc;
}

/* The peek agrees with a getattr made right after it. */
static void peek_is_getattr(u64 ino, const struct daxfs_fcache *fc)
{
	struct daxfs_peek pk;
	struct daxfs_attr a;

	CHECK_EQ(daxfs_attr_peek(&fa, ino, fc, &pk), 0);
	CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
	CHECK_EQ(pk.change, a.change);
	CHECK_EQ(pk.size, a.size);
	CHECK_EQ(pk.nlink, a.nlink);
	CHECK_EQ(pk.mode, a.mode);
}

static u64 peek_change(u64 ino, const struct daxfs_fcache *fc)
{
	struct daxfs_peek pk;

	CHECK_EQ(daxfs_attr_peek(&fa, ino, fc, &pk), 0);
	return pk.change;
}

static void test_follows_other_host(void)
{
	struct daxfs_fcache fc, none = { 0 };
	struct daxfs_peek pk;
	struct daxfs_attr set = { 0 };
	u64 ino = t_mkreg(&fb, ROOT, "pf"), c, other;

	CHECK_EQ(daxfs_attr_peek(&fa, ino, &none, &pk), -EAGAIN);
	fc = cached(ino);
	peek_is_getattr(ino, &fc);
	c = peek_change(ino, &fc);
	CHECK_EQ(t_pwrite(&fb, ino, "hello", 5, 0), 5);
	peek_is_getattr(ino, &fc);
	CHECK(peek_change(ino, &fc) > c);
	c = peek_change(ino, &fc);
	set.mode = 0600;
	CHECK_EQ(daxfs_setattr(&fb, ino, DAXFS_ATTR_MODE, &set), 0);
	peek_is_getattr(ino, &fc);
	CHECK(peek_change(ino, &fc) > c);
	CHECK_EQ(daxfs_link(&fb, ino, ROOT, "pf2", 3), 0);
	peek_is_getattr(ino, &fc);
	CHECK_EQ(daxfs_truncate(&fb, ino, 2), 0);
	peek_is_getattr(ino, &fc);
	/* a directory's size is its entry count */
	CHECK_EQ(daxfs_mkdir(&fb, ROOT, "pd", 2, 0755, 0, 0, &other), 0);
	fc = cached(other);
	peek_is_getattr(other, &fc);
	t_mkreg(&fb, other, "x");
	peek_is_getattr(other, &fc);
	CHECK_EQ(daxfs_attr_peek(&fa, other, &fc, &pk), 0);
	CHECK_EQ(pk.size, 1);
	/* a cache names one inode's record: never another's values */
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
}

/* Removed, and its record reused: -EAGAIN, never the new file's values. */
static void test_removed_and_reused(void)
{
	struct daxfs_fcache fc;
	struct daxfs_peek pk;
	u64 ino = t_mkreg(&fb, ROOT, "gone"), rec;
	int i;

	fc = cached(ino);
	rec = fc.rec;
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "gone", 4), 0);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	for (i = 0; i < 64; i++) {
		char n[16];

		snprintf(n, sizeof(n), "re%d", i);
		t_mkreg(&fb, ROOT, n);
	}
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	fc.rec = rec;		/* a cache that names the reused memory */
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
}

/* What a peer may write into the record or its bucket. */
static void test_garbled(void)
{
	struct daxfs_fcache fc, bad;
	struct daxfs_inode *ip;
	struct daxfs_bucket *b;
	struct daxfs_peek pk;
	u64 ino = t_mkreg(&fb, ROOT, "gb"), y = t_mkreg(&fb, ROOT, "gy"), v;
	u32 m;

	fc = cached(ino);
	ip = t_ip(&fb, ino);
	m = daxfs_load32(&ip->magic);
	daxfs_store32(&ip->magic, m ^ 0x5a5a);
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	daxfs_store32(&ip->magic, m);
	daxfs_store(&ip->ino, y);
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	daxfs_store(&ip->ino, ino);
	peek_is_getattr(ino, &fc);

	b = &fb.buckets[fc.bucket];
	v = daxfs_load(&b->value);
	daxfs_store(&b->value, v + 3);
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	daxfs_store(&b->value, 0);
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &fc, &pk), -EAGAIN);
	daxfs_store(&b->value, v);
	peek_is_getattr(ino, &fc);

	/* the caller's words: garbage, out of range */
	bad = (struct daxfs_fcache){ .rec = 0xdeadbeef000ULL, .bucket = ~0ULL >> 3 };
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &bad, &pk), -EAGAIN);
	bad = (struct daxfs_fcache){ .rec = fc.rec, .bucket = fa.nr_buckets };
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &bad, &pk), -EAGAIN);
	bad = (struct daxfs_fcache){ .rec = ~0ULL & ~7ULL, .bucket = fc.bucket };
	CHECK_EQ(daxfs_attr_peek(&fa, ino, &bad, &pk), -EAGAIN);
}

/* A host declared dead or shut down answers no peek, as it starts no op. */
static void test_fenced_and_shut(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;
	struct daxfs_peek pk;
	struct daxfs_fs fd;
	u64 ino;

	CHECK_EQ(t_join(&fd, region, REGION), 0);
	ino = t_mkreg(&fd, ROOT, "fen");
	CHECK_EQ(daxfs_getattr_fc(&fd, ino, &fc, &a), 0);
	CHECK_EQ(daxfs_attr_peek(&fd, ino, &fc, &pk), 0);
	fd.shut = 1;
	CHECK_EQ(daxfs_attr_peek(&fd, ino, &fc, &pk), -EAGAIN);
	fd.shut = 0;
	CHECK_EQ(daxfs_attr_peek(&fd, ino, &fc, &pk), 0);
	t_age(&fd, fd.host);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	CHECK_EQ(daxfs_getattr(&fd, ino, &a), -ESTALE);
	CHECK_EQ(daxfs_attr_peek(&fd, ino, &fc, &pk), -EAGAIN);
}

/* ---- the directory change counter ---- */

/* dir's change counter as a lookup in it gives it (name may be absent) */
static u64 dir_seen(u64 dir, const char *name)
{
	u64 ino, seen = 0;
	int err = daxfs_lookup_attr_fc(&fa, dir, name, strlen(name), &ino, 0,
				       NULL, NULL, &seen);

	CHECK(err == 0 || err == -ENOENT);
	CHECK(seen != 0);
	return seen;
}

static u64 mkdir_b(u64 dir, const char *n)
{
	u64 ino;

	CHECK_EQ(daxfs_mkdir(&fb, dir, n, strlen(n), 0755, 0, 0, &ino), 0);
	return ino;
}

/* Each kind of entry change by host B moves the counters of the
 * directories whose entries it changed. */
static void test_every_entry_change_moves_it(void)
{
	u64 d = mkdir_b(ROOT, "ec"), e = mkdir_b(ROOT, "ed"), f, g, c, ce, x;

	c = dir_seen(d, "f");
	f = t_mkreg(&fb, d, "f");
	CHECK(dir_seen(d, "f") > c);
	c = dir_seen(d, "sub");
	mkdir_b(d, "sub");
	CHECK(dir_seen(d, "sub") > c);
	c = dir_seen(d, "l");
	CHECK_EQ(daxfs_symlink(&fb, d, "l", 1, "f", 1, 0, 0, &x), 0);
	CHECK(dir_seen(d, "l") > c);
	c = dir_seen(d, "h");
	CHECK_EQ(daxfs_link(&fb, f, d, "h", 1), 0);
	CHECK(dir_seen(d, "h") > c);
	c = dir_seen(d, "h");
	CHECK_EQ(daxfs_unlink(&fb, d, "h", 1), 0);
	CHECK(dir_seen(d, "h") > c);
	c = dir_seen(d, "sub");
	CHECK_EQ(daxfs_rmdir(&fb, d, "sub", 3), 0);
	CHECK(dir_seen(d, "sub") > c);
	c = dir_seen(d, "f");
	CHECK_EQ(daxfs_rename(&fb, d, "f", 1, d, "f1", 2, 0), 0);
	CHECK(dir_seen(d, "f") > c);
	c = dir_seen(d, "f1");
	ce = dir_seen(e, "f");
	CHECK_EQ(daxfs_rename(&fb, d, "f1", 2, e, "f", 1, 0), 0);
	CHECK(dir_seen(d, "f1") > c);
	CHECK(dir_seen(e, "f") > ce);
	/* over an existing name, and exchanged */
	g = t_mkreg(&fb, d, "g");
	c = dir_seen(d, "g");
	ce = dir_seen(e, "f");
	CHECK_EQ(daxfs_rename(&fb, e, "f", 1, d, "g", 1, 0), 0);
	CHECK(dir_seen(d, "g") > c);
	CHECK(dir_seen(e, "f") > ce);
	g = t_mkreg(&fb, e, "g2");
	c = dir_seen(d, "g");
	ce = dir_seen(e, "g2");
	CHECK_EQ(daxfs_rename(&fb, d, "g", 1, e, "g2", 2,
			      DAXFS_RENAME_EXCHANGE), 0);
	CHECK(dir_seen(d, "g") > c);
	CHECK(dir_seen(e, "g2") > ce);
	CHECK_EQ(daxfs_lookup(&fa, d, "g", 1, &x), 0);
	CHECK_EQ(x, g);
}

/* The counter comes from before the name: a lookup that raced an entry
 * change got a counter the change moved past, whatever it found. */
static void test_counter_before_name(void)
{
	u64 d = mkdir_b(ROOT, "cb"), c;
	struct daxfs_peek pk;
	struct daxfs_fcache fc = cached(d);

	c = dir_seen(d, "n");
	CHECK_EQ(daxfs_attr_peek(&fa, d, &fc, &pk), 0);
	CHECK_EQ(pk.change, c);		/* nothing changed: the same */
	t_mkreg(&fb, d, "n");
	CHECK_EQ(daxfs_attr_peek(&fa, d, &fc, &pk), 0);
	CHECK(pk.change > c);
	CHECK_EQ(dir_seen(d, "n"), pk.change);
}

/* the counter that vouches for name -> ino in dir (ino's, loaded before
 * the name), as daxfs.ko revalidates a positive dentry */
static u64 child_seen(u64 dir, const char *name, u64 ino)
{
	struct daxfs_fcache fc = { 0 };
	u64 found, seen = 0;

	CHECK_EQ(daxfs_lookup_attr_fc(&fa, dir, name, strlen(name), &found,
				      ino, &fc, NULL, &seen), 0);
	CHECK_EQ(found, ino);
	CHECK(seen != 0);
	return seen;
}

static u64 change_in(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a;

	CHECK_EQ(daxfs_getattr(fs, ino, &a), 0);
	return a.change;
}

static u64 change_of(u64 ino)
{
	return change_in(&fa, ino);
}

/* ino's counter moved past c, or ino is gone (its last name went) */
static bool moved_or_gone(u64 ino, u64 c)
{
	struct daxfs_attr a;
	int err = daxfs_getattr(&fa, ino, &a);

	return err == -ENOENT || (!err && a.change > c);
}

/* Each way host B takes a name away from an inode moves the inode's
 * counter: unlink (of another link too), rename, rename over it,
 * exchange, for files and directories. */
static void test_every_name_removal_moves_inode(void)
{
	u64 d = mkdir_b(ROOT, "nr"), f = t_mkreg(&fb, d, "f");
	u64 g = t_mkreg(&fb, d, "g"), sub = mkdir_b(d, "sub"), c;

	c = child_seen(d, "f", f);
	CHECK_EQ(c, change_of(f));
	CHECK_EQ(daxfs_rename(&fb, d, "f", 1, d, "f2", 2, 0), 0);
	CHECK(change_of(f) > c);
	c = child_seen(d, "f2", f);
	CHECK_EQ(daxfs_link(&fb, f, d, "fl", 2), 0);
	c = child_seen(d, "f2", f);
	CHECK_EQ(daxfs_unlink(&fb, d, "fl", 2), 0);
	CHECK(change_of(f) > c);
	c = child_seen(d, "g", g);
	CHECK_EQ(daxfs_rename(&fb, d, "f2", 2, d, "g", 1,
			      DAXFS_RENAME_EXCHANGE), 0);
	CHECK(change_of(g) > c);
	c = child_seen(d, "f2", g);
	/* f (named g now) over g (named f2): g loses its only name */
	CHECK_EQ(daxfs_rename(&fb, d, "g", 1, d, "f2", 2, 0), 0);
	CHECK(moved_or_gone(g, c));
	c = child_seen(d, "sub", sub);
	CHECK_EQ(daxfs_rename(&fb, d, "sub", 3, ROOT, "nrsub", 5, 0), 0);
	CHECK(change_of(sub) > c);
	c = child_seen(d, "f2", f);
	CHECK_EQ(daxfs_unlink(&fb, d, "f2", 2), 0);
	CHECK(moved_or_gone(f, c));
}

/* A create's own name: the counter link_created gives is the file's after
 * it, and any removal of the name by another host moves past it. */
static void test_created_name_vouched(void)
{
	u64 d = mkdir_b(ROOT, "cr"), ino, x;
	struct daxfs_linked ln;
	struct daxfs_attr a;

	CHECK_EQ(daxfs_tmpfile(&fa, d, DAXFS_S_IFREG | 0644, 0, 0, &ino), 0);
	CHECK_EQ(daxfs_link_created(&fa, ino, d, "n", 1, &ln), 0);
	CHECK_EQ(change_of(ino), ln.vouch);
	CHECK_EQ(child_seen(d, "n", ino), ln.vouch);
	/* the attributes are what a getattr right after gives */
	CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
	CHECK(!memcmp(&a, &ln.inode, sizeof(a)));
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	/* the directory moved by the link's one touch alone */
	CHECK_EQ(ln.dir.change, ln.dir_pre + 1);
	CHECK_EQ(daxfs_rename(&fb, d, "n", 1, d, "m", 1, 0), 0);
	CHECK(change_of(ino) > ln.vouch);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	/* a failed link gives none */
	CHECK_EQ(daxfs_tmpfile(&fa, d, DAXFS_S_IFREG | 0644, 0, 0, &x), 0);
	CHECK_EQ(daxfs_link_created(&fa, x, d, "m", 1, &ln), -EEXIST);
	CHECK_EQ(ln.vouch, 0);
	CHECK_EQ(ln.inode.ino, 0);
	CHECK_EQ(daxfs_open_put(&fa, x), 0);
}

/* The same for a directory, a symlink and a device made in one call
 * (daxfs_make_node): what it gives stands for the name until another host
 * takes the name away; a call that fails gives none. */
static void test_made_node_vouched(void)
{
	const struct daxfs_node nodes[] = {
		{ .mode = DAXFS_S_IFDIR | 0755 },
		{ .mode = DAXFS_S_IFLNK, .target = "t", .tlen = 1 },
		{ .mode = DAXFS_S_IFCHR | 0600, .rdev = 0x0103 },
		{ .mode = DAXFS_S_IFIFO | 0600 },
	};
	u64 d = mkdir_b(ROOT, "mn"), ino, x;
	struct daxfs_linked ln;
	struct daxfs_attr a;
	char name[8];
	u32 i;

	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(name, sizeof(name), "n%u", i);
		CHECK_EQ(daxfs_make_node(&fa, d, name, strlen(name), &nodes[i],
					 &ino, &ln), 0);
		CHECK_EQ(change_of(ino), ln.vouch);
		CHECK_EQ(child_seen(d, name, ino), ln.vouch);
		CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
		CHECK(!memcmp(&a, &ln.inode, sizeof(a)));
		CHECK_EQ(a.mode & DAXFS_S_IFMT, nodes[i].mode & DAXFS_S_IFMT);
		CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
		CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
		CHECK_EQ(ln.dir.change, ln.dir_pre + 1);
		/* another host takes the name: the counter moves past it */
		if (i == 0)
			CHECK_EQ(daxfs_rmdir(&fb, d, name, strlen(name)), 0);
		else
			CHECK_EQ(daxfs_unlink(&fb, d, name, strlen(name)), 0);
		CHECK(moved_or_gone(ino, ln.vouch));
	}
	/* a name taken, a symlink with no target: none */
	CHECK_EQ(daxfs_make_node(&fa, d, "x", 1, &nodes[0], &x, &ln), 0);
	CHECK_EQ(daxfs_make_node(&fa, d, "x", 1, &nodes[3], &ino, &ln),
		 -EEXIST);
	CHECK_EQ(ino, x);
	CHECK_EQ(ln.vouch, 0);
	CHECK_EQ(ln.inode.ino, 0);
	ln.vouch = 1;
	CHECK_EQ(daxfs_make_node(&fa, d, "y", 1, &(struct daxfs_node){
		.mode = DAXFS_S_IFLNK }, &ino, &ln), -ENOENT);
	CHECK_EQ(ln.vouch, 0);
}

/* What an unlink and a nameless create load in their ops is what a
 * getattr right after gives: the directory's, the inode's while it has
 * links left (none once the last went), the new file's. */
static void test_unlink_and_tmpfile_attrs(void)
{
	u64 d = mkdir_b(ROOT, "ua"), f = t_mkreg(&fb, d, "f"), x;
	struct daxfs_linked ln;
	struct daxfs_attr a, t;

	CHECK_EQ(daxfs_link(&fb, f, d, "g", 1), 0);
	CHECK_EQ(daxfs_unlink_attr(&fa, d, "f", 1, &ln), 0);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK(!memcmp(&a, &ln.inode, sizeof(a)));
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	CHECK_EQ(ln.dir.change, ln.dir_pre + 1);
	CHECK_EQ(ln.vouch, 0);
	CHECK(!ln.gone);
	/* the last link: the inode is gone, the directory's are given */
	CHECK_EQ(daxfs_unlink_attr(&fa, d, "g", 1, &ln), 0);
	CHECK_EQ(ln.inode.ino, 0);
	CHECK(ln.gone);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), -ENOENT);
	/* the last link of a file another host holds open: not gone, an
	 * orphan until that host's close frees it */
	f = t_mkreg(&fb, d, "h");
	CHECK_EQ(daxfs_open_get(&fb, f), 0);
	CHECK_EQ(daxfs_unlink_attr(&fa, d, "h", 1, &ln), 0);
	CHECK(!ln.gone);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fb, f), 0);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	/* no such name: nothing */
	ln.dir.ino = 1;
	CHECK_EQ(daxfs_unlink_attr(&fa, d, "g", 1, &ln), -ENOENT);
	CHECK_EQ(ln.dir.ino, 0);
	/* a nameless file: its attributes as made */
	CHECK_EQ(daxfs_tmpfile_attr(&fa, d, 0640, 7, 8, &x, &t), 0);
	CHECK_EQ(t.ino, x);
	CHECK_EQ(daxfs_getattr(&fa, x, &a), 0);
	CHECK(!memcmp(&a, &t, sizeof(a)));
	CHECK_EQ(t.nlink, 0);
	CHECK_EQ(t.mode, DAXFS_S_IFREG | 0640);
	CHECK_EQ(daxfs_open_put(&fa, x), 0);
	/* a directory that is gone: none */
	t.ino = 1;
	CHECK_EQ(daxfs_tmpfile_attr(&fa, 999999, 0640, 0, 0, &x, &t), -ENOENT);
	CHECK_EQ(t.ino, 0);
}

/*
 * daxfs_create_held (daxfs.ko's create: the nameless file and its name in
 * one op) gives what daxfs_link_created gives, the link's vouch and the
 * attributes after it (the file's owners and mode as made), the file
 * named and held by our set.  A naming that fails leaves the file made
 * and held (ino set, no attributes): our close frees it.  No file at all
 * when the directory is gone.
 */
static void test_create_held(void)
{
	u64 d = mkdir_b(ROOT, "ch"), ino, x, used;
	struct daxfs_linked ln;
	struct daxfs_attr a, t;

	CHECK_EQ(daxfs_create_held(&fa, d, NULL, 0640, 7, 8, "n", 1, &ino, &ln),
		 0);
	CHECK(ino);
	t = ln.inode;
	CHECK_EQ(t.ino, ino);
	CHECK_EQ(t.nlink, 1);
	CHECK_EQ(t.mode, DAXFS_S_IFREG | 0640);
	CHECK_EQ(t.uid, 7);
	CHECK_EQ(t.gid, 8);
	CHECK_EQ(t.size, 0);
	CHECK_EQ(child_seen(d, "n", ino), ln.vouch);
	CHECK_EQ(change_of(ino), ln.vouch);
	CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
	CHECK(!memcmp(&a, &ln.inode, sizeof(a)));
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(a.mtime_ns, a.ctime_ns);
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	CHECK_EQ(ln.dir.change, ln.dir_pre + 1);
	CHECK_EQ(a.mtime_ns, ln.inode.mtime_ns);	/* one instant */
	/* held: another host's unlink leaves it to our close */
	CHECK(daxfs_open_held_here(&fa, ino));
	CHECK_EQ(daxfs_unlink(&fb, d, "n", 1), 0);
	CHECK_EQ(daxfs_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(daxfs_getattr(&fb, ino, &a), -ENOENT);
	/* a name taken: made, held, not named, freed at our close */
	t_mkreg(&fb, d, "m");
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
	used = t_used(&fa);
	ln.vouch = 1;
	CHECK_EQ(daxfs_create_held(&fa, d, NULL, 0600, 0, 0, "m", 1, &x, &ln),
		 -EEXIST);
	CHECK(x);
	CHECK_EQ(ln.vouch, 0);
	CHECK_EQ(ln.inode.ino, 0);
	CHECK(daxfs_open_held_here(&fa, x));
	CHECK_EQ(daxfs_getattr(&fa, x, &a), 0);
	CHECK_EQ(a.nlink, 0);
	/* named by a second try, as daxfs.ko's retry does */
	CHECK_EQ(daxfs_link_created(&fa, x, d, "o", 1, &ln), 0);
	CHECK_EQ(child_seen(d, "o", x), ln.vouch);
	CHECK_EQ(daxfs_unlink(&fa, d, "o", 1), 0);
	CHECK_EQ(daxfs_open_put(&fa, x), 0);
	CHECK_EQ(daxfs_getattr(&fa, x, &a), -ENOENT);
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
	CHECK_EQ(t_used(&fa), used);
	/* no directory, no file; a bad name, none either */
	x = 1;
	CHECK_EQ(daxfs_create_held(&fa, 999999, NULL, 0600, 0, 0, "p", 1, &x,
				   &ln), -ENOENT);
	CHECK_EQ(x, 0);
	CHECK_EQ(ln.inode.ino, 0);
	x = 1;
	CHECK_EQ(daxfs_create_held(&fa, d, NULL, 0600, 0, 0, "a/b", 3, &x, &ln),
		 -EINVAL);
	CHECK_EQ(x, 0);
	CHECK_EQ(daxfs_create_held(&fa, t_mkreg(&fb, d, "q"), NULL, 0600,
				   0, 0, "p", 1, &x, &ln), -ENOTDIR);
	CHECK_EQ(x, 0);
}

/*
 * daxfs_unlink_fc (daxfs.ko's unlink): the directory's record and the
 * victim's through the caches the front end keeps.  A cache is a hint:
 * one of another directory, of a file the name no longer names, or of a
 * record that went, changes nothing of what the unlink does.
 */
static void test_unlink_through_caches(void)
{
	u64 d = mkdir_b(ROOT, "uf"), e = mkdir_b(ROOT, "ug"), f, g, h, x;
	struct daxfs_fcache dfc = { 0 }, efc = { 0 }, ffc = { 0 }, gfc = { 0 };
	struct daxfs_linked ln;
	struct daxfs_attr a;

	f = t_mkreg(&fb, d, "f");
	g = t_mkreg(&fb, d, "g");
	h = t_mkreg(&fb, e, "f");
	CHECK_EQ(daxfs_getattr_fc(&fa, d, &dfc, &a), 0);
	CHECK_EQ(daxfs_getattr_fc(&fa, e, &efc, &a), 0);
	CHECK_EQ(daxfs_getattr_fc(&fa, f, &ffc, &a), 0);
	CHECK_EQ(daxfs_getattr_fc(&fa, g, &gfc, &a), 0);
	/* current caches: what daxfs_unlink_attr gives */
	CHECK_EQ(daxfs_link(&fb, g, d, "g2", 2), 0);
	CHECK_EQ(daxfs_unlink_fc(&fa, d, &dfc, "g", 1, g, &gfc, &ln), 0);
	CHECK_EQ(daxfs_getattr(&fa, g, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK(!memcmp(&a, &ln.inode, sizeof(a)));
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	CHECK_EQ(ln.dir.change, ln.dir_pre + 1);
	/* another directory's cache: the directory named loses the name */
	CHECK_EQ(daxfs_unlink_fc(&fa, e, &dfc, "f", 1, f, &ffc, &ln), 0);
	CHECK(ln.gone);
	CHECK_EQ(daxfs_getattr(&fa, h, &a), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), 0);
	CHECK_EQ(daxfs_lookup(&fa, d, "f", 1, &x), 0);
	CHECK_EQ(x, f);
	CHECK_EQ(daxfs_getattr(&fa, e, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	/* the name given to another file since (g renamed over f, which
	 * went): that file loses it, through a cache of a record gone */
	CHECK_EQ(daxfs_rename(&fb, d, "g2", 2, d, "f", 1, 0), 0);
	CHECK_EQ(daxfs_getattr(&fa, f, &a), -ENOENT);
	CHECK_EQ(daxfs_unlink_fc(&fa, d, &dfc, "f", 1, f, &ffc, &ln), 0);
	CHECK(ln.gone);
	CHECK_EQ(ln.inode.ino, 0);
	CHECK_EQ(daxfs_getattr(&fa, g, &a), -ENOENT);
	CHECK_EQ(daxfs_lookup(&fa, d, "f", 1, &x), -ENOENT);
	/* a directory that went, through its own cache: none */
	CHECK_EQ(daxfs_rmdir(&fb, ROOT, "ug", 2), 0);
	CHECK_EQ(daxfs_unlink_fc(&fa, e, &efc, "f", 1, 0, NULL, &ln),
		 -ENOENT);
	/* and a create through a cache of another directory makes its file
	 * in the directory named */
	CHECK_EQ(daxfs_create_held(&fa, d, &efc, 0600, 0, 0, "n", 1, &x, &ln),
		 0);
	CHECK_EQ(daxfs_lookup(&fa, d, "n", 1, &f), 0);
	CHECK_EQ(f, x);
	CHECK_EQ(daxfs_getattr(&fa, d, &a), 0);
	CHECK(!memcmp(&a, &ln.dir, sizeof(a)));
	CHECK_EQ(daxfs_unlink_fc(&fa, d, &efc, "n", 1, x, NULL, NULL), 0);
	CHECK_EQ(daxfs_open_put(&fa, x), 0);
	CHECK_EQ(daxfs_getattr(&fa, x, &a), -ENOENT);
}

/* ---- racing the churn ---- */

#define RACE_SECS	1.5
#define RACE_PEEKERS	2

struct shared {
	u64 cur, stop, peeks, hits, bad, bad_ino, bad_size, bad_mode;
};

/* the size the churn gives regular file ino */
static u64 want(u64 ino)
{
	return (ino * 2654435761ULL) % 100000 + 1;
}

/*
 * Peeks at the current file through its own cache while the churn
 * removes it and reuses its record for other files and directories:
 * a hit must be the file's own values (a new file is empty until its
 * truncate), never those of whatever took the record.
 */
static void peeker(void *arg)
{
	struct shared *s = arg;
	struct daxfs_fcache fc = { 0 };
	struct daxfs_peek pk;
	struct daxfs_attr a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 have = 0;

	/* peeks take no op, so they never renew */
	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		u64 ino = daxfs_load(&s->cur);

		if (!ino)
			continue;
		if (ino != have) {
			fc = (struct daxfs_fcache){ .rec = 0 };
			if (daxfs_getattr_fc(&fs, ino, &fc, &a))
				continue;
			have = ino;
		}
		daxfs_faa(&s->peeks, 1);
		if (daxfs_attr_peek(&fs, ino, &fc, &pk))
			continue;
		daxfs_faa(&s->hits, 1);
		if ((pk.mode & S_IFMT) != S_IFREG || pk.nlink > 1 ||
		    (pk.size && pk.size != want(ino))) {
			if (!daxfs_faa(&s->bad, 1)) {
				s->bad_ino = ino;
				s->bad_size = pk.size;
				s->bad_mode = pk.mode;
			}
		}
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* B's churn: a file sized want(ino), then gone, its record reused by
 * files and directories of other sizes. */
static void churn(void *arg)
{
	struct shared *s = arg;
	double end = t_now() + RACE_SECS;
	u64 ino, d, round = 0;

	while (t_now() < end) {
		ino = t_mkreg(&fb, ROOT, "race");
		CHECK_EQ(daxfs_truncate(&fb, ino, want(ino)), 0);
		daxfs_store(&s->cur, ino);
		sched_yield();
		CHECK_EQ(daxfs_unlink(&fb, ROOT, "race", 4), 0);
		if (round++ % 2)
			CHECK_EQ(daxfs_mkdir(&fb, ROOT, "rd", 2, 0755, 0, 0,
					     &d), 0);
		daxfs_reclaim_all(&fb);
		if (round % 2 == 0)
			CHECK_EQ(daxfs_rmdir(&fb, ROOT, "rd", 2), 0);
	}
	daxfs_store(&s->stop, 1);
	printf("  race: %llu rounds\n", (unsigned long long)round);
}

static void test_race_reuse(void)
{
	struct shared *s = t_race(RACE_PEEKERS, sizeof(*s), peeker,
				  churn);

	printf("  race: %llu peeks, %llu hits\n", (unsigned long long)s->peeks,
	       (unsigned long long)s->hits);
	if (s->bad)
		printf("  race: file %llu peeked as mode %#llo size %llu\n",
		       (unsigned long long)s->bad_ino,
		       (unsigned long long)s->bad_mode,
		       (unsigned long long)s->bad_size);
	CHECK_EQ(s->bad, 0);
	CHECK(s->hits > 0);
	munmap(s, sizeof(*s));
}

/* ---- a made node's vouch racing its name's removal ---- */

struct vshared {
	u64 moved, renamed, stop, rounds, bad;
};

/* the race's directory: set before the fork */
static u64 vdir;

/* B: whatever name "v" names is taken away at once, renamed to "w" or
 * unlinked, and said so once the call returned (the inode's
 * counter moved) */
static void remover(void *arg)
{
	struct vshared *s = arg;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 ino, n = 0;
	bool rename;

	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		if (daxfs_lookup(&fs, vdir, "v", 1, &ino))
			continue;
		/* A's kinds alternate too: each meets both removals */
		rename = n++ / 2 % 2;
		if (rename ? daxfs_rename(&fs, vdir, "v", 1, vdir, "w", 1, 0) :
			     daxfs_unlink(&fs, vdir, "v", 1))
			continue;
		daxfs_store(&s->renamed, rename);
		daxfs_store(&s->moved, ino);
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/*
 * A: makes "v" and, once B took the name, checks that the vouch it got
 * no longer stands.  A vouch loaded after the name was published (and B's
 * removal landed in between) would stand for a name that is gone.  A
 * regular file is held open until then, so that it outlives its name.
 */
static void maker(void *arg)
{
	const struct daxfs_node fifo = { .mode = DAXFS_S_IFIFO | 0600 };
	struct vshared *s = arg;
	double end = t_now() + RACE_SECS;
	struct daxfs_linked ln;
	bool held;
	u64 ino;

	while (t_now() < end) {
		/* a node made in one call, or a file made nameless and then
		 * named (daxfs_link_created), in turn */
		held = s->rounds % 2;
		if (held) {
			CHECK_EQ(daxfs_tmpfile(&fa, vdir, DAXFS_S_IFREG | 0644, 0,
					       0, &ino), 0);
			CHECK_EQ(daxfs_link_created(&fa, ino, vdir, "v", 1,
						    &ln), 0);
		} else {
			CHECK_EQ(daxfs_make_node(&fa, vdir, "v", 1, &fifo, &ino,
						 &ln), 0);
		}
		while (daxfs_load(&s->moved) != ino && t_now() < end + 10)
			;
		if (daxfs_load(&s->moved) != ino) {
			CHECK(!"the remover took the name in time");
			break;
		}
		if (!moved_or_gone(ino, ln.vouch))
			s->bad++;
		if (daxfs_load(&s->renamed))
			CHECK_EQ(daxfs_unlink(&fa, vdir, "w", 1), 0);
		if (held)
			CHECK_EQ(daxfs_open_put(&fa, ino), 0);
		daxfs_store(&s->moved, 0);
		s->rounds++;
	}
	daxfs_store(&s->stop, 1);
}

static void test_race_made_vouch(void)
{
	u64 d = mkdir_b(ROOT, "vr");
	struct vshared *s;

	vdir = d;
	s = t_race(1, sizeof(*s), remover, maker);
	printf("  vouch race: %llu rounds, %llu vouches that stood\n",
	       (unsigned long long)s->rounds, (unsigned long long)s->bad);
	CHECK_EQ(s->bad, 0);
	CHECK(s->rounds > 0);
	munmap(s, sizeof(*s));
}

/* ---- raises nobody settles: healed online (core/flight.c) ---- */

/*
 * Host B raises d's counter in an op of its own, as an op does after its
 * intent names d; with intent set, the intent names d as a create's.  The
 * op is returned open: the caller ends it (settling or not).
 */
static struct daxfs_inode *raise_as(struct daxfs_fs *fs, struct daxfs_op *op,
				    u64 d, bool intent)
{
	struct daxfs_intent *in;
	struct daxfs_iref ref;

	CHECK_EQ(daxfs_op_begin(fs, op), 0);
	CHECK(op->lane != NULL);
	CHECK_EQ(daxfs_inode_get(op, d, &ref), 0);
	CHECK(ref.ip != NULL);
	if (intent) {
		in = &op->lane->intent;
		daxfs_store(&in->a[0], d);
		daxfs_store(&in->a[6], NS_META(NS_KIND_CREATE, 1, 0));
		daxfs_store(&in->op, DAXFS_INTENT_RENAME);
	}
	daxfs_change_raise(op, ref.ip);
	return ref.ip;
}

static void end_intent(struct daxfs_op *op)
{
	daxfs_store(&op->lane->intent.op, 0);
	daxfs_op_end(op);
}

/* A raise left behind (a zombie's add after its recovery): host A, which
 * keeps seeing it, is told to heal it after DAXFS_HEAL_AFTER_NS and then
 * once a period; the heal moves the count; a settled sighting forgets
 * the watch. */
static void test_leaked_raise_healed(void)
{
	u64 d = mkdir_b(ROOT, "lk"), w, w2;
	struct daxfs_op op;
	bool due;
	double t0;

	raise_as(&fb, &op, d, false);
	daxfs_op_end(&op);
	raise_as(&fb, &op, d, false);	/* two ops' worth */
	daxfs_op_end(&op);
	w = change_of(d);
	CHECK_EQ(w >> DAXFS_CHANGE_FLIGHT_SHIFT, 2);
	t0 = t_now();
	CHECK(!daxfs_change_seen(&fa, d, w));	/* the first sighting */
	due = daxfs_change_seen(&fa, d, w);
	if (t_now() - t0 < 0.9)		/* too soon (unless we stalled) */
		CHECK(!due);
	CHECK_EQ(change_of(d), w);	/* a sighting stores nothing */
	while (t_now() - t0 < 1.1)
		usleep(20000);
	if (!due)
		CHECK(daxfs_change_seen(&fa, d, w));
	/* once a period: the next sighting waits again */
	CHECK(!daxfs_change_seen(&fa, d, w));
	CHECK_EQ(change_of(d), w);
	CHECK(daxfs_change_heal_now(&fa, d));
	w2 = change_of(d);
	CHECK(daxfs_change_settled(w2));
	CHECK_EQ(w2, daxfs_change_cleared(w));
	/* a settled sighting clears the watch: the next raise waits again */
	CHECK(!daxfs_change_seen(&fa, d, w2));
	raise_as(&fb, &op, d, false);
	daxfs_op_end(&op);
	CHECK(!daxfs_change_seen(&fa, d, change_of(d)));
	CHECK(!daxfs_change_settled(change_of(d)));
	CHECK(daxfs_change_heal_now(&fa, d));
	CHECK(daxfs_change_settled(change_of(d)));
	/* the names stand */
	t_mkreg(&fb, d, "f");
	CHECK(daxfs_change_settled(change_of(d)));
}

/* A raise whose op is live (its intent names d) is never healed, however
 * long it lasts: its own settle lowers it.  With a leak beside it, the
 * heal waits for the op too; once the intent is gone it takes both. */
static void test_live_raise_kept(void)
{
	u64 d = mkdir_b(ROOT, "lv"), w;
	struct daxfs_inode *ip;
	struct daxfs_op op, leak;

	ip = raise_as(&fb, &op, d, true);
	w = change_of(d);
	CHECK(!daxfs_change_heal_now(&fa, d));
	CHECK_EQ(change_of(d), w);
	daxfs_change_settle(&op, ip);
	end_intent(&op);
	CHECK(daxfs_change_settled(change_of(d)));
	CHECK(!daxfs_change_heal_now(&fa, d));	/* nothing to heal */

	raise_as(&fb, &leak, d, false);
	daxfs_op_end(&leak);
	ip = raise_as(&fb, &op, d, true);
	w = change_of(d);
	CHECK_EQ(w >> DAXFS_CHANGE_FLIGHT_SHIFT, 2);
	CHECK(!daxfs_change_heal_now(&fa, d));
	CHECK_EQ(change_of(d), w);
	daxfs_change_settle(&op, ip);
	end_intent(&op);
	CHECK_EQ(change_of(d) >> DAXFS_CHANGE_FLIGHT_SHIFT, 1);
	CHECK(daxfs_change_heal_now(&fa, d));
	CHECK(daxfs_change_settled(change_of(d)));
}

/* A view of the region that never joined (no lane, so no fence to
 * check), and a host declared dead, heal nothing. */
static void test_heal_needs_live_host(void)
{
	u64 d = mkdir_b(ROOT, "lh");
	struct daxfs_fs unjoined, dead;
	struct daxfs_op op;

	raise_as(&fb, &op, d, false);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_fs_open(&unjoined, region, REGION, 0), 0);
	CHECK(!daxfs_change_heal_now(&unjoined, d));
	CHECK_EQ(t_join(&dead, region, REGION), 0);
	t_age(&dead, dead.host);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	CHECK(!daxfs_change_heal_now(&dead, d));
	CHECK(!daxfs_change_settled(change_of(d)));
	CHECK(daxfs_change_heal_now(&fa, d));
}

/* ---- an answer trusted while its counter stands, racing changes ---- */

/* the region the trusted-answer race runs in, and its host A */
static void *tr_region;
static struct daxfs_fs *tr_a = &fa;

struct tshared {
	u64 stop, toggles, role, leaks, heals;
};

/*
 * Host C (test_race_trusted_with_healer): leaks a raise of vdir now and then, as a zombie would,
 * and heals vdir whenever its counter shows a change in flight, at once
 * (no wait): the toggler's live raises must survive every heal, and the
 * truster must never trust a wrong answer.
 */
static void healer(struct tshared *s)
{
	struct daxfs_fs fs;
	struct t_renewer rn;
	struct daxfs_attr a;
	struct daxfs_op op;
	u64 n = 0;

	if (t_join_kept(&fs, &rn, tr_region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		if (++n % 64 == 0) {
			raise_as(&fs, &op, vdir, false);
			daxfs_op_end(&op);
			daxfs_faa(&s->leaks, 1);
		}
		if (daxfs_getattr(&fs, vdir, &a))
			_exit(5);
		if (!daxfs_change_settled(a.change) &&
		    daxfs_change_heal_now(&fs, vdir))
			daxfs_faa(&s->heals, 1);
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* B: the name "t" comes and goes: made, renamed away and back, removed */
static void toggler(void *arg)
{
	const struct daxfs_node fifo = { .mode = DAXFS_S_IFIFO | 0600 };
	struct tshared *s = arg;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 ino;

	if (daxfs_faa(&s->role, 1) == 1)
		healer(s);
	if (t_join_kept(&fs, &rn, tr_region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		if (daxfs_make_node(&fs, vdir, "t", 1, &fifo, &ino, NULL) ||
		    daxfs_rename(&fs, vdir, "t", 1, vdir, "u", 1, 0) ||
		    daxfs_rename(&fs, vdir, "u", 1, vdir, "t", 1, 0) ||
		    daxfs_unlink(&fs, vdir, "t", 1))
			_exit(4);
		daxfs_faa(&s->toggles, 1);
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* "t" in vdir now: its inode, or 0; *seen the counter that vouches */
static u64 t_now_is(u64 *seen)
{
	u64 ino = 0;
	int err = daxfs_lookup_attr_fc(tr_a, vdir, "t", 1, &ino, 0, NULL, NULL,
				       seen);

	CHECK(err == 0 || err == -ENOENT);
	return err ? 0 : ino;
}

/*
 * A, as daxfs.ko keeps a name: looks "t" up with the counter loaded
 * before it, looks again, and loads the counter after.  When the first
 * counter showed no change in flight and the last equals it, no change
 * began in between (docs/kernel.md "Changes in flight"), so both answers
 * must agree.  Format 12's counter moved only after the publish: a
 * change published between the two lookups and not yet moved made them
 * differ under one counter.
 */
static void truster(void *arg)
{
	struct tshared *s = arg;
	double end = t_now() + RACE_SECS;
	u64 w1, w2, a, b, trusted = 0, bad = 0;

	while (t_now() < end) {
		a = t_now_is(&w1);
		b = t_now_is(&w2);
		if (!daxfs_change_settled(w1) || change_in(tr_a, vdir) != w1)
			continue;
		trusted++;
		if (a != b)
			bad++;
	}
	daxfs_store(&s->stop, 1);
	printf("  trusted answers: %llu of which %llu wrong, %llu toggles\n",
	       (unsigned long long)trusted, (unsigned long long)bad,
	       (unsigned long long)daxfs_load(&s->toggles));
	CHECK_EQ(bad, 0);
	CHECK(trusted > 0);
}

static void test_race_trusted_answer(void)
{
	struct tshared *s;

	vdir = mkdir_b(ROOT, "tr");
	s = t_race(1, sizeof(*s), toggler, truster);
	CHECK(daxfs_load(&s->toggles) > 0);
	munmap(s, sizeof(*s));
}

/*
 * The same with a healer beside (healer): after the race the last leak
 * heals, and the word shows nothing in flight.  A heal that took a live
 * raise would leave the field wrapped by that op's settle.  In a region
 * of its own with a 10 s lease, whatever DAXFS_TEST_LEASE_MS says: three
 * busy hosts on a loaded machine under a 300 ms lease had host A declared
 * dead (1 run in 60 beside a CI run), which is not what this tests.
 */
static void test_race_trusted_with_healer(void)
{
	const struct daxfs_format_opts o = { .lease_ms = 10000 };
	struct daxfs_fs a;
	struct tshared *s;
	u64 c;

	tr_region = t_setup(&a, REGION, &o);
	tr_a = &a;
	CHECK_EQ(daxfs_mkdir(&a, ROOT, "th", 2, 0755, 0, 0, &vdir), 0);
	s = t_race(2, sizeof(*s), toggler, truster);
	printf("  healer: %llu leaks, %llu heals\n",
	       (unsigned long long)s->leaks, (unsigned long long)s->heals);
	CHECK(daxfs_load(&s->toggles) > 0);
	CHECK(s->leaks > 0 && s->heals > 0);
	c = change_in(tr_a, vdir);
	if (!daxfs_change_settled(c)) {
		/* a leak after the healer's last look: exactly that */
		CHECK(daxfs_change_heal_now(&a, vdir));
		c = change_in(tr_a, vdir);
	}
	CHECK(daxfs_change_settled(c));
	munmap(s, sizeof(*s));
	daxfs_host_leave(&a);
	t_region_free(tr_region, REGION);
	tr_region = region;
	tr_a = &fa;
}

/* ---- attributes no older than the counter they came with ---- */

/*
 * A front end caches a file's attributes with the change counter they were
 * loaded with, and trusts them while the record's counter stays there
 * (daxfs.ko's peeks, its writes checked on cached attributes).  So a
 * getattr must never give attributes older than its counter: a chmod by
 * another host stores the mode and then moves the counter, and a getattr
 * that loaded the mode before the store and the counter after the move
 * would pair the old mode with the new counter for good (no later move
 * would make anyone look again).  B sets uid k with its k-th setattr, so
 * the counter c0 + k; every getattr of A must show a uid of at least its
 * counter's k.
 */
struct ashared {
	u64 stop, sets, gets, bad, bad_uid, bad_k;
};

/* the race's file and its counter at uid 0: set before the fork */
static u64 aino, ac0;

static void uid_setter(void *arg)
{
	struct ashared *s = arg;
	struct daxfs_attr set = { 0 };
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 k = 0;

	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		set.uid = (u32)++k;
		set.mode = k & 1 ? 04755 : 0644;
		if (daxfs_setattr(&fs, aino, DAXFS_ATTR_UID | DAXFS_ATTR_MODE,
				  &set))
			_exit(5);
		daxfs_store(&s->sets, k);
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

static void attr_getter(void *arg)
{
	struct ashared *s = arg;
	double end = t_now() + RACE_SECS;
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;
	u64 k, n = 0;

	while (t_now() < end) {
		/* both ways a front end loads them: plain and cached */
		CHECK_EQ(n++ & 1 ? daxfs_getattr(&fa, aino, &a) :
			 daxfs_getattr_fc(&fa, aino, &fc, &a), 0);
		k = a.change - ac0;
		if (a.uid < k && !s->bad++) {
			s->bad_uid = a.uid;
			s->bad_k = k;
		}
	}
	s->gets = n;
	daxfs_store(&s->stop, 1);
}

static void test_race_attrs_by_counter(void)
{
	struct ashared *s;
	struct daxfs_attr a, set = { 0 };

	aino = t_mkreg(&fb, ROOT, "counted");
	set.mode = 0644;
	CHECK_EQ(daxfs_setattr(&fb, aino, DAXFS_ATTR_UID | DAXFS_ATTR_MODE,
			       &set), 0);
	CHECK_EQ(daxfs_getattr(&fa, aino, &a), 0);
	ac0 = a.change;
	s = t_race(1, sizeof(*s), uid_setter, attr_getter);
	printf("  race: %llu setattrs, %llu getattrs\n",
	       (unsigned long long)s->sets, (unsigned long long)s->gets);
	if (s->bad)
		printf("  race: %llu getattrs older than their counter "
		       "(uid %llu at counter step %llu)\n",
		       (unsigned long long)s->bad,
		       (unsigned long long)s->bad_uid,
		       (unsigned long long)s->bad_k);
	CHECK_EQ(s->bad, 0);
	CHECK(s->sets > 100);
	/* every setattr moved the counter by one: the premise held */
	CHECK_EQ(daxfs_getattr(&fa, aino, &a), 0);
	CHECK_EQ(a.change - ac0, s->sets);
	CHECK_EQ(a.uid, s->sets);
	munmap(s, sizeof(*s));
}

/* ---- the mark of a rewrite (format 14) ---- */

/* the word as it is: a peek folds nothing (the cache is filled once, by
 * a getattr, which does) */
static struct daxfs_fcache mfc;

static u64 raw_change(u64 ino)
{
	return peek_change(ino, &mfc);
}

/* A write of len bytes at off by host B, marking as libdaxfs' do. */
static void marked_write(u64 ino, u64 len, u64 off)
{
	static u8 buf[8192];
	struct wsrc w = { buf, 0, 0, 0 };

	memset(buf, (int)(off + len), sizeof(buf));
	CHECK_EQ(daxfs_write(&fb, ino, off, len, DAXFS_WRITE_MARK, w_actor, &w,
			     NULL), (s64)len);
}

/*
 * A rewrite that changes no attribute marks the counter and leaves the
 * count; one that stamps (the stamps more than a millisecond old), grows
 * the file or fills a hole moves the count, as every write without the
 * flag does.  A getattr folds the mark (count + 1); a host that may not
 * store (read-only) gives the word marked; a write checked on cached
 * attributes takes a word that differs by the mark alone as its own.
 */
static void test_rewrite_marks_counter(void)
{
	u64 ino = t_mkreg(&fb, ROOT, "marked"), w0, w1, w2;
	const u64 count = DAXFS_CHANGE_COUNT_MASK;
	struct daxfs_attr a;
	struct daxfs_fs ro;
	int marked = 0, i;

	marked_write(ino, 8192, 0);
	mfc = cached(ino);
	for (i = 0; i < 200 && marked < 3; i++) {
		w0 = raw_change(ino);
		CHECK(!(w0 & DAXFS_CHANGE_WRITTEN));
		marked_write(ino, 100, 10);
		w1 = raw_change(ino);
		/* stamped (moved), or marked with the count kept */
		CHECK(w1 == w0 + 1 || w1 == (w0 | DAXFS_CHANGE_WRITTEN));
		if (w1 != (w0 | DAXFS_CHANGE_WRITTEN)) {
			CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
			continue;
		}
		marked++;
		/* marked already: the next rewrite only loads it */
		marked_write(ino, 100, 20);
		w2 = raw_change(ino);
		CHECK(w2 == w1 || w2 == (w1 & count) + 1);
		/* the fold: one count up, the mark clear */
		CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
		CHECK(!(a.change & DAXFS_CHANGE_WRITTEN));
		CHECK(a.change > (w0 & count));
		CHECK_EQ(raw_change(ino), a.change);
		/* which a front end can tell from any other move */
		CHECK_EQ(daxfs_change_only_folded(w2, a.change),
			 !!(w2 & DAXFS_CHANGE_WRITTEN));
		CHECK(!daxfs_change_only_folded(w2, a.change + 1));
		CHECK(!daxfs_change_only_folded(w2 + 1, a.change));
		CHECK(!daxfs_change_only_folded(a.change - 1, a.change));
	}
	CHECK(marked > 0);

	/* a read-only host cannot fold: it gives the mark */
	w0 = raw_change(ino);
	for (i = 0; i < 200; i++) {
		marked_write(ino, 100, 30);
		if (raw_change(ino) & DAXFS_CHANGE_WRITTEN)
			break;
	}
	w1 = raw_change(ino);
	CHECK(w1 & DAXFS_CHANGE_WRITTEN);
	CHECK_EQ(daxfs_fs_open(&ro, region, REGION, DAXFS_FS_RDONLY), 0);
	CHECK_EQ(daxfs_getattr(&ro, ino, &a), 0);
	CHECK_EQ(a.change, w1);
	/* bytes kept under it are taken as moved, even by the same word */
	CHECK(daxfs_change_bytes_moved(w1, a.change));
	CHECK(!daxfs_change_bytes_moved(w0 & count, w0 & count));

	/* checked on attributes cached before the mark: not changed */
	a.change = w1 & ~DAXFS_CHANGE_WRITTEN;
	{
		static u8 buf[100];
		struct wsrc w = { buf, 0, 0, 0 };

		CHECK_EQ(daxfs_write_attr(&fb, ino, NULL, 40, sizeof(buf),
					  DAXFS_WRITE_IF_CHANGE, w_actor, &w,
					  NULL, &a, NULL), (s64)sizeof(buf));
	}

	/* growth and a hole's page move the count, mark or not */
	CHECK_EQ(daxfs_getattr(&fa, ino, &a), 0);
	w0 = a.change;
	marked_write(ino, 100, 8192);
	w1 = raw_change(ino);
	CHECK_EQ(w1, w0 + 1);
	marked_write(ino, 100, 65536);
	w2 = raw_change(ino);
	CHECK_EQ(w2, w1 + 1);
	/* a hole below the size: its page is allocated */
	marked_write(ino, 100, 32768);
	CHECK_EQ(raw_change(ino), w2 + 1);
	/* a write without the flag moves it always */
	CHECK_EQ(t_pwrite(&fb, ino, "x", 1, 0), 1);
	CHECK_EQ(raw_change(ino), w2 + 2);
}

/*
 * What a write says it did to the count (daxfs_write_attr's *moved, which
 * daxfs.ko adds up to tell its own writes from another host's change):
 * moved by one exactly when it says so, else kept (marked, or nothing
 * written), over rewrites (some of them stamping), growth, holes, empty
 * writes and unflagged writes.
 */
static void test_write_reports_moves(void)
{
	u64 ino = t_mkreg(&fb, ROOT, "moves"), w0, w1;
	const u64 count = DAXFS_CHANGE_COUNT_MASK;
	static u8 buf[8192];
	struct daxfs_attr a;
	int i, moves = 0, marks = 0;

	marked_write(ino, 8192, 0);
	mfc = cached(ino);
	for (i = 0; i < 400; i++) {
		struct wsrc w = { buf, 0, 0, 0 };
		u64 off = i % 7 == 3 ? 4096ull * (i + 4) : (u64)(i % 5) * 100;
		u64 len = i % 11 == 5 ? 0 : 1 + (u64)(i % 3) * 1500;
		u32 flags = i % 13 == 7 ? 0 : DAXFS_WRITE_MARK;
		bool moved = !(i & 1);

		if (i % 17 == 0)	/* a fold: the next rewrite marks again */
			CHECK_EQ(daxfs_getattr(&fb, ino, &a), 0);
		w0 = raw_change(ino);
		CHECK_EQ(daxfs_write_attr(&fb, ino, NULL, off, len, flags,
					  w_actor, &w, NULL, &a, &moved),
			 (s64)len);
		w1 = raw_change(ino);
		CHECK_EQ(a.change, w1);
		if (moved) {
			CHECK_EQ(w1 & count, (w0 & count) + 1);
			moves++;
		} else {
			CHECK_EQ(w1 & count, w0 & count);
			CHECK(!len || (w1 & DAXFS_CHANGE_WRITTEN));
			marks += len > 0;
		}
		CHECK(len || !moved);
		CHECK(flags || !len || moved);
	}
	CHECK(moves > 0 && marks > 0);
}

/* ---- data no older than the counter it was read after ---- */

/*
 * The other half of the contract: a front end that reads a file's bytes
 * after loading its change counter keeps them while the counter stays
 * there (the FUSE server's page cache, dropped when its poll sees the
 * counter move, docs/fuse.md).  So a write must move the counter only
 * after its bytes are visible: B rewrites a 4 KiB block with the words k
 * by its k-th write (cached and streaming copies, as libdaxfs makes them;
 * half of them marking the counter, DAXFS_WRITE_MARK, as libdaxfs' do)
 * and then publishes k; A loads the published k, then the counter, and
 * while that equals the one it read its copy after, unmarked, its copy
 * must hold k or later in every word.  A marked word says only that no
 * attribute changed (docs/files.md "The change counter of a rewrite"):
 * A reads again, as the FUSE server drops its pages
 * (daxfs_change_bytes_moved).  Getattrs (which fold the mark) and peeks
 * (which do not, three in a row) give A the counter.
 */
#define DBLOCK	4096u

struct dshared {
	u64 stop, writes, looks, trusted, stale, stale_k, stale_have;
};

static u64 dino;

/* one write's copy: streaming stores (lib/ntcopy.h) every other write */
static u64 nt_actor(void *ctx, void *dst, u64 len)
{
	struct wsrc *w = ctx;

	daxfs_copy_nt_unfenced(dst, w->src + w->done, len);
	w->done += len;
	return len;
}

static void block_writer(void *arg)
{
	struct dshared *s = arg;
	static u64 words[DBLOCK / 8];
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 k = 0, i;

	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		struct wsrc w = { (const u8 *)words, 0, 0, 0 };

		k++;
		for (i = 0; i < DBLOCK / 8; i++)
			words[i] = k;
		if (daxfs_write(&fs, dino, 0, DBLOCK,
				k & 2 ? DAXFS_WRITE_MARK : 0,
				k & 1 ? nt_actor : w_actor, &w, NULL) !=
		    DBLOCK)
			_exit(5);
		daxfs_store(&s->writes, k);
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* the least word of the block: what every word holds at least */
static u64 block_floor(const u64 *words)
{
	u64 lo = ~0ULL, i;

	for (i = 0; i < DBLOCK / 8; i++)
		if (words[i] < lo)
			lo = words[i];
	return lo;
}

static void block_observer(void *arg)
{
	struct dshared *s = arg;
	static u64 words[DBLOCK / 8];
	double end = t_now() + t_race_secs(RACE_SECS);
	struct daxfs_fcache fc = cached(dino);
	struct daxfs_attr a;
	u64 c, c0 = 0, have = 0, k, n = 0;

	/* a stale look fails the test: no need to race on */
	while (t_now() < end && !s->stale) {
		k = daxfs_load(&s->writes);
		/* peeks in a row meet words a rewrite left marked */
		if (!(n++ & 3)) {
			CHECK_EQ(daxfs_getattr_fc(&fa, dino, &fc, &a), 0);
			c = a.change;
		} else {
			c = peek_change(dino, &fc);
		}
		if (n > 1 && !daxfs_change_bytes_moved(c0, c)) {
			s->trusted++;
			if (have < k && !s->stale++) {
				s->stale_k = k;
				s->stale_have = have;
			}
			continue;
		}
		/* the counter moved: read again, after it */
		c0 = c;
		CHECK_EQ(t_pread(&fa, dino, words, DBLOCK, 0), DBLOCK);
		have = block_floor(words);
	}
	s->looks = n;
	daxfs_store(&s->stop, 1);
}

static void test_race_data_by_counter(void)
{
	static u64 zeros[DBLOCK / 8];
	struct dshared *s;

	dino = t_mkreg(&fb, ROOT, "rewritten");
	CHECK_EQ(t_pwrite(&fb, dino, zeros, DBLOCK, 0), DBLOCK);
	s = t_race(1, sizeof(*s), block_writer, block_observer);
	printf("  race: %llu writes, %llu looks, %llu of them trusting\n",
	       (unsigned long long)s->writes, (unsigned long long)s->looks,
	       (unsigned long long)s->trusted);
	if (s->stale)
		printf("  race: %llu looks trusted bytes older than a finished "
		       "write (write %llu, bytes of %llu)\n",
		       (unsigned long long)s->stale,
		       (unsigned long long)s->stale_k,
		       (unsigned long long)s->stale_have);
	CHECK_EQ(s->stale, 0);
	CHECK(s->writes > 100);
	CHECK(s->trusted > 0);
	munmap(s, sizeof(*s));
}

int main(void)
{
	struct t_renewer ra, rb;

	region = t_setup(&fa, REGION, NULL);
	tr_region = region;
	CHECK_EQ(t_join(&fb, region, REGION), 0);
	/* each idles while the other works: keep both leases */
	t_renew_start(&ra, &fa);
	t_renew_start(&rb, &fb);
	RUN(test_follows_other_host);
	RUN(test_removed_and_reused);
	RUN(test_garbled);
	RUN(test_fenced_and_shut);
	RUN(test_every_entry_change_moves_it);
	RUN(test_counter_before_name);
	RUN(test_every_name_removal_moves_inode);
	RUN(test_created_name_vouched);
	RUN(test_made_node_vouched);
	RUN(test_unlink_and_tmpfile_attrs);
	RUN(test_create_held);
	RUN(test_unlink_through_caches);
	RUN(test_race_reuse);
	RUN(test_race_made_vouch);
	RUN(test_race_trusted_answer);
	RUN(test_leaked_raise_healed);
	RUN(test_live_raise_kept);
	RUN(test_heal_needs_live_host);
	RUN(test_race_trusted_with_healer);
	RUN(test_race_attrs_by_counter);
	RUN(test_rewrite_marks_counter);
	RUN(test_write_reports_moves);
	RUN(test_race_data_by_counter);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	daxfs_host_leave(&fb);
	daxfs_host_leave(&fa);
	t_region_free(region, REGION);
	return t_done();
}
