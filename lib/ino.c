// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: the namespace calls by directory inode number and name
 * (include/daxfs/libdaxfs-ino.h), for front ends that keep inode numbers
 * themselves (tools/fuse).  Thin: the core does the work; this adds the
 * lib call (gate, -ESTALE, -ENOSPC retry) and the checks the core leaves
 * to its callers.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "libdaxfs-internal.h"
#include "daxfs/libdaxfs-ino.h"

/* A name the core may be handed: one component, not "." or "..". */
static int check_name(const char *name, u32 *len)
{
	size_t n;

	if (!name)
		return -EFAULT;
	n = strlen(name);
	if (!n)
		return -ENOENT;
	if (n > DAXFS_NAME_MAX)
		return -ENAMETOOLONG;
	if ((n == 1 && name[0] == '.') || (n == 2 && !strcmp(name, "..")))
		return -EINVAL;
	*len = (u32)n;
	return 0;
}

/* lib_writable(), then check_name(). */
static int check_change(struct daxfs_handle *h, const char *name, u32 *len)
{
	int err = lib_writable(h);

	return err ? err : check_name(name, len);
}

/* A name to look up: also "." (the inode itself, of any type) and ".."
 * (a directory's parent); FUSE's export support asks for both. */
static int check_lookup_name(const char *name, u32 *len)
{
	if (name && (!strcmp(name, ".") || !strcmp(name, ".."))) {
		*len = (u32)strlen(name);
		return 0;
	}
	return check_name(name, len);
}

static int do_lookup(struct daxfs_handle *h, uint64_t dir, const char *name,
		     uint64_t *ino, struct daxfs_attr *st)
{
	struct daxfs_attr self;
	u64 found;
	u32 len;
	int err = check_lookup_name(name, &len);

	if (err)
		return err;
	/* "." of any inode is itself: the core's lookup wants a directory;
	 * it must still name an inode that exists */
	if (len == 1 && name[0] == '.') {
		*ino = dir;
		return daxfs_getattr(&h->fs, dir, st ? st : &self);
	}
	/* with the attributes in one op: a name naming no inode is damage
	 * there (EUCLEAN), not a name that an unlink took (core/namei.c
	 * named_attr) */
	err = st ? daxfs_lookup_attr(&h->fs, dir, name, len, &found, st) :
		   daxfs_lookup(&h->fs, dir, name, len, &found);
	if (err)
		return err;
	*ino = found;
	return 0;
}

static int do_mknod(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev,
		    uint64_t *ino)
{
	u64 made;
	u32 len;
	int err;

	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFIFO: case S_IFSOCK: case S_IFCHR: case S_IFBLK:
		break;
	default:
		return -EINVAL;
	}
	err = check_change(h, name, &len);
	if (err)
		return err;
	err = daxfs_mknod(&h->fs, dir, name, len, mode & (S_IFMT | 07777), uid,
			  gid, rdev, &made);
	if (!err)
		*ino = made;
	return err;
}

static int do_mkdir(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t *ino)
{
	u64 made;
	u32 len;
	int err = check_change(h, name, &len);

	if (!err)
		err = daxfs_mkdir(&h->fs, dir, name, len, S_IFDIR | (mode & 07777),
				  uid, gid, &made);
	if (!err)
		*ino = made;
	return err;
}

static int do_symlink(struct daxfs_handle *h, uint64_t dir, const char *name,
		      const char *target, uint32_t uid, uint32_t gid,
		      uint64_t *ino)
{
	size_t tlen;
	u64 made;
	u32 len;
	int err = check_change(h, name, &len);

	if (err)
		return err;
	if (!target)
		return -EFAULT;
	tlen = strlen(target);
	if (!tlen)
		return -ENOENT;
	if (tlen > DAXFS_SYMLINK_MAX)
		return -ENAMETOOLONG;
	err = daxfs_symlink(&h->fs, dir, name, len, target, (u32)tlen, uid, gid,
			    &made);
	if (!err)
		*ino = made;
	return err;
}

static int do_readlink(struct daxfs_handle *h, uint64_t ino, char *buf,
		       size_t bufsize)
{
	struct daxfs_attr a;
	u32 cap;
	int n = daxfs_getattr(&h->fs, ino, &a);

	if (n)
		return n;
	if (!S_ISLNK(a.mode))
		return -EINVAL;
	cap = bufsize ? (u32)(bufsize > UINT32_MAX ? UINT32_MAX : bufsize - 1) : 0;
	n = daxfs_readlink(&h->fs, ino, buf, cap);
	if (n >= 0 && bufsize)
		buf[(u32)n < cap ? (u32)n : cap] = 0;
	return n;
}

static int do_unlink(struct daxfs_handle *h, uint64_t dir, const char *name)
{
	u32 len;
	int err = check_change(h, name, &len);

	return err ? err : daxfs_unlink(&h->fs, dir, name, len);
}

static int do_rmdir(struct daxfs_handle *h, uint64_t dir, const char *name)
{
	u32 len;
	int err = check_change(h, name, &len);

	return err ? err : daxfs_rmdir(&h->fs, dir, name, len);
}

static int do_link(struct daxfs_handle *h, uint64_t ino, uint64_t dir,
		   const char *name)
{
	u32 len;
	int err = check_change(h, name, &len);

	return err ? err : daxfs_link(&h->fs, ino, dir, name, len);
}

static int do_rename(struct daxfs_handle *h, uint64_t sdir, const char *sname,
		     uint64_t ddir, const char *dname, unsigned int flags,
		     uint32_t uid, uint32_t gid)
{
	u32 slen, dlen;
	int err = check_change(h, sname, &slen);

	if (!err)
		err = check_name(dname, &dlen);
	if (err)
		return err;
	return daxfs_rename_whiteout(&h->fs, sdir, sname, slen, ddir, dname, dlen,
				     flags, uid, gid);
}

