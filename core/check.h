/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The DaxFS checker and repairer (core/check*.c), shared by fsck.daxfs, the
 * fuzz harness and (later) an in-kernel scrub.  Portable core code: it never
 * allocates; the caller passes a scratch buffer of daxfs_check_scratch_size()
 * bytes.  Every problem found is reported through a callback with a static
 * message and numeric details, so the front end chooses the formatting.
 * Docs: docs/fsck.md.
 */
#ifndef DAXFS_CHECK_H
#define DAXFS_CHECK_H

#include "compat.h"
#include "daxfs_core.h"

enum daxfs_check_sev {
	DAXFS_CHK_INFO = 0,	/* worth knowing, not a problem */
	DAXFS_CHK_WARN = 1,	/* suspicious or transient; does not fail fsck */
	DAXFS_CHK_ERROR = 2,	/* inconsistency: repairable or not */
	DAXFS_CHK_FATAL = 3,	/* cannot check further (superblock, state) */
};

enum daxfs_check_code {
	DAXFS_CHK_SUPER = 1,		/* superblock unusable */
	DAXFS_CHK_STATE,		/* state page word invalid */
	DAXFS_CHK_HOST_LIVE,		/* a live host is mounted */
	DAXFS_CHK_HOST_DEAD,		/* dead host still holds a slot/lanes */
	DAXFS_CHK_HOST_BAD,		/* host slot word or batch invalid */
	DAXFS_CHK_LANE,			/* lane busy/intent of a dead host */
	DAXFS_CHK_RENAME_CLAIM,		/* rename claim held by a dead host */
	DAXFS_CHK_LIMBO,		/* limbo batch invalid */
	DAXFS_CHK_BUCKET,		/* overlay bucket invalid */
	DAXFS_CHK_BUCKET_PENDING,	/* pending/deleting bucket, no owner */
	DAXFS_CHK_BUCKET_DUP,		/* key published twice */
	DAXFS_CHK_BUCKET_LOST,		/* key a lookup cannot find */
	DAXFS_CHK_INODE,		/* inode record invalid */
	DAXFS_CHK_ROOT,			/* root inode missing or not a dir */
	DAXFS_CHK_NEXT_INO,		/* next_ino not above every inode */
	DAXFS_CHK_TRIE,			/* trie slot/node invalid */
	DAXFS_CHK_DIRENT,		/* dirent record invalid */
	DAXFS_CHK_DIRENT_DANGLING,	/* names an inode that does not exist */
	DAXFS_CHK_DIRENT_DUP,		/* same name twice in one directory */
	DAXFS_CHK_DIRENT_TYPE,		/* d_type differs from the inode */
	DAXFS_CHK_DIR_MULTI,		/* directory has several names */
	DAXFS_CHK_DIR_PARENT,		/* parent pointer wrong */
	DAXFS_CHK_DIR_DEAD,		/* rmdir'ed directory still named */
	DAXFS_CHK_DIR_COUNT,		/* entry count wrong */
	DAXFS_CHK_NLINK,		/* link count wrong */
	DAXFS_CHK_ORPHAN,		/* inode no directory names */
	DAXFS_CHK_RADIX,		/* radix node/slot invalid */
	DAXFS_CHK_BLOCKS,		/* block count wrong */
	DAXFS_CHK_BEYOND_EOF,		/* data pages past the file size */
	DAXFS_CHK_SYMLINK,		/* symlink record invalid */
	DAXFS_CHK_CROSSLINK,		/* object referenced twice */
	DAXFS_CHK_FREELIST,		/* free stack corrupt */
	DAXFS_CHK_FREE_INUSE,		/* free object still referenced */
	DAXFS_CHK_LEAK,			/* allocated but unreachable space */
	DAXFS_CHK_USED_BYTES,		/* used_bytes counter wrong */
	DAXFS_CHK_BASE,			/* base image problem */
	DAXFS_CHK_LOST_FOUND,		/* lost+found could not be made */
	DAXFS_CHK_LIMIT,		/* a bound was hit; check incomplete */
	DAXFS_CHK_LOCK,			/* lock table page or record invalid,
					 * or a lock of a host not alive */
	DAXFS_CHK_XATTR,		/* xattr set invalid, shared or of no
					 * inode; claim of a host not alive */
	DAXFS_CHK_MEDIA,		/* an object lies on a known bad range */
	DAXFS_CHK_PASS,			/* repairs made: another pass, or
					 * repairs that did not settle */
	DAXFS_CHK_PCACHE,		/* page cache header (split mode) */
	DAXFS_CHK_NR_CODES
};

struct daxfs_check_problem {
	u32 severity;			/* enum daxfs_check_sev */
	u32 code;			/* enum daxfs_check_code */
	const char *name;		/* short code name, e.g. "nlink" */
	const char *msg;		/* static sentence */
	u64 ino;			/* inode concerned, or 0 */
	u64 off;			/* region offset concerned, or 0 */
	u64 have;			/* value found (meaning per code) */
	u64 want;			/* value expected */
	bool repaired;			/* -y fixed it */
};

