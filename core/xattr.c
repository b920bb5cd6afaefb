// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Extended attributes (format version 6, docs/xattr.md).  An inode's
 * attributes are one immutable set named by the overlay key XATTR(ino).
 * Readers look the key up and read the set under their epoch.  A change
 * takes the inode's xattr_claim (one changer per inode across the
 * cluster, so no update is lost), builds the new set out of place,
 * publishes it with one CAS of the bucket's value and retires the old
 * one; its intent record lets the recovery of a dead changer finish or
 * undo it.  The free of an inode deletes the key under the same claim.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "inode.h"
#include "xattr-set.h"
#include "xattr-int.h"

#define XC_SPINS	64u		/* claim spins between yields */
#define XC_CHECK_SPINS	(64u * 1024)	/* ... then look at the holder */
#define XA_BOUNCE	256u		/* stack bytes per copy step */

static u64 xattr_key(u64 ino)
{
	return daxfs_key(DAXFS_KEY_XATTR, ino);
}

/* ---- names ---- */

struct xa_prefix {
	const char *s;
	u32 len;
	bool exact;			/* the whole name (ACLs) */
};

static const struct xa_prefix xa_prefixes[] = {
	{ "user.", 5, false },
	{ "trusted.", 8, false },
	{ "security.", 9, false },
	{ DAXFS_XATTR_ACL_ACCESS, 23, true },
	{ DAXFS_XATTR_ACL_DEFAULT, 24, true },
};

/* Linux's rules (fs/xattr.c): which names exist, and where.  write: a
 * set or remove (-EPERM for user.* on other types), else -ENODATA. */
static int name_check(const char *name, u32 nlen, u32 mode, bool write)
{
	const struct xa_prefix *p = NULL;
	u32 i;

	if (!nlen || nlen > DAXFS_XATTR_NAME_MAX)
		return -ERANGE;
	if (memchr(name, 0, nlen))
		return -EINVAL;
	for (i = 0; i < sizeof(xa_prefixes) / sizeof(xa_prefixes[0]); i++) {
		const struct xa_prefix *q = &xa_prefixes[i];

		if (nlen >= q->len && !memcmp(name, q->s, q->len) &&
		    (!q->exact || nlen == q->len)) {
			p = q;
			break;
		}
	}
	if (!p)
		return -EOPNOTSUPP;
	if (!p->exact && nlen == p->len)
		return -EINVAL;
	if (i == 0 && !DAXFS_IS_REG(mode) && !DAXFS_IS_DIR(mode))
		return write ? -EPERM : -ENODATA;
	return 0;
}

static bool is_default_acl(const char *name, u32 nlen)
{
	return nlen == 24 && !memcmp(name, DAXFS_XATTR_ACL_DEFAULT, 24);
}

static bool is_access_acl(const char *name, u32 nlen)
{
	return nlen == 23 && !memcmp(name, DAXFS_XATTR_ACL_ACCESS, 23);
}

/* ---- finding a name ---- */

/* The published set of ino into *xs: 1, 0 when there is none, or
 * -EUCLEAN. */
static int set_get(struct daxfs_op *op, u64 ino, struct daxfs_xset *xs)
{
	u64 v = 0;

	if (daxfs_ov_lookup(op, xattr_key(ino), &v) || !v)
		return 0;
	return daxfs_xset_load(op->fs, v, ino, xs) ? -EUCLEAN : 1;
}

/* Walks xs for name: 1 found (*e), 0 not, -EUCLEAN.  *kept: stream
 * bytes of the other entries. */
static int set_find(const struct daxfs_xset *xs, const char *name, u32 nlen,
		    struct daxfs_xent *e, u32 *kept)
{
	struct daxfs_xent cur;
	u32 pos = 0, i;
	int found = 0;

	*kept = 0;
	for (i = 0; i < xs->count; i++) {
		if (pos >= xs->bytes || daxfs_xset_entry(xs, pos, &cur))
			return -EUCLEAN;
		if (!found && cur.name_len == nlen &&
		    !memcmp(cur.name, name, nlen)) {
			*e = cur;
			found = 1;
		} else {
			*kept += cur.size;
		}
		pos += cur.size;
	}
	return pos == xs->bytes ? found : -EUCLEAN;
}

/* ---- the claim ---- */

