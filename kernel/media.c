// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: the fixed metadata (state page, host table, lanes, overlay
 * hash table) on a page that went bad after the mount.
 *
 * The core loads those words directly and everywhere: the free-stack heads
 * and the epoch in the state page, our lease and every host's state in the
 * host table, our lanes at every op.  The mount refuses a device whose list
 * names one of their pages (daxfs_check_meta_media), but the driver adds to
 * its list while we are mounted (a scrub, a memory-failure report), and a
 * load of poison in kernel context is a machine check.  So every op (the
 * core's daxfs_op_begin), every lease tick and statfs first ask whether the
 * list names a page of them: one load of the list's count when it is empty.
 * If it does, this host can no longer take part safely (it cannot even
 * renew its lease without a load there): the mount becomes dead as when
 * the other hosts declared it dead, every operation fails with EIO, our
 * mappings go at the next lease tick, unmount skips the host-table store
 * of leaving, and the other hosts recover our slot when the lease runs
 * out.  fsck.daxfs names the region from the same list.
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

bool daxfs_media_fixed_bad(struct daxfs_fs *fs)
{
	struct daxfs_sb_info *sbi = container_of(fs, struct daxfs_sb_info, fs);
	u64 end, good;

	if (likely(!sbi->bb || !READ_ONCE(sbi->bb->count)))
		return false;
	if (READ_ONCE(sbi->media_fixed))
		return true;
	end = daxfs_fixed_end(fs);
	good = daxfs_media_good(sbi, 0, end);
	if (good >= end)
		return false;
	if (!xchg(&sbi->media_fixed, true))
		pr_crit("%s: %s at region byte 0x%llx lies on a bad block: this host stops (every operation fails with EIO, it no longer renews its lease); unmount, and run fsck.daxfs, which names the bad ranges, before mounting again\n",
			sbi->sb->s_id, daxfs_fixed_name(fs, good), good);
	/* as when declared dead: lease_work zaps our mappings */
	WRITE_ONCE(sbi->dead, true);
	return true;
}