typedef void (*daxfs_check_report_t)(void *ctx,
				     const struct daxfs_check_problem *p);
/* phase: 1 hosts, 2 overlay, 3 namespace, 4 orphans, 5 space, 6 repair */
typedef void (*daxfs_check_progress_t)(void *ctx, u32 phase, u64 done,
				       u64 total);

/* daxfs_check_opts.flags */
#define DAXFS_CHECK_REPAIR	(1u << 0)	/* fix what is safely fixable */
#define DAXFS_CHECK_FORCE	(1u << 1)	/* repair despite live hosts */

struct daxfs_check_opts {
	u32 flags;
	void *scratch;			/* daxfs_check_scratch_size() bytes */
	u64 scratch_size;
	daxfs_check_report_t report;	/* may be NULL */
	daxfs_check_progress_t progress;	/* may be NULL */
	void *ctx;
	/*
	 * Known bad ranges of the region (fsck --badblocks): nr_bad sorted,
	 * disjoint [start, end) byte pairs in bad[].  Each object the walk
	 * finds on one is reported as DAXFS_CHK_MEDIA: ino the inode it
	 * belongs to (0: none), off the object, have the bad range's
	 * start, want 1 + the file page index for file data (0: metadata).
	 * The caller keeps the checker from loading them (it maps zeros
	 * there); bad_rewrite: after a repair, it writes what the checker
	 * left there (zeros and repairs) to the media, so with a repair
	 * they are reported as repaired.
	 */
	const u64 *bad;
	u64 nr_bad;
	bool bad_rewrite;
};

struct daxfs_check_result {
	u64 nr[4];			/* problems by severity */
	u64 repaired;			/* problems fixed */
	u64 unrepaired;			/* errors left */
	u64 inodes, dirs, files, symlinks, specials, dirents;
	u64 data_pages, orphans, reattached, dropped;
	u64 reachable_bytes;		/* pool bytes reachable from the fs */
	u64 free_bytes;			/* on free stacks */
	u64 limbo_bytes;		/* retired, waiting for reclamation */
	u64 batch_bytes;		/* reserved by hosts' alloc batches */
	u64 leaked_bytes;		/* allocated, reachable from nothing */
	u64 used_bytes;			/* state.used_bytes as found */
	u32 live_hosts;			/* ALIVE with a fresh lease */
	u32 dead_hosts;
	bool repair_refused;		/* -y refused: live hosts (no -f) */
	bool rebuilt_space;		/* free stacks rebuilt */
};

/* Bytes of scratch daxfs_check() needs for this filesystem. */
u64 daxfs_check_scratch_size(struct daxfs_fs *fs);

/*
 * Diagnoses the superblock of a region that daxfs_fs_open() refused (or
 * before opening it), reporting each defect.  Returns 0 when it looks
 * usable, -EOPNOTSUPP when its only defects are features this build does
 * not know (a newer DaxFS made it), -EUCLEAN otherwise.  Never writes.
 */
int daxfs_check_super(const void *base, u64 size, daxfs_check_report_t report,
		      void *ctx);

/*
 * The base image's header, of a region daxfs_check_super() passed: 0
 * when it is sound (or there is no base image), else -EUCLEAN, each
 * defect reported.  The base image is read-only: nothing repairs it.
 */
int daxfs_check_base_header(const void *base, u64 size,
			    daxfs_check_report_t report, void *ctx);

/*
 * Converts a format version 1 or 2 image to the current format in place
 * (core/convert.c).  fs: opened with DAXFS_FS_CONVERT and its hosts
 * watched (daxfs_hosts_observe).  0 converted, 1 already current, -EBUSY
 * a host's lease was not seen to run out (force converts anyway).
 */
int daxfs_convert(struct daxfs_fs *fs, bool force);
/*
 * A superblock whose checksum fails but holds for its bytes with another
 * format version, one side of it the current one: a conversion cut
 * between its version store and its checksum store (or whose two stores,
 * in two cache lines, reached the media in the other order).  Returns
 * that other version, else 0 (damage, or no checksum problem).
 */
u32 daxfs_convert_torn_version(const void *base);
/* The conversion's last superblock stores: the current version and the
 * checksum over it (every step before them is done and flushed). */
void daxfs_convert_seal(void *base);

/*
 * With a valid superblock but a state page daxfs_fs_open() refuses:
 * reports each bad word and with repair rewrites it.  Returns the number
 * of problems, or -EUCLEAN when the superblock itself is bad.
 */
int daxfs_check_state_fixup(void *base, u64 size, bool repair,
			    daxfs_check_report_t report, void *ctx);

