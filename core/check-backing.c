// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Checker, backing part: a split-mode region's descriptor of each backing
 * file (docs/pcache.md "The header") against the file's own header.
 *
 * No word of a descriptor derives from the superblock, so the header's
 * checksum repair (daxfs_check_pcache_fixup) keeps whatever a stray store
 * left there; a mount then refuses the right file as "not one of this
 * filesystem's backing files".  Given the file, the checker can tell.
 * A file whose checksummed header matches all but one word of the
 * descriptor is its file (one stray store), and so is one that matches
 * either half of the random 16-byte id: another file shares 64 random
 * bits with probability 2^-64.  The words that differ are put back.  A
 * file that passes neither test is somebody else's, or the descriptor
 * took more stores than can be told apart from that, and nothing changes.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "check.h"
#include "pcache.h"

/* The words of a descriptor that identify a file: size, the two halves
 * of the id, and the header checksum (with the reserved word beside it,
 * which is zero). */
#define BK_WORDS 4
DAXFS_STATIC_ASSERT(__builtin_offsetof(struct daxfs_backing_desc, name) ==
		    BK_WORDS * 8);

static void bk_words(u64 w[BK_WORDS], const struct daxfs_backing_desc *d)
{
	/* from the descriptor as a whole: the last word spans two fields */
	memcpy(w, (const u8 *)d, BK_WORDS * 8);
}

static bool bk_header_sound(const struct daxfs_backing_header *bh,
			    u64 file_size)
{
	return bh->magic == DAXFS_BACKING_MAGIC &&
	       bh->header_size == sizeof(*bh) &&
	       bh->csum == daxfs_crc32c(0, bh, __builtin_offsetof(
					struct daxfs_backing_header, csum)) &&
	       bh->data_off == DAXFS_BACKING_DATA_OFF &&
	       bh->index < DAXFS_PCACHE_MAX_BACKING && bh->size == file_size;
}

int daxfs_check_backing_desc(void *base, u64 size,
			     const struct daxfs_backing_header *bh,
			     u64 file_size, bool repair,
			     daxfs_check_report_t report, void *ctx)
{
	static const char *const msgs[BK_WORDS] = {
		"backing file descriptor's size differs from the file's header",
		"backing file descriptor's id differs from the file's header",
		"backing file descriptor's id differs from the file's header",
		"backing file descriptor's header checksum differs from the file's",
	};
	struct daxfs_check_problem p = {
		.severity = DAXFS_CHK_ERROR, .code = DAXFS_CHK_PCACHE,
		.name = "pcache", .repaired = repair,
	};
	const struct daxfs_super *sb = base;
	struct daxfs_pcache_header *h;
	struct daxfs_backing_desc want, *d;
	u64 have_w[BK_WORDS], want_w[BK_WORDS];
	unsigned int i, nr_odd = 0;
	bool csum_ok;

	if (daxfs_check_super(base, size, NULL, NULL))
		return -EUCLEAN;
	if (!(sb->feat_incompat & DAXFS_FEAT_INCOMPAT_PCACHE))
		return -EOPNOTSUPP;
	if (sb->regions[DAXFS_RGN_PCACHE].size < sizeof(*h))
		return -EUCLEAN;
	if (!bk_header_sound(bh, file_size))
		return -EMEDIUMTYPE;
	h = (struct daxfs_pcache_header *)((u8 *)base +
					   sb->regions[DAXFS_RGN_PCACHE].offset);
	d = &h->backing[bh->index];
	want = *d;
	want.size = bh->size;
	memcpy(want.id, bh->id, sizeof(want.id));
	want.hdr_csum = bh->csum;
	want.reserved = 0;
	bk_words(have_w, d);
	bk_words(want_w, &want);
	for (i = 0; i < BK_WORDS; i++)
		nr_odd += have_w[i] != want_w[i];
	if (!nr_odd)
		return 0;
	if (nr_odd > 1 && have_w[1] != want_w[1] && have_w[2] != want_w[2])
		return -EMEDIUMTYPE;
	for (i = 0; i < BK_WORDS && report; i++) {
		if (have_w[i] == want_w[i])
			continue;
		p.msg = msgs[i];
		p.off = sb->regions[DAXFS_RGN_PCACHE].offset +
			((u8 *)d - (u8 *)h) + 8 * i;
		p.have = have_w[i];
		p.want = want_w[i];
		report(ctx, &p);
	}
	if (!repair)
		return nr_odd;
	/* a header that was sound stays sound; one that was not is left
	 * to daxfs_check_pcache_fixup, which judges its other words */
	csum_ok = h->csum == daxfs_pcache_header_csum(h);
	*d = want;
	if (csum_ok)
		h->csum = daxfs_pcache_header_csum(h);
	daxfs_flush(h, sizeof(*h));
	daxfs_drain();
	return nr_odd;
}
