/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs: the user-space DaxFS host.
 *
 * A process that opens a region with daxfs_region_open() becomes a host of
 * the filesystem: it maps the region, joins the host table and keeps its
 * lease alive from a heartbeat thread.  On top of the portable core
 * (core/daxfs_core.h, which this header includes) the library offers:
 *
 *   - region open/close/create (mkfs) for regular files, /dev/shm files,
 *     pmem block devices and devdax character devices;
 *   - a POSIX-like path API (absolute paths inside the filesystem);
 *   - file I/O by inode number (pread/pwrite/append);
 *   - layout and host information for `daxfs info`;
 *   - an error-string helper that tells the user what to do.
 *
 * Conventions:
 *   - Every function returning int returns 0 (or a count) on success and a
 *     negative errno on failure, like the core.  -EUCLEAN means the region
 *     holds something the core refuses to trust: run fsck.daxfs.
 *   - Paths are absolute inside the filesystem ("/" is the root; a missing
 *     leading '/' is accepted and means the same).  Repeated slashes and
 *     "." components are ignored, ".." goes to the parent directory.
 *     Symbolic links in intermediate components are always followed (at
 *     most DAXFS_SYMLOOP_MAX in one resolution, then -ELOOP); the final
 *     component is followed or not as each call documents.  Symlink
 *     targets are interpreted inside the filesystem: an absolute target
 *     starts again at the filesystem root.
 *   - No permission checks are made: the library acts with the rights of
 *     whoever can map the region.  New objects are owned by the handle's
 *     credentials (daxfs_set_creds(), default: effective uid/gid).  The
 *     mode given is used as is (no umask).
 *   - A handle may be used from several threads at once.
 *   - Fork: a child process never reuses its parent's host identity.  On
 *     the child's first use of an inherited handle the library joins the
 *     host table again as a new host (and starts a new heartbeat thread).
 *     The parent's handle is unaffected.
 */
#ifndef DAXFS_LIBDAXFS_H
#define DAXFS_LIBDAXFS_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "../../core/daxfs_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Regions                                                             */
/* ------------------------------------------------------------------ */

struct daxfs_handle;		/* opaque */

/* daxfs_region_open() flags */
#define DAXFS_OPEN_RDONLY	(1u << 0)	/* map read-only, never join */
#define DAXFS_OPEN_NOJOIN	(1u << 1)	/* map read-write, do not join
						 * (fsck); writes fail -EROFS */
#define DAXFS_OPEN_NO_HEARTBEAT	(1u << 2)	/* join but renew the lease only
						 * when the caller calls
						 * daxfs_region_renew() */
#define DAXFS_OPEN_PERSISTENT	(1u << 3)	/* flush cache lines (pmem);
						 * default for pmem and devdax */
#define DAXFS_OPEN_VALIDATE	(1u << 4)	/* full base image validation */
#define DAXFS_OPEN_SYNC		(1u << 5)	/* PERSISTENT, and every call
						 * drains its flushes before it
						 * returns (docs/modes.md) */
#define DAXFS_OPEN_STRICT	(1u << 6)	/* SYNC, and each write is atomic
						 * for strict readers on every
						 * host (docs/modes.md) */
#define DAXFS_OPEN_ATOMIC_READ	(1u << 7)	/* reads never see part of a
						 * strict write or a shrink
						 * (implied by STRICT; the
						 * FUSE mount sets it) */
#define DAXFS_OPEN_PREFAULT	(1u << 8)	/* map the whole region into
						 * this process's page tables
						 * at open: no page fault on
						 * the region later, and fresh
						 * page batches are not mapped
						 * one by one (docs/libdaxfs.md
						 * "Pre-faulting the region") */

/*
 * Maps the filesystem at path and, unless RDONLY or NOJOIN, joins the host
 * table as "<hostname>:<pid>" and starts a heartbeat thread renewing the
 * lease every lease/4.
 *
 * path may be a regular file (or a file in /dev/shm), a block device (pmem:
 * size from BLKGETSIZE64) or a devdax character device (/dev/daxX.Y: size
 * from sysfs, mapped MAP_SHARED with 2 MiB alignment).
 *
 * A regular file opened for writing first gets all of its holes allocated
 * (fallocate(2)): a store into a hole of a file on a full filesystem would
 * be a SIGBUS in the middle of an operation.  Where the filesystem cannot
 * fallocate (EOPNOTSUPP), the holes stay and that risk with them.
 *
 * Errors: -ENOENT/-EACCES... from open(2); -EINVAL not a DaxFS region or an
 * unsupported version; -EUCLEAN corrupt superblock; -EBUSY host table full;
 * -ENOMEM out of memory, or the file has holes that its filesystem has no
 * room to allocate (nothing was changed).
 */
int daxfs_region_open(const char *path, unsigned int flags,
		      struct daxfs_handle **out);

/*
 * Maps [p, p + len) of h's region (an address inside the mapping,
 * daxfs_page_map()) into this process's page tables now, and records it:
 * writes there need not fault the page in first (docs/libdaxfs.md
 * "Pre-faulting the region").  -EINVAL: p is not in the region, or the
 * kernel is older than 5.14 (no MADV_POPULATE_*).
 */
int daxfs_region_populate(struct daxfs_handle *h, const void *p,
			  uint64_t len);

