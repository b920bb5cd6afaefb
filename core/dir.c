// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Directory hash tries.  A directory record's root word points at a
 * 64-slot node; slot = 0 | dirent_off | LEAF | node_off | NODE.  Level d
 * (0..10) indexes by bits 61-6d .. 56-6d of the 62-bit name hash (level
 * 10: the last two bits), so a depth-first walk in slot order visits
 * names in hash order and a readdir position is just a hash.
 *
 * Invariants (docs/directories.md):
 * - a slot that holds a node keeps that node until the directory dies, so
 *   the path to a name never changes except by pushing a leaf one level
 *   down (leaf -> node containing the leaf, one CAS);
 * - leaves are immutable once published; every change to a slot's chain
 *   builds a new chain and publishes it with one CAS;
 * - a name that came from the base image always leaves a whiteout.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "base.h"
#include "inode.h"
#include "dir.h"

#define SLOT_TAG(v)	((v) & DAXFS_SLOT_TAG_MASK)
#define SLOT_OFF(v)	((v) & ~DAXFS_SLOT_TAG_MASK)
#define LAST_LEVEL	(DAXFS_TRIE_MAX_DEPTH - 1)
#define HASH_LIMIT	(1ULL << 62)
/* CAS retries on one slot before giving up (-EAGAIN): contention only. */
#define SLOT_RETRIES	(1u << 20)
/* Slots visited by one ordered search before declaring the trie bad. */
#define WALK_BUDGET	(1u << 22)

#define BYTES_01	0x0101010101010101ULL
#define BYTES_80	0x8080808080808080ULL

/* Does the word hold a NUL or a '/' byte?  (v - 0x01..) & ~v & 0x80.. is
 * non-zero exactly when a byte of v is zero. */
static bool word_has_nul_or_slash(u64 v)
{
	u64 s = v ^ (BYTES_01 * '/');

	return ((v - BYTES_01) & ~v & BYTES_80) |
	       ((s - BYTES_01) & ~s & BYTES_80);
}

