// SPDX-License-Identifier: GPL-2.0 OR MIT
/* File data: read/write/truncate against a model, holes, EOF, huge sparse
 * files, EFBIG, space coming back, churn, coalescing, map_block, type
 * errors and corrupt trees.  Multi-host tests: test_file_mt.c. */
#include "tfile.h"
#include "tcheck.h"

static void test_basic(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	u8 buf[16384], zero[16384];
	s64 n;
	u64 i;

	CHECK(ino != 0 && ip != NULL);
	memset(zero, 0, sizeof(zero));
	CHECK_EQ(t_pread(&fs, ino, buf, 100, 0), 0);	/* empty */
	CHECK_EQ(t_pwrite(&fs, ino, "hello", 5, 0), 5);
	CHECK_EQ(daxfs_load(&ip->size), 5);
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	memset(buf, 0xaa, sizeof(buf));
	CHECK_EQ(t_pread(&fs, ino, buf, 100, 0), 5);	/* short at EOF only */
	CHECK(!memcmp(buf, "hello", 5));
	CHECK_EQ(t_pread(&fs, ino, buf, 100, 5), 0);	/* at EOF */
	CHECK_EQ(t_pread(&fs, ino, buf, 100, 1000), 0);	/* past EOF */

	/* a hole between 5 and 10000: zeros, full length */
	CHECK_EQ(t_pwrite(&fs, ino, "world", 5, 10000), 5);
	CHECK_EQ(daxfs_load(&ip->size), 10005);
	CHECK_EQ(daxfs_load(&ip->blocks), 2);		/* block 1 is a hole */
	memset(buf, 0xaa, sizeof(buf));
	n = t_pread(&fs, ino, buf, sizeof(buf), 0);
	CHECK_EQ(n, 10005);
	CHECK(!memcmp(buf, "hello", 5));
	CHECK(!memcmp(buf + 5, zero, 10000 - 5));
	CHECK(!memcmp(buf + 10000, "world", 5));

	/* overwrite inside, straddling a block boundary */
	for (i = 0; i < 200; i++)
		buf[i] = (u8)(i + 1);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 200, 4000), 200);
	CHECK_EQ(daxfs_load(&ip->size), 10005);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(t_pread(&fs, ino, buf, 200, 4000), 200);
	for (i = 0; i < 200 && buf[i] == (u8)(i + 1); i++)
		;
	CHECK_EQ(i, 200);

	/* zero-length write does not change anything */
	CHECK_EQ(t_pwrite(&fs, ino, "x", 0, 50000), 0);
	CHECK_EQ(daxfs_load(&ip->size), 10005);

	/* mtime/change move on write */
	{
		u64 ch = daxfs_load(&ip->change);

		CHECK_EQ(t_pwrite(&fs, ino, "!", 1, 0), 1);
		CHECK(daxfs_load(&ip->change) > ch);
		CHECK(ip->mtime_ns > 0 && ip->ctime_ns >= ip->mtime_ns - 1);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Random writes/appends/truncates/reads checked against a model buffer. */
#define MODEL_MAX (1536 * 1024)
static void test_model(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 64 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	u8 *model = calloc(1, MODEL_MAX + 65536);
	u8 *buf = malloc(MODEL_MAX + 65536);
	u8 *src = malloc(65536);
	u64 size = 0, seed = 0x9e3779b97f4a7c15ULL, op, bad = 0;
	int nops = 6000;

	CHECK(ino && ip && model && buf && src);
	for (op = 0; op < (u64)nops; op++) {
		u64 k = t_rand(&seed) % 100, off, len, i;
		s64 n;

		len = 1 + t_rand(&seed) % (t_rand(&seed) % 4 ? 9000 : 60000);
		for (i = 0; i < len; i++)
			src[i] = (u8)(t_rand(&seed) | 1);
		if (k < 40) {			/* write anywhere */
			off = t_rand(&seed) % (MODEL_MAX - len);
			if (k < 10)		/* straddle EOF */
				off = size > len / 2 ? size - len / 2 : 0;
			n = t_pwrite(&fs, ino, src, len, off);
			if (n != (s64)len) {
				bad++;
				continue;
			}
			memcpy(model + off, src, len);
			if (off + len > size)
				size = off + len;
		} else if (k < 50) {		/* append */
			u64 pos = ~0ULL;

			if (size + len > MODEL_MAX)
				continue;
			n = t_append(&fs, ino, src, len, &pos);
			if (n != (s64)len || pos != size) {
				bad++;
				continue;
			}
			memcpy(model + size, src, len);
			size += len;
		} else if (k < 62) {		/* truncate both ways */
			u64 ns = t_rand(&seed) % MODEL_MAX;

			if (k < 56)
				ns = t_rand(&seed) % (size + 1);
			if (daxfs_truncate(&fs, ino, ns)) {
				bad++;
				continue;
			}
			if (ns < size)
				memset(model + ns, 0, size - ns);
			size = ns;
		} else {			/* read a random range */
			off = t_rand(&seed) % (MODEL_MAX + 1000);
			len = 1 + t_rand(&seed) % 70000;
			n = t_pread(&fs, ino, buf, len, off);
			{
				u64 want = off >= size ? 0 :
					   (len < size - off ? len : size - off);

				if (n != (s64)want || memcmp(buf, model + off, want)) {
					if (bad < 5)
						fprintf(stderr, "op %llu read %llu+%llu got %lld "
							"want %llu\n", (unsigned long long)op,
							(unsigned long long)off,
							(unsigned long long)len, (long long)n,
							(unsigned long long)want);
					bad++;
				}
			}
		}
		if (daxfs_load(&ip->size) != size) {
			if (bad < 5)
				fprintf(stderr, "op %llu size %llu want %llu\n",
					(unsigned long long)op,
					(unsigned long long)ip->size,
					(unsigned long long)size);
			bad++;
			size = daxfs_load(&ip->size);
		}
	}
	/* full compare, and blocks never exceed the pages the size covers */
	CHECK_EQ(t_pread(&fs, ino, buf, MODEL_MAX + 100, 0), (s64)size);
	CHECK(!memcmp(buf, model, size));
	CHECK(daxfs_load(&ip->blocks) <= (size + 4095) / 4096);
	CHECK_EQ(bad, 0);
	free(model);
	free(buf);
	free(src);
	daxfs_host_leave(&fs);
	t_region_free(r, 64 * MiB);
}

/* Shrink then extend (truncate and write past a gap) never shows old bytes. */
static void test_truncate_extend(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	static u8 buf[64 * 1024], got[64 * 1024], zero[64 * 1024];
	u64 i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i % 251 + 1);
	CHECK_EQ(t_pwrite(&fs, ino, buf, sizeof(buf), 0), (s64)sizeof(buf));
	CHECK_EQ(daxfs_load(&ip->blocks), 16);
	CHECK_EQ(daxfs_truncate(&fs, ino, 100), 0);
	CHECK_EQ(daxfs_load(&ip->size), 100);
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	CHECK_EQ(daxfs_truncate(&fs, ino, 40000), 0);
	CHECK_EQ(t_pread(&fs, ino, got, sizeof(got), 0), 40000);
	CHECK(!memcmp(got, buf, 100));
	CHECK(!memcmp(got + 100, zero, 40000 - 100));
	/* shrink again, then a write past a gap */
	CHECK_EQ(daxfs_truncate(&fs, ino, 5000), 0);
	CHECK_EQ(t_pwrite(&fs, ino, "Z", 1, 60000), 1);
	CHECK_EQ(t_pread(&fs, ino, got, sizeof(got), 0), 60001);
	CHECK(!memcmp(got, buf, 100));
	CHECK(!memcmp(got + 100, zero, 60000 - 100));
	CHECK_EQ(got[60000], 'Z');
	/* truncate to 0 drops the tree */
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK_EQ(daxfs_load(&ip->root), 0);
	CHECK_EQ(daxfs_load(&ip->blocks), 0);
	CHECK_EQ(daxfs_truncate(&fs, ino, 3), 0);
	CHECK_EQ(t_pread(&fs, ino, got, 10, 0), 3);
	CHECK(!memcmp(got, zero, 3));
	CHECK_EQ(daxfs_truncate(&fs, ino, DAXFS_MAX_FILE_SIZE + 1), -EFBIG);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* 1 TiB+ sparse files, the 256 TiB limit, fast reads over huge holes. */
static void test_sparse_huge(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	u8 buf[8192];
	u64 offs[] = { 5 * TiB + 4093, 1 * TiB + 17, 200 * TiB, 3 };
	struct rcount rc = { 0 };
	u64 i, used0;
	double t0;

	used0 = t_usedbytes(&fs);
	for (i = 0; i < 4; i++) {
		memset(buf, (int)(0x40 + i), 4000);
		CHECK_EQ(t_pwrite(&fs, ino, buf, 4000, offs[i]), 4000);
	}
	CHECK_EQ(daxfs_load(&ip->size), 200 * TiB + 4000);
	CHECK_EQ(daxfs_load(&ip->root) & 7, 4);
	CHECK_EQ(daxfs_load(&ip->blocks), 5);	/* one write straddles */
	for (i = 0; i < 4; i++) {
		u64 k;

		memset(buf, 0, sizeof(buf));
		CHECK_EQ(t_pread(&fs, ino, buf, 4000, offs[i]), 4000);
		for (k = 0; k < 4000 && buf[k] == 0x40 + i; k++)
			;
		CHECK_EQ(k, 4000);
	}
	/* read 2 TiB around the 1 TiB write: all zeros except our bytes */
	t0 = t_now();
	CHECK_EQ(daxfs_read(&fs, ino, 0, 2 * TiB, rc_actor, &rc), (s64)(2 * TiB));
	CHECK_EQ(rc.data_bytes, 2 * 4096);
	CHECK_EQ(rc.nonzero, 8000);
	CHECK(t_now() - t0 < 5.0);
	CHECK(rc.calls < 10);
	/* little space used for all that */
	CHECK(t_usedbytes(&fs) - used0 < 64 * 4096);

	/* the limit */
	CHECK_EQ(t_pwrite(&fs, ino, buf, 1, DAXFS_MAX_FILE_SIZE), -EFBIG);
	CHECK_EQ(t_pwrite(&fs, ino, buf, 100, DAXFS_MAX_FILE_SIZE - 10), 10);
	CHECK_EQ(daxfs_load(&ip->size), DAXFS_MAX_FILE_SIZE);
	{
		u64 pos;

		CHECK_EQ(t_append(&fs, ino, buf, 1, &pos), -EFBIG);
	}
	CHECK_EQ(t_pread(&fs, ino, buf, 100, DAXFS_MAX_FILE_SIZE - 10), 10);
	/* truncate back to 2 TiB keeps the 1 TiB data, frees the rest */
	CHECK_EQ(daxfs_truncate(&fs, ino, 2 * TiB), 0);
	CHECK_EQ(daxfs_load(&ip->blocks), 2);	/* offsets 3 and 1 TiB + 17 */
	CHECK_EQ(t_pread(&fs, ino, buf, 4000, offs[1]), 4000);
	CHECK_EQ(buf[0], 0x41);
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK(t_usedbytes(&fs) - used0 < 16 * 4096);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Shrinking gives the space back (df after reclaim). */
static void test_truncate_frees(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 64 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	u8 *big = malloc(16 * MiB);
	u64 base, full, half, end;

	memset(big, 0x5a, 16 * MiB);
	base = t_usedbytes(&fs);
	CHECK_EQ(t_pwrite(&fs, ino, big, 16 * MiB, 0), (s64)(16 * MiB));
	full = t_usedbytes(&fs);
	CHECK(full - base >= 16 * MiB);
	CHECK(full - base <= 16 * MiB + 64 * 4096);	/* nodes are few */
	CHECK_EQ(daxfs_truncate(&fs, ino, 8 * MiB + 1), 0);
	half = t_usedbytes(&fs);
	/* the page of byte 8 MiB stays, and the 2 MiB run around it is
	 * split into a leaf node first (format 11) */
	CHECK(full - half >= 8 * MiB - 2 * 4096);
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	end = t_usedbytes(&fs);
	CHECK(end - base < 8 * 4096);
	fprintf(stderr, "  used: base %llu full %llu half %llu end %llu\n",
		(unsigned long long)base, (unsigned long long)full,
		(unsigned long long)half, (unsigned long long)end);
	free(big);
	daxfs_host_leave(&fs);
	t_region_free(r, 64 * MiB);
}

/* Write / drop churn: usage stays bounded; ENOSPC never hit. */
static void test_churn(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 32 * MiB, NULL);
	static u8 buf[200 * 1024];
	u64 base, peak = 0, i, bad = 0;

	memset(buf, 7, sizeof(buf));
	base = t_usedbytes(&fs);
	for (i = 0; i < 600; i++) {
		u64 ino = t_mkfile(&fs);
		u64 len = 1 + (i * 7919) % sizeof(buf);

		if (!ino || t_pwrite(&fs, ino, buf, len, (i % 3) * 5000) != (s64)len)
			bad++;
		if (i % 2 && daxfs_truncate(&fs, ino, len / 3))
			bad++;
		t_freefile(&fs, ino);
		if (i % 50 == 0) {
			u64 u = t_usedbytes(&fs);

			if (u > peak)
				peak = u;
		}
	}
	CHECK_EQ(bad, 0);
	CHECK(peak - base < 4 * MiB);
	CHECK(t_usedbytes(&fs) - base < 64 * 4096);
	daxfs_host_leave(&fs);
	t_region_free(r, 32 * MiB);
}

/* A big write gets contiguous pages; reads hand them over in few calls. */
static void test_coalesce(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 32 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	static u8 buf[1024 * 1024], got[1024 * 1024];
	struct wsrc w = { buf, 0, 0, 0 };
	struct rdst rd = { got, 0, 0, 0 };
	u64 i;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 31 + 7);
	CHECK_EQ(daxfs_write(&fs, ino, 0, sizeof(buf), 0, w_actor, &w, NULL),
		 (s64)sizeof(buf));
	/* the copy goes page by page (the fence before each, docs/hosts.md),
	 * the pages themselves are contiguous: reads take few calls */
	CHECK(w.calls <= 256);
	CHECK_EQ(daxfs_read(&fs, ino, 0, sizeof(got), r_actor, &rd),
		 (s64)sizeof(got));
	CHECK(rd.calls <= 8);
	CHECK(!memcmp(buf, got, sizeof(buf)));
	/* rewrite in place: also coalesced */
	w.done = 0;
	w.calls = 0;
	CHECK_EQ(daxfs_write(&fs, ino, 100, sizeof(buf) - 200, 0, w_actor, &w,
			     NULL), (s64)(sizeof(buf) - 200));
	CHECK(w.calls <= 256);
	/* a short actor = short write, size only covers what was written */
	{
		u64 ino2 = t_mkfile(&fs);
		struct wsrc s = { buf, 0, 0, 10000 };

		CHECK_EQ(daxfs_write(&fs, ino2, 0, 100000, 0, w_actor, &s, NULL),
			 10000);
		CHECK_EQ(daxfs_load(&t_ip(&fs, ino2)->size), 10000);
		CHECK_EQ(daxfs_load(&t_ip(&fs, ino2)->blocks), 3);
		s.done = 0;
		s.limit = 5000;
		CHECK_EQ(daxfs_write(&fs, ino2, 0, 9000, DAXFS_WRITE_APPEND,
				     w_actor, &s, NULL), 5000);
		/* the unused tail is not given back (a write may have
		 * ended in it, docs/files.md): it reads as zeros */
		CHECK_EQ(daxfs_load(&t_ip(&fs, ino2)->size), 19000);
		{
			struct rcount rc = { 0 };

			CHECK_EQ(daxfs_read(&fs, ino2, 15000, 4000, rc_actor,
					    &rc), 4000);
			CHECK_EQ(rc.nonzero, 0);
		}
	}
	daxfs_host_leave(&fs);
	t_region_free(r, 32 * MiB);
}

