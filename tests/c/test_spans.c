// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Contiguous spans of a file's pages (docs/files.md "Leaf cursor",
 * "Spans"): a rewrite finds the pages that follow its first one in the leaf
 * with plain loads (daxfs_rcur_contig) and copies a chunk of up to
 * DAXFS_COPY_CHUNK per actor call; a read takes such pages as one piece
 * (span_end).  Both must stop exactly where the layout stops being
 * contiguous: at a page of another file, a hole, an unwritten page, a
 * leaf's end; and a garbled slot that continues a span past the pool
 * must end in -EUCLEAN, never in a load or store outside it.
 */
#include "tfile.h"
#include "tpool.h"
#include "core/file-int.h"

#define REGION (64 * MiB)
#define PAGE 4096u
#define PAGES 1100u		/* three leaves: 512, 512, 76 */
#define FILE_SIZE ((u64)PAGES * PAGE)
#define KEEP DAXFS_FALLOC_KEEP_SIZE

static u8 model[FILE_SIZE], buf[FILE_SIZE], out[FILE_SIZE];
static u64 seed = 0x5eed;

static u64 rnd(u64 n)
{
	seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (seed >> 33) % n;
}

static void fill_random(u8 *p, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++)
		p[i] = (u8)rnd(251) + 1;
}

/* A file of PAGES pages laid out in pieces: runs of pages from one batch
 * broken by pages of another file, unwritten pages (fallocate) and holes
 * left between pieces; the model holds what it must read. */
static u64 lay_out(struct daxfs_fs *fs)
{
	u64 ino = t_mkreg(fs, 1, "f"), other = t_mkreg(fs, 1, "o");
	u64 pg = 0, opos = 0, n;

	memset(model, 0, sizeof(model));
	while (pg < PAGES) {
		n = 1 + rnd(40);
		if (n > PAGES - pg)
			n = PAGES - pg;
		switch (rnd(4)) {
		case 0:	/* a hole */
			break;
		case 1:	/* unwritten pages: read as zeros */
			CHECK_EQ(daxfs_fallocate(fs, ino, KEEP, pg * PAGE,
						 n * PAGE), 0);
			break;
		default:
			fill_random(model + pg * PAGE, n * PAGE);
			CHECK_EQ(t_pwrite(fs, ino, model + pg * PAGE, n * PAGE,
					  pg * PAGE), (s64)(n * PAGE));
		}
		/* a page of the other file between this piece and the next */
		CHECK_EQ(t_pwrite(fs, other, "x", 1, opos), 1);
		opos += PAGE;
		pg += n;
	}
	CHECK_EQ(daxfs_truncate(fs, ino, FILE_SIZE), 0);
	return ino;
}

static void expect(struct daxfs_fs *fs, u64 ino, u64 off, u64 len)
{
	u64 i;

	memset(out, 0xee, len);
	CHECK_EQ(t_pread(fs, ino, out, len, off), (s64)len);
	for (i = 0; i < len; i++)
		if (out[i] != model[off + i]) {
			fprintf(stderr, "  byte %llu: %#x, want %#x\n",
				(unsigned long long)(off + i), out[i],
				model[off + i]);
			CHECK(false);
			return;
		}
}

/* Counts the actor's calls and the longest one. */
struct counted {
	struct wsrc w;
	u64 longest;
};

static u64 counted_actor(void *ctx, void *dst, u64 len)
{
	struct counted *c = ctx;

	if (len > c->longest)
		c->longest = len;
	return w_actor(&c->w, dst, len);
}

/* Rewrites and reads of random ranges over the laid-out file, each
 * checked whole against the model and in small reads. */