static u32 xclaim_word(u32 slot, u32 lane, u64 gen)
{
	return (slot + 1) | lane << DAXFS_XCLAIM_LANE_SHIFT |
	       (u32)(gen & DAXFS_XCLAIM_GEN_MASK) << DAXFS_XCLAIM_GEN_SHIFT;
}

static u32 xclaim_me(struct daxfs_op *op)
{
	return xclaim_word(op->fs->host, op->lane_idx, op->fs->host_gen);
}

enum { XC_STALE, XC_LIVE, XC_DYING };

/* Is the holder of claim c alive (LIVE), dead but not yet recovered
 * (DYING: its recovery settles its change and frees the claim), or gone
 * (STALE: anyone may take the claim over)? */
static int xclaim_holder(struct daxfs_fs *fs, u32 c, u32 *slot, u64 *gen)
{
	u32 s = (c & DAXFS_XCLAIM_SLOT_MASK) - 1;
	u64 st;

	if (s >= fs->sb.max_hosts)
		return XC_STALE;
	st = daxfs_load(&daxfs_host_at(fs, s)->state);
	*slot = s;
	*gen = daxfs_host_gen(st);
	if ((*gen & DAXFS_XCLAIM_GEN_MASK) != c >> DAXFS_XCLAIM_GEN_SHIFT)
		return XC_STALE;
	switch (daxfs_host_st(st)) {
	case DAXFS_HOST_ALIVE:
		return XC_LIVE;
	case DAXFS_HOST_DEAD:
	case DAXFS_HOST_RECOVERING:
		return XC_DYING;
	}
	return XC_STALE;
}

/* Waits until ip's xattr claim is free (a live holder's change is a
 * bounded copy; a dead one's recovery is pushed), then, with take, takes
 * it.  Without take it returns as soon as nobody holds it. */
static int xclaim_wait(struct daxfs_op *op, struct daxfs_inode *ip, bool take)
{
	struct daxfs_fs *fs = op->fs;
	u32 me = xclaim_me(op), c, last = 0, spins = 0, slot = 0;
	s64 since = 0;
	u64 gen = 0;
	int st;

	for (;;) {
		if (daxfs_fenced(op))
			return -ESTALE;
		c = daxfs_load32(&ip->xattr_claim);
		if (c != last) {
			last = c;
			since = 0;
		}
		st = c ? xclaim_holder(fs, c, &slot, &gen) : XC_STALE;
		if (st == XC_STALE) {
			if (!take)
				return 0;
			if (daxfs_cas32(&ip->xattr_claim, &c, me))
				return 0;
			continue;
		}
		if (c == me)
			return -EUCLEAN;	/* our own lane: a bad word */
		if (++spins % XC_SPINS) {
			daxfs_cpu_relax();
			continue;
		}
		daxfs_yield();
		/* a holder that stops is declared dead within about a
		 * lease; one "alive" far longer is a word no live change
		 * wrote (a corrupt region): give up rather than spin */
		if (daxfs_claim_held_too_long(fs, &since, 3))
			return -EUCLEAN;
		if (st == XC_LIVE && spins < XC_CHECK_SPINS)
			continue;
		spins = 0;
		if (slot != fs->host && !daxfs_host_alive(fs, slot, gen))
			daxfs_host_check_dead(op, slot);
	}
}

static void xclaim_release(struct daxfs_op *op, struct daxfs_inode *ip)
{
	u32 me = xclaim_me(op);

	if (daxfs_fenced(op))
		return;		/* recovery frees it */
	daxfs_cas32(&ip->xattr_claim, &me, 0);
}

/* Gone for good: no link, and no host may still hold it open. */
static bool inode_dead(struct daxfs_inode *ip)
{
	return !daxfs_load32(&ip->nlink) &&
	       !(daxfs_load32(&ip->flags) & DAXFS_IF_ORPHAN);
}

/* ---- reads ---- */

