// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Shared page cache (split mode).  docs/pcache.md has the protocol, the
 * invariants and the crash story; in short:
 *
 * - A slot is FREE, PENDING (owned by a host that fills it), VALID, or
 *   EVICTING (owned by a host checking that nobody pins it).  Every claim
 *   carries its owner (host slot + generation) in the state word, so a
 *   survivor can tell a dead owner and take the claim over.
 * - A tag (backing file, backing page) is looked up in a window of W
 *   slots starting at hash(tag).  A claimer writes its tag, then rescans
 *   the window: if it sees the same tag anywhere else it backs off, so
 *   two claimers can never both fill one page.
 * - Pins are per-host byte counters (slot x host matrix), so the pins of
 *   a dead host are exactly its column: zeroing the column releases them
 *   all, and nothing else drifts.  A column is owned (pin_owner word) by
 *   one host generation; a successor or any evictor that meets pins of a
 *   dead host cleans the column.
 * - Eviction is MH-clock: victims are chosen in the probe window (cold,
 *   then after clearing reference bits, then any unpinned page) and a
 *   shared hand clears reference bits 64 slots at a time.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "base.h"
#include "file.h"
#include "pcache.h"

#define BLK		((u64)DAXFS_BLOCK_SIZE)
#define SWEEP_CHUNK	64u
#define SPIN_ROUNDS	64u
#define MAX_ITERS	100000000u	/* hard bound besides the deadline */

/* ------------------------------------------------------------------ */
/* state word helpers */

static inline u32 pc_st(u64 w)
{
	return (u32)(w & DAXFS_PC_STATE_MASK);
}

static inline u64 pc_seq(u64 w)
{
	return (w >> DAXFS_PC_SEQ_SHIFT) & DAXFS_PC_SEQ_MASK;
}

static inline u32 pc_owner(u64 w)
{
	return (u32)((w >> DAXFS_PC_OWNER_SHIFT) & DAXFS_PC_OWNER_MASK);
}

static inline u64 pc_ogen(u64 w)
{
	return (w >> DAXFS_PC_OGEN_SHIFT) & DAXFS_PC_OGEN_MASK;
}

static inline u64 pc_word(u32 st, u64 seq, u64 owner_bits, u64 flags)
{
	return ((seq & DAXFS_PC_SEQ_MASK) << DAXFS_PC_SEQ_SHIFT) | owner_bits |
	       flags | st;
}

/* Owner bits naming this host (its slot and generation). */
static inline u64 my_owner_bits(struct daxfs_fs *fs)
{
	return ((u64)(fs->host + 1) << DAXFS_PC_OWNER_SHIFT) |
	       ((fs->host_gen & DAXFS_PC_OGEN_MASK) << DAXFS_PC_OGEN_SHIFT);
}

static inline bool owned_by_me(struct daxfs_fs *fs, u64 w)
{
	return (w & ((DAXFS_PC_OWNER_MASK << DAXFS_PC_OWNER_SHIFT) |
		     (DAXFS_PC_OGEN_MASK << DAXFS_PC_OGEN_SHIFT))) ==
	       my_owner_bits(fs);
}

static inline u64 mk_tag(u32 idx, u64 pgno)
{
	return ((u64)(idx + 1) << DAXFS_PC_TAG_IDX_SHIFT) | pgno;
}

static inline u32 tag_idx(u64 tag)
{
	return (u32)(tag >> DAXFS_PC_TAG_IDX_SHIFT) - 1;
}

static inline u64 tag_pg(u64 tag)
{
	return tag & DAXFS_PC_TAG_PG_MASK;
}

static inline u64 *st_word(struct daxfs_fs *fs, u64 i)
{
	return &fs->pc.slots[i].state;
}

static inline u64 *tag_word(struct daxfs_fs *fs, u64 i)
{
	return &fs->pc.slots[i].tag;
}

static inline u8 *slot_data(struct daxfs_fs *fs, u64 i)
{
	return fs->pc.data + i * BLK;
}

static inline u64 *pin_row(struct daxfs_fs *fs, u64 i)
{
	return (u64 *)(void *)(fs->pc.pins + i * fs->pc.pin_stride);
}

/* Start of the probe window of tag: a real hash, scaled to nr_slots. */
static u64 home_of(struct daxfs_fs *fs, u64 tag)
{
	u64 h = daxfs_mix64(tag ^ 0x9e3779b97f4a7c15ULL);

	return (u64)(((unsigned __int128)h * fs->pc.nr_slots) >> 64);
}

static inline u64 wslot(struct daxfs_fs *fs, u64 home, u32 k)
{
	u64 i = home + k;

	return i >= fs->pc.nr_slots ? i - fs->pc.nr_slots : i;
}

/* A local bound, on the monotonic clock: a wall clock stepped back by an
 * hour (settimeofday, NTP) left a wait for a dead filler to MAX_ITERS,
 * and one stepped forward ended a wait at once. */
static u64 deadline_ns(struct daxfs_fs *fs)
{
	u64 ms = fs->pc.timeout_ms ? fs->pc.timeout_ms : 2ULL * fs->lease_ms;

	return (u64)daxfs_mono_ns() + ms * 1000000ULL;
}

/* Waiting for another host: spin a little, then yield, then sleep (when
 * the host gave us a way to) so that long waits burn no CPU. */
static void backoff_fs(struct daxfs_fs *fs, u32 iter)
{
	if (iter < SPIN_ROUNDS)
		daxfs_cpu_relax();
	else if (iter < 4 * SPIN_ROUNDS || !fs->pc.ops || !fs->pc.ops->sleep)
		daxfs_yield();
	else
		fs->pc.ops->sleep(fs->pc.ctx, iter < 16 * SPIN_ROUNDS ? 50 : 500);
}

static void backoff(u32 iter)
{
	if (iter < SPIN_ROUNDS)
		daxfs_cpu_relax();
	else
		daxfs_yield();
}

static void pflush(struct daxfs_fs *fs, const void *p, u64 len)
{
	if (fs->flags & DAXFS_FS_PERSISTENT) {
		daxfs_flush(p, len);
		daxfs_drain();
	}
}

/* ------------------------------------------------------------------ */
/* format and open */

static u64 align_up(u64 x)
{
	return (x + BLK - 1) & ~(BLK - 1);
}

u32 daxfs_pcache_header_csum(const struct daxfs_pcache_header *h)
{
	return daxfs_crc32c(0, h, __builtin_offsetof(struct daxfs_pcache_header,
						      csum));
}

/* Slot count and offsets for a region of size bytes. */
/* Where things go in a cache region: a function of its size alone. */
struct pc_geom {
	u64 nr_slots, owner_off, meta_off, pins_off, data_off;
	u32 pin_stride;
};

static int pc_layout(u64 size, u32 max_hosts, struct pc_geom *h)
{
	u64 stride = (max_hosts + 7u) & ~7u;
	u64 owner_sz = align_up((u64)max_hosts * 8);
	u64 fixed = BLK + owner_sz, avail, n;

	if (size < fixed + 3 * BLK)
		return -ENOSPC;
	avail = size - fixed;
	n = avail / (BLK + sizeof(struct daxfs_pcache_slot) + stride);
	while (n && align_up(n * sizeof(struct daxfs_pcache_slot)) +
		    align_up(n * stride) + n * BLK > avail)
		n--;
	if (!n)
		return -ENOSPC;
	h->nr_slots = n;
	h->pin_stride = (u32)stride;
	h->owner_off = BLK;
	h->meta_off = fixed;
	h->pins_off = h->meta_off + align_up(n * sizeof(struct daxfs_pcache_slot));
	h->data_off = h->pins_off + align_up(n * stride);
	return 0;
}

