// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Base image namespace tests: a tiny base image built by hand (header,
 * inode table, dirents, data per format.h); pristine reads (also from a
 * host-less, read-only fs), whiteouts, re-creation, copy-up, import,
 * readdir without duplicates, and the validator on corrupt images.
 */
#include "tbase.h"
#include "core/inode.h"
#include "core/dir.h"

#define MiB (1ULL << 20)
#define REGION (64 * MiB)
#define BASE_SIZE (1 * MiB)
#define NBIG 100
#define NINO (6 + NBIG)
#define NDIRENT (5 + 1 + NBIG)

static void *region;
static u8 *basep;

static void put_inode(struct daxfs_base_inode *t, u64 ino, u32 mode, u32 nlink,
		      u64 size, u64 data, u64 count, u64 parent)
{
	struct daxfs_base_inode *b = &t[ino - 1];

	b->mode = mode;
	b->uid = 7;
	b->gid = 8;
	b->nlink = nlink;
	b->size = size;
	b->mtime_ns = 123456789;
	b->data = data;
	b->count = count;
	b->parent = parent;
}

/* header | inodes | dirents | data */
static void build_base(u8 *b)
{
	struct daxfs_base_inode *it = (void *)(b + 4096);
	u64 ioff = 4096, doff = ioff + NINO * 64;
	struct daxfs_base_dirent *dt = (void *)(b + doff);
	u64 dataoff = (doff + NDIRENT * 272 + 4095) & ~4095ULL;
	char n[16];
	int i;

	memset(b, 0, BASE_SIZE);
	memcpy(b + dataoff, "hello world", 11);
	memcpy(b + dataoff + 64, "inner data", 10);
	memcpy(b + dataoff + 128, "file1", 5);
	put_inode(it, 1, DAXFS_S_IFDIR | 0755, 4, 0, 0, 5, 1);
	put_inode(it, 2, DAXFS_S_IFREG | 0644, 2, 11, dataoff, 0, 0);
	put_inode(it, 3, DAXFS_S_IFDIR | 0755, 2, 0, 5, 1, 1);
	put_inode(it, 4, DAXFS_S_IFREG | 0644, 1, 10, dataoff + 64, 0, 0);
	put_inode(it, 5, DAXFS_S_IFLNK | 0777, 1, 5, dataoff + 128, 0, 0);
	put_inode(it, 6, DAXFS_S_IFDIR | 0755, 2, 0, 6, NBIG, 1);
	t_base_dirent(dt, 0, "file1", 2, 8);
	t_base_dirent(dt, 1, "file1b", 2, 8);
	t_base_dirent(dt, 2, "sub", 3, 4);
	t_base_dirent(dt, 3, "link", 5, 10);
	t_base_dirent(dt, 4, "big", 6, 4);
	t_base_dirent(dt, 5, "inner", 4, 8);
	for (i = 0; i < NBIG; i++) {
		put_inode(it, 7 + i, DAXFS_S_IFREG | 0600, 1, 0, 0, 0, 0);
		snprintf(n, sizeof(n), "b%d", i);
		t_base_dirent(dt, 6 + i, n, 7 + i, 8);
	}
	t_base_header(b, NINO, ioff, NDIRENT, doff, dataoff, 4096, 0);
}

static void setup(void)
{
	struct daxfs_format_opts o = {
		.base_size = BASE_SIZE, .root_ino = 1, .first_dyn_ino = NINO + 1,
	};

	region = t_region(REGION);
	basep = t_format_base(region, REGION, &o);
	build_base(basep);
}

struct coll {
	char names[256][32];
	u64 inos[256];
	u32 n;
};

static int fill(void *ctx, const char *name, u32 len, u64 ino, u32 dt, u64 pos)
{
	struct coll *c = ctx;

	if (c->n < 256 && len < 32) {
		memcpy(c->names[c->n], name, len);
		c->names[c->n][len] = 0;
		c->inos[c->n++] = ino;
	}
	return 0;
}

/* lists with chunks of one entry per call */
static int fill1(void *ctx, const char *name, u32 len, u64 ino, u32 dt, u64 pos)
{
	static int flip;

	if ((flip ^= 1))
		return 1;
	return fill(ctx, name, len, ino, dt, pos);
}