int daxfs_name_check(const char *name, u32 len)
{
	u64 v;
	u32 i;

	if (len == 0)
		return -EINVAL;
	if (len > DAXFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return -EINVAL;
	if (len < 4) {
		for (i = 0; i < len; i++)
			if (name[i] == '/' || name[i] == '\0')
				return -EINVAL;
		return 0;
	}
	/* every lookup and create checks a name: 8 bytes at a time, the
	 * last word overlapping the one before (4 to 7 bytes: two 4-byte
	 * words, overlapping, in one) */
	if (len < 8) {
		u32 a, b;

		memcpy(&a, name, sizeof(a));
		memcpy(&b, name + len - 4, sizeof(b));
		return word_has_nul_or_slash((u64)a << 32 | b) ? -EINVAL : 0;
	}
	for (i = 0; i + 8 < len; i += 8) {
		memcpy(&v, name + i, sizeof(v));
		if (word_has_nul_or_slash(v))
			return -EINVAL;
	}
	memcpy(&v, name + len - 8, sizeof(v));
	return word_has_nul_or_slash(v) ? -EINVAL : 0;
}

/* daxfs_leaf_get, inline where a listing loads every leaf */
static daxfs_always_inline int leaf_get(struct daxfs_fs *fs, u64 off,
					struct daxfs_leaf *l)
{
	struct daxfs_dirent *de = daxfs_meta_ptr(fs, off, sizeof(*de),
						 DAXFS_OFF_ALIGN);

	if (!de)
		return -EUCLEAN;
	l->len = daxfs_once(de->name_len);
	l->hash = daxfs_once(de->hash);
	if (!l->len || l->len > DAXFS_NAME_MAX || l->hash >= HASH_LIMIT ||
	    !daxfs_ptr(fs, off, sizeof(*de) + l->len, DAXFS_OFF_ALIGN))
		return -EUCLEAN;
	l->de = de;
	l->ino = daxfs_once(de->ino);
	l->type = daxfs_once(de->type);
	l->flags = daxfs_once(de->flags);
	daxfs_race_point("dirent", de);
	return 0;
}

int daxfs_leaf_get(struct daxfs_fs *fs, u64 off, struct daxfs_leaf *l)
{
	return leaf_get(fs, off, l);
}

struct daxfs_dirent *daxfs_dirent_at(struct daxfs_fs *fs, u64 off)
{
	struct daxfs_leaf l;

	return daxfs_leaf_get(fs, off, &l) ? NULL : l.de;
}

static struct daxfs_trie_node *node_at(struct daxfs_fs *fs, u64 off)
{
	return daxfs_meta_ptr(fs, off, sizeof(struct daxfs_trie_node),
			      DAXFS_OFF_ALIGN);
}

static bool leaf_is(const struct daxfs_leaf *l, u64 hash, const char *name,
		    u32 len)
{
	return l->hash == hash && l->len == len &&
	       !memcmp(l->de->name, name, len);
}

u64 daxfs_dirent_new(struct daxfs_op *op, const char *name, u32 len, u64 hash,
		     u64 ino, u32 type, u32 flags)
{
	int class = daxfs_size_class(sizeof(struct daxfs_dirent) + len);
	struct daxfs_dirent *de;
	u64 off;

	if (class < 0 || len == 0 || len > DAXFS_NAME_MAX)
		return 0;
	off = daxfs_alloc(op, (unsigned int)class);
	if (!off)
		return 0;
	de = daxfs_ptr(op->fs, off, sizeof(*de) + len, DAXFS_OFF_ALIGN);
	if (!de)
		return 0;
	de->ino = ino;
	de->hash = hash;
	de->next = 0;
	de->name_len = (u16)len;
	de->type = (u8)type;
	de->flags = (u8)flags;
	de->removed = 0;
	memcpy(de->name, name, len);
	return off;
}

/* Frees leaf off of the class its validated length says; -ESTALE:
 * fenced (daxfs_retire). */
static daxfs_must_check int leaf_free(struct daxfs_op *op, u64 off, u32 len,
				      bool published)
{
	int class = daxfs_size_class(sizeof(struct daxfs_dirent) + len);

	if (class < 0)
		return 0;
	if (published)
		return daxfs_retire(op, off, (unsigned int)class);
	return daxfs_free_now(op, off, (unsigned int)class);
}

/* A leaf a published chain no longer names: retired now, or held in
 * op->later until the op marked its step. */
static int leaf_retire(struct daxfs_op *op, u64 off, u32 len)
{
	struct daxfs_retire_later *rl = op->later;

	if (rl && rl->n < DAXFS_CHAIN_MAX) {
		rl->off[rl->n] = off;
		rl->len[rl->n++] = len;
		return 0;
	}
	return leaf_free(op, off, len, true);
}

void daxfs_dir_retire_later(struct daxfs_op *op)
{
	struct daxfs_retire_later *rl = op->later;
	u32 i;

	op->later = NULL;
	if (!rl)
		return;
	for (i = 0; i < rl->n; i++)
		if (leaf_free(op, rl->off[i], rl->len[i], true))
			break;	/* fenced: the rest leak (fsck) */
	rl->n = 0;
}

int daxfs_dirent_free(struct daxfs_op *op, u64 off, bool published)
{
	struct daxfs_leaf l;

	if (daxfs_leaf_get(op->fs, off, &l))
		return 0;	/* not a leaf we can vouch for: leak (fsck) */
	return leaf_free(op, off, l.len, published);
}

/* ---- directory state word ---- */

int daxfs_dir_count_add(struct daxfs_inode *dp)
{
	u64 v = daxfs_load(&dp->aux);

	for (;;) {
		if (v & DAXFS_DIR_DEAD)
			return -ENOENT;
		if ((v & DAXFS_DIR_COUNT_MASK) == DAXFS_DIR_COUNT_MASK)
			return -ENOSPC;
		if (daxfs_cas(&dp->aux, &v, v + 1))
			return 0;
	}
}

void daxfs_dir_count_sub(struct daxfs_inode *dp)
{
	u64 v = daxfs_load(&dp->aux);

	for (;;) {
		if ((v & DAXFS_DIR_COUNT_MASK) == 0)
			return;
		if (daxfs_cas(&dp->aux, &v, v - 1))
			return;
	}
}

/* ---- descent ---- */

static struct daxfs_trie_node *dir_root(struct daxfs_op *op,
					struct daxfs_inode *dp, bool create,
					int *err)
{
	u64 root = daxfs_load(&dp->root), n;

	*err = 0;
	if (!root) {
		if (!create) {
			*err = -ENOENT;
			return NULL;
		}
		n = daxfs_alloc(op, DAXFS_CLASS_512);
		if (!n) {
			*err = -ENOSPC;
			return NULL;
		}
		if (daxfs_fenced(op)) {
			*err = -ESTALE;
			return NULL;
		}
		if (daxfs_cas(&dp->root, &root, n)) {
			root = n;
		} else {
			*err = daxfs_free_now(op, n, DAXFS_CLASS_512);
			if (*err)
				return NULL;
			if (!root) {
				*err = -EUCLEAN;
				return NULL;
			}
		}
	}
	if (!node_at(op->fs, root))
		*err = -EUCLEAN;
	return node_at(op->fs, root);
}

/*
 * Finds the slot where hash's chain lives.  *slotp, *valp: the slot and
 * the value read (0, or a leaf chain with exactly this hash).  With
 * create, a leaf of another hash in the way is pushed down into a new
 * node; without, -ENOENT.
 */
static int find_slot(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
		     bool create, u64 **slotp, u64 *valp)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_trie_node *node, *nn;
	unsigned int d = 0;
	u32 retries = 0;
	u64 v, noff;
	int err;

	node = dir_root(op, dp, create, &err);
	if (!node)
		return err;
	while (d <= LAST_LEVEL) {
		u64 *slot = &node->slot[daxfs_trie_idx(hash, d)];
		struct daxfs_leaf head;

		daxfs_walk_yield();
		v = daxfs_load(slot);
		if (v == 0 || SLOT_TAG(v) == DAXFS_SLOT_LEAF) {
			if (v) {
				if (daxfs_leaf_get(fs, SLOT_OFF(v), &head))
					return -EUCLEAN;
				if (head.hash != hash)
					goto other;
			}
			*slotp = slot;
			*valp = v;
			return 0;
		}
		if (SLOT_TAG(v) != DAXFS_SLOT_NODE)
			return -EUCLEAN;
		node = node_at(fs, SLOT_OFF(v));
		if (!node)
			return -EUCLEAN;
		d++;
		continue;
other:
		if (!create)
			return -ENOENT;
		if (d == LAST_LEVEL)
			return -EUCLEAN;	/* equal 62-bit hashes chain */
		if (++retries > SLOT_RETRIES)
			return -EAGAIN;
		noff = daxfs_alloc(op, DAXFS_CLASS_512);
		if (!noff)
			return -ENOSPC;
		nn = node_at(fs, noff);
		if (!nn)
			return -EUCLEAN;
		nn->slot[daxfs_trie_idx(head.hash, d + 1)] = v;
		daxfs_pflush(fs, nn, sizeof(*nn));
		if (daxfs_fenced(op))
			return -ESTALE;
		if (!daxfs_cas(slot, &v, noff | DAXFS_SLOT_NODE)) {
			if (daxfs_free_now(op, noff, DAXFS_CLASS_512))
				return -ESTALE;
			continue;	/* re-read this level */
		}
		node = nn;
		d++;
	}
	return -EUCLEAN;
}

/* Walks a chain into arr (at most DAXFS_CHAIN_MAX leaf offsets); each
 * leaf is validated on every walk, and later re-validated where used. */
static int chain_read(struct daxfs_fs *fs, u64 v, u64 *arr, u32 *n)
{
	u64 off = SLOT_OFF(v);
	struct daxfs_leaf l;
	u32 i = 0;

	while (off) {
		if (daxfs_leaf_get(fs, off, &l) || i >= DAXFS_CHAIN_MAX)
			return -EUCLEAN;
		arr[i++] = off;
		off = daxfs_load(&l.de->next);
	}
	*n = i;
	return 0;
}

/* ---- lookups ---- */

/* Trie lookup; *wh set when the name is whited out. */
static int trie_find(struct daxfs_op *op, struct daxfs_inode *dp,
		     const char *name, u32 len, u64 hash,
		     struct daxfs_dent *dent, bool *wh)
{
	struct daxfs_fs *fs = op->fs;
	u64 root = daxfs_load(&dp->root), v, off;
	struct daxfs_trie_node *node;
	unsigned int d;
	u32 n;

	*wh = false;
	if (!root)
		return -ENOENT;
	node = node_at(fs, root);
	if (!node)
		return -EUCLEAN;
	for (d = 0; d <= LAST_LEVEL; d++) {
		u64 *slot = &node->slot[daxfs_trie_idx(hash, d)];

		v = daxfs_load(slot);
		if (v == 0)
			return -ENOENT;
		if (SLOT_TAG(v) == DAXFS_SLOT_NODE) {
			node = node_at(fs, SLOT_OFF(v));
			if (!node)
				return -EUCLEAN;
			continue;
		}
		if (SLOT_TAG(v) != DAXFS_SLOT_LEAF)
			return -EUCLEAN;
		for (off = SLOT_OFF(v), n = 0; off; n++) {
			struct daxfs_leaf l;

			if (daxfs_leaf_get(fs, off, &l) || n >= DAXFS_CHAIN_MAX)
				return -EUCLEAN;
			if (leaf_is(&l, hash, name, len)) {
				if (l.flags & DAXFS_DF_WHITEOUT) {
					*wh = true;
					return -ENOENT;
				}
				dent->ino = l.ino;
				dent->hash = hash;
				dent->leaf = off;
				dent->type = l.type;
				dent->flags = l.flags;
				dent->slot = slot;
				return 0;
			}
			off = daxfs_load(&l.de->next);
		}
		return -ENOENT;
	}
	return -EUCLEAN;
}

