// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: module, mount (fs_context), superblock, lease renewal.
 *
 * Two ways to reach the region:
 *   mount -t daxfs /dev/pmem0 /mnt                  fsdax block device
 *   mount -t daxfs -o phys=ADDR,size=SIZE none /mnt  physical range
 * Either way the whole region gets one kernel mapping (kaddr) and a
 * linear pfn range, which the core and the mmap fault handler use.
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/module.h>
#include <linux/init.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/seq_file.h>
#include <linux/statfs.h>
#include <linux/blkdev.h>
#include <linux/badblocks.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/security.h>
#include <linux/utsname.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include "daxfs_k.h"

/*
 * Our host slot is no longer ALIVE with our generation: other hosts
 * declared us dead (a stall past the lease) and recovered our work.
 */
static bool daxfs_slot_lost(struct daxfs_sb_info *sbi)
{
	struct daxfs_fs *fs = &sbi->fs;
	u32 state;
	u64 gen;

	/* the host table on a bad page is never loaded (kernel/media.c) */
	if (!sbi->joined || fs->host == DAXFS_NO_HOST ||
	    daxfs_media_fixed_bad(fs) ||
	    daxfs_host_state(fs, fs->host, &state, &gen, NULL))
		return false;
	return state != DAXFS_HOST_ALIVE || gen != fs->host_gen;
}

/* Every operation fails with EIO from now on; lease_work drops our
 * mappings (others ignore our mapping announcement now). */
static void daxfs_mark_dead(struct daxfs_sb_info *sbi)
{
	WRITE_ONCE(sbi->dead, true);
	mod_delayed_work(system_long_wq, &sbi->lease_work, 0);
}

int __daxfs_kerr(struct super_block *sb, int err, const char *what)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(sb);

	/*
	 * An op the core fenced (-ESTALE: we were declared dead while it
	 * ran, docs/hosts.md "Fencing") may end before the renew work
	 * notices: it fails with EIO as every op after it does, not with
	 * the ESTALE a user would take for a stale NFS handle
	 * (tests/vm/test_kernel_pcache.py::test_kernel_pcache_stale_unpin
	 * saw a read(2) fail so).  The kernel's own -ESTALE (an inode
	 * another host removed) comes while our slot is still ours.
	 */
	if (err == -ESTALE && daxfs_slot_lost(sbi)) {
		daxfs_mark_dead(sbi);
		return -EIO;
	}
	/* a lookup refused metadata on a bad block (daxfs_media_bad): the
	 * region is not inconsistent, the media failed */
	if (err == -EUCLEAN && READ_ONCE(DAXFS_SB(sb)->media_meta))
		return -EIO;
	/* the host stopped (kernel/media.c): the op that found the bad page
	 * ended fenced (-ESTALE) or with a link it could not follow */
	if (err && READ_ONCE(DAXFS_SB(sb)->media_fixed))
		return -EIO;
	if (err == -EUCLEAN)
		pr_err_ratelimited("%s: %s: the region holds inconsistent data (EUCLEAN); unmount and run fsck.daxfs\n",
				   sb->s_id, what);
	return err;
}

/*
 * Run the core call again?  Only after -ENOSPC while freed space is still
 * on its way (docs/reclaim.md "When the pool is empty").  The core op has
 * ended, so we hold no lane and no claim: sleeping here holds back nobody.
 * Killable sleeps between reclaim tries, bounded by about one lease; a
 * fatal signal ends the wait with the -ENOSPC.
 */
bool daxfs_k_space_retry(struct super_block *sb, struct daxfs_space_wait *w,
			 long err)
{
	int ms;

	if (err != -ENOSPC || fatal_signal_pending(current))
		return false;
	ms = daxfs_space_wait_next(DAXFS_FS(sb), w);
	if (ms < 0)
		return false;
	if (ms)
		schedule_timeout_killable(msecs_to_jiffies(ms));
	return !fatal_signal_pending(current);
}

/* ---- mount options ---- */

enum { Opt_phys, Opt_size, Opt_validate, Opt_backing, Opt_trust_suid, Opt_trust_dev, Opt_nohost,
	Opt_badblocks, Opt_dax, Opt_dax_mode, Opt_pmd };

