// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: inodes, dentries and namespace operations.
 *
 * Coherence: other hosts change the region at any time, so the VFS
 * caches built here are only hints.
 *  - Every dentry is revalidated on lookup (d_revalidate): the name is
 *    looked up again in the region and must still map to the same inode
 *    number; a negative dentry must still be absent.
 *  - Inode attributes are reloaded from the record whenever its change
 *    counter moved (getattr, permission, open, read, write, revalidate).
 *  - Directory operations go straight to the core, which decides under
 *    CAS; the local i_rwsem only orders this host's own callers.
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/namei.h>
#include <linux/cred.h>
#include <linux/uidgid.h>
#include <linux/posix_acl.h>
#include <linux/fileattr.h>
#include <linux/moduleparam.h>

#include "daxfs_k.h"

static struct kmem_cache *daxfs_inode_cachep;

static void daxfs_inode_init_once(void *p)
{
	struct daxfs_inode_info *ei = p;

	inode_init_once(&ei->vfs_inode);
	mutex_init(&ei->pin_lock);
	mutex_init(&ei->open_lock);
	xa_init(&ei->pin_pg);
	xa_init(&ei->pin_cnt);
	xa_init(&ei->base_pg);
	xa_init(&ei->pool_pg);
	xa_init(&ei->hole_pg);
	xa_init(&ei->pmd_pg);
	INIT_LIST_HEAD(&ei->mapped_link);
}

int daxfs_inode_cache_init(void)
{
	daxfs_inode_cachep = kmem_cache_create("daxfs_inode_cache",
					       sizeof(struct daxfs_inode_info), 0,
					       SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					       daxfs_inode_init_once);
	return daxfs_inode_cachep ? 0 : -ENOMEM;
}

void daxfs_inode_cache_destroy(void)
{
	rcu_barrier();	/* free_inode runs after an RCU grace period */
	kmem_cache_destroy(daxfs_inode_cachep);
}

struct inode *daxfs_alloc_inode(struct super_block *sb)
{
	struct daxfs_inode_info *ei;

	ei = alloc_inode_sb(sb, daxfs_inode_cachep, GFP_KERNEL);
	if (!ei)
		return NULL;
	ei->change = 0;
	ei->fc = (struct daxfs_fcache){ 0 };
	ei->valid = false;
	ei->perm_epoch = 0;
	ei->perm_seq = 0;
	ei->orphan = false;
	ei->nr_vmas = 0;
	ei->nr_opens = 0;
	ei->create_hold = false;
	INIT_LIST_HEAD(&ei->hold_link);
	ei->reval_change = 0;
	ei->pool_change = 0;
	ei->rdc = NULL;
	return &ei->vfs_inode;
}

/* Off sbi->create_holds, if on it (hold_lock held). */
static void hold_unlist(struct daxfs_sb_info *sbi, struct daxfs_inode_info *ei)
{
	if (list_empty(&ei->hold_link))
		return;
	list_del_init(&ei->hold_link);
	sbi->nr_create_holds--;
}

/* The entry a create made its file with, when no open took it over. */
static void daxfs_hold_untrack(struct inode *inode)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);

	spin_lock(&sbi->hold_lock);
	hold_unlist(sbi, DAXFS_I(inode));
	spin_unlock(&sbi->hold_lock);
}

void daxfs_create_hold_taken(struct inode *inode)
{
	DAXFS_I(inode)->create_hold = false;
	daxfs_hold_untrack(inode);
}

static void daxfs_drop_create_hold(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct super_block *sb = inode->i_sb;

	mutex_lock(&ei->open_lock);
	if (ei->create_hold) {
		daxfs_create_hold_taken(inode);
		if (!--ei->nr_opens && !READ_ONCE(DAXFS_SB(sb)->dead))
			daxfs_kerr(sb, daxfs_open_put_fc(DAXFS_FS(sb),
							 inode->i_ino, &ei->fc),
				   "close");
	}
	mutex_unlock(&ei->open_lock);
}

/*
 * A create hold is needed only until the creating open(2) opens the file,
 * microseconds later.  An open that fails after its create (on 6.1,
 * open(O_CREAT | O_DIRECTORY) creates the file, then fails with ENOTDIR),
 * and mknod(2) of a regular file (the VFS makes it with ->create), would
 * leave the entry published until the inode is evicted, and any user
 * could fill the host's open set that way (issue 16 item 2's denial of
 * service).  The lease work drops holds older than two of its ticks; a
 * create drops the oldest beyond DAXFS_CREATE_HOLDS_MAX at once, since a
 * fast machine makes the 8,064 entries of a host's open set in less than
 * two ticks (tests/vm/test_kernel_hardening.py, 9,000 mknods in 0.7 s).
 * A hold dropped early only reopens the race it closes: an open(O_CREAT)
 * whose file another host unlinked between the create and the open gets
 * ENOENT, for a create that 1,024 later ones on this host overtook.
 */
#define DAXFS_CREATE_HOLDS_MAX	1024

static void expire_holds(struct daxfs_sb_info *sbi, unsigned int keep)
{
	struct daxfs_inode_info *ei;
	struct inode *inode;
	unsigned int n = 0;

	spin_lock(&sbi->hold_lock);
	while (!list_empty(&sbi->create_holds)) {
		ei = list_first_entry(&sbi->create_holds, struct daxfs_inode_info,
				      hold_link);
		/* oldest first: the rest are younger */
		if (sbi->renew_ticks - ei->hold_tick < 2 &&
		    sbi->nr_create_holds <= keep)
			break;
		hold_unlist(sbi, ei);
		inode = igrab(&ei->vfs_inode);	/* NULL: being evicted */
		spin_unlock(&sbi->hold_lock);
		if (inode) {
			daxfs_drop_create_hold(inode);
			iput(inode);
		}
		if (!(++n & 63))
			cond_resched();
		spin_lock(&sbi->hold_lock);
	}
	spin_unlock(&sbi->hold_lock);
}

void daxfs_expire_create_holds(struct daxfs_sb_info *sbi)
{
	expire_holds(sbi, UINT_MAX);
}

/*
 * POSIX unlink of open files: every open publishes itself in this host's
 * open set (daxfs_open/daxfs_release), so an unlink of the last name on
 * any host leaves the inode usable by number (nlink 0) until the last
 * holder anywhere closes it; the last release frees it
 * (docs/open-files.md).  Eviction of an inode our own unlink left at nlink
 * 0 settles it once more, which frees it only if no host holds it.
 */
void daxfs_evict_inode(struct inode *inode)
{
	struct super_block *sb = inode->i_sb;

	truncate_inode_pages_final(&inode->i_data);
	daxfs_mmap_release_pins(inode);	/* before the host leaves */
	clear_inode(inode);
	daxfs_rdc_drop(inode);
	/* no reference is left to open, release or expire_holds (whose
	 * igrab fails on an inode being freed): create_hold moves no more,
	 * and most evicted inodes have none, so no open_lock to look */
	if (DAXFS_I(inode)->create_hold)
		daxfs_drop_create_hold(inode);
	if (DAXFS_I(inode)->orphan && !READ_ONCE(DAXFS_SB(sb)->dead))
		daxfs_kerr(sb, daxfs_inode_release(DAXFS_FS(sb), inode->i_ino), "release");
}

/* After our unlink or rename-over: was the victim kept as an orphan? */
static void daxfs_mark_orphan(struct inode *victim)
{
	if (victim && !S_ISDIR(victim->i_mode) && daxfs_refresh_inode(victim) == 0 &&
	    victim->i_nlink == 0)
		DAXFS_I(victim)->orphan = true;
}

void daxfs_free_inode(struct inode *inode)
{
	kmem_cache_free(daxfs_inode_cachep, DAXFS_I(inode));
}

static inline int daxfs_dead(struct super_block *sb)
{
	return READ_ONCE(DAXFS_SB(sb)->dead) ? -EIO : 0;
}

/* A stamp after 1970 (every stamp we make) is split inline: the kernel's
 * ns_to_timespec64 is a call out of the module, return thunk and all, for
 * one division, and a refresh makes three (docs/benchmarks.md "Fewer
 * checks and clock readings in daxfs.ko's create and unlink") */
static struct timespec64 ns_to_ts(s64 ns)
{
	struct timespec64 ts;
	u32 rem;

	if (unlikely(ns < 0))
		return ns_to_timespec64(ns);
	ts.tv_sec = (time64_t)div_u64_rem((u64)ns, NSEC_PER_SEC, &rem);
	ts.tv_nsec = rem;
	return ts;
}

/*
 * The set-id bits of a regular file that exec would honour: those that a
 * write or truncate by an unprivileged task must clear (as the VFS's
 * should_remove_suid, but from the region's mode, not i_mode).
 */