static int base_find(struct daxfs_fs *fs, const struct daxfs_base_inode *bip,
		     const char *name, u32 len, u64 hash,
		     struct daxfs_dent *dent)
{
	u64 first, count, i;

	if (daxfs_base_dir_range(fs, bip, &first, &count))
		return -EUCLEAN;
	for (i = 0; i < count; i++) {
		const struct daxfs_base_dirent *bd = daxfs_base_dirent(fs, first + i);

		/* unreadable (a bad page): the name may be there */
		if (!bd)
			return -EUCLEAN;
		if (daxfs_once(bd->name_len) != len || memcmp(bd->name, name, len))
			continue;
		dent->ino = bd->ino;
		dent->hash = hash;
		dent->leaf = 0;
		dent->type = bd->type;
		dent->flags = DAXFS_DF_FROM_BASE;
		dent->slot = NULL;
		return 0;
	}
	return -ENOENT;
}

int daxfs_dir_find(struct daxfs_op *op, const struct daxfs_iref *dir,
		   const char *name, u32 len, u64 hash, struct daxfs_dent *de)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip;
	struct daxfs_inode *dp = dir->ip;
	bool wh;
	u64 aux;
	int err;

	if (!dp)
		return base_find(fs, dir->bip, name, len, hash, de);
	/* Read the state before the trie: a base name missing from the trie
	 * of a directory not yet IMPORTED is still in the base array (no
	 * name is removed before the import completes). */
	aux = daxfs_load(&dp->aux);
	err = trie_find(op, dp, name, len, hash, de, &wh);
	if (err != -ENOENT || wh || (aux & DAXFS_DIR_IMPORTED))
		return err;
	if (!(daxfs_load32(&dp->flags) & DAXFS_IF_BASE))
		return -ENOENT;
	bip = daxfs_base_inode(fs, daxfs_load(&dp->base_ino));
	if (!bip)
		return -EUCLEAN;	/* a bad page, or no base inode */
	if (!DAXFS_IS_DIR(bip->mode))
		return -ENOENT;
	return base_find(fs, bip, name, len, hash, de);
}

bool daxfs_dir_has_leaf(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
			u64 off)
{
	u64 arr[DAXFS_CHAIN_MAX], v, *slot;
	u32 n, i;

	if (find_slot(op, dp, hash, false, &slot, &v) || !v)
		return false;
	if (chain_read(op->fs, v, arr, &n))
		return false;
	for (i = 0; i < n; i++)
		if (arr[i] == off)
			return true;
	return false;
}

/*
 * Was leaf off ever published in dp?  Yes if it is there, or if it is
 * marked removed: only a leaf read from a directory slot is marked, and
 * before the CAS that takes it out.  Read in this order: a leaf found
 * absent was taken out by a CAS that follows its mark.  Its memory is
 * still readable (the caller holds back its reuse, docs/recovery.md).
 */
bool daxfs_dir_published(struct daxfs_op *op, struct daxfs_inode *dp,
			 u64 hash, u64 off)
{
	struct daxfs_dirent *de = daxfs_dirent_at(op->fs, off);

	if (!de)
		return false;
	if (daxfs_dir_has_leaf(op, dp, hash, off))
		return true;
	return daxfs_load32(&de->removed) & DAXFS_DE_REMOVED;
}

/* ---- updates ---- */

/*
 * Right before a publishing CAS: the fence, then the caller's step mark
 * (0: none).  Marked here, not before the descent, so that a host stopped
 * and declared dead in the descent is found at the step before (rolled
 * back) rather than at an ambiguous "linking" step it then never
 * completes (fenced: counts high, leaf and inode leaked to fsck).
 */
static int publish_mark(struct daxfs_op *op, u64 mark)
{
	if (daxfs_fenced(op))
		return -ESTALE;
	if (mark && op->lane) {
		daxfs_store(&op->lane->intent.a[6], mark);
		if (op->fs->flags & DAXFS_FS_PERSISTENT)
			daxfs_flush(&op->lane->intent, sizeof(op->lane->intent));
	}
	return 0;
}

/*
 * Marks leaf m removed (an atomic OR: a link's LINKING bit shares the
 * word), then waits while a link holds it: the link publishes its new
 * name while this one still stands (docs/namespace.md, "Link racing the
 * removal of its source").  Dekker with the link's hold: we set REMOVED
 * then read LINKING, it sets LINKING then reads REMOVED (both full
 * barriers), so at least one of us sees the other and gives way.
 */
static int mark_removed(struct daxfs_op *op, struct daxfs_dirent *m)
{
	u32 v = daxfs_load32(&m->removed);

	while (!(v & DAXFS_DE_REMOVED) &&
	       !daxfs_cas32(&m->removed, &v, v | DAXFS_DE_REMOVED))
		;
	daxfs_fence();
	if (!(daxfs_load32(&m->removed) & DAXFS_DE_LINKING))
		return 0;
	return daxfs_link_hold_wait(op, &m->removed);
}

/*
 * Publishes on slot (whose value was v, chain arr[0..n)) the chain with
 * arr[pos] replaced by new_leaf (0: dropped).  Leaves after pos are
 * shared; the ones before are copied (chains are immutable).  Returns
 * 0, -EAGAIN when the slot changed, -ENOSPC.
 */