/*
 * Split mode (docs/pcache.md): a filesystem made with
 * `mkfs.daxfs --source DIR --backing FILE...` keeps file data in backing
 * files and caches it in the region's shared page cache.  Open it with the
 * backing files this host can reach (any order, any subset; none is fine:
 * pages other hosts cached are readable, and missing ones are filled by a
 * host that can reach them, or fail with -ETIMEDOUT after fill_timeout_ms).
 * A file that is not one of the filesystem's backing files: -EMEDIUMTYPE.
 * With backing files a helper thread serves other hosts' fill requests.
 */
struct daxfs_open_opts {
	unsigned int flags;		/* DAXFS_OPEN_* */
	const char *const *backing;	/* paths of backing files */
	unsigned int nr_backing;
	uint32_t fill_timeout_ms;	/* bounded waits (0: 2 x lease) */
	int no_helper;			/* do not serve other hosts' requests */
};
int daxfs_region_open_opts(const char *path, const struct daxfs_open_opts *o,
			   struct daxfs_handle **out);

/* Stops the heartbeat, leaves the host table, unmaps and frees h. */
void daxfs_region_close(struct daxfs_handle *h);

/*
 * Shuts this host down as if it had crashed, FS_IOC_SHUTDOWN's twin
 * (docs/kernel.md "Shutdown"): the calls in flight run to their end,
 * every later call fails with EIO, the lease is no longer renewed, and
 * daxfs_region_close() gives the slot up as DEAD, so that the next host
 * to look recovers it at once (its open files and locks).  Safe from any
 * thread, repeated or not.
 */
void daxfs_region_shutdown(struct daxfs_handle *h);

/*
 * The core view of the region, for callers that use the core API directly
 * (daxfs_lookup, daxfs_readdir, ...).  Also performs the lazy re-join after
 * a fork, so call it again in a child rather than caching the pointer
 * across fork().
 */
struct daxfs_fs *daxfs_handle_fs(struct daxfs_handle *h);

/*
 * How many times h joined again as a new host (declared dead while alive,
 * or first used in a fork child).  A front end that keeps opens of its
 * own (tools/fuse) notes it before daxfs_file_open(): an open noted with
 * an older count lost its open-set entry and is stale.
 */
uint64_t daxfs_handle_joins(struct daxfs_handle *h);

/* daxfs_region_watch_hosts() for a core view opened without a handle
 * (fsck.daxfs): attaches an observation table to fs when it has none
 * (freed with free(fs->obs)).  Returns the hosts still undecided, or
 * -ENOMEM. */
int daxfs_fs_watch_hosts(struct daxfs_fs *fs);

/* Renews the lease now (needed only with DAXFS_OPEN_NO_HEARTBEAT).
 * Returns -ESTALE if this host had been declared dead (it then re-joins
 * as a new host on its next operation). */
int daxfs_region_renew(struct daxfs_handle *h);

/* Credentials used for new objects (default: geteuid()/getegid()). */
void daxfs_set_creds(struct daxfs_handle *h, uint32_t uid, uint32_t gid);

/* Kind of target a handle (or a path) maps. */
enum daxfs_target_kind {
	DAXFS_TARGET_FILE = 0,		/* regular file, /dev/shm file */
	DAXFS_TARGET_BLOCK = 1,		/* block device (pmem) */
	DAXFS_TARGET_DEVDAX = 2,	/* /dev/daxX.Y */
};

/*
 * Opens path for mapping and tells its kind and usable size (a regular
 * file: its length; a block device: BLKGETSIZE64; devdax: sysfs size).
 * Returns the open file descriptor (caller closes; never 0, 1 or 2:
 * daxfs_fd_above_std) or -errno.
 */
int daxfs_target_open(const char *path, int oflags, enum daxfs_target_kind *kind,
		      uint64_t *size);

/*
 * fd moved off the standard descriptors (0, 1, 2), close-on-exec, where
 * a program's stray read or write would reach it; other numbers as they
 * are.  -EMFILE (fd closed) when no number above 2 is free.
 */
int daxfs_fd_above_std(int fd);

/*
 * The page size a target open on fd is mapped with at least: a hugetlbfs
 * file's huge page size (its size must be a multiple of it), else the
 * system page size.
 */
uint64_t daxfs_target_page_size(int fd);

/*
 * 2 MiB pages for the region at path where the kernel can give them (a
 * file on a tmpfs, Linux 6.1: docs/libdaxfs.md "Huge pages"), as mkfs
 * gives a new region unless told small_pages; safe while hosts use it.
 * *huge gets the bytes now on pages of 2 MiB or more (hugetlbfs and
 * devdax: all), *total the region's size.  Returns 0 or -errno.
 */
int daxfs_region_huge_pages(const char *path, uint64_t *huge, uint64_t *total);

