// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Base image builder for `mkfs.daxfs --source DIR`.
 *
 * Two passes.  The scan walks the source tree once (lstat, no symlink
 * following), numbers the inodes breadth first so that every directory's
 * entries are one contiguous run of the dirent array, folds hard links into
 * one inode, and computes where every file's data will go.  Nothing but
 * names and attributes is kept in memory.  The write pass then lays out
 * the image directly in the BASE region of the target:
 *
 *   page 0          struct daxfs_base_header
 *   inode_off       struct daxfs_base_inode[nr_inodes]  (inode i+1 = index i)
 *   dirent_off      struct daxfs_base_dirent[nr_dirents] (right after inodes)
 *   data_off        symlink targets (8-byte aligned), then file data, each
 *                   file starting on a 4 KiB boundary
 *
 * Offsets in the image are relative to the start of the BASE region.
 * Directory entries of a directory are sorted by name.  meta_csum covers the
 * inode table and the dirent array (one contiguous range); csum covers the
 * header bytes before it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "core/daxfs_core.h"
#include "include/daxfs/libdaxfs.h"
#include "common.h"

#define PAGE		4096ULL
#define ALIGN_UP(x, a)	(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

/* Seed of the CRC32C checksums, the same as the core uses for headers. */
#define BASE_CRC_SEED	0u

struct bnode {
	char *path;			/* full source path (files, symlinks) */
	char *name;			/* last component */
	struct stat st;
	struct bnode **kids;		/* directories: children, sorted */
	uint64_t nkids;
	uint64_t ino;			/* 1-based; 0 until numbered */
	uint64_t first_dirent;		/* directories */
	uint64_t parent_ino;
	uint64_t nlink;			/* links inside the tree */
	uint64_t data;			/* files/symlinks: data offset */
	char *target;			/* symlinks */
	uint32_t bidx;			/* split mode: backing file of a file */
};

struct link_slot {
	dev_t dev;
	ino_t ino;
	struct bnode *node;
};

struct base_image {
	struct bnode *root;
	struct bnode **inodes;		/* by index (ino - 1) */
	uint64_t nr_inodes;
	uint64_t nr_dirents;
	uint64_t inode_off, dirent_off, data_off, data_size, image_size;
	struct base_image_stats st;
	struct link_slot *links;	/* hard-link table (open addressing) */
	uint64_t nr_links_cap, nr_links;
	struct progress prog;
	uint64_t scanned;
	/* split mode (--backing): regular file data goes to backing files */
	bool split;
	unsigned int nr_backing;
	uint64_t bk_size[DAXFS_PCACHE_MAX_BACKING];
};

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz);

	if (!p) {
		tool_err("out of memory while scanning the source tree");
		exit(MKFS_EXIT_ERROR);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		tool_err("out of memory while scanning the source tree");
		exit(MKFS_EXIT_ERROR);
	}
	return p;
}

static uint64_t link_hash(dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	h ^= h >> 29;
	return h * 0xbf58476d1ce4e5b9ULL;
}

static void links_grow(struct base_image *bi);

/* The node already seen for (dev, ino), or NULL after remembering n. */
static struct bnode *link_find_or_add(struct base_image *bi, struct bnode *n)
{
	uint64_t i;

	if ((bi->nr_links + 1) * 2 > bi->nr_links_cap)
		links_grow(bi);
	i = link_hash(n->st.st_dev, n->st.st_ino) & (bi->nr_links_cap - 1);
	for (;; i = (i + 1) & (bi->nr_links_cap - 1)) {
		struct link_slot *s = &bi->links[i];

		if (!s->node) {
			s->dev = n->st.st_dev;
			s->ino = n->st.st_ino;
			s->node = n;
			bi->nr_links++;
			return NULL;
		}
		if (s->dev == n->st.st_dev && s->ino == n->st.st_ino)
			return s->node;
	}
}

static void links_grow(struct base_image *bi)
{
	struct link_slot *old = bi->links;
	uint64_t oldcap = bi->nr_links_cap, i;

	bi->nr_links_cap = oldcap ? oldcap * 2 : 1024;
	bi->links = xcalloc(bi->nr_links_cap, sizeof(*bi->links));
	bi->nr_links = 0;
	for (i = 0; i < oldcap; i++)
		if (old[i].node)
			link_find_or_add(bi, old[i].node);
	free(old);
}

