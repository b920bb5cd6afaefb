// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: regular files.  There is no page cache: read and write copy
 * straight between the user buffer and the region's pages (the core's
 * read/write actors), and mmap maps the region's pages themselves.
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/pfn_t.h>
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include "daxfs_k.h"

/* ---- read / write ---- */

struct daxfs_io {
	struct iov_iter *iter;
	bool fault;
	bool flush;		/* persistent media: write around the cache */
};

static u64 daxfs_read_actor(void *p, const void *src, u64 len)
{
	struct daxfs_io *io = p;
	size_t n;

	n = src ? copy_to_iter(src, len, io->iter) : iov_iter_zero(len, io->iter);
	if (n < len)
		io->fault = true;
	return n;
}

static u64 daxfs_write_actor(void *p, void *dst, u64 len)
{
	struct daxfs_io *io = p;
	size_t n;

	if (io->flush)
		n = _copy_from_iter_flushcache(dst, len, io->iter);
	else
		n = copy_from_iter(dst, len, io->iter);
	if (n < len)
		io->fault = true;
	return n;
}

static ssize_t daxfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct daxfs_io io = { .iter = to };
	size_t count = iov_iter_count(to);
	s64 n;
	int err;

	if (!count)
		return 0;
	if (iocb->ki_pos < 0)
		return -EINVAL;
	/* fresh size and times first: other hosts may have written */
	err = daxfs_refresh_inode(inode);
	if (err)
		return err;
	n = daxfs_read(DAXFS_FS(inode->i_sb), inode->i_ino, iocb->ki_pos, count,
		       daxfs_read_actor, &io);
	if (n < 0)
		return daxfs_kerr(inode->i_sb, (int)n, "read");
	if (n == 0 && io.fault)
		return -EFAULT;
	iocb->ki_pos += n;
	return n;
}

static ssize_t daxfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	struct daxfs_io io = { .iter = from };
	u32 flags = 0;
	u64 pos;
	ssize_t ret;
	s64 n;

	inode_lock(inode);
	ret = daxfs_refresh_inode(inode);
	if (ret)
		goto out;
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out;
	ret = file_remove_privs(file);
	if (ret)
		goto out;
	if (iocb->ki_flags & IOCB_APPEND)
		flags |= DAXFS_WRITE_APPEND;
	io.flush = sbi->fs.flags & DAXFS_FS_PERSISTENT;
	pos = iocb->ki_pos;
	n = daxfs_write(&sbi->fs, inode->i_ino, iocb->ki_pos, iov_iter_count(from), flags,
			daxfs_write_actor, &io, &pos);
	if (n < 0) {
		ret = daxfs_kerr(inode->i_sb, (int)n, "write");
	} else if (n == 0 && io.fault) {
		ret = -EFAULT;
	} else {
		/* with O_APPEND the core chose where the bytes went */
		iocb->ki_pos = pos + n;
		ret = n;
	}
	daxfs_refresh_inode(inode);
out:
	inode_unlock(inode);
	if (ret > 0)
		ret = generic_write_sync(iocb, ret);
	return ret;
}

static loff_t daxfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);

	if (whence == SEEK_END || whence == SEEK_DATA || whence == SEEK_HOLE) {
		int err = daxfs_refresh_inode(inode);

		if (err)
			return err;
	}
	return generic_file_llseek(file, offset, whence);
}

static int daxfs_open(struct inode *inode, struct file *file)
{
	int err = daxfs_refresh_inode(inode);

	if (err)
		return err == -ESTALE ? -ENOENT : err;
	daxfs_allow_odirect(file);
	return generic_file_open(inode, file);
}

/*
 * Stores made through write(2) already went around the cache on persistent
 * media; stores made through a shared mapping did not, so fsync writes back
 * the cache lines of every mapped page in the range.
 */
static int daxfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	u64 blk, last, off;
	loff_t size;
	int err;

	if (READ_ONCE(sbi->dead))
		return -EIO;
	if (!(sbi->fs.flags & DAXFS_FS_PERSISTENT))
		return 0;
	daxfs_refresh_inode(inode);
	size = i_size_read(inode);
	if (end >= size)
		end = size - 1;
	if (start > end)
		goto drain;
	last = (u64)end >> DAXFS_BLOCK_SHIFT;
	for (blk = (u64)start >> DAXFS_BLOCK_SHIFT; blk <= last; blk++) {
		err = daxfs_map_block(&sbi->fs, inode->i_ino, blk, false, &off);
		if (err)
			return daxfs_kerr(inode->i_sb, err, "fsync");
		if (off && off + DAXFS_BLOCK_SIZE <= sbi->size)
			arch_wb_cache_pmem(sbi->kaddr + off, DAXFS_BLOCK_SIZE);
		cond_resched();
	}
