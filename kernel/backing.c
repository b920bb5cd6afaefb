// SPDX-License-Identifier: GPL-2.0
/*
 * daxfs.ko: split mode (docs/pcache.md).  The backing files named by
 * backing=PATH mount options, read with kernel_read for the shared page
 * cache (core/pcache.c), and a kthread that fills pages other hosts
 * without backing access asked for.  The lib/backing.c of the kernel.
 */
#define pr_fmt(fmt) "daxfs: " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fadvise.h>
#include <linux/sched/signal.h>
#include <linux/kthread.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/moduleparam.h>
#include "daxfs_k.h"

/* Tests: every backing read sleeps this long first, so that a test can
 * kill a host in the middle of a fill. */
static unsigned int fill_delay_ms;
module_param(fill_delay_ms, uint, 0644);
MODULE_PARM_DESC(fill_delay_ms, "tests: delay every backing read by this many ms");

/* The server polls fast for a while after a request, slowly when idle
 * (idle emulated hosts must not burn CPU). */
#define SERVE_FAST_US		1000
#define SERVE_IDLE_MS		15
#define SERVE_BUSY_JIFFIES	(2 * HZ)
#define SERVE_BATCH		4096

/*
 * The test delay, in short sleeps: kthread_stop() (umount stopping the
 * fill server) and a fatal signal cut it short with -EINTR, and the fill
 * fails (its slot is released; a waiter asks again).  A backing read that
 * hangs in its filesystem cannot be cut short this way.
 */
static int daxfs_bk_delay(void)
{
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(fill_delay_ms));

	while (time_before(jiffies, end)) {
		if (fatal_signal_pending(current) ||
		    ((current->flags & PF_KTHREAD) && kthread_should_stop()))
			return -EINTR;
		schedule_timeout_killable(min_t(unsigned long, end - jiffies, HZ / 10));
	}
	return 0;
}

