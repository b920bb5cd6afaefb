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
#include <linux/highmem.h>
#include <linux/pagemap.h>
#include "daxfs_k.h"

/* ---- read / write ---- */

struct daxfs_io {
	struct iov_iter *iter;
	struct daxfs_sb_info *sbi;
	bool fault;
	bool media;		/* a bad block of the device: EIO */
	bool flush;		/* persistent media: write around the cache */
	size_t copied;		/* by this try of an atomic read */
};

/* Bytes of [p, p + len) before the first listed bad block (len: none).
 * Nothing listed, the usual case: the one load of the count, no call. */
static u64 daxfs_io_good(struct daxfs_io *io, const void *p, u64 len)
{
	u64 off = (u64)((const u8 *)p - (const u8 *)io->sbi->kaddr);

	if (!daxfs_media_listed(&io->sbi->fs))
		return len;
	return off < io->sbi->size ? daxfs_media_good(io->sbi, off, len) : len;
}

/* A short machine-check-safe copy: the source's fault (poison not yet
 * listed) or the destination's (a user page to fault in)? */
static bool daxfs_src_poisoned(const void *src, u64 len)
{
	u8 buf[64];

	return copy_mc_to_kernel(buf, src, min_t(u64, len, sizeof(buf))) != 0;
}

/*
 * Reads copy from the region with copy_mc_to_iter: a poisoned line ends
 * the copy short (then EIO), never as a machine check in kernel context;
 * a listed bad block is not read at all (docs/kernel.md "Media errors").
 */
static u64 daxfs_read_actor(void *p, const void *src, u64 len)
{
	struct daxfs_io *io = p;
	u64 good = src ? daxfs_io_good(io, src, len) : len;
	size_t n;

	/* the bytes before a bad block, then EIO (a short read first) */
	n = src ? _copy_mc_to_iter(src, good, io->iter) : iov_iter_zero(len, io->iter);
	if (n < good) {
		if (src && daxfs_src_poisoned((const u8 *)src + n, good - n))
			io->media = true;
		else
			io->fault = true;
	} else if (good < len) {
		io->media = true;
	}
	io->copied += n;
	return n;
}

/* An atomic read starts over: give back what this try copied. */
static void daxfs_read_restart(void *p)
{
	struct daxfs_io *io = p;

	iov_iter_revert(io->iter, io->copied);
	io->copied = 0;
	io->fault = false;
	io->media = false;
}

static u64 daxfs_write_actor(void *p, void *dst, u64 len)
{
	struct daxfs_io *io = p;
	/* a store would not clear the poison: the bytes could not be read */
	u64 good = daxfs_io_good(io, dst, len);
	size_t n;

	if (io->flush) {
		n = _copy_from_iter_flushcache(dst, good, io->iter);
	} else if (good >= DAXFS_NT_MIN) {
		/* streaming stores (core/compat.h, docs/files.md "Data
		 * copies with streaming stores"): weakly ordered, so fenced
		 * before the size or the page's publication can be seen, by
		 * daxfs_copy_fenced once for the whole write */
		n = _copy_from_iter_nocache(dst, good, io->iter);
	} else {
		n = copy_from_iter(dst, good, io->iter);
	}
	if (n < good)
		io->fault = true;
	else if (good < len)
		io->media = true;
	return n;
}

/*
 * The user buffer is copied inside a lane claim, whose announced epoch
 * holds back every host's reclaim: a copy must not wait on a page fault
 * that can block (userfaultfd, a FUSE or NFS mapping, another daxfs
 * mapping that needs a lane itself).  So the copies run with page faults
 * disabled; a short copy ends the op, the rest of the buffer is faulted
 * in with no claim held, and a new op goes on where the last one stopped
 * (docs/kernel.md "User buffers").
 */
static s64 daxfs_read_nofault(struct inode *inode, loff_t pos, size_t len,
			      struct daxfs_io *io, struct daxfs_peek *pk)
{
	s64 n;

	io->fault = false;
	io->media = false;
	io->copied = 0;
	/* never part of a strict write or a shrink on any host: the
	 * gate's seqlock, which plain writes do not disturb (docs/modes.md
	 * "Who is covered") */
	pagefault_disable();
	n = daxfs_read_atomic_peek(DAXFS_FS(inode->i_sb), inode->i_ino,
				   &DAXFS_I(inode)->fc, pos, len,
				   daxfs_read_actor, daxfs_read_restart, io,
				   pk);
	pagefault_enable();
	return n;
}

static ssize_t daxfs_read_locked(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	struct daxfs_io io = { .iter = to, .sbi = DAXFS_SB(inode->i_sb) };
	size_t count = iov_iter_count(to), done = 0, left;
	struct daxfs_peek pk = { .mode = 0 }, *fresh = &pk;
	s64 n;
	int err;

	if (!count)
		return 0;
	if (iocb->ki_pos < 0)
		return -EINVAL;
	if (READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return -EIO;
	for (;;) {
		left = count - done;
		/* the first op also peeks at the inode (other hosts may
		 * have written): a refresh makes an op of its own only when
		 * what it loaded differs from what the inode holds */
		n = daxfs_read_nofault(inode, iocb->ki_pos, left, &io, fresh);
		if (fresh) {
			u64 change;

			fresh = NULL;
			err = daxfs_refresh_peeked(inode, pk.mode ? &pk : NULL,
						   (int)n, &change);
			if (err)
				return err;
			/* cheap unless the file changed: mappings here then
			 * see the write too */
			if (READ_ONCE(DAXFS_I(inode)->nr_vmas))
				daxfs_mmap_revalidate(inode, change, false);
		}
		if (n < 0) {
			if (done)
				break;
			return daxfs_backing_err(inode->i_sb, (int)n, "read");
		}
		iocb->ki_pos += n;
		done += n;
		if (io.media)
			return done ? done : -EIO;
		if (!io.fault || done == count || fatal_signal_pending(current))
			break;
		/* no claim held: this may wait as long as the fault takes */
		left = count - done;
		if (fault_in_iov_iter_writeable(to, left) == left)
			break;
	}
	if (!done && io.fault)
		return -EFAULT;
	file_accessed(iocb->ki_filp);	/* relatime etc.: kernel/times.c */
	return done;
}

/*
 * Reads take i_rwsem shared, as ext4 and xfs do on DAX: a write on this
 * host (exclusive) then runs wholly before or after a read here.  Without
 * it a reader saw an O_APPEND write's range, which the core reserves
 * before it copies, as zeros: `tail -f` of a log printed NULs
 * (test_kernel_reader_sees_whole_appends).  Other hosts' writers are not
 * covered: docs/kernel.md "Reads and writes on one host".
 */
static ssize_t daxfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret;

	if (iocb->ki_flags & IOCB_NOWAIT) {
		if (!inode_trylock_shared(inode))
			return -EAGAIN;
	} else {
		inode_lock_shared(inode);
	}
	ret = daxfs_read_locked(iocb, to);
	inode_unlock_shared(inode);
	return ret;
}

