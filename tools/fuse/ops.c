// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: the FUSE low-level operations.  Node ids are DaxFS inode
 * numbers (dfuse_ino/dfuse_node), so the kernel's inode cache and ours
 * agree without a table; the inode's generation tells the kernel when
 * another host freed a number and it came back as another file.
 * Permissions are the kernel's (default_permissions): every request that
 * gets here was allowed for the caller's uid and gids.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <linux/fs.h>

#include "dfuse.h"
#include "lib/timens.h"

#define DFUSE_RENAME_FLAGS	(DAXFS_RENAME_NOREPLACE | DAXFS_RENAME_EXCHANGE | \
				 DAXFS_RENAME_WHITEOUT)

static struct dfuse *dfuse_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err < 0 ? -err : err);
}

static void to_stat(const struct daxfs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = a->ino;
	st->st_mode = a->mode;
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_size = (off_t)a->size;
	st->st_blocks = (blkcnt_t)(a->blocks * (DAXFS_BLOCK_SIZE / 512));
	st->st_blksize = DAXFS_BLOCK_SIZE;
	st->st_rdev = (dev_t)a->rdev;
	daxfs_ns_to_timespec(&st->st_atim, a->atime_ns);
	daxfs_ns_to_timespec(&st->st_mtim, a->mtime_ns);
	daxfs_ns_to_timespec(&st->st_ctim, a->ctime_ns);
}

static void fill_entry(struct dfuse *d, const struct daxfs_attr *a,
		       struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = dfuse_node(d, a->ino);
	/* the kernel made the root with generation 0, and takes another
	 * generation for the same node id as a reused number */
	e->generation = e->ino == FUSE_ROOT_ID ? 0 : a->generation;
	e->attr_timeout = d->timeout;
	e->entry_timeout = d->timeout;
	to_stat(a, &e->attr);
}

static void reply_entry(fuse_req_t req, uint64_t ino)
{
	struct dfuse *d = dfuse_of(req);
	struct fuse_entry_param e;
	struct daxfs_attr a;
	int err = daxfs_fstat(d->h, ino, &a);

	if (err)
		return reply_err(req, err);
	fill_entry(d, &a, &e);
	fuse_reply_entry(req, &e);
}

static void reply_attr(fuse_req_t req, uint64_t ino)
{
	struct dfuse *d = dfuse_of(req);
	struct daxfs_attr a;
	struct stat st;
	int err = daxfs_fstat(d->h, ino, &a);

	if (err == -ENOENT && dfuse_dir_gone(d, ino, &a))
		err = 0;	/* fstat(2) of an open, removed directory */
	else if (err == -ENOENT && dfuse_ino_stale(d, ino))
		err = -ESTALE;	/* open before a rejoin, removed since */
	if (err)
		return reply_err(req, err);
	to_stat(&a, &st);
	fuse_reply_attr(req, &st, d->timeout);
}

/* Owner of a new object: the caller (in a setgid directory the core
 * gives the directory's group, and a subdirectory the bit:
 * docs/namespace.md "Create"). */
static void new_owner(fuse_req_t req, uint64_t dir, uint32_t *mode,
		      uint32_t *uid, uint32_t *gid)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	dfuse_acl_mode(req, dir, mode);
	*uid = c->uid;
	*gid = c->gid;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct dfuse *d = userdata;

	/* O_TRUNC and the set-id kill stay the kernel's: it sends them as
	 * setattr, which is where the core changes size and mode. */
	conn->want &= ~(FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_HANDLE_KILLPRIV);
	/* attributes that changed (another host's write) drop cached pages */
	if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA)
		conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
	/* file handles (name_to_handle_at, NFS): node ids are inode
	 * numbers and the generation tells a reused one, so the kernel may
	 * look up "." and ".." of an inode it no longer has */
	if (conn->capable & FUSE_CAP_EXPORT_SUPPORT)
		conn->want |= FUSE_CAP_EXPORT_SUPPORT;
	/* ACLs: the kernel enforces them; the umask comes unapplied, for
	 * us to apply only without a default ACL (docs/xattr.md) */
	if (d->acl && (conn->capable & FUSE_CAP_POSIX_ACL) &&
	    (conn->capable & FUSE_CAP_DONT_MASK))
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
	else
		d->acl = false;
	if (d->conn_opts)
		fuse_apply_conn_info_opts(d->conn_opts, conn);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dfuse *d = dfuse_of(req);
	struct fuse_entry_param e;
	struct daxfs_attr a;
	uint64_t ino;
	int err = daxfs_ino_lookup(d->h, dfuse_ino(d, parent), name, &ino, &a);

	if (err == -ENOENT) {
		/* a negative entry, cached as long as a positive one */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = d->timeout;
		fuse_reply_entry(req, &e);
		return;
	}
	if (err)
		return reply_err(req, err);
	fill_entry(d, &a, &e);
	fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	reply_attr(req, dfuse_ino(dfuse_of(req), node));
}