static int chain_replace(struct daxfs_op *op, u64 *slot, u64 v, u64 *arr,
			 u32 n, u32 pos, u64 new_leaf, u64 mark)
{
	struct daxfs_fs *fs = op->fs;
	/* each written before it is read: copies[k] for k < pos as made,
	 * lens[k] for k <= pos as validated (a failure returns first) */
	u64 copies[DAXFS_CHAIN_MAX] daxfs_noinit;
	u32 lens[DAXFS_CHAIN_MAX] daxfs_noinit;
	u64 tail, head;
	struct daxfs_leaf l, nl;
	u32 i;
	int k, err;

	if (daxfs_fenced(op))
		return -ESTALE;		/* new_leaf may be freed already */
	if (daxfs_leaf_get(fs, arr[pos], &l) ||
	    (new_leaf && daxfs_leaf_get(fs, new_leaf, &nl)))
		return -EUCLEAN;
	lens[pos] = l.len;
	tail = daxfs_load(&l.de->next);
	if (new_leaf) {
		daxfs_store(&nl.de->next, tail);
		tail = new_leaf;
	}
	/* copy the prefix back to front so each copy links to the next */
	for (k = (int)pos - 1; k >= 0; k--) {
		struct daxfs_dirent *cd = NULL;
		u64 c = 0;

		err = daxfs_leaf_get(fs, arr[k], &l);
		if (!err) {
			lens[k] = l.len;
			c = daxfs_dirent_new(op, l.de->name, l.len, l.hash, l.ino,
					     l.type, l.flags);
		}
		if (c)
			cd = daxfs_ptr(fs, c, sizeof(*cd), DAXFS_OFF_ALIGN);
		if (!cd) {
			for (i = (u32)k + 1; i < pos; i++)
				if (daxfs_dirent_free(op, copies[i], false))
					return -ESTALE;
			return err ? err : -ENOSPC;
		}
		daxfs_store(&cd->next, tail);
		copies[k] = c;
		tail = c;
	}
	head = tail ? (tail | DAXFS_SLOT_LEAF) : 0;
	/* every leaf this CAS takes out was published: say so first, for
	 * recovery (a crash of its publisher before its step mark) */
	for (i = 0; i <= pos; i++) {
		/* the header only: a leaf checked above may have changed its
		 * name_len since, and re-checking it here would give NULL */
		struct daxfs_dirent *m = daxfs_ptr(fs, arr[i], sizeof(*m),
						   DAXFS_OFF_ALIGN);

		err = m ? mark_removed(op, m) : 0;
		if (err) {
			for (i = 0; i < pos; i++)
				if (daxfs_dirent_free(op, copies[i], false))
					return -ESTALE;
			return err;	/* -ESTALE: fenced */
		}
	}
	daxfs_crash_point("dir.marked");	/* marked, still in dp */
	if (new_leaf)
		daxfs_pflush(fs, nl.de, sizeof(*nl.de) + nl.len);
	if (publish_mark(op, mark))
		return -ESTALE;		/* the copies leak to fsck */
	if (!daxfs_cas(slot, &v, head)) {
		for (i = 0; i < pos; i++)
			if (daxfs_dirent_free(op, copies[i], false))
				return -ESTALE;
		return -EAGAIN;
	}
	/* each with the length it was validated with above, in this op
	 * (the class it was allocated from), not looked at a third time */
	for (i = 0; i <= pos; i++)
		if (leaf_retire(op, arr[i], lens[i]))
			return -ESTALE;	/* the rest leak (fsck) */
	(void)n;
	return 0;
}

static int dir_link(struct daxfs_op *op, struct daxfs_inode *dp, u64 leaf,
		    bool import, u64 mark)
{
	struct daxfs_fs *fs = op->fs;
	u64 arr[DAXFS_CHAIN_MAX] daxfs_noinit;	/* [0, n) by chain_read */
	u64 v, *slot;
	struct daxfs_leaf nl, l;
	u32 n, i, tries;
	int err;

	if (daxfs_leaf_get(fs, leaf, &nl))
		return -EUCLEAN;
	for (tries = 0; tries < SLOT_RETRIES; tries++) {
		err = find_slot(op, dp, nl.hash, true, &slot, &v);
		if (err)
			return err;
		err = chain_read(fs, v, arr, &n);
		if (err)
			return err;
		for (i = 0; i < n; i++) {
			if (daxfs_leaf_get(fs, arr[i], &l))
				return -EUCLEAN;
			/* nl's name bytes lie inside nl.len: compare those */
			if (!leaf_is(&l, nl.hash, nl.de->name, nl.len))
				continue;
			if (import || !(l.flags & DAXFS_DF_WHITEOUT))
				return -EEXIST;
			/* re-creating a removed base name */
			nl.de->flags = (u8)(nl.flags | DAXFS_DF_FROM_BASE);
			err = chain_replace(op, slot, v, arr, n, i, leaf, mark);
			if (err == -EAGAIN)
				goto retry;
			return err;
		}
		if (n >= DAXFS_CHAIN_MAX)
			return -ENOSPC;
		err = publish_mark(op, mark);
		if (err)
			return err;	/* recovery may have freed leaf */
		daxfs_store(&nl.de->next, SLOT_OFF(v));
		daxfs_pflush(fs, nl.de, sizeof(*nl.de) + nl.len);
		if (daxfs_cas(slot, &v, leaf | DAXFS_SLOT_LEAF))
			return 0;
retry:
		daxfs_cpu_relax();
	}
	return -EAGAIN;
}

int daxfs_dir_link(struct daxfs_op *op, struct daxfs_inode *dp, u64 leaf,
		   bool import)
{
	return dir_link(op, dp, leaf, import, 0);
}

int daxfs_dir_link_marked(struct daxfs_op *op, struct daxfs_inode *dp,
			  u64 leaf, u64 mark)
{
	return dir_link(op, dp, leaf, false, mark);
}

/*
 * daxfs_dir_swap, where old's flags may be known: oflags, those of old
 * as validated in this op (a published leaf's flags never change), or
 * -1.  They are looked up only for a new_leaf, which takes FROM_BASE
 * from them; old itself is validated by chain_read and chain_replace.
 *
 * hint (may be NULL): the slot where a lookup of hash in this op found
 * old's chain.  It is where a descent from the root would end, as long
 * as it holds a chain or nothing: a slot that holds a node keeps it, the
 * slots on the way to it all hold nodes, and the root stays while the
 * directory holds old's name (docs/directories.md "Invariants").  Read
 * again here, it says what a descent would: old is there only while its
 * chain is, and the CAS is on the chain read.  A node there (old's chain
 * pushed down) or a retry: the descent.
 */