static umode_t daxfs_setid_bits(umode_t mode)
{
	umode_t bits = 0;

	if (!S_ISREG(mode))
		return 0;
	if (mode & S_ISUID)
		bits |= S_ISUID;
	if ((mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		bits |= S_ISGID;
	return bits;
}

/*
 * The mode the VFS sees.  Without the "trust_suid" mount option the set-id bits
 * of regular files are hidden from it, so that exec ignores them: any
 * peer can write a setuid file, and nosuid is a flag of the caller's
 * mount(2) that a filesystem cannot set (docs/kernel.md "Trust").
 * stat shows the region's mode (daxfs_k_getattr).
 */
static umode_t daxfs_vfs_mode(struct super_block *sb, umode_t mode)
{
	if (DAXFS_SB(sb)->opts.trust_suid)
		return mode;
	return mode & ~daxfs_setid_bits(mode);
}

/* The region's chattr flags as the VFS's own (its checks then apply:
 * may_open, may_delete, notify_change, touch_atime, generic_write_sync). */
static unsigned int daxfs_vfs_iflags(u32 fl)
{
	return (fl & DAXFS_FL_IMMUTABLE ? S_IMMUTABLE : 0) |
	       (fl & DAXFS_FL_APPEND ? S_APPEND : 0) |
	       (fl & DAXFS_FL_NOATIME ? S_NOATIME : 0) |
	       (fl & DAXFS_FL_SYNC ? S_SYNC : 0);
}

#define DAXFS_VFS_IFLAGS	(S_IMMUTABLE | S_APPEND | S_NOATIME | S_SYNC)

/* Whether a fill would change what a permission check reads (i_lock):
 * a newer record's, or an older one a refresh that loaded before
 * another's stores after it (daxfs_refresh_inode_change). */
static bool perm_differs(struct inode *inode, const struct daxfs_attr *a)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	return !ei->valid || a->mode != ei->mode ||
	       !uid_eq(inode->i_uid, make_kuid(&init_user_ns, a->uid)) ||
	       !gid_eq(inode->i_gid, make_kgid(&init_user_ns, a->gid)) ||
	       ((a->flags ^ ei->attr_flags) &
		(DAXFS_FL_IMMUTABLE | DAXFS_FL_APPEND));
}

/*
 * i_lock held, before a fill that perm_differs stores: no permission
 * check answers from the inode alone until a proof saved after the fill
 * (perm_save, under i_lock too).
 */
static void perm_forget(struct inode *inode)
{
	WRITE_ONCE(DAXFS_I(inode)->perm_epoch, 0);
	smp_wmb();	/* before the fill's stores */
}

/*
 * And after its stores, the change counter's last: a proof that read the
 * count before this saves nothing; one that read it after sees what the
 * fill stored, the counter included, and refreshes again if that was an
 * older record's.
 */
static void perm_filled(struct inode *inode)
{
	smp_wmb();
	WRITE_ONCE(DAXFS_I(inode)->perm_seq, DAXFS_I(inode)->perm_seq + 1);
}

/* Copies region attributes into the VFS inode.  own: the record changed
 * only by this host's calls, which set neither an extended attribute nor
 * a privilege (its writes, daxfs_refresh_after_write; its entry changes
 * in a directory, refresh_after_op): S_NOSEC and the cached ACLs stand. */
static void daxfs_fill_inode(struct inode *inode, const struct daxfs_attr *a,
			     bool own)
{
	unsigned int locked = S_IMMUTABLE | S_APPEND;
	bool lock_new = S_ISREG(a->mode) &&
			(daxfs_vfs_iflags(a->flags) & ~inode->i_flags & locked);
	bool perm;

	/*
	 * S_NOSEC (SB_NOSEC: the VFS's "no set-id bit, no
	 * security.capability", so a write skips the look) goes whenever
	 * the record changed, unless by nothing but our own write: any host
	 * may have set either since.  The next write here then looks again,
	 * as after a local setxattr (docs/kernel.md "Writes and file
	 * capabilities").
	 */
	inode_set_flags(inode, daxfs_vfs_iflags(a->flags), DAXFS_VFS_IFLAGS |
			(own ? 0 : S_NOSEC));
	/*
	 * Locked on some host since we looked: stores through this host's
	 * shared mappings must fault again, and the fault refuses them
	 * (the core's map_block).  The lease pass refreshes every mapped
	 * inode, so this runs within a tick (docs/attrs.md).
	 */
	if (lock_new && mapping_writably_mapped(inode->i_mapping))
		unmap_mapping_range(inode->i_mapping, 0, 0, 0);
	spin_lock(&inode->i_lock);
	perm = perm_differs(inode, a);
	if (perm)
		perm_forget(inode);
	DAXFS_I(inode)->mode = a->mode;
	WRITE_ONCE(DAXFS_I(inode)->attr_flags, a->flags);
	inode->i_mode = daxfs_vfs_mode(inode->i_sb, a->mode);
	inode->i_uid = make_kuid(&init_user_ns, a->uid);
	inode->i_gid = make_kgid(&init_user_ns, a->gid);
	set_nlink(inode, a->nlink);
	i_size_write(inode, a->size);
	inode->i_blocks = a->blocks << (DAXFS_BLOCK_SHIFT - 9);
	daxfs_set_inode_times(inode, ns_to_ts(a->atime_ns), ns_to_ts(a->mtime_ns),
			      ns_to_ts(a->ctime_ns));
	inode->i_generation = a->generation;
	/* last, a release: a write's checks that load the counter with an
	 * acquire, outside i_lock, see the attributes stored with it
	 * (daxfs_write_checks) */
	smp_store_release(&DAXFS_I(inode)->change, a->change);
	DAXFS_I(inode)->valid = true;
	if (perm)
		perm_filled(inode);
	spin_unlock(&inode->i_lock);
	/* another host may have changed them (docs/xattr.md) */
	if (!own)
		forget_all_cached_acls(inode);
}

static int refresh(struct inode *inode, u64 *change, u64 mine);
static int refresh_apply(struct inode *inode, const struct daxfs_attr *a,
			 int err, u64 mine);

/*
 * The record changed by nothing but this host's own calls (its change
 * counter moved by exactly their count): only what they move can differ,
 * the size, blocks, times and the link count.  Owner, group and
 * generation move the counter when they change, so they stand; a
 * different mode or flags takes the full fill (S_NOSEC, a lock's
 * unmapping), as does a smaller size of a regular file (its mappings of
 * the tail go: refresh_apply).  The link count does not move the counter
 * (another host's link may have changed it too): it is copied from the
 * record here as the full fill would copy it, and our own link of a
 * file just made needs nothing more.  A directory's size is its entry
 * count, which our own unlink lowers, and nothing maps a directory.
 */
static bool own_write_only(struct inode *inode, const struct daxfs_attr *a)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	if (a->mode != ei->mode || a->flags != READ_ONCE(ei->attr_flags) ||
	    (S_ISREG(inode->i_mode) && a->size < (u64)i_size_read(inode)))
		return false;
	spin_lock(&inode->i_lock);
	if (a->nlink != inode->i_nlink)
		set_nlink(inode, a->nlink);
	i_size_write(inode, a->size);
	inode->i_blocks = a->blocks << (DAXFS_BLOCK_SHIFT - 9);
	if (!daxfs_inode_times_are(inode, a->atime_ns, a->mtime_ns,
				   a->ctime_ns))
		daxfs_set_inode_times(inode, ns_to_ts(a->atime_ns),
				      ns_to_ts(a->mtime_ns),
				      ns_to_ts(a->ctime_ns));
	smp_store_release(&ei->change, a->change);	/* as daxfs_fill_inode */
	spin_unlock(&inode->i_lock);
	return true;
}

/*
 * Reloads the attributes when the record changed.  -ESTALE when the
 * inode number is gone or now names an object of another type (another
 * host removed it); the caller's dentry is then dropped.  *change (may
 * be NULL) gets the change counter this call loaded: ei->change may be
 * older, because a concurrent refresh that loaded before us can store
 * after us.
 */
int daxfs_refresh_inode_change(struct inode *inode, u64 *change)
{
	return refresh(inode, change, ~0ULL);
}

/*
 * After a write (inode lock held): before is the change counter the
 * refresh before it loaded, moves how many of the core calls that wrote
 * moved its count (by one each; the others only marked it: a rewrite's
 * mark changes no attribute).  Only when the count moved by exactly that
 * does the inode keep S_NOSEC: a change by anyone else in between, such
 * as another host's setxattr of security.capability, makes the next
 * write look for the capability again.  a: the attributes the write's
 * last op loaded after it wrote, or NULL (then one op loads them here).
 */
int daxfs_refresh_after_write(struct inode *inode, u64 before, u64 moves,
			      const struct daxfs_attr *a)
{
	int err;

	if (!a)
		return refresh(inode, NULL, before + moves);
	err = daxfs_dead(inode->i_sb);
	return err ? err : refresh_apply(inode, a, 0, before + moves);
}

static int peek_inode(struct inode *inode, struct daxfs_peek *pk)
{
	return daxfs_attr_peek(DAXFS_FS(inode->i_sb), inode->i_ino,
			       &DAXFS_I(inode)->fc, pk);
}

/*
 * Whether the inode's attributes are what the region has now, by a peek
 * at its record with no core op (docs/kernel.md "Peeks").  Never sleeps:
 * RCU path walk calls it too.  pk gets what the peek loaded (change: 0 if
 * none).
 */
static bool attrs_current(struct inode *inode, struct daxfs_peek *pk)
{
	pk->change = 0;
	return !peek_inode(inode, pk) && daxfs_attrs_match(inode, pk);
}

/* mine: the change counter that means "changed by our write only" */
static int refresh(struct inode *inode, u64 *change, u64 mine)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_attr a;
	struct daxfs_peek pk;
	int err;

	err = daxfs_dead(inode->i_sb);
	if (err)
		return err;
	if (attrs_current(inode, &pk)) {
		if (change)
			*change = pk.change;
		return 0;
	}
	/* every write comes here first: through the inode's cache of its
	 * record, as the write itself goes */
	err = daxfs_getattr_fc(DAXFS_FS(inode->i_sb), inode->i_ino, &ei->fc, &a);
	if (!err && change)
		*change = a.change;
	return refresh_apply(inode, &a, err, mine);
}