/* One write op with page faults disabled (see daxfs_read_nofault),
 * run again while the pool is empty but limbo holds space. */
static s64 daxfs_write_nofault(struct kiocb *iocb, struct daxfs_io *io,
			       u32 flags, u64 *pos, struct daxfs_attr *attr,
			       bool *moved)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	/* zeroed at the first -ENOSPC only: not on every write */
	struct daxfs_space_wait w daxfs_noinit;
	bool waiting = false;
	u32 whole = DAXFS_WRITE_WHOLE;
	s64 n;

	/* -ENOSPC means nothing was written (the iterator did not move), so
	 * running it again cannot double anything.  The write is whole or
	 * nothing while the wait runs it again; once the wait gave up, one
	 * last try writes what fits (docs/reclaim.md "Short writes") */
	for (;;) {
		*pos = iocb->ki_pos;
		io->fault = false;
		io->media = false;
		pagefault_disable();
		n = daxfs_write_attr(DAXFS_FS(inode->i_sb), inode->i_ino,
				     &DAXFS_I(inode)->fc, iocb->ki_pos,
				     iov_iter_count(io->iter), flags | whole,
				     daxfs_write_actor, io, pos, attr, moved);
		pagefault_enable();
		if (n != -ENOSPC)
			return n;
		if (!waiting) {
			memset(&w, 0, sizeof(w));
			waiting = true;
		}
		if (daxfs_k_space_retry(inode->i_sb, &w, n))
			continue;
		if (!whole)
			return n;
		whole = 0;
	}
}

/*
 * The checks before a write.  trusted: on the attributes the inode holds,
 * with no peek to prove them current; the write's first op then stores
 * only if the record's change counter is still the one they were loaded
 * at (DAXFS_WRITE_IF_CHANGE), and a refusal here may be stale too: the
 * caller checks again after a refresh (docs/kernel.md "Writes checked on
 * cached attributes").  *change gets the counter the checks went by.
 * Returns the bytes to write, 0 for none, or -errno.
 */
static ssize_t daxfs_write_checks(struct kiocb *iocb, struct iov_iter *from,
				  bool trusted, u64 *change)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	ssize_t ret;
	int err;

	if (trusted) {
		/* an acquire: the attributes filled with it, not older ones */
		*change = smp_load_acquire(&DAXFS_I(inode)->change);
		err = 0;
	} else {
		err = daxfs_refresh_inode_change(inode, change);
	}
	if (err)
		return err;
	/* also through a descriptor opened before the flag came, from any
	 * host (as ext4_write_checks); the core decides again in the gate */
	if (IS_IMMUTABLE(inode))
		return -EPERM;
	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		return ret;
	/* the set-id bits go by the region's mode (file_remove_privs reads
	 * i_mode, which may hide them); then the rest (security labels) */
	err = daxfs_k_kill_privs(inode);
	if (!err)
		err = file_remove_privs(file);
	return err ? err : ret;
}

/*
 * Whether the checks may go by the cached attributes: never before the
 * first load, nor for an append under a file size limit, where a stale
 * size would raise SIGXFSZ before the op could tell (generic_write_checks
 * takes an append's position from i_size).
 */
static bool daxfs_write_trusts_cache(struct kiocb *iocb)
{
	struct inode *inode = file_inode(iocb->ki_filp);

	if (!READ_ONCE(DAXFS_I(inode)->valid) ||
	    READ_ONCE(DAXFS_SB(inode->i_sb)->dead))
		return false;
	return !(iocb->ki_flags & IOCB_APPEND) ||
	       rlimit(RLIMIT_FSIZE) == RLIM_INFINITY;
}

static ssize_t daxfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	struct daxfs_io io = { .iter = from, .sbi = sbi };
	/* neither zeroed on every call (daxfs_noinit): a is the core's once
	 * a.ino is set, src daxfs_src_hold's */
	struct daxfs_attr a daxfs_noinit;
	struct daxfs_src_pages src daxfs_noinit;
	size_t count = iov_iter_count(from), left;
	loff_t start = iocb->ki_pos;
	ssize_t ret, done = 0;
	u32 flags, cond;
	bool held, trusted, moved;
	u64 pos, change, moves = 0;
	s64 n;

	a.ino = 0;
	inode_lock(inode);
	trusted = daxfs_write_trusts_cache(iocb);
again:
	ret = daxfs_write_checks(iocb, from, trusted, &change);
	if (ret < 0 && trusted)
		goto recheck;
	if (ret <= 0)
		goto out;
	ret = 0;	/* from here: the first error, when nothing was written */
	/* a rewrite that changes no attribute marks the change counter, and
	 * *moved says which ours moved (docs/files.md "The change counter of
	 * a rewrite") */
	flags = DAXFS_WRITE_MARK;
	if (iocb->ki_flags & IOCB_APPEND)
		flags |= DAXFS_WRITE_APPEND;
	/* the first op stores only at the counter the checks went by */
	cond = trusted ? DAXFS_WRITE_IF_CHANGE : 0;
	a.change = change;
	io.flush = sbi->fs.flags & DAXFS_FS_PERSISTENT;
	/* an append copies from its source pages held: a copy that stopped
	 * at a page gone since the fault-in would leave the rest of its
	 * reserved range zero (kernel/srcpages.c) */
	held = (flags & DAXFS_WRITE_APPEND) && user_backed_iter(from);
	for (;;) {
		left = iov_iter_count(from);
		if (held) {
			n = daxfs_src_hold(&src, from, DAXFS_SRC_MAX);
			if (n < 0) {
				if (n == -EFAULT)
					io.fault = true;
				else if (!done)
					ret = n;
				break;
			}
			left = n;
			io.iter = &src.iter;
		} else if (io.fault &&
			   fault_in_iov_iter_readable(from, left) == left) {
			/* the rest of the buffer, with no claim held, once a
			 * copy met a page not present: a buffer the program
			 * just wrote to (the usual one) is copied without
			 * the walk of its pages first, as ext4's DAX path
			 * copies */
			break;
		}
		n = daxfs_write_nofault(iocb, &io, flags | cond, &pos, &a,
					&moved);
		cond = 0;
		if (held) {
			daxfs_src_release(&src, from);
			io.iter = from;
		}
		if (n == DAXFS_WRITE_CHANGED) {
			/* nothing stored: the attributes it found, then the
			 * checks again on them (a refresh proves them) */
			if (a.ino)
				daxfs_refresh_from(inode, &a, 0);
			goto recheck;
		}
		if (n < 0) {
			if (!done)
				ret = daxfs_kerr(inode->i_sb, (int)n, "write");
			break;
		}
		/* with O_APPEND the core chose where the bytes went */
		iocb->ki_pos = pos + n;
		done += n;
#ifdef DAXFS_BUG_KERNEL_WRITE_MOVES
		/* re-introduced defect (docs/testing.md): every op that wrote
		 * counted as a move, a rewrite's mark too */
		moves += n > 0;
#else
		moves += moved;
#endif
		/* the blocks moved to the overlay: our mappings of their
		 * cached copies go (split mode) */
		daxfs_mmap_drop_range(inode, pos, pos + n);
		/* on after a fault, or after a held piece copied whole (an
		 * append longer than DAXFS_SRC_MAX) */
		if (!(held ? (size_t)n == left : io.fault) ||
		    !iov_iter_count(from) || fatal_signal_pending(current))
			break;
	}
	if (done)
		ret = done;
	else if (io.media && !ret)
		ret = -EIO;
	else if (io.fault && !ret)
		ret = -EFAULT;
	/* the attributes the last op loaded after its write, if it gave
	 * them: no op of our own for the refresh */
	daxfs_refresh_after_write(inode, change, moves, a.ino ? &a : NULL);
