// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: fallocate(2) and lseek(2)'s SEEK_DATA / SEEK_HOLE through
 * the core (core/falloc.c, core/extent.c; docs/files.md "fallocate").
 * The kernel drops its cached pages of a punched or zeroed range itself.
 */
#include <errno.h>

#include "dfuse.h"

void dfuse_fallocate(fuse_req_t req, fuse_ino_t node, int mode, off_t off,
		     off_t len, struct fuse_file_info *fi)
{
	struct dfuse *d = fuse_req_userdata(req);

	if (dfuse_open_stale(d, dfuse_file_join(fi)))
		return (void)fuse_reply_err(req, ESTALE);
	if (off < 0 || len <= 0)
		return (void)fuse_reply_err(req, EINVAL);
	fuse_reply_err(req, -daxfs_file_fallocate(d->h, dfuse_ino(d, node),
						  mode, (uint64_t)off,
						  (uint64_t)len));
}

void dfuse_lseek(fuse_req_t req, fuse_ino_t node, off_t off, int whence,
		 struct fuse_file_info *fi)
{
	struct dfuse *d = fuse_req_userdata(req);
	uint64_t res = 0;
	int err;

	if (dfuse_open_stale(d, dfuse_file_join(fi)))
		return (void)fuse_reply_err(req, ESTALE);
	if (off < 0)
		return (void)fuse_reply_err(req, ENXIO);
	err = daxfs_file_seek(d->h, dfuse_ino(d, node), (uint64_t)off, whence,
			      &res);
	if (err)
		return (void)fuse_reply_err(req, -err);
	fuse_reply_lseek(req, (off_t)res);
}