static void test_map_block(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs), off = 1, off2;
	u8 buf[16];
	u8 *p;

	CHECK_EQ(daxfs_map_block(&fs, ino, 3, false, &off), 0);
	CHECK_EQ(off, 0);
	CHECK_EQ(daxfs_map_block(&fs, ino, 3, true, &off), 0);
	CHECK(off != 0 && off % 4096 == 0);
	p = daxfs_ptr(&fs, off, 4096, 4096);
	CHECK(p && p[0] == 0 && p[4095] == 0);
	memcpy(p + 10, "mmap", 4);
	CHECK_EQ(daxfs_map_block(&fs, ino, 3, false, &off2), 0);
	CHECK_EQ(off, off2);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->size), 0);	/* no size change */
	CHECK_EQ(daxfs_truncate(&fs, ino, 5 * 4096), 0);
	CHECK_EQ(t_pread(&fs, ino, buf, 4, 3 * 4096 + 10), 4);
	CHECK(!memcmp(buf, "mmap", 4));
	CHECK_EQ(daxfs_map_block(&fs, ino, 1ULL << 36, true, &off), -EFBIG);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

static void test_types(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 fifo = t_mkinode(&fs, DAXFS_S_IFIFO | 0600), off;
	u8 buf[8];

	CHECK_EQ(t_pread(&fs, 1, buf, 8, 0), -EISDIR);
	CHECK_EQ(t_pwrite(&fs, 1, buf, 8, 0), -EISDIR);
	CHECK_EQ(daxfs_truncate(&fs, 1, 0), -EISDIR);
	CHECK(fifo != 0);
	CHECK_EQ(t_pread(&fs, fifo, buf, 8, 0), -EINVAL);
	CHECK_EQ(t_pwrite(&fs, fifo, buf, 8, 0), -EINVAL);
	CHECK_EQ(daxfs_truncate(&fs, fifo, 0), -EINVAL);
	CHECK_EQ(daxfs_map_block(&fs, fifo, 0, true, &off), -EINVAL);
	CHECK_EQ(t_pread(&fs, 999999, buf, 8, 0), -ENOENT);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Garbage in the tree is refused with -EUCLEAN, never followed. */
static void test_corrupt(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	struct daxfs_radix_node *node;
	u64 root, good;
	u8 buf[64];

	CHECK_EQ(t_pwrite(&fs, ino, "abc", 3, 4096 * 600), 3);
	good = root = daxfs_load(&ip->root);
	CHECK_EQ(root & 7, 2);
	daxfs_store(&ip->root, (root & ~7ULL) | 5);		/* height 5 */
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 4096 * 600), -EUCLEAN);
	CHECK_EQ(t_pwrite(&fs, ino, "x", 1, 0), -EUCLEAN);
	daxfs_store(&ip->root, (root & ~7ULL) + 64 + 2);	/* misaligned */
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 4096 * 600), -EUCLEAN);
	daxfs_store(&ip->root, (1ULL << 50) | 2);		/* outside */
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 4096 * 600), -EUCLEAN);
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), -EUCLEAN);
	daxfs_store(&ip->root, good);
	node = daxfs_ptr(&fs, good & ~4095ULL, 4096, 4096);
	root = daxfs_load(&node->slot[1]);
	daxfs_store(&node->slot[1], root + 8);			/* bad child */
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 4096 * 600), -EUCLEAN);
	daxfs_store(&node->slot[1], root);
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 4096 * 600), 3);
	daxfs_store(&ip->size, DAXFS_MAX_FILE_SIZE + 1);
	CHECK_EQ(t_pread(&fs, ino, buf, 3, 0), -EUCLEAN);
	daxfs_store(&ip->size, 4096 * 600 + 3);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/*
 * Crash story: a dead writer's bytes beyond EOF (published, the size
 * never moved).  Recovery leaves them (zeroing them would race live
 * writes that extend the file over them): an extension shows that
 * write's own bytes at their own place (it took effect before), a shrink
 * below them clears them for good.  Never another file's or cut bytes.
 */
