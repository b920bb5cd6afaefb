// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The per-open-file cache of an inode's record (struct daxfs_fcache,
 * docs/open-files.md "Per-open-file cache"): host A reads and writes
 * through a cache while host B (a second host on the same region) copies
 * the file up, unlinks it, renames over it, truncates it, frees its record
 * for reuse, plants another record under the same inode number, or
 * overwrites the record or its bucket.  Every call through the cache must
 * give what the same call without one gives: the file's bytes or the same
 * error, never another file's bytes or a garbled record's.  The last test
 * runs the same races with forked processes as hosts for a while.
 *
 * Built with -DDAXFS_BUG_FCACHE_TRUST (a cache believed without its
 * check) the checks marked "trust" fail.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "tfile.h"
#include "tbase.h"

#define REGION	(32 * MiB)
#define ROOT	1
#define FLEN	(3 * 4096 + 100)

static struct daxfs_fs fa, fb;
static void *region;

/* Every byte of file ino: one value per file (never 0). */
static u8 tag(u64 ino)
{
	return (u8)(ino * 37 + 11) | 1;
}

static s64 fc_read(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		   void *buf, u64 len, u64 off)
{
	struct rdst r = { buf, 0, 0, 0 };

	return daxfs_read_fc(fs, ino, fc, off, len, r_actor, &r);
}

static s64 fc_write(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		    const void *buf, u64 len, u64 off)
{
	struct wsrc w = { buf, 0, 0, 0 };

	return daxfs_write_fc(fs, ino, fc, off, len, 0, w_actor, &w, NULL);
}

/* A file named n holding FLEN bytes of tag(ino). */
static u64 mkfile(struct daxfs_fs *fs, const char *n)
{
	static u8 buf[FLEN];
	u64 ino = t_mkreg(fs, ROOT, n);

	memset(buf, tag(ino), FLEN);
	CHECK_EQ(t_pwrite(fs, ino, buf, FLEN, 0), FLEN);
	return ino;
}

/* n bytes at buf are all c. */
static bool all(const u8 *buf, u64 n, u8 c)
{
	u64 i;

	for (i = 0; i < n; i++)
		if (buf[i] != c)
			return false;
	return true;
}

static u64 rec_of(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_inode *ip = t_ip(fs, ino);

	return ip ? (u64)((u8 *)ip - fs->base) : 0;
}

/* The bucket publishing INODE(ino) (white box, as fsck finds it). */
static u64 bucket_of(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_op op;
	u64 v, idx = ~0ULL;

	daxfs_op_begin(fs, &op);
	if (daxfs_ov_lookup_at(&op, daxfs_key(DAXFS_KEY_INODE, ino), &v, &idx))
		idx = ~0ULL;
	daxfs_op_end(&op);
	return idx;
}

static int lk(struct daxfs_fs *fs, const char *n, u64 *ino)
{
	return daxfs_lookup(fs, ROOT, n, strlen(n), ino);
}

static void settle(void)
{
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
}

/*
 * The first call fills the cache; later calls take the record from it
 * without the overlay probe: with this host's probe window set to 0 a
 * lookup finds nothing, yet the cached calls go on.
 */
static void nop_restart(void *ctx)
{
}

/* daxfs_read_atomic_peek of len bytes at 0 into buf, the peek in *pk */
static s64 read_peek(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		     void *buf, u64 len, struct daxfs_peek *pk)
{
	struct rdst r = { buf, 0, 0, 0 };

	return daxfs_read_atomic_peek(fs, ino, fc, 0, len, r_actor,
				      nop_restart, &r, pk);
}

