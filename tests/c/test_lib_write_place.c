// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs' writes through a per-open-file cache choose their copy by where
 * they land (lib/copy.h daxfs_write_streams_at): a write that jumps
 * streams from 2 KiB on, with partial lines at either end copied through
 * the cache.  Whatever copy a write makes, the bytes must be the ones
 * written: random and sequential writes of 1 byte to 12 KiB at any
 * alignment, checked against a model, with and without the cached copy of
 * rewrites of what the open file wrote; and threads sharing one cache, whose
 * hint they race on, each writing its own stripes.
 */
#include "tutil.h"
#include "daxfs/libdaxfs.h"
#include "lib/copy.h"

#define FILE_MAX	(96u << 10)
#define WRITE_MAX	(12u << 10)
#define ROUNDS		3000
#define STRIPE		(6u << 10)
#define THREADS		4
#define STRIPES		64	/* per thread */

static char path[64];

static struct daxfs_handle *fresh_region(uint64_t *ino)
{
	struct daxfs_mkfs_opts o;
	struct daxfs_handle *h = NULL;

	memset(&o, 0, sizeof(o));
	o.force = 1;
	o.small_pages = 1;
	CHECK_EQ(daxfs_region_create(path, 64 << 20, &o), 0);
	CHECK_EQ(daxfs_region_open(path, 0, &h), 0);
	if (h)
		CHECK_EQ(daxfs_path_create(h, "/f", 0644, 0, ino), 1);
	return h;
}

/* Reads the whole file back and compares it with model[0, size). */
static void check_file(struct daxfs_handle *h, uint64_t ino,
		       const uint8_t *model, uint64_t size)
{
	uint8_t *got = calloc(1, FILE_MAX);
	uint64_t i;

	CHECK(got != NULL);
	if (!got)
		return;
	CHECK_EQ(daxfs_pread(h, ino, got, FILE_MAX, 0), (int64_t)size);
	for (i = 0; i < size && got[i] == model[i]; i++)
		;
	if (i < size)
		fprintf(stderr, "first difference at %" PRIu64 "\n", i);
	CHECK_EQ(i, size);
	free(got);
}

/* span: lib_copy_cached_span for the run, set after the open that chose
 * the copies: 0 streams what jumps, FILE_MAX makes every rewrite below the
 * open file's reach cached once a reach's worth was written (lib/copy.h,
 * docs/libdaxfs.md "Rewrites of a file the cache holds") */
static void random_and_sequential(unsigned long span)
{
	struct daxfs_fcache fc = { 0 };
	uint8_t *model = calloc(1, FILE_MAX), *buf = malloc(WRITE_MAX);
	uint64_t ino = 0, size = 0, off = 0, len;
	u64 seed = 0x9e3779b97f4a7c15ull;
	struct daxfs_handle *h = fresh_region(&ino);
	int r;
	u64 i;

	CHECK(h && model && buf);
	if (!h || !model || !buf)
		goto out;
	lib_copy_cached_span = span;
	for (r = 0; r < ROUNDS; r++) {
		len = 1 + t_rand(&seed) % WRITE_MAX;
		/* a third continue the last write, as a stream does */
		if (t_rand(&seed) % 3)
			off = t_rand(&seed) % (FILE_MAX - WRITE_MAX);
		if (off + len > FILE_MAX)
			off = 0;
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)t_rand(&seed);
		CHECK_EQ(daxfs_pwrite_fc(h, ino, &fc, buf, len, off), (int64_t)len);
		memcpy(model + off, buf, len);
		off += len;
		if (off > size)
			size = off;
		if (!(r % 500))
			check_file(h, ino, model, size);
	}
	check_file(h, ino, model, size);
	daxfs_region_close(h);
out:
	free(buf);
	free(model);
}

static void test_random_and_sequential(void)
{
	random_and_sequential(0);
}

static void test_rewrites_the_cache_holds(void)
{
	random_and_sequential(FILE_MAX);
}

struct striper {
	struct daxfs_handle *h;
	struct daxfs_fcache *fc;
	uint64_t ino;
	int t;
};

/* Thread t writes stripes t, t + THREADS, ... in a shuffled order, each
 * filled with its number, through the cache every thread shares. */
static void *stripe_writer(void *a)
{
	struct striper *s = a;
	uint8_t buf[STRIPE];
	u64 seed = 77 + (u64)s->t;
	uint64_t k, j, order[STRIPES];
	int i;

	for (i = 0; i < STRIPES; i++)
		order[i] = (uint64_t)i;
	for (i = STRIPES - 1; i > 0; i--) {
		j = t_rand(&seed) % (uint64_t)(i + 1);
		k = order[i];
		order[i] = order[j];
		order[j] = k;
	}
	for (i = 0; i < STRIPES; i++) {
		k = order[i] * THREADS + (uint64_t)s->t;
		memset(buf, (int)(k & 0xff) | 1, STRIPE);
		if (daxfs_pwrite_fc(s->h, s->ino, s->fc, buf, STRIPE,
				    k * STRIPE + 100) != STRIPE)
			return (void *)1;
	}
	return NULL;
}

static void test_threads_share_the_hint(void)
{
	struct daxfs_fcache fc = { 0 };
	struct striper s[THREADS];
	pthread_t th[THREADS];
	uint64_t ino = 0, k, size = (uint64_t)THREADS * STRIPES * STRIPE + 100;
	struct daxfs_handle *h = fresh_region(&ino);
	uint8_t *model = calloc(1, size), *got = malloc(size);
	void *ret;
	int t;

	CHECK(h && model && got);
	if (!h || !model || !got)
		goto out;
	for (t = 0; t < THREADS; t++) {
		s[t] = (struct striper){ .h = h, .fc = &fc, .ino = ino, .t = t };
		CHECK_EQ(pthread_create(&th[t], NULL, stripe_writer, &s[t]), 0);
	}
	for (t = 0; t < THREADS; t++) {
		CHECK_EQ(pthread_join(th[t], &ret), 0);
		CHECK(ret == NULL);
	}
	for (k = 0; k < (uint64_t)THREADS * STRIPES; k++)
		memset(model + 100 + k * STRIPE, (int)(k & 0xff) | 1, STRIPE);
	CHECK_EQ(daxfs_pread(h, ino, got, size, 0), (int64_t)size);
	CHECK(!memcmp(got, model, size));
	daxfs_region_close(h);
out:
	free(got);
	free(model);
}

int main(void)
{
	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-wplace.%d", (int)getpid());
	RUN(test_random_and_sequential);
	RUN(test_rewrites_the_cache_holds);
	RUN(test_threads_share_the_hint);
	unlink(path);
	return t_done();
}