/*
 * With a valid superblock, the page cache header of a split-mode region
 * (which daxfs_fs_open() refuses when a word is off): reports each word
 * that differs from what the superblock and the region's size derive,
 * and with repair rewrites the header.  The cache's slots are left to
 * daxfs_pcache_check().  Returns the number of problems (0: no cache or
 * a sound header), or -EUCLEAN when the region cannot hold a cache.
 */
/*
 * With a valid superblock, the descriptor of the backing file whose
 * header is bh (file_size: the file's length): reports a descriptor word
 * that differs from the file's header, and with repair puts them back
 * (core/check-backing.c says when a file is taken for a descriptor's).
 * Returns the words that differ (0-4); -EMEDIUMTYPE when the file is not
 * this filesystem's (or its own header is damaged), -EOPNOTSUPP without
 * a page cache, -EUCLEAN when the region cannot hold one.
 */
int daxfs_check_backing_desc(void *base, u64 size,
			     const struct daxfs_backing_header *bh,
			     u64 file_size, bool repair,
			     daxfs_check_report_t report, void *ctx);

int daxfs_check_pcache_fixup(void *base, u64 size, bool repair,
			     daxfs_check_report_t report, void *ctx);

/*
 * Checks (and with DAXFS_CHECK_REPAIR repairs) an opened filesystem.
 * The fs must not have joined the host table (fs->host == DAXFS_NO_HOST).
 * Returns 0 when the check ran (see *res for what it found), or a
 * negative errno when it could not run (-EINVAL: scratch too small).
 */
int daxfs_check(struct daxfs_fs *fs, const struct daxfs_check_opts *o,
		struct daxfs_check_result *res);

const char *daxfs_check_code_name(u32 code);

/* The first of nr sorted, disjoint [start, end) pairs in bad[] that
 * [off, off + len) meets, or NULL (daxfs_check_opts.bad). */
const u64 *daxfs_bad_range_find(const u64 *bad, u64 nr, u64 off, u64 len);

/* ------------------------------------------------------------------ */
/* Internal to core/check*.c.                                          */

#define CHK_I_COUNT	0x00ffffffu	/* names found for the inode */
#define CHK_I_VALID	(1u << 24)	/* record passed validation */
#define CHK_I_REACHED	(1u << 25)	/* named from a reached directory */
#define CHK_I_DIR	(1u << 26)
#define CHK_I_WALKED	(1u << 27)	/* contents walked and marked */
#define CHK_I_DROPPED	(1u << 28)	/* tombstoned by repair */
#define CHK_I_ORPHAN	(1u << 29)	/* reported as an orphan */
/* bit 30: CHK_I_ATTACH, check-ns.c */
#define CHK_I_RECOPY	(1u << 31)	/* symlink record shared: copy it */

#define CHK_HIDE_MAX	64
#define CHK_RELEN_MAX	64

/* A symlink record's len word as a repair would write it, once the
 * symlink's walk claimed the record (core/check-symlink.c). */
struct chk_relen {
	u64 off;			/* the record */
	u64 ino;			/* the symlink whose repair it is */
	u32 len;			/* the repair's length; CHK_RELEN_* */
	u32 pad;
};
#define CHK_RELEN_OTHERS	(1u << 31)	/* the bytes are another
						 * object's: never written */
#define CHK_RELEN_OWNED		(1u << 30)	/* the symlink's walk claimed
						 * the record */
#define CHK_RELEN_LEN		0xffffu		/* the length itself */

/*
 * What one pass leaves the next (the scratch's tail, zeroed by the
 * first pass only): the symlinks whose record the walk found invalid
 * although chk_inode_record had passed or rebuilt it.  Another object's
 * repair changed the bytes: the root word names that object, and a
 * rebuild would write into it again, pass after pass.  The next pass
 * drops them (their target is lost).
 */
#define CHK_LOST_MAX	64
struct chk_carry {
	u64 nr_lost;
	u64 lost[CHK_LOST_MAX];		/* inode numbers */
};

