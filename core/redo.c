// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Strict overwrites out of place (format version 7; docs/modes.md
 * "Strict overwrites out of place", which has the invariants and the
 * crash story).  In short, with the file's write gate closed by us:
 *
 *   1. every block of the range gets a page (what the file shows there:
 *      nothing a reader can tell apart);
 *   2. a redo record (struct daxfs_redo) and fresh log pages: the record
 *      is named by our FILE_WRITE intent (a[6]) before any log page is
 *      listed in it, a page is listed while the lane still holds it;
 *   3. the new bytes go to the log pages; records and log on the media;
 *   4. commit: a[6] |= DAXFS_REDO_COMMITTED, one 8-byte store, drained;
 *   5. the bytes are copied in place and the size moves up (CAS to max);
 *   6. a[6] = 0 (drained), then the record and log pages are freed.
 *
 * a[4] / a[5] of the same intent belong to the page a write is publishing
 * (step 1 publishes pages: daxfs_block_make, docs/recovery.md).
 *
 * Recovery (after a killed host or a power loss) finds a[6]: committed,
 * it replays step 5 (the copy is idempotent: nobody else writes the file
 * while the gate is closed); not committed, it frees what the record
 * lists.  Either way the file shows all of the write or none of it.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "file.h"
#include "filegate.h"
#include "redo.h"

#define BLK		DAXFS_BLOCK_SIZE
#define BLK_LO		((u64)DAXFS_BLOCK_SIZE - 1)
#define LOG_BATCH	64u	/* log pages per allocation */

/* The write a record chain describes, loaded once from its first record
 * and checked. */
struct redo_hdr {
	u64 ino, off, len, done, first, nblk, nrec;
};

static struct daxfs_redo *rec_at(struct daxfs_fs *fs, u64 off)
{
	return off ? daxfs_ptr(fs, off, BLK, BLK) : NULL;
}

static int hdr_load(struct daxfs_fs *fs, u64 roff, u64 ino,
		    struct redo_hdr *h)
{
	struct daxfs_redo *r = rec_at(fs, roff);

	if (!r || daxfs_load(&r->magic) != DAXFS_REDO_MAGIC ||
	    daxfs_load(&r->ino) != ino || daxfs_load32(&r->index))
		return -EUCLEAN;
	h->ino = ino;
	h->off = daxfs_load(&r->off);
	h->len = daxfs_load(&r->len);
	if (!h->len || h->off >= DAXFS_MAX_FILE_SIZE ||
	    h->len > DAXFS_MAX_FILE_SIZE - h->off)
		return -EUCLEAN;
	h->done = daxfs_load(&r->done);
	if (h->done > h->len)
		return -EUCLEAN;
	h->first = h->off >> DAXFS_BLOCK_SHIFT;
	h->nblk = ((h->off + h->len - 1) >> DAXFS_BLOCK_SHIFT) - h->first + 1;
	h->nrec = (h->nblk + DAXFS_REDO_PAGES - 1) / DAXFS_REDO_PAGES;
	return 0;
}

/* Record k of the chain at *roff, checked; *roff becomes its next, *n
 * its count.  NULL when it does not check out. */
static struct daxfs_redo *rec_next(struct daxfs_fs *fs,
				   const struct redo_hdr *h, u64 k, u64 *roff,
				   u32 *n)
{
	struct daxfs_redo *r = rec_at(fs, *roff);
	u64 left;

	if (!r || k >= h->nrec || daxfs_load(&r->magic) != DAXFS_REDO_MAGIC ||
	    daxfs_load(&r->ino) != h->ino || daxfs_load32(&r->index) != k)
		return NULL;
	left = h->nblk - k * DAXFS_REDO_PAGES;
	*n = daxfs_load32(&r->count);
	if (*n > DAXFS_REDO_PAGES || *n > left)
		return NULL;
	*roff = daxfs_load(&r->next);
	return r;
}

/* The bytes of [off, off + n) that fall in block b: [*a, *e). */
static bool blk_part(const struct redo_hdr *h, u64 n, u64 b, u64 *a, u64 *e)
{
	u64 end = h->off + n;

	*a = b << DAXFS_BLOCK_SHIFT;
	*e = *a + BLK;
	if (*a < h->off)
		*a = h->off;
	if (*e > end)
		*e = end;
	return *a < *e;
}

/*
 * Step 5: the logged bytes in place, then the size.  fenced: the writer
 * stops at the fence (recovery replays); a recoverer passes false, and
 * stops when its claim on the slot is lost.
 * Every log page of a committed record checks out (we wrote them), but
 * a record read back after a crash is checked as any region value.
 */
