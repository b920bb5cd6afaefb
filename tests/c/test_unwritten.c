// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unwritten pages (format 8, docs/files.md "Unwritten pages"): fallocate
 * and ZERO_RANGE flag the pages they leave holding zeros, every path that
 * stores into a page clears the flag first, extents report it, SEEK_DATA
 * still calls it data, fsck checks it, a same-size truncate drops a
 * KEEP_SIZE preallocation, and writers racing ZERO_RANGE on other hosts
 * never leave a flagged page that holds bytes.
 */
#include <pthread.h>

#include "tfile.h"
#include "tpool.h"
#include "tcheck.h"

#define REGION (32 * MiB)
#define KEEP DAXFS_FALLOC_KEEP_SIZE
#define PUNCH (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE)
#define ZERO DAXFS_FALLOC_ZERO_RANGE
#define BS 4096ULL

static u8 buf[4 << 20], out[1 << 20];

/* Whether block blk of ino has a page, and whether it is unwritten:
 * 0 hole, 1 data, 2 unwritten. */
static int kind(struct daxfs_fs *fs, u64 ino, u64 blk)
{
	u64 pg;
	bool unw;

	CHECK_EQ(daxfs_radix_lookup(fs, t_ip(fs, ino), blk, &pg, &unw), 0);
	return pg ? (unw ? 2 : 1) : 0;
}

/* The extent flags at byte off (the extent must start there or cover
 * it); ~0 when no extent covers off. */
static u32 ext_flags(struct daxfs_fs *fs, u64 ino, u64 off)
{
	struct daxfs_extent e;

	CHECK_EQ(daxfs_next_extent(fs, ino, off, &e), 0);
	if (!e.length || e.logical > off)
		return ~0u;
	return e.flags;
}

static bool all(const u8 *p, u64 n, u8 c)
{
	u64 i;

	for (i = 0; i < n; i++)
		if (p[i] != c)
			return false;
	return true;
}

/* Preallocation flags; write, append, map_block and an atomic (redo)
 * write clear; a read-only map does not; extents and SEEK_DATA. */
