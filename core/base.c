// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Base image accessors and the one-pass validator.  The base region is
 * written once by mkfs and never changes, but it is still untrusted: a
 * corrupt or hostile image must yield -EUCLEAN, never an out-of-bounds
 * load or an endless loop.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "base.h"
#include "inode.h"
#include "dir.h"
#include "pcache.h"

/* [off, off + len) inside [0, size) without overflow. */
static bool range_ok(u64 off, u64 len, u64 size)
{
	return off <= size && len <= size - off;
}

const void *daxfs_base_ptr(struct daxfs_fs *fs, u64 off, u64 len)
{
	if (!fs->base_off || !range_ok(off, len, fs->base_size))
		return NULL;
	if (!range_ok(fs->base_off, fs->base_size, fs->size))
		return NULL;
	return fs->base + fs->base_off + off;
}

/*
 * The base image's inode records, dirents and symlink targets, which the
 * core loads directly at every lookup, stat, readdir and readlink of a
 * base object.  The region is read-only, but its pages can still go bad
 * after the mount (the driver lists what a scrub or a memory-failure
 * report found): as daxfs_meta_ptr, a range on a listed page is NULL (the
 * caller's -EUCLEAN, EIO in the kernel) and never loaded.  One load when
 * nothing is listed.
 */
static const void *base_meta_ptr(struct daxfs_fs *fs, u64 off, u64 len)
{
	const void *p = daxfs_base_ptr(fs, off, len);

	if (p && daxfs_unlikely(daxfs_media_bad(fs, fs->base_off + off, len)))
		return NULL;
	return p;
}

const struct daxfs_base_inode *daxfs_base_inode(struct daxfs_fs *fs, u64 ino)
{
	u64 n = fs->bh.nr_inodes;

	if (!fs->base_off || ino < 1 || ino > n)
		return NULL;
	if (n > fs->base_size / sizeof(struct daxfs_base_inode))
		return NULL;
	return base_meta_ptr(fs, fs->bh.inode_off +
			     (ino - 1) * sizeof(struct daxfs_base_inode),
			     sizeof(struct daxfs_base_inode));
}

const struct daxfs_base_dirent *daxfs_base_dirent(struct daxfs_fs *fs, u64 idx)
{
	u64 n = fs->bh.nr_dirents;

	if (!fs->base_off || idx >= n)
		return NULL;
	if (n > fs->base_size / sizeof(struct daxfs_base_dirent))
		return NULL;
	return base_meta_ptr(fs, fs->bh.dirent_off +
			     idx * sizeof(struct daxfs_base_dirent),
			     sizeof(struct daxfs_base_dirent));
}

int daxfs_base_dir_range(struct daxfs_fs *fs,
			 const struct daxfs_base_inode *bip, u64 *first,
			 u64 *count)
{
	u64 n = fs->bh.nr_dirents;
	u64 f = daxfs_once(bip->data), c = daxfs_once(bip->count);

	if (!range_ok(f, c, n))
		return -EUCLEAN;
	*first = f;
	*count = c;
	return 0;
}

/* A base file/symlink's bytes must lie inside the data area. */
static bool data_ok(struct daxfs_fs *fs, const struct daxfs_base_inode *bip)
{
	const struct daxfs_base_header *bh = &fs->bh;

	if (bip->size == 0)
		return true;
	if (bip->data < bh->data_off)
		return false;
	return range_ok(bip->data - bh->data_off, bip->size, bh->data_size);
}

const char *daxfs_base_link(struct daxfs_fs *fs,
			    const struct daxfs_base_inode *bip, u64 *len)
{
	const struct daxfs_base_header *bh = &fs->bh;
	u64 size, data;

	if (!bip)
		return NULL;
	size = daxfs_once(bip->size);
	data = daxfs_once(bip->data);
	if (size < 1 || size > DAXFS_SYMLINK_MAX || data < bh->data_off ||
	    !range_ok(data - bh->data_off, size, bh->data_size))
		return NULL;
	*len = size;
	return base_meta_ptr(fs, data, size);
}


static int validate_header(struct daxfs_fs *fs)
{
	const struct daxfs_base_header *bh = &fs->bh;
	u64 sz = fs->base_size;

	if (bh->magic != DAXFS_BASE_MAGIC || bh->nr_inodes < 1)
		return -EUCLEAN;
	if (bh->nr_inodes > sz / sizeof(struct daxfs_base_inode) ||
	    bh->nr_dirents > sz / sizeof(struct daxfs_base_dirent))
		return -EUCLEAN;
	if (!range_ok(bh->inode_off,
		      bh->nr_inodes * sizeof(struct daxfs_base_inode), sz) ||
	    !range_ok(bh->dirent_off,
		      bh->nr_dirents * sizeof(struct daxfs_base_dirent), sz) ||
	    !range_ok(bh->data_off, bh->data_size, sz))
		return -EUCLEAN;
	if (bh->inode_off % 8 || bh->dirent_off % 8)
		return -EUCLEAN;
	if (!daxfs_base_ptr(fs, 0, sizeof(*bh)))
		return -EUCLEAN;
	return 0;
}