static int daxfs_bk_read(void *ctx, u32 idx, u64 off, void *dst, u32 len)
{
	struct daxfs_sb_info *sbi = ctx;
	struct daxfs_kbacking *bk = &sbi->bk;
	struct file *f;
	void *buf;
	loff_t pos = off;
	u32 got = 0, retries = 0;
	int err = 0;

	if (idx >= DAXFS_PCACHE_MAX_BACKING || !bk->file[idx])
		return -ENXIO;
	f = bk->file[idx];
	/*
	 * Bounce through a page of our own: a filesystem may hand a kernel
	 * buffer to a device (9p's zero-copy path looks up its struct pages),
	 * and region pages mapped with memremap have none.
	 */
	buf = (void *)__get_free_page(GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	atomic64_inc(&bk->reads);
	if (READ_ONCE(fill_delay_ms))
		err = daxfs_bk_delay();
	while (!err && got < len) {
		u32 n = min_t(u32, len - got, PAGE_SIZE);
		ssize_t r = kernel_read(f, buf, n, &pos);

		if ((r == -EINTR || r == -EAGAIN || r == -ERESTARTSYS) &&
		    !fatal_signal_pending(current) && ++retries < 16)
			continue;
		if (r < 0) {
			err = (int)r;
			break;
		}
		memcpy((u8 *)dst + got, buf, r);
		got += (u32)r;
		if ((u32)r < n)
			break;		/* end of file */
	}
	free_page((unsigned long)buf);
	if (err)
		return err;
	/*
	 * The region now holds the one cached copy: do not keep a second one
	 * in this host's own page cache (a backing file on NFS or 9p would
	 * otherwise cost every host the memory the shared cache saves).
	 */
	vfs_fadvise(f, off, len, POSIX_FADV_DONTNEED);
	memset((u8 *)dst + got, 0, len - got);	/* past the end: zeros */
	atomic64_add(got, &bk->bytes);
	return 0;
}

static void daxfs_bk_sleep(void *ctx, u32 usec)
{
	usleep_range(usec, usec + usec / 2 + 10);
}

static const struct daxfs_backing_ops daxfs_kbk_ops = {
	.read	= daxfs_bk_read,
	.sleep	= daxfs_bk_sleep,
};

/* Serves fill requests of hosts that cannot reach the backing files. */
static int daxfs_bk_server(void *arg)
{
	struct daxfs_sb_info *sbi = arg;
	unsigned long busy_until = jiffies;
	u64 seen = ~0ULL;

	while (!kthread_should_stop()) {
		/* dead, or the cache's words on a bad block (media.c): no load */
		u64 s = READ_ONCE(sbi->dead) || daxfs_media_fixed_bad(&sbi->fs) ?
			seen : daxfs_pcache_req_seq(&sbi->fs);

		if (s != seen) {
			seen = s;
			daxfs_pcache_serve(&sbi->fs, SERVE_BATCH);
			busy_until = jiffies + SERVE_BUSY_JIFFIES;
		}
		if (time_before(jiffies, busy_until))
			usleep_range(SERVE_FAST_US, 2 * SERVE_FAST_US);
		else
			schedule_timeout_interruptible(msecs_to_jiffies(SERVE_IDLE_MS));
	}
	return 0;
}

/* Opens backing= path and finds which backing file of the fs it is. */
static int daxfs_bk_open(struct fs_context *fc, struct daxfs_sb_info *sbi,
			 const char *path)
{
	struct daxfs_backing_header hdr;
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	u32 idx;
	int err;

	f = filp_open(path, O_RDONLY | O_LARGEFILE, 0);
	if (IS_ERR(f)) {
		errorf(fc, "daxfs: backing=%s: cannot open it (error %ld)",
		       path, PTR_ERR(f));
		return PTR_ERR(f);
	}
	err = -EMEDIUMTYPE;
	if (!S_ISREG(file_inode(f)->i_mode))
		goto bad;
	memset(&hdr, 0, sizeof(hdr));
	n = kernel_read(f, &hdr, sizeof(hdr), &pos);
	if (n < 0) {
		fput(f);
		errorf(fc, "daxfs: backing=%s: cannot read its header (error %zd)",
		       path, n);
		return (int)n;
	}
	if (n != sizeof(hdr))
		goto bad;
	err = daxfs_pcache_backing_check(&sbi->fs, &hdr, i_size_read(file_inode(f)), &idx);
	if (err)
		goto bad;
	if (sbi->bk.file[idx]) {
		fput(f);	/* the same backing file given twice */
		return 0;
	}
	sbi->bk.file[idx] = f;
	sbi->bk.reach |= 1ULL << idx;
	return 0;
bad:
	fput(f);
	errorf(fc, "daxfs: backing=%s is not a backing file of this filesystem (error %d; if it is, fsck.daxfs --backing checks the region's record of it)",
	       path, err);
	return err;
}

/*
 * At mount, after the host joined.  A split-mode fs always gets the ops,
 * even without backing=: reads of uncached pages then become requests
 * that hosts with access serve.
 */
int daxfs_backing_attach(struct fs_context *fc, struct daxfs_sb_info *sbi)
{
	struct daxfs_kbacking *bk = &sbi->bk;
	struct task_struct *t;
	u32 i;
	int err;

	if (!sbi->fs.pc.hdr) {
		if (sbi->opts.nr_backing)
			return invalf(fc, "daxfs: %s: backing= given but this filesystem keeps its data in the region",
				      sbi->sb->s_id);
		return 0;
	}
	for (i = 0; i < sbi->opts.nr_backing; i++) {
		err = daxfs_bk_open(fc, sbi, sbi->opts.backing[i]);
		if (err)
			return err;
	}
	daxfs_pcache_set_backing(&sbi->fs, &daxfs_kbk_ops, sbi, bk->reach, 0);
	if (!bk->reach || !sbi->joined)
		return 0;
	t = kthread_run(daxfs_bk_server, sbi, "daxfs-fill/%s", sbi->sb->s_id);
	if (IS_ERR(t))
		return invalf(fc, "daxfs: %s: cannot start the fill server (error %ld)",
			      sbi->sb->s_id, PTR_ERR(t));
	bk->server = t;
	return 0;
}

/* Unmount, first: no more serving (before daxfs_pcache_detach). */
void daxfs_backing_stop(struct daxfs_sb_info *sbi)
{
	if (sbi->bk.server) {
		kthread_stop(sbi->bk.server);
		sbi->bk.server = NULL;
	}
}

/* Unmount, last: after the core let go of the ops. */
void daxfs_backing_put(struct daxfs_sb_info *sbi)
{
	u32 i;

	daxfs_backing_stop(sbi);
	daxfs_pcache_set_backing(&sbi->fs, NULL, NULL, 0, 0);
	for (i = 0; i < DAXFS_PCACHE_MAX_BACKING; i++) {
		if (sbi->bk.file[i])
			fput(sbi->bk.file[i]);
		sbi->bk.file[i] = NULL;
	}
	sbi->bk.reach = 0;
}

/*
 * Errors of the cache that reach read(2): ETIMEDOUT (nobody could fill
 * the page within the bounded wait) stays, as with NFS soft mounts; a
 * cache full of pinned pages and a host-less mount are EIO.
 */
int daxfs_backing_err(struct super_block *sb, int err, const char *what)
{
	switch (err) {
	case -EINTR:
		return err;	/* a fatal signal ended the wait */
	case -ETIMEDOUT:
		pr_warn_ratelimited("%s: %s: no host filled a backing page within the wait (mount with backing= on some host)\n",
				    sb->s_id, what);
		return err;
	case -EBUSY:
		pr_warn_ratelimited("%s: %s: every cache slot for this page is pinned\n",
				    sb->s_id, what);
		return -EIO;
	case -EOPNOTSUPP:
		pr_warn_ratelimited("%s: %s: a mount without a host slot cannot read backed files\n",
				    sb->s_id, what);
		return -EIO;
	case -ESTALE:
		/* fenced: this host was declared dead (its pin column went
		 * too); the renew work marks the mount dead soon */
		return -EIO;
	}
	return daxfs_kerr(sb, err, what);
}

/* /proc/self/mountstats, after "with fstype daxfs ": this host's counters
 * (pcache:), then the cluster's (pcache_shared:); one key=value list each. */
void daxfs_backing_show_stats(struct seq_file *m, struct daxfs_sb_info *sbi)
{
	struct daxfs_fs *fs = &sbi->fs;
	struct daxfs_pcache_stats st;

	if (!fs->pc.hdr) {
		seq_puts(m, "statvers=1\n\tpcache: none");
		return;
	}
	seq_printf(m, "statvers=1\n\tpcache: reach=0x%llx backing_reads=%lld backing_bytes=%lld hits=%llu misses=%llu fills=%llu waits=%llu mmap_pins=%lld",
		   sbi->bk.reach, (long long)atomic64_read(&sbi->bk.reads),
		   (long long)atomic64_read(&sbi->bk.bytes),
		   READ_ONCE(fs->pc.st_hits), READ_ONCE(fs->pc.st_misses),
		   READ_ONCE(fs->pc.st_fills), READ_ONCE(fs->pc.st_waits),
		   (long long)atomic64_read(&sbi->bk.mmap_pins));
	if (READ_ONCE(sbi->dead) || daxfs_media_fixed_bad(fs) ||
	    daxfs_pcache_stats(fs, &st))
		return;
	seq_printf(m, "\n\tpcache_shared: slots=%llu valid=%llu pending=%llu pinned_slots=%llu pins=%llu fills=%llu evictions=%llu takeovers=%llu served=%llu timeouts=%llu",
		   st.nr_slots, st.valid, st.pending, st.pinned_slots, st.pins,
		   st.fills, st.evictions, st.takeovers, st.served, st.timeouts);
}
