/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Helpers shared by the file-data tests (tests/c/test_file*.c). */
#ifndef DAXFS_TFILE_H
#define DAXFS_TFILE_H

#include "tutil.h"
#include "core/inode.h"
#include "core/file.h"

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

/* write actor: copies from src */
struct wsrc {
	const u8 *src;
	u64 done;
	u64 calls;
	u64 limit;		/* stop (short write) after this many bytes */
};

static inline u64 w_actor(void *ctx, void *dst, u64 len)
{
	struct wsrc *w = ctx;

	w->calls++;
	if (w->limit && w->done + len > w->limit)
		len = w->limit > w->done ? w->limit - w->done : 0;
	memcpy(dst, w->src + w->done, len);
	w->done += len;
	return len;
}

/* read actor: copies into dst (NULL src = zeros) */
struct rdst {
	u8 *dst;
	u64 done;
	u64 calls, holes;
};

static inline u64 r_actor(void *ctx, const void *src, u64 len)
{
	struct rdst *r = ctx;

	r->calls++;
	if (src)
		memcpy(r->dst + r->done, src, len);
	else {
		memset(r->dst + r->done, 0, len);
		r->holes++;
	}
	r->done += len;
	return len;
}

/* read actor that only counts (huge sparse ranges) and checks zeros */
struct rcount {
	u64 done, data_bytes, nonzero;
	u64 calls;
};

static inline u64 rc_actor(void *ctx, const void *src, u64 len)
{
	struct rcount *r = ctx;
	const u8 *p = src;
	u64 i;

	r->calls++;
	if (p) {
		r->data_bytes += len;
		for (i = 0; i < len; i++)
			r->nonzero += p[i] != 0;
	}
	r->done += len;
	return len;
}

static inline s64 t_pwrite(struct daxfs_fs *fs, u64 ino, const void *buf,
			   u64 len, u64 off)
{
	struct wsrc w = { buf, 0, 0, 0 };

	return daxfs_write(fs, ino, off, len, 0, w_actor, &w, NULL);
}

static inline s64 t_append(struct daxfs_fs *fs, u64 ino, const void *buf,
			   u64 len, u64 *pos)
{
	struct wsrc w = { buf, 0, 0, 0 };

	return daxfs_write(fs, ino, 0, len, DAXFS_WRITE_APPEND, w_actor, &w,
			   pos);
}

static inline s64 t_pread(struct daxfs_fs *fs, u64 ino, void *buf, u64 len,
			  u64 off)
{
	struct rdst r = { buf, 0, 0, 0 };

	return daxfs_read(fs, ino, off, len, r_actor, &r);
}

/* SEEK_DATA / SEEK_HOLE: the offset, or the negative errno as a u64. */
static inline u64 t_seek(struct daxfs_fs *fs, u64 ino, u64 off, int whence)
{
	u64 res = ~0ULL;
	int err = daxfs_seek_hole_data(fs, ino, off, whence, &res);

	return err ? (u64)(s64)err : res;
}

/* A new inode of the given mode, not linked in any directory (the tests
 * exercise the data paths; the namespace has its own tests). */
static inline u64 t_mkinode(struct daxfs_fs *fs, u32 mode)
{
	struct daxfs_op op;
	struct daxfs_inode *ip;
	u64 ino = 0;
	int err;

	if (daxfs_op_begin(fs, &op))
		return 0;
	err = daxfs_inode_create(&op, mode, 0, 0, 0, 1, 0, &ino, &ip);
	daxfs_op_end(&op);
	return err ? 0 : ino;
}

static inline u64 t_mkfile(struct daxfs_fs *fs)
{
	return t_mkinode(fs, DAXFS_S_IFREG | 0644);
}

/* A regular file named n in directory dir; the test fails if it cannot. */
static inline u64 t_mkreg(struct daxfs_fs *fs, u64 dir, const char *n)
{
	u64 ino = 0;

	CHECK_EQ(daxfs_mknod(fs, dir, n, strlen(n), DAXFS_S_IFREG | 0644, 0, 0, 0, &ino), 0);
	return ino;
}

/* daxfs_getattr into a zeroed *a. */
static inline int t_getattr(struct daxfs_fs *fs, u64 ino, struct daxfs_attr *a)
{
	memset(a, 0, sizeof(*a));
	return daxfs_getattr(fs, ino, a);
}

/* The record of ino (for white-box checks). */
static inline struct daxfs_inode *t_ip(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_op op;
	struct daxfs_iref ref;
	int err;

	daxfs_op_begin(fs, &op);
	err = daxfs_inode_get(&op, ino, &ref);
	daxfs_op_end(&op);
	return err ? NULL : ref.ip;
}

/* The block count of ino's record. */
static inline u64 t_blocks(struct daxfs_fs *fs, u64 ino)
{
	return daxfs_load(&t_ip(fs, ino)->blocks);
}

/* Last link gone: what unlink does to a file. */
static inline void t_freefile(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_op op;
	struct daxfs_inode *ip = t_ip(fs, ino);

	if (!ip)
		return;
	daxfs_op_begin(fs, &op);
	daxfs_store32(&ip->nlink, 0);
	daxfs_inode_free(&op, ip);
	daxfs_op_end(&op);
}

static inline u64 t_usedbytes(struct daxfs_fs *fs)
{
	struct daxfs_statfs st;

	daxfs_reclaim_all(fs);
	daxfs_reclaim_all(fs);
	if (daxfs_statfs(fs, &st))
		return ~0ULL;
	return st.used_bytes;
}

#endif
