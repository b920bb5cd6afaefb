// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Per-host open sets: a file unlinked on one host while another host has
 * it open stays usable until the last holder closes it (or dies).  One
 * Dekker pair (entry vs nlink) and one CAS (the free claim on the ORPHAN
 * mark).  Protocol, race arguments and crash story: docs/open-files.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "openset.h"

/* Validated page of slot's set at off, or NULL (none or not a set page;
 * or on a bad block: never loaded, and the host stopped, so that the
 * fence ends the op before it acts on a set it could not read). */
static struct daxfs_open_page *set_page(struct daxfs_fs *fs, u64 off, u32 slot)
{
	struct daxfs_open_page *pg;

	if (!off)
		return NULL;
	pg = daxfs_ptr(fs, off, sizeof(*pg), DAXFS_PAGE_SIZE);
	if (!pg || daxfs_media_direct_bad(fs, off, sizeof(*pg), DAXFS_MEDIA_OPEN_SET) ||
	    daxfs_load(&pg->magic) != DAXFS_OPEN_MAGIC ||
	    daxfs_load32(&pg->slot) != slot)
		return NULL;
	return pg;
}

struct daxfs_open_page *daxfs_open_page_next(struct daxfs_fs *fs, u32 slot,
					     struct daxfs_open_page *pg, u32 *n)
{
	u64 off;

	if (*n >= DAXFS_OPEN_MAX_PAGES)
		return NULL;
	off = pg ? daxfs_load(&pg->next) :
		   daxfs_load(&daxfs_host_at(fs, slot)->open_set);
	pg = set_page(fs, off, slot);
	if (pg)
		(*n)++;
	return pg;
}

#define for_each_set_page(fs, slot, pg, n) \
	for ((n) = 0, (pg) = daxfs_open_page_next(fs, slot, NULL, &(n)); (pg); \
	     (pg) = daxfs_open_page_next(fs, slot, pg, &(n)))

/* Entries of pg worth reading: those below hw on pages that keep it
 * (entries go in only after hw covers them: docs, race 1b). */
static u32 page_limit(struct daxfs_open_page *pg)
{
	u64 hw;

	if (!(daxfs_load32(&pg->flags) & DAXFS_OPEN_PF_HW))
		return DAXFS_OPEN_ENTRIES;	/* an older page: all of it */
	hw = daxfs_load(&pg->hw);
	return hw < DAXFS_OPEN_ENTRIES ? (u32)hw : DAXFS_OPEN_ENTRIES;
}

/* Before an entry goes in at index i: hw > i (grows only). */
static void page_cover(struct daxfs_open_page *pg, u32 i)
{
	u64 hw = daxfs_load(&pg->hw);

	while (hw <= i && !daxfs_cas(&pg->hw, &hw, (u64)i + 1))
		;
}

/* Entries naming ino in slot's set. */
static u32 slot_holds(struct daxfs_fs *fs, u32 slot, u64 ino)
{
	struct daxfs_open_page *pg;
	u32 n, i, lim, found = 0;

	for_each_set_page(fs, slot, pg, n) {
		lim = page_limit(pg);
		for (i = 0; i < lim; i++)
			if (daxfs_load(&pg->ino[i]) == ino)
				found++;
	}
	return found;
}

/* Summary word and bit of slot (format.h daxfs_state.open_hosts). */
static u64 *summary_word(struct daxfs_fs *fs, u32 slot, u64 *bit)
{
	*bit = 1ULL << (slot % 64);
	return &fs->state->open_hosts[slot / 64];
}

/* Sets slot's summary bit (docs/open-files.md, "Summary"). */
static void summary_mark(struct daxfs_fs *fs, u32 slot)
{
	u64 bit, *w = summary_word(fs, slot, &bit);
	u64 cur = daxfs_load(w);

	while (!(cur & bit) && !daxfs_cas(w, &cur, cur | bit))
		;
}

/* Only with slot's set provably empty and nobody inserting into it. */
static void summary_clear(struct daxfs_fs *fs, u32 slot)
{
	u64 bit, *w = summary_word(fs, slot, &bit);
	u64 cur = daxfs_load(w);

	while ((cur & bit) && !daxfs_cas(w, &cur, cur & ~bit))
		;
}

