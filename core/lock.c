// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Cluster-wide advisory locks (docs/locks.md): POSIX record locks, OFD
 * locks and flock, held in a table in the region so that every host sees
 * every other host's locks.
 *
 * state.lock_root -> root page -> DAXFS_LOCK_BUCKETS bucket pages, each
 * made on first use; all locks of one inode live in one bucket.  A bucket
 * changes only under its claim word (held for one bounded scan of its 63
 * records, never across a sleep or a call out of this file); a record
 * names its host (slot + generation) and the host's owner id, so a record
 * whose host is no longer ALIVE with that generation is no lock at all:
 * everyone ignores it and the next claimer drops it.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "lock.h"

#define LK_HOST_MASK	((1ULL << DAXFS_LOCK_CLAIM_LANE_SHIFT) - 1)
#define LK_SPINS	64u		/* claim spins between yields */
#define LK_CHECK_SPINS	(64u * 1024)	/* ... then look at the holder's lease */
#define LK_BACKOFF_MIN	20u		/* microseconds */
#define LK_BACKOFF_MAX	1000u

u64 daxfs_lock_me(struct daxfs_fs *fs)
{
	return daxfs_my_claim(fs) & LK_HOST_MASK;
}

static u64 lk_claim_me(struct daxfs_op *op)
{
	return ((u64)(op->lane_idx + 1) << DAXFS_LOCK_CLAIM_LANE_SHIFT) |
	       daxfs_lock_me(op->fs);
}

/* [s1, e1] ends right before [s2, e2] starts, or the other way round. */
static bool lk_adjacent(u64 s1, u64 e1, u64 s2, u64 e2)
{
	return (e1 != DAXFS_LOCK_EOF && e1 + 1 == s2) ||
	       (e2 != DAXFS_LOCK_EOF && e2 + 1 == s1);
}

bool daxfs_lock_host_stale(struct daxfs_fs *fs, u64 host)
{
	u32 slot = (u32)(host & 0xffff) - 1;
	u64 st;

	if (slot >= fs->sb.max_hosts)
		return true;
	st = daxfs_load(&daxfs_host_at(fs, slot)->state);
	return daxfs_host_st(st) != DAXFS_HOST_ALIVE ||
	       (daxfs_claim_word(slot, daxfs_host_gen(st)) & LK_HOST_MASK) !=
	       (host & LK_HOST_MASK);
}

/* Loads p once into r; false when free (r->host 0) or not a valid
 * record (r->host != 0: corrupt, left for fsck). */
bool daxfs_lock_rec_load(struct daxfs_lock_rec *p, struct daxfs_lock_view *r)
{
	u32 f;

	r->host = daxfs_load(&p->host);
	if (!r->host)
		return false;
	r->owner = daxfs_load(&p->owner);
	r->ino = daxfs_load(&p->ino);
	r->start = daxfs_load(&p->start);
	r->end = daxfs_load(&p->end);
	f = daxfs_load32(&p->flags);
	r->pid = daxfs_load32(&p->pid);
	r->type = f & DAXFS_LOCK_TYPE_MASK;
	r->kind = (f & DAXFS_LOCK_KIND_MASK) >> DAXFS_LOCK_KIND_SHIFT;
	r->waiting = f & DAXFS_LOCK_WAITING;
	return r->type >= DAXFS_LCK_RD && r->type <= DAXFS_LCK_WR &&
	       r->kind >= DAXFS_LCK_POSIX && r->start <= r->end && r->ino &&
	       !(f & ~(DAXFS_LOCK_TYPE_MASK | DAXFS_LOCK_KIND_MASK |
		       DAXFS_LOCK_WAITING));
}

/* Fields first, the host word last (release): a reader that sees the
 * host word sees the rest. */
static void rec_store(struct daxfs_lock_rec *p, u64 host, u64 ino,
		      const struct daxfs_lock_req *r, u64 start, u64 end,
		      u32 type, bool waiting)
{
	daxfs_store(&p->owner, r->owner);
	daxfs_store(&p->ino, ino);
	daxfs_store(&p->start, start);
	daxfs_store(&p->end, end);
	daxfs_store32(&p->pid, r->pid);
	daxfs_store32(&p->flags, type | (r->kind << DAXFS_LOCK_KIND_SHIFT) |
		      (waiting ? DAXFS_LOCK_WAITING : 0));
	daxfs_store(&p->host, host);
}

