// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Checker, namespace part: a breadth-first walk of the directory graph
 * from the root (directories queue in scratch, each walked once), the
 * contents of every inode reached (dir tries and dirent chains, radix
 * trees and data pages, symlink records), orphans, and link counts.
 *
 * Repairs cut bad pointers (the slot becomes 0, what hung below becomes
 * unreachable: orphans go to lost+found, space to the free stacks) and
 * rewrite counters to what the walk found.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "base.h"
#include "check.h"
#include "openset.h"
#include "file.h"
#include "inode.h"

#define CHK_I_ATTACH	(1u << 30)	/* repair: link into lost+found */
#define CHK_DIR_MOVING	(1ULL << 61)	/* dir.h: DAXFS_DIR_MOVING */
#define CHK_CHAIN_MAX	32		/* dir.h: DAXFS_CHAIN_MAX */
#define CHK_HASH_LIMIT	(1ULL << 62)
#define CHK_LF_NAME	"lost+found"
#define CHK_LF_TRIES	10		/* lost+found, lost+found.1 .. .9 */

struct chk_dw {
	struct chk_ino *dir;
	u64 entries;			/* names in the trie (no whiteouts) */
	u64 visible;			/* names seen incl. pristine base ones */
	u64 subdirs;
	bool cut;
};

static void chk_enqueue(struct chk *c, u64 ino)
{
	if (c->qtail - c->qhead >= c->qcap) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMIT,
			   "directory queue full: check incomplete", ino, 0,
			   c->qcap, 0, false);
		return;
	}
	c->queue[c->qtail++ % c->qcap] = ino;
}

/* ---- file data ---- */

struct chk_fw {
	struct chk_ino *f;
	u64 pages;
	u64 beyond;			/* pages at or past EOF */
	u64 lim;			/* first block index past EOF */
};

/* A page of zeros only: beyond EOF, fallocate's KEEP_SIZE preallocation
 * (docs/files.md "fallocate"), which the file may grow into. */
static bool chk_page_zero(struct chk *c, u64 v)
{
	const u64 *p = daxfs_ptr(c->fs, v, DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE);
	u32 i;

	for (i = 0; p && i < DAXFS_BLOCK_SIZE / 8; i++)
		if (daxfs_once(p[i]))
			return false;
	return p != NULL;
}

/*
 * A data page word with the unwritten flag (format 8) whose page holds
 * bytes: FIEMAP would call written bytes unwritten.  Only a store through
 * a mapping that raced a ZERO_RANGE (docs/files.md "Unwritten pages") or
 * garbage does that.  The repair clears the flag (one CAS: clearing is
 * always safe, so live too): the bytes stay, as data.
 */
static void chk_unwritten(struct chk *c, struct chk_fw *w, u64 *slot, u64 v,
			  u64 idx)
{
	u64 exp = v | DAXFS_RADIX_UNWRITTEN;

	if (chk_page_zero(c, v))
		return;
	chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
		   DAXFS_CHK_RADIX, "unwritten data page holds bytes",
		   w->f->ino, v, idx, 0, c->repair);
	if (c->repair)
		daxfs_cas(slot, &exp, v);
}

/* Accounts the data page v of block idx, reached through *slot (a leaf
 * slot, or inode.root for a direct root): pages at or past EOF that hold
 * bytes are counted (and, offline with repair, cut off and freed); an
 * unwritten one (unw) must hold zeros. */
static void chk_data_page(struct chk *c, struct chk_fw *w, u64 *slot, u64 v,
			  u64 idx, bool unw)
{
	if (unw)
		chk_unwritten(c, w, slot, v, idx);
	if (idx >= w->lim && !chk_page_zero(c, v)) {
		w->beyond++;
		if (c->repair && !c->live) {
			daxfs_store(slot, 0);
			chk_set(c, c->used, v, DAXFS_BLOCK_SIZE, false);
			c->space_dirty = true;
			return;
		}
	}
	w->pages++;
}

/*
 * A level-2 slot naming a 2 MiB run (format 11): 512 aligned pages, all
 * in the pool and used by nothing else, counted as the file's pages.
 * One beyond EOF that holds bytes cannot be cut alone: the repair (offline)
 * zeroes it.  A bad run word is dropped (its pages show as leaked).
 */
static void chk_run(struct chk *c, struct chk_fw *w, u64 *slot, u64 v,
		    u64 idx)
{
	u64 r = daxfs_radix_run_of(c->fs, v & ~DAXFS_RADIX_UNWRITTEN), k;
	const char *why = NULL;
	bool crosslink = false;

	if (v & DAXFS_RADIX_UNWRITTEN) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RADIX,
			   "radix node word has the unwritten flag",
			   w->f->ino, v, idx, 2, c->repair);
		if (c->repair)
			daxfs_store(slot, v & ~DAXFS_RADIX_UNWRITTEN);
	}
	if (!r)
		why = "radix run outside the pool or not 2 MiB aligned";
	else if (!chk_mark(c, c->used, r, DAXFS_RUN_SIZE))
		why = "data run also used elsewhere", crosslink = true;
	if (why) {
		chk_report(c, DAXFS_CHK_ERROR, crosslink ?
			   DAXFS_CHK_CROSSLINK : DAXFS_CHK_RADIX, why,
			   w->f->ino, v, idx, 2, c->repair);
		if (c->repair)
			daxfs_store(slot, 0);
		return;
	}
	for (k = 0; k < DAXFS_RUN_PAGES; k++) {
		u64 pg = r + k * DAXFS_BLOCK_SIZE;

		if (idx + k >= w->lim && !chk_page_zero(c, pg)) {
			w->beyond++;
			if (c->repair && !c->live)
				memset(c->fs->base + pg, 0, DAXFS_BLOCK_SIZE);
		}
		w->pages++;
	}
}

static void chk_radix(struct chk *c, struct chk_fw *w, u64 off, u32 height,
		      u64 first)
{
	struct daxfs_radix_node *n = daxfs_ptr(c->fs, off, sizeof(*n),
					       DAXFS_BLOCK_SIZE);
	u64 span = 1ULL << (DAXFS_RADIX_BITS * (height - 1));
	u32 i;

	if (!n)
		return;
	for (i = 0; i < DAXFS_RADIX_FANOUT; i++) {
		u64 *slot = &n->slot[i];
		u64 v = daxfs_load(slot);
		u64 idx = first + (u64)i * span;
		const char *why = NULL;
		bool unw = v & DAXFS_RADIX_UNWRITTEN;

		if (!v || v == 1)	/* hole, or sealed by a truncate */
			continue;
		if (height == 2 && (v & DAXFS_RADIX_RUN)) {
			chk_run(c, w, slot, v, idx);
			continue;
		}
		if (unw && height > 1) {
			/* only a data page may be unwritten: the node word
			 * is otherwise fine, so the bit goes, not the node */
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RADIX,
				   "radix node word has the unwritten flag",
				   w->f->ino, v, idx, height, c->repair);
			if (c->repair)
				daxfs_store(slot, v & ~DAXFS_RADIX_UNWRITTEN);
		}
		v &= ~DAXFS_RADIX_UNWRITTEN;
		c->media_page = height > 1 ? 0 : idx + 1;
		if (!daxfs_ptr(c->fs, v, DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE))
			why = "radix slot points outside the pool";
		else if (!chk_mark(c, c->used, v, DAXFS_BLOCK_SIZE))
			why = height > 1 ? "radix node also used elsewhere" :
			      "data page also used elsewhere";
		c->media_page = 0;
		if (why) {
			chk_report(c, DAXFS_CHK_ERROR,
				   height > 1 || !daxfs_ptr(c->fs, v, 1, 1) ?
				   DAXFS_CHK_RADIX : DAXFS_CHK_CROSSLINK, why,
				   w->f->ino, v, idx, height, c->repair);
			if (c->repair)
				daxfs_store(slot, 0);
			continue;
		}
		if (height > 1) {
			chk_radix(c, w, v, height - 1, idx);
			continue;
		}
		chk_data_page(c, w, slot, v, idx, unw);
	}
}