/* dax=: daxfs is always DAX (every access goes to the region, there is no
 * page cache to choose), so only "always" is true of it. */
enum { Opt_dax_always, Opt_dax_never, Opt_dax_inode };

static const struct constant_table daxfs_dax_modes[] = {
	{ "always",	Opt_dax_always },
	{ "never",	Opt_dax_never },
	{ "inode",	Opt_dax_inode },
	{}
};

static const struct fs_parameter_spec daxfs_param_spec[] = {
	fsparam_string("phys", Opt_phys),
	fsparam_string("size", Opt_size),
	fsparam_flag("validate", Opt_validate),
	fsparam_string("backing", Opt_backing),
	fsparam_flag("trust_suid", Opt_trust_suid),
	fsparam_flag("trust_dev", Opt_trust_dev),
	fsparam_flag("nohost", Opt_nohost),
	fsparam_string("badblocks", Opt_badblocks),
	fsparam_flag("dax", Opt_dax),
	fsparam_enum("dax", Opt_dax_mode, daxfs_dax_modes),
	fsparam_flag("pmd", Opt_pmd),
	{}
};

static void daxfs_opts_free_backing(struct daxfs_mount_opts *o)
{
	u32 i;

	for (i = 0; i < o->nr_backing; i++) {
		kfree(o->backing[i]);
		o->backing[i] = NULL;
	}
	o->nr_backing = 0;
	kfree(o->badblocks);
	o->badblocks = NULL;
}

/* Every backing= of a is one of b's. */
static bool daxfs_backing_within(const struct daxfs_mount_opts *a,
				 const struct daxfs_mount_opts *b)
{
	u32 i, j;

	for (i = 0; i < a->nr_backing; i++) {
		for (j = 0; j < b->nr_backing; j++)
			if (!strcmp(a->backing[i], b->backing[j]))
				break;
		if (j == b->nr_backing)
			return false;
	}
	return true;
}

/*
 * Remount: backing= may be repeated as it is, never changed.  Compared as
 * sets: a path given twice is one file, and mount(8) adds the options
 * /proc/mounts shows to the ones given (remount,backing=X sends X twice).
 */
static bool daxfs_same_backing(const struct daxfs_mount_opts *a,
			       const struct daxfs_mount_opts *b)
{
	return daxfs_backing_within(a, b) && daxfs_backing_within(b, a);
}

static int daxfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct daxfs_mount_opts *o = fc->fs_private;
	struct fs_parse_result result;
	char *end;
	int opt;

	opt = fs_parse(fc, daxfs_param_spec, param, &result);
	if (opt < 0)
		return opt;
	switch (opt) {
	case Opt_phys:
		if (kstrtoull(param->string, 0, &o->phys))
			return invalf(fc, "daxfs: phys=%s: expected a physical address such as 0x100000000",
				      param->string);
		o->has_phys = true;
		break;
	case Opt_size:
		o->size = memparse(param->string, &end);
		if (*end || !o->size)
			return invalf(fc, "daxfs: size=%s: expected a byte count (K/M/G/T suffixes allowed)",
				      param->string);
		o->has_size = true;
		break;
	case Opt_validate:
		o->validate = true;
		break;
	case Opt_trust_suid:
		o->trust_suid = true;
		break;
	case Opt_trust_dev:
		o->trust_dev = true;
		break;
	case Opt_nohost:
		o->nohost = true;
		break;
	case Opt_dax_mode:
		if (result.uint_32 != Opt_dax_always)
			return invalf(fc, "daxfs: dax=%s: daxfs is always DAX (dax and dax=always are accepted)",
				      param->string);
		fallthrough;
	case Opt_dax:
		o->dax = true;
		break;
	case Opt_pmd:
		if (!DAXFS_PMD_MAPS)
			return invalf(fc, "daxfs: pmd: this kernel has no special huge PFN mappings (Linux 6.12 or later, CONFIG_ARCH_SUPPORTS_PMD_PFNMAP): mount without pmd");
		o->pmd = true;
		break;
	case Opt_badblocks:
		if (!*param->string)
			return invalf(fc, "daxfs: badblocks= needs the path of a bad-block list");
		kfree(o->badblocks);
		o->badblocks = param->string;
		param->string = NULL;
		break;
	case Opt_backing:
		if (!*param->string)
			return invalf(fc, "daxfs: backing= needs the path of a backing file");
		if (o->nr_backing >= DAXFS_PCACHE_MAX_BACKING)
			return invalf(fc, "daxfs: at most %d backing= options",
				      DAXFS_PCACHE_MAX_BACKING);
		/* take the string: fs_context frees what is left in param */
		o->backing[o->nr_backing++] = param->string;
		param->string = NULL;
		break;
	}
	return 0;
}

