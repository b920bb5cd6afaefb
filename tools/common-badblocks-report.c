// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fsck.daxfs: what each known bad range of the region holds
 * (tools/badblocks.h, docs/fsck.md "Bad ranges").  The checker reports
 * the objects it walks onto a bad range; this says, range by range, what
 * is lost, naming files by path.
 */
#include <stdlib.h>
#include <string.h>

#include "include/daxfs/libdaxfs.h"
#include "core/daxfs_core.h"
#include "core/inode.h"
#include "tools/badblocks.h"
#include "tools/common.h"

/* A walk from the root finds paths for the inodes hit; bounded, so that a
 * huge tree cannot keep fsck busy after its check. */
#define BB_WALK_MAX	(1u << 20)
#define BB_PATH_MAX	4096

struct bb_dir {
	uint64_t ino;
	char *path;
};

struct bb_walk {
	const struct bad_hit *hits;
	uint64_t nr_hits;
	char **names;		/* [nr_hits]: path found, or NULL */
	struct bb_dir *q;
	uint64_t qlen, qcap, steps;
	const char *dir;	/* path of the directory being read */
	int err;
};

static char *bb_join(const char *dir, const char *name, uint32_t len)
{
	size_t dl = strlen(dir);
	char *p;

	if (dl + 1 + len + 1 > BB_PATH_MAX)
		return NULL;
	p = malloc(dl + 1 + len + 1);
	if (!p)
		return NULL;
	memcpy(p, dir, dl);
	p[dl] = '/';
	memcpy(p + dl + 1, name, len);
	p[dl + 1 + len] = '\0';
	return p;
}

static int bb_fill(void *ctx, const char *name, u32 len, u64 ino, u32 dtype, u64 pos)
{
	struct bb_walk *w = ctx;
	const char *dir = strcmp(w->dir, "/") ? w->dir : "";
	struct bb_dir *q;
	uint64_t i;
	char *p;

	(void)pos;
	if (++w->steps > BB_WALK_MAX)
		return 1;
	if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
		return 0;
	for (i = 0; i < w->nr_hits; i++) {
		if (w->hits[i].ino == ino && !w->names[i])
			w->names[i] = bb_join(dir, name, len);
	}
	if (dtype != DAXFS_DT_DIR)
		return 0;
	if (w->qlen == w->qcap) {
		w->qcap = w->qcap ? 2 * w->qcap : 64;
		q = realloc(w->q, w->qcap * sizeof(*q));
		if (!q)
			return 1;
		w->q = q;
	}
	p = bb_join(dir, name, len);
	if (!p)
		return 0;
	w->q[w->qlen].ino = ino;
	w->q[w->qlen++].path = p;
	return 0;
}

/* Fills w->names by a breadth-first walk from the root. */
static void bb_find_paths(struct bb_walk *w, struct daxfs_fs *fs)
{
	uint64_t head = 0, i;
	u64 pos;

	w->q = malloc(sizeof(*w->q));
	if (!w->q)
		return;
	w->qcap = 1;
	w->q[0].ino = fs->sb.root_ino;
	w->q[0].path = strdup("/");
	w->qlen = w->q[0].path ? 1 : 0;
	for (i = 0; i < w->nr_hits; i++)
		if (w->hits[i].ino == fs->sb.root_ino)
			w->names[i] = strdup("/");
	while (head < w->qlen && w->steps <= BB_WALK_MAX) {
		pos = 0;
		w->dir = w->q[head].path;
		if (daxfs_readdir(fs, w->q[head].ino, &pos, bb_fill, w) < 0)
			w->err++;
		head++;
	}
	for (i = 0; i < w->qlen; i++)
		free(w->q[i].path);
	free(w->q);
}

