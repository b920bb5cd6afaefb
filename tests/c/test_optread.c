// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Lane-free reads (daxfs_read_optimistic, core/optread.c, docs/files.md
 * "Lane-free reads"): a read with no op, checked by the file's write
 * gate and its sequence.  Host A reads that way while host B cuts the
 * file's pages and nodes out (truncate, punch, the final drop of an
 * unlinked file) and hands them at once to another file, written with
 * other bytes.  A read that answers must give only the file's own bytes
 * (or zeros); one that cannot answers -EAGAIN.  Also what it must refuse:
 * no cache, a directory, a closed gate, a host shut down or declared
 * dead.
 */

#include <unistd.h>
#include "tfile.h"
#include "core/filegate.h"

#define REGION	(64 * MiB)
#define ROOT	1
#define FILE_LEN	(64 * 1024)
#define MINE		'x'	/* every byte the read file ever holds */
#define OTHER		'y'	/* every byte of the files that reuse it */

static struct daxfs_fs fa, fb;
static void *region;

static struct daxfs_fcache cached(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;

	CHECK_EQ(daxfs_getattr_fc(fs, ino, &fc, &a), 0);
	return fc;
}

static s64 opt_read(struct daxfs_fs *fs, u64 ino,
		    const struct daxfs_fcache *fc, void *buf, u64 len, u64 off)
{
	struct rdst r = { buf, 0, 0, 0 };

	return daxfs_read_optimistic(fs, ino, fc, off, len, r_actor, &r);
}

static void test_reads_what_op_reads(void)
{
	static u8 w[3 * 4096 + 100], got[sizeof(w)], want[sizeof(w)];
	struct daxfs_fcache fc, none = { 0 };
	u64 ino = t_mkreg(&fb, ROOT, "plain"), i;

	for (i = 0; i < sizeof(w); i++)
		w[i] = (u8)(i * 7 + 1);
	CHECK_EQ(opt_read(&fa, ino, &none, got, 10, 0), -EAGAIN);
	fc = cached(&fa, ino);
	CHECK_EQ(opt_read(&fa, ino, &fc, got, 10, 0), 0);	/* empty */
	CHECK_EQ(t_pwrite(&fb, ino, w, 4096, 0), 4096);
	/* a hole between, then the tail: the op's read gives the same */
	CHECK_EQ(t_pwrite(&fb, ino, w + 8192, sizeof(w) - 8192, 8192),
		 (s64)(sizeof(w) - 8192));
	CHECK_EQ(t_pread(&fa, ino, want, sizeof(want), 0), (s64)sizeof(w));
	memset(got, 0xee, sizeof(got));
	CHECK_EQ(opt_read(&fa, ino, &fc, got, sizeof(got), 0), (s64)sizeof(w));
	CHECK(!memcmp(got, want, sizeof(w)));
	/* cut at the size, and past it nothing */
	CHECK_EQ(opt_read(&fa, ino, &fc, got, 4096, sizeof(w) - 10), 10);
	CHECK_EQ(opt_read(&fa, ino, &fc, got, 4096, sizeof(w)), 0);
	/* another host's truncate: the next read sees it */
	CHECK_EQ(daxfs_truncate(&fb, ino, 100), 0);
	CHECK_EQ(opt_read(&fa, ino, &fc, got, sizeof(got), 0), 100);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "plain", 5), 0);
	CHECK_EQ(opt_read(&fa, ino, &fc, got, 10, 0), -EAGAIN);
}

