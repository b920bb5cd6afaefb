// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Checker, symlink part: the target record of every symlink reached
 * (both forms, docs/inodes.md "Symlink records"), its repair when a
 * stray store damaged its length, and a fresh copy for a symlink whose
 * record pointer was changed to name another object's record.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "base.h"
#include "check.h"
#include "symlink.h"

/* A base symlink's target: in the base data area, 1..4095 bytes (the
 * bytes themselves are the base image's, read-only). */
static void chk_base_symlink(struct chk *c, u64 ino,
			     const struct daxfs_base_inode *bip)
{
	u64 len;

	if (!daxfs_base_link(c->fs, bip, &len))
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BASE,
			   "base symlink target invalid", ino, 0,
			   bip ? bip->size : 0, 0, false);
}

/* Whether a header record r's target could be len bytes long: no NUL
 * before len, and a NUL at len unless the target fills the record's
 * object (records are zeroed when allocated). */
static bool chk_link_len_fits(const struct daxfs_link_rec *r, u64 len)
{
	u64 room = r->bytes - sizeof(struct daxfs_symlink);

	if (!len || len > room || strnlen(r->target, len) != len)
		return false;
	return len == room || !r->target[len];
}

/*
 * A header record's len word repaired, but only in the log until the walk
 * has marked everything: a root word bent into another object (a file's
 * data page) can name bytes that validate as a record, and until then
 * nobody knows whose bytes they are.  The check reads the record through
 * the log (chk_link_rec), as if the word were written; chk_symlink_settle
 * writes it once the symlink's own walk claimed the record.  A repair
 * killed before that wrote nothing there, so a rerun meets the bytes the
 * repair found (an undo kept in memory died with the repair, and left the
 * length in the file's page).  With the log full (more than
 * CHK_RELEN_MAX such repairs in one pass) the record is treated as lost.
 */
static bool chk_rec_len_set(struct chk *c, u64 ino, u64 off, u32 len)
{
	if (c->nr_relen == CHK_RELEN_MAX)
		return false;
	c->relen[c->nr_relen].off = off;
	c->relen[c->nr_relen].ino = ino;
	c->relen[c->nr_relen].len = len;	/* <= DAXFS_SYMLINK_REC_MAX */
	c->nr_relen++;
	return true;
}

static s32 chk_rec_len_find(struct chk *c, u64 off)
{
	u32 i;

	for (i = 0; i < c->nr_relen; i++)
		if (c->relen[i].off == off)
			return (s32)i;
	return -1;
}

/* The symlink record that root names, size bytes for a bare page; a
 * header record's length is the repair's where one is logged. */
static const char *chk_link_rec(struct chk *c, u64 root, u64 size,
				struct daxfs_link_rec *r)
{
	s32 i = (root & DAXFS_SYMLINK_BARE) ? -1 : chk_rec_len_find(c, root);

	if (i < 0)
		return daxfs_link_rec_get(c->fs, root, size, r);
	return daxfs_link_rec_at(c->fs, root, c->relen[i].len & CHK_RELEN_LEN, r);
}

/* The walk found the record's bytes another object's, or changed since
 * the repair: its length is never written there. */
static void chk_rec_len_others(struct chk *c, u64 off)
{
	s32 i = chk_rec_len_find(c, off);

	if (i >= 0)
		c->relen[i].len |= CHK_RELEN_OTHERS;
}

/*
 * Repair of a symlink whose record a stray store damaged: records are
 * zeroed when allocated, so the target's length is where its bytes end
 * (the NUL after them).  A bare page's length is inode.size; a header
 * record's is its len word; either is rewritten from the bytes.  Returns
 * false when the target cannot be found (its pointer is bad): the
 * caller drops the inode and the walk drops its names.
 */