static void op_setattr(fuse_req_t req, fuse_ino_t node, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	int64_t now = daxfs_now_ns();
	struct daxfs_attr cur, a;
	uint32_t valid = DAXFS_ATTR_CTIME;	/* any change moves ctime */
	int err = daxfs_fstat(d->h, ino, &cur);

	if (err)
		return reply_err(req, err);
	memset(&a, 0, sizeof(a));
	a.ctime_ns = now;
	if (to_set & FUSE_SET_ATTR_MODE) {
		valid |= DAXFS_ATTR_MODE;
		a.mode = (cur.mode & S_IFMT) | (attr->st_mode & 07777);
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		valid |= DAXFS_ATTR_UID;
		a.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		valid |= DAXFS_ATTR_GID;
		a.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (S_ISDIR(cur.mode))
			return reply_err(req, EISDIR);
		if (!S_ISREG(cur.mode))
			return reply_err(req, EINVAL);
		valid |= DAXFS_ATTR_SIZE;
		a.size = (uint64_t)attr->st_size;
		/*
		 * mtime moves even when the size does not: the kernel sends
		 * ftruncate and open's O_TRUNC as a size alone (no time), and
		 * both move mtime on Linux whatever the size was.  truncate(2)
		 * by path comes the same way, so it moves mtime too, where
		 * ext4 and tmpfs leave it when the size stays (docs/fuse.md)
		 */
		if (!(to_set & FUSE_SET_ATTR_MTIME)) {
			valid |= DAXFS_ATTR_MTIME;
			a.mtime_ns = now;
		}
	}
	if (to_set & FUSE_SET_ATTR_ATIME) {
		valid |= DAXFS_ATTR_ATIME;
		a.atime_ns = (to_set & FUSE_SET_ATTR_ATIME_NOW) ? now :
			     daxfs_timespec_to_ns(&attr->st_atim);
	}
	if (to_set & FUSE_SET_ATTR_MTIME) {
		valid |= DAXFS_ATTR_MTIME;
		a.mtime_ns = (to_set & FUSE_SET_ATTR_MTIME_NOW) ? now :
			     daxfs_timespec_to_ns(&attr->st_mtim);
	}
	err = daxfs_ino_setattr(d->h, ino, valid, &a);
	if (err)
		return reply_err(req, err);
	reply_attr(req, ino);
}

static void op_readlink(fuse_req_t req, fuse_ino_t node)
{
	struct dfuse *d = dfuse_of(req);
	char buf[DAXFS_SYMLINK_MAX + 1];
	int n = daxfs_ino_readlink(d->h, dfuse_ino(d, node), buf, sizeof(buf));

	if (n < 0)
		return reply_err(req, n);
	if (n >= (int)sizeof(buf))
		return reply_err(req, EUCLEAN);
	fuse_reply_readlink(req, buf);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t dir = dfuse_ino(d, parent), ino;
	uint32_t m = mode, uid, gid;
	int err;

	if (S_ISDIR(m))
		return reply_err(req, EPERM);
	new_owner(req, dir, &m, &uid, &gid);
	err = daxfs_ino_mknod(d->h, dir, name, m, uid, gid, rdev, &ino);
	if (err)
		return reply_err(req, err);
	dfuse_acl_created(req, dir, ino);
	reply_entry(req, ino);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t dir = dfuse_ino(d, parent), ino;
	uint32_t m = S_IFDIR | (mode & 07777), uid, gid;
	int err;

	new_owner(req, dir, &m, &uid, &gid);
	err = daxfs_ino_mkdir(d->h, dir, name, m, uid, gid, &ino);
	if (err)
		return reply_err(req, err);
	dfuse_acl_created(req, dir, ino);
	reply_entry(req, ino);
}