void daxfs_open_summary_join(struct daxfs_fs *fs)
{
	u32 s;

	for (s = 0; s < fs->sb.max_hosts; s++) {
		if (daxfs_load(&daxfs_host_at(fs, s)->open_set))
			summary_mark(fs, s);	/* a set from before the summary */
		else if (s == fs->host)
			summary_clear(fs, s);	/* stale: a recoverer died late */
	}
}

u32 daxfs_open_holders(struct daxfs_fs *fs, u64 ino, u32 *slot)
{
	u32 s, c, found = 0;

	for (s = 0; s < fs->sb.max_hosts; s++) {
		c = slot_holds(fs, s, ino);
		if (c && !found && slot)
			*slot = s;
		found += c;
	}
	return found;
}

/* The unlinker's scan, after its fence: only hosts whose summary bit is
 * set (docs/open-files.md, race 1b).  True if some set names ino. */
static bool held_somewhere(struct daxfs_fs *fs, u64 ino)
{
	u32 w, s, nw = (fs->sb.max_hosts + 63) / 64;
	u64 bits;

	for (w = 0; w < nw && w < 4; w++) {
		bits = daxfs_load(&fs->state->open_hosts[w]);
		for (; bits; bits &= bits - 1) {
			s = w * 64 + daxfs_ctz64(bits);
			if (s < fs->sb.max_hosts && slot_holds(fs, s, ino))
				return true;
		}
	}
	return false;
}

/* settle of ip, ino's record, loaded after the fence (or known to be the
 * record: see daxfs_orphan_settle_rec) */
static void settle_rec(struct daxfs_op *op, u64 ino, struct daxfs_inode *ip,
		       bool dead_claimer)
{
	u32 f = daxfs_load32(&ip->flags);

	if (daxfs_load32(&ip->nlink) || DAXFS_IS_DIR(daxfs_load32(&ip->mode)))
		return;
	if (!(f & DAXFS_IF_ORPHAN) && !dead_claimer)
		return;
	if (held_somewhere(op->fs, ino))
		return;		/* a holder settles at its close */
	if (!(f & DAXFS_IF_ORPHAN)) {
		/* claimed, still in the overlay: finish the free */
		daxfs_inode_free(op, ip);
		return;
	}
	while (f & DAXFS_IF_ORPHAN) {
		if (daxfs_fenced(op))
			return;
		/* the free claim: exactly one settler wins */
		if (daxfs_cas32(&ip->flags, &f, f & ~DAXFS_IF_ORPHAN)) {
			daxfs_crash_point("orphan.claimed");
			daxfs_inode_free(op, ip);
			return;
		}
	}
}

/*
 * fc (may be NULL): the caller's cache of ino's record, checked after
 * the fence as a lookup would be made after it (the bucket still
 * publishes the record, a live one: what daxfs_inode_get answers).
 */
static void settle(struct daxfs_op *op, u64 ino, bool dead_claimer,
		   struct daxfs_fcache *fc)
{
	struct daxfs_iref ref;
	struct daxfs_inode *ip;

	if (!op->lane)
		return;
	/* our write (entry cleared, nlink 0) before our reads: docs, race 1-3 */
	daxfs_fence();
	if (dead_claimer) {
		/* an nlink-0 record without the mark is hidden from
		 * daxfs_inode_get: gone to readers, not yet freed */
		if (!ino || daxfs_inode_get_dying(op, ino, &ip))
			return;
	} else {
		if (daxfs_inode_get_fc(op, ino, fc, &ref) || !ref.ip)
			return;
		ip = ref.ip;
	}
	settle_rec(op, ino, ip, dead_claimer);
}

void daxfs_orphan_settle(struct daxfs_op *op, u64 ino)
{
	settle(op, ino, false, NULL);
}

void daxfs_orphan_settle_rec(struct daxfs_op *op, struct daxfs_inode *ip)
{
	if (!op->lane)
		return;
	daxfs_fence();	/* as in settle: nlink 0 before the reads */
	settle_rec(op, daxfs_load(&ip->ino), ip, false);
}