/* Every header word but the backing descriptors, and the checksum.
 * window 0: the default; either at most nr_slots. */
static void pc_header_fill(struct daxfs_pcache_header *h,
			   const struct pc_geom *g, u32 max_hosts, u32 window,
			   u32 nr_backing)
{
	h->magic = DAXFS_PCACHE_MAGIC;
	h->version = DAXFS_PCACHE_VERSION;
	h->header_size = sizeof(*h);
	h->nr_slots = g->nr_slots;
	h->pin_stride = g->pin_stride;
	h->owner_off = g->owner_off;
	h->meta_off = g->meta_off;
	h->pins_off = g->pins_off;
	h->data_off = g->data_off;
	h->window = window ? window : DAXFS_PCACHE_DEFAULT_WINDOW;
	if (h->window > g->nr_slots)
		h->window = (u32)g->nr_slots;
	h->nr_backing = nr_backing;
	h->max_hosts = max_hosts;
	h->csum = daxfs_pcache_header_csum(h);
}

int daxfs_pcache_header_derive(const struct daxfs_super *sb,
			       const struct daxfs_pcache_header *h,
			       struct daxfs_pcache_header *want)
{
	const struct daxfs_region_desc *rd = &sb->regions[DAXFS_RGN_PCACHE];
	struct pc_geom g;
	u32 n = h->nr_backing;

	if (rd->kind != DAXFS_RGN_PCACHE ||
	    pc_layout(rd->size, sb->max_hosts, &g))
		return -EUCLEAN;
	*want = *h;
	memset(want->reserved, 0, sizeof(want->reserved));
	want->pad = 0;
	/* mkfs fills the descriptors in order: a count the format cannot
	 * hold is the ones that name a file */
	if (n > DAXFS_PCACHE_MAX_BACKING)
		for (n = 0; n < DAXFS_PCACHE_MAX_BACKING && h->backing[n].size; n++)
			;
	pc_header_fill(want, &g, sb->max_hosts,
		       h->window <= g.nr_slots ? h->window : 0, n);
	return 0;
}

int daxfs_pcache_format(u8 *base, const struct daxfs_super *sb,
			const struct daxfs_format_opts *o)
{
	const struct daxfs_region_desc *rd = &sb->regions[DAXFS_RGN_PCACHE];
	struct daxfs_pcache_header h;
	struct pc_geom g;
	u8 *r = base + rd->offset;
	u32 i;
	int err;

	if (rd->kind != DAXFS_RGN_PCACHE || !rd->size)
		return -EINVAL;
	if (o->nr_backing > DAXFS_PCACHE_MAX_BACKING ||
	    (o->nr_backing && !o->backing))
		return -EINVAL;
	err = pc_layout(rd->size, sb->max_hosts, &g);
	if (err)
		return err;
	memset(&h, 0, sizeof(h));
	for (i = 0; i < o->nr_backing; i++)
		h.backing[i] = o->backing[i];
	pc_header_fill(&h, &g, sb->max_hosts, o->pcache_window, o->nr_backing);
	/* header page, owners, slot metadata and pins: all zero = FREE */
	memset(r, 0, h.data_off);
	memcpy(r, &h, sizeof(h));
	daxfs_flush(r, h.data_off);
	daxfs_drain();
	return 0;
}

int daxfs_pcache_open(struct daxfs_fs *fs)
{
	const struct daxfs_region_desc *rd = &fs->sb.regions[DAXFS_RGN_PCACHE];
	struct daxfs_pcache_header h;
	struct pc_geom want;
	struct daxfs_pcache_view *pc = &fs->pc;
	u8 *r;

	memset(pc, 0, sizeof(*pc));
	if (rd->kind != DAXFS_RGN_PCACHE || rd->size < BLK)
		return -EUCLEAN;
	r = fs->base + rd->offset;
	memcpy(&h, r, sizeof(h));
	if (h.magic != DAXFS_PCACHE_MAGIC || h.version != DAXFS_PCACHE_VERSION ||
	    h.header_size != sizeof(h) || h.csum != daxfs_pcache_header_csum(&h))
		return -EUCLEAN;
	if (h.max_hosts != fs->sb.max_hosts || h.nr_backing > DAXFS_PCACHE_MAX_BACKING)
		return -EUCLEAN;
	/* the layout is a function of the region size: recompute it */
	if (pc_layout(rd->size, fs->sb.max_hosts, &want))
		return -EUCLEAN;
	if (h.nr_slots != want.nr_slots || h.pin_stride != want.pin_stride ||
	    h.owner_off != want.owner_off || h.meta_off != want.meta_off ||
	    h.pins_off != want.pins_off || h.data_off != want.data_off)
		return -EUCLEAN;
	if (!h.window || h.window > h.nr_slots)
		return -EUCLEAN;
	pc->hdr = (struct daxfs_pcache_header *)r;
	pc->live = (struct daxfs_pcache_live *)(r + DAXFS_PCACHE_LIVE_OFF);
	pc->owner = (u64 *)(void *)(r + h.owner_off);
	pc->slots = (struct daxfs_pcache_slot *)(r + h.meta_off);
	pc->pins = r + h.pins_off;
	pc->data = r + h.data_off;
	pc->nr_slots = h.nr_slots;
	pc->window = h.window;
	pc->pin_stride = h.pin_stride;
	pc->nr_backing = h.nr_backing;
	return 0;
}

bool daxfs_pcache_extent_ok(struct daxfs_fs *fs, u64 idx, u64 off, u64 len)
{
	u64 size;

	if (!fs->pc.hdr || idx >= fs->pc.nr_backing)
		return false;
	size = fs->pc.hdr->backing[idx].size;
	if (!len)
		return true;
	if (off < DAXFS_BACKING_DATA_OFF || off & (BLK - 1))
		return false;
	if ((off >> DAXFS_BLOCK_SHIFT) + ((len + BLK - 1) >> DAXFS_BLOCK_SHIFT) >
	    DAXFS_PC_TAG_PG_MASK)
		return false;
	return off <= size && len <= size - off;
}

void daxfs_pcache_set_backing(struct daxfs_fs *fs,
			      const struct daxfs_backing_ops *ops, void *ctx,
			      u64 reach, u32 timeout_ms)
{
	fs->pc.ops = ops;
	fs->pc.ctx = ctx;
	fs->pc.reach = ops ? reach : 0;
	fs->pc.timeout_ms = timeout_ms;
}

int daxfs_pcache_backing_check(struct daxfs_fs *fs,
			       const struct daxfs_backing_header *bh,
			       u64 file_size, u32 *idx)
{
	const struct daxfs_backing_desc *d;
	u32 i;

	if (!fs->pc.hdr)
		return -EOPNOTSUPP;
	if (bh->magic != DAXFS_BACKING_MAGIC || bh->header_size != sizeof(*bh) ||
	    bh->csum != daxfs_crc32c(0, bh, __builtin_offsetof(
					     struct daxfs_backing_header, csum)))
		return -EMEDIUMTYPE;
	for (i = 0; i < fs->pc.nr_backing; i++) {
		d = &fs->pc.hdr->backing[i];
		if (memcmp(d->id, bh->id, sizeof(d->id)))
			continue;
		if (bh->index != i || d->hdr_csum != bh->csum ||
		    d->size != bh->size || file_size != bh->size)
			return -EMEDIUMTYPE;
		*idx = i;
		return 0;
	}
	return -EMEDIUMTYPE;
}

/* ------------------------------------------------------------------ */
/* host liveness of claims */

