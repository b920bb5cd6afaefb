/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daxfs.ko: the Linux VFS front end of the portable DaxFS core.
 *
 * The core (the core/ sources, compiled unchanged into this module) owns every
 * byte of the shared region.  This glue keeps only caches that the VFS
 * needs (inodes, dentries) and revalidates them against the region,
 * because other hosts change the region behind this kernel's back.
 */
#ifndef DAXFS_K_H
#define DAXFS_K_H

#include <linux/fs.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/mutex.h>
#include <linux/uio.h>
#include "kcompat.h"
#include "core/daxfs_core.h"
#include "core/pcache.h"

#define DAXFS_SUPER_MAGIC	0x44415846	/* "DAXF" */

/* ctx->pos for "end of directory" (the core's DAXFS_POS_EOF is ~0, which
 * is negative as an loff_t). */
#define DAXFS_DIR_EOF_POS	((loff_t)S64_MAX)

struct daxfs_mount_opts {
	u64 phys;
	u64 size;
	bool has_phys;
	bool has_size;
	bool validate;
	/* trust peers' set-id bits and device nodes (docs/kernel.md "Trust") */
	bool trust_suid;
	bool trust_dev;
	bool nohost;			/* explicit host-less read-only view */
	bool dax;			/* dax or dax=always given: shown */
	bool pmd;			/* runs mapped with PMDs (docs/kernel.md
					 * "PMD mappings of runs") */
	char *badblocks;		/* phys=: badblocks=FILE, until read */
	u32 nr_backing;			/* backing=PATH, split mode */
	char *backing[DAXFS_PCACHE_MAX_BACKING];
};

/* Split mode: this host's backing files and its fill-request server
 * (kernel/backing.c). */
struct daxfs_kbacking {
	struct file *file[DAXFS_PCACHE_MAX_BACKING];
	u64 reach;			/* bit i: file[i] is open */
	atomic64_t reads, bytes;	/* backing reads by this host */
	atomic64_t mmap_pins;		/* cache pins held for mappings */
	struct task_struct *server;	/* serves other hosts' requests */
};

struct daxfs_sb_info {
	struct daxfs_fs fs;		/* the core's view; fs.base = kaddr */
	struct daxfs_mount_opts opts;
	struct super_block *sb;
	void *kaddr;			/* kernel mapping of the whole region */
	u64 size;
	unsigned long base_pfn;		/* pfn of region offset 0 */
	u64 pfn_flags;			/* PFN_* flags for vmf_insert_mixed */
	bool memremapped;		/* kaddr came from our memremap (both routes) */
	struct dax_device *dax_dev;	/* /dev/pmemN: fsdax device */
	/* its bad-block list (the driver's: used only under dax_read_lock
	 * while the device is alive; kernel/pmem.c) */
	struct badblocks *bb;
	bool own_bb;			/* bb is ours (phys=, badblocks.c) */
	bool bad_ro;			/* read-only: bad blocks at mount */
	bool media_meta;		/* metadata found on a bad block */
	bool media_fixed;		/* metadata the core loads directly on
					 * one: stopped, dead (media.c) */
	bool gone;			/* the device went away (unbind) */
	bool joined;			/* holds a host slot */
	bool dead;			/* our lease was taken away: -EIO */
	bool shut;			/* FS_IOC_SHUTDOWN (shutdown.c) */
	unsigned long lease_jiffies;
	unsigned int renew_ticks;
	/* renew_work only renews and times the other hosts' heartbeats,
	 * on the high-priority queue, so that renewal never waits behind
	 * lease_work's maintenance or a long operation (docs/hosts.md) */
	struct delayed_work renew_work;
	struct delayed_work lease_work;
	struct daxfs_host_obs *obs;	/* fs.obs: leases as we time them */
	struct daxfs_kbacking bk;
	/* inodes mapped on this host (ei->mapped_link): the lease work
	 * revalidates their borrowed pages (kernel/file.c) */
	spinlock_t mapped_lock;
	struct list_head mapped;
	/* one walk of mapped at a time (daxfs_mapped_each), with a pass's
	 * announcement: a walk takes the list away while it steps it, so a
	 * second pass would find it empty and announce 0 over our mappings */
	struct mutex walk_lock;
	/* while mapped is not empty, every DAXFS_ASK_MS: a pass at once when
	 * a host waiting for space asked us for one (kernel/file.c) */
	struct delayed_work ask_work;
	unsigned long ask_jiffies;
	/* inodes whose create hold no open took over yet (ei->hold_link):
	 * the lease work drops those older than two ticks, a create those
	 * beyond DAXFS_CREATE_HOLDS_MAX (kernel/inode.c) */
	spinlock_t hold_lock;
	struct list_head create_holds;
	unsigned int nr_create_holds;	/* on create_holds (hold_lock) */
};

