// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: split mode.  The backing files of a filesystem made with
 * `mkfs.daxfs --source DIR --backing FILE...`, read with pread for the
 * shared page cache (core/pcache.c), a helper thread that fills pages
 * other hosts without backing access asked for, cache information and
 * zero-copy page access.  docs/pcache.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "libdaxfs-internal.h"
#include "core/pcache.h"

#define HELPER_POLL_US	500

struct lib_backing {
	int fd[DAXFS_PCACHE_MAX_BACKING];
	u64 reach;
	u64 reads, bytes;		/* backing reads by this handle */
	u32 delay_ms;			/* tests: DAXFS_TEST_FILL_DELAY_MS */
	pthread_t helper;
	bool helper_running;
	volatile bool stop;
};

static int bk_read(void *ctx, u32 idx, u64 off, void *dst, u32 len)
{
	struct lib_backing *bk = ctx;
	uint8_t *p = dst;
	u32 got = 0;

	if (idx >= DAXFS_PCACHE_MAX_BACKING || bk->fd[idx] < 0)
		return -ENXIO;
	__atomic_fetch_add(&bk->reads, 1, __ATOMIC_RELAXED);
	if (bk->delay_ms)
		usleep(bk->delay_ms * 1000);
	while (got < len) {
		ssize_t n = pread(bk->fd[idx], p + got, len - got, (off_t)(off + got));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (u32)n;
	}
	memset(p + got, 0, len - got);	/* past the end: zeros */
	__atomic_fetch_add(&bk->bytes, got, __ATOMIC_RELAXED);
	return 0;
}

static void bk_sleep(void *ctx, u32 usec)
{
	(void)ctx;
	usleep(usec);
}

static const struct daxfs_backing_ops lib_bk_ops = {
	.read = bk_read,
	.sleep = bk_sleep,
};

/* Serves fill requests of hosts that cannot reach the backing files. */
static void *helper_main(void *arg)
{
	struct daxfs_handle *h = arg;
	struct lib_backing *bk = h->bk;
	u64 seen = ~0ULL;

	while (!bk->stop) {
		u64 s = daxfs_pcache_req_seq(&h->fs);

		if (s != seen) {
			seen = s;
			daxfs_pcache_serve(&h->fs, 4096);
		}
		usleep(HELPER_POLL_US);
	}
	return NULL;
}

static void bk_close_fds(struct lib_backing *bk)
{
	unsigned int i;

	for (i = 0; i < DAXFS_PCACHE_MAX_BACKING; i++)
		if (bk->fd[i] >= 0)
			close(bk->fd[i]);
}

/* Opens path and finds which backing file of the filesystem it is. */
static int bk_attach(struct daxfs_handle *h, struct lib_backing *bk,
		     const char *path)
{
	struct daxfs_backing_header hdr;
	struct stat st;
	u32 idx;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = daxfs_fd_above_std(fd);	/* a program's stdin must not read it */
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	memset(&hdr, 0, sizeof(hdr));
	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	err = daxfs_pcache_backing_check(&h->fs, &hdr, (u64)st.st_size, &idx);
	if (err) {
		close(fd);
		return err;
	}
	if (bk->fd[idx] >= 0) {
		close(fd);	/* the same backing file given twice */
		return 0;
	}
	bk->fd[idx] = fd;
	bk->reach |= 1ULL << idx;
	return 0;
}

int lib_backing_init(struct daxfs_handle *h)
{
	struct lib_backing *bk;
	const char *env;
	unsigned int i;

	if (!h->fs.pc.hdr)
		return 0;
	bk = calloc(1, sizeof(*bk));
	if (!bk)
		return -ENOMEM;
	for (i = 0; i < DAXFS_PCACHE_MAX_BACKING; i++)
		bk->fd[i] = -1;
	env = getenv("DAXFS_TEST_FILL_DELAY_MS");
	if (env)
		bk->delay_ms = (u32)strtoul(env, NULL, 10);
	h->bk = bk;
	/* no backing file yet: reads of uncached pages become requests */
	daxfs_pcache_set_backing(&h->fs, &lib_bk_ops, bk, 0, 0);
	return 0;
}

int daxfs_region_open_opts(const char *path, const struct daxfs_open_opts *o,
			   struct daxfs_handle **out)
{
	static const struct daxfs_open_opts none;
	struct lib_backing *bk;
	struct daxfs_handle *h;
	unsigned int i;
	int err;

	if (!o)
		o = &none;
	*out = NULL;
	err = daxfs_region_open(path, o->flags, &h);
	if (err)
		return err;
	bk = h->bk;
	if (!bk) {
		if (o->nr_backing) {
			daxfs_region_close(h);
			return -EOPNOTSUPP;	/* not a split-mode filesystem */
		}
		*out = h;
		return 0;
	}
	for (i = 0; i < o->nr_backing; i++) {
		err = bk_attach(h, bk, o->backing[i]);
		if (err) {
			daxfs_region_close(h);
			return err;
		}
	}
	daxfs_pcache_set_backing(&h->fs, &lib_bk_ops, bk, bk->reach,
				 o->fill_timeout_ms);
	if (bk->reach && !o->no_helper && h->fs.host != DAXFS_NO_HOST) {
		if (!lib_thread_create(&bk->helper, helper_main, h))
			bk->helper_running = true;
	}
	*out = h;
	return 0;
}

