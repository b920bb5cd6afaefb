// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Inode records: resolution through the overlay (INODE(ino) -> 128-byte
 * record) with fall-back to the read-only base inode, copy-up of base
 * inodes, creation, link counts, times and freeing.  docs/inodes.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "base.h"
#include "inode.h"
#include "dir.h"
#include "file.h"
#include "symlink.h"
#include "xattr-int.h"
#include "openset.h"

/* Copy-up and lookups retry this often while another host's insert of
 * the same key is pending (it completes, or recovery tombstones it). */
#define DAXFS_PENDING_TRIES	4096

static u64 inode_key(u64 ino)
{
	return daxfs_key(DAXFS_KEY_INODE, ino);
}

/* An unlinked non-directory kept for a host that still uses it. */
static bool is_orphan(struct daxfs_inode *ip)
{
	return daxfs_load32(&ip->flags) & DAXFS_IF_ORPHAN;
}

/* Validated record at off for ino. */
static inline int record_at(struct daxfs_fs *fs, u64 off, u64 ino,
			    struct daxfs_inode **ipp)
{
	struct daxfs_inode *ip = daxfs_meta_ptr(fs, off, sizeof(*ip),
						DAXFS_OFF_ALIGN);

	if (!ip)
		return -EUCLEAN;
	if (daxfs_load(&ip->ino) != ino ||
	    daxfs_load32(&ip->magic) != DAXFS_INODE_MAGIC)
		return -EUCLEAN;
	*ipp = ip;
	return 0;
}

/*
 * The pristine base inode ino, for an inode the overlay has no record of:
 * -ENOENT when there is none (a number past the base, or a dynamic one),
 * -EUCLEAN when it exists but cannot be read (its page is listed bad, or
 * the header's table does not fit the region): never "no such file" for a
 * base file that is there.
 */
static int base_fallback(struct daxfs_fs *fs, u64 ino,
			 const struct daxfs_base_inode **bipp)
{
	const struct daxfs_base_inode *bip;

	if (!daxfs_is_base_ino(fs, ino) || ino >= fs->sb.first_dyn_ino)
		return -ENOENT;
	bip = daxfs_base_inode(fs, ino);
	if (!bip)
		return -EUCLEAN;
	if (bip->mode == 0)
		return -ENOENT;
	*bipp = bip;
	return 0;
}

/* The record at off, when it is ino's and in use: nlink 0 means being
 * freed, or a dead base inode's marker, unless kept as an open orphan. */
static inline int live_record(struct daxfs_fs *fs, u64 off, u64 ino,
			      struct daxfs_inode **ipp)
{
	int err = record_at(fs, off, ino, ipp);

	if (err)
		return err;
	if (daxfs_load32(&(*ipp)->nlink) == 0 && !is_orphan(*ipp))
		return -ENOENT;
	return 0;
}

/* The caller's words, not the region's: out of sync mode's store log
 * (which would flush them), stored whole (other threads may load them). */
static void fc_set(struct daxfs_fcache *fc, u64 rec, u64 bucket)
{
	void *log = daxfs_dirty_pause();

	/* a reader between the stores may see the new bucket with the old
	 * record: a miss, never wrong */
	daxfs_store(&fc->bucket, bucket);
	daxfs_store(&fc->rec, rec);
	daxfs_dirty_resume(log);
}

/*
 * The record fc names, if its bucket still publishes it for ino and it is
 * still ino's live record: then it is what a lookup would find now
 * (docs/open-files.md "Per-open-file cache").  Else the cache is dropped.
 */
static struct daxfs_inode *cached_record(struct daxfs_fs *fs, u64 ino,
					 struct daxfs_fcache *fc)
{
	struct daxfs_inode *ip;
	u64 rec = daxfs_load(&fc->rec);