static void test_recover(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	struct daxfs_lane dead;
	struct daxfs_op op;
	u8 buf[9000], zero[9000];
	u64 i;

	memset(zero, 0, sizeof(zero));
	memset(buf, 0x77, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 1000, 0), 1000);
	/* "dead host": data published at 1000..9000, size never moved */
	CHECK_EQ(t_pwrite(&fs, ino, buf, 8000, 1000), 8000);
	daxfs_store(&ip->size, 1000);
	memset(&dead, 0, sizeof(dead));
	dead.intent.op = DAXFS_INTENT_FILE_WRITE;
	dead.intent.a[0] = ino;
	dead.intent.a[1] = 1000;
	dead.intent.a[2] = 9000;
	daxfs_op_begin(&fs, &op);
	daxfs_file_recover(&op, &dead);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_load(&ip->size), 1000);
	/* growing over the dead write's bytes: the EOF page's tail is
	 * cleared first (core/eoftail.c: no write is in flight there any
	 * more), the later page shows them (the dead write took effect
	 * there, in part) */
	CHECK_EQ(daxfs_truncate(&fs, ino, 5000), 0);
	memset(buf, 1, sizeof(buf));
	CHECK_EQ(t_pread(&fs, ino, buf, 9000, 0), 5000);
	for (i = 0; i < 1000 && buf[i] == 0x77; i++)
		;
	CHECK_EQ(i, 1000);
	CHECK(!memcmp(buf + 1000, zero, 4096 - 1000));
	for (i = 4096; i < 5000 && buf[i] == 0x77; i++)
		;
	CHECK_EQ(i, 5000);
	/* a shrink clears the rest; growing again shows zeros */
	CHECK_EQ(daxfs_truncate(&fs, ino, 1000), 0);
	CHECK_EQ(daxfs_truncate(&fs, ino, 9000), 0);
	memset(buf, 1, sizeof(buf));
	CHECK_EQ(t_pread(&fs, ino, buf, 9000, 0), 9000);
	for (i = 0; i < 1000 && buf[i] == 0x77; i++)
		;
	CHECK_EQ(i, 1000);
	CHECK(!memcmp(buf + 1000, zero, 8000));
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/*
 * A dead shrinker left the file's write gate closed (its intent names
 * the file and its claim): recovery opens it, and writes go on.
 */