void lib_backing_stop(struct daxfs_handle *h)
{
	struct lib_backing *bk = h->bk;

	if (!bk || !bk->helper_running)
		return;
	bk->stop = true;
	pthread_join(bk->helper, NULL);
	bk->helper_running = false;
}

void lib_backing_detach(struct daxfs_handle *h)
{
	daxfs_pcache_detach(&h->fs);
}

void lib_backing_free(struct daxfs_handle *h)
{
	if (!h->bk)
		return;
	bk_close_fds(h->bk);
	free(h->bk);
	h->bk = NULL;
}

int daxfs_cache_info(struct daxfs_handle *h, struct daxfs_cache_info *out)
{
	struct daxfs_pcache_stats st;
	struct daxfs_fs *fs = &h->fs;
	unsigned int i;
	int err;

	memset(out, 0, sizeof(*out));
	err = daxfs_pcache_stats(fs, &st);
	if (err)
		return err;
	out->nr_slots = st.nr_slots;
	out->window = st.window;
	out->cache_bytes = st.cache_bytes;
	out->free = st.free;
	out->pending = st.pending;
	out->valid = st.valid;
	out->evicting = st.evicting;
	out->requested = st.requested;
	out->referenced = st.referenced;
	out->pinned_slots = st.pinned_slots;
	out->pins = st.pins;
	out->columns = st.columns;
	out->hand = st.hand;
	out->hand_pos = st.hand_pos;
	out->fills = st.fills;
	out->evictions = st.evictions;
	out->takeovers = st.takeovers;
	out->served = st.served;
	out->timeouts = st.timeouts;
	out->req_seq = st.req_seq;
	out->host_hits = __atomic_load_n(&fs->pc.st_hits, __ATOMIC_RELAXED);
	out->host_misses = __atomic_load_n(&fs->pc.st_misses, __ATOMIC_RELAXED);
	out->host_fills = __atomic_load_n(&fs->pc.st_fills, __ATOMIC_RELAXED);
	if (h->bk) {
		out->backing_reads = __atomic_load_n(&h->bk->reads, __ATOMIC_RELAXED);
		out->backing_bytes = __atomic_load_n(&h->bk->bytes, __ATOMIC_RELAXED);
		out->reach = (uint32_t)h->bk->reach;
	}
	out->nr_backing = fs->pc.nr_backing;
	for (i = 0; i < fs->pc.nr_backing && i < 16; i++) {
		const struct daxfs_backing_desc *d = &fs->pc.hdr->backing[i];

		out->backing[i].size = d->size;
		memcpy(out->backing[i].name, d->name, sizeof(d->name));
		out->backing[i].name[32] = 0;
	}
	return 0;
}

static int64_t do_cache_drop(struct daxfs_handle *h)
{
	return daxfs_pcache_evict_all(&h->fs);
}

/*
 * unheld: also a file's pool page, which nothing holds once the op ends:
 * a truncate on any host frees it, and it may hold another file's bytes
 * before the caller reads it (daxfs_page_locate's hint only).  Otherwise
 * such a page is -EAGAIN (read it instead); a cache slot stays pinned and
 * base data never changes.
 */
static int do_page_map(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		       const void **ptr, struct daxfs_page_ref *ref,
		       bool unheld)
{
	struct daxfs_pcache_pin pin;
	u64 off = 0;
	int err;

	*ptr = NULL;
	memset(ref, 0, sizeof(*ref));
	ref->slot = DAXFS_PC_NO_SLOT;
	err = daxfs_pcache_map_block(&h->fs, ino, pgoff, &off, &pin);
	if (err)
		return err;
	if (!unheld && off && pin.slot == DAXFS_PC_NO_SLOT &&
	    off >= h->fs.pool_off && off < h->fs.pool_end)
		return -EAGAIN;
	ref->slot = pin.slot;
	ref->gen = pin.gen;
	ref->col = pin.col;
	if (off)
		*ptr = h->fs.base + off;
	return 0;
}

void daxfs_page_release(struct daxfs_handle *h, struct daxfs_page_ref *ref)
{
	struct daxfs_pcache_pin pin = { ref->slot, ref->gen, ref->col, 0 };

	daxfs_pcache_put(&h->fs, &pin);
	ref->slot = DAXFS_PC_NO_SLOT;
}

/* The public entry points: each runs its do_ variant as one lib call
 * (LIB_CALL, libdaxfs-internal.h). */

int64_t daxfs_cache_drop(struct daxfs_handle *h)
{
	LIB_CALL(h, do_cache_drop(h));
}

int daxfs_page_map(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		   const void **ptr, struct daxfs_page_ref *ref)
{
	LIB_CALL(h, do_page_map(h, ino, pgoff, ptr, ref, false));
}

static int do_page_locate(struct daxfs_handle *h, uint64_t ino,
			  uint64_t pgoff, const void **ptr)
{
	struct daxfs_page_ref ref;
	int err = do_page_map(h, ino, pgoff, ptr, &ref, true);

	if (!err)
		daxfs_page_release(h, &ref);
	return err;
}

int daxfs_page_locate(struct daxfs_handle *h, uint64_t ino, uint64_t pgoff,
		      const void **ptr)
{
	LIB_CALL(h, do_page_locate(h, ino, pgoff, ptr));
}