int daxfs_getxattr(struct daxfs_fs *fs, u64 ino, const char *name, u32 nlen,
		   void *buf, u32 size)
{
	struct daxfs_xent e;
	struct daxfs_iref ref;
	struct daxfs_xset xs;
	struct daxfs_op op;
	u32 kept;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = daxfs_inode_get(&op, ino, &ref);
	if (!err)
		err = name_check(name, nlen, daxfs_iref_mode(&ref), false);
	if (err)
		goto out;
	err = ref.ip ? set_get(&op, ino, &xs) : 0;
	if (err > 0)
		err = set_find(&xs, name, nlen, &e, &kept);
	if (err <= 0) {
		err = err ? err : -ENODATA;
		goto out;
	}
	err = (int)e.value_len;
	if (!size)
		goto out;
	if (size < e.value_len)
		err = -ERANGE;
	else if (daxfs_xset_read(&xs, e.value_pos, buf, e.value_len))
		err = -EUCLEAN;
out:
	daxfs_op_end(&op);
	return err;
}

int daxfs_listxattr(struct daxfs_fs *fs, u64 ino, char *buf, u32 size)
{
	struct daxfs_xent e;
	struct daxfs_iref ref;
	struct daxfs_xset xs;
	struct daxfs_op op;
	u32 pos = 0, len = 0, i;
	int err;

	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	err = daxfs_inode_get(&op, ino, &ref);
	if (err)
		goto out;
	err = ref.ip ? set_get(&op, ino, &xs) : 0;
	for (i = 0; err > 0 && i < xs.count; i++) {
		if (pos >= xs.bytes || daxfs_xset_entry(&xs, pos, &e)) {
			err = -EUCLEAN;
			break;
		}
		pos += e.size;
		if (size && len + e.name_len + 1 > size) {
			err = -ERANGE;
			break;
		}
		if (size)
			memcpy(buf + len, e.name, e.name_len + 1);
		len += e.name_len + 1;
	}
	if (err >= 0)
		err = (int)len;
out:
	daxfs_op_end(&op);
	return err;
}

/* ---- building a set ---- */

/* What a change makes of the old set: drop `skip` (an entry's stream
 * position, or ~0) and, unless value is NULL, append name = value. */
struct xa_change {
	u64 ino;
	const char *name;
	u32 nlen;
	const void *value;		/* NULL: a removal */
	u32 vlen;
	u32 skip;
	u32 bytes, count;		/* of the new set */
};

/* Frees a set that was never published: its pages, then its header. */
static void set_free_unpublished(struct daxfs_op *op, u64 off,
				 unsigned int class)
{
	struct daxfs_xattr_set *h = daxfs_ptr(op->fs, off, sizeof(*h),
					      DAXFS_OFF_ALIGN);
	u32 n, i;
	u64 p;

	if (!h || class >= DAXFS_NR_CLASSES)
		return;
	n = daxfs_load32(&h->nr_pages);
	for (i = 0; i < n && i < DAXFS_XATTR_MAX_PAGES; i++) {
		p = daxfs_load(&h->page[i]);
		if (daxfs_ptr(op->fs, p, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE) &&
		    daxfs_free_now(op, p, DAXFS_CLASS_PAGE))
			return;		/* fenced: the set leaks (fsck) */
	}
	if (daxfs_free_now(op, off, class))
		return;
}

/* Copies len stream bytes from one set to another. */
static int stream_copy(const struct daxfs_xset *from, u32 fpos,
		       const struct daxfs_xset *to, u32 tpos, u32 len)
{
	u8 b[XA_BOUNCE];
	u32 n;

	while (len) {
		n = len < XA_BOUNCE ? len : XA_BOUNCE;
		if (daxfs_xset_read(from, fpos, b, n) ||
		    daxfs_xset_write(to, tpos, b, n))
			return -EUCLEAN;
		fpos += n;
		tpos += n;
		len -= n;
	}
	return 0;
}