static void test_recover_gate(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs), claim = (7ULL << 16) | 1;
	struct daxfs_inode *ip = t_ip(&fs, ino);
	struct daxfs_lane dead;
	struct daxfs_op op;

	daxfs_store(&ip->parent, claim);
	memset(&dead, 0, sizeof(dead));
	dead.intent.op = DAXFS_INTENT_FILE_WRITE;
	dead.intent.a[0] = ino;
	dead.intent.a[3] = claim + (1ULL << 16);	/* another's claim */
	daxfs_op_begin(&fs, &op);
	daxfs_file_recover(&op, &dead);
	CHECK_EQ(daxfs_load(&ip->parent), claim);	/* not its gate */
	dead.intent.a[3] = claim;
	daxfs_file_recover(&op, &dead);
	daxfs_op_end(&op);
	CHECK_EQ(daxfs_load(&ip->parent), 0);
	CHECK_EQ(t_append(&fs, ino, "abc", 3, NULL), 3);
	CHECK_EQ(daxfs_truncate(&fs, ino, 1), 0);
	CHECK_EQ(daxfs_load(&ip->size), 1);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* A direct root (height 0) grows to heights 1..4 with every byte kept. */
static void test_direct_growth(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs), ino2 = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino), *ip2 = t_ip(&fs, ino2);
	/* block offsets that need height 1, 2, 3, 4 */
	u64 blks[] = { 1, 600, 512ULL * 512 + 5, 512ULL * 512 * 512 + 7 };
	u8 head[3000], buf[3000];
	u64 i, j, page0, off;

	for (i = 0; i < sizeof(head); i++)
		head[i] = (u8)(i * 7 + 3);
	CHECK_EQ(t_pwrite(&fs, ino, head, sizeof(head), 0), (s64)sizeof(head));
	page0 = daxfs_load(&ip->root);
	CHECK(page0 && page0 % 4096 == 0);		/* direct */
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	CHECK_EQ(daxfs_map_block(&fs, ino, 0, false, &off), 0);
	CHECK_EQ(off, page0);
	CHECK_EQ(daxfs_map_block(&fs, ino, 1, false, &off), 0);
	CHECK_EQ(off, 0);				/* a hole */
	for (i = 0; i < 4; i++) {
		u64 at = blks[i] * 4096 + 100;

		memset(buf, (int)(0x10 + i), 50);
		CHECK_EQ(t_pwrite(&fs, ino, buf, 50, at), 50);
		CHECK_EQ(daxfs_load(&ip->root) & 7, i + 1);
		CHECK_EQ(daxfs_load(&ip->blocks), i + 2);
		/* block 0 kept its page (it moved into the tree) */
		CHECK_EQ(daxfs_map_block(&fs, ino, 0, false, &off), 0);
		CHECK_EQ(off, page0);
		memset(buf, 0, sizeof(buf));
		CHECK_EQ(t_pread(&fs, ino, buf, sizeof(head), 0),
			 (s64)sizeof(head));
		CHECK(!memcmp(buf, head, sizeof(head)));
		for (j = 0; j <= i; j++) {
			u8 want[50];

			memset(want, (int)(0x10 + j), 50);
			CHECK_EQ(t_pread(&fs, ino, buf, 50, blks[j] * 4096 + 100), 50);
			CHECK(!memcmp(buf, want, 50));
		}
	}
	/* shrinking back to block 0 keeps the tree (never goes back to 0) */
	CHECK_EQ(daxfs_truncate(&fs, ino, 2000), 0);
	CHECK_EQ(daxfs_load(&ip->root) & 7, 4);
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	CHECK_EQ(t_pread(&fs, ino, buf, sizeof(buf), 0), 2000);
	CHECK(!memcmp(buf, head, 2000));
	/* a first write beyond block 0 builds a tree; block 0 then goes in */
	CHECK_EQ(t_pwrite(&fs, ino2, "x", 1, 4096 * 3), 1);
	CHECK_EQ(daxfs_load(&ip2->root) & 7, 1);
	CHECK_EQ(t_pwrite(&fs, ino2, "y", 1, 0), 1);
	CHECK_EQ(daxfs_load(&ip2->root) & 7, 1);
	CHECK_EQ(daxfs_load(&ip2->blocks), 2);
	CHECK_EQ(t_pread(&fs, ino2, buf, 1, 0), 1);
	CHECK_EQ(buf[0], 'y');
	/* one write spanning blocks 0..2 of an empty file: block 0 becomes
	 * direct, then the tree grows under the same write */
	CHECK_EQ(daxfs_truncate(&fs, ino2, 0), 0);
	CHECK_EQ(daxfs_load(&ip2->root), 0);
	CHECK_EQ(t_pwrite(&fs, ino2, head, sizeof(head), 0), (s64)sizeof(head));
	CHECK_EQ(t_pwrite(&fs, ino2, head, sizeof(head), 7000), (s64)sizeof(head));
	CHECK_EQ(daxfs_load(&ip2->root) & 7, 1);
	CHECK_EQ(daxfs_load(&ip2->blocks), 3);
	CHECK_EQ(t_pread(&fs, ino2, buf, sizeof(head), 0), (s64)sizeof(head));
	CHECK(!memcmp(buf, head, sizeof(head)));
	CHECK_EQ(t_pread(&fs, ino2, buf, sizeof(head), 7000), (s64)sizeof(head));
	CHECK(!memcmp(buf, head, sizeof(head)));
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Truncate and extend a direct file; map_block on it; space comes back. */
static void test_direct_truncate(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	u8 data[4096], buf[8192], zero[8192];
	u64 base, i, page0, off;

	memset(zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(data); i++)
		data[i] = (u8)(i % 253 + 1);
	base = t_usedbytes(&fs);
	CHECK_EQ(t_pwrite(&fs, ino, data, 4096, 0), 4096);	/* a full page */
	page0 = daxfs_load(&ip->root);
	CHECK(page0 && !(page0 & 4095));
	CHECK_EQ(t_usedbytes(&fs) - base, 4096);		/* no node */
	/* shrink inside block 0: stays direct, the tail is zeroed */
	CHECK_EQ(daxfs_truncate(&fs, ino, 100), 0);
	CHECK_EQ(daxfs_load(&ip->root), page0);
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	/* extend: zeros beyond 100, in block 0 and past it */
	CHECK_EQ(daxfs_truncate(&fs, ino, 8192), 0);
	CHECK_EQ(daxfs_load(&ip->root), page0);
	CHECK_EQ(t_pread(&fs, ino, buf, sizeof(buf), 0), 8192);
	CHECK(!memcmp(buf, data, 100));
	CHECK(!memcmp(buf + 100, zero, 8192 - 100));
	/* append onto a direct file (reservation-first) */
	CHECK_EQ(daxfs_truncate(&fs, ino, 100), 0);
	CHECK_EQ(t_append(&fs, ino, data + 100, 50, &off), 50);
	CHECK_EQ(off, 100);
	CHECK_EQ(daxfs_load(&ip->root), page0);
	CHECK_EQ(t_pread(&fs, ino, buf, sizeof(buf), 0), 150);
	CHECK(!memcmp(buf, data, 150));
	/* truncate to 0 detaches the page: root 0, space back */
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK_EQ(daxfs_load(&ip->root), 0);
	CHECK_EQ(daxfs_load(&ip->blocks), 0);
	CHECK_EQ(t_usedbytes(&fs), base);
	CHECK_EQ(daxfs_truncate(&fs, ino, 3000), 0);		/* hole */
	CHECK_EQ(t_pread(&fs, ino, buf, sizeof(buf), 0), 3000);
	CHECK(!memcmp(buf, zero, 3000));
	CHECK_EQ(daxfs_load(&ip->root), 0);
	/* map_block with alloc on an empty file: a direct root */
	CHECK_EQ(daxfs_map_block(&fs, ino, 0, true, &off), 0);
	CHECK_EQ(daxfs_load(&ip->root), off);
	CHECK_EQ(daxfs_load(&ip->blocks), 1);
	memcpy(daxfs_ptr(&fs, off, 4096, 4096), "mm", 2);
	CHECK_EQ(t_pread(&fs, ino, buf, 2, 0), 2);
	CHECK(!memcmp(buf, "mm", 2));
	CHECK_EQ(daxfs_map_block(&fs, ino, 5, true, &page0), 0);
	CHECK_EQ(daxfs_load(&ip->root) & 7, 1);
	CHECK_EQ(daxfs_map_block(&fs, ino, 0, false, &page0), 0);
	CHECK_EQ(page0, off);
	CHECK_EQ(daxfs_truncate(&fs, ino, 0), 0);
	CHECK_EQ(daxfs_load(&ip->root), 0);
	CHECK_EQ(t_usedbytes(&fs), base);
	/* the final drop of a direct file: root SEALED, space back, a late
	 * writer holding the record gets nothing published */
	CHECK_EQ(t_pwrite(&fs, ino, data, 100, 0), 100);
	CHECK_EQ(daxfs_load(&ip->root) & 7, 0);
	{
		struct daxfs_op op;

		daxfs_op_begin(&fs, &op);
		daxfs_file_drop_data(&op, ip);
		CHECK_EQ(daxfs_load(&ip->root), DAXFS_RADIX_SEALED);
		CHECK_EQ(daxfs_load(&ip->blocks), 0);
		CHECK_EQ(daxfs_radix_insert(&op, ip, 0, 4096, &off), -ENOENT);
		daxfs_file_drop_data(&op, ip);			/* idempotent */
		daxfs_op_end(&op);
	}
	CHECK_EQ(t_pwrite(&fs, ino, data, 100, 0), -ENOENT);
	CHECK_EQ(t_usedbytes(&fs), base);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Unlinking direct files returns their pages; fsck accepts and accounts
 * direct roots, and cuts one that lies wholly beyond EOF (offline). */
static void test_direct_fsck(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	struct daxfs_check_result res;
	u64 a, b, c, base;
	u8 buf[200];
	int pass;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_EQ(daxfs_mknod(&fs, 1, "a", 1, DAXFS_S_IFREG | 0644, 0, 0, 0, &a), 0);
	CHECK_EQ(daxfs_mknod(&fs, 1, "b", 1, DAXFS_S_IFREG | 0644, 0, 0, 0, &b), 0);
	CHECK_EQ(daxfs_mknod(&fs, 1, "c", 1, DAXFS_S_IFREG | 0644, 0, 0, 0, &c), 0);
	base = t_usedbytes(&fs);
	CHECK_EQ(t_pwrite(&fs, a, buf, 200, 0), 200);			/* direct */
	CHECK_EQ(t_pwrite(&fs, b, buf, 200, 5000), 200);		/* tree */
	CHECK_EQ(t_pwrite(&fs, c, buf, 200, 0), 200);			/* direct */
	CHECK_EQ(t_usedbytes(&fs) - base, 4 * 4096);
	CHECK_EQ(daxfs_unlink(&fs, 1, "a", 1), 0);
	CHECK(t_usedbytes(&fs) - base <= 3 * 4096);	/* record too */
	/* "crash" between publishing c's page and moving its size */
	daxfs_store(&t_ip(&fs, c)->size, 0);
	daxfs_host_leave(&fs);
	for (pass = 0; pass < 3; pass++) {
		CHECK_EQ(t_fsck(r, 16 * MiB, pass == 1, NULL, NULL, &res), 0);
		if (pass == 0) {
			/* c's page beyond EOF (counted, left alone) */
			CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 1);
			CHECK_EQ(res.data_pages, 2);
			CHECK_EQ(res.leaked_bytes, 0);
		} else if (pass == 1) {
			/* cut: beyond EOF, c's block count, the page freed */
			CHECK(res.nr[DAXFS_CHK_ERROR] >= 2);
			CHECK_EQ(res.unrepaired, 0);
			CHECK_EQ(res.data_pages, 1);
		} else {
			CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
			CHECK_EQ(res.data_pages, 1);
			CHECK_EQ(res.leaked_bytes, 0);
		}
	}
	CHECK_EQ(daxfs_fs_open(&fs, r, 16 * MiB, 0), 0);
	CHECK_EQ(daxfs_host_join(&fs, "t", 1, DAXFS_HOST_KIND_USER), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, c)->root), 0);
	CHECK_EQ(t_pread(&fs, b, buf, 200, 5000), 200);
	CHECK_EQ(buf[199], 0x3c);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/* Small files use one page: the root of a file holding only block 0 is
 * that block's data page (height 0, "direct"; docs/files.md). */