static int redo_apply(struct daxfs_op *op, struct daxfs_inode *ip,
		      const struct redo_hdr *h, u64 roff, bool fenced)
{
	struct daxfs_fs *fs = op->fs;
	u64 k, b, a, e, lp, pg;
	struct daxfs_redo *r;
	u8 *src, *dst;
	u32 i, n;
	int err;

	for (k = 0; k < h->nrec; k++) {
		r = rec_next(fs, h, k, &roff, &n);
		if (!r)
			return -EUCLEAN;
		for (i = 0; i < n; i++) {
			b = h->first + k * DAXFS_REDO_PAGES + i;
			if (!blk_part(h, h->done, b, &a, &e))
				continue;
			lp = daxfs_load(&r->page[i]);
			src = daxfs_ptr(fs, lp, BLK, BLK);
			err = daxfs_radix_get(fs, ip, b, &pg);
			if (err)
				return err;
			dst = pg ? daxfs_ptr(fs, pg, BLK, BLK) : NULL;
			if (!src)
				return -EUCLEAN;
			/* no page: the file was dropped meanwhile (its last
			 * link went), nothing to show the bytes to */
			if (!dst)
				continue;
			/* a recoverer overtaken: the record may be a new
			 * host's by now, applied and freed by it */
			if (fenced ? daxfs_fenced(op) : daxfs_recovery_lost(op))
				return -ESTALE;
			/* step 1 cleared it; a replay makes sure */
			err = daxfs_radix_written(op, ip, b, pg);
			if (err)
				return err;
			err = daxfs_copy_data(fs, dst + (a & BLK_LO),
					      src + (a & BLK_LO), e - a);
			if (err)
				return err;
			pflush(fs, dst + (a & BLK_LO), e - a);
		}
	}
	pdrain(fs);
	daxfs_size_max(fs, ip, h->off + h->done);
	pdrain(fs);
	return 0;
}

/* Whether page p lies in the run the lane holds (v: its hold word). */
static bool in_hold(u64 v, u64 p)
{
	u64 first = v & ~BLK_LO, n = (v & BLK_LO) + 1;

	return v && p >= first && p < first + n * BLK;
}

/*
 * Frees the chain at roff and the log pages it lists.  free_fn: the
 * writer's daxfs_free_now or recovery's daxfs_free_obj; a page still in
 * the held run hold is skipped (whoever frees the run frees it).
 */
static void redo_free(struct daxfs_op *op, const struct redo_hdr *h,
		      u64 roff, u64 hold, bool recovery)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_redo *r;
	u64 k, p, cur;
	u32 i, n;

	for (k = 0; k < h->nrec && roff; k++) {
		cur = roff;
		r = rec_next(fs, h, k, &roff, &n);
		if (!r)
			return;		/* the rest leaks to fsck */
		for (i = 0; i <= n; i++) {
			p = i < n ? daxfs_load(&r->page[i]) : cur;
			if (i == n)
				daxfs_store(&r->magic, 0);
			if (in_hold(hold, p) ||
			    !daxfs_ptr(fs, p, BLK, BLK))
				continue;
			if (recovery)
				daxfs_free_obj(fs, p, DAXFS_CLASS_PAGE);
			else if (daxfs_free_now(op, p, DAXFS_CLASS_PAGE))
				return;	/* fenced: the rest leaks (fsck) */
		}
	}
}

/* One fresh page, held by the lane (*p), or -ENOSPC. */
static int page_held(struct daxfs_op *op, u64 *p)
{
	if (!daxfs_alloc_pages(op, 1, p))
		return -ENOSPC;
	return daxfs_hold_pages(op, *p, 1);
}

/* Lists up to n fresh log pages in record r (count grows); the pages are
 * held by the lane until the count that lists them is on the media. */
static int log_grow(struct daxfs_op *op, struct daxfs_redo *r, u32 n)
{
	struct daxfs_fs *fs = op->fs;
	u64 offs[LOG_BATCH];
	u32 got, nb, cnt = daxfs_load32(&r->count), i;

	if (n > LOG_BATCH)
		n = LOG_BATCH;
	got = daxfs_alloc_pages(op, n, offs);
	if (!got)
		return -ENOSPC;
	/* the lane names one contiguous run: keep the head, free the rest */
	for (nb = 1; nb < got && offs[nb] == offs[0] + nb * BLK; nb++)
		;
	while (got > nb)
		if (daxfs_free_now(op, offs[--got], DAXFS_CLASS_PAGE))
			return -ESTALE;
	if (daxfs_hold_pages(op, offs[0], nb))
		return -ESTALE;
	for (i = 0; i < nb; i++)
		daxfs_store(&r->page[cnt + i], offs[i]);
	pflush(fs, &r->page[cnt], (u64)nb * 8);
	pdrain(fs);
	daxfs_store32(&r->count, cnt + nb);
	pflush(fs, &r->count, 4);
	pdrain(fs);
	return daxfs_hold_pages(op, 0, 0);
}