	if (!rec)
		return NULL;
#ifdef DAXFS_BUG_FCACHE_TRUST
	/* re-introduced defect (docs/testing.md): the cache believed */
	ip = daxfs_meta_ptr(fs, rec, sizeof(*ip), DAXFS_OFF_ALIGN);
	return ip;
#else
	if (daxfs_ov_holds(fs, daxfs_load(&fc->bucket), inode_key(ino), rec) &&
	    !live_record(fs, rec, ino, &ip))
		return ip;
	fc_set(fc, 0, 0);
	return NULL;
#endif
}

/*
 * A look at ino's record with no op (docs/kernel.md "Peeks"), for a
 * front end that only wants to know whether what it cached is still
 * current.  Without an epoch the record may be retired and reused while
 * we load it, so the bucket is checked before and after the loads: it
 * publishes (INODE(ino), rec) at both V loads, and V never goes back to
 * rec once it left it (dynamic numbers are never reused, base records
 * never freed: docs/open-files.md "When the record moves"), so the record
 * stayed published, hence unretired, in between, and the loads read it.
 */
static daxfs_always_inline int fc_look(struct daxfs_fs *fs, u64 ino,
					const struct daxfs_fcache *fc,
					struct daxfs_fc_look *lk)
{
	/* what daxfs_op_begin refuses, a look does not answer either */
	lk->rec = daxfs_load(&fc->rec);
	lk->bucket = daxfs_load(&fc->bucket);
	if (!lk->rec || daxfs_unlikely(daxfs_once(fs->shut)) ||
	    daxfs_media_fixed_bad(fs) ||
	    (fs->host != DAXFS_NO_HOST && !daxfs_slot_ours(fs)))
		return -EAGAIN;
	lk->key = inode_key(ino);
	if (!daxfs_ov_holds(fs, lk->bucket, lk->key, lk->rec) ||
	    live_record(fs, lk->rec, ino, &lk->ip))
		return -EAGAIN;
	return 0;
}

int daxfs_fc_look(struct daxfs_fs *fs, u64 ino,
		  const struct daxfs_fcache *fc, struct daxfs_fc_look *lk)
{
	return fc_look(fs, ino, fc, lk);
}

/* fc_look inline: a guest stat makes three peeks (docs/benchmarks.md,
 * session 60) */
int daxfs_attr_peek(struct daxfs_fs *fs, u64 ino,
		    const struct daxfs_fcache *fc, struct daxfs_peek *pk)
{
	struct daxfs_fc_look lk;

	if (fc_look(fs, ino, fc, &lk))
		return -EAGAIN;
	daxfs_record_peek(lk.ip, pk);
	/* the loads above are acquires: none moves below this one */
	return daxfs_fc_look_holds(fs, &lk) ? 0 : -EAGAIN;
}

/* The lookup proper: the overlay record (filling fc when given), else a
 * pristine base inode.  Out of line: a cache hit needs none of its frame. */
static daxfs_noinline int inode_lookup(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
			struct daxfs_iref *ref)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip;
	struct daxfs_inode *ip;
	u64 off, idx;
	int err;

	ref->ip = NULL;
	if (ino == 0)
		return -ENOENT;
	err = daxfs_ov_lookup_at(op, inode_key(ino), &off, &idx);
	if (!err) {
		err = live_record(fs, off, ino, &ip);
		if (err)
			return err;
		ref->ip = ip;
		if (fc)
			fc_set(fc, off, idx);
		return 0;
	}
	if (err != -ENOENT)
		return err;
	/* A dynamic inode without a record is gone; base inodes keep their
	 * record forever once copied up, so falling back is safe.  A
	 * pristine base inode is not cached: its copy-up publishes a bucket
	 * that only a lookup finds. */
	err = base_fallback(fs, ino, &bip);
	if (err)
		return err;
	ref->bip = bip;
	return 0;
}

int daxfs_inode_get_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
		       struct daxfs_iref *ref)
{
	ref->ino = ino;
	ref->bip = NULL;
	if (fc && ino) {
		ref->ip = cached_record(op->fs, ino, fc);
		if (ref->ip)
			return 0;
	}
	return inode_lookup(op, ino, fc, ref);
}