/*
 * Recovery of a dead host that was settling ino: the last link or open
 * was its to drop (unlink from step 4, a rename's target, OPEN_PUT).  As
 * daxfs_orphan_settle, and also when the ORPHAN mark is gone already
 * with nlink 0 and no holder: the free claim was taken, by the dead host
 * (dead inside daxfs_inode_free, perhaps long into a big file's data) or
 * by a live settler.  Without this the inode stayed, unnamed and never
 * freed, for fsck (found by tests/test_crash_fence.py: a host killed
 * during the unlink of a file with data).  Running daxfs_inode_free
 * again is safe, beside a live settler or after a dead one's partial
 * run: each of its pieces is freed by the one CAS that wins it (the
 * overlay deletes of the xattr set and the record, the radix drop's
 * seals and unhooks, the trie's and the link record's root).
 */
void daxfs_orphan_settle_dead(struct daxfs_op *op, u64 ino)
{
	settle(op, ino, true, NULL);
}

/* Our host's set: one entry 0 -> ino, adding a page when all are full. */
static int set_insert(struct daxfs_op *op, u64 ino)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_host *h = daxfs_host_at(fs, fs->host);
	struct daxfs_open_page *pg, *last;
	u64 off, zero, *link;
	u32 n, i, tries;

	/* fenced: the slot was recovered (its set dropped) and may be a
	 * new host's by now: add nothing to it */
	if (daxfs_fenced(op))
		return -ESTALE;
	summary_mark(fs, fs->host);	/* before any entry: race 1b */
	for (tries = 0; tries < 2 * DAXFS_OPEN_MAX_PAGES; tries++) {
		last = NULL;
		for_each_set_page(fs, fs->host, pg, n) {
			for (i = 0; i < DAXFS_OPEN_ENTRIES; i++) {
				if (daxfs_load(&pg->ino[i]))
					continue;
				if (daxfs_fenced(op))
					return -ESTALE;
				page_cover(pg, i);
				zero = 0;
				if (daxfs_cas(&pg->ino[i], &zero, ino))
					return 0;
			}
			last = pg;
		}
		if (n >= DAXFS_OPEN_MAX_PAGES)
			return -ENFILE;
		link = last ? &last->next : &h->open_set;
		off = daxfs_load(link);
		if (off && !set_page(fs, off, fs->host))
			return -EUCLEAN;	/* a chain we cannot follow */
		if (off)
			continue;	/* a sibling thread added a page */
		/* zeroed; the first page may come from the reserve
		 * (docs/open-files.md "On a full pool") */
		off = last ? daxfs_alloc(op, DAXFS_CLASS_PAGE) :
			     daxfs_alloc_open_page(op);
		pg = off ? daxfs_ptr(fs, off, sizeof(*pg), DAXFS_PAGE_SIZE) : NULL;
		if (!pg)
			return -ENOSPC;
		/* recovery frees it if we die; fenced: off leaks (fsck) */
		if (daxfs_hold_pages(op, off, 1))
			return -ESTALE;
		pg->slot = fs->host;
		pg->flags = DAXFS_OPEN_PF_HW;
		daxfs_store(&pg->magic, DAXFS_OPEN_MAGIC);
		daxfs_pflush(fs, pg, DAXFS_CACHELINE);
		if (daxfs_hold_pages(op, 0, 0))
			return -ESTALE;
		zero = 0;
		/* a sibling thread's won: ours goes back */
		if (!daxfs_cas(link, &zero, off) &&
		    daxfs_free_now(op, off, DAXFS_CLASS_PAGE))
			return -ESTALE;
	}
	return -EAGAIN;
}

/* Clears one entry equal to ino in slot's set; true if there was one. */
static bool set_remove(struct daxfs_fs *fs, u32 slot, u64 ino)
{
	struct daxfs_open_page *pg;
	u64 cur;
	u32 n, i, lim;

	for_each_set_page(fs, slot, pg, n) {
		lim = page_limit(pg);
		for (i = 0; i < lim; i++) {
			cur = ino;
			if (daxfs_load(&pg->ino[i]) == ino &&
			    daxfs_cas(&pg->ino[i], &cur, 0))
				return true;
		}
	}
	return false;
}

