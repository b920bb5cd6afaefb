// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Reading and writing the entry stream of an xattr set (format.h,
 * docs/xattr.md "Layout").  Every word of the header is loaded once and
 * checked before use; a page offset is checked each time it is loaded.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "xattr-set.h"

#define HDR	((u32)sizeof(struct daxfs_xattr_set))

u32 daxfs_xset_header_bytes(u32 bytes)
{
	if (bytes <= DAXFS_XATTR_INLINE_MAX)
		return HDR + bytes;
	return HDR + 8 * (u32)((bytes + DAXFS_PAGE_SIZE - 1) / DAXFS_PAGE_SIZE);
}

const char *daxfs_xset_load(struct daxfs_fs *fs, u64 off, u64 ino,
			    struct daxfs_xset *xs)
{
	struct daxfs_xattr_set *h = daxfs_ptr(fs, off, HDR, DAXFS_OFF_ALIGN);
	u32 want_pages, hbytes;
	int class;

	if (!h)
		return "xattr set pointer outside the pool or misaligned";
	if (daxfs_load32(&h->magic) != DAXFS_XATTR_MAGIC)
		return "xattr set has a bad magic number";
	if (daxfs_load(&h->ino) != ino)
		return "xattr set belongs to another inode";
	xs->fs = fs;
	xs->h = h;
	xs->off = off;
	xs->count = daxfs_load32(&h->count);
	xs->bytes = daxfs_load32(&h->bytes);
	xs->nr_pages = daxfs_load32(&h->nr_pages);
	if (!xs->bytes || xs->bytes > DAXFS_XATTR_STREAM_MAX || !xs->count ||
	    xs->count > xs->bytes / 16 || (xs->bytes & 7))
		return "xattr set length or count invalid";
	want_pages = xs->bytes <= DAXFS_XATTR_INLINE_MAX ? 0 :
		(u32)((xs->bytes + DAXFS_PAGE_SIZE - 1) / DAXFS_PAGE_SIZE);
	if (xs->nr_pages != want_pages)
		return "xattr set page count invalid";
	hbytes = daxfs_xset_header_bytes(xs->bytes);
	class = daxfs_size_class(hbytes);
	if (class < 0 || !daxfs_ptr(fs, off, hbytes, DAXFS_OFF_ALIGN))
		return "xattr set runs outside the pool";
	xs->class = (unsigned int)class;
	return NULL;
}

u64 daxfs_xset_page(const struct daxfs_xset *xs, u32 i)
{
	u64 p;

	if (i >= xs->nr_pages)
		return 0;
	p = daxfs_load(&xs->h->page[i]);
	return daxfs_ptr(xs->fs, p, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE) ? p : 0;
}

/* The region bytes behind stream position pos, and how many follow
 * contiguously (at most len); NULL when not valid. */
static u8 *xset_at(const struct daxfs_xset *xs, u32 pos, u32 len, u32 *run)
{
	u32 in;
	u64 p;

	if (!xs->nr_pages) {
		*run = len;
		return (u8 *)xs->h + HDR + pos;
	}
	p = daxfs_xset_page(xs, (u32)(pos / DAXFS_PAGE_SIZE));
	if (!p)
		return NULL;
	in = (u32)(pos % DAXFS_PAGE_SIZE);
	*run = len < DAXFS_PAGE_SIZE - in ? len : (u32)(DAXFS_PAGE_SIZE - in);
	return xs->fs->base + p + in;
}

int daxfs_xset_read(const struct daxfs_xset *xs, u32 pos, void *dst, u32 len)
{
	u8 *d = dst, *s;
	u32 run;

	if (pos > xs->bytes || len > xs->bytes - pos)
		return -EUCLEAN;
	while (len) {
		s = xset_at(xs, pos, len, &run);
		if (!s)
			return -EUCLEAN;
		memcpy(d, s, run);
		d += run;
		pos += run;
		len -= run;
	}
	return 0;
}

int daxfs_xset_write(const struct daxfs_xset *xs, u32 pos, const void *src,
		     u32 len)
{
	const u8 *s = src;
	u8 *d;
	u32 run;

	if (pos > xs->bytes || len > xs->bytes - pos)
		return -EUCLEAN;
	while (len) {
		d = xset_at(xs, pos, len, &run);
		if (!d)
			return -EUCLEAN;
		memcpy(d, s, run);
		s += run;
		pos += run;
		len -= run;
	}
	return 0;
}

int daxfs_xset_entry(const struct daxfs_xset *xs, u32 pos,
		     struct daxfs_xent *e)
{
	struct daxfs_xattr_ent h;

	if (daxfs_xset_read(xs, pos, &h, sizeof(h)))
		return -EUCLEAN;
	if (!h.name_len || h.value_len > DAXFS_XATTR_SIZE_MAX)
		return -EUCLEAN;
	e->pos = pos;
	e->name_len = h.name_len;
	e->value_len = h.value_len;
	e->value_pos = pos + (u32)sizeof(h) + h.name_len;
	e->size = daxfs_xent_size(h.name_len, h.value_len);
	if (e->size > xs->bytes - pos)
		return -EUCLEAN;
	if (daxfs_xset_read(xs, pos + (u32)sizeof(h), e->name, h.name_len))
		return -EUCLEAN;
	e->name[h.name_len] = 0;
	return 0;
}
