// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Checker driver: superblock and state diagnosis, host table and lanes,
 * overlay buckets, and the helpers the other check-*.c files share
 * (bitmaps, inode resolution, the offline repair allocator, offline
 * overlay and trie insertion used to rebuild root and lost+found).
 *
 * Model: two bitmaps over the pool in 64-byte units.  "used" marks every
 * object reachable from the overlay (inode records, trie nodes, dirents,
 * radix nodes, data pages, symlink records) and doubles as the visited
 * set, so every walk is bounded and a second reference to an object is a
 * cross-link.  "freed" marks what the allocator already accounts as not
 * in use or pending: free stacks, host alloc batches, limbo batches and
 * their retired entries.  Below state.bump, a unit in neither is leaked.
 * Repairs are offline: they run only when no other host is live (or with
 * DAXFS_CHECK_FORCE) and write with plain atomic stores.
 */
#include "compat.h"
#include "daxfs_core.h"
#include "base.h"
#include "internal.h"
#include "check.h"
#include "openset.h"
#include "pcache.h"

static const char *const chk_code_names[DAXFS_CHK_NR_CODES] = {
	[0] = "none",
	[DAXFS_CHK_SUPER] = "super",
	[DAXFS_CHK_STATE] = "state",
	[DAXFS_CHK_HOST_LIVE] = "host-live",
	[DAXFS_CHK_HOST_DEAD] = "host-dead",
	[DAXFS_CHK_HOST_BAD] = "host-bad",
	[DAXFS_CHK_LANE] = "lane",
	[DAXFS_CHK_RENAME_CLAIM] = "rename-claim",
	[DAXFS_CHK_LIMBO] = "limbo",
	[DAXFS_CHK_BUCKET] = "bucket",
	[DAXFS_CHK_BUCKET_PENDING] = "bucket-pending",
	[DAXFS_CHK_BUCKET_DUP] = "bucket-dup",
	[DAXFS_CHK_BUCKET_LOST] = "bucket-lost",
	[DAXFS_CHK_INODE] = "inode",
	[DAXFS_CHK_ROOT] = "root",
	[DAXFS_CHK_NEXT_INO] = "next-ino",
	[DAXFS_CHK_TRIE] = "trie",
	[DAXFS_CHK_DIRENT] = "dirent",
	[DAXFS_CHK_DIRENT_DANGLING] = "dirent-dangling",
	[DAXFS_CHK_DIRENT_DUP] = "dirent-dup",
	[DAXFS_CHK_DIRENT_TYPE] = "dirent-type",
	[DAXFS_CHK_DIR_MULTI] = "dir-multi",
	[DAXFS_CHK_DIR_PARENT] = "dir-parent",
	[DAXFS_CHK_DIR_DEAD] = "dir-dead",
	[DAXFS_CHK_DIR_COUNT] = "dir-count",
	[DAXFS_CHK_NLINK] = "nlink",
	[DAXFS_CHK_ORPHAN] = "orphan",
	[DAXFS_CHK_RADIX] = "radix",
	[DAXFS_CHK_BLOCKS] = "blocks",
	[DAXFS_CHK_BEYOND_EOF] = "beyond-eof",
	[DAXFS_CHK_SYMLINK] = "symlink",
	[DAXFS_CHK_CROSSLINK] = "crosslink",
	[DAXFS_CHK_FREELIST] = "freelist",
	[DAXFS_CHK_FREE_INUSE] = "free-inuse",
	[DAXFS_CHK_LEAK] = "leak",
	[DAXFS_CHK_USED_BYTES] = "used-bytes",
	[DAXFS_CHK_BASE] = "base",
	[DAXFS_CHK_LOST_FOUND] = "lost+found",
	[DAXFS_CHK_LIMIT] = "limit",
	[DAXFS_CHK_LOCK] = "lock",
	[DAXFS_CHK_XATTR] = "xattr",
	[DAXFS_CHK_MEDIA] = "media",
	[DAXFS_CHK_PASS] = "pass",
	[DAXFS_CHK_PCACHE] = "pcache",
};

const char *daxfs_check_code_name(u32 code)
{
	if (code >= DAXFS_CHK_NR_CODES || !chk_code_names[code])
		return "unknown";
	return chk_code_names[code];
}

void chk_report(struct chk *c, u32 sev, u32 code, const char *msg, u64 ino,
		u64 off, u64 have, u64 want, bool repaired)
{
	struct daxfs_check_problem p = {
		.severity = sev, .code = code,
		.name = daxfs_check_code_name(code), .msg = msg,
		.ino = ino, .off = off, .have = have, .want = want,
		.repaired = repaired,
	};

	if (sev > DAXFS_CHK_FATAL)
		sev = DAXFS_CHK_FATAL;
	c->r->nr[sev]++;
	if (repaired)
		c->r->repaired++;
	else if (sev >= DAXFS_CHK_ERROR)
		c->r->unrepaired++;
	/* a bad range is zeros to every pass: not a change to recheck */
	if (repaired && code != DAXFS_CHK_MEDIA)
		c->changes++;
	if (code == DAXFS_CHK_BASE && sev >= DAXFS_CHK_ERROR)
		c->base_errors++;
	if (c->o->report)
		c->o->report(c->o->ctx, &p);
	/* an object rejected for what it holds may hold it for a bad
	 * range's sake: say so (after the problem it explains) */
	if (code != DAXFS_CHK_MEDIA && off)
		chk_media(c, off, 64);
}

const u64 *daxfs_bad_range_find(const u64 *bad, u64 nr, u64 off, u64 len)
{
	u64 lo = 0, hi = nr, mid;

	while (lo < hi) {		/* first range ending after off */
		mid = lo + (hi - lo) / 2;
		if (bad[2 * mid + 1] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr && bad[2 * lo] < off + len)
		return &bad[2 * lo];
	return NULL;
}

void chk_media(struct chk *c, u64 off, u64 len)
{
	const u64 *r;
	const char *msg;

	if (!c->o->nr_bad ||
	    !(r = daxfs_bad_range_find(c->o->bad, c->o->nr_bad, off, len)))
		return;
	if (c->media_page)
		msg = "file data on a bad range: reads of this page fail";
	else if (c->media_ino)
		msg = "metadata of an inode on a bad range";
	else
		msg = "filesystem metadata on a bad range";
	chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_MEDIA, msg, c->media_ino,
		   off, r[0], c->media_page, c->repair && c->o->bad_rewrite);
}

void chk_progress(struct chk *c, u32 phase, u64 done, u64 total)
{
	if (c->o->progress)
		c->o->progress(c->o->ctx, phase, done, total);
}

/* ---- bitmaps over the pool, in 64-byte units ---- */

static bool chk_range(struct chk *c, u64 off, u64 len, u64 *first, u64 *n)
{
	struct daxfs_fs *fs = c->fs;

	if (off < fs->pool_off || off >= fs->pool_end || len == 0 ||
	    len > fs->pool_end - off)
		return false;
	*first = (off - fs->pool_off) >> 6;
	*n = (len + 63) >> 6;
	return true;
}

/* Sets the bits for [off, off+len) and returns true, or returns false
 * and sets nothing when any was already set (a rejected object must not
 * keep space it does not own). */
bool chk_mark(struct chk *c, u64 *bm, u64 off, u64 len)
{
	u64 i, first, n;

	if (!chk_range(c, off, len, &first, &n))
		return false;
	for (i = first; i < first + n; i++)
		if (bm[i >> 6] & (1ULL << (i & 63)))
			return false;
	for (i = first; i < first + n; i++)
		bm[i >> 6] |= 1ULL << (i & 63);
	chk_media(c, off, len);
	return true;
}

bool chk_test_any(struct chk *c, const u64 *bm, u64 off, u64 len)
{
	u64 i, first, n;

	if (!chk_range(c, off, len, &first, &n))
		return false;
	for (i = first; i < first + n; i++)
		if (bm[i >> 6] & (1ULL << (i & 63)))
			return true;
	return false;
}

void chk_set(struct chk *c, u64 *bm, u64 off, u64 len, bool v)
{
	u64 i, first, n;

	if (!chk_range(c, off, len, &first, &n))
		return;
	for (i = first; i < first + n; i++) {
		if (v)
			bm[i >> 6] |= 1ULL << (i & 63);
		else
			bm[i >> 6] &= ~(1ULL << (i & 63));
	}
}