int daxfs_lock_rec_check(struct daxfs_fs *fs, struct daxfs_lock_rec *p,
			 u64 *ino)
{
	struct daxfs_lock_view x;
	bool ok = daxfs_lock_rec_load(p, &x);

	*ino = x.host ? x.ino : 0;
	if (!x.host)
		return DAXFS_LOCK_REC_FREE;
	if (!ok || (u32)(x.host & 0xffff) - 1 >= fs->sb.max_hosts)
		return DAXFS_LOCK_REC_BAD;
	return daxfs_lock_host_stale(fs, x.host) ? DAXFS_LOCK_REC_STALE :
	       DAXFS_LOCK_REC_LIVE;
}

static void rec_clear(struct daxfs_lock_rec *p)
{
	daxfs_store(&p->host, 0);
}

/* ---- pages ---- */

struct daxfs_lock_root *daxfs_lock_root_get(struct daxfs_fs *fs)
{
	u64 off = daxfs_load(&fs->state->lock_root);
	struct daxfs_lock_root *root;

	if (!off)
		return NULL;
	root = daxfs_ptr(fs, off, sizeof(*root), DAXFS_PAGE_SIZE);
	if (!root || daxfs_media_direct_bad(fs, off, sizeof(*root), DAXFS_MEDIA_LOCKS) ||
	    daxfs_load(&root->magic) != DAXFS_LOCK_ROOT_MAGIC ||
	    daxfs_load32(&root->nr_buckets) != DAXFS_LOCK_BUCKETS)
		return NULL;
	return root;
}

struct daxfs_lock_bucket *daxfs_lock_bucket_at(struct daxfs_fs *fs,
					       struct daxfs_lock_root *root,
					       u32 i)
{
	struct daxfs_lock_bucket *b;
	u64 off;

	if (!root || i >= DAXFS_LOCK_BUCKETS)
		return NULL;
	off = daxfs_load(&root->bucket[i]);
	if (!off)
		return NULL;
	b = daxfs_ptr(fs, off, sizeof(*b), DAXFS_PAGE_SIZE);
	if (!b || daxfs_media_direct_bad(fs, off, sizeof(*b), DAXFS_MEDIA_LOCKS) ||
	    daxfs_load(&b->magic) != DAXFS_LOCK_BKT_MAGIC ||
	    daxfs_load32(&b->index) != i)
		return NULL;
	return b;
}

u32 daxfs_lock_bucket_index(u64 ino)
{
	return (u32)(daxfs_mix64(ino) % DAXFS_LOCK_BUCKETS);
}

/*
 * Makes the page that *word names when it is 0: a zeroed page, magic
 * and index written, held in our lane until the CAS that publishes it
 * (a crash before leaks nothing: recovery frees the hold).  The loser of
 * a race frees its page.  0 or -ENOLCK (no space), -ESTALE.
 */
static int lk_publish(struct daxfs_op *op, u64 *word, u64 magic, u32 index)
{
	struct daxfs_fs *fs = op->fs;
	u64 off, zero = 0;
	u64 *pg;

	off = daxfs_alloc(op, DAXFS_CLASS_PAGE);
	if (!off)
		return -ENOLCK;
	if (daxfs_hold_pages(op, off, 1))
		return -ESTALE;		/* off leaks to fsck */
	pg = daxfs_ptr(fs, off, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE);
	if (!pg)
		return -EUCLEAN;
	/* magic at word 0 of both kinds; root: nr_buckets, bucket: index */
	if (magic == DAXFS_LOCK_ROOT_MAGIC)
		((struct daxfs_lock_root *)pg)->nr_buckets = DAXFS_LOCK_BUCKETS;
	else
		((struct daxfs_lock_bucket *)pg)->index = index;
	daxfs_store(&pg[0], magic);
	if (fs->flags & DAXFS_FS_PERSISTENT)
		daxfs_flush(pg, DAXFS_PAGE_SIZE);
	/* fenced: recovery frees the held page */
	if (daxfs_hold_pages(op, 0, 0))
		return -ESTALE;
	if (!daxfs_cas(word, &zero, off))
		return daxfs_free_now(op, off, DAXFS_CLASS_PAGE);
	return 0;
}