/* Fills the new set's stream: the old entries but skip, then the new. */
static int stream_fill(const struct daxfs_xset *old, const struct daxfs_xset *nx,
		       const struct xa_change *ch)
{
	struct daxfs_xattr_ent eh = { 0 };
	struct daxfs_xent e;
	u32 pos = 0, out = 0, i;

	for (i = 0; old && i < old->count; i++) {
		if (daxfs_xset_entry(old, pos, &e))
			return -EUCLEAN;
		if (pos != ch->skip) {
			if (stream_copy(old, pos, nx, out, e.size))
				return -EUCLEAN;
			out += e.size;
		}
		pos += e.size;
	}
	if (!ch->value)
		return out == ch->bytes ? 0 : -EUCLEAN;
	eh.name_len = (u8)ch->nlen;
	eh.value_len = ch->vlen;
	if (daxfs_xset_write(nx, out, &eh, sizeof(eh)) ||
	    daxfs_xset_write(nx, out + (u32)sizeof(eh), ch->name, ch->nlen) ||
	    daxfs_xset_write(nx, out + (u32)sizeof(eh) + ch->nlen, ch->value,
			     ch->vlen))
		return -EUCLEAN;
	/* the padding: zero already (daxfs_alloc zeroes) */
	out += daxfs_xent_size(ch->nlen, ch->vlen);
	return out == ch->bytes ? 0 : -EUCLEAN;
}

/* Allocates and fills the new set, named in the intent (a1 header, a4
 * its class + 1) from the header's allocation on, so that recovery of
 * a host dying before it is published frees it. */
static int set_build(struct daxfs_op *op, const struct daxfs_xset *old,
		     const struct xa_change *ch, u64 *out)
{
	struct daxfs_fs *fs = op->fs;
	u32 hbytes = daxfs_xset_header_bytes(ch->bytes), i;
	int class = daxfs_size_class(hbytes);
	struct daxfs_xattr_set *h;
	struct daxfs_xset nx;
	u64 off, p;
	int err;

	if (class < 0)
		return -EUCLEAN;
	if (daxfs_intent_arg(op, 4, (u64)class + 1))
		return -ESTALE;
	off = daxfs_alloc(op, (unsigned int)class);
	if (!off)
		return -ENOSPC;
	if (daxfs_intent_arg(op, 1, off))
		return -ESTALE;		/* it leaks to fsck */
	h = daxfs_ptr(fs, off, hbytes, DAXFS_OFF_ALIGN);
	if (!h) {
		err = -EUCLEAN;
		goto fail;
	}
	nx = (struct daxfs_xset){ .fs = fs, .h = h, .off = off,
		.count = ch->count, .bytes = ch->bytes,
		.class = (unsigned int)class };
	if (ch->bytes > DAXFS_XATTR_INLINE_MAX)
		nx.nr_pages = (u32)((ch->bytes + DAXFS_PAGE_SIZE - 1) /
				    DAXFS_PAGE_SIZE);
	for (i = 0; i < nx.nr_pages; i++) {
		p = daxfs_alloc(op, DAXFS_CLASS_PAGE);
		if (!p) {
			err = -ENOSPC;
			goto fail;
		}
		/* the page, then the count that makes recovery free it */
		daxfs_store(&h->page[i], p);
		daxfs_store32(&h->nr_pages, i + 1);
		daxfs_crash_point("xattr.page");
	}
	err = stream_fill(old, &nx, ch);
	if (err)
		goto fail;
	daxfs_store(&h->ino, ch->ino);
	daxfs_store32(&h->count, ch->count);
	daxfs_store32(&h->bytes, ch->bytes);
	daxfs_store32(&h->magic, DAXFS_XATTR_MAGIC);
	if (fs->flags & DAXFS_FS_PERSISTENT) {
		daxfs_flush(h, hbytes);
		for (i = 0; i < nx.nr_pages; i++)
			daxfs_flush(fs->base + daxfs_load(&h->page[i]),
				    DAXFS_PAGE_SIZE);
	}
	*out = off;
	return 0;
fail:
	if (daxfs_fenced(op))
		return -ESTALE;		/* recovery frees what the intent names */
	daxfs_intent_arg(op, 1, 0);
	set_free_unpublished(op, off, (unsigned int)class);
	return err;
}

/* The pieces of a set in retirement order: its pages, then its header
 * (piece nr_pages). */
static void set_piece(const struct daxfs_xset *xs, u32 k, u64 *off,
		      unsigned int *class)
{
	if (k < xs->nr_pages) {
		*off = daxfs_xset_page(xs, k);
		*class = DAXFS_CLASS_PAGE;
	} else {
		*off = xs->off;
		*class = xs->class;
	}
}

/* Retires pieces from..nr_pages of an unpublished set; with step, each
 * is announced in intent a3 (k + 1) before its retire so that recovery
 * knows where to go on (xattr_recover_retire). */