static void test_fill_and_hit(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;
	struct daxfs_peek pk;
	u8 buf[FLEN + 8];
	u32 win = fa.sb.probe_window;
	u64 ino = mkfile(&fa, "hit");

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));
	CHECK_EQ(fc.rec, rec_of(&fa, ino));
	CHECK_EQ(fc.bucket, bucket_of(&fa, ino));
	fa.sb.probe_window = 0;
	CHECK_EQ(t_pread(&fa, ino, buf, 10, 0), -ENOENT);	/* no probe */
	CHECK_EQ(daxfs_getattr(&fa, ino, &a), -ENOENT);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(fc_write(&fa, ino, &fc, "abc", 3, 5), 3);
	CHECK_EQ(daxfs_truncate_fc(&fa, ino, &fc, FLEN + 7), 0);
	CHECK_EQ(daxfs_getattr_fc(&fa, ino, &fc, &a), 0);
	CHECK_EQ(a.ino, ino);
	CHECK_EQ(a.size, FLEN + 7);
	CHECK_EQ(read_peek(&fa, ino, &fc, buf, 10, &pk), 10);
	/* what getattr gives */
	CHECK_EQ(pk.mode, a.mode);
	CHECK_EQ(pk.nlink, a.nlink);
	CHECK_EQ(pk.size, a.size);
	CHECK_EQ(pk.change, a.change);
	fa.sb.probe_window = win;
	CHECK_EQ(t_pread(&fa, ino, buf, FLEN + 7, 0), FLEN + 7);
	CHECK(!memcmp(buf + 5, "abc", 3));
	CHECK(all(buf + FLEN, 7, 0));
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "hit", 3), 0);
	settle();
	memset(&pk, 0, sizeof(pk));
	CHECK_EQ(read_peek(&fa, ino, NULL, buf, 10, &pk), -ENOENT);
	CHECK_EQ(pk.mode, 0);		/* a failed lookup fills nothing */
}

/* daxfs_write_attr of len bytes of buf at off, the attributes in *a */
static s64 write_attr(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		      const void *buf, u64 len, u64 off, u32 flags,
		      struct daxfs_attr *a)
{
	struct wsrc w = { buf, 0, 0, 0 };

	memset(a, 0xa5, sizeof(*a));
	return daxfs_write_attr(fs, ino, fc, off, len, flags, w_actor, &w,
				NULL, a, NULL);
}

/*
 * A write's attributes are what a getattr right after it gives (the
 * kernel's refresh after a write uses them instead of an op): the size
 * it moved, its times and change counter; after an append too.  A write
 * that fails gives none (ino 0), even when a later op would succeed.
 */
static void test_write_attr(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a, g;
	u64 ino = mkfile(&fa, "wattr");
	u64 before;

	CHECK_EQ(daxfs_getattr(&fa, ino, &g), 0);
	before = g.change;
	CHECK_EQ(write_attr(&fa, ino, &fc, "xyz", 3, FLEN + 100, 0, &a), 3);
	CHECK_EQ(daxfs_getattr_fc(&fa, ino, &fc, &g), 0);
	CHECK(!memcmp(&a, &g, sizeof(a)));
	CHECK_EQ(a.ino, ino);
	CHECK_EQ(a.size, FLEN + 103);
	CHECK_EQ(a.change, before + 1);	/* one write, one step */
	CHECK_EQ(write_attr(&fa, ino, NULL, "app", 3, 0, DAXFS_WRITE_APPEND,
			    &a), 3);
	CHECK_EQ(daxfs_getattr(&fa, ino, &g), 0);
	CHECK(!memcmp(&a, &g, sizeof(a)));
	CHECK_EQ(a.size, FLEN + 106);
	/* nothing written, nothing moved: still the attributes */
	CHECK_EQ(write_attr(&fa, ino, &fc, "", 0, 7, 0, &a), 0);
	CHECK(!memcmp(&a, &g, sizeof(a)));
	CHECK_EQ(daxfs_setflags(&fa, ino, DAXFS_FL_IMMUTABLE, ~0u), 0);
	CHECK_EQ(write_attr(&fa, ino, &fc, "no", 2, 0, 0, &a), -EPERM);
	CHECK_EQ(a.ino, 0);
	CHECK_EQ(daxfs_setflags(&fa, ino, 0, ~0u), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "wattr", 5), 0);
	settle();
	CHECK_EQ(write_attr(&fa, ino, &fc, "gone", 4, 0, 0, &a), -ENOENT);
	CHECK_EQ(a.ino, 0);
}

/* B renames the file: the record stays, so does the cache.  B renames
 * another file over it: its last link goes, it is freed, A's cached call
 * fails as a lookup does (trust: A reads the freed record). */