static void list(struct daxfs_fs *fs, u64 dir, struct coll *c, bool chunked)
{
	u64 pos = 0;
	int guard = 0;

	memset(c, 0, sizeof(*c));
	while (pos != DAXFS_POS_EOF && guard++ < 10000)
		CHECK_EQ(daxfs_readdir(fs, dir, &pos, chunked ? fill1 : fill, c), 0);
}

static int count(struct coll *c, const char *n)
{
	int k = 0;
	u32 i;

	for (i = 0; i < c->n; i++)
		k += !strcmp(c->names[i], n);
	return k;
}

static void t_validate(void)
{
	struct daxfs_fs fs;
	struct daxfs_base_inode *it = (void *)(basep + 4096);
	struct daxfs_base_dirent *dt = (void *)(basep + 4096 + NINO * 64);
	struct daxfs_base_inode save;
	u64 sino;

	CHECK_EQ(daxfs_fs_open(&fs, region, REGION, DAXFS_FS_VALIDATE), 0);
	CHECK_EQ(daxfs_base_validate(&fs), 0);
	/* dirent pointing past the inode table */
	sino = dt[5].ino;
	dt[5].ino = NINO + 5;
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	dt[5].ino = sino;
	/* bad name */
	dt[5].name[1] = '/';
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	dt[5].name[1] = 'n';
	/* dir range out of bounds */
	save = it[5];
	it[5].count = NDIRENT;
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	it[5] = save;
	/* parent inconsistent with the dirent naming it */
	save = it[2];
	it[2].parent = 6;
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	it[2] = save;
	/* file data outside the data area */
	save = it[1];
	it[1].size = 1 << 20;
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	it[1] = save;
	/* wrong d_type */
	dt[0].type = 4;
	CHECK_EQ(daxfs_base_validate(&fs), -EUCLEAN);
	dt[0].type = 8;
	CHECK_EQ(daxfs_base_validate(&fs), 0);
}

static void t_pristine_readonly(void)
{
	struct daxfs_fs fs;
	struct daxfs_attr a;
	struct coll c;
	char buf[64];
	u64 ino;

	CHECK_EQ(daxfs_fs_open(&fs, region, REGION, 0), 0);	/* no host */
	CHECK_EQ(daxfs_lookup(&fs, 1, "file1", 5, &ino), 0);
	CHECK_EQ(ino, 2);
	CHECK_EQ(daxfs_lookup(&fs, 1, "sub", 3, &ino), 0);
	CHECK_EQ(ino, 3);
	CHECK_EQ(daxfs_lookup(&fs, 3, "inner", 5, &ino), 0);
	CHECK_EQ(ino, 4);
	CHECK_EQ(daxfs_lookup(&fs, 3, "..", 2, &ino), 0);
	CHECK_EQ(ino, 1);
	CHECK_EQ(daxfs_lookup(&fs, 6, "b42", 3, &ino), 0);
	CHECK_EQ(ino, 49);
	CHECK_EQ(daxfs_lookup(&fs, 1, "none", 4, &ino), -ENOENT);
	CHECK_EQ(daxfs_lookup(&fs, 2, "x", 1, &ino), -ENOTDIR);
	CHECK_EQ(daxfs_getattr(&fs, 2, &a), 0);
	CHECK_EQ(a.size, 11);
	CHECK_EQ(a.nlink, 2);
	CHECK_EQ(a.uid, 7);
	CHECK_EQ(daxfs_getattr(&fs, 1, &a), 0);
	CHECK_EQ(a.nlink, 4);
	CHECK_EQ(daxfs_readlink(&fs, 5, buf, sizeof(buf)), 5);
	CHECK(!memcmp(buf, "file1", 5));
	list(&fs, 1, &c, true);
	CHECK_EQ(c.n, 7);
	CHECK_EQ(count(&c, "file1") + count(&c, "file1b") + count(&c, "sub") +
		 count(&c, "link") + count(&c, "big"), 5);
	list(&fs, 6, &c, true);
	CHECK_EQ(c.n, NBIG + 2);
	CHECK_EQ(count(&c, "b0") + count(&c, "b99"), 2);
	CHECK_EQ(daxfs_mknod(&fs, 1, "x", 1, DAXFS_S_IFREG, 0, 0, 0, &ino), -EROFS);
	CHECK_EQ(daxfs_unlink(&fs, 1, "file1", 5), -EROFS);
}