/*
 * Step 2: the record chain for h and its log pages; *rec = the first
 * record (a[6] of our intent names it from before any page is listed).
 */
static int redo_build(struct daxfs_op *op, const struct redo_hdr *h,
		      u64 *rec)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_redo *r, *prev = NULL;
	u64 k, rp, want;
	int err;

	*rec = 0;
	for (k = 0; k < h->nrec; k++) {
		err = page_held(op, &rp);
		if (err)
			return err;
		r = rec_at(fs, rp);
		if (!r)
			return -EUCLEAN;
		daxfs_store(&r->ino, h->ino);
		daxfs_store(&r->off, h->off);
		daxfs_store(&r->len, h->len);
		daxfs_store(&r->next, 0);
		daxfs_store(&r->done, 0);
		daxfs_store32(&r->index, (u32)k);
		daxfs_store32(&r->count, 0);
		daxfs_store(&r->magic, DAXFS_REDO_MAGIC);
		pflush(fs, r, 64);
		/* the header on the media before anything names the page */
		pdrain(fs);
		if (prev) {
			daxfs_store(&prev->next, rp);
			pflush(fs, &prev->next, 8);
		} else {
			if (daxfs_intent_arg(op, DAXFS_REDO_WORD, rp))
				return -ESTALE;
			pflush(fs, &op->lane->intent.a[DAXFS_REDO_WORD], 8);
			*rec = rp;
		}
		pdrain(fs);
		if (daxfs_hold_pages(op, 0, 0))
			return -ESTALE;
		want = h->nblk - k * DAXFS_REDO_PAGES;
		if (want > DAXFS_REDO_PAGES)
			want = DAXFS_REDO_PAGES;
		while (daxfs_load32(&r->count) < want) {
			err = log_grow(op, r, (u32)(want -
						daxfs_load32(&r->count)));
			if (err)
				return err;
		}
		prev = r;
	}
	return 0;
}

/* Step 3: the caller's bytes into the log pages; the bytes copied. */
static u64 redo_fill(struct daxfs_op *op, const struct redo_hdr *h, u64 roff,
		     daxfs_write_actor_t actor, void *ctx, int *err)
{
	struct daxfs_fs *fs = op->fs;
	u64 k, b, a, e, c, done = 0;
	struct daxfs_redo *r;
	u32 i, n;
	u8 *lp;

	for (k = 0; k < h->nrec; k++) {
		r = rec_next(fs, h, k, &roff, &n);
		if (!r) {
			*err = -EUCLEAN;
			return done;
		}
		for (i = 0; i < n; i++) {
			b = h->first + k * DAXFS_REDO_PAGES + i;
			if (!blk_part(h, h->len, b, &a, &e))
				continue;
			lp = daxfs_ptr(fs, daxfs_load(&r->page[i]), BLK, BLK);
			if (!lp) {
				*err = -EUCLEAN;
				return done;
			}
			c = daxfs_copy_fenced(op, actor, ctx, lp + (a & BLK_LO),
					      a, e, err);
			pflush(fs, lp + (a & BLK_LO), c);
			done += c;
			if (*err || c < e - a)
				return done;
		}
	}
	return done;
}

/* Step 1: a page for every block of the range. */
static int pages_make(struct daxfs_op *op, const struct fview *v,
		      const struct redo_hdr *h)
{
	u64 b, pg;
	int err;

	for (b = h->first; b < h->first + h->nblk; b++) {
		err = daxfs_radix_get(op->fs, v->ip, b, &pg);
		if (!err && !pg)
			err = daxfs_block_make(op, v, b, false, &pg);
		else if (!err)
			/* before the commit: a replay stores into it */
			err = daxfs_radix_written(op, v->ip, b, pg);
		if (err)
			return err;
	}
	return 0;
}

/* Step 6 (also after a failure before the commit): the intent names no
 * record any more, on the media, before its pages can be reused. */
static void redo_drop(struct daxfs_op *op, const struct redo_hdr *h, u64 rec)
{
	if (!rec || daxfs_intent_arg(op, DAXFS_REDO_WORD, 0))
		return;
	pflush(op->fs, &op->lane->intent.a[DAXFS_REDO_WORD], 8);
	pdrain(op->fs);
	redo_free(op, h, rec, 0, false);
}