int daxfs_refresh_from(struct inode *inode, const struct daxfs_attr *a,
		       int err)
{
	if (!a && err >= 0)
		return 0;	/* no attributes and no error: nothing to do */
	return refresh_apply(inode, a, a ? 0 : err, ~0ULL);
}

/* daxfs_refresh_peeked when the peek did not match (daxfs_k.h) */
int daxfs_refresh_unmatched(struct inode *inode, const struct daxfs_peek *pk,
			    int err, u64 *change)
{
	*change = 0;
	if (!pk)
		return daxfs_refresh_from(inode, NULL, err);
	return daxfs_refresh_inode_change(inode, change);
}

/*
 * The file a create's link just named (ln: daxfs_link_created's), which
 * the inode shows as the file's op made it.  The link's one touch took
 * the file's counter from c0 to ln->vouch = c0 + 1: when the inode still
 * holds c0, nothing but our link moved it since our fill, and what the
 * link's op loaded is our own change (refresh_apply's "mine": the ACLs
 * cached at the create and S_NOSEC stand, and no full fill).
 */
static int refresh_linked(struct inode *inode, const struct daxfs_linked *ln)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	u64 mine = READ_ONCE(ei->valid) &&
		   READ_ONCE(ei->change) + 1 == ln->vouch ? ln->vouch : ~0ULL;

	if (!ln->inode.ino)
		return daxfs_refresh_inode(inode);
	return daxfs_dead(inode->i_sb) ?: refresh_apply(inode, &ln->inode, 0,
							 mine);
}

/*
 * The directory's own dentry, when its counter vouched for its name at
 * ln->dir_pre (name_confirmed) and our entry change's one move took the
 * counter to exactly one above (its attributes after show it): nothing but
 * that change, which leaves the directory's own name alone, moved it since
 * the vouch, so the vouch moves with it.  Else every create in a directory
 * made the next path walk through it look its name up again, in an op,
 * out of RCU walk (docs/kernel.md "Dentries").  A counter only grows, so
 * seeing dir_pre at the vouch and at the op proves nothing came between.
 */
static void vouch_follows_op(struct dentry *dentry, struct inode *dir,
			     const struct daxfs_linked *ln)
{
	if (ln->dir.change != ln->dir_pre + 1 || !ln->dir_pre)
		return;
	spin_lock(&dentry->d_lock);
	if (d_inode(dentry) == dir &&
	    (uintptr_t)dentry->d_fsdata == dir->i_ino &&
	    dentry->d_time == (unsigned long)ln->dir_pre)
		dentry->d_time = (unsigned long)ln->dir.change;
	spin_unlock(&dentry->d_lock);
}

/*
 * The same for the directory of an entry change of ours (ln: struct
 * daxfs_linked).  When our last look saw the counter the op found right
 * before its touch (dir_pre), and the op's attributes show it one above,
 * nothing but our op moved it since: the ACLs cached for the directory
 * stand, and the next create in it reads no default ACL again.
 */
static int refresh_after_op(struct inode *dir, struct dentry *child,
			    const struct daxfs_linked *ln)
{
	struct daxfs_inode_info *ei = DAXFS_I(dir);
	u64 mine = READ_ONCE(ei->valid) && READ_ONCE(ei->change) == ln->dir_pre ?
		   ln->dir_pre + 1 : ~0ULL;
	int err;

	if (!ln->dir.ino)
		return daxfs_refresh_inode(dir);
	err = daxfs_dead(dir->i_sb) ?: refresh_apply(dir, &ln->dir, 0, mine);
	if (!err)
		vouch_follows_op(child->d_parent, dir, ln);
	return err;
}

/* Whether change is mine: the count (and what is in flight) as our own
 * calls left it, whatever a rewrite's mark says (ours, or another host's
 * rewrite, which changes no attribute).  ~0: none is. */
static bool change_is_mine(u64 change, u64 mine)
{
	return mine != ~0ULL && daxfs_change_same_count(change, mine);
}

/* The refresh with the attributes (or the error) a core op gave. */
static int refresh_apply(struct inode *inode, const struct daxfs_attr *ap,
			 int err, u64 mine)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_attr a;
	bool own;

	if (err == -ENOENT) {
		/* removed by another host (or by us): no links left */
		if (inode->i_nlink)
			clear_nlink(inode);
		return -ESTALE;
	}
	if (err)
		return daxfs_kerr(inode->i_sb, err, "getattr");
	a = *ap;
	if ((a.mode ^ inode->i_mode) & S_IFMT)
		return -ESTALE;
	if (ei->valid && a.change == READ_ONCE(ei->change) &&
	    a.size == (u64)i_size_read(inode) && a.nlink == inode->i_nlink)
		return 0;
	/* our own writes, or a fold of a rewrite's mark (another host's
	 * getattr, or ours): no attribute changed beyond a write's */
	own = change_is_mine(a.change, mine) ||
	      daxfs_change_only_folded(READ_ONCE(ei->change), a.change);
	if (ei->valid && own && own_write_only(inode, &a))
		return 0;
	if (S_ISREG(inode->i_mode) && a.size < (u64)i_size_read(inode))
		/* truncated elsewhere: drop our stale mappings of the tail,
		 * the page of the new EOF included (see daxfs_k_setattr) */
		unmap_mapping_range(inode->i_mapping,
				    round_down(a.size, PAGE_SIZE), 0, 1);
	daxfs_fill_inode(inode, &a, own);
	return 0;
}

int daxfs_refresh_inode(struct inode *inode)
{
	return refresh(inode, NULL, ~0ULL);
}

static void daxfs_set_ops(struct inode *inode, const struct daxfs_attr *a)
{
	switch (a->mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &daxfs_file_iops;
		inode->i_fop = &daxfs_file_fops;
		inode->i_mapping->a_ops = &daxfs_aops;
		break;
	case S_IFDIR:
		inode->i_op = &daxfs_dir_iops;
		inode->i_fop = &daxfs_dir_fops;
		break;
	case S_IFLNK:
		inode->i_op = &daxfs_symlink_iops;
		inode_nohighmem(inode);
		break;
	default:
		inode->i_op = &daxfs_special_iops;
		init_special_inode(inode, a->mode, new_decode_dev((u32)a->rdev));
		break;
	}
}

/*
 * The inode ino, with the attributes a namespace op loaded in its own op
 * (a; NULL or ino 0: none, one op of its own reads them).
 */
static struct inode *iget_with(struct super_block *sb, u64 ino,
			       const struct daxfs_attr *a)
{
	struct daxfs_attr got;
	struct inode *inode;
	int err;

	inode = iget_locked(sb, ino);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (!(daxfs_i_state(inode) & I_NEW)) {
		err = a && a->ino == ino ? daxfs_refresh_from(inode, a, 0) :
		      daxfs_refresh_inode(inode);
		if (err) {
			iput(inode);
			return ERR_PTR(err);
		}
		return inode;
	}
	if (!a || a->ino != ino) {
		err = daxfs_getattr(DAXFS_FS(sb), ino, &got);
		if (err) {
			iget_failed(inode);
			return ERR_PTR(daxfs_kerr(sb, err == -ENOENT ? -ESTALE : err,
						  "iget"));
		}
		a = &got;
	}
	inode->i_mode = daxfs_vfs_mode(sb, a->mode);
	daxfs_set_ops(inode, a);
	daxfs_fill_inode(inode, a, false);
	unlock_new_inode(inode);
	return inode;
}

struct inode *daxfs_iget(struct super_block *sb, u64 ino)
{
	return iget_with(sb, ino, NULL);
}

/* ---- dentries ---- */

/*
 * A counter found with a change in flight where it would have vouched:
 * one that stays so is healed (daxfs_change_seen), as the lease work's
 * writers write: not on a read-only mount, nor while frozen (freeze.c).
 */
void daxfs_k_change_seen(struct super_block *sb, u64 ino, u64 w)
{
	if (!daxfs_change_seen(DAXFS_FS(sb), ino, w) || sb_rdonly(sb) ||
	    !sb_start_intwrite_trylock(sb))
		return;
	daxfs_change_heal_now(DAXFS_FS(sb), ino);
	sb_end_intwrite(sb);
}

/*
 * A lookup confirmed the dentry's name, with a change counter loaded
 * before it that vouches for the answer while it stands (seen, 0 none:
 * daxfs_lookup_attr_fc): the directory's, or for a positive dentry
 * revalidated, its inode's.  Recorded with the number of the inode it is
 * of, both under d_lock, so that revalidations trust the name while that
 * counter stands (docs/kernel.md "Dentries").  A dentry moved to another
 * directory, or turned negative or positive, then names an inode that is
 * neither its directory nor its own: not trusted.
 */
static void name_confirmed(struct dentry *dentry, struct inode *dir,
			   u64 ref, u64 seen)
{
	/* a change in flight: the answer may be either side of it; one
	 * that stays is a raise nobody will lower, healed after a while */
	if (!daxfs_change_settled(seen)) {
		daxfs_k_change_seen(dir->i_sb, ref, seen);
		seen = 0;
	}
	spin_lock(&dentry->d_lock);
	if (d_inode(dentry->d_parent) == dir) {
		dentry->d_fsdata = seen ? (void *)(uintptr_t)ref : NULL;
		dentry->d_time = (unsigned long)seen;
	}
	spin_unlock(&dentry->d_lock);
}

/*
 * An O_TMPFILE's dentry (d_tmpfile: "#INO", never hashed) has no name in
 * its directory to look up again; its d_fsdata says so.  Only overlayfs
 * revalidates one: from 6.6 it keeps the tmpfile's dentry as the upper
 * dentry of a file it copied up and linked in (ovl_copy_up_tmpfile), and
 * turns our 0 into ESTALE.  Such a dentry is current while its inode is.
 */
