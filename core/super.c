// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Region layout, format and open-time validation (the bounds-checked
 * access, daxfs_ptr, is inline in daxfs_core.h).
 * Layout and every field: docs/format.md.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "internal.h"
#include "pcache.h"
#include "base.h"

#define DAXFS_S_IFDIR_MODE	0040000u
#define DAXFS_S_IFMT_MASK	0170000u

static u32 sb_csum(const struct daxfs_super *sb)
{
	return daxfs_crc32c(0, sb, __builtin_offsetof(struct daxfs_super, csum));
}

static void set_region(struct daxfs_super *sb, u32 kind, u64 off, u64 size)
{
	sb->regions[kind].kind = kind;
	sb->regions[kind].offset = off;
	sb->regions[kind].size = size;
}

/* Largest power of two <= x (x >= 1). */
static u64 pow2_floor(u64 x)
{
	u64 p = 1;

	while (p <= x / 2)
		p <<= 1;
	return p;
}

/* Creates the root directory through the normal allocator and overlay
 * paths, as a temporary host, so the fresh state is what any host builds. */
static int format_root(void *base, u64 size, const struct daxfs_format_opts *o)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct daxfs_inode *ip;
	u64 node, rec;
	s64 now = daxfs_now_ns();
	u32 mode;
	int err;

	err = daxfs_fs_open(&fs, base, size, 0);
	if (err)
		return err;
	err = daxfs_host_join(&fs, "mkfs", 0, DAXFS_HOST_KIND_USER);
	if (err)
		return err;
	err = daxfs_op_begin(&fs, &op);
	if (err)
		goto out_leave;
	err = -ENOSPC;
	node = daxfs_alloc(&op, DAXFS_CLASS_512);	/* empty trie root */
	if (!node)
		goto out_end;
	rec = daxfs_alloc(&op, DAXFS_CLASS_128);
	if (!rec)
		goto out_end;
	ip = daxfs_ptr(&fs, rec, sizeof(*ip), DAXFS_OFF_ALIGN);
	mode = o->root_mode ? o->root_mode : 0755;
	if (!(mode & DAXFS_S_IFMT_MASK))
		mode |= DAXFS_S_IFDIR_MODE;
	ip->ino = fs.sb.root_ino;
	ip->magic = DAXFS_INODE_MAGIC;
	ip->mode = mode;
	ip->uid = o->root_uid;
	ip->gid = o->root_gid;
	ip->nlink = 2;
	ip->atime_ns = now;
	ip->mtime_ns = now;
	ip->ctime_ns = now;
	ip->root = node;
	ip->parent = fs.sb.root_ino;
	ip->aux = DAXFS_DIR_IMPORTED;
	ip->change = 1;
	ip->generation = 1;
	daxfs_fence();
	err = daxfs_ov_insert(&op, daxfs_key(DAXFS_KEY_INODE, fs.sb.root_ino), rec);
out_end:
	daxfs_op_end(&op);
out_leave:
	daxfs_host_leave(&fs);
	return err;
}