out:
	inode_unlock(inode);
	if (ret > 0)
		ret = generic_write_sync(iocb, ret);
	return ret;
recheck:
	/* as the call came: the checks may have moved the position (an
	 * append) and cut the count (the size limits) */
	trusted = false;
	iocb->ki_pos = start;
	iov_iter_reexpand(from, count);
	io.fault = false;
	io.media = false;
	goto again;
}

static loff_t daxfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);

	if (whence == SEEK_END || whence == SEEK_DATA || whence == SEEK_HOLE) {
		int err = daxfs_refresh_inode(inode);

		if (err)
			return err;
	}
	/* the real holes (kernel/falloc.c), not "all data up to EOF" */
	if (whence == SEEK_DATA || whence == SEEK_HOLE)
		return daxfs_k_seek_hole_data(file, offset, whence);
	return generic_file_llseek(file, offset, whence);
}

/*
 * This host's opens of a regular file are counted in the inode and
 * published in the host's open set once: on the first open (0 -> 1), and
 * retracted on the last release (1 -> 0).  An unlink of the last name on
 * any host then keeps the file until our last release
 * (docs/open-files.md), and the set holds one entry per open file, not
 * per open(): a user opening one file 100,000 times cannot fill it (8,064
 * entries per host) and make every open() on the host fail with -ENFILE.
 * open_lock orders a publish against a retract of the same inode.
 */
static int daxfs_open(struct inode *inode, struct file *file)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	/* a file our atomic_open made in this same call has the attributes
	 * its naming's op loaded (daxfs_create_reg): no peek to prove them */
	int err = file->f_mode & FMODE_CREATED ? 0 : daxfs_refresh_inode(inode);

	/*
	 * The walk found this inode, but nothing here held it: another host
	 * may have unlinked its last name (or renamed a file over it) and
	 * freed it since.  -ESTALE, not -ENOENT: the VFS walks once more with
	 * LOOKUP_REVAL, which finds the name gone (ENOENT for a plain open),
	 * free for an open(O_CREAT) to create, or naming another file
	 * (docs/kernel.md limitation 10; ENOENT from open(O_CREAT) in a
	 * directory that exists before, test_kernel_creat_churn_two_guests).
	 */
	if (err)
		return err;
	daxfs_allow_odirect(file);
	err = generic_file_open(inode, file);
	if (err)
		return err;
	mutex_lock(&ei->open_lock);
	if (!ei->nr_opens)	/* freed since the walk: ESTALE, as above */
		err = daxfs_kerr_walked(inode->i_sb,
					daxfs_open_get(DAXFS_FS(inode->i_sb),
						       inode->i_ino), "open");
	if (!err && ei->create_hold)
		daxfs_create_hold_taken(inode);	/* the create's entry is ours now */
	else if (!err)
		ei->nr_opens++;
	mutex_unlock(&ei->open_lock);
	return err;
}

static int daxfs_release(struct inode *inode, struct file *file)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct super_block *sb = inode->i_sb;

	mutex_lock(&ei->open_lock);
	if (!WARN_ON_ONCE(!ei->nr_opens) && !--ei->nr_opens &&
	    !READ_ONCE(DAXFS_SB(sb)->dead))
		daxfs_kerr(sb, daxfs_open_put_fc(DAXFS_FS(sb), inode->i_ino,
						 &ei->fc), "close");
	mutex_unlock(&ei->open_lock);
	return 0;
}

/*
 * Stores made through write(2) already went around the cache on persistent
 * media; stores made through a shared mapping did not, so fsync writes back
 * the cache lines of every pool page the file has in the range.  Only pages
 * that exist are visited (holes are skipped a subtree at a time: a sparse
 * file of 2^48 bytes costs a few lookups, not 2^36), and a fatal signal
 * ends the walk, so neither fsync nor msync can hang unkillably.
 */
static int daxfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	u64 blk, stop, off;
	loff_t size;
	int err;

	if (READ_ONCE(sbi->dead))
		return -EIO;
	daxfs_k_times_wrprotect(inode, start, end);
	if (!(sbi->fs.flags & DAXFS_FS_PERSISTENT))
		return 0;
	daxfs_refresh_inode(inode);
	size = i_size_read(inode);
	if (end >= size)
		end = size - 1;
	if (start > end)
		goto drain;
	stop = ((u64)end >> DAXFS_BLOCK_SHIFT) + 1;
	for (blk = (u64)start >> DAXFS_BLOCK_SHIFT; blk < stop; ) {
		if (fatal_signal_pending(current))
			return -EINTR;
		err = daxfs_next_page(&sbi->fs, inode->i_ino, &blk, stop, &off);
		if (err)
			return daxfs_kerr(inode->i_sb, err, "fsync");
		if (off) {
			if (off + DAXFS_BLOCK_SIZE <= sbi->size)
				arch_wb_cache_pmem(sbi->kaddr + off, DAXFS_BLOCK_SIZE);
			blk++;
		}
		cond_resched();
	}
drain:
	wmb();
	return 0;
}

/* ---- mmap: the region's pages themselves ---- */

