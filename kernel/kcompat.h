/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version shims for daxfs.ko.  The module targets Debian 12's 6.1
 * kernel; the shims below cover the VFS and DAX interfaces that changed
 * after 6.1 (see docs/kernel.md).  Everything else in kernel/ is written
 * against the 6.1 API through these macros.
 */
#ifndef DAXFS_KCOMPAT_H
#define DAXFS_KCOMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/dax.h>
#include <linux/slab.h>
#include <linux/posix_acl_xattr.h>

/* 6.3: struct user_namespace * in inode operations became struct mnt_idmap * */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define DAXFS_IDMAP_T		struct mnt_idmap
#define DAXFS_NOP_IDMAP		(&nop_mnt_idmap)
#else
#define DAXFS_IDMAP_T		struct user_namespace
#define DAXFS_NOP_IDMAP		(&init_user_ns)
#endif

/*
 * 6.2: the inode-based ->get_acl is ->get_inode_acl (the new ->get_acl takes a
 * dentry and is optional), and ->set_acl takes the dentry instead of the inode
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define DAXFS_IOP_GET_ACL	get_inode_acl
#define DAXFS_SET_ACL_T		struct dentry
#define daxfs_set_acl_inode(d)	d_inode(d)
#else
#define DAXFS_IOP_GET_ACL	get_acl
#define DAXFS_SET_ACL_T		struct inode
#define daxfs_set_acl_inode(i)	(i)
#endif

/* 6.2: the VFS reads and writes system.posix_acl_*; these handlers only list them */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define DAXFS_ACL_ACCESS_HANDLER	nop_posix_acl_access
#define DAXFS_ACL_DEFAULT_HANDLER	nop_posix_acl_default
#else
#define DAXFS_ACL_ACCESS_HANDLER	posix_acl_access_xattr_handler
#define DAXFS_ACL_DEFAULT_HANDLER	posix_acl_default_xattr_handler
#endif

/* 6.3: vm_flags became read-only outside the vm_flags_*() helpers */
static inline void daxfs_vma_set_flags(struct vm_area_struct *vma, unsigned long f)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_set(vma, f);
#else
	vma->vm_flags |= f;
#endif
}

/* Whether the inode's times are already a, m and c (ns): a write within
 * its stamp's grain leaves them, and the refresh after it need not turn
 * them into timespecs again.  6.6/6.7: the accessors. */
static inline bool daxfs_inode_times_are(struct inode *inode, s64 a, s64 m,
					 s64 c)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct timespec64 ta = inode_get_atime(inode);
	struct timespec64 tm = inode_get_mtime(inode);
#else
	struct timespec64 ta = inode->i_atime, tm = inode->i_mtime;
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	struct timespec64 tc = inode_get_ctime(inode);
#else
	struct timespec64 tc = inode->i_ctime;
#endif

	return timespec64_to_ns(&tm) == m && timespec64_to_ns(&tc) == c &&
	       timespec64_to_ns(&ta) == a;
}

/* 6.6/6.7: inode timestamps moved behind accessors */
static inline void daxfs_set_inode_times(struct inode *inode, struct timespec64 a,
					 struct timespec64 m, struct timespec64 c)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	inode_set_atime_to_ts(inode, a);
	inode_set_mtime_to_ts(inode, m);
	inode_set_ctime_to_ts(inode, c);
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	inode->i_atime = a;
	inode->i_mtime = m;
	inode_set_ctime_to_ts(inode, c);
#else
	inode->i_atime = a;
	inode->i_mtime = m;
	inode->i_ctime = c;
#endif
}

/* 6.6: generic_fillattr() takes the statx request mask */
static inline void daxfs_fillattr(DAXFS_IDMAP_T *idmap, u32 request_mask,
				  struct inode *inode, struct kstat *stat)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	generic_fillattr(idmap, request_mask, inode, stat);
#else
	generic_fillattr(idmap, inode, stat);
#endif
}

/*
 * 6.17: pfn_t is gone (with its PFN_DEV/PFN_MAP flags): dax_direct_access() and
 * vmf_insert_mixed() take a plain pfn.  Before, a device page is PFN_DEV without
 * PFN_MAP (no struct page use: a special PTE).  daxfs_zero_pfn(addr): the zero
 * page's (7.0: my_zero_pfn() is zero_pfn()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
typedef unsigned long daxfs_pfn_t;
#define daxfs_dev_pfn(pfn)	(pfn)
#define daxfs_pfn_val(p)	(p)
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define daxfs_zero_pfn(addr)	zero_pfn(addr)
#else
#define daxfs_zero_pfn(addr)	my_zero_pfn(addr)
#endif
#else
#include <linux/pfn_t.h>
typedef pfn_t daxfs_pfn_t;
#define daxfs_dev_pfn(pfn)	__pfn_to_pfn_t(pfn, PFN_DEV)
#define daxfs_pfn_val(p)	pfn_t_to_pfn(p)
#define daxfs_zero_pfn(addr)	pfn_to_pfn_t(my_zero_pfn(addr))
#endif

/*
 * 6.12 (unexported by then; 6.8-6.11 not checked): vmf_insert_mixed_mkwrite()
 * is no longer exported to modules.  Plain vmf_insert_mixed() maps the page
 * with the mapping's vm_page_prot, which is read-only for a shared writable
 * mapping since daxfs has ->pfn_mkwrite (kernel/times.c): the store then
 * faults once more, through do_wp_page() to ->pfn_mkwrite, which allows it.
 */
