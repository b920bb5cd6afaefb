// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The end of a read's op (daxfs_op_end_read, core/hosts.c).  Where the
 * front end keeps the host up on its own schedule (DAXFS_FS_UPKEEP:
 * daxfs.ko's lease work renews, reclaims and recovers), a read gives its
 * lane back and nothing more: no count toward daxfs_op_end's periodic
 * reclaim, so reads alone never move the epoch.  Elsewhere (libdaxfs,
 * FUSE: no flag) reads keep that upkeep, and writes keep it everywhere.
 * A read whose host was declared dead meanwhile leaves the lane alone:
 * it is recovery's, or a new host's.
 */
#include "tfile.h"
#include "core/internal.h"

#define REGION	(16 * MiB)
#define ROOT	1
#define READS	(4 * DAXFS_RECLAIM_EVERY + 3)

static u64 ops_counted(struct daxfs_fs *fs)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < DAXFS_LANES; i++)
		n += daxfs_load(&daxfs_lane_at(fs, fs->host, i)->pad[DAXFS_LANE_OPS]);
	return n;
}

static bool lanes_free(struct daxfs_fs *fs)
{
	u32 i;

	for (i = 0; i < DAXFS_LANES; i++)
		if (daxfs_load(&daxfs_lane_at(fs, fs->host, i)->epoch))
			return false;
	return true;
}

static u64 epoch(struct daxfs_fs *fs)
{
	return daxfs_load(daxfs_state_word(fs, epoch));
}

static void nop_restart(void *ctx)
{
	(void)ctx;
}

/* n reads as daxfs.ko reads (daxfs_read_atomic_peek), each checked */
static void reads(struct daxfs_fs *fs, u64 ino, u32 n)
{
	u8 buf[64];
	u32 i;

	for (i = 0; i < n; i++) {
		struct rdst r = { buf, 0, 0, 0 };
		struct daxfs_peek pk = { .mode = 0 };

		CHECK_EQ(daxfs_read_atomic_peek(fs, ino, NULL, 0, sizeof(buf),
						r_actor, nop_restart, &r, &pk),
			 (s64)sizeof(buf));
		CHECK_EQ(pk.size, 4096);
		CHECK_EQ(buf[0], 'r');
	}
}

static u64 mkfile(struct daxfs_fs *fs, const char *name)
{
	static u8 w[4096];
	u64 ino = t_mkreg(fs, ROOT, name);

	memset(w, 'r', sizeof(w));
	CHECK_EQ(t_pwrite(fs, ino, w, sizeof(w), 0), (s64)sizeof(w));
	return ino;
}

static void test_upkeep_reads_leave_it(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = mkfile(&fs, "f"), ops, e, i;

	fs.flags |= DAXFS_FS_UPKEEP;
	ops = ops_counted(&fs);
	e = epoch(&fs);
	reads(&fs, ino, READS);
	/* no reclaim ran: not counted, and the epoch stood */
	CHECK_EQ(ops_counted(&fs), ops);
	CHECK_EQ(epoch(&fs), e);
	CHECK(lanes_free(&fs));
	/* writes still count, and their reclaim still moves the epoch */
	for (i = 0; i < 2 * DAXFS_RECLAIM_EVERY; i++)
		CHECK_EQ(t_pwrite(&fs, ino, "r", 1, 0), 1);
	CHECK(ops_counted(&fs) >= ops + 2 * DAXFS_RECLAIM_EVERY);
	CHECK(epoch(&fs) > e);
	CHECK(lanes_free(&fs));
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

static void test_reads_keep_upkeep_without_flag(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = mkfile(&fs, "g"), ops, e;

	ops = ops_counted(&fs);
	e = epoch(&fs);
	reads(&fs, ino, READS);
	CHECK_EQ(ops_counted(&fs), ops + READS);
	CHECK(epoch(&fs) > e);	/* the reads' own periodic reclaim */
	CHECK(lanes_free(&fs));
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* Declared dead inside the op: the lane is not ours to clear. */
static void test_dead_host_lane_untouched(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	struct daxfs_host *h = daxfs_host_at(&fs, fs.host);
	struct daxfs_op op;
	u64 alive, other = 0x5a5a;

	fs.flags |= DAXFS_FS_UPKEEP;
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	CHECK(op.lane != NULL);
	alive = daxfs_load(&h->state);
	/* as a recoverer leaves it: our slot dead, the lane in its hands */
	daxfs_store(&h->state, daxfs_host_word(fs.host_gen, DAXFS_HOST_DEAD));
	daxfs_store(&op.lane->epoch, other);
	daxfs_op_end_read(&op);
	CHECK(op.lane == NULL);
	CHECK_EQ(daxfs_load(&daxfs_lane_at(&fs, fs.host, op.lane_idx)->epoch),
		 other);
	/* alive again (the test's own doing), the lane given back */
	daxfs_store(&daxfs_lane_at(&fs, fs.host, op.lane_idx)->epoch, 0);
	daxfs_store(&h->state, alive);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/* The record's own view (no base image) in the op's read: bytes, holes,
 * the size's cut, one block and several; a directory refused. */
static void test_own_view_reads(void)
{
	static u8 w[3 * 4096 + 100], got[sizeof(w) + 8], want[sizeof(w) + 8];
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = t_mkreg(&fs, ROOT, "v"), i;
	u64 offs[] = { 0, 1, 4095, 4096, 5000, 8191, 8192, sizeof(w) - 1 };
	u64 lens[] = { 1, 100, 4096, 4097, sizeof(got) };
	u32 a, b;

	fs.flags |= DAXFS_FS_UPKEEP;
	for (i = 0; i < sizeof(w); i++)
		w[i] = (u8)(i * 7 + 1) | 1;
	CHECK_EQ(t_pwrite(&fs, ino, w, 4096, 0), 4096);	/* a hole after */
	CHECK_EQ(t_pwrite(&fs, ino, w + 8192, sizeof(w) - 8192, 8192),
		 (s64)(sizeof(w) - 8192));
	for (a = 0; a < sizeof(offs) / sizeof(offs[0]); a++) {
		for (b = 0; b < sizeof(lens) / sizeof(lens[0]); b++) {
			struct rdst rd = { got, 0, 0, 0 };
			s64 n = t_pread(&fs, ino, want, lens[b], offs[a]);

			memset(got, 0xee, sizeof(got));
			CHECK_EQ(daxfs_read_atomic(&fs, ino, offs[a], lens[b],
						   r_actor, nop_restart, &rd),
				 n);
			CHECK(n > 0 && !memcmp(got, want, (size_t)n));
		}
	}
	{
		struct rdst rd = { got, 0, 0, 0 };

		CHECK_EQ(daxfs_read_atomic(&fs, ino, sizeof(w), 10, r_actor,
					   nop_restart, &rd), 0);
		CHECK_EQ(daxfs_read_atomic(&fs, ROOT, 0, 10, r_actor,
					   nop_restart, &rd), -EISDIR);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_upkeep_reads_leave_it);
	RUN(test_reads_keep_upkeep_without_flag);
	RUN(test_dead_host_lane_untouched);
	RUN(test_own_view_reads);
	return t_done();
}
