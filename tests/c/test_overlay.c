// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Overlay: insert/lookup/replace/delete, full window, collisions, churn,
 * and many hosts (threads, one struct daxfs_fs each) racing on one region. */
#include "tutil.h"

#define MiB (1ULL << 20)
#define K(i) daxfs_key(DAXFS_KEY_INODE, 1000 + (i))

static void test_basic(void)
{
	struct daxfs_fs fs;
	struct daxfs_op op;
	struct daxfs_inode *ip;
	u64 v = 0;
	void *r = t_setup(&fs, 8 * MiB, NULL);

	CHECK_EQ(daxfs_op_begin(&fs, &op), 0);
	/* the root made by format is published as INODE(1) */
	CHECK_EQ(daxfs_ov_lookup(&op, daxfs_key(DAXFS_KEY_INODE, 1), &v), 0);
	ip = daxfs_ptr(&fs, v, sizeof(*ip), 64);
	CHECK(ip && ip->ino == 1 && ip->magic == DAXFS_INODE_MAGIC);
	CHECK(ip && (ip->mode & 0170000) == 0040000 && ip->nlink == 2);
	CHECK(ip && ip->parent == 1 && (ip->aux & DAXFS_DIR_IMPORTED));
	CHECK(ip && daxfs_ptr(&fs, ip->root, 512, 64) != NULL);

	CHECK_EQ(daxfs_ov_lookup(&op, K(1), &v), -ENOENT);
	CHECK_EQ(daxfs_ov_insert(&op, K(1), 111), 0);
	CHECK_EQ(daxfs_ov_lookup(&op, K(1), &v), 0);
	CHECK_EQ(v, 111);
	CHECK_EQ(daxfs_ov_insert(&op, K(1), 222), -EEXIST);
	CHECK_EQ(daxfs_ov_replace(&op, K(1), 5, 6), -EAGAIN);
	CHECK_EQ(daxfs_ov_replace(&op, K(1), 111, 333), 0);
	CHECK_EQ(daxfs_ov_lookup(&op, K(1), &v), 0);
	CHECK_EQ(v, 333);
	CHECK_EQ(daxfs_ov_replace(&op, K(2), 1, 2), -ENOENT);
	CHECK_EQ(daxfs_ov_delete(&op, K(1), 111), -EAGAIN);
	CHECK_EQ(daxfs_ov_delete(&op, K(1), 333), 0);
	CHECK_EQ(daxfs_ov_lookup(&op, K(1), &v), -ENOENT);
	CHECK_EQ(daxfs_ov_delete(&op, K(1), 333), -ENOENT);
	CHECK_EQ(daxfs_ov_insert(&op, K(1), 444), 0);
	CHECK_EQ(daxfs_ov_lookup(&op, K(1), &v), 0);
	CHECK_EQ(v, 444);
	/* bad arguments */
	CHECK_EQ(daxfs_ov_insert(&op, 0, 1), -EINVAL);
	CHECK_EQ(daxfs_ov_insert(&op, K(3), 0), -EINVAL);
	CHECK_EQ(daxfs_ov_insert(&op, K(3) | DAXFS_KEY_PENDING, 1), -EINVAL);
	CHECK_EQ(daxfs_ov_lookup(&op, DAXFS_KEY_TOMB, &v), -EINVAL);
	daxfs_op_end(&op);

	{
		struct daxfs_statfs st;

		CHECK_EQ(daxfs_statfs(&fs, &st), 0);
		CHECK_EQ(st.used_buckets, 2);	/* root + K(1) */
		CHECK(st.used_bytes > 0 && st.used_bytes < st.pool_bytes);
		CHECK_EQ(st.free_bytes + st.used_bytes, st.pool_bytes);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, 8 * MiB);
}