static inline vm_fault_t daxfs_insert_mixed_mkwrite(struct vm_area_struct *vma,
						    unsigned long addr,
						    daxfs_pfn_t pfn)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
	return vmf_insert_mixed(vma, addr, pfn);
#else
	return vmf_insert_mixed_mkwrite(vma, addr, pfn);
#endif
}

/*
 * 6.12: special huge PFN mappings (pmd_special, CONFIG_ARCH_SUPPORTS_PMD_PFNMAP):
 * vmf_insert_pfn_pmd() of a frame that is not devmap makes a special PMD, which
 * GUP, /proc/PID/pagemap, clear_refs and the rest of mm leave alone as they
 * leave our special PTEs.  Before, such a PMD was taken for a THP's and its
 * struct page read (none exists for a phys= region), or, as devmap, handed to
 * GUP with page references daxfs cannot wait for: no PMD mappings there
 * (docs/kernel.md "PMD mappings of runs").  Even there only in VM_PFNMAP
 * mappings, which mm's page-table walkers skip (daxfs_mmap).
 */
#if defined(CONFIG_ARCH_SUPPORTS_PMD_PFNMAP) && defined(CONFIG_TRANSPARENT_HUGEPAGE)
#define DAXFS_PMD_MAPS	1
#else
#define DAXFS_PMD_MAPS	0
#endif

/* 6.17: struct fileattr became struct file_kattr (FS_IOC_*FLAGS, FSGETXATTR) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
#define daxfs_fileattr	file_kattr
#else
#define daxfs_fileattr	fileattr
#endif

/* 6.5: generic_file_splice_read was replaced by filemap/copy_splice_read */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define daxfs_splice_read	copy_splice_read
#else
#define daxfs_splice_read	generic_file_splice_read
#endif

/* 6.5: O_DIRECT is allowed by FMODE_CAN_ODIRECT instead of a_ops->direct_IO */
static inline void daxfs_allow_odirect(struct file *file)
{
#ifdef FMODE_CAN_ODIRECT
	file->f_mode |= FMODE_CAN_ODIRECT;
#endif
}

/* 6.9: bdev_open_by_* / bdev_file_open_by_*; get_tree_bdev still does it
 * for us.  fs_dax_get_by_bdev() took its holder arguments in 6.0. */
static inline struct dax_device *daxfs_dax_get(struct block_device *bdev, u64 *start,
					       void *holder,
					       const struct dax_holder_operations *ops)
{
	return fs_dax_get_by_bdev(bdev, start, holder, ops);
}

static inline void daxfs_dax_put(struct dax_device *dax, void *holder)
{
	fs_put_dax(dax, holder);
}

/* 6.17: sb->s_d_op is private (__s_d_op), set through set_default_d_op() */
static inline void daxfs_set_d_op(struct super_block *sb,
				  const struct dentry_operations *ops)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 17, 0)
	set_default_d_op(sb, ops);
#else
	sb->s_d_op = ops;
#endif
}

/* 6.18: generic_delete_inode() was renamed inode_just_drop() */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 18, 0)
#define daxfs_drop_inode	inode_just_drop
#else
#define daxfs_drop_inode	generic_delete_inode
#endif

/* 7.0: i_state is a struct, read through inode_state_read_once() without i_lock */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define daxfs_i_state(inode)	inode_state_read_once(inode)
#else
#define daxfs_i_state(inode)	((inode)->i_state)
#endif

/*
 * 6.14: ->d_revalidate() also gets the parent directory and the name (daxfs
 * takes both from the dentry, as before): DAXFS_D_REVALIDATE(fn) defines
 * fn_vfs, the d_revalidate of the running kernel, over
 * int fn(struct dentry *, unsigned int flags).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 14, 0)
#define DAXFS_D_REVALIDATE(fn)						\
static int fn##_vfs(struct inode *dir, const struct qstr *name,		\
		    struct dentry *dentry, unsigned int flags)		\
{									\
	return fn(dentry, flags);					\
}
#else
#define DAXFS_D_REVALIDATE(fn)						\
static int fn##_vfs(struct dentry *dentry, unsigned int flags)		\
{									\
	return fn(dentry, flags);					\
}
#endif

/* 6.15: ->mkdir() returns a dentry: NULL for the one it was given, or an error */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define DAXFS_MKDIR_RET		struct dentry *
#define daxfs_mkdir_ret(err)	ERR_PTR(err)
#else
#define DAXFS_MKDIR_RET		int
#define daxfs_mkdir_ret(err)	(err)
#endif