/*
 * Offline repair of a copied-up inode whose link to its base inode a
 * stray store broke (the base_ino word, or the flag set on an inode that
 * never had one).  A copy-up keeps the base inode's number, so the base
 * inode of the same number is linked again when it has the inode's
 * type.  Otherwise the flag goes: what the inode holds is all it has (a
 * file's pages never copied up read as holes, a directory counts as
 * imported).  Returns the base inode now linked, or NULL.
 */
static const struct daxfs_base_inode *chk_base_relink(struct chk *c, u64 ino,
						      struct daxfs_inode *ip,
						      u32 type)
{
	const struct daxfs_base_inode *bip = daxfs_base_inode(c->fs, ino);

	if (!c->repair)
		return NULL;
	if (bip && (bip->mode & CHK_S_IFMT) == type) {
		daxfs_store(&ip->base_ino, ino);
		return bip;
	}
	daxfs_store32(&ip->flags, daxfs_load32(&ip->flags) & ~DAXFS_IF_BASE);
	if (type == CHK_S_IFDIR)
		daxfs_store(&ip->aux, daxfs_load(&ip->aux) | DAXFS_DIR_IMPORTED);
	else
		daxfs_store(&ip->aux, 0);
	return NULL;
}

static void chk_walk_file(struct chk *c, struct chk_ino *f)
{
	struct daxfs_inode *ip = f->ip;
	struct chk_fw w = { .f = f };
	u64 root = daxfs_load(&ip->root);
	u64 size = daxfs_load(&ip->size);
	u64 blocks = daxfs_load(&ip->blocks);
	u32 h = root & DAXFS_RADIX_HEIGHT_MASK;
	u64 node = root & ~(u64)(DAXFS_BLOCK_SIZE - 1);
	/* a direct root names a data page: it may be unwritten (format 8) */
	u64 root_ok = h ? DAXFS_RADIX_HEIGHT_MASK :
		      DAXFS_RADIX_HEIGHT_MASK | DAXFS_RADIX_UNWRITTEN;

	c->r->files++;
	if (size > DAXFS_MAX_FILE_SIZE) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE,
			   "file size beyond the maximum", f->ino, 0, size,
			   DAXFS_MAX_FILE_SIZE, c->repair);
		if (c->repair)
			daxfs_store(&ip->size, size = DAXFS_MAX_FILE_SIZE);
	}
	w.lim = (size + DAXFS_BLOCK_SIZE - 1) >> DAXFS_BLOCK_SHIFT;
	if (daxfs_load32(&ip->flags) & DAXFS_IF_BASE) {
		u64 bino = daxfs_load(&ip->base_ino);
		const struct daxfs_base_inode *bip = daxfs_base_inode(c->fs, bino);
		u64 lim = daxfs_load(&ip->aux);

		if (!bip || bino != f->ino) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE,
				   "copied-up file names no valid base inode",
				   f->ino, 0, bino, f->ino, c->repair);
			bip = chk_base_relink(c, f->ino, ip, CHK_S_IFREG);
			lim = bip ? daxfs_load(&ip->aux) : 0;
		}
		if (bip && (lim > bip->size || lim > size)) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_INODE,
				   "base data limit beyond the file or base size",
				   f->ino, 0, lim, bip->size < size ? bip->size : size,
				   c->repair);
			if (c->repair)
				daxfs_store(&ip->aux, bip->size < size ? bip->size : size);
		}
	}
	if (root == DAXFS_RADIX_SEALED) {
		/* data dropped for good (daxfs_file_drop_data): only an
		 * inode being freed (nlink 0) may look like this */
		if (daxfs_load32(&ip->nlink)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RADIX,
				   "linked file's data was dropped as if freed",
				   f->ino, 0, root, 0, c->repair);
			if (c->repair)
				daxfs_store(&ip->root, 0);
		}
		root = 0;
	}
	if (root && (h > DAXFS_RADIX_MAX_HEIGHT ||
		     (root & (DAXFS_BLOCK_SIZE - 1) & ~root_ok) ||
		     !daxfs_ptr(c->fs, node, DAXFS_BLOCK_SIZE, DAXFS_BLOCK_SIZE))) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RADIX,
			   "file radix root invalid", f->ino, node, root,
			   0, c->repair);
		if (c->repair)
			daxfs_store(&ip->root, 0);
		root = 0;
	}
	c->media_page = root && !h;	/* a direct root: page 0's data */
	if (root && !chk_mark(c, c->used, node, DAXFS_BLOCK_SIZE)) {
		/* h == 0: a direct root, the data page of block 0 */
		chk_report(c, DAXFS_CHK_ERROR,
			   h ? DAXFS_CHK_RADIX : DAXFS_CHK_CROSSLINK,
			   h ? "file radix root node also used elsewhere" :
			   "data page also used elsewhere", f->ino, node,
			   0, h, c->repair);
		if (c->repair)
			daxfs_store(&ip->root, 0);
		root = 0;
	}
	c->media_page = 0;
	if (root && h)
		chk_radix(c, &w, node, h, 0);
	else if (root)
		chk_data_page(c, &w, &ip->root, node, 0,
			      root & DAXFS_RADIX_UNWRITTEN);
	if (w.beyond)
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_BEYOND_EOF, "data pages beyond the end of file",
			   f->ino, 0, w.beyond, size, c->repair && !c->live);
	c->r->data_pages += w.pages;
	if (blocks != w.pages) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_BLOCKS, "block count differs from pages mapped",
			   f->ino, 0, blocks, w.pages, c->repair);
		if (c->repair)
			daxfs_store(&ip->blocks, w.pages);
	}
}

/* ---- directories ---- */

static void chk_walk_inode(struct chk *c, struct chk_ino *ci);

/* True when the trie under node off may hold a visible name (bounded;
 * anything unreadable counts as "may"). */