/* mkfs options.  Zero means "automatic" for every numeric field. */
struct daxfs_mkfs_opts {
	int force;			/* overwrite an existing filesystem */
	uint64_t nr_buckets;		/* overlay buckets (power of two) */
	uint32_t max_hosts;		/* host table entries (<= 256) */
	uint32_t lease_ms;		/* host lease, default 10000 */
	const char *label;		/* up to 31 bytes */
	uint32_t root_mode;		/* empty root: default 0755 */
	uint32_t root_uid, root_gid;	/* empty root: default 0/0 */
	uint64_t pcache_size;		/* reserved page-cache region */
	/*
	 * Base image.  With base_size > 0 a BASE region of base_size bytes
	 * (rounded up to 4 KiB) is reserved and, after daxfs_format(),
	 * base_writer(base_ctx, base, base_size) is called with a pointer to
	 * that region to write the image (header, inode table, dirents,
	 * data).  first_dyn_ino must be the number of base inodes + 1; the
	 * root is base inode 1.  A non-zero return from base_writer aborts
	 * mkfs with that (negative errno) value.
	 */
	uint64_t base_size;
	uint64_t first_dyn_ino;
	int (*base_writer)(void *ctx, void *base, uint64_t base_size);
	void *base_ctx;
	/*
	 * Split mode (pcache_size > 0): page cache probe window (0: 32) and
	 * the backing files the base image's files live in (descriptors as
	 * written into their header pages; see docs/pcache.md).
	 */
	uint32_t pcache_window;
	uint32_t nr_backing;
	const struct daxfs_backing_desc *backing;
	/*
	 * A region file on a tmpfs gets 2 MiB pages where the kernel can
	 * give them (MADV_COLLAPSE, Linux 6.1; docs/libdaxfs.md "Huge
	 * pages"), which costs mkfs about 1-3 ms per 2 MiB.  small_pages
	 * keeps the tmpfs's own pages (4 KiB on /dev/shm as mounted).
	 */
	int small_pages;
	/* Out, when not NULL: the bytes of the region on pages of 2 MiB or
	 * more (hugetlbfs and devdax: all of it; a tmpfs: what the kernel
	 * gave; other files: 0). */
	uint64_t *huge_bytes;
};

/* Fills buf with len bytes from getrandom(2) (uuids, hash keys, backing
 * file ids).  Returns 0 or -errno. */
int daxfs_random_bytes(void *buf, size_t len);

/*
 * mkfs: creates (or extends) a regular file to size bytes, or uses a block
 * or devdax device as is (size 0 = the whole device; a size larger than
 * the device fails -ENOSPC).  size 0 with an existing regular file uses
 * its current length.  Refuses (-EEXIST) to overwrite a region that
 * already holds a DaxFS superblock unless o->force.  The uuid and the name
 * hash key come from getrandom(2).  After writing, the region is opened
 * once read-only to validate what was written.  o may be NULL.
 * A regular file gets all of its memory allocated first: -ENOMEM when its
 * filesystem has no room for the whole region.  On any failure a file
 * that mkfs created is removed and an existing one is given back its old
 * size.  A new file reads as zeros, so its bucket array is not written.
 */
int daxfs_region_create(const char *path, uint64_t size,
			const struct daxfs_mkfs_opts *o);

/* Seals this host's retired objects, advances the reclamation epoch and
 * frees everything no host can still read (core daxfs_reclaim_all()).
 * The space then shows in statfs.  -EROFS when not joined. */
int daxfs_region_reclaim(struct daxfs_handle *h);

/* Watches the other hosts' heartbeat counters (timed with this process's
 * monotonic clock, never compared with their clocks: docs/hosts.md
 * "Leases") until the lease of each is known, live or run out, or about
 * one lease has passed.  A joined handle's heartbeat thread watches all
 * along; a tool that opened the region just now calls this before it
 * trusts daxfs_info()'s expired flags.  Returns how many hosts are still
 * undecided (0: all known). */
int daxfs_region_watch_hosts(struct daxfs_handle *h);

/* ------------------------------------------------------------------ */
/* Path API                                                            */
/* ------------------------------------------------------------------ */

#define DAXFS_SYMLOOP_MAX	40

/* Resolves path to an inode number.  follow != 0: a symlink as the final
 * component is followed. */
int daxfs_path_resolve(struct daxfs_handle *h, const char *path, int follow,
		       uint64_t *ino);

/* stat (follows a final symlink) and lstat (does not). */
int daxfs_path_stat(struct daxfs_handle *h, const char *path,
		    struct daxfs_attr *st);
int daxfs_path_lstat(struct daxfs_handle *h, const char *path,
		     struct daxfs_attr *st);
/* Attributes by inode number. */
int daxfs_fstat(struct daxfs_handle *h, uint64_t ino, struct daxfs_attr *st);

/* mkdir: -EEXIST if the name exists (even a dangling symlink). */
int daxfs_path_mkdir(struct daxfs_handle *h, const char *path, uint32_t mode);

/* mknod: mode carries the type (S_IFREG/S_IFIFO/S_IFSOCK/S_IFCHR/S_IFBLK;
 * no type bits means S_IFREG).  rdev is a Linux dev_t. */
int daxfs_path_mknod(struct daxfs_handle *h, const char *path, uint32_t mode,
		     uint64_t rdev);

/* daxfs_path_create() flags */
#define DAXFS_CREATE_EXCL	(1u << 0)	/* -EEXIST if it exists (O_EXCL) */
#define DAXFS_CREATE_TRUNC	(1u << 1)	/* truncate an existing file */

/*
 * Creates a regular file (type bits of mode are ignored).  Without
 * DAXFS_CREATE_EXCL an existing name is opened instead: a final symlink is
 * followed (a dangling one gives -ENOENT: the target is not created), a
 * directory gives -EISDIR.  *ino (may be NULL) receives the
 * inode number.  Returns 1 when the file was created, 0 when it existed.
 */
int daxfs_path_create(struct daxfs_handle *h, const char *path, uint32_t mode,
		      unsigned int flags, uint64_t *ino);