#define NSMALL 2000
static void test_small_files(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 64 * MiB, NULL);
	static u64 inos[NSMALL];
	u8 buf[100], got[100];
	u64 base, full, end, i, per;
	char name[32];

	base = t_usedbytes(&fs);
	for (i = 0; i < NSMALL; i++) {
		int n = snprintf(name, sizeof(name), "f%llu",
				 (unsigned long long)i);

		memset(buf, (int)(i % 251 + 1), sizeof(buf));
		CHECK_EQ(daxfs_mknod(&fs, 1, name, (u32)n, DAXFS_S_IFREG | 0644,
				     0, 0, 0, &inos[i]), 0);
		CHECK_EQ(t_pwrite(&fs, inos[i], buf, sizeof(buf), 0), 100);
	}
	full = t_usedbytes(&fs);
	per = (full - base) / NSMALL;
	fprintf(stderr, "  pool bytes per 100-byte file (inode+dirent+data): %llu\n",
		(unsigned long long)per);
	CHECK(per <= 4608);				/* 4.5 KiB */
	for (i = 0; i < NSMALL; i += 97) {
		struct daxfs_inode *ip = t_ip(&fs, inos[i]);

		CHECK_EQ(daxfs_load(&ip->blocks), 1);
		CHECK_EQ(daxfs_load(&ip->root) & 7, 0);	/* direct */
		memset(buf, (int)(i % 251 + 1), sizeof(buf));
		CHECK_EQ(t_pread(&fs, inos[i], got, sizeof(got), 0), 100);
		CHECK(!memcmp(got, buf, 100));
	}
	for (i = 0; i < NSMALL; i++) {
		int n = snprintf(name, sizeof(name), "f%llu",
				 (unsigned long long)i);

		CHECK_EQ(daxfs_unlink(&fs, 1, name, (u32)n), 0);
	}
	end = t_usedbytes(&fs);
	fprintf(stderr, "  after unlink: %llu bytes above the start\n",
		(unsigned long long)(end - base));
	/* every data page came back (what stays is directory structure,
	 * about 100 B a removed name; a page per file would be 4 KiB) */
	CHECK(end - base < NSMALL * 256);
	daxfs_host_leave(&fs);
	t_region_free(r, 64 * MiB);
}