drain:
	wmb();
	return 0;
}

/* ---- mmap: the region's pages themselves ---- */

static vm_fault_t daxfs_fault_cow(struct vm_fault *vmf, struct daxfs_sb_info *sbi,
				  u64 off)
{
	struct page *page;

	/*
	 * Private write fault: the core of mm copies vmf->page into the new
	 * anonymous page; the region's pfn has no struct page to offer, so
	 * hand over a temporary copy (freed by the caller's put_page).
	 */
	page = alloc_page(GFP_HIGHUSER);
	if (!page)
		return VM_FAULT_OOM;
	if (off)
		memcpy_to_page(page, 0, sbi->kaddr + off, PAGE_SIZE);
	else
		clear_highpage(page);
	vmf->page = page;
	return 0;
}

static vm_fault_t daxfs_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	bool shared = vma->vm_flags & VM_SHARED;
	bool alloc;
	u64 off = 0;
	pfn_t pfn;
	int err;

	if (READ_ONCE(sbi->dead))
		return VM_FAULT_SIGBUS;
	/* beyond the size we know: it may have grown on another host */
	if ((u64)vmf->pgoff >= DIV_ROUND_UP((u64)i_size_read(inode), PAGE_SIZE)) {
		daxfs_refresh_inode(inode);
		if ((u64)vmf->pgoff >= DIV_ROUND_UP((u64)i_size_read(inode), PAGE_SIZE))
			return VM_FAULT_SIGBUS;
	}
	/*
	 * A writable shared mapping gets the real page even on a read fault:
	 * a zero-page placeholder would go stale when another host fills the
	 * hole, and mprotect() could make it writable.
	 */
	alloc = shared && (vma->vm_flags & VM_MAYWRITE) && !sb_rdonly(inode->i_sb);
	err = daxfs_map_block(&sbi->fs, inode->i_ino, vmf->pgoff, alloc, &off);
	if (err == -ENOSPC)
		return VM_FAULT_SIGBUS;
	if (err)
		return daxfs_kerr(inode->i_sb, err, "fault") == -ENOMEM ?
		       VM_FAULT_OOM : VM_FAULT_SIGBUS;
	if (off && (off & (PAGE_SIZE - 1) || off + PAGE_SIZE > sbi->size))
		return VM_FAULT_SIGBUS;
	if (vmf->cow_page)
		return daxfs_fault_cow(vmf, sbi, off);
	if (!off) {
		/* a hole in a private or read-only mapping reads as zeros */
		if (write)
			return VM_FAULT_SIGBUS;
		pfn = pfn_to_pfn_t(my_zero_pfn(vmf->address));
		return vmf_insert_mixed(vma, vmf->address, pfn);
	}
	pfn = __pfn_to_pfn_t(sbi->base_pfn + (off >> PAGE_SHIFT), PFN_DEV);
	if (write)
		return vmf_insert_mixed_mkwrite(vma, vmf->address, pfn);
	return vmf_insert_mixed(vma, vmf->address, pfn);
}

static const struct vm_operations_struct daxfs_vm_ops = {
	.fault		= daxfs_fault,
};

static int daxfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);
	int err;

	err = daxfs_refresh_inode(inode);
	if (err)
		return err == -ESTALE ? -ENOENT : err;
	file_accessed(file);
	vma->vm_ops = &daxfs_vm_ops;
	daxfs_vma_set_flags(vma, VM_MIXEDMAP);
	return 0;
}

const struct file_operations daxfs_file_fops = {
	.llseek		= daxfs_llseek,
	.read_iter	= daxfs_read_iter,
	.write_iter	= daxfs_write_iter,
	.mmap		= daxfs_mmap,
	.open		= daxfs_open,
	.fsync		= daxfs_fsync,
	.splice_read	= daxfs_splice_read,
	.splice_write	= iter_file_splice_write,
};

const struct address_space_operations daxfs_aops = {
	.direct_IO	= noop_direct_IO,
	.dirty_folio	= noop_dirty_folio,
};