static bool chk_trie_has_names(struct chk *c, u64 off, u32 depth, u32 *budget)
{
	struct daxfs_trie_node *n;
	u32 i, k;

	if (!off)
		return false;
	n = daxfs_ptr(c->fs, off, sizeof(*n), 64);
	if (!n || depth >= DAXFS_TRIE_MAX_DEPTH)
		return true;
	for (i = 0; i < DAXFS_TRIE_FANOUT; i++) {
		u64 v = daxfs_load(&n->slot[i]);

		if (!v)
			continue;
		if (!(*budget)--)
			return true;
		if ((v & DAXFS_SLOT_TAG_MASK) == DAXFS_SLOT_NODE) {
			if (chk_trie_has_names(c, v & ~DAXFS_SLOT_TAG_MASK,
					       depth + 1, budget))
				return true;
			continue;
		}
		if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_LEAF)
			return true;
		v &= ~DAXFS_SLOT_TAG_MASK;
		for (k = 0; v && k < CHK_CHAIN_MAX; k++) {
			struct daxfs_dirent *d = daxfs_ptr(c->fs, v, sizeof(*d), 64);

			if (!d || !(d->flags & DAXFS_DF_WHITEOUT))
				return true;
			v = daxfs_load(&d->next);
		}
		if (v)
			return true;
	}
	return false;
}

/* One visible name of directory w->dir.  Returns true when a repair
 * removed it (the caller unlinks it). */
static bool chk_entry(struct chk *c, struct chk_dw *w, u64 ino, u32 dtype,
		      u64 off, bool removable)
{
	struct chk_ino ci;
	bool rm = c->repair && removable;
	u32 cnt;

	if (chk_resolve(c, ino, &ci)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIRENT_DANGLING,
			   "directory entry names an inode that does not exist",
			   w->dir->ino, off, ino, 0, rm);
		return rm;
	}
	if (dtype != chk_mode_dtype(ci.mode)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIRENT_TYPE,
			   "directory entry type differs from the inode's",
			   ino, off, dtype, chk_mode_dtype(ci.mode), rm);
		if (rm) {
			struct daxfs_dirent *d = daxfs_ptr(c->fs, off, sizeof(*d), 64);

			if (d)
				d->type = chk_mode_dtype(ci.mode);
		}
	}
	if ((ci.mode & CHK_S_IFMT) == CHK_S_IFDIR) {
		if (*ci.info & CHK_I_REACHED) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIR_MULTI,
				   "directory has more than one name", ino, off,
				   w->dir->ino, 0, rm);
			return rm;
		}
		if (ci.ip && (daxfs_load(&ci.ip->aux) & DAXFS_DIR_DEAD)) {
			u64 aux = daxfs_load(&ci.ip->aux);

			/* rmdir sets DEAD only on an empty directory, then
			 * removes the name: finish it.  DEAD with entries is
			 * damage: clear the bit and keep the directory. */
			u32 budget = 1u << 16;
			bool empty = !(aux & DAXFS_DIR_COUNT_MASK) &&
				     !chk_trie_has_names(c, daxfs_load(&ci.ip->root),
							 0, &budget);

			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_DIR_DEAD, empty ?
				   "removed directory is still named (rmdir interrupted)" :
				   "directory with entries marked removed",
				   ino, off, w->dir->ino, aux & DAXFS_DIR_COUNT_MASK,
				   empty ? rm && !c->live : c->repair && !c->live);
			if (empty && rm && !c->live)
				return true;
			if (!empty && c->repair && !c->live)
				daxfs_store(&ci.ip->aux, aux & ~DAXFS_DIR_DEAD);
		}
		if (ci.ip && daxfs_load(&ci.ip->parent) != w->dir->ino) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_DIR_PARENT,
				   "directory's parent pointer differs from where it is named",
				   ino, off, daxfs_load(&ci.ip->parent), w->dir->ino,
				   c->repair);
			if (c->repair)
				daxfs_store(&ci.ip->parent, w->dir->ino);
		} else if (!ci.ip && ci.bip->parent != w->dir->ino) {
			chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_BASE,
				   "base directory's parent differs from where it is named",
				   ino, off, ci.bip->parent, w->dir->ino, false);
		}
		*ci.info |= CHK_I_REACHED | 1;
		w->subdirs++;
		chk_enqueue(c, ino);
	} else {
		cnt = *ci.info & CHK_I_COUNT;
		if (cnt < CHK_I_COUNT)
			*ci.info = (*ci.info & ~CHK_I_COUNT) | (cnt + 1);
		if (!(*ci.info & CHK_I_REACHED)) {
			*ci.info |= CHK_I_REACHED;
			chk_walk_inode(c, &ci);
		}
	}
	w->visible++;
	c->r->dirents++;
	return false;
}

static u64 chk_level_shift(u32 d)
{
	return d >= DAXFS_TRIE_MAX_DEPTH - 1 ? 0 : 56 - 6 * d;
}

static const char *chk_dirent_bad(struct chk *c, struct daxfs_dirent *d,
				  u32 depth, u64 path, u64 chain_hash)
{
	u32 i, len = d->name_len;

	if (d->hash >= CHK_HASH_LIMIT)
		return "dirent hash out of range";
	if ((d->hash >> chk_level_shift(depth)) != path)
		return "dirent is in the wrong trie slot for its hash";
	if (chain_hash != ~0ULL && d->hash != chain_hash)
		return "dirent chain mixes different hashes";
	if (d->flags & ~(DAXFS_DF_WHITEOUT | CHK_DF_FROM_BASE))
		return "dirent has unknown flags";
	if (d->name[0] == '.' && (len == 1 || (len == 2 && d->name[1] == '.')))
		return "dirent named . or ..";
	for (i = 0; i < len; i++)
		if (d->name[i] == '/' || d->name[i] == 0)
			return "dirent name contains '/' or NUL";
	if (daxfs_name_hash(c->fs, d->name, len) != d->hash)
		return "dirent hash does not match its name";
	return NULL;
}

/* Writes the replacement for a chain link: a trie slot holds off|LEAF,
 * a dirent's next holds the bare offset. */
static void chk_relink(u64 *link, bool is_slot, u64 next)
{
	daxfs_store(link, next && is_slot ? next | DAXFS_SLOT_LEAF : next);
}

