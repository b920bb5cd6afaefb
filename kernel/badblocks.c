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
#include <linux/slab.h>
#include <linux/string.h>
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
		if (daxfs_badblocks_add(bb, sector, (int)count))
			return invalf(fc, "daxfs: badblocks=%s: more bad ranges than a list can hold (%lu)",
				      path, MAX_BADBLOCKS);
	}
	return 0;
}

/*
 * The list's text, NUL-terminated (kfree it), or an ERR_PTR.  A plain read,
 * not kernel_read_file(): that one is for files whose contents the kernel
 * trusts (modules, firmware, policies), and its LSM hook takes a list of
 * ours for such a file of unknown kind: IPE (6.12) warns with a stack trace
 * for every READING_UNKNOWN read, which panic_on_warn makes a crash.
 */
static char *daxfs_bb_read(const char *path)
{
	struct file *f;
	char *text;
	loff_t size, pos = 0;
	ssize_t n;

	f = filp_open(path, O_RDONLY, 0);
	if (IS_ERR(f))
		return ERR_CAST(f);
	text = ERR_PTR(-EINVAL);
	if (!S_ISREG(file_inode(f)->i_mode))
		goto out;
	size = i_size_read(file_inode(f));
	text = ERR_PTR(-EFBIG);
	if (size > DAXFS_BB_FILE_MAX)
		goto out;
	text = kmalloc(size + 1, GFP_KERNEL);
	if (!text) {
		text = ERR_PTR(-ENOMEM);
		goto out;
	}
	while (pos < size) {
		n = kernel_read(f, text + pos, size - pos, &pos);
		if (n <= 0) {
			kfree(text);
			text = ERR_PTR(n < 0 ? (int)n : -EIO);
			goto out;
		}
	}
	text[size] = '\0';
out:
	fput(f);
	return text;
}

int daxfs_phys_badblocks(struct fs_context *fc, struct daxfs_sb_info *sbi,
			 const char *path)
{
	struct badblocks *bb;
	char *text;
	int err;

	text = daxfs_bb_read(path);
	if (IS_ERR(text))
		return invalf(fc, "daxfs: badblocks=%s: cannot read it (error %ld)", path,
			      PTR_ERR(text));
	bb = kzalloc(sizeof(*bb), GFP_KERNEL);
	if (!bb || badblocks_init(bb, 1)) {
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