/*
 * Split mode: a block that lives only in a backing file is mapped straight
 * from its cache slot, pinned so that no host evicts the slot while a PTE
 * of ours may point at it.  Per inode, under pin_lock: pin_pg (pgoff ->
 * slot pinned for it, one pin per pgoff) and pin_cnt (slot -> pins we
 * hold on it; a pgoff that got another slot keeps the old pin counted).
 * PTEs are zapped before vm_ops->close, so the last close of a mapping
 * releases them all.  A block that moves into the overlay on this host
 * (write(2), a write fault) has its PTEs zapped and its pin dropped under
 * pin_lock; read faults map and record under pin_lock, so none can slip
 * an old slot in between.  Base-region pages mapped the same way are
 * recorded in base_pg (no pin: the base region never changes).
 *
 * Other hosts copy blocks up and truncate behind our back; the lease work
 * (daxfs_mmap_revalidate_all, every lease/4) and read(2) revalidate the
 * borrowed pages of each mapped inode whose change counter moved, and
 * zap those that are no longer what the file shows (docs/pcache.md).
 *
 * Pool (overlay) pages mapped are recorded in pool_pg.  Another host's
 * truncate frees them through limbo; the lease work's pass walks pool_pg
 * of every inode whose change counter moved, zaps pages the file no
 * longer shows at that pgoff (truncate-then-regrow included), and only
 * then announces the epoch it started at (daxfs_map_announce): no host
 * reuses such a page before that (docs/reclaim.md, "Mapping hosts").
 * Faults look up, record and insert under pin_lock, so a pass either
 * sees a fault's record or the fault looked up after the pass began.
 */
static void daxfs_unpin_slot(struct daxfs_sb_info *sbi, u64 slot)
{
	struct daxfs_pcache_pin pin = {
		.slot = slot, .gen = sbi->fs.host_gen, .col = sbi->fs.host,
	};

	/*
	 * A dead host's pins went with its pin column, which a new host in
	 * our host slot may own by now: its counters are not ours to lower.
	 */
	if (!READ_ONCE(sbi->dead))
		daxfs_pcache_unpin(&sbi->fs, &pin);
	atomic64_dec(&sbi->bk.mmap_pins);
}

/* Drops one of our pins on slot (pin_lock held). */
static void daxfs_put_slot(struct inode *inode, u64 slot)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	void *v = xa_load(&ei->pin_cnt, slot);
	unsigned long n = v ? xa_to_value(v) : 0;

	if (WARN_ON_ONCE(!n))
		return;
	if (n == 1)
		xa_erase(&ei->pin_cnt, slot);
	else
		xa_store(&ei->pin_cnt, slot, xa_mk_value(n - 1), GFP_NOFS);
	daxfs_unpin_slot(DAXFS_SB(inode->i_sb), slot);
}

/* Keeps the pin of a fault on pgoff for the life of the mapping
 * (pin_lock held).  On error the pin is released. */
static int daxfs_keep_pin(struct inode *inode, pgoff_t pgoff,
			  struct daxfs_pcache_pin *pin)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	void *old = xa_load(&ei->pin_pg, pgoff), *v;
	unsigned long n;
	int err;

	if (old && xa_to_value(old) == pin->slot) {
		daxfs_pcache_unpin(&sbi->fs, pin);	/* held already */
		return 0;
	}
	v = xa_load(&ei->pin_cnt, pin->slot);
	n = v ? xa_to_value(v) : 0;
	err = xa_err(xa_store(&ei->pin_cnt, pin->slot, xa_mk_value(n + 1), GFP_NOFS));
	if (err) {
		daxfs_pcache_unpin(&sbi->fs, pin);
		return err;
	}
	atomic64_inc(&sbi->bk.mmap_pins);
	err = xa_err(xa_store(&ei->pin_pg, pgoff, xa_mk_value(pin->slot), GFP_NOFS));
	if (err)
		daxfs_put_slot(inode, pin->slot);
	return err;
}

static void __daxfs_release_pins(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	unsigned long slot, n;
	void *v;

	/* every evicted inode comes here, most never mapped: six empty
	 * xa_destroy()s are six irq-saving lock round trips for nothing */
	if (xa_empty(&ei->pin_cnt) && xa_empty(&ei->pin_pg) &&
	    xa_empty(&ei->base_pg) && xa_empty(&ei->pool_pg) &&
	    xa_empty(&ei->hole_pg) && xa_empty(&ei->pmd_pg))
		return;
	xa_for_each(&ei->pin_cnt, slot, v)
		for (n = xa_to_value(v); n; n--)
			daxfs_unpin_slot(sbi, slot);
	xa_destroy(&ei->pin_cnt);
	xa_destroy(&ei->pin_pg);
	xa_destroy(&ei->base_pg);
	xa_destroy(&ei->pool_pg);
	xa_destroy(&ei->hole_pg);
	xa_destroy(&ei->pmd_pg);
}

/* Last mapping gone, or inode evicted: no PTE of ours shows a slot. */
void daxfs_mmap_release_pins(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	mutex_lock(&ei->pin_lock);
	__daxfs_release_pins(inode);
	mutex_unlock(&ei->pin_lock);
}

/* Bytes [start, end) of the file moved into the overlay on this host, or
 * filled holes: zap our PTEs of their cached copies and of the zero page,
 * and drop those pins (pin_lock held). */
static void __daxfs_mmap_drop_range(struct inode *inode, u64 start, u64 end)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	unsigned long first, last, idx, b, h;
	void *v;

	first = start >> PAGE_SHIFT;
	last = (end - 1) >> PAGE_SHIFT;
	idx = first;
	b = first;
	h = first;
	if (!xa_find(&ei->pin_pg, &idx, last, XA_PRESENT) &&
	    !xa_find(&ei->base_pg, &b, last, XA_PRESENT) &&
	    !xa_find(&ei->hole_pg, &h, last, XA_PRESENT))
		return;
	unmap_mapping_pages(inode->i_mapping, first, last - first + 1, false);
	xa_for_each_range(&ei->pin_pg, idx, v, first, last) {
		xa_erase(&ei->pin_pg, idx);
		daxfs_put_slot(inode, xa_to_value(v));
	}
	xa_for_each_range(&ei->base_pg, idx, v, first, last)
		xa_erase(&ei->base_pg, idx);
	xa_for_each_range(&ei->hole_pg, idx, v, first, last)
		xa_erase(&ei->hole_pg, idx);
}

/* After this host wrote [start, end) with write(2). */
void daxfs_mmap_drop_range(struct inode *inode, u64 start, u64 end)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	/* no mapping now: a later one looks up after our write */
	if (end <= start || !READ_ONCE(ei->nr_vmas))
		return;
	mutex_lock(&ei->pin_lock);
	__daxfs_mmap_drop_range(inode, start, end);
	mutex_unlock(&ei->pin_lock);
}

