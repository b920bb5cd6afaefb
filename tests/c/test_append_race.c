// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Appends and writes racing a truncate (docs/files.md "Append versus
 * truncate"), made deterministic: the writer's copy actor starts the
 * other host's call (a second host on the same region) between the
 * writer's reservation or first page and the rest of its copy.  A
 * truncate runs in a thread of its own: it closes the file's write gate
 * and then waits for the write in flight, so the actor waits until the
 * gate is closed, then lets the copy go on.  Every outcome must be one
 * that a serial order of the two calls gives: here write-then-truncate.
 */
#include <pthread.h>

#include "tfile.h"

#define REGION (32 * MiB)

/* The other host's call, run from inside the writer's copy. */
struct race {
	struct wsrc w;
	struct daxfs_fs *other;
	u64 ino;
	u64 at_byte;		/* run it when the copy reaches this byte */
	int (*call)(struct race *r);
	u64 arg, arg2;		/* the call's size / offset */
	int ret;
	bool ran;
	bool threaded;		/* call in a thread, once the gate closed */
	pthread_t th;
	u64 done;		/* the threaded call returned */
};

static void *race_thread(void *arg)
{
	struct race *r = arg;

	r->ret = r->call(r);
	daxfs_store(&r->done, 1);
	return NULL;
}

/* The other host's truncate has closed the file's write gate (the
 * inode's gate word names it) and now waits for our write -- or it
 * returned already (a build with DAXFS_BUG_APPEND_TRUNCATE, whose append
 * the gate does not see). */
static void wait_gate_closed(struct race *r)
{
	struct daxfs_inode *ip = t_ip(r->other, r->ino);

	while (!daxfs_load(&ip->parent) && !daxfs_load(&r->done))
		sched_yield();
}

static void race_start(struct race *r)
{
	r->ran = true;
	if (r->threaded) {
		CHECK_EQ(pthread_create(&r->th, NULL, race_thread, r), 0);
		wait_gate_closed(r);
	} else {
		r->ret = r->call(r);
	}
}

/* Copies as asked, with the other host's call made once the copy has
 * reached byte at_byte of the write: at a byte, not at an actor call, as
 * the core copies many pages per call (DAXFS_COPY_CHUNK). */
static u64 race_actor(void *ctx, void *dst, u64 len)
{
	struct race *r = ctx;
	u64 k, c;

	if (r->ran || r->at_byte < r->w.done || r->at_byte >= r->w.done + len)
		return w_actor(&r->w, dst, len);
	k = r->at_byte - r->w.done;
	c = k ? w_actor(&r->w, dst, k) : 0;
	if (c < k)
		return c;
	race_start(r);
	return c + w_actor(&r->w, (u8 *)dst + k, len - k);
}

/* The threaded call is done. */
static void race_join(struct race *r)
{
	if (r->ran && r->threaded)
		CHECK_EQ(pthread_join(r->th, NULL), 0);
}

static int do_truncate(struct race *r)
{
	return daxfs_truncate(r->other, r->ino, r->arg);
}

static int do_pwrite(struct race *r)
{
	static u8 p[4096];

	memset(p, 'P', sizeof(p));
	return (int)t_pwrite(r->other, r->ino, p, r->arg, r->arg2);
}

static u8 src[64 * 1024];
static u8 got[64 * 1024];

/* The file's bytes [0, n) are c0 below a, c1 in [a, b), zeros after. */
static void check_bytes(struct daxfs_fs *fs, u64 ino, u64 n, u8 c0, u64 a,
			u8 c1, u64 b)
{
	u64 i, bad = 0;

	CHECK(n <= sizeof(got));
	memset(got, 0xee, n);
	CHECK_EQ(t_pread(fs, ino, got, n, 0), (s64)n);
	for (i = 0; i < n; i++) {
		u8 want = i < a ? c0 : i < b ? c1 : 0;

		if (got[i] != want && bad++ < 3)
			fprintf(stderr, "  byte %llu: %#x, want %#x\n",
				(unsigned long long)i, got[i], want);
	}
	CHECK_EQ(bad, 0);
}

static u64 file_of(struct daxfs_fs *fs, u8 c, u64 n)
{
	u64 ino = t_mkfile(fs);

	memset(src, c, n);
	CHECK_EQ(t_pwrite(fs, ino, src, n, 0), (s64)n);
	return ino;
}

/*
 * An append of len B's to a file of 100 A's; the other host truncates to
 * t once the copy reached byte `at` of the append.  The append reserved [100, 100 + len) and
 * is in the gate, so the truncate waits for it: append-then-truncate,
 * size t, the B's below t.
 * Growing the file again must show zeros, never the cut B's.
 */
static void append_cut(struct daxfs_fs *fs, struct daxfs_fs *fs2, u64 len,
		       u64 at, u64 t)
{
	u64 ino = file_of(fs, 'A', 100), pos = 0;
	struct race r = { .w = { src, 0, 0, 0 }, .other = fs2, .ino = ino,
			  .at_byte = at, .call = do_truncate, .arg = t,
			  .threaded = true };
	u64 grow = 100 + len + 8192;
	s64 w;

	memset(src, 'B', len);
	w = daxfs_write(fs, ino, 0, len, DAXFS_WRITE_APPEND, race_actor, &r,
			&pos);
	race_join(&r);
	CHECK(r.ran);
	CHECK_EQ(r.ret, 0);
	CHECK_EQ(w, (s64)len);
	CHECK_EQ(pos, 100);
	CHECK_EQ(daxfs_load(&t_ip(fs, ino)->size), t);
	check_bytes(fs, ino, t, 'A', t < 100 ? t : 100, 'B', t);
	/* an extending truncate, then a write past a hole */
	CHECK_EQ(daxfs_truncate(fs, ino, grow), 0);
	check_bytes(fs, ino, grow, 'A', t < 100 ? t : 100, 'B', t);
	CHECK_EQ(t_pwrite(fs, ino, "Z", 1, grow + 5000), 1);
	check_bytes(fs, ino, grow, 'A', t < 100 ? t : 100, 'B', t);
}

