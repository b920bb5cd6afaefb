// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Hosts, lanes, leases and dead-host recovery; format/open validation;
 * hash check values. */
#include "tutil.h"

#define MiB (1ULL << 20)
#define K(i) daxfs_key(DAXFS_KEY_INODE, 5000 + (i))

static void make_old(struct daxfs_fs *fs, u32 slot)
{
	t_age(fs, slot);
}

/* SipHash-2-4 as the paper gives it, a byte at a time: the reference
 * that core/hash.c's word loads must match for every length and
 * alignment (names sit anywhere, and the hashes are on the medium). */
#define REF_ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define REF_ROUND do {							\
	v0 += v1; v1 = REF_ROTL(v1, 13); v1 ^= v0; v0 = REF_ROTL(v0, 32); \
	v2 += v3; v3 = REF_ROTL(v3, 16); v3 ^= v2;			\
	v0 += v3; v3 = REF_ROTL(v3, 21); v3 ^= v0;			\
	v2 += v1; v1 = REF_ROTL(v1, 17); v1 ^= v2; v2 = REF_ROTL(v2, 32); \
} while (0)

static u64 ref_siphash(u64 k0, u64 k1, const u8 *in, u32 len)
{
	u64 v0 = 0x736f6d6570736575ULL ^ k0, v1 = 0x646f72616e646f6dULL ^ k1;
	u64 v2 = 0x6c7967656e657261ULL ^ k0, v3 = 0x7465646279746573ULL ^ k1;
	u64 m, b = (u64)len << 56;
	u32 i, j;

	for (i = 0; i + 8 <= len; i += 8) {
		for (m = 0, j = 0; j < 8; j++)
			m |= (u64)in[i + j] << (8 * j);
		v3 ^= m;
		REF_ROUND;
		REF_ROUND;
		v0 ^= m;
	}
	for (j = 0; i + j < len; j++)
		b |= (u64)in[i + j] << (8 * j);
	v3 ^= b;
	REF_ROUND;
	REF_ROUND;
	v0 ^= b;
	v2 ^= 0xff;
	REF_ROUND;
	REF_ROUND;
	REF_ROUND;
	REF_ROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

static void test_hash_lengths(void)
{
	struct daxfs_fs fs;
	u8 buf[300];
	u32 len, at, i, bad = 0;

	memset(&fs, 0, sizeof(fs));
	fs.sb.hash_key[0] = 0x9e3779b97f4a7c15ULL;
	fs.sb.hash_key[1] = 0xbf58476d1ce4e5b9ULL;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 131 + 7);
	for (len = 0; len <= DAXFS_NAME_MAX; len++)
		for (at = 0; at < 8 && at + len <= sizeof(buf); at++)
			if (daxfs_name_hash(&fs, (const char *)buf + at, len) !=
			    ref_siphash(fs.sb.hash_key[0], fs.sb.hash_key[1],
					buf + at, len) >> 2)
				bad++;
	CHECK_EQ(bad, 0);
}

