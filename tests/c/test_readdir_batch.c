// SPDX-License-Identifier: GPL-2.0 OR MIT
/* readdir gathers names from the directory's trie in batches (core/dir.c
 * trie_collect): listings stopped after any number of names and resumed
 * from the position, across batch boundaries, return every name once, in
 * increasing position order; names added and removed between the calls
 * of one listing never make another name appear twice or go missing. */
#include "tutil.h"
#include "core/inode.h"
#include "core/dir.h"

#define SIZE (64ULL << 20)
#define N 3000
#define MAXL (2 * N + 64)

struct seen {
	u32 n;
	u64 last_pos;
	bool order_bad;
	u32 stop_every, since;
	char names[MAXL][16];
};

static struct seen s;
static struct daxfs_fs fs;

static int fill(void *ctx, const char *name, u32 len, u64 ino, u32 dt,
		u64 pos)
{
	struct seen *c = ctx;

	if (c->stop_every && c->since++ == c->stop_every) {
		c->since = 0;
		return 1;
	}
	if (c->n && pos <= c->last_pos)
		c->order_bad = true;
	c->last_pos = pos;
	if (c->n < MAXL && len < 16) {
		memcpy(c->names[c->n], name, len);
		c->names[c->n][len] = 0;
		c->n++;
	}
	return 0;
}

static u32 count(const char *name)
{
	u32 i, k = 0;

	for (i = 0; i < s.n; i++)
		k += !strcmp(s.names[i], name);
	return k;
}

static void make(u64 dir, const char *name)
{
	u64 ino;

	CHECK_EQ(daxfs_mknod(&fs, dir, name, strlen(name), 0100644, 0, 0, 0,
			     &ino), 0);
}

static void start(u32 stop_every)
{
	memset(&s, 0, sizeof(s));
	s.stop_every = stop_every;
}

static void test_chunks(void)
{
	static const u32 chunks[] = { 0, 1, 7, 31, 32, 33, 100 };
	char nm[16];
	u64 dir, pos;
	u32 k, i, bad, calls;

	CHECK_EQ(daxfs_mkdir(&fs, 1, "c", 1, 040755, 0, 0, &dir), 0);
	for (i = 0; i < N; i++) {
		snprintf(nm, sizeof(nm), "n%u", i);
		make(dir, nm);
	}
	for (k = 0; k < sizeof(chunks) / sizeof(chunks[0]); k++) {
		start(chunks[k]);
		pos = 0;
		for (calls = 0; pos != DAXFS_POS_EOF && calls < 4 * N; calls++)
			CHECK_EQ(daxfs_readdir(&fs, dir, &pos, fill, &s), 0);
		CHECK_EQ(pos, DAXFS_POS_EOF);
		CHECK_EQ(s.n, N + 2);
		CHECK(!s.order_bad);
		for (i = 0, bad = 0; i < N; i++) {
			snprintf(nm, sizeof(nm), "n%u", i);
			bad += count(nm) != 1;
		}
		CHECK_EQ(bad, 0);
	}
}

/* Between the calls of one listing, remove names and add others: every
 * name there all along is listed once, none twice, and a name listed
 * existed at some time during the listing. */