/* Is inode ino still only in the base (never copied up)? */
static bool pristine(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_iref ref;
	struct daxfs_op op;
	bool p;

	CHECK_EQ(daxfs_op_begin(fs, &op), 0);
	p = !daxfs_inode_get(&op, ino, &ref) && !ref.ip;
	daxfs_op_end(&op);
	return p;
}

/* The last two names in one op (daxfs_*_at): a directory found is used,
 * anything else is left to the caller with nothing changed (a base
 * symlink or file is not copied up by a create "through" it). */
static void t_at(void)
{
	struct daxfs_fs fs;
	struct daxfs_attr a;
	u64 pdir, ino, ino2;

	CHECK_EQ(t_join(&fs, region, REGION), 0);
	CHECK_EQ(daxfs_mknod_at(&fs, 1, "link", 4, "x", 1, DAXFS_S_IFREG, 0, 0,
				0, &pdir, &ino), -ENOTDIR);
	CHECK_EQ(pdir, 0);
	CHECK_EQ(daxfs_unlink_at(&fs, 1, "link", 4, "x", 1, &pdir), -ENOTDIR);
	CHECK_EQ(pdir, 0);
	CHECK_EQ(daxfs_mknod_at(&fs, 1, "file1", 5, "x", 1, DAXFS_S_IFREG, 0, 0,
				0, &pdir, &ino), -ENOTDIR);
	CHECK_EQ(pdir, 0);
	CHECK(pristine(&fs, 5));
	CHECK(pristine(&fs, 2));
	CHECK_EQ(daxfs_lookup_at(&fs, 1, "link", 4, "x", 1, &pdir, &ino, &a),
		 -ENOTDIR);
	CHECK_EQ(pdir, 0);
	CHECK_EQ(daxfs_mknod_at(&fs, 1, "none", 4, "x", 1, DAXFS_S_IFREG, 0, 0,
				0, &pdir, &ino), -ENOENT);
	CHECK_EQ(pdir, 0);
	CHECK_EQ(daxfs_unlink_at(&fs, 1, "none", 4, "x", 1, &pdir), -ENOENT);
	CHECK_EQ(pdir, 0);
	CHECK_EQ(daxfs_lookup_at(&fs, 1, "none", 4, "x", 1, &pdir, &ino, &a),
		 -ENOENT);
	CHECK_EQ(pdir, 0);
	/* a directory: the answer is about the name in it */
	CHECK_EQ(daxfs_lookup_at(&fs, 1, "sub", 3, "inner", 5, &pdir, &ino, &a), 0);
	CHECK_EQ(pdir, 3);
	CHECK_EQ(ino, 4);
	CHECK_EQ(a.size, 10);
	CHECK_EQ(daxfs_lookup_at(&fs, 1, "sub", 3, "x", 1, &pdir, &ino, &a),
		 -ENOENT);
	CHECK_EQ(pdir, 3);
	CHECK_EQ(daxfs_unlink_at(&fs, 1, "sub", 3, "x", 1, &pdir), -ENOENT);
	CHECK_EQ(pdir, 3);
	ino = 0;
	CHECK_EQ(daxfs_mknod_at(&fs, 1, "sub", 3, "inner", 5, DAXFS_S_IFREG, 0,
				0, 0, &pdir, &ino), -EEXIST);
	CHECK_EQ(pdir, 3);
	CHECK_EQ(ino, 4);
	CHECK_EQ(daxfs_mknod_at(&fs, 1, "sub", 3, "new", 3, DAXFS_S_IFREG, 0, 0,
				0, &pdir, &ino), 0);
	CHECK_EQ(pdir, 3);
	CHECK_EQ(daxfs_lookup(&fs, 3, "new", 3, &ino2), 0);
	CHECK_EQ(ino, ino2);
	CHECK_EQ(daxfs_unlink_at(&fs, 1, "sub", 3, "new", 3, &pdir), 0);
	CHECK_EQ(pdir, 3);
	CHECK_EQ(daxfs_lookup(&fs, 3, "new", 3, &ino2), -ENOENT);
	CHECK(pristine(&fs, 5));
	CHECK(pristine(&fs, 2));
	daxfs_host_leave(&fs);
}