static void test_refuses(void)
{
	struct daxfs_fcache fc;
	struct daxfs_inode *ip;
	u64 ino = t_mkreg(&fb, ROOT, "refuse"), d, claim;
	u8 buf[64];

	CHECK_EQ(t_pwrite(&fb, ino, "0123456789", 10, 0), 10);
	fc = cached(&fa, ino);
	CHECK_EQ(opt_read(&fa, ino, &fc, buf, 10, 0), 10);
	/* a closed gate: a shrink or a strict write is at work */
	ip = t_ip(&fb, ino);
	claim = daxfs_load(&ip->parent);
	CHECK_EQ(claim, 0);
	daxfs_store(&ip->parent, 12345);
	CHECK_EQ(opt_read(&fa, ino, &fc, buf, 10, 0), -EAGAIN);
	daxfs_store(&ip->parent, 0);
	CHECK_EQ(opt_read(&fa, ino, &fc, buf, 10, 0), 10);
	/* a shut down host reads nothing */
	fa.shut = 1;
	CHECK_EQ(opt_read(&fa, ino, &fc, buf, 10, 0), -EAGAIN);
	fa.shut = 0;
	/* a directory: the op's read says what */
	CHECK_EQ(daxfs_mkdir(&fb, ROOT, "rdir", 4, 0755, 0, 0, &d), 0);
	fc = cached(&fa, d);
	CHECK_EQ(opt_read(&fa, d, &fc, buf, 10, 0), -EAGAIN);
	CHECK_EQ(daxfs_rmdir(&fb, ROOT, "rdir", 4), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "refuse", 6), 0);
}

/* A host declared dead reads nothing, as it starts no op. */
static void test_dead_host(void)
{
	struct daxfs_fcache fc;
	struct daxfs_fs fd;
	u64 ino;
	u8 buf[16];

	CHECK_EQ(t_join(&fd, region, REGION), 0);
	ino = t_mkreg(&fd, ROOT, "dead");
	CHECK_EQ(t_pwrite(&fd, ino, "abc", 3, 0), 3);
	fc = cached(&fd, ino);
	CHECK_EQ(opt_read(&fd, ino, &fc, buf, 3, 0), 3);
	t_age(&fd, fd.host);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	CHECK_EQ(opt_read(&fd, ino, &fc, buf, 3, 0), -EAGAIN);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "dead", 4), 0);
}

/* Slot k of the top node of a tree of height 2. */
static u64 top_slot(struct daxfs_inode *ip, u32 k)
{
	u64 root = daxfs_load(&ip->root), *top;

	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 2);
	top = (u64 *)((u8 *)region + (root & ~4095ULL));
	return daxfs_load(&top[k]);
}

/* The leaf node slot k of the top node names. */
static u64 *leaf_node(struct daxfs_inode *ip, u32 k)
{
	u64 leaf = top_slot(ip, k);

	CHECK(leaf && !(leaf & 4095));
	return (u64 *)((u8 *)region + leaf);
}

/* The leaf node of blocks [512, 1024) of a tree of height 2. */
static u64 *second_leaf(struct daxfs_inode *ip)
{
	return leaf_node(ip, 1);
}

/* ---- reads within one block: each kind of word the walk meets ---- */

#define WORDS_LEN	(6 * MiB)

/*
 * Reads within one block (daxfs_view_read_block) and across two, from
 * the start of each block of [first, last], its middle and its last
 * byte, lane-free and in an op: both give want's bytes, cut at size.
 */
static void same_reads(u64 ino, const struct daxfs_fcache *fc,
		       const u8 *want, u64 size, u64 first, u64 last)
{
	static const u64 in_blk[] = { 0, 1, 2047, 4095 };
	static const u64 lens[] = { 1, 100, 4096 };
	static u8 got[2 * 4096];
	u64 b, i, j;

	for (b = first; b <= last; b++) {
		for (i = 0; i < 4; i++) {
			for (j = 0; j < 3; j++) {
				u64 off = b * 4096 + in_blk[i], len = lens[j];
				s64 n = off >= size ? 0 :
					(s64)(len < size - off ? len : size - off);

				memset(got, 0xee, sizeof(got));
				CHECK_EQ(opt_read(&fa, ino, fc, got, len, off), n);
				CHECK(!n || !memcmp(got, want + off, (u64)n));
				memset(got, 0xee, sizeof(got));
				CHECK_EQ(t_pread(&fa, ino, got, len, off), n);
				CHECK(!n || !memcmp(got, want + off, (u64)n));
			}
		}
	}
}

