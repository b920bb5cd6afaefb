/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Hand-built base images for the core tests (test_ns_base, test_file_base,
 * test_pcache): format a region with a base region, fill its tables, then
 * write the header (format.h: header | inode table | dirents | data).
 */
#ifndef DAXFS_TBASE_H
#define DAXFS_TBASE_H

#include "tutil.h"
#include "core/base.h"
#include "core/inode.h"

/* Formats r (size bytes) with o (o->base_size set) and returns its base
 * region; exits with status 2 when that fails. */
static inline u8 *t_format_base(void *r, u64 size, const struct daxfs_format_opts *o)
{
	struct daxfs_super *sb = r;
	u8 *b = NULL;
	u64 i;
	int err = daxfs_format(r, size, o);

	for (i = 0; !err && i < DAXFS_RGN_MAX; i++)
		if (sb->regions[i].kind == DAXFS_RGN_BASE)
			b = (u8 *)r + sb->regions[i].offset;
	if (err || !b) {
		fprintf(stderr, "base format failed: %d\n", err);
		exit(2);
	}
	return b;
}

/* Directory entry idx of the dirent table d. */
static inline void t_base_dirent(struct daxfs_base_dirent *d, u64 idx, const char *name,
				 u64 ino, u8 type)
{
	d[idx].ino = ino;
	d[idx].name_len = (u16)strlen(name);
	d[idx].type = type;
	memcpy(d[idx].name, name, strlen(name));
}

/* Writes the header of base image b, checksum included: the inode table
 * at inode_off, the dirents at dirent_off, data from data_off. */
static inline void t_base_header(u8 *b, u64 nr_inodes, u64 inode_off, u64 nr_dirents,
				 u64 dirent_off, u64 data_off, u64 data_size, u32 flags)
{
	struct daxfs_base_header *h = (void *)b;

	h->magic = DAXFS_BASE_MAGIC;
	h->version = 1;
	h->header_size = sizeof(*h);
	h->nr_inodes = nr_inodes;
	h->inode_off = inode_off;
	h->nr_dirents = nr_dirents;
	h->dirent_off = dirent_off;
	h->data_off = data_off;
	h->data_size = data_size;
	h->flags = flags;
	h->csum = daxfs_crc32c(0, h, __builtin_offsetof(struct daxfs_base_header, csum));
}

/* A base image of "/" (ino 1) and one regular file "f" (ino 2) of fsize
 * bytes at data_off, in a base region of bsize bytes: formats r, builds
 * the tables, fill()s the file's bytes, writes the header.  Returns the
 * base region; its inode table is at +4096. */
static inline u8 *t_base_one_file(void *r, u64 size, u64 bsize, u64 fsize,
				  u64 data_off, void (*fill)(u8 *data, u64 n))
{
	struct daxfs_format_opts o = { .base_size = bsize, .root_ino = 1,
				       .first_dyn_ino = 3 };
	u8 *b = t_format_base(r, size, &o);
	struct daxfs_base_inode *bi = (void *)(b + 4096);
	struct daxfs_base_dirent *de = (void *)(b + 8192);

	bi[0].mode = DAXFS_S_IFDIR | 0755;
	bi[0].nlink = 2;
	bi[0].data = 0;
	bi[0].count = 1;
	bi[0].parent = 1;
	bi[1].mode = DAXFS_S_IFREG | 0644;
	bi[1].nlink = 1;
	bi[1].size = fsize;
	bi[1].data = data_off;
	t_base_dirent(de, 0, "f", 2, 8);
	fill(b + data_off, fsize);
	t_base_header(b, 2, 4096, 1, 8192, data_off, bsize - data_off, 0);
	return b;
}

#endif /* DAXFS_TBASE_H */
