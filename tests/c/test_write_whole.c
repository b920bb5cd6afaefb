// SPDX-License-Identifier: GPL-2.0 OR MIT
/* DAXFS_WRITE_WHOLE (docs/reclaim.md "Short writes"): on a nearly full
 * pool a write whose new pages do not fit stores nothing and says
 * -ENOSPC, so that the front end's space wait can run it again whole; a
 * write that needs no new page goes through; without the flag the same
 * write stores what fits (a short write, as POSIX has it). */
#include "tbytes.h"
#include "tcheck.h"

#define MiB (1ULL << 20)
#define SIZE (8 * MiB)
#define PAGE 4096ULL
#define PIECE (16 * PAGE)
#define KEEP (8 * PAGE)

static u64 make(struct daxfs_fs *fs, const char *name)
{
	u64 ino = 0;

	CHECK_EQ(daxfs_mknod(fs, 1, name, strlen(name), 0100644, 0, 0, 0,
			     &ino), 0);
	return ino;
}

static s64 put(struct daxfs_fs *fs, u64 ino, u64 off, u64 len, u32 flags,
	       u8 c)
{
	u64 pos;

	return daxfs_write(fs, ino, off, len, flags, t_fill_byte,
			   (void *)(uintptr_t)c, &pos);
}

static bool holds(struct daxfs_fs *fs, u64 ino, u64 len, u8 c)
{
	struct t_cmp cc = { c, false };

	return daxfs_read(fs, ino, 0, len, t_cmp_actor, &cc) == (s64)len &&
	       !cc.bad;
}

/* Files of PIECE bytes until the pool says no; returns how many. */
static u32 fill(struct daxfs_fs *fs)
{
	char nm[32];
	u64 ino;
	u32 i;

	for (i = 0;; i++) {
		snprintf(nm, sizeof(nm), "f%u", i);
		ino = make(fs, nm);
		if (put(fs, ino, 0, PIECE, 0, 'f') != (s64)PIECE) {
			CHECK_EQ(daxfs_unlink(fs, 1, nm, strlen(nm)), 0);
			return i;
		}
	}
}

static void expect_size(struct daxfs_fs *fs, u64 ino, u64 size, u64 blocks)
{
	struct daxfs_attr a;

	CHECK_EQ(daxfs_getattr(fs, ino, &a), 0);
	CHECK_EQ(a.size, size);
	CHECK_EQ(a.blocks, blocks);
}

static void test_whole_or_nothing(void)
{
	struct daxfs_check_result res;
	struct daxfs_fs fs;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 keep, g, room, used, len;
	u32 files;
	s64 n;

	keep = make(&fs, "keep");
	CHECK_EQ(put(&fs, keep, 0, KEEP, 0, 'k'), (s64)KEEP);
	files = fill(&fs);
	CHECK(files > 100);
	/* one piece back: a little room, far less than the write below */
	CHECK_EQ(daxfs_unlink(&fs, 1, "f0", 2), 0);
	daxfs_reclaim_all(&fs);
	g = make(&fs, "g");
	room = daxfs_alloc_room(&fs, 1 << 20);
	CHECK(room >= 4 && room < 64);
	len = (room + 16) * PAGE;
	used = t_used(&fs);

	/* whole or nothing: nothing stored, no page taken */
	n = put(&fs, g, 0, len, DAXFS_WRITE_WHOLE, 'w');
	CHECK_EQ(n, -ENOSPC);
	expect_size(&fs, g, 0, 0);
	CHECK_EQ(t_used(&fs), used);
	n = put(&fs, g, 0, len, DAXFS_WRITE_WHOLE | DAXFS_WRITE_APPEND, 'a');
	CHECK_EQ(n, -ENOSPC);
	expect_size(&fs, g, 0, 0);
	CHECK_EQ(t_used(&fs), used);

	/* a rewrite needs no new page: it goes through whole */
	CHECK_EQ(put(&fs, keep, 0, KEEP, DAXFS_WRITE_WHOLE, 'r'), (s64)KEEP);
	CHECK(holds(&fs, keep, KEEP, 'r'));
	/* and so does what fits */
	CHECK_EQ(put(&fs, g, 0, PAGE, DAXFS_WRITE_WHOLE, 'w'), (s64)PAGE);
	expect_size(&fs, g, PAGE, 1);

	/* without the flag: what fits, a short write */
	n = put(&fs, g, PAGE, len, 0, 'w');
	CHECK(n > 0 && n < (s64)len);
	CHECK(holds(&fs, g, PAGE + (u64)n, 'w'));

	daxfs_host_leave(&fs);
	CHECK_EQ(t_fsck(r, SIZE, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	printf("  %u files, room %llu pages, short write %lld of %llu\n", files,
	       (unsigned long long)room, (long long)n,
	       (unsigned long long)len);
	t_region_free(r, SIZE);
}

int main(void)
{
	RUN(test_whole_or_nothing);
	return t_done();
}