/* Still what the file shows at pgoff?  Errors keep the page: a borrowed
 * page is never freed or reused while we map it (base pages never
 * change; cache slots are pinned), so keeping it is only stale. */
static bool daxfs_still_borrowed(struct inode *inode, pgoff_t pgoff)
{
	bool borrowed;
	int err;

	err = daxfs_block_borrowed(DAXFS_FS(inode->i_sb), inode->i_ino, pgoff, &borrowed);
	return err || borrowed;
}

/* Zaps our PTEs of the borrowed pages in xa that another host replaced
 * (copy-up, truncate); pinned: xa is pin_pg (pin_lock held). */
static void daxfs_reval_pages(struct inode *inode, struct xarray *xa, bool pinned)
{
	unsigned long idx;
	void *v;

	xa_for_each(xa, idx, v) {
		if (daxfs_still_borrowed(inode, idx))
			continue;
		unmap_mapping_pages(inode->i_mapping, idx, 1, false);
		xa_erase(xa, idx);
		if (pinned)
			daxfs_put_slot(inode, xa_to_value(v));
		cond_resched();
	}
}

/* Zaps our PTEs of the pages in xa that the file no longer shows at their
 * pgoff (pin_lock held): pool_pg's pool pages truncated (or truncated and
 * regrown), and hole_pg's zero pages (recorded as page 0) of holes that
 * another host filled since, which read-only shared mappings must show as
 * read(2) does.  A page another host's ZERO_RANGE made unwritten goes
 * too: a store through our old PTE would land in it with the flag set;
 * the next fault clears the flag first.  Errors zap too: only an unmapped
 * page may be reused, and a fault looks again. */
static void daxfs_reval_pool(struct inode *inode, struct xarray *xa)
{
	unsigned long idx;
	bool unw;
	u64 pg;
	void *v;

	xa_for_each(xa, idx, v) {
		if (!daxfs_block_state(DAXFS_FS(inode->i_sb), inode->i_ino, idx,
				       &pg, &unw) &&
		    pg == (u64)xa_to_value(v) << PAGE_SHIFT && !unw)
			continue;
		unmap_mapping_pages(inode->i_mapping, idx, 1, false);
		xa_erase(xa, idx);
		cond_resched();
	}
}

/* Zaps our PMDs of the runs that the file no longer shows whole at their
 * place (pin_lock held): a run another host's truncate, punch or drop
 * reached (split into a leaf, or gone), or another run there since.  A
 * zap takes the whole PMD; the next fault maps what the file shows now. */
static void daxfs_reval_runs(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	unsigned long idx;
	u64 run;
	void *v;

	xa_for_each(&ei->pmd_pg, idx, v) {
		if (!daxfs_block_run(DAXFS_FS(inode->i_sb), inode->i_ino,
				     (u64)idx * PTRS_PER_PMD, false, &run) &&
		    run == (u64)xa_to_value(v) << PAGE_SHIFT)
			continue;
		unmap_mapping_pages(inode->i_mapping, idx * PTRS_PER_PMD,
				    PTRS_PER_PMD, false);
		xa_erase(&ei->pmd_pg, idx);
		cond_resched();
	}
}

/* No revalidation possible (the inode is gone, this host was declared
 * dead, an error): every region page this host maps of inode goes. */
static void daxfs_mmap_zap(struct inode *inode)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	mutex_lock(&ei->pin_lock);
	unmap_mapping_range(inode->i_mapping, 0, 0, 0);
	xa_destroy(&ei->pool_pg);
	xa_destroy(&ei->hole_pg);
	xa_destroy(&ei->pmd_pg);
	mutex_unlock(&ei->pin_lock);
}

/*
 * The inode was just refreshed and change is the counter that refresh
 * loaded: when it moved since the last pass, revalidate each borrowed
 * page, and with pool (the lease work's pass) each pool page.  The pass
 * must use the value its own refresh loaded after its epoch, never
 * ei->change, which a concurrent refresh may have set back to an older
 * value (then the walk would be skipped and the epoch announced over
 * pages still mapped).
 * O(pages recorded) when the file changed, one comparison otherwise.
 * Takes pin_lock, then i_mmap_rwsem (unmap); the caller holds no lock.
 */
void daxfs_mmap_revalidate(struct inode *inode, u64 change, bool pool)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);

	/*
	 * change was read before the walk: a copy-up counted in it is
	 * visible to the walk, and a later one moves it again.  A fault
	 * records its page under pin_lock with its lookup, so it either
	 * precedes the walk (checked) or looked after the copy-up.
	 */
	mutex_lock(&ei->pin_lock);
	if (change != ei->reval_change) {
		daxfs_reval_pages(inode, &ei->pin_pg, true);
		daxfs_reval_pages(inode, &ei->base_pg, false);
		daxfs_reval_pool(inode, &ei->hole_pg);
		ei->reval_change = change;
	}
	if (pool && change != ei->pool_change) {
		daxfs_reval_pool(inode, &ei->pool_pg);
		daxfs_reval_runs(inode);
		ei->pool_change = change;
	}
	mutex_unlock(&ei->pin_lock);
}

/*
 * fn(inode) for every inode of this mount that has a mapping, one at a
 * time and without mapped_lock (fn may sleep).  An inode mapped or
 * unmapped meanwhile may be missed or visited: callers act on what is
 * mapped at their start, and later mappings fault through them anyway.
 * The caller holds walk_lock: the walk moves the list aside, and a second
 * walk meanwhile would find it empty and skip every inode.
 */
static void __daxfs_mapped_each(struct daxfs_sb_info *sbi,
				void (*fn)(struct inode *inode))
{
	struct daxfs_inode_info *ei;
	struct inode *inode;
	LIST_HEAD(todo);

	lockdep_assert_held(&sbi->walk_lock);
	spin_lock(&sbi->mapped_lock);
	list_splice_init(&sbi->mapped, &todo);
	while (!list_empty(&todo)) {
		ei = list_first_entry(&todo, struct daxfs_inode_info, mapped_link);
		/* back on the mount's list; the last unmap takes it off
		 * either list under mapped_lock */
		list_move_tail(&ei->mapped_link, &sbi->mapped);
		inode = igrab(&ei->vfs_inode);
		spin_unlock(&sbi->mapped_lock);
		if (inode) {
			fn(inode);
			iput(inode);
		}
		cond_resched();
		spin_lock(&sbi->mapped_lock);
	}
	spin_unlock(&sbi->mapped_lock);
}

void daxfs_mapped_each(struct daxfs_sb_info *sbi, void (*fn)(struct inode *inode))
{
	mutex_lock(&sbi->walk_lock);
	__daxfs_mapped_each(sbi, fn);
	mutex_unlock(&sbi->walk_lock);
}