struct daxfs_rdcache;

struct daxfs_inode_info {
	u64 change;			/* region change counter last seen */
	/* where the inode's record is: every read and write of this host
	 * passes it to the core, which checks it before use
	 * (docs/open-files.md "Per-open-file cache") */
	struct daxfs_fcache fc;
	umode_t mode;			/* the region's mode: i_mode may hide set-id bits */
	u32 attr_flags;			/* the region's chattr flags (DAXFS_FL_*) */
	bool valid;			/* attributes were loaded at least once */
	/* the attribute epoch read before the permission attributes (mode,
	 * owners, chattr locks, ACLs) were last proved current, 0: none;
	 * perm_seq counts fills that changed them (i_lock): a proof is
	 * saved only if none came in between (docs/kernel.md "Permission
	 * checks and the attribute epoch") */
	u64 perm_epoch;
	unsigned int perm_seq;
	bool orphan;			/* our unlink/rename kept it (nlink 0): release at evict */
	/* opens of this regular file on this host: published in the host's
	 * open set while not zero (kernel/file.c) */
	struct mutex open_lock;
	unsigned long nr_opens;		/* (open_lock) */
	/* (open_lock) one of nr_opens is the entry our create made the file
	 * with (kernel/inode.c, daxfs_create_reg): the first open takes it
	 * over, eviction withdraws it if no open came */
	bool create_hold;
	struct list_head hold_link;	/* (sbi->hold_lock) on create_holds */
	unsigned int hold_tick;		/* sbi->renew_ticks at the create */
	/* mmap of borrowed pages (kernel/file.c): cache pins held while a
	 * mapping may show the slot (split mode), base-region pages mapped */
	struct mutex pin_lock;
	struct xarray pin_pg;		/* pgoff -> slot pinned for it */
	struct xarray pin_cnt;		/* slot -> pins we hold on it */
	struct xarray base_pg;		/* pgoff -> base page mapped (region pfn) */
	struct xarray pool_pg;		/* pgoff -> pool page mapped (region pfn):
					 * reused only after we unmap it */
	struct xarray hole_pg;		/* pgoff -> the zero page mapped for a
					 * hole: unmapped when the hole is filled */
	struct xarray pmd_pg;		/* pgoff / 512 -> run mapped with a PMD
					 * (region pfn): reused only after we unmap it */
	unsigned int nr_vmas;		/* mappings of this inode (pin_lock) */
	u64 reval_change;		/* change at the last revalidation (pin_lock) */
	u64 pool_change;		/* change at the last pool_pg walk (pin_lock) */
	struct list_head mapped_link;	/* on sbi->mapped while nr_vmas */
	/* a directory's kept listing (kernel/dir.c; i_lock) */
	struct daxfs_rdcache *rdc;
	struct inode vfs_inode;
};

static inline struct daxfs_sb_info *DAXFS_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct daxfs_fs *DAXFS_FS(struct super_block *sb)
{
	return &DAXFS_SB(sb)->fs;
}

static inline struct daxfs_inode_info *DAXFS_I(struct inode *inode)
{
	return container_of(inode, struct daxfs_inode_info, vfs_inode);
}

/* Errors from the core: -EUCLEAN means a corrupt region.  0 stays 0
 * (every success of every op: no call for it). */
int __daxfs_kerr(struct super_block *sb, int err, const char *what);
static inline int daxfs_kerr(struct super_block *sb, int err,
			     const char *what)
{
	return err ? __daxfs_kerr(sb, err, what) : 0;
}
/*
 * daxfs_kerr for a core call on an inode a path walk found: -ENOENT says
 * the inode went since the walk (another host unlinked its last name or
 * renamed a file over it; nothing here held it), which a local filesystem,
 * whose dentry keeps its inode, never answers.  -ESTALE instead: the
 * VFS's path calls then walk once more with LOOKUP_REVAL (retry_estale),
 * which finds the name gone (ENOENT) or naming the file now there
 * (docs/kernel.md limitation 10, test_kernel_replace_two_guests).
 */
static inline int daxfs_kerr_walked(struct super_block *sb, int err,
				    const char *what)
{
	/* daxfs_kerr first: a host stopped or fenced answers EIO */
	err = daxfs_kerr(sb, err, what);
	return err == -ENOENT ? -ESTALE : err;
}
/* After a core call returned err: true when it should run again (-ENOSPC
 * while space is pending; sleeps first).  Usage, w zeroed once:
 *	do err = daxfs_x(...); while (daxfs_k_space_retry(sb, &w, err)); */
bool daxfs_k_space_retry(struct super_block *sb, struct daxfs_space_wait *w,
			 long err);