static void test_flag_paths(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), pos = 0, off = 0, b;
	struct wsrc w = { buf, 0, 0, 0 };

	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 8 * BS), 0);
	for (b = 0; b < 8; b++)
		CHECK_EQ(kind(&fs, ino, b), 2);
	/* data for SEEK_DATA (never skipped), unwritten for FIEMAP */
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_DATA), 0);
	CHECK_EQ(t_seek(&fs, ino, 0, DAXFS_SEEK_HOLE), 8 * BS);
	CHECK_EQ(ext_flags(&fs, ino, 0), DAXFS_EXTENT_UNWRITTEN);
	CHECK_EQ(t_pread(&fs, ino, out, 8 * BS, 0), (s64)(8 * BS));
	CHECK(all(out, 8 * BS, 0));

	/* a write into block 2 clears block 2 only */
	CHECK_EQ(t_pwrite(&fs, ino, buf, 10, 2 * BS + 100), 10);
	CHECK_EQ(kind(&fs, ino, 2), 1);
	CHECK_EQ(kind(&fs, ino, 1), 2);
	CHECK_EQ(kind(&fs, ino, 3), 2);
	CHECK_EQ(ext_flags(&fs, ino, 2 * BS), 0);
	CHECK_EQ(ext_flags(&fs, ino, 3 * BS), DAXFS_EXTENT_UNWRITTEN);
	CHECK_EQ(t_pread(&fs, ino, out, BS, 2 * BS), (s64)BS);
	CHECK(all(out, 100, 0));
	CHECK(all(out + 100, 10, 0x5a));
	CHECK(all(out + 110, BS - 110, 0));

	/* a write across blocks 4..5 clears both */
	CHECK_EQ(t_pwrite(&fs, ino, buf, BS, 4 * BS + 2048), (s64)BS);
	CHECK_EQ(kind(&fs, ino, 4), 1);
	CHECK_EQ(kind(&fs, ino, 5), 1);
	CHECK_EQ(kind(&fs, ino, 6), 2);

	/* KEEP_SIZE beyond EOF, then an append into it */
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 8 * BS, 4 * BS), 0);
	CHECK_EQ(kind(&fs, ino, 8), 2);
	CHECK_EQ(t_append(&fs, ino, buf, 5, &pos), 5);
	CHECK_EQ(pos, 8 * BS);
	CHECK_EQ(kind(&fs, ino, 8), 1);
	CHECK_EQ(kind(&fs, ino, 9), 2);

	/* map_block: a read lookup keeps the flag, a writable map clears */
	CHECK_EQ(daxfs_block_page(&fs, ino, 6, &off), 0);
	CHECK(off != 0);
	CHECK_EQ(kind(&fs, ino, 6), 2);
	/* the fsync walk names the page itself, not the flagged word */
	b = 6;
	CHECK_EQ(daxfs_next_page(&fs, ino, &b, 8, &pos), 0);
	CHECK_EQ(b, 6);
	CHECK_EQ(pos, off);
	CHECK_EQ(daxfs_map_block(&fs, ino, 6, false, &off), 0);
	CHECK_EQ(kind(&fs, ino, 6), 2);
	CHECK_EQ(daxfs_map_block(&fs, ino, 6, true, &off), 0);
	CHECK_EQ(kind(&fs, ino, 6), 1);

	/* an atomic write (out of place through a redo record) clears */
	w.done = 0;
	CHECK_EQ(daxfs_write(&fs, ino, 7 * BS, 100, DAXFS_WRITE_ATOMIC,
			     w_actor, &w, NULL), 100);
	CHECK_EQ(kind(&fs, ino, 7), 1);
	CHECK_EQ(t_pread(&fs, ino, out, 100, 7 * BS), 100);
	CHECK(all(out, 100, 0x5a));

	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* A direct root (a one-page file) carries the flag in the root word;
 * growth moves it into the new node with the flag; a write clears it. */
static void test_direct_root(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), root;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_EQ(daxfs_fallocate(&fs, ino, 0, 0, 100), 0);
	root = daxfs_load(&t_ip(&fs, ino)->root);
	CHECK(root & DAXFS_RADIX_UNWRITTEN);
	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 0);
	CHECK_EQ(ext_flags(&fs, ino, 0), DAXFS_EXTENT_UNWRITTEN);
	/* growth: block 0 keeps its page and its flag */
	CHECK_EQ(t_pwrite(&fs, ino, buf, 10, 600 * BS), 10);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->root) & DAXFS_RADIX_HEIGHT_MASK,
		 2);
	CHECK_EQ(kind(&fs, ino, 0), 2);
	CHECK_EQ(kind(&fs, ino, 600), 1);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 10, 0), 10);
	CHECK_EQ(kind(&fs, ino, 0), 1);

	/* a direct root cleared in place */
	ino = t_mkreg(&fs, 1, "g");
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 0, BS), 0);
	CHECK(daxfs_load(&t_ip(&fs, ino)->root) & DAXFS_RADIX_UNWRITTEN);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 1, 5), 1);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->root) & DAXFS_RADIX_UNWRITTEN, 0);
	CHECK_EQ(t_pread(&fs, ino, out, 6, 0), 6);
	CHECK(all(out, 5, 0));
	CHECK_EQ(out[5], 0x3c);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* ZERO_RANGE: whole pages become unwritten (written ones too: generic/009
 * "into allocated space"), partial ends stay data; a hole's new pages are
 * unwritten; a punch between keeps the rest. */
