// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * POSIX ACL evaluation over the Linux xattr layout of
 * system.posix_acl_access (docs/xattr.md "ACLs"), for the front ends
 * that check permissions themselves (libdaxfs, the preload).  daxfs.ko
 * uses the kernel's own ACL code.  The value is the caller's private
 * copy (daxfs_getxattr), read as little-endian words.
 */
#include "compat.h"
#include "daxfs_core.h"

#define ACL_VERSION	2u
#define ACL_USER_OBJ	0x01u
#define ACL_USER	0x02u
#define ACL_GROUP_OBJ	0x04u
#define ACL_GROUP	0x08u
#define ACL_MASK	0x10u
#define ACL_OTHER	0x20u
#define ACL_MAX_ENTRIES	8192u

struct acl_e {
	u32 tag, perm, id;
};

static u32 le32_at(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u32 acl_count(u32 alen)
{
	if (alen < 4 || (alen - 4) % 8 || (alen - 4) / 8 > ACL_MAX_ENTRIES)
		return 0;
	return (alen - 4) / 8;
}

static void acl_entry(const void *acl, u32 i, struct acl_e *e)
{
	const u8 *p = (const u8 *)acl + 4 + 8 * i;

	e->tag = (u32)p[0] | (u32)p[1] << 8;
	e->perm = (u32)p[2] | (u32)p[3] << 8;
	e->id = le32_at(p + 4);
}

/* Tag order of a valid ACL (Linux sorts entries by tag, then id). */
static int tag_rank(u32 tag)
{
	switch (tag) {
	case ACL_USER_OBJ: return 0;
	case ACL_USER: return 1;
	case ACL_GROUP_OBJ: return 2;
	case ACL_GROUP: return 3;
	case ACL_MASK: return 4;
	case ACL_OTHER: return 5;
	}
	return -1;
}

int daxfs_acl_valid(const void *acl, u32 alen, bool *equiv)
{
	u32 n = acl_count(alen), i, seen[6] = { 0 }, last_id = 0;
	int r, prev = -1;
	struct acl_e e;

	if (!acl || !n || le32_at(acl) != ACL_VERSION)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		acl_entry(acl, i, &e);
		r = tag_rank(e.tag);
		if (r < 0 || r < prev || e.perm & ~7u)
			return -EINVAL;
		if (r == 1 || r == 3) {
			/* named entries: ids strictly increasing */
			if (r == prev && e.id <= last_id)
				return -EINVAL;
			last_id = e.id;
		} else if (seen[r]) {
			return -EINVAL;
		}
		seen[r]++;
		prev = r;
	}
	if (!seen[0] || !seen[2] || !seen[5] ||
	    ((seen[1] || seen[3]) && !seen[4]))
		return -EINVAL;
	if (equiv)
		*equiv = !seen[1] && !seen[3] && !seen[4];
	return 0;
}

int daxfs_acl_mode(const void *acl, u32 alen, u32 *mode)
{
	u32 n = acl_count(alen), i, m = 0, group = 0;
	bool mask = false;
	struct acl_e e;

	if (daxfs_acl_valid(acl, alen, NULL))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		acl_entry(acl, i, &e);
		if (e.tag == ACL_USER_OBJ)
			m |= e.perm << 6;
		else if (e.tag == ACL_GROUP_OBJ && !mask)
			group = e.perm;
		else if (e.tag == ACL_MASK) {
			group = e.perm;
			mask = true;
		} else if (e.tag == ACL_OTHER)
			m |= e.perm;
	}
	*mode = m | group << 3;
	return 0;
}

static bool in_group(const struct daxfs_cred *c, u32 gid)
{
	u32 i;

	if (c->gid == gid)
		return true;
	for (i = 0; i < c->nr_groups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

/* The ACL's mask entry's permissions, or 7 without one. */
static u32 acl_mask(const void *acl, u32 n)
{
	struct acl_e e;
	u32 i;

	for (i = 0; i < n; i++) {
		acl_entry(acl, i, &e);
		if (e.tag == ACL_MASK)
			return e.perm;
	}
	return 7;
}

/* Linux's posix_acl_permission(): the first entry that matches decides,
 * named users and groups (and the owning group) through the mask. */
static int acl_check(const struct daxfs_cred *c, u32 uid, u32 gid,
		     const void *acl, u32 n, u32 want)
{
	bool group_found = false;
	struct acl_e e;
	u32 i, mask = acl_mask(acl, n);

	for (i = 0; i < n; i++) {
		acl_entry(acl, i, &e);
		switch (e.tag) {
		case ACL_USER_OBJ:
			if (c->uid == uid)
				return (e.perm & want) == want ? 0 : -EACCES;
			break;
		case ACL_USER:
			if (c->uid == e.id)
				return (e.perm & mask & want) == want ? 0 : -EACCES;
			break;
		case ACL_GROUP_OBJ:
		case ACL_GROUP:
			if (in_group(c, e.tag == ACL_GROUP ? e.id : gid)) {
				group_found = true;
				if ((e.perm & mask & want) == want)
					return 0;
			}
			break;
		case ACL_OTHER:
			if (group_found)
				return -EACCES;
			return (e.perm & want) == want ? 0 : -EACCES;
		}
	}
	return -EACCES;
}

int daxfs_acl_permission(const struct daxfs_cred *cred, u32 mode, u32 uid,
			 u32 gid, const void *acl, u32 alen, u32 mask)
{
	u32 bits;

	mask &= 7;
	if (acl) {
		if (daxfs_acl_valid(acl, alen, NULL))
			return -EINVAL;
		return acl_check(cred, uid, gid, acl, acl_count(alen), mask);
	}
	if (cred->uid == uid)
		bits = mode >> 6;
	else if (in_group(cred, gid))
		bits = mode >> 3;
	else
		bits = mode;
	return ((bits & 7) & mask) == mask ? 0 : -EACCES;
}