/*
 * O_TMPFILE: a regular file with no name in directory dirpath, held open
 * by this handle (as daxfs_file_open; daxfs_file_close frees it unless it
 * was linked meanwhile; a crash of this host frees it too).  *ino gets
 * its number.  daxfs_link_open gives a file this handle holds open a new
 * name, even one with none left (linkat(fd, "", AT_EMPTY_PATH));
 * -ENOENT when this host does not hold it open.
 */
int daxfs_path_tmpfile(struct daxfs_handle *h, const char *dirpath,
		       uint32_t mode, uint64_t *ino);
int daxfs_link_open(struct daxfs_handle *h, uint64_t ino, const char *newpath);
int daxfs_path_unlink(struct daxfs_handle *h, const char *path);
int daxfs_path_rmdir(struct daxfs_handle *h, const char *path);
/* flags: DAXFS_RENAME_NOREPLACE, DAXFS_RENAME_EXCHANGE, DAXFS_RENAME_WHITEOUT
 * (Linux values; the whiteout is a character device 0/0 owned by the
 * handle's uid and gid, left at src in the rename's own atomic step). */
int daxfs_path_rename(struct daxfs_handle *h, const char *src, const char *dst,
		      unsigned int flags);
/* Hard link: oldpath's final symlink is not followed (like linkat(2)
 * without AT_SYMLINK_FOLLOW). */
int daxfs_path_link(struct daxfs_handle *h, const char *oldpath,
		    const char *newpath);
int daxfs_path_symlink(struct daxfs_handle *h, const char *target,
		       const char *linkpath);
/*
 * The directory the caller shows the region at (the preload's DIR): an
 * absolute symlink target that is PREFIX or lies below it names the rest
 * inside the region ("/daxfs/x" is the region's "/x"), as for a mount at
 * PREFIX.  NULL, "" or "/": none (absolute targets start at the region's
 * root).  -ENAMETOOLONG, -EINVAL for a relative PREFIX.
 *
 * With a PREFIX set, a walk that leaves the region (a symlink whose
 * absolute target is not below PREFIX, or ".." from the region's root
 * after a relative target climbed there) stops with -DAXFS_EOUTSIDE: the
 * file is not the region's.  daxfs_path_outside() then gives the
 * thread's kernel path for it (the target, or PREFIX's parent, followed
 * by what was left of the path), which the caller hands to the kernel.
 */
int daxfs_set_link_prefix(struct daxfs_handle *h, const char *prefix);
#define DAXFS_EOUTSIDE		4000	/* no errno: never shown to a user */
const char *daxfs_path_outside(void);
/* For callers that follow links themselves: -DAXFS_EOUTSIDE when target
 * (tlen bytes) leaves the region, daxfs_path_outside() then being target
 * followed by rest (may be NULL); else 0. */
int daxfs_link_outside(const struct daxfs_handle *h, const char *target,
		       size_t tlen, const char *rest);
/* on != 0: walks follow symlinks as Linux's fs.protected_symlinks = 1
 * does: a path's last name that is a link in a sticky world-writable
 * directory, of neither the handle's uid nor the directory's owner, is
 * -EACCES (links on the way are followed).  Off by default;
 * the preload sets it as its host's kernel is set.
 * daxfs_link_may_follow: that rule for the link at linkpath, for callers
 * that follow links themselves (0 when off, or the lookup's error). */
void daxfs_set_link_protect(struct daxfs_handle *h, int on);
int daxfs_link_may_follow(struct daxfs_handle *h, const char *linkpath);
/* How many symlinks the calling thread's last path call followed on its
 * way (0: the path as written is the file's own, with no link in it). */
unsigned int daxfs_path_links_followed(void);
/* A symlink target (tlen bytes, NUL-terminated) as the walk takes it,
 * in place: below daxfs_set_link_prefix's PREFIX, the region's own path
 * ("/daxfs/x": "/x", "/daxfs": "/"); else unchanged.  Its new length. */
size_t daxfs_link_in_region(const struct daxfs_handle *h, char *target,
			    size_t tlen);
/* Copies at most bufsize bytes of the target and NUL-terminates when there
 * is room.  Returns the full target length (> bufsize - 1 means it did not
 * fit). -EINVAL if path is not a symlink. */
int daxfs_path_readlink(struct daxfs_handle *h, const char *path, char *buf,
			size_t bufsize);

/* Follow a final symlink; truncate needs a regular file (-EISDIR/-EINVAL). */
int daxfs_path_truncate(struct daxfs_handle *h, const char *path,
			uint64_t size);
int daxfs_path_chmod(struct daxfs_handle *h, const char *path, uint32_t mode);
/* chattr(1): sets the attribute flags (DAXFS_FL_*, Linux's FS_*_FL values;
 * daxfs_path_stat's st->flags reads them) of path, following a final
 * symlink, as the owner with CAP_LINUX_IMMUTABLE.  -EOPNOTSUPP for an
 * unknown flag.  Every host then refuses what they forbid (docs/attrs.md). */
int daxfs_path_setflags(struct daxfs_handle *h, const char *path,
			uint32_t flags);
/* (uint32_t)-1 leaves that id unchanged.  chown follows a final
 * symlink, lchown does not. */
int daxfs_path_chown(struct daxfs_handle *h, const char *path, uint32_t uid,
		     uint32_t gid);
int daxfs_path_lchown(struct daxfs_handle *h, const char *path, uint32_t uid,
		      uint32_t gid);

