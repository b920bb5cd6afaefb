// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Double fetches of directory leaves (issue "Trust under concurrency",
 * defect 5).  Built by `make race`: the core calls daxfs_race_point()
 * right after it loaded and validated a leaf, and the hook below then
 * changes the leaf's name_len in the region, as a buggy peer or a stray
 * store could between the validation and the use.  A host that reads the
 * field again uses a value it never validated: a readdir callback gets a
 * name longer than DAXFS_NAME_MAX (past the leaf, possibly past the
 * region), or a re-validation returns NULL that is dereferenced.  Each
 * case runs in a child under AddressSanitizer; it must exit 0: the op
 * succeeds or fails with -EUCLEAN/-ENOENT, and no callback ever sees a
 * length it could not trust.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "../c/tutil.h"
#include "core/inode.h"
#include "core/dir.h"

#define MiB	(1024ULL * 1024)
#define SIZE	(16 * MiB)
#define ROOT	1ULL

static struct daxfs_fs fs;
static const void *target;	/* leaf whose name_len the hook changes */
static u32 fire_at, hits;	/* change it after this many validations */
static u16 bad_len;
static bool cycle_armed;	/* compaction: close the chain into a cycle */

/* Links the last node of the private chain at p back to its first one. */
static void make_cycle(const void *p)
{
	struct daxfs_free_obj *o = (struct daxfs_free_obj *)p;
	u64 first = (u64)((const char *)p - (const char *)fs.base), n;

	for (n = 0; o->next && n < SIZE / 64; n++)
		o = (struct daxfs_free_obj *)(fs.base + o->next);
	o->next = first;
}

void daxfs_race_point(const char *name, const void *p)
{
	if (!strcmp(name, "compact.checked") && cycle_armed) {
		cycle_armed = false;
		make_cycle(p);
		return;
	}
	if (!target || p != target || strcmp(name, "dirent"))
		return;
	if (++hits == fire_at)
		((struct daxfs_dirent *)target)->name_len = bad_len;
}

/* What a front end does with a name: copy it into a NAME_MAX buffer. */
static int fill(void *ctx, const char *name, u32 len, u64 ino, u32 type,
		u64 pos)
{
	char buf[DAXFS_NAME_MAX + 1];

	if (len > DAXFS_NAME_MAX) {
		fprintf(stderr, "readdir gave a name of %u bytes\n", len);
		exit(3);
	}
	memcpy(buf, name, len);
	buf[len] = 0;
	(*(u32 *)ctx)++;
	return 0;
}

static bool ok_err(int err)
{
	return err >= 0 || err == -EUCLEAN || err == -ENOENT || err == -EEXIST;
}

/* Finds the leaf of name in ROOT (a one-level trie: the root's slots). */
static const void *leaf_of(const char *name)
{
	struct daxfs_op op;
	struct daxfs_dent de;
	struct daxfs_iref ref;
	u64 h = daxfs_name_hash(&fs, name, strlen(name));

	daxfs_op_begin(&fs, &op);
	daxfs_inode_get(&op, ROOT, &ref);
	if (daxfs_dir_find(&op, &ref, name, strlen(name), h, &de) || !de.leaf) {
		daxfs_op_end(&op);
		return NULL;
	}
	daxfs_op_end(&op);
	return fs.base + de.leaf;
}

enum victim { V_READDIR, V_LOOKUP, V_UNLINK, V_RENAME, V_CREATE, V_NR };
static const char *const vname[] = {
	"readdir", "lookup", "unlink", "rename", "create"
};

static int run_victim(enum victim v)
{
	u64 pos = 0, ino;
	u32 n = 0;
	int err;

	switch (v) {
	case V_READDIR:
		do {
			err = daxfs_readdir(&fs, ROOT, &pos, fill, &n);
		} while (!err && pos != DAXFS_POS_EOF && n < 100);
		return err;
	case V_LOOKUP:
		return daxfs_lookup(&fs, ROOT, "victim", 6, &ino);
	case V_UNLINK:
		return daxfs_unlink(&fs, ROOT, "victim", 6);
	case V_RENAME:
		return daxfs_rename(&fs, ROOT, "other", 5, ROOT, "victim", 6, 0);
	case V_CREATE:
		return daxfs_mknod(&fs, ROOT, "victim", 6, DAXFS_S_IFREG | 0644,
				   0, 0, 0, &ino);
	default:
		return 0;
	}
}

static void child(enum victim v, u32 at, u16 len)
{
	u64 ino;
	int err;

	t_setup(&fs, SIZE, NULL);
	/* names chained in one slot would need equal hashes; separate
	 * slots are enough: every op validates the leaf it meets */
	daxfs_mknod(&fs, ROOT, "victim", 6, DAXFS_S_IFREG | 0644, 0, 0, 0, &ino);
	daxfs_mknod(&fs, ROOT, "other", 5, DAXFS_S_IFREG | 0644, 0, 0, 0, &ino);
	target = leaf_of("victim");
	if (!target)
		exit(4);
	fire_at = at;
	bad_len = len;
	err = run_victim(v);
	target = NULL;
	if (!ok_err(err)) {
		fprintf(stderr, "%s: unexpected error %d\n", vname[v], err);
		exit(5);
	}
	exit(0);
}

static void test_leaf_name_len(void)
{
	static const u16 lens[] = { 0, 0xffff, 0x1000 };
	unsigned int v, i, at;
	int status;
	pid_t pid;

	for (v = 0; v < V_NR; v++)
		for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			for (at = 1; at <= 8; at++) {
				fflush(NULL);
				pid = fork();
				if (pid == 0)
					child(v, at, lens[i]);
				waitpid(pid, &status, 0);
				if (!WIFEXITED(status) || WEXITSTATUS(status))
					fprintf(stderr, "%s, name_len -> %u after "
						"validation %u: %s %d\n", vname[v],
						lens[i], at,
						WIFEXITED(status) ? "exit" : "signal",
						WIFEXITED(status) ? WEXITSTATUS(status) :
						WTERMSIG(status));
				CHECK(WIFEXITED(status) && !WEXITSTATUS(status));
			}
}

/*
 * Compaction validates the private chain it took once (chain_check) and
 * then sorts and walks it: a link changed into a cycle after the check
 * must not make it walk forever (the child gets SIGALRM) or free a page
 * with objects still linked twice.
 */
static void compact_child(void)
{
	struct daxfs_op op;
	u64 objs[512], n = 0, i, x;

	t_setup(&fs, SIZE, NULL);
	daxfs_op_begin(&fs, &op);
	while (n < 512 && (x = daxfs_alloc(&op, DAXFS_CLASS_64)))
		objs[n++] = x;
	for (i = 0; i < n; i++)
		CHECK_EQ(daxfs_free_now(&op, objs[i], DAXFS_CLASS_64), 0);
	cycle_armed = true;
	alarm(20);
	daxfs_compact(&op);
	daxfs_op_end(&op);
	exit(cycle_armed ? 6 : 0);	/* the hook must have run */
}

static void test_compact_cycle(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		compact_child();
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status))
		fprintf(stderr, "compaction of a cyclic chain: signal %d\n",
			WTERMSIG(status));
	CHECK(WIFEXITED(status) && !WEXITSTATUS(status));
}

int main(void)
{
	RUN(test_leaf_name_len);
	RUN(test_compact_cycle);
	return t_done();
}
