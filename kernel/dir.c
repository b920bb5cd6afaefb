// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: readdir.  ctx->pos is the core's readdir position (0 ".",
 * 1 "..", then name hash + 2), so a position stays valid while other
 * hosts add and remove names: listing resumes after the last name
 * returned, in hash order.
 */
#include <linux/fs.h>
#include "daxfs_k.h"

struct daxfs_rd {
	struct dir_context *ctx;
};

static int daxfs_k_fill(void *p, const char *name, u32 len, u64 ino, u32 dtype, u64 pos)
{
	struct daxfs_rd *rd = p;

	/* the core hands this entry again at the next call if we stop */
	rd->ctx->pos = pos;
	return !dir_emit(rd->ctx, name, len, ino, dtype);
}

static int daxfs_k_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *inode = file_inode(file);
	struct daxfs_rd rd = { .ctx = ctx };
	u64 pos;
	int err;

	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return -EIO;
	if (ctx->pos == DAXFS_DIR_EOF_POS || ctx->pos < 0)
		return 0;
	pos = ctx->pos;
	err = daxfs_readdir(DAXFS_FS(inode->i_sb), inode->i_ino, &pos, daxfs_k_fill, &rd);
	if (err)
		return daxfs_kerr(inode->i_sb, err, "readdir");
	ctx->pos = pos == DAXFS_POS_EOF ? DAXFS_DIR_EOF_POS : (loff_t)pos;
	return 0;
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
};