int daxfs_inode_get(struct daxfs_op *op, u64 ino, struct daxfs_iref *ref)
{
	return daxfs_inode_get_fc(op, ino, NULL, ref);
}

int daxfs_inode_get_dying(struct daxfs_op *op, u64 ino, struct daxfs_inode **ipp)
{
	u64 off, idx;
	int err = daxfs_ov_lookup_at(op, inode_key(ino), &off, &idx);

	return err ? err : record_at(op->fs, off, ino, ipp);
}

void daxfs_inode_fill_from_base(struct daxfs_inode *ip, u64 ino,
				const struct daxfs_base_inode *bip)
{
	bool dir = DAXFS_IS_DIR(bip->mode);

	ip->ino = ino;
	ip->magic = DAXFS_INODE_MAGIC;
	ip->flags = DAXFS_IF_BASE;
	ip->mode = bip->mode;
	ip->uid = bip->uid;
	ip->gid = bip->gid;
	ip->nlink = bip->nlink ? bip->nlink : 1;
	if (dir && ip->nlink < 2)
		ip->nlink = 2;
	ip->size = dir ? 0 : bip->size;
	ip->blocks = 0;
	ip->atime_ns = bip->mtime_ns;
	ip->mtime_ns = bip->mtime_ns;
	ip->ctime_ns = bip->mtime_ns;
	ip->rdev = bip->rdev;
	ip->root = 0;
	ip->parent = dir ? bip->parent : 0;
	/* dir: not IMPORTED yet, count 0; file: all base bytes visible */
	ip->aux = dir ? 0 : bip->size;
	ip->base_ino = ino;
	ip->change = 1;
	ip->generation = 0;
}

