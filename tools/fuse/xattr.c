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
#define DFUSE_GROUPS_MAX	256	/* supplementary groups looked at */

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

/* Whether the caller is in group gid (its gid or a supplementary one). */
static bool in_group(fuse_req_t req, uint32_t gid)
{
	gid_t groups[DFUSE_GROUPS_MAX];
	int i, n;

	if (fuse_req_ctx(req)->gid == gid)
		return true;
	n = fuse_req_getgroups(req, DFUSE_GROUPS_MAX, groups);
	for (i = 0; i < n && i < DFUSE_GROUPS_MAX; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

/*
 * A new access ACL clears the set-group-ID bit when the caller is neither
 * in the file's group nor privileged, as chmod does (Linux's
 * posix_acl_update_mode).  The kernel leaves that to servers without
 * HANDLE_KILLPRIV_V2, which libfuse 3.14 cannot ask for.  uid 0 stands
 * for CAP_FSETID.
 */
static void acl_kill_sgid(fuse_req_t req, uint64_t ino)
{
	struct dfuse *d = dfuse_of(req);
	struct daxfs_attr a, n;

	if (fuse_req_ctx(req)->uid == 0 || daxfs_fstat(d->h, ino, &a) ||
	    !(a.mode & S_ISGID) || in_group(req, a.gid))
		return;
	memset(&n, 0, sizeof(n));
	n.mode = a.mode & ~S_ISGID;
	daxfs_ino_setattr(d->h, ino, DAXFS_ATTR_MODE, &n);
}

void dfuse_setxattr(fuse_req_t req, fuse_ino_t node, const char *name,
		    const char *value, size_t size, int flags)
{
	struct dfuse *d = dfuse_of(req);
	uint64_t ino = dfuse_ino(d, node);
	int err = may_trusted(req, name);

	if (!err)
		err = daxfs_xattr_set(d->h, ino, name, value, size, flags);
	if (!err && d->acl && !strcmp(name, "system.posix_acl_access"))
		acl_kill_sgid(req, ino);
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