/* Special time values for daxfs_path_utimens() */
#define DAXFS_UTIME_NOW		INT64_MAX
#define DAXFS_UTIME_OMIT	(INT64_MAX - 1)
/* Sets atime/mtime (ns since the epoch), ctime becomes now. */
int daxfs_path_utimens(struct daxfs_handle *h, const char *path,
		       int64_t atime_ns, int64_t mtime_ns);

/*
 * Directory listing.  Entries come in hash order; "." and ".." are not
 * reported.  The callback returns non-zero to stop (that value is returned).
 * Resolving follows a final symlink.  -ENOTDIR for a non-directory.
 */
typedef int (*daxfs_dir_cb)(void *ctx, const char *name, uint32_t len,
			    uint64_t ino, uint32_t dtype, uint64_t pos);
int daxfs_path_readdir(struct daxfs_handle *h, const char *path,
		       daxfs_dir_cb cb, void *ctx);

struct daxfs_dirent_info {
	uint64_t ino;
	uint64_t pos;			/* position of this entry */
	uint32_t dtype;			/* DT_* */
	uint32_t name_len;
	char name[DAXFS_NAME_MAX + 1];	/* NUL-terminated */
};

/*
 * Chunked listing: fills at most max entries starting at position pos
 * (0 = the beginning; "." and ".." are skipped) and stores in *next_pos
 * where to continue, DAXFS_POS_EOF at the end.  Positions stay valid
 * while the directory changes.  Returns the number of entries filled.
 */
int daxfs_path_readdir_chunk(struct daxfs_handle *h, const char *path,
			     uint64_t pos, struct daxfs_dirent_info *ents,
			     unsigned int max, uint64_t *next_pos);
/* Same by directory inode number. */
int daxfs_readdir_chunk(struct daxfs_handle *h, uint64_t dir, uint64_t pos,
			struct daxfs_dirent_info *ents, unsigned int max,
			uint64_t *next_pos);

int daxfs_region_statfs(struct daxfs_handle *h, struct daxfs_statfs *st);

/* ------------------------------------------------------------------ */
/* File I/O by inode number                                            */
/* ------------------------------------------------------------------ */

/* Reads up to len bytes at off (holes read as zeros); returns bytes read
 * (short only at end of file) or -errno. */
int64_t daxfs_pread(struct daxfs_handle *h, uint64_t ino, void *buf,
		    uint64_t len, uint64_t off);
/*
 * Writes len bytes at off; the size grows to at least off + len.  Returns
 * the bytes written or -errno.  Like pwrite(2) the count can be SHORT:
 * when the region fills part way the bytes before that point are written
 * (and the size covers only them) and their count is returned.  A caller
 * that needs all of buf must loop: the next call returns -ENOSPC.  Never
 * take a short count as done (daxfs put/write, docs/tools.md).
 */
int64_t daxfs_pwrite(struct daxfs_handle *h, uint64_t ino, const void *buf,
		     uint64_t len, uint64_t off);
/* Atomic append: reserves [size, size + len) and writes there; *at (may be
 * NULL) receives the offset.  Concurrent appenders never overlap.  Returns
 * the bytes written or -errno; a SHORT count means the region filled part
 * way: the first bytes of buf are at *at, and the unwritten tail is given
 * back when no appender came after.  Appending the rest is a new append
 * (another host's data may come between). */
int64_t daxfs_append(struct daxfs_handle *h, uint64_t ino, const void *buf,
		     uint64_t len, uint64_t *at);
int daxfs_ftruncate(struct daxfs_handle *h, uint64_t ino, uint64_t size);

/*
 * The same four through a per-open-file cache of where the inode's record
 * is (struct daxfs_fcache, core/daxfs_core.h; docs/open-files.md
 * "Per-open-file cache"): the caller keeps one per open file, zeroed at
 * open, and passes it with the inode number on every call.  Each call
 * checks it before use (a cache that no longer names ino's record is
 * dropped and the inode looked up again), so it is never wrong, only
 * useless; threads and processes may share one.  fc NULL: no cache.
 */
int64_t daxfs_pread_fc(struct daxfs_handle *h, uint64_t ino,
		       struct daxfs_fcache *fc, void *buf, uint64_t len,
		       uint64_t off);
/*
 * The lane-free part of daxfs_pread_fc alone (docs/files.md "Lane-free
 * reads"): the count, or -EAGAIN when it cannot answer (make the
 * daxfs_pread_fc call then; buf may hold anything meanwhile).  Never
 * another error.  For a caller that can undo its own look-ups when the
 * read says -EAGAIN (the preload's descriptor map, docs/preload.md).
 */
int64_t daxfs_pread_try(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, void *buf, uint64_t len,
			uint64_t off);
int64_t daxfs_pwrite_fc(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, const void *buf, uint64_t len,
			uint64_t off);
int64_t daxfs_append_fc(struct daxfs_handle *h, uint64_t ino,
			struct daxfs_fcache *fc, const void *buf, uint64_t len,
			uint64_t *at);
int daxfs_ftruncate_fc(struct daxfs_handle *h, uint64_t ino,
		       struct daxfs_fcache *fc, uint64_t size);

/*
 * fallocate(2) by inode number (docs/files.md "fallocate"): mode 0,
 * DAXFS_FALLOC_KEEP_SIZE, DAXFS_FALLOC_PUNCH_HOLE | KEEP_SIZE,
 * DAXFS_FALLOC_ZERO_RANGE (| KEEP_SIZE); the values are Linux's.
 * -EINVAL, -EFBIG, -EOPNOTSUPP, -ENOSPC (no byte changed).
 */
