// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * POSIX unlink of open files across hosts (docs/open-files.md): an open
 * published with daxfs_open_get keeps an unlinked non-directory usable by
 * number on every host until the last daxfs_open_put anywhere, the
 * holder's leave or its recovery; fsck tells a held orphan from a lost one.
 * Also the open set itself: multiset entries, -ENFILE when full, pages
 * returned at leave.
 */
#include "tutil.h"
#include "tfile.h"
#include "tcheck.h"

#define MiB (1ULL << 20)
#define SIZE (64 * MiB)
#define ROOT 1ULL

static struct daxfs_fs fa, fb;
static void *region;

static int lk(struct daxfs_fs *fs, const char *n)
{
	u64 ino;

	return daxfs_lookup(fs, ROOT, n, strlen(n), &ino);
}

static void settle(void)
{
	daxfs_reclaim_all(&fa);
	daxfs_reclaim_all(&fb);
	daxfs_reclaim_all(&fa);
}

static void expire(struct daxfs_fs *fs)
{
	t_age(fs, fs->host);
}

static void test_other_host_unlinks_open_file(void)
{
	char buf[64] = "";
	struct daxfs_attr a;
	u64 ino, used0, used1;

	settle();
	used0 = t_used(&fa);
	ino = t_mkreg(&fa, ROOT, "f");
	CHECK_EQ(t_pwrite(&fa, ino, "hello", 5, 0), 5);
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "f", 1), 0);
	CHECK_EQ(lk(&fa, "f"), -ENOENT);
	CHECK_EQ(lk(&fb, "f"), -ENOENT);
	/* A keeps using it; every host sees nlink 0 */
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.size, 5);
	CHECK_EQ(t_pwrite(&fa, ino, " world", 6, 5), 6);
	CHECK_EQ(t_pwrite(&fa, ino, "x", 1, 5 * DAXFS_BLOCK_SIZE), 1);
	CHECK_EQ(t_pread(&fa, ino, buf, 11, 0), 11);
	CHECK(!memcmp(buf, "hello world", 11));
	/* no new name and no new open for it */
	CHECK_EQ(daxfs_link(&fb, ino, ROOT, "g", 1), -ENOENT);
	CHECK_EQ(daxfs_open_get(&fb, ino), -ENOENT);
	CHECK_EQ(daxfs_inode_release(&fb, ino), 0);	/* held: nothing */
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	settle();
	used1 = t_used(&fa);
	CHECK(used1 > used0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
	CHECK_EQ(daxfs_open_put(&fa, ino), -EBADF);
	settle();
	CHECK_EQ(t_used(&fa), used0);	/* exactly the file's space came back */
}

static void test_unheld_unlink_frees_at_once(void)
{
	struct daxfs_attr a;
	u64 ino;

	ino = t_mkreg(&fa, ROOT, "u");
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "u", 1), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	/* two names: only the last unlink settles */
	ino = t_mkreg(&fa, ROOT, "c");
	CHECK_EQ(daxfs_link(&fa, ino, ROOT, "c2", 2), 0);
	CHECK_EQ(daxfs_open_get(&fb, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "c", 1), 0);
	CHECK_EQ(daxfs_open_put(&fb, ino), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 1);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "c2", 2), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
}

/*
 * daxfs_open_put_fc (daxfs.ko's close): the settle finds the record
 * through the caller's cache.  The unlinked file is freed at the close
 * as through a lookup; a linked one is left; a cache of another file's
 * record (or an empty one) misleads nothing: the other file stays.
 */