static void test_rename(void)
{
	struct daxfs_fcache fc = { 0 };
	u8 buf[FLEN];
	u64 ino = mkfile(&fa, "r1"), other = mkfile(&fa, "r2"), got;

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(daxfs_rename(&fb, ROOT, "r1", 2, ROOT, "r3", 2, 0), 0);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));
	CHECK_EQ(fc.rec, rec_of(&fa, ino));
	CHECK_EQ(daxfs_rename(&fb, ROOT, "r2", 2, ROOT, "r3", 2, 0), 0);
	CHECK_EQ(lk(&fa, "r3", &got), 0);
	CHECK_EQ(got, other);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -ENOENT);	/* trust */
	CHECK_EQ(fc_write(&fa, ino, &fc, "x", 1, 0), -ENOENT);
	CHECK_EQ(fc.rec, 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "r3", 2), 0);
}

/*
 * A holds the file open (open set), B unlinks it: A keeps reading and
 * writing through the cache (nlink 0, ORPHAN); after A's close it is
 * freed and the cached calls fail.
 */
static void test_open_unlink(void)
{
	struct daxfs_fcache fc = { 0 };
	u8 buf[FLEN];
	u64 ino = mkfile(&fa, "ou");

	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "ou", 2), 0);
	settle();
	CHECK_EQ(fc_write(&fa, ino, &fc, "zz", 2, 0), 2);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(!memcmp(buf, "zz", 2));
	CHECK(all(buf + 2, FLEN - 2, tag(ino)));
	CHECK_EQ(fc.rec, rec_of(&fa, ino));
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -ENOENT);	/* trust */
	CHECK_EQ(daxfs_truncate_fc(&fa, ino, &fc, 0), -ENOENT);
}

/* B truncates and extends: the cache holds no size, A sees B's size. */
static void test_truncate(void)
{
	struct daxfs_fcache fc = { 0 };
	u8 buf[FLEN];
	u64 ino = mkfile(&fa, "tr");

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(daxfs_truncate(&fb, ino, 100), 0);
	CHECK_EQ(daxfs_truncate(&fb, ino, 8192), 0);
	settle();
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), 8192);
	CHECK(all(buf, 100, tag(ino)));
	CHECK(all(buf + 100, 8192 - 100, 0));
	CHECK_EQ(daxfs_truncate_fc(&fa, ino, &fc, 50), 0);
	CHECK_EQ(t_pread(&fb, ino, buf, FLEN, 0), 50);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "tr", 2), 0);
}

/*
 * The record is freed and its memory reused by B's new files, then a
 * peer publishes another record under the same inode number (only
 * garbage does that: dynamic numbers are never reused).  A's stale cache
 * must give way to what the overlay says now: the new record's bytes.
 */
static void test_reuse(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_inode *nip, *yip;
	struct daxfs_op op;
	u8 buf[FLEN];
	u64 ino = mkfile(&fa, "ru"), y, old, off, got = 0;
	char n[16];
	int i;

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	old = fc.rec;
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "ru", 2), 0);
	settle();
	/* new files until one takes the old record's memory */
	for (i = 0; i < 64 && !got; i++) {
		snprintf(n, sizeof(n), "nu%d", i);
		y = mkfile(&fb, n);
		if (rec_of(&fb, y) == old)
			got = y;
	}
	CHECK(got != 0);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -ENOENT);	/* trust */
	CHECK_EQ(fc_read(&fa, got, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(got)));

	/* a peer plants a copy of got's record under ino */
	y = mkfile(&fb, "plant");
	yip = t_ip(&fb, y);
	CHECK_EQ(daxfs_op_begin(&fb, &op), 0);
	off = daxfs_alloc(&op, DAXFS_CLASS_128);
	CHECK(off != 0);
	nip = (struct daxfs_inode *)(fb.base + off);
	*nip = *yip;
	nip->ino = ino;
	nip->nlink = 1;
	CHECK_EQ(daxfs_ov_insert(&op, daxfs_key(DAXFS_KEY_INODE, ino), off), 0);
	daxfs_op_end(&op);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(y)));
	CHECK_EQ(fc.rec, off);
	/* take the planted record away again (it shares y's pages) */
	CHECK_EQ(daxfs_op_begin(&fb, &op), 0);
	CHECK_EQ(daxfs_ov_delete(&op, daxfs_key(DAXFS_KEY_INODE, ino), off), 0);
	daxfs_op_end(&op);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -ENOENT);	/* trust */
}