/* The bits of [off, off+len), at most 64 units, as a mask (bit 0: off). */
u64 chk_bits_get(struct chk *c, const u64 *bm, u64 off, u64 len)
{
	u64 i, first, n, mask = 0;

	if (!chk_range(c, off, len, &first, &n) || n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (bm[(first + i) >> 6] & (1ULL << ((first + i) & 63)))
			mask |= 1ULL << i;
	return mask;
}

/* Sets the bits of [off, off+len) back to a chk_bits_get() mask. */
void chk_bits_put(struct chk *c, u64 *bm, u64 off, u64 len, u64 mask)
{
	u64 i, first, n;

	if (!chk_range(c, off, len, &first, &n) || n > 64)
		return;
	for (i = 0; i < n; i++) {
		u64 j = first + i;

		if (mask & (1ULL << i))
			bm[j >> 6] |= 1ULL << (j & 63);
		else
			bm[j >> 6] &= ~(1ULL << (j & 63));
	}
}

u64 chk_class_bytes(u64 len)
{
	u64 sz = 64;

	if (len == 0 || len > DAXFS_BLOCK_SIZE)
		return 0;
	while (sz < len && sz < 512)
		sz <<= 1;
	return sz >= len ? sz : DAXFS_BLOCK_SIZE;
}

u32 chk_mode_dtype(u32 mode)
{
	switch (mode & CHK_S_IFMT) {
	case CHK_S_IFIFO: return 1;
	case CHK_S_IFCHR: return 2;
	case CHK_S_IFDIR: return 4;
	case CHK_S_IFBLK: return 6;
	case CHK_S_IFREG: return 8;
	case CHK_S_IFLNK: return 10;
	case CHK_S_IFSOCK: return 12;
	}
	return 0;
}

/* ---- scratch layout ---- */

static u64 chk_bitmap_words(struct daxfs_fs *fs)
{
	u64 units = (fs->pool_end - fs->pool_off) >> 6;

	return (units + 63) / 64;
}

static u64 chk_nr_base(struct daxfs_fs *fs)
{
	if (!fs->base_off)
		return 0;
	/* the header was validated at open: the table fits in the region */
	if (fs->bh.nr_inodes > fs->base_size / sizeof(struct daxfs_base_inode))
		return 0;
	return fs->bh.nr_inodes;
}

u64 daxfs_check_scratch_size(struct daxfs_fs *fs)
{
	u64 words = chk_bitmap_words(fs);
	u64 nb = chk_nr_base(fs);
	u64 sz;

	sz = 2 * words * 8;			/* used, freed */
	sz += fs->nr_buckets * 4;		/* binfo */
	sz += nb * 4;				/* base_info */
	sz = (sz + 7) & ~7ULL;
	sz += (fs->nr_buckets + nb + 1) * 8;	/* directory queue */
	sz += CHK_RELEN_MAX * sizeof(struct chk_relen);
	sz += sizeof(struct chk_carry);		/* last: kept across passes */
	return sz;
}

static int chk_setup(struct chk *c, bool first)
{
	struct daxfs_fs *fs = c->fs;
	u64 words = chk_bitmap_words(fs);
	u8 *p = c->o->scratch;
	u64 need = daxfs_check_scratch_size(fs);

	if (!p || c->o->scratch_size < need || ((unsigned long)p & 7))
		return -EINVAL;
	memset(p, 0, first ? need : need - sizeof(struct chk_carry));
	c->units = (fs->pool_end - fs->pool_off) >> 6;
	c->used = (u64 *)p;
	c->freed = c->used + words;
	c->binfo = (u32 *)(c->freed + words);
	c->nr_base = chk_nr_base(fs);
	c->base_info = c->binfo + fs->nr_buckets;
	p = (u8 *)(c->base_info + c->nr_base);
	p = (u8 *)(((unsigned long)p + 7) & ~7UL);
	c->queue = (u64 *)p;
	c->qcap = fs->nr_buckets + c->nr_base + 1;
	c->relen = (struct chk_relen *)(c->queue + c->qcap);
	c->carry = (struct chk_carry *)(c->relen + CHK_RELEN_MAX);
	return 0;
}

/* ---- superblock diagnosis (before or instead of daxfs_fs_open) ---- */

struct chk_sb_ctx {
	daxfs_check_report_t report;
	void *ctx;
	int bad;
	int newer;			/* of them, features we do not know */
};

static void chk_sb_fatal(struct chk_sb_ctx *s, int code, const char *msg,
			 u64 have, u64 want)
{
	struct daxfs_check_problem p = {
		.severity = DAXFS_CHK_FATAL, .code = code,
		.name = chk_code_names[code], .msg = msg, .have = have,
		.want = want,
	};

	s->bad++;
	if (s->report)
		s->report(s->ctx, &p);
}

static void chk_sb_bad(struct chk_sb_ctx *s, const char *msg, u64 have, u64 want)
{
	chk_sb_fatal(s, DAXFS_CHK_SUPER, msg, have, want);
}

static bool chk_is_pow2(u64 v)
{
	return v && !(v & (v - 1));
}

int daxfs_check_super(const void *base, u64 size, daxfs_check_report_t report,
		      void *ctx)
{
	struct chk_sb_ctx s = { report, ctx, 0, 0 };
	struct daxfs_super sb;
	u64 total;
	u32 i, j;
	static const u32 required[] = { DAXFS_RGN_STATE, DAXFS_RGN_HOSTS,
		DAXFS_RGN_LANES, DAXFS_RGN_BUCKETS, DAXFS_RGN_POOL };

	if (size < 2 * DAXFS_BLOCK_SIZE) {
		chk_sb_bad(&s, "region too small to hold a filesystem", size,
			   2 * DAXFS_BLOCK_SIZE);
		return -EUCLEAN;
	}
	memcpy(&sb, base, sizeof(sb));
	if (sb.magic != DAXFS_MAGIC) {
		chk_sb_bad(&s, "bad magic number: not a DaxFS region", sb.magic,
			   DAXFS_MAGIC);
		return -EUCLEAN;
	}
	if (sb.version == DAXFS_VERSION_V1)
		chk_sb_bad(&s, "format version 1 (before 16-byte free-stack heads): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V2)
		chk_sb_bad(&s, "format version 2 (leases timed by wall clocks): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version >= DAXFS_VERSION_V3 && sb.version < DAXFS_VERSION_V5)
		chk_sb_bad(&s, "older format version (before cluster-wide file "
			   "locks): convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V5)
		chk_sb_bad(&s, "format version 5 (before extended attributes): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V6)
		chk_sb_bad(&s, "format version 6 (strict overwrites in place): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V7)
		chk_sb_bad(&s, "format version 7 (before unwritten pages): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V8)
		chk_sb_bad(&s, "format version 8 (before attribute flags): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V9)
		chk_sb_bad(&s, "format version 9 (before atomic rename whiteouts): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V10)
		chk_sb_bad(&s, "format version 10 (before 2 MiB runs): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V11)
		chk_sb_bad(&s, "format version 11 (before free page extents): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V12)
		chk_sb_bad(&s, "format version 12 (before changes in flight): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V13)
		chk_sb_bad(&s, "format version 13 (before rewrite marks): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version == DAXFS_VERSION_V14)
		chk_sb_bad(&s, "format version 14 (before the attribute epoch): "
			   "convert it offline with fsck.daxfs --convert",
			   sb.version, DAXFS_VERSION);
	else if (sb.version != DAXFS_VERSION)
		chk_sb_bad(&s, "unsupported format version", sb.version,
			   DAXFS_VERSION);
	if (sb.header_size != sizeof(sb))
		chk_sb_bad(&s, "bad superblock header size", sb.header_size,
			   sizeof(sb));
	if (daxfs_crc32c(0, &sb, offsetof(struct daxfs_super, csum)) != sb.csum)
		chk_sb_bad(&s, "superblock checksum mismatch", sb.csum,
			   daxfs_crc32c(0, &sb, offsetof(struct daxfs_super, csum)));
	/* features of a newer DaxFS: this checker would take its structures
	 * for damage (as e2fsck, it refuses read-only ones too) */
	if (sb.feat_incompat & ~DAXFS_FEAT_INCOMPAT_SUPP) {
		chk_sb_bad(&s, "unknown incompatible features (made by a newer "
			   "DaxFS, or damage)", sb.feat_incompat,
			   DAXFS_FEAT_INCOMPAT_SUPP);
		s.newer++;
	}
	if (sb.feat_ro_compat & ~DAXFS_FEAT_RO_COMPAT_SUPP) {
		chk_sb_bad(&s, "unknown read-only-compatible features (made by "
			   "a newer DaxFS, or damage)", sb.feat_ro_compat,
			   DAXFS_FEAT_RO_COMPAT_SUPP);
		s.newer++;
	}
	if (sb.block_size != DAXFS_BLOCK_SIZE)
		chk_sb_bad(&s, "bad block size", sb.block_size, DAXFS_BLOCK_SIZE);
	total = sb.total_size;
	if (total > size || total < 2 * DAXFS_BLOCK_SIZE ||
	    (total & (DAXFS_BLOCK_SIZE - 1)))
		chk_sb_bad(&s, "filesystem size does not fit the region", total,
			   size);
	if (!sb.max_hosts || sb.max_hosts > DAXFS_MAX_HOSTS)
		chk_sb_bad(&s, "bad host table size", sb.max_hosts,
			   DAXFS_MAX_HOSTS);
	if (!chk_is_pow2(sb.nr_buckets))
		chk_sb_bad(&s, "bucket count not a power of two", sb.nr_buckets, 0);
	if (!chk_is_pow2(sb.probe_window) || sb.probe_window > sb.nr_buckets)
		chk_sb_bad(&s, "bad probe window", sb.probe_window, 0);
	if (!sb.root_ino || sb.first_dyn_ino <= sb.root_ino)
		chk_sb_bad(&s, "root or first dynamic inode number invalid",
			   sb.root_ino, sb.first_dyn_ino);
	if (!sb.lease_ms)
		chk_sb_bad(&s, "host lease length is 0", 0, 1);
	if (!(sb.feat_incompat & DAXFS_FEAT_INCOMPAT_OVERLAY))
		chk_sb_bad(&s, "overlay feature missing", sb.feat_incompat,
			   DAXFS_FEAT_INCOMPAT_OVERLAY);
	if (!!(sb.feat_incompat & DAXFS_FEAT_INCOMPAT_BASE) !=
	    (sb.regions[DAXFS_RGN_BASE].kind == DAXFS_RGN_BASE))
		chk_sb_bad(&s, "base feature flag and base region disagree",
			   sb.feat_incompat, sb.regions[DAXFS_RGN_BASE].kind);
	if (sb.regions[DAXFS_RGN_STATE].size < sizeof(struct daxfs_state) ||
	    sb.regions[DAXFS_RGN_HOSTS].size <
	    (u64)sb.max_hosts * sizeof(struct daxfs_host) ||
	    sb.regions[DAXFS_RGN_LANES].size <
	    (u64)sb.max_hosts * DAXFS_LANES * sizeof(struct daxfs_lane) ||
	    sb.nr_buckets > (1ULL << 40) ||
	    sb.regions[DAXFS_RGN_BUCKETS].size !=
	    ((sb.nr_buckets * sizeof(struct daxfs_bucket) + DAXFS_BLOCK_SIZE - 1) &
	     ~(u64)(DAXFS_BLOCK_SIZE - 1)))
		chk_sb_bad(&s, "a region is too small for the tables it holds", 0, 0);
	for (i = 0; i < DAXFS_RGN_MAX; i++) {
		const struct daxfs_region_desc *r = &sb.regions[i];

		if (r->kind == DAXFS_RGN_NONE) {
			/* as daxfs_fs_open: an unused entry is all zero */
			if (r->offset || r->size)
				chk_sb_bad(&s, "unused region table entry not zero",
					   r->offset, r->size);
			continue;
		}
		if (r->kind != i) {
			chk_sb_bad(&s, "region table entry of the wrong kind", r->kind, i);
			continue;
		}
		if ((r->offset | r->size) & (DAXFS_BLOCK_SIZE - 1) ||
		    r->offset < DAXFS_BLOCK_SIZE || r->offset > total ||
		    r->size > total - r->offset) {
			chk_sb_bad(&s, "region outside the filesystem or misaligned",
				   r->offset, r->size);
			continue;
		}
		for (j = 0; j < i; j++) {
			const struct daxfs_region_desc *q = &sb.regions[j];

			if (q->kind == DAXFS_RGN_NONE || !q->size || !r->size)
				continue;
			if (r->offset < q->offset + q->size &&
			    q->offset < r->offset + r->size)
				chk_sb_bad(&s, "regions overlap", r->offset,
					   q->offset);
		}
	}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		bool found = false;

		for (j = 0; j < DAXFS_RGN_MAX; j++)
			if (sb.regions[j].kind == required[i] && sb.regions[j].size)
				found = true;
		if (!found)
			chk_sb_bad(&s, "required region missing", required[i], 0);
	}
	if (s.bad)
		return s.bad == s.newer ? -EOPNOTSUPP : -EUCLEAN;
	return 0;
}

int daxfs_check_base_header(const void *base, u64 size,
			    daxfs_check_report_t report, void *ctx)
{
	const struct daxfs_super *sb = base;
	const struct daxfs_region_desc *r = &sb->regions[DAXFS_RGN_BASE];
	struct chk_sb_ctx s = { report, ctx, 0, 0 };
	struct daxfs_base_header bh;
	u32 sum;

	if (!(sb->feat_incompat & DAXFS_FEAT_INCOMPAT_BASE))
		return 0;
	/* daxfs_check_super passed: the region lies inside the mapping */
	if (r->size < sizeof(bh) || r->offset > size - sizeof(bh)) {
		chk_sb_fatal(&s, DAXFS_CHK_BASE, "base region too small for "
			     "its header", r->size, sizeof(bh));
		return -EUCLEAN;
	}
	memcpy(&bh, (const u8 *)base + r->offset, sizeof(bh));
	sum = daxfs_crc32c(0, &bh, offsetof(struct daxfs_base_header, csum));
	if (bh.magic != DAXFS_BASE_MAGIC)
		chk_sb_fatal(&s, DAXFS_CHK_BASE, "base image header has a bad "
			     "magic number", bh.magic, DAXFS_BASE_MAGIC);
	else if (bh.header_size != sizeof(bh))
		chk_sb_fatal(&s, DAXFS_CHK_BASE, "base image header size wrong",
			     bh.header_size, sizeof(bh));
	else if (bh.csum != sum)
		chk_sb_fatal(&s, DAXFS_CHK_BASE, "base image header checksum "
			     "mismatch", bh.csum, sum);
	return s.bad ? -EUCLEAN : 0;
}

/* ---- inode resolution ---- */

/* Finds the bucket a lookup of key returns, like daxfs_ov_lookup. */
s64 chk_ov_find(struct chk *c, u64 key)
{
	struct daxfs_fs *fs = c->fs;
	u64 mask = fs->nr_buckets - 1;
	u64 h = daxfs_mix64(key) & mask;
	u32 i;

	for (i = 0; i < fs->sb.probe_window; i++) {
		struct daxfs_bucket *b = &fs->buckets[(h + i) & mask];
		u64 k = daxfs_load(&b->key);

		if (k == DAXFS_KEY_EMPTY)
			return -1;
		if (k == key && daxfs_load(&b->value))
			return (s64)((h + i) & mask);
	}
	return -1;
}

static bool chk_inode_record(struct chk *c, u64 idx, u64 ino, u64 off);

/*
 * A name's inode has no key: maybe a stray store turned its live key into
 * a tomb (~0), the value left pointing at the record.  A tomb a host
 * leaves holds 0 (a delete) or a claim's token (bit 63), and one fsck
 * leaves holds 0 (chk_tomb), so a tomb in the key's probe window whose
 * value is a sound record of this very inode was its key: put it back.
 * Only a name asks, so what an older fsck dropped as an orphan stays
 * dropped.  A base inode asks too: losing its copy-up's key silently
 * gave the file back its base bytes.
 */
static s64 chk_key_from_tomb(struct chk *c, u64 ino)
{
	struct daxfs_fs *fs = c->fs;
	u64 key = daxfs_key(DAXFS_KEY_INODE, ino), mask = fs->nr_buckets - 1;
	u64 h = daxfs_mix64(key) & mask, b, v;
	struct daxfs_inode *ip;
	u32 j;

	for (j = 0; j < fs->sb.probe_window; j++) {
		b = (h + j) & mask;
		if (daxfs_load(&fs->buckets[b].key) == DAXFS_KEY_EMPTY)
			break;
		if (daxfs_load(&fs->buckets[b].key) != DAXFS_KEY_TOMB ||
		    (c->binfo[b] & CHK_I_DROPPED))
			continue;
		v = daxfs_load(&fs->buckets[b].value);
		ip = v >> 63 ? NULL : daxfs_ptr(fs, v, sizeof(*ip), 64);
		if (!ip || daxfs_load32(&ip->magic) != DAXFS_INODE_MAGIC ||
		    daxfs_load(&ip->ino) != ino)
			continue;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET,
			   "overlay key turned into a tomb: restored from what its value names",
			   ino, b, DAXFS_KEY_TOMB, key, c->repair);
		if (!c->repair)
			return -1;
		daxfs_store(&fs->buckets[b].key, key);
		chk_inode_record(c, b, ino, v);
		return (s64)b;
	}
	return -1;
}

int chk_resolve(struct chk *c, u64 ino, struct chk_ino *ci)
{
	s64 b;

	memset(ci, 0, sizeof(*ci));
	ci->ino = ino;
	ci->bucket = -1;
	if (!ino || ino > DAXFS_KEY_PAYLOAD_MASK)
		return -ENOENT;
	b = chk_ov_find(c, daxfs_key(DAXFS_KEY_INODE, ino));
	if (b < 0)
		b = chk_key_from_tomb(c, ino);
	if (b >= 0) {
		u32 *info = &c->binfo[b];

		if (!(*info & CHK_I_VALID) || (*info & CHK_I_DROPPED))
			return -EUCLEAN;
		ci->bucket = b;
		ci->info = info;
		ci->ip = daxfs_ptr(c->fs,
				   daxfs_load(&c->fs->buckets[b].value),
				   sizeof(struct daxfs_inode), 64);
		if (!ci->ip)
			return -EUCLEAN;
		ci->mode = daxfs_load32(&ci->ip->mode);
		/* a removed base inode keeps an nlink-0 marker record */
		if (ino <= c->nr_base && ino < c->fs->sb.first_dyn_ino &&
		    !daxfs_load32(&ci->ip->nlink))
			return -ENOENT;
		return 0;
	}
	if (ino <= c->nr_base && ino < c->fs->sb.first_dyn_ino) {
		ci->bip = daxfs_base_inode(c->fs, ino);
		if (!ci->bip || !ci->bip->mode)
			return -ENOENT;
		ci->info = &c->base_info[ino - 1];
		ci->mode = ci->bip->mode;
		return 0;
	}
	return -ENOENT;
}

/* ---- offline repair helpers ---- */

/* Allocates a zeroed object from pool space the walk found unreachable;
 * the free stacks are rebuilt afterwards from the same bitmap. */
u64 chk_alloc(struct chk *c, u64 bytes)
{
	u64 n = chk_class_bytes(bytes) >> 6;
	u64 i, steps;

	if (!n)
		return 0;
	i = (c->alloc_cursor + n - 1) & ~(n - 1);
	for (steps = 0; steps < c->units; steps += n, i += n) {
		u64 j, off;
		bool ok = true;

		if (i + n > c->units)
			i = 0;
		for (j = i; j < i + n; j++)
			if (c->used[j >> 6] & (1ULL << (j & 63))) {
				ok = false;
				break;
			}
		if (!ok)
			continue;
		off = c->fs->pool_off + (i << 6);
		chk_set(c, c->used, off, n << 6, true);
		memset(c->fs->base + off, 0, n << 6);
		c->alloc_cursor = i + n;
		c->space_dirty = true;
		return off;
	}
	return 0;
}

/* Offline overlay insert: no other host runs, so plain stores suffice. */
int chk_ov_insert(struct chk *c, u64 key, u64 value)
{
	struct daxfs_fs *fs = c->fs;
	u64 mask = fs->nr_buckets - 1;
	u64 h = daxfs_mix64(key) & mask;
	u32 i;

	if (chk_ov_find(c, key) >= 0)
		return -EEXIST;
	for (i = 0; i < fs->sb.probe_window; i++) {
		u64 idx = (h + i) & mask;
		struct daxfs_bucket *b = &fs->buckets[idx];
		u64 k = daxfs_load(&b->key);

		if (k != DAXFS_KEY_EMPTY && k != DAXFS_KEY_TOMB)
			continue;
		daxfs_store(&b->value, value);
		daxfs_store(&b->key, key);
		c->binfo[idx] = CHK_I_VALID;
		return 0;
	}
	return -ENOSPC;
}

static u32 chk_trie_idx(u64 hash, u32 depth)
{
	if (depth >= DAXFS_TRIE_MAX_DEPTH - 1)
		return hash & 3;
	return (hash >> (56 - 6 * depth)) & 63;
}

static struct daxfs_dirent *chk_dirent_at(struct chk *c, u64 off)
{
	struct daxfs_dirent *d = daxfs_ptr(c->fs, off, sizeof(*d), 64);

	if (!d || !d->name_len || d->name_len > DAXFS_NAME_MAX)
		return NULL;
	return daxfs_ptr(c->fs, off, sizeof(*d) + d->name_len, 64);
}

bool chk_trie_lookup(struct chk *c, struct daxfs_inode *dir, const char *name,
		     u32 len, u64 *ino, bool *whiteout)
{
	u64 hash = daxfs_name_hash(c->fs, name, len);
	struct daxfs_trie_node *n;
	u32 depth;

	n = daxfs_ptr(c->fs, daxfs_load(&dir->root), sizeof(*n), 64);
	for (depth = 0; n && depth < DAXFS_TRIE_MAX_DEPTH; depth++) {
		u64 v = daxfs_load(&n->slot[chk_trie_idx(hash, depth)]);
		u32 k;

		if ((v & DAXFS_SLOT_TAG_MASK) == DAXFS_SLOT_NODE) {
			n = daxfs_ptr(c->fs, v & ~DAXFS_SLOT_TAG_MASK, sizeof(*n), 64);
			continue;
		}
		if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_LEAF)
			return false;
		v &= ~DAXFS_SLOT_TAG_MASK;
		for (k = 0; v && k < 1024; k++) {
			struct daxfs_dirent *d = chk_dirent_at(c, v);

			if (!d)
				return false;
			if (d->hash == hash && d->name_len == len &&
			    !memcmp(d->name, name, len)) {
				*ino = d->ino;
				*whiteout = d->flags & DAXFS_DF_WHITEOUT;
				return true;
			}
			v = daxfs_load(&d->next);
		}
		return false;
	}
	return false;
}

/* Offline insert of a new name into a directory trie. */
int chk_trie_insert(struct chk *c, struct daxfs_inode *dir, const char *name,
		    u32 len, u64 ino, u32 dtype, u32 flags)
{
	u64 hash = daxfs_name_hash(c->fs, name, len);
	struct daxfs_trie_node *n;
	struct daxfs_dirent *d;
	u64 doff, root;
	u32 depth;
	int err = -EUCLEAN;

	root = daxfs_load(&dir->root);
	if (!root) {
		root = chk_alloc(c, sizeof(*n));
		if (!root)
			return -ENOSPC;
		daxfs_store(&dir->root, root);
	}
	n = daxfs_ptr(c->fs, root, sizeof(*n), 64);
	if (!n)
		return -EUCLEAN;
	doff = chk_alloc(c, sizeof(*d) + len);
	if (!doff)
		return -ENOSPC;
	d = daxfs_ptr(c->fs, doff, sizeof(*d) + len, 64);
	d->ino = ino;
	d->hash = hash;
	d->name_len = len;
	d->type = dtype;
	d->flags = flags;
	memcpy(d->name, name, len);
	for (depth = 0; depth < DAXFS_TRIE_MAX_DEPTH; ) {
		u64 *slot = &n->slot[chk_trie_idx(hash, depth)];
		u64 v = daxfs_load(slot);
		struct daxfs_dirent *old;
		struct daxfs_trie_node *nn;
		u64 noff;

		if (!v) {
			daxfs_store(slot, doff | DAXFS_SLOT_LEAF);
			return 0;
		}
		if ((v & DAXFS_SLOT_TAG_MASK) == DAXFS_SLOT_NODE) {
			n = daxfs_ptr(c->fs, v & ~DAXFS_SLOT_TAG_MASK, sizeof(*n), 64);
			if (!n)
				break;
			depth++;
			continue;
		}
		old = chk_dirent_at(c, v & ~DAXFS_SLOT_TAG_MASK);
		if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_LEAF || !old)
			break;
		if (old->hash == hash) {
			d->next = v & ~DAXFS_SLOT_TAG_MASK;
			daxfs_store(slot, doff | DAXFS_SLOT_LEAF);
			return 0;
		}
		if (depth + 1 >= DAXFS_TRIE_MAX_DEPTH)
			break;
		noff = chk_alloc(c, sizeof(*nn));
		if (!noff) {
			err = -ENOSPC;
			break;
		}
		nn = daxfs_ptr(c->fs, noff, sizeof(*nn), 64);
		nn->slot[chk_trie_idx(old->hash, depth + 1)] = v;
		daxfs_store(slot, noff | DAXFS_SLOT_NODE);
	}
	/* the dirent is linked nowhere: free again for the space rebuild
	 * (kept marked, it would be a leak the next check reports) */
	chk_set(c, c->used, doff, chk_class_bytes(sizeof(*d) + len), false);
	return err;
}

/* ---- hosts, lanes, claims ---- */

bool chk_host_fresh(struct chk *c, struct daxfs_host *h)
{
	u64 st = daxfs_load(&h->state);

	/* repairing (no live host, or -f: the operator says every host
	 * is gone): a lease still fresh is a dead host's, and the repair
	 * must be as complete as offline, or the next check, which sees
	 * it expired, finds what was left (orphans, the slot itself) */
	if (c->repair)
		return false;
	if ((st & DAXFS_HOST_STATE_MASK) != DAXFS_HOST_ALIVE)
		return false;
	/* a lease this process has not watched long enough to judge
	 * (docs/hosts.md "Leases") counts as fresh */
	return !daxfs_host_expired(c->fs, (u32)(h - c->fs->hosts));
}

static void chk_hosts_live(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u32 i;

	for (i = 0; i < fs->sb.max_hosts; i++) {
		struct daxfs_host *h = &fs->hosts[i];

		if (!chk_host_fresh(c, h))
			continue;
		c->r->live_hosts++;
		chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_HOST_LIVE,
			   "host is mounted (fresh lease); results may show transient states",
			   0, i, daxfs_load32(&h->pid), 0, false);
	}
	c->live = c->r->live_hosts > 0;
}

/* Marks a limbo batch page and its retired entries as pending-free. */
static void chk_limbo_chain(struct chk *c, u64 off, u32 slot)
{
	u64 steps;

	for (steps = 0; off && steps < c->units; steps++) {
		struct daxfs_limbo *lb = daxfs_ptr(c->fs, off, sizeof(*lb),
						   DAXFS_BLOCK_SIZE);
		u32 n, i;

		if (!lb) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
				   "limbo batch pointer invalid", 0, off, slot, 0,
				   c->repair);
			c->space_dirty = true;
			return;
		}
		if (!chk_mark(c, c->freed, off, sizeof(*lb)) ||
		    chk_test_any(c, c->used, off, sizeof(*lb))) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
				   "limbo batch linked twice or in use", 0, off,
				   slot, 0, c->repair);
			c->space_dirty = true;
			return;
		}
		c->r->limbo_bytes += sizeof(*lb);
		n = daxfs_load32(&lb->count);
		if (n > DAXFS_LIMBO_ENTRIES) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
				   "limbo batch count too large", 0, off, n,
				   DAXFS_LIMBO_ENTRIES, c->repair);
			c->space_dirty = true;
			n = DAXFS_LIMBO_ENTRIES;
		}
		for (i = 0; i < n; i++) {
			u64 e = daxfs_load(&lb->entry[i]);
			u32 cls = e & DAXFS_SLOT_TAG_MASK;
			u64 eoff = e & ~DAXFS_SLOT_TAG_MASK;
			u64 sz = cls < DAXFS_CLASS_PAGE ? 64ULL << cls :
				 DAXFS_BLOCK_SIZE;

			if (cls >= DAXFS_NR_CLASSES ||
			    !daxfs_ptr(c->fs, eoff, sz, sz)) {
				chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
					   "limbo entry invalid", 0, off, e, i,
					   c->repair);
				c->space_dirty = true;
				continue;
			}
			if (!chk_mark(c, c->freed, eoff, sz)) {
				chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
					   "object retired twice", 0, eoff, off, i,
					   c->repair);
				c->space_dirty = true;
			}
			c->r->limbo_bytes += sz;
		}
		off = daxfs_load(&lb->next);
	}
	if (off)
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LIMBO,
			   "limbo chain too long (cycle)", 0, off, slot, 0, false);
}