int daxfs_file_fallocate(struct daxfs_handle *h, uint64_t ino, int mode,
			 uint64_t off, uint64_t len);
/* lseek(2)'s SEEK_DATA / SEEK_HOLE (DAXFS_SEEK_*): *res, or -ENXIO. */
int daxfs_file_seek(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		    int whence, uint64_t *res);
/* The extents (runs of blocks with data, core/daxfs_core.h) that meet
 * [off, off + len), in order, at most max of them: returns how many, or
 * -errno.  Call again from the end of the last one for more. */
int daxfs_file_extents(struct daxfs_handle *h, uint64_t ino, uint64_t off,
		       uint64_t len, struct daxfs_extent *ext, unsigned int max);

/*
 * Open files (POSIX unlink semantics across hosts, docs/open-files.md).
 * Between daxfs_file_open and daxfs_file_close the file stays usable by
 * inode number on this host even after its last name is unlinked by any
 * host (st_nlink 0); its space comes back at the last close anywhere, or
 * when this host leaves or dies.  Each open needs its own close.
 * Errors: -ENOENT gone or already unlinked, -EISDIR a directory, -ENFILE
 * this host has 8064 files open, -EBADF close without an open.  A
 * read-only handle publishes nothing (I/O without protection).
 */
int daxfs_file_open(struct daxfs_handle *h, uint64_t ino);
int daxfs_file_close(struct daxfs_handle *h, uint64_t ino);

/*
 * Handing a process's opens over (docs/open-files.md "Opens handed
 * over"): to its fork child, which is a new host, or to its new image
 * after exec.  daxfs_handle_host() gives h's host slot and generation
 * (-ENOENT when h has not joined).  daxfs_file_open_held() is
 * daxfs_file_open that also opens a file with no name left while host
 * slot still holds it open.  daxfs_host_retire_slot() declares host slot
 * of generation gen dead now and recovers it (its opens and locks go): the
 * new image retires the slot of the image before exec once it holds
 * that one's files; -ESTALE when slot is not that host alive any more.
 */
int daxfs_handle_host(struct daxfs_handle *h, uint32_t *slot, uint64_t *gen);
int daxfs_file_open_held(struct daxfs_handle *h, uint64_t ino, uint32_t slot);
int daxfs_host_retire_slot(struct daxfs_handle *h, uint32_t slot,
			   uint64_t gen);
/* Before the retirement: host slot's locks become h's (its waiting
 * requests excepted), an OFD or flock owner in [lo, hi) moved to
 * to + (owner - lo) (a POSIX owner, the process, stays);
 * returns how many (docs/locks.md "Across exec").  Both -EROFS on a
 * host-less handle. */
int daxfs_host_adopt_locks(struct daxfs_handle *h, uint32_t slot,
			   uint64_t gen, uint64_t lo, uint64_t hi, uint64_t to);
/*
 * For a front end whose open file descriptions are shared by processes
 * that are each a host (the preload after fork; docs/locks.md
 * "Descriptions shared across hosts"): daxfs_host_process_gone() is 1
 * when host slot is ALIVE but the process that owns it has ended (this
 * machine's kernel says so: same boot and pid namespace), with *gen its
 * generation; 0 when it runs, or cannot be told.
 * daxfs_host_adopt_owner_locks(): the OFD and flock locks of owner on
 * ino that host slot (generation gen) holds become h's, only while that
 * host is ALIVE; returns how many.  daxfs_set_heartbeat_hook(): fn runs
 * on the heartbeat thread after each renewal (a quarter of a lease),
 * outside the handle's lock, never in a process that has not joined.
 */
int daxfs_host_process_gone(struct daxfs_handle *h, uint32_t slot,
			    uint64_t *gen);
int daxfs_host_adopt_owner_locks(struct daxfs_handle *h, uint32_t slot,
				 uint64_t gen, uint64_t ino, uint64_t owner);
void daxfs_set_heartbeat_hook(struct daxfs_handle *h,
			      void (*fn)(struct daxfs_handle *h, void *arg),
			      void *arg);

/*
 * Advisory locks seen by every host (docs/locks.md, docs/libdaxfs.md):
 * fcntl record locks (DAXFS_LCK_POSIX), OFD locks (DAXFS_LCK_OFD) and
 * flock (DAXFS_LCK_FLOCK, whole file) with Linux semantics.  r is a
 * struct daxfs_lock_req (core/daxfs_core.h): start and end are bytes,
 * inclusive, end DAXFS_LOCK_EOF for "to EOF and beyond"; owner 0 means
 * the calling process for POSIX locks and this handle for OFD and flock
 * (pass an id of your own per open file for several descriptions); pid 0
 * means getpid().
 * daxfs_lock: type RD/WR/UN; timeout_ms 0 tries once (F_SETLK: -EAGAIN
 * when another owner's lock conflicts), < 0 waits as long as it takes
 * (F_SETLKW; -EDEADLK for a POSIX wait that would close a cycle of
 * owners waiting for each other, on any hosts), > 0 waits at most that
 * long.  A waiter sleeps on the lock bucket's change counter (a futex
 * that unlockers of this machine wake) with bounded back-off (at most
 * 1 ms between looks).  -ENOLCK: the table
 * has no room for the ranges.  -EINTR: a signal handler installed
 * without SA_RESTART ran during the wait (as F_SETLKW; docs/locks.md
 * "Signals"); the wait holds the signals a handler may catch and lets
 * them in between its looks.
 * daxfs_getlk (F_GETLK): r->type becomes DAXFS_LCK_UN when r could be
 * set, else r describes the first conflicting lock, r->host its host's
 * slot and r->pid its process on that host.
 * daxfs_file_close releases the calling process's POSIX locks on the
 * file, as close(2) does; OFD and flock locks stay until unlocked or the
 * handle closes (the host leaves: all its locks go).  A host declared
 * dead loses its locks (others may take them at once); after a rejoin
 * they are not restored.
 */