static void test_one_block_words(void)
{
	static u8 want[WORDS_LEN + 2 * 4096], w[2 * MiB];
	struct daxfs_fcache fc;
	u64 ino = t_mkreg(&fb, ROOT, "words"), i, *leaf, keep;
	const u64 size = WORDS_LEN + 300;
	static const u64 bad[] = { 5, 4096 + 1, 1ULL << 50 };

	for (i = 0; i < sizeof(w); i++)
		w[i] = (u8)(i * 13 + 5);
	/* a direct root: block 0 alone, the size within it */
	CHECK_EQ(t_pwrite(&fb, ino, w, 100, 0), 100);
	memcpy(want, w, 100);
	CHECK_EQ(daxfs_load(&t_ip(&fb, ino)->root) & DAXFS_RADIX_HEIGHT_MASK,
		 0);
	fc = cached(&fa, ino);
	same_reads(ino, &fc, want, 100, 0, 1);
	/* a tree: block 0, a hole at 1, block 2 unwritten (zeros), block 3
	 * written in part, no leaf for [512, 1024), a run (format 11) at
	 * [1024, 1536), the size 300 bytes into block 1536 */
	CHECK_EQ(t_pwrite(&fb, ino, w, 4096, 0), 4096);
	memcpy(want, w, 4096);
	CHECK_EQ(daxfs_fallocate(&fb, ino, 0, 2 * 4096, 4096), 0);
	CHECK_EQ(t_pwrite(&fb, ino, w + 7, 1000, 3 * 4096 + 50), 1000);
	memcpy(want + 3 * 4096 + 50, w + 7, 1000);
	CHECK_EQ(t_pwrite(&fb, ino, w, 2 * MiB, 4 * MiB), (s64)(2 * MiB));
	memcpy(want + 4 * MiB, w, 2 * MiB);
	CHECK_EQ(t_pwrite(&fb, ino, w + 11, 300, WORDS_LEN), 300);
	memcpy(want + WORDS_LEN, w + 11, 300);
	CHECK(top_slot(t_ip(&fb, ino), 2) & DAXFS_RADIX_RUN);
	same_reads(ino, &fc, want, size, 0, 4);
	same_reads(ino, &fc, want, size, 600, 601);
	same_reads(ino, &fc, want, size, 1023, 1025);
	same_reads(ino, &fc, want, size, 1535, 1537);
	/* a leaf word that names no page of the pool: the op's read says
	 * so, the lane-free one sends the read there; the next block reads */
	leaf = leaf_node(t_ip(&fb, ino), 0);
	keep = daxfs_load(&leaf[3]);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		daxfs_store(&leaf[3], bad[i]);
		CHECK_EQ(opt_read(&fa, ino, &fc, w, 10, 3 * 4096 + 60),
			 -EAGAIN);
		CHECK_EQ(t_pread(&fa, ino, w, 10, 3 * 4096 + 60), -EUCLEAN);
		CHECK_EQ(opt_read(&fa, ino, &fc, w, 10, 4 * 4096), 10);
	}
	daxfs_store(&leaf[3], keep);
	same_reads(ino, &fc, want, size, 3, 3);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "words", 5), 0);
}

/* ---- every cut moves the sequence or closes the gate ---- */

static u64 seq_of(struct daxfs_inode *ip)
{
	return daxfs_gate_seq(ip);
}


/*
 * The invariant the lane-free read stands on (docs/files.md "Lane-free
 * reads"): a shrink, a punch, a writer finishing a dead truncater's drop
 * and the final drop each move the gate's sequence.
 */