static void op_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
		       const char *name)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t dir = dfuse_ino(d, parent), ino;
	uint32_t m = S_IFLNK, uid, gid;
	int err;

	new_owner(req, dir, &m, &uid, &gid);
	err = daxfs_ino_symlink(d->h, dir, name, target, uid, gid, &ino);
	if (err)
		return reply_err(req, err);
	reply_entry(req, ino);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dfuse *d = dfuse_of(req);

	reply_err(req, daxfs_ino_unlink(d->h, dfuse_ino(d, parent), name));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dfuse *d = dfuse_of(req);

	reply_err(req, daxfs_ino_rmdir(d->h, dfuse_ino(d, parent), name));
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t dir = dfuse_ino(d, parent);
	uint32_t m = S_IFCHR, uid = 0, gid = 0;

	if (flags & ~DFUSE_RENAME_FLAGS)
		return reply_err(req, EINVAL);
	/* a whiteout is the caller's, as a mknod's (one rename makes it) */
	if (flags & DAXFS_RENAME_WHITEOUT)
		new_owner(req, dir, &m, &uid, &gid);
	reply_err(req, daxfs_ino_rename_as(d->h, dir, name, dfuse_ino(d, newparent),
					   newname, flags, uid, gid));
}

static void op_link(fuse_req_t req, fuse_ino_t node, fuse_ino_t newparent,
		    const char *newname)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	int err = daxfs_ino_link(d->h, ino, dfuse_ino(d, newparent), newname);

	if (err)
		return reply_err(req, err);
	reply_entry(req, ino);
}

/* No FOPEN_KEEP_CACHE: every open drops the kernel's pages of the file,
 * so an open sees what other hosts wrote before it. */
static void open_reply_flags(struct fuse_file_info *fi)
{
	fi->keep_cache = 0;
	fi->direct_io = 0;
}

/*
 * The kernel's lookup found node, but nothing here holds its inode: its
 * last name may have been unlinked on another host, and the inode freed,
 * before this open.  ESTALE, not ENOENT: the VFS then looks the name up
 * again (LOOKUP_REVAL), which finds it gone (ENOENT for a plain open),
 * or free for an open(O_CREAT) to create (op_create), or another file.
 */
static int open_node_gone(int err)
{
	return err == -ENOENT ? -ESTALE : err;
}

static void op_open(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	struct daxfs_attr a;
	uint64_t join;
	int err = open_node_gone(daxfs_fstat(d->h, ino, &a));

	if (err)
		return reply_err(req, err);
	if (S_ISDIR(a.mode))
		return reply_err(req, EISDIR);
	/* chattr: the kernel's fuse knows no flags of ours (docs/attrs.md) */
	err = daxfs_open_allowed(&a, fi->flags);
	if (err)
		return reply_err(req, err);
	err = open_node_gone(dfuse_open_get(d, ino, &join));
	if (err)
		return reply_err(req, err);
	err = dfuse_locks_open(fi, join);
	if (err) {
		dfuse_open_put(d, ino, join);
		return reply_err(req, err);
	}
	open_reply_flags(fi);
	if (fuse_reply_open(req, fi)) {
		dfuse_locks_forget(fi);	/* the opener was interrupted */
		dfuse_open_put(d, ino, join);
	}
}

/* An existing name met by create() that lost a race with another
 * host's create: open that file, as open(O_CREAT) without O_EXCL would. */
static int create_existing(struct dfuse *d, uint64_t dir, const char *name,
			   uint64_t *ino)
{
	struct daxfs_attr a;
	int err = daxfs_ino_lookup(d->h, dir, name, ino, &a);

	if (err)
		return err;
	if (S_ISDIR(a.mode))
		return -EISDIR;
	return S_ISREG(a.mode) ? 0 : -EEXIST;
}

