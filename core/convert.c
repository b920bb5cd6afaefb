// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Offline conversion of a format version 1 to 12 image to the current
 * version (docs/format.md "Changelog"): 1 -> 2, the free-stack heads
 * become {offset, 64-bit tag} pairs; 2 -> 3, a host slot's heartbeat
 * word becomes a renewal counter (any value is a valid counter, so only
 * the version changes); 3 -> 4, a regular file's parent word becomes its
 * write gate and its rdev word is unused (both were the shrink words of
 * version 3's append/truncate gate: they become 0, an open gate);
 * 4 -> 5, the lock table: state.lock_root (a pad word, 0 in every older
 * image) is made 0 = "no locks yet", since no host of an older version
 * could have taken a cluster-wide lock; 5 -> 6, extended attributes: an
 * inode record's last word (reserved, 0 in every older image) becomes its
 * xattr claim, free at 0, and XATTR overlay keys become valid; there are
 * none yet, so only the version changes; 6 -> 7, strict overwrites out
 * of place: a FILE_WRITE intent's a[6] names a redo record and its
 * a[4] / a[5] a page being published in the version 7 layout, so the
 * words an older lane left there (an earlier XATTR intent's, or version
 * 6's a[4] = block, a[5] = page, a[6] = check) are cleared in every lane
 * holding a FILE_WRITE intent (no older host wrote a record; a page a
 * version 6 record named shows as leaked and the repair after the
 * conversion returns it); 7 -> 8, unwritten pages: a data page word may
 * carry DAXFS_RADIX_UNWRITTEN (bit 3), which no version 7 word has, so
 * only the version changes; 8 -> 9, attribute flags: bits 2..6 of an
 * inode's flags word become chattr flags; no older host set them, and
 * whatever garbage sits there is cleared, so that no inode turns
 * immutable by the conversion; 9 -> 10, the rename intent may carry
 * DAXFS_RENAME_WHITEOUT (flag bit 2), which no version 9 host wrote (its
 * daxfs_rename refused the flag), so a version 9 intent left in a dead
 * lane reads the same and only the version changes; 10 -> 11, a level-2
 * radix slot may name a 2 MiB run (DAXFS_RADIX_RUN), which no version 10
 * host wrote, so only the version changes; 11 -> 12, a page free-stack
 * word is last | (pages - 1), and every word a version 11 host wrote is
 * a one-page entry (low bits 0), so only the version changes; 12 -> 13,
 * an inode's change counter keeps its changes in flight in its top 16
 * bits (DAXFS_CHANGE_FLIGHT), which a version 12 count never reached: each
 * counter keeps its count, moved by one, with nothing in flight.  For
 * fsck.daxfs --convert; every host must
 * be gone, judged by the caller's lease observations.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "check.h"
#include "inode.h"

/* A version 1 line: v = tag << 44 | off >> 6, hint words at pad[0..2]. */
struct v1_head {
	u64 off, tag, hint[3];
};

static void v1_decode(struct daxfs_fs *fs, unsigned int c, struct v1_head *h)
{
	u64 *w = (u64 *)&fs->state->free_head[c];
	u64 v = daxfs_load(&w[0]), size = c < DAXFS_CLASS_PAGE ?
		64ULL << c : DAXFS_PAGE_SIZE;
	int i;

	h->off = (v & DAXFS_V1_FREE_OFF_MASK) << 6;
	h->tag = v >> DAXFS_V1_FREE_TAG_SHIFT;
	/* a head that names no object of its class: the stack is lost and
	 * the check after the conversion reclaims it as leaked */
	if (h->off && !daxfs_ptr(fs, h->off, size, size))
		h->off = 0;
	for (i = 0; i < 3; i++)
		h->hint[i] = daxfs_load(&w[1 + i]);
}

static void line_clear(struct daxfs_fs *fs, unsigned int c)
{
	u64 *w = (u64 *)&fs->state->free_head[c];
	int i;

	for (i = 0; i < 8; i++)
		daxfs_store(&w[i], 0);
}

/* Runs fn on every inode record the overlay publishes; a bucket or
 * record that does not check out is left to fsck. */
static void each_inode(struct daxfs_fs *fs,
		       void (*fn)(struct daxfs_fs *fs, struct daxfs_inode *ip))
{
	u64 i;

	for (i = 0; i < fs->nr_buckets; i++) {
		struct daxfs_bucket *b = &fs->buckets[i];
		u64 k = daxfs_load(&b->key), v = daxfs_load(&b->value);
		struct daxfs_inode *ip;

		if (k == DAXFS_KEY_EMPTY || k == DAXFS_KEY_TOMB ||
		    (k & DAXFS_KEY_PENDING) ||
		    (k >> DAXFS_KEY_TYPE_SHIFT) != DAXFS_KEY_INODE)
			continue;
		ip = daxfs_ptr(fs, v, sizeof(*ip), DAXFS_OFF_ALIGN);
		if (!ip || daxfs_load32(&ip->magic) != DAXFS_INODE_MAGIC)
			continue;
		fn(fs, ip);
		daxfs_flush(ip, sizeof(*ip));
	}
}

/*
 * 3 -> 4: every regular file's gate opens (parent = 0) and its rdev is 0.
 * Either word at 0 is valid in version 3 too ("no shrink yet"), so this
 * runs before the version changes and a crash in it leaves a version 3
 * image.
 */
static void v3_open_gate(struct daxfs_fs *fs, struct daxfs_inode *ip)
{
	if (!DAXFS_IS_REG(daxfs_load32(&ip->mode)))
		return;
	daxfs_store(&ip->parent, 0);
	daxfs_store(&ip->rdev, 0);
}

/* 5 -> 6: the record's last word (reserved before) is its xattr claim:
 * 0, free.  0 was the only value older code wrote there. */
static void v5_free_claim(struct daxfs_fs *fs, struct daxfs_inode *ip)
{
	daxfs_store32(&ip->xattr_claim, 0);
}

/* 8 -> 9: only BASE and ORPHAN were defined; keep them, drop the rest */
static void v8_no_attrs(struct daxfs_fs *fs, struct daxfs_inode *ip)
{
	daxfs_store32(&ip->flags, daxfs_load32(&ip->flags) &
			(DAXFS_IF_BASE | DAXFS_IF_ORPHAN));
}

/* 12 -> 13: nothing in flight; the count moves, so that no front end of
 * the new version takes a word it saw before for one it vouched for.
 * Any count is a version 12 counter: a crash here leaves a version 12
 * image. */
static void v12_settle(struct daxfs_fs *fs, struct daxfs_inode *ip)
{
	daxfs_store(&ip->change, daxfs_change_cleared(daxfs_load(&ip->change)));
}

/* 6 -> 7: no FILE_WRITE intent names a redo record or a page being
 * published.  The words at 0 mean "no page" to version 6 too: a crash
 * here leaves a version 6 image. */
static void v6_no_redo(struct daxfs_fs *fs)
{
	u64 i, n = (u64)fs->sb.max_hosts * DAXFS_LANES;

	for (i = 0; i < n; i++) {
		struct daxfs_intent *in = &fs->lanes[i].intent;

		if (daxfs_load(&in->op) != DAXFS_INTENT_FILE_WRITE)
			continue;
		daxfs_store(&in->a[4], 0);
		daxfs_store(&in->a[5], 0);
		daxfs_store(&in->a[6], 0);
		daxfs_flush(in, sizeof(*in));
	}
}

/*
 * fs: opened with DAXFS_FS_CONVERT, its observation table watched for
 * about a lease (daxfs_hosts_observe).  Returns 0 when converted, 1 when
 * already current, -EBUSY when a host's lease has not been seen to run
 * out (unless force).
 * Crash story: the stacks are emptied first (a valid version 1 image
 * that leaks their objects), then the superblock says the new version
 * (its version and checksum: two stores in two cache lines; a crash
 * between them, or a power loss that keeps only one, leaves a checksum
 * that holds for the other version, which fsck.daxfs tells from damage
 * and finishes: daxfs_convert_torn_version), then the new heads are
 * written; a crash anywhere leaks at most the free stacks, which
 * fsck.daxfs -y gives back.
 */
int daxfs_convert(struct daxfs_fs *fs, bool force)
{
	struct v1_head heads[DAXFS_NR_CLASSES];
	struct daxfs_super *sb = (struct daxfs_super *)fs->base;
	bool v1 = fs->sb.version == DAXFS_VERSION_V1;
	unsigned int c;
	u32 slot;

	if (fs->sb.version == DAXFS_VERSION)
		return 1;
	for (slot = 0; slot < fs->sb.max_hosts && !force; slot++) {
		u64 st = daxfs_load(&daxfs_host_at(fs, slot)->state);

		if (daxfs_host_st(st) == DAXFS_HOST_ALIVE &&
		    !daxfs_host_expired(fs, slot))
			return -EBUSY;
	}
	for (c = 0; v1 && c < DAXFS_NR_CLASSES; c++) {
		v1_decode(fs, c, &heads[c]);
		line_clear(fs, c);
	}
	if (fs->sb.version < DAXFS_VERSION_V4)
		each_inode(fs, v3_open_gate);
	/* to DAXFS_VERSION_LOCKS: whatever the step before left, no locks
	 * (a version 5 image keeps its lock table) */
	if (fs->sb.version < DAXFS_VERSION_LOCKS)
		daxfs_store(&fs->state->lock_root, 0);
	if (fs->sb.version < DAXFS_VERSION_XATTR)
		each_inode(fs, v5_free_claim);
	if (fs->sb.version < DAXFS_VERSION_REDO)
		v6_no_redo(fs);
	/* to DAXFS_VERSION_UNWRITTEN: nothing.  A version 7 word naming a
	 * data page never has bit 3 set (offsets are page aligned, a root's
	 * bits 3..11 are zero), so every page stays plain data. */
	if (fs->sb.version < DAXFS_VERSION_ATTRS)
		each_inode(fs, v8_no_attrs);
	/* to DAXFS_VERSION_WHITEOUT, DAXFS_VERSION_RUNS and
	 * DAXFS_VERSION_EXTENTS: nothing (see above) */
	if (fs->sb.version < DAXFS_VERSION_FLIGHT)
		each_inode(fs, v12_settle);
	/* to DAXFS_VERSION_WRITTEN: nothing.  A version 13 count never
	 * reaches bit 47, so no word is marked. */
	/* to DAXFS_VERSION_ATTR_EPOCH: the word was reserved (zero); it
	 * starts at 1, which no front end has seen (docs/format.md) */
	if (fs->sb.version < DAXFS_VERSION_ATTR_EPOCH)
		daxfs_store(&fs->state->attr_epoch.v, 1);
	daxfs_flush(fs->state, sizeof(*fs->state));
	daxfs_fence();
	daxfs_convert_seal(sb);
	for (c = 0; v1 && c < DAXFS_NR_CLASSES; c++) {
		struct daxfs_free_line *l = &fs->state->free_head[c];
		int i;

		for (i = 0; i < 3; i++)
			daxfs_store(&l->pad[i], heads[c].hint[i]);
		daxfs_store(&l->head.tag, heads[c].tag + 1);
		daxfs_store(&l->head.off, heads[c].off);
	}
	daxfs_flush(fs->state, sizeof(*fs->state));
	fs->sb.version = DAXFS_VERSION;
	return 0;
}

static u32 sb_csum_as(const struct daxfs_super *sb, u32 version)
{
	struct daxfs_super t;

	memcpy(&t, sb, sizeof(t));
	t.version = version;
	return daxfs_crc32c(0, &t, __builtin_offsetof(struct daxfs_super, csum));
}

u32 daxfs_convert_torn_version(const void *base)
{
	const struct daxfs_super *sb = base;
	u32 have = sb->version, v;

	if (sb->magic != DAXFS_MAGIC || sb_csum_as(sb, have) == sb->csum)
		return 0;
	/* the version landed, the checksum is the old version's */
	if (have == DAXFS_VERSION) {
		for (v = DAXFS_VERSION_V1; v < DAXFS_VERSION; v++)
			if (sb_csum_as(sb, v) == sb->csum)
				return v;
		return 0;
	}
	/* the checksum landed, the version did not */
	if (have >= DAXFS_VERSION_V1 && have < DAXFS_VERSION &&
	    sb_csum_as(sb, DAXFS_VERSION) == sb->csum)
		return DAXFS_VERSION;
	return 0;
}

void daxfs_convert_seal(void *base)
{
	struct daxfs_super *sb = base;

	sb->version = DAXFS_VERSION;
	daxfs_crash_point("convert.version");
	sb->csum = sb_csum_as(sb, DAXFS_VERSION);
	daxfs_flush(sb, sizeof(*sb));
	daxfs_fence();
}