static void test_cuts_move_sequence(void)
{
	static u8 page[4096];
	struct daxfs_inode *ip;
	u64 ino = t_mkreg(&fb, ROOT, "cuts"), s, *leaf;

	memset(page, MINE, sizeof(page));
	CHECK_EQ(t_pwrite(&fb, ino, page, 4096, 0), 4096);
	CHECK_EQ(t_pwrite(&fb, ino, page, 4096, 513 * 4096ULL), 4096);
	ip = t_ip(&fb, ino);
	s = seq_of(ip);
	CHECK_EQ(daxfs_truncate(&fb, ino, 513 * 4096ULL + 100), 0);
	CHECK(seq_of(ip) > s);
	s = seq_of(ip);
	CHECK_EQ(daxfs_fallocate(&fb, ino, DAXFS_FALLOC_PUNCH_HOLE |
				 DAXFS_FALLOC_KEEP_SIZE, 0, 4096), 0);
	CHECK(seq_of(ip) > s);
	/* a truncater that died after sealing the leaf's first slot (a
	 * hole, so nothing leaks): the next write there finishes the drop */
	leaf = second_leaf(ip);
	CHECK_EQ(daxfs_load(&leaf[0]), 0);
	daxfs_store(&leaf[0], DAXFS_RADIX_SEALED);
	s = seq_of(ip);
	CHECK_EQ(t_pwrite(&fb, ino, page, 4096, 512 * 4096ULL), 4096);
	CHECK(seq_of(ip) > s);
	CHECK(second_leaf(ip) != leaf);
	/* the final drop: the record is retired, not yet reused */
	s = seq_of(ip);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "cuts", 4), 0);
	CHECK(seq_of(ip) > s);
}

/* ---- racing the cut and the reuse ---- */

#define RACE_SECS	2.0
#define RACE_READERS	2

struct shared {
	u64 cur, stop, reads, hits, again, bad, bad_off, bad_byte, bad_ino;
};

/* A slow actor: the cut and the reuse happen during the copy. */
static u64 slow_actor(void *ctx, const void *src, u64 len)
{
	struct rdst *r = ctx;
	u64 done = 0, n;

	while (done < len) {
		n = len - done < 1024 ? len - done : 1024;
		if (src)
			memcpy(r->dst + r->done + done, (const u8 *)src + done,
			       n);
		else
			memset(r->dst + r->done + done, 0, n);
		done += n;
		sched_yield();
	}
	r->done += len;
	return len;
}

static void reader(void *arg)
{
	struct shared *s = arg;
	static u8 buf[FILE_LEN];
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;
	struct daxfs_fs fs;
	struct t_renewer rn;
	u64 have = 0, i;
	s64 n;

	/* optimistic reads take no op, so they never renew */
	if (t_join_kept(&fs, &rn, region, REGION))
		_exit(3);
	while (!daxfs_load(&s->stop)) {
		u64 ino = daxfs_load(&s->cur);
		struct rdst r = { buf, 0, 0, 0 };

		if (!ino)
			continue;
		if (ino != have) {
			fc = (struct daxfs_fcache){ 0 };
			if (daxfs_getattr_fc(&fs, ino, &fc, &a))
				continue;
			have = ino;
		}
		daxfs_faa(&s->reads, 1);
		n = daxfs_read_optimistic(&fs, ino, &fc, 0, sizeof(buf),
					  slow_actor, &r);
		if (n == -EAGAIN) {
			daxfs_faa(&s->again, 1);
			continue;
		}
		if (n < 0 || n > (s64)sizeof(buf)) {
			daxfs_faa(&s->bad, 1);
			continue;
		}
		daxfs_faa(&s->hits, 1);
		for (i = 0; i < (u64)n; i++) {
			if (buf[i] == MINE || !buf[i])
				continue;
			if (!daxfs_faa(&s->bad, 1)) {
				s->bad_off = i;
				s->bad_byte = buf[i];
				s->bad_ino = ino;
			}
			break;
		}
	}
	t_leave_kept(&fs, &rn);
	_exit(0);
}

/* Files of OTHER bytes, made and written at once: they take the pages
 * and nodes that B's cuts just gave back. */
static void reuse(void)
{
	static u8 other[FILE_LEN];
	u64 y = t_mkreg(&fb, ROOT, "other");

	memset(other, OTHER, sizeof(other));
	CHECK_EQ(t_pwrite(&fb, y, other, sizeof(other), 0), (s64)sizeof(other));
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "other", 5), 0);
}