/* ino's bucket; create: make the root and bucket pages when missing. */
static int lk_bucket(struct daxfs_op *op, u64 ino, bool create,
		     struct daxfs_lock_bucket **bp)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_lock_root *root;
	u32 i = daxfs_lock_bucket_index(ino);
	int err;

	*bp = NULL;
	if (!daxfs_load(&fs->state->lock_root)) {
		if (!create)
			return 0;
		err = lk_publish(op, &fs->state->lock_root,
				 DAXFS_LOCK_ROOT_MAGIC, 0);
		if (err)
			return err;
	}
	root = daxfs_lock_root_get(fs);
	if (!root)
		return -EUCLEAN;
	if (!daxfs_load(&root->bucket[i])) {
		if (!create)
			return 0;
		err = lk_publish(op, &root->bucket[i], DAXFS_LOCK_BKT_MAGIC, i);
		if (err)
			return err;
	}
	*bp = daxfs_lock_bucket_at(fs, root, i);
	return *bp ? 0 : -EUCLEAN;
}

/* ---- the bucket claim ---- */

/*
 * Takes b's claim.  A claim of a host that is no longer ALIVE with its
 * generation is taken over (the dead holder changed only its own
 * records, which are dropped with it).  A holder that stays past
 * LK_CHECK_SPINS has its lease looked at, and is recovered if it ran
 * out: we hold nothing then, so its recovery can sweep this bucket.
 * A claim of our own lane, or one that a live host holds for three
 * leases (a lock op holds it for a few record stores), is a word no
 * lock op wrote (a peer's stray store): -EUCLEAN, not a wait for ever.
 */
static int bkt_claim(struct daxfs_op *op, struct daxfs_lock_bucket *b)
{
	struct daxfs_fs *fs = op->fs;
	u64 me = lk_claim_me(op), c, last = 0, st;
	u32 spins = 0, slot;
	s64 since = 0;

	for (;;) {
		c = daxfs_load(&b->claim);
		if (!c || daxfs_lock_host_stale(fs, c & LK_HOST_MASK)) {
			if (daxfs_fenced(op))
				return -ESTALE;
			if (daxfs_cas(&b->claim, &c, me))
				return 0;
			continue;
		}
		if (c == me)
			return -EUCLEAN;
		if (c != last) {
			last = c;
			since = 0;
		}
		if (++spins % LK_SPINS) {
			daxfs_cpu_relax();
			continue;
		}
		daxfs_yield();
		if (daxfs_fenced(op))
			return -ESTALE;
		if (daxfs_claim_held_too_long(fs, &since, 3))
			return -EUCLEAN;
		if (spins < LK_CHECK_SPINS)
			continue;
		spins = 0;
		slot = (u32)(c & 0xffff) - 1;
		st = daxfs_load(&daxfs_host_at(fs, slot)->state);
		if (slot != fs->host &&
		    !daxfs_host_alive(fs, slot, daxfs_host_gen(st)))
			daxfs_host_check_dead(op, slot);
	}
}

/* changed: records went, or a lock was set or converted: waiters look
 * again.  A CAS, not a store: a claim taken over from us stays. */
static void bkt_release(struct daxfs_op *op, struct daxfs_lock_bucket *b,
			bool changed)
{
	u64 me = lk_claim_me(op);

	if (changed)
		daxfs_faa(&b->seq, 1);
	daxfs_cas(&b->claim, &me, 0);
}

/* ---- requests ---- */

static bool req_valid(const struct daxfs_lock_req *r)
{
	return r->type <= DAXFS_LCK_WR && r->kind >= DAXFS_LCK_POSIX &&
	       r->kind <= DAXFS_LCK_FLOCK && r->start <= r->end;
}

