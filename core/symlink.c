// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Symlink targets: the two record forms of an overlay symlink (a header
 * record for targets up to DAXFS_SYMLINK_REC_MAX bytes, a bare page
 * tagged DAXFS_SYMLINK_BARE for longer ones up to PATH_MAX - 1), their
 * validation, creation and freeing, and readlink.  docs/inodes.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "base.h"
#include "inode.h"
#include "symlink.h"

#define BARE_TAG_MASK	((u64)DAXFS_PAGE_SIZE - 1)

static const char *bare_get(struct daxfs_fs *fs, u64 root, u64 size,
			    struct daxfs_link_rec *r)
{
	u64 page = root & ~BARE_TAG_MASK;
	const char *p;

	if ((root & BARE_TAG_MASK) != DAXFS_SYMLINK_BARE ||
	    !(p = daxfs_ptr(fs, page, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE)))
		return "symlink target record pointer invalid";
	/* only targets the header form cannot hold; the NUL after the
	 * target catches a size that was changed behind our back */
	if (size <= DAXFS_SYMLINK_REC_MAX || size > DAXFS_SYMLINK_MAX ||
	    p[size])
		return "symlink target length invalid";
	r->target = p;
	r->len = (u32)size;
	r->off = page;
	r->bytes = DAXFS_PAGE_SIZE;
	r->class = DAXFS_CLASS_PAGE;
	return NULL;
}

const char *daxfs_link_rec_get(struct daxfs_fs *fs, u64 root, u64 size,
			       struct daxfs_link_rec *r)
{
	struct daxfs_symlink *sl;

	if (root & DAXFS_SYMLINK_BARE)
		return bare_get(fs, root, size, r);
	sl = daxfs_ptr(fs, root, sizeof(*sl), DAXFS_OFF_ALIGN);
	if (!sl)
		return "symlink target record pointer invalid";
	/* once: the region is untrusted */
	return daxfs_link_rec_at(fs, root, daxfs_load32(&sl->len), r);
}

const char *daxfs_link_rec_at(struct daxfs_fs *fs, u64 root, u32 len,
			      struct daxfs_link_rec *r)
{
	struct daxfs_symlink *sl;
	int class;

	sl = daxfs_ptr(fs, root, sizeof(*sl), DAXFS_OFF_ALIGN);
	if (!sl)
		return "symlink target record pointer invalid";
	if (!len || len > DAXFS_SYMLINK_REC_MAX)
		return "symlink target length invalid";
	class = daxfs_size_class(sizeof(*sl) + len);
	if (class < 0 || !daxfs_ptr(fs, root, sizeof(*sl) + len, DAXFS_OFF_ALIGN))
		return "symlink target runs outside the pool";
	/* objects are aligned to their size (docs/alloc.md): a length whose
	 * class the record's address cannot hold was changed behind us, and
	 * its bytes would run into the next object */
	if (root & (daxfs_class_size((unsigned int)class) - 1))
		return "symlink target length does not fit its record";
	r->target = sl->target;
	r->len = len;
	r->off = root;
	r->bytes = daxfs_class_size((unsigned int)class);
	r->class = (unsigned int)class;
	return NULL;
}

int daxfs_link_rec_store(struct daxfs_op *op, struct daxfs_inode *ip,
			 const char *target, u32 tlen)
{
	bool bare = tlen > DAXFS_SYMLINK_REC_MAX;
	u64 bytes = bare ? (u64)tlen + 1 : sizeof(struct daxfs_symlink) + tlen;
	int class = daxfs_size_class(bytes);
	struct daxfs_symlink *sl;
	bool held;
	char *rec;
	u64 off;
	int err;

	if (!tlen || tlen > DAXFS_SYMLINK_MAX || class < 0)
		return -ENAMETOOLONG;
	off = daxfs_alloc(op, (unsigned int)class);	/* zeroed: the NUL */
	if (!off)
		return -ENOSPC;
	/* a page is named in the lane until root names it, so that the
	 * recovery of a dead host frees it (docs/recovery.md) */
	held = class == DAXFS_CLASS_PAGE;
	if (held && daxfs_hold_pages(op, off, 1))
		return -ESTALE;		/* off leaks to fsck */
	rec = daxfs_ptr(op->fs, off, bytes, DAXFS_OFF_ALIGN);
	if (!rec) {
		err = -EUCLEAN;
		goto out;
	}
	if (bare) {
		memcpy(rec, target, tlen);
	} else {
		sl = (struct daxfs_symlink *)rec;
		sl->len = tlen;
		memcpy(sl->target, target, tlen);
	}
	daxfs_pflush(op->fs, rec, bytes);
	/* fenced: ip may be a record recovery freed; a held page is
	 * freed by recovery, a small record leaks to fsck */
	if (daxfs_fenced(op))
		return -ESTALE;
	/* size first: a bare record's length is the size */
	daxfs_store(&ip->size, tlen);
	/* shrink before publishing */
	if (held && daxfs_hold_pages(op, 0, 0))
		return -ESTALE;
	daxfs_store(&ip->root, bare ? off | DAXFS_SYMLINK_BARE : off);
	return 0;
out:
	if ((held && daxfs_hold_pages(op, 0, 0)) ||
	    daxfs_free_now(op, off, (unsigned int)class))
		return -ESTALE;
	return err;
}

void daxfs_link_rec_drop(struct daxfs_op *op, struct daxfs_inode *ip)
{
	u64 root = daxfs_load(&ip->root);
	struct daxfs_link_rec r;

	/* a record we cannot vouch for is left alone (fsck reports it)
	 * rather than freed into the wrong class */
	if (!root || daxfs_link_rec_get(op->fs, root, daxfs_load(&ip->size), &r))
		return;
	if (daxfs_fenced(op) || !daxfs_cas(&ip->root, &root, 0))
		return;
	if (daxfs_retire(op, r.off, r.class))
		return;		/* fenced: leaks to fsck */
}

int daxfs_readlink(struct daxfs_fs *fs, u64 ino, char *buf, u32 bufsize)
{
	const struct daxfs_base_inode *bip = NULL;
	struct daxfs_link_rec r;
	const char *src = NULL;
	struct daxfs_iref ref;
	struct daxfs_op op;
	u64 root, len = 0;
	u32 flags = 0;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = daxfs_inode_get(&op, ino, &ref);
	if (err)
		goto out;
	if (!DAXFS_IS_LNK(daxfs_iref_mode(&ref))) {
		err = -EINVAL;
		goto out;
	}
	if (ref.ip)
		flags = daxfs_load32(&ref.ip->flags);
	if (ref.ip && (root = daxfs_load(&ref.ip->root))) {
		if (daxfs_link_rec_get(fs, root, daxfs_load(&ref.ip->size), &r)) {
			err = -EUCLEAN;
			goto out;
		}
		src = r.target;
		len = r.len;
	} else if (ref.ip && !(flags & DAXFS_IF_BASE)) {
		/* an overlay symlink's root is 0 only once its last link went
		 * and daxfs_link_rec_drop() cleared it: the name is gone */
		err = -ENOENT;
		goto out;
	} else {
		bip = ref.bip;
		if (ref.ip)
			bip = daxfs_base_inode(fs, daxfs_load(&ref.ip->base_ino));
		src = daxfs_base_link(fs, bip, &len);
		if (!src) {
			err = -EUCLEAN;
			goto out;
		}
	}
	memcpy(buf, src, len < bufsize ? len : bufsize);
	err = (int)len;
out:
	daxfs_op_end(&op);
	return err;
}