static void churn(void *arg)
{
	struct shared *s = arg;
	static u8 mine[2 * MiB];
	double end = t_now() + t_race_secs(RACE_SECS);
	u64 ino = 0, round = 0;

	memset(mine, MINE, sizeof(mine));
	/* a bad read fails the test: no need to race on */
	while (t_now() < end && !daxfs_load(&s->bad)) {
		if (!ino) {
			ino = t_mkreg(&fb, ROOT, "read");
			daxfs_store(&s->cur, ino);
		}
		/* now and then a whole 2 MiB: a run, not a leaf */
		if (round % 8 == 7)
			CHECK_EQ(t_pwrite(&fb, ino, mine, sizeof(mine), 0),
				 (s64)sizeof(mine));
		else
			CHECK_EQ(t_pwrite(&fb, ino, mine, FILE_LEN, 0),
				 (s64)FILE_LEN);
		/* every fourth round a quiet millisecond with the file whole:
		 * on a loaded machine the readers, other processes, may
		 * otherwise only run while a cut is under way, and the race
		 * would never see an answered read (nothing tested).  Until
		 * the first answer, the quiet lasts until one comes (at most
		 * a second): a reader copying through the slow actor on a
		 * machine at load 15 needs more than a millisecond. */
		if (round % 4 == 3) {
			double quiet = t_now() + 1;

			do
				usleep(1000);
			while (!daxfs_load(&s->hits) && t_now() < quiet);
		} else {
			sched_yield();
		}
		switch (round++ % 3) {
		case 0:		/* shrink: under the gate */
			CHECK_EQ(daxfs_truncate(&fb, ino, 0), 0);
			break;
		case 1:		/* punch: under the gate */
			CHECK_EQ(daxfs_fallocate(&fb, ino,
						 DAXFS_FALLOC_PUNCH_HOLE |
						 DAXFS_FALLOC_KEEP_SIZE,
						 0, 2 * MiB), 0);
			break;
		default:	/* the final drop: no gate */
			CHECK_EQ(daxfs_unlink(&fb, ROOT, "read", 4), 0);
			ino = 0;
			break;
		}
		daxfs_reclaim_all(&fb);
		reuse();
		daxfs_reclaim_all(&fb);
	}
	daxfs_store(&s->stop, 1);
	printf("  race: %llu rounds\n", (unsigned long long)round);
}

static void test_race_cut_and_reuse(void)
{
	struct shared *s = t_race(RACE_READERS, sizeof(*s), reader,
				  churn);

	printf("  race: %llu reads, %llu answered, %llu -EAGAIN\n",
	       (unsigned long long)s->reads, (unsigned long long)s->hits,
	       (unsigned long long)s->again);
	if (s->bad)
		printf("  race: %llu bad reads; file %llu byte %llu read %#llx\n",
		       (unsigned long long)s->bad,
		       (unsigned long long)s->bad_ino,
		       (unsigned long long)s->bad_off,
		       (unsigned long long)s->bad_byte);
	CHECK_EQ(s->bad, 0);
	CHECK(s->hits > 0);
	CHECK(s->again > 0);
	munmap(s, sizeof(*s));
}

int main(void)
{
	struct t_renewer ra, rb;

	region = t_setup(&fa, REGION, NULL);
	CHECK_EQ(t_join(&fb, region, REGION), 0);
	/* each idles while the other works: keep both leases */
	t_renew_start(&ra, &fa);
	t_renew_start(&rb, &fb);
	RUN(test_reads_what_op_reads);
	RUN(test_refuses);
	RUN(test_dead_host);
	RUN(test_one_block_words);
	RUN(test_cuts_move_sequence);
	RUN(test_race_cut_and_reuse);
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	daxfs_host_leave(&fb);
	daxfs_host_leave(&fa);
	t_region_free(region, REGION);
	return t_done();
}
