// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: a bad-block list for phys= mounts
 * (mount -t daxfs -o phys=ADDR,size=SIZE,badblocks=FILE none DIR).
 *
 * The fsdax route has the pmem driver's list (kernel/pmem.c).  A raw
 * physical range has none that the filesystem can reach: libnvdimm keeps
 * one per region and namespace, but exports no lookup for a range that no
 * nd driver holds, and a phys= range is one that nd_pmem let go (we claim
 * it).  So the administrator gives the list, in the format of
 * /sys/block/pmemN/badblocks and of fsck.daxfs --badblocks: "SECTOR COUNT"
 * lines, 512-byte sectors counted from ADDR (a copy of the namespace's list
 * taken before it was disabled, say).  It is read once, at mount; from then
 * on the phys= mount treats it as the fsdax route treats the driver's:
 * read-only, EIO for reads of a listed page, metadata on one refused
 * (docs/kernel.md "Media errors").
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/badblocks.h>
#include <linux/kernel_read_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include "daxfs_k.h"

#define DAXFS_BB_FILE_MAX	(1 << 20)

/* Adds each "SECTOR COUNT" line of text to bb; entries past the range
 * (size bytes) are left out, as fsck.daxfs does. */
static int daxfs_bb_parse(struct fs_context *fc, struct badblocks *bb, char *text,
			  u64 size, const char *path)
{
	unsigned long long sector, count;
	unsigned int nr = 0;
	char *line, extra;

	while ((line = strsep(&text, "\n"))) {
		nr++;
		line = strim(line);
		if (!*line || *line == '#')
			continue;
		if (sscanf(line, "%llu %llu %c", &sector, &count, &extra) != 2 || !count ||
		    count > INT_MAX || sector > (U64_MAX >> SECTOR_SHIFT) - count)
			return invalf(fc, "daxfs: badblocks=%s: line %u: expected \"SECTOR COUNT\" (512-byte sectors from the start of phys=)",
				      path, nr);
		if (sector >= size >> SECTOR_SHIFT)
			continue;
		if (badblocks_set(bb, sector, (int)count, 1))
			return invalf(fc, "daxfs: badblocks=%s: more bad ranges than a list can hold (%lu)",
				      path, MAX_BADBLOCKS);
	}
	return 0;
}

int daxfs_phys_badblocks(struct fs_context *fc, struct daxfs_sb_info *sbi,
			 const char *path)
{
	struct badblocks *bb;
	void *buf = NULL;
	size_t fsize;
	char *text;
	ssize_t n;
	int err;

	n = kernel_read_file_from_path(path, 0, &buf, DAXFS_BB_FILE_MAX, &fsize,
				       READING_UNKNOWN);
	if (n < 0)
		return invalf(fc, "daxfs: badblocks=%s: cannot read it (error %zd)", path, n);
	text = kmemdup_nul(buf, n, GFP_KERNEL);
	vfree(buf);
	bb = kzalloc(sizeof(*bb), GFP_KERNEL);
	if (!text || !bb || badblocks_init(bb, 1)) {
		kfree(text);
		kfree(bb);
		return -ENOMEM;
	}
	err = daxfs_bb_parse(fc, bb, text, sbi->size, path);
	kfree(text);
	if (err) {
		badblocks_exit(bb);
		kfree(bb);
		return err;
	}
	sbi->bb = bb;
	sbi->own_bb = true;
	if (bb->count) {
		/* no allocation of ours may land on a bad page */
		pr_warn("%s: %d bad ranges listed in %s: mounting read-only; reads of them fail with EIO\n",
			sbi->sb->s_id, bb->count, path);
		sbi->sb->s_flags |= SB_RDONLY;
		sbi->bad_ro = true;
	}
	return 0;
}

void daxfs_phys_badblocks_free(struct daxfs_sb_info *sbi)
{
	if (!sbi->own_bb)
		return;
	badblocks_exit(sbi->bb);
	kfree(sbi->bb);
	sbi->bb = NULL;
	sbi->own_bb = false;
}
