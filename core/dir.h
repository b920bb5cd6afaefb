/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Directories: one hash trie per directory (64-way nodes indexed by 6-bit
 * groups of the 62-bit name hash, immutable dirent leaves, full-hash
 * collisions chained copy-on-write), plus the pristine base dirent array
 * of a base directory that has not been copied up.  docs/directories.md.
 */
#ifndef DAXFS_DIR_H
#define DAXFS_DIR_H

#include "compat.h"
#include "daxfs_core.h"
#include "inode.h"

/* Longest full-hash collision chain accepted (longer: -EUCLEAN). */
#define DAXFS_CHAIN_MAX		32

/* Trie level d (0..10) index of hash h. */
static inline unsigned int daxfs_trie_idx(u64 h, unsigned int d)
{
	if (d >= DAXFS_TRIE_MAX_DEPTH - 1)
		return (unsigned int)(h & 3);
	return (unsigned int)((h >> (56 - 6 * d)) & 63);
}

/* One name found in a directory. */
struct daxfs_dent {
	u64 ino;
	u64 hash;
	u64 leaf;		/* trie leaf offset, or 0 (pristine base entry) */
	u32 type;		/* DT_* */
	u32 flags;		/* DAXFS_DF_* */
	/* the trie slot whose chain held leaf when daxfs_dir_find found
	 * it (NULL: a base entry): where its removal in the same op looks
	 * first (daxfs_dir_remove_dent) */
	u64 *slot;
};

/* -EINVAL (empty, '/', NUL, "." or ".."), -ENAMETOOLONG, or 0. */
int daxfs_name_check(const char *name, u32 len);

/* Finds name in a resolved directory (record, or pristine base).
 * Whiteouts read as -ENOENT. */
int daxfs_dir_find(struct daxfs_op *op, const struct daxfs_iref *dir,
		   const char *name, u32 len, u64 hash, struct daxfs_dent *de);

/* Copies the directory up and imports its base entries if needed;
 * -ENOTDIR for non-directories, -ENOENT for a removed one. */
int daxfs_dir_writable(struct daxfs_op *op, u64 ino, struct daxfs_inode **dpp);
/* The same through fc, the caller's cache of the directory's record
 * (daxfs_inode_get_writable_fc; NULL: none). */
int daxfs_dir_writable_fc(struct daxfs_op *op, u64 ino, struct daxfs_fcache *fc,
			  struct daxfs_inode **dpp);

/* Entry count bookkeeping (aux word).  add fails with -ENOENT once the
 * directory is DEAD. */
int daxfs_dir_count_add(struct daxfs_inode *dp);
void daxfs_dir_count_sub(struct daxfs_inode *dp);

/*
 * A published leaf as one host saw it: every field loaded once from the
 * region and validated, so that a peer changing the leaf afterwards can
 * make the result wrong (-EUCLEAN later, fsck) but never make this host
 * read outside the leaf or free into the wrong class.  Only the name
 * bytes (len of them, inside the leaf) and next are read again.
 */
struct daxfs_leaf {
	struct daxfs_dirent *de;
	u64 ino;
	u64 hash;
	u32 len;		/* 1..DAXFS_NAME_MAX, inside the region */
	u32 type;
	u32 flags;
};

/* Loads and validates the leaf at off into *l; -EUCLEAN when bad. */
int daxfs_leaf_get(struct daxfs_fs *fs, u64 off, struct daxfs_leaf *l);

/* A new, unpublished leaf; returns its offset or 0 (-ENOSPC). */
u64 daxfs_dirent_new(struct daxfs_op *op, const char *name, u32 len, u64 hash,
		     u64 ino, u32 type, u32 flags);
/* Validated leaf at off (-EUCLEAN: NULL). */
struct daxfs_dirent *daxfs_dirent_at(struct daxfs_fs *fs, u64 off);
/* Frees a leaf never published, or retires a published one; -ESTALE:
 * fenced (store nothing more, daxfs_retire). */