static void daxfs_mmap_revalidate_one(struct inode *inode)
{
	u64 change;

	/* a smaller size unmaps the tail (refresh) */
	if (daxfs_refresh_inode_change(inode, &change) == 0)
		daxfs_mmap_revalidate(inode, change, true);
	else
		daxfs_mmap_zap(inode);
}

/*
 * Lease work: every inode mapped on this host, one tick's staleness; then
 * announce the epoch the pass began at, so that the pool pages unlinked
 * before it (and zapped by it) may be reused.  Declared dead: refreshes
 * fail, every mapping is zapped, and nothing is announced.
 */
static void __daxfs_mmap_revalidate_all(struct daxfs_sb_info *sbi)
{
	u64 e = daxfs_map_pass_epoch(&sbi->fs);

	__daxfs_mapped_each(sbi, daxfs_mmap_revalidate_one);
	/* under mapped_lock: a first mapping (daxfs_vm_open) announces
	 * itself, and this store cannot undo that */
	spin_lock(&sbi->mapped_lock);
	daxfs_map_announce(&sbi->fs, list_empty(&sbi->mapped) ? 0 : e);
	spin_unlock(&sbi->mapped_lock);
}

void daxfs_mmap_revalidate_all(struct daxfs_sb_info *sbi)
{
	/* one pass at a time (the lease work's, an asked one), and no other
	 * walk (freeze) during it: the empty list must mean that nothing is
	 * mapped, and the epoch loaded must precede the whole walk */
	mutex_lock(&sbi->walk_lock);
	__daxfs_mmap_revalidate_all(sbi);
	mutex_unlock(&sbi->walk_lock);
}

/*
 * A host waiting for space may ask us for a pass before our lease tick
 * (docs/reclaim.md "Asking for a pass"): while this mount maps anything,
 * look every DAXFS_ASK_MS (three loads) and pass at once when asked.  The
 * first mapping of an inode queues this work (daxfs_vm_open); it stops
 * itself once nothing is mapped, so an idle mount never wakes for it.
 */
void daxfs_ask_work(struct work_struct *work)
{
	struct daxfs_sb_info *sbi = container_of(to_delayed_work(work),
						 struct daxfs_sb_info, ask_work);
	bool mapped;

	/* declared dead, shut down, the host table on a bad page: our slot
	 * is not ours (or not safe) to load; the lease work zaps every
	 * mapping and announces nothing */
	if (READ_ONCE(sbi->dead) || daxfs_media_fixed_bad(&sbi->fs))
		return;
	/* walk_lock also for the look at the list: a walk in progress has
	 * moved it aside, and the poll would stop while inodes are mapped */
	mutex_lock(&sbi->walk_lock);
	if (daxfs_map_pass_asked(&sbi->fs))
		__daxfs_mmap_revalidate_all(sbi);
	spin_lock(&sbi->mapped_lock);
	mapped = !list_empty(&sbi->mapped);
	spin_unlock(&sbi->mapped_lock);
	mutex_unlock(&sbi->walk_lock);
	/* a mapping made after the look queues us itself (daxfs_vm_open) */
	if (mapped)
		queue_delayed_work(system_long_wq, &sbi->ask_work, sbi->ask_jiffies);
}

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
	if (off) {
		void *dst = kmap_local_page(page);
		/* a bad block, or poison not listed yet: SIGBUS, no panic */
		unsigned long left = daxfs_media_good(sbi, off, PAGE_SIZE) < PAGE_SIZE ? PAGE_SIZE :
				     copy_mc_to_kernel(dst, sbi->kaddr + off, PAGE_SIZE);

		kunmap_local(dst);
		if (left) {
			put_page(page);
			return VM_FAULT_SIGBUS;
		}
	} else {
		clear_highpage(page);
	}
	vmf->page = page;
	return 0;
}

static vm_fault_t daxfs_fault_err(struct inode *inode, int err)
{
	if (err == -ENOSPC)
		return VM_FAULT_SIGBUS;
	return daxfs_backing_err(inode->i_sb, err, "fault") == -ENOMEM ?
	       VM_FAULT_OOM : VM_FAULT_SIGBUS;
}

/* A PTE of pfn at the fault address.  A VM_PFNMAP mapping (daxfs_mmap)
 * takes vmf_insert_pfn, which maps with the mapping's protection: a store
 * then faults once more, through ->pfn_mkwrite. */
static vm_fault_t daxfs_insert_pte(struct vm_fault *vmf, daxfs_pfn_t pfn, bool write)
{
	if (vmf->vma->vm_flags & VM_PFNMAP)
		return vmf_insert_pfn(vmf->vma, vmf->address, daxfs_pfn_val(pfn));
	if (write)
		return daxfs_insert_mixed_mkwrite(vmf->vma, vmf->address, pfn);
	return vmf_insert_mixed(vmf->vma, vmf->address, pfn);
}

/* Maps region page off (0: a hole) at the fault address. */
static vm_fault_t daxfs_fault_insert(struct vm_fault *vmf, struct daxfs_sb_info *sbi,
				     u64 off, bool write)
{
	daxfs_pfn_t pfn;

	if (!off) {
		/* a hole in a private or read-only mapping reads as zeros */
		if (write)
			return VM_FAULT_SIGBUS;
		return daxfs_insert_pte(vmf, daxfs_zero_pfn(vmf->address), false);
	}
	/* a listed bad block is never mapped (a load would be a machine
	 * check in the process: SIGBUS now instead) */
	if (daxfs_media_good(sbi, off, PAGE_SIZE) < PAGE_SIZE)
		return VM_FAULT_SIGBUS;
	pfn = daxfs_dev_pfn(sbi->base_pfn + (off >> PAGE_SHIFT));
	return daxfs_insert_pte(vmf, pfn, write);
}

static bool daxfs_off_ok(struct daxfs_sb_info *sbi, u64 off)
{
	return !off || (!(off & (PAGE_SIZE - 1)) && off + PAGE_SIZE <= sbi->size);
}

/* A page of the base image (borrowed, like a cache slot). */
static bool daxfs_base_page(struct daxfs_sb_info *sbi, u64 off)
{
	return off && off >= sbi->fs.base_off &&
	       off - sbi->fs.base_off < sbi->fs.base_size;
}

/* A pool page about to be mapped at pgoff, or (off 0) the zero page for a
 * hole (pin_lock held). */