int daxfs_lock(struct daxfs_handle *h, uint64_t ino, struct daxfs_lock_req *r,
	       int timeout_ms);
int daxfs_unlock(struct daxfs_handle *h, uint64_t ino, uint32_t kind,
		 uint64_t owner, uint64_t start, uint64_t end);
int daxfs_getlk(struct daxfs_handle *h, uint64_t ino, struct daxfs_lock_req *r);
/* A flock(2) request (LOCK_SH, LOCK_EX or LOCK_UN, LOCK_NB ignored) as a
 * whole-file DAXFS_LCK_FLOCK request of owner in *r: 0, or -EINVAL for
 * another op.  For front ends that serve flock (the preload, FUSE). */
int daxfs_flock_req(int op, uint64_t owner, struct daxfs_lock_req *r);
/* Every lock of ino (0: of every file), waiters flagged; fn may be NULL:
 * returns the count. */
int daxfs_lock_list_all(struct daxfs_handle *h, uint64_t ino,
			daxfs_lock_fn fn, void *ctx);

/* ------------------------------------------------------------------ */
/* Information                                                          */
/* ------------------------------------------------------------------ */

struct daxfs_info_region {
	uint32_t kind;			/* enum daxfs_region_kind */
	uint32_t flags;
	uint64_t offset;
	uint64_t size;
	const char *name;		/* "state", "hosts", ... (static) */
};

struct daxfs_info_host {
	uint32_t slot;
	uint32_t state;			/* enum daxfs_host_state */
	uint64_t gen;
	int64_t lease_age_ns;		/* how long this process has seen the
					 * heartbeat counter unchanged (its
					 * own monotonic clock), -1 unknown */
	int64_t joined_ns;
	uint32_t pid;
	uint32_t kind;			/* DAXFS_HOST_KIND_* */
	uint64_t ops;			/* advisory */
	uint32_t busy_lanes;		/* lanes with an operation in progress */
	uint32_t self;			/* 1 for the calling handle's host */
	char name[DAXFS_HOST_NAME_LEN + 1];
	int64_t recovered_ns;		/* when its last dead owner was recovered */
	uint32_t recovered_by;		/* slot of the recoverer + 1, 0 host-less */
	uint32_t expired;		/* 1: ALIVE but the lease ran out */
	uint32_t open_files;		/* opens in its open set (docs/open-files.md) */
	uint32_t lease;			/* enum daxfs_lease: 0 unknown (not
					 * watched long enough), 1 live,
					 * 2 expired */
};

/* daxfs_info_host.state beyond enum daxfs_host_state: a FREE slot whose
 * last owner died and was recovered by a survivor (docs/recovery.md). */
#define DAXFS_INFO_HOST_RECOVERED	4u

struct daxfs_info {
	/* superblock */
	uint32_t version;
	uint32_t block_size;
	uint32_t feat_compat, feat_incompat, feat_ro_compat;
	uint32_t max_hosts;
	uint32_t probe_window;
	uint32_t lease_ms;
	uint8_t uuid[16];
	char label[DAXFS_LABEL_LEN + 1];
	int64_t created_ns;
	uint64_t total_size;		/* sb.total_size */
	uint64_t mapped_size;		/* bytes mapped from the target */
	uint32_t target_kind;		/* enum daxfs_target_kind */
	uint64_t root_ino, first_dyn_ino;
	/* regions, in offset order (superblock page excluded) */
	uint32_t nr_regions;
	struct daxfs_info_region regions[DAXFS_RGN_MAX];
	/* overlay */
	uint64_t nr_buckets, used_buckets, tomb_buckets, pending_buckets;
	/* pool and state page */
	uint64_t pool_bytes, used_bytes, free_bytes, bump_bytes;
	uint64_t epoch, next_ino, inodes;
	uint64_t stat_cas_fail, stat_inserts;
	uint64_t rename_claim;
	/* hosts: every slot that is not FREE */
	uint32_t self_slot;		/* DAXFS_NO_HOST if not joined */
	uint32_t nr_hosts;
	struct daxfs_info_host hosts[DAXFS_MAX_HOSTS];
};

int daxfs_info(struct daxfs_handle *h, struct daxfs_info *out);
/* The host lease in milliseconds (info->lease_ms without daxfs_info's
 * walk of the whole overlay). */
uint32_t daxfs_lease_ms(struct daxfs_handle *h);

/* The shared page cache of a split-mode filesystem (-EOPNOTSUPP
 * without one).  Cluster-wide numbers come from the region; the
 * host_* numbers are this handle's own. */