/* ---- mapping the region ---- */

/* Where shared memory lives: persistent memory (ACPI NFIT, legacy e820
 * type 12), soft-reserved memory (EFI specific purpose) and CXL windows. */
static const unsigned long daxfs_phys_descs[] = {
	IORES_DESC_PERSISTENT_MEMORY, IORES_DESC_PERSISTENT_MEMORY_LEGACY,
	IORES_DESC_SOFT_RESERVED, IORES_DESC_CXL,
};

/* walk_iomem_res_desc hands each resource clipped to the range asked
 * for: the whole range back means one resource holds all of it. */
static int daxfs_phys_whole(struct resource *res, void *arg)
{
	const struct resource *want = arg;

	return res->start == want->start && res->end == want->end;
}

static bool daxfs_phys_inside(u64 phys, u64 size)
{
	struct resource want = { .start = phys, .end = phys + size - 1 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(daxfs_phys_descs); i++)
		if (walk_iomem_res_desc(daxfs_phys_descs[i], IORESOURCE_MEM,
					want.start, want.end, &want,
					daxfs_phys_whole) > 0)
			return true;
	return false;
}

static int daxfs_map_phys(struct fs_context *fc, struct daxfs_sb_info *sbi)
{
	u64 phys = sbi->opts.phys, size = sbi->opts.size;

	if (!PAGE_ALIGNED(phys) || !PAGE_ALIGNED(size))
		return invalf(fc, "daxfs: phys=0x%llx,size=0x%llx: both must be multiples of %lu",
			      phys, size, PAGE_SIZE);
	if (phys + size < phys)
		return invalf(fc, "daxfs: phys + size overflows");
	/* a raw physical mapping is what /dev/mem gives: not under lockdown */
	if (security_locked_down(LOCKDOWN_DEV_MEM)) {
		errorf(fc, "daxfs: phys= is refused under kernel lockdown; mount the pmem block device (fsdax) instead");
		return -EPERM;
	}
	if (region_intersects(phys, size, IORESOURCE_SYSTEM_RAM, IORES_DESC_NONE) !=
	    REGION_DISJOINT)
		return invalf(fc, "daxfs: phys=0x%llx,size=0x%llx overlaps System RAM (see /proc/iomem); give a reserved or persistent-memory range",
			      phys, size);
	if (!daxfs_phys_inside(phys, size))
		return invalf(fc, "daxfs: phys=0x%llx,size=0x%llx is not wholly inside one Persistent Memory, Soft Reserved or CXL range (see /proc/iomem)",
			      phys, size);
	/* claimed, so that no namespace driver, MMIO mapping or other
	 * mount gets the same memory while we have it */
	if (!request_mem_region(phys, size, "daxfs")) {
		errorf(fc, "daxfs: phys=0x%llx,size=0x%llx is in use (a pmem namespace, a device or another mount: see /proc/iomem); disable the namespace first (ndctl disable-namespace)",
		       phys, size);
		return -EBUSY;
	}
	sbi->kaddr = memremap(phys, size, MEMREMAP_WB);
	if (!sbi->kaddr) {
		release_mem_region(phys, size);
		return invalf(fc, "daxfs: cannot map phys=0x%llx,size=0x%llx (see /proc/iomem)",
			      phys, size);
	}
	sbi->memremapped = true;
	sbi->size = size;
	sbi->base_pfn = PHYS_PFN(phys);
	return 0;
}

/* ---- superblock ---- */

/*
 * Lease renewal: one load and one atomic add, and one observation of the
 * other slots' heartbeat counters, timed with our monotonic clock.  Alone
 * on the high-priority queue: it takes no lock and waits for nothing, so
 * a long operation or a slow maintenance pass never delays it.
 */