int daxfs_format(void *base, u64 size, const struct daxfs_format_opts *o)
{
	static const struct daxfs_format_opts defaults;
	struct daxfs_super sb;
	struct daxfs_state *st;
	u64 off, hosts_off, hosts_sz, lanes_off, lanes_sz, bk_off, bk_sz;
	u64 base_sz, pc_sz, tail, avail, nr;
	u32 max_hosts, i;

	if (!o)
		o = &defaults;
	if (!base)
		return -EINVAL;
	size &= ~(DAXFS_PAGE_SIZE - 1);
	max_hosts = o->max_hosts ? o->max_hosts : DAXFS_DEFAULT_MAX_HOSTS;
	if (max_hosts > DAXFS_MAX_HOSTS)
		return -EINVAL;
	if (o->root_ino > 1 || (o->root_ino && !o->base_size))
		return -EINVAL;
	if (o->nr_buckets && !daxfs_is_pow2(o->nr_buckets))
		return -EINVAL;

	base_sz = daxfs_round_up(o->base_size, DAXFS_PAGE_SIZE);
	pc_sz = daxfs_round_up(o->pcache_size, DAXFS_PAGE_SIZE);
	hosts_off = 2 * DAXFS_PAGE_SIZE;
	hosts_sz = daxfs_round_up((u64)max_hosts * sizeof(struct daxfs_host),
				  DAXFS_PAGE_SIZE);
	lanes_off = hosts_off + hosts_sz;
	lanes_sz = daxfs_round_up((u64)max_hosts * DAXFS_LANES *
				  sizeof(struct daxfs_lane), DAXFS_PAGE_SIZE);
	bk_off = lanes_off + lanes_sz;
	tail = base_sz + pc_sz;
	if (size < bk_off || size - bk_off < tail)
		return -ENOSPC;
	avail = size - bk_off - tail;
	nr = o->nr_buckets;
	if (!nr) {
		/*
		 * Half to one bucket per KiB of pool (1-1.5% of the region):
		 * the smallest inode (record + dirent) takes about 192 bytes,
		 * and the 64-bucket probe window needs the load to stay well
		 * under 3/4 before a window fills.
		 */
		nr = pow2_floor(avail / 1024 ? avail / 1024 : 1);
		if (nr < DAXFS_MIN_AUTO_BUCKETS)
			nr = DAXFS_MIN_AUTO_BUCKETS;
	}
	if (nr > (1ULL << 40))
		return -EINVAL;
	bk_sz = daxfs_round_up(nr * sizeof(struct daxfs_bucket), DAXFS_PAGE_SIZE);
	if (avail < bk_sz || (avail - bk_sz) / DAXFS_PAGE_SIZE < DAXFS_MIN_POOL_PAGES)
		return -ENOSPC;

	memset(&sb, 0, sizeof(sb));
	sb.version = DAXFS_VERSION;
	sb.header_size = sizeof(sb);
	sb.feat_incompat = DAXFS_FEAT_INCOMPAT_OVERLAY |
			   DAXFS_FEAT_INCOMPAT_OPEN_SETS;
	if (base_sz)
		sb.feat_incompat |= DAXFS_FEAT_INCOMPAT_BASE;
	if (pc_sz)
		sb.feat_incompat |= DAXFS_FEAT_INCOMPAT_PCACHE;
	if (o->uuid)
		memcpy(sb.uuid, o->uuid, sizeof(sb.uuid));
	sb.total_size = size;
	sb.block_size = DAXFS_BLOCK_SIZE;
	sb.max_hosts = max_hosts;
	if (o->hash_key) {
		sb.hash_key[0] = o->hash_key[0];
		sb.hash_key[1] = o->hash_key[1];
	}
	sb.root_ino = 1;
	sb.first_dyn_ino = o->first_dyn_ino ? o->first_dyn_ino : 2;
	if (sb.first_dyn_ino < 2)
		return -EINVAL;
	sb.nr_buckets = nr;
	sb.probe_window = nr < DAXFS_DEFAULT_PROBE ? (u32)nr : DAXFS_DEFAULT_PROBE;
	sb.lease_ms = o->lease_ms ? o->lease_ms : DAXFS_DEFAULT_LEASE_MS;
	sb.created_ns = daxfs_now_ns();
	if (o->label) {
		for (i = 0; i < DAXFS_LABEL_LEN - 1 && o->label[i]; i++)
			sb.label[i] = o->label[i];
	}
	set_region(&sb, DAXFS_RGN_STATE, DAXFS_PAGE_SIZE, DAXFS_PAGE_SIZE);
	set_region(&sb, DAXFS_RGN_HOSTS, hosts_off, hosts_sz);
	set_region(&sb, DAXFS_RGN_LANES, lanes_off, lanes_sz);
	set_region(&sb, DAXFS_RGN_BUCKETS, bk_off, bk_sz);
	off = bk_off + bk_sz;
	if (base_sz) {
		set_region(&sb, DAXFS_RGN_BASE, off, base_sz);
		off += base_sz;
	}
	if (pc_sz) {
		set_region(&sb, DAXFS_RGN_PCACHE, off, pc_sz);
		off += pc_sz;
	}
	set_region(&sb, DAXFS_RGN_POOL, off, size - off);

	/* Metadata regions only: the pool is zeroed object by object on
	 * allocation and the base region belongs to the caller.  The bucket
	 * array is the bulk (256 MiB at 20 GiB): skipped when the caller
	 * knows the region is zeros already. */
	memset(base, 0, o->zeroed ? bk_off : bk_off + bk_sz);
	st = (struct daxfs_state *)((u8 *)base + DAXFS_PAGE_SIZE);
	st->bump.v = off;
	st->next_ino = (struct daxfs_line){ .v = sb.first_dyn_ino };
	st->epoch.v = 1;
	st->attr_epoch.v = 1;
	st->magic = DAXFS_STATE_MAGIC;
	if (pc_sz) {
		/* shared page cache header, pin owners, slots (core/pcache.c) */
		int err = daxfs_pcache_format(base, &sb, o);

		if (err)
			return err;
	}

	/* magic and checksum make the superblock valid: written last */
	sb.magic = DAXFS_MAGIC;
	sb.csum = sb_csum(&sb);
	daxfs_fence();
	memcpy(base, &sb, sizeof(sb));
	daxfs_fence();
	daxfs_flush(base, 2 * DAXFS_PAGE_SIZE);
	daxfs_drain();

	if (o->root_ino)
		return 0;	/* root is base inode 1, copied up on change */
	return format_root(base, size, o);
}