#define DAXFS_DENTRY_NAMELESS	((void *)~(uintptr_t)0)

void daxfs_dentry_nameless(struct dentry *dentry)
{
	spin_lock(&dentry->d_lock);
	dentry->d_fsdata = DAXFS_DENTRY_NAMELESS;
	dentry->d_time = 0;
	spin_unlock(&dentry->d_lock);
}

static bool dentry_is_nameless(struct dentry *dentry)
{
	return READ_ONCE(dentry->d_fsdata) == DAXFS_DENTRY_NAMELESS &&
	       d_unhashed(dentry);
}

/*
 * On by default since format 13: a name or a listing is kept only when
 * the counter it was taken under showed no entry change in flight, and
 * trusted while that counter reads the same (docs/kernel.md "Changes in
 * flight").  Format 12 counters could not say so, and trusting them was
 * not linearizable (docs/lincheck.md "A negative dentry trusted while
 * another host's create was half done").  Set to 0, every revalidation
 * looks the name up in an op and every listing is gathered afresh
 * (kernel/dir.c): for measurements.
 */
bool daxfs_trust_cached = true;
module_param_named(trust_cached, daxfs_trust_cached, bool, 0644);
MODULE_PARM_DESC(trust_cached,
		 "trust cached names and listings while a change counter stands (default on; off: every name looked up again)");

/* What a dentry's recorded counter (name_confirmed) and peeks prove
 * current, with no core op: nothing, its name, or its name and its inode's
 * attributes.  Never sleeps.  The caller keeps the inode alive and holds
 * an RCU read section, which keeps the parent's inode (freed after a
 * grace period) while we peek at it. */
enum { DENTRY_STALE, DENTRY_NAME, DENTRY_CURRENT };

static int dentry_current(struct dentry *dentry, struct inode *inode)
{
	struct daxfs_peek pk;
	struct inode *dir;
	unsigned long seen;
	uintptr_t of;

	/* d_move takes d_lock too: the parent is the one the dentry had
	 * when its counter was read, not one it is moved to meanwhile.  Not
	 * held through the peeks, which load the region: a walk's lockref
	 * on this dentry waits on it */
	spin_lock(&dentry->d_lock);
	of = (uintptr_t)dentry->d_fsdata;
	seen = dentry->d_time;
	dir = d_inode_rcu(dentry->d_parent);
	spin_unlock(&dentry->d_lock);
	if (!seen || !READ_ONCE(daxfs_trust_cached))
		return DENTRY_STALE;
	if (inode && of == inode->i_ino) {
		/* one peek for the name and the attributes */
		if (peek_inode(inode, &pk) || pk.change != seen)
			return DENTRY_STALE;
		return daxfs_attrs_match(inode, &pk) ? DENTRY_CURRENT : DENTRY_NAME;
	}
	if (!dir || of != dir->i_ino || peek_inode(dir, &pk) || pk.change != seen)
		return DENTRY_STALE;
	return !inode || attrs_current(inode, &pk) ? DENTRY_CURRENT :
	       DENTRY_NAME;
}

/*
 * The name must still map to the same inode (a negative dentry: to none),
 * and the inode's attributes are refreshed.  When the counter recorded
 * with the dentry stands (dentry_current) and a peek says the inode's
 * attributes are current, neither needs a core op, and RCU path walk goes
 * on (docs/kernel.md "Dentries").  Else the name is looked up again, with
 * the attributes in the same op.
 */
static int daxfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct daxfs_attr a;
	struct inode *inode, *dir;
	struct dentry *parent;
	u64 ino, seen;
	int err, cur;

	if (READ_ONCE(DAXFS_SB(dentry->d_sb)->dead))
		return 0;
	if (flags & LOOKUP_RCU)
		return dentry_current(dentry, d_inode_rcu(dentry)) ==
		       DENTRY_CURRENT ? 1 : -ECHILD;
	inode = d_inode(dentry);
	if (inode && dentry_is_nameless(dentry))
		return daxfs_refresh_inode(inode) == 0;
	/* ref-walk comes here on every walk below a mount whose
	 * d_revalidate refuses RCU walk (9p, NFS): an RCU read section, as
	 * in RCU walk, is cheaper than dget_parent and dput, two locked
	 * read-modify-writes; only a stale name takes a reference on the
	 * parent, for the lookup */
	rcu_read_lock();
	cur = dentry_current(dentry, inode);
	rcu_read_unlock();
	if (cur != DENTRY_STALE)
		return cur == DENTRY_CURRENT || daxfs_refresh_inode(inode) == 0;
	parent = dget_parent(dentry);
	dir = d_inode(parent);
	err = daxfs_lookup_attr_fc(DAXFS_FS(dentry->d_sb), dir->i_ino,
				   dentry->d_name.name, dentry->d_name.len,
				   &ino, inode ? inode->i_ino : 0,
				   inode ? &DAXFS_I(inode)->fc : NULL,
				   inode ? &a : NULL, &seen);
	if (inode)
		err = err ? err : ino != inode->i_ino ? -ESTALE :
		      daxfs_refresh_from(inode, &a, 0);
	else
		err = err == -ENOENT ? 0 : err ? err : -EEXIST;
	if (!err)
		name_confirmed(dentry, dir, inode ? inode->i_ino : dir->i_ino,
			       seen);
	dput(parent);
	return !err;
}

DAXFS_D_REVALIDATE(daxfs_d_revalidate)

const struct dentry_operations daxfs_dentry_ops = {
	.d_revalidate	= daxfs_d_revalidate_vfs,
};

/* ---- common inode operations ---- */

/*
 * Whether the inode's permission attributes still hold by the attribute
 * epoch alone: the word the last proof read before it loaded them, and
 * the word now (docs/kernel.md "Permission checks and the attribute
 * epoch").  One load of a rarely written line; never sleeps.
 */
static bool perm_cached(struct inode *inode)
{
	u64 saved = smp_load_acquire(&DAXFS_I(inode)->perm_epoch);

	return saved && !READ_ONCE(DAXFS_SB(inode->i_sb)->dead) &&
	       saved == daxfs_attr_epoch(DAXFS_FS(inode->i_sb));
}

/* After a proof that began with *epoch and seq (read in that order,
 * before the attributes): later checks may answer from the inode while
 * the epoch stands, unless a fill changed the attributes meanwhile (it
 * may have been an older refresh's, storing after ours). */
static void perm_save(struct inode *inode, u64 epoch, unsigned int seq)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	if (!epoch)
		return;
	spin_lock(&inode->i_lock);
	if (ei->perm_seq == seq)
		smp_store_release(&ei->perm_epoch, epoch);
	spin_unlock(&inode->i_lock);
}

int daxfs_k_permission(DAXFS_IDMAP_T *idmap, struct inode *inode, int mask)
{
	struct daxfs_peek pk;
	unsigned int seq;
	u64 epoch;
	int err;

	if (perm_cached(inode))
		return generic_permission(idmap, inode, mask);
	/* the epoch first (an acquire), then the fill count, then the
	 * attributes: a change published after our load bumps past it */
	epoch = daxfs_attr_epoch(DAXFS_FS(inode->i_sb));
	seq = READ_ONCE(DAXFS_I(inode)->perm_seq);
	smp_rmb();
	/* RCU path walk: only attributes a peek proves current */
	if (mask & MAY_NOT_BLOCK) {
		if (!attrs_current(inode, &pk))
			return -ECHILD;
		perm_save(inode, epoch, seq);
		return generic_permission(idmap, inode, mask);
	}
	err = daxfs_refresh_inode(inode);
	if (err && err != -ESTALE)
		return err;
	if (!err)
		perm_save(inode, epoch, seq);
	return generic_permission(idmap, inode, mask);
}

/* statx's stx_attributes: the chattr flags it has bits for (xfstests
 * generic/424), all of which daxfs can set. */
static void daxfs_statx_attrs(struct kstat *stat, u32 fl)
{
	if (fl & DAXFS_FL_APPEND)
		stat->attributes |= STATX_ATTR_APPEND;
	if (fl & DAXFS_FL_IMMUTABLE)
		stat->attributes |= STATX_ATTR_IMMUTABLE;
	if (fl & DAXFS_FL_NODUMP)
		stat->attributes |= STATX_ATTR_NODUMP;
	stat->attributes_mask |= STATX_ATTR_APPEND | STATX_ATTR_IMMUTABLE |
				 STATX_ATTR_NODUMP;
}

int daxfs_k_getattr(DAXFS_IDMAP_T *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask, unsigned int flags)
{
	struct inode *inode = d_inode(path->dentry);
	int err;

	err = daxfs_refresh_inode(inode);
	if (err && err != -ESTALE)
		return err;
	daxfs_fillattr(idmap, request_mask, inode, stat);
	/* the set-id bits the VFS does not see (daxfs_vfs_mode) */
	stat->mode = READ_ONCE(DAXFS_I(inode)->mode);
	stat->blksize = DAXFS_BLOCK_SIZE;
	daxfs_statx_attrs(stat, READ_ONCE(DAXFS_I(inode)->attr_flags));
	return 0;
}

/*
 * "Now" for one setattr: one reading of the clock the core stamps with
 * (daxfs_now_ns), cut to the superblock's granularity.  The VFS fills
 * ia_ctime (and ia_atime/ia_mtime unless set explicitly) from
 * current_time(), the coarse clock, which lags the core's by up to a
 * tick: a chmod right after mknod then stored a ctime before the mtime
 * mknod had just set.
 */