static void test_put_through_cache(void)
{
	struct daxfs_fcache fc = { 0 }, other = { 0 };
	struct daxfs_attr a;
	u64 ino, o, used0;

	settle();
	used0 = t_used(&fa);
	ino = t_mkreg(&fa, ROOT, "pc");
	o = t_mkreg(&fa, ROOT, "pco");
	CHECK_EQ(daxfs_getattr_fc(&fa, ino, &fc, &a), 0);
	CHECK_EQ(daxfs_getattr_fc(&fa, o, &other, &a), 0);
	CHECK(fc.rec != 0);
	/* linked: the close through the cache leaves it */
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_open_put_fc(&fa, ino, &fc), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 1);
	/* unlinked on B while A holds it: A's close frees it */
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "pc", 2), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put_fc(&fa, ino, &fc), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
	CHECK_EQ(daxfs_open_put_fc(&fa, ino, &fc), -EBADF);
	/* the cache of another, linked file: its record is not ino's */
	ino = t_mkreg(&fa, ROOT, "pc2");
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "pc2", 3), 0);
	CHECK_EQ(daxfs_open_put_fc(&fa, ino, &other), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
	CHECK_EQ(t_getattr(&fb, o, &a), 0);
	CHECK_EQ(a.nlink, 1);
	/* and with none */
	CHECK_EQ(daxfs_open_get(&fa, o), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "pco", 3), 0);
	CHECK_EQ(daxfs_open_put_fc(&fa, o, NULL), 0);
	CHECK_EQ(t_getattr(&fb, o, &a), -ENOENT);
	settle();
	CHECK_EQ(t_used(&fa), used0);	/* both files' space came back */
}