/* put: the entry goes, then the inode is settled (through fc, the
 * caller's cache of ino's record, or NULL: settle); the intent lets
 * recovery settle it when we die in between. */
static bool put_entry_fc(struct daxfs_op *op, u32 slot, u64 ino,
			 struct daxfs_fcache *fc)
{
	bool removed;

	if (daxfs_intent_set(op, DAXFS_INTENT_OPEN_PUT, ino, 0, 0, 0))
		return false;	/* fenced: recovery dropped our set */
	removed = set_remove(op->fs, slot, ino);
	daxfs_crash_point("open.removed");
	daxfs_race_point("open.removed", op);
	if (removed)
		settle(op, ino, false, fc);
	daxfs_intent_clear(op);
	return removed;
}

static bool put_entry(struct daxfs_op *op, u32 slot, u64 ino)
{
	return put_entry_fc(op, slot, ino, NULL);
}

/* Still named (or a pristine base inode)? */
static int still_linked(struct daxfs_op *op, u64 ino)
{
	struct daxfs_iref ref;
	int err = daxfs_inode_get(op, ino, &ref);

	if (err)
		return err;
	if (DAXFS_IS_DIR(daxfs_iref_mode(&ref)))
		return -EISDIR;
	if (ref.ip && !daxfs_load32(&ref.ip->nlink))
		return -ENOENT;	/* unlinked: no new opens */
	return 0;
}

/*
 * Still linked, or (by != DAXFS_NO_HOST) at nlink 0 while host by's set
 * names ino at least need times: the hand-over of a process's opens to
 * its fork child or its new image after exec, or another hold of a file
 * our own set names (docs/open-files.md "Opens handed over").  Looked at
 * after our entry and the fence, by's entry does for the name in race
 * 1: until it goes every settler finds it and stops, and whoever drops it
 * settles after that, fenced, so finds ours.  In our own set the entry
 * just inserted counts too, so another needs two.
 */
static int usable(struct daxfs_op *op, u64 ino, u32 by, u32 need)
{
	int err = still_linked(op, ino);

	if (err == -ENOENT && by != DAXFS_NO_HOST &&
	    slot_holds(op->fs, by, ino) >= need)
		return 0;
	return err;
}

static int open_held(struct daxfs_op *op, u64 ino, u32 by)
{
	struct daxfs_fs *fs = op->fs;
	u32 ours;
	int err;

	if (!op->lane || (fs->flags & DAXFS_FS_RDONLY))
		return 0;	/* a read-only view publishes nothing */
	if (by >= fs->sb.max_hosts)
		by = DAXFS_NO_HOST;
	ours = by == fs->host;
	err = usable(op, ino, by, 1);
	if (!err)
		err = set_insert(op, ino);
	if (err)
		return err;
	daxfs_crash_point("open.inserted");
	daxfs_fence();	/* entry before nlink (and by's entry): race 1 */
	err = usable(op, ino, by, 1 + ours);
	if (err) {
		if (daxfs_fenced(op))
			return -ESTALE;
		put_entry(op, fs->host, ino);
		err = err == -EISDIR ? -ENOENT : err;
	}
	return err;
}

static int open_get(struct daxfs_op *op, u64 ino)
{
	return open_held(op, ino, DAXFS_NO_HOST);
}

static int open_put(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc)
{
	if (!op->lane || (op->fs->flags & DAXFS_FS_RDONLY))
		return 0;
	if (put_entry_fc(op, op->fs->host, ino, fc))
		return 0;
	return daxfs_fenced(op) ? -ESTALE : -EBADF;
}

static int release(struct daxfs_op *op, u64 ino)
{
	daxfs_orphan_settle(op, ino);
	return 0;
}

/* fn(op, ino) inside an op of our host. */
static int in_op(struct daxfs_fs *fs, u64 ino,
		 int (*fn)(struct daxfs_op *op, u64 ino))
{
	struct daxfs_op op;
	int err = daxfs_op_begin(fs, &op);

	if (err)
		return err;
	err = fn(&op, ino);
	daxfs_op_end(&op);
	return err;
}