static void test_changes_between_calls(void)
{
	char nm[16];
	u64 dir, pos;
	u32 i, calls, bad = 0, made = 0, gone = 0;

	CHECK_EQ(daxfs_mkdir(&fs, 1, "m", 1, 040755, 0, 0, &dir), 0);
	for (i = 0; i < N; i++) {
		snprintf(nm, sizeof(nm), "s%u", i);
		make(dir, nm);
		snprintf(nm, sizeof(nm), "x%u", i);
		make(dir, nm);
	}
	start(40);
	pos = 0;
	for (calls = 0; pos != DAXFS_POS_EOF && calls < 4 * N; calls++) {
		CHECK_EQ(daxfs_readdir(&fs, dir, &pos, fill, &s), 0);
		for (i = 0; i < 5 && gone < N; i++, gone++) {
			snprintf(nm, sizeof(nm), "x%u", gone);
			CHECK_EQ(daxfs_unlink(&fs, dir, nm, strlen(nm)), 0);
		}
		for (i = 0; i < 5; i++, made++) {
			snprintf(nm, sizeof(nm), "y%u", made);
			make(dir, nm);
		}
	}
	CHECK_EQ(pos, DAXFS_POS_EOF);
	CHECK(!s.order_bad);
	for (i = 0; i < N; i++) {
		snprintf(nm, sizeof(nm), "s%u", i);
		bad += count(nm) != 1;
	}
	CHECK_EQ(bad, 0);
	for (i = 0; i < s.n; i++) {
		u32 v;
		char kind = s.names[i][0];

		if (!strcmp(s.names[i], ".") || !strcmp(s.names[i], ".."))
			continue;
		CHECK_EQ(count(s.names[i]), 1);
		v = (u32)strtoul(s.names[i] + 1, NULL, 10);
		CHECK((kind == 's' && v < N) || (kind == 'x' && v < N) ||
		      (kind == 'y' && v < made));
	}
	printf("  %u names listed in %u calls, %u removed, %u added\n", s.n,
	       calls, gone, made);
}

/*
 * Names of one 62-bit hash (leaves chained in one slot: forged here, as
 * siphash collisions are not met by chance) are listed together at that
 * hash's position, every one of them, also when the listing goes on from
 * there (the walk hands the chain's first visible name on as it finds it
 * and the rest after it: core/dir.c emit_trie, emit_rest).
 */
static void test_equal_hashes(void)
{
	static const char *const names[] = { "e0", "e1", "e2", "e3" };
	struct daxfs_inode *dp;
	struct daxfs_op op;
	u64 dir, ino, pos, h, leaf;
	u32 i, k, calls;

	CHECK_EQ(daxfs_mkdir(&fs, 1, "e", 1, 040755, 0, 0, &dir), 0);
	for (i = 0; i < 40; i++) {
		char nm[16];

		snprintf(nm, sizeof(nm), "p%u", i);
		make(dir, nm);
	}
	CHECK_EQ(daxfs_mknod(&fs, dir, "e0", 2, 0100644, 0, 0, 0, &ino), 0);
	h = daxfs_name_hash(&fs, "e0", 2);
	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	CHECK_EQ(daxfs_dir_writable(&op, dir, &dp), 0);
	for (i = 1; i < 4; i++) {
		leaf = daxfs_dirent_new(&op, names[i], 2, h, ino, 8, 0);
		CHECK(leaf != 0);
		CHECK_EQ(daxfs_dir_count_add(dp), 0);
		CHECK_EQ(daxfs_dir_link(&op, dp, leaf, false), 0);
	}
	daxfs_op_end(&op);
	/* whole, then from the names' position (as after a stop there),
	 * then five names per call (a stop inside the chain lists its
	 * earlier names again: docs/directories.md) */
	for (k = 0; k < 3; k++) {
		start(k == 2 ? 5 : 0);
		pos = k == 1 ? h + 2 : 0;
		for (calls = 0; pos != DAXFS_POS_EOF && calls < 400; calls++)
			CHECK_EQ(daxfs_readdir(&fs, dir, &pos, fill, &s), 0);
		CHECK_EQ(pos, DAXFS_POS_EOF);
		for (i = 0; i < 4; i++)
			CHECK(count(names[i]) == 1 || (k == 2 && count(names[i])));
		if (k == 0)
			CHECK_EQ(s.n, 4u + 40u + 2u);
		if (k == 1)	/* the chain first, then greater hashes */
			for (i = 0; i < 4; i++)
				CHECK(s.names[i][0] == 'e');
	}
}

int main(void)
{
	void *r = t_setup(&fs, SIZE, NULL);

	RUN(test_chunks);
	RUN(test_changes_between_calls);
	RUN(test_equal_hashes);
	daxfs_host_leave(&fs);
	t_region_free(r, SIZE);
	return t_done();
}
