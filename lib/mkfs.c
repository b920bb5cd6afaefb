// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: creating a filesystem on a target (the engine of mkfs.daxfs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdaxfs-internal.h"

int daxfs_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Does the target already start with a DaxFS superblock? */
static int has_daxfs(int fd)
{
	uint64_t magic = 0;
	ssize_t n = pread(fd, &magic, sizeof(magic), 0);

	return n == (ssize_t)sizeof(magic) && magic == DAXFS_MAGIC;
}

static const struct daxfs_region_desc *find_region(const struct daxfs_super *sb,
						   uint32_t kind)
{
	unsigned int i;

	for (i = 0; i < DAXFS_RGN_MAX; i++)
		if (sb->regions[i].kind == kind && sb->regions[i].size)
			return &sb->regions[i];
	return NULL;
}

static int write_base(void *map, uint64_t size, const struct daxfs_mkfs_opts *o)
{
	const struct daxfs_super *sb = map;
	const struct daxfs_region_desc *rd = find_region(sb, DAXFS_RGN_BASE);

	if (!rd || rd->offset + rd->size > size || rd->size < o->base_size)
		return -EINVAL;
	return o->base_writer(o->base_ctx, (uint8_t *)map + rd->offset, rd->size);
}

int daxfs_region_create(const char *path, uint64_t size,
			const struct daxfs_mkfs_opts *o)
{
	static const struct daxfs_mkfs_opts defaults;
	struct daxfs_format_opts fo;
	enum daxfs_target_kind kind;
	struct daxfs_fs check;
	uint64_t dev_size, map_len, page, huge;
	struct lib_mapping m;
	uint8_t uuid[16];
	u64 key[2];
	bool created;
	void *map;
	int fd, err;

	if (!o)
		o = &defaults;
	if (o->base_size && !o->base_writer)
		return -EINVAL;
	/* O_EXCL first: a file we create is one we may remove on failure,
	 * and one that already reads as zeros */
	fd = daxfs_target_open(path, O_RDWR | O_CREAT | O_EXCL, &kind, &dev_size);
	created = fd >= 0;
	if (fd == -EEXIST)
		fd = daxfs_target_open(path, O_RDWR, &kind, &dev_size);
	if (fd < 0)
		return fd;
	if (!o->force && has_daxfs(fd)) {
		err = -EEXIST;
		goto out_close;
	}
	page = daxfs_target_page_size(fd);
	if (kind == DAXFS_TARGET_FILE) {
		if (!size)
			size = dev_size;
		/* hugetlbfs: its files are whole huge pages; the tool tells
		 * the user (mkfs.daxfs.c) */
		if (page > (uint64_t)sysconf(_SC_PAGESIZE) && size % page) {
			err = -EINVAL;
			goto out_close;
		}
		if (size != dev_size && ftruncate(fd, (off_t)size) < 0) {
			err = -errno;
			goto out_close;
		}
		/* all of it now, or a clean refusal (lib/allocate.c) */
		err = lib_file_allocate(fd, size, true);
		if (err)
			goto out_close;
	} else {
		if (!size)
			size = dev_size;
		if (size > dev_size) {
			err = -ENOSPC;
			goto out_close;
		}
	}
	size &= ~(uint64_t)(DAXFS_BLOCK_SIZE - 1);
	map_len = size;
	/* aligned for huge pages as a host maps it (devdax: rounded down
	 * to its 2 MiB alignment, the size of the filesystem) */
	err = lib_map_region(fd, kind, PROT_READ | PROT_WRITE, &map_len, &m);
	if (err)
		goto out_close;
	map = m.map;
	size = map_len;
	if (size < 16 * DAXFS_BLOCK_SIZE) {
		err = -EINVAL;
		goto out_unmap;
	}
	huge = lib_region_huge(fd, kind, map, map_len, !o->small_pages);
	if (o->huge_bytes)
		*o->huge_bytes = huge;

	err = daxfs_random_bytes(uuid, sizeof(uuid));
	if (!err)
		err = daxfs_random_bytes(key, sizeof(key));
	if (err)
		goto out_unmap;

	memset(&fo, 0, sizeof(fo));
	fo.nr_buckets = o->nr_buckets;
	fo.max_hosts = o->max_hosts;
	fo.lease_ms = o->lease_ms;
	fo.base_size = (o->base_size + DAXFS_BLOCK_SIZE - 1) &
		       ~(uint64_t)(DAXFS_BLOCK_SIZE - 1);
	fo.pcache_size = o->pcache_size;
	fo.pcache_window = o->pcache_window;
	fo.nr_backing = o->nr_backing;
	fo.backing = o->backing;
	fo.uuid = uuid;
	fo.hash_key = key;
	fo.label = o->label;
	fo.first_dyn_ino = o->first_dyn_ino;
	fo.root_ino = o->base_size ? 1 : 0;
	fo.root_mode = o->root_mode ? o->root_mode : 0755;
	fo.root_uid = o->root_uid;
	fo.root_gid = o->root_gid;
	/* a new or empty file reads as zeros: no need to write the bucket
	 * array (256 MiB for a 20 GiB region) */
	fo.zeroed = kind == DAXFS_TARGET_FILE && (created || !dev_size);

	/* Invalidate any old superblock first, so an interrupted mkfs never
	 * leaves a half-old, half-new region that still looks mountable. */
	memset(map, 0, DAXFS_BLOCK_SIZE);
	err = daxfs_format(map, size, &fo);
	if (err)
		goto out_unmap;
	if (o->base_size) {
		err = write_base(map, size, o);
		if (err)
			goto out_unmap;
	}
	if (kind != DAXFS_TARGET_DEVDAX && msync(map, map_len, MS_SYNC) < 0) {
		err = -errno;
		goto out_unmap;
	}
	/* Read back what we wrote the way a host will see it. */
	memset(&check, 0, sizeof(check));
	err = daxfs_fs_open(&check, map, size,
			    DAXFS_FS_RDONLY | (o->base_size ? DAXFS_FS_VALIDATE : 0));
out_unmap:
	munmap(m.area, m.reserved);
out_close:
	if (kind != DAXFS_TARGET_DEVDAX && !err)
		fsync(fd);
	/* a failed mkfs leaves no file it created, and an existing file at
	 * its old size (a 20 GiB file left on a full tmpfs is the harm) */
	if (err && created)
		unlink(path);
	else if (err && kind == DAXFS_TARGET_FILE && size != dev_size &&
		 ftruncate(fd, (off_t)dev_size) < 0)
		err = -errno;
	close(fd);
	return err;
}