/*
 * Is the owner named in w (PENDING/EVICTING) still alive?  An expired
 * owner is declared dead (and its host recovered) first, so a slow host
 * that comes back finds its slot gone (-ESTALE) and stops.
 */
static bool owner_alive(struct daxfs_op *op, u64 w)
{
	struct daxfs_fs *fs = op->fs;
	u32 o = pc_owner(w), slot;
	u64 hs;

	if (!o || o > fs->sb.max_hosts)
		return false;
	slot = o - 1;
	hs = daxfs_load(&daxfs_host_at(fs, slot)->state);
	if (daxfs_host_st(hs) != DAXFS_HOST_ALIVE ||
	    (daxfs_host_gen(hs) & DAXFS_PC_OGEN_MASK) != pc_ogen(w))
		return false;
	if (slot == fs->host)
		return true;		/* another thread of ours */
	if (!daxfs_host_expired(fs, slot))
		return true;
	if (!op->lane)
		return false;
	return daxfs_host_check_dead(op, slot) != 1;
}

/* ------------------------------------------------------------------ */
/* pin columns */

/* Zeroes host h's pin counter of every slot (bounded by nr_slots). */
static void column_clear(struct daxfs_fs *fs, u32 h)
{
	u32 word = h / 8, shift = (h % 8) * 8;
	u64 mask = 0xffULL << shift, i, v;

	for (i = 0; i < fs->pc.nr_slots; i++) {
		u64 *p = pin_row(fs, i) + word;

		v = daxfs_load(p);
		while (v & mask)
			if (daxfs_cas(p, &v, v & ~mask))
				break;
	}
}

/* Is the claim (slot, gen) in a pin_owner word still a live host? */
static bool claim_alive(struct daxfs_fs *fs, u64 claim)
{
	u32 slot = daxfs_claim_slot(claim);

	if (slot >= fs->sb.max_hosts)
		return false;
	return daxfs_host_alive(fs, slot, daxfs_claim_gen(claim));
}

/*
 * Makes column fs->host ours before the first pin of this host
 * generation.  Whatever an earlier owner of the host slot left there is
 * garbage (that generation is gone): we zero it first.
 */
static int column_ensure(struct daxfs_op *op)
{
	struct daxfs_fs *fs = op->fs;
	u64 mine, w, *ow;
	u64 end = 0;
	u32 iter;

	if (fs->host == DAXFS_NO_HOST || !op->lane)
		return -EOPNOTSUPP;
	if (daxfs_likely(fs->pc.col_gen == fs->host_gen))
		return 0;
	mine = daxfs_claim_word(fs->host, fs->host_gen);
	ow = &fs->pc.owner[fs->host];
	for (iter = 0; iter < MAX_ITERS; iter++) {
		w = daxfs_load(ow);
		if (w == mine)
			break;
		if ((w & DAXFS_PC_OWNER_CLEANING) &&
		    (w & ~DAXFS_PC_OWNER_CLEANING) != mine &&
		    claim_alive(fs, w & ~DAXFS_PC_OWNER_CLEANING)) {
			/* a survivor is zeroing it: wait, bounded */
			if (!end)
				end = deadline_ns(fs);
			if ((u64)daxfs_mono_ns() > end)
				return -ETIMEDOUT;
			backoff(iter);
			continue;
		}
		if (w == 0) {
			if (daxfs_cas(ow, &w, mine))
				break;
			continue;
		}
		/* an old generation's claim, or a dead cleaner: clean it */
		if (!daxfs_cas(ow, &w, DAXFS_PC_OWNER_CLEANING | mine))
			continue;
		column_clear(fs, fs->host);
		w = DAXFS_PC_OWNER_CLEANING | mine;
		daxfs_cas(ow, &w, mine);
	}
	fs->pc.col_gen = fs->host_gen;
	return 0;
}

/*
 * Pins found in column h of a slot we want to evict: if the column's
 * owner is dead, release all its pins (zero the column).  Returns true
 * when the column is clean now.
 */
static bool column_reap(struct daxfs_op *op, u32 h)
{
	struct daxfs_fs *fs = op->fs;
	u64 mine, w, *ow;

	if (fs->host == DAXFS_NO_HOST || !op->lane || h >= fs->sb.max_hosts)
		return false;
	mine = daxfs_claim_word(fs->host, fs->host_gen);
	ow = &fs->pc.owner[h];
	w = daxfs_load(ow);
	if (w & DAXFS_PC_OWNER_CLEANING) {
		if (claim_alive(fs, w & ~DAXFS_PC_OWNER_CLEANING))
			return false;	/* somebody is at it */
	} else if (w) {
		u32 slot = daxfs_claim_slot(w);
		u64 hs;

		if (claim_alive(fs, w))
			return false;	/* live pins */
		/* same generation still holding the slot (expired): have it
		 * declared dead first, so it never pins again */
		if (slot >= fs->sb.max_hosts || slot == fs->host)
			return false;
		hs = daxfs_load(&daxfs_host_at(fs, slot)->state);
		if (daxfs_host_gen(hs) == daxfs_claim_gen(w) &&
		    daxfs_host_st(hs) == DAXFS_HOST_ALIVE &&
		    daxfs_host_check_dead(op, slot) != 1)
			return false;
	}
	/* w == 0 with pins: nobody can own them (a host claims first) */
	if (!daxfs_cas(ow, &w, DAXFS_PC_OWNER_CLEANING | mine))
		return false;
	column_clear(fs, h);
	w = DAXFS_PC_OWNER_CLEANING | mine;
	daxfs_cas(ow, &w, 0);
	return true;
}

/* Any pins on slot i by live hosts?  Dead hosts' columns are reaped. */
static bool row_pinned(struct daxfs_op *op, u64 i)
{
	struct daxfs_fs *fs = op->fs;
	u32 nw = fs->pc.pin_stride / 8, k, b;
	u64 *row = pin_row(fs, i), v;

	for (k = 0; k < nw; k++) {
		v = daxfs_load(&row[k]);
		for (b = 0; v && b < 8; b++, v >>= 8) {
			if (!(v & 0xff))
				continue;
			if (!column_reap(op, k * 8 + b))
				return true;
			if ((daxfs_load(&row[k]) >> (b * 8)) & 0xff)
				return true;
		}
	}
	return false;
}

/* Cheap pre-filter: any non-zero pin counter at all? */
static bool row_any(struct daxfs_fs *fs, u64 i)
{
	u32 nw = fs->pc.pin_stride / 8, k;
	u64 *row = pin_row(fs, i);

	for (k = 0; k < nw; k++)
		if (daxfs_load(&row[k]))
			return true;
	return false;
}

/* Does the region still say our pin column is ours?  Not once we were
 * declared dead: a survivor reaped it, and a new host in our slot may
 * own it now (docs/pcache.md, pin columns). */
static bool column_mine(struct daxfs_fs *fs)
{
	return fs->pc.col_gen == fs->host_gen &&
	       daxfs_load(&fs->pc.owner[fs->host]) ==
	       daxfs_claim_word(fs->host, fs->host_gen);
}

/* +1 on our counter of slot i, then validate that the slot still holds
 * tag at sequence seq(w).  Dekker pair with evict(): pin store, fence,
 * state load here; state CAS, fence, pin loads there.  -ESTALE: the
 * column is no longer ours (we were declared dead). */
static int pin_try(struct daxfs_fs *fs, u64 i, u64 w, u64 tag,
		   struct daxfs_pcache_pin *pin)
{
	u32 h = fs->host, shift = (h % 8) * 8;
	u64 *p = pin_row(fs, i) + h / 8, v, s;