static void daxfs_renew_work(struct work_struct *work)
{
	struct daxfs_sb_info *sbi = container_of(to_delayed_work(work),
						 struct daxfs_sb_info, renew_work);
	int err;

	/* declared dead, or the device went away: nothing to renew; the
	 * host table on a bad page: renewal would load it */
	if (READ_ONCE(sbi->dead))
		return;
	if (daxfs_media_fixed_bad(&sbi->fs)) {
		mod_delayed_work(system_long_wq, &sbi->lease_work, 0);
		return;
	}
	err = daxfs_host_renew(&sbi->fs);
	if (err == -ESTALE) {
		daxfs_mark_dead(sbi);
		return;
	}
	if (err)
		pr_warn_ratelimited("%s: lease renewal failed (%d)\n", sbi->sb->s_id, err);
	daxfs_hosts_observe(&sbi->fs);
	queue_delayed_work(system_highpri_wq, &sbi->renew_work, sbi->lease_jiffies);
}

static void daxfs_lease_work(struct work_struct *work)
{
	struct daxfs_sb_info *sbi = container_of(to_delayed_work(work),
						 struct daxfs_sb_info, lease_work);

	if (READ_ONCE(sbi->dead) || daxfs_media_fixed_bad(&sbi->fs)) {
		if (!READ_ONCE(sbi->gone) && !READ_ONCE(sbi->media_fixed) &&
		    !READ_ONCE(sbi->shut))
			pr_crit("%s: other hosts declared this host dead (lease expired) and recovered its work; every operation now fails with EIO: unmount and mount again\n",
				sbi->sb->s_id);
		/* others ignore our mapping announcement now: the pool
		 * pages we map may be reused, so no mapping may stay */
		daxfs_mmap_revalidate_all(sbi);
		return;
	}
	/*
	 * Even when this host is idle: free what it retired once no host can
	 * still read it (df tells the truth after an unlink), and let crashed
	 * hosts' claims go.
	 */
	++sbi->renew_ticks;
	daxfs_expire_create_holds(sbi);
	/* other hosts' copy-ups and truncates: our mappings of borrowed
	 * pages go within one tick, and the pool pages they freed become
	 * reusable (first, so that our own reclaim below benefits) */
	daxfs_mmap_revalidate_all(sbi);
	/* frozen (freeze.c): this host's writers wait, its own included */
	if (sb_start_intwrite_trylock(sbi->sb)) {
		if (sbi->renew_ticks % 2 == 0 && !sb_rdonly(sbi->sb))
			daxfs_reclaim_all(&sbi->fs);
		if (sbi->renew_ticks % 4 == 0) {
			daxfs_recover_dead_hosts(&sbi->fs);
			/* and the cache pins they held (mmap, zero-copy
			 * reads) */
			daxfs_pcache_reap(&sbi->fs);
		}
		sb_end_intwrite(sbi->sb);
	}
	queue_delayed_work(system_long_wq, &sbi->lease_work, sbi->lease_jiffies);
}

/*
 * Idempotent: stops serving fill requests, releases our cache pins,
 * leaves the host table, closes the backing files and drops the mapping.
 */
static void daxfs_teardown(struct daxfs_sb_info *sbi)
{
	cancel_delayed_work_sync(&sbi->renew_work);
	cancel_delayed_work_sync(&sbi->lease_work);
	cancel_delayed_work_sync(&sbi->ask_work);
	daxfs_backing_stop(sbi);
	if (sbi->joined) {
		if (!READ_ONCE(sbi->dead)) {
			daxfs_pcache_detach(&sbi->fs);
			daxfs_host_leave(&sbi->fs);
		} else if (READ_ONCE(sbi->shut) && !READ_ONCE(sbi->gone) &&
			   !READ_ONCE(sbi->media_fixed)) {
			/* shut down: leave the slot as a crash would, but
			 * DEAD already, so the next mount recovers it at once
			 * (no op of ours runs any more: shutdown.c) */
			daxfs_host_abandon(&sbi->fs);
		}
		sbi->joined = false;
	}
	daxfs_backing_put(sbi);
	if (sbi->memremapped) {
		memunmap(sbi->kaddr);
		if (sbi->opts.has_phys)
			release_mem_region(sbi->opts.phys, sbi->size);
		sbi->memremapped = false;
	}
	if (sbi->dax_dev) {
		daxfs_dax_put(sbi->dax_dev, sbi->sb);
		sbi->dax_dev = NULL;
	}
	daxfs_phys_badblocks_free(sbi);
	sbi->kaddr = NULL;
}

