// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: metadata that the core loads directly (no daxfs_meta_ptr) on a
 * page that went bad after the mount.
 *
 * The fixed metadata: the core loads the free-stack heads and the epoch in
 * the state page, our lease and every host's state in the host table, our
 * lanes at every op, and in split mode the page cache's header, pin owners,
 * slot table and pins at every cached read.  The mount refuses a device
 * whose list names one of their pages (daxfs_check_meta_media), but the
 * driver adds to its list while we are mounted (a scrub, a memory-failure
 * report), and a load of poison in kernel context is a machine check.  So
 * every op (the core's daxfs_op_begin), every lease tick, statfs and the
 * fill server first ask whether the list names a page of them: one load of
 * the list's count when it is empty.
 *
 * The pool pages that the core loads directly: the open sets (ours at
 * every open and close, every host's at a last unlink and at recovery) and
 * the lock table (root and bucket pages, at every lock call).  Where they
 * lie changes, so the core asks before it follows a link to one of them
 * (daxfs_media_direct_bad): the same one load when the list is empty.
 *
 * Either way, if the list names such a page this host can no longer take
 * part safely (it cannot even renew its lease without a load there, or it
 * would miss another host's open file or lock): the mount becomes dead as
 * when the other hosts declared it dead, the core's fence stops the op in
 * flight as it stops one of a host declared dead, every operation fails
 * with EIO, our mappings go at the next lease tick, unmount skips the
 * host-table store of leaving, and the other hosts recover our slot when
 * the lease runs out.  fsck.daxfs names the region from the same list.
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/badblocks.h>
#include "daxfs_k.h"

static const char *const daxfs_fixed_names[] = {
	[DAXFS_RGN_STATE] = "the state page (free-list heads, epoch)",
	[DAXFS_RGN_HOSTS] = "the host table",
	[DAXFS_RGN_LANES] = "the lanes",
	[DAXFS_RGN_BUCKETS] = "the overlay hash table",
};

static const char *const daxfs_direct_names[] = {
	[DAXFS_MEDIA_OPEN_SET] = "an open set",
	[DAXFS_MEDIA_LOCKS] = "the lock table",
};

#define DAXFS_PCACHE_META_NAME \
	"the split-mode page cache's slots (header, pin owners, slot table, pins)"

/* End of the fixed metadata: the regions above, from the validated copy
 * of the superblock; the superblock page itself lies before them. */
static u64 daxfs_fixed_end(const struct daxfs_fs *fs)
{
	const struct daxfs_region_desc *rg = fs->sb.regions;
	u64 end = DAXFS_BLOCK_SIZE, e;
	u32 k;

	for (k = 0; k < ARRAY_SIZE(daxfs_fixed_names); k++) {
		if (!daxfs_fixed_names[k])
			continue;
		e = rg[k].offset + rg[k].size;
		if (e > end)
			end = e;
	}
	return end;
}

static const char *daxfs_fixed_name(const struct daxfs_fs *fs, u64 off)
{
	const struct daxfs_region_desc *rg = fs->sb.regions;
	u32 k;

	for (k = 0; k < ARRAY_SIZE(daxfs_fixed_names); k++)
		if (daxfs_fixed_names[k] && off >= rg[k].offset &&
		    off - rg[k].offset < rg[k].size)
			return daxfs_fixed_names[k];
	return "the superblock";
}

/* This host stops: dead, and the kernel names once what lies where. */
static bool daxfs_media_stop(struct daxfs_sb_info *sbi, const char *what, u64 off)
{
	if (!xchg(&sbi->media_fixed, true))
		pr_crit("%s: %s at region byte 0x%llx lies on a bad block: this host stops (every operation fails with EIO, it no longer renews its lease); unmount, and run fsck.daxfs, which names the bad ranges, before mounting again\n",
			sbi->sb->s_id, what, off);
	/* as when declared dead: lease_work zaps our mappings; the core's
	 * fence stops the ops in flight */
	WRITE_ONCE(sbi->fs.stopped, true);
	WRITE_ONCE(sbi->fs.shut, true);		/* new ops: EIO (core/hosts.c) */
	WRITE_ONCE(sbi->dead, true);
	return true;
}

/* Is [off, off + len) listed?  Then this host stops. */
static bool daxfs_media_range_bad(struct daxfs_sb_info *sbi, u64 off, u64 len,
				  const char *what)
{
	u64 good = daxfs_media_good(sbi, off, len);

	if (good >= len)
		return false;
	return daxfs_media_stop(sbi, what ? what : daxfs_fixed_name(&sbi->fs, off + good),
				off + good);
}

bool daxfs_media_fixed_bad_listed(struct daxfs_fs *fs)
{
	struct daxfs_sb_info *sbi = container_of(fs, struct daxfs_sb_info, fs);
	u64 pc_off;

	if (likely(!sbi->bb || !READ_ONCE(sbi->bb->count)))
		return false;
	if (READ_ONCE(sbi->media_fixed))
		return true;
	if (daxfs_media_range_bad(sbi, 0, daxfs_fixed_end(fs), NULL))
		return true;
	if (!fs->pc.hdr)
		return false;
	/* split mode: the cache's metadata before its data pages (a data
	 * page on a bad block is a read's EIO, as any file's) */
	pc_off = fs->sb.regions[DAXFS_RGN_PCACHE].offset;
	return daxfs_media_range_bad(sbi, pc_off, fs->pc.data - (u8 *)fs->pc.hdr,
				     DAXFS_PCACHE_META_NAME);
}

bool daxfs_media_direct_bad_listed(struct daxfs_fs *fs, u64 off, u64 len, u32 what)
{
	struct daxfs_sb_info *sbi = container_of(fs, struct daxfs_sb_info, fs);

	if (likely(!sbi->bb || !READ_ONCE(sbi->bb->count)))
		return false;
	return daxfs_media_range_bad(sbi, off, len,
				     what < ARRAY_SIZE(daxfs_direct_names) ?
				     daxfs_direct_names[what] : "metadata");
}