static void set_retire(struct daxfs_op *op, const struct daxfs_xset *xs,
		       u32 from, bool step)
{
	unsigned int class;
	u32 k;
	u64 off;

	for (k = from; k <= xs->nr_pages; k++) {
		if (step && daxfs_intent_arg(op, 3, k + 1))
			return;
		set_piece(xs, k, &off, &class);
		if (off && daxfs_retire(op, off, class))
			return;		/* fenced: the rest leak (fsck) */
		daxfs_crash_point("xattr.retire");
	}
}

/* Publishes set `nw` (0: none) in place of `old` (0: none). */
static int set_publish(struct daxfs_op *op, u64 ino, u64 old, u64 nw)
{
	int err;

	if (!old)
		err = daxfs_ov_insert(op, xattr_key(ino), nw);
	else if (!nw)
		err = daxfs_ov_delete(op, xattr_key(ino), old);
	else
		err = daxfs_ov_replace(op, xattr_key(ino), old, nw);
	/* under the claim nobody else changes the key */
	if (err == -EEXIST || err == -EAGAIN || err == -ENOENT)
		err = -EUCLEAN;
	return err;
}

/* The change, under the claim of a live inode. */
static int xattr_apply(struct daxfs_op *op, struct daxfs_inode *ip,
		       struct xa_change *ch, u32 flags)
{
	struct daxfs_xset old = { 0 };
	struct daxfs_xent e;
	u64 nw = 0;
	u32 kept = 0;
	int have, found = 0, err;

	have = set_get(op, ch->ino, &old);
	if (have < 0)
		return have;
	if (have) {
		found = set_find(&old, ch->name, ch->nlen, &e, &kept);
		if (found < 0)
			return found;
	}
	if (found && (flags & DAXFS_XATTR_CREATE))
		return -EEXIST;
	if (!found && (!ch->value || (flags & DAXFS_XATTR_REPLACE)))
		return -ENODATA;
	ch->skip = found ? e.pos : ~0u;
	ch->bytes = kept;
	ch->count = (have ? old.count : 0) - (found ? 1 : 0);
	if (ch->value) {
		ch->bytes += daxfs_xent_size(ch->nlen, ch->vlen);
		ch->count++;
	}
	if (ch->bytes > DAXFS_XATTR_STREAM_MAX)
		return -ENOSPC;
	/* the old set, then the phase that makes recovery read it */
	if (daxfs_intent_arg(op, 2, have ? old.off : 0) ||
	    daxfs_intent_arg(op, 6, DAXFS_XATTR_PHASE_SET))
		return -ESTALE;
	if (ch->count) {
		err = set_build(op, have ? &old : NULL, ch, &nw);
		if (err)
			goto out;
	}
	daxfs_crash_point("xattr.built");
	daxfs_race_point("xattr.built", op->lane);
	err = set_publish(op, ch->ino, have ? old.off : 0, nw);
	if (err) {
		if (nw && err != -ESTALE && !daxfs_fenced(op)) {
			daxfs_intent_arg(op, 1, 0);
			set_free_unpublished(op, nw, (unsigned int)
					     daxfs_size_class(daxfs_xset_header_bytes(ch->bytes)));
		}
		goto out;
	}
	daxfs_crash_point("xattr.published");
	daxfs_inode_touch(ip, DAXFS_TOUCH_CTIME);
	/* the access ACL is a permission attribute (a default ACL only
	 * seeds new inodes): permission caches go, last */
	if (is_access_acl(ch->name, ch->nlen))
		daxfs_attr_epoch_bump(op->fs);
	if (have)
		set_retire(op, &old, 0, true);
out:
	return err;
}

/* Announces the change (inode record in a5) before the claim is taken,
 * so that recovery finds a claim the op may hold. */
static int xattr_intent(struct daxfs_op *op, u64 ino, struct daxfs_inode *ip)
{
	if (daxfs_intent_arg(op, 4, 0) ||
	    daxfs_intent_arg(op, 5, (u64)((u8 *)ip - op->fs->base)) ||
	    daxfs_intent_arg(op, 6, DAXFS_XATTR_PHASE_CLAIM))
		return -ESTALE;
	return daxfs_intent_set(op, DAXFS_INTENT_XATTR, ino, 0, 0, 0);
}

