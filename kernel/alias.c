// SPDX-License-Identifier: GPL-2.0
/*
 * kernel/alias.c - a lookup's dentry when its directory already has one
 * elsewhere (docs/kernel.md "Coherence", "Stale directory dentries").
 *
 * A directory has one name, and the region lookup just told which.  A
 * dentry this kernel still has for the directory under another name is
 * another host's rename that this kernel has not seen: nobody walked the
 * old name since.  d_splice_alias() moves that alias to the new name, but
 * only when it can take the rename mutex and the old parent's lock by
 * trylock.  Inside a rename between two directories this task holds the
 * mutex itself, so it answered -ESTALE, again on rename(2)'s retry: a
 * directory another host had renamed could not be renamed by its new name
 * here (found by the two-guest differential test, 2026-12-05).
 *
 * So: an alias that nothing uses (no descriptor, working directory or
 * mount below it) is dropped with its unused descendants, and the lookup
 * gets a dentry of its own.  One in use is moved here when this task holds
 * the rename mutex (the rename's own lock_rename() then stands for the
 * one d_splice_alias() tries for) and its old parent's lock can be had;
 * else d_splice_alias() decides as before.
 *
 * Never one of the rename's own two directories (this task holds its lock):
 * another host moved it under the other one since the walk, and moved here
 * it would become the rename's source or target, which vfs_rename() locks
 * again (a deadlock, found by the nested lincheck rounds with guests), after
 * do_renameat2()'s ancestor checks were made on the tree before the move.
 * d_splice_alias() answers -ESTALE there, as on one host, and the VFS walks
 * again.
 */
#include <linux/fs.h>
#include <linux/dcache.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "daxfs_k.h"

/* the low bits of a mutex's owner word are flags (MUTEX_FLAGS) */
#define DAXFS_MUTEX_FLAGS 0x07UL

/* Whether this task holds sb's rename mutex: inside a rename between two
 * directories, after lock_rename(). */
static bool daxfs_holds_rename_mutex(struct super_block *sb)
{
#ifdef CONFIG_PREEMPT_RT
	return false;	/* an rt_mutex: no owner word to read */
#else
	unsigned long owner = atomic_long_read(&sb->s_vfs_rename_mutex.owner);

	return (struct task_struct *)(owner & ~DAXFS_MUTEX_FLAGS) == current;
#endif
}

/* the low bits of an rw_semaphore's owner word are flags, bit 0 "owned
 * by readers" (RWSEM_OWNER_FLAGS_MASK) */
#define DAXFS_RWSEM_FLAGS 0x07UL
#define DAXFS_RWSEM_READERS 0x01UL

/* Whether this task holds dir's lock for writing: one of the two parents
 * its rename locked. */
static bool daxfs_holds_dir_lock(struct inode *dir)
{
#ifdef CONFIG_PREEMPT_RT
	return false;
#else
	unsigned long owner = atomic_long_read(&dir->i_rwsem.owner);

	return !(owner & DAXFS_RWSEM_READERS) &&
	       (struct task_struct *)(owner & ~DAXFS_RWSEM_FLAGS) == current;
#endif
}

/*
 * Moves the in-use alias to dentry's name, as d_splice_alias() would
 * outside a rename, with the locks d_move() wants: the rename mutex (the
 * caller's), and the old parent's lock, which is this rename's own when
 * the alias lies in one of its two directories.  False if another task
 * holds it.
 */
static bool daxfs_move_alias(struct dentry *alias, struct dentry *dentry)
{
	struct dentry *parent = dget_parent(alias);
	struct inode *pdir = d_inode(parent);
	bool ours = daxfs_holds_dir_lock(pdir), moved = false;

	if (ours || inode_trylock_shared(pdir)) {
		if (alias->d_parent == parent) {
			d_move(alias, dentry);
			moved = true;
		}
		if (!ours)
			inode_unlock_shared(pdir);
	}
	dput(parent);
	return moved;
}

struct dentry *daxfs_splice_alias(struct inode *inode, struct dentry *dentry)
{
	struct dentry *alias;

	/* an error, no inode, or not a directory: as the VFS has it */
	if (IS_ERR_OR_NULL(inode) || !S_ISDIR(inode->i_mode))
		return d_splice_alias(inode, dentry);
	alias = d_find_any_alias(inode);
	if (!alias)
		return d_splice_alias(inode, dentry);
	/* the root, or an ancestor of the name (a loop): d_splice_alias() */
	if (IS_ROOT(alias) || is_subdir(dentry, alias)) {
		dput(alias);
		return d_splice_alias(inode, dentry);
	}
	shrink_dcache_parent(alias);
	if (d_count(alias) == 1) {
		/* only our reference: nothing uses it, nor anything below */
		d_invalidate(alias);
		dput(alias);
		d_prune_aliases(inode);
		return d_splice_alias(inode, dentry);
	}
	if (alias->d_parent != dentry->d_parent &&
	    daxfs_holds_rename_mutex(inode->i_sb) &&
	    !daxfs_holds_dir_lock(inode) &&
	    daxfs_move_alias(alias, dentry)) {
		iput(inode);	/* the alias holds it */
		return alias;
	}
	dput(alias);
	return d_splice_alias(inode, dentry);
}
