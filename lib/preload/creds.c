// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Credential changes: a process that drops privileges (a daemon, su,
 * pjdfstest's -u/-g) must still reach the region, as a process keeps a
 * mounted filesystem whatever its uid becomes.  The region file is
 * opened lazily, at the first region call, with the caller's rights: after
 * setuid(65534) that open of a root-owned region failed (EACCES) and every
 * region call with it.  So the region is opened before the change, and
 * new files take the credentials after it (daxfs_set_creds: the fs
 * uid/gid, which the kernel gives new files).  docs/preload.md
 * "Credentials".
 */
#define _GNU_SOURCE
#include <sys/fsuid.h>
#include <sys/types.h>
#include <grp.h>
#include <unistd.h>

#include "preload.h"

/* Before a change: the region is open (when it can be: no error here,
 * the call that needs it reports it). */
static void before(void)
{
	if (pl_cfg.enabled)
		pl_handle();
}

/* After a change that succeeded: new files are the new fs ids' (an
 * invalid id changes nothing and returns the current one). */
static int after(int ret)
{
	REAL(int, setfsuid, uid_t);
	REAL(int, setfsgid, gid_t);
	struct daxfs_handle *h = pl_handle_peek();

	if (!ret && h)
		daxfs_set_creds(h, (uint32_t)real_setfsuid((uid_t)-1),
				(uint32_t)real_setfsgid((gid_t)-1));
	return ret;
}

#define CRED_CALL(name, type)						\
PUBLIC int name(type id)						\
{									\
	REAL(int, name, type);						\
									\
	before();							\
	return after(real_##name(id));					\
}

CRED_CALL(setuid, uid_t)
CRED_CALL(seteuid, uid_t)
CRED_CALL(setgid, gid_t)
CRED_CALL(setegid, gid_t)

PUBLIC int setreuid(uid_t r, uid_t e)
{
	REAL(int, setreuid, uid_t, uid_t);

	before();
	return after(real_setreuid(r, e));
}

PUBLIC int setregid(gid_t r, gid_t e)
{
	REAL(int, setregid, gid_t, gid_t);

	before();
	return after(real_setregid(r, e));
}

PUBLIC int setresuid(uid_t r, uid_t e, uid_t s)
{
	REAL(int, setresuid, uid_t, uid_t, uid_t);

	before();
	return after(real_setresuid(r, e, s));
}

PUBLIC int setresgid(gid_t r, gid_t e, gid_t s)
{
	REAL(int, setresgid, gid_t, gid_t, gid_t);

	before();
	return after(real_setresgid(r, e, s));
}

/* setgroups: the supplementary groups take part in the region file's
 * access check too. */
PUBLIC int setgroups(size_t n, const gid_t *list)
{
	REAL(int, setgroups, size_t, const gid_t *);

	before();
	return real_setgroups(n, list);
}

/* setfsuid/setfsgid return the previous id, never an error. */
#define FS_CALL(name, type)						\
PUBLIC int name(type id)						\
{									\
	REAL(int, name, type);						\
	int old;							\
									\
	before();							\
	old = real_##name(id);						\
	after(0);							\
	return old;							\
}

FS_CALL(setfsuid, uid_t)
FS_CALL(setfsgid, gid_t)