static bool rec_own(const struct daxfs_lock_view *x, u64 me,
		    const struct daxfs_lock_req *r)
{
	return x->host == me && x->owner == r->owner && x->kind == r->kind;
}

/* x (a lock of another owner) conflicts with the request r. */
static bool rec_conflicts(const struct daxfs_lock_view *x, u64 ino,
			  const struct daxfs_lock_req *r, u64 me)
{
	return !x->waiting && x->ino == ino && !rec_own(x, me, r) &&
	       daxfs_lock_class(x->kind) == daxfs_lock_class(r->kind) &&
	       daxfs_lock_overlap(x->start, x->end, r->start, r->end) &&
	       (x->type == DAXFS_LCK_WR || r->type == DAXFS_LCK_WR);
}

static void req_from_rec(struct daxfs_lock_req *r, const struct daxfs_lock_view *x)
{
	r->start = x->start;
	r->end = x->end;
	r->owner = x->owner;
	r->type = x->type;
	r->kind = x->kind;
	r->pid = x->pid;
	r->host = (u32)(x->host & 0xffff) - 1;
}

/* What one claimed pass over a bucket found for a request. */
struct lk_scan {
	int conflict;			/* first conflicting record, or -1 */
	struct daxfs_lock_view cf;
	int waiting;			/* our own waiting record, or -1 */
	u64 mine;			/* bit i: our locks to replace */
	u32 nfree;			/* free slots (stale ones dropped) */
	bool changed;
	/* the replacement: [ns, ne] of the new type, remainders of others */
	u64 ns, ne;
	struct daxfs_lock_view left, right;
	bool has_left, has_right;
	/* set by the caller: the owner's records of any host are its own
	 * (a shared owner's F_GETLK, which moves nothing) */
	bool own_any;
};

/*
 * Scans b (claimed) for r on ino: drops stale records, finds the first
 * conflict, our waiting record, and the owner's own locks that r
 * replaces, splits or merges with (Linux's posix_lock_inode rules: the
 * own range is cut out, remainders of another type stay, neighbours and
 * remainders of the new type merge into it).
 */
static void lk_scan(struct daxfs_fs *fs, struct daxfs_lock_bucket *b,
		    u64 ino, const struct daxfs_lock_req *r, struct lk_scan *s)
{
	u64 me = daxfs_lock_me(fs);
	struct daxfs_lock_view x;
	u32 i;

	s->conflict = -1;
	s->waiting = -1;
	s->mine = 0;
	s->nfree = 0;
	s->changed = false;
	s->ns = r->start;
	s->ne = r->end;
	s->has_left = s->has_right = false;
	for (i = 0; i < DAXFS_LOCK_RECS; i++) {
		struct daxfs_lock_rec *p = &b->rec[i];
		bool ok = daxfs_lock_rec_load(p, &x);

		if (!x.host) {
			s->nfree++;
			continue;
		}
		if (daxfs_lock_host_stale(fs, x.host)) {
			rec_clear(p);
			s->changed = true;
			s->nfree++;
			continue;
		}
		if (!ok || x.ino != ino)
			continue;
		if (!rec_own(&x, s->own_any ? x.host : me, r)) {
			if (s->conflict < 0 && r->type != DAXFS_LCK_UN &&
			    rec_conflicts(&x, ino, r, me)) {
				s->conflict = (int)i;
				s->cf = x;
			}
			continue;
		}
		if (x.waiting) {
			s->waiting = (int)i;
			continue;
		}
		if (daxfs_lock_overlap(x.start, x.end, r->start, r->end)) {
			s->mine |= 1ULL << i;
			if (x.start < r->start) {
				if (x.type == r->type) {
					s->ns = x.start;
				} else {
					s->left = x;
					s->left.end = r->start - 1;
					s->has_left = true;
				}
			}
			if (x.end > r->end) {
				if (x.type == r->type) {
					s->ne = x.end;
				} else {
					s->right = x;
					s->right.start = r->end + 1;
					s->has_right = true;
				}
			}
		} else if (r->type == x.type &&
			   lk_adjacent(x.start, x.end, r->start, r->end)) {
			s->mine |= 1ULL << i;
			if (x.start < s->ns)
				s->ns = x.start;
			if (x.end > s->ne)
				s->ne = x.end;
		}
	}
}