static void t_mutate(void)
{
	struct daxfs_fs fs, ro, fs2;
	struct daxfs_attr a;
	struct coll c;
	u64 ino, ino2, sz;
	char n[16];
	int i, bad = 0;

	CHECK_EQ(t_join(&fs, region, REGION), 0);
	CHECK_EQ(t_join(&fs2, region, REGION), 0);
	CHECK_EQ(daxfs_fs_open(&ro, region, REGION, 0), 0);
	/* delete a base name: whiteout, never resurrects */
	CHECK_EQ(daxfs_unlink(&fs, 1, "file1", 5), 0);
	CHECK_EQ(daxfs_lookup(&fs, 1, "file1", 5, &ino), -ENOENT);
	CHECK_EQ(daxfs_lookup(&fs2, 1, "file1", 5, &ino), -ENOENT);
	CHECK_EQ(daxfs_lookup(&ro, 1, "file1", 5, &ino), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fs, 2, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(daxfs_getattr(&fs, 1, &a), 0);
	CHECK_EQ(a.size, 4);
	list(&ro, 1, &c, true);
	CHECK_EQ(count(&c, "file1"), 0);
	CHECK_EQ(count(&c, "file1b"), 1);
	CHECK_EQ(c.n, 6);
	/* re-create the deleted name */
	CHECK_EQ(daxfs_mknod(&fs2, 1, "file1", 5, DAXFS_S_IFREG | 0600, 0, 0, 0, &ino), 0);
	CHECK(ino > NINO);
	CHECK_EQ(daxfs_lookup(&fs, 1, "file1", 5, &ino2), 0);
	CHECK_EQ(ino, ino2);
	list(&fs, 1, &c, true);
	CHECK_EQ(count(&c, "file1"), 1);
	CHECK_EQ(c.n, 7);
	CHECK_EQ(daxfs_mknod(&fs, 1, "file1", 5, DAXFS_S_IFREG, 0, 0, 0, &ino2), -EEXIST);
	/* remove the re-created one: still whited out */
	CHECK_EQ(daxfs_unlink(&fs, 1, "file1", 5), 0);
	CHECK_EQ(daxfs_lookup(&ro, 1, "file1", 5, &ino2), -ENOENT);
	/* last link of base inode 2: gone, also by number */
	CHECK_EQ(daxfs_unlink(&fs, 1, "file1b", 6), 0);
	CHECK_EQ(daxfs_getattr(&fs, 2, &a), -ENOENT);
	CHECK_EQ(daxfs_getattr(&ro, 2, &a), -ENOENT);
	/* base dirs: not empty until their base entries go */
	CHECK_EQ(daxfs_rmdir(&fs, 1, "sub", 3), -ENOTEMPTY);
	CHECK_EQ(daxfs_mkdir(&fs2, 3, "newdir", 6, 0755, 0, 0, &ino), 0);
	CHECK_EQ(daxfs_getattr(&fs, 3, &a), 0);
	CHECK_EQ(a.nlink, 3);
	CHECK_EQ(a.size, 2);
	CHECK_EQ(daxfs_lookup(&ro, 3, "inner", 5, &ino), 0);
	CHECK_EQ(daxfs_rmdir(&fs, 3, "newdir", 6), 0);
	CHECK_EQ(daxfs_unlink(&fs, 3, "inner", 5), 0);
	CHECK_EQ(daxfs_getattr(&fs, 4, &a), -ENOENT);
	CHECK_EQ(daxfs_rmdir(&fs, 1, "sub", 3), 0);
	CHECK_EQ(daxfs_lookup(&ro, 1, "sub", 3, &ino), -ENOENT);
	CHECK_EQ(daxfs_getattr(&ro, 3, &a), -ENOENT);
	CHECK_EQ(daxfs_getattr(&fs, 1, &a), 0);
	CHECK_EQ(a.nlink, 3);
	CHECK_EQ(daxfs_mkdir(&fs, 1, "sub", 3, 0700, 0, 0, &ino), 0);
	CHECK(ino > NINO);
	/* rename a base name: old name whited out, new name visible */
	CHECK_EQ(daxfs_rename(&fs, 1, "link", 4, 1, "link2", 5, 0), 0);
	CHECK_EQ(daxfs_lookup(&ro, 1, "link", 4, &ino), -ENOENT);
	CHECK_EQ(daxfs_lookup(&ro, 1, "link2", 5, &ino), 0);
	CHECK_EQ(ino, 5);
	CHECK_EQ(daxfs_readlink(&fs2, 5, n, sizeof(n)), 5);
	CHECK_EQ(daxfs_rename(&fs2, 1, "link2", 5, 1, "link", 4, 0), 0);
	CHECK_EQ(daxfs_lookup(&ro, 1, "link", 4, &ino), 0);
	CHECK_EQ(daxfs_lookup(&ro, 1, "link2", 5, &ino), -ENOENT);
	/* big base dir: writable hosts import it, every name once */
	for (i = 0; i < NBIG; i++) {
		snprintf(n, sizeof(n), "b%d", i);
		bad += daxfs_lookup(&fs, 6, n, strlen(n), &ino) || ino != (u64)(7 + i);
	}
	CHECK_EQ(bad, 0);
	list(&fs2, 6, &c, true);
	CHECK_EQ(c.n, NBIG + 2);
	for (i = 0; i < NBIG; i++) {
		snprintf(n, sizeof(n), "b%d", i);
		bad += count(&c, n) != 1;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(daxfs_unlink(&fs, 6, "b7", 2), 0);
	list(&ro, 6, &c, false);
	CHECK_EQ(c.n, NBIG + 1);
	CHECK_EQ(count(&c, "b7"), 0);
	list(&ro, 1, &c, false);
	CHECK_EQ(c.n, 5);	/* . .. sub link big, nothing twice */
	CHECK_EQ(count(&c, "sub"), 1);
	CHECK_EQ(count(&c, "link"), 1);
	/* a base name renamed with a whiteout: a whiteout node takes the
	 * name (one more entry); unlinking the node still hides the base
	 * name (its leaf kept the base mark, dir_swap) */
	CHECK_EQ(daxfs_getattr(&fs, 6, &a), 0);
	sz = a.size;
	CHECK_EQ(daxfs_rename_whiteout(&fs, 6, "b3", 2, 6, "b3x", 3,
				       DAXFS_RENAME_WHITEOUT, 0, 0), 0);
	CHECK_EQ(daxfs_lookup(&ro, 6, "b3x", 3, &ino), 0);
	CHECK_EQ(ino, 10);
	CHECK_EQ(daxfs_lookup(&ro, 6, "b3", 2, &ino), 0);
	CHECK_EQ(daxfs_getattr(&fs2, ino, &a), 0);
	CHECK_EQ(a.mode & 0170000, DAXFS_S_IFCHR);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(daxfs_getattr(&fs, 6, &a), 0);
	CHECK_EQ(a.size, sz + 1);
	list(&ro, 6, &c, false);
	CHECK_EQ(c.n, NBIG + 2);
	CHECK_EQ(count(&c, "b3"), 1);
	CHECK_EQ(daxfs_unlink(&fs2, 6, "b3", 2), 0);
	CHECK_EQ(daxfs_lookup(&ro, 6, "b3", 2, &ino), -ENOENT);
	list(&ro, 6, &c, false);
	CHECK_EQ(c.n, NBIG + 1);
	CHECK_EQ(count(&c, "b3"), 0);
	CHECK_EQ(daxfs_getattr(&fs, 6, &a), 0);
	CHECK_EQ(a.size, sz);
}

int main(void)
{
	setup();
	RUN(t_validate);
	RUN(t_pristine_readonly);
	RUN(t_at);
	RUN(t_mutate);
	return t_done();
}