static void test_zero_range(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), b, pg;

	memset(buf, 0x77, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 10 * BS, 0), (s64)(10 * BS));
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO | KEEP, 2 * BS + 1, 5 * BS),
		 0);
	CHECK_EQ(kind(&fs, ino, 2), 1);		/* partial: bytes stay */
	for (b = 3; b < 7; b++)
		CHECK_EQ(kind(&fs, ino, b), 2);
	CHECK_EQ(kind(&fs, ino, 7), 1);		/* partial */
	CHECK_EQ(t_pread(&fs, ino, out, 10 * BS, 0), (s64)(10 * BS));
	CHECK(all(out, 2 * BS + 1, 0x77));
	CHECK(all(out + 2 * BS + 1, 5 * BS, 0));
	CHECK(all(out + 7 * BS + 1, 3 * BS - 1, 0x77));
	/* extents: data, unwritten, data */
	CHECK_EQ(ext_flags(&fs, ino, 0), 0);
	CHECK_EQ(ext_flags(&fs, ino, 3 * BS), DAXFS_EXTENT_UNWRITTEN);
	CHECK_EQ(ext_flags(&fs, ino, 7 * BS), 0);
	CHECK_EQ(t_seek(&fs, ino, 3 * BS, DAXFS_SEEK_DATA), 3 * BS);
	/* into a hole beyond EOF */
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO, 20 * BS, 2 * BS), 0);
	CHECK_EQ(kind(&fs, ino, 20), 2);
	CHECK_EQ(kind(&fs, ino, 21), 2);
	CHECK_EQ(kind(&fs, ino, 15), 0);
	/* zeroing unwritten pages again keeps them unwritten, and zeroes
	 * one that a store through a stale mapping reached (the race of
	 * docs/files.md "Unwritten pages") */
	CHECK_EQ(daxfs_block_page(&fs, ino, 3, &pg), 0);
	memset((u8 *)fs.base + pg, 0x99, 10);
	CHECK_EQ(daxfs_fallocate(&fs, ino, ZERO, 3 * BS, 2 * BS), 0);
	CHECK_EQ(kind(&fs, ino, 3), 2);
	CHECK_EQ(t_pread(&fs, ino, out, BS, 3 * BS), (s64)BS);
	CHECK(all(out, BS, 0));
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* truncate to the current size drops what KEEP_SIZE preallocated beyond
 * EOF (ext4, XFS; generic/092); truncating up keeps it. */
static void test_same_size_truncate(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), used;
	struct daxfs_extent e;

	memset(buf, 0x11, sizeof(buf));
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 0, 10 * BS), 0);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 5 * BS, 0), (s64)(5 * BS));
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 10);
	used = t_usedbytes(&fs);
	CHECK_EQ(daxfs_truncate(&fs, ino, 5 * BS), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 5);
	daxfs_reclaim_all(&fs);
	CHECK_EQ(used - t_usedbytes(&fs), 5 * BS);
	CHECK_EQ(daxfs_next_extent(&fs, ino, 5 * BS, &e), 0);
	CHECK_EQ(e.length, 0);
	CHECK_EQ(t_pread(&fs, ino, out, 5 * BS, 0), (s64)(5 * BS));
	CHECK(all(out, 5 * BS, 0x11));
	/* up past EOF: the preallocation beyond stays */
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 5 * BS, 5 * BS), 0);
	CHECK_EQ(daxfs_truncate(&fs, ino, 7 * BS), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 10);
	CHECK_EQ(kind(&fs, ino, 9), 2);
	/* an unaligned size: the page holding EOF stays */
	CHECK_EQ(daxfs_truncate(&fs, ino, 7 * BS + 10), 0);
	CHECK_EQ(daxfs_truncate(&fs, ino, 7 * BS + 10), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 8);
	/* nothing beyond: a no-op */
	CHECK_EQ(daxfs_truncate(&fs, ino, 7 * BS + 10), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 8);
	/* a direct root beyond a size of 0 */
	ino = t_mkreg(&fs, 1, "g");
	CHECK_EQ(daxfs_fallocate(&fs, ino, KEEP, 0, BS), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 1);
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->blocks), 0);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