/* Two opens on A, one on B: freed at the third close, whoever closes last. */
static void test_last_of_many_holders_frees(void)
{
	struct daxfs_attr a;
	u64 ino;

	ino = t_mkreg(&fa, ROOT, "m");
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_open_get(&fb, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "m", 1), 0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(daxfs_open_put(&fb, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
}

static void test_rename_over_and_dirs(void)
{
	struct daxfs_attr a;
	u64 src, victim, d = 0;

	src = t_mkreg(&fa, ROOT, "s");
	victim = t_mkreg(&fa, ROOT, "v");
	CHECK_EQ(t_pwrite(&fa, victim, "old", 3, 0), 3);
	CHECK_EQ(daxfs_open_get(&fb, victim), 0);
	CHECK_EQ(daxfs_rename(&fa, ROOT, "s", 1, ROOT, "v", 1, 0), 0);
	CHECK_EQ(t_getattr(&fb, victim, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(a.size, 3);
	CHECK_EQ(daxfs_open_put(&fb, victim), 0);
	CHECK_EQ(t_getattr(&fa, victim, &a), -ENOENT);
	/* directories are never held */
	CHECK_EQ(daxfs_mkdir(&fa, ROOT, "d", 1, 0755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_open_get(&fb, d), -EISDIR);
	CHECK_EQ(daxfs_rmdir(&fa, ROOT, "d", 1), 0);
	CHECK_EQ(t_getattr(&fa, d, &a), -ENOENT);
	CHECK_EQ(daxfs_open_get(&fb, d), -ENOENT);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "v", 1), 0);
	CHECK_EQ(t_getattr(&fa, src, &a), -ENOENT);
}

/* The set is bounded: the open after the last entry fails with -ENFILE,
 * nothing is lost, and leaving returns every page. */
static void test_set_full_and_leave(void)
{
	const u32 cap = DAXFS_OPEN_MAX_PAGES * DAXFS_OPEN_ENTRIES;
	struct daxfs_fs fc;
	struct daxfs_attr a;
	u64 ino, used0;
	u32 i, pages = 0;

	settle();
	used0 = t_used(&fa);
	CHECK_EQ(t_join(&fc, region, SIZE), 0);
	ino = t_mkreg(&fc, ROOT, "full");
	for (i = 0; i < cap; i++)
		if (daxfs_open_get(&fc, ino))
			break;
	CHECK_EQ(i, cap);
	CHECK_EQ(daxfs_open_get(&fc, ino), -ENFILE);
	CHECK_EQ(daxfs_open_count(&fc, fc.host, &pages), cap);
	CHECK_EQ(pages, DAXFS_OPEN_MAX_PAGES);
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);	/* other hosts unaffected */
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(daxfs_open_put(&fc, ino), 0);
	CHECK_EQ(daxfs_open_get(&fc, ino), 0);	/* room again */
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "full", 4), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	/* leaving with every open still in place: dropped, file freed */
	daxfs_host_leave(&fc);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	settle();
	CHECK_EQ(t_used(&fa), used0);
}

/* A holder that dies: recovery drops its set and frees the orphan. */
static void test_dead_holder_recovered(void)
{
	struct daxfs_check_result res;
	struct daxfs_fs fc;
	struct daxfs_attr a;
	u64 ino, used0;

	settle();
	used0 = t_used(&fa);
	CHECK_EQ(t_join(&fc, region, SIZE), 0);
	ino = t_mkreg(&fc, ROOT, "dead");
	CHECK_EQ(t_pwrite(&fc, ino, "data", 4, 3 * DAXFS_BLOCK_SIZE), 4);
	CHECK_EQ(daxfs_open_get(&fc, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "dead", 4), 0);
	/* while the holder lives, fsck sees an open file, not an orphan */
	CHECK_EQ(t_fsck(region, SIZE, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.orphans, 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	expire(&fc);			/* gone without a word */
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK(daxfs_recover_dead_hosts(&fa) >= 1);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	settle();
	CHECK_EQ(t_used(&fa), used0);
}

/*
 * Opens handed over (docs/open-files.md): host C holds an unlinked file,
 * B takes it over with daxfs_open_get_held(.., C): refused without C's
 * entry, kept after C closes or is retired, freed at B's close.
 */
static void test_open_held_by_slot(void)
{
	struct daxfs_fs fc;
	struct daxfs_attr a;
	u32 n0 = daxfs_open_count(&fb, fb.host, NULL);
	u64 ino, used0;

	settle();
	used0 = t_used(&fa);
	CHECK_EQ(t_join(&fc, region, SIZE), 0);
	ino = t_mkreg(&fc, ROOT, "held");
	CHECK_EQ(t_pwrite(&fc, ino, "data", 4, 2 * DAXFS_BLOCK_SIZE), 4);
	CHECK_EQ(daxfs_open_get(&fc, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "held", 4), 0);
	/* no name: a plain open and one held by a host that does not hold
	 * it are refused, and leave no entry behind */
	CHECK_EQ(daxfs_open_get(&fb, ino), -ENOENT);
	CHECK_EQ(daxfs_open_get_held(&fb, ino, fa.host), -ENOENT);
	CHECK_EQ(daxfs_open_count(&fb, fb.host, NULL), n0);
	/* held by C: opens; C's close then frees nothing */
	CHECK_EQ(daxfs_open_get_held(&fb, ino, fc.host), 0);
	CHECK_EQ(daxfs_open_put(&fc, ino), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	/* C's entry is gone: a second taker is refused */
	CHECK_EQ(daxfs_open_get_held(&fa, ino, fc.host), -ENOENT);
	CHECK_EQ(daxfs_open_put(&fb, ino), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	/* the same through C's retirement (the exec hand-over): a wrong
	 * generation is refused, the right one recovers C at once */
	ino = t_mkreg(&fc, ROOT, "held2");
	CHECK_EQ(daxfs_open_get(&fc, ino), 0);
	CHECK_EQ(daxfs_unlink(&fa, ROOT, "held2", 5), 0);
	CHECK_EQ(daxfs_open_get_held(&fb, ino, fc.host), 0);
	CHECK_EQ(daxfs_host_retire(&fb, fc.host, fc.host_gen + 1), -ESTALE);
	CHECK_EQ(daxfs_host_retire(&fb, fb.host, fb.host_gen), -EINVAL);
	CHECK_EQ(daxfs_host_retire(&fb, fc.host, fc.host_gen), 0);
	/* a hand-over, not a death: a plain free slot, no "recovered" */
	CHECK_EQ(daxfs_load(&daxfs_host_at(&fa, fc.host)->state) &
		 DAXFS_HOST_STATE_MASK, DAXFS_HOST_FREE);
	CHECK_EQ(daxfs_load((u64 *)&daxfs_host_at(&fa, fc.host)->recovered_ns),
		 0);
	CHECK_EQ(daxfs_host_retire(&fb, fc.host, fc.host_gen), -ESTALE);
	CHECK(!daxfs_host_still_mine(&fc));	/* fenced, as a dead host */
	CHECK_EQ(t_getattr(&fa, ino, &a), 0);
	CHECK_EQ(daxfs_open_put(&fb, ino), 0);
	CHECK_EQ(t_getattr(&fa, ino, &a), -ENOENT);
	settle();
	CHECK_EQ(t_used(&fa), used0);
}

/*
 * Another hold of a file this host already holds (a mapping of a deleted
 * file through a descriptor still open: lib_file_hold_mapped): our own
 * slot as the holder.  Refused while only the new entry would name it,
 * and when another host holds it; the file lives until both go.
 */
static void test_open_held_by_own_slot(void)
{
	struct daxfs_attr a;
	u32 n0 = daxfs_open_count(&fa, fa.host, NULL);
	u64 ino, used0;

	settle();
	used0 = t_used(&fa);
	ino = t_mkreg(&fa, ROOT, "own");
	CHECK_EQ(t_pwrite(&fa, ino, "data", 4, 0), 4);
	/* linked: as a plain open */
	CHECK_EQ(daxfs_open_get_held(&fa, ino, fa.host), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "own", 3), 0);
	/* no name, one entry of ours: a second one */
	CHECK_EQ(daxfs_open_get_held(&fa, ino, fa.host), 0);
	CHECK_EQ(daxfs_open_count(&fa, fa.host, NULL), n0 + 2);
	/* B holds nothing: its own slot does not vouch for it */
	CHECK_EQ(daxfs_open_get_held(&fb, ino, fb.host), -ENOENT);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), 0);
	CHECK_EQ(a.nlink, 0);
	CHECK_EQ(daxfs_open_put(&fa, ino), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
	/* gone: our slot names it no more, so no new hold */
	CHECK_EQ(daxfs_open_get_held(&fa, ino, fa.host), -ENOENT);
	CHECK_EQ(daxfs_open_count(&fa, fa.host, NULL), n0);
	settle();
	CHECK_EQ(t_used(&fa), used0);
}

/* Everyone crashes while a file is held: fsck -n reports it, -y frees it. */
static void test_cluster_crash_fsck(void)
{
	struct daxfs_check_result res;
	struct daxfs_attr a;
	u64 ino;

	ino = t_mkreg(&fa, ROOT, "crash");
	CHECK_EQ(t_pwrite(&fa, ino, "data", 4, 2 * DAXFS_BLOCK_SIZE), 4);
	CHECK_EQ(daxfs_open_get(&fa, ino), 0);
	CHECK_EQ(daxfs_unlink(&fb, ROOT, "crash", 5), 0);
	expire(&fa);
	expire(&fb);
	CHECK_EQ(t_fsck(region, SIZE, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.orphans, 1);
	CHECK(res.nr[DAXFS_CHK_ERROR] >= 1);
	CHECK_EQ(t_fsck(region, SIZE, true, NULL, NULL, &res), 0);
	CHECK_EQ(t_fsck(region, SIZE, false, NULL, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR] + res.nr[DAXFS_CHK_WARN], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	CHECK_EQ(res.orphans, 0);
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	CHECK_EQ(t_getattr(&fb, ino, &a), -ENOENT);
	daxfs_host_leave(&fb);
}

int main(void)
{
	struct daxfs_format_opts o;
	struct t_renewer ra, rb;
	u64 keep;

	memset(&o, 0, sizeof(o));
	region = t_setup(&fa, SIZE, &o);
	CHECK_EQ(t_join(&fb, region, SIZE), 0);
	/* both hosts hold one file open throughout: their set pages exist
	 * before any used-bytes baseline is taken */
	keep = t_mkreg(&fa, ROOT, "keep");
	CHECK_EQ(daxfs_open_get(&fa, keep), 0);
	CHECK_EQ(daxfs_open_get(&fb, keep), 0);
	/* each idles while another works: keep both leases (under the short
	 * lease and a loaded machine, host C's opens declared A dead) */
	t_renew_start(&ra, &fa);
	t_renew_start(&rb, &fb);
	RUN(test_other_host_unlinks_open_file);
	RUN(test_unheld_unlink_frees_at_once);
	RUN(test_put_through_cache);
	RUN(test_last_of_many_holders_frees);
	RUN(test_rename_over_and_dirs);
	RUN(test_set_full_and_leave);
	RUN(test_dead_holder_recovered);
	RUN(test_open_held_by_slot);
	RUN(test_open_held_by_own_slot);
	/* the last test lets both leases run out */
	t_renew_stop(&rb);
	t_renew_stop(&ra);
	RUN(test_cluster_crash_fsck);
	return t_done();
}
