// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A page writer and a run writer race for one level-2 slot.  The page
 * writer found the slot empty and made a node for it; the run writer
 * published its 2 MiB run there first.  The page writer's CAS then failed
 * with the run in hand, which it took for a node: its write failed with
 * -EUCLEAN although nothing was corrupt (CI, test_runs under
 * qemu-aarch64, session 53).  Built by `make race`: the hook publishes
 * the run between the page writer's load and its CAS.  The page write
 * must land in the run's page, and every other page keep the run's bytes.
 */
#include "../c/tfile.h"

#define REGION		(64 * MiB)
#define PAGE		4096ULL
#define RUN_B		(2 * MiB)
#define PAGE_BLK	517ULL	/* a page of the second 2 MiB piece */

static struct daxfs_fs run_host;
static u64 file;
static bool armed;
static s64 run_written;
static u8 run_bytes[RUN_B], page_bytes[PAGE], got[RUN_B];

void daxfs_race_point(const char *name, const void *p)
{
	(void)p;
	if (!armed || strcmp(name, "radix.slot_empty"))
		return;
	armed = false;
	run_written = t_pwrite(&run_host, file, run_bytes, RUN_B, RUN_B);
}

/* The level-2 slot of the second 2 MiB piece: a run (its pages' first
 * offset | DAXFS_RADIX_RUN), or a leaf. */
static u64 second_piece(struct daxfs_fs *fs)
{
	u64 root = daxfs_load(&t_ip(fs, file)->root);
	struct daxfs_radix_node *n;

	CHECK_EQ(root & DAXFS_RADIX_HEIGHT_MASK, 2);
	n = daxfs_ptr(fs, root & ~(PAGE - 1), PAGE, PAGE);
	return n ? daxfs_load(&n->slot[1]) : 0;
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	u64 blk, v;

	CHECK_EQ(t_join(&run_host, region, REGION), 0);
	memset(run_bytes, 'r', sizeof(run_bytes));
	memset(page_bytes, 'p', sizeof(page_bytes));
	file = t_mkfile(&fs);
	/* a page in the first piece: the second piece's slot is empty */
	CHECK_EQ(t_pwrite(&fs, file, page_bytes, PAGE, 0), (s64)PAGE);
	armed = true;
	CHECK_EQ(t_pwrite(&fs, file, page_bytes, PAGE, PAGE_BLK * PAGE),
		 (s64)PAGE);
	CHECK(!armed);
	CHECK_EQ(run_written, (s64)RUN_B);
	v = second_piece(&fs);
	/* the race was the one meant: the run won the slot */
	CHECK(v & DAXFS_RADIX_RUN);
	CHECK_EQ(t_pread(&fs, file, got, RUN_B, RUN_B), (s64)RUN_B);
	for (blk = 0; blk < 512; blk++)
		CHECK(!memcmp(got + blk * PAGE, blk == PAGE_BLK - 512 ?
			      page_bytes : run_bytes, PAGE));
	CHECK_EQ(t_blocks(&fs, file), 1 + 512);
	daxfs_host_leave(&run_host);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