/* A free record slot of b, or NULL. */
static struct daxfs_lock_rec *lk_free_rec(struct daxfs_lock_bucket *b)
{
	u32 i;

	for (i = 0; i < DAXFS_LOCK_RECS; i++)
		if (!daxfs_load(&b->rec[i].host))
			return &b->rec[i];
	return NULL;
}

/* Stores one piece in a free slot of b; -EUCLEAN when there is none
 * although lk_apply counted one (only a writer without the claim, a host
 * declared dead inside its claim, can have taken it). */
static int lk_put(struct daxfs_fs *fs, struct daxfs_lock_bucket *b, u64 ino,
		  const struct daxfs_lock_req *r, u64 start, u64 end, u32 type)
{
	struct daxfs_lock_rec *p = lk_free_rec(b);

	if (!p)
		return -EUCLEAN;
	rec_store(p, daxfs_lock_me(fs), ino, r, start, end, type, false);
	return 0;
}

/* Replaces the owner's records found by lk_scan with the new pieces;
 * -ENOLCK (nothing changed) when they do not fit. */
static int lk_apply(struct daxfs_fs *fs, struct daxfs_lock_bucket *b,
		    u64 ino, const struct daxfs_lock_req *r, struct lk_scan *s)
{
	u32 need = (r->type != DAXFS_LCK_UN) + s->has_left + s->has_right;
	u32 avail = s->nfree + daxfs_popcount64(s->mine) + (s->waiting >= 0);
	int err = 0;
	u32 i;

	if (need > avail)
		return -ENOLCK;
	for (i = 0; i < DAXFS_LOCK_RECS; i++)
		if (s->mine & (1ULL << i))
			rec_clear(&b->rec[i]);
	if (s->waiting >= 0)
		rec_clear(&b->rec[s->waiting]);
	s->changed = true;
	daxfs_race_point("lock.apply", b);
	/* the slots just freed are found again: need <= avail */
	if (s->has_left)
		err = lk_put(fs, b, ino, r, s->left.start, s->left.end,
			     s->left.type);
	if (!err && s->has_right)
		err = lk_put(fs, b, ino, r, s->right.start, s->right.end,
			     s->right.type);
	if (!err && r->type != DAXFS_LCK_UN)
		err = lk_put(fs, b, ino, r, s->ns, s->ne, r->type);
	return err;
}

/*
 * Moves to our host word, in b (claimed), the records of owner on ino that
 * another host holds: host word from only, or (from 0) any host still
 * ALIVE; of kind (0: OFD and flock).  Waiting requests stay.  A record
 * changes with one store of its host word, so a reader without the claim
 * sees it whole, one host's or the other's.  Returns how many moved.
 */
static u32 lk_move(struct daxfs_fs *fs, struct daxfs_lock_bucket *b, u64 ino,
		   u64 owner, u32 kind, u64 from)
{
	u64 me = daxfs_lock_me(fs);
	struct daxfs_lock_view x;
	u32 i, n = 0;

	for (i = 0; i < DAXFS_LOCK_RECS; i++) {
		struct daxfs_lock_rec *p = &b->rec[i];

		if (!daxfs_lock_rec_load(p, &x) || x.host == me || x.waiting ||
		    x.ino != ino || x.owner != owner)
			continue;
		if (kind ? x.kind != kind : x.kind == DAXFS_LCK_POSIX)
			continue;
		if (from ? x.host != from : daxfs_lock_host_stale(fs, x.host))
			continue;
		daxfs_race_point("lock.move", b);
		daxfs_store(&p->host, me);
		n++;
	}
	return n;
}

/* Strips DAXFS_LCK_SHARED off r->kind; -EINVAL: it is on a POSIX one. */
static int lk_shared(struct daxfs_lock_req *r, u32 *shared)
{
	*shared = r->kind & DAXFS_LCK_SHARED;
	r->kind &= ~DAXFS_LCK_SHARED;
	return *shared && r->kind == DAXFS_LCK_POSIX ? -EINVAL : 0;
}