static int swap_leaf(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
		     u64 old, s64 oflags, u64 new_leaf, u64 *hint)
{
	struct daxfs_fs *fs = op->fs;
	u64 arr[DAXFS_CHAIN_MAX] daxfs_noinit;	/* [0, n) by chain_read */
	u64 v, *slot;
	struct daxfs_leaf ol, nl;
	u32 n, i, tries;
	int err;

	if (new_leaf && daxfs_leaf_get(fs, new_leaf, &nl))
		return -EUCLEAN;
	for (tries = 0; tries < SLOT_RETRIES; tries++) {
		slot = NULL;
		if (hint) {
			v = daxfs_load(hint);
			if (!v || SLOT_TAG(v) == DAXFS_SLOT_LEAF)
				slot = hint;
			hint = NULL;
		}
		if (!slot) {
			err = find_slot(op, dp, hash, false, &slot, &v);
			if (err)
				return err;
		}
		if (!v)
			return -ENOENT;
		err = chain_read(fs, v, arr, &n);
		if (err)
			return err;
		for (i = 0; i < n && arr[i] != old; i++)
			;
		if (i == n)
			return -ENOENT;
		if (new_leaf && oflags < 0) {
			if (daxfs_leaf_get(fs, old, &ol))
				return -EUCLEAN;
			oflags = ol.flags;
		}
		if (new_leaf && (oflags & (DAXFS_DF_FROM_BASE | DAXFS_DF_WHITEOUT)))
			nl.de->flags = (u8)(nl.flags | DAXFS_DF_FROM_BASE);
		err = chain_replace(op, slot, v, arr, n, i, new_leaf, 0);
		if (err != -EAGAIN)
			return err;
		daxfs_cpu_relax();
	}
	return -EAGAIN;
}

int daxfs_dir_swap(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
		   u64 old, u64 new_leaf)
{
	return swap_leaf(op, dp, hash, old, -1, new_leaf, NULL);
}

/*
 * REMOVED is never cleared, so a remover that died (or gave up) between
 * its mark and its CAS leaves a named leaf that no link or rename can
 * hold (leaf_hold, core/namei.c).  Its holder, under the rename claim,
 * swaps in an unmarked copy: same name, inode, type and flags, so the
 * namespace does not change.  A remover still on its way then fails its
 * CAS (the slot changed; the old leaf is retired under the epoch, so its
 * offset does not come back while that remover's op runs) and looks
 * again.  A crash before the swap leaks the copy to fsck.
 */
void daxfs_dir_refresh_leaf(struct daxfs_op *op, struct daxfs_inode *dp,
			    u64 off)
{
	struct daxfs_leaf l;
	u64 copy;

	if (daxfs_leaf_get(op->fs, off, &l) ||
	    !daxfs_dir_has_leaf(op, dp, l.hash, off))
		return;
	copy = daxfs_dirent_new(op, l.de->name, l.len, l.hash, l.ino, l.type,
				l.flags);
	if (copy && daxfs_dir_swap(op, dp, l.hash, off, copy) &&
	    !daxfs_fenced(op) && daxfs_dirent_free(op, copy, false))
		return;	/* fenced: copy leaks (fsck) */
}

/* Removes old, of hash and flags as validated in this op: its leaf is
 * looked at again only for the name a whiteout copies. */
static int remove_leaf(struct daxfs_op *op, struct daxfs_inode *dp, u64 old,
		       u64 hash, u32 flags, u64 *hint)
{
	struct daxfs_leaf ol;
	u64 wh = 0;
	int err;

	if (flags & DAXFS_DF_FROM_BASE) {
		if (daxfs_leaf_get(op->fs, old, &ol) || ol.hash != hash)
			return -EUCLEAN;
		wh = daxfs_dirent_new(op, ol.de->name, ol.len, ol.hash, 0, 0,
				      DAXFS_DF_WHITEOUT | DAXFS_DF_FROM_BASE);
		if (!wh)
			return -ENOSPC;
	}
	err = swap_leaf(op, dp, hash, old, flags, wh, hint);
	if (err && wh && err != -ESTALE && daxfs_dirent_free(op, wh, false))
		return -ESTALE;
	return err;
}

int daxfs_dir_remove_leaf(struct daxfs_op *op, struct daxfs_inode *dp,
			  u64 old)
{
	struct daxfs_leaf ol;

	if (daxfs_leaf_get(op->fs, old, &ol))
		return -EUCLEAN;
	return remove_leaf(op, dp, old, ol.hash, ol.flags, NULL);
}

int daxfs_dir_remove_dent(struct daxfs_op *op, struct daxfs_inode *dp,
			  const struct daxfs_dent *de)
{
	return remove_leaf(op, dp, de->leaf, de->hash, de->flags, de->slot);
}

/* ---- copy-up and import of base directories ---- */

static int dir_import(struct daxfs_op *op, struct daxfs_inode *dp)
{
	struct daxfs_fs *fs = op->fs;
	const struct daxfs_base_inode *bip = NULL;
	u64 first = 0, count = 0, i, v, leaf;
	int err;

	if (daxfs_load32(&dp->flags) & DAXFS_IF_BASE) {
		bip = daxfs_base_inode(fs, daxfs_load(&dp->base_ino));
		if (!bip || !DAXFS_IS_DIR(bip->mode))
			return -EUCLEAN;
		if (daxfs_base_dir_range(fs, bip, &first, &count))
			return -EUCLEAN;
	}
	for (i = 0; i < count; i++) {
		const struct daxfs_base_dirent *bd = daxfs_base_dirent(fs, first + i);
		u32 len;

		/* someone else finished: everything is in */
		if (daxfs_load(&dp->aux) & DAXFS_DIR_IMPORTED)
			return 0;
		if (!bd)
			return -EUCLEAN;
		len = daxfs_once(bd->name_len);
		if (daxfs_name_check(bd->name, len))
			return -EUCLEAN;
		if (daxfs_fenced(op))
			return -ESTALE;
		err = daxfs_dir_count_add(dp);
		if (err)
			return err;
		leaf = daxfs_dirent_new(op, bd->name, len,
					daxfs_name_hash(fs, bd->name, len),
					bd->ino, bd->type, DAXFS_DF_FROM_BASE);
		if (!leaf) {
			if (daxfs_fenced(op))
				return -ESTALE;
			daxfs_dir_count_sub(dp);
			return -ENOSPC;
		}
		err = daxfs_dir_link(op, dp, leaf, true);
		if (err) {
			if (daxfs_fenced(op) ||
			    daxfs_dirent_free(op, leaf, false))
				return -ESTALE;
			daxfs_dir_count_sub(dp);
			if (err != -EEXIST)
				return err;
		}
	}
	v = daxfs_load(&dp->aux);
	if (daxfs_fenced(op))
		return -ESTALE;
	while (!(v & DAXFS_DIR_IMPORTED))
		if (daxfs_cas(&dp->aux, &v, v | DAXFS_DIR_IMPORTED))
			break;
	return 0;
}

/* dp, ino's writable record: a live directory's, imported? */
static daxfs_always_inline int dir_usable(struct daxfs_op *op,
					  struct daxfs_inode *dp,
					  struct daxfs_inode **dpp)
{
	u64 aux;
	int err;

	if (!DAXFS_IS_DIR(daxfs_load32(&dp->mode)))
		return -ENOTDIR;
	aux = daxfs_load(&dp->aux);
	if (aux & DAXFS_DIR_DEAD)
		return -ENOENT;
	if (!(aux & DAXFS_DIR_IMPORTED)) {
		err = dir_import(op, dp);
		if (err)
			return err;
	}
	*dpp = dp;
	return 0;
}