/* Defect 2: the truncate lands between the reservation and the copy. */
static void test_append_truncate(void)
{
	struct daxfs_fs fs, fs2;
	void *r = t_setup(&fs, REGION, NULL);

	CHECK_EQ(t_join(&fs2, r, REGION), 0);
	append_cut(&fs, &fs2, 5000, 0, 50);	/* below the append */
	append_cut(&fs, &fs2, 5000, 0, 0);	/* logrotate copytruncate */
	append_cut(&fs, &fs2, 5000, 0, 100);	/* exactly at its start */
	append_cut(&fs, &fs2, 5000, 0, 3000);	/* inside its range */
	/* after its first page (it starts at 100), after its second */
	append_cut(&fs, &fs2, 20000, 3996, 6000);
	append_cut(&fs, &fs2, 20000, 8092, 50);
	append_cut(&fs, &fs2, 20000, 10000, 5000);	/* mid-page */
	daxfs_host_leave(&fs2);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/*
 * The same for an overwrite: a pwrite of P's over 12288 A's, truncated
 * to 100 from its second page on.  The write is in the gate, so the
 * truncate comes after it: 100 P's (never P's, zeros, then P's).
 */
static void test_pwrite_truncate(void)
{
	struct daxfs_fs fs, fs2;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino, size;
	struct race rc;
	s64 w;

	CHECK_EQ(t_join(&fs2, r, REGION), 0);
	ino = file_of(&fs, 'A', 12288);
	rc = (struct race){ .w = { src, 0, 0, 0 }, .other = &fs2, .ino = ino,
			    .at_byte = 4096, .call = do_truncate, .arg = 100,
			    .threaded = true };
	memset(src, 'P', 12288);
	w = daxfs_write(&fs, ino, 0, 12288, 0, race_actor, &rc, NULL);
	race_join(&rc);
	CHECK(rc.ran);
	CHECK_EQ(rc.ret, 0);
	CHECK_EQ(w, 12288);
	size = daxfs_load(&t_ip(&fs, ino)->size);
	CHECK_EQ(size, 100);
	check_bytes(&fs, ino, size, 'P', size, 'P', size);
	CHECK_EQ(daxfs_truncate(&fs, ino, 16384), 0);
	check_bytes(&fs, ino, 16384, 'P', size, 'P', size);
	daxfs_host_leave(&fs2);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

/*
 * Defect 6: a short append (its actor stops after 5000 of 9000 bytes)
 * while another host's pwrite ends exactly at the end of the append's
 * reservation.  The pwrite completed, so its bytes must stay.
 */
static void test_short_append_giveback(void)
{
	struct daxfs_fs fs, fs2;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino, pos = 0, size;
	struct race rc;
	s64 w;

	CHECK_EQ(t_join(&fs2, r, REGION), 0);
	ino = file_of(&fs, 'A', 100);
	rc = (struct race){ .w = { src, 0, 0, 5000 }, .other = &fs2,
			    .ino = ino, .at_byte = 0, .call = do_pwrite,
			    .arg = 100, .arg2 = 9000 };
	memset(src, 'B', 9000);
	w = daxfs_write(&fs, ino, 0, 9000, DAXFS_WRITE_APPEND, race_actor,
			&rc, &pos);
	CHECK(rc.ran);
	CHECK_EQ(rc.ret, 100);
	CHECK_EQ(w, 5000);
	CHECK_EQ(pos, 100);
	size = daxfs_load(&t_ip(&fs, ino)->size);
	CHECK_EQ(size, 9100);
	CHECK_EQ(t_pread(&fs, ino, got, 100, 9000), 100);
	CHECK(!memcmp(got, memset(src, 'P', 100), 100));
	/* the unwritten tail of the short append reads as zeros */
	check_bytes(&fs, ino, 9000, 'A', 100, 'B', 5100);
	daxfs_host_leave(&fs2);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

static u64 fault_actor(void *ctx, void *dst, u64 len)
{
	return 0;	/* the source faults at its first byte */
}

/*
 * An append that stores nothing has no effect: the front ends run an
 * -ENOSPC append again, so a reservation kept each time would grow the
 * file by zeros (found by the linearizability checker).
 */
static void test_failed_append_no_effect(void)
{
	struct daxfs_fs fs;
	void *r = t_setup(&fs, REGION, NULL);
	u64 ino = file_of(&fs, 'A', 100), pos = 0;

	CHECK_EQ(daxfs_write(&fs, ino, 0, 5000, DAXFS_WRITE_APPEND,
			     fault_actor, NULL, &pos), 0);
	CHECK_EQ(daxfs_load(&t_ip(&fs, ino)->size), 100);
	daxfs_host_leave(&fs);
	t_region_free(r, REGION);
}

int main(void)
{
	RUN(test_append_truncate);
	RUN(test_pwrite_truncate);
	RUN(test_short_append_giveback);
	RUN(test_failed_append_no_effect);
	return t_done();
}
