// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * An unlink removes its leaf starting from the trie slot its lookup found
 * the leaf's chain in (daxfs_dir_remove_dent, docs/directories.md
 * "Invariants"), not from a second descent.  Another host's create may
 * push that chain down between the two: the slot then holds a node, and
 * the removal must descend from the root instead of taking the node for
 * a chain.  Built by `make race`: the hook, at the lookup's validation of
 * the leaf, creates a name whose hash shares the leaf's first level (so
 * the create pushes the leaf down into a new node).  The unlink must
 * succeed, the other name stay, and both directories' views agree.
 */
#include "../c/tfile.h"
#include "core/dir.h"

#define REGION (16 * 1024 * 1024ULL)
#define ROOT 1ULL

static struct daxfs_fs *the_fs;
static u64 the_dir;
static const void *armed;	/* the leaf whose next validation acts */
static char other[32];
static int pushed, push_err = -1;

void daxfs_race_point(const char *name, const void *p)
{
	u64 ino;

	if (!armed || p != armed || strcmp(name, "dirent"))
		return;
	armed = NULL;	/* the create below validates the leaf too */
	push_err = daxfs_mknod(the_fs, the_dir, other, strlen(other),
			       DAXFS_S_IFREG | 0644, 0, 0, 0, &ino);
	pushed++;
}

/* The slot of dir's root node at level 0 for hash. */
static u64 root_slot(struct daxfs_fs *fs, u64 dir, u64 hash)
{
	struct daxfs_inode *dp = t_ip(fs, dir);
	struct daxfs_trie_node *root;

	root = (void *)((u8 *)fs->base + daxfs_load(&dp->root));
	return daxfs_load(&root->slot[daxfs_trie_idx(hash, 0)]);
}

int main(void)
{
	struct daxfs_fs fs;
	void *region = t_setup(&fs, REGION, NULL);
	u64 dir = 0, ino = 0, hx, h, v;
	struct daxfs_attr a;
	int i;

	the_fs = &fs;
	CHECK_EQ(daxfs_mkdir(&fs, ROOT, "d", 1, DAXFS_S_IFDIR | 0755, 0, 0,
			     &dir), 0);
	the_dir = dir;
	CHECK_EQ(daxfs_mknod(&fs, dir, "x", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), 0);
	hx = daxfs_name_hash(&fs, "x", 1);
	/* x's leaf sits right in the root node's slot */
	v = root_slot(&fs, dir, hx);
	CHECK_EQ(v & DAXFS_SLOT_TAG_MASK, DAXFS_SLOT_LEAF);
	for (i = 0; i < 100000; i++) {
		snprintf(other, sizeof(other), "y%d", i);
		h = daxfs_name_hash(&fs, other, strlen(other));
		if (h != hx && daxfs_trie_idx(h, 0) == daxfs_trie_idx(hx, 0))
			break;
	}
	CHECK(i < 100000);
	armed = (u8 *)fs.base + (v & ~DAXFS_SLOT_TAG_MASK);
	CHECK_EQ(daxfs_unlink(&fs, dir, "x", 1), 0);
	CHECK_EQ(pushed, 1);
	CHECK_EQ(push_err, 0);
	/* the create pushed x's chain down: the slot the lookup saw holds a
	 * node now */
	CHECK_EQ(root_slot(&fs, dir, hx) & DAXFS_SLOT_TAG_MASK,
		 DAXFS_SLOT_NODE);
	CHECK_EQ(daxfs_lookup(&fs, dir, "x", 1, &ino), -ENOENT);
	CHECK_EQ(daxfs_lookup(&fs, dir, other, strlen(other), &ino), 0);
	CHECK_EQ(daxfs_getattr(&fs, dir, &a), 0);
	CHECK_EQ(a.nlink, 2);
	CHECK_EQ(daxfs_unlink(&fs, dir, other, strlen(other)), 0);
	CHECK_EQ(daxfs_rmdir(&fs, ROOT, "d", 1), 0);
	daxfs_host_leave(&fs);
	t_region_free(region, REGION);
	return t_done();
}