static void chk_chain(struct chk *c, struct chk_dw *w, u64 *slot, u64 first,
		      u32 depth, u64 path)
{
	u64 *link = slot, off = first, chain_hash = ~0ULL;
	u64 seen[CHK_CHAIN_MAX];
	u32 n, nseen = 0, k;
	bool is_slot = true;

	for (n = 0; off; n++) {
		struct daxfs_dirent *d = daxfs_ptr(c->fs, off, sizeof(*d), 64);
		const char *why = NULL;
		u64 next, sz = 0;

		if (n >= CHK_CHAIN_MAX) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIRENT,
				   "dirent collision chain too long", w->dir->ino,
				   off, n, CHK_CHAIN_MAX, c->repair);
			if (c->repair)
				chk_relink(link, is_slot, 0);
			return;
		}
		if (!d || !d->name_len || d->name_len > DAXFS_NAME_MAX ||
		    !daxfs_ptr(c->fs, off, sizeof(*d) + d->name_len, 64)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIRENT,
				   "dirent pointer or name length invalid",
				   w->dir->ino, off, d ? d->name_len : 0, 0,
				   c->repair);
			if (c->repair)
				chk_relink(link, is_slot, 0);
			return;
		}
		sz = chk_class_bytes(sizeof(*d) + d->name_len);
		if (!chk_mark(c, c->used, off, sz)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_CROSSLINK,
				   "dirent also used elsewhere (or chain loops)",
				   w->dir->ino, off, n, 0, c->repair);
			if (c->repair)
				chk_relink(link, is_slot, 0);
			return;
		}
		next = daxfs_load(&d->next);
		why = chk_dirent_bad(c, d, depth, path, chain_hash);
		if (!why) {
			for (k = 0; k < nseen; k++) {
				struct daxfs_dirent *o = (void *)(c->fs->base + seen[k]);

				if (o->name_len == d->name_len &&
				    !memcmp(o->name, d->name, d->name_len))
					why = "same name twice in a directory";
			}
		}
		if (why) {
			chk_report(c, DAXFS_CHK_ERROR,
				   nseen && why[0] == 's' ? DAXFS_CHK_DIRENT_DUP :
				   DAXFS_CHK_DIRENT, why, w->dir->ino, off,
				   d->hash, 0, c->repair);
			if (c->repair) {
				chk_relink(link, is_slot, next);
				chk_set(c, c->used, off, sz, false);
				c->space_dirty = true;
			} else {
				link = &d->next;
				is_slot = false;
			}
			off = next;
			continue;
		}
		chain_hash = d->hash;
		if (nseen < CHK_CHAIN_MAX)
			seen[nseen++] = off;
		if (!(d->flags & DAXFS_DF_WHITEOUT)) {
			w->entries++;
			if (chk_entry(c, w, d->ino, d->type, off, true)) {
				chk_relink(link, is_slot, next);
				chk_set(c, c->used, off, sz, false);
				c->space_dirty = true;
				w->entries--;
				nseen--;
				off = next;
				continue;
			}
		}
		link = &d->next;
		is_slot = false;
		off = next;
	}
}

/*
 * Whether what a trie pointer names looks like a trie node: at most one
 * slot that no node could hold (a bad tag, a pointer outside the pool, a
 * slot past the last level's fan-out).  One is a stray store the walk
 * repairs in place; more, and the pointer itself is what was damaged:
 * the bytes are another object's (a symlink's target, file data), and
 * repairing "its slots" would write into them.
 */
static bool chk_trie_node_plausible(struct chk *c, struct daxfs_trie_node *n,
				    u32 depth)
{
	u32 fan = depth == DAXFS_TRIE_MAX_DEPTH - 1 ? 4 : DAXFS_TRIE_FANOUT;
	u32 i, bad = 0;

	for (i = 0; i < DAXFS_TRIE_FANOUT && bad < 2; i++) {
		u64 v = daxfs_load(&n->slot[i]);
		u64 tag = v & DAXFS_SLOT_TAG_MASK, off = v & ~DAXFS_SLOT_TAG_MASK;

		if (!v)
			continue;
		if (i >= fan || (tag != DAXFS_SLOT_LEAF && tag != DAXFS_SLOT_NODE) ||
		    off < c->fs->pool_off || !daxfs_ptr(c->fs, off, 64, 64))
			bad++;
	}
	return bad < 2;
}

static void chk_trie_slot(struct chk *c, struct chk_dw *w, u64 *slot, u32 depth,
			  u64 path)
{
	u64 v = daxfs_load(slot);
	u64 off = v & ~DAXFS_SLOT_TAG_MASK;
	struct daxfs_trie_node *n;
	const char *why = NULL;
	u32 i, fan, bits;

	if (!v)
		return;
	if ((v & DAXFS_SLOT_TAG_MASK) == DAXFS_SLOT_LEAF && off) {
		chk_chain(c, w, slot, off, depth, path);
		return;
	}
	/* a leaf tag naming no dirent is no empty chain: a lookup or an
	 * insert that meets it gives up (EUCLEAN), so no name hashing
	 * there could ever be made, /lost+found's "#ino" included */
	if (v == DAXFS_SLOT_LEAF)
		why = "trie slot is a leaf that names no dirent";
	else if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_NODE)
		why = "trie slot has an invalid tag";
	else if (depth + 1 >= DAXFS_TRIE_MAX_DEPTH)
		why = "trie deeper than the hash allows";
	else if (!(n = daxfs_ptr(c->fs, off, sizeof(*n), 64)))
		why = "trie node pointer invalid";
	else if (!chk_trie_node_plausible(c, n, depth + 1))
		why = "trie pointer names something that is not a trie node";
	else if (!chk_mark(c, c->used, off, sizeof(*n)))
		why = "trie node also used elsewhere";
	if (why) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_TRIE, why, w->dir->ino,
			   off, v, depth, c->repair);
		if (c->repair)
			daxfs_store(slot, 0);
		return;
	}
	depth++;
	fan = depth == DAXFS_TRIE_MAX_DEPTH - 1 ? 4 : DAXFS_TRIE_FANOUT;
	bits = depth == DAXFS_TRIE_MAX_DEPTH - 1 ? 2 : DAXFS_TRIE_BITS;
	for (i = 0; i < DAXFS_TRIE_FANOUT; i++) {
		if (i >= fan && daxfs_load(&n->slot[i])) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_TRIE,
				   "last-level trie slot beyond the hash bits",
				   w->dir->ino, off, i, fan, c->repair);
			if (c->repair)
				daxfs_store(&n->slot[i], 0);
			continue;
		}
		if (i < fan)
			chk_trie_slot(c, w, &n->slot[i], depth, (path << bits) | i);
	}
}

/* Pristine base entries of a directory (not copied up, or copied up
 * but not yet imported: then only names the trie does not hold). */
static void chk_base_entries(struct chk *c, struct chk_dw *w,
			     const struct daxfs_base_inode *bip,
			     struct daxfs_inode *ip)
{
	u64 first, count, i;

	if (daxfs_base_dir_range(c->fs, bip, &first, &count)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BASE,
			   "base directory entry range invalid", w->dir->ino, 0,
			   bip->data, bip->count, false);
		return;
	}
	for (i = 0; i < count; i++) {
		const struct daxfs_base_dirent *bd = daxfs_base_dirent(c->fs, first + i);
		u64 ino;
		bool wh;

		if (!bd || !bd->name_len || bd->name_len > DAXFS_NAME_MAX) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BASE,
				   "base directory entry invalid", w->dir->ino, 0,
				   first + i, 0, false);
			return;
		}
		if (ip && chk_trie_lookup(c, ip, bd->name, bd->name_len, &ino, &wh))
			continue;
		/* a whiteout hides the name once the walk is done (the
		 * copy-up and the dirent need chk_alloc) */
		if (!chk_entry(c, w, bd->ino, bd->type, 0,
			       c->nr_hide < CHK_HIDE_MAX))
			continue;
		c->hide[c->nr_hide].dir = w->dir->ino;
		c->hide[c->nr_hide++].idx = first + i;
	}
}

/*
 * A directory's state word: only the defined bits, and IMPORTED on one
 * that never came from the base image (it is made imported; a host
 * would import nothing and set the bit).  A count repair keeps the
 * other bits, so a stray store there would live on.  Returns the word.
 */