/*
 * Chaos: a peer overwrites the cached record (magic, ino) or the bucket's
 * value; the caller's own cache words are garbage, torn (the record of
 * one file, the bucket of another) or another file's.  Detected, never
 * trusted: -EUCLEAN as a lookup gives, or the right file's bytes.
 */
static void test_corrupt(void)
{
	struct daxfs_fcache fc = { 0 }, fy = { 0 };
	struct daxfs_inode *ip;
	struct daxfs_bucket *b;
	u8 buf[FLEN];
	u64 ino = mkfile(&fa, "co"), y = mkfile(&fa, "cy"), v;
	u32 m;

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(fc_read(&fa, y, &fy, buf, FLEN, 0), FLEN);
	ip = t_ip(&fb, ino);

	m = daxfs_load32(&ip->magic);
	daxfs_store32(&ip->magic, m ^ 0x5a5a);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -EUCLEAN);	/* trust */
	CHECK_EQ(fc_write(&fa, ino, &fc, "x", 1, 0), -EUCLEAN);
	CHECK_EQ(fc.rec, 0);
	daxfs_store32(&ip->magic, m);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));

	daxfs_store(&ip->ino, y);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -EUCLEAN);	/* trust */
	daxfs_store(&ip->ino, ino);

	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	b = &fb.buckets[fc.bucket];
	v = daxfs_load(&b->value);
	daxfs_store(&b->value, v + 3);		/* misaligned: no record */
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -EUCLEAN);	/* trust */
	daxfs_store(&b->value, rec_of(&fa, y));	/* y's record: wrong ino */
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), -EUCLEAN);
	daxfs_store(&b->value, v);

	/* the caller's words: garbage, another file's, torn */
	fc = (struct daxfs_fcache){ .rec = 0xdeadbeef000ULL, .bucket = ~0ULL >> 3 };
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));
	fc = fy;
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);	/* trust */
	CHECK(all(buf, FLEN, tag(ino)));
	CHECK_EQ(fc.rec, rec_of(&fa, ino));
	fc.bucket = fy.bucket;
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));
	fc.rec = fy.rec;
	fc.bucket = bucket_of(&fa, ino);
	CHECK_EQ(fc_read(&fa, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK(all(buf, FLEN, tag(ino)));
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "co", 2), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "cy", 2), 0);
}

/* The holder dies: recovery drops its open set and frees the file; the
 * dead host's cached calls stop at the fence (-ESTALE), not in the
 * freed record. */
static void test_dead_holder(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_fs fd;
	u8 buf[FLEN];
	u64 ino;

	CHECK_EQ(t_join(&fd, region, REGION), 0);
	ino = mkfile(&fd, "dh");
	CHECK_EQ(daxfs_open_get(&fd, ino), 0);
	CHECK_EQ(fc_read(&fd, ino, &fc, buf, FLEN, 0), FLEN);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "dh", 2), 0);
	t_age(&fd, fd.host);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	settle();
	CHECK_EQ(fc_read(&fd, ino, &fc, buf, FLEN, 0), -ESTALE);
	CHECK_EQ(fc_write(&fd, ino, &fc, "x", 1, 0), -ESTALE);
	CHECK_EQ(t_pread(&fa, ino, buf, FLEN, 0), -ENOENT);
}

static void fill_b(u8 *data, u64 n)
{
	memset(data, 'b', n);
}

/* A base-image file: not cached while pristine (a copy-up by another
 * host publishes a bucket that only a lookup finds); after B's copy-up
 * A sees B's bytes and caches the record. */
