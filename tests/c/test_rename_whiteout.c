// SPDX-License-Identifier: GPL-2.0 OR MIT
/* RENAME_WHITEOUT as one rename (docs/recovery.md "Namespace protocols"):
 * the old name becomes a whiteout (character device 0/0, one link) in
 * the rename's own step; the old directory keeps its entry count; bad
 * whiteouts and flag mixes are refused; a full pool answers ENOSPC with
 * nothing moved and nothing leaked.  Crashes: tests/test_rename_whiteout.py. */
#include "tcheck.h"

#define MiB (1ULL << 20)
#define SIZE (4 * MiB)
#define MAXF 4096
#define TRIES 600

static u64 ino_of(struct daxfs_fs *fs, u64 dir, const char *name)
{
	u64 ino = 0;

	if (daxfs_lookup(fs, dir, name, strlen(name), &ino))
		return 0;
	return ino;
}

/* name in dir is a whiteout with its one link */
static bool is_whiteout(struct daxfs_fs *fs, u64 dir, const char *name)
{
	struct daxfs_attr a;
	u64 ino = ino_of(fs, dir, name);

	if (!ino || daxfs_getattr(fs, ino, &a))
		return false;
	return (a.mode & 0170000) == 0020000 && a.rdev == 0 && a.nlink == 1;
}

static int rnwh(struct daxfs_fs *fs, u64 sdir, const char *s, u64 ddir,
		const char *d, u32 flags)
{
	return daxfs_rename_whiteout(fs, sdir, s, strlen(s), ddir, d, strlen(d),
				     flags | DAXFS_RENAME_WHITEOUT, 0, 0);
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	printf("    fsck: %s: %s (ino %llu have %llu want %llu)\n", p->name,
	       p->msg, (unsigned long long)p->ino, (unsigned long long)p->have,
	       (unsigned long long)p->want);
}

/* after every host left: no error, no warning (entry counts, link
 * counts), nothing leaked */
