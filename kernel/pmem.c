// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: the fsdax route (mount -t daxfs /dev/pmemN DIR): the kernel
 * mapping of the device, its bad blocks, and its removal.
 *
 * The device's pages are found with dax_direct_access, but the mapping the
 * core uses is our own (memremap of the same physical range): the pmem
 * driver's mapping goes when the driver is unbound, while the memory does
 * not, so an operation in flight at an unbind reads what it read before
 * instead of faulting in the kernel.  The driver tells us of the unbind
 * through the dax holder operations (kill_dax calls notify_failure over
 * the whole device before it lets go); from then on every operation fails
 * with EIO, our mappings are zapped, and umount works.
 *
 * Bad blocks: the pmem driver keeps a list (/sys/block/pmemN/badblocks),
 * and dax_direct_access refuses any range that holds one.  Data copies
 * from the region check the list first and fail with EIO on a bad range
 * (as fs/dax.c does through dax_direct_access), and copy with the
 * machine-check-safe routines, so that a poisoned line that is not listed
 * yet ends as EIO too, never as a machine check in kernel context.
 * A device with bad blocks mounts read-only (docs/kernel.md "Media errors").
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/blkdev.h>
#include <linux/badblocks.h>
#include <linux/dax.h>
#include <linux/io.h>
#include <linux/uaccess.h>
#include "daxfs_k.h"

/* badblocks_check takes an int count of sectors: ask 1 GiB at a time */
#define DAXFS_BB_CHUNK_PAGES	(1L << (30 - PAGE_SHIFT))

/*
 * The first bad page in [pg, pg + *nr) of the device: *nr is cut to the
 * good pages before it, and the return value is the page after the bad
 * run (pg + *nr when none is bad).  Caller holds dax_read_lock with the
 * device alive when bb belongs to the driver.
 */
static pgoff_t daxfs_bb_next(struct badblocks *bb, pgoff_t pg, long *nr)
{
	sector_t s = (sector_t)pg << (PAGE_SHIFT - SECTOR_SHIFT), first;
	int sectors = (int)(*nr << (PAGE_SHIFT - SECTOR_SHIFT));
	daxfs_bb_len_t bad;
	pgoff_t bad_pg;

	if (!bb || !READ_ONCE(bb->count) ||
	    !badblocks_check(bb, s, sectors, &first, &bad))
		return pg + *nr;
	if (first < s) {
		bad -= s - first;
		first = s;
	}
	bad_pg = first >> (PAGE_SHIFT - SECTOR_SHIFT);
	*nr = bad_pg - pg;
	return DIV_ROUND_UP(first + bad, PAGE_SIZE >> SECTOR_SHIFT);
}

/* How many of bytes [off, off + len) come before the first page of bb
 * listed bad (len: none is bad)? */
static u64 daxfs_bb_good(struct badblocks *bb, u64 off, u64 len)
{
	pgoff_t pg = off >> PAGE_SHIFT, last = (off + len - 1) >> PAGE_SHIFT, next;
	long nr;

	while (pg <= last) {
		nr = min_t(long, last - pg + 1, DAXFS_BB_CHUNK_PAGES);
		next = daxfs_bb_next(bb, pg, &nr);
		/* the whole page of the first bad sector goes */
		if (next != pg + nr)
			return max_t(s64, 0, (s64)(((u64)(pg + nr) << PAGE_SHIFT) - off));
		pg = next;
	}
	return len;
}

/*
 * The same for the mount's list: the driver's on the fsdax route, or the
 * one a phys= mount read (badblocks=FILE, kernel/badblocks.c).  len once
 * the device is gone: its list went with the driver, and every operation
 * fails anyway.
 */
u64 daxfs_media_good(struct daxfs_sb_info *sbi, u64 off, u64 len)
{
	struct badblocks *bb = sbi->bb;
	u64 good = len;
	int id;

	if (!bb || !READ_ONCE(bb->count) || !len)
		return len;
	if (sbi->own_bb)		/* phys=: ours, lives as long as the mount */
		return daxfs_bb_good(bb, off, len);
	id = dax_read_lock();
	if (dax_alive(sbi->dax_dev))
		good = daxfs_bb_good(bb, off, len);
	dax_read_unlock(id);
	return good;
}