static void chk_host_batch(struct chk *c, struct daxfs_host *h, u32 slot)
{
	u64 cur = daxfs_load(&h->alloc_cursor);
	u64 end = daxfs_load(&h->alloc_end);

	if (!cur || (cur & (DAXFS_PAGE_SIZE - 1)) || cur == end)
		return;		/* none, or locked by a refilling lane or a
				 * lane taking pages into its hold */
	if (cur > end || (cur & (DAXFS_BLOCK_SIZE - 1)) ||
	    (end & (DAXFS_BLOCK_SIZE - 1)) || !daxfs_ptr(c->fs, cur, end - cur, 64) ||
	    end > c->bump) {
		chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
			   DAXFS_CHK_HOST_BAD, "host alloc batch invalid", 0, cur,
			   end, slot, c->repair);
		c->space_dirty = true;
		return;
	}
	if (!chk_mark(c, c->freed, cur, end - cur))
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_HOST_BAD,
			   "host alloc batch overlaps other free space", 0, cur,
			   end, slot, c->repair);
	c->r->batch_bytes += end - cur;
}

/* Open set pages (docs/open-files.md) are in use while linked; a chain
 * that does not validate is cut offline (its host is dead by then).
 * drop: the slot is being released offline, its pages go back. */
static void chk_open_set(struct chk *c, struct daxfs_host *h, u32 slot,
			 bool drop)
{
	struct daxfs_open_page *pg = NULL;
	u64 off = daxfs_load(&h->open_set);
	u32 n = 0;

	while (off) {
		pg = daxfs_open_page_next(c->fs, slot, pg, &n);
		if (pg && drop) {
			chk_set(c, c->used, off, DAXFS_BLOCK_SIZE, false);
			off = daxfs_load(&pg->next);
			continue;
		}
		if (!pg || !chk_mark(c, c->used, off, DAXFS_BLOCK_SIZE)) {
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_HOST_BAD,
				   "host open set page invalid or linked twice",
				   0, off, slot, n, c->repair);
			if (c->repair)
				daxfs_store(&h->open_set, 0);
			c->space_dirty = true;
			return;
		}
		off = daxfs_load(&pg->next);
	}
}