/* A 64-bucket table with a 64-bucket window: 64 keys fit, then ENOSPC. */
static void test_full_window(void)
{
	struct daxfs_format_opts o = { .nr_buckets = 64 };
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 v;
	int i, n = 1, err = 0;	/* the root is one key */
	double t0;
	void *r = t_setup(&fs, 4 * MiB, &o);

	CHECK_EQ(fs.sb.probe_window, 64);
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < 100; i++) {
		err = daxfs_ov_insert(&op, K(i), i + 1);
		if (err)
			break;
		n++;
	}
	CHECK_EQ(err, -ENOSPC);
	CHECK_EQ(n, 64);
	t0 = t_now();
	err = 0;
	for (i = 0; i < 10000; i++)
		err |= daxfs_ov_insert(&op, K(500 + i), 1) != -ENOSPC;
	CHECK_EQ(err, 0);
	CHECK(t_now() - t0 < 1.0);	/* bounded: never scans past the window */
	for (i = 0; i < 63; i++) {
		CHECK_EQ(daxfs_ov_lookup(&op, K(i), &v), 0);
		CHECK_EQ(v, (u64)i + 1);
	}
	CHECK_EQ(daxfs_ov_lookup(&op, K(999), &v), -ENOENT);	/* full table, no EMPTY */
	/* a delete frees a bucket for the next insert */
	CHECK_EQ(daxfs_ov_delete(&op, K(7), 8), 0);
	CHECK_EQ(daxfs_ov_insert(&op, K(77), 78), 0);
	CHECK_EQ(daxfs_ov_insert(&op, K(78), 79), -ENOSPC);
	CHECK_EQ(daxfs_ov_lookup(&op, K(77), &v), 0);
	daxfs_op_end(&op);
	daxfs_host_leave(&fs);
	t_region_free(r, 4 * MiB);
}

/* Small table: many keys share probe windows; delete + reinsert churn
 * checked against a model. */
static void test_churn(void)
{
	struct daxfs_format_opts o = { .nr_buckets = 1024 };
	enum { NK = 400, OPS = 200000 };
	static u64 model[NK];
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 seed = 12345, v, i;
	int err, bad = 0, nospc = 0;
	void *r = t_setup(&fs, 8 * MiB, &o);

	memset(model, 0, sizeof(model));
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < OPS; i++) {
		u64 k = t_rand(&seed) % NK, val = (t_rand(&seed) >> 1) | 1;

		switch (t_rand(&seed) % 4) {
		case 0:
		case 1:
			err = daxfs_ov_insert(&op, K(k), val);
			if (err == -ENOSPC) {
				nospc++;
				break;
			}
			if (model[k] ? err != -EEXIST : err != 0)
				bad++;
			if (!err)
				model[k] = val;
			break;
		case 2:
			err = daxfs_ov_delete(&op, K(k), model[k] ? model[k] : 1);
			if (model[k] ? err != 0 : err != -ENOENT)
				bad++;
			model[k] = 0;
			break;
		default:
			err = daxfs_ov_lookup(&op, K(k), &v);
			if (model[k] ? (err || v != model[k]) : err != -ENOENT)
				bad++;
		}
	}
	for (i = 0; i < NK; i++) {
		err = daxfs_ov_lookup(&op, K(i), &v);
		if (model[i] ? (err || v != model[i]) : err != -ENOENT)
			bad++;
	}
	daxfs_op_end(&op);
	CHECK_EQ(bad, 0);
	CHECK_EQ(nospc, 0);
	daxfs_host_leave(&fs);
	t_region_free(r, 8 * MiB);
}

/* ---- many hosts ---- */

#define NTHREADS 8
#define NKEYS 3000

struct race {
	void *r;
	u64 size;
	int id;
	u32 *wins;		/* per key: number of winners */
	u64 *winval;		/* per key: the winner's value */
	int errors;
	volatile int *go;
};

