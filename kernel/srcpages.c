// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: an append's source pages, held for its copy.
 *
 * The core copies a user buffer inside an op with page faults disabled
 * (docs/kernel.md "User buffers").  A page that goes between the fault-in
 * and the copy (reclaim, migration, another thread's MADV_DONTNEED or
 * munmap) stops the copy short.  For a positional write that is harmless:
 * the next op goes on at the next byte.  An append has reserved its whole
 * range by then; the part it did not copy stays zero (giving it back could
 * cut another host's write that ended there), and the next op would append
 * after it: a zero gap inside one write(2) that returned its full count.
 *
 * So an append copies from its source pages held with a reference
 * (iov_iter_get_pages2, outside any claim: it may fault and sleep) through
 * a bvec iterator, which cannot fault: one op, one range, whole.  A page
 * with no struct page to hold (a mapping of region pages, of a device)
 * cannot be taken that way: from such a page on, the bytes are copied
 * into a kernel buffer first (faults allowed, no claim held), up to
 * DAXFS_SRC_BOUNCE at a time.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/bvec.h>
#include "daxfs_k.h"

/* The first page could not be held: up to len bytes copied instead. */
static ssize_t daxfs_src_bounce(struct daxfs_src_pages *src, struct iov_iter *from,
				size_t len)
{
	size_t got;

	src->bounce = kvmalloc(len, GFP_KERNEL);
	if (!src->bounce)
		return -ENOMEM;
	got = copy_from_iter(src->bounce, len, from);
	if (!got) {
		kvfree(src->bounce);
		src->bounce = NULL;
		return -EFAULT;		/* a bad address */
	}
	src->kv.iov_base = src->bounce;
	src->kv.iov_len = got;
	iov_iter_kvec(&src->iter, ITER_SOURCE, &src->kv, 1, got);
	return got;
}

/*
 * Takes up to max bytes from the front of from (which it advances), and
 * makes src->iter iterate over their pages (or over a copy of them).  The
 * bytes taken; -EFAULT for a bad address at the front, -ENOMEM.
 */
ssize_t daxfs_src_hold(struct daxfs_src_pages *src, struct iov_iter *from, size_t max)
{
	size_t want = min(iov_iter_count(from), max), taken = 0, start, left, l;
	unsigned int np = iov_iter_npages(from, DIV_ROUND_UP(max, PAGE_SIZE) + 1);
	struct page **pages;
	ssize_t got;
	unsigned int i;

	src->nr = 0;
	src->bounce = NULL;
	pages = kvmalloc_array(np, sizeof(*pages), GFP_KERNEL);
	src->bv = kvmalloc_array(np, sizeof(*src->bv), GFP_KERNEL);
	if (!pages || !src->bv) {
		kvfree(pages);
		kvfree(src->bv);
		return -ENOMEM;
	}
	/* one segment of an iovec per call: gather them into one range */
	while (taken < want && src->nr < np) {
		got = iov_iter_get_pages2(from, pages, want - taken, np - src->nr, &start);
		if (got <= 0)
			break;
		for (i = 0, left = got; left; i++, left -= l, start = 0) {
			l = min_t(size_t, left, PAGE_SIZE - start);
			src->bv[src->nr].bv_page = pages[i];
			src->bv[src->nr].bv_len = l;
			src->bv[src->nr].bv_offset = start;
			src->nr++;
		}
		taken += got;
	}
	kvfree(pages);
	if (!taken) {
		kvfree(src->bv);
		src->bv = NULL;
		return daxfs_src_bounce(src, from, min_t(size_t, want, DAXFS_SRC_BOUNCE));
	}
	iov_iter_bvec(&src->iter, ITER_SOURCE, src->bv, src->nr, taken);
	return taken;
}

/* Drops the pages; what the write did not copy goes back to from. */
void daxfs_src_release(struct daxfs_src_pages *src, struct iov_iter *from)
{
	unsigned int i;

	iov_iter_revert(from, iov_iter_count(&src->iter));
	for (i = 0; i < src->nr; i++)
		put_page(src->bv[i].bv_page);
	kvfree(src->bv);
	kvfree(src->bounce);
}
