// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Base-backed files: reads of pristine base data, copy-on-write of blocks
 * on write (the base region is never modified), truncate-then-extend never
 * re-exposing base bytes, map_block copying a base block up. */
#include "tfile.h"
#include "tbase.h"

#define REGION (16 * MiB)
#define BSIZE (64 * 1024)
#define FSIZE 10000ULL		/* base file: 2 full blocks + a partial */
#define DATA_OFF 12288ULL

static u8 pattern(u64 i)
{
	return (u8)(i * 7 + 3) | 1;	/* never zero */
}

static void fill_pattern(u8 *data, u64 n)
{
	u64 i;

	for (i = 0; i < n; i++)
		data[i] = pattern(i);
}

/* Formats with a base region holding "/" (ino 1) and one file (ino 2). */
static void *setup_base(struct daxfs_fs *fs, u8 **basep)
{
	void *r = t_region(REGION);
	u8 *b = t_base_one_file(r, REGION, BSIZE, FSIZE, DATA_OFF,
				fill_pattern);
	int err = t_join(fs, r, REGION);

	if (err) {
		fprintf(stderr, "base open failed: %d\n", err);
		exit(2);
	}
	*basep = b;
	return r;
}

static void nop_restart(void *ctx)
{
}

/* t_pread as daxfs.ko reads (core/atomicw.c), compared with t_pread's */
static void check_atomic_read(struct daxfs_fs *fs, u64 ino, u64 len)
{
	static u8 want[20000], got[20000];
	struct rdst r = { got, 0, 0, 0 };
	s64 n = t_pread(fs, ino, want, len, 0);

	memset(got, 0xee, sizeof(got));
	CHECK_EQ(daxfs_read_atomic(fs, ino, 0, len, r_actor, nop_restart, &r),
		 n);
	CHECK(n > 0 && !memcmp(got, want, (size_t)n));
}

static void test_base_read_cow(void)
{
	struct daxfs_fs fs;
	u8 *b, *snap = malloc(BSIZE), buf[20000];
	void *r = setup_base(&fs, &b);
	struct daxfs_inode *ip;
	u64 i, bad = 0;

	memcpy(snap, b, BSIZE);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), (s64)FSIZE);
	for (i = 0; i < FSIZE; i++)
		bad += buf[i] != pattern(i);
	CHECK_EQ(bad, 0);
	CHECK_EQ(t_pread(&fs, 2, buf, 10, FSIZE), 0);

	/* copy-on-write of block 1 */
	CHECK_EQ(t_pwrite(&fs, 2, "0123456789", 10, 5000), 10);
	ip = t_ip(&fs, 2);
	CHECK(ip && (ip->flags & DAXFS_IF_BASE));
	CHECK_EQ(daxfs_load(&ip->size), FSIZE);
	CHECK(!memcmp(snap, b, BSIZE));		/* base untouched */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), (s64)FSIZE);
	for (bad = 0, i = 0; i < FSIZE; i++)
		bad += buf[i] != (i >= 5000 && i < 5010 ? (u8)('0' + i - 5000)
						       : pattern(i));
	CHECK_EQ(bad, 0);
	/* the copied-up record's base bytes, not holes, in an atomic read */
	check_atomic_read(&fs, 2, sizeof(buf));
	/* writing past the base size: block 2 is copied, then extended */
	CHECK_EQ(t_pwrite(&fs, 2, "END", 3, FSIZE + 100), 3);
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), (s64)FSIZE + 103);
	for (bad = 0, i = 8192; i < FSIZE; i++)
		bad += buf[i] != pattern(i);
	for (i = FSIZE; i < FSIZE + 100; i++)
		bad += buf[i] != 0;
	CHECK_EQ(bad, 0);
	CHECK(!memcmp(buf + FSIZE + 100, "END", 3));
	check_atomic_read(&fs, 2, sizeof(buf));
	CHECK(!memcmp(snap, b, BSIZE));
	free(snap);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* Pitfall 6: truncate-then-extend must not bring base bytes back. */