static void *race_insert(void *arg)
{
	struct race *rc = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 v;
	int i, err;

	if (t_join(&fs, rc->r, rc->size)) {
		rc->errors++;
		return NULL;
	}
	while (!*rc->go)
		;
	for (i = 0; i < NKEYS; i++) {
		int k = (i * 7 + rc->id * 13) % NKEYS;

		daxfs_op_begin(&fs, &op);
		v = ((u64)(rc->id + 1) << 32) | (u64)k;
		err = daxfs_ov_insert(&op, K(k), v);
		if (!err) {
			__atomic_fetch_add(&rc->wins[k], 1, __ATOMIC_SEQ_CST);
			__atomic_store_n(&rc->winval[k], v, __ATOMIC_SEQ_CST);
		} else if (err != -EEXIST) {
			rc->errors++;
		}
		/* whoever won, the key must be visible now */
		if (daxfs_ov_lookup(&op, K(k), &v) || (v & 0xffffffff) != (u64)k)
			rc->errors++;
		daxfs_op_end(&op);
	}
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_race_insert(void)
{
	struct t_renewer rn;
	struct daxfs_format_opts o = { .nr_buckets = 8192 };
	static u32 wins[NKEYS];
	static u64 winval[NKEYS];
	struct race rc[NTHREADS];
	pthread_t th[NTHREADS];
	volatile int go = 0;
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 16 * MiB, v;
	int i, bad = 0, errs = 0;
	void *r = t_setup(&fs, size, &o);

	memset(wins, 0, sizeof(wins));
	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (i = 0; i < NTHREADS; i++) {
		rc[i] = (struct race){ .r = r, .size = size, .id = i, .wins = wins,
				       .winval = winval, .go = &go };
		pthread_create(&th[i], NULL, race_insert, &rc[i]);
	}
	go = 1;
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		errs += rc[i].errors;
	}
	t_renew_stop(&rn);
	CHECK_EQ(errs, 0);
	daxfs_op_begin(&fs, &op);
	for (i = 0; i < NKEYS; i++) {
		if (wins[i] != 1)
			bad++;
		else if (daxfs_ov_lookup(&op, K(i), &v) || v != winval[i])
			bad++;
	}
	daxfs_op_end(&op);
	CHECK_EQ(bad, 0);
	{
		struct daxfs_statfs st;

		daxfs_statfs(&fs, &st);
		CHECK_EQ(st.used_buckets, NKEYS + 1);
	}
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

/* Each host churns its own keys (insert/delete) while every host keeps
 * looking up a set of stable keys that must never go missing. */
struct churn {
	void *r;
	u64 size;
	int id, errors;
};

#define STABLE 200

static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 seed = 777 + c->id, v;
	int i, err;

	if (t_join(&fs, c->r, c->size)) {
		c->errors++;
		return NULL;
	}
	for (i = 0; i < 40000; i++) {
		u64 k = 10000 + c->id * 100 + t_rand(&seed) % 100;

		daxfs_op_begin(&fs, &op);
		err = daxfs_ov_insert(&op, K(k), k);
		if (err && err != -EEXIST)
			c->errors++;
		if (t_rand(&seed) & 1) {
			if (daxfs_ov_delete(&op, K(k), k))
				c->errors++;
			if (daxfs_ov_lookup(&op, K(k), &v) != -ENOENT)
				c->errors++;
		}
		k = t_rand(&seed) % STABLE;
		if (daxfs_ov_lookup(&op, K(k), &v) || v != k + 1)
			c->errors++;
		daxfs_op_end(&op);
	}
	daxfs_host_leave(&fs);
	return NULL;
}

static void test_race_churn(void)
{
	struct t_renewer rn;
	struct daxfs_format_opts o = { .nr_buckets = 2048 };
	struct churn c[NTHREADS];
	pthread_t th[NTHREADS];
	struct daxfs_fs fs;
	struct daxfs_op op;
	u64 size = 16 * MiB;
	int i, errs = 0;
	void *r = t_setup(&fs, size, &o);

	daxfs_op_begin(&fs, &op);
	for (i = 0; i < STABLE; i++)
		CHECK_EQ(daxfs_ov_insert(&op, K(i), i + 1), 0);
	daxfs_op_end(&op);
	t_renew_start(&rn, &fs);	/* we only wait on the workers */
	for (i = 0; i < NTHREADS; i++) {
		c[i] = (struct churn){ .r = r, .size = size, .id = i };
		pthread_create(&th[i], NULL, churn_thread, &c[i]);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		errs += c[i].errors;
	}
	t_renew_stop(&rn);
	CHECK_EQ(errs, 0);
	daxfs_host_leave(&fs);
	t_region_free(r, size);
}

int main(void)
{
	RUN(test_basic);
	RUN(test_full_window);
	RUN(test_churn);
	RUN(test_race_insert);
	RUN(test_race_churn);
	return t_done();
}