static void check_clean(void *r)
{
	struct daxfs_check_result res;

	CHECK_EQ(t_fsck(r, SIZE, false, report, NULL, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.nr[DAXFS_CHK_WARN], 0);
	CHECK_EQ(res.leaked_bytes, 0);
}

static void test_moves(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 x, y, d, a, b, yb, ino;
	struct daxfs_attr at;

	CHECK_EQ(daxfs_mkdir(&fs, 1, "x", 1, 040755, 0, 0, &x), 0);
	CHECK_EQ(daxfs_mkdir(&fs, 1, "y", 1, 040755, 0, 0, &y), 0);
	CHECK_EQ(daxfs_mkdir(&fs, x, "d", 1, 040755, 0, 0, &d), 0);
	CHECK_EQ(daxfs_mknod(&fs, x, "a", 1, 0100644, 0, 0, 0, &a), 0);
	CHECK_EQ(daxfs_mknod(&fs, x, "b", 1, 0100644, 0, 0, 0, &b), 0);
	CHECK_EQ(daxfs_mknod(&fs, y, "b", 1, 0100644, 0, 0, 0, &yb), 0);

	/* a move: the file at c, the whiteout at a */
	CHECK_EQ(rnwh(&fs, x, "a", x, "c", 0), 0);
	CHECK_EQ(ino_of(&fs, x, "c"), a);
	CHECK(is_whiteout(&fs, x, "a"));
	CHECK_EQ(daxfs_getattr(&fs, a, &at), 0);
	CHECK_EQ(at.nlink, 1);
	/* a replace: b's old file goes */
	CHECK_EQ(rnwh(&fs, x, "c", x, "b", 0), 0);
	CHECK_EQ(ino_of(&fs, x, "b"), a);
	CHECK(is_whiteout(&fs, x, "c"));
	CHECK(daxfs_getattr(&fs, b, &at) != 0);
	/* across directories, replacing, with NOREPLACE refused first */
	CHECK_EQ(rnwh(&fs, x, "b", y, "b", DAXFS_RENAME_NOREPLACE), -EEXIST);
	CHECK_EQ(ino_of(&fs, x, "b"), a);
	CHECK_EQ(rnwh(&fs, x, "b", y, "b", 0), 0);
	CHECK_EQ(ino_of(&fs, y, "b"), a);
	CHECK(is_whiteout(&fs, x, "b"));
	/* a directory: x loses a subdirectory link, gains a whiteout */
	CHECK_EQ(rnwh(&fs, x, "d", y, "d", 0), 0);
	CHECK_EQ(ino_of(&fs, y, "d"), d);
	CHECK(is_whiteout(&fs, x, "d"));
	CHECK_EQ(daxfs_getattr(&fs, x, &at), 0);
	CHECK_EQ(at.nlink, 2);
	/* a whiteout renamed with a whiteout; onto a whiteout */
	ino = ino_of(&fs, x, "a");
	CHECK_EQ(rnwh(&fs, x, "a", x, "c", 0), 0);
	CHECK_EQ(ino_of(&fs, x, "c"), ino);
	CHECK(is_whiteout(&fs, x, "a"));
	CHECK(ino_of(&fs, x, "a") != ino);
	/* no source: nothing made, nothing left */
	CHECK_EQ(rnwh(&fs, x, "none", x, "e", 0), -ENOENT);
	CHECK_EQ(ino_of(&fs, x, "e"), 0);
	daxfs_reclaim_all(&fs);
	daxfs_host_leave(&fs);
	check_clean(r);
	t_region_free(r, SIZE);
}

static void test_refused(void)
{
	struct daxfs_fs fs, fs2;
	void *r = t_setup(&fs, SIZE, NULL);
	u64 x, a, b, wh, wh2;

	CHECK_EQ(t_join(&fs2, r, SIZE), 0);
	CHECK_EQ(daxfs_mkdir(&fs, 1, "x", 1, 040755, 0, 0, &x), 0);
	CHECK_EQ(daxfs_mknod(&fs, x, "a", 1, 0100644, 0, 0, 0, &a), 0);
	CHECK_EQ(daxfs_mknod(&fs, x, "b", 1, 0100644, 0, 0, 0, &b), 0);
	/* with EXCHANGE (as Linux); without a whiteout; one without flag */
	CHECK_EQ(rnwh(&fs, x, "a", x, "b", DAXFS_RENAME_EXCHANGE), -EINVAL);
	CHECK_EQ(daxfs_rename(&fs, x, "a", 1, x, "c", 1, DAXFS_RENAME_WHITEOUT),
		 -EINVAL);
	CHECK_EQ(daxfs_tmpnode(&fs, x, 0020000, 0, 0, 0, &wh), 0);
	CHECK_EQ(daxfs_rename_wh(&fs, x, "a", 1, x, "c", 1, 0, wh), -EINVAL);
	/* a whiteout with a name, or held by another host, or gone */
	CHECK_EQ(daxfs_rename_wh(&fs, x, "a", 1, x, "c", 1,
				 DAXFS_RENAME_WHITEOUT, b), -EINVAL);
	CHECK_EQ(daxfs_tmpnode(&fs2, x, 0020000, 0, 0, 0, &wh2), 0);
	CHECK_EQ(daxfs_rename_wh(&fs, x, "a", 1, x, "c", 1,
				 DAXFS_RENAME_WHITEOUT, wh2), -EINVAL);
	CHECK_EQ(daxfs_open_put(&fs2, wh2), 0);
	CHECK_EQ(daxfs_rename_wh(&fs, x, "a", 1, x, "c", 1,
				 DAXFS_RENAME_WHITEOUT, wh2), -EINVAL);
	CHECK_EQ(ino_of(&fs, x, "a"), a);
	CHECK_EQ(ino_of(&fs, x, "c"), 0);
	/* the caller's own held node: taken, kept after the hold goes */
	CHECK_EQ(daxfs_rename_wh(&fs, x, "a", 1, x, "c", 1,
				 DAXFS_RENAME_WHITEOUT, wh), 0);
	CHECK_EQ(daxfs_open_put(&fs, wh), 0);
	CHECK_EQ(ino_of(&fs, x, "a"), wh);
	CHECK(is_whiteout(&fs, x, "a"));
	CHECK_EQ(ino_of(&fs, x, "c"), a);
	/* a second rename cannot take it again (it has a name now) */
	CHECK_EQ(daxfs_rename_wh(&fs, x, "c", 1, x, "e", 1,
				 DAXFS_RENAME_WHITEOUT, wh), -EINVAL);
	daxfs_reclaim_all(&fs);
	daxfs_host_leave(&fs2);
	daxfs_host_leave(&fs);
	check_clean(r);
	t_region_free(r, SIZE);
}

static u64 fill_byte(void *ctx, void *dst, u64 len)
{
	memset(dst, 0x5a, len);
	return len;
}

/* Files of len bytes named f<i> until the pool says no; returns the
 * next i. */
static u32 fill_files(struct daxfs_fs *fs, u64 dir, u32 i, u64 len, u64 *inos)
{
	char nm[32];
	u64 pos;

	for (; i < MAXF; i++) {
		snprintf(nm, sizeof(nm), "f%u", i);
		if (daxfs_mknod(fs, dir, nm, strlen(nm), 0100644, 0, 0, 0,
				&inos[i]))
			break;
		if (len && daxfs_write(fs, inos[i], 0, len, 0, fill_byte, NULL,
				       &pos) != (s64)len) {
			daxfs_unlink(fs, dir, nm, strlen(nm));
			break;
		}
	}
	return i;
}

/*
 * A full pool: every whiteout rename either did all (file at the new
 * name, whiteout at the old) or nothing (file at the old name, no new
 * name), and ENOSPC comes before anything moved, whether the whiteout
 * could not be made (daxfs_tmpnode) or the rename's leaves could not
 * (daxfs_rename_wh with a whiteout made first).
 */
static void test_full_pool(void)
{
	static u64 inos[MAXF];
	struct daxfs_fs fs;
	void *r = t_setup(&fs, SIZE, NULL);
	u32 n = 0, t, ok = 0, nomake = 0, norename = 0;
	char src[32], dst[32];
	u64 dir, wh;
	int err;

	CHECK_EQ(daxfs_mkdir(&fs, 1, "d", 1, 040755, 0, 0, &dir), 0);
	n = fill_files(&fs, dir, n, 64 * 1024, inos);
	n = fill_files(&fs, dir, n, 200, inos);
	n = fill_files(&fs, dir, n, 0, inos);
	CHECK(n > 10);
	for (t = 0; t < TRIES; t++) {
		u32 k = t % n;

		snprintf(src, sizeof(src), "f%u", k);
		snprintf(dst, sizeof(dst), "g%u", t);
		if (t & 1) {
			err = rnwh(&fs, dir, src, dir, dst, 0);
			if (err == -ENOSPC)
				nomake++;	/* either step: counted here */
		} else {
			err = daxfs_tmpnode(&fs, dir, 0020000, 0, 0, 0, &wh);
			if (err == -ENOSPC) {
				nomake++;
				continue;
			}
			CHECK_EQ(err, 0);
			err = daxfs_rename_wh(&fs, dir, src, strlen(src), dir, dst,
					      strlen(dst), DAXFS_RENAME_WHITEOUT, wh);
			if (err == -ENOSPC)
				norename++;
			CHECK_EQ(daxfs_open_put(&fs, wh), 0);
		}
		if (err) {
			CHECK_EQ(err, -ENOSPC);
			CHECK_EQ(ino_of(&fs, dir, src), inos[k]);
			CHECK_EQ(ino_of(&fs, dir, dst), 0);
			continue;
		}
		ok++;
		CHECK_EQ(ino_of(&fs, dir, dst), inos[k]);
		CHECK(is_whiteout(&fs, dir, src));
		/* back over the whiteout (freeing it): the pool stays full */
		CHECK_EQ(daxfs_rename(&fs, dir, dst, strlen(dst), dir, src,
				      strlen(src), 0), 0);
		CHECK_EQ(ino_of(&fs, dir, src), inos[k]);
		daxfs_reclaim_all(&fs);
	}
	printf("  %u files, %u tries: %u done, ENOSPC %u making the whiteout "
	       "(or either), %u in the rename\n", n, TRIES, ok, nomake, norename);
	CHECK(nomake + norename > 0);
	daxfs_reclaim_all(&fs);
	daxfs_host_leave(&fs);
	check_clean(r);
	t_region_free(r, SIZE);
}

int main(void)
{
	RUN(test_moves);
	RUN(test_refused);
	RUN(test_full_pool);
	return t_done();
}