static u64 chk_dir_aux(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u64 aux = daxfs_load(&ip->aux);
	u64 want = aux & (DAXFS_DIR_DEAD | DAXFS_DIR_IMPORTED |
			  DAXFS_DIR_MOVING | DAXFS_DIR_COUNT_MASK);

	if (!(daxfs_load32(&ip->flags) & DAXFS_IF_BASE))
		want |= DAXFS_DIR_IMPORTED;
	if (want == aux)
		return aux;
	chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
		   DAXFS_CHK_INODE, "directory state word has undefined bits or lacks IMPORTED",
		   ino, 0, aux, want, c->repair);
	if (!c->repair)
		return aux;
	daxfs_store(&ip->aux, want);
	return want;
}

static void chk_walk_dir(struct chk *c, struct chk_ino *d)
{
	struct chk_dw w = { .dir = d };
	struct daxfs_inode *ip = d->ip;
	u64 root, aux, cnt, nl;
	struct daxfs_trie_node *n;
	u32 i;

	c->r->dirs++;
	if (!ip) {
		chk_base_entries(c, &w, d->bip, NULL);
		if (d->bip->nlink != 2 + w.subdirs)
			chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_BASE,
				   "base directory link count differs from its subdirectories",
				   d->ino, 0, d->bip->nlink, 2 + w.subdirs, false);
		return;
	}
	root = daxfs_load(&ip->root);
	if (root) {
		n = daxfs_ptr(c->fs, root, sizeof(*n), 64);
		if (!n || !chk_trie_node_plausible(c, n, 0) ||
		    !chk_mark(c, c->used, root, sizeof(*n))) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_TRIE,
				   "directory trie root invalid or shared", d->ino,
				   root, 0, 0, c->repair);
			if (c->repair)
				daxfs_store(&ip->root, 0);
		} else {
			for (i = 0; i < DAXFS_TRIE_FANOUT; i++)
				chk_trie_slot(c, &w, &n->slot[i], 0, i);
		}
	}
	aux = chk_dir_aux(c, d->ino, ip);
	if ((daxfs_load32(&ip->flags) & DAXFS_IF_BASE) &&
	    !(aux & DAXFS_DIR_IMPORTED)) {
		const struct daxfs_base_inode *bip =
			daxfs_base_inode(c->fs, daxfs_load(&ip->base_ino));

		if (!bip || (bip->mode & CHK_S_IFMT) != CHK_S_IFDIR) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE,
				   "copied-up directory names no base directory",
				   d->ino, 0, daxfs_load(&ip->base_ino), d->ino,
				   c->repair);
			bip = chk_base_relink(c, d->ino, ip, CHK_S_IFDIR);
			aux = daxfs_load(&ip->aux);
		}
		if (bip)
			chk_base_entries(c, &w, bip, ip);
	}
	if ((aux & CHK_DIR_MOVING) && !c->live) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RENAME_CLAIM,
			   "directory left marked as being renamed", d->ino, 0, aux,
			   aux & ~CHK_DIR_MOVING, c->repair);
		if (c->repair)
			daxfs_store(&ip->aux, aux &= ~CHK_DIR_MOVING);
	}
	cnt = aux & DAXFS_DIR_COUNT_MASK;
	if (cnt != w.entries) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_DIR_COUNT, "directory entry count wrong",
			   d->ino, 0, cnt, w.entries, c->repair);
		if (c->repair)
			daxfs_store(&ip->aux, (aux & ~DAXFS_DIR_COUNT_MASK) | w.entries);
	}
	nl = daxfs_load32(&ip->nlink);
	if (nl != 2 + w.subdirs) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_NLINK, "directory link count wrong", d->ino, 0,
			   nl, 2 + w.subdirs, c->repair);
		if (c->repair)
			daxfs_store32(&ip->nlink, 2 + w.subdirs);
	}
}

/*
 * A device, fifo or socket has no data: no host ever gives one a root,
 * a size or blocks.  Words that say otherwise are stray stores (or a
 * file's mode hit), and a host's stat refuses a size beyond the maximum,
 * so they are zeroed.  What the root named is not walked: the space
 * rebuild frees it.
 */
static void chk_walk_special(struct chk *c, struct chk_ino *ci)
{
	static const char *const what[] = {
		"special file has a data pointer",
		"special file has a size",
		"special file has a block count",
	};
	struct daxfs_inode *ip = ci->ip;
	u64 *word[] = { &ip->root, &ip->size, &ip->blocks };
	unsigned int i;
	u64 v;

	for (i = 0; i < sizeof(word) / sizeof(word[0]); i++) {
		v = daxfs_load(word[i]);
		if (!v)
			continue;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE, what[i],
			   ci->ino, 0, v, 0, c->repair);
		if (c->repair)
			daxfs_store(word[i], 0);
	}
}

static void chk_walk_kind(struct chk *c, struct chk_ino *ci)
{
	switch (ci->mode & CHK_S_IFMT) {
	case CHK_S_IFDIR:
		chk_walk_dir(c, ci);
		return;
	case CHK_S_IFREG:
		if (ci->ip)
			chk_walk_file(c, ci);
		else
			c->r->files++;
		return;
	case CHK_S_IFLNK:
		chk_walk_symlink(c, ci);
		return;
	default:
		c->r->specials++;
		if (ci->ip)
			chk_walk_special(c, ci);
	}
}

/*
 * Flag bits the format does not define (version 9: BASE, ORPHAN and the
 * chattr flags, docs/attrs.md): garbage, reported; the repair clears
 * them by CAS (live too: the defined bits stay as they are).
 */
static void chk_inode_flags(struct chk *c, struct chk_ino *ci)
{
	u32 f = daxfs_load32(&ci->ip->flags);

	if (!(f & ~DAXFS_IF_KNOWN))
		return;
	chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
		   DAXFS_CHK_INODE, "unknown inode flags", ci->ino, 0,
		   f & ~DAXFS_IF_KNOWN, 0, c->repair);
	while (c->repair &&
	       !daxfs_cas32(&ci->ip->flags, &f, f & DAXFS_IF_KNOWN))
		;
}

static void chk_walk_inode(struct chk *c, struct chk_ino *ci)
{
	if (*ci->info & CHK_I_WALKED)
		return;
	*ci->info |= CHK_I_WALKED;
	c->r->inodes++;
	if (ci->ip)
		chk_inode_flags(c, ci);
	c->media_ino = ci->ino;		/* what a bad range there hits */
	chk_walk_kind(c, ci);
	c->media_ino = 0;
}

static void chk_drain(struct chk *c)
{
	while (c->qhead < c->qtail && !c->stop) {
		struct chk_ino ci;
		u64 ino = c->queue[c->qhead++ % c->qcap];

		if ((c->qhead & 0x3ff) == 0)
			chk_progress(c, 3, c->qhead, c->qtail);
		if (chk_resolve(c, ino, &ci))
			continue;
		chk_walk_inode(c, &ci);
	}
}