struct daxfs_cache_info {
	uint64_t nr_slots, window, cache_bytes;
	uint64_t free, pending, valid, evicting, requested, referenced;
	uint64_t pinned_slots, pins, columns;
	uint64_t hand, hand_pos;	/* CLOCK sweep: slots swept, position */
	uint64_t fills, evictions, takeovers, served, timeouts, req_seq;
	/* this handle */
	uint64_t host_hits, host_misses, host_fills;
	uint64_t backing_reads, backing_bytes;	/* reads of backing files */
	uint32_t nr_backing;
	uint32_t reach;			/* bit i: backing file i is open here */
	struct {
		uint64_t size;
		char name[33];
	} backing[16];
};
int daxfs_cache_info(struct daxfs_handle *h, struct daxfs_cache_info *out);
/* Evicts every unpinned cached page (like drop_caches); returns how many. */
int64_t daxfs_cache_drop(struct daxfs_handle *h);

/*
 * Zero-copy, read-only access to one page of a file: *ptr points into the
 * region (a pinned cache slot or base data) and stays valid, and the
 * cache slot pinned, until daxfs_page_release().  A hole gives *ptr =
 * NULL (zeros).  -EAGAIN: this page cannot be mapped: read it instead (a
 * partial page of a truncated base file, or a page in the pool, which
 * nothing here holds: a truncate on any host frees it, and it may then
 * hold another file's bytes; daxfs_map_page and its passes map those).
 * daxfs_page_locate: where the page lies now, pool pages included, for a
 * hint only (the preload prefaults it): nothing holds it.
 */
struct daxfs_page_ref {
	uint64_t slot, gen;
	uint32_t col, pad;
};
int daxfs_page_map(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		   const void **ptr, struct daxfs_page_ref *ref);
void daxfs_page_release(struct daxfs_handle *h, struct daxfs_page_ref *ref);
int daxfs_page_locate(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		      const void **ptr);

/*
 * Shared, writable mappings of file pages for a user-space host (lib/map.c,
 * docs/preload.md "Shared mappings").  daxfs_map_page: the region offset
 * (== the offset in daxfs_region_fd()) of the pool page of file page pgoff
 * in *off; alloc: allocate a zeroed page for a hole (or copy a base page
 * up), else *off = 0 for a hole.  A host that maps such pages calls
 * daxfs_map_begin() before its first lookup, then runs passes: e =
 * daxfs_map_pass_begin(), move every mapping off the pages that are no
 * longer its file's, daxfs_map_pass_end(h, e) (0 when nothing is mapped
 * any more).  daxfs_map_hold/unhold: an open-set entry for a mapping
 * (the file outlives its last close while mapped); unhold drops no lock.
 * A file with no name left takes a hold while an open of this handle
 * holds it (mmap of a deleted file through a descriptor still open).
 * -ENODEV: no page of this handle maps alone, so the caller copies:
 * devdax and hugetlbfs map only whole 2 MiB pieces, and a host-less
 * handle (DAXFS_OPEN_RDONLY or _NOJOIN) has no slot to announce its
 * passes in, so nothing would keep a page it maps from being reused.
 */
int daxfs_map_page(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		   int alloc, uint64_t *off);
/*
 * alloc is DAXFS_MAP_ALLOC, or'd with DAXFS_MAP_NOWAIT: a full pool then
 * answers -ENOSPC at once instead of waiting for freed space.  A mapping
 * host must not wait while it holds what its own pass needs (the pass is
 * what lets that space go: docs/preload.md "Shared mappings"): it drops
 * it, then calls daxfs_space_wait() with a zeroed waiter per call, which
 * sleeps a little and returns 1 (try again) or 0 (the -ENOSPC stands).
 * daxfs_map_hold_nowait: daxfs_map_hold without the wait.
 */
#define DAXFS_MAP_ALLOC		1
#define DAXFS_MAP_NOWAIT	2
struct daxfs_space_waiter {
	uint64_t opaque[8];
};
int daxfs_space_wait(struct daxfs_handle *h, struct daxfs_space_waiter *w);
int daxfs_map_hold_nowait(struct daxfs_handle *h, uint64_t ino);
int daxfs_map_begin(struct daxfs_handle *h);
int64_t daxfs_map_pass_begin(struct daxfs_handle *h);
int daxfs_map_pass_end(struct daxfs_handle *h, uint64_t e);
/* 1 when a host waiting for space asked for a pass before the next tick
 * (docs/reclaim.md "Asking for a pass"): poll it between ticks. */
int daxfs_map_pass_wanted(struct daxfs_handle *h);
int daxfs_map_hold(struct daxfs_handle *h, uint64_t ino);
int daxfs_map_unhold(struct daxfs_handle *h, uint64_t ino);
/* The region file's descriptor (for mmap at daxfs_map_page offsets);
 * -EBADF once the number no longer names the region file (the program
 * closed it, and may have reused the number). */
int daxfs_region_fd(struct daxfs_handle *h);

/* Names for enum values (static strings, "?" when unknown). */
const char *daxfs_region_kind_name(uint32_t kind);
const char *daxfs_host_state_name(uint32_t state);

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/*
 * Message for a (negative or positive) errno as returned by the library,
 * with DaxFS-specific advice where it helps, e.g. -EUCLEAN ->
 * "filesystem structure corrupt: run fsck.daxfs", -EBUSY from open ->
 * "host table full".  Never NULL; static or thread-local storage.
 */
const char *daxfs_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* DAXFS_LIBDAXFS_H */