/* falloc.c: fallocate, SEEK_DATA / SEEK_HOLE, FIEMAP */
struct fiemap_extent_info;
long daxfs_k_fallocate(struct file *file, int mode, loff_t off, loff_t len);
long daxfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
int daxfs_freeze_fs(struct super_block *sb);
int daxfs_unfreeze_fs(struct super_block *sb);
loff_t daxfs_k_seek_hole_data(struct file *file, loff_t off, int whence);
int daxfs_k_fiemap(struct inode *inode, struct fiemap_extent_info *fi,
		   u64 start, u64 len);

/* badblocks.c (phys= mounts' list) */
int daxfs_phys_badblocks(struct fs_context *fc, struct daxfs_sb_info *sbi,
			 const char *path);
void daxfs_phys_badblocks_free(struct daxfs_sb_info *sbi);

/* pmem.c (the fsdax route) */
int daxfs_map_bdev(struct fs_context *fc, struct super_block *sb,
		   struct daxfs_sb_info *sbi);
int daxfs_check_meta_media(struct fs_context *fc, struct daxfs_sb_info *sbi);
u64 daxfs_media_good(struct daxfs_sb_info *sbi, u64 off, u64 len);

/* alias.c: a lookup's dentry, and a directory's stale one elsewhere */
struct dentry *daxfs_splice_alias(struct inode *inode, struct dentry *dentry);

/* inode.c */
/* names and listings trusted by a change counter (off by default) */
extern bool daxfs_trust_cached;

extern const struct inode_operations daxfs_dir_iops;
extern const struct inode_operations daxfs_file_iops;
extern const struct inode_operations daxfs_symlink_iops;
extern const struct inode_operations daxfs_special_iops;
extern const struct dentry_operations daxfs_dentry_ops;
void daxfs_dentry_nameless(struct dentry *dentry);
/* a counter ino found with a change in flight (w): healed if it stays so */
void daxfs_k_change_seen(struct super_block *sb, u64 ino, u64 w);
struct inode *daxfs_iget(struct super_block *sb, u64 ino);
int daxfs_refresh_inode(struct inode *inode);
/* (open_lock held) the first open of a new file took its create hold over */
void daxfs_create_hold_taken(struct inode *inode);
/* lease work: drops create holds that no open took over (kernel/inode.c) */
void daxfs_expire_create_holds(struct daxfs_sb_info *sbi);
/* xattr.c: extended attributes and POSIX ACLs (docs/xattr.md) */
extern const struct xattr_handler *daxfs_xattr_handlers[];
ssize_t daxfs_k_listxattr(struct dentry *dentry, char *buf, size_t size);
struct posix_acl *daxfs_k_get_acl(struct inode *inode, int type, bool rcu);
int daxfs_k_set_acl(DAXFS_IDMAP_T *idmap, DAXFS_SET_ACL_T *at,
		    struct posix_acl *acl, int type);
/* create: the new mode and ACLs from dir's default ACL (umask without
 * one); init: stores them on the new inode and drops them */
int daxfs_k_acl_create(struct inode *dir, umode_t *mode,
		       struct posix_acl **dacl, struct posix_acl **acl);
int daxfs_k_acl_init(struct inode *inode, struct posix_acl *dacl,
		     struct posix_acl *acl);
/* chmod: the access ACL follows the mode (posix_acl_chmod) */
int daxfs_k_acl_chmod(DAXFS_IDMAP_T *idmap, struct dentry *dentry, umode_t mode);
int daxfs_refresh_inode_change(struct inode *inode, u64 *change);
int daxfs_refresh_after_write(struct inode *inode, u64 before, u64 moves,
			      const struct daxfs_attr *a);
/* the refresh with what a read's op loaded: a (NULL: that op's error err) */
int daxfs_refresh_from(struct inode *inode, const struct daxfs_attr *a,
		       int err);
int daxfs_refresh_unmatched(struct inode *inode, const struct daxfs_peek *pk,
			    int err, u64 *change);

/* Whether what a peek loaded is what the inode holds: the test a refresh
 * makes on the attributes its op loads (refresh_apply), so a refresh that
 * passes it changes nothing. */
static inline bool daxfs_attrs_match(struct inode *inode,
				     const struct daxfs_peek *pk)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	return READ_ONCE(ei->valid) && pk->change == READ_ONCE(ei->change) &&
	       pk->size == (u64)i_size_read(inode) &&
	       pk->nlink == inode->i_nlink &&
	       !((pk->mode ^ inode->i_mode) & S_IFMT);
}

/*
 * The refresh after a read that peeked at the inode in its own op (pk;
 * NULL when the op found none, err then its error): nothing when the peek
 * matches what the inode holds, else a refresh in an op of its own.
 * *change gets the change counter the inode now answers for.  Inline:
 * every read() comes here, and nearly always the peek matches.
 */
