/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A published xattr set (format.h, docs/xattr.md) as one host sees it:
 * validated once, then read through these helpers only.  Internal to the
 * core and fsck.
 */
#ifndef DAXFS_XATTR_SET_H
#define DAXFS_XATTR_SET_H

#include "compat.h"
#include "daxfs_core.h"

struct daxfs_xset {
	struct daxfs_fs *fs;
	struct daxfs_xattr_set *h;	/* header (in the region) */
	u64 off;			/* header offset */
	u32 count, bytes, nr_pages;	/* loaded once, validated */
	unsigned int class;		/* the header's allocator class */
};

/* One entry of a set, its name copied out. */
struct daxfs_xent {
	u32 pos;			/* of the entry header in the stream */
	u32 size;			/* bytes the entry takes (padded) */
	u32 name_len;
	u32 value_len;
	u32 value_pos;
	char name[DAXFS_XATTR_NAME_MAX + 1];	/* NUL-terminated */
};

/* Stream bytes an entry takes. */
static inline u32 daxfs_xent_size(u32 name_len, u32 value_len)
{
	return (u32)((sizeof(struct daxfs_xattr_ent) + name_len + value_len +
		      7) & ~7ULL);
}

/* Header bytes of a set with this stream length (inline or paged). */
u32 daxfs_xset_header_bytes(u32 bytes);

/* Checks the header at off (of inode ino) as untrusted input; NULL when
 * valid (filled into *xs), else why not. */
const char *daxfs_xset_load(struct daxfs_fs *fs, u64 off, u64 ino,
			    struct daxfs_xset *xs);
/* Page i of a paged set, validated; 0 when it is not a pool page. */
u64 daxfs_xset_page(const struct daxfs_xset *xs, u32 i);
/* Copies [pos, pos + len) of the stream; -EUCLEAN outside it. */
int daxfs_xset_read(const struct daxfs_xset *xs, u32 pos, void *dst, u32 len);
/* Stores into a set being built (never a published one). */
int daxfs_xset_write(const struct daxfs_xset *xs, u32 pos, const void *src,
		     u32 len);
/* The entry at pos (pos < bytes): 0, or -EUCLEAN when it is not valid. */
int daxfs_xset_entry(const struct daxfs_xset *xs, u32 pos,
		     struct daxfs_xent *e);

#endif /* DAXFS_XATTR_SET_H */