static s64 daxfs_setattr_now(struct super_block *sb)
{
	s64 now = daxfs_now_ns();

	return now - now % sb->s_time_gran;
}

/*
 * Set-id bits a setattr must clear, from the region's mode just refreshed:
 * the VFS computed ATTR_KILL_* (chown, truncate) from i_mode, which hides
 * them without "trust_suid" and may predate another host's chmod.
 */
static umode_t daxfs_setattr_kill(struct inode *inode, const struct iattr *iattr)
{
	/* the VFS asks for the S_ISGID kill only when i_mode shows S_ISGID:
	 * any kill request (chown) clears both, as it would have */
	if (iattr->ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		return daxfs_setid_bits(DAXFS_I(inode)->mode);
	if ((iattr->ia_valid & ATTR_SIZE) && !capable(CAP_FSETID))
		return daxfs_setid_bits(DAXFS_I(inode)->mode);
	return 0;
}

/*
 * Before a write (for file_remove_privs, which reads i_mode): clears the
 * set-id bits of the region's mode, refreshed by the caller, unless the
 * writer may keep them.
 */
static noinline int kill_privs(struct inode *inode, umode_t kill)
{
	struct daxfs_attr a = {};
	int err;

	if (capable(CAP_FSETID))
		return 0;
	a.mode = DAXFS_I(inode)->mode & ~kill;
	err = daxfs_setattr(DAXFS_FS(inode->i_sb), inode->i_ino,
			    DAXFS_ATTR_MODE, &a);
	if (err)
		return daxfs_kerr(inode->i_sb, err, "setattr");
	return daxfs_refresh_inode(inode);
}

/* Every write calls it: the usual file has no set-id bit, and its call
 * stops at one look at the mode (kill_privs makes the frame). */
int daxfs_k_kill_privs(struct inode *inode)
{
	umode_t kill = daxfs_setid_bits(READ_ONCE(DAXFS_I(inode)->mode));

	return kill ? kill_privs(inode, kill) : 0;
}

/*
 * A directory removed while a descriptor holds it: the core freed it at
 * its rmdir, so a change of its attributes (fchmod, fchown, futimens)
 * lives in this host's inode only, where fstat reads it; tmpfs keeps the
 * removed inode and changes it (the differential test's fchmod of a
 * removed directory got ESTALE).  As the preload does (docs/preload.md
 * "Removed directories").
 */
static int daxfs_setattr_gone(DAXFS_IDMAP_T *idmap, struct dentry *dentry,
			      struct iattr *iattr)
{
	struct inode *inode = d_inode(dentry);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	int err = setattr_prepare(idmap, dentry, iattr);

	if (err)
		return err;
	if (iattr->ia_valid & ATTR_SIZE)
		return -EISDIR;
	setattr_copy(idmap, inode, iattr);
	if (iattr->ia_valid & ATTR_MODE)
		WRITE_ONCE(ei->mode, (ei->mode & S_IFMT) | (iattr->ia_mode & 07777));
	return 0;
}

int daxfs_k_setattr(DAXFS_IDMAP_T *idmap, struct dentry *dentry, struct iattr *iattr)
{
	struct inode *inode = d_inode(dentry);
	struct super_block *sb = inode->i_sb;
	struct daxfs_attr a = {};
	u32 valid = 0;
	struct daxfs_space_wait w = {};
	umode_t kill;
	s64 now;
	int err;

	err = daxfs_dead(sb);
	if (err)
		return err;
	err = daxfs_refresh_inode(inode);
	if (err == -ESTALE && S_ISDIR(inode->i_mode) && !inode->i_nlink)
		return daxfs_setattr_gone(idmap, dentry, iattr);
	if (err)
		return err;
	err = setattr_prepare(idmap, dentry, iattr);
	if (err)
		return err;
	if (iattr->ia_valid & ATTR_MODE) {
		valid |= DAXFS_ATTR_MODE;
		a.mode = iattr->ia_mode;
	}
	if (iattr->ia_valid & ATTR_UID) {
		valid |= DAXFS_ATTR_UID;
		a.uid = from_kuid(&init_user_ns, iattr->ia_uid);
	}
	if (iattr->ia_valid & ATTR_GID) {
		valid |= DAXFS_ATTR_GID;
		a.gid = from_kgid(&init_user_ns, iattr->ia_gid);
	}
	now = daxfs_setattr_now(sb);
	if (iattr->ia_valid & ATTR_ATIME) {
		valid |= DAXFS_ATTR_ATIME;
		a.atime_ns = iattr->ia_valid & ATTR_ATIME_SET ?
			     timespec64_to_ns(&iattr->ia_atime) : now;
	}
	if (iattr->ia_valid & ATTR_MTIME) {
		valid |= DAXFS_ATTR_MTIME;
		a.mtime_ns = iattr->ia_valid & ATTR_MTIME_SET ?
			     timespec64_to_ns(&iattr->ia_mtime) : now;
	}
	/* the VFS sets ia_ctime to its "now", never to a user's value */
	if (iattr->ia_valid & ATTR_CTIME) {
		valid |= DAXFS_ATTR_CTIME;
		a.ctime_ns = now;
	}
	kill = daxfs_setattr_kill(inode, iattr);
	if (kill && !(valid & DAXFS_ATTR_MODE)) {
		valid |= DAXFS_ATTR_MODE;
		a.mode = DAXFS_I(inode)->mode & ~kill;
	}
	if ((iattr->ia_valid & ATTR_SIZE) && S_ISREG(inode->i_mode)) {
		valid |= DAXFS_ATTR_SIZE;
		a.size = iattr->ia_size;
		/* an explicit size change always moves mtime and ctime
		 * (truncate(2) asks for neither), at the same instant */
		if (!(iattr->ia_valid & ATTR_MTIME) && iattr->ia_size != i_size_read(inode)) {
			valid |= DAXFS_ATTR_MTIME | DAXFS_ATTR_CTIME;
			a.mtime_ns = now;
			a.ctime_ns = now;
		}
	}
	/*
	 * A size change holds off this host's faults (they take the lock
	 * shared) from the first unmap until i_size is new: a fault in
	 * between would map a page the cut frees, or a hole's zero page
	 * beyond the new EOF, and keep it after we return.
	 */
	if (valid & DAXFS_ATTR_SIZE)
		filemap_invalidate_lock(inode->i_mapping);
	if ((valid & DAXFS_ATTR_SIZE) && a.size < (u64)i_size_read(inode))
		/* no mapping may keep pages that the truncate frees */
		unmap_mapping_range(inode->i_mapping, round_up(a.size, PAGE_SIZE), 0, 1);
	do {
		err = daxfs_setattr(DAXFS_FS(sb), inode->i_ino, valid, &a);
	} while (daxfs_k_space_retry(sb, &w, err));
	if ((valid & DAXFS_ATTR_SIZE) && a.size < (u64)i_size_read(inode)) {
		/*
		 * From the page holding the new EOF: a base or cached page
		 * mapped there would keep showing the bytes past the cut
		 * (the core hides them by a limit, not by zeroing that page).
		 * The next fault copies it up with a zeroed tail.
		 */
		unmap_mapping_range(inode->i_mapping, round_down(a.size, PAGE_SIZE), 0, 1);
		daxfs_mmap_drop_range(inode, round_down(a.size, PAGE_SIZE), U64_MAX);
	}
	daxfs_refresh_inode(inode);
	if (valid & DAXFS_ATTR_SIZE)
		filemap_invalidate_unlock(inode->i_mapping);
	if (!err && (iattr->ia_valid & ATTR_MODE))
		err = daxfs_k_acl_chmod(idmap, dentry, inode->i_mode);
	return daxfs_kerr_walked(sb, err, "setattr");
}

/* ---- directory operations ---- */

/* lookups of one name whose inode was gone by the iget (daxfs_k_lookup) */
#define DAXFS_LOOKUP_TRIES 32

static struct dentry *daxfs_k_lookup(struct inode *dir, struct dentry *dentry,
				     unsigned int flags)
{
	struct inode *inode = NULL;
	unsigned int tries;
	u64 ino, seen, gone = 0;
	int err;

	if (dentry->d_name.len > DAXFS_NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	err = daxfs_dead(dir->i_sb);
	if (err)
		return ERR_PTR(err);
	/*
	 * The inode the name had may be gone by the iget: removed, or replaced
	 * by a rename onto the name (another object under it, never a moment
	 * without).  Look the name up again: only the lookup says "no such
	 * name" (a negative entry then made link(c, a) answer EPERM with a
	 * always there: docs/lincheck.md, "Kernel guests").  A bounded number
	 * of times: a damaged or hostile region can name a gone inode for
	 * ever (the kernel image fuzz hung here), and then the name is
	 * answered absent, as a removal that won the race would be.  The
	 * same gone inode named again is damage, said at once: an unlink
	 * takes the name out before it frees the inode, and inode numbers
	 * are never used twice (core/namei.c named_attr).
	 */
	for (tries = 0; tries < DAXFS_LOOKUP_TRIES; tries++) {
		err = daxfs_lookup_attr_fc(DAXFS_FS(dir->i_sb), dir->i_ino,
					   dentry->d_name.name,
					   dentry->d_name.len, &ino, 0, NULL,
					   NULL, &seen);
		name_confirmed(dentry, dir, dir->i_ino, seen);
		if (!err && tries && ino == gone)
			err = -EUCLEAN;
		if (err)
			break;
		inode = daxfs_iget(dir->i_sb, ino);
		if (!IS_ERR(inode) || PTR_ERR(inode) != -ESTALE)
			break;
		inode = NULL;
		gone = ino;
		if (fatal_signal_pending(current))
			return ERR_PTR(-EINTR);
		cond_resched();
	}
	if (err && err != -ENOENT)
		return ERR_PTR(daxfs_kerr(dir->i_sb, err, "lookup"));
	return daxfs_splice_alias(inode, dentry);
}

/* Owner of a new inode: fsuid, and the group of a setgid directory. */
void daxfs_new_owner(struct inode *dir, umode_t *mode, u32 *uid, u32 *gid)
{
	*uid = from_kuid(&init_user_ns, current_fsuid());
	if (dir->i_mode & S_ISGID) {
		*gid = from_kgid(&init_user_ns, dir->i_gid);
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	} else {
		*gid = from_kgid(&init_user_ns, current_fsgid());
	}
}

/*
 * After a namespace change: attach the new inode to the dentry, with the
 * attributes and the vouch the create's op gave (ln).
 *
 * Another host may have removed it again already: our create took effect
 * (that host saw it), so it must not be done twice (-ESTALE would make the
 * VFS redo it: docs/lincheck.md, "Kernel guests").  mkdir, symlink and
 * mknod of a special file return 0 with the dentry dropped and negative
 * (nothing after them in the VFS needs the inode; the next lookup asks the
 * region).  A regular file's create cannot (open uses the inode: an oops
 * in path_openat, may_create_in_sticky); it never gets here
 * (daxfs_create_reg).
 */
static int daxfs_instantiate(struct inode *dir, struct dentry *dentry, u64 ino,
			     const struct daxfs_linked *ln)
{
	struct inode *inode;

	refresh_after_op(dir, dentry, ln);
	inode = iget_with(dir->i_sb, ino, &ln->inode);
	if (IS_ERR(inode)) {
		d_drop(dentry);
		return PTR_ERR(inode) == -ESTALE ? 0 : PTR_ERR(inode);
	}
	d_instantiate(dentry, inode);
	/* the name we made stands while its counter does: a stat right
	 * after needs no lookup (docs/kernel.md "Dentries") */
	name_confirmed(dentry, dir, ino, ln->vouch);
	return 0;
}

/* A name another host took since our negative dentry was checked.  For
 * open(O_CREAT) without O_EXCL, -ESTALE makes the VFS redo the open with
 * LOOKUP_REVAL, which finds that file. */
static int daxfs_create_exists(struct dentry *dentry, bool excl)
{
	d_drop(dentry);
	return excl ? -EEXIST : -ESTALE;
}

/*
 * Makes the open-set entry of inode (published) one of its opens until the
 * first open takes it over (create_hold, daxfs_open), tracked for the
 * lease work's expiry.  Under ei->open_lock.  True: more holds than
 * DAXFS_CREATE_HOLDS_MAX, the caller expires the oldest once unlocked.
 */
static bool create_hold_add(struct inode *inode)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	bool many;

	ei->nr_opens++;
	ei->create_hold = true;
	spin_lock(&sbi->hold_lock);
	ei->hold_tick = READ_ONCE(sbi->renew_ticks);
	list_add_tail(&ei->hold_link, &sbi->create_holds);
	many = ++sbi->nr_create_holds > DAXFS_CREATE_HOLDS_MAX;
	spin_unlock(&sbi->hold_lock);
	return many;
}

/* daxfs_create_reg's answer when the name was another file's, which it
 * attached to the dentry and holds for the open (atomic_open: the VFS
 * opens it, with the checks and O_TRUNC of an existing file). */
#define DAXFS_OPENED_EXISTING	1

/*
 * open(O_CREAT) without O_EXCL met a name another host made since our
 * lookup.  The file it names is held in this host's open set now, as a
 * file we made is (create_hold), and attached to the dentry, so that no
 * unlink on another host can free it before the VFS opens it: before,
 * the VFS was told to look again (-ESTALE), and a second loss of the same
 * race, or the file freed between that look and the open, reached the
 * caller as ESTALE or ENOENT (docs/kernel.md limitation 10,
 * test_kernel_creat_churn_two_guests).  -ENOENT: that file went too, the
 * name may be free again.  Another kind of file: -EEXIST, as before.
 */
static int hold_existing(struct inode *dir, struct dentry *dentry)
{
	struct super_block *sb = dir->i_sb;
	struct daxfs_fs *fs = DAXFS_FS(sb);
	struct daxfs_inode_info *ei;
	struct daxfs_attr a;
	struct inode *inode;
	bool many = false;
	u64 ino;
	int err;

	err = daxfs_lookup_attr(fs, dir->i_ino, dentry->d_name.name,
				dentry->d_name.len, &ino, &a);
	if (err)
		return err;
	if (!S_ISREG(a.mode))
		return -EEXIST;
	inode = iget_with(sb, ino, &a);
	if (IS_ERR(inode))
		return PTR_ERR(inode) == -ESTALE ? -ENOENT : PTR_ERR(inode);
	ei = DAXFS_I(inode);
	mutex_lock(&ei->open_lock);
	/* published already while this host has it open; a hold another
	 * create left is one of its opens, which ours then takes over */
	if (!ei->nr_opens)
		err = daxfs_kerr(sb, daxfs_open_get(fs, ino), "open");
	if (!err && !ei->create_hold)
		many = create_hold_add(inode);
	mutex_unlock(&ei->open_lock);
	if (err) {
		iput(inode);
		return err;
	}
	if (many)	/* the oldest: never this one */
		expire_holds(DAXFS_SB(sb), DAXFS_CREATE_HOLDS_MAX);
	if (d_in_lookup(dentry))
		d_add(dentry, inode);
	else
		d_instantiate(dentry, inode);
	return DAXFS_OPENED_EXISTING;
}

/* daxfs_create_reg's rounds of a name taken and missing before -EUCLEAN
 * (as many as the FUSE server's; libdaxfs allows more, each round cheaper) */
#define DAXFS_K_CREATE_ROUNDS	1024

/*
 * A regular file: made nameless and held by this host's open set, then
 * named, in one op (daxfs_create_held; daxfs_link_created names it again
 * after a failed naming), so that another host
 * that unlinks it at once cannot free it before we attach it: open(O_CREAT)
 * then gets the file it made, unlinked (as on a local filesystem).  The
 * entry stays one of nr_opens (create_hold) until the first open takes it
 * over, or eviction withdraws it (mknod S_IFREG, a failed open).
 */
static int daxfs_create_reg(struct inode *dir, struct dentry *dentry, umode_t mode,
			    u32 uid, u32 gid, bool excl, bool open_existing)
{
	struct super_block *sb = dir->i_sb;
	struct daxfs_fs *fs = DAXFS_FS(sb);
	struct daxfs_space_wait w = {};
	/* the core clears it first thing (daxfs_create_held) */
	struct daxfs_linked ln __uninitialized;
	struct inode *inode;
	bool many, named;
	u32 rounds;
	u64 ino;
	int err;

	/* made and named in one op; a file made but not named (ino set)
	 * is held all the same, and named again below */
	do {
		err = daxfs_create_held(fs, dir->i_ino, &DAXFS_I(dir)->fc, mode,
					uid, gid, dentry->d_name.name,
					dentry->d_name.len, &ino, &ln);
	} while (!ino && daxfs_k_space_retry(sb, &w, err));
	if (!ino)
		return daxfs_kerr(sb, err, "create");
	/* named: filled from what its naming loaded, which is all the
	 * refresh after a later naming would bring (refresh_linked); not
	 * named: one op loads its attributes */
	named = !err;
	inode = iget_with(sb, ino, named ? &ln.inode : NULL);
	if (IS_ERR(inode)) {
		/* named or not, no open follows: our entry goes (an unnamed
		 * file with it) */
		daxfs_open_put(fs, ino);
		return PTR_ERR(inode);
	}
	mutex_lock(&DAXFS_I(inode)->open_lock);
	many = create_hold_add(inode);
	mutex_unlock(&DAXFS_I(inode)->open_lock);
	if (many)	/* the oldest: never this one */
		expire_holds(DAXFS_SB(sb), DAXFS_CREATE_HOLDS_MAX);
	for (rounds = 0;; rounds++) {
		w = (struct daxfs_space_wait){};
		while (daxfs_k_space_retry(sb, &w, err))
			err = daxfs_link_created(fs, ino, dir->i_ino,
						 dentry->d_name.name,
						 dentry->d_name.len, &ln);
		if (err != -EEXIST || excl || !open_existing)
			break;
		/* the name is another file's: hold that one for the open,
		 * unless it goes too (then the name may be free again) */
		err = hold_existing(dir, dentry);
		if (err != -ENOENT)
			break;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		/* a round is lost only to other hosts' progress, a create
		 * and an unlink of the name between our two looks; a name
		 * taken and missing round after round is damage (a name
		 * naming no inode says so at once: core/namei.c
		 * named_attr) */
		if (rounds >= DAXFS_K_CREATE_ROUNDS) {
			err = -EUCLEAN;
			break;
		}
		cond_resched();
		err = daxfs_link_created(fs, ino, dir->i_ino,
					 dentry->d_name.name,
					 dentry->d_name.len, &ln);
	}
	if (err) {
		iput(inode);		/* never named: eviction withdraws the
					 * entry, which frees it */
		if (err == DAXFS_OPENED_EXISTING)
			return err;
		if (err == -EEXIST)
			return daxfs_create_exists(dentry, excl);
		return daxfs_kerr(sb, err, "create");
	}
	refresh_after_op(dir, dentry, &ln);
	if (!named)
		refresh_linked(inode, &ln);
	if (d_in_lookup(dentry))	/* atomic_open's: hash it as a lookup would */
		d_add(dentry, inode);
	else
		d_instantiate(dentry, inode);
	/* the name we made stands while its counter does: a stat right
	 * after needs no lookup (docs/kernel.md "Dentries") */
	name_confirmed(dentry, dir, ino, ln.vouch);
	return 0;
}

static int daxfs_create_ino(struct inode *dir, struct dentry *dentry, umode_t mode,
			    dev_t rdev, bool excl, bool open_existing)
{
	struct daxfs_fs *fs = DAXFS_FS(dir->i_sb);
	struct daxfs_node nd;
	struct daxfs_linked ln;
	u32 uid, gid;
	u64 ino;
	struct daxfs_space_wait w = {};
	int err;

	err = daxfs_dead(dir->i_sb);
	if (err)
		return err;
	daxfs_new_owner(dir, &mode, &uid, &gid);
	if (S_ISREG(mode))
		return daxfs_create_reg(dir, dentry, mode, uid, gid, excl,
					open_existing);
	nd = (struct daxfs_node){
		.mode = mode, .uid = uid, .gid = gid,
		.rdev = S_ISDIR(mode) ? 0 : new_encode_dev(rdev),
	};
	do {
		err = daxfs_make_node(fs, dir->i_ino, dentry->d_name.name,
				      dentry->d_name.len, &nd, &ino, &ln);
	} while (daxfs_k_space_retry(dir->i_sb, &w, err));
	if (err == -EEXIST)
		return daxfs_create_exists(dentry, excl);
	if (err)
		return daxfs_kerr(dir->i_sb, err, "create");
	return daxfs_instantiate(dir, dentry, ino, &ln);
}

/* With the ACLs a default ACL of dir gives (docs/xattr.md).  open_existing:
 * atomic_open's, see hold_existing (DAXFS_OPENED_EXISTING). */
static int daxfs_create_common(struct inode *dir, struct dentry *dentry, umode_t mode,
			       dev_t rdev, bool excl, bool open_existing)
{
	struct posix_acl *dacl, *acl;
	int err = daxfs_k_acl_create(dir, &mode, &dacl, &acl);

	if (err)
		return err;
	err = daxfs_create_ino(dir, dentry, mode, rdev, excl, open_existing);
	if (err || d_really_is_negative(dentry)) {
		/* negative: made and removed by another host already */
		posix_acl_release(dacl);
		posix_acl_release(acl);
		return err;
	}
	return daxfs_k_acl_init(d_inode(dentry), dacl, acl);
}

static int daxfs_k_create(DAXFS_IDMAP_T *idmap, struct inode *dir, struct dentry *dentry,
			  umode_t mode DAXFS_CREATE_EXCL)
{
	return daxfs_create_common(dir, dentry, mode | S_IFREG, 0, daxfs_create_excl,
				   false);
}

/*
 * open() of a final name no dentry answered (d_in_lookup), or of a negative
 * one that revalidated.  O_CREAT|O_EXCL makes the file without looking the
 * name up first: the naming finds a name that exists and answers EEXIST,
 * which is what the lookup would have led to, so the lookup (an op of its
 * own, a quarter of a create) is not needed.  The VFS has already checked
 * that we may create here (may_o_create): where we may not, it clears
 * O_CREAT, and a lookup answers, so an existing name still gives EEXIST
 * and a missing one the VFS's EACCES.  Any other open looks the name up as
 * ->lookup would and creates only when it is absent, as ->create did:
 * making a file first there would make and free one on every open(O_CREAT)
 * of an existing file.
 */
static int daxfs_k_atomic_open(struct inode *dir, struct dentry *dentry,
			       struct file *file, unsigned int flags,
			       umode_t mode)
{
	bool excl = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
	struct dentry *res = NULL;
	int err;

	if (d_in_lookup(dentry) && !excl) {
		res = daxfs_k_lookup(dir, dentry, 0);
		if (IS_ERR(res))
			return PTR_ERR(res);
		if (res)
			dentry = res;
	}
	if (!(flags & O_CREAT) || d_really_is_positive(dentry))
		return finish_no_open(file, res);
	if (dentry->d_name.len > DAXFS_NAME_MAX)
		return -ENAMETOOLONG;
	err = daxfs_create_common(dir, dentry, mode | S_IFREG, 0, excl, !excl);
	if (err == DAXFS_OPENED_EXISTING)	/* another host's, held */
		return finish_no_open(file, res);
	if (err)
		return err;
	file->f_mode |= FMODE_CREATED;
	return finish_open(file, dentry, NULL);
}

static int daxfs_k_mknod(DAXFS_IDMAP_T *idmap, struct inode *dir, struct dentry *dentry,
			 umode_t mode, dev_t rdev)
{
	int err = daxfs_create_common(dir, dentry, mode, rdev, true, false);

	/* no open follows a mknod: its file is named, the hold is not needed */
	if (!err && S_ISREG(mode) && d_really_is_positive(dentry))
		daxfs_drop_create_hold(d_inode(dentry));
	return err;
}

static DAXFS_MKDIR_RET daxfs_k_mkdir(DAXFS_IDMAP_T *idmap, struct inode *dir,
				     struct dentry *dentry, umode_t mode)
{
	return daxfs_mkdir_ret(daxfs_create_common(dir, dentry, mode | S_IFDIR, 0, true,
						   false));
}

static int daxfs_k_symlink(DAXFS_IDMAP_T *idmap, struct inode *dir, struct dentry *dentry,
			   const char *target)
{
	struct daxfs_node nd;
	struct daxfs_linked ln;
	umode_t mode = S_IFLNK | 0777;
	size_t len = strlen(target);
	u32 uid, gid;
	u64 ino;
	struct daxfs_space_wait w = {};
	int err;

	err = daxfs_dead(dir->i_sb);
	if (err)
		return err;
	if (len > DAXFS_SYMLINK_MAX)
		return -ENAMETOOLONG;
	daxfs_new_owner(dir, &mode, &uid, &gid);
	nd = (struct daxfs_node){
		.mode = mode, .uid = uid, .gid = gid,
		.target = target, .tlen = len,
	};
	do {
		err = daxfs_make_node(DAXFS_FS(dir->i_sb), dir->i_ino,
				      dentry->d_name.name, dentry->d_name.len,
				      &nd, &ino, &ln);
	} while (daxfs_k_space_retry(dir->i_sb, &w, err));
	if (err == -EEXIST)
		d_drop(dentry);
	if (err)
		return daxfs_kerr(dir->i_sb, err, "symlink");
	return daxfs_instantiate(dir, dentry, ino, &ln);
}

/* link by number: the core refuses a count at 0 */
static int daxfs_link_number(struct inode *inode, struct inode *dir,
			     struct dentry *dentry, struct daxfs_space_wait *w)
{
	int err;

	do {
		err = daxfs_link(DAXFS_FS(dir->i_sb), inode->i_ino, dir->i_ino,
				 dentry->d_name.name, dentry->d_name.len);
	} while (daxfs_k_space_retry(dir->i_sb, w, err));
	return err;
}

/*
 * The source name is gone, and the dentry may not have come from a path
 * walk, which would have looked at it: a descriptor's (linkat through
 * /proc/self/fd, AT_EMPTY_PATH) whose name another host renamed or
 * removed.  tmpfs links the open file.  While this host holds the file
 * open (open_lock keeps the last close from letting it go), its number
 * cannot come to name another file, so it links by number.  After a path
 * walk this is a rename elsewhere racing ours: linked as if first.
 */
static int daxfs_link_held(struct inode *inode, struct inode *dir,
			   struct dentry *dentry, struct daxfs_space_wait *w)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	int err = -ENOENT;

	if (!S_ISREG(inode->i_mode))
		return err;
	mutex_lock(&ei->open_lock);
	if (ei->nr_opens || ei->create_hold)
		err = daxfs_link_number(inode, dir, dentry, w);
	mutex_unlock(&ei->open_lock);
	return err;
}