static int cmp_name(const void *a, const void *b)
{
	const struct bnode *x = *(struct bnode *const *)a;
	const struct bnode *y = *(struct bnode *const *)b;

	return strcmp(x->name, y->name);
}

static int scan_dir(struct base_image *bi, struct bnode *dir, unsigned int depth);

static int scan_entry(struct base_image *bi, struct bnode *n, unsigned int depth)
{
	if (S_ISDIR(n->st.st_mode))
		return scan_dir(bi, n, depth + 1);
	if (S_ISLNK(n->st.st_mode)) {
		uint64_t cap = (uint64_t)n->st.st_size + 1;
		ssize_t len;

		if (cap < 64)
			cap = 64;
		for (;;) {
			n->target = xcalloc(1, cap);
			len = readlink(n->path, n->target, cap);
			if (len < 0) {
				tool_errno(errno, "cannot read symbolic link %s", n->path);
				return -errno;
			}
			if ((uint64_t)len < cap)
				break;
			free(n->target);
			cap *= 2;
		}
		if ((uint64_t)len > DAXFS_SYMLINK_MAX) {
			tool_err("symbolic link %s: target longer than %u bytes",
				 n->path, DAXFS_SYMLINK_MAX);
			return -ENAMETOOLONG;
		}
		n->st.st_size = len;
		return 0;
	}
	if (S_ISREG(n->st.st_mode) && (uint64_t)n->st.st_size > DAXFS_MAX_FILE_SIZE) {
		tool_err("%s: file larger than the DaxFS maximum", n->path);
		return -EFBIG;
	}
	return 0;
}

static int scan_dir(struct base_image *bi, struct bnode *dir, unsigned int depth)
{
	DIR *d;
	struct dirent *de;
	uint64_t cap = 16, i;
	int ret = 0;

	if (depth > 4096) {
		tool_err("%s: directory tree too deep", dir->path);
		return -ELOOP;
	}
	d = opendir(dir->path);
	if (!d) {
		tool_errno(errno, "cannot open directory %s", dir->path);
		return -errno;
	}
	dir->kids = xcalloc(cap, sizeof(*dir->kids));
	while ((errno = 0, de = readdir(d))) {
		struct bnode *n;
		size_t plen;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (dir->nkids == cap) {
			cap *= 2;
			dir->kids = realloc(dir->kids, cap * sizeof(*dir->kids));
			if (!dir->kids) {
				tool_err("out of memory while scanning the source tree");
				exit(MKFS_EXIT_ERROR);
			}
		}
		n = xcalloc(1, sizeof(*n));
		plen = strlen(dir->path) + strlen(de->d_name) + 2;
		n->path = xcalloc(1, plen);
		snprintf(n->path, plen, "%s/%s", dir->path, de->d_name);
		n->name = n->path + strlen(dir->path) + 1;
		if (lstat(n->path, &n->st)) {
			tool_errno(errno, "cannot stat %s", n->path);
			ret = -errno;
			free(n->path);
			free(n);
			break;
		}
		dir->kids[dir->nkids++] = n;
		bi->scanned++;
		progress_update(&bi->prog, "scanning source, entries:", bi->scanned, 0);
		ret = scan_entry(bi, n, depth);
		if (ret)
			break;
	}
	if (!ret && errno) {
		tool_errno(errno, "cannot read directory %s", dir->path);
		ret = -errno;
	}
	closedir(d);
	if (ret)
		return ret;
	qsort(dir->kids, dir->nkids, sizeof(*dir->kids), cmp_name);
	for (i = 0; i < dir->nkids; i++)
		if (strlen(dir->kids[i]->name) > DAXFS_NAME_MAX) {
			tool_err("%s: name longer than %u bytes", dir->kids[i]->path,
				 DAXFS_NAME_MAX);
			return -ENAMETOOLONG;
		}
	return 0;
}