/* op_create's looks for an inode that keeps going before it is held */
#define CREATE_ROUNDS	1024

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t dir = dfuse_ino(d, parent), ino;
	uint32_t m = S_IFREG | (mode & 07777), uid, gid;
	struct fuse_entry_param e;
	struct daxfs_attr a;
	uint64_t join;
	int err, tries;

	new_owner(req, dir, &m, &uid, &gid);
	/* an inode made or found goes if its last name is unlinked on
	 * another host before our open holds it: then the name may be free
	 * again, and open(O_CREAT) of a name in a directory that exists
	 * never answers ENOENT (tests/test_fuse_hosts.py, "churn") */
	for (tries = 0;; tries++) {
		err = daxfs_ino_mknod(d->h, dir, name, m, uid, gid, 0, &ino);
		if (!err)
			dfuse_acl_created(req, dir, ino);
		else if (err == -EEXIST && !(fi->flags & O_EXCL))
			err = create_existing(d, dir, name, &ino);
		else
			break;
		if (!err)
			err = dfuse_open_get(d, ino, &join);
		if (err != -ENOENT || tries >= CREATE_ROUNDS)
			break;
	}
	if (err)
		return reply_err(req, err);
	err = daxfs_fstat(d->h, ino, &a);
	if (!err)
		err = dfuse_locks_open(fi, join);
	if (err) {
		dfuse_open_put(d, ino, join);
		return reply_err(req, err);
	}
	fill_entry(d, &a, &e);
	open_reply_flags(fi);
	if (fuse_reply_create(req, &e, fi)) {
		dfuse_locks_forget(fi);
		dfuse_open_put(d, ino, join);
	}
}

/*
 * The kernel leaves access times to a FUSE server.  relatime as Linux
 * has it: only when the access time is not after the last change, or a
 * day old; strictatime: at every read that reaches us (reads served from
 * the kernel's page cache never do).
 */
static void touch_atime(struct dfuse *d, uint64_t ino, bool dir)
{
	const int64_t day = 86400LL * 1000000000LL;
	struct daxfs_attr a, n;
	int64_t now;

	if (d->ro || d->atime == DFUSE_NOATIME || (dir && d->nodiratime))
		return;
	if (daxfs_fstat(d->h, ino, &a))
		return;
	now = daxfs_now_ns();
	if (d->atime == DFUSE_RELATIME && a.atime_ns > a.mtime_ns &&
	    a.atime_ns > a.ctime_ns && now - a.atime_ns < day)
		return;
	memset(&n, 0, sizeof(n));
	n.atime_ns = now;
	daxfs_ino_setattr(d->h, ino, DAXFS_ATTR_ATIME, &n);
}

static void op_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	char *buf = malloc(size ? size : 1);
	int64_t n;

	if (!buf)
		return reply_err(req, ENOMEM);
	if (dfuse_open_stale(d, dfuse_file_join(fi))) {
		free(buf);
		return reply_err(req, ESTALE);
	}
	n = daxfs_pread_fc(d->h, dfuse_ino(d, node), dfuse_file_cache(fi), buf,
			   size, (uint64_t)off);
	if (n < 0) {
		reply_err(req, (int)n);
	} else {
		fuse_reply_buf(req, buf, (size_t)n);
		touch_atime(d, dfuse_ino(d, node), false);
	}
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t node, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	int64_t n;

	if (dfuse_open_stale(d, dfuse_file_join(fi)))
		return reply_err(req, ESTALE);	/* opened before a rejoin */
	/* O_APPEND goes to the real end, as other hosts' appends do: the
	 * kernel's offset is its cached size.  Writeback of cached pages
	 * (writepage) carries the flags of some open file: never append. */
	if ((fi->flags & O_APPEND) && !fi->writepage)
		n = daxfs_append_fc(d->h, ino, dfuse_file_cache(fi), buf, size,
				    NULL);
	else
		n = daxfs_pwrite_fc(d->h, ino, dfuse_file_cache(fi), buf, size,
				    (uint64_t)off);
	if (n < 0)
		return reply_err(req, (int)n);
	fuse_reply_write(req, (size_t)n);
}

/* Stores are in the region already (and flushed on a persistent one);
 * a flush is a close(2): the closer's POSIX locks go. */
static void op_flush(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);

	dfuse_locks_flush(d, dfuse_ino(d, node), fi);
	reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t node, int datasync,
		     struct fuse_file_info *fi)
{
	reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t join = dfuse_file_join(fi);

	dfuse_locks_release(d, dfuse_ino(d, node), fi);
	dfuse_open_put(d, dfuse_ino(d, node), join);
	reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	struct daxfs_attr a;
	uint64_t join;
	int err = daxfs_fstat(d->h, dfuse_ino(d, node), &a);