/* Census and (offline) release of every host slot that is not live. */
static void chk_hosts(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u32 i, l;

	for (i = 0; i < fs->sb.max_hosts; i++) {
		struct daxfs_host *h = &fs->hosts[i];
		u64 st = daxfs_load(&h->state);
		u32 state = st & DAXFS_HOST_STATE_MASK;
		bool fresh = chk_host_fresh(c, h);
		u32 busy = 0, intents = 0, limbo = 0;

		chk_progress(c, 1, i, fs->sb.max_hosts);
		if (state > DAXFS_HOST_RECOVERING) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_HOST_BAD,
				   "host slot state invalid", 0, i, st, 0,
				   c->repair);
		}
		for (l = 0; l < DAXFS_LANES; l++) {
			struct daxfs_lane *ln = &fs->lanes[i * DAXFS_LANES + l];
			u64 lo = daxfs_load(&ln->limbo_open);

			if (daxfs_load(&ln->epoch))
				busy++;
			if (daxfs_load(&ln->intent.op))
				intents++;
			if (lo) {
				limbo++;
				chk_limbo_chain(c, lo, i);
			}
		}
		if (daxfs_load(&h->limbo_sealed)) {
			limbo++;
			chk_limbo_chain(c, daxfs_load(&h->limbo_sealed), i);
		}
		chk_host_batch(c, h, i);
		chk_open_set(c, h, i, false);
		if (fresh)
			continue;
		if (state == DAXFS_HOST_FREE && !busy && !intents &&
		    !daxfs_load(&h->open_set))
			continue;
		if (state != DAXFS_HOST_FREE)
			c->r->dead_hosts++;
		if (state == DAXFS_HOST_FREE)
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_LANE,
				   "free host slot has busy lanes or intents", 0,
				   i, busy, intents, c->repair);
		else
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_HOST_DEAD,
				   "dead host still holds its slot (busy lanes/intents in have/want)",
				   0, i, busy, intents, c->repair);
		if (!c->repair)
			continue;
		/* Offline release.  A pending overlay insert is rolled back
		 * by the bucket pass (every pending bucket is orphaned when
		 * no host is live); a half-done rename is left to the
		 * namespace repairs (names and counts are rebuilt). */
		for (l = 0; l < DAXFS_LANES; l++) {
			struct daxfs_lane *ln = &fs->lanes[i * DAXFS_LANES + l];
			u32 w;

			daxfs_store(&ln->epoch, 0);
			daxfs_store(&ln->intent.op, 0);
			for (w = 0; w < 7; w++)
				daxfs_store(&ln->intent.a[w], 0);
		}
		daxfs_store(&h->map_epoch, 0);
		daxfs_store(&h->pass_wanted, 0);
		chk_open_set(c, h, i, true);	/* its orphans are dropped below */
		daxfs_store(&h->open_set, 0);
		if (state != DAXFS_HOST_FREE)
			daxfs_store(&h->state, st & ~DAXFS_HOST_STATE_MASK);
		c->space_dirty = true;	/* its batch and limbo go back */
	}
}