	/*
	 * A host that resumes after it was declared dead still believes
	 * the column is its own (col_gen): its +1 would land in the new
	 * owner's counter, which its put may not take back (put checks
	 * the owner), and the slot would stay pinned for the new host's
	 * lifetime (test_kernel_pcache_stale_unpin saw 2 pins for 1).
	 */
	if (!column_mine(fs))
		return -ESTALE;
	v = daxfs_load(p);
	for (;;) {
		if (((v >> shift) & 0xff) == 0xff)
			return -EAGAIN;	/* 255 pins of one host on one page */
		if (daxfs_cas(p, &v, v + (1ULL << shift)))
			break;
	}
	daxfs_fence();
	/*
	 * Reaped between the look above and our +1: the +1 went with the
	 * column or is one extra pin in the new owner's counter until that
	 * host leaves (its next claim clears the column).  Never take it
	 * back: a -1 in a column that is not ours could drop the new
	 * owner's own pin, and a slot it maps could be evicted under it.
	 */
	if (!column_mine(fs))
		return -ESTALE;
	s = daxfs_load(st_word(fs, i));
	if (pc_st(s) == DAXFS_PC_VALID && pc_seq(s) == pc_seq(w) &&
	    daxfs_load(tag_word(fs, i)) == tag) {
		pin->slot = i;
		pin->gen = fs->host_gen;
		pin->col = h;
		/* CLOCK: mark it used (only when not yet marked: no write
		 * traffic on hot pages) */
		if (!(s & DAXFS_PC_REF))
			daxfs_cas(st_word(fs, i), &s, s | DAXFS_PC_REF);
		return 0;
	}
	v = daxfs_load(p);
	while ((v >> shift) & 0xff)
		if (daxfs_cas(p, &v, v - (1ULL << shift)))
			break;
	return -EAGAIN;
}

void daxfs_pcache_put(struct daxfs_fs *fs, struct daxfs_pcache_pin *pin)
{
	u32 shift;
	u64 *p, v;

	if (pin->slot == DAXFS_PC_NO_SLOT || !fs->pc.hdr)
		return;
	/*
	 * A pin of an earlier generation was released with its column, and
	 * so was every pin of a host declared dead (its column reaped, maybe
	 * owned by a new host already): decrement only while the region still
	 * says the column is ours.  What is left is the few instructions
	 * between this load and the CAS (docs/pcache.md, pin columns).
	 */
	if (pin->slot < fs->pc.nr_slots && pin->col == fs->host &&
	    pin->gen == fs->host_gen && column_mine(fs)) {
		shift = (pin->col % 8) * 8;
		p = pin_row(fs, pin->slot) + pin->col / 8;
		v = daxfs_load(p);
		while ((v >> shift) & 0xff)
			if (daxfs_cas(p, &v, v - (1ULL << shift)))
				break;
	}
	pin->slot = DAXFS_PC_NO_SLOT;
}

void daxfs_pcache_detach(struct daxfs_fs *fs)
{
	u64 mine, w;

	if (!fs->pc.hdr || fs->host == DAXFS_NO_HOST ||
	    fs->pc.col_gen != fs->host_gen || !fs->host_gen)
		return;
	mine = daxfs_claim_word(fs->host, fs->host_gen);
	w = mine;
	if (daxfs_cas(&fs->pc.owner[fs->host], &w, DAXFS_PC_OWNER_CLEANING | mine)) {
		column_clear(fs, fs->host);
		w = DAXFS_PC_OWNER_CLEANING | mine;
		daxfs_cas(&fs->pc.owner[fs->host], &w, 0);
	}
	fs->pc.col_gen = 0;
}

/* ------------------------------------------------------------------ */
/* claims, fills, eviction */

/* Releases a slot we own (PENDING or EVICTING as w): tag first. */
static bool release_owned(struct daxfs_fs *fs, u64 i, u64 w)
{
	daxfs_store(tag_word(fs, i), 0);
	daxfs_fence();
	return daxfs_cas(st_word(fs, i), &w,
			 pc_word(DAXFS_PC_FREE, pc_seq(w), 0, 0));
}

/* Finishes an eviction we own (EVICTING as ew).  True: slot is FREE. */
static bool evict_owned(struct daxfs_op *op, u64 i, u64 ew)
{
	struct daxfs_fs *fs = op->fs;
	u64 w;

	daxfs_fence();
	if (row_pinned(op, i)) {
		w = ew;
		daxfs_cas(st_word(fs, i), &w,
			  pc_word(DAXFS_PC_VALID, pc_seq(ew), 0, 0));
		return false;
	}
	if (!release_owned(fs, i, ew))
		return false;
	daxfs_faa(&fs->pc.live->evictions.v, 1);
	return true;
}

static bool evict(struct daxfs_op *op, u64 i, u64 w)
{
	u64 ew = pc_word(DAXFS_PC_EVICTING, pc_seq(w), my_owner_bits(op->fs), 0);

	if (pc_st(w) != DAXFS_PC_VALID)
		return false;
	if (!daxfs_cas(st_word(op->fs, i), &w, ew))
		return false;
	return evict_owned(op, i, ew);
}

/* The shared CLOCK hand: the winner of the CAS clears the reference bits
 * of the next SWEEP_CHUNK slots. */
static void sweep(struct daxfs_fs *fs)
{
	u64 hand = daxfs_load(&fs->pc.live->hand.v), i, w;
	u32 k;

	if (!daxfs_cas(&fs->pc.live->hand.v, &hand, hand + SWEEP_CHUNK))
		return;
	for (k = 0; k < SWEEP_CHUNK && k < fs->pc.nr_slots; k++) {
		i = (hand + k) % fs->pc.nr_slots;
		w = daxfs_load(st_word(fs, i));
		if (pc_st(w) == DAXFS_PC_VALID && (w & DAXFS_PC_REF))
			daxfs_cas(st_word(fs, i), &w, w & ~DAXFS_PC_REF);
	}
}

/* Slot in the window holding tag (any non-FREE state), or ~0. */
static u64 find(struct daxfs_fs *fs, u64 tag, u64 home, u64 *wp)
{
	u32 k;

	for (k = 0; k < fs->pc.window; k++) {
		u64 i = wslot(fs, home, k), w;

		if (daxfs_load(tag_word(fs, i)) != tag)
			continue;
		w = daxfs_load(st_word(fs, i));
		if (pc_st(w) == DAXFS_PC_FREE)
			continue;
		if (daxfs_load(tag_word(fs, i)) != tag)
			continue;
		*wp = w;
		return i;
	}
	return DAXFS_PC_NO_SLOT;
}

static int take_over(struct daxfs_op *op, u64 i, u64 w);

/*
 * Claims a slot of the window for a new fill: FREE first; else MH-clock:
 * a cold unpinned VALID slot; else clear the reference bits and look
 * again; else any unpinned VALID slot.  Returns the slot with *wp its
 * new PENDING word, or ~0 (-EBUSY: everything pinned or pending).
 */