static void add_inode(struct base_image *bi, struct bnode *n, uint64_t *cap)
{
	if (bi->nr_inodes == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		bi->inodes = realloc(bi->inodes, *cap * sizeof(*bi->inodes));
		if (!bi->inodes) {
			tool_err("out of memory while scanning the source tree");
			exit(MKFS_EXIT_ERROR);
		}
	}
	bi->inodes[bi->nr_inodes++] = n;
	n->ino = bi->nr_inodes;
}

/* Breadth-first numbering: a directory's entries are contiguous dirents. */
static void number_inodes(struct base_image *bi)
{
	uint64_t cap = 0, qi, i;

	add_inode(bi, bi->root, &cap);
	bi->root->parent_ino = 1;
	bi->root->nlink = 2;
	/* bi->inodes doubles as the BFS queue: directories are visited in
	 * inode order, and each visit appends its new children */
	for (qi = 0; qi < bi->nr_inodes; qi++) {
		struct bnode *d = bi->inodes[qi];

		if (!S_ISDIR(d->st.st_mode))
			continue;
		d->first_dirent = bi->nr_dirents;
		bi->nr_dirents += d->nkids;
		for (i = 0; i < d->nkids; i++) {
			struct bnode *n = d->kids[i];
			struct bnode *prev = NULL;

			if (S_ISDIR(n->st.st_mode)) {
				d->nlink++;
				n->nlink = 2;
				n->parent_ino = d->ino;
				add_inode(bi, n, &cap);
				continue;
			}
			if (n->st.st_nlink > 1)
				prev = link_find_or_add(bi, n);
			if (prev) {
				/* the dirent names the first node's inode */
				n->ino = prev->ino;
				prev->nlink++;
				bi->st.nr_hardlinks++;
				continue;
			}
			n->nlink = 1;
			add_inode(bi, n, &cap);
		}
	}
}

/* Symlink targets go first in the data area, packed: returns the page
 * after them. */
static uint64_t place_symlinks(struct base_image *bi)
{
	uint64_t i, off = bi->data_off;

	for (i = 0; i < bi->nr_inodes; i++) {
		struct bnode *n = bi->inodes[i];

		if (!S_ISLNK(n->st.st_mode))
			continue;
		n->data = off;
		off = ALIGN_UP(off + (uint64_t)n->st.st_size, 8);
	}
	return ALIGN_UP(off, PAGE);
}

static void plan_data(struct base_image *bi)
{
	uint64_t i, off;

	bi->inode_off = PAGE;
	bi->dirent_off = bi->inode_off + bi->nr_inodes * sizeof(struct daxfs_base_inode);
	bi->data_off = ALIGN_UP(bi->dirent_off +
				bi->nr_dirents * sizeof(struct daxfs_base_dirent), PAGE);
	off = place_symlinks(bi);
	for (i = 0; i < bi->nr_inodes; i++) {
		struct bnode *n = bi->inodes[i];

		if (S_ISDIR(n->st.st_mode)) {
			bi->st.nr_dirs++;
		} else if (S_ISREG(n->st.st_mode)) {
			bi->st.nr_files++;
			n->data = off;
			off = ALIGN_UP(off + (uint64_t)n->st.st_size, PAGE);
			bi->st.data_bytes += (uint64_t)n->st.st_size;
		} else if (S_ISLNK(n->st.st_mode)) {
			bi->st.nr_symlinks++;
			bi->st.data_bytes += (uint64_t)n->st.st_size;
		} else {
			bi->st.nr_special++;
		}
	}
	bi->data_size = off - bi->data_off;
	bi->image_size = off;
	bi->st.nr_inodes = bi->nr_inodes;
	bi->st.nr_dirents = bi->nr_dirents;
	bi->st.image_size = bi->image_size;
}

int base_image_scan(const char *dir, bool quiet, struct base_image **out)
{
	struct base_image *bi = xcalloc(1, sizeof(*bi));
	struct bnode *root = xcalloc(1, sizeof(*root));
	size_t len = strlen(dir);
	int ret;

	progress_init(&bi->prog, quiet);
	root->path = xstrdup(dir);
	while (len > 1 && root->path[len - 1] == '/')
		root->path[--len] = '\0';
	root->name = root->path;
	bi->root = root;
	if (stat(root->path, &root->st)) {
		ret = -errno;
		tool_errno(errno, "--source %s", dir);
		goto fail;
	}
	if (!S_ISDIR(root->st.st_mode)) {
		ret = -ENOTDIR;
		tool_err("--source %s: not a directory", dir);
		goto fail;
	}
	ret = scan_dir(bi, root, 0);
	progress_done(&bi->prog);
	if (ret)
		goto fail;
	number_inodes(bi);
	plan_data(bi);
	*out = bi;
	return 0;
fail:
	base_image_free(bi);
	return ret;
}