	if (err)
		return reply_err(req, err);
	if (!S_ISDIR(a.mode))
		return reply_err(req, ENOTDIR);
	err = dfuse_dir_get(d, a.ino, &a, &join);
	if (err)
		return reply_err(req, err);
	err = dfuse_locks_open(fi, join);
	if (err) {
		dfuse_open_put(d, a.ino, join);
		return reply_err(req, err);
	}
	/* listings are not cached: another host may change the directory */
	fi->cache_readdir = 0;
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi)) {
		dfuse_locks_forget(fi);
		dfuse_open_put(d, a.ino, join);
	}
}

struct dir_buf {
	fuse_req_t req;
	char *buf;
	size_t size, used;
};

/* Runs inside the core's operation: copies only.  Each entry's offset is
 * where the listing goes on after it (its position + 1); positions are
 * hash-based, so they stay valid while names come and go. */
static int dir_fill(void *ctx, const char *name, uint32_t len, uint64_t ino,
		    uint32_t dtype, uint64_t pos)
{
	struct dir_buf *b = ctx;
	char nm[DAXFS_NAME_MAX + 1];
	struct stat st;
	size_t n;

	if (len > DAXFS_NAME_MAX)
		return -EUCLEAN;
	memcpy(nm, name, len);
	nm[len] = 0;
	memset(&st, 0, sizeof(st));
	st.st_ino = ino;
	st.st_mode = dtype << 12;
	n = fuse_add_direntry(b->req, b->buf + b->used, b->size - b->used, nm,
			      &st, (off_t)(pos + 1));
	if (n > b->size - b->used)
		return 1;	/* full: this entry comes again next time */
	b->used += n;
	return 0;
}

static void op_readdir(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	struct dir_buf b = { req, malloc(size), size, 0 };
	uint64_t pos = (uint64_t)off;
	int err;

	if (!b.buf)
		return reply_err(req, ENOMEM);
	err = daxfs_ino_readdir(d->h, dfuse_ino(d, node), &pos, dir_fill, &b);
	if (err < 0) {
		reply_err(req, err);
	} else {
		fuse_reply_buf(req, b.buf, b.used);
		if (!off)
			touch_atime(d, dfuse_ino(d, node), true);
	}
	free(b.buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t node,
			  struct fuse_file_info *fi)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t join = dfuse_file_join(fi);

	dfuse_locks_release(d, dfuse_ino(d, node), fi);
	dfuse_open_put(d, dfuse_ino(d, node), join);
	reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t node, int datasync,
			struct fuse_file_info *fi)
{
	reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t node)
{
	struct dfuse *d = dfuse_of(req);
	struct daxfs_statfs s;
	struct statvfs v;
	int err = daxfs_region_statfs(d->h, &s);

	if (err)
		return reply_err(req, err);
	memset(&v, 0, sizeof(v));
	v.f_bsize = DAXFS_BLOCK_SIZE;
	v.f_frsize = DAXFS_BLOCK_SIZE;
	v.f_blocks = s.pool_bytes / DAXFS_BLOCK_SIZE;
	v.f_bfree = s.free_bytes / DAXFS_BLOCK_SIZE;
	v.f_bavail = daxfs_statfs_avail_blocks(&s);
	/* an inode takes pool space like a page: as many more as pages fit */
	v.f_ffree = v.f_bfree;
	v.f_favail = v.f_ffree;
	v.f_files = s.inodes + v.f_ffree;
	v.f_namemax = DAXFS_NAME_MAX;
	fuse_reply_statfs(req, &v);
}

/* FS_XFLAG_* <-> FS_*_FL (the common ones, as the kernel's fileattr) */
static const uint32_t xflag_map[][2] = {
	{ FS_XFLAG_IMMUTABLE, FS_IMMUTABLE_FL },
	{ FS_XFLAG_APPEND, FS_APPEND_FL },
	{ FS_XFLAG_SYNC, FS_SYNC_FL },
	{ FS_XFLAG_NOATIME, FS_NOATIME_FL },
	{ FS_XFLAG_NODUMP, FS_NODUMP_FL },
};

static uint32_t xflags_conv(uint32_t v, int from)
{
	uint32_t out = 0;
	size_t i;

	for (i = 0; i < sizeof(xflag_map) / sizeof(xflag_map[0]); i++)
		if (v & xflag_map[i][from])
			out |= xflag_map[i][!from];
	return out;
}