/*
 * The core's check before it loads metadata (daxfs_meta_ptr, and the base
 * image's records, entries and link targets in core/base.c): is any of
 * [off, off + len) listed bad?  A page can be listed after the mount (the
 * driver adds what a scrub or a machine check found; the test writes the
 * sysfs list): what depends on it then fails with EIO (daxfs_kerr), and
 * the first time says that fsck is needed.  One load when nothing is
 * listed.
 */
bool daxfs_media_bad_listed(struct daxfs_fs *fs, u64 off, u64 len)
{
	struct daxfs_sb_info *sbi = container_of(fs, struct daxfs_sb_info, fs);

	if (likely(!sbi->bb || !READ_ONCE(sbi->bb->count)))
		return false;
	if (daxfs_media_good(sbi, off, len) >= len)
		return false;
	if (!xchg(&sbi->media_meta, true))
		pr_crit("%s: metadata at region byte 0x%llx lies on a bad block: what depends on it fails with EIO; unmount and run fsck.daxfs, which reports and repairs bad ranges\n",
			sbi->sb->s_id, off);
	return true;
}

/*
 * A data copy out of the region (daxfs_copy_data): a listed bad block is
 * not loaded at all, and poison not listed yet ends copy_mc_to_kernel
 * short instead of raising a machine check in kernel context.
 */
int daxfs_copy_data(struct daxfs_fs *fs, void *dst, const void *src, u64 n)
{
	struct daxfs_sb_info *sbi = container_of(fs, struct daxfs_sb_info, fs);
	u64 off = (u64)((const u8 *)src - (const u8 *)sbi->kaddr);

	if (off < sbi->size && daxfs_media_good(sbi, off, n) < n)
		return -EIO;
	return copy_mc_to_kernel(dst, src, n) ? -EIO : 0;
}

/*
 * The pfn of every good page, in chunks that skip the listed bad pages
 * (dax_direct_access refuses a range holding one): all must lie at one
 * linear offset from page 0's.  Returns 0 with *base_pfn, or an error.
 */
static int daxfs_bdev_pfns(struct fs_context *fc, struct daxfs_sb_info *sbi,
			   pgoff_t start, long nr, unsigned long *base_pfn,
			   long *nr_bad)
{
	pgoff_t pg = 0, next;
	bool have = false;
	void *kaddr;
	long want, got;
	daxfs_pfn_t pfn;
	int id;

	*nr_bad = 0;
	while (pg < nr) {
		want = min(nr - (long)pg, DAXFS_BB_CHUNK_PAGES);
		id = dax_read_lock();
		next = daxfs_bb_next(sbi->bb, pg, &want);
		got = want ? dax_direct_access(sbi->dax_dev, start + pg, want, DAX_ACCESS,
					       &kaddr, &pfn) : 0;
		dax_read_unlock(id);
		if (got < 0)
			return invalf(fc, "daxfs: %pg: dax_direct_access failed (%ld)",
				      sbi->sb->s_bdev, got);
		if (want && got < want)
			return invalf(fc, "daxfs: %pg: only %ld of %ld pages are linearly mapped; daxfs needs one contiguous mapping",
				      sbi->sb->s_bdev, (long)pg + got, nr);
		if (want && !have) {
			*base_pfn = daxfs_pfn_val(pfn) - pg;
			have = true;
		} else if (want && daxfs_pfn_val(pfn) != *base_pfn + pg) {
			return invalf(fc, "daxfs: %pg: pages are not linearly mapped; daxfs needs one contiguous mapping",
				      sbi->sb->s_bdev);
		}
		next = min_t(pgoff_t, next, nr);
		*nr_bad += next - pg - want;
		pg = next;
	}
	if (!have)
		return invalf(fc, "daxfs: %pg: every page is a bad block", sbi->sb->s_bdev);
	return 0;
}