static int xattr_change(struct daxfs_fs *fs, u64 ino, struct xa_change *ch,
			u32 flags)
{
	struct daxfs_inode *ip;
	struct daxfs_op op;
	int err;

	if (ch->value && ch->vlen > DAXFS_XATTR_SIZE_MAX)
		return -E2BIG;
	err = daxfs_op_begin(fs, &op);
	if (err)
		return err;
	if (!op.lane || (fs->flags & DAXFS_FS_RDONLY)) {
		err = -EROFS;
		goto out;
	}
	err = daxfs_inode_get_writable(&op, ino, &ip);
	if (err)
		goto out;
	/* first, as Linux's xattr_permission: no attribute of an immutable
	 * or append-only inode changes (ACLs included) */
	err = daxfs_attrs_deny(ip, DAXFS_IF_LOCKED);
	if (!err)
		err = name_check(ch->name, ch->nlen, daxfs_load32(&ip->mode),
				 true);
	if (!err && ch->value && is_default_acl(ch->name, ch->nlen) &&
	    !DAXFS_IS_DIR(daxfs_load32(&ip->mode)))
		err = -EACCES;
	if (!err)
		err = xattr_intent(&op, ino, ip);
	if (err)
		goto out;
	err = xclaim_wait(&op, ip, true);
	if (!err) {
		err = inode_dead(ip) ? -ENOENT : xattr_apply(&op, ip, ch, flags);
		/* the key may change once the claim goes: recovery must
		 * no longer judge our set by it */
		if (daxfs_intent_arg(&op, 6, DAXFS_XATTR_PHASE_DONE))
			err = -ESTALE;
		else
			xclaim_release(&op, ip);
	}
	if (err != -ESTALE)
		daxfs_intent_clear(&op);
out:
	daxfs_op_end(&op);
	return err;
}

int daxfs_setxattr(struct daxfs_fs *fs, u64 ino, const char *name, u32 nlen,
		   const void *value, u32 vlen, u32 flags)
{
	struct xa_change ch = {
		.ino = ino, .name = name, .nlen = nlen,
		.value = value ? value : "", .vlen = value ? vlen : 0,
	};

	if (flags & ~(DAXFS_XATTR_CREATE | DAXFS_XATTR_REPLACE))
		return -EINVAL;
	return xattr_change(fs, ino, &ch, flags);
}

int daxfs_removexattr(struct daxfs_fs *fs, u64 ino, const char *name,
		      u32 nlen)
{
	struct xa_change ch = { .ino = ino, .name = name, .nlen = nlen };

	return xattr_change(fs, ino, &ch, 0);
}

/* ---- the inode's end ---- */

void daxfs_xattr_drop(struct daxfs_op *op, struct daxfs_inode *ip)
{
	u64 ino = daxfs_load(&ip->ino), v = 0;
	struct daxfs_xset xs;

	/* The inode is dead already: a changer that takes the claim from
	 * now on sees it and gives up; one holding it may still publish, so
	 * wait for it to finish.  We never hold the claim ourselves: a
	 * claim always has an XATTR intent, and so its holder's recovery,
	 * behind it. */
	if (!op->lane)
		return;
	/* nobody holds the claim (the usual case): xclaim_wait's first look,
	 * without its loop's set-up */
	if (daxfs_fenced(op))
		return;
	if (daxfs_load32(&ip->xattr_claim) && xclaim_wait(op, ip, false))
		return;
	if (daxfs_ov_lookup(op, xattr_key(ino), &v) || !v ||
	    daxfs_xset_load(op->fs, v, ino, &xs))
		return;		/* none, or one fsck has to judge */
	/* inside the caller's intent (an unlink, a last close): a crash
	 * from here to the last retire leaks the set to fsck */
	if (!daxfs_ov_delete(op, xattr_key(ino), v))
		set_retire(op, &xs, 0, false);
}

/* ---- recovery of a dead changer (docs/xattr.md "Crash story") ---- */

/* Was piece (off, class) the last thing the dead lane retired?  Its
 * open limbo batch is still the lane's (sealed after this runs). */