static int daxfs_k_link(struct dentry *old, struct inode *dir, struct dentry *dentry)
{
	struct inode *inode = d_inode(old);
	struct daxfs_space_wait w = {};
	struct name_snapshot src;
	struct dentry *sdir;
	int err;

	err = daxfs_dead(dir->i_sb);
	if (err)
		return err;
	if (daxfs_i_state(inode) & I_LINKABLE)
		return daxfs_k_link_tmpfile(inode, dir, dentry);
	if (d_unhashed(old)) {
		/*
		 * A name removed here while a descriptor holds the file, which
		 * other names keep (linkat through /proc/self/fd): no source
		 * name to hold, so by number, as the FUSE mount links.  By
		 * name it was -ENOENT, where tmpfs links (the differential
		 * test's link_fd calls).
		 */
		err = daxfs_link_number(inode, dir, dentry, &w);
		goto linked;
	}
	/* by the source name: the core holds it until the new name is in,
	 * and fails with -ENOENT once it is gone on any host */
	sdir = dget_parent(old);
	take_dentry_name_snapshot(&src, old);
	do {
		err = daxfs_link_name(DAXFS_FS(dir->i_sb), d_inode(sdir)->i_ino,
				      src.name.name, src.name.len, inode->i_ino,
				      dir->i_ino, dentry->d_name.name,
				      dentry->d_name.len);
	} while (daxfs_k_space_retry(dir->i_sb, &w, err));
	release_dentry_name_snapshot(&src);
	dput(sdir);
	if (err == -ENOENT) {
		err = daxfs_link_held(inode, dir, dentry, &w);
		/* not held here, and the source name no longer names it */
		err = daxfs_kerr_walked(dir->i_sb, err, "link");
	}
linked:
	if (err == -EEXIST)
		d_drop(dentry);
	if (err)
		return daxfs_kerr(dir->i_sb, err, "link");
	daxfs_refresh_inode(dir);
	daxfs_refresh_inode(inode);
	ihold(inode);
	d_instantiate(dentry, inode);
	return 0;
}