static u64 claim(struct daxfs_op *op, u64 home, u64 flags, u64 *wp)
{
	struct daxfs_fs *fs = op->fs;
	u32 phase, k;

	for (phase = 0; phase < 3; phase++) {
		for (k = 0; k < fs->pc.window; k++) {
			u64 i = wslot(fs, home, k);
			u64 w = daxfs_load(st_word(fs, i));

			if (pc_st(w) != DAXFS_PC_FREE)
				continue;
			*wp = pc_word(DAXFS_PC_PENDING, pc_seq(w) + 1,
				      my_owner_bits(fs), flags);
			if (daxfs_cas(st_word(fs, i), &w, *wp))
				return i;
		}
		for (k = 0; k < fs->pc.window; k++) {
			u64 i = wslot(fs, home, k);
			u64 w = daxfs_load(st_word(fs, i));

			if (phase && (pc_st(w) == DAXFS_PC_PENDING ||
				      pc_st(w) == DAXFS_PC_EVICTING) &&
			    !owned_by_me(fs, w) && !owner_alive(op, w)) {
				/* a dead host's claim nobody waits for (e.g.
				 * it died before writing its tag): finish or
				 * free it, so no slot is lost for good */
				take_over(op, i, w);
				continue;
			}
			if (pc_st(w) != DAXFS_PC_VALID)
				continue;
			if (phase < 2 && (w & DAXFS_PC_REF))
				continue;
			if (row_any(fs, i) && row_pinned(op, i))
				continue;
			if (!evict(op, i, w))
				continue;
			w = daxfs_load(st_word(fs, i));
			if (pc_st(w) != DAXFS_PC_FREE)
				continue;
			*wp = pc_word(DAXFS_PC_PENDING, pc_seq(w) + 1,
				      my_owner_bits(fs), flags);
			if (daxfs_cas(st_word(fs, i), &w, *wp))
				return i;
		}
		if (phase == 0) {
			/* the whole window is hot: move the shared hand (it
			 * ages the rest of the cache), then clear the window's
			 * bits and yield so that hot pages get re-touched */
			sweep(fs);
			for (k = 0; k < fs->pc.window; k++) {
				u64 i = wslot(fs, home, k);
				u64 w = daxfs_load(st_word(fs, i));

				if (pc_st(w) == DAXFS_PC_VALID && (w & DAXFS_PC_REF))
					daxfs_cas(st_word(fs, i), &w,
						  w & ~DAXFS_PC_REF);
			}
			daxfs_cpu_relax();
		}
	}
	return DAXFS_PC_NO_SLOT;
}

/* Posts a fill request for slot i (REQ already set in its word). */
static void post_request(struct daxfs_fs *fs, u64 i)
{
	struct daxfs_pcache_live *lv = fs->pc.live;
	u32 k;

	for (k = 0; k < DAXFS_PCACHE_REQ_RING; k++) {
		u64 z = 0;

		if (daxfs_load(&lv->req_ring[k]) == i + 1)
			break;
		if (daxfs_cas(&lv->req_ring[k], &z, i + 1))
			break;
	}
	if (k == DAXFS_PCACHE_REQ_RING)
		daxfs_store(&lv->req_overflow.v, 1);
	daxfs_faa(&lv->req_seq.v, 1);
}

static void unpost_request(struct daxfs_fs *fs, u64 i)
{
	u32 k;

	for (k = 0; k < DAXFS_PCACHE_REQ_RING; k++) {
		u64 e = i + 1;

		daxfs_cas(&fs->pc.live->req_ring[k], &e, 0);
	}
}

/*
 * Called by daxfs_host_join before the new generation touches the cache:
 * a PENDING or EVICTING slot naming our host slot is an earlier
 * generation's (we hold none yet), whatever its 24 generation bits say.
 * A dead owner's claim is taken over only when someone meets it, so it
 * can outlive 2^24 joins of the slot; then it would pass for ours
 * (owned_by_me) and for a live host's (owner_alive), and its page could
 * not be read until we leave.  So release them all now: O(slots) loads.
 */
void daxfs_pcache_joined(struct daxfs_fs *fs)
{
	u64 i, w, nw;
	u32 st;

	if (!fs->pc.hdr || fs->host == DAXFS_NO_HOST)
		return;
	for (i = 0; i < fs->pc.nr_slots; i++) {
		w = daxfs_load(st_word(fs, i));
		st = pc_st(w);
		if ((st != DAXFS_PC_PENDING && st != DAXFS_PC_EVICTING) ||
		    pc_owner(w) != fs->host + 1)
			continue;
		if (st == DAXFS_PC_EVICTING) {
			/* an unfinished eviction: back to VALID, as when it
			 * sees pins (an evictor redoes it) */
			daxfs_cas(st_word(fs, i), &w,
				  pc_word(DAXFS_PC_VALID, pc_seq(w), 0, 0));
			continue;
		}
		nw = pc_word(DAXFS_PC_PENDING, pc_seq(w), my_owner_bits(fs), 0);
		if (!daxfs_cas(st_word(fs, i), &w, nw))
			continue;	/* a survivor took it over first */
		daxfs_faa(&fs->pc.live->takeovers.v, 1);
		unpost_request(fs, i);
		release_owned(fs, i, nw);
	}
}

static bool can_reach(struct daxfs_fs *fs, u32 idx)
{
	return fs->pc.ops && fs->pc.ops->read && idx < 64 &&
	       (fs->pc.reach & (1ULL << idx));
}

static bool unreachable_err(int err)
{
	return err == -ENXIO || err == -ENODEV || err == -ENOENT ||
	       err == -EACCES || err == -EPERM || err == -ESTALE ||
	       err == -ENOTCONN;
}

/* Another slot of the window carries tag: we must not fill ours. */
static bool dup_seen(struct daxfs_fs *fs, u64 tag, u64 home, u64 mine)
{
	u32 k;

	for (k = 0; k < fs->pc.window; k++) {
		u64 i = wslot(fs, home, k);

		if (i != mine && daxfs_load(tag_word(fs, i)) == tag)
			return true;
	}
	return false;
}

/*
 * We own slot i as PENDING (word w) for tag: make sure nobody else has
 * it, then fill it from the backing file (or post a request when we
 * cannot reach it).  fresh: we claimed it from FREE just now (its tag is
 * still 0).  Returns 0 (caller looks up again) or -errno.
 */
static int fill_owned(struct daxfs_op *op, u64 i, u64 w, u64 tag, u64 home,
		      bool fresh)
{
	struct daxfs_fs *fs = op->fs;
	u32 idx = tag_idx(tag);
	u64 nw;
	int err;

	/*
	 * Declared dead since we took the slot (stopped inside the op): a
	 * survivor may own it by now, so no store.  A fresh claim nobody
	 * has touched (the CAS compares our owner and sequence) goes back
	 * to FREE: its tag is still 0, and no host of a later generation
	 * of our slot would ever meet it (daxfs_pcache_joined ran before
	 * we made it), so left PENDING it stayed until someone's window
	 * filled up (tests/vm/test_kernel_pcache.py::
	 * test_kernel_pcache_stale_unpin found it with fsck).
	 */
	if (daxfs_fenced(op)) {
		if (fresh)
			daxfs_cas(st_word(fs, i), &w,
				  pc_word(DAXFS_PC_FREE, pc_seq(w), 0, 0));
		return -ESTALE;
	}
	daxfs_store(tag_word(fs, i), tag);
	daxfs_fence();
	if (dup_seen(fs, tag, home, i)) {
		/* back off: the other claim fills it (or backs off too;
		 * jitter so that two losers do not collide again) */
		u32 k;

		release_owned(fs, i, w);
		for (k = (u32)(daxfs_thread_id() % 61) + 1; k; k--)
			daxfs_cpu_relax();
		return 0;
	}
	if (!can_reach(fs, idx)) {
		nw = w | DAXFS_PC_REQ;
		if ((w & DAXFS_PC_REQ) || daxfs_cas(st_word(fs, i), &w, nw))
			post_request(fs, i);
		return 0;
	}
	/*
	 * Fenced as a write's page copy is (docs/hosts.md "Fencing"): a
	 * host declared dead while it owned the slot lost it to a survivor,
	 * which refilled it and may have given it to another page since;
	 * our bytes must not land there.
	 */
	if (daxfs_fenced(op))
		return -ESTALE;
	daxfs_crash_point("pcache.fill");
	err = fs->pc.ops->read(fs->pc.ctx, idx, tag_pg(tag) << DAXFS_BLOCK_SHIFT,
			       slot_data(fs, i), (u32)BLK);
	if (err) {
		if (unreachable_err(err)) {
			nw = w | DAXFS_PC_REQ;
			if (daxfs_cas(st_word(fs, i), &w, nw))
				post_request(fs, i);
			return 0;
		}
		release_owned(fs, i, w);
		return err < 0 ? err : -EIO;
	}
	pflush(fs, slot_data(fs, i), BLK);
	daxfs_fence();
	nw = pc_word(DAXFS_PC_VALID, pc_seq(w), 0, DAXFS_PC_REF);
	if (daxfs_cas(st_word(fs, i), &w, nw)) {
		daxfs_faa(&fs->pc.live->fills.v, 1);
		daxfs_faa(&fs->pc.st_fills, 1);
	}
	/* else a survivor took us for dead (after the check above) and owns
	 * it: it refills the same bytes (backing files never change) */
	return 0;
}