int daxfs_open_get(struct daxfs_fs *fs, u64 ino)
{
	return in_op(fs, ino, open_get);
}

int daxfs_open_get_held(struct daxfs_fs *fs, u64 ino, u32 slot)
{
	struct daxfs_op op;
	int err = daxfs_op_begin(fs, &op);

	if (err)
		return err;
	err = open_held(&op, ino, slot);
	daxfs_op_end(&op);
	return err;
}

int daxfs_open_put_fc(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc)
{
	struct daxfs_op op;
	int err = daxfs_op_begin(fs, &op);

	if (err)
		return err;
	err = open_put(&op, ino, fc);
	daxfs_op_end(&op);
	return err;
}

int daxfs_open_put(struct daxfs_fs *fs, u64 ino)
{
	return daxfs_open_put_fc(fs, ino, NULL);
}

int daxfs_inode_release(struct daxfs_fs *fs, u64 ino)
{
	return in_op(fs, ino, release);
}

void daxfs_open_drop(struct daxfs_op *op, u32 slot)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_host *h = daxfs_host_at(fs, slot);
	struct daxfs_open_page *pg;
	u64 off, next, e;
	u32 n, i, lim;

	if (!op->lane)
		return;
	if (daxfs_load(&h->open_set))
		summary_mark(fs, slot);	/* a set from before the summary */
	for_each_set_page(fs, slot, pg, n) {
		lim = page_limit(pg);
		for (i = 0; i < lim; i++) {
			e = daxfs_load(&pg->ino[i]);
			if (e)
				put_entry(op, slot, e);
		}
	}
	/*
	 * Unlink the (now empty) pages one at a time from the head, each
	 * with one CAS, and retire it at once: scanners still in their ops
	 * may read it until the epoch moves on, so never free now.  A host
	 * dying here leaves the rest linked for whoever recovers the slot;
	 * only the page between its CAS and its retire can leak (fsck).
	 */
	for (n = 0; n < DAXFS_OPEN_MAX_PAGES; n++) {
		off = daxfs_load(&h->open_set);
		if (!off)
			break;
		pg = set_page(fs, off, slot);
		if (daxfs_fenced(op))
			return;		/* or a page of it on a bad block */
		next = pg ? daxfs_load(&pg->next) : 0;
		if (!daxfs_cas(&h->open_set, &off, next))
			return;		/* another dropper of this slot */
		if (!pg)
			break;		/* not a set page: fsck's business */
		daxfs_crash_point("open.unlinked");
		if (daxfs_retire(op, off, DAXFS_CLASS_PAGE))
			return;		/* fenced: off leaks (fsck) */
	}
	/* empty and unlinked, and the slot inserts nothing more (dead or
	 * leaving): its bit may go */
	if (!daxfs_load(&h->open_set))
		summary_clear(fs, slot);
}

void daxfs_open_recover_lane(struct daxfs_op *op, struct daxfs_lane *dead)
{
	u64 ino;

	/* a recoverer overtaken: the lane may be a new host's op by now
	 * (docs/recovery.md "Lane recoveries of an overtaken recoverer") */
	if (daxfs_recovery_lost(op))
		return;
	ino = daxfs_load(&dead->intent.a[0]);
	if (ino)
		daxfs_orphan_settle_dead(op, ino);
	else
		daxfs_tmpfile_recover(op, dead);	/* an unnamed file being made */
}

int daxfs_open_insert(struct daxfs_op *op, u64 ino)
{
	return set_insert(op, ino);
}

bool daxfs_open_held_here(struct daxfs_fs *fs, u64 ino)
{
	return fs->host < fs->sb.max_hosts && slot_holds(fs, fs->host, ino);
}

u32 daxfs_open_count(struct daxfs_fs *fs, u32 slot, u32 *pages)
{
	struct daxfs_open_page *pg;
	u32 n, i, c = 0;

	for_each_set_page(fs, slot, pg, n)
		for (i = 0; i < page_limit(pg); i++)
			if (daxfs_load(&pg->ino[i]))
				c++;
	if (pages)
		*pages = n;
	return c;
}