struct chk {
	struct daxfs_fs *fs;
	const struct daxfs_check_opts *o;
	struct daxfs_check_result *r;
	bool repair;			/* repairs allowed now */
	bool live;			/* another host is live */
	bool space_dirty;		/* free stacks must be rebuilt */
	bool root_gone;			/* repair recreates the root */
	bool stop;			/* fatal: stop walking */
	u64 units;			/* 64-byte units in the pool */
	u64 *used;			/* bitmap: reachable objects */
	u64 *freed;			/* bitmap: free, limbo, batches */
	u32 *binfo;			/* per bucket (INODE keys) */
	u32 *base_info;			/* per base inode (ino - 1) */
	u64 nr_base;			/* base inodes */
	u64 *queue;			/* directories to walk (inos) */
	u64 qcap, qhead, qtail;
	u64 bump;			/* state.bump as validated */
	u64 max_ino;			/* highest inode number seen */
	u64 alloc_cursor;		/* repair allocator (unit index) */
	u64 freelist_bytes;
	u64 budget;			/* global step budget */
	u64 media_ino;			/* inode of the objects being marked */
	u64 media_page;			/* 1 + file page index of a data page */
	u64 changes;			/* repairs that changed the region */
	u64 base_errors;		/* base image errors named so far */
	/* base names a repair removes, hidden by whiteouts once the walk is
	 * done (chk_alloc); more wait for the next pass */
	u32 nr_hide;
	struct { u64 dir, idx; } hide[CHK_HIDE_MAX];
	/* symlink header records whose len word a repair rewrote in this
	 * pass: undone when the walk finds the bytes another object's
	 * (core/check-symlink.c); CHK_RELEN_MAX of them, in the scratch */
	u32 nr_relen;
	struct chk_relen *relen;
	struct chk_carry *carry;
};

/* Resolved inode: overlay record and/or base inode. */
struct chk_ino {
	u64 ino;
	struct daxfs_inode *ip;
	const struct daxfs_base_inode *bip;
	u32 *info;
	u32 mode;
	s64 bucket;			/* -1 when none */
};

#define CHK_S_IFMT	0170000u
#define CHK_S_IFSOCK	0140000u
#define CHK_S_IFLNK	0120000u
#define CHK_S_IFREG	0100000u
#define CHK_S_IFBLK	0060000u
#define CHK_S_IFDIR	0040000u
#define CHK_S_IFCHR	0020000u
#define CHK_S_IFIFO	0010000u

#define CHK_DF_FROM_BASE	(1u << 1)

void chk_report(struct chk *c, u32 sev, u32 code, const char *msg, u64 ino,
		u64 off, u64 have, u64 want, bool repaired);
void chk_progress(struct chk *c, u32 phase, u64 done, u64 total);
bool chk_mark(struct chk *c, u64 *bm, u64 off, u64 len);
/* Reports [off, off + len) when it lies on a known bad range (opts.bad). */
void chk_media(struct chk *c, u64 off, u64 len);
/* Slot ALIVE with a lease this observer has not seen run out. */
bool chk_host_fresh(struct chk *c, struct daxfs_host *h);
bool chk_test_any(struct chk *c, const u64 *bm, u64 off, u64 len);
void chk_set(struct chk *c, u64 *bm, u64 off, u64 len, bool v);
u64 chk_bits_get(struct chk *c, const u64 *bm, u64 off, u64 len);
void chk_bits_put(struct chk *c, u64 *bm, u64 off, u64 len, u64 mask);
s64 chk_ov_find(struct chk *c, u64 key);
int chk_resolve(struct chk *c, u64 ino, struct chk_ino *ci);
u32 chk_mode_dtype(u32 mode);
u64 chk_class_bytes(u64 len);
u64 chk_alloc(struct chk *c, u64 bytes);
/* Drops bucket idx (key TOMB, value 0): its object is freed by the space
 * rebuild. */
void chk_tomb(struct chk *c, u64 idx);
int chk_ov_insert(struct chk *c, u64 key, u64 value);
/* flags: the dirent's (DAXFS_DF_WHITEOUT | DAXFS_DF_FROM_BASE: a
 * whiteout hiding a base name) */
int chk_trie_insert(struct chk *c, struct daxfs_inode *dir, const char *name,
		    u32 len, u64 ino, u32 dtype, u32 flags);
bool chk_trie_lookup(struct chk *c, struct daxfs_inode *dir, const char *name,
		     u32 len, u64 *ino, bool *whiteout);

/* check-symlink.c */
bool chk_symlink_repair(struct chk *c, u64 ino, struct daxfs_inode *ip);
/* Whether an earlier pass found ino's record changed under it. */
bool chk_symlink_lost(struct chk *c, u64 ino);
void chk_walk_symlink(struct chk *c, struct chk_ino *f);
void chk_symlink_copies(struct chk *c);
void chk_symlink_settle(struct chk *c);
/* check-ns.c */
void chk_namespace(struct chk *c);
void chk_orphans(struct chk *c);
void chk_nlinks(struct chk *c);
/* check-locks.c */
void chk_locks(struct chk *c);
/* check-xattr.c */
void chk_xattr_claim(struct chk *c, u64 ino, struct daxfs_inode *ip);
/* core/check-flight.c */
void chk_change_flight(struct chk *c, u64 ino, struct daxfs_inode *ip);
void chk_xattrs(struct chk *c);
/* Strict-write redo records named by lanes (core/check-redo.c). */
void chk_redo(struct chk *c);
/* check-space.c */
void chk_space(struct chk *c);
void chk_rebuild_space(struct chk *c);

#endif /* DAXFS_CHECK_H */