/* Takes over slot i (word w) from its dead owner. */
static int take_over(struct daxfs_op *op, u64 i, u64 w)
{
	struct daxfs_fs *fs = op->fs;
	u64 nw, tag;

	nw = pc_word(pc_st(w), pc_seq(w), my_owner_bits(fs), 0);
	if (!daxfs_cas(st_word(fs, i), &w, nw))
		return 0;
	daxfs_faa(&fs->pc.live->takeovers.v, 1);
	if (pc_st(nw) == DAXFS_PC_EVICTING) {
		evict_owned(op, i, nw);
		return 0;
	}
	tag = daxfs_load(tag_word(fs, i));
	if (!tag || tag_idx(tag) >= fs->pc.nr_backing) {
		release_owned(fs, i, nw);
		return 0;
	}
	unpost_request(fs, i);
	return fill_owned(op, i, nw, tag, home_of(fs, tag), false);
}

int daxfs_pcache_get(struct daxfs_op *op, u32 idx, u64 pgno,
		     struct daxfs_pcache_pin *pin, const u8 **data)
{
	struct daxfs_fs *fs = op->fs;
	u64 tag, home, end = 0, my_req = DAXFS_PC_NO_SLOT, my_req_w = 0;
	bool missed = false;
	u32 iter;
	int err;

	daxfs_pcache_pin_init(pin);
	if (!fs->pc.hdr)
		return -EOPNOTSUPP;
	if (idx >= fs->pc.nr_backing || pgno > DAXFS_PC_TAG_PG_MASK)
		return -EUCLEAN;
	err = column_ensure(op);
	if (err)
		return err;
	tag = mk_tag(idx, pgno);
	home = home_of(fs, tag);

	for (iter = 0; iter < MAX_ITERS; iter++) {
		u64 w = 0, i;

		if (iter) {
			/* every wait is bounded: a dead or absent filler
			 * gives an error, never a hang */
			if (!end)
				end = deadline_ns(fs);
			else if ((u64)daxfs_mono_ns() > end)
				break;
			/* a killed reader stops waiting (withdrawing
			 * its request below) */
			if (daxfs_walk_yield()) {
				err = -EINTR;
				break;
			}
			if (iter > 1)
				backoff_fs(fs, iter);
		}
		i = find(fs, tag, home, &w);
		if (i == DAXFS_PC_NO_SLOT) {
			missed = true;
			i = claim(op, home, 0, &w);
			if (i == DAXFS_PC_NO_SLOT) {
				err = -EBUSY;	/* window all pinned/pending */
				continue;
			}
			err = fill_owned(op, i, w, tag, home, true);
			if (err)
				return err;
			continue;
		}
		switch (pc_st(w)) {
		case DAXFS_PC_VALID:
			err = pin_try(fs, i, w, tag, pin);
			if (!err) {
				*data = slot_data(fs, i);
				daxfs_faa(missed ? &fs->pc.st_misses :
					  &fs->pc.st_hits, 1);
				return 0;
			}
			if (err == -ESTALE)
				return err;	/* declared dead */
			break;
		case DAXFS_PC_PENDING:
			if (!missed) {
				missed = true;
				daxfs_faa(&fs->pc.st_waits, 1);
			}
			if (owned_by_me(fs, w)) {
				if (w & DAXFS_PC_REQ) {
					my_req = i;
					my_req_w = w;
				}
				break;	/* our own fill or request */
			}
			if (!owner_alive(op, w)) {
				err = take_over(op, i, w);
				if (err)
					return err;
				break;
			}
			if ((w & DAXFS_PC_REQ) && can_reach(fs, idx)) {
				/* serve a waiting request right away */
				u64 nw = pc_word(DAXFS_PC_PENDING, pc_seq(w),
						 my_owner_bits(fs), 0);

				if (daxfs_cas(st_word(fs, i), &w, nw)) {
					unpost_request(fs, i);
					daxfs_faa(&fs->pc.live->served.v, 1);
					err = fill_owned(op, i, nw, tag, home, false);
					if (err)
						return err;
				}
			}
			break;
		case DAXFS_PC_EVICTING:
			if (!owned_by_me(fs, w) && !owner_alive(op, w))
				take_over(op, i, w);
			break;
		}
		err = -ETIMEDOUT;
	}
	/* Timed out.  Withdraw a request of ours nobody took. */
	if (my_req != DAXFS_PC_NO_SLOT) {
		u64 w = my_req_w, nw = w & ~DAXFS_PC_REQ;

		if (daxfs_cas(st_word(fs, my_req), &w, nw)) {
			unpost_request(fs, my_req);
			release_owned(fs, my_req, nw);
		}
	}
	if (err == -ETIMEDOUT)
		daxfs_faa(&fs->pc.live->timeouts.v, 1);
	return err ? err : -ETIMEDOUT;
}

/* ------------------------------------------------------------------ */
/* data access helpers */

s64 daxfs_pcache_read(struct daxfs_op *op, u32 idx, u64 off, u64 len,
		      daxfs_read_actor_t actor, void *ctx)
{
	struct daxfs_pcache_pin pin;
	u64 done = 0;
	int err = 0;

	while (done < len) {
		u64 pos = off + done, in = pos & (BLK - 1);
		u64 n = BLK - in < len - done ? BLK - in : len - done, c;
		const u8 *p;

		err = daxfs_pcache_get(op, idx, pos >> DAXFS_BLOCK_SHIFT, &pin, &p);
		if (err)
			break;
		c = actor(ctx, p + in, n);
		daxfs_pcache_put(op->fs, &pin);
		if (c > n)
			c = n;
		done += c;
		if (c < n)
			break;
	}
	if (done)
		return (s64)done;
	return err;
}

int daxfs_pcache_copy(struct daxfs_op *op, u32 idx, u64 off, void *dst,
		      u64 len)
{
	struct daxfs_pcache_pin pin;
	u8 *d = dst;
	u64 done = 0;
	int err;

	while (done < len) {
		u64 pos = off + done, in = pos & (BLK - 1);
		u64 n = BLK - in < len - done ? BLK - in : len - done;
		const u8 *p;

		err = daxfs_pcache_get(op, idx, pos >> DAXFS_BLOCK_SHIFT, &pin, &p);
		if (err)
			return err;
		err = daxfs_copy_data(op->fs, d + done, p + in, n);
		daxfs_pcache_put(op->fs, &pin);
		if (err)
			return err;
		done += n;
	}
	return 0;
}