static int daxfs_note_pool_page(struct inode *inode, pgoff_t pgoff, u64 off)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	void *old;

	if (!off)
		/* the zero page goes when the hole is filled: here by a
		 * write or a write fault, elsewhere seen by revalidation */
		return xa_err(xa_store(&ei->hole_pg, pgoff, xa_mk_value(0), GFP_NOFS));
	if (xa_erase(&ei->hole_pg, pgoff))
		/* filled (a write fault of another mapping of ours, or
		 * another host): the zero page of other mappings goes */
		unmap_mapping_pages(inode->i_mapping, pgoff, 1, false);
	old = xa_load(&ei->pool_pg, pgoff);
	if (old && xa_to_value(old) != off >> PAGE_SHIFT)
		/* one page per pgoff is tracked: other mappings that may
		 * still show the old one (freed elsewhere) go first */
		unmap_mapping_pages(inode->i_mapping, pgoff, 1, false);
	return xa_err(xa_store(&ei->pool_pg, pgoff, xa_mk_value(off >> PAGE_SHIFT),
			       GFP_NOFS));
}

/*
 * No copy-up wanted (read fault of a read-only or private
 * mapping, or a private write fault's source page): the cached slot
 * itself, pinned.  -EAGAIN: a page that must be copied (the caller's
 * generic path does it).
 */
static vm_fault_t daxfs_fault_cached(struct vm_fault *vmf, struct inode *inode,
				     bool *fallback)
{
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	struct daxfs_pcache_pin pin;
	vm_fault_t ret;
	u64 off = 0;
	int err;

	mutex_lock(&ei->pin_lock);
	err = daxfs_pcache_map_block(&sbi->fs, inode->i_ino, vmf->pgoff, &off, &pin);
	if (err) {
		mutex_unlock(&ei->pin_lock);
		if (err == -EAGAIN) {
			*fallback = true;
			return 0;
		}
		return daxfs_fault_err(inode, err);
	}
	if (!daxfs_off_ok(sbi, off)) {
		daxfs_pcache_unpin(&sbi->fs, &pin);
		mutex_unlock(&ei->pin_lock);
		return VM_FAULT_SIGBUS;
	}
	if (vmf->cow_page) {
		/* a private copy: the slot need not stay pinned */
		ret = daxfs_fault_cow(vmf, sbi, off);
		daxfs_pcache_unpin(&sbi->fs, &pin);
		mutex_unlock(&ei->pin_lock);
		return ret;
	}
	if (pin.slot != DAXFS_PC_NO_SLOT)
		err = daxfs_keep_pin(inode, vmf->pgoff, &pin);
	else if (daxfs_base_page(sbi, off))
		err = xa_err(xa_store(&ei->base_pg, vmf->pgoff,
				      xa_mk_value(off >> PAGE_SHIFT), GFP_NOFS));
	else
		err = daxfs_note_pool_page(inode, vmf->pgoff, off);
	if (err) {
		mutex_unlock(&ei->pin_lock);
		return VM_FAULT_OOM;
	}
	ret = daxfs_fault_insert(vmf, sbi, off, false);
	mutex_unlock(&ei->pin_lock);
	return ret;
}

static vm_fault_t __daxfs_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	bool shared = vma->vm_flags & VM_SHARED;
	bool based = sbi->fs.base_off != 0;
	bool alloc, fallback = false;
	u64 off = 0;
	vm_fault_t ret;
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
	if (based && !alloc && (!write || vmf->cow_page)) {
		ret = daxfs_fault_cached(vmf, inode, &fallback);
		if (!fallback)
			return ret;
	}
	/* lookup, record and insert as one step against the lease pass */
	mutex_lock(&ei->pin_lock);
	err = daxfs_map_block(&sbi->fs, inode->i_ino, vmf->pgoff, alloc, &off);
	if (err) {
		ret = daxfs_fault_err(inode, err);
		goto out;
	}
	ret = VM_FAULT_SIGBUS;
	if (!daxfs_off_ok(sbi, off))
		goto out;
	if (based && alloc)
		/* copied up: our read-only mappings of the borrowed page go */
		__daxfs_mmap_drop_range(inode, (u64)vmf->pgoff << PAGE_SHIFT,
					((u64)vmf->pgoff + 1) << PAGE_SHIFT);
	if (vmf->cow_page) {
		ret = daxfs_fault_cow(vmf, sbi, off);
		goto out;
	}
	ret = VM_FAULT_OOM;
	if (!daxfs_base_page(sbi, off) && daxfs_note_pool_page(inode, vmf->pgoff, off))
		goto out;
	ret = daxfs_fault_insert(vmf, sbi, off, write);
out:
	mutex_unlock(&ei->pin_lock);
	return ret;
}

/* Serialised against truncate on this host (daxfs_k_setattr holds the
 * lock exclusive from its unmap until i_size is new), as ext4 and xfs
 * do; other hosts' truncates are the lease pass's (docs/kernel.md). */
static vm_fault_t daxfs_fault(struct vm_fault *vmf)
{
	struct address_space *mapping = vmf->vma->vm_file->f_mapping;
	bool started;
	vm_fault_t ret;

	started = daxfs_k_fault_start(vmf);	/* a store is coming */
	filemap_invalidate_lock_shared(mapping);
	ret = __daxfs_fault(vmf);
	filemap_invalidate_unlock_shared(mapping);
	daxfs_k_fault_end(vmf, started);
	return ret;
}

#if DAXFS_PMD_MAPS
/*
 * A run (format 11: 512 pool pages, contiguous and 2 MiB aligned) mapped
 * with one PMD, as ext4 -o dax maps an aligned extent: a VM_PFNMAP
 * mapping (-o pmd, daxfs_mmap) whose 2 MiB at the fault lies wholly inside
 * the vma, below EOF, aligned to the file's 2 MiB and on a run whose
 * frames are 2 MiB aligned and good.  Anything else falls back to PTEs.
 * Recorded in pmd_pg under pin_lock with its lookup, as a PTE's pool page
 * (the lease pass zaps it before announcing, docs/kernel.md "PMD mappings
 * of runs").
 */