/*
 * The root's record holds another type (a stray store on its mode): it
 * is made a directory again.  Its root word is then walked as a trie,
 * which validates every slot: what a file's radix tree left there is
 * cut, and the walk fixes the entry count and link count.
 */
static void chk_root_mode(struct chk *c, struct chk_ino *root)
{
	daxfs_store32(&root->ip->mode, CHK_S_IFDIR | 0755);
	root->mode = CHK_S_IFDIR | 0755;
	*root->info |= CHK_I_DIR;
	c->space_dirty = true;
}

void chk_namespace(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	struct chk_ino root;
	int err;

	err = chk_resolve(c, fs->sb.root_ino, &root);
	if (err) {
		/* chk_nlinks makes a new, empty root (the rest goes to
		 * /lost+found); a base root cannot be replaced */
		c->root_gone = c->repair && fs->sb.root_ino > c->nr_base;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_ROOT,
			   "root directory missing or its record is corrupt",
			   fs->sb.root_ino, 0, 0, CHK_S_IFDIR, c->root_gone);
		return;
	}
	if ((root.mode & CHK_S_IFMT) != CHK_S_IFDIR) {
		bool fix = c->repair && root.ip;

		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_ROOT,
			   "root inode is not a directory", fs->sb.root_ino,
			   0, root.mode, CHK_S_IFDIR, fix);
		if (!fix)
			return;
		chk_root_mode(c, &root);
	}
	if (root.ip && daxfs_load(&root.ip->parent) != fs->sb.root_ino) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIR_PARENT,
			   "root's parent pointer is not the root", root.ino, 0,
			   daxfs_load(&root.ip->parent), root.ino, c->repair);
		if (c->repair)
			daxfs_store(&root.ip->parent, root.ino);
	}
	*root.info |= CHK_I_REACHED | 1;
	chk_enqueue(c, root.ino);
	chk_drain(c);
}

/* ---- orphans ---- */

static bool chk_has_data(struct chk_ino *ci)
{
	struct daxfs_inode *ip = ci->ip;

	switch (ci->mode & CHK_S_IFMT) {
	case CHK_S_IFREG:
		return daxfs_load(&ip->size) || daxfs_load(&ip->blocks);
	case CHK_S_IFDIR:
		return (daxfs_load(&ip->aux) & DAXFS_DIR_COUNT_MASK) ||
		       daxfs_load(&ip->root);
	}
	return false;
}

/* An nlink-0 ORPHAN that an open set of a host with a fresh lease names
 * (docs/open-files.md): legitimately kept, reported as information. */
static bool chk_open_held(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u32 slot = 0;

	if (!(daxfs_load32(&ip->flags) & DAXFS_IF_ORPHAN) ||
	    !daxfs_open_holders(c->fs, ino, &slot) ||
	    !chk_host_fresh(c, &c->fs->hosts[slot]))
		return false;
	chk_report(c, DAXFS_CHK_INFO, DAXFS_CHK_ORPHAN,
		   "unlinked, still open on a live host (slot in have)", ino, 0,
		   slot, 0, false);
	return true;
}

static void chk_orphan_round(struct chk *c, bool defer, bool dirs)
{
	struct daxfs_fs *fs = c->fs;
	u64 i;

	for (i = 0; i < fs->nr_buckets; i++) {
		u32 *info = &c->binfo[i];
		struct chk_ino ci;
		u64 ino, nl;
		bool dir;

		if ((*info & (CHK_I_VALID | CHK_I_REACHED | CHK_I_DROPPED)) !=
		    CHK_I_VALID)
			continue;
		ino = daxfs_load(&fs->buckets[i].key) & DAXFS_KEY_PAYLOAD_MASK;
		if (chk_resolve(c, ino, &ci) || ci.bucket != (s64)i)
			continue;
		nl = daxfs_load32(&ci.ip->nlink);
		dir = (ci.mode & CHK_S_IFMT) == CHK_S_IFDIR;
		if (dir != dirs)
			continue;	/* directories first: they adopt files */
		/* a copied-up base inode removed for good keeps an nlink-0
		 * record so the base inode never resurrects: not an orphan */
		if (!nl && ino < fs->sb.first_dyn_ino && c->nr_base) {
			*info |= CHK_I_REACHED;
			continue;
		}
		if (defer && dir) {
			struct chk_ino p;
			u64 pino = daxfs_load(&ci.ip->parent);

			if (pino != ino && !chk_resolve(c, pino, &p) && p.ip &&
			    (*p.info & (CHK_I_VALID | CHK_I_REACHED)) == CHK_I_VALID &&
			    (p.mode & CHK_S_IFMT) == CHK_S_IFDIR)
				continue;	/* its parent is an orphan too */
		}
		if (!nl && chk_open_held(c, ino, ci.ip)) {
			/* unlinked while open on a live host: in use */
			*info |= CHK_I_REACHED | CHK_I_ORPHAN;
			chk_walk_inode(c, &ci);
			chk_drain(c);
			continue;
		}
		c->r->orphans++;
		if (c->live) {
			/* open-but-unlinked files and creations in flight
			 * look like this on a mounted filesystem */
			chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_ORPHAN,
				   "inode not named by any directory (may be in use)",
				   ino, daxfs_load(&fs->buckets[i].value), nl, 0, false);
			*info |= CHK_I_REACHED | CHK_I_ORPHAN;
			chk_walk_inode(c, &ci);
			chk_drain(c);
			continue;
		}
		if (c->repair && (!nl || !chk_has_data(&ci))) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_ORPHAN,
				   "inode not named by any directory: dropped (no data)",
				   ino, daxfs_load(&fs->buckets[i].value), nl, 0, true);
			chk_set(c, c->used, daxfs_load(&fs->buckets[i].value),
				sizeof(struct daxfs_inode), false);
			chk_tomb(c, i);
			c->r->dropped++;
			continue;
		}
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_ORPHAN,
			   c->repair ? "inode not named by any directory: moved to /lost+found" :
			   "inode not named by any directory", ino,
			   daxfs_load(&fs->buckets[i].value), nl, 0, c->repair);
		*info |= CHK_I_REACHED | CHK_I_ORPHAN;
		if (c->repair) {
			*info |= CHK_I_ATTACH;
			*info = (*info & ~CHK_I_COUNT) | 1;
		}
		if (dir)
			chk_enqueue(c, ino);
		else
			chk_walk_inode(c, &ci);
		chk_drain(c);
	}
}

void chk_orphans(struct chk *c)
{
	chk_progress(c, 4, 0, 1);
	chk_orphan_round(c, true, true);
	chk_orphan_round(c, false, true);
	chk_orphan_round(c, false, false);
}

static void chk_u64_name(char *buf, u64 v, u32 *len)
{
	char tmp[24];
	u32 n = 0, i;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	buf[0] = '#';
	for (i = 0; i < n; i++)
		buf[1 + i] = tmp[n - 1 - i];
	*len = n + 1;
}

/* Publishes directory record rec as inode ino, offline, walked. */
static struct daxfs_inode *chk_publish_dir(struct chk *c, u64 ino, u64 rec)
{
	s64 b;