/* ---- public calls ---- */

/* A conflicting holder whose lease this observer saw run out: recover
 * it (outside the claim) so that its locks go; true when it is gone. */
static bool lk_reap_holder(struct daxfs_op *op, u64 host)
{
	struct daxfs_fs *fs = op->fs;
	u32 slot = (u32)(host & 0xffff) - 1;
	u64 st;

	if (slot >= fs->sb.max_hosts || slot == fs->host)
		return false;
	st = daxfs_load(&daxfs_host_at(fs, slot)->state);
	if (daxfs_host_alive(fs, slot, daxfs_host_gen(st)))
		return false;
	return daxfs_host_check_dead(op, slot) == 1;
}

/* Publishes our waiting record (under the claim) unless the wait began
 * earlier: true when it did, and the caller then looks for a cycle once
 * the claim is released (as Linux, when the wait begins). */
static bool lk_wait_publish(struct daxfs_fs *fs, struct daxfs_lock_bucket *b,
			    u64 ino, const struct daxfs_lock_req *r,
			    const struct lk_scan *s)
{
	struct daxfs_lock_rec *p;

	if (s->waiting >= 0)
		return false;
	p = lk_free_rec(b);
	if (!p)
		return false;	/* no room to be seen waiting: no detection */
	rec_store(p, daxfs_lock_me(fs), ino, r, r->start, r->end, r->type, true);
	return true;
}

int daxfs_lock_set(struct daxfs_fs *fs, u64 ino, struct daxfs_lock_req *r,
		   u32 flags)
{
	struct daxfs_lock_bucket *b;
	struct daxfs_op op;
	struct lk_scan s;
	int err, tries;
	u32 shared, moved;
	bool waits;

	err = lk_shared(r, &shared);
	if (!err && (!ino || !req_valid(r)))
		err = -EINVAL;
	if (!err && fs->host == DAXFS_NO_HOST)
		err = -EROFS;
	if (!err)
		err = daxfs_op_begin(fs, &op);
	if (err) {
		r->kind |= shared;
		return err;
	}
	for (tries = 0; tries < 2; tries++) {
		err = lk_bucket(&op, ino, r->type != DAXFS_LCK_UN, &b);
		if (err || !b)
			break;	/* an unlock with no table: nothing held */
		err = bkt_claim(&op, b);
		if (err)
			break;
		/* a shared description's locks are ours wherever they are */
		moved = shared ? lk_move(fs, b, ino, r->owner, r->kind, 0) : 0;
		s.own_any = false;
		lk_scan(fs, b, ino, r, &s);
		s.changed |= moved != 0;
		if (s.conflict < 0) {
			err = lk_apply(fs, b, ino, r, &s);
			bkt_release(&op, b, s.changed);
			break;
		}
		waits = (flags & DAXFS_LOCK_WAIT) && r->kind == DAXFS_LCK_POSIX &&
			lk_wait_publish(fs, b, ino, r, &s);
		r->seq = daxfs_load(&b->seq);
		bkt_release(&op, b, s.changed);
		err = -EAGAIN;
		/* our record before their records (the claim's CAS is a full
		 * barrier too): two owners closing a cycle at once see at
		 * least each other's (docs/locks.md "Deadlocks"); the walk
		 * reads every bucket, so it runs outside the claim */
		daxfs_fence();
		if (waits && daxfs_lock_deadlock(fs, r, &s.cf)) {
			err = -EDEADLK;
			break;
		}
		if (!lk_reap_holder(&op, s.cf.host))
			break;
	}
	daxfs_op_end(&op);
	if (err == -EDEADLK)
		daxfs_lock_cancel(fs, ino, r);	/* our waiting record goes */
	r->kind |= shared;
	return err;
}