static bool region_ok(const struct daxfs_region_desc *r, u64 total)
{
	if (!r->size || (r->offset | r->size) & (DAXFS_PAGE_SIZE - 1))
		return false;
	if (r->offset < DAXFS_PAGE_SIZE || r->offset > total)
		return false;
	return r->size <= total - r->offset;
}

static int check_regions(const struct daxfs_super *sb)
{
	static const u32 required[] = { DAXFS_RGN_STATE, DAXFS_RGN_HOSTS,
					DAXFS_RGN_LANES, DAXFS_RGN_BUCKETS,
					DAXFS_RGN_POOL };
	const struct daxfs_region_desc *r, *q;
	u32 i, j;

	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (sb->regions[required[i]].kind != required[i])
			return -EUCLEAN;
	if (!!(sb->feat_incompat & DAXFS_FEAT_INCOMPAT_BASE) !=
	    (sb->regions[DAXFS_RGN_BASE].kind == DAXFS_RGN_BASE))
		return -EUCLEAN;
	for (i = 0; i < DAXFS_RGN_MAX; i++) {
		r = &sb->regions[i];
		if (!r->kind) {
			if (r->offset || r->size)
				return -EUCLEAN;
			continue;
		}
		if (r->kind != i || !region_ok(r, sb->total_size))
			return -EUCLEAN;
		for (j = 0; j < i; j++) {
			q = &sb->regions[j];
			if (q->kind && r->offset < q->offset + q->size &&
			    q->offset < r->offset + r->size)
				return -EUCLEAN;
		}
	}
	return 0;
}

/* Cheap check of the base header (the full pass is daxfs_base_validate). */
static int check_base_header(struct daxfs_fs *fs)
{
	const struct daxfs_base_header *bh = &fs->bh;

	memcpy(&fs->bh, fs->base + fs->base_off, sizeof(fs->bh));
	if (bh->magic != DAXFS_BASE_MAGIC || bh->header_size != sizeof(*bh))
		return -EUCLEAN;
	if (bh->csum != daxfs_crc32c(0, bh, __builtin_offsetof(
					     struct daxfs_base_header, csum)))
		return -EUCLEAN;
	return 0;
}