	daxfs_fence();
	if (chk_ov_insert(c, daxfs_key(DAXFS_KEY_INODE, ino), rec))
		return NULL;
	b = chk_ov_find(c, daxfs_key(DAXFS_KEY_INODE, ino));
	if (b >= 0)
		c->binfo[b] = CHK_I_VALID | CHK_I_DIR | CHK_I_REACHED |
			      CHK_I_WALKED | 1;
	if (ino > c->max_ino)
		c->max_ino = ino;
	return daxfs_ptr(c->fs, rec, sizeof(struct daxfs_inode), 64);
}

/* Offline copy-up of pristine base directory ino, as a host's first
 * change to it would make: a record that still lists the base names. */
static struct daxfs_inode *chk_copy_up_dir(struct chk *c, u64 ino,
					   const struct daxfs_base_inode *bip)
{
	u64 rec = chk_alloc(c, sizeof(struct daxfs_inode));

	if (!rec)
		return NULL;
	daxfs_inode_fill_from_base(daxfs_ptr(c->fs, rec, sizeof(struct daxfs_inode),
					     64), ino, bip);
	return chk_publish_dir(c, ino, rec);
}

/* A fresh directory record (root or lost+found), not yet published:
 * its offset, 0 with no space. */
static u64 chk_dir_record(struct chk *c, u64 ino, u64 parent)
{
	u64 rec = chk_alloc(c, sizeof(struct daxfs_inode));
	u64 node = chk_alloc(c, sizeof(struct daxfs_trie_node));
	struct daxfs_inode *ip;
	s64 now = daxfs_now_ns();

	if (!rec || !node)
		return 0;
	ip = daxfs_ptr(c->fs, rec, sizeof(*ip), 64);
	ip->ino = ino;
	ip->magic = DAXFS_INODE_MAGIC;
	ip->mode = CHK_S_IFDIR | (ino == c->fs->sb.root_ino ? 0755 : 0700);
	ip->nlink = 2;
	ip->atime_ns = ip->mtime_ns = ip->ctime_ns = now;
	ip->root = node;
	ip->parent = parent;
	ip->aux = DAXFS_DIR_IMPORTED;
	ip->change = 1;
	ip->generation = 1;
	return rec;
}

static void chk_dir_added(struct daxfs_inode *dp, bool subdir)
{
	daxfs_store(&dp->aux, daxfs_load(&dp->aux) + 1);
	if (subdir)
		daxfs_store32(&dp->nlink, daxfs_load32(&dp->nlink) + 1);
	daxfs_store(&dp->change, daxfs_load(&dp->change) + 1);
}

/*
 * Offline import of a copied-up directory (dir_import in dir.c): its
 * base names not in the trie go in as FROM_BASE entries, and it is
 * marked IMPORTED, so it takes new names.  A base name whose inode is
 * gone is left out (an imported directory never reads the base array).
 */
static bool chk_import_dir(struct chk *c, struct daxfs_inode *ip)
{
	const struct daxfs_base_inode *bip;
	u64 first, count, i, ino;
	bool wh;

	if (daxfs_load(&ip->aux) & DAXFS_DIR_IMPORTED)
		return true;
	if (daxfs_load32(&ip->flags) & DAXFS_IF_BASE) {
		bip = daxfs_base_inode(c->fs, daxfs_load(&ip->base_ino));
		if (!bip || (bip->mode & CHK_S_IFMT) != CHK_S_IFDIR ||
		    daxfs_base_dir_range(c->fs, bip, &first, &count))
			return false;
		for (i = 0; i < count; i++) {
			const struct daxfs_base_dirent *bd =
				daxfs_base_dirent(c->fs, first + i);
			struct chk_ino ci;

			if (!bd || !bd->name_len || bd->name_len > DAXFS_NAME_MAX)
				return false;
			if (chk_trie_lookup(c, ip, bd->name, bd->name_len, &ino, &wh) ||
			    chk_resolve(c, bd->ino, &ci))
				continue;
			if (chk_trie_insert(c, ip, bd->name, bd->name_len, bd->ino,
					    bd->type, DAXFS_DF_FROM_BASE))
				return false;
			chk_dir_added(ip, false);
		}
	}
	daxfs_store(&ip->aux, daxfs_load(&ip->aux) | DAXFS_DIR_IMPORTED);
	return true;
}

/* Resolves the root, making a new, empty one when it is gone. */
static bool chk_root_ensure(struct chk *c, struct chk_ino *root)
{
	struct daxfs_fs *fs = c->fs;
	u64 rec;

	if (!chk_resolve(c, fs->sb.root_ino, root))
		return true;
	rec = fs->sb.root_ino > c->nr_base ?
	      chk_dir_record(c, fs->sb.root_ino, fs->sb.root_ino) : 0;
	if (!rec || !chk_publish_dir(c, fs->sb.root_ino, rec)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_ROOT,
			   "could not recreate the root directory",
			   fs->sb.root_ino, 0, 0, 0, false);
		return false;
	}
	chk_report(c, DAXFS_CHK_INFO, DAXFS_CHK_ROOT,
		   "root directory recreated", fs->sb.root_ino, 0, 0, 0,
		   true);
	return !chk_resolve(c, fs->sb.root_ino, root);
}

static struct daxfs_inode *chk_lost_found(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	char name[sizeof(CHK_LF_NAME) + 2];
	struct chk_ino root, lf;
	u64 ino, next, rec;
	u32 k, len;
	bool wh;

	if (!chk_root_ensure(c, &root))
		return NULL;
	/* a new name needs the root copied up and imported, as a host's
	 * create in it would */
	if (!root.ip && root.bip && (root.mode & CHK_S_IFMT) == CHK_S_IFDIR)
		root.ip = chk_copy_up_dir(c, fs->sb.root_ino, root.bip);
	if (!root.ip || (root.mode & CHK_S_IFMT) != CHK_S_IFDIR ||
	    !chk_import_dir(c, root.ip)) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOST_FOUND,
			   "could not copy up and import the root for /lost+found (no space?)",
			   fs->sb.root_ino, 0, 0, 0, false);
		return NULL;
	}
	/* a /lost+found a stray store made unusable (a file now, say) keeps
	 * its name: orphans go to lost+found.1 .. .9 instead, the first one
	 * usable or free, so the next check finds the same one */
	for (k = 0; k < CHK_LF_TRIES; k++) {
		memcpy(name, CHK_LF_NAME, sizeof(CHK_LF_NAME) - 1);
		len = sizeof(CHK_LF_NAME) - 1;
		if (k) {
			name[len++] = '.';
			name[len++] = (char)('0' + k);
		}
		if (!chk_trie_lookup(c, root.ip, name, len, &ino, &wh) || wh)
			break;
		if (!chk_resolve(c, ino, &lf) && lf.ip &&
		    (lf.mode & CHK_S_IFMT) == CHK_S_IFDIR &&
		    (daxfs_load(&lf.ip->aux) & DAXFS_DIR_IMPORTED))
			return lf.ip;
		chk_report(c, DAXFS_CHK_INFO, DAXFS_CHK_LOST_FOUND,
			   "a /lost+found name is not a usable directory: trying the next",
			   ino, 0, k, 0, false);
	}
	if (k == CHK_LF_TRIES) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOST_FOUND,
			   "/lost+found and lost+found.1-9 all exist but none is a usable directory",
			   fs->sb.root_ino, 0, 0, 0, false);
		return NULL;
	}
	next = daxfs_load(&fs->state->next_ino.v);
	ino = next > c->max_ino ? next : c->max_ino + 1;
	daxfs_store(&fs->state->next_ino.v, ino + 1);
	/*
	 * Named before it is published: a repair killed in between leaves a
	 * name that dangles, which the rerun removes before it makes
	 * /lost+found again.  Published first, it left an empty directory
	 * named nowhere, which the rerun took for an orphan and linked into
	 * its own /lost+found as "#ino".
	 */
	rec = chk_dir_record(c, ino, fs->sb.root_ino);
	lf.ip = NULL;
	if (rec && !chk_trie_insert(c, root.ip, name, len, ino, DAXFS_DT_DIR, 0))
		lf.ip = chk_publish_dir(c, ino, rec);
	if (!lf.ip) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOST_FOUND,
			   "could not create /lost+found (no space?)", ino, 0, 0,
			   0, false);
		return NULL;
	}
	chk_dir_added(root.ip, true);
	chk_report(c, DAXFS_CHK_INFO, DAXFS_CHK_LOST_FOUND,
		   "created /lost+found", ino, 0, 0, 0, false);
	return lf.ip;
}