static void daxfs_put_super(struct super_block *sb)
{
	daxfs_teardown(DAXFS_SB(sb));
}

static int daxfs_k_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct super_block *sb = dentry->d_sb;
	struct daxfs_sb_info *sbi = DAXFS_SB(sb);
	struct daxfs_statfs st;
	int err;

	if (READ_ONCE(sbi->dead) || daxfs_media_fixed_bad(&sbi->fs))
		return -EIO;
	err = daxfs_statfs(&sbi->fs, &st);
	if (err)
		return daxfs_kerr(sb, err, "statfs");
	buf->f_type = DAXFS_SUPER_MAGIC;
	buf->f_bsize = DAXFS_BLOCK_SIZE;
	buf->f_frsize = DAXFS_BLOCK_SIZE;
	buf->f_blocks = st.pool_bytes >> DAXFS_BLOCK_SHIFT;
	buf->f_bfree = st.free_bytes >> DAXFS_BLOCK_SHIFT;
	buf->f_bavail = daxfs_statfs_avail_blocks(&st);
	buf->f_files = st.nr_buckets;
	buf->f_ffree = st.nr_buckets > st.used_buckets ? st.nr_buckets - st.used_buckets : 0;
	buf->f_namelen = DAXFS_NAME_MAX;
	memcpy(&buf->f_fsid, sbi->fs.sb.uuid, sizeof(buf->f_fsid));
	return 0;
}

static int daxfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(root->d_sb);
	u32 i;

	if (sbi->opts.has_phys)
		seq_printf(m, ",phys=0x%llx,size=0x%llx", sbi->opts.phys, sbi->size);
	if (sbi->opts.validate)
		seq_puts(m, ",validate");
	if (sbi->opts.trust_suid)
		seq_puts(m, ",trust_suid");
	if (sbi->opts.trust_dev)
		seq_puts(m, ",trust_dev");
	if (sbi->opts.dax)
		seq_puts(m, ",dax=always");
	if (sbi->opts.pmd)
		seq_puts(m, ",pmd");
	for (i = 0; i < sbi->opts.nr_backing; i++)
		seq_show_option(m, "backing", sbi->opts.backing[i]);
	if (sbi->fs.host == DAXFS_NO_HOST)
		seq_puts(m, ",nohost");
	return 0;
}

static int daxfs_show_stats(struct seq_file *m, struct dentry *root)
{
	daxfs_backing_show_stats(m, DAXFS_SB(root->d_sb));
	return 0;
}

static const struct super_operations daxfs_sops = {
	.alloc_inode	= daxfs_alloc_inode,
	.free_inode	= daxfs_free_inode,
	.put_super	= daxfs_put_super,
	.statfs		= daxfs_k_statfs,
	.show_options	= daxfs_show_options,
	.show_stats	= daxfs_show_stats,
	.drop_inode	= daxfs_drop_inode,
	.evict_inode	= daxfs_evict_inode,
	.freeze_fs	= daxfs_freeze_fs,
	.unfreeze_fs	= daxfs_unfreeze_fs,
};