bool chk_symlink_repair(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u64 off = daxfs_load(&ip->root), size = daxfs_load(&ip->size), len;
	struct daxfs_link_rec r;
	struct daxfs_symlink *sl;
	const char *p;

	if (!off && (daxfs_load32(&ip->flags) & DAXFS_IF_BASE)) {
		/* the base image's target: a copy-up keeps the number, so
		 * a damaged base_ino word is relinked to the inode's own */
		if (daxfs_base_link(c->fs, daxfs_base_inode(c->fs,
				    daxfs_load(&ip->base_ino)), &len))
			return true;
		if (!daxfs_base_link(c->fs, daxfs_base_inode(c->fs, ino), &len))
			return false;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
			   "copied-up symlink names no valid base inode", ino, 0,
			   daxfs_load(&ip->base_ino), ino, true);
		daxfs_store(&ip->base_ino, ino);
		return true;
	}
	if (!chk_link_rec(c, off, size, &r)) {
		if (size == r.len)
			return true;
		/* one of the two words is wrong: the bytes decide */
		if (chk_link_len_fits(&r, size)) {
			if (!chk_rec_len_set(c, ino, off, (u32)size))
				return false;
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
				   "symlink record length differs from the inode size and its bytes",
				   ino, off, r.len, size, true);
			return true;
		}
		if (chk_link_len_fits(&r, r.len)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
				   "symlink size differs from its target length",
				   ino, off, size, r.len, true);
			daxfs_store(&ip->size, r.len);
			return true;
		}
		/* neither: rebuilt from the bytes below */
	}
	if (off & DAXFS_SYMLINK_BARE) {
		p = daxfs_ptr(c->fs, off & ~(u64)(DAXFS_BLOCK_SIZE - 1),
			      DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE);
		len = p ? strnlen(p, DAXFS_BLOCK_SIZE) : 0;
		if (len <= DAXFS_SYMLINK_REC_MAX || len > DAXFS_SYMLINK_MAX)
			return false;
		daxfs_store(&ip->size, len);
	} else {
		sl = daxfs_ptr(c->fs, off, sizeof(*sl), 64);
		if (!sl || off < c->fs->pool_off || off >= c->fs->pool_end)
			return false;
		len = c->fs->pool_end - off - sizeof(*sl);
		len = strnlen(sl->target, len < DAXFS_SYMLINK_REC_MAX ? len :
			      DAXFS_SYMLINK_REC_MAX);
		if (!len)
			return false;
		/*
		 * Only a length that makes it a valid record is logged: else
		 * the pointer is bad, and the bytes it names are likely
		 * another object's (a file's data page).
		 */
		if (daxfs_link_rec_at(c->fs, off, (u32)len, &r) ||
		    !chk_rec_len_set(c, ino, off, (u32)len))
			return false;
		daxfs_store(&ip->size, len);
	}
	if (chk_link_rec(c, off, len, &r))
		return false;
	chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
		   "symlink target length rebuilt from its bytes", ino, off,
		   size, len, true);
	return true;
}

bool chk_symlink_lost(struct chk *c, u64 ino)
{
	u64 i;

	for (i = 0; i < c->carry->nr_lost; i++)
		if (c->carry->lost[i] == ino)
			return true;
	return false;
}

/* Remembers ino for the next pass to drop; false when the list is full
 * (the record is then reported, left as it is). */
static bool chk_symlink_lose(struct chk *c, u64 ino)
{
	if (chk_symlink_lost(c, ino))
		return true;
	if (c->carry->nr_lost == CHK_LOST_MAX)
		return false;
	c->carry->lost[c->carry->nr_lost++] = ino;
	return true;
}

void chk_walk_symlink(struct chk *c, struct chk_ino *f)
{
	struct daxfs_inode *ip = f->ip;
	u64 off = ip ? daxfs_load(&ip->root) : 0;
	u64 size = ip ? daxfs_load(&ip->size) : 0;
	struct daxfs_link_rec r = { .len = 0 };
	const char *why;

	c->r->symlinks++;
	if (!ip) {
		chk_base_symlink(c, f->ino, f->bip);
		return;
	}
	if (!off && (daxfs_load32(&ip->flags) & DAXFS_IF_BASE)) {
		/* target still in the base image */
		chk_base_symlink(c, f->ino, daxfs_base_inode(c->fs,
					daxfs_load(&ip->base_ino)));
		return;
	}
	if (!off && (*f->info & CHK_I_ORPHAN) && !daxfs_load32(&ip->nlink)) {
		/*
		 * An unlinked symlink whose free stopped after
		 * daxfs_link_rec_drop() (its record already retired) and
		 * before the inode record went: the orphan report covers it,
		 * and there is no target left to check.  Not an error of
		 * its own (test_lincheck.py's crash runs left one).
		 */
		return;
	}
	why = chk_link_rec(c, off, size, &r);
	if (why) {
		/*
		 * With repair, chk_inode_record passed the record (or rebuilt
		 * its length) and the walk found it invalid since: a repair
		 * of the object it lies in, walked first, changed its bytes
		 * (a root word bent into a trie node, a bad slot there
		 * cleared).  Its target is lost, and its length would be
		 * written into that object: the next pass drops it instead.
		 */
		bool drop = c->repair && chk_symlink_lose(c, f->ino);

		if (!(off & DAXFS_SYMLINK_BARE))
			chk_rec_len_others(c, off);
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK, drop ?
			   "symlink record changed by another object's repair: dropped" :
			   why, f->ino, off, r.len, 0, drop);
		return;
	}
	if (!chk_mark(c, c->used, r.off, r.bytes)) {
		/*
		 * The record (or part of it) belongs to an object walked
		 * before: the root word was pointed at it.  Offline, the
		 * symlink gets its own copy of the bytes it now names once
		 * the walk has marked everything in use (chk_symlink_copies):
		 * a valid target, never one shared with another owner.
		 */
		bool fix = c->repair && !c->live;

		if (!(off & DAXFS_SYMLINK_BARE))
			chk_rec_len_others(c, off);
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK, fix ?
			   "symlink record also used elsewhere: given its own copy" :
			   "symlink record also used elsewhere", f->ino, off,
			   r.len, 0, fix);
		if (fix)
			*f->info |= CHK_I_RECOPY;
		return;
	}
	if (!(off & DAXFS_SYMLINK_BARE)) {
		s32 i = chk_rec_len_find(c, off);

		if (i >= 0 && c->relen[i].ino == f->ino)
			c->relen[i].len |= CHK_RELEN_OWNED;
	}
	if (size != r.len)
		chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_SYMLINK,
			   "symlink size differs from its target length", f->ino,
			   off, size, r.len, false);
}