/*
 * One write's stamps (daxfs_inode_touch_write): mtime and ctime become the
 * write's coarse time unless both are at most DAXFS_WRITE_STAMP_NS older
 * and not ahead of it by more than a tick; the change counter moves by one
 * every time.  Checked against coarse clock readings around each write, so
 * a write that a busy machine delays past the grain still passes.
 */
static void stamp_write(struct daxfs_fs *fs, u64 ino, struct daxfs_inode *ip)
{
	s64 m0 = ip->mtime_ns, c0 = ip->ctime_ns, ta, tb;
	u64 ch = daxfs_load(&ip->change);
	bool fresh;

	/* the write reads the coarse clock at some instant in [ta, tb] */
	ta = daxfs_coarse_ns();
	CHECK_EQ(t_pwrite(fs, ino, "s", 1, 7), 1);
	tb = daxfs_coarse_ns();
	CHECK_EQ(daxfs_load(&ip->change), ch + 1);
	if (ip->mtime_ns == m0 && ip->ctime_ns == c0) {
		/* left: both were fresh at some instant in [ta, tb] */
		fresh = m0 <= tb + DAXFS_COARSE_TICK_NS &&
			c0 <= tb + DAXFS_COARSE_TICK_NS &&
			ta - m0 <= DAXFS_WRITE_STAMP_NS &&
			ta - c0 <= DAXFS_WRITE_STAMP_NS;
		CHECK(fresh);
		return;
	}
	/* stamped: both are the write's time (or a later stamp of its
	 * tick, never moved back), and one was not fresh then */
	CHECK_EQ(ip->mtime_ns, ip->ctime_ns);
	CHECK(ip->mtime_ns >= ta);
	CHECK(ip->mtime_ns <= tb || ip->mtime_ns == m0 || ip->mtime_ns == c0);
	CHECK(ip->mtime_ns <= tb + DAXFS_COARSE_TICK_NS);
	CHECK(ip->mtime_ns >= m0 || m0 > ta + DAXFS_COARSE_TICK_NS);
	CHECK(ip->ctime_ns >= c0 || c0 > ta + DAXFS_COARSE_TICK_NS);
	CHECK(m0 > ta + DAXFS_COARSE_TICK_NS ||
	      c0 > ta + DAXFS_COARSE_TICK_NS ||
	      tb - m0 > DAXFS_WRITE_STAMP_NS || tb - c0 > DAXFS_WRITE_STAMP_NS);
}