static int daxfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct daxfs_mount_opts *o = fc->fs_private;
	struct daxfs_sb_info *sbi;
	struct inode *root;
	u32 flags = 0;
	int err;

	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL);
	if (!sbi)
		return -ENOMEM;
	/* the backing= strings move to the superblock */
	sbi->opts = *o;
	memset(o->backing, 0, sizeof(o->backing));
	o->nr_backing = 0;
	sbi->opts.badblocks = NULL;	/* read below; stays o's to free */
	sbi->sb = sb;
	INIT_DELAYED_WORK(&sbi->renew_work, daxfs_renew_work);
	INIT_DELAYED_WORK(&sbi->lease_work, daxfs_lease_work);
	spin_lock_init(&sbi->mapped_lock);
	INIT_LIST_HEAD(&sbi->mapped);
	mutex_init(&sbi->walk_lock);
	INIT_DELAYED_WORK(&sbi->ask_work, daxfs_ask_work);
	sbi->ask_jiffies = max(msecs_to_jiffies(DAXFS_ASK_MS), 1UL);
	spin_lock_init(&sbi->hold_lock);
	INIT_LIST_HEAD(&sbi->create_holds);
	sb->s_fs_info = sbi;

	if (o->badblocks && !o->has_phys)
		return invalf(fc, "daxfs: badblocks= is for phys= mounts: a pmem device keeps its own list (/sys/block/pmemN/badblocks)");
	err = o->has_phys ? daxfs_map_phys(fc, sbi) : daxfs_map_bdev(fc, sb, sbi);
	if (err)
		return err;
	if (o->has_phys)
		snprintf(sb->s_id, sizeof(sb->s_id), "phys:%llx", o->phys);
	if (o->badblocks) {
		err = daxfs_phys_badblocks(fc, sbi, o->badblocks);
		if (err)
			return err;
	}

	if (o->validate)
		flags |= DAXFS_FS_VALIDATE;
	if (sbi->dax_dev)
		flags |= DAXFS_FS_PERSISTENT;
	/* the lease work renews, reclaims and recovers: reads need not */
	flags |= DAXFS_FS_UPKEEP;
	/* the list lives as long as the mount (kernel/badblocks.c) or the
	 * device, which the mount holds */
	sbi->fs.media_listed = sbi->bb ? &sbi->bb->count : NULL;
	err = daxfs_fs_open(&sbi->fs, sbi->kaddr, sbi->size, flags);
	if (err == -EPROTO) {
		errorf(fc, "daxfs: %s: made by an older DaxFS (format version %u): convert it offline with fsck.daxfs --convert",
		       sb->s_id, ((const struct daxfs_super *)sbi->kaddr)->version);
		return -EINVAL;
	}
	if (err == -EPROTONOSUPPORT) {
		errorf(fc, "daxfs: %s: made by a newer DaxFS (format version %u; this module knows %u): update daxfs.ko",
		       sb->s_id, ((const struct daxfs_super *)sbi->kaddr)->version,
		       DAXFS_VERSION);
		return -EINVAL;
	}
	if (err == -ENOSYS) {
		errorf(fc, "daxfs: %s: this CPU has no cmpxchg16b (CX16), which DaxFS needs",
		       sb->s_id);
		return -EOPNOTSUPP;
	}
	if (!err && sbi->bb) {
		err = daxfs_check_meta_media(fc, sbi);
		if (err)
			return err;
	}
	if (!err) {
		sbi->obs = kcalloc(sbi->fs.sb.max_hosts, sizeof(*sbi->obs),
				   GFP_KERNEL);
		if (!sbi->obs)
			return -ENOMEM;
		sbi->fs.obs = sbi->obs;
	}
	if (err) {
		errorf(fc, "daxfs: %s: no valid DaxFS image here (error %d%s): create one with mkfs.daxfs, or check it with fsck.daxfs",
		       sb->s_id, err, err == -EUCLEAN ? ", damaged" : "");
		return -EINVAL;
	}

	/*
	 * A read-only mount still joins: its lanes announce epochs and its
	 * mappings a map epoch, so other hosts never reuse what it reads or
	 * maps.  Host-less is only what the user asked for (-o ro,nohost):
	 * no slot, reads unprotected, no mmap (nothing could announce it).
	 */
	if (sbi->opts.nohost) {
		if (!sb_rdonly(sb)) {
			errorf(fc, "daxfs: %s: nohost is read-only: mount -o ro,nohost", sb->s_id);
			return -EINVAL;
		}
		pr_warn("%s: host-less read-only mount (nohost): reads are not protected against space reuse by other hosts, and mmap is refused\n",
			sb->s_id);
		sbi->fs.flags |= DAXFS_FS_RDONLY;
		err = 0;
	} else {
		err = daxfs_host_join(&sbi->fs, init_utsname()->nodename,
				      task_tgid_nr(current), DAXFS_HOST_KIND_KERNEL);
	}
	if (err) {
		errorf(fc, "daxfs: %s: cannot join the host table (error %d)%s", sb->s_id, err,
		       err == -EBUSY ? ": all host slots are taken by live hosts; unmount one, wait for a dead one's lease to run out, or mount -o ro,nohost for a host-less read-only view without mmap" : "");
		return err;
	}
	if (!sbi->opts.nohost) {
		sbi->joined = true;
		sbi->lease_jiffies = max(msecs_to_jiffies(sbi->fs.lease_ms / 4), 1UL);
		queue_delayed_work(system_highpri_wq, &sbi->renew_work, sbi->lease_jiffies);
		queue_delayed_work(system_long_wq, &sbi->lease_work, sbi->lease_jiffies);
	}
	err = daxfs_backing_attach(fc, sbi);
	if (err)
		return err;

	sb->s_magic = DAXFS_SUPER_MAGIC;
	sb->s_op = &daxfs_sops;
	daxfs_set_d_op(sb, &daxfs_dentry_ops);
	sb->s_blocksize = DAXFS_BLOCK_SIZE;
	sb->s_blocksize_bits = DAXFS_BLOCK_SHIFT;
	sb->s_maxbytes = DAXFS_MAX_FILE_SIZE;
	sb->s_time_gran = 1;
	/* times are s64 nanoseconds in the region (docs/format.md): the
	 * seconds that timespec64_to_ns converts without saturating (it
	 * saturates at +-KTIME_SEC_MAX itself), so that the VFS clamps
	 * (utimensat, touch -d) and stat shows what was stored */
	sb->s_time_min = -KTIME_SEC_MAX + 1;
	sb->s_time_max = KTIME_SEC_MAX - 1;
	/* extended attributes and POSIX ACLs, enforced by the VFS
	 * (docs/xattr.md) */
	sb->s_xattr = daxfs_xattr_handlers;
	sb->s_flags |= SB_POSIXACL;
	/* a write skips the look for security.capability once an inode has
	 * none (S_NOSEC); any refresh that finds the record changed on any
	 * host drops the mark again (daxfs_fill_inode) */
	sb->s_flags |= SB_NOSEC;
	/* atime follows the mount's relatime (the VFS default), strictatime
	 * or noatime: kernel/times.c stores it (docs/kernel.md "Timestamps") */
	/* any peer can make a device node: opened only when trusted (the
	 * VFS honours this like MNT_NODEV; docs/kernel.md "Trust") */
	if (!sbi->opts.trust_dev)
		sb->s_iflags |= SB_I_NODEV;
	memcpy(&sb->s_uuid, sbi->fs.sb.uuid, sizeof(sb->s_uuid));

	root = daxfs_iget(sb, sbi->fs.sb.root_ino);
	if (IS_ERR(root)) {
		errorf(fc, "daxfs: %s: cannot read the root directory (error %ld): run fsck.daxfs",
		       sb->s_id, PTR_ERR(root));
		return PTR_ERR(root);
	}
	if (!S_ISDIR(root->i_mode)) {
		iput(root);
		errorf(fc, "daxfs: %s: the root inode is not a directory: run fsck.daxfs", sb->s_id);
		return -EUCLEAN;
	}
	sb->s_root = d_make_root(root);
	if (!sb->s_root)
		return -ENOMEM;
	pr_info("%s: mounted %llu MiB, host slot %d, %s\n", sb->s_id, sbi->size >> 20,
		sbi->joined ? (int)sbi->fs.host : -1,
		sbi->dax_dev ? "fsdax device" : "physical range");
	return 0;
}