int daxfs_lock_get(struct daxfs_fs *fs, u64 ino, struct daxfs_lock_req *r)
{
	struct daxfs_lock_bucket *b;
	struct daxfs_op op;
	struct lk_scan s;
	u32 shared;
	int err;

	err = lk_shared(r, &shared);
	if (!err && (!ino || !req_valid(r) || r->type == DAXFS_LCK_UN))
		err = -EINVAL;
	if (!err)
		err = daxfs_op_begin(fs, &op);
	if (err) {
		r->kind |= shared;
		return err;
	}
	if (!op.lane) {
		err = -EROFS;
		goto out;
	}
	err = lk_bucket(&op, ino, false, &b);
	if (err)
		goto out;
	r->host = fs->host;
	if (!b) {
		r->type = DAXFS_LCK_UN;
		goto out;
	}
	err = bkt_claim(&op, b);
	if (err)
		goto out;
	/* a shared owner's own lock is no conflict, wherever it is: left
	 * where it is (a look moves nothing) */
	s.own_any = shared;
	lk_scan(fs, b, ino, r, &s);
	bkt_release(&op, b, s.changed);
	if (s.conflict < 0)
		r->type = DAXFS_LCK_UN;
	else
		req_from_rec(r, &s.cf);
out:
	daxfs_op_end(&op);
	/* a conflict reported is another owner's: its kind has no mark */
	if (r->type == DAXFS_LCK_UN || err)
		r->kind |= shared;
	return err;
}

void daxfs_lock_cancel(struct daxfs_fs *fs, u64 ino,
		       const struct daxfs_lock_req *r)
{
	struct daxfs_lock_bucket *b;
	struct daxfs_lock_req un = *r;
	struct daxfs_op op;
	struct lk_scan s;
	u32 shared;

	if (lk_shared(&un, &shared) || daxfs_op_begin(fs, &op))
		return;
	if (!op.lane)
		goto out;
	if (lk_bucket(&op, ino, false, &b) || !b || bkt_claim(&op, b))
		goto out;
	un.type = DAXFS_LCK_UN;
	s.own_any = false;
	lk_scan(fs, b, ino, &un, &s);
	if (s.waiting >= 0)
		rec_clear(&b->rec[s.waiting]);
	bkt_release(&op, b, s.changed);
out:
	daxfs_op_end(&op);
}

bool daxfs_lock_changed(struct daxfs_fs *fs, u64 ino, u64 seq)
{
	struct daxfs_lock_bucket *b;

	b = daxfs_lock_bucket_at(fs, daxfs_lock_root_get(fs),
				 daxfs_lock_bucket_index(ino));
	return !b || daxfs_load(&b->seq) != seq;
}

u64 *daxfs_lock_seq_word(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_lock_bucket *b;

	b = daxfs_lock_bucket_at(fs, daxfs_lock_root_get(fs),
				 daxfs_lock_bucket_index(ino));
	return b ? &b->seq : NULL;
}

u32 daxfs_lock_backoff_us(u32 round)
{
	if (round >= 6)
		return LK_BACKOFF_MAX;
	return LK_BACKOFF_MIN << round < LK_BACKOFF_MAX ?
	       LK_BACKOFF_MIN << round : LK_BACKOFF_MAX;
}

int daxfs_lock_list(struct daxfs_fs *fs, u64 ino, daxfs_lock_fn fn, void *ctx)
{
	struct daxfs_lock_root *root = daxfs_lock_root_get(fs);
	struct daxfs_lock_bucket *b;
	struct daxfs_lock_req l;
	struct daxfs_lock_view x;
	u32 bi, i;
	int n = 0;

	for (bi = 0; root && bi < DAXFS_LOCK_BUCKETS; bi++) {
		if (ino && bi != daxfs_lock_bucket_index(ino))
			continue;
		b = daxfs_lock_bucket_at(fs, root, bi);
		for (i = 0; b && i < DAXFS_LOCK_RECS; i++) {
			if (!daxfs_lock_rec_load(&b->rec[i], &x) ||
			    (ino && x.ino != ino) ||
			    daxfs_lock_host_stale(fs, x.host))
				continue;
			req_from_rec(&l, &x);
			l.seq = 0;
			if (fn)
				fn(ctx, x.ino, &l, x.waiting);
			n++;
		}
	}
	return n;
}