/*
 * Offline parity with online recovery (docs/recovery.md): before the
 * generic repairs cut and recount, a dead host's lanes that hold
 * interrupted work (namespace intents, file-write intents, held pages, a
 * taken limbo chain, pending buckets) get the very roll-forward/back a
 * survivor would run: fsck joins as a host, declares every non-fresh
 * (with -f: every) host dead, recovers it through the core and leaves.
 * A half-done rename then ends with one name, not two.
 */
static bool chk_lane_work(struct daxfs_lane *ln)
{
	return daxfs_load(&ln->intent.op) || daxfs_load(&ln->epoch) ||
	       daxfs_load(&ln->pad[DAXFS_LANE_HOLD_PAGES]) ||
	       daxfs_load(&ln->pad[DAXFS_LANE_HOLD_CHAIN]) ||
	       daxfs_load(&ln->pad[DAXFS_LANE_OV_BUCKET]);
}

static void chk_recover_hosts(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u32 i, l, st, n = 0;
	u64 w, mask = 0;

	if (fs->host != DAXFS_NO_HOST)
		return;
	for (i = 0; i < fs->sb.max_hosts && i < 64; i++) {
		struct daxfs_host *h = &fs->hosts[i];

		w = daxfs_load(&h->state);
		st = (u32)(w & DAXFS_HOST_STATE_MASK);
		if (st == DAXFS_HOST_FREE || st > DAXFS_HOST_RECOVERING)
			continue;
		for (l = 0; l < DAXFS_LANES; l++)
			if (chk_lane_work(&fs->lanes[(u64)i * DAXFS_LANES + l]))
				break;
		/* opens of a dead host: recovery settles its orphans */
		if (l == DAXFS_LANES && !daxfs_load(&h->open_set))
			continue;
		/* repairs run only with no live host (or -f): all are dead */
		if (st == DAXFS_HOST_ALIVE)
			daxfs_cas(&h->state, &w, (w & ~(u64)DAXFS_HOST_STATE_MASK) |
				  DAXFS_HOST_DEAD);
		else if (st == DAXFS_HOST_RECOVERING)
			/* take it over: its recovery lease counts as run out */
			daxfs_host_obs_backdate(fs, i, 2LL * fs->lease_ms * 1000000LL);
		mask |= 1ULL << i;
	}
	if (!mask)
		return;
	/* nothing checked yet: frees and pops would follow words a stray
	 * store may have bent onto objects in use (DAXFS_FS_NO_FREE) */
	fs->flags |= DAXFS_FS_NO_FREE;
	if (daxfs_host_join(fs, "fsck.daxfs", 0, DAXFS_HOST_KIND_USER)) {
		fs->flags &= ~DAXFS_FS_NO_FREE;
		return;
	}
	/* what the recovery frees is found unreachable: rebuilt below */
	c->space_dirty = true;
	daxfs_recover_dead_hosts(fs);
	for (i = 0; i < 64; i++) {
		if (!(mask & (1ULL << i)))
			continue;
		st = (u32)(daxfs_load(&fs->hosts[i].state) & DAXFS_HOST_STATE_MASK);
		if (st != DAXFS_HOST_FREE)
			continue;
		n++;
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_HOST_DEAD,
			   "dead host recovered: its interrupted operations were completed or rolled back",
			   0, i, 0, 0, true);
	}
	daxfs_host_leave(fs);
	fs->flags &= ~DAXFS_FS_NO_FREE;
}