static int daxfs_get_tree(struct fs_context *fc)
{
	struct daxfs_mount_opts *o = fc->fs_private;

	if (o->has_phys != o->has_size)
		return invalf(fc, "daxfs: phys= and size= go together");
	if (o->has_phys)
		return get_tree_nodev(fc, daxfs_fill_super);
	if (!fc->source)
		return invalf(fc, "daxfs: give a pmem block device (mount -t daxfs /dev/pmem0 DIR) or -o phys=ADDR,size=SIZE");
	return get_tree_bdev(fc, daxfs_fill_super);
}

static int daxfs_reconfigure(struct fs_context *fc)
{
	struct super_block *sb = fc->root->d_sb;
	struct daxfs_sb_info *sbi = DAXFS_SB(sb);
	struct daxfs_mount_opts *o = fc->fs_private;

	if ((o->has_phys && o->phys != sbi->opts.phys) ||
	    (o->has_size && o->size != sbi->size))
		return invalf(fc, "daxfs: phys= and size= cannot change on remount");
	if (o->nr_backing && !daxfs_same_backing(o, &sbi->opts))
		return invalf(fc, "daxfs: backing= cannot change on remount");
	if (o->trust_suid != sbi->opts.trust_suid || o->trust_dev != sbi->opts.trust_dev ||
	    o->pmd != sbi->opts.pmd)
		return invalf(fc, "daxfs: trust_suid, trust_dev and pmd cannot change on remount");
	if (!(fc->sb_flags & SB_RDONLY) && sbi->bad_ro)
		return invalf(fc, "daxfs: %s has bad blocks: it stays read-only (see /sys/block/%s/badblocks)",
			      sb->s_id, sb->s_id);
	if (!(fc->sb_flags & SB_RDONLY) && !sbi->joined)
		return invalf(fc, "daxfs: this mount has no host slot and cannot become read-write");
	sync_filesystem(sb);
	return 0;
}