static void test_copy_up(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_fs ba, bb;
	void *r = t_region(REGION);
	u8 buf[100];

	t_base_one_file(r, REGION, 64 * 1024, 10000, 12288, fill_b);
	CHECK_EQ(t_join(&ba, r, REGION), 0);
	CHECK_EQ(t_join(&bb, r, REGION), 0);
	CHECK_EQ(fc_read(&ba, 2, &fc, buf, 10, 0), 10);
	CHECK_EQ(fc.rec, 0);
	CHECK_EQ(t_pwrite(&bb, 2, "copied", 6, 0), 6);
	CHECK_EQ(fc_read(&ba, 2, &fc, buf, 10, 0), 10);
	CHECK(!memcmp(buf, "copied", 6));
	CHECK_EQ(fc.rec, rec_of(&bb, 2));
	CHECK_EQ(fc_write(&ba, 2, &fc, "again", 5, 0), 5);
	CHECK_EQ(t_pread(&bb, 2, buf, 6, 0), 6);
	CHECK(!memcmp(buf, "againd", 6));
	daxfs_host_leave(&bb);
	daxfs_host_leave(&ba);
	t_region_free(r, REGION);
}

/* ------------------------------------------------------------------ */
/* processes as hosts */

#define RACE_SECS	3
#define RACE_READERS	2

struct shared {
	u64 cur;			/* the file the readers use now */
	u64 stop;
	u64 calls, reads, writes, errs, bad, bad_attrs;
	u64 bad_word, bad_ino, bad_off, bad_at;	/* the first bad word seen */
	struct daxfs_fcache fc;		/* one cache, every process */
};

/* The word that fills file ino: every byte non-zero, and another file's
 * word matches it in all its non-zero bytes only by a 64-bit accident. */
static u64 pat(u64 ino)
{
	u64 z = ino * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
	return (z ^ (z >> 29)) | 0x0101010101010101ULL;
}

/* Whether every byte of w is the byte of want there, or zero.  A copy or
 * a truncate's zeroing racing the read may tear a word (as on every Linux
 * filesystem: only strict mode makes a write whole to readers), so bytes
 * are what a reader may rely on; another file's bytes never pass. */
static bool bytes_of(u64 w, u64 want)
{
	u32 b;

	for (b = 0; b < 64; b += 8) {
		u64 x = (w >> b) & 0xff;

		if (x && x != ((want >> b) & 0xff))
			return false;
	}
	return true;
}

/* The file's attributes through the shared cache: a regular file of at
 * most what the racers write (a record reused by a directory, or garbled,
 * fails), or an error a lookup may give as well. */
static bool attrs_bad(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc)
{
	struct daxfs_attr a;
	int err = daxfs_getattr_fc(fs, ino, fc, &a);

	if (err)
		return err != -ENOENT && err != -EUCLEAN;
	/* nlink 0: unlinked a moment ago, the record not yet reclaimed */
	return a.ino != ino || (a.mode & S_IFMT) != S_IFREG ||
	       a.size > 65536 + 4096;
}

/*
 * Reads and writes the current file through the one shared cache: every
 * byte of file ino is pat(ino)'s or 0 (a hole, a cut), whatever the churn.
 */