static void test_base_truncate(void)
{
	struct daxfs_fs fs;
	u8 *b, buf[20000];
	void *r = setup_base(&fs, &b);
	struct daxfs_inode *ip;
	u64 i, bad = 0, off;

	CHECK_EQ(daxfs_truncate(&fs, 2, 3000), 0);
	ip = t_ip(&fs, 2);
	CHECK_EQ(daxfs_load(&ip->aux), 3000);		/* base_limit */
	CHECK_EQ(daxfs_truncate(&fs, 2, 12000), 0);
	memset(buf, 0xee, sizeof(buf));
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), 12000);
	for (i = 0; i < 3000; i++)
		bad += buf[i] != pattern(i);
	for (; i < 12000; i++)
		bad += buf[i] != 0;
	CHECK_EQ(bad, 0);
	/* a write into block 2 copies no base bytes beyond the limit */
	CHECK_EQ(t_pwrite(&fs, 2, "x", 1, 9000), 1);
	/* and into block 0: base below 3000 kept, zeros above */
	CHECK_EQ(t_pwrite(&fs, 2, "y", 1, 3500), 1);
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), 12000);
	for (bad = 0, i = 0; i < 12000; i++) {
		u8 want = i < 3000 ? pattern(i) : 0;

		if (i == 9000)
			want = 'x';
		if (i == 3500)
			want = 'y';
		bad += buf[i] != want;
	}
	CHECK_EQ(bad, 0);
	/* pristine base inode untouched; map_block copies a block up */
	CHECK_EQ(daxfs_truncate(&fs, 2, 0), 0);
	CHECK_EQ(daxfs_load(&ip->aux), 0);
	CHECK_EQ(daxfs_truncate(&fs, 2, 8192), 0);
	CHECK_EQ(t_pread(&fs, 2, buf, 8192, 0), 8192);
	for (bad = 0, i = 0; i < 8192; i++)
		bad += buf[i] != 0;
	CHECK_EQ(bad, 0);
	CHECK_EQ(daxfs_map_block(&fs, 2, 0, false, &off), 0);
	CHECK_EQ(off, 0);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

static void test_base_map(void)
{
	struct daxfs_fs fs;
	u8 *b, *p;
	void *r = setup_base(&fs, &b);
	u64 off = 0, i, bad = 0;

	CHECK_EQ(daxfs_map_block(&fs, 2, 1, false, &off), 0);
	p = daxfs_ptr(&fs, off, 4096, 4096);
	CHECK(p != NULL);
	for (i = 0; p && i < 4096; i++)
		bad += p[i] != pattern(4096 + i);
	CHECK_EQ(bad, 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, 2)->blocks), 1);
	/* the partial last block: base bytes then zeros */
	CHECK_EQ(daxfs_map_block(&fs, 2, 2, false, &off), 0);
	p = daxfs_ptr(&fs, off, 4096, 4096);
	for (bad = 0, i = 0; p && i < 4096; i++)
		bad += p[i] != (8192 + i < FSIZE ? pattern(8192 + i) : 0);
	CHECK(p && bad == 0);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* fallocate on a base-backed file (docs/files.md "fallocate"): a punch
 * inside the visible base bytes zeroes them in pages of its own; one that
 * covers their end lowers the limit; the base region is never written;
 * base bytes are data for SEEK_DATA and an extent flagged BASE. */
static void test_base_punch(void)
{
	struct daxfs_fs fs;
	u8 *b, *snap = malloc(BSIZE), buf[FSIZE];
	void *r = setup_base(&fs, &b);
	struct daxfs_extent e;
	u64 i, bad = 0, res = 0;

	memcpy(snap, b, BSIZE);
	CHECK_EQ(daxfs_next_extent(&fs, 2, 0, &e), 0);
	CHECK_EQ(e.logical, 0);
	CHECK(e.flags & DAXFS_EXTENT_BASE);
	/* past a pristine file's base bytes there is nothing: the walk
	 * ends at once, it does not step a block at a time to the tree's
	 * largest offset (FIEMAP hung so) */
	CHECK_EQ(daxfs_next_extent(&fs, 2, e.logical + e.length, &e), 0);
	CHECK_EQ(e.length, 0);
	CHECK_EQ(daxfs_fallocate(&fs, 2, DAXFS_FALLOC_PUNCH_HOLE |
				 DAXFS_FALLOC_KEEP_SIZE, 100, 4096), 0);
	CHECK_EQ(daxfs_fallocate(&fs, 2, DAXFS_FALLOC_PUNCH_HOLE |
				 DAXFS_FALLOC_KEEP_SIZE, 6000, 8192), 0);
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), (s64)FSIZE);
	for (i = 0; i < FSIZE; i++)
		bad += buf[i] != ((i >= 100 && i < 4196) || i >= 6000 ? 0 :
				  pattern(i));
	CHECK_EQ(bad, 0);
	CHECK(!memcmp(snap, b, BSIZE));		/* base untouched */
	CHECK_EQ(daxfs_seek_hole_data(&fs, 2, 0, DAXFS_SEEK_DATA, &res), 0);
	CHECK_EQ(res, 0);
	/* growing the file shows zeros, not the hidden base bytes */
	CHECK_EQ(daxfs_truncate(&fs, 2, FSIZE + 10), 0);
	CHECK_EQ(t_pread(&fs, 2, buf, sizeof(buf), 0), (s64)FSIZE);
	for (bad = 0, i = 6000; i < FSIZE; i++)
		bad += buf[i] != 0;
	CHECK_EQ(bad, 0);
	free(snap);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_base_read_cow);
	RUN(test_base_truncate);
	RUN(test_base_map);
	RUN(test_base_punch);
	return t_done();
}
