// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The open-set summary (docs/open-files.md, "Summary"): the last unlinker
 * scans only the hosts whose bit is set in daxfs_state.open_hosts, and in
 * each page only the entries below its high-water mark.  A holder on a
 * slot other than 0 is found through its bit; sets from before the
 * summary (bit 0 while entries exist) and pages from before the mark are
 * still found once a host joins or recovers; leave and recovery clear
 * the bit.
 */
#include "tutil.h"
#include "tfile.h"
#include "core/openset.h"

#define MiB (1ULL << 20)
#define SIZE (64 * MiB)
#define ROOT 1ULL
#define HOLDER 5u

static struct daxfs_fs fa, fb, fh;
static void *region;

static u64 summary(u32 w)
{
	return daxfs_load(&fa.state->open_hosts[w]);
}

/* An image written before the summary existed: every word 0. */
static void forget_summary(void)
{
	u32 w;

	for (w = 0; w < 4; w++)
		daxfs_store(&fa.state->open_hosts[w], 0);
}

/* fh joins in slot HOLDER: slots 2..HOLDER-1 are taken and left again. */
static void join_holder(void)
{
	struct daxfs_fs tmp[HOLDER];
	u32 i;

	for (i = 2; i < HOLDER; i++)
		CHECK_EQ(t_join(&tmp[i], region, SIZE), 0);
	CHECK_EQ(t_join(&fh, region, SIZE), 0);
	CHECK_EQ(fh.host, HOLDER);
	for (i = 2; i < HOLDER; i++)
		daxfs_host_leave(&tmp[i]);
}

/* Host 5 holds; host 0 unlinks: only bit 5 is set, and it leads the
 * scan to the entry, so the file survives until host 5 closes it. */
static void test_holder_on_slot5_found_by_summary(void)
{
	struct daxfs_attr a;
	char buf[8] = "";
	u64 ino, other;

	join_holder();
	CHECK_EQ(summary(0), 0);	/* nobody has opened anything yet */
	ino = t_mkreg(&fh, ROOT, "held");
	CHECK_EQ(t_pwrite(&fh, ino, "data", 4, 0), 4);
	CHECK_EQ(daxfs_open_get(&fh, ino), 0);
	CHECK_EQ(summary(0), 1ULL << HOLDER);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "held", 4), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(t_pread(&fh, ino, buf, 4, 0), 4);
	CHECK(!memcmp(buf, "data", 4));
	/* a file nobody holds still goes at once */
	other = t_mkreg(&fa, ROOT, "free");
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "free", 4), 0);
	CHECK_EQ(t_getattr(&fa, other, &a), -ENOENT);
	CHECK_EQ(daxfs_open_put(&fh, ino), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	/* cleared lazily: the bit stays while host 5 lives */
	CHECK_EQ(summary(0), 1ULL << HOLDER);
}

/* Nine opens closed again leave the mark at 10: the tenth entry, the
 * one still held, lies below it and is found. */
static void test_entry_below_high_water_found(void)
{
	struct daxfs_attr a;
	u64 ino[10];
	char n[8];
	u32 i;

	for (i = 0; i < 10; i++) {
		snprintf(n, sizeof(n), "hw%u", i);
		ino[i] = t_mkreg(&fh, ROOT, n);
		CHECK_EQ(daxfs_open_get(&fh, ino[i]), 0);
	}
	for (i = 0; i < 9; i++)
		CHECK_EQ(daxfs_open_put(&fh, ino[i]), 0);
	CHECK_EQ(daxfs_open_count(&fh, HOLDER, NULL), 1);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "hw9", 3), 0);
	CHECK_EQ(t_getattr(&fb, ino[9], &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fh, ino[9]), 0);
	CHECK_EQ(t_getattr(&fb, ino[9], &a), -ENOENT);
	for (i = 0; i < 9; i++) {
		snprintf(n, sizeof(n), "hw%u", i);
		CHECK_EQ(daxfs_unlink(&fb, ROOT, n, strlen(n)), 0);
		CHECK_EQ(t_getattr(&fb, ino[i], &a), -ENOENT);
	}
}

