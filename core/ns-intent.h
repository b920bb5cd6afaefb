/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The namespace intent (docs/recovery.md): DAXFS_INTENT_RENAME carries
 * every namespace op of core/namei.c.  a[6] = kind | step << 8 | flags
 * << 16; a[0] is the directory (a rename's source directory), and
 * a[1] the rename's destination directory, or the inode an unlink or an
 * rmdir removes a name of.  A rename's a[2] and a[4] are the leaves of
 * its source and target names.
 */
#ifndef DAXFS_NS_INTENT_H
#define DAXFS_NS_INTENT_H

#define NS_KIND_RENAME		1u
#define NS_KIND_RMDIR		2u
#define NS_KIND_CREATE		3u	/* docs/recovery.md */
#define NS_KIND_LINK		4u
#define NS_KIND_UNLINK		5u
#define NS_FL_DIR		1u	/* create: a directory (parent nlink+1) */
/* create, link: a recoverer is rolling it back; the step is what is left
 * to undo (create_recover, link_recover) */
#define NS_FL_UNDO		0x40u
#define NS_META(kind, step, fl)	((u64)(kind) | (u64)(step) << 8 | (u64)(fl) << 16)
#define NS_KIND(m)		((u32)((m) & 0xff))
#define NS_STEP(m)		((u32)(((m) >> 8) & 0xff))
#define NS_FLAGS(m)		((u32)(((m) >> 16) & 0xff))

#endif