static int do_setattr(struct daxfs_handle *h, uint64_t ino, uint32_t valid,
		      const struct daxfs_attr *a)
{
	int err = lib_writable(h);

	if (!err && (valid & DAXFS_ATTR_SIZE)) {
		err = lib_files_check(h, ino);
		if (!err && a->size > DAXFS_MAX_FILE_SIZE)
			err = -EFBIG;
	}
	return err ? err : daxfs_setattr(&h->fs, ino, valid, a);
}

struct dir_ctx {
	daxfs_dir_cb cb;
	void *ctx;
};

static int dir_fill(void *ctx, const char *name, u32 len, u64 ino, u32 dtype,
		    u64 pos)
{
	struct dir_ctx *d = ctx;

	return d->cb(d->ctx, name, len, ino, dtype, pos);
}

static int do_readdir(struct daxfs_handle *h, uint64_t dir, uint64_t *pos,
		      daxfs_dir_cb cb, void *ctx)
{
	struct daxfs_attr a;
	struct dir_ctx d = { cb, ctx };
	u64 p = *pos;
	int err = daxfs_getattr(&h->fs, dir, &a);

	if (err)
		return err;
	if (!S_ISDIR(a.mode))
		return -ENOTDIR;
	if (p == DAXFS_POS_EOF)
		return 0;
	err = daxfs_readdir(&h->fs, dir, &p, dir_fill, &d);
	if (err < 0)
		return err;
	*pos = p;
	return 0;
}

/* The public entry points: each runs its do_ variant as one lib call
 * (LIB_CALL, libdaxfs-internal.h); the changes retry a full pool while
 * space is on its way (a core change that failed -ENOSPC did nothing). */

int daxfs_ino_lookup(struct daxfs_handle *h, uint64_t dir, const char *name,
		     uint64_t *ino, struct daxfs_attr *st)
{
	LIB_CALL(h, do_lookup(h, dir, name, ino, st));
}

int daxfs_ino_mknod(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t rdev,
		    uint64_t *ino)
{
	LIB_CALL_SPACE(h, do_mknod(h, dir, name, mode, uid, gid, rdev, ino));
}

int daxfs_ino_mkdir(struct daxfs_handle *h, uint64_t dir, const char *name,
		    uint32_t mode, uint32_t uid, uint32_t gid, uint64_t *ino)
{
	LIB_CALL_SPACE(h, do_mkdir(h, dir, name, mode, uid, gid, ino));
}

int daxfs_ino_symlink(struct daxfs_handle *h, uint64_t dir, const char *name,
		      const char *target, uint32_t uid, uint32_t gid,
		      uint64_t *ino)
{
	LIB_CALL_SPACE(h, do_symlink(h, dir, name, target, uid, gid, ino));
}

int daxfs_ino_readlink(struct daxfs_handle *h, uint64_t ino, char *buf,
		       size_t bufsize)
{
	LIB_CALL(h, do_readlink(h, ino, buf, bufsize));
}

int daxfs_ino_unlink(struct daxfs_handle *h, uint64_t dir, const char *name)
{
	LIB_CALL_SPACE(h, do_unlink(h, dir, name));
}

int daxfs_ino_rmdir(struct daxfs_handle *h, uint64_t dir, const char *name)
{
	LIB_CALL_SPACE(h, do_rmdir(h, dir, name));
}

int daxfs_ino_link(struct daxfs_handle *h, uint64_t ino, uint64_t dir,
		   const char *name)
{
	LIB_CALL_SPACE(h, do_link(h, ino, dir, name));
}

int daxfs_ino_rename(struct daxfs_handle *h, uint64_t sdir, const char *sname,
		     uint64_t ddir, const char *dname, unsigned int flags)
{
	LIB_CALL_SPACE(h, do_rename(h, sdir, sname, ddir, dname, flags, h->uid,
				    h->gid));
}

int daxfs_ino_rename_as(struct daxfs_handle *h, uint64_t sdir, const char *sname,
			uint64_t ddir, const char *dname, unsigned int flags,
			uint32_t uid, uint32_t gid)
{
	LIB_CALL_SPACE(h, do_rename(h, sdir, sname, ddir, dname, flags, uid, gid));
}

int daxfs_ino_setattr(struct daxfs_handle *h, uint64_t ino, uint32_t valid,
		      const struct daxfs_attr *a)
{
	LIB_CALL_SPACE(h, do_setattr(h, ino, valid, a));
}

static int do_setflags(struct daxfs_handle *h, uint64_t ino, uint32_t flags,
		       uint32_t may)
{
	int err = lib_writable(h);

	return err ? err : daxfs_setflags(&h->fs, ino, flags, may);
}

int daxfs_open_allowed(const struct daxfs_attr *a, int oflags)
{
	bool write = (oflags & O_ACCMODE) != O_RDONLY;

	if (write && (a->flags & DAXFS_FL_IMMUTABLE))
		return -EPERM;
	if ((a->flags & DAXFS_FL_APPEND) &&
	    ((oflags & O_TRUNC) || (write && !(oflags & O_APPEND))))
		return -EPERM;
	return 0;
}

int daxfs_ino_setflags(struct daxfs_handle *h, uint64_t ino, uint32_t flags,
		       uint32_t may)
{
	LIB_CALL(h, do_setflags(h, ino, flags, may));
}

int daxfs_ino_readdir(struct daxfs_handle *h, uint64_t dir, uint64_t *pos,
		      daxfs_dir_cb cb, void *ctx)
{
	LIB_CALL(h, do_readdir(h, dir, pos, cb, ctx));
}