/* A page written before the mark (flags 0, hw 0) is read whole. */
static void test_page_without_mark_read_whole(void)
{
	struct daxfs_open_page *pg;
	struct daxfs_attr a;
	u64 ino[4];
	char n[8];
	u32 i, pages = 0;

	for (i = 0; i < 4; i++) {
		snprintf(n, sizeof(n), "old%u", i);
		ino[i] = t_mkreg(&fh, ROOT, n);
		CHECK_EQ(daxfs_open_get(&fh, ino[i]), 0);
	}
	pg = daxfs_open_page_next(&fh, HOLDER, NULL, &pages);
	CHECK(pg != NULL);
	CHECK(pg->flags & DAXFS_OPEN_PF_HW);
	CHECK(daxfs_load(&pg->hw) >= 4);
	pg->flags = 0;
	daxfs_store(&pg->hw, 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "old3", 4), 0);
	CHECK_EQ(t_getattr(&fa, ino[3], &a), 0);	/* held: kept */
	for (i = 0; i < 4; i++)
		CHECK_EQ(daxfs_open_put(&fh, ino[i]), 0);
	CHECK_EQ(t_getattr(&fa, ino[3], &a), -ENOENT);
	for (i = 0; i < 3; i++) {
		snprintf(n, sizeof(n), "old%u", i);
		CHECK_EQ(daxfs_unlink(&fa, ROOT, n, strlen(n)), 0);
	}
}

/* An image from before the summary: host 5's set exists, every bit is
 * 0.  The next host to join marks it, and its unlink keeps the file. */
static void test_pre_summary_set_marked_at_join(void)
{
	struct daxfs_fs fd;
	struct daxfs_attr a;
	u64 ino;

	ino = t_mkreg(&fh, ROOT, "pre");
	CHECK_EQ(daxfs_open_get(&fh, ino), 0);
	forget_summary();
	CHECK_EQ(t_join(&fd, region, SIZE), 0);
	CHECK(fd.host != HOLDER);
	CHECK_EQ(summary(0), 1ULL << HOLDER);
	CHECK_EQ(daxfs_unlink(&fd, ROOT, "pre", 3), 0);
	CHECK_EQ(t_getattr(&fd, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fh, ino), 0);
	CHECK_EQ(t_getattr(&fd, ino, &a), -ENOENT);
	daxfs_host_leave(&fd);
	CHECK_EQ(summary(0), 1ULL << HOLDER);	/* fd opened nothing */
}

/* A pre-summary holder that dies: recovery finds its set without the
 * bit, frees the orphan and leaves the bit clear. */
static void test_pre_summary_dead_holder_recovered(void)
{
	struct daxfs_attr a;
	u64 ino;

	ino = t_mkreg(&fh, ROOT, "dead");
	CHECK_EQ(daxfs_open_get(&fh, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "dead", 4), 0);
	forget_summary();
	t_age(&fh, HOLDER);
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	CHECK_EQ(daxfs_load(&fa.hosts[HOLDER].open_set), 0);
	CHECK_EQ(summary(0), 0);
}

/* A clean leave with an open still in place drops it and the bit. */
static void test_leave_clears_bit(void)
{
	struct daxfs_attr a;
	u64 ino;

	join_holder();
	ino = t_mkreg(&fh, ROOT, "leave");
	CHECK_EQ(daxfs_open_get(&fh, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "leave", 5), 0);
	CHECK_EQ(summary(0), 1ULL << HOLDER);
	daxfs_host_leave(&fh);
	CHECK_EQ(summary(0), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
}

int main(void)
{
	struct daxfs_format_opts o;

	memset(&o, 0, sizeof(o));
	region = t_setup(&fa, SIZE, &o);
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	RUN(test_holder_on_slot5_found_by_summary);
	RUN(test_entry_below_high_water_found);
	RUN(test_page_without_mark_read_whole);
	RUN(test_pre_summary_set_marked_at_join);
	RUN(test_pre_summary_dead_holder_recovered);
	RUN(test_leave_clears_bit);
	return t_done();
}
