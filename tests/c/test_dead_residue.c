// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A DEAD mark no rmdir owns (docs/namespace.md "Waiting for an rmdir"):
 * a peer's stray store, or the residue of a dead owner nobody can
 * recover yet.  Waits for it end after four leases with no owner getting
 * on, and each call then answers an errno its system call documents:
 * rename EBUSY (it said EAGAIN, which rename(2) does not have); rmdir of
 * the directory and a create inside it ENOENT, as when the rmdir that
 * marked it had finished first.  Nothing changes on the way: the
 * names and counts are as before, and the directory is usable again once
 * the mark is gone (fsck clears it: core/check-ns.c).
 */
#include "tfile.h"
#include "core/inode.h"
#include "core/dir.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL
#define LEASE_MS 20

static struct daxfs_fs A;

static void set_dead(u64 ino, bool on)
{
	struct daxfs_inode *ip = t_ip(&A, ino);
	u64 v;

	CHECK(ip != NULL);
	v = daxfs_load(&ip->aux);

	CHECK(daxfs_cas(&ip->aux, &v, on ? v | DAXFS_DIR_DEAD :
					   v & ~DAXFS_DIR_DEAD));
}

static void t_residue(void)
{
	struct daxfs_attr at;
	u64 p, d, e, f, x;

	CHECK_EQ(daxfs_mkdir(&A, ROOT, "p", 1, 0755, 0, 0, &p), 0);
	CHECK_EQ(daxfs_mkdir(&A, p, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_mkdir(&A, p, "e", 1, 0755, 0, 0, &e), 0);
	CHECK_EQ(daxfs_mknod(&A, p, "f", 1, DAXFS_S_IFREG, 0, 0, 0, &f), 0);
	set_dead(d, true);

	CHECK_EQ(daxfs_rmdir(&A, p, "d", 1), -ENOENT);
	/* d the source, d the target, d in an exchange */
	CHECK_EQ(daxfs_rename(&A, p, "d", 1, p, "d2", 2, 0), -EBUSY);
	CHECK_EQ(daxfs_rename(&A, p, "e", 1, p, "d", 1, 0), -EBUSY);
	CHECK_EQ(daxfs_rename(&A, p, "e", 1, p, "d", 1,
			      DAXFS_RENAME_EXCHANGE), -EBUSY);
	CHECK_EQ(daxfs_mknod(&A, d, "x", 1, DAXFS_S_IFREG, 0, 0, 0, &x),
		 -ENOENT);
	/* what does not touch d goes on */
	CHECK_EQ(daxfs_rename(&A, p, "f", 1, p, "g", 1, 0), 0);

	CHECK_EQ(daxfs_lookup(&A, p, "d", 1, &x), 0);
	CHECK_EQ(x, d);
	CHECK_EQ(daxfs_lookup(&A, p, "e", 1, &x), 0);
	CHECK_EQ(x, e);
	CHECK_EQ(daxfs_lookup(&A, p, "d2", 2, &x), -ENOENT);
	CHECK_EQ(daxfs_lookup(&A, d, "x", 1, &x), -ENOENT);
	CHECK_EQ(daxfs_getattr(&A, p, &at), 0);
	CHECK_EQ(at.nlink, 4);
	CHECK_EQ(daxfs_getattr(&A, d, &at), 0);
	CHECK_EQ(at.nlink, 2);

	/* the mark gone (fsck's repair), d works again */
	set_dead(d, false);
	CHECK_EQ(daxfs_rename(&A, p, "d", 1, p, "d2", 2, 0), 0);
	CHECK_EQ(daxfs_rmdir(&A, p, "d2", 2), 0);
	CHECK_EQ(daxfs_rmdir(&A, p, "e", 1), 0);
	CHECK_EQ(daxfs_unlink(&A, p, "g", 1), 0);
	CHECK_EQ(daxfs_rmdir(&A, ROOT, "p", 1), 0);
}

int main(void)
{
	struct daxfs_format_opts o = { .lease_ms = LEASE_MS };

	t_setup(&A, REGION, &o);
	RUN(t_residue);
	return t_done();
}