static void daxfs_free_fc(struct fs_context *fc)
{
	struct daxfs_mount_opts *o = fc->fs_private;

	if (o)
		daxfs_opts_free_backing(o);
	kfree(o);
}

static const struct fs_context_operations daxfs_context_ops = {
	.parse_param	= daxfs_parse_param,
	.get_tree	= daxfs_get_tree,
	.reconfigure	= daxfs_reconfigure,
	.free		= daxfs_free_fc,
};

static int daxfs_init_fs_context(struct fs_context *fc)
{
	struct daxfs_mount_opts *o;

	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o)
		return -ENOMEM;
	if (fc->purpose == FS_CONTEXT_FOR_RECONFIGURE) {
		struct daxfs_sb_info *sbi = DAXFS_SB(fc->root->d_sb);

		*o = sbi->opts;
		o->has_phys = false;
		o->has_size = false;
		/* the strings stay the superblock's; a remount may only
		 * repeat them (daxfs_reconfigure) */
		memset(o->backing, 0, sizeof(o->backing));
		o->nr_backing = 0;
	}
	fc->fs_private = o;
	fc->ops = &daxfs_context_ops;
	return 0;
}

static void daxfs_kill_sb(struct super_block *sb)
{
	struct daxfs_sb_info *sbi = DAXFS_SB(sb);

	if (sbi) {
		cancel_delayed_work_sync(&sbi->renew_work);
		cancel_delayed_work_sync(&sbi->lease_work);
		cancel_delayed_work_sync(&sbi->ask_work);
	}
	if (sb->s_bdev)
		kill_block_super(sb);
	else
		kill_anon_super(sb);
	if (sbi) {
		daxfs_teardown(sbi);
		daxfs_opts_free_backing(&sbi->opts);
		kfree(sbi->obs);
		kfree(sbi);
	}
}

static struct file_system_type daxfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "daxfs",
	.init_fs_context	= daxfs_init_fs_context,
	.parameters		= daxfs_param_spec,
	.kill_sb		= daxfs_kill_sb,
	.fs_flags		= FS_REQUIRES_DEV,
};

static int __init daxfs_init(void)
{
	int err;

	err = daxfs_inode_cache_init();
	if (err)
		return err;
	err = daxfs_dir_cache_init();
	if (err)
		goto no_dir;
	err = register_filesystem(&daxfs_fs_type);
	if (err)
		goto no_fs;
	return 0;
no_fs:
	daxfs_dir_cache_destroy();
no_dir:
	daxfs_inode_cache_destroy();
	return err;
}

static void __exit daxfs_exit(void)
{
	unregister_filesystem(&daxfs_fs_type);
	daxfs_dir_cache_destroy();
	daxfs_inode_cache_destroy();
}

module_init(daxfs_init);
module_exit(daxfs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("DaxFS: a filesystem shared by several hosts in one memory region");
MODULE_ALIAS_FS("daxfs");