/* After the walk: whiteouts for the base names chk_base_entries chose to
 * remove, each directory copied up first when still pristine. */
static void chk_hide_base_names(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u32 i;

	for (i = 0; i < c->nr_hide; i++) {
		const struct daxfs_base_dirent *bd =
			daxfs_base_dirent(fs, c->hide[i].idx);
		struct chk_ino d;
		bool wh, fresh;
		u64 ino;

		if (!bd || chk_resolve(c, c->hide[i].dir, &d))
			continue;
		fresh = !d.ip && d.bip && (d.mode & CHK_S_IFMT) == CHK_S_IFDIR;
		if (fresh)
			d.ip = chk_copy_up_dir(c, d.ino, d.bip);
		if (d.ip && chk_trie_lookup(c, d.ip, bd->name, bd->name_len,
					    &ino, &wh))
			continue;	/* hidden already */
		if (!d.ip || chk_trie_insert(c, d.ip, bd->name, bd->name_len, 0,
					     0, DAXFS_DF_WHITEOUT |
					     DAXFS_DF_FROM_BASE)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_DIRENT,
				   "could not hide a base name (no space?)",
				   d.ino, 0, bd->ino, 0, false);
			continue;
		}
		daxfs_store(&d.ip->change, daxfs_load(&d.ip->change) + 1);
		/* a copy-up counts the base's subdirectories (the walk
		 * recounted a directory copied up before) */
		if (fresh && bd->type == DAXFS_DT_DIR && daxfs_load32(&d.ip->nlink) > 2)
			daxfs_store32(&d.ip->nlink, daxfs_load32(&d.ip->nlink) - 1);
	}
	c->nr_hide = 0;
}

/* Links the orphans chosen for keeping into /lost+found as "#ino". */
static void chk_attach(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	struct daxfs_inode *lf = NULL;
	bool tried = false;
	u64 i;

	for (i = 0; i < fs->nr_buckets; i++) {
		u32 *info = &c->binfo[i];
		struct chk_ino ci;
		char name[24];
		u32 len;
		u64 ino;
		bool dir;

		if (!(*info & CHK_I_ATTACH))
			continue;
		*info &= ~CHK_I_ATTACH;
		if (!tried) {
			lf = chk_lost_found(c);
			tried = true;
		}
		ino = daxfs_load(&fs->buckets[i].key) & DAXFS_KEY_PAYLOAD_MASK;
		if (!lf || chk_resolve(c, ino, &ci)) {
			*info &= ~CHK_I_COUNT;	/* leave its nlink alone */
			c->r->unrepaired++;
			continue;
		}
		dir = (ci.mode & CHK_S_IFMT) == CHK_S_IFDIR;
		chk_u64_name(name, ino, &len);
		if (chk_trie_insert(c, lf, name, len, ino, chk_mode_dtype(ci.mode),
				    0)) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LOST_FOUND,
				   "could not link an orphan into /lost+found", ino,
				   0, 0, 0, false);
			*info &= ~CHK_I_COUNT;
			continue;
		}
		chk_dir_added(lf, dir);
		if (dir) {
			daxfs_store(&ci.ip->parent, daxfs_load(&lf->ino));
			daxfs_store(&ci.ip->aux, daxfs_load(&ci.ip->aux) &
				    ~(DAXFS_DIR_DEAD | CHK_DIR_MOVING));
		}
		c->r->reattached++;
	}
}

/* ---- link counts ---- */

void chk_nlinks(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 i, next;

	next = daxfs_load(&fs->state->next_ino.v);
	if (c->max_ino >= next && c->max_ino >= fs->sb.first_dyn_ino) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_NEXT_INO,
			   "next inode number not above every inode in use", 0, 0,
			   next, c->max_ino + 1, c->repair);
		if (c->repair)
			daxfs_store(&fs->state->next_ino.v, c->max_ino + 1);
	}
	if (c->repair && c->root_gone) {
		struct chk_ino root;

		chk_root_ensure(c, &root);
	}
	if (c->repair) {
		chk_hide_base_names(c);
		chk_attach(c);
	}
	for (i = 0; i < fs->nr_buckets; i++) {
		u32 info = c->binfo[i];
		struct daxfs_inode *ip;
		u32 want, nl;

		if ((info & (CHK_I_VALID | CHK_I_REACHED | CHK_I_DROPPED |
			     CHK_I_DIR)) != (CHK_I_VALID | CHK_I_REACHED))
			continue;
		if ((info & CHK_I_ORPHAN) && !c->repair)
			continue;
		want = info & CHK_I_COUNT;
		if (!want)
			continue;	/* dead base marker or unattached */
		ip = daxfs_ptr(fs, daxfs_load(&fs->buckets[i].value),
			       sizeof(*ip), 64);
		if (!ip)
			continue;
		nl = daxfs_load32(&ip->nlink);
		if (nl == want)
			continue;
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_NLINK,
			   nl > want ? "link count too high (space would never be freed)" :
			   "link count too low (data would be freed while named)",
			   daxfs_load(&ip->ino), 0, nl, want, c->repair);
		if (c->repair)
			daxfs_store32(&ip->nlink, want);
	}
	for (i = 0; i < c->nr_base; i++) {
		u32 info = c->base_info[i];
		const struct daxfs_base_inode *bip;

		if (!(info & CHK_I_COUNT) || (info & CHK_I_DIR))
			continue;
		bip = daxfs_base_inode(fs, i + 1);
		if (bip && (bip->mode & CHK_S_IFMT) != CHK_S_IFDIR &&
		    bip->nlink != (info & CHK_I_COUNT))
			chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_BASE,
				   "base inode link count differs from its names",
				   i + 1, 0, bip->nlink, info & CHK_I_COUNT, false);
	}
}