static int map_block_ro(struct daxfs_op *op, u64 ino, u64 blk, u64 *off,
			struct daxfs_pcache_pin *pin)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip;
	struct daxfs_iref ref;
	u64 lim, size, pg, bsize, bdata, bcount;
	const u8 *p;
	int err;

	err = daxfs_inode_get(op, ino, &ref);
	if (err)
		return err;
	if (!DAXFS_IS_REG(daxfs_iref_mode(&ref)))
		return DAXFS_IS_DIR(daxfs_iref_mode(&ref)) ? -EISDIR : -EINVAL;
	bip = ref.bip;
	if (ref.ip) {
		size = daxfs_load(&ref.ip->size);
		err = daxfs_radix_get(fs, ref.ip, blk, &pg);
		if (err || pg) {
			*off = pg;
			return err;
		}
		if (!(daxfs_load32(&ref.ip->flags) & DAXFS_IF_BASE))
			return 0;
		bip = daxfs_base_inode(fs, daxfs_load(&ref.ip->base_ino));
		if (!bip)
			return -EUCLEAN;
		bsize = daxfs_once(bip->size);
		lim = daxfs_load(&ref.ip->aux);
		if (lim > bsize)
			lim = bsize;
		if (lim > size)
			lim = size;
	} else {
		if (!bip)
			return -EUCLEAN;
		bsize = daxfs_once(bip->size);
		lim = bsize;
	}
	/* once each: the extent checked must be the extent used */
	bdata = daxfs_once(bip->data);
	bcount = daxfs_once(bip->count);
	if ((blk << DAXFS_BLOCK_SHIFT) >= lim)
		return 0;
	if (!daxfs_base_backed(fs)) {
		const u8 *b = daxfs_base_ptr(fs, bdata, bsize);

		if (!b)
			return -EUCLEAN;
		/* a partial last page would show base bytes past the limit */
		if (((u64)(b - fs->base) & (BLK - 1)) ||
		    ((blk + 1) << DAXFS_BLOCK_SHIFT) > lim)
			return -EAGAIN;
		*off = (u64)(b - fs->base) + (blk << DAXFS_BLOCK_SHIFT);
		return 0;
	}
	if (((blk + 1) << DAXFS_BLOCK_SHIFT) > lim && lim < bsize)
		return -EAGAIN;	/* truncated inside the page: copy instead */
	if (!daxfs_pcache_extent_ok(fs, bcount, bdata, bsize))
		return -EUCLEAN;
	err = daxfs_pcache_get(op, (u32)bcount,
			       (bdata >> DAXFS_BLOCK_SHIFT) + blk, pin, &p);
	if (err)
		return err;
	*off = (u64)(p - fs->base);
	return 0;
}

int daxfs_pcache_map_block(struct daxfs_fs *fs, u64 ino, u64 blk, u64 *off,
			   struct daxfs_pcache_pin *pin)
{
	struct daxfs_op op;
	int err;

	*off = 0;
	daxfs_pcache_pin_init(pin);
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = map_block_ro(&op, ino, blk, off, pin);
	daxfs_op_end(&op);
	return err;
}

/* ------------------------------------------------------------------ */
/* serving requests, maintenance */

static bool serve_slot(struct daxfs_op *op, u64 i)
{
	struct daxfs_fs *fs = op->fs;
	u64 w = daxfs_load(st_word(fs, i)), nw, tag;

	if (pc_st(w) != DAXFS_PC_PENDING || !(w & DAXFS_PC_REQ))
		return false;
	tag = daxfs_load(tag_word(fs, i));
	if (!tag || tag_idx(tag) >= fs->pc.nr_backing || !can_reach(fs, tag_idx(tag)))
		return false;
	nw = pc_word(DAXFS_PC_PENDING, pc_seq(w), my_owner_bits(fs), 0);
	if (!daxfs_cas(st_word(fs, i), &w, nw))
		return false;
	/* the requester wrote the tag before setting REQ; we own it now */
	tag = daxfs_load(tag_word(fs, i));
	if (!tag || tag_idx(tag) >= fs->pc.nr_backing) {
		release_owned(fs, i, nw);
		return false;
	}
	daxfs_faa(&fs->pc.live->served.v, 1);
	fill_owned(op, i, nw, tag, home_of(fs, tag), false);
	return true;
}

int daxfs_pcache_serve(struct daxfs_fs *fs, u32 max)
{
	struct daxfs_pcache_live *lv;
	struct daxfs_op op;
	u64 i, e, one;
	u32 k, n = 0;
	int err;

	if (!fs->pc.hdr || !fs->pc.reach)
		return 0;
	lv = fs->pc.live;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	if (column_ensure(&op))
		goto out;
	for (k = 0; k < DAXFS_PCACHE_REQ_RING && n < max; k++) {
		u64 w;

		e = daxfs_load(&lv->req_ring[k]);
		if (!e)
			continue;
		if (e - 1 >= fs->pc.nr_slots) {
			daxfs_cas(&lv->req_ring[k], &e, 0);
			continue;
		}
		if (serve_slot(&op, e - 1))
			n++;
		/* drop entries whose slot no longer asks for a fill */
		w = daxfs_load(st_word(fs, e - 1));
		if (pc_st(w) != DAXFS_PC_PENDING || !(w & DAXFS_PC_REQ))
			daxfs_cas(&lv->req_ring[k], &e, 0);
	}
	one = 1;
	if (daxfs_load(&lv->req_overflow.v) &&
	    daxfs_cas(&lv->req_overflow.v, &one, 0)) {
		for (i = 0; i < fs->pc.nr_slots && n < max; i++)
			if (serve_slot(&op, i))
				n++;
	}
out:
	daxfs_op_end(&op);
	return (int)n;
}

/*
 * Releases the pin columns of hosts that are no longer alive (declared
 * dead and recovered), so their pins go without waiting for an evictor
 * to meet them.  Cheap when there is nothing to do: one load per host.
 */
int daxfs_pcache_reap(struct daxfs_fs *fs)
{
	struct daxfs_op op;
	u32 h;
	int n = 0, err;

	if (!fs->pc.hdr || fs->host == DAXFS_NO_HOST)
		return 0;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	for (h = 0; h < fs->sb.max_hosts; h++) {
		u64 w = daxfs_load(&fs->pc.owner[h]);

		if (!w || h == fs->host ||
		    claim_alive(fs, w & ~DAXFS_PC_OWNER_CLEANING))
			continue;
		if (column_reap(&op, h))
			n++;
	}
	daxfs_op_end(&op);
	return n;
}

u64 daxfs_pcache_req_seq(struct daxfs_fs *fs)
{
	if (!fs->pc.hdr)
		return 0;
	return daxfs_load(&fs->pc.live->req_seq.v);
}

s64 daxfs_pcache_evict_all(struct daxfs_fs *fs)
{
	struct daxfs_op op;
	s64 n = 0;
	u64 i;
	int err;

	if (!fs->pc.hdr)
		return -EOPNOTSUPP;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	if (!op.lane) {
		daxfs_op_end(&op);
		return -EROFS;
	}
	for (i = 0; i < fs->pc.nr_slots; i++) {
		u64 w = daxfs_load(st_word(fs, i));

		if (pc_st(w) == DAXFS_PC_VALID && evict(&op, i, w))
			n++;
	}
	daxfs_op_end(&op);
	return n;
}