daxfs_must_check int daxfs_dirent_free(struct daxfs_op *op, u64 off,
				       bool published);

/* Publishes leaf (not yet published) under its name.  -EEXIST when the
 * name is present; a whiteout of the name is replaced (the leaf then
 * gets DAXFS_DF_FROM_BASE).  With import set a whiteout also counts as
 * present (base import never resurrects a removed name). */
int daxfs_dir_link(struct daxfs_op *op, struct daxfs_inode *dp, u64 leaf,
		   bool import);
/* daxfs_dir_link (no import) that stores mark in the intent's step word
 * (a[6]) immediately before each publishing CAS: a namespace op's
 * "linking" step, which recovery cannot resolve when the leaf is absent
 * (published and gone again, or never published) and leaves high. */
int daxfs_dir_link_marked(struct daxfs_op *op, struct daxfs_inode *dp,
			  u64 leaf, u64 mark);
/*
 * The leaves a removal takes out of a directory (the removed one and the
 * chain's copies it replaced), retired only once the op has marked the
 * step that makes the removal its own.  Between the removal's CAS and
 * that mark recovery cannot tell whose removal it sees and leaves the
 * counts high (docs/recovery.md, the unlink row); retired inside that
 * window, the retires made it many times wider than the CAS and the
 * mark (tests/test_lincheck.py's fsck after the crash runs: most of the
 * residuals came from kills in those retires).  An op sets op->later to
 * a zeroed one before its removal and calls daxfs_dir_retire_later()
 * right after its mark, on every path.
 */
struct daxfs_retire_later {
	u32 n;
	u32 len[DAXFS_CHAIN_MAX];
	u64 off[DAXFS_CHAIN_MAX];
};
/* Retires what op->later holds and clears op->later; a fenced op leaks
 * the rest (fsck). */
void daxfs_dir_retire_later(struct daxfs_op *op);
/* Replaces published leaf old (found by offset under hash) by new (an
 * unpublished leaf, or 0 to drop it).  -ENOENT when old is no longer
 * there.  Retires old on success (later, with op->later). */
int daxfs_dir_swap(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
		   u64 old, u64 new_leaf);
/* Replaces leaf off of dp, if still there, by an unmarked copy (a mark
 * left by a remover that died or gave up between its mark and its CAS). */
void daxfs_dir_refresh_leaf(struct daxfs_op *op, struct daxfs_inode *dp,
			    u64 off);
/* True when leaf off is currently published in dp under hash. */
bool daxfs_dir_has_leaf(struct daxfs_op *op, struct daxfs_inode *dp, u64 hash,
			u64 off);
/* True when leaf off is in dp, or was and has been taken out (its
 * removed mark): recovery's "was it ever published" (docs/recovery.md). */
bool daxfs_dir_published(struct daxfs_op *op, struct daxfs_inode *dp,
			 u64 hash, u64 off);
/* Removes the name whose published leaf is old: drops it, or leaves a
 * whiteout when old is FROM_BASE.  -ENOENT if old is gone, -ENOSPC. */
int daxfs_dir_remove_leaf(struct daxfs_op *op, struct daxfs_inode *dp,
			  u64 old);
/* daxfs_dir_remove_leaf of the leaf de names, as daxfs_dir_find filled
 * de in this op: its hash and flags are not loaded again, and its chain
 * is looked for in de->slot before a descent from the root. */
int daxfs_dir_remove_dent(struct daxfs_op *op, struct daxfs_inode *dp,
			  const struct daxfs_dent *de);

/* Retires every node and leaf of a dead directory's trie. */
void daxfs_dir_retire_trie(struct daxfs_op *op, struct daxfs_inode *dp);

/* readdir worker (positions: see daxfs_core.h). */
int daxfs_dir_iterate(struct daxfs_op *op, u64 dir, u64 *pos,
		      daxfs_filldir_t fill, void *ctx);

#endif /* DAXFS_DIR_H */