static void chk_rename_claim(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 claim = daxfs_load(&fs->state->rename_claim.v);
	u64 slot, gen;
	struct daxfs_host *h;

	if (!claim)
		return;
	slot = (claim & 0xffff) - 1;
	gen = claim >> 16;
	if (slot < fs->sb.max_hosts) {
		h = &fs->hosts[slot];
		if (chk_host_fresh(c, h) &&
		    (daxfs_load(&h->state) >> DAXFS_HOST_GEN_SHIFT) == gen)
			return;
	}
	chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_RENAME_CLAIM,
		   "rename claim held by a dead or absent host", 0, slot, claim, 0,
		   c->repair);
	if (c->repair)
		daxfs_store(&fs->state->rename_claim.v, 0);
}

/* ---- state page ---- */

static void chk_state(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	struct daxfs_state *s = fs->state;
	u64 bump = daxfs_load(&s->bump.v);
	u64 epoch = daxfs_load(&s->epoch.v);
	u64 next = daxfs_load(&s->next_ino.v);

	c->r->used_bytes = daxfs_load(&s->used_bytes.v);
	if (bump < fs->pool_off || bump > fs->pool_end ||
	    (bump & (DAXFS_BLOCK_SIZE - 1))) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_STATE,
			   "allocation frontier (bump) outside the pool", 0, 0,
			   bump, fs->pool_off, c->repair);
		/* treat the whole pool as allocated: the walk decides */
		bump = fs->pool_end;
		c->space_dirty = true;
	}
	c->bump = bump;
	if (!epoch) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_STATE,
			   "reclamation epoch is 0", 0, 0, 0, 1, c->repair);
		if (c->repair)
			daxfs_store(&s->epoch.v, 1);
	}
	/* any value is consistent (a count, compared for equality only);
	 * 0 only keeps permission checks from their fast path until the
	 * next change (docs/kernel.md "Permission checks and the attribute
	 * epoch") */
	if (!daxfs_load(&s->attr_epoch.v)) {
		chk_report(c, DAXFS_CHK_WARN, DAXFS_CHK_STATE,
			   "attribute epoch is 0", 0, 0, 0, 1, c->repair);
		if (c->repair)
			daxfs_store(&s->attr_epoch.v, 1);
	}
	if (next < fs->sb.first_dyn_ino || next >= DAXFS_KEY_PAYLOAD_MASK) {
		/* too high, no key can hold it (creates fail EUCLEAN, and
		 * /lost+found would get a number its key cuts short):
		 * lowered here, raised above every inode by chk_nlinks */
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_NEXT_INO,
			   next < fs->sb.first_dyn_ino ?
			   "next inode number below the first dynamic one" :
			   "next inode number beyond what a key can hold", 0, 0,
			   next, fs->sb.first_dyn_ino, c->repair);
		if (c->repair)
			daxfs_store(&s->next_ino.v, fs->sb.first_dyn_ino);
	}
}

/* ---- overlay buckets ---- */

static bool chk_intent_owns(struct chk *c, u64 idx, u64 key)
{
	struct daxfs_fs *fs = c->fs;
	u32 i, l;

	for (i = 0; i < fs->sb.max_hosts; i++) {
		if (!chk_host_fresh(c, &fs->hosts[i]))
			continue;
		for (l = 0; l < DAXFS_LANES; l++) {
			struct daxfs_lane *ln = &fs->lanes[i * DAXFS_LANES + l];

			if (daxfs_load(&ln->intent.op) == DAXFS_INTENT_OV_INSERT &&
			    daxfs_load(&ln->intent.a[0]) == idx &&
			    (daxfs_load(&ln->intent.a[1]) & ~DAXFS_KEY_PENDING) ==
			    (key & ~DAXFS_KEY_PENDING))
				return true;
		}
	}
	return false;
}

void chk_tomb(struct chk *c, u64 idx)
{
	/* the value goes too: a tomb with a record pointer is what a stray
	 * store into a live key leaves (chk_key_from_tomb restores those),
	 * never what a host or this repair leaves */
	daxfs_store(&c->fs->buckets[idx].value, 0);
	daxfs_store(&c->fs->buckets[idx].key, DAXFS_KEY_TOMB);
	c->binfo[idx] |= CHK_I_DROPPED;
	c->space_dirty = true;
}

/*
 * A regular file's write gate (core/filegate.c, format version 4): 0, or
 * the claim of a shrinking host that is alive.  A gate a gone host left
 * closed would stop every write of the file: recovery opens it; offline,
 * no holder is alive and fsck opens it.  rdev is the gate's sequence
 * in regular files since version 7 (any value is valid).
 */
static void chk_file_gate(struct chk *c, u64 ino, struct daxfs_inode *ip)
{
	u64 g = daxfs_load(&ip->parent), hw = 0;
	u32 slot = daxfs_claim_slot(g);

	if (!g)
		return;
	if (slot < c->fs->sb.max_hosts)
		hw = daxfs_load(&daxfs_host_at(c->fs, slot)->state);
	if (c->live && daxfs_host_st(hw) == DAXFS_HOST_ALIVE &&
	    daxfs_host_gen(hw) == daxfs_claim_gen(g))
		return;		/* a truncate in progress */
	chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
		   DAXFS_CHK_INODE,
		   "file write gate left closed by a host that is gone", ino,
		   0, g, 0, c->repair);
	if (c->repair)
		daxfs_store(&ip->parent, 0);
}

static bool chk_inode_record(struct chk *c, u64 idx, u64 ino, u64 off)
{
	struct daxfs_inode *ip = daxfs_ptr(c->fs, off, sizeof(*ip), 64);
	const char *why = NULL;
	u64 outer = c->media_ino;
	u32 mode;

	c->media_ino = ino;
	if (!ip)
		why = "inode record pointer outside the pool or misaligned";
	else if (daxfs_load32(&ip->magic) != DAXFS_INODE_MAGIC)
		why = "inode record has a bad magic number";
	else if (daxfs_load(&ip->ino) != ino)
		why = "inode record number differs from its key";
	else if (!chk_mode_dtype(mode = daxfs_load32(&ip->mode)))
		why = "inode record has an invalid file type";
	else if (c->repair && (mode & CHK_S_IFMT) == CHK_S_IFLNK &&
		 chk_symlink_lost(c, ino))
		why = "symlink target lost (its record pointer names another object)";
	else if (c->repair && (mode & CHK_S_IFMT) == CHK_S_IFLNK &&
		 !chk_symlink_repair(c, ino, ip))
		why = "symlink target lost (bad record pointer)";
	else if (!chk_mark(c, c->used, off, sizeof(*ip)))
		why = "inode record shared with another object";
	if (why) {
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_INODE, why, ino, off,
			   ip ? daxfs_load32(&ip->magic) : 0, DAXFS_INODE_MAGIC,
			   c->repair);
		c->media_ino = outer;
		if (c->repair)
			chk_tomb(c, idx);
		return false;
	}
	c->media_ino = outer;
	c->binfo[idx] = CHK_I_VALID | ((mode & CHK_S_IFMT) == CHK_S_IFDIR ?
				       CHK_I_DIR : 0);
	if ((mode & CHK_S_IFMT) == CHK_S_IFREG)
		chk_file_gate(c, ino, ip);
	chk_xattr_claim(c, ino, ip);
	chk_change_flight(c, ino, ip);
	if (ino > c->max_ino)
		c->max_ino = ino;
	return true;
}

/* off is a sound inode record whose number is not ino. */
static bool chk_record_names_other(struct chk *c, u64 off, u64 ino)
{
	struct daxfs_inode *ip = daxfs_ptr(c->fs, off, sizeof(*ip),
					   DAXFS_OFF_ALIGN);

	return ip && daxfs_load32(&ip->magic) == DAXFS_INODE_MAGIC &&
	       daxfs_load(&ip->ino) != ino;
}