/*
 * 7.0: ->create() lost its bool excl (O_EXCL).  Without it daxfs answers a name
 * that another host took meanwhile with -ESTALE (as for !excl): the VFS then
 * walks again with LOOKUP_REVAL and finds the file, which O_EXCL refuses with
 * -EEXIST there.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define DAXFS_CREATE_EXCL
#define daxfs_create_excl	false
#else
#define DAXFS_CREATE_EXCL	, bool excl
#define daxfs_create_excl	excl
#endif

/*
 * 7.0: ->update_time() says FS_UPD_ATIME or FS_UPD_CMTIME (S_ATIME or
 * S_MTIME | S_CTIME before, gone now), and flags may hold IOCB_NOWAIT, which
 * daxfs refuses with -EAGAIN as the VFS did before for it.
 * daxfs_update_attrs(): the times asked for, as DAXFS_ATTR_* bits.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define DAXFS_UPDATE_TIME_ARGS	struct inode *inode, enum fs_update_time type, \
				unsigned int flags
#define daxfs_update_nowait()	(flags & IOCB_NOWAIT)
#define daxfs_update_attrs()	(type == FS_UPD_ATIME ? DAXFS_ATTR_ATIME : \
				 DAXFS_ATTR_MTIME | DAXFS_ATTR_CTIME)
#else
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)	/* 6.6: no "now" */
#define DAXFS_UPDATE_TIME_ARGS	struct inode *inode, int flags
#else
#define DAXFS_UPDATE_TIME_ARGS	struct inode *inode, struct timespec64 *now, int flags
#endif
#define daxfs_update_nowait()	false
#define daxfs_update_attrs()	((flags & S_ATIME ? DAXFS_ATTR_ATIME : 0) | \
				 (flags & S_MTIME ? DAXFS_ATTR_MTIME : 0) | \
				 (flags & S_CTIME ? DAXFS_ATTR_CTIME : 0))
#endif

/* 7.0: simple_nosetlease() is gone; a NULL ->setlease refuses leases (-EINVAL) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
#define daxfs_nosetlease	NULL
#else
#define daxfs_nosetlease	simple_nosetlease
#endif

/* 6.16: badblocks_check() gives the bad run's length as a sector_t, not an int */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
typedef sector_t daxfs_bb_len_t;
#else
typedef int daxfs_bb_len_t;
#endif

/* 7.0: posix_acl_to_xattr() allocates the buffer itself (NULL: no memory) */
static inline void *daxfs_acl_to_xattr(const struct posix_acl *acl, size_t *size)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return posix_acl_to_xattr(&init_user_ns, acl, size, GFP_KERNEL) ?: ERR_PTR(-ENOMEM);
#else
	void *buf;
	int err;

	*size = posix_acl_xattr_size(acl->a_count);
	buf = kmalloc(*size, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	err = posix_acl_to_xattr(&init_user_ns, acl, buf, *size);
	if (err < 0) {
		kfree(buf);
		return ERR_PTR(err);
	}
	return buf;
#endif
}

/* 6.3: struct file_lock moved to linux/filelock.h; 6.9: its common
 * fields moved into fl->c (struct file_lock_core, flc_*) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#include <linux/filelock.h>
#endif
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
#define daxfs_fl_flags(fl)	((fl)->c.flc_flags)
#define daxfs_fl_type(fl)	((fl)->c.flc_type)
#define daxfs_fl_owner(fl)	((fl)->c.flc_owner)
#define daxfs_fl_pid(fl)	((fl)->c.flc_pid)
#else
#define daxfs_fl_flags(fl)	((fl)->fl_flags)
#define daxfs_fl_type(fl)	((fl)->fl_type)
#define daxfs_fl_owner(fl)	((fl)->fl_owner)
#define daxfs_fl_pid(fl)	((fl)->fl_pid)
#endif

/* 6.15: badblocks_set() returns true when it recorded the range (before: 0) */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 15, 0)
#define daxfs_badblocks_add(bb, s, n)	(badblocks_set(bb, s, n, 1) ? 0 : -ENOSPC)
#else
#define daxfs_badblocks_add(bb, s, n)	(badblocks_set(bb, s, n, 1) ? -ENOSPC : 0)
#endif

#endif /* DAXFS_KCOMPAT_H */