static bool lane_retired_last(struct daxfs_fs *fs, struct daxfs_lane *lane,
			      u64 off, unsigned int class)
{
	u64 b = daxfs_load(&lane->limbo_open);
	struct daxfs_limbo *lb = daxfs_ptr(fs, b, DAXFS_PAGE_SIZE,
					   DAXFS_PAGE_SIZE);
	u32 c;

	if (!lb)
		return false;
	c = daxfs_load32(&lb->count);
	return c && c <= DAXFS_LIMBO_ENTRIES &&
	       daxfs_load(&lb->entry[c - 1]) == (off | class);
}

static void xattr_intent_recover(struct daxfs_op *rop, struct daxfs_lane *lane)
{
	struct daxfs_fs *fs = rop->fs;
	struct daxfs_intent *in = &lane->intent;
	u64 ino = daxfs_load(&in->a[0]), nw = daxfs_load(&in->a[1]);
	u64 old = daxfs_load(&in->a[2]), step = daxfs_load(&in->a[3]);
	u64 cls = daxfs_load(&in->a[4]), v = 0, off;
	struct daxfs_xset xs;
	unsigned int class;
	u32 from;

	daxfs_ov_lookup(rop, xattr_key(ino), &v);
	/* under the dead host's claim nobody else changed the key: it
	 * still names the old set, or the new one (none for a removal) */
	if (nw ? v != nw : v == old) {
		/* forgotten first: a recoverer dying here leaks it to fsck
		 * rather than the next one freeing it twice; by CAS from the
		 * set read, and freed only by the recoverer that took it, so
		 * that one overtaken leaves a new host's word and set alone */
		if (!nw || daxfs_recovery_lost(rop) ||
		    !daxfs_cas(&in->a[1], &nw, 0))
			return;
		if (cls && cls <= DAXFS_NR_CLASSES)
			set_free_unpublished(rop, nw, (unsigned int)(cls - 1));
		return;
	}
	if (!old || daxfs_xset_load(fs, old, ino, &xs))
		return;
	from = 0;
	if (step && step <= (u64)xs.nr_pages + 1) {
		from = (u32)step - 1;
		set_piece(&xs, from, &off, &class);
		if (lane_retired_last(fs, lane, off, class))
			from++;
	}
	for (; from <= xs.nr_pages; from++) {
		/* a next recoverer goes on after this piece (leaking it if
		 * we die before its retire, never retiring it twice); from
		 * the step we read or wrote: not over a new host's */
		if (daxfs_recovery_lost(rop) ||
		    !daxfs_cas(&in->a[3], &step, (u64)from + 2))
			return;
		step = (u64)from + 2;
		set_piece(&xs, from, &off, &class);
		if (off && daxfs_retire(rop, off, class))
			return;		/* a fenced recoverer: the next goes on */
	}
}

void daxfs_xattr_recover_lane(struct daxfs_op *rop, struct daxfs_lane *lane,
			      u32 slot, u32 lane_idx)
{
	struct daxfs_intent *in = &lane->intent;
	struct daxfs_inode *ip;
	u64 phase, op;
	u32 c, mask = DAXFS_XCLAIM_SLOT_MASK |
		DAXFS_XCLAIM_LANE_MASK << DAXFS_XCLAIM_LANE_SHIFT;

	/* every act below only while our claim on the slot stands: one
	 * overtaken may read, or act on, a new host's intent and claim
	 * (docs/recovery.md "Lane recoveries of an overtaken recoverer") */
	if (daxfs_recovery_lost(rop) ||
	    daxfs_load(&in->op) != DAXFS_INTENT_XATTR)
		return;
	phase = daxfs_load(&in->a[6]);
	if (phase == DAXFS_XATTR_PHASE_SET)
		xattr_intent_recover(rop, lane);
	ip = daxfs_ptr(rop->fs, daxfs_load(&in->a[5]), sizeof(*ip),
		       DAXFS_OFF_ALIGN);
	/* the slot is RECOVERING: no one else holds a claim naming it */
	c = ip ? daxfs_load32(&ip->xattr_claim) : 0;
	if (daxfs_recovery_lost(rop))
		return;
	if (c && (c & mask) == (xclaim_word(slot, lane_idx, 0) & mask))
		daxfs_cas32(&ip->xattr_claim, &c, 0);
	op = DAXFS_INTENT_XATTR;
	if (!daxfs_recovery_lost(rop))
		daxfs_cas(&in->op, &op, DAXFS_INTENT_NONE);
}
