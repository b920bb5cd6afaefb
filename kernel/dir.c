// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: readdir.  ctx->pos is the core's readdir position (0 ".",
 * 1 "..", then name hash + 2), so a position stays valid while other
 * hosts add and remove names: listing resumes after the last name
 * returned, in hash order.
 */
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/sched/signal.h>
#include "daxfs_k.h"

/*
 * Entries are gathered into kernel memory inside the core's op and
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

/*
 * Entries are gathered into chunks of a page, chained, from a cache of
 * their own.  The cache has a constructor, so the kernel does not zero
 * its objects (init_on_alloc, as Debian's kernels boot): every byte a
 * listing hands on is written by daxfs_k_fill first.  One buffer of the
 * whole listing was zeroed whole, 64 KiB for a directory of 1,000 names
 * (kmalloc rounds 48 KiB up to a power of two), 10% of a first listing
 * in a guest (docs/benchmarks.md, session 60); a chain also grows with
 * no copy.
 */
struct daxfs_rd_chunk {
	struct daxfs_rd_chunk *next;
	u32 used;
	char ents[] __aligned(8);
};

#define DAXFS_RD_CHUNK	PAGE_SIZE
#define DAXFS_RD_ROOM	(DAXFS_RD_CHUNK - offsetof(struct daxfs_rd_chunk, ents))
/* A listing longer than this is not kept: it is handed over a buffer at
 * a time, as before there was a cache. */
#define DAXFS_RDC_MAX	(256u << 10)
#define DAXFS_RDC_CHUNKS	(DAXFS_RDC_MAX / DAXFS_RD_CHUNK)

static struct kmem_cache *daxfs_rd_cachep;

static void daxfs_rd_chunk_once(void *p)
{
}

int daxfs_dir_cache_init(void)
{
	daxfs_rd_cachep = kmem_cache_create("daxfs_listing", DAXFS_RD_CHUNK, 0, 0,
					    daxfs_rd_chunk_once);
	return daxfs_rd_cachep ? 0 : -ENOMEM;
}

void daxfs_dir_cache_destroy(void)
{
	kmem_cache_destroy(daxfs_rd_cachep);
}

/* The chunks being filled: head (NULL: none yet), cur the one daxfs_k_fill
 * writes to, tail the last, nr how many. */
struct daxfs_rd {
	struct daxfs_rd_chunk *head, *cur, *tail;
	u32 nr;
};

static void daxfs_rd_free(struct daxfs_rd_chunk *ch)
{
	struct daxfs_rd_chunk *next;

	for (; ch; ch = next) {
		next = ch->next;
		kmem_cache_free(daxfs_rd_cachep, ch);
	}
}

/* n more empty chunks at the tail: false when none could be had (those
 * that could stay). */
static bool daxfs_rd_more(struct daxfs_rd *rd, u32 n, gfp_t gfp)
{
	struct daxfs_rd_chunk *ch;

	while (n--) {
		ch = kmem_cache_alloc(daxfs_rd_cachep, gfp | __GFP_NOWARN);
		if (!ch)
			return false;
		ch->next = NULL;
		ch->used = 0;
		if (rd->tail)
			rd->tail->next = ch;
		else
			rd->head = rd->cur = ch;
		rd->tail = ch;
		rd->nr++;
	}
	return true;
}

/* Empty again, every chunk kept for the next buffer's worth. */
static void daxfs_rd_reset(struct daxfs_rd *rd)
{
	struct daxfs_rd_chunk *ch;

	for (ch = rd->head; ch; ch = ch->next)
		ch->used = 0;
	rd->cur = rd->head;
}

static u32 daxfs_rd_size(u32 len)
{
	return ALIGN(sizeof(struct daxfs_rd_ent) + len, sizeof(u64));
}

static int daxfs_k_fill(void *p, const char *name, u32 len, u64 ino, u32 dtype, u64 pos)
{
	struct daxfs_rd *rd = p;
	struct daxfs_rd_chunk *ch = rd->cur;
	struct daxfs_rd_ent *e;
	u32 size = daxfs_rd_size(len);

	if (unlikely(ch->used + size > DAXFS_RD_ROOM)) {
		/* full: the core hands this entry again at the next call */
		if (!ch->next)
			return 1;
		ch = rd->cur = ch->next;
	}
	e = (struct daxfs_rd_ent *)(ch->ents + ch->used);
	e->ino = ino;
	e->pos = pos;
	e->dtype = dtype;
	e->len = len;
	memcpy(e->name, name, len);
	ch->used += size;
	return 0;
}

