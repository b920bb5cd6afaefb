// SPDX-License-Identifier: GPL-2.0 OR MIT
/* A full pool (docs/reclaim.md "When the pool is empty"): operations that
 * fail with ENOSPC give back everything they allocated (fsck finds no
 * leaked byte afterwards), also while another host holds the epoch back
 * with an open op; nothing written before is lost; deleting frees space. */
#include "tbytes.h"
#include "tcheck.h"

#define MiB (1ULL << 20)
#define SIZE (4 * MiB)
#define MAXF 4096
#define TRIES 1500

enum {
	OP_CREATE, OP_MKDIR, OP_SYMLINK, OP_LINK, OP_RENAME, OP_RENAME_OVER,
	OP_WRITE, OP_APPEND, OP_TRUNCATE, OP_MIX, OP_NR
};
static const char *const op_names[OP_NR] = {
	"create", "mkdir", "symlink", "link", "rename", "rename-over",
	"write", "append", "truncate-extend", "mix",
};

struct kept {
	char name[32];
	u64 ino, len;
	bool gone;
};
static struct kept kept[MAXF];
static u32 nkept;

static u8 tag(u32 i)
{
	return (u8)(i * 7 + 1);
}

/* A file of len bytes of tag(i) in dir; false (and nothing kept) on error. */
static bool put_file(struct daxfs_fs *fs, u64 dir, u32 i, u64 len)
{
	struct kept *k = &kept[nkept];
	u64 pos;
	s64 n;

	snprintf(k->name, sizeof(k->name), "f%u", i);
	if (daxfs_mknod(fs, dir, k->name, strlen(k->name), 0100644, 0, 0, 0,
			&k->ino))
		return false;
	n = len ? daxfs_write(fs, k->ino, 0, len, 0, t_fill_byte,
			      (void *)(uintptr_t)tag(nkept), &pos) : 0;
	if (n != (s64)len) {
		/* a short write: the file is not kept */
		daxfs_unlink(fs, dir, k->name, strlen(k->name));
		return false;
	}
	k->len = len;
	nkept++;
	return true;
}

/* Pages first, then small files, then empty inodes, then directories. */
static void fill(struct daxfs_fs *fs, u64 dir)
{
	u32 i = 0;
	u64 d;
	char nm[32];

	while (nkept < MAXF && put_file(fs, dir, i++, 64 * 1024))
		;
	while (nkept < MAXF && put_file(fs, dir, i++, 200))
		;
	while (nkept < MAXF && put_file(fs, dir, i++, 0))
		;
	for (i = 0; i < MAXF; i++) {
		snprintf(nm, sizeof(nm), "d%u", i);
		if (daxfs_mkdir(fs, dir, nm, strlen(nm), 040755, 0, 0, &d))
			break;
	}
}

static bool is_space_err(int err)
{
	return err == -ENOSPC || err == -ENFILE;
}

/* One failing attempt of kind op (number t); counts the ENOSPC answers. */
static u32 attempt(struct daxfs_fs *fs, u64 dir, int op, u32 t)
{
	char nm[32], tgt[300];
	struct kept *k = &kept[t % nkept], *k2 = &kept[(t + 1) % nkept];
	struct daxfs_attr a0, a1;
	u64 ino, pos;
	s64 n;
	int err = 0;

	if (op == OP_MIX)
		op = t % OP_MIX;
	snprintf(nm, sizeof(nm), "new-%d-%u", op, t);
	switch (op) {
	case OP_CREATE:
		err = daxfs_mknod(fs, dir, nm, strlen(nm), 0100644, 0, 0, 0,
				  &ino);
		break;
	case OP_MKDIR:
		err = daxfs_mkdir(fs, dir, nm, strlen(nm), 040755, 0, 0, &ino);
		break;
	case OP_SYMLINK:
		memset(tgt, 'x', sizeof(tgt));
		err = daxfs_symlink(fs, dir, nm, strlen(nm), tgt,
				    1 + t % sizeof(tgt), 0, 0, &ino);
		break;
	case OP_LINK:
		err = daxfs_link(fs, k->ino, dir, nm, strlen(nm));
		break;
	case OP_RENAME:
		err = daxfs_rename(fs, dir, k->name, strlen(k->name), dir, nm,
				   strlen(nm), 0);
		if (!err && daxfs_rename(fs, dir, nm, strlen(nm), dir, k->name,
					 strlen(k->name), 0))
			snprintf(k->name, sizeof(k->name), "%s", nm);
		break;
	case OP_RENAME_OVER:
		err = daxfs_rename(fs, dir, k->name, strlen(k->name), dir,
				   k2->name, strlen(k2->name),
				   DAXFS_RENAME_EXCHANGE);
		if (!err) {	/* the names changed places */
			memcpy(tgt, k->name, sizeof(k->name));
			memcpy(k->name, k2->name, sizeof(k->name));
			memcpy(k2->name, tgt, sizeof(k->name));
		}
		break;
	case OP_WRITE:	/* rewrites with the same bytes, extends past EOF */
		n = daxfs_write(fs, k->ino, k->len + 4096 * (1 + t % 40), 8192,
				0, t_fill_byte, (void *)(uintptr_t)0, &pos);
		err = n < 0 ? (int)n : 0;
		break;
	case OP_APPEND:
		/* block-aligned sizes too: the first block then needs a page
		 * (and every 512th a leaf), which the append readies before
		 * it reserves */
		n = (t & 1) ? 5000 : 4096;
		CHECK_EQ(daxfs_getattr(fs, k->ino, &a0), 0);
		n = daxfs_write(fs, k->ino, 0, (u64)n, DAXFS_WRITE_APPEND,
				t_fill_byte, (void *)(uintptr_t)0, &pos);
		err = n < 0 ? (int)n : 0;
		CHECK_EQ(daxfs_getattr(fs, k->ino, &a1), 0);
		/* an append that failed had no effect; one that stored
		 * anything reserved all of its range */
		if (n < 0)
			CHECK_EQ(a1.size, a0.size);
		else
			CHECK_EQ(a1.size, a0.size + ((t & 1) ? 5000 : 4096));
		break;
	case OP_TRUNCATE:
		err = daxfs_truncate(fs, k->ino, k->len + MiB);
		break;
	}
	return is_space_err(err);
}