static void test_rewrite_read_layouts(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = lay_out(&fs), off, len, i, end;
	struct counted c;
	int round;

	expect(&fs, ino, 0, FILE_SIZE);
	for (round = 0; round < 300; round++) {
		off = rnd(FILE_SIZE);
		len = 1 + rnd(round % 3 ? 64 * PAGE : FILE_SIZE - off);
		if (len > FILE_SIZE - off)
			len = FILE_SIZE - off;
		fill_random(buf, len);
		c = (struct counted){ .w = { buf, 0, 0, 0 } };
		CHECK_EQ(daxfs_write(&fs, ino, off, len, 0, counted_actor, &c,
				     NULL), (s64)len);
		CHECK(c.longest <= DAXFS_COPY_CHUNK);
		memcpy(model + off, buf, len);
		expect(&fs, ino, off, len);
		off = rnd(FILE_SIZE);
		len = 1 + rnd(FILE_SIZE - off);
		expect(&fs, ino, off, len);
	}
	/* every page, one at a time */
	for (i = 0; i < FILE_SIZE; i += PAGE)
		expect(&fs, ino, i, PAGE);
	/* the start, rewritten whole, then read whole */
	end = 64 * PAGE;
	fill_random(buf, end);
	CHECK_EQ(t_pwrite(&fs, ino, buf, end, 0), (s64)end);
	memcpy(model, buf, end);
	expect(&fs, ino, 0, FILE_SIZE);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* The file's leaf (a file of 2..512 pages has a root of height 1). */
static struct daxfs_radix_node *leaf_of(struct daxfs_fs *fs, u64 ino)
{
	u64 root = daxfs_load(&t_ip(fs, ino)->root);

	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 1);
	return daxfs_ptr(fs, root & ~DAXFS_RADIX_HEIGHT_MASK, PAGE, PAGE);
}

/*
 * A rewrite's actor calls, counted against the leaf: a call ends at a
 * DAXFS_COPY_CHUNK boundary of the file or where the next page is not
 * the next one of the pool, nowhere else.  64 pages written at once (one
 * batch) and 32 more interleaved page by page with another file's.
 */
static void test_chunk_calls(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), other = t_mkreg(&fs, 1, "o");
	u64 pages = 96, b, want = 0, chunk = DAXFS_COPY_CHUNK / PAGE;
	struct daxfs_radix_node *leaf;
	struct counted c;

	fill_random(buf, pages * PAGE);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 64 * PAGE, 0), 64 * PAGE);
	for (b = 64; b < pages; b++) {
		CHECK_EQ(t_pwrite(&fs, ino, buf + b * PAGE, PAGE, b * PAGE),
			 PAGE);
		CHECK_EQ(t_pwrite(&fs, other, "x", 1, b * PAGE), 1);
	}
	leaf = leaf_of(&fs, ino);
	for (b = 0; b < pages; b++)
		want += b % chunk == 0 ||
			daxfs_load(&leaf->slot[b]) !=
			daxfs_load(&leaf->slot[b - 1]) + PAGE;
	fill_random(buf, pages * PAGE);
	c = (struct counted){ .w = { buf, 0, 0, 0 } };
	CHECK_EQ(daxfs_write(&fs, ino, 0, pages * PAGE, 0, counted_actor, &c,
			     NULL), (s64)(pages * PAGE));
	CHECK_EQ(c.w.calls, want);
	/* the batch's pages went in whole chunks, the interleaved one by one */
	CHECK(c.longest > PAGE);
	CHECK(want < pages);
	memcpy(model, buf, pages * PAGE);
	expect(&fs, ino, 0, pages * PAGE);
	daxfs_host_leave(&fs);
	t_check_clean(r, REGION);
	t_region_free(r, REGION);
}

/* Slots 0 and 1 garbled into "the pool's last page, then the page after
 * it": a span that runs out of the pool.  Reads and rewrites over them
 * say -EUCLEAN (or stop short) and touch nothing past the pool. */
static void test_span_past_pool(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, 1, "f"), last = fs.pool_end - PAGE;
	struct daxfs_radix_node *leaf;
	s64 n;

	fill_random(buf, 4 * PAGE);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 4 * PAGE, 0), 4 * PAGE);
	leaf = leaf_of(&fs, ino);
	daxfs_store(&leaf->slot[0], last);
	daxfs_store(&leaf->slot[1], last + PAGE);
	n = t_pread(&fs, ino, out, 2 * PAGE, 0);
	CHECK(n == -EUCLEAN || n == PAGE);
	n = t_pwrite(&fs, ino, buf, 2 * PAGE, 0);
	CHECK(n == -EUCLEAN || n == PAGE);
	/* the garbled slots stay: the file's own pages are lost to it,
	 * which is fsck's to find, so no clean check here */
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_rewrite_read_layouts);
	RUN(test_chunk_calls);
	RUN(test_span_past_pool);
	return t_done();
}