/* Hands the gathered entries at positions from ctx->pos on to the VFS;
 * false when its buffer is full (ctx->pos then names the entry that did
 * not fit). */
static bool daxfs_rd_emit(const struct daxfs_rd_chunk *ch,
			  struct dir_context *ctx)
{
	struct daxfs_rd_ent *e;
	u32 off;

	for (; ch; ch = ch->next) {
		for (off = 0; off < ch->used; off += daxfs_rd_size(e->len)) {
			e = (struct daxfs_rd_ent *)(ch->ents + off);
			if (e->pos < (u64)ctx->pos)
				continue;
			ctx->pos = e->pos;
			if (!dir_emit(ctx, e->name, e->len, e->ino, e->dtype))
				return false;
		}
	}
	return true;
}

/* Twice the room, keeping what was gathered; false at DAXFS_RDC_MAX or
 * without memory (the walk then goes on a buffer at a time). */
static bool daxfs_rd_grow(struct daxfs_rd *rd)
{
	u32 n = min(rd->nr, DAXFS_RDC_CHUNKS - rd->nr);

	return n && daxfs_rd_more(rd, n, GFP_KERNEL_ACCOUNT);
}

/*
 * A directory's whole listing, kept by its inode after a walk from the
 * start while the directory's change counter shows the value that
 * vouched for it (docs/kernel.md "Listings").  Shared by the listings
 * that use it: a reference each, and one for the inode's pointer.
 */
struct daxfs_rdcache {
	refcount_t ref;
	u64 change;
	struct daxfs_rd_chunk *head;
};

static void rdc_put(struct daxfs_rdcache *c)
{
	if (c && refcount_dec_and_test(&c->ref)) {
		daxfs_rd_free(c->head);
		kfree(c);
	}
}

/* Puts c in the inode's place (NULL: empties it) if that still holds
 * expect; the reference the place held goes with what left it. */
static void rdc_replace(struct inode *inode, struct daxfs_rdcache *expect,
			struct daxfs_rdcache *c)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_rdcache *old = NULL;

	if (c)
		refcount_inc(&c->ref);
	spin_lock(&inode->i_lock);
	if (!expect || ei->rdc == expect) {
		old = ei->rdc;
		ei->rdc = c;
		c = NULL;
	}
	spin_unlock(&inode->i_lock);
	rdc_put(old);	/* frees outside i_lock */
	rdc_put(c);	/* not placed: the reference taken for it */
}

void daxfs_rdc_drop(struct inode *inode)
{
	rdc_replace(inode, NULL, NULL);
}

/* The directory's change counter and (entries) its count of entries */
static int rdc_peek(struct inode *inode, u64 *change, u64 *entries)
{
	struct daxfs_peek pk;
	int err;

	err = daxfs_attr_peek(DAXFS_FS(inode->i_sb), inode->i_ino,
			      &DAXFS_I(inode)->fc, &pk);
	*change = pk.change;
	if (entries)
		*entries = pk.size;
	return err;
}

/*
 * Chunks for the whole listing of a directory of entries names, so that
 * gathering it stops for none (a name of up to 24 bytes takes 48; longer
 * ones add chunks).
 */
static u32 rd_chunks(u64 entries)
{
	u64 want = DIV_ROUND_UP((entries + 2) * 48, DAXFS_RD_ROOM);

	return want < DAXFS_RDC_CHUNKS ? (u32)want : DAXFS_RDC_CHUNKS;
}

/* The kept listing, with a reference, if a peek shows the directory's
 * counter where it was when the listing was gathered; a listing found
 * stale is dropped. */