static void racer(struct shared *s, int id)
{
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 words[512], seed = 0x9e3779b97f4a7c15ULL * (id + 1), i;

	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		u64 ino = daxfs_load(&s->cur), off = t_rand(&seed) % 65536;
		s64 n;

		off &= ~7ULL;
		if (!ino)
			continue;
		if (id == 0) {
			for (i = 0; i < 512; i++)
				words[i] = pat(ino);
			n = fc_write(&fs, ino, &s->fc, words, 4096, off);
			if (n == 4096)
				daxfs_faa(&s->writes, 1);
		} else {
			n = fc_read(&fs, ino, &s->fc, words, 4096, off);
			for (i = 0; n > 0 && i < (u64)n / 8; i++)
				if (!bytes_of(words[i], pat(ino))) {
					if (!daxfs_faa(&s->bad, 1)) {
						s->bad_word = words[i];
						s->bad_ino = ino;
						s->bad_off = off;
						s->bad_at = i * 8;
					}
					break;
				}
			if (n >= 0)
				daxfs_faa(&s->reads, 1);
			if (n >= 0 && attrs_bad(&fs, ino, &s->fc))
				daxfs_faa(&s->bad_attrs, 1);
		}
		daxfs_faa(&s->calls, 1);
		if (n < 0 && n != -ENOENT && n != -EUCLEAN)
			daxfs_faa(&s->errs, 1);
		if (n < 0)
			sched_yield();
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* Lets the racers make n more calls (or a second pass). */
static void let_run(struct shared *s, u64 n)
{
	u64 from = daxfs_load(&s->calls);
	double end = t_now() + 1;

	while (daxfs_load(&s->calls) < from + n && t_now() < end)
		sched_yield();
}

/* B's churn: new file (words of its ino), then truncate, rename, a peer
 * scribbling over the record for a moment, unlink; records reused. */
static void churn(struct shared *s)
{
	u64 words[1024], i, ino, round = 0, m;
	struct daxfs_inode *ip;
	double end = t_now() + RACE_SECS;

	while (t_now() < end) {
		ino = t_mkreg(&fb, ROOT, "race");
		for (i = 0; i < 1024; i++)
			words[i] = pat(ino);
		CHECK_EQ(t_pwrite(&fb, ino, words, sizeof(words), 0),
			 sizeof(words));
		daxfs_store(&s->cur, ino);
		let_run(s, 20);
		switch (round++ % 4) {
		case 0:
			CHECK_EQ(daxfs_truncate(&fb, ino, 100), 0);
			break;
		case 1:
			CHECK_EQ(daxfs_rename(&fb, ROOT, "race", 4, ROOT,
					      "race2", 5, 0), 0);
			CHECK_EQ(daxfs_rename(&fb, ROOT, "race2", 5, ROOT,
					      "race", 4, 0), 0);
			break;
		case 2:
			ip = t_ip(&fb, ino);
			CHECK(ip);	/* (a failed create: no record) */
			if (!ip)
				break;
			m = daxfs_load(&ip->ino);
			daxfs_store(&ip->ino, m + 1);
			let_run(s, 4);
			daxfs_store(&ip->ino, m);
			break;
		default:
			break;
		}
		let_run(s, 20);
		CHECK_EQ(daxfs_unlink(&fb, ROOT, "race", 4), 0);
		settle();
	}
	daxfs_store(&s->stop, 1);
	printf("  race: %llu rounds\n", (unsigned long long)round);
}

static void test_race_processes(void)
{
	struct shared *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE,
				MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid[RACE_READERS + 1];
	int i, st;

	CHECK(s != MAP_FAILED);
	memset(s, 0, sizeof(*s));
	fflush(NULL);
	for (i = 0; i <= RACE_READERS; i++) {
		pid[i] = t_fork();
		if (!pid[i])
			racer(s, i);
	}
	churn(s);
	for (i = 0; i <= RACE_READERS; i++) {
		CHECK_EQ(waitpid(pid[i], &st, 0), pid[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	printf("  race: %llu reads, %llu writes\n",
	       (unsigned long long)s->reads, (unsigned long long)s->writes);
	if (s->bad)
		printf("  race: file %llu read at %llu gave word %#llx at +%llu\n",
		       (unsigned long long)s->bad_ino,
		       (unsigned long long)s->bad_off,
		       (unsigned long long)s->bad_word,
		       (unsigned long long)s->bad_at);
	CHECK_EQ(s->bad, 0);
	CHECK_EQ(s->bad_attrs, 0);
	CHECK_EQ(s->errs, 0);
	CHECK(s->reads > 0);
	CHECK(s->writes > 0);
	munmap(s, sizeof(*s));
}

int main(void)
{
	struct t_renewer ra, rb;

	region = t_setup(&fa, REGION, NULL);
	CHECK_EQ(t_join(&fb, region, REGION), 0);
	/* each idles while the other works: keep both leases, as their
	 * front ends would */
	t_renew_start(&ra, &fa);
	t_renew_start(&rb, &fb);
	RUN(test_fill_and_hit);
	RUN(test_write_attr);
	RUN(test_rename);
	RUN(test_open_unlink);
	RUN(test_truncate);
	RUN(test_reuse);
	RUN(test_corrupt);
	RUN(test_dead_holder);
	RUN(test_copy_up);
	RUN(test_race_processes);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	daxfs_host_leave(&fb);
	daxfs_host_leave(&fa);
	t_region_free(region, REGION);
	return t_done();
}
