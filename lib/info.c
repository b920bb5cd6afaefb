// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: layout, space and host information (`daxfs info`), and error
 * messages that tell the user what to do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdaxfs-internal.h"

const char *daxfs_region_kind_name(uint32_t kind)
{
	static const char *const names[DAXFS_RGN_MAX] = {
		[DAXFS_RGN_NONE] = "none",
		[DAXFS_RGN_STATE] = "state",
		[DAXFS_RGN_HOSTS] = "hosts",
		[DAXFS_RGN_BUCKETS] = "buckets",
		[DAXFS_RGN_POOL] = "pool",
		[DAXFS_RGN_BASE] = "base",
		[DAXFS_RGN_PCACHE] = "pcache",
		[DAXFS_RGN_LANES] = "lanes",
	};

	return kind < DAXFS_RGN_MAX && names[kind] ? names[kind] : "?";
}

const char *daxfs_host_state_name(uint32_t state)
{
	switch (state) {
	case DAXFS_HOST_FREE:
		return "free";
	case DAXFS_HOST_ALIVE:
		return "alive";
	case DAXFS_HOST_DEAD:
		return "dead";
	case DAXFS_HOST_RECOVERING:
		return "recovering";
	case DAXFS_INFO_HOST_RECOVERED:
		return "recovered";
	}
	return "?";
}