void base_image_stats(const struct base_image *bi, struct base_image_stats *st)
{
	*st = bi->st;
}

/* Opens source file n for copying its data: fd, or -errno (with a message). */
static int open_source(const struct bnode *n)
{
	int fd = open(n->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int err = errno;

		tool_errno(err, "cannot open %s", n->path);
		return -err;
	}
	return fd;
}

/* Closes source fd of n once got bytes were copied: -EAGAIN (with a
 * message) when the file changed size since the scan. */
static int close_source(const struct bnode *n, int fd, uint64_t got)
{
	uint64_t size = (uint64_t)n->st.st_size;
	struct stat st;
	int ret = 0;

	if (got != size || fstat(fd, &st) || (uint64_t)st.st_size != size) {
		tool_err("%s changed size while mkfs was copying it; run mkfs again "
			 "on a quiet source tree", n->path);
		ret = -EAGAIN;
	}
	close(fd);
	return ret;
}

static int copy_file(struct base_image *bi, struct bnode *n, uint8_t *dst,
		     uint64_t *done, uint64_t total)
{
	uint64_t size = (uint64_t)n->st.st_size, got = 0;
	int fd = open_source(n);

	if (fd < 0)
		return fd;
	while (got < size) {
		size_t chunk = size - got > (1u << 24) ? (1u << 24) : (size_t)(size - got);
		ssize_t r = read(fd, dst + got, chunk);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			tool_errno(errno, "cannot read %s", n->path);
			close(fd);
			return -errno;
		}
		if (r == 0)
			break;
		got += (uint64_t)r;
		*done += (uint64_t)r;
		progress_update(&bi->prog, "copying data, MiB:", *done >> 20, total >> 20);
	}
	return close_source(n, fd, got);
}

static void fill_inode(struct bnode *n, struct daxfs_base_inode *bip, bool split)
{
	memset(bip, 0, sizeof(*bip));
	bip->mode = (uint32_t)n->st.st_mode;
	bip->uid = (uint32_t)n->st.st_uid;
	bip->gid = (uint32_t)n->st.st_gid;
	bip->nlink = (uint32_t)n->nlink;
	bip->mtime_ns = (int64_t)n->st.st_mtim.tv_sec * 1000000000LL + n->st.st_mtim.tv_nsec;
	if (S_ISDIR(n->st.st_mode)) {
		bip->data = n->first_dirent;
		bip->count = n->nkids;
		bip->parent = n->parent_ino;
	} else if (S_ISREG(n->st.st_mode) || S_ISLNK(n->st.st_mode)) {
		bip->size = (uint64_t)n->st.st_size;
		bip->data = n->data;
		if (split && S_ISREG(n->st.st_mode))
			bip->count = n->bidx;	/* data is in backing file bidx */
	} else if (S_ISCHR(n->st.st_mode) || S_ISBLK(n->st.st_mode)) {
		bip->rdev = daxfs_encode_dev(n->st.st_rdev);
	}
}