static vm_fault_t __daxfs_huge_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct inode *inode = file_inode(vma->vm_file);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);
	unsigned long haddr = vmf->address & PMD_MASK;
	pgoff_t first = vmf->pgoff - ((vmf->address - haddr) >> PAGE_SHIFT);
	bool writable = (vma->vm_flags & VM_MAYWRITE) && !sb_rdonly(inode->i_sb);
	vm_fault_t ret = VM_FAULT_FALLBACK;
	unsigned long pfn;
	void *old;
	u64 run;

	/* a mapping that copies on write is VM_MIXEDMAP (daxfs_mmap) */
	if (!(vma->vm_flags & VM_PFNMAP) || READ_ONCE(sbi->dead) ||
	    haddr < vma->vm_start || haddr + PMD_SIZE > vma->vm_end ||
	    (first & (PTRS_PER_PMD - 1)) ||
	    ((u64)first + PTRS_PER_PMD) << PAGE_SHIFT > (u64)i_size_read(inode))
		return VM_FAULT_FALLBACK;
	mutex_lock(&ei->pin_lock);
	/* an error: the PTE fault says what it is */
	if (daxfs_block_run(&sbi->fs, inode->i_ino, first, writable, &run) ||
	    !run || run + PMD_SIZE > sbi->size)
		goto out;
	pfn = sbi->base_pfn + (run >> PAGE_SHIFT);
	if ((pfn & (PTRS_PER_PMD - 1)) || daxfs_media_good(sbi, run, PMD_SIZE) < PMD_SIZE)
		goto out;
	old = xa_load(&ei->pmd_pg, first / PTRS_PER_PMD);
	if (old && xa_to_value(old) != run >> PAGE_SHIFT)
		/* one run per 2 MiB is tracked: other mappings that may
		 * still show the old one (freed elsewhere) go first */
		unmap_mapping_pages(inode->i_mapping, first, PTRS_PER_PMD, false);
	ret = VM_FAULT_OOM;
	if (xa_err(xa_store(&ei->pmd_pg, first / PTRS_PER_PMD,
			    xa_mk_value(run >> PAGE_SHIFT), GFP_NOFS)))
		goto out;
	ret = vmf_insert_pfn_pmd(vmf, daxfs_dev_pfn(pfn), vmf->flags & FAULT_FLAG_WRITE);
out:
	mutex_unlock(&ei->pin_lock);
	return ret;
}

/* As daxfs_fault: against this host's truncate, and times on a store. */
static vm_fault_t daxfs_huge_fault(struct vm_fault *vmf, unsigned int order)
{
	struct address_space *mapping = vmf->vma->vm_file->f_mapping;
	bool started;
	vm_fault_t ret;

	if (order != PMD_ORDER)
		return VM_FAULT_FALLBACK;
	started = daxfs_k_fault_start(vmf);
	filemap_invalidate_lock_shared(mapping);
	ret = __daxfs_huge_fault(vmf);
	filemap_invalidate_unlock_shared(mapping);
	daxfs_k_fault_end(vmf, started);
	return ret;
}
#endif

/* Mappings are counted, so that the last one releases the inode's cache
 * pins (->close runs after its PTEs are zapped); a mapped inode is on the
 * mount's list for the lease work's revalidation. */
static void daxfs_vm_open(struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);

	mutex_lock(&ei->pin_lock);
	if (!ei->nr_vmas++) {
		spin_lock(&sbi->mapped_lock);
		list_add_tail(&ei->mapped_link, &sbi->mapped);
		/* before any fault of it looks a pool page up */
		daxfs_map_first(&sbi->fs);
		/* asks for a pass are looked for while anything is mapped
		 * (a no-op while the poll is queued already) */
		queue_delayed_work(system_long_wq, &sbi->ask_work, sbi->ask_jiffies);
		spin_unlock(&sbi->mapped_lock);
	}
	mutex_unlock(&ei->pin_lock);
}

static void daxfs_vm_close(struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct daxfs_inode_info *ei = DAXFS_I(inode);
	struct daxfs_sb_info *sbi = DAXFS_SB(inode->i_sb);

	mutex_lock(&ei->pin_lock);
	if (ei->nr_vmas && !--ei->nr_vmas) {
		__daxfs_release_pins(inode);
		spin_lock(&sbi->mapped_lock);
		list_del_init(&ei->mapped_link);
		spin_unlock(&sbi->mapped_lock);
	}
	mutex_unlock(&ei->pin_lock);
}

static const struct vm_operations_struct daxfs_vm_ops = {
	.fault		= daxfs_fault,
#if DAXFS_PMD_MAPS
	.huge_fault	= daxfs_huge_fault,
#endif
	.pfn_mkwrite	= daxfs_k_pfn_mkwrite,
	.open		= daxfs_vm_open,
	.close		= daxfs_vm_close,
};

static int daxfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);
	int err;

	/* host-less: no slot to announce a map epoch in, so another host
	 * could reuse a mapped page for another file (docs/kernel.md) */
	if (!DAXFS_SB(inode->i_sb)->joined)
		return -ENODEV;

	err = daxfs_refresh_inode(inode);
	if (err)
		return err == -ESTALE ? -ENOENT : err;
	file_accessed(file);
	vma->vm_ops = &daxfs_vm_ops;
	daxfs_vm_open(vma);
	/*
	 * Mounted with pmd (DAXFS_PMD_MAPS kernels only), a mapping that never
	 * copies on write is VM_PFNMAP: the page-table walkers (pagemap,
	 * clear_refs, smaps) skip it, and they would read a huge PMD of a
	 * VM_MIXEDMAP mapping as a THP's, whose struct page a phys= region
	 * does not have.  It costs MADV_DONTNEED and mremap growth, hence
	 * the option (docs/kernel.md "PMD mappings of runs").  VM_HUGEPAGE:
	 * PMD faults also where THP is "madvise".  The test below is mm's
	 * is_cow_mapping() (vma_is_cow_mapping() in 7.x).
	 */
	if (DAXFS_PMD_MAPS && DAXFS_SB(inode->i_sb)->opts.pmd &&
	    (vma->vm_flags & (VM_SHARED | VM_MAYWRITE)) != VM_MAYWRITE)
		daxfs_vma_set_flags(vma, VM_PFNMAP | VM_HUGEPAGE);
	else
		daxfs_vma_set_flags(vma, VM_MIXEDMAP);
	return 0;
}

const struct file_operations daxfs_file_fops = {
	.llseek		= daxfs_llseek,
	.read_iter	= daxfs_read_iter,
	.write_iter	= daxfs_write_iter,
	.mmap		= daxfs_mmap,
#if DAXFS_PMD_MAPS
	/* a mapping of 2 MiB or more placed so that runs can map with PMDs */
	.get_unmapped_area = thp_get_unmapped_area,
#endif
	.open		= daxfs_open,
	.release	= daxfs_release,
	.fsync		= daxfs_fsync,
	.splice_read	= daxfs_splice_read,
	.splice_write	= iter_file_splice_write,
	.fallocate	= daxfs_k_fallocate,
	.unlocked_ioctl	= daxfs_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.lock		= daxfs_k_lock,
	.flock		= daxfs_k_flock,
	/* a lease would not be broken by another host's open: refused */
	.setlease	= daxfs_nosetlease,
};

const struct address_space_operations daxfs_aops = {
	.direct_IO	= noop_direct_IO,
	.dirty_folio	= noop_dirty_folio,
};