static int validate_inode(struct daxfs_fs *fs, u64 ino,
			  const struct daxfs_base_inode *bip)
{
	u32 type = bip->mode & DAXFS_S_IFMT;
	const struct daxfs_base_inode *pp;
	u64 len;

	switch (type) {
	case DAXFS_S_IFREG:
		if (daxfs_base_backed(fs))	/* split mode: in a backing file */
			return daxfs_pcache_extent_ok(fs, bip->count, bip->data,
						      bip->size) ? 0 : -EUCLEAN;
		return data_ok(fs, bip) ? 0 : -EUCLEAN;
	case DAXFS_S_IFLNK:
		return daxfs_base_link(fs, bip, &len) ? 0 : -EUCLEAN;
	case DAXFS_S_IFCHR:
	case DAXFS_S_IFBLK:
	case DAXFS_S_IFIFO:
	case DAXFS_S_IFSOCK:
		return 0;
	case DAXFS_S_IFDIR:
		break;
	default:
		return -EUCLEAN;
	}
	if (!range_ok(bip->data, bip->count, fs->bh.nr_dirents))
		return -EUCLEAN;
	if (bip->nlink < 2)
		return -EUCLEAN;
	pp = daxfs_base_inode(fs, bip->parent);
	if (!pp || !DAXFS_IS_DIR(pp->mode))
		return -EUCLEAN;
	if (ino == 1 && bip->parent != 1)
		return -EUCLEAN;
	if (ino != 1 && bip->parent == ino)
		return -EUCLEAN;
	return 0;
}

/* Entries of directory ino: valid names and targets; subdirectories
 * name ino as their parent; nlink == 2 + subdirectories. */
static int validate_dirents(struct daxfs_fs *fs, u64 ino,
			    const struct daxfs_base_inode *bip)
{
	u64 first, count, i, subdirs = 0;

	if (daxfs_base_dir_range(fs, bip, &first, &count))
		return -EUCLEAN;
	for (i = 0; i < count; i++) {
		const struct daxfs_base_dirent *bd = daxfs_base_dirent(fs, first + i);
		const struct daxfs_base_inode *cp;

		if (!bd || bd->name_len > DAXFS_NAME_MAX)
			return -EUCLEAN;
		if (daxfs_name_check(bd->name, bd->name_len))
			return -EUCLEAN;
		cp = daxfs_base_inode(fs, bd->ino);
		if (!cp || bd->ino == 1)
			return -EUCLEAN;
		if (bd->type != daxfs_mode_dtype(cp->mode))
			return -EUCLEAN;
		if (DAXFS_IS_DIR(cp->mode)) {
			if (cp->parent != ino)
				return -EUCLEAN;
			subdirs++;
		}
	}
	if (bip->nlink != 2 + subdirs)
		return -EUCLEAN;
	return 0;
}

/* Parent pointers must reach the root: no cycles.  When every directory's
 * parent has a smaller number (mkfs numbers in tree order) that is
 * already proven; otherwise walk, at most nr_inodes steps per walk. */
static int validate_tree(struct daxfs_fs *fs, bool ordered)
{
	u64 n = fs->bh.nr_inodes, ino;

	if (ordered)
		return 0;
	for (ino = 2; ino <= n; ino++) {
		const struct daxfs_base_inode *bip = daxfs_base_inode(fs, ino);
		u64 cur = ino, steps;

		/* NULL: a page listed bad since the first pass */
		if (!bip)
			return -EUCLEAN;
		if (!DAXFS_IS_DIR(bip->mode))
			continue;
		for (steps = 0; cur != 1; steps++) {
			if (steps > n || !bip)
				return -EUCLEAN;
			cur = bip->parent;
			bip = daxfs_base_inode(fs, cur);
		}
	}
	return 0;
}

int daxfs_base_validate(struct daxfs_fs *fs)
{
	u64 n, ino;
	bool ordered = true;
	int err;

	if (!fs->base_off)
		return 0;
	err = validate_header(fs);
	if (err)
		return err;
	n = fs->bh.nr_inodes;
	for (ino = 1; ino <= n; ino++) {
		const struct daxfs_base_inode *bip = daxfs_base_inode(fs, ino);

		if (!bip || (ino == 1 && !DAXFS_IS_DIR(bip->mode)))
			return -EUCLEAN;
		err = validate_inode(fs, ino, bip);
		if (err)
			return err;
		if (!DAXFS_IS_DIR(bip->mode))
			continue;
		err = validate_dirents(fs, ino, bip);
		if (err)
			return err;
		if (ino != 1 && bip->parent >= ino)
			ordered = false;
	}
	return validate_tree(fs, ordered);
}