/* Written data reads back (files a successful write extended read zeros
 * past their old length, which the compare below does not look at). */
static void check_kept(struct daxfs_fs *fs, u64 dir)
{
	u32 i, bad = 0;
	u64 ino;

	for (i = 0; i < nkept; i++) {
		struct t_cmp cc = { .c = tag(i) };

		if (kept[i].gone)
			continue;
		if (daxfs_lookup(fs, dir, kept[i].name, strlen(kept[i].name),
				 &ino) || ino != kept[i].ino) {
			bad++;
			continue;
		}
		if (daxfs_read(fs, ino, 0, kept[i].len, t_cmp_actor, &cc) !=
		    (s64)kept[i].len || cc.bad)
			bad++;
	}
	CHECK_EQ(bad, 0);
}

static void report(void *ctx, const struct daxfs_check_problem *p)
{
	printf("    fsck: %s: %s (ino %llu off %llu have %llu want %llu)\n",
	       p->name, p->msg, (unsigned long long)p->ino,
	       (unsigned long long)p->off, (unsigned long long)p->have,
	       (unsigned long long)p->want);
	if (p->code == DAXFS_CHK_LEAK && getenv("T_DUMP")) {
		const u8 *b = (const u8 *)ctx + p->off;
		int i;

		for (i = 0; i < 128; i++)
			printf("%02x%s", b[i], i % 32 == 31 ? "\n" : " ");
	}
}

/* Fill, fail TRIES times with op (hold: while a second host sits in an
 * op), delete some, leave: fsck must find nothing leaked. */
static void run_case(int op, bool hold)
{
	struct daxfs_check_result res;
	struct daxfs_fs fs, fs2;
	struct daxfs_op held;
	u32 t, fails = 0, i;
	u64 dir;
	void *r = t_setup(&fs, SIZE, NULL);

	nkept = 0;
	CHECK_EQ(t_join(&fs2, r, SIZE), 0);
	CHECK_EQ(daxfs_mkdir(&fs, 1, "d", 1, 040755, 0, 0, &dir),
		 0);
	fill(&fs, dir);
	if (hold)
		CHECK_EQ(daxfs_op_begin(&fs2, &held), 0);
	for (t = 0; t < TRIES; t++)
		fails += attempt(&fs, dir, op, t);
	if (hold)
		daxfs_op_end(&held);
	check_kept(&fs, dir);
	/* delete some: the space comes back */
	for (i = 0; i < nkept; i += 3) {
		CHECK_EQ(daxfs_unlink(&fs, dir, kept[i].name,
				      strlen(kept[i].name)), 0);
		kept[i].gone = true;
	}
	daxfs_reclaim_all(&fs);
	check_kept(&fs, dir);
	daxfs_host_leave(&fs2);
	daxfs_host_leave(&fs);
	CHECK_EQ(t_fsck(r, SIZE, false, report, r, &res), 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	CHECK_EQ(res.leaked_bytes, 0);
	if (op != OP_TRUNCATE)	/* a sparse extend needs no space */
		CHECK(fails > 0);	/* the pool was full */
	printf("  %-16s hold=%d: %u files, %u/%u ENOSPC, leaked %llu bytes\n",
	       op_names[op], hold, nkept, fails, TRIES,
	       (unsigned long long)res.leaked_bytes);
	t_region_free(r, SIZE);
}

static void test_fail_leaks_nothing(void)
{
	int op;

	for (op = 0; op < OP_NR; op++) {
		run_case(op, false);
		run_case(op, true);
	}
}

int main(void)
{
	RUN(test_fail_leaks_nothing);
	return t_done();
}