int daxfs_fs_open(struct daxfs_fs *fs, void *base, u64 size, u32 flags)
{
	const struct daxfs_region_desc *rg;
	const int *media;
	struct daxfs_super *sb;
	struct daxfs_state *st;
	u64 v;
	int err;

	if (!fs || !base)
		return -EINVAL;
	media = fs->media_listed;	/* the front end's: kept */
	memset(fs, 0, sizeof(*fs));
	fs->host = DAXFS_NO_HOST;
	fs->media_listed = media;
	if (size < 2 * DAXFS_PAGE_SIZE)
		return -EINVAL;		/* too small to hold a superblock */
	/* validate a private copy: the shared one may change under us */
	sb = &fs->sb;
	memcpy(sb, base, sizeof(*sb));
	if (sb->magic != DAXFS_MAGIC)
		return -EINVAL;		/* not a DaxFS region */
	if (sb->version < DAXFS_VERSION &&
	    !(sb->version >= DAXFS_VERSION_V1 && (flags & DAXFS_FS_CONVERT)))
		return -EPROTO;		/* older: fsck.daxfs --convert */
	if (sb->version > DAXFS_VERSION)
		return -EPROTONOSUPPORT;
	if (!daxfs_cpu_has_cas16())
		return -ENOSYS;		/* no 16-byte CAS for the free stacks */
	if (sb->header_size != sizeof(*sb))
		return -EUCLEAN;
	if (sb->csum != sb_csum(sb))
		return -EBADMSG;	/* superblock checksum mismatch */
	if (sb->feat_incompat & ~DAXFS_FEAT_INCOMPAT_SUPP)
		return -EOPNOTSUPP;	/* made by a newer DaxFS */
	if ((sb->feat_ro_compat & ~DAXFS_FEAT_RO_COMPAT_SUPP) &&
	    !(flags & DAXFS_FS_RDONLY))
		return -EROFS;
	if (!(sb->feat_incompat & DAXFS_FEAT_INCOMPAT_OVERLAY))
		return -EOPNOTSUPP;
	if (sb->block_size != DAXFS_BLOCK_SIZE)
		return -EUCLEAN;
	if (sb->total_size > size)
		return -EFBIG;		/* mapping shorter than the filesystem */
	if (sb->total_size & (DAXFS_PAGE_SIZE - 1) ||
	    sb->total_size < 2 * DAXFS_PAGE_SIZE)
		return -EUCLEAN;
	if (!sb->max_hosts || sb->max_hosts > DAXFS_MAX_HOSTS || !sb->lease_ms)
		return -EUCLEAN;
	if (!daxfs_is_pow2(sb->nr_buckets) || sb->nr_buckets > (1ULL << 40))
		return -EUCLEAN;
	if (!daxfs_is_pow2(sb->probe_window) || sb->probe_window > sb->nr_buckets)
		return -EUCLEAN;
	if (sb->root_ino < 1 || sb->first_dyn_ino <= sb->root_ino)
		return -EUCLEAN;
	err = check_regions(sb);
	if (err)
		return err;
	rg = sb->regions;
	if (rg[DAXFS_RGN_STATE].size < sizeof(struct daxfs_state) ||
	    rg[DAXFS_RGN_HOSTS].size < (u64)sb->max_hosts * sizeof(struct daxfs_host) ||
	    rg[DAXFS_RGN_LANES].size < (u64)sb->max_hosts * DAXFS_LANES *
				       sizeof(struct daxfs_lane) ||
	    rg[DAXFS_RGN_BUCKETS].size != daxfs_round_up(sb->nr_buckets *
				sizeof(struct daxfs_bucket), DAXFS_PAGE_SIZE))
		return -EUCLEAN;

	fs->base = base;
	fs->size = size;
	fs->flags = flags;
	fs->lease_ms = sb->lease_ms;
	fs->state = (struct daxfs_state *)(fs->base + rg[DAXFS_RGN_STATE].offset);
	fs->hosts = (struct daxfs_host *)(fs->base + rg[DAXFS_RGN_HOSTS].offset);
	fs->lanes = (struct daxfs_lane *)(fs->base + rg[DAXFS_RGN_LANES].offset);
	fs->buckets = (struct daxfs_bucket *)(fs->base + rg[DAXFS_RGN_BUCKETS].offset);
	fs->nr_buckets = sb->nr_buckets;
	fs->pool_off = rg[DAXFS_RGN_POOL].offset;
	fs->pool_end = fs->pool_off + rg[DAXFS_RGN_POOL].size;

	st = fs->state;
	err = -EUCLEAN;
	if (daxfs_load(&st->magic) != DAXFS_STATE_MAGIC)
		goto fail;
	if (!daxfs_load(daxfs_state_word(fs, epoch)))
		goto fail;
	v = daxfs_load(daxfs_state_word(fs, bump));
	if (v < fs->pool_off || v > fs->pool_end || (v & (DAXFS_PAGE_SIZE - 1)))
		goto fail;
	if (sb->feat_incompat & DAXFS_FEAT_INCOMPAT_PCACHE) {
		err = daxfs_pcache_open(fs);	/* core/pcache.c */
		if (err)
			goto fail;
	}
	if (sb->feat_incompat & DAXFS_FEAT_INCOMPAT_BASE) {
		fs->base_off = rg[DAXFS_RGN_BASE].offset;
		fs->base_size = rg[DAXFS_RGN_BASE].size;
		err = check_base_header(fs);
		if (err)
			goto fail;
		err = -EUCLEAN;	/* split-mode data needs the page cache */
		if ((fs->bh.flags & DAXFS_BASE_F_BACKING) && !fs->pc.hdr)
			goto fail;
		if (flags & DAXFS_FS_VALIDATE) {
			err = daxfs_base_validate(fs);
			if (err)
				goto fail;
		}
	}
	return 0;
fail:
	memset(fs, 0, sizeof(*fs));
	fs->host = DAXFS_NO_HOST;
	fs->media_listed = media;
	return err;
}