int daxfs_lock_adopt(struct daxfs_fs *fs, u32 slot, u64 gen,
		     const struct daxfs_lock_shift *sh)
{
	struct daxfs_lock_root *root = daxfs_lock_root_get(fs);
	u64 old = daxfs_claim_word(slot, gen) & LK_HOST_MASK, o;
	struct daxfs_lock_bucket *b;
	struct daxfs_lock_rec *p;
	struct daxfs_op op;
	u32 bi, i, n = 0;
	bool changed;
	int err;

	if (fs->host == DAXFS_NO_HOST)
		return -EROFS;	/* a host-less view stores nothing */
	if (slot >= fs->sb.max_hosts || slot == fs->host)
		return -EINVAL;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	for (bi = 0; root && op.lane && bi < DAXFS_LOCK_BUCKETS; bi++) {
		b = daxfs_lock_bucket_at(fs, root, bi);
		if (!b || bkt_claim(&op, b))
			continue;
		changed = false;
		/* declared dead meanwhile: its records are no locks, and
		 * another host may hold one of them now; they stay its */
		if (daxfs_lock_host_stale(fs, old)) {
			bkt_release(&op, b, false);
			continue;
		}
		for (i = 0; i < DAXFS_LOCK_RECS; i++) {
			p = &b->rec[i];
			if ((daxfs_load(&p->host) & LK_HOST_MASK) != old ||
			    (daxfs_load32(&p->flags) & DAXFS_LOCK_WAITING))
				continue;
			/* under the claim nobody else changes the bucket;
			 * readers without it see no record, or a whole one
			 * (host cleared first, stored last) */
			o = daxfs_load(&p->owner);
			rec_clear(p);
			/* a POSIX owner is the process: the same after exec */
			if (sh && o >= sh->lo && o < sh->hi &&
			    (daxfs_load32(&p->flags) & DAXFS_LOCK_KIND_MASK) !=
			    DAXFS_LCK_POSIX << DAXFS_LOCK_KIND_SHIFT)
				daxfs_store(&p->owner, o - sh->lo + sh->to);
			daxfs_store(&p->host, daxfs_lock_me(fs));
			changed = true;
			n++;
		}
		bkt_release(&op, b, changed);
	}
	daxfs_op_end(&op);
	return (int)n;
}

int daxfs_lock_adopt_owner(struct daxfs_fs *fs, u32 slot, u64 gen, u64 ino,
			   u64 owner)
{
	u64 old = daxfs_claim_word(slot, gen) & LK_HOST_MASK;
	struct daxfs_lock_bucket *b;
	struct daxfs_op op;
	u32 n = 0;
	int err;

	if (fs->host == DAXFS_NO_HOST)
		return -EROFS;
	if (!ino || slot >= fs->sb.max_hosts || slot == fs->host)
		return -EINVAL;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = lk_bucket(&op, ino, false, &b);
	if (!err && b)
		err = bkt_claim(&op, b);
	if (!err && b) {
		/* under the claim nobody grants a lock of this inode: the
		 * records are the old host's locks until it stops being
		 * ALIVE, and ours from this store on */
		if (!daxfs_lock_host_stale(fs, old))
			n = lk_move(fs, b, ino, owner, 0, old);
		bkt_release(&op, b, n != 0);
	}
	daxfs_op_end(&op);
	return err ? err : (int)n;
}

void daxfs_lock_sweep(struct daxfs_op *op, u64 also)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_lock_root *root = daxfs_lock_root_get(fs);
	struct daxfs_lock_bucket *b;
	bool changed;
	u64 h;
	u32 bi, i;

	if (!op->lane)
		return;
	also &= LK_HOST_MASK;
	for (bi = 0; root && bi < DAXFS_LOCK_BUCKETS; bi++) {
		b = daxfs_lock_bucket_at(fs, root, bi);
		if (!b || bkt_claim(op, b))
			continue;
		changed = false;
		for (i = 0; i < DAXFS_LOCK_RECS; i++) {
			h = daxfs_load(&b->rec[i].host);
			if (!h || (h != also && !daxfs_lock_host_stale(fs, h)))
				continue;
			rec_clear(&b->rec[i]);
			changed = true;
		}
		bkt_release(op, b, changed);
	}
}