/* A lookup of key from its home bucket meets bucket idx (no empty bucket
 * before it, within the probe window). */
static bool chk_bucket_reaches(struct chk *c, u64 key, u64 idx)
{
	struct daxfs_fs *fs = c->fs;
	u64 mask = fs->nr_buckets - 1, h = daxfs_mix64(key) & mask, b;
	u32 j;

	for (j = 0; j < fs->sb.probe_window; j++) {
		b = (h + j) & mask;
		if (b == idx)
			return true;
		if (daxfs_load(&fs->buckets[b].key) == DAXFS_KEY_EMPTY)
			return false;
	}
	return false;
}

/*
 * The key a damaged bucket must have had, from what its value points at:
 * an inode record or an xattr set names its owner, so a stray store in
 * the key word does not lose a file (a copied-up base file silently went
 * back to its base bytes).  0 when the value names neither, the owner
 * already has such a key, or no lookup of it would reach this bucket.
 */
static u64 chk_bucket_rekey(struct chk *c, u64 idx, u64 v)
{
	struct daxfs_inode *ip = daxfs_ptr(c->fs, v, sizeof(*ip),
					   DAXFS_OFF_ALIGN);
	struct daxfs_xattr_set *xs = (struct daxfs_xattr_set *)ip;
	u64 key = 0, ino;

	if (!ip)
		return 0;
	if (daxfs_load32(&ip->magic) == DAXFS_INODE_MAGIC) {
		ino = daxfs_load(&ip->ino);
		/* a number handed out: a hit record's ino word rarely is */
		if (ino && ino < daxfs_load(daxfs_state_word(c->fs, next_ino)))
			key = daxfs_key(DAXFS_KEY_INODE, ino);
	} else if (daxfs_load32(&xs->magic) == DAXFS_XATTR_MAGIC) {
		ino = daxfs_load(&xs->ino);
		if (ino && ino <= DAXFS_KEY_PAYLOAD_MASK)
			key = daxfs_key(DAXFS_KEY_XATTR, ino);
	}
	if (!key || chk_ov_find(c, key) >= 0 || !chk_bucket_reaches(c, key, idx))
		return 0;
	return key;
}

static void chk_buckets(struct chk *c)
{
	struct daxfs_fs *fs = c->fs;
	u64 i, mask = fs->nr_buckets - 1;

	for (i = 0; i < fs->nr_buckets; i++) {
		struct daxfs_bucket *b = &fs->buckets[i];
		u64 k = daxfs_load(&b->key);
		u64 v = daxfs_load(&b->value);
		u64 key, ino, was = 0;
		bool typed;
		s64 found;

		if ((i & 0xffff) == 0)
			chk_progress(c, 2, i, fs->nr_buckets);
		if (k == DAXFS_KEY_EMPTY && v) {
			/* no host leaves a value in an empty bucket (a claim
			 * takes key and value in one CAS): a stray store hit
			 * the key, or the value of a free bucket */
			was = chk_bucket_rekey(c, i, v);
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET, was ?
				   "overlay key emptied: restored from what its value names" :
				   "empty overlay bucket holds a value",
				   was & DAXFS_KEY_PAYLOAD_MASK, i, k, was ? was : v,
				   c->repair);
			if (!c->repair)
				continue;
			if (!was) {
				daxfs_store(&b->value, 0);
				continue;
			}
			daxfs_store(&b->key, was);
			k = was;
		}
		if (k == DAXFS_KEY_EMPTY || k == DAXFS_KEY_TOMB)
			continue;
		key = k & ~DAXFS_KEY_PENDING;
		typed = (key >> DAXFS_KEY_TYPE_SHIFT) == DAXFS_KEY_INODE ||
			(key >> DAXFS_KEY_TYPE_SHIFT) == DAXFS_KEY_XATTR;
		/* a pending bit on a key of no type is a stray store, not an
		 * insert in flight: below, its key is rebuilt if it can be */
		if ((k & DAXFS_KEY_PENDING && typed) || !v) {
			if (c->live && chk_intent_owns(c, i, k))
				continue;
			chk_report(c, c->live ? DAXFS_CHK_WARN : DAXFS_CHK_ERROR,
				   DAXFS_CHK_BUCKET_PENDING,
				   "overlay bucket pending or half-deleted with no live owner",
				   key & DAXFS_KEY_PAYLOAD_MASK, i, k, v,
				   c->repair);
			if (c->repair)
				chk_tomb(c, i);
			continue;
		}
		if (!typed) {
			was = chk_bucket_rekey(c, i, v);
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET, was ?
				   "overlay key damaged: restored from what its value names" :
				   "overlay key of unknown type",
				   was & DAXFS_KEY_PAYLOAD_MASK, i, k, was, c->repair);
			if (!c->repair)
				continue;
			if (!was) {
				chk_tomb(c, i);
				continue;
			}
			daxfs_store(&b->key, was);
			k = key = was;
		}
		ino = k & DAXFS_KEY_PAYLOAD_MASK;
		found = chk_ov_find(c, key);
		if (found != (s64)i) {
			u64 dist = (i - (daxfs_mix64(key) & mask)) & mask;

			/* its key hit, the value intact: a copy of another
			 * key, or one no lookup reaches */
			if (found < 0 || chk_record_names_other(c, v, ino))
				was = chk_bucket_rekey(c, i, v);
			if (was)
				chk_report(c, DAXFS_CHK_ERROR, found >= 0 ?
					   DAXFS_CHK_BUCKET_DUP : DAXFS_CHK_BUCKET_LOST,
					   "overlay key damaged: restored from what its value names",
					   was & DAXFS_KEY_PAYLOAD_MASK, i, k, was,
					   c->repair);
			else if (found >= 0)
				chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET_DUP,
					   "inode key published twice (later copy dropped)",
					   ino, i, found, dist, c->repair);
			else
				chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET_LOST,
					   "inode key where no lookup can find it",
					   ino, i, dist, fs->sb.probe_window,
					   c->repair);
			if (c->repair && was) {
				daxfs_store(&b->key, was);
				k = key = was;
				ino = k & DAXFS_KEY_PAYLOAD_MASK;
			} else {
				if (c->repair)
					chk_tomb(c, i);
				continue;
			}
		}
		/* xattr sets: chk_xattrs, once the inodes are known */
		if ((k >> DAXFS_KEY_TYPE_SHIFT) != DAXFS_KEY_INODE)
			continue;
		/* a key bent into another inode's number (the record sound,
		 * naming its own): put back, or the file is lost */
		if (!was && chk_record_names_other(c, v, ino) &&
		    (was = chk_bucket_rekey(c, i, v)) != 0) {
			chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BUCKET,
				   "overlay key damaged: restored from what its value names",
				   was & DAXFS_KEY_PAYLOAD_MASK, i, k, was, c->repair);
			if (!c->repair)
				continue;
			daxfs_store(&b->key, was);
			ino = was & DAXFS_KEY_PAYLOAD_MASK;
		}
		chk_inode_record(c, i, ino, v);
	}
}

/* ---- driver ---- */

/*
 * The read-only base image as a mount with validate= sees it: a stray
 * store there (a base inode's size, say) makes its files fail with
 * EUCLEAN, and no repair rewrites the base.  The walk names most such
 * damage by inode; this whole-image pass speaks only for what it missed.
 */
static void chk_base_whole(struct chk *c)
{
	if (!c->fs->base_off || c->base_errors)
		return;
	if (daxfs_base_validate(c->fs))
		chk_report(c, DAXFS_CHK_ERROR, DAXFS_CHK_BASE,
			   "base image fails validation (an inode, directory "
			   "entry or data range is damaged; it is read-only: "
			   "not repaired)", 0, c->fs->base_off, 0, 0, false);
}

/* One walk of the whole filesystem; *changes: repairs it made. */
static int chk_pass(struct daxfs_fs *fs, const struct daxfs_check_opts *o,
		    struct daxfs_check_result *res, u64 *changes, bool first)
{
	struct chk c;
	int err;

	memset(res, 0, sizeof(*res));
	memset(&c, 0, sizeof(c));
	*changes = 0;
	c.fs = fs;
	c.o = o;
	c.r = res;
	err = chk_setup(&c, first);
	if (err)
		return err;
	if (daxfs_load(&fs->state->magic) != DAXFS_STATE_MAGIC) {
		chk_report(&c, DAXFS_CHK_FATAL, DAXFS_CHK_STATE,
			   "state page magic number is wrong", 0,
			   (u64)((u8 *)fs->state - fs->base),
			   daxfs_load(&fs->state->magic), DAXFS_STATE_MAGIC,
			   false);
		return 0;
	}
	chk_hosts_live(&c);
	if ((o->flags & DAXFS_CHECK_REPAIR) && (fs->flags & DAXFS_FS_RDONLY))
		return -EROFS;
	if (o->flags & DAXFS_CHECK_REPAIR) {
		if (c.live && !(o->flags & DAXFS_CHECK_FORCE))
			res->repair_refused = true;
		else
			c.repair = true;
	}
	/* -f: repair as if offline (chk_host_fresh) */
	if (c.repair)
		c.live = false;
	if (c.repair)
		chk_recover_hosts(&c);
	chk_state(&c);
	chk_hosts(&c);
	chk_locks(&c);
	chk_rename_claim(&c);
	chk_buckets(&c);
	chk_namespace(&c);
	chk_orphans(&c);
	chk_xattrs(&c);
	chk_redo(&c);
	if (c.repair)
		chk_symlink_settle(&c);
	chk_space(&c);
	if (c.repair)
		chk_symlink_copies(&c);
	chk_nlinks(&c);
	chk_base_whole(&c);
	if (c.repair && c.space_dirty)
		chk_rebuild_space(&c);
	*changes = c.changes;
	return 0;
}