int daxfs_dir_writable(struct daxfs_op *op, u64 ino, struct daxfs_inode **dpp)
{
	struct daxfs_inode *dp;
	int err = daxfs_inode_get_writable(op, ino, &dp);

	return err ? err : dir_usable(op, dp, dpp);
}

int daxfs_dir_writable_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
			  struct daxfs_inode **dpp)
{
	struct daxfs_inode *dp;
	int err = daxfs_inode_get_writable_fc(op, ino, fc, &dp);

	return err ? err : dir_usable(op, dp, dpp);
}

/* ---- teardown ---- */

static void retire_node(struct daxfs_op *op, u64 off, unsigned int d,
			u32 *budget)
{
	struct daxfs_fs *fs = op->fs;
	struct daxfs_trie_node *node = node_at(fs, off);
	unsigned int i;

	if (!node || d > LAST_LEVEL)
		return;
	/* recursion depth <= 11: keep the frame small (kernel stacks) */
	for (i = 0; i < DAXFS_TRIE_FANOUT && *budget; i++, (*budget)--) {
		u64 v = daxfs_load(&node->slot[i]), off, next;
		u32 n;

		if (!v)
			continue;
		if (SLOT_TAG(v) == DAXFS_SLOT_NODE) {
			retire_node(op, SLOT_OFF(v), d + 1, budget);
			continue;
		}
		if (SLOT_TAG(v) != DAXFS_SLOT_LEAF)
			continue;
		for (off = SLOT_OFF(v), n = 0; off && n < DAXFS_CHAIN_MAX; n++) {
			struct daxfs_leaf l;

			if (daxfs_leaf_get(fs, off, &l))
				break;
			next = daxfs_load(&l.de->next);
			if (leaf_free(op, off, l.len, true)) {
				*budget = 0;	/* fenced: the rest leak */
				return;
			}
			off = next;
		}
		daxfs_walk_yield();
	}
	if (daxfs_retire(op, off, DAXFS_CLASS_512))
		*budget = 0;	/* fenced: store nothing more */
}

void daxfs_dir_retire_trie(struct daxfs_op *op, struct daxfs_inode *dp)
{
	u64 root = daxfs_load(&dp->root);
	u32 budget = WALK_BUDGET;

	/* one winner detaches the trie; nothing can be added (DEAD) */
	if (!root || daxfs_fenced(op) || !daxfs_cas(&dp->root, &root, 0))
		return;
	retire_node(op, root, 0, &budget);
}

/* ---- readdir ---- */

/* Hash bits fixed by the path down to (and including) level d. */
static u64 path_mask(unsigned int d)
{
	if (d >= LAST_LEVEL)
		return HASH_LIMIT - 1;
	return (HASH_LIMIT - 1) & ~((1ULL << (56 - 6 * d)) - 1);
}

/* Slot visits one readdir call may spend: a whole damaged-trie walk,
 * plus a re-descent's worth for every entry it returns. */
#define ENTRY_BUDGET	(DAXFS_TRIE_MAX_DEPTH * DAXFS_TRIE_FANOUT * 2u)

/* The next chains' first visible names, in hash order from *c on,
 * gathered in one walk of the trie, so that listing a directory
 * descends from the root once per TBATCH names rather than once per name
 * (an iterator per name made trie walks 56% of a listing's instructions). */
#define TBATCH 32

/* A chain's first visible name as the walk loaded and checked it (leaves
 * are immutable: what a later look would load is this, and a copy is not
 * a second fetch from the region) */
struct trie_name {
	struct daxfs_dirent *de;
	u64 ino;
	u32 len, type;
};

struct trie_batch {
	u32 n, next;
	bool gathered;		/* a walk filled it */
	bool done;		/* that walk found every chain from its c on */
	/* set (a directory without a base list to merge with): the walk
	 * hands each name to fill as it finds it and gathers nothing, so a
	 * name costs no copy and no second look; stop is then the hash
	 * whose names fill had no room for */
	daxfs_filldir_t fill;
	void *ctx;
	u64 stop;
	u64 h[TBATCH];		/* the hash of its first visible name */
	struct trie_name f[TBATCH];	/* that name */
};

/* The names of hash h in the chain after the first visible one, from the
 * leaf at off (that one's next): any other visible name of that hash
 * (equal 62-bit hashes).  The caller handed the first one on. */
static daxfs_noinline int emit_rest(struct daxfs_fs *fs, u64 off, u64 h,
				    daxfs_filldir_t fill, void *ctx)
{
	u32 n;

	for (n = 1; off; n++) {
		struct daxfs_leaf l;

		if (daxfs_leaf_get(fs, off, &l) || n >= DAXFS_CHAIN_MAX)
			return -EUCLEAN;
		if (l.hash == h && !(l.flags & DAXFS_DF_WHITEOUT) &&
		    fill(ctx, l.de->name, l.len, l.ino, l.type, h + 2))
			return 1;
		off = daxfs_load(&l.de->next);
	}
	return 0;
}

/*
 * The names of hash h: the chain's first visible one as the walk found it
 * (f), then any other visible name of that hash after it in the chain
 * (equal 62-bit hashes).  What came before f in the chain was a whiteout,
 * and leaves are immutable, so nothing there is listed; f is used as the
 * walk checked it, not loaded again.  Inline: a listing without a base
 * array calls it for every name.
 */
static daxfs_always_inline int emit_trie(struct daxfs_fs *fs,
					 const struct trie_name *f, u64 h,
					 daxfs_filldir_t fill, void *ctx)
{
	u64 off;

	if (fill(ctx, f->de->name, f->len, f->ino, f->type, h + 2))
		return 1;
	off = daxfs_load(&f->de->next);
	return off ? emit_rest(fs, off, h, fill, ctx) : 0;
}

/* The first slot of node from i on that is not empty (end: none), its
 * value in *v.  Most slots a listing passes are empty (some ten per name
 * in a directory of a thousand): four loads and one test per four. */
static daxfs_always_inline unsigned int next_used(struct daxfs_trie_node *node,
						  unsigned int i,
						  unsigned int end, u64 *v)
{
	for (; i + 4 <= end; i += 4) {
		u64 a = daxfs_load(&node->slot[i]);
		u64 b = daxfs_load(&node->slot[i + 1]);
		u64 c = daxfs_load(&node->slot[i + 2]);
		u64 e = daxfs_load(&node->slot[i + 3]);

		if (!(a | b | c | e))
			continue;
		*v = a ? a : b ? b : c ? c : e;
		return i + (a ? 0 : b ? 1 : c ? 2 : 3);
	}
	for (; i < end; i++)
		if ((*v = daxfs_load(&node->slot[i])))
			return i;
	return end;
}

