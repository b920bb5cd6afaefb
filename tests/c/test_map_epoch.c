// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Mapping hosts hold back the reuse of pool pages (docs/reclaim.md,
 * "Mapping hosts"): host M maps a file's page the way daxfs.ko's fault
 * does (daxfs_map_first, then the page lookup); host W truncates the file
 * and reclaims.  The page must stay allocated until M announces a pass
 * that began after the truncate, and an M declared dead holds nothing.
 */
#include "tfile.h"

#define PAGE 4096u

static void make_old(struct daxfs_fs *fs, u32 slot)
{
	t_age(fs, slot);
}

/* A two-page file written by w; returns its inode, *pg the page of block 1
 * as m's fault would map it. */
static u64 mapped_file(struct daxfs_fs *w, struct daxfs_fs *m, u64 *pg)
{
	u8 buf[2 * PAGE];
	u64 ino = t_mkfile(w);

	memset(buf, 'A', sizeof(buf));
	CHECK(ino != 0);
	CHECK_EQ(t_pwrite(w, ino, buf, sizeof(buf), 0), sizeof(buf));
	daxfs_map_first(m);
	CHECK_EQ(daxfs_block_page(m, ino, 1, pg), 0);
	CHECK(*pg != 0);
	return ino;
}

/* What w's truncate to 0 and regrow frees, once nothing holds it back:
 * used bytes after a full reclaim, before and after. */
static void cut_and_regrow(struct daxfs_fs *w, u64 ino)
{
	struct daxfs_attr a, b;

	CHECK_EQ(t_getattr(w, ino, &a), 0);
	CHECK_EQ(daxfs_truncate(w, ino, 0), 0);
	CHECK_EQ(daxfs_truncate(w, ino, 2 * PAGE), 0);
	CHECK_EQ(t_getattr(w, ino, &b), 0);
	/* same size, but the mapper must see that pages left */
	CHECK_EQ(b.size, a.size);
	CHECK(b.change != a.change);
}

static void test_holds_until_pass(void)
{
	struct daxfs_fs w, m;
	u64 size = 16 * MiB, pg, now, e, held;
	void *r = t_setup(&w, size, NULL);
	u64 ino;
	int i;

	CHECK_EQ(t_join(&m, r, size), 0);
	ino = mapped_file(&w, &m, &pg);
	CHECK(daxfs_load(&m.hosts[m.host].map_epoch) != 0);
	/* a pass that began before the cut does not release it */
	e = daxfs_map_pass_epoch(&m);
	cut_and_regrow(&w, ino);
	CHECK_EQ(daxfs_block_page(&m, ino, 1, &now), 0);
	CHECK_EQ(now, 0);		/* a hole now: the revalidation unmaps */
	for (i = 0; i < 4; i++)
		daxfs_reclaim_all(&w);
	held = t_used(&w);
	daxfs_map_announce(&m, e);
	for (i = 0; i < 4; i++)
		daxfs_reclaim_all(&w);
	CHECK_EQ(t_used(&w), held);	/* nothing freed yet */
	/* a pass that began after the cut (W's op ended) releases it */
	daxfs_map_announce(&m, daxfs_map_pass_epoch(&m));
	daxfs_reclaim_all(&w);
	daxfs_reclaim_all(&w);
	CHECK(t_used(&w) + 2 * PAGE <= held);
	/* nothing mapped: 0 holds nothing back */
	daxfs_map_announce(&m, 0);
	CHECK_EQ(daxfs_load(&m.hosts[m.host].map_epoch), 0);
	daxfs_host_leave(&m);
	daxfs_host_leave(&w);
	t_region_free(r, size);
}

/* A host that maps nothing does not delay reuse; neither does one whose
 * lease ran out: it is declared dead (its mappings went with it). */
static void test_idle_and_dead_hold_nothing(void)
{
	struct daxfs_fs w, m;
	u64 size = 16 * MiB, pg, before, held;
	void *r = t_setup(&w, size, NULL);
	u64 ino;
	int i;

	CHECK_EQ(t_join(&m, r, size), 0);
	/* m joined, maps nothing */
	ino = t_mkfile(&w);
	{
		u8 buf[2 * PAGE];

		memset(buf, 'B', sizeof(buf));
		CHECK_EQ(t_pwrite(&w, ino, buf, sizeof(buf), 0), sizeof(buf));
	}
	daxfs_reclaim_all(&w);
	before = t_used(&w);
	CHECK_EQ(daxfs_truncate(&w, ino, 0), 0);
	daxfs_reclaim_all(&w);
	daxfs_reclaim_all(&w);
	CHECK(t_used(&w) + 2 * PAGE <= before);

	/* m maps, then stops renewing: held while alive, free once dead */
	ino = mapped_file(&w, &m, &pg);
	daxfs_reclaim_all(&w);
	cut_and_regrow(&w, ino);
	for (i = 0; i < 4; i++)
		daxfs_reclaim_all(&w);
	held = t_used(&w);
	CHECK(daxfs_host_alive(&w, m.host, m.host_gen));
	make_old(&m, m.host);
	daxfs_reclaim_all(&w);		/* declares m dead, recovers it */
	daxfs_reclaim_all(&w);
	CHECK(!daxfs_host_alive(&w, m.host, m.host_gen));
	CHECK_EQ(daxfs_load(&w.hosts[m.host].map_epoch), 0);
	CHECK(t_used(&w) + 2 * PAGE <= held);
	/* the dead host's late announcement writes nothing */
	daxfs_map_announce(&m, 5);
	daxfs_map_first(&m);
	CHECK_EQ(daxfs_load(&w.hosts[m.host].map_epoch), 0);
	daxfs_host_leave(&m);
	daxfs_host_leave(&w);
	t_region_free(r, size);
}

int main(void)
{
	RUN(test_holds_until_pass);
	RUN(test_idle_and_dead_hold_nothing);
	return t_done();
}
