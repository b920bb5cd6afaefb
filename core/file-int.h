/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Pieces of the file data paths (core/file.c) that the other file
 * operations (core/falloc.c, core/extent.c) share: the view of a file
 * loaded once, and the steps that publish pages and move the size.
 */
#ifndef DAXFS_FILE_INT_H
#define DAXFS_FILE_INT_H

#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"

/* Persistent media only: write back / drain (the file data paths). */
static inline void pflush(struct daxfs_fs *fs, const void *p, u64 len)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(p, len);
}

static inline void pdrain(struct daxfs_fs *fs)
{
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_drain();
}

/* What a read or write needs to know about a file, loaded once. */
struct fview {
	struct daxfs_inode *ip;		/* overlay record, NULL: pristine base */
	u64 size;
	u64 root;
	const u8 *base;			/* base data, NULL when none visible */
	u64 limit;			/* base bytes visible: [0, limit) */
	bool bk;			/* split mode: base data in a backing */
	u32 bk_idx;			/* file: index and byte offset there, */
	u64 bk_off;			/* read through core/pcache.c */
};

/* The inode ino, which must be a regular file (-EISDIR, -EINVAL); the
 * _fc forms look it up through the caller's cache fc (may be NULL). */
int daxfs_file_get(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref);
int daxfs_file_get_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		      struct daxfs_iref *ref);

/* A regular file about to be changed by this host, copied up: ref and
 * *ip name the writable record (-EROFS on a host-less fs). */
int daxfs_file_writable(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref,
			struct daxfs_inode **ip);
int daxfs_file_writable_fc(struct daxfs_op *op, u64 ino,
			   struct daxfs_fcache *fc, struct daxfs_iref *ref,
			   struct daxfs_inode **ip);

/* Loads size, root and the visible base extent of ref once, checked. */
int daxfs_file_view(struct daxfs_fs *fs, const struct daxfs_iref *ref,
		    struct fview *v);

/* A regular file's record with no base image (a flag set once, when the
 * record is made): daxfs_view_own may give its view. */
static inline bool daxfs_record_own_file(struct daxfs_inode *ip)
{
	return DAXFS_IS_REG(daxfs_load32(&ip->mode)) &&
	       !(daxfs_load32(&ip->flags) & DAXFS_IF_BASE);
}

/* daxfs_file_view of an overlay record whose flags the caller loaded and
 * found without DAXFS_IF_BASE: its size and root, nothing of a base.
 * Inline: the lane-free read's view (a call and the base's branches
 * cost it about 30 instructions). */
static inline int daxfs_view_own(struct daxfs_inode *ip, struct fview *v)
{
	v->ip = ip;
	v->base = NULL;
	v->bk = false;
	v->limit = 0;
	v->size = daxfs_load(&ip->size);
	v->root = daxfs_load(&ip->root);
	return v->size > DAXFS_MAX_FILE_SIZE ? -EUCLEAN : 0;
}

/* daxfs_view_read of [off, end), end within the view's size: any view,
 * any span. */
s64 daxfs_view_read_span(struct daxfs_op *op, struct daxfs_fs *fs,
			 const struct fview *v, u64 off, u64 end,
			 daxfs_read_actor_t actor, void *ctx);
/* The same for a view with no base (root its root word) and [off, end)
 * within one block: the span's work for its one piece, without its runs
 * and spans (bench/ins_op.sh: a random 4 KiB read is such a read). */
s64 daxfs_view_read_block(struct daxfs_fs *fs, u64 root, u64 off, u64 end,
			  daxfs_read_actor_t actor, void *ctx);

/* The bytes [off, off + len) of the view v, cut at its size, handed to
 * actor in runs: daxfs_file_read's body.  op: only for a split-mode view
 * (v->bk), whose pages are pinned in the shared page cache; NULL for the
 * lane-free read (core/optread.c), which never passes such a view.
 * Inline: the lane-free read's view never has a base, and its one-block
 * reads then go to daxfs_view_read_block with no fview in memory. */
static inline s64 daxfs_view_read(struct daxfs_op *op, struct daxfs_fs *fs,
				  const struct fview *v, u64 off, u64 len,
				  daxfs_read_actor_t actor, void *ctx)
{
	u64 size = v->size, end;

	if (off >= size || !len)
		return 0;
	end = off + (len < size - off ? len : size - off);
	if (!v->base && !v->bk && !((off ^ (end - 1)) >> DAXFS_BLOCK_SHIFT))
		return daxfs_view_read_block(fs, v->root, off, end, actor,
					     ctx);
	return daxfs_view_read_span(op, fs, v, off, end, actor, ctx);
}

/* Publishes a fresh page for block blk of v->ip holding what the file
 * shows there (base bytes below the limit, zeros above); *off = the
 * block's page, ours or the one that won the race.  unwritten: a
 * preallocation (ours is flagged when it holds zeros only); else a
 * writer follows (the winner's flag is cleared). */
int daxfs_block_make(struct daxfs_op *op, const struct fview *v, u64 blk,
		     bool unwritten, u64 *off);

/* The most a write copies per actor call, between two looks at the fence
 * (docs/hosts.md "Fencing"): a power of two, at least a page. */
#define DAXFS_COPY_CHUNK	(16u * DAXFS_BLOCK_SIZE)

/* The caller's bytes for [a, b) of the file into dst, a chunk of at most
 * DAXFS_COPY_CHUNK per actor call, each after a look at the fence (*err =
 * -ESTALE when fenced), and one store fence after them all
 * (daxfs_stream_fence); returns the bytes copied. */
u64 daxfs_copy_fenced(struct daxfs_op *op, daxfs_write_actor_t actor,
		      void *ctx, u8 *dst, u64 a, u64 b, int *err);

/* CAS-to-maximum of the size; CAS-to-minimum of the base limit. */
void daxfs_size_max(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 want);
void daxfs_limit_min(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s);

/* core/eoftail.c: zeroes the page holding byte s from s to its end. */
int daxfs_zero_tail(struct daxfs_fs *fs, struct daxfs_inode *ip, u64 s);
/*
 * Before an extension (outside the gate, no intent of ours) that makes the
 * bytes from the size up to from part of the file (a write starting at
 * from, a truncate or preallocation up to from): makes the EOF page's tail
 * beyond the size read as zeros if a mapping's store (or a dead write)
 * left bytes there.  Closes the gate for that only.  0, or the gate's
 * errors (DAXFS_GATE_RETRY: end the op and run again).
 */
int daxfs_eof_tail_look(struct daxfs_op *op, struct daxfs_inode *ip,
			u64 ino, u64 s, u64 from);

/* The common case inline (no gap, or an aligned size): one load, no call,
 * on every write. */
static inline int daxfs_eof_tail_clean(struct daxfs_op *op,
				       struct daxfs_inode *ip, u64 ino, u64 from)
{
	u64 s = daxfs_load(&ip->size);

	if (from <= s || !(s & (DAXFS_BLOCK_SIZE - 1)))
		return 0;
	return daxfs_eof_tail_look(op, ip, ino, s, from);
}

#endif /* DAXFS_FILE_INT_H */
