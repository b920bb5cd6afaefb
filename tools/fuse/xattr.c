// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: extended attributes and POSIX ACLs (docs/xattr.md,
 * docs/fuse.md).  The kernel enforces ACLs (FUSE_CAP_POSIX_ACL with
 * default_permissions): it reads system.posix_acl_access through
 * getxattr.  What it leaves to the server: the mode follows an access
 * ACL (libdaxfs's daxfs_xattr_set does that), the umask applies only
 * under a directory without a default ACL (FUSE_CAP_DONT_MASK: the
 * server gets it unapplied), and a new object inherits the default ACL
 * (daxfs_acl_inherit).  trusted.* needs CAP_SYS_ADMIN, as in the kernel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dfuse.h"
#include "daxfs/libdaxfs-xattr.h"

#define DFUSE_XATTR_LIST_MAX	65536u	/* Linux's XATTR_LIST_MAX */

static struct dfuse *dfuse_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err < 0 ? -err : err);
}

/* trusted.* is the administrator's (the VFS's xattr_permission):
 * uid 0 stands for CAP_SYS_ADMIN here. */
static int may_trusted(fuse_req_t req, const char *name)
{
	const struct fuse_ctx *c = fuse_req_ctx(req);

	if (strncmp(name, "trusted.", 8))
		return 0;
	return c->uid == 0 ? 0 : -EPERM;
}

/* A value read into a buffer of size (0: its length only). */
static void reply_value(fuse_req_t req, int n, size_t size, const void *buf)
{
	if (n < 0)
		return reply_err(req, n);
	if (!size)
		fuse_reply_xattr(req, (size_t)n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

void dfuse_setxattr(fuse_req_t req, fuse_ino_t node, const char *name,
		    const char *value, size_t size, int flags)
{
	struct dfuse *d = dfuse_of(req);
	int err = may_trusted(req, name);

	if (!err)
		err = daxfs_xattr_set(d->h, dfuse_ino(d, node), name, value,
				      size, flags);
	reply_err(req, err);
}

void dfuse_getxattr(fuse_req_t req, fuse_ino_t node, const char *name,
		    size_t size)
{
	struct dfuse *d = dfuse_of(req);
	void *buf = NULL;
	int n = may_trusted(req, name);

	if (n)
		return reply_err(req, n == -EPERM ? -ENODATA : n);
	if (size > DAXFS_XATTR_SIZE_MAX)
		size = DAXFS_XATTR_SIZE_MAX;
	if (size && !(buf = malloc(size)))
		return reply_err(req, -ENOMEM);
	n = daxfs_xattr_get(d->h, dfuse_ino(d, node), name, buf, size);
	reply_value(req, n, size, buf);
	free(buf);
}

/* Drops the trusted.* names an unprivileged caller may not see. */
static int list_visible(fuse_req_t req, char *buf, int n)
{
	int in = 0, out = 0, len;

	if (fuse_req_ctx(req)->uid == 0)
		return n;
	while (in < n) {
		len = (int)strlen(buf + in) + 1;
		if (strncmp(buf + in, "trusted.", 8)) {
			memmove(buf + out, buf + in, (size_t)len);
			out += len;
		}
		in += len;
	}
	return out;
}

void dfuse_listxattr(fuse_req_t req, fuse_ino_t node, size_t size)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	char *buf = malloc(DFUSE_XATTR_LIST_MAX);
	int n;

	if (!buf)
		return reply_err(req, -ENOMEM);
	/* the whole list, to filter it; then the caller's size rules */
	n = daxfs_xattr_list(d->h, ino, buf, DFUSE_XATTR_LIST_MAX);
	if (n >= 0)
		n = list_visible(req, buf, n);
	if (n >= 0 && size && (size_t)n > size)
		n = -ERANGE;
	reply_value(req, n, size, buf);
	free(buf);
}

void dfuse_removexattr(fuse_req_t req, fuse_ino_t node, const char *name)
{
	struct dfuse *d = dfuse_of(req);
	int err = may_trusted(req, name);

	if (!err)
		err = daxfs_xattr_remove(d->h, dfuse_ino(d, node), name);
	reply_err(req, err);
}

/* Does directory dir have a default ACL? */
static bool has_default_acl(struct dfuse *d, uint64_t dir)
{
	return daxfs_xattr_get(d->h, dir, DAXFS_XATTR_ACL_DEFAULT, NULL, 0) > 0;
}

void dfuse_acl_mode(fuse_req_t req, uint64_t dir, uint32_t *mode)
{
	struct dfuse *d = dfuse_of(req);

	/* with a default ACL the umask does not apply (posix_acl_create) */
	if (d->acl && !S_ISLNK(*mode) && !has_default_acl(d, dir))
		*mode &= ~(fuse_req_ctx(req)->umask & 0777);
}

void dfuse_acl_created(fuse_req_t req, uint64_t dir, uint64_t ino)
{
	struct dfuse *d = dfuse_of(req);

	/* a failure leaves the object with its mode: as a create under
	 * a bad default ACL on Linux (which fails it instead) */
	if (d->acl)
		daxfs_acl_inherit(d->h, dir, ino);
}