struct probs {
	int bytes, node, root;
};

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	struct probs *n = ctx;

	if (!strcmp(p->msg, "unwritten data page holds bytes"))
		n->bytes++;
	else if (!strcmp(p->msg, "radix node word has the unwritten flag"))
		n->node++;
	else if (!strcmp(p->msg, "file radix root invalid"))
		n->root++;
}

/* fsck: a flagged page that holds bytes (repair clears the flag, the
 * bytes stay), the flag on a node word (repair clears the bit), on a
 * tree root (invalid), on a directory's root (invalid there). */
static void test_fsck(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 f = t_mkreg(&fs, 1, "f"), g = t_mkreg(&fs, 1, "g"), d = 0;
	u64 *slot, root, n, pg;
	struct daxfs_inode *fi, *gi, *di;
	struct daxfs_check_result res;
	struct probs p = { 0 };
	bool unw;

	memset(buf, 0x42, sizeof(buf));
	CHECK_EQ(daxfs_fallocate(&fs, f, 0, 0, 4 * BS), 0);
	CHECK_EQ(t_pwrite(&fs, g, buf, 600 * BS, 0), (s64)(600 * BS));
	CHECK_EQ(daxfs_mkdir(&fs, 1, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(t_pwrite(&fs, f, buf, 4, 0), 4);
	fi = t_ip(&fs, f);
	gi = t_ip(&fs, g);
	di = t_ip(&fs, d);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);

	/* f: the written page flagged again (as a store through a mapping
	 * racing ZERO_RANGE would leave it) */
	root = daxfs_load(&fi->root);
	slot = &((struct daxfs_radix_node *)((u8 *)r + (root & ~4095ULL)))->slot[0];
	daxfs_store(slot, daxfs_load(slot) | DAXFS_RADIX_UNWRITTEN);
	/* g (height 2): its first leaf's node word flagged */
	root = daxfs_load(&gi->root);
	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 2);
	n = root & ~4095ULL;
	slot = &((struct daxfs_radix_node *)((u8 *)r + n))->slot[0];
	daxfs_store(slot, daxfs_load(slot) | DAXFS_RADIX_UNWRITTEN);
	CHECK_EQ(t_fsck(r, REGION, false, report, &p, &res), 0);
	CHECK_EQ(p.bytes, 1);
	CHECK_EQ(p.node, 1);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 2);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(t_fsck(r, REGION, true, report, &p, &res), 0);
	CHECK_EQ(p.bytes, 1);
	CHECK_EQ(p.node, 1);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(t_fsck(r, REGION, false, report, &p, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(p.bytes + p.node, 0);

	/* the repair kept the bytes, as data, and g whole */
	CHECK_EQ(t_join(&fs, r, REGION), 0);
	CHECK_EQ(daxfs_radix_lookup(&fs, t_ip(&fs, f), 0, &pg, &unw), 0);
	CHECK(pg && !unw);
	CHECK_EQ(t_pread(&fs, f, out, 4, 0), 4);
	CHECK(all(out, 4, 0x42));
	CHECK_EQ(t_pread(&fs, g, out, BS, 599 * BS), (s64)BS);
	CHECK(all(out, BS, 0x42));
	daxfs_host_leave(&fs);

	/* the flag on a tree root: invalid; on a directory's root too */
	root = daxfs_load(&gi->root);
	daxfs_store(&gi->root, root | DAXFS_RADIX_UNWRITTEN);
	memset(&p, 0, sizeof(p));
	CHECK_EQ(t_fsck(r, REGION, false, report, &p, &res), 0);
	CHECK_EQ(p.root, 1);
	daxfs_store(&gi->root, root);
	root = daxfs_load(&di->root);
	daxfs_store(&di->root, root | DAXFS_RADIX_UNWRITTEN);
	CHECK_EQ(t_fsck(r, REGION, false, NULL, NULL, &res), 0);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	daxfs_store(&di->root, root);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/*
 * Hosts racing on one file of NBLK blocks: writers store bytes that are
 * never zero, others ZERO_RANGE (KEEP_SIZE), preallocate and punch.
 * After each of PHASES phases (all threads joined) no flagged page holds
 * a byte: "flag set => zeros" across hosts.  Without the clear before the
 * store, a write into a preallocated page leaves it flagged; without the
 * gate, a ZERO_RANGE flagging after a writer stored would too.
 */
#define NBLK		64
#define PHASES		25
#define ROUNDS		200
#define NWRITERS	2

struct racer {
	void *r;
	u64 ino;
	int id;
	u32 seed;
	int bad;
};

static u32 rnd(u32 *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

/* Flagged pages of ino that hold a byte. */
static int flagged_dirty(struct daxfs_fs *fs, u64 ino)
{
	u64 b, pg;
	bool unw;
	int bad = 0;

	for (b = 0; b < NBLK; b++) {
		CHECK_EQ(daxfs_radix_lookup(fs, t_ip(fs, ino), b, &pg, &unw), 0);
		if (pg && unw && !all((u8 *)fs->base + pg, BS, 0))
			bad++;
	}
	return bad;
}

static void *racer(void *arg)
{
	struct racer *t = arg;
	struct daxfs_fs fs;
	static u8 src[NWRITERS][8 * 4096];
	int i;

	if (t_join(&fs, t->r, REGION)) {
		t->bad = -1;
		return NULL;
	}
	memset(src[t->id % NWRITERS], 0x80 | t->id, sizeof(src[0]));
	for (i = 0; i < ROUNDS; i++) {
		u64 a = rnd(&t->seed) % NBLK, n = 1 + rnd(&t->seed) % 8;
		u64 off = a * BS + rnd(&t->seed) % 100;

		if (a + n > NBLK)
			n = NBLK - a;
		if (t->id < NWRITERS) {
			CHECK(t_pwrite(&fs, t->ino, src[t->id], n * BS - 100,
				       off) > 0);
			continue;
		}
		switch (rnd(&t->seed) % 3) {
		case 0:
			CHECK_EQ(daxfs_fallocate(&fs, t->ino, ZERO | KEEP, off,
						 n * BS), 0);
			break;
		case 1:
			CHECK_EQ(daxfs_fallocate(&fs, t->ino, KEEP, a * BS,
						 n * BS), 0);
			break;
		default:
			CHECK_EQ(daxfs_fallocate(&fs, t->ino, PUNCH, off,
						 n * BS), 0);
			break;
		}
	}
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_race_zero_range(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f");
	struct racer t[NWRITERS + 2];
	pthread_t th[NWRITERS + 2];
	int i, ph, unw = 0, dirty = 0;
	u64 b, pg;
	bool u;
	struct t_renewer rn;

	for (i = 0; i < NWRITERS + 2; i++)
		t[i] = (struct racer){ r, ino, i, 7919u * (i + 1), 0 };
	t_renew_start(&rn, &fs);	/* we mostly wait on the racers */
	for (ph = 0; ph < PHASES; ph++) {
		for (i = 0; i < NWRITERS + 2; i++)
			CHECK_EQ(pthread_create(&th[i], NULL, racer, &t[i]), 0);
		for (i = 0; i < NWRITERS + 2; i++) {
			pthread_join(th[i], NULL);
			CHECK_EQ(t[i].bad, 0);
		}
		dirty += flagged_dirty(&fs, ino);
		for (b = 0; b < NBLK; b++) {
			CHECK_EQ(daxfs_radix_lookup(&fs, t_ip(&fs, ino), b, &pg,
						    &u), 0);
			unw += u;
		}
	}
	t_renew_stop(&rn);
	printf("  %d phases: %d flagged pages seen at their ends, %d of "
	       "them holding bytes\n", PHASES, unw, dirty);
	CHECK_EQ(dirty, 0);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_flag_paths);
	RUN(test_direct_root);
	RUN(test_zero_range);
	RUN(test_same_size_truncate);
	RUN(test_fsck);
	RUN(test_race_zero_range);
	return t_done();
}