/* Gathers into tb, from the subtree of node at level d reached by the
 * hash bits pfx, the chains with hash >= *c in order; each one found
 * moves *c past it, as a walk from the root for *c would have.  edge:
 * this subtree contains *c's path.  1: tb is full (tb->fill: fill had no
 * room for the names of hash tb->stop, *c not moved past them).  Every
 * leaf's hash must agree with the path it was reached by (as the checker
 * demands), so a node reached through a wrong or cyclic pointer is
 * -EUCLEAN at its first leaf; *budget (per readdir call) bounds what
 * damage without leaves costs. */
static int trie_collect(struct daxfs_fs *fs, u64 noff, unsigned int d, u64 *c,
			bool edge, u64 pfx, struct trie_batch *tb, u32 *budget)
{
	struct daxfs_trie_node *node = node_at(fs, noff);
	unsigned int i, end = d == LAST_LEVEL ? 4 : DAXFS_TRIE_FANOUT;
	unsigned int start = edge ? daxfs_trie_idx(*c, d) : 0;
	/* loop invariants: where slot i's index sits in a hash (the last
	 * level's 2 bits at the bottom), and the bits fixed down to here */
	unsigned int shift = d >= LAST_LEVEL ? 0 : 56 - 6 * d;
	u64 mask = path_mask(d);
	/* one for the whole walk: a declaration in the loop is cleared at
	 * every slot where the compiler initializes automatic variables */
	struct daxfs_leaf l;
	int r;

	if (!node || d > LAST_LEVEL)
		return -EUCLEAN;
	/* a step of the walk per node (at most a node's slots and their
	 * chains, bounded), not per slot: it is most of a slot's cost */
	daxfs_walk_yield();
	for (i = start; i < end; i++) {
		u64 v, off, bits, h, head;
		u32 n;

		/* empty slots are free: at most a node's worth per node,
		 * and what could loop (nodes, chains) is charged below */
		i = next_used(node, i, end, &v);
		if (i == end)
			break;
		if (!*budget)
			return -EUCLEAN;
		(*budget)--;
		bits = pfx | (u64)i << shift;
		if (SLOT_TAG(v) == DAXFS_SLOT_NODE) {
			r = trie_collect(fs, SLOT_OFF(v), d + 1, c,
					 edge && i == start, bits, tb, budget);
			if (r)
				return r;
			continue;
		}
		if (SLOT_TAG(v) != DAXFS_SLOT_LEAF)
			return -EUCLEAN;
		/* the chain's first visible name with hash >= *c, again
		 * with *c past each one found, as walks from the root for
		 * each *c would find them */
		for (;;) {
			head = h = HASH_LIMIT;
			for (off = SLOT_OFF(v), n = 0; off; n++) {
				if (leaf_get(fs, off, &l) ||
				    n >= DAXFS_CHAIN_MAX ||
				    (l.hash & mask) != bits)
					return -EUCLEAN;
				if (!n)
					head = l.hash;
				if (l.hash < *c)
					break;
				if (!(l.flags & DAXFS_DF_WHITEOUT)) {
					h = l.hash;
					break;
				}
				off = daxfs_load(&l.de->next);
			}
			if (h >= HASH_LIMIT)
				break;
			if (tb->fill) {
				struct trie_name f = {
					.de = l.de, .ino = l.ino,
					.len = l.len, .type = l.type,
				};

				r = emit_trie(fs, &f, h, tb->fill, tb->ctx);
				if (r) {
					tb->stop = h;
					return r;
				}
				/* as iterate does for each name it hands on */
				if (*budget < WALK_BUDGET - ENTRY_BUDGET)
					*budget += ENTRY_BUDGET;
			} else {
				tb->f[tb->n] = (struct trie_name){
					.de = l.de, .ino = l.ino,
					.len = l.len, .type = l.type,
				};
				tb->h[tb->n++] = h;
				if (tb->n == TBATCH) {
					*c = h + 1;
					return 1;
				}
			}
			*c = h + 1;
			/* the next scan would stop at the head (a chain of
			 * one hash, the usual case): skip it */
			if (head <= h)
				break;
		}
	}
	return 0;
}

/* The next smallest base hashes >= lo, gathered in one scan of the base
 * dirent array so that listing a pristine base directory costs one scan
 * per BATCH entries rather than one per entry. */
#define BATCH 32
struct base_batch {
	u32 n, next;
	u64 limit;		/* entries with hash < limit are complete */
	u64 hash[BATCH];
	u64 idx[BATCH];
};

static int batch_fill(struct daxfs_fs *fs, const struct daxfs_base_inode *bip,
		      u64 lo, struct base_batch *b)
{
	u64 first, count, i;
	u32 j;

	b->n = 0;
	b->next = 0;
	if (daxfs_base_dir_range(fs, bip, &first, &count))
		return -EUCLEAN;
	for (i = 0; i < count; i++) {
		const struct daxfs_base_dirent *bd = daxfs_base_dirent(fs, first + i);
		u32 len = bd ? daxfs_once(bd->name_len) : 0;
		u64 h;

		if (!len || len > DAXFS_NAME_MAX)
			return -EUCLEAN;
		h = daxfs_name_hash(fs, bd->name, len);
		if (h < lo || (b->n == BATCH && h >= b->hash[BATCH - 1]))
			continue;
		j = b->n < BATCH ? b->n++ : BATCH - 1;
		/* insertion sort: keep the BATCH smallest */
		while (j > 0 && b->hash[j - 1] > h) {
			b->hash[j] = b->hash[j - 1];
			b->idx[j] = b->idx[j - 1];
			j--;
		}
		b->hash[j] = h;
		b->idx[j] = first + i;
	}
	b->limit = HASH_LIMIT;
	if (b->n == BATCH) {
		/* a full batch may have cut a group of equal hashes */
		b->limit = b->hash[BATCH - 1];
		if (b->hash[0] == b->limit)
			return -EUCLEAN;
	}
	return 0;
}

struct rd {
	struct daxfs_op *op;
	struct daxfs_inode *dp;			/* trie source, or NULL */
	const struct daxfs_base_inode *bip;	/* base source, or NULL */
	struct base_batch b;
	bool b_valid;
	u64 b_lo;
	struct trie_batch tb;
	u32 budget;				/* trie slot visits left */
};