static void test_write_stamps(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_inode *ip = t_ip(&fs, ino);
	s64 now;
	int i, left = 0;

	/* old stamps (utime to the past): replaced */
	ip->mtime_ns = ip->ctime_ns = 1000;
	stamp_write(&fs, ino, ip);
	CHECK(ip->mtime_ns > 1000);
	/* writes right after: mostly left as they are */
	for (i = 0; i < 100; i++) {
		s64 m = ip->mtime_ns;

		stamp_write(&fs, ino, ip);
		left += ip->mtime_ns == m;
	}
	CHECK(left > 0);
	/* only mtime old, or only ctime: both replaced */
	ip->mtime_ns = 1000;
	stamp_write(&fs, ino, ip);
	CHECK(ip->mtime_ns > 1000);
	ip->ctime_ns = 1000;
	stamp_write(&fs, ino, ip);
	CHECK(ip->ctime_ns > 1000);
	/* in the future (utime ahead, or a host whose clock runs ahead):
	 * replaced by now */
	now = daxfs_now_ns();
	ip->mtime_ns = ip->ctime_ns = now + 3600LL * 1000000000LL;
	stamp_write(&fs, ino, ip);
	CHECK(ip->mtime_ns < now + 3600LL * 1000000000LL);
	/* a stamp older than the grain: replaced */
	now = daxfs_coarse_ns() - 2 * DAXFS_WRITE_STAMP_NS;
	ip->mtime_ns = ip->ctime_ns = now;
	stamp_write(&fs, ino, ip);
	CHECK(ip->mtime_ns > now);
	/* a fine stamp of this tick (a create's, a chmod's): left, never
	 * moved back to the coarse clock's reading behind it */
	now = daxfs_now_ns();
	ip->mtime_ns = ip->ctime_ns = now;
	stamp_write(&fs, ino, ip);
	CHECK_EQ(ip->mtime_ns, now);
	CHECK_EQ(ip->ctime_ns, now);
	/* mtime old, ctime a fine stamp of this tick (a chmod after the
	 * last write): both stamped, ctime not moved back, equal */
	now = daxfs_now_ns();
	ip->mtime_ns = 1000;
	ip->ctime_ns = now;
	stamp_write(&fs, ino, ip);
	CHECK(ip->ctime_ns >= now);
	CHECK_EQ(ip->mtime_ns, ip->ctime_ns);
	printf("  %d of 100 writes right after a stamp left it\n", left);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

/*
 * DAXFS_WRITE_IF_CHANGE (docs/kernel.md "Writes checked on cached
 * attributes"): with the counter the caller's checks saw, the write is
 * made; with any other, nothing is stored -- not the bytes, not the EOF
 * tail's clearing, not the size or the counter -- and the caller gets the
 * record's attributes to check again on.  Appends alike.
 */
static s64 write_if(struct daxfs_fs *fs, u64 ino, u64 off, const void *buf,
		    u64 len, u32 flags, u64 expect, struct daxfs_attr *a)
{
	struct wsrc w = { buf, 0, 0, 0 };
	u64 pos = 0;

	memset(a, 0, sizeof(*a));
	a->change = expect;
	return daxfs_write_attr(fs, ino, NULL, off, len,
				flags | DAXFS_WRITE_IF_CHANGE, w_actor, &w,
				&pos, a, NULL);
}

static void test_write_if_change(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, 16 * MiB, NULL);
	u64 ino = t_mkfile(&fs);
	struct daxfs_attr a, now;
	u8 buf[8192], got[8192];
	struct wsrc w = { buf, 0, 0, 0 };
	u64 c;

	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ(t_pwrite(&fs, ino, buf, 100, 0), 100);
	CHECK_EQ(t_getattr(&fs, ino, &now), 0);
	c = now.change;
	/* the counter the checks saw: written, and the attributes after */
	CHECK_EQ(write_if(&fs, ino, 100, buf, 100, 0, c, &a), 100);
	CHECK_EQ(a.ino, ino);
	CHECK_EQ(a.size, 200);
	CHECK_EQ(a.change, c + 1);
	/* stale by one: nothing stored, the record's attributes given */
	memset(buf, 0xa5, sizeof(buf));
	CHECK_EQ(write_if(&fs, ino, 0, buf, 50, 0, c, &a),
		 DAXFS_WRITE_CHANGED);
	CHECK_EQ(a.ino, ino);
	CHECK_EQ(a.change, c + 1);
	CHECK_EQ(a.size, 200);
	CHECK_EQ(t_pread(&fs, ino, got, 200, 0), 200);
	CHECK(got[0] == 0x5a && got[49] == 0x5a);
	/* past EOF and appending: no tail cleared, no size moved */
	CHECK_EQ(write_if(&fs, ino, 3 * 4096, buf, 10, 0, c, &a),
		 DAXFS_WRITE_CHANGED);
	CHECK_EQ(write_if(&fs, ino, 0, buf, 10, DAXFS_WRITE_APPEND, c, &a),
		 DAXFS_WRITE_CHANGED);
	CHECK_EQ(t_getattr(&fs, ino, &now), 0);
	CHECK_EQ(now.size, 200);
	CHECK_EQ(now.change, c + 1);
	/* and with the counter given back, both go through */
	CHECK_EQ(write_if(&fs, ino, 0, buf, 10, DAXFS_WRITE_APPEND, a.change,
			  &a), 10);
	CHECK_EQ(a.size, 210);
	CHECK_EQ(write_if(&fs, ino, 3 * 4096, buf, 10, 0, a.change, &a), 10);
	CHECK_EQ(a.size, 3 * 4096 + 10);
	CHECK_EQ(t_pread(&fs, ino, got, 220, 0), 220);
	CHECK(got[199] == 0x5a && got[200] == 0xa5 && got[209] == 0xa5 &&
	      got[210] == 0);
	/* without attributes to compare with, the flag means nothing */
	CHECK_EQ(daxfs_write_attr(&fs, ino, NULL, 0, 4, DAXFS_WRITE_IF_CHANGE,
				  w_actor, &w, NULL, NULL, NULL), 4);
	daxfs_host_leave(&fs);
	t_region_free(r, 16 * MiB);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_model);
	RUN(test_truncate_extend);
	RUN(test_sparse_huge);
	RUN(test_truncate_frees);
	RUN(test_churn);
	RUN(test_coalesce);
	RUN(test_map_block);
	RUN(test_types);
	RUN(test_corrupt);
	RUN(test_recover);
	RUN(test_recover_gate);
	RUN(test_small_files);
	RUN(test_direct_growth);
	RUN(test_direct_truncate);
	RUN(test_direct_fsck);
	RUN(test_write_stamps);
	RUN(test_write_if_change);
	return t_done();
}