static struct daxfs_rdcache *rdc_get(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_rdcache *c;
	u64 change;

	if (!READ_ONCE(daxfs_trust_cached))
		return NULL;	/* off (kernel/inode.c): nothing kept */
	spin_lock(&inode->i_lock);
	c = ei->rdc;
	if (c)
		refcount_inc(&c->ref);
	spin_unlock(&inode->i_lock);
	if (!c)
		return NULL;
	if (!rdc_peek(inode, &change, NULL) && change == c->change)
		return c;
	rdc_replace(inode, c, NULL);
	rdc_put(c);
	return NULL;
}

/*
 * The listing gathered in rd, whole, by a walk that began after a peek
 * loaded change: kept when a peek after it loads the same value (no
 * change of the directory's entries was published and vouched for in
 * between: docs/kernel.md "Dentries").  Takes rd's chunks, less those
 * left empty; NULL without memory (they then stay the caller's).
 */
static struct daxfs_rdcache *rdc_make(struct inode *inode, struct daxfs_rd *rd,
				      u64 change)
{
	struct daxfs_rdcache *c;
	u64 after;

	if (!READ_ONCE(daxfs_trust_cached))
		return NULL;
	if (!daxfs_change_settled(change)) {
		/* taken mid-change: not kept (a raise that stays is healed) */
		daxfs_k_change_seen(inode->i_sb, inode->i_ino, change);
		return NULL;
	}
	c = kmalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return NULL;
	refcount_set(&c->ref, 1);
	c->change = change;
	daxfs_rd_free(rd->cur->next);
	rd->cur->next = NULL;
	c->head = rd->head;
	rd->head = NULL;
	smp_rmb();	/* the walk's loads before the second peek's */
	if (!rdc_peek(inode, &after, NULL) && after == change)
		rdc_replace(inode, NULL, c);
	return c;
}

/*
 * A listing from the start is gathered whole (up to DAXFS_RDC_MAX) before
 * any of it is handed over, so that it can be kept; one that goes on from
 * a position, or a longer one, is walked a buffer at a time.
 */
static int daxfs_k_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *inode = file_inode(file);
	struct daxfs_rdcache *c;
	struct daxfs_rd rd = {};
	u64 pos, change = 0, entries = 0;
	bool whole;
	int err = 0;

	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return -EIO;
	if (ctx->pos == DAXFS_DIR_EOF_POS || ctx->pos < 0)
		return 0;
	c = rdc_get(inode);
	if (c)
		goto emit;
	/* the counter is loaded before the walk's first look */
	whole = ctx->pos == 0 && !rdc_peek(inode, &change, &entries) && change;
	/* no room for all of it (a tight memory cgroup): a buffer at a
	 * time, as before there was a cache */
	if (whole && !daxfs_rd_more(&rd, rd_chunks(entries), GFP_KERNEL_ACCOUNT))
		whole = false;
	if (!whole && !rd.head && !daxfs_rd_more(&rd, 1, GFP_KERNEL))
		return -ENOMEM;
	pos = ctx->pos;
	while (pos != DAXFS_POS_EOF) {
		if (!whole)
			daxfs_rd_reset(&rd);
		err = daxfs_readdir(DAXFS_FS(inode->i_sb), inode->i_ino, &pos,
				    daxfs_k_fill, &rd);
		if (err) {
			err = daxfs_kerr(inode->i_sb, err, "readdir");
			break;
		}
		if (whole && pos != DAXFS_POS_EOF && !daxfs_rd_grow(&rd))
			whole = false;	/* too long to keep: hand over what we have */
		if (!whole) {
			if (!daxfs_rd_emit(rd.head, ctx))
				goto out;
			ctx->pos = pos == DAXFS_POS_EOF ? DAXFS_DIR_EOF_POS : (loff_t)pos;
		}
		if (daxfs_walk_yield()) {
			err = -EINTR;
			break;
		}
	}
	if (err || !whole)
		goto out;
	c = rdc_make(inode, &rd, change);
	if (!c) {
		if (daxfs_rd_emit(rd.head, ctx))
			ctx->pos = DAXFS_DIR_EOF_POS;
		goto out;
	}
emit:
	if (daxfs_rd_emit(c->head, ctx))
		ctx->pos = DAXFS_DIR_EOF_POS;
	rdc_put(c);
out:
	daxfs_rd_free(rd.head);
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