/*
 * After an unlink, with what its op loaded (ln): the directory's
 * attributes, and the inode's when links are left to it.  When the op
 * freed it (ln->gone), nothing to look at.  Else one look: -ESTALE means
 * the last link went and the inode was freed since (nlink already
 * cleared); nlink 0 without it: kept as an orphan.
 */
static void daxfs_after_unlink(struct inode *dir, struct dentry *dentry,
			       const struct daxfs_linked *ln)
{
	struct inode *victim = d_inode(dentry);

	refresh_after_op(dir, dentry, ln);
	if (victim && ln->inode.ino == victim->i_ino)
		daxfs_refresh_from(victim, &ln->inode, 0);
	else if (victim && ln->gone)
		clear_nlink(victim);	/* freed in the op: no look needed */
	else
		daxfs_mark_orphan(victim);
}

static int daxfs_k_unlink(struct inode *dir, struct dentry *dentry)
{
	struct inode *victim = d_inode(dentry);
	struct daxfs_space_wait w = {};
	/* the core clears it first thing (daxfs_unlink_fc) */
	struct daxfs_linked ln __uninitialized;
	int err;

	err = daxfs_dead(dir->i_sb);
	if (err)
		return err;
	/* the records through the caches the two inodes keep: the core
	 * uses the victim's only while the name still names it */
	do {
		err = daxfs_unlink_fc(DAXFS_FS(dir->i_sb), dir->i_ino,
				      &DAXFS_I(dir)->fc, dentry->d_name.name,
				      dentry->d_name.len,
				      victim ? victim->i_ino : 0,
				      victim ? &DAXFS_I(victim)->fc : NULL, &ln);
	} while (daxfs_k_space_retry(dir->i_sb, &w, err));
	if (err)
		return daxfs_kerr(dir->i_sb, err, "unlink");
	daxfs_after_unlink(dir, dentry, &ln);
	return 0;
}