int base_image_write(struct base_image *bi, void *dst, uint64_t size, bool quiet)
{
	uint8_t *img = dst;
	struct daxfs_base_header *bh = dst;
	struct daxfs_base_inode *inodes = (void *)(img + bi->inode_off);
	struct daxfs_base_dirent *dirents = (void *)(img + bi->dirent_off);
	uint64_t i, j, done = 0, meta_end;
	int ret;

	if (size < bi->image_size) {
		tool_err("internal error: base region of %llu bytes, image needs %llu",
			 (unsigned long long)size, (unsigned long long)bi->image_size);
		return -ENOSPC;
	}
	progress_init(&bi->prog, quiet);
	memset(img, 0, bi->data_off);
	for (i = 0; i < bi->nr_inodes; i++) {
		struct bnode *n = bi->inodes[i];

		fill_inode(n, &inodes[i], bi->split);
		if (!S_ISDIR(n->st.st_mode))
			continue;
		for (j = 0; j < n->nkids; j++) {
			struct daxfs_base_dirent *de = &dirents[n->first_dirent + j];
			struct bnode *k = n->kids[j];
			size_t len = strlen(k->name);

			de->ino = k->ino;
			de->name_len = (uint16_t)len;
			de->type = (uint8_t)((k->st.st_mode & S_IFMT) >> 12);
			memcpy(de->name, k->name, len);
		}
	}
	/* data area: zero everything, then fill */
	memset(img + bi->data_off, 0, size - bi->data_off);
	for (i = 0; i < bi->nr_inodes; i++) {
		struct bnode *n = bi->inodes[i];

		if (S_ISLNK(n->st.st_mode)) {
			memcpy(img + n->data, n->target, (size_t)n->st.st_size);
		} else if (S_ISREG(n->st.st_mode) && n->st.st_size && !bi->split) {
			ret = copy_file(bi, n, img + n->data, &done, bi->st.data_bytes);
			if (ret) {
				progress_done(&bi->prog);
				return ret;
			}
		}
	}
	progress_done(&bi->prog);

	bh->magic = DAXFS_BASE_MAGIC;
	bh->version = DAXFS_VERSION;
	bh->header_size = sizeof(*bh);
	bh->nr_inodes = bi->nr_inodes;
	bh->inode_off = bi->inode_off;
	bh->nr_dirents = bi->nr_dirents;
	bh->dirent_off = bi->dirent_off;
	bh->data_off = bi->data_off;
	bh->data_size = bi->data_size;
	bh->flags = bi->split ? DAXFS_BASE_F_BACKING : 0;
	meta_end = bi->dirent_off + bi->nr_dirents * sizeof(struct daxfs_base_dirent);
	bh->meta_csum = daxfs_crc32c(BASE_CRC_SEED, img + bi->inode_off,
				     meta_end - bi->inode_off);
	bh->csum = daxfs_crc32c(BASE_CRC_SEED, bh, offsetof(struct daxfs_base_header, csum));
	return 0;
}

/* ---- split mode: file data in backing files ---- */

int base_image_split(struct base_image *bi, unsigned int nr, uint64_t max_per_file)
{
	uint64_t i, off;
	unsigned int b;

	if (!nr || nr > DAXFS_PCACHE_MAX_BACKING)
		return -EINVAL;
	bi->split = true;
	bi->nr_backing = nr;
	for (b = 0; b < nr; b++)
		bi->bk_size[b] = DAXFS_BACKING_DATA_OFF;
	for (i = 0; i < bi->nr_inodes; i++) {
		struct bnode *n = bi->inodes[i];
		uint64_t need;
		unsigned int best = 0;

		if (!S_ISREG(n->st.st_mode))
			continue;
		need = ALIGN_UP((uint64_t)n->st.st_size, PAGE);
		if (max_per_file) {
			/* first fit under the cap */
			for (best = 0; best < nr; best++)
				if (bi->bk_size[best] + need <= max_per_file)
					break;
			if (best == nr) {
				tool_err("%s (%llu bytes) does not fit any backing file "
					 "under --backing-max; give more --backing files "
					 "or a larger cap", n->path,
					 (unsigned long long)n->st.st_size);
				return -EFBIG;
			}
		} else {
			/* balance: the least filled backing file */
			for (b = 1; b < nr; b++)
				if (bi->bk_size[b] < bi->bk_size[best])
					best = b;
		}
		n->bidx = best;
		n->data = bi->bk_size[best];
		bi->bk_size[best] += need;
	}
	/* the base region keeps metadata and symlink targets only */
	off = place_symlinks(bi);
	if (off == bi->data_off)
		off += PAGE;	/* keep a non-empty data area */
	bi->data_size = off - bi->data_off;
	bi->image_size = off;
	bi->st.image_size = off;
	return 0;
}

uint64_t base_image_backing_size(const struct base_image *bi, unsigned int idx)
{
	return idx < bi->nr_backing ? bi->bk_size[idx] : 0;
}