/*
 * After every walk: a length repair is written only where its own
 * symlink's walk claimed the record, still valid with that length.  One
 * the walk found another object's, or changed, is never written.  Any
 * other was never claimed: its symlink was dropped after the repair (an
 * orphan symlink is dropped unwalked), so nobody vouched for the bytes
 * (a root word bent into a file's page would write the length into that
 * file).  It is not written, and the symlink, if it is still there, is
 * dropped by the next pass: every length repair ends written into a
 * record its own symlink's walk claimed, or not at all.
 */
void chk_symlink_settle(struct chk *c)
{
	struct daxfs_link_rec r;
	u32 i;

	for (i = 0; i < c->nr_relen; i++) {
		struct chk_relen *e = &c->relen[i];
		u32 len = e->len & CHK_RELEN_LEN;

		if (e->len & CHK_RELEN_OTHERS)
			continue;
		if ((e->len & CHK_RELEN_OWNED) &&
		    !daxfs_link_rec_at(c->fs, e->off, len, &r)) {
			daxfs_store32(&((struct daxfs_symlink *)
					(c->fs->base + e->off))->len, len);
			continue;
		}
		e->len |= CHK_RELEN_OTHERS;
		chk_symlink_lose(c, e->ino);
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
			   "symlink length repair not written: no walk claimed the record, or it changed",
			   e->ino, e->off, len, 0, true);
	}
}

/* Copies the target that inode ip names into a fresh record and points
 * the inode at it.  The source range is kept marked while the copy is
 * allocated (its other owner may have been dropped since the walk), so
 * chk_alloc cannot hand out, and zero, the bytes being copied; then each
 * unit goes back to what the walk found, so the units only this record
 * covered are freed by the space rebuild, not leaked. */
static bool chk_symlink_copy(struct chk *c, struct daxfs_inode *ip)
{
	u64 root = daxfs_load(&ip->root);
	struct daxfs_link_rec r;
	u64 off, held;
	bool bare;
	char *dst;

	/* a length repair was never written there: the copy takes the
	 * length the repair found (chk_link_rec reads through the log) */
	if (chk_link_rec(c, root, daxfs_load(&ip->size), &r))
		return false;
	bare = root & DAXFS_SYMLINK_BARE;
	held = chk_bits_get(c, c->used, r.off, r.bytes);
	chk_set(c, c->used, r.off, r.bytes, true);
	off = chk_alloc(c, bare ? DAXFS_BLOCK_SIZE :
			sizeof(struct daxfs_symlink) + r.len);
	/* unit by unit: what the old record alone covered is free now */
	chk_bits_put(c, c->used, r.off, r.bytes, held);
	if (!off)
		return false;
	dst = daxfs_ptr(c->fs, off, bare ? DAXFS_BLOCK_SIZE :
			sizeof(struct daxfs_symlink) + r.len, 64);
	if (!dst)
		return false;
	if (bare) {
		memcpy(dst, r.target, r.len);
	} else {
		((struct daxfs_symlink *)dst)->len = r.len;
		memcpy(((struct daxfs_symlink *)dst)->target, r.target, r.len);
	}
	daxfs_fence();
	daxfs_store(&ip->size, r.len);
	daxfs_store(&ip->root, bare ? off | DAXFS_SYMLINK_BARE : off);
	return true;
}

/* After the walk and the orphan rounds, when every object in use is
 * marked: the symlinks chk_walk_symlink found sharing a record get
 * their own copy. */
void chk_symlink_copies(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 i;

	for (i = 0; i < fs->nr_buckets; i++) {
		u32 *info = &c->binfo[i];
		struct daxfs_inode *ip;

		if (!(*info & CHK_I_RECOPY))
			continue;
		*info &= ~CHK_I_RECOPY;
		if (*info & CHK_I_DROPPED)
			continue;
		ip = daxfs_ptr(fs, daxfs_load(&fs->buckets[i].value),
			       sizeof(*ip), 64);
		if (ip && chk_symlink_copy(c, ip))
			continue;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_SYMLINK,
			   "could not copy a shared symlink record (no space?)",
			   daxfs_load(&fs->buckets[i].key) & DAXFS_KEY_PAYLOAD_MASK,
			   0, 0, 0, false);
	}
}
