// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: readdir.  ctx->pos is the core's readdir position (0 ".",
 * 1 "..", then name hash + 2), so a position stays valid while other
 * hosts add and remove names: listing resumes after the last name
 * returned, in hash order.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/sched/signal.h>
#include "daxfs_k.h"

/*
 * Entries are gathered into a kernel buffer inside the core's op and
 * handed to the VFS (dir_emit, a copy to the user buffer that may fault
 * and block) only after the op ended: a lane claim must never wait on a
 * user page fault (docs/kernel.md "User buffers").
 */
struct daxfs_rd_ent {
	u64 ino;
	u64 pos;
	u32 dtype;
	u32 len;
	char name[];
};

struct daxfs_rd {
	char *buf;
	u32 used;
};

#define DAXFS_RD_BUF	PAGE_SIZE

static u32 daxfs_rd_size(u32 len)
{
	return ALIGN(sizeof(struct daxfs_rd_ent) + len, sizeof(u64));
}

static int daxfs_k_fill(void *p, const char *name, u32 len, u64 ino, u32 dtype, u64 pos)
{
	struct daxfs_rd *rd = p;
	struct daxfs_rd_ent *e;

	/* full: the core hands this entry again at the next call */
	if (rd->used + daxfs_rd_size(len) > DAXFS_RD_BUF)
		return 1;
	e = (struct daxfs_rd_ent *)(rd->buf + rd->used);
	e->ino = ino;
	e->pos = pos;
	e->dtype = dtype;
	e->len = len;
	memcpy(e->name, name, len);
	rd->used += daxfs_rd_size(len);
	return 0;
}

/* Hands the gathered entries to the VFS; false when its buffer is full
 * (ctx->pos then names the entry that did not fit). */
static bool daxfs_rd_emit(struct daxfs_rd *rd, struct dir_context *ctx)
{
	struct daxfs_rd_ent *e;
	u32 off;

	for (off = 0; off < rd->used; off += daxfs_rd_size(e->len)) {
		e = (struct daxfs_rd_ent *)(rd->buf + off);
		ctx->pos = e->pos;
		if (!dir_emit(ctx, e->name, e->len, e->ino, e->dtype))
			return false;
	}
	return true;
}

static int daxfs_k_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *inode = file_inode(file);
	struct daxfs_rd rd = {};
	u64 pos;
	int err = 0;

	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return -EIO;
	if (ctx->pos == DAXFS_DIR_EOF_POS || ctx->pos < 0)
		return 0;
	rd.buf = kmalloc(DAXFS_RD_BUF, GFP_KERNEL);
	if (!rd.buf)
		return -ENOMEM;
	pos = ctx->pos;
	while (pos != DAXFS_POS_EOF) {
		rd.used = 0;
		err = daxfs_readdir(DAXFS_FS(inode->i_sb), inode->i_ino, &pos,
				    daxfs_k_fill, &rd);
		if (err) {
			err = daxfs_kerr(inode->i_sb, err, "readdir");
			break;
		}
		if (!daxfs_rd_emit(&rd, ctx))
			goto out;
		ctx->pos = pos == DAXFS_POS_EOF ? DAXFS_DIR_EOF_POS : (loff_t)pos;
		if (daxfs_walk_yield()) {
			err = -EINTR;
			break;
		}
	}
out:
	kfree(rd.buf);
	return err;
}

static loff_t daxfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	/* positions are hashes: any value up to S64_MAX may be valid */
	return generic_file_llseek_size(file, offset, whence, S64_MAX, S64_MAX);
}

const struct file_operations daxfs_dir_fops = {
	.llseek		= daxfs_dir_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= daxfs_k_iterate,
	.fsync		= noop_fsync,
	.unlocked_ioctl	= daxfs_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	/* lock directories are flocked: in the region, as for files */
	.lock		= daxfs_k_lock,
	.flock		= daxfs_k_flock,
};