static int daxfs_k_rmdir(struct inode *dir, struct dentry *dentry)
{
	struct daxfs_space_wait w = {};
	int err;

	err = daxfs_dead(dir->i_sb);
	if (err)
		return err;
	do {
		err = daxfs_rmdir(DAXFS_FS(dir->i_sb), dir->i_ino,
				  dentry->d_name.name, dentry->d_name.len);
	} while (daxfs_k_space_retry(dir->i_sb, &w, err));
	if (err)
		return daxfs_kerr(dir->i_sb, err, "rmdir");
	clear_nlink(d_inode(dentry));
	daxfs_refresh_inode(dir);
	return 0;
}

static int daxfs_k_rename(DAXFS_IDMAP_T *idmap, struct inode *old_dir,
			  struct dentry *old_dentry, struct inode *new_dir,
			  struct dentry *new_dentry, unsigned int flags)
{
	struct inode *victim = d_inode(new_dentry);
	u32 f = 0;
	struct daxfs_space_wait w = {};
	u64 wh = 0;
	int err;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	err = daxfs_dead(old_dir->i_sb);
	if (err)
		return err;
	if (flags & RENAME_NOREPLACE)
		f |= DAXFS_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		f |= DAXFS_RENAME_EXCHANGE;
	/* the whiteout exists (nameless, held) before anything moves; the
	 * rename itself puts it at the old name, in its own atomic step */
	if (flags & RENAME_WHITEOUT) {
		err = daxfs_k_whiteout_make(old_dir, &wh);
		if (err)
			return err;
		f |= DAXFS_RENAME_WHITEOUT;
	}
	do {
		err = daxfs_rename_wh(DAXFS_FS(old_dir->i_sb), old_dir->i_ino,
				      old_dentry->d_name.name,
				      old_dentry->d_name.len, new_dir->i_ino,
				      new_dentry->d_name.name,
				      new_dentry->d_name.len, f, wh);
	} while (daxfs_k_space_retry(old_dir->i_sb, &w, err));
	/* named now (the hold just goes), or freed with it */
	if (wh)
		daxfs_open_put(DAXFS_FS(old_dir->i_sb), wh);
	if (err)
		return daxfs_kerr(old_dir->i_sb, err, "rename");
	daxfs_refresh_inode(old_dir);
	if (new_dir != old_dir)
		daxfs_refresh_inode(new_dir);
	daxfs_refresh_inode(d_inode(old_dentry));
	if (victim && !(flags & RENAME_EXCHANGE))
		daxfs_mark_orphan(victim);
	else if (victim)
		daxfs_refresh_inode(victim);
	return 0;
}

/* ---- attribute flags (chattr / lsattr, docs/attrs.md) ---- */

int daxfs_k_fileattr_get(struct dentry *dentry, struct daxfs_fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	u32 fl;
	int err = daxfs_dead(inode->i_sb);

	if (!err)
		err = daxfs_getflags(DAXFS_FS(inode->i_sb), inode->i_ino, &fl);
	if (err)
		return daxfs_kerr(inode->i_sb, err, "getflags");
	fileattr_fill_flags(fa, fl);
	return 0;
}

/*
 * The VFS checked ownership (inode_owner_or_capable) and, for a change of
 * i or a, CAP_LINUX_IMMUTABLE against the flags it read under the inode
 * lock; the core checks again against the region, where another host may
 * have changed them since.
 */
int daxfs_k_fileattr_set(DAXFS_IDMAP_T *idmap, struct dentry *dentry,
			 struct daxfs_fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	u32 may = DAXFS_MAY_OWNER;
	int err;

	if (fileattr_has_fsx(fa) || (fa->flags & ~DAXFS_FL_SUPPORTED))
		return -EOPNOTSUPP;
	err = daxfs_dead(inode->i_sb);
	if (err)
		return err;
	if (capable(CAP_LINUX_IMMUTABLE))
		may |= DAXFS_MAY_IMMUTABLE;
	err = daxfs_setflags(DAXFS_FS(inode->i_sb), inode->i_ino, fa->flags,
			     may);
	if (err)
		return daxfs_kerr(inode->i_sb, err, "setflags");
	daxfs_refresh_inode(inode);
	return 0;
}

const struct inode_operations daxfs_dir_iops = {
	.lookup		= daxfs_k_lookup,
	.create		= daxfs_k_create,
	.atomic_open	= daxfs_k_atomic_open,
	.mknod		= daxfs_k_mknod,
	.mkdir		= daxfs_k_mkdir,
	.symlink	= daxfs_k_symlink,
	.link		= daxfs_k_link,
	.unlink		= daxfs_k_unlink,
	.rmdir		= daxfs_k_rmdir,
	.rename		= daxfs_k_rename,
	.tmpfile	= daxfs_k_tmpfile,
	.getattr	= daxfs_k_getattr,
	.setattr	= daxfs_k_setattr,
	.permission	= daxfs_k_permission,
	.listxattr	= daxfs_k_listxattr,
	.DAXFS_IOP_GET_ACL = daxfs_k_get_acl,
	.set_acl	= daxfs_k_set_acl,
	.update_time	= daxfs_k_update_time,
	.fileattr_get	= daxfs_k_fileattr_get,
	.fileattr_set	= daxfs_k_fileattr_set,
};

const struct inode_operations daxfs_file_iops = {
	.getattr	= daxfs_k_getattr,
	.setattr	= daxfs_k_setattr,
	.permission	= daxfs_k_permission,
	.fiemap		= daxfs_k_fiemap,
	.listxattr	= daxfs_k_listxattr,
	.DAXFS_IOP_GET_ACL = daxfs_k_get_acl,
	.set_acl	= daxfs_k_set_acl,
	.update_time	= daxfs_k_update_time,
	.fileattr_get	= daxfs_k_fileattr_get,
	.fileattr_set	= daxfs_k_fileattr_set,
};

const struct inode_operations daxfs_special_iops = {
	.getattr	= daxfs_k_getattr,
	.setattr	= daxfs_k_setattr,
	.permission	= daxfs_k_permission,
	.listxattr	= daxfs_k_listxattr,
	.DAXFS_IOP_GET_ACL = daxfs_k_get_acl,
	.set_acl	= daxfs_k_set_acl,
	.update_time	= daxfs_k_update_time,
};

/* ---- symlinks ---- */

static const char *daxfs_k_get_link(struct dentry *dentry, struct inode *inode,
				    struct delayed_call *done)
{
	char *buf;
	int len;

	if (!dentry)
		return ERR_PTR(-ECHILD);
	buf = kmalloc(DAXFS_SYMLINK_MAX + 1, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	len = daxfs_readlink(DAXFS_FS(inode->i_sb), inode->i_ino, buf, DAXFS_SYMLINK_MAX);
	if (len < 0 || len > DAXFS_SYMLINK_MAX) {
		kfree(buf);
		return ERR_PTR(len < 0 ? daxfs_kerr_walked(inode->i_sb, len, "readlink") :
				   -EUCLEAN);
	}
	buf[len] = 0;
	set_delayed_call(done, kfree_link, buf);
	return buf;
}

const struct inode_operations daxfs_symlink_iops = {
	.get_link	= daxfs_k_get_link,
	.getattr	= daxfs_k_getattr,
	.setattr	= daxfs_k_setattr,
	.listxattr	= daxfs_k_listxattr,
	.update_time	= daxfs_k_update_time,
};
