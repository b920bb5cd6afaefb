// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Power-failure states for tests (docs/testing.md "Power-failure states"):
 * only a build with -DDAXFS_PMEM_TRACE (`make pmem`: build/pmem/) has it.
 * There the compat hooks daxfs_flush() and daxfs_drain() also call in
 * here, and this file keeps a "media" copy of the region: what persistent
 * memory would hold after a power loss at this moment.
 *
 *   daxfs_flush(p, len)  takes a snapshot of each cache line of [p, p+len)
 *                        as it is now (a write-back carries the line as of
 *                        the flush; later stores need another flush);
 *   daxfs_drain()        the snapshots taken since the last drain reach the
 *                        media (a fence completes the write-backs).
 *
 * A line stored but not flushed and drained may or may not have reached
 * the media (a cache evicts lines when it likes): a crash state is the
 * media plus any subset of the lines where the region differs from it.
 * daxfs_pmem_crash_image() writes one such state, the subset drawn at
 * random.  The first region mapped read-write is traced, from its
 * contents at open (the media then, as mkfs left it).
 */
#ifdef DAXFS_PMEM_TRACE

#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/compat.h"

#define LINE	64u

struct pending {
	uint64_t line;			/* index of the line in the region */
	uint8_t data[LINE];
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *region, *media;
static uint64_t region_len;
static struct pending *pend;
static size_t nr_pend, cap_pend;
static uint64_t flushes, drains;

/* Automatic states: every auto_every-th drain writes one, named
 * auto_prefix.SEQ.LABEL (LABEL: what the test set last, e.g. the index
 * of the operation in flight). */
static char auto_prefix[256];
static uint64_t auto_every, auto_seq, auto_label, auto_seed;
static unsigned int auto_permille;

static int64_t crash_image_locked(const char *path, unsigned int permille,
				  uint64_t seed);

void daxfs_pmem_trace_map(void *base, uint64_t len)
{
	pthread_mutex_lock(&trace_lock);
	if (!region) {
		media = malloc(len);
		if (media) {
			memcpy(media, base, len);
			region = base;
			region_len = len;
		}
	}
	pthread_mutex_unlock(&trace_lock);
}

void daxfs_pmem_trace_unmap(void *base)
{
	pthread_mutex_lock(&trace_lock);
	if (base == region) {
		free(media);
		free(pend);
		media = region = NULL;
		pend = NULL;
		nr_pend = cap_pend = 0;
		region_len = 0;
	}
	pthread_mutex_unlock(&trace_lock);
}

static int pend_add(uint64_t line)
{
	if (nr_pend == cap_pend) {
		size_t cap = cap_pend ? 2 * cap_pend : 1024;
		struct pending *n = realloc(pend, cap * sizeof(*n));

		if (!n)
			return -1;
		pend = n;
		cap_pend = cap;
	}
	pend[nr_pend].line = line;
	memcpy(pend[nr_pend].data, region + line * LINE, LINE);
	nr_pend++;
	return 0;
}

void daxfs_pmem_flush(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, b = a + len, r;

	if (!len)
		return;
	pthread_mutex_lock(&trace_lock);
	r = (uintptr_t)region;
	if (region && a < r + region_len && b > r) {
		uint64_t first = (a < r ? 0 : a - r) / LINE;
		uint64_t last = ((b > r + region_len ? region_len : b - r) - 1) / LINE;

		for (; first <= last; first++)
			if (pend_add(first))
				abort();	/* a test build: fail loudly */
		flushes++;
	}
	pthread_mutex_unlock(&trace_lock);
}

void daxfs_pmem_drain(void)
{
	size_t i;

	pthread_mutex_lock(&trace_lock);
	if (region) {
		for (i = 0; i < nr_pend; i++)
			memcpy(media + pend[i].line * LINE, pend[i].data, LINE);
		nr_pend = 0;
		drains++;
		if (auto_every && !(drains % auto_every)) {
			char path[300];

			snprintf(path, sizeof(path), "%s.%llu.%llu", auto_prefix,
				 (unsigned long long)auto_seq++,
				 (unsigned long long)auto_label);
			if (crash_image_locked(path, auto_permille,
					       auto_seed + drains) < 0)
				abort();
		}
	}
	pthread_mutex_unlock(&trace_lock);
}

/* every = 0 stops the automatic states. */
void daxfs_pmem_auto(const char *prefix, uint64_t every,
		     unsigned int permille, uint64_t seed)
{
	pthread_mutex_lock(&trace_lock);
	snprintf(auto_prefix, sizeof(auto_prefix), "%s", prefix ? prefix : "");
	auto_every = every;
	auto_permille = permille;
	auto_seed = seed;
	pthread_mutex_unlock(&trace_lock);
}

void daxfs_pmem_label(uint64_t label)
{
	pthread_mutex_lock(&trace_lock);
	auto_label = label;
	pthread_mutex_unlock(&trace_lock);
}

/* splitmix64: the subset is reproducible from the seed. */
static uint64_t next_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Writes a crash state to path: the media, and each line where the region
 * differs from it taken from the region with probability permille / 1000.
 * Returns the number of such lines (taken or not), or -errno.
 */
static int64_t crash_image_locked(const char *path, unsigned int permille,
				  uint64_t seed)
{
	uint8_t *img;
	uint64_t i, dirty = 0, s = seed;
	int64_t ret;
	int fd;

	if (!region)
		return -ENODEV;
	img = malloc(region_len);
	if (!img)
		return -ENOMEM;
	memcpy(img, media, region_len);
	for (i = 0; i < region_len / LINE; i++) {
		if (!memcmp(region + i * LINE, media + i * LINE, LINE))
			continue;
		dirty++;
		if (next_rand(&s) % 1000 < permille)
			memcpy(img + i * LINE, region + i * LINE, LINE);
	}
	ret = (int64_t)dirty;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		ret = -errno;
	} else {
		for (i = 0; i < region_len && ret >= 0;) {
			ssize_t w = write(fd, img + i, region_len - i);

			if (w <= 0)
				ret = -EIO;
			else
				i += (uint64_t)w;
		}
		close(fd);
	}
	free(img);
	return ret;
}

int64_t daxfs_pmem_crash_image(const char *path, unsigned int permille,
			       uint64_t seed)
{
	int64_t ret;

	pthread_mutex_lock(&trace_lock);
	ret = crash_image_locked(path, permille, seed);
	pthread_mutex_unlock(&trace_lock);
	return ret;
}

/* Debugging a missing flush: the offsets of up to max lines where the
 * region differs from the media; returns how many differ. */
uint64_t daxfs_pmem_dirty_lines(uint64_t *out, uint64_t max)
{
	uint64_t i, n = 0;

	pthread_mutex_lock(&trace_lock);
	for (i = 0; region && i < region_len / LINE; i++) {
		if (!memcmp(region + i * LINE, media + i * LINE, LINE))
			continue;
		if (n < max)
			out[n] = i * LINE;
		n++;
	}
	pthread_mutex_unlock(&trace_lock);
	return n;
}

/* Counters since the region was mapped: flush calls and drains. */
void daxfs_pmem_counts(uint64_t *nr_flush, uint64_t *nr_drain)
{
	pthread_mutex_lock(&trace_lock);
	*nr_flush = flushes;
	*nr_drain = drains;
	pthread_mutex_unlock(&trace_lock);
}

#endif /* DAXFS_PMEM_TRACE */
