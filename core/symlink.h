/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Symlink target records of overlay inodes (two forms, see format.h and
 * docs/inodes.md "Symlink records").  Internal to the core and fsck.
 */
#ifndef DAXFS_SYMLINK_H
#define DAXFS_SYMLINK_H

/* A validated target record. */
struct daxfs_link_rec {
	const char *target;
	u32 len;
	u64 off;		/* record or page offset (root without its tag) */
	u64 bytes;		/* pool bytes the record occupies */
	unsigned int class;	/* allocator class to free it with */
};

/* Checks inode.root (non-zero) and inode.size of an overlay symlink as
 * untrusted input; NULL when they name a valid record (filled into *r),
 * else why not.  Never reads outside the record. */
const char *daxfs_link_rec_get(struct daxfs_fs *fs, u64 root, u64 size,
			       struct daxfs_link_rec *r);
/* The same for a header record (root untagged) taken to hold len bytes,
 * whatever its len word says (fsck's view of a record it must not write). */
const char *daxfs_link_rec_at(struct daxfs_fs *fs, u64 root, u32 len,
			      struct daxfs_link_rec *r);
/* Allocates the record for target and attaches it to ip (not yet
 * reachable by name: the caller publishes the name afterwards). */
int daxfs_link_rec_store(struct daxfs_op *op, struct daxfs_inode *ip,
			 const char *target, u32 tlen);
/* Detaches ip's record (CAS of root to 0) and retires it. */
void daxfs_link_rec_drop(struct daxfs_op *op, struct daxfs_inode *ip);

#endif /* DAXFS_SYMLINK_H */