/*
 * A repair can make an earlier judgment of the same pass wrong: a trie
 * node claimed through a damaged pointer was another object's bytes, a
 * record cut late leaves what it named marked.  So, like e2fsck's
 * restart, a pass that changed the region is followed by another, until
 * one changes nothing: what -y leaves is what -n then finds clean.  The
 * totals count every pass; the census is the last pass's (the region as
 * left).  A pass that still changes things after CHK_MAX_PASSES is
 * reported: the repair did not settle.
 */
#define CHK_MAX_PASSES	4

int daxfs_check(struct daxfs_fs *fs, const struct daxfs_check_opts *o,
		struct daxfs_check_result *res)
{
	struct daxfs_check_result sum = { .nr = { 0 } };
	u64 changes;
	u32 pass, i;
	int err;

	for (pass = 1; ; pass++) {
		err = chk_pass(fs, o, res, &changes, pass == 1);
		if (err)
			return err;
		for (i = 0; i < 4; i++)
			sum.nr[i] += res->nr[i];
		sum.repaired += res->repaired;
		sum.orphans += res->orphans;
		sum.reattached += res->reattached;
		sum.dropped += res->dropped;
		sum.rebuilt_space |= res->rebuilt_space;
		if (!changes || res->repair_refused ||
		    !(o->flags & DAXFS_CHECK_REPAIR))
			break;
		if (pass == CHK_MAX_PASSES) {
			struct chk c = { .fs = fs, .o = o, .r = res };

			chk_report(&c, DAXFS_CHK_ERROR, DAXFS_CHK_PASS,
				   "repairs still changing the region after the last pass (changes in have)",
				   0, 0, changes, 0, false);
			sum.nr[DAXFS_CHK_ERROR]++;
			break;
		}
		if (o->report) {
			struct chk c = { .fs = fs, .o = o, .r = &sum };

			chk_report(&c, DAXFS_CHK_INFO, DAXFS_CHK_PASS,
				   "repairs made: checking the region again (pass number in have)", 0,
				   0, pass + 1, 0, false);
		}
	}
	for (i = 0; i < 4; i++)
		res->nr[i] = sum.nr[i];
	res->repaired = sum.repaired;
	res->orphans = sum.orphans;
	res->reattached = sum.reattached;
	res->dropped = sum.dropped;
	res->rebuilt_space = sum.rebuilt_space;
	return 0;
}

/*
 * A state page daxfs_fs_open() refuses (magic, epoch 0, bump outside the
 * pool) under a valid superblock: report, and with repair rewrite the
 * words to safe values (bump at the pool end: the walk then finds what
 * is in use and the space rebuild lowers it again).
 */
int daxfs_check_state_fixup(void *base, u64 size, bool repair,
			    daxfs_check_report_t report, void *ctx)
{
	struct daxfs_super sb;
	struct daxfs_state *st;
	u64 pool_off, pool_end, v;
	int bad = 0;
	struct daxfs_check_problem p = {
		.severity = DAXFS_CHK_ERROR, .code = DAXFS_CHK_STATE,
		.name = "state", .repaired = repair,
	};

	if (daxfs_check_super(base, size, NULL, NULL))
		return -EUCLEAN;
	memcpy(&sb, base, sizeof(sb));
	if (sb.regions[DAXFS_RGN_STATE].kind != DAXFS_RGN_STATE ||
	    sb.regions[DAXFS_RGN_POOL].kind != DAXFS_RGN_POOL)
		return -EUCLEAN;
	st = (struct daxfs_state *)((u8 *)base + sb.regions[DAXFS_RGN_STATE].offset);
	pool_off = sb.regions[DAXFS_RGN_POOL].offset;
	pool_end = pool_off + sb.regions[DAXFS_RGN_POOL].size;
	if (daxfs_load(&st->magic) != DAXFS_STATE_MAGIC) {
		p.msg = "state page magic number is wrong";
		p.have = daxfs_load(&st->magic);
		p.want = DAXFS_STATE_MAGIC;
		bad++;
		if (report)
			report(ctx, &p);
		if (repair)
			daxfs_store(&st->magic, DAXFS_STATE_MAGIC);
	}
	if (!daxfs_load(&st->epoch.v)) {
		p.msg = "reclamation epoch is 0";
		p.have = 0;
		p.want = 1;
		bad++;
		if (report)
			report(ctx, &p);
		if (repair)
			daxfs_store(&st->epoch.v, 1);
	}
	v = daxfs_load(&st->bump.v);
	if (v < pool_off || v > pool_end || (v & (DAXFS_BLOCK_SIZE - 1))) {
		p.msg = "allocation frontier (bump) outside the pool";
		p.have = v;
		p.want = pool_end;
		bad++;
		if (report)
			report(ctx, &p);
		if (repair)
			daxfs_store(&st->bump.v, pool_end);
	}
	return bad;
}

/*
 * The header's words against what they must be.  Safe with hosts alive:
 * none can open the region while the header is off, and those that opened
 * it before use the same derived offsets (the layout is a function of the
 * region's size).  Backing descriptors are data no word derives: kept.
 */
int daxfs_check_pcache_fixup(void *base, u64 size, bool repair,
			     daxfs_check_report_t report, void *ctx)
{
	static const struct {
		const char *msg;
		unsigned int off, len;
	} words[] = {
#define PC_WORD(f, m) { m, offsetof(struct daxfs_pcache_header, f), \
			sizeof(((struct daxfs_pcache_header *)0)->f) }
		PC_WORD(magic, "page cache header magic number is wrong"),
		PC_WORD(version, "page cache layout version is wrong"),
		PC_WORD(header_size, "page cache header size is wrong"),
		PC_WORD(nr_slots, "page cache slot count differs from its region's"),
		PC_WORD(window, "page cache probe window invalid"),
		PC_WORD(pin_stride, "page cache pin stride differs from the host table's"),
		PC_WORD(owner_off, "page cache layout offset wrong (owners)"),
		PC_WORD(meta_off, "page cache layout offset wrong (slots)"),
		PC_WORD(pins_off, "page cache layout offset wrong (pins)"),
		PC_WORD(data_off, "page cache layout offset wrong (data)"),
		PC_WORD(nr_backing, "page cache backing file count invalid"),
		PC_WORD(max_hosts, "page cache host count differs from the superblock's"),
		PC_WORD(csum, "page cache header checksum mismatch"),
#undef PC_WORD
	};
	struct daxfs_check_problem p = {
		.severity = DAXFS_CHK_ERROR, .code = DAXFS_CHK_PCACHE,
		.name = "pcache", .repaired = repair,
	};
	/* the live header and superblock read in place: two copies of
	 * 1,152 + 512 bytes would not fit a kernel stack frame */
	const struct daxfs_super *sb = base;
	const struct daxfs_pcache_header *h;
	struct daxfs_pcache_header want;
	u8 *r;
	unsigned int i;
	int bad = 0;

	if (daxfs_check_super(base, size, NULL, NULL))
		return -EUCLEAN;
	if (!(sb->feat_incompat & DAXFS_FEAT_INCOMPAT_PCACHE))
		return 0;
	if (sb->regions[DAXFS_RGN_PCACHE].size < sizeof(want))
		return -EUCLEAN;
	r = (u8 *)base + sb->regions[DAXFS_RGN_PCACHE].offset;
	h = (const struct daxfs_pcache_header *)r;
	if (daxfs_pcache_header_derive(sb, h, &want))
		return -EUCLEAN;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		p.have = 0;
		p.want = 0;
		memcpy(&p.have, (const u8 *)h + words[i].off, words[i].len);
		memcpy(&p.want, (u8 *)&want + words[i].off, words[i].len);
		if (p.have == p.want)
			continue;
		p.msg = words[i].msg;
		bad++;
		if (report)
			report(ctx, &p);
	}
	if (!bad && memcmp(h, &want, sizeof(want))) {
		/* a reserved word: the checksum stayed, the open refuses */
		p.msg = "page cache header reserved words not zero";
		p.have = p.want = 0;
		bad++;
		if (report)
			report(ctx, &p);
	}
	if (bad && repair) {
		memcpy(r, &want, sizeof(want));
		daxfs_flush(r, sizeof(want));
		daxfs_drain();
	}
	return bad;
}