static inline int daxfs_refresh_peeked(struct inode *inode,
				       const struct daxfs_peek *pk, int err,
				       u64 *change)
{
	if (likely(pk && daxfs_attrs_match(inode, pk))) {
		*change = pk->change;
		return 0;
	}
	return daxfs_refresh_unmatched(inode, pk, err, change);
}
int daxfs_k_kill_privs(struct inode *inode);
int daxfs_inode_cache_init(void);
void daxfs_inode_cache_destroy(void);
struct inode *daxfs_alloc_inode(struct super_block *sb);
void daxfs_free_inode(struct inode *inode);
void daxfs_evict_inode(struct inode *inode);
int daxfs_k_getattr(DAXFS_IDMAP_T *idmap, const struct path *path,
		    struct kstat *stat, u32 request_mask, unsigned int flags);
int daxfs_k_setattr(DAXFS_IDMAP_T *idmap, struct dentry *dentry,
		    struct iattr *attr);
int daxfs_k_permission(DAXFS_IDMAP_T *idmap, struct inode *inode, int mask);

/* dir.c */
extern const struct file_operations daxfs_dir_fops;
int daxfs_dir_cache_init(void);
void daxfs_dir_cache_destroy(void);

/* file.c */
extern const struct file_operations daxfs_file_fops;
/* lock.c: fcntl/OFD locks and flock through the region (docs/locks.md) */
int daxfs_k_lock(struct file *file, int cmd, struct file_lock *fl);
int daxfs_k_flock(struct file *file, int cmd, struct file_lock *fl);
extern const struct address_space_operations daxfs_aops;
void daxfs_mmap_drop_range(struct inode *inode, u64 start, u64 end);
void daxfs_mmap_release_pins(struct inode *inode);
void daxfs_rdc_drop(struct inode *inode);
void daxfs_mmap_revalidate(struct inode *inode, u64 change, bool pool);
void daxfs_mmap_revalidate_all(struct daxfs_sb_info *sbi);
#define DAXFS_ASK_MS	20	/* how often a mapping mount looks for asks */
void daxfs_ask_work(struct work_struct *work);
void daxfs_mapped_each(struct daxfs_sb_info *sbi, void (*fn)(struct inode *inode));

/* srcpages.c: an append's source pages, held so that its copy cannot
 * fault (docs/kernel.md "User buffers") */
#define DAXFS_SRC_MAX	(64UL << 20)	/* bytes held for one op */
#define DAXFS_SRC_BOUNCE (4UL << 20)	/* bytes copied, from a page not held */
struct daxfs_src_pages {
	struct iov_iter iter;	/* over bv or kv: the op's source */
	struct bio_vec *bv;
	unsigned int nr;
	void *bounce;		/* the copy, or NULL */
	struct kvec kv;
};
ssize_t daxfs_src_hold(struct daxfs_src_pages *src, struct iov_iter *from, size_t max);
void daxfs_src_release(struct daxfs_src_pages *src, struct iov_iter *from);

/* tmpfile.c: O_TMPFILE, linkat of it, RENAME_WHITEOUT */
int daxfs_k_tmpfile(DAXFS_IDMAP_T *idmap, struct inode *dir, struct file *file,
		    umode_t mode);
int daxfs_k_link_tmpfile(struct inode *inode, struct inode *dir, struct dentry *dentry);
int daxfs_k_whiteout_make(struct inode *dir, u64 *ino);
void daxfs_new_owner(struct inode *dir, umode_t *mode, u32 *uid, u32 *gid);

/* times.c: atime and mapped-write mtime (docs/kernel.md "Timestamps") */
int daxfs_k_update_time(DAXFS_UPDATE_TIME_ARGS);
bool daxfs_k_fault_start(struct vm_fault *vmf);
void daxfs_k_fault_end(struct vm_fault *vmf, bool started);
struct daxfs_fileattr;
int daxfs_k_fileattr_get(struct dentry *dentry, struct daxfs_fileattr *fa);
int daxfs_k_fileattr_set(DAXFS_IDMAP_T *idmap, struct dentry *dentry,
			 struct daxfs_fileattr *fa);
vm_fault_t daxfs_k_pfn_mkwrite(struct vm_fault *vmf);
void daxfs_k_times_wrprotect(struct inode *inode, loff_t start, loff_t end);

/* backing.c (split mode) */
int daxfs_backing_attach(struct fs_context *fc, struct daxfs_sb_info *sbi);
void daxfs_backing_stop(struct daxfs_sb_info *sbi);
void daxfs_backing_put(struct daxfs_sb_info *sbi);
void daxfs_backing_show_stats(struct seq_file *m, struct daxfs_sb_info *sbi);
int daxfs_backing_err(struct super_block *sb, int err, const char *what);

#endif /* DAXFS_K_H */
