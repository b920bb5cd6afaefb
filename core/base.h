/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Read-only base image accessors.  The base region holds a flat image
 * (header, inode table, dirent array, data) written once by mkfs; every
 * index and offset in it is untrusted and checked here.  docs/inodes.md.
 */
#ifndef DAXFS_BASE_H
#define DAXFS_BASE_H

#include "compat.h"
#include "daxfs_core.h"

/* Base inode ino (1..nr_inodes), or NULL when there is no such inode. */
const struct daxfs_base_inode *daxfs_base_inode(struct daxfs_fs *fs, u64 ino);
/* Base dirent number idx of the flat dirent array, or NULL. */
const struct daxfs_base_dirent *daxfs_base_dirent(struct daxfs_fs *fs, u64 idx);
/* bounds-checked pointer into the base region (off relative to it) */
const void *daxfs_base_ptr(struct daxfs_fs *fs, u64 off, u64 len);
/* Target bytes of base symlink bip (*len of them, 1..DAXFS_SYMLINK_MAX,
 * inside the data area; size and data each loaded once), or NULL when
 * invalid.  Use *len, never bip->size again. */
const char *daxfs_base_link(struct daxfs_fs *fs,
			    const struct daxfs_base_inode *bip, u64 *len);
/* One bounded pass over the whole image; 0 or -EUCLEAN. */
int daxfs_base_validate(struct daxfs_fs *fs);

/* True when ino names a base inode (a base image is present). */
static inline bool daxfs_is_base_ino(struct daxfs_fs *fs, u64 ino)
{
	return fs->base_off && ino >= 1 && ino <= fs->bh.nr_inodes;
}

/* The dirent range [first, first + count) of base directory bip, checked
 * against the dirent array; -EUCLEAN when out of bounds. */
int daxfs_base_dir_range(struct daxfs_fs *fs,
			 const struct daxfs_base_inode *bip, u64 *first,
			 u64 *count);

#endif /* DAXFS_BASE_H */