/* Copies file n into fd at n->data. */
static int copy_to_backing(struct base_image *bi, struct bnode *n, int fd, uint8_t *buf,
			   uint64_t *done, uint64_t total)
{
	uint64_t size = (uint64_t)n->st.st_size, got = 0;
	int in = open_source(n);

	if (in < 0)
		return in;
	while (got < size) {
		size_t chunk = size - got > (1u << 20) ? (1u << 20) : (size_t)(size - got);
		ssize_t r = read(in, buf, chunk), w;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			tool_errno(errno, "cannot read %s", n->path);
			close(in);
			return -EIO;
		}
		if (r == 0)
			break;
		/* all-zero chunks stay holes (sparse sources stay sparse) */
		w = r;
		if (buf[0] || memcmp(buf, buf + 1, (size_t)r - 1))
			w = pwrite(fd, buf, (size_t)r, (off_t)(n->data + got));
		if (w != r) {
			tool_errno(w < 0 ? errno : ENOSPC, "cannot write a backing file");
			close(in);
			return -EIO;
		}
		got += (uint64_t)r;
		*done += (uint64_t)r;
		progress_update(&bi->prog, "writing backing data, MiB:", *done >> 20,
				total >> 20);
	}
	return close_source(n, in, got);
}

int base_image_write_backing(struct base_image *bi, const char *const *paths, bool force,
			     bool quiet, struct daxfs_backing_desc *descs)
{
	uint64_t done = 0, i;
	unsigned int b;
	uint8_t *buf;
	int ret = 0;

	buf = malloc(1u << 20);
	if (!buf) {
		tool_err("out of memory");
		return -ENOMEM;
	}
	progress_init(&bi->prog, quiet);
	for (b = 0; b < bi->nr_backing && !ret; b++) {
		struct daxfs_backing_header h;
		struct stat st;
		const char *base;
		int fd;

		if (!force && !stat(paths[b], &st) && S_ISREG(st.st_mode) && st.st_size) {
			tool_err("backing file %s exists and is not empty; use -f to "
				 "overwrite it", paths[b]);
			ret = -EEXIST;
			break;
		}
		fd = open(paths[b], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			tool_errno(errno, "cannot create backing file %s", paths[b]);
			ret = -errno;
			break;
		}
		for (i = 0; i < bi->nr_inodes && !ret; i++) {
			struct bnode *n = bi->inodes[i];

			if (S_ISREG(n->st.st_mode) && n->bidx == b && n->st.st_size)
				ret = copy_to_backing(bi, n, fd, buf, &done,
						      bi->st.data_bytes);
		}
		memset(&h, 0, sizeof(h));
		h.magic = DAXFS_BACKING_MAGIC;
		h.version = DAXFS_VERSION;
		h.header_size = sizeof(h);
		h.index = b;
		h.nr_backing = bi->nr_backing;
		h.size = bi->bk_size[b];
		h.data_off = DAXFS_BACKING_DATA_OFF;
		if (!ret)
			ret = daxfs_random_bytes(h.id, sizeof(h.id));
		h.csum = daxfs_crc32c(0, &h, offsetof(struct daxfs_backing_header, csum));
		if (!ret && (ftruncate(fd, (off_t)h.size) < 0 ||
			     pwrite(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
			     fsync(fd) < 0)) {
			tool_errno(errno, "cannot write backing file %s", paths[b]);
			ret = -EIO;
		}
		close(fd);
		memset(&descs[b], 0, sizeof(descs[b]));
		descs[b].size = h.size;
		memcpy(descs[b].id, h.id, sizeof(h.id));
		descs[b].hdr_csum = h.csum;
		base = strrchr(paths[b], '/');
		base = base ? base + 1 : paths[b];
		strncpy(descs[b].name, base, sizeof(descs[b].name) - 1);
	}
	progress_done(&bi->prog);
	free(buf);
	return ret;
}

static void free_tree(struct bnode *n)
{
	uint64_t i;

	for (i = 0; i < n->nkids; i++)
		free_tree(n->kids[i]);
	free(n->kids);
	free(n->target);
	free(n->path);
	free(n);
}

void base_image_free(struct base_image *bi)
{
	if (!bi)
		return;
	if (bi->root)
		free_tree(bi->root);
	free(bi->inodes);
	free(bi->links);
	free(bi);
}