/*
 * lsattr / chattr (docs/attrs.md): the kernel's fuse sends its
 * fileattr_get / fileattr_set as FS_IOC_GETFLAGS / FS_IOC_SETFLAGS or
 * FS_IOC_FSGETXATTR / FS_IOC_FSSETXATTR.  The kernel checked
 * CAP_LINUX_IMMUTABLE in the caller's context before it sent a change of
 * i or a; ownership is ours to check: the owner, or uid 0, may.
 */
static void op_ioctl(fuse_req_t req, fuse_ino_t node, unsigned int cmd,
		     void *arg, struct fuse_file_info *fi, unsigned int flags,
		     const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	uid_t uid = fuse_req_ctx(req)->uid;
	struct fsxattr fx;
	struct daxfs_attr a;
	uint32_t fl, may = DAXFS_MAY_IMMUTABLE;
	int err;

	if (cmd != FS_IOC_GETFLAGS && cmd != FS_IOC_SETFLAGS &&
	    cmd != FS_IOC_FSGETXATTR && cmd != FS_IOC_FSSETXATTR)
		return reply_err(req, -ENOTTY);
	err = daxfs_fstat(d->h, ino, &a);
	if (err)
		return reply_err(req, err);
	if (cmd == FS_IOC_GETFLAGS) {
		fl = a.flags;
		fuse_reply_ioctl(req, 0, &fl, out_bufsz < sizeof(fl) ?
				 out_bufsz : sizeof(fl));
		return;
	}
	if (cmd == FS_IOC_FSGETXATTR) {
		memset(&fx, 0, sizeof(fx));
		fx.fsx_xflags = xflags_conv(a.flags, 1);
		fuse_reply_ioctl(req, 0, &fx, out_bufsz < sizeof(fx) ?
				 out_bufsz : sizeof(fx));
		return;
	}
	if (cmd == FS_IOC_SETFLAGS && in_bufsz >= sizeof(fl)) {
		memcpy(&fl, in_buf, sizeof(fl));
	} else if (cmd == FS_IOC_FSSETXATTR && in_bufsz >= sizeof(fx)) {
		memcpy(&fx, in_buf, sizeof(fx));
		if (fx.fsx_xflags & ~xflags_conv(DAXFS_FL_SUPPORTED, 1) ||
		    fx.fsx_extsize || fx.fsx_projid || fx.fsx_cowextsize)
			return reply_err(req, -EOPNOTSUPP);
		fl = xflags_conv(fx.fsx_xflags, 0);
	} else {
		return reply_err(req, -EINVAL);
	}
	if (uid == 0 || uid == a.uid)
		may |= DAXFS_MAY_OWNER;
	err = daxfs_ino_setflags(d->h, ino, fl, may);
	if (err)
		return reply_err(req, err);
	fuse_reply_ioctl(req, 0, NULL, 0);
}

const struct fuse_lowlevel_ops dfuse_ops = {
	.init		= op_init,
	.lookup		= op_lookup,
	.forget		= op_forget,
	.forget_multi	= op_forget_multi,
	.getattr	= op_getattr,
	.setattr	= op_setattr,
	.readlink	= op_readlink,
	.mknod		= op_mknod,
	.mkdir		= op_mkdir,
	.symlink	= op_symlink,
	.unlink		= op_unlink,
	.rmdir		= op_rmdir,
	.rename		= op_rename,
	.link		= op_link,
	.open		= op_open,
	.create		= op_create,
	.read		= op_read,
	.write		= op_write,
	.flush		= op_flush,
	.fsync		= op_fsync,
	.release	= op_release,
	.opendir	= op_opendir,
	.readdir	= op_readdir,
	.releasedir	= op_releasedir,
	.fsyncdir	= op_fsyncdir,
	.statfs		= op_statfs,
	.getlk		= dfuse_getlk,
	.setlk		= dfuse_setlk,
	.flock		= dfuse_flock,
	.fallocate	= dfuse_fallocate,
	.lseek		= dfuse_lseek,
	.setxattr	= dfuse_setxattr,
	.getxattr	= dfuse_getxattr,
	.listxattr	= dfuse_listxattr,
	.removexattr	= dfuse_removexattr,
	.ioctl		= op_ioctl,
};