static void test_hash(void)
{
	struct daxfs_fs fs;
	u8 msg[15];
	int i;

	CHECK_EQ(daxfs_crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(daxfs_crc32c(daxfs_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
	memset(&fs, 0, sizeof(fs));
	fs.sb.hash_key[0] = 0x0706050403020100ULL;
	fs.sb.hash_key[1] = 0x0f0e0d0c0b0a0908ULL;
	for (i = 0; i < 15; i++)
		msg[i] = (u8)i;
	/* SipHash-2-4 reference vectors (paper, appendix A), >> 2 */
	CHECK(daxfs_name_hash(&fs, (const char *)msg, 15) == 0xa129ca6149be45e5ULL >> 2);
	CHECK(daxfs_name_hash(&fs, "", 0) == 0x726fdb47dd0e0e31ULL >> 2);
	CHECK(daxfs_name_hash(&fs, (const char *)msg, 8) == 0x93f5f5799a932462ULL >> 2);
	CHECK(daxfs_mix64(1) != daxfs_mix64(2));
	CHECK((daxfs_mix64(daxfs_key(1, 1)) ^ daxfs_mix64(daxfs_key(1, 2))) & 0xfff);
}

static void test_open_validation(void)
{
	u64 size = 4 * MiB;
	u8 *r = t_region(size), *copy = malloc(size);
	struct daxfs_super *sb = (struct daxfs_super *)r;
	struct daxfs_fs fs;
	u32 csum_off = __builtin_offsetof(struct daxfs_super, csum);

	CHECK_EQ(daxfs_format(r, size, NULL), 0);
	CHECK_EQ(daxfs_fs_open(&fs, r, size, 0), 0);
	CHECK_EQ(fs.pool_end, size);
	CHECK_EQ(fs.sb.probe_window, 64);
	CHECK(daxfs_is_pow2(fs.nr_buckets) && fs.nr_buckets >= 1024);
	CHECK(daxfs_ptr(&fs, fs.pool_off, 64, 64) != NULL);
	CHECK(daxfs_ptr(&fs, fs.pool_off - 64, 64, 64) == NULL);
	CHECK(daxfs_ptr(&fs, fs.pool_off + 8, 64, 64) == NULL);
	CHECK(daxfs_ptr(&fs, fs.pool_end - 64, 128, 64) == NULL);
	CHECK(daxfs_ptr(&fs, ~0ULL - 10, 64, 1) == NULL);
	memcpy(copy, r, size);

#define REOPEN(expect) do {						\
	CHECK_EQ(daxfs_fs_open(&fs, r, size, 0), expect);		\
	CHECK(memcmp(r, copy, size) == 0); /* nothing written */	\
	memcpy(r, copy, size);						\
	memcpy(copy, r, size);						\
} while (0)
#define RESUM() (sb->csum = daxfs_crc32c(0, sb, csum_off))

	sb->magic ^= 1; memcpy(copy, r, size); REOPEN(-EINVAL);
	memcpy(r, copy, size);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->version = DAXFS_VERSION + 1; RESUM(); memcpy(copy, r, size); REOPEN(-EPROTONOSUPPORT);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->version = DAXFS_VERSION_V1; RESUM(); memcpy(copy, r, size); REOPEN(-EPROTO);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->label[3] ^= 1; memcpy(copy, r, size); REOPEN(-EBADMSG);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->feat_incompat |= 1u << 7; RESUM(); memcpy(copy, r, size); REOPEN(-EOPNOTSUPP);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	CHECK_EQ(daxfs_fs_open(&fs, r, size - 4096, 0), -EFBIG);
	sb->nr_buckets = 1000; RESUM(); memcpy(copy, r, size); REOPEN(-EUCLEAN);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->probe_window = 128; sb->nr_buckets = 64; RESUM(); memcpy(copy, r, size);
	REOPEN(-EUCLEAN);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->regions[DAXFS_RGN_POOL].size += 4096; RESUM(); memcpy(copy, r, size);
	REOPEN(-EUCLEAN);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	/* overlapping regions */
	sb->regions[DAXFS_RGN_HOSTS].offset = sb->regions[DAXFS_RGN_STATE].offset;
	RESUM(); memcpy(copy, r, size); REOPEN(-EUCLEAN);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	sb->max_hosts = 300; RESUM(); memcpy(copy, r, size); REOPEN(-EUCLEAN);
	CHECK_EQ(daxfs_format(r, size, NULL), 0); memcpy(copy, r, size);
	r[4096] ^= 1; memcpy(copy, r, size); REOPEN(-EUCLEAN);	/* state magic */
	CHECK_EQ(daxfs_format(r, size, NULL), 0);
	CHECK_EQ(daxfs_fs_open(&fs, r, size, 0), 0);
	CHECK_EQ(daxfs_format(r, 20 * 4096, NULL), -ENOSPC);
	{
		struct daxfs_format_opts o = { .nr_buckets = 100 };

		CHECK_EQ(daxfs_format(r, size, &o), -EINVAL);
		o.nr_buckets = 0;
		o.max_hosts = 257;
		CHECK_EQ(daxfs_format(r, size, &o), -EINVAL);
	}
	free(copy);
	t_region_free(r, size);
}

static void test_join_leave(void)
{
	struct daxfs_format_opts o = { .max_hosts = 4 };
	struct daxfs_fs fs[6];
	u64 size = 8 * MiB, gen, g0;
	u32 st;
	s64 age;
	void *r = t_region(size);
	int i;

	CHECK_EQ(daxfs_format(r, size, &o), 0);
	for (i = 0; i < 5; i++) {
		CHECK_EQ(daxfs_fs_open(&fs[i], r, size, 0), 0);
		t_obs_attach(&fs[i]);
	}
	for (i = 0; i < 4; i++) {
		CHECK_EQ(daxfs_host_join(&fs[i], "h", 100 + i, DAXFS_HOST_KIND_USER), 0);
		CHECK_EQ(fs[i].host, (u32)i);
	}
	CHECK_EQ(daxfs_host_join(&fs[0], "h", 1, 1), -EALREADY);
	CHECK_EQ(daxfs_host_join(&fs[4], "h", 1, 1), -EBUSY);
	CHECK_EQ(daxfs_host_state(&fs[4], 2, &st, &gen, &age), 0);
	CHECK_EQ(st, DAXFS_HOST_ALIVE);
	CHECK(age >= 0 && age < 1000000000LL);
	CHECK_EQ(daxfs_host_state(&fs[4], 4, &st, &gen, &age), -EINVAL);
	CHECK(daxfs_host_alive(&fs[4], 2, fs[2].host_gen));
	CHECK(!daxfs_host_alive(&fs[4], 2, fs[2].host_gen + 1));
	CHECK_EQ(daxfs_host_renew(&fs[1]), 0);

	/* leave frees the slot; the next owner gets a new generation */
	g0 = fs[2].host_gen;
	daxfs_host_leave(&fs[2]);
	CHECK_EQ(fs[2].host, DAXFS_NO_HOST);
	daxfs_host_state(&fs[4], 2, &st, &gen, NULL);
	CHECK_EQ(st, DAXFS_HOST_FREE);
	CHECK_EQ(daxfs_host_join(&fs[4], "h", 1, 1), 0);
	CHECK_EQ(fs[4].host, 2);
	CHECK_EQ(fs[4].host_gen, g0 + 1);
	CHECK(!daxfs_host_alive(&fs[0], 2, g0));

	/* lease expiry: a full table recovers the expired host for a joiner */
	make_old(&fs[1], 1);
	CHECK(!daxfs_host_alive(&fs[0], 1, fs[1].host_gen));
	CHECK_EQ(daxfs_host_join(&fs[2], "h", 1, 1), 0);
	CHECK_EQ(fs[2].host, 1);
	/* the dead host finds out */
	CHECK_EQ(daxfs_host_renew(&fs[1]), -ESTALE);
	{
		struct daxfs_op op;

		CHECK_EQ(daxfs_op_begin(&fs[1], &op), -ESTALE);
	}
	fs[1].host = DAXFS_NO_HOST;

	/* an expired host is recovered by daxfs_recover_dead_hosts */
	make_old(&fs[3], 3);
	CHECK_EQ(daxfs_recover_dead_hosts(&fs[0]), 1);
	CHECK_EQ(daxfs_recover_dead_hosts(&fs[0]), 0);
	daxfs_host_state(&fs[0], 3, &st, NULL, NULL);
	CHECK_EQ(st, DAXFS_HOST_FREE);
	/* our own slot is never declared dead by ourselves */
	make_old(&fs[0], 0);
	CHECK_EQ(daxfs_recover_dead_hosts(&fs[0]), 0);
	CHECK_EQ(daxfs_host_renew(&fs[0]), 0);
	daxfs_host_leave(&fs[0]);
	daxfs_host_leave(&fs[2]);
	daxfs_host_leave(&fs[4]);
	t_region_free(r, size);
}

/* A host dies with a lane claimed, a pending overlay insert, an open limbo
 * batch and a page batch reserved: a survivor recovers all of it. */
static void test_recover_lanes(void)
{
	struct daxfs_fs a, d;
	struct daxfs_op opa, opd;
	u64 size = 16 * MiB, base, x, idx, v, e0, g, offs[2];
	struct daxfs_bucket *b;
	struct daxfs_lane *lane;
	u32 st;
	void *r = t_setup(&a, size, NULL);

	CHECK_EQ(t_join(&d, r, size), 0);
	base = t_used(&a);
	CHECK_EQ(daxfs_op_begin(&d, &opd), 0);
	x = daxfs_alloc(&opd, DAXFS_CLASS_256);
	CHECK(x != 0);
	CHECK_EQ(daxfs_retire(&opd, x, DAXFS_CLASS_256), 0);
	CHECK_EQ(daxfs_alloc_pages(&opd, 2, offs), 2);	/* reserves a batch */
	CHECK_EQ(daxfs_retire(&opd, offs[0], DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(daxfs_retire(&opd, offs[1], DAXFS_CLASS_PAGE), 0);
	CHECK(daxfs_load(&d.hosts[d.host].alloc_cursor) != 0);
	/* simulate death in the middle of an insert: intent + claimed bucket */
	idx = daxfs_mix64(K(1)) & (d.nr_buckets - 1);
	b = &d.buckets[idx];
	CHECK_EQ(b->key, DAXFS_KEY_EMPTY);
	daxfs_intent_set(&opd, DAXFS_INTENT_OV_INSERT, idx, K(1), 0, 0);
	b->key = K(1) | DAXFS_KEY_PENDING;
	lane = opd.lane;
	g = d.host_gen;
	/* ... and never returns */
	make_old(&d, d.host);

	/* the dead host's lane holds back the epoch only until recovery */
	e0 = daxfs_load(daxfs_state_word(&a, epoch));
	CHECK(t_used(&a) > base);
	/* an insert of the same key waits for the pending claim, finds its
	 * owner dead, recovers it and succeeds */
	daxfs_op_begin(&a, &opa);
	CHECK_EQ(daxfs_ov_insert(&opa, K(1), 42), 0);
	CHECK_EQ(daxfs_ov_lookup(&opa, K(1), &v), 0);
	CHECK_EQ(v, 42);
	daxfs_op_end(&opa);
	daxfs_host_state(&a, d.host, &st, NULL, NULL);
	CHECK_EQ(st, DAXFS_HOST_FREE);
	/* the pending claim was withdrawn (and the bucket reused) */
	CHECK(b->key == DAXFS_KEY_TOMB || b->key == K(1));
	CHECK_EQ(lane->epoch, 0);
	CHECK_EQ(lane->intent.op, DAXFS_INTENT_NONE);
	CHECK_EQ(lane->limbo_open, 0);
	CHECK_EQ(d.hosts[d.host].alloc_cursor, 0);
	CHECK(!daxfs_host_alive(&a, d.host, g));
	/* the retired object comes back once the epoch moves on */
	daxfs_reclaim_all(&a);
	CHECK(daxfs_load(daxfs_state_word(&a, epoch)) >= e0 + 2);
	CHECK_EQ(t_used(&a), base);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/* A host that left with limbo it could not free yet: the batches stay in
 * its FREE slot and the next reclaimer adopts them. */
static void test_orphan_limbo(void)
{
	struct daxfs_fs a, b;
	struct daxfs_op opa, opb;
	u64 size = 8 * MiB, base, x;
	void *r = t_setup(&a, size, NULL);

	CHECK_EQ(t_join(&b, r, size), 0);
	base = t_used(&a);
	daxfs_op_begin(&a, &opa);	/* A holds the epoch */
	daxfs_op_begin(&b, &opb);
	x = daxfs_alloc(&opb, DAXFS_CLASS_64);
	CHECK_EQ(daxfs_retire(&opb, x, DAXFS_CLASS_64), 0);
	daxfs_op_end(&opb);
	daxfs_host_leave(&b);
	CHECK(daxfs_load(&a.hosts[1].limbo_sealed) != 0);
	daxfs_op_end(&opa);
	daxfs_reclaim_all(&a);
	CHECK_EQ(daxfs_load(&a.hosts[1].limbo_sealed), 0);
	CHECK_EQ(t_used(&a), base);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/* A host that dies with idle lanes blocks no epoch, so only the periodic
 * look (daxfs_reclaim, join) finds it: its page batch and open limbo come
 * back, exactly one survivor recovers it, a slow-but-alive host is left
 * alone, and the dead one gets -ESTALE and never writes again. */
static void test_idle_dead_reaped(void)
{
	struct daxfs_fs a, d, e, f;
	struct daxfs_op opa, opd, opd2;
	u64 size = 16 * MiB, base, x, y, g, offs[2], obj, used;
	u32 st, i, slot;
	void *r = t_setup(&a, size, NULL);

	CHECK_EQ(t_join(&d, r, size), 0);
	CHECK_EQ(t_join(&e, r, size), 0);
	base = t_used(&a);
	/* D: a page batch and an open limbo batch, all lanes idle */
	CHECK_EQ(daxfs_op_begin(&d, &opd), 0);
	CHECK_EQ(daxfs_alloc_pages(&opd, 2, offs), 2);
	x = daxfs_alloc(&opd, DAXFS_CLASS_128);
	CHECK_EQ(daxfs_retire(&opd, x, DAXFS_CLASS_128), 0);
	CHECK_EQ(daxfs_retire(&opd, offs[0], DAXFS_CLASS_PAGE), 0);
	CHECK_EQ(daxfs_retire(&opd, offs[1], DAXFS_CLASS_PAGE), 0);
	daxfs_op_end(&opd);
	CHECK(daxfs_load(&d.hosts[d.host].alloc_cursor) != 0);
	/* ... and a second op that D will still hold when declared dead */
	CHECK_EQ(daxfs_op_begin(&d, &opd2), 0);
	daxfs_store(&opd2.lane->epoch, 0);	/* as if it announced nothing */
	g = d.host_gen;
	slot = d.host;

	/* E is only slow: heartbeat just inside its lease */
	t_age_ns(&e, e.host, (s64)e.lease_ms * 1000000LL / 2);
	/* periodic reclaim (op_end every 64 ops) before D expired: nothing */
	for (i = 0; i < 2 * DAXFS_RECLAIM_EVERY; i++) {
		daxfs_op_begin(&a, &opa);
		daxfs_op_end(&opa);
	}
	CHECK(daxfs_host_alive(&a, slot, g));
	make_old(&d, slot);
	for (i = 0; i < DAXFS_RECLAIM_EVERY; i++) {
		daxfs_op_begin(&a, &opa);
		daxfs_op_end(&opa);
	}
	daxfs_host_state(&a, slot, &st, NULL, NULL);
	CHECK_EQ(st, DAXFS_HOST_FREE);
	CHECK_EQ(d.hosts[slot].alloc_cursor, 0);
	CHECK(daxfs_host_alive(&a, e.host, e.host_gen));	/* E untouched */
	/* a second survivor finds nothing to do (exactly one recovered) */
	CHECK_EQ(daxfs_recover_dead_hosts(&e), 0);

	/* D was declared dead: -ESTALE, and its held op writes nothing */
	CHECK_EQ(daxfs_host_renew(&d), -ESTALE);
	CHECK_EQ(daxfs_op_begin(&d, &opd), -ESTALE);
	/* an op whose begin failed has no lane and writes nothing: a free
	 * through it is refused (it freed: daxfs_fenced passes a lane-less
	 * op, and stop 46's test ignored the -ESTALE) */
	CHECK_EQ(daxfs_op_begin(&a, &opa), 0);
	obj = daxfs_alloc(&opa, DAXFS_CLASS_64);
	daxfs_op_end(&opa);
	used = t_used(&a);
	CHECK_EQ(daxfs_free_now(&opd, obj, DAXFS_CLASS_64), -ESTALE);
	CHECK_EQ(t_used(&a), used);
	CHECK_EQ(daxfs_op_begin(&a, &opa), 0);
	CHECK_EQ(daxfs_free_now(&opa, obj, DAXFS_CLASS_64), 0);
	daxfs_op_end(&opa);
	CHECK_EQ(daxfs_alloc(&opd2, DAXFS_CLASS_64), 0);
	CHECK_EQ(daxfs_alloc_pages(&opd2, 1, offs), 0);
	/* F takes over D's slot; D's late op_end must not free F's lane */
	CHECK_EQ(t_join(&f, r, size), 0);
	CHECK_EQ(f.host, slot);
	CHECK_EQ(daxfs_op_begin(&f, &opa), 0);
	CHECK(opa.lane == opd2.lane);		/* same thread, same lane */
	y = daxfs_load(&opa.lane->epoch);
	/* refused, and said so */
	CHECK_EQ(daxfs_retire(&opd2, a.pool_off, DAXFS_CLASS_64), -ESTALE);
	daxfs_op_end(&opd2);
	CHECK_EQ(daxfs_load(&opa.lane->epoch), y);
	CHECK_EQ(opa.lane->limbo_open, 0);
	daxfs_op_end(&opa);
	daxfs_host_leave(&f);

	/* the adopted limbo and the returned batch: back to the baseline */
	daxfs_reclaim_all(&a);
	daxfs_reclaim_all(&a);
	CHECK_EQ(t_used(&a), base);

	/* join looks too: a host expired while nobody ran ops */
	CHECK_EQ(t_join(&d, r, size), 0);
	slot = d.host;
	make_old(&d, slot);
	CHECK_EQ(t_join(&f, r, size), 0);
	daxfs_host_state(&a, slot, &st, NULL, NULL);
	CHECK(st == DAXFS_HOST_FREE || f.host == slot);
	CHECK(!daxfs_host_alive(&a, slot, d.host_gen));
	CHECK_EQ(daxfs_host_renew(&d), -ESTALE);
	daxfs_host_leave(&f);
	daxfs_host_leave(&d);		/* stale: leaves nothing behind */
	daxfs_host_leave(&e);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/* More ops than lanes at once: op_begin waits for a free lane. */
struct lanes_arg {
	struct daxfs_fs *fs;
	int errors;
};

static void *lanes_thread(void *p)
{
	struct lanes_arg *la = p;
	struct daxfs_op op;
	int i;

	for (i = 0; i < 20000; i++) {
		if (daxfs_op_begin(la->fs, &op) || !op.lane) {
			la->errors++;
			continue;
		}
		if (daxfs_load(&op.lane->owner) != daxfs_thread_id())
			la->errors++;	/* two ops on one lane */
		daxfs_op_end(&op);
	}
	return NULL;
}

static void test_lanes_shared(void)
{
	enum { N = 40 };	/* more threads than DAXFS_LANES */
	struct lanes_arg la[N];
	pthread_t th[N];
	struct daxfs_fs fs;
	u64 size = 8 * MiB;
	int i, errs = 0;
	void *r = t_setup(&fs, size, NULL);

	for (i = 0; i < N; i++) {
		la[i] = (struct lanes_arg){ .fs = &fs };
		pthread_create(&th[i], NULL, lanes_thread, &la[i]);
	}
	for (i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		errs += la[i].errors;
	}
	CHECK_EQ(errs, 0);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/* docs/reclaim.md "When the pool is empty": space is pending while limbo
 * waits behind a lane holding the epoch back, or while a dead host is not
 * recovered yet; the wait helper reclaims, paces and gives up. */
/* One object of fs's, retired: limbo until two epochs pass. */
static void make_garbage(struct daxfs_fs *fs)
{
	struct daxfs_op op;
	u64 x;

	CHECK_EQ(daxfs_op_begin(fs, &op), 0);
	x = daxfs_alloc(&op, DAXFS_CLASS_256);
	CHECK(x != 0);
	CHECK_EQ(daxfs_retire(&op, x, DAXFS_CLASS_256), 0);
	daxfs_op_end(&op);
}

static void test_space_pending(void)
{
	struct daxfs_fs a, d, e;
	struct daxfs_op opd, ope;
	struct daxfs_space_wait w = { 0 };
	u64 size = 8 * MiB, base;
	void *r = t_setup(&a, size, NULL);
	int i;

	CHECK_EQ(t_join(&d, r, size), 0);
	base = t_used(&a);
	/* nothing in limbo: one immediate re-run, then the ENOSPC stands */
	CHECK(!daxfs_space_pending(&a));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	CHECK_EQ(daxfs_space_wait_next(&a, &w), -1);
	/* garbage nothing holds back: each look's reclaim frees it and the
	 * call runs again at once, but at most 8 times in one call (other
	 * hosts churning a full pool must not keep it re-running) */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	for (i = 0; i < 9; i++) {
		make_garbage(&a);
		CHECK_EQ(daxfs_space_wait_next(&a, &w), i < 8 ? 0 : -1);
		CHECK_EQ(w.why, i < 8 ? DAXFS_SPACE_FREED : DAXFS_SPACE_NONE);
		CHECK_EQ(t_used(&a), base);
	}
	/* d's op holds the epoch; a's garbage cannot be freed meanwhile */
	CHECK_EQ(daxfs_op_begin(&d, &opd), 0);
	make_garbage(&a);
	memset(&w, 0, sizeof(w));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	CHECK(daxfs_space_pending(&a));
	CHECK(t_used(&a) > base);
	CHECK(daxfs_space_wait_next(&a, &w) > 0);	/* sleep, then again */
	/* a has not seen d renew (d may be dead: its lease runs out within
	 * one lease of a's first look), so a waits past the deadline ... */
	w.deadline_ns = daxfs_mono_ns() - 1;
	CHECK(daxfs_space_wait_next(&a, &w) > 0);
	CHECK_EQ(w.why, DAXFS_SPACE_DEAD);
	/* ... and when d turns out live, its op gets a whole wait from that
	 * last look, not what is left of the first one ... */
	CHECK_EQ(daxfs_host_renew(&d), 0);
	CHECK(daxfs_space_wait_next(&a, &w) > 0);
	CHECK_EQ(w.why, DAXFS_SPACE_LIVE);
	/* ... but never past the limit (a peer garbling the host table) */
	w.limit_ns = daxfs_mono_ns() - 1;
	CHECK_EQ(daxfs_space_wait_next(&a, &w), -1);
	CHECK_EQ(w.why, DAXFS_SPACE_LIMIT);
	/* once a saw d renew, d's slow op bounds the wait at the deadline:
	 * past it the ENOSPC stands even though space is pending */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	CHECK_EQ(daxfs_host_renew(&d), 0);
	CHECK(daxfs_space_wait_next(&a, &w) > 0);
	CHECK_EQ(daxfs_host_lease(&a, d.host), DAXFS_LEASE_LIVE);
	w.deadline_ns = daxfs_mono_ns() - 1;
	CHECK_EQ(daxfs_space_wait_next(&a, &w), -1);
	CHECK_EQ(w.why, DAXFS_SPACE_LIVE);
	/* d dies inside its op: pending until recovered.  The look that
	 * recovers it frees everything at once: nothing is pending after
	 * it, yet the call must run again (it has not seen that space). */
	memset(&w, 0, sizeof(w));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	make_old(&d, d.host);
	CHECK(daxfs_space_pending(&a));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);	/* reaps d, frees */
	CHECK_EQ(w.why, DAXFS_SPACE_FREED);
	CHECK(!daxfs_space_pending(&a));
	CHECK_EQ(t_used(&a), base);
	CHECK_EQ(daxfs_space_wait_next(&a, &w), -1);	/* nothing more */
	CHECK_EQ(w.why, DAXFS_SPACE_NONE);
	/* the failing call's own op end can recover a dead host and free
	 * everything between two looks: the next look frees nothing and
	 * finds nothing pending, yet the call has not seen the space */
	CHECK_EQ(t_join(&e, r, size), 0);
	CHECK_EQ(daxfs_op_begin(&e, &ope), 0);
	make_garbage(&a);
	memset(&w, 0, sizeof(w));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	CHECK(daxfs_space_wait_next(&a, &w) > 0);	/* e holds it back */
	make_old(&e, e.host);
	daxfs_reclaim_all(&a);				/* the call's op end */
	CHECK(!daxfs_space_pending(&a));
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);	/* run it again */
	CHECK_EQ(w.why, DAXFS_SPACE_NONE);
	CHECK_EQ(daxfs_space_wait_next(&a, &w), -1);	/* now it stands */
	CHECK_EQ(w.why, DAXFS_SPACE_NONE);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/*
 * Another host churns (fresh limbo all the time) while a mapping host
 * keeps up with its passes, an epoch or two behind as it always is.  The
 * limbo that was there when the call failed is freed within a few looks;
 * the rest was retired after the call began, and the call is not owed it:
 * the ENOSPC stands then, not at the deadline (fsstress under the preload
 * waited 15 s on every failing write).  A mapping host that stops its
 * passes does hold the owed limbo back, and the call waits for it.
 */
static void test_space_churn_behind_mapping_host(void)
{
	struct daxfs_fs a, c, m;
	struct daxfs_space_wait w = { 0 };
	u64 size = 8 * MiB;
	void *r = t_setup(&a, size, NULL);
	int i, ret = 0;

	CHECK_EQ(t_join(&c, r, size), 0);
	CHECK_EQ(t_join(&m, r, size), 0);
	daxfs_map_first(&m);
	make_garbage(&c);
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	for (i = 0; i < 40; i++) {
		make_garbage(&c);
		daxfs_map_announce(&m, daxfs_map_pass_epoch(&m));
		ret = daxfs_space_wait_next(&a, &w);
		if (ret < 0)
			break;
		CHECK_EQ(daxfs_host_renew(&c), 0);
		CHECK_EQ(daxfs_host_renew(&m), 0);
	}
	CHECK_EQ(ret, -1);
	CHECK(i < 8);
	CHECK_EQ(w.why, DAXFS_SPACE_NONE);
	/* m kept up: nothing to ask it now */
	CHECK(!daxfs_map_pass_asked(&m));
	CHECK(daxfs_space_pending(&a));		/* the fresh limbo is there */
	/* m stops its passes: the limbo of a's first look waits for m */
	memset(&w, 0, sizeof(w));
	make_garbage(&a);
	CHECK_EQ(daxfs_space_wait_next(&a, &w), 0);
	for (i = 0; i < 8; i++) {
		make_garbage(&c);
		CHECK(daxfs_space_wait_next(&a, &w) > 0);
		CHECK_EQ(w.why, DAXFS_SPACE_LIVE);
	}
	/* a asked m for a pass before its next tick (m polls the ask) */
	CHECK(daxfs_map_pass_asked(&m));
	CHECK(!daxfs_map_pass_asked(&a));	/* a maps nothing */
	/* its next pass lets the owed limbo go; then nothing is owed */
	daxfs_map_announce(&m, daxfs_map_pass_epoch(&m));
	ret = daxfs_space_wait_next(&a, &w);
	CHECK(ret == 0 && (w.why == DAXFS_SPACE_FREED ||
			   w.why == DAXFS_SPACE_NONE));
	for (i = 0; i < 12 && ret >= 0; i++) {
		daxfs_map_announce(&m, daxfs_map_pass_epoch(&m));
		ret = daxfs_space_wait_next(&a, &w);
	}
	CHECK_EQ(ret, -1);
	/* answered: m's announcement is the current epoch */
	daxfs_map_announce(&m, daxfs_map_pass_epoch(&m));
	CHECK(!daxfs_map_pass_asked(&m));
	/* a garbled ask (a stray store) is ignored past two advances */
	daxfs_host_at(&m, m.host)->pass_wanted = ~0ULL;
	daxfs_epoch_try_advance(&a);
	CHECK(!daxfs_map_pass_asked(&m));
	daxfs_host_leave(&a);
	daxfs_host_leave(&c);
	daxfs_host_leave(&m);
	t_region_free(r, size);
}

/* Formats r with o and joins a, then b: b's slot. */
static u32 two_hosts(void *r, u64 size, const struct daxfs_format_opts *o,
		     struct daxfs_fs *a, struct daxfs_fs *b)
{
	CHECK_EQ(daxfs_format(r, size, o), 0);
	CHECK_EQ(t_join(a, r, size), 0);
	CHECK_EQ(t_join(b, r, size), 0);
	return b->host;
}

/*
 * Leases (docs/hosts.md "Leases"): the heartbeat is a counter each
 * observer times with its own monotonic clock.  Nothing a host writes is
 * read as a time, so no wall clock value can make it look dead.
 */
static void test_lease_counter(void)
{
	struct daxfs_format_opts o = { .max_hosts = 4, .lease_ms = 1000 };
	struct daxfs_fs a, b, blind;
	u64 size = 8 * MiB, hb;
	void *r = t_region(size);
	u32 slot;

	slot = two_hosts(r, size, &o, &a, &b);
	/* a's first look tells nothing, and never declares anyone dead */
	CHECK_EQ(daxfs_host_lease(&a, slot), DAXFS_LEASE_UNKNOWN);
	CHECK_EQ(daxfs_hosts_observe(&a), 1);
	/* b renews: the counter moves by one, a sees it live */
	hb = daxfs_load(&b.hosts[slot].heartbeat);
	CHECK_EQ(daxfs_host_renew(&b), 0);
	CHECK_EQ(daxfs_load(&b.hosts[slot].heartbeat), hb + 1);
	CHECK_EQ(daxfs_host_lease(&a, slot), DAXFS_LEASE_LIVE);
	CHECK_EQ(daxfs_hosts_observe(&a), 0);
	/* a heartbeat word that looks like a time far in the past (what a
	 * host whose wall clock is an hour behind wrote under version 2)
	 * is just a new counter value: b is live */
	daxfs_store(&b.hosts[slot].heartbeat, 1);
	CHECK(!daxfs_host_expired(&a, slot));
	/* silent for half a lease by a's clock: still alive */
	t_age_ns(&a, slot, 500000000LL);
	CHECK(!daxfs_host_expired(&a, slot));
	CHECK(daxfs_host_alive(&a, slot, b.host_gen));
	/* silent for two leases: expired ... */
	t_age(&a, slot);
	CHECK_EQ(daxfs_host_lease(&a, slot), DAXFS_LEASE_EXPIRED);
	CHECK(!daxfs_host_alive(&a, slot, b.host_gen));
	/* ... until b renews once more: timed afresh from that change */
	CHECK_EQ(daxfs_host_renew(&b), 0);
	CHECK_EQ(daxfs_host_lease(&a, slot), DAXFS_LEASE_LIVE);
	/* a pair another thread is updating (busy) is judged unknown, never
	 * expired, even when what is recorded has run out */
	t_age(&a, slot);
	a.obs[slot].busy = 1;
	CHECK_EQ(daxfs_host_lease(&a, slot), DAXFS_LEASE_UNKNOWN);
	CHECK(!daxfs_host_expired(&a, slot));
	a.obs[slot].busy = 0;
	CHECK(daxfs_host_expired(&a, slot));
	/* an observer without a table declares nobody dead */
	CHECK_EQ(daxfs_fs_open(&blind, r, size, 0), 0);
	CHECK(!daxfs_host_expired(&blind, slot));
	CHECK_EQ(daxfs_recover_dead_hosts(&blind), 0);
	/* a's recovery of b: b learns it at its next renewal */
	CHECK_EQ(daxfs_recover_dead_hosts(&a), 1);
	CHECK_EQ(daxfs_host_renew(&b), -ESTALE);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

/*
 * The recovery claim (docs/hosts.md "One recoverer at a time"): the dead
 * slot's (state, heartbeat) pair, raised at the claim and renewed at
 * every lane and slot-level step.  Garbage in the pair is taken over like
 * a stalled recovery once its lease ran out, never a crash: an unknown
 * state (what a stray store leaves) and a counter about to wrap.
 */
static void test_recovery_claim(void)
{
	struct daxfs_format_opts o = { .max_hosts = 4, .lease_ms = 1000 };
	struct daxfs_fs a, b;
	struct daxfs_op op, aop = { .fs = &a };
	u64 size = 8 * MiB, hb, w;
	void *r = t_region(size);
	u32 slot;

	slot = two_hosts(r, size, &o, &a, &b);
	CHECK_EQ(daxfs_op_begin(&b, &op), 0);	/* dies in an op */
	hb = daxfs_load(&a.hosts[slot].heartbeat);
	t_age(&a, slot);
	CHECK_EQ(daxfs_recover_dead_hosts(&a), 1);
	CHECK_EQ(daxfs_load(&a.hosts[slot].state),
		 daxfs_host_word(b.host_gen, DAXFS_HOST_FREE));
	CHECK_EQ(daxfs_load(&op.lane->epoch), 0);
	/* claimed (+1), then renewed before each lane, again before its
	 * clear, and before each slot-level step */
	CHECK(daxfs_load(&a.hosts[slot].heartbeat) >= hb + 1 + 2 * DAXFS_LANES);

	/* a state word no host writes, and a counter at its top */
	w = daxfs_host_word(7, 0x7e);
	daxfs_store(&a.hosts[slot].state, w);
	daxfs_store(&a.hosts[slot].heartbeat, ~0ULL);
	CHECK_EQ(daxfs_host_try_dead(&aop, slot), 0);	/* not timed yet */
	t_age(&a, slot);
	CHECK_EQ(daxfs_recover_dead_hosts(&a), 1);
	CHECK_EQ(daxfs_load(&a.hosts[slot].state),
		 daxfs_host_word(7, DAXFS_HOST_FREE));

	/* a recovery stalled with its counter at the top: taken over */
	daxfs_store(&a.hosts[slot].state,
		    daxfs_host_word(9, DAXFS_HOST_RECOVERING));
	daxfs_store(&a.hosts[slot].heartbeat, ~0ULL);
	t_age(&a, slot);
	CHECK_EQ(daxfs_recover_dead_hosts(&a), 1);
	CHECK_EQ(daxfs_load(&a.hosts[slot].state),
		 daxfs_host_word(9, DAXFS_HOST_FREE));
	CHECK(daxfs_load(&a.hosts[slot].heartbeat) < 1000);	/* wrapped */
	/* the slot serves a new host */
	daxfs_host_leave(&b);		/* declared dead: forgets the slot */
	CHECK_EQ(t_join(&b, r, size), 0);
	CHECK_EQ(b.host, slot);
	CHECK_EQ(b.host_gen, 10);
	daxfs_host_leave(&b);
	daxfs_host_leave(&a);
	t_region_free(r, size);
}

int main(void)
{
	RUN(test_hash);
	RUN(test_hash_lengths);
	RUN(test_open_validation);
	RUN(test_join_leave);
	RUN(test_recover_lanes);
	RUN(test_orphan_limbo);
	RUN(test_idle_dead_reaped);
	RUN(test_lanes_shared);
	RUN(test_space_pending);
	RUN(test_space_churn_behind_mapping_host);
	RUN(test_lease_counter);
	RUN(test_recovery_claim);
	return t_done();
}