static void copy_name(char *dst, const char *src, size_t len)
{
	size_t i;

	for (i = 0; i < len && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = 0;
}

static void info_regions(struct daxfs_fs *fs, struct daxfs_info *out)
{
	unsigned int i, j;

	out->nr_regions = 0;
	for (i = 0; i < DAXFS_RGN_MAX; i++) {
		const struct daxfs_region_desc *rd = &fs->sb.regions[i];
		struct daxfs_info_region *r;

		if (rd->kind == DAXFS_RGN_NONE || !rd->size)
			continue;
		/* insertion sort by offset */
		for (j = out->nr_regions; j > 0 &&
		     out->regions[j - 1].offset > rd->offset; j--)
			out->regions[j] = out->regions[j - 1];
		r = &out->regions[j];
		r->kind = rd->kind;
		r->flags = rd->flags;
		r->offset = rd->offset;
		r->size = rd->size;
		r->name = daxfs_region_kind_name(rd->kind);
		out->nr_regions++;
	}
}

static void info_buckets(struct daxfs_fs *fs, struct daxfs_info *out)
{
	u64 i;

	out->nr_buckets = fs->nr_buckets;
	for (i = 0; i < fs->nr_buckets; i++) {
		u64 k = daxfs_load(&fs->buckets[i].key);

		if (k == DAXFS_KEY_EMPTY)
			continue;
		if (k == DAXFS_KEY_TOMB)
			out->tomb_buckets++;
		else if (k & DAXFS_KEY_PENDING)
			out->pending_buckets++;
		else
			out->used_buckets++;
	}
}

static void info_hosts(struct daxfs_fs *fs, struct daxfs_info *out)
{
	u32 slot, lane, max = fs->sb.max_hosts;

	if (max > DAXFS_MAX_HOSTS)
		max = DAXFS_MAX_HOSTS;
	out->self_slot = fs->host;
	out->nr_hosts = 0;
	for (slot = 0; slot < max; slot++) {
		struct daxfs_host *hp = &fs->hosts[slot];
		struct daxfs_info_host *ih;
		u32 state;
		u64 gen;
		s64 age;

		if (daxfs_host_state(fs, slot, &state, &gen, &age))
			continue;
		if (state == DAXFS_HOST_FREE &&
		    !daxfs_load((u64 *)&hp->recovered_ns))
			continue;
		ih = &out->hosts[out->nr_hosts++];
		ih->slot = slot;
		ih->state = state == DAXFS_HOST_FREE ? DAXFS_INFO_HOST_RECOVERED : state;
		ih->recovered_ns = (s64)daxfs_load((u64 *)&hp->recovered_ns);
		ih->recovered_by = (u32)(daxfs_load(&hp->recovered_by) & 0xffff);
		ih->lease = slot == fs->host ? DAXFS_LEASE_LIVE :
			    daxfs_host_lease(fs, slot);
		ih->expired = state == DAXFS_HOST_ALIVE && slot != fs->host &&
			      ih->lease == DAXFS_LEASE_EXPIRED;
		ih->gen = gen;
		ih->lease_age_ns = age;
		ih->joined_ns = (s64)daxfs_load((u64 *)&hp->joined_ns);
		ih->pid = hp->pid;
		ih->kind = hp->kind;
		ih->ops = daxfs_load(&hp->ops);
		ih->self = slot == fs->host;
		ih->busy_lanes = 0;
		for (lane = 0; lane < DAXFS_LANES; lane++)
			if (daxfs_load(&fs->lanes[(u64)slot * DAXFS_LANES + lane].epoch))
				ih->busy_lanes++;
		copy_name(ih->name, hp->name, DAXFS_HOST_NAME_LEN);
		ih->open_files = daxfs_open_count(fs, slot, NULL);
	}
}

static int do_info(struct daxfs_handle *h, struct daxfs_info *out)
{
	struct daxfs_fs *fs = &h->fs;
	struct daxfs_statfs st;
	struct daxfs_state *s = fs->state;
	int err;

	memset(out, 0, sizeof(*out));
	out->version = fs->sb.version;
	out->block_size = fs->sb.block_size;
	out->feat_compat = fs->sb.feat_compat;
	out->feat_incompat = fs->sb.feat_incompat;
	out->feat_ro_compat = fs->sb.feat_ro_compat;
	out->max_hosts = fs->sb.max_hosts;
	out->probe_window = fs->sb.probe_window;
	out->lease_ms = fs->sb.lease_ms;
	memcpy(out->uuid, fs->sb.uuid, sizeof(out->uuid));
	copy_name(out->label, fs->sb.label, DAXFS_LABEL_LEN);
	out->created_ns = fs->sb.created_ns;
	out->total_size = fs->sb.total_size;
	out->mapped_size = h->map_len;
	out->target_kind = h->kind;
	out->root_ino = fs->sb.root_ino;
	out->first_dyn_ino = fs->sb.first_dyn_ino;
	info_regions(fs, out);
	info_buckets(fs, out);

	err = daxfs_statfs(fs, &st);
	if (err)
		return err;
	out->pool_bytes = st.pool_bytes;
	out->used_bytes = st.used_bytes;
	out->free_bytes = st.free_bytes;
	out->inodes = st.inodes;
	if (s) {
		u64 bump = daxfs_load(&s->bump.v);

		out->bump_bytes = bump > fs->pool_off ? bump - fs->pool_off : 0;
		out->epoch = daxfs_load(&s->epoch.v);
		out->next_ino = daxfs_load(&s->next_ino.v);
		out->stat_cas_fail = daxfs_load(&s->stat_cas_fail.v);
		out->stat_inserts = daxfs_load(&s->stat_inserts.v);
		out->rename_claim = daxfs_load(&s->rename_claim.v);
	}
	info_hosts(fs, out);
	return 0;
}

const char *daxfs_strerror(int err)
{
	static __thread char buf[128];

	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case EUCLEAN:
		return "filesystem structure corrupt: run fsck.daxfs";
	case ESTALE:
		return "this host's lease expired and it was declared dead "
		       "(it re-joins on its next operation)";
	case EROFS:
		return "read-only: the region was opened read-only or without "
		       "joining the host table";
	case ENOSPC:
		return "no space left in the filesystem (pool or overlay full): "
		       "delete files, run reclaim, or mkfs a larger region";
	case ENOMEM:
		return "cannot allocate memory (for a region file: the filesystem "
		       "holding it, e.g. a full /dev/shm, has no room for all of "
		       "it; or the address space limit, ulimit -v, is below the "
		       "region's size)";
	case EBUSY:
		return "device or resource busy (host table full? wait for dead "
		       "hosts' leases to expire, or mkfs with more hosts)";
	case EINVAL:
		return "invalid argument (not a DaxFS region, or bad parameters)";
	case ELOOP:
		return "too many levels of symbolic links";
	case EFBIG:
		return "file too large (DaxFS files are limited to 256 TiB; "
		       "opening a region: the region file is shorter than the "
		       "filesystem on it, truncated or copied in part: "
		       "fsck.daxfs says how long it must be)";
	case EMEDIUMTYPE:
		return "a backing file does not belong to this filesystem (wrong, "
		       "changed or truncated file: check --backing / backing=; "
		       "fsck.daxfs --backing FILE checks the region's record of "
		       "the right one)";
	case EPROTO:
		return "made by an older DaxFS (format version 1): convert it "
		       "offline with fsck.daxfs --convert TARGET";
	case ENOSYS:
		return "this CPU has no 16-byte compare-and-swap (x86-64 "
		       "cmpxchg16b), which DaxFS needs";
	case ETIMEDOUT:
		return "timed out waiting for a page of a backing file (no host "
		       "that can read the backing files filled it: open with "
		       "--backing / backing=PATH)";
	}
	strerror_r(err, buf, sizeof(buf));
	return buf;
}

/* The public entry points: each runs its do_ variant as one lib call
 * (LIB_CALL, libdaxfs-internal.h). */

int daxfs_info(struct daxfs_handle *h, struct daxfs_info *out)
{
	LIB_CALL(h, do_info(h, out));
}

uint32_t daxfs_lease_ms(struct daxfs_handle *h)
{
	return h->fs.lease_ms;
}