/* Smallest base hash >= c (HASH_LIMIT when none). */
static int base_next(struct rd *r, u64 c, u64 *h)
{
	u32 tries;
	int err;

	for (tries = 0; tries < 2; tries++) {
		if (r->b_valid && c >= r->b_lo) {
			while (r->b.next < r->b.n && r->b.hash[r->b.next] < c)
				r->b.next++;
			if (r->b.next < r->b.n &&
			    r->b.hash[r->b.next] < r->b.limit) {
				*h = r->b.hash[r->b.next];
				return 0;
			}
			if (r->b.limit == HASH_LIMIT) {
				*h = HASH_LIMIT;
				return 0;
			}
		}
		err = batch_fill(r->op->fs, r->bip, c, &r->b);
		if (err)
			return err;
		r->b_valid = true;
		r->b_lo = c;
	}
	return -EUCLEAN;
}

static int emit_base(struct rd *r, u64 h, daxfs_filldir_t fill, void *ctx)
{
	u32 i;

	for (i = r->b.next; i < r->b.n && r->b.hash[i] == h; i++) {
		const struct daxfs_base_dirent *bd =
			daxfs_base_dirent(r->op->fs, r->b.idx[i]);
		u32 len = bd ? daxfs_once(bd->name_len) : 0;
		struct daxfs_dent de;
		bool wh;

		if (!len || len > DAXFS_NAME_MAX)
			return -EUCLEAN;
		/* shadowed by the (partly imported) trie? */
		if (r->dp && (!trie_find(r->op, r->dp, bd->name, len, h, &de,
					 &wh) || wh))
			continue;
		if (fill(ctx, bd->name, len, bd->ino, bd->type, h + 2))
			return 1;
	}
	return 0;
}

/* The first chain's name with hash >= c (*h = HASH_LIMIT when none): the
 * head of the batch, gathered again from c when it is used up and the walk
 * that filled it stopped because it was full. */
static int trie_next(struct rd *r, u64 c, const struct trie_name **f,
		     u64 *h)
{
	struct trie_batch *tb = &r->tb;
	u64 root, cc = c;
	int err;

	*h = HASH_LIMIT;
	if (tb->next == tb->n) {
		if (tb->gathered && tb->done)
			return 0;
		tb->n = 0;
		tb->next = 0;
		tb->gathered = true;
		tb->done = true;
		root = r->dp ? daxfs_load(&r->dp->root) : 0;
		if (root) {
			err = trie_collect(r->op->fs, root, 0, &cc, true, 0, tb,
					   &r->budget);
			if (err < 0)
				return err;
			tb->done = !err;
		}
		if (!tb->n)
			return 0;
	}
	*f = &tb->f[tb->next];
	*h = tb->h[tb->next];
	return 0;
}

/* iterate for a directory with no base list: one walk of the trie that
 * hands each name on as it finds it */
static int iterate_trie(struct rd *r, u64 *pos, daxfs_filldir_t fill,
			void *ctx)
{
	u64 root = r->dp ? daxfs_load(&r->dp->root) : 0, c = *pos - 2;
	int err = 0;

	r->tb.fill = fill;
	r->tb.ctx = ctx;
	if (root)
		err = trie_collect(r->op->fs, root, 0, &c, true, 0, &r->tb,
				   &r->budget);
	if (err < 0)
		return err;
	*pos = err ? r->tb.stop + 2 : DAXFS_POS_EOF;
	return 0;
}

static int iterate(struct rd *r, u64 *pos, daxfs_filldir_t fill, void *ctx)
{
	const struct trie_name *f = NULL;
	u64 c = *pos - 2, th, bh, h;
	int err;

	while (c < HASH_LIMIT) {
		th = HASH_LIMIT;
		bh = HASH_LIMIT;
		err = trie_next(r, c, &f, &th);
		if (err < 0)
			return err;
		if (r->bip) {
			err = base_next(r, c, &bh);
			if (err)
				return err;
		}
		h = th < bh ? th : bh;
		if (h >= HASH_LIMIT)
			break;
		err = 0;
		if (th == h)
			err = emit_trie(r->op->fs, f, h, fill, ctx);
		if (!err && bh == h)
			err = emit_base(r, h, fill, ctx);
		if (err < 0)
			return err;
		if (err) {
			*pos = h + 2;
			return 0;
		}
		if (th == h)
			r->tb.next++;
		if (r->budget < WALK_BUDGET - ENTRY_BUDGET)
			r->budget += ENTRY_BUDGET;
		c = h + 1;
	}
	*pos = DAXFS_POS_EOF;
	return 0;
}

/* Base directories above this size get imported (hashed) before a
 * writable host lists them, instead of being scanned per batch. */
#define BASE_SCAN_MAX	64

int daxfs_dir_iterate(struct daxfs_op *op, u64 dir, u64 *pos,
		      daxfs_filldir_t fill, void *ctx)
{
	struct daxfs_fs *fs = op->fs;
	bool writable = op->lane && !(fs->flags & DAXFS_FS_RDONLY);
	struct daxfs_iref ref;
	struct rd r;
	u64 aux;
	int err;

	err = daxfs_inode_get(op, dir, &ref);
	if (err)
		return err;
	if (!DAXFS_IS_DIR(daxfs_iref_mode(&ref)))
		return -ENOTDIR;
	if (*pos == DAXFS_POS_EOF)
		return 0;
	if (*pos == 0) {
		if (fill(ctx, ".", 1, dir, DAXFS_DT_DIR, 0))
			return 0;
		*pos = 1;
	}
	if (*pos == 1) {
		if (fill(ctx, "..", 2, daxfs_iref_parent(&ref), DAXFS_DT_DIR, 1))
			return 0;
		*pos = 2;
	}
	if (*pos - 2 >= HASH_LIMIT) {
		*pos = DAXFS_POS_EOF;
		return 0;
	}
	memset(&r, 0, sizeof(r));
	r.op = op;
	r.budget = WALK_BUDGET;
	if (writable && ((ref.ip && !(daxfs_load(&ref.ip->aux) & DAXFS_DIR_IMPORTED)) ||
			 (ref.bip && ref.bip->count > BASE_SCAN_MAX))) {
		err = daxfs_dir_writable(op, dir, &r.dp);
		if (err && err != -ENOSPC)
			return err;
		if (!err)
			ref.ip = r.dp;
	}
	if (ref.ip) {
		r.dp = ref.ip;
		aux = daxfs_load(&r.dp->aux);
		if (!(aux & DAXFS_DIR_IMPORTED) &&
		    (daxfs_load32(&r.dp->flags) & DAXFS_IF_BASE)) {
			r.bip = daxfs_base_inode(fs, daxfs_load(&r.dp->base_ino));
			if (!r.bip || !DAXFS_IS_DIR(r.bip->mode))
				return -EUCLEAN;
		}
	} else {
		r.bip = ref.bip;
	}
	if (!r.bip)
		return iterate_trie(&r, pos, fill, ctx);
	return iterate(&r, pos, fill, ctx);
}