/* The fixed part of the layout that [off, end) meets, or NULL. */
static const char *bb_fixed(struct daxfs_fs *fs, uint64_t off, uint64_t end)
{
	static const char *const what[DAXFS_RGN_MAX] = {
		[DAXFS_RGN_STATE] = "the state page (free-space heads, counters)",
		[DAXFS_RGN_HOSTS] = "the host table (leases, open sets)",
		[DAXFS_RGN_BUCKETS] = "the overlay hash table (which inodes exist)",
		[DAXFS_RGN_BASE] = "the base image (files from mkfs --source)",
		[DAXFS_RGN_PCACHE] = "the shared page cache (copies of backing files)",
		[DAXFS_RGN_LANES] = "the lanes (operations in progress)",
	};
	const struct daxfs_region_desc *r;
	uint32_t i;

	if (off < DAXFS_BLOCK_SIZE)
		return "the superblock";
	for (i = 0; i < DAXFS_RGN_MAX; i++) {
		r = &fs->sb.regions[i];
		if (r->kind && r->kind < DAXFS_RGN_MAX && what[r->kind] &&
		    off < r->offset + r->size && r->offset < end)
			return what[r->kind];
	}
	return NULL;
}

static void bb_print_hit(FILE *out, const struct bad_hit *h, const char *path,
			 bool zeroed)
{
	const char *name = path ? path : "(no path found)";

	if (h->page)
		fprintf(out, "    file %s (inode %llu): data of its page %llu (file bytes %llu-%llu) %s\n",
			name, (unsigned long long)h->ino, (unsigned long long)(h->page - 1),
			(unsigned long long)((h->page - 1) * DAXFS_BLOCK_SIZE),
			(unsigned long long)(h->page * DAXFS_BLOCK_SIZE - 1),
			zeroed ? "is LOST: replaced by zeros" :
			"cannot be read (EIO); fsck.daxfs -y replaces the page by zeros");
	else if (h->ino)
		fprintf(out, "    %s (inode %llu): metadata at 0x%llx (inode record, directory "
			"entries or data index) %s\n", name, (unsigned long long)h->ino,
			(unsigned long long)h->off,
			zeroed ? "LOST: see the repairs above" :
			"is unreadable; fsck.daxfs -y zeroes it and repairs what depends on it");
	else
		fprintf(out, "    filesystem metadata at 0x%llx %s\n", (unsigned long long)h->off,
			zeroed ? "LOST: see the repairs above" : "is unreadable");
}

void bad_ranges_report(FILE *out, const char *target, const struct bad_ranges *b,
		       struct daxfs_fs *fs, const struct bad_hit *hits, uint64_t nr_hits,
		       bool zeroed)
{
	struct bb_walk w = { .hits = hits, .nr_hits = nr_hits };
	const char *fixed;
	uint64_t i, j, any;

	if (!b->n)
		return;
	w.names = calloc(nr_hits ? nr_hits : 1, sizeof(*w.names));
	if (fs && w.names && nr_hits)
		bb_find_paths(&w, fs);
	fprintf(out, "%s: %llu bad range(s) listed in %s:\n", target,
		(unsigned long long)b->n, b->src);
	for (i = 0; i < b->n; i++) {
		uint64_t s = b->r[2 * i], e = b->r[2 * i + 1];

		fprintf(out, "  bytes 0x%llx-0x%llx (%llu page(s))%s:\n", (unsigned long long)s,
			(unsigned long long)(e - 1), (unsigned long long)((e - s) / DAXFS_BLOCK_SIZE),
			zeroed ? ", overwritten with zeros" : "");
		any = 0;
		fixed = fs ? bb_fixed(fs, s, e) : NULL;
		if (fixed) {
			fprintf(out, "    %s: %s\n", fixed, zeroed ? "LOST, see the repairs above" :
				"unreadable");
			any++;
		}
		for (j = 0; j < nr_hits; j++) {
			if (hits[j].range != s)
				continue;
			bb_print_hit(out, &hits[j], w.names ? w.names[j] : NULL, zeroed);
			any++;
		}
		if (!any && fs)
			fprintf(out, "    nothing in use (free space)\n");
		else if (!any)
			fprintf(out, "    what it holds is unknown: the filesystem could not be opened\n");
	}
	if (w.names)
		for (j = 0; j < nr_hits; j++)
			free(w.names[j]);
	free(w.names);
}