int daxfs_inode_get_writable(struct daxfs_op *op, u64 ino,
			     struct daxfs_inode **ipp)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip;
	struct daxfs_inode *ip;
	u64 off, tries;
	int err;

	if (!op->lane || (fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	for (tries = 0; tries < DAXFS_PENDING_TRIES; tries++) {
		err = daxfs_ov_lookup(op, inode_key(ino), &off);
		if (!err) {
			err = live_record(fs, off, ino, &ip);
			if (!err)
				*ipp = ip;
			return err;
		}
		if (err != -ENOENT)
			return err;
		err = base_fallback(fs, ino, &bip);
		if (err)
			return err;
		off = daxfs_alloc(op, DAXFS_CLASS_128);
		if (!off)
			return -ENOSPC;
		ip = daxfs_ptr(fs, off, sizeof(*ip), DAXFS_OFF_ALIGN);
		if (!ip)
			return -EUCLEAN;
		daxfs_inode_fill_from_base(ip, ino, bip);
		daxfs_pflush(fs, ip, sizeof(*ip));
		err = daxfs_ov_insert(op, inode_key(ino), off);
		if (!err) {
			*ipp = ip;
			return 0;
		}
		/* Lost the copy-up race (or the winner's insert is still
		 * pending): ours was never visible. */
		if (daxfs_free_now(op, off, DAXFS_CLASS_128))
			return -ESTALE;
		if (err != -EEXIST)
			return err;
		if (tries > 8)
			daxfs_yield();
	}
	return -EAGAIN;
}

int daxfs_inode_get_writable_fc(struct daxfs_op *op, u64 ino,
				struct daxfs_fcache *fc,
				struct daxfs_inode **ipp)
{
	struct daxfs_iref ref;

	if (!fc)
		return daxfs_inode_get_writable(op, ino, ipp);
	if (!op->lane || (op->fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	/* a record already in the overlay is writable as it is; a base
	 * inode not copied up yet, or any error, takes the full way */
	if (!daxfs_inode_get_fc(op, ino, fc, &ref) && ref.ip) {
		*ipp = ref.ip;
		return 0;
	}
	return daxfs_inode_get_writable(op, ino, ipp);
}

/*
 * The attribute epoch (format 15, docs/kernel.md "Permission checks and
 * the attribute epoch").  A writer adds one after its change of an
 * inode's permission attributes is published, change counter included;
 * a reader loads the word first, then the attributes, and may answer a
 * later check from them while the word reads the same.  0 (never a word
 * a front end keeps) when this fs may not answer from a cache: the
 * conditions a peek refuses on (daxfs_fc_look).
 */
u64 daxfs_attr_epoch(struct daxfs_fs *fs)
{
	if (daxfs_unlikely(daxfs_once(fs->shut)) || daxfs_media_fixed_bad(fs) ||
	    (fs->host != DAXFS_NO_HOST && !daxfs_slot_ours(fs)))
		return 0;
	return daxfs_load(&fs->state->attr_epoch.v);
}

/* After the change is published: a locked add, so every store of the
 * change (and of its counter) is visible before the new value.  Not
 * flushed: after a power loss no host holds a cache to trust. */
void daxfs_attr_epoch_bump(struct daxfs_fs *fs)
{
	daxfs_faa(&fs->state->attr_epoch.v, 1);
}

void daxfs_inode_touch(struct daxfs_inode *ip, u32 what)
{
	daxfs_inode_touch_at(ip, what, daxfs_now_ns());
}

static void stamp(struct daxfs_inode *ip, u32 what, u64 now)
{
	if (what & DAXFS_TOUCH_ATIME)
		daxfs_store((u64 *)&ip->atime_ns, now);
	if (what & DAXFS_TOUCH_MTIME)
		daxfs_store((u64 *)&ip->mtime_ns, now);
	if (what & DAXFS_TOUCH_CTIME)
		daxfs_store((u64 *)&ip->ctime_ns, now);
}

void daxfs_inode_touch_at(struct daxfs_inode *ip, u32 what, s64 when)
{
	stamp(ip, what, (u64)when);
	if (what & (DAXFS_TOUCH_MTIME | DAXFS_TOUCH_CTIME))
		daxfs_faa(&ip->change, 1);
}

u64 daxfs_change_raise(struct daxfs_op *op, struct daxfs_inode *ip)
{
	if (!ip)
		return 0;
	/* declared dead: recovery's heal may be done, and our publish will
	 * be refused anyway; a raise now would only be left behind */
	if (daxfs_fenced(op))
		return daxfs_load(&ip->change);
	/* a locked add: the intent's stores before it are visible to any
	 * host that sees the raise (the heal's scan relies on it) */
	return daxfs_faa(&ip->change, DAXFS_CHANGE_FLIGHT);
}

/* Declared dead (a zombie resumed after its recovery): the heal may have
 * taken our raise already, and lowering again would take another host's
 * live raise, or wrap the field. */
void daxfs_change_settle(struct daxfs_op *op, struct daxfs_inode *ip)
{
	if (ip && !daxfs_fenced(op))
		daxfs_faa(&ip->change, DAXFS_CHANGE_SETTLE);
}

void daxfs_inode_settle_at(struct daxfs_op *op, struct daxfs_inode *ip,
			   u32 what, s64 when)
{
	if (daxfs_fenced(op))
		return;
	stamp(ip, what, (u64)when);
	daxfs_faa(&ip->change, DAXFS_CHANGE_SETTLE);
}

/* Whether a write at coarse time now may leave stamp t as it is: t is at
 * most DAXFS_WRITE_STAMP_NS older, or a fine stamp of now's tick.  One
 * further ahead (utimensat into the future, a host whose clock runs
 * ahead, or a coarse clock that lags: stamp_later) is stamped again. */
static bool stamp_fresh(s64 t, s64 now)
{
	return t <= now + DAXFS_COARSE_TICK_NS &&
	       now - t <= DAXFS_WRITE_STAMP_NS;
}

/*
 * t, or a later stamp s that is no time to come: the newest time a user
 * may have seen, so that a write never moves a stamp back.  s within a
 * tick of the coarse now is a fine stamp of this tick; one further ahead
 * is checked against the fine clock, because the coarse clock moves only
 * when a tick runs, and a guest whose vCPU the host holds back runs its
 * ticks late: 24 ms behind a chmod's fine stamp in an emulated guest, and
 * a write there set ctime before the chmod's (test_kernel_timestamps_
 * one_clock).  Only such a stamp reads the fine clock.
 */
static s64 stamp_later(s64 t, s64 s, s64 now)
{
	if (s <= t)
		return t;
	return s <= now + DAXFS_COARSE_TICK_NS || s <= daxfs_now_ns() ? s : t;
}

bool daxfs_inode_touch_write(struct daxfs_inode *ip, bool bytes_only)
{
	s64 now = daxfs_coarse_ns();
	s64 m = (s64)daxfs_load((u64 *)&ip->mtime_ns);
	s64 c = (s64)daxfs_load((u64 *)&ip->ctime_ns);
	s64 t;
	u64 w;

	/* loads of a line other writers of the file keep clean: only a
	 * store makes them fetch it again (docs/files.md "Time stamps of
	 * writes") */
	if (!stamp_fresh(m, now) || !stamp_fresh(c, now)) {
		t = stamp_later(stamp_later(now, m, now), c, now);
		daxfs_store((u64 *)&ip->mtime_ns, (u64)t);
		daxfs_store((u64 *)&ip->ctime_ns, (u64)t);
		bytes_only = false;
	}
	if (!bytes_only) {
		daxfs_faa(&ip->change, 1);
		return true;
	}
	/* the bytes before the look at the word: a getattr that folds the
	 * mark after we found it set reads them (docs/files.md "The change
	 * counter of a rewrite"); the copy's streaming stores are fenced */
	daxfs_store_load_fence();
	w = daxfs_load(&ip->change);
	while (!(w & DAXFS_CHANGE_WRITTEN) &&
	       !daxfs_cas(&ip->change, &w, w | DAXFS_CHANGE_WRITTEN))
		;
	return false;
}

void daxfs_change_fold(struct daxfs_op *op, struct daxfs_inode *ip)
{
	u64 w = daxfs_load(&ip->change);

	while ((w & DAXFS_CHANGE_WRITTEN) && !daxfs_fenced(op) &&
	       !daxfs_cas(&ip->change, &w, daxfs_change_folded(w)))
		;
}

int daxfs_nlink_inc(struct daxfs_inode *ip)
{
	u32 n = daxfs_load32(&ip->nlink);

	for (;;) {
		if (n == 0)
			return -ENOENT;
		if (n >= DAXFS_LINK_MAX)
			return -EMLINK;
		if (daxfs_cas32(&ip->nlink, &n, n + 1))
			return 0;
	}
}

int daxfs_nlink_dec(struct daxfs_inode *ip, u32 floor)
{
	u32 n = daxfs_load32(&ip->nlink);

	for (;;) {
		if (n <= floor)
			return -1;
		if (daxfs_cas32(&ip->nlink, &n, n - 1))
			return (int)(n - 1);
	}
}

int daxfs_inode_create(struct daxfs_op *op, u32 mode, u32 uid, u32 gid,
		       u64 rdev, u32 nlink, u64 parent, u64 *inop,
		       struct daxfs_inode **ipp)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_intent *in;
	struct daxfs_inode *ip;
	u64 ino, off, root = 0;
	s64 now = daxfs_now_ns();
	int err;

	if (!op->lane || (fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	if (DAXFS_IS_DIR(mode)) {
		root = daxfs_alloc(op, DAXFS_CLASS_512);
		if (!root)
			return -ENOSPC;
	}
	off = daxfs_alloc(op, DAXFS_CLASS_128);
	ip = off ? daxfs_ptr(fs, off, sizeof(*ip), DAXFS_OFF_ALIGN) : NULL;
	ino = ip ? daxfs_faa(daxfs_state_word(fs, next_ino), 1) : 0;
	if (!ip || ino < fs->sb.first_dyn_ino || ino >= DAXFS_KEY_PAYLOAD_MASK) {
		/* named nowhere yet: ours to free */
		if ((ip && daxfs_free_now(op, off, DAXFS_CLASS_128)) ||
		    (root && daxfs_free_now(op, root, DAXFS_CLASS_512)))
			return -ESTALE;
		return ip || off ? -EUCLEAN : -ENOSPC;
	}
	/*
	 * The record is whole before the intent names it: recovery frees a
	 * record named by a dead op's intent only if it is one (magic, the
	 * number the intent names) and not published under its number
	 * (daxfs_inode_unpublished), for the intent may be garbage.  The
	 * caller (ns_create, tmpfile) holds an intent: a3 record first, so
	 * that whatever the intent names from then on can be checked, then
	 * a4 root (recovery takes it from the record if a4 is not there
	 * yet), a1 ino.
	 */
	ip->ino = ino;
	ip->magic = DAXFS_INODE_MAGIC;
	ip->flags = 0;
	ip->mode = mode;
	ip->uid = uid;
	ip->gid = gid;
	ip->nlink = nlink;
	ip->rdev = rdev;
	ip->atime_ns = now;
	ip->mtime_ns = now;
	ip->ctime_ns = now;
	ip->root = root;
	ip->parent = DAXFS_IS_DIR(mode) ? parent : 0;
	ip->aux = DAXFS_IS_DIR(mode) ? DAXFS_DIR_IMPORTED : 0;
	ip->change = 1;
	ip->generation = (u32)now | 1;
	daxfs_pflush(fs, ip, sizeof(*ip));
	/* fenced: recovery frees (or freed) what the intent names; store
	 * nothing more (off and root leak to fsck if not named yet).  One
	 * look for the three words: only their stores lie between */
	in = daxfs_intent_own(op, &err);
	if (err)
		return err;
	if (in) {
		daxfs_store(&in->a[3], off);
		if (root)
			daxfs_store(&in->a[4], root);
		daxfs_store(&in->a[1], ino);
	}
	err = daxfs_ov_insert(op, inode_key(ino), off);
	if (err == -ESTALE)
		return err;
	if (err) {
		if (err == -EEXIST)
			err = -EUCLEAN;	/* next_ino handed out twice */
		goto fail;
	}
	*inop = ino;
	*ipp = ip;
	return 0;
fail:
	daxfs_intent_arg(op, 3, 0);	/* not ours to free in recovery */
	daxfs_intent_arg(op, 4, 0);
	if (daxfs_free_now(op, off, DAXFS_CLASS_128) ||
	    (root && daxfs_free_now(op, root, DAXFS_CLASS_512)))
		return -ESTALE;
	return err;
}

/*
 * Recovery's check before it frees the record at off that a dead op's
 * intent names as one it allocated and never published (ino: the number
 * the intent names, 0 if it names none yet).  The region is untrusted: a
 * garbled intent may name a live inode's record, and freeing it would
 * hand it to the next create while its names still point to it.  A
 * record daxfs_inode_create made is whole before the intent names it, so
 * a true one always passes; anything else (no inode record there,
 * another number, or the record published under its number) is refused
 * and left to fsck.  One overlay probe.  Not told apart: a record a live
 * host is making, between its allocation and its publication.
 */
bool daxfs_inode_unpublished(struct daxfs_op *op, u64 off, u64 ino,
			     struct daxfs_inode **ipp)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_inode *ip = daxfs_ptr(fs, off, sizeof(*ip), DAXFS_OFF_ALIGN);
	u64 rino, val = 0;

	if (!ip || daxfs_load32(&ip->magic) != DAXFS_INODE_MAGIC)
		return false;
	rino = daxfs_load(&ip->ino);
	if ((ino && rino != ino) || rino < fs->sb.first_dyn_ino ||
	    rino >= DAXFS_KEY_PAYLOAD_MASK)
		return false;
	if (!daxfs_ov_lookup(op, inode_key(rino), &val) && val == off)
		return false;
	if (ipp)
		*ipp = ip;
	return true;
}

void daxfs_inode_free(struct daxfs_op *op, struct daxfs_inode *ip)
{
	struct daxfs_fs *fs = op->fs;
	u32 mode = daxfs_load32(&ip->mode);
	u64 ino = daxfs_load(&ip->ino);
	u64 off = (u64)((u8 *)ip - fs->base);

	if (daxfs_fenced(op))
		return;
	daxfs_xattr_drop(op, ip);
	if (DAXFS_IS_DIR(mode))
		daxfs_dir_retire_trie(op, ip);
	else if (DAXFS_IS_REG(mode))
		daxfs_file_drop_data(op, ip);
	else if (DAXFS_IS_LNK(mode))
		daxfs_link_rec_drop(op, ip);
	/* a drop fenced part-way: recovery may have freed ip since */
	if (daxfs_fenced(op))
		return;
	if (daxfs_is_base_ino(fs, ino) && ino < fs->sb.first_dyn_ino) {
		/* Keep the nlink-0 record published: without it the base
		 * inode would resurrect through the fall-back. */
		daxfs_store(&ip->size, 0);
		daxfs_store(&ip->aux, 0);
		daxfs_inode_touch(ip, DAXFS_TOUCH_CTIME);
		return;
	}
	if (daxfs_ov_delete(op, inode_key(ino), off))
		return;		/* not ours to free (corrupt or raced) */
	if (daxfs_retire(op, off, DAXFS_CLASS_128))
		return;		/* fenced: leaks to fsck */
}

static void flags_update(struct daxfs_inode *ip, u32 set, u32 clear)
{
	u32 f = daxfs_load32(&ip->flags);

	while (!daxfs_cas32(&ip->flags, &f, (f | set) & ~clear))
		;
}

/*
 * Drops one link.  For a non-directory the step 1 -> 0 is preceded by the
 * ORPHAN mark, by the very caller that takes it, so no reader sees nlink 0
 * without the mark before the free is claimed; a mark left by a caller
 * that lost its CAS to a link() means nothing while nlink > 0.  At 0 the
 * inode is settled: freed unless an open set names it
 * (docs/open-files.md).  Returns the new count or -1.
 */
static int drop_link(struct daxfs_op *op, struct daxfs_inode *ip, s64 now)
{
	bool dir = DAXFS_IS_DIR(daxfs_load32(&ip->mode));
	u32 n = daxfs_load32(&ip->nlink);

	for (;;) {
		if (n == 0 || daxfs_fenced(op))
			return -1;
		if (n == 1 && !dir && !(daxfs_load32(&ip->flags) & DAXFS_IF_ORPHAN)) {
			flags_update(ip, DAXFS_IF_ORPHAN, 0);
			daxfs_pflush(op->fs, &ip->flags, sizeof(ip->flags));
		}
		if (daxfs_cas32(&ip->nlink, &n, n - 1))
			break;
	}
	daxfs_crash_point("unlink.nlink_dropped");
	daxfs_inode_touch_at(ip, DAXFS_TOUCH_CTIME, now ? now : daxfs_now_ns());
	if (n - 1)
		return (int)(n - 1);
	if (dir)
		daxfs_inode_free(op, ip);
	else
		daxfs_orphan_settle_rec(op, ip);
	return 0;
}

void daxfs_inode_unlinked(struct daxfs_op *op, u64 ino)
{
	struct daxfs_inode *ip;

	if (!daxfs_inode_get_writable(op, ino, &ip))
		drop_link(op, ip, 0);
}

int daxfs_inode_put_link(struct daxfs_op *op, struct daxfs_inode *ip)
{
	return drop_link(op, ip, 0);
}

int daxfs_inode_put_link_at(struct daxfs_op *op, struct daxfs_inode *ip,
			    s64 now)
{
	return drop_link(op, ip, now);
}
