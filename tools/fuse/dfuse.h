/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * daxfs-fuse: one DaxFS host that serves a FUSE mount (docs/fuse.md).
 * main.c parses the options and runs the session, ops.c answers the
 * kernel's requests, locks.c its lock requests, opens.c keeps the files
 * open on this host and tells the kernel when another host changed one
 * of them.
 */
#ifndef DAXFS_DFUSE_H
#define DAXFS_DFUSE_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>

#include "daxfs/libdaxfs.h"
#include "daxfs/libdaxfs-ino.h"

struct dfuse_open;

struct dfuse {
	struct daxfs_handle *h;
	struct fuse_session *se;
	uint64_t root;			/* the filesystem's root inode */
	double timeout;			/* entry and attribute cache, s */
	unsigned int poll_ms;		/* change check of open files */
	bool ro;
	enum dfuse_atime { DFUSE_RELATIME, DFUSE_NOATIME, DFUSE_STRICTATIME } atime;
	bool nodiratime;
	bool acl;			/* POSIX ACLs (default; -o noacl) */
	struct fuse_conn_info_opts *conn_opts;

	/* files open on this host (opens.c): ino -> opens, last change */
	pthread_mutex_t lock;
	struct dfuse_open **buckets;
	size_t nr_buckets, nr_open;
	uint64_t join_seen;		/* daxfs_handle_joins() let go at */
	pthread_t poller;
	bool poll_stop, poll_running;
	pthread_cond_t poll_cond;
};

extern const struct fuse_lowlevel_ops dfuse_ops;

/* FUSE node ids and DaxFS inode numbers: the same, except that the root
 * is FUSE_ROOT_ID (1); whatever inode has number 1 takes the root's. */
static inline uint64_t dfuse_ino(const struct dfuse *d, fuse_ino_t node)
{
	if (node == FUSE_ROOT_ID)
		return d->root;
	return node == d->root ? FUSE_ROOT_ID : node;
}

static inline fuse_ino_t dfuse_node(const struct dfuse *d, uint64_t ino)
{
	return dfuse_ino(d, ino);	/* the swap is its own inverse */
}

/* opens.c */
int dfuse_opens_init(struct dfuse *d);
void dfuse_opens_destroy(struct dfuse *d);
/* One more open of ino on this host: the first publishes it in the host's
 * open set (daxfs_file_open), so an unlink anywhere keeps it.  *join: the
 * handle's join count it was published under (for put and stale). */
int dfuse_open_get(struct dfuse *d, uint64_t ino, uint64_t *join);
/* One open fewer; the last one retracts it (daxfs_file_close). */
void dfuse_open_put(struct dfuse *d, uint64_t ino, uint64_t join);
/* Whether an open published under join was made before the host joined
 * again (declared dead while alive): its I/O gets -ESTALE. */
static inline bool dfuse_open_stale(struct dfuse *d, uint64_t join)
{
	return join != daxfs_handle_joins(d->h);
}
/* Whether ino has such an open here (its getattr: -ESTALE, not -ENOENT) */
bool dfuse_ino_stale(struct dfuse *d, uint64_t ino);
/* An open directory (counted, not published); put with dfuse_open_put.
 * dir_gone: the attributes of an open directory that no longer exists,
 * with nlink 0; false when ino is not an open directory. */
int dfuse_dir_get(struct dfuse *d, uint64_t ino, const struct daxfs_attr *a,
		  uint64_t *join);
bool dfuse_dir_gone(struct dfuse *d, uint64_t ino, struct daxfs_attr *a);
/* Starts the thread that invalidates the kernel's cache of open files
 * that another host changed (after the session is mounted). */
int dfuse_poller_start(struct dfuse *d);
void dfuse_poller_stop(struct dfuse *d);

/* locks.c: fcntl and flock locks through the core (docs/locks.md) */
void dfuse_getlk(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 struct flock *lock);
void dfuse_setlk(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 struct flock *lock, int sleep);
void dfuse_flock(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi,
		 int op);
/* close(2) of a descriptor: the closer's POSIX locks on ino go */
void dfuse_locks_flush(struct dfuse *d, uint64_t ino,
		       const struct fuse_file_info *fi);
/* last close of an open file: its flock and OFD locks go; frees fi->fh */
void dfuse_locks_release(struct dfuse *d, uint64_t ino,
			 struct fuse_file_info *fi);
/* An open file's state in fi->fh: the join count it was opened under and
 * its lock bookkeeping.  Made at open (-ENOMEM), freed at release, or by
 * forget when the open is not answered. */
int dfuse_locks_open(struct fuse_file_info *fi, uint64_t join);
uint64_t dfuse_file_join(const struct fuse_file_info *fi);
/* The open file's cache of where its inode record is (docs/open-files.md
 * "Per-open-file cache"), or NULL. */
struct daxfs_fcache *dfuse_file_cache(const struct fuse_file_info *fi);
void dfuse_locks_forget(struct fuse_file_info *fi);

/* falloc.c: fallocate and SEEK_DATA / SEEK_HOLE (docs/files.md) */
void dfuse_fallocate(fuse_req_t req, fuse_ino_t node, int mode, off_t off,
		     off_t len, struct fuse_file_info *fi);
void dfuse_lseek(fuse_req_t req, fuse_ino_t node, off_t off, int whence,
		 struct fuse_file_info *fi);
/* xattr.c: extended attributes, and the ACL rules the kernel leaves to
 * the server (docs/xattr.md) */
void dfuse_setxattr(fuse_req_t req, fuse_ino_t node, const char *name,
		    const char *value, size_t size, int flags);
void dfuse_getxattr(fuse_req_t req, fuse_ino_t node, const char *name,
		    size_t size);
void dfuse_listxattr(fuse_req_t req, fuse_ino_t node, size_t size);
void dfuse_removexattr(fuse_req_t req, fuse_ino_t node, const char *name);
/* The mode of a new object in dir: the caller's umask unless dir has a
 * default ACL; then, once made, the object inherits that ACL. */
void dfuse_acl_mode(fuse_req_t req, uint64_t dir, uint32_t *mode);
void dfuse_acl_created(fuse_req_t req, uint64_t dir, uint64_t ino);

#endif /* DAXFS_DFUSE_H */