/*
 * kill_dax (the driver unbound, the device removed) calls this over the
 * whole device before it clears the device's alive bit and waits for
 * every dax_read_lock section; a memory failure calls it over the bad
 * range (which the driver also adds to its bad-block list).
 */
static int daxfs_notify_failure(struct dax_device *dax_dev, u64 off, u64 len,
				int mf_flags)
{
	struct super_block *sb = dax_holder(dax_dev);
	struct daxfs_sb_info *sbi;

	if (!sb)
		return -EOPNOTSUPP;
	sbi = DAXFS_SB(sb);
	if (off || len != U64_MAX) {
		pr_warn_ratelimited("%s: media error at device bytes %llu+%llu: reads of it fail with EIO\n",
				    sb->s_id, off, len);
		/* the generic handler deals with the processes */
		return -EOPNOTSUPP;
	}
	pr_crit("%s: the pmem device is going away (driver unbound or device removed): every operation now fails with EIO; unmount\n",
		sb->s_id);
	WRITE_ONCE(sbi->gone, true);
	/*
	 * As when declared dead: renewal stops, and the lease work's next
	 * tick (lease/4) zaps every mapping.  No work is queued from here:
	 * an unbind racing the unmount could queue it after kill_sb
	 * cancelled it.
	 */
	WRITE_ONCE(sbi->dead, true);
	return 0;
}

static const struct dax_holder_operations daxfs_holder_ops = {
	.notify_failure	= daxfs_notify_failure,
};

int daxfs_map_bdev(struct fs_context *fc, struct super_block *sb,
		   struct daxfs_sb_info *sbi)
{
	struct block_device *bdev = sb->s_bdev;
	u64 start = 0, size = bdev_nr_bytes(bdev);
	long nr = size >> PAGE_SHIFT, nr_bad;
	unsigned long base_pfn = 0;
	int err;

	sbi->dax_dev = daxfs_dax_get(bdev, &start, sb, &daxfs_holder_ops);
	if (!sbi->dax_dev)
		return invalf(fc, "daxfs: %pg does not support DAX (or another filesystem holds it): put the pmem namespace in fsdax mode (ndctl create-namespace -m fsdax) or mount with -o phys=ADDR,size=SIZE",
			      bdev);
	if (!nr)
		return invalf(fc, "daxfs: %pg is empty", bdev);
	sbi->bb = bdev->bd_disk->bb;
	err = daxfs_bdev_pfns(fc, sbi, start >> PAGE_SHIFT, nr, &base_pfn, &nr_bad);
	if (err)
		return err;
	if (nr_bad) {
		/* no allocation of ours may land on a bad page */
		pr_warn("%pg: %ld bad pages listed (/sys/block/%pg/badblocks): mounting read-only; reads of them fail with EIO\n",
			bdev, nr_bad, bdev);
		sb->s_flags |= SB_RDONLY;
		sbi->bad_ro = true;
	}
	/* our own mapping: it outlives an unbind of the driver */
	sbi->kaddr = memremap(PFN_PHYS(base_pfn), (size_t)nr << PAGE_SHIFT, MEMREMAP_WB);
	if (!sbi->kaddr)
		return invalf(fc, "daxfs: %pg: cannot map its memory", bdev);
	sbi->memremapped = true;
	sbi->size = (u64)nr << PAGE_SHIFT;
	sbi->base_pfn = base_pfn;
	return 0;
}

/* The superblock page and the fixed metadata before the pool must be
 * good: the core reads them with plain loads. */
int daxfs_check_meta_media(struct fs_context *fc, struct daxfs_sb_info *sbi)
{
	if (daxfs_media_good(sbi, 0, sbi->fs.pool_off) < sbi->fs.pool_off)
		return invalf(fc, "daxfs: %s: bad blocks in the superblock or the host table (see its bad-block list): cannot mount; restore from a copy",
			      sbi->sb->s_id);
	return 0;
}