int daxfs_pcache_stats(struct daxfs_fs *fs, struct daxfs_pcache_stats *st)
{
	struct daxfs_pcache_live *lv = fs->pc.live;
	u32 nw, k, b;
	u64 i;

	memset(st, 0, sizeof(*st));
	if (!fs->pc.hdr)
		return -EOPNOTSUPP;
	nw = fs->pc.pin_stride / 8;
	st->nr_slots = fs->pc.nr_slots;
	st->window = fs->pc.window;
	st->nr_backing = fs->pc.nr_backing;
	st->cache_bytes = fs->pc.nr_slots * BLK;
	for (i = 0; i < fs->pc.nr_slots; i++) {
		u64 w = daxfs_load(st_word(fs, i)), *row = pin_row(fs, i), p = 0;

		switch (pc_st(w)) {
		case DAXFS_PC_FREE:
			st->free++;
			break;
		case DAXFS_PC_PENDING:
			st->pending++;
			if (w & DAXFS_PC_REQ)
				st->requested++;
			break;
		case DAXFS_PC_VALID:
			st->valid++;
			if (w & DAXFS_PC_REF)
				st->referenced++;
			break;
		default:
			st->evicting++;
		}
		for (k = 0; k < nw; k++) {
			u64 v = daxfs_load(&row[k]);

			for (b = 0; v && b < 8; b++, v >>= 8)
				p += v & 0xff;
		}
		if (p)
			st->pinned_slots++;
		st->pins += p;
	}
	for (k = 0; k < fs->sb.max_hosts; k++)
		if (daxfs_load(&fs->pc.owner[k]))
			st->columns++;
	st->hand = daxfs_load(&lv->hand.v);
	st->hand_pos = st->hand % fs->pc.nr_slots;
	st->fills = daxfs_load(&lv->fills.v);
	st->evictions = daxfs_load(&lv->evictions.v);
	st->takeovers = daxfs_load(&lv->takeovers.v);
	st->served = daxfs_load(&lv->served.v);
	st->timeouts = daxfs_load(&lv->timeouts.v);
	st->req_seq = daxfs_load(&lv->req_seq.v);
	return 0;
}

/* Owner named in a state word: alive (no side effects: fsck). */
static bool owner_alive_quiet(struct daxfs_fs *fs, u64 w)
{
	u32 o = pc_owner(w);
	u64 hs;

	if (!o || o > fs->sb.max_hosts)
		return false;
	hs = daxfs_load(&daxfs_host_at(fs, o - 1)->state);
	if (daxfs_host_st(hs) != DAXFS_HOST_ALIVE ||
	    (daxfs_host_gen(hs) & DAXFS_PC_OGEN_MASK) != pc_ogen(w))
		return false;
	return o - 1 == fs->host || !daxfs_host_expired(fs, o - 1);
}

static bool tag_ok(struct daxfs_fs *fs, u64 tag)
{
	u32 idx = tag_idx(tag);

	if (!tag || idx >= fs->pc.nr_backing)
		return false;
	return (tag_pg(tag) << DAXFS_BLOCK_SHIFT) < fs->pc.hdr->backing[idx].size &&
	       tag_pg(tag) >= (DAXFS_BACKING_DATA_OFF >> DAXFS_BLOCK_SHIFT);
}

s64 daxfs_pcache_check(struct daxfs_fs *fs, bool repair,
		       struct daxfs_pcache_report *rep)
{
	u32 nw, k, b, h;
	u64 i, left = 0;
	bool rw = repair && !(fs->flags & DAXFS_FS_RDONLY);

	memset(rep, 0, sizeof(*rep));
	if (!fs->pc.hdr)
		return 0;
	nw = fs->pc.pin_stride / 8;
	/* pin columns: an owner must be a live host */
	for (h = 0; h < fs->sb.max_hosts; h++) {
		u64 w = daxfs_load(&fs->pc.owner[h]), c = w & ~DAXFS_PC_OWNER_CLEANING;
		bool dead = w && !claim_alive(fs, c);

		if (w && !(w & DAXFS_PC_OWNER_CLEANING) && daxfs_claim_slot(c) != h)
			dead = true;
		if (!dead)
			continue;
		rep->stale_owners++;
		if (rw && daxfs_cas(&fs->pc.owner[h], &w,
				    DAXFS_PC_OWNER_CLEANING |
				    daxfs_claim_word(0xfffe, 0))) {
			column_clear(fs, h);
			w = DAXFS_PC_OWNER_CLEANING | daxfs_claim_word(0xfffe, 0);
			daxfs_cas(&fs->pc.owner[h], &w, 0);
			rep->repaired++;
		}
	}
	for (i = 0; i < fs->pc.nr_slots; i++) {
		u64 w = daxfs_load(st_word(fs, i)), tag = daxfs_load(tag_word(fs, i));
		u64 *row = pin_row(fs, i);
		u64 fixed = 0;		/* one per problem repaired */

		switch (pc_st(w)) {
		case DAXFS_PC_FREE:
			if (pc_owner(w) || (w & (DAXFS_PC_REF | DAXFS_PC_REQ))) {
				rep->bad_state++;
				if (rw && daxfs_cas(st_word(fs, i), &w,
						    pc_word(DAXFS_PC_FREE, pc_seq(w), 0, 0)))
					fixed++;
			}
			if (tag) {
				rep->bad_tag++;
				if (rw) {
					daxfs_store(tag_word(fs, i), 0);
					fixed++;
				}
			}
			break;
		case DAXFS_PC_VALID:
			if (pc_owner(w) || (w & DAXFS_PC_REQ)) {
				rep->bad_state++;
				if (rw && release_owned(fs, i, w))
					fixed++;
				break;
			}
			if (!tag_ok(fs, tag)) {
				rep->bad_tag++;
				if (rw && release_owned(fs, i, w))
					fixed++;
			}
			break;
		default:	/* PENDING, EVICTING */
			if (owner_alive_quiet(fs, w))
				break;
			rep->stale_claims++;
			if (rw && release_owned(fs, i, w))
				fixed++;
		}
		for (k = 0; k < nw; k++) {
			u64 v = daxfs_load(&row[k]);

			for (b = 0; v && b < 8; b++, v >>= 8) {
				u64 ow;

				if (!(v & 0xff))
					continue;
				h = k * 8 + b;
				ow = h < fs->sb.max_hosts ? daxfs_load(&fs->pc.owner[h]) : 0;
				if (ow && !(ow & DAXFS_PC_OWNER_CLEANING) &&
				    claim_alive(fs, ow))
					continue;
				rep->stale_pins++;
				if (rw) {
					u64 cur = daxfs_load(&row[k]);
					u64 m = 0xffULL << (b * 8);

					while (cur & m)
						if (daxfs_cas(&row[k], &cur, cur & ~m))
							break;
					rep->repaired++;
				}
			}
		}
		rep->repaired += fixed;
	}
	/* duplicates: two VALID slots of one tag in one window */
	for (i = 0; i < fs->pc.nr_slots; i++) {
		u64 w = daxfs_load(st_word(fs, i)), tag = daxfs_load(tag_word(fs, i));
		u64 home, j, wj;

		if (pc_st(w) != DAXFS_PC_VALID || !tag_ok(fs, tag))
			continue;
		home = home_of(fs, tag);
		j = find(fs, tag, home, &wj);
		if (j != DAXFS_PC_NO_SLOT && j != i && pc_st(wj) == DAXFS_PC_VALID) {
			rep->duplicates++;
			if (rw && !row_any(fs, i) && release_owned(fs, i, w))
				rep->repaired++;
		}
	}
	left = rep->bad_state + rep->bad_tag + rep->stale_claims + rep->stale_pins +
	       rep->stale_owners + rep->duplicates;
	if (left >= rep->repaired)
		left -= rep->repaired;
	else
		left = 0;
	return (s64)left;
}