s64 daxfs_redo_write(struct daxfs_op *op, const struct fview *v, u64 ino,
		     u64 off, u64 len, daxfs_write_actor_t actor, void *ctx)
{
	struct daxfs_fs *fs = op->fs;
	struct redo_hdr h;
	struct daxfs_redo *r;
	u64 rec = 0, done;
	int err;

	if (!op->lane)
		return -EROFS;
	h.ino = ino;
	h.off = off;
	h.len = len;
	h.first = off >> DAXFS_BLOCK_SHIFT;
	h.nblk = ((off + len - 1) >> DAXFS_BLOCK_SHIFT) - h.first + 1;
	h.nrec = (h.nblk + DAXFS_REDO_PAGES - 1) / DAXFS_REDO_PAGES;
	err = pages_make(op, v, &h);
	if (!err)
		err = redo_build(op, &h, &rec);
	if (err == -ESTALE)
		return err;
	if (err) {
		redo_drop(op, &h, rec);
		return err;
	}
	daxfs_crash_point("strict.logged");
	done = redo_fill(op, &h, rec, actor, ctx, &err);
	if (err == -ESTALE)
		return err;
	if (!done || err == -EUCLEAN) {
		redo_drop(op, &h, rec);
		return err;
	}
	/* a faulting source: the prefix is the write */
	r = rec_at(fs, rec);
	daxfs_store(&r->done, done);
	pflush(fs, &r->done, 8);
	h.done = done;
	/* step 4: every record and log page on the media, then the commit;
	 * the closed gate too, so that readers after a power loss wait for
	 * the replay (docs/modes.md) */
	daxfs_gate_persist(fs, v->ip);
	pdrain(fs);
	if (daxfs_intent_arg(op, DAXFS_REDO_WORD, rec | DAXFS_REDO_COMMITTED))
		return -ESTALE;
	pflush(fs, &op->lane->intent.a[DAXFS_REDO_WORD], 8);
	pdrain(fs);
	daxfs_crash_point("strict.committed");
	daxfs_race_point("strict.committed", op->lane);
	err = redo_apply(op, v->ip, &h, rec, true);
	if (err == -ESTALE)
		return err;
	daxfs_crash_point("strict.applied");
	redo_drop(op, &h, rec);
	return err ? err : (s64)done;
}

void daxfs_redo_recover(struct daxfs_op *op, struct daxfs_lane *lane,
			struct daxfs_inode *ip)
{
	struct daxfs_intent *in = &lane->intent;
	u64 word = daxfs_load(&in->a[DAXFS_REDO_WORD]);
	u64 rec = word & ~BLK_LO;
	u64 ino = daxfs_load(&in->a[0]);
	u64 hold = daxfs_load(&lane->pad[DAXFS_LANE_HOLD_PAGES]);
	struct redo_hdr h;

	/* our claim on the slot checked before each act: one overtaken
	 * may have read a new host's record, which that host applies and
	 * frees itself (docs/recovery.md "Lane recoveries of an
	 * overtaken recoverer") */
	if (!rec || (word & BLK_LO & ~DAXFS_REDO_COMMITTED) ||
	    daxfs_recovery_lost(op) || hdr_load(op->fs, rec, ino, &h))
		return;		/* none, or garbage: fsck reports it */
	if (ip && h.done && (word & DAXFS_REDO_COMMITTED) &&
	    redo_apply(op, ip, &h, rec, false))
		return;		/* a chain that does not check out: fsck */
	/* claim the record (a second recoverer finds none), then free */
	if (daxfs_recovery_lost(op) ||
	    !daxfs_cas(&in->a[DAXFS_REDO_WORD], &word, 0))
		return;
	pflush(op->fs, &in->a[DAXFS_REDO_WORD], 8);
	pdrain(op->fs);
	redo_free(op, &h, rec, hold, true);
}

s64 daxfs_redo_each_page(struct daxfs_fs *fs, struct daxfs_lane *lane,
			 void (*fn)(void *ctx, u64 page), void *ctx)
{
	struct daxfs_intent *in = &lane->intent;
	u64 word, rec, roff, k, p, pages = 0;
	struct daxfs_redo *r;
	struct redo_hdr h;
	u32 i, n;

	if (daxfs_load(&in->op) != DAXFS_INTENT_FILE_WRITE)
		return 0;
	word = daxfs_load(&in->a[DAXFS_REDO_WORD]);
	rec = word & ~BLK_LO;
	if (!word)
		return 0;
	if (!rec || (word & BLK_LO & ~DAXFS_REDO_COMMITTED) ||
	    hdr_load(fs, rec, daxfs_load(&in->a[0]), &h))
		return -EUCLEAN;
	roff = rec;
	for (k = 0; k < h.nrec && roff; k++) {
		u64 cur = roff;

		r = rec_next(fs, &h, k, &roff, &n);
		if (!r)
			return -EUCLEAN;
		fn(ctx, cur);
		pages++;
		for (i = 0; i < n; i++) {
			p = daxfs_load(&r->page[i]);
			if (!daxfs_ptr(fs, p, BLK, BLK))
				return -EUCLEAN;
			fn(ctx, p);
			pages++;
		}
	}
	return (s64)pages;
}
