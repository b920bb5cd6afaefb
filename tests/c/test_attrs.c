// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Attribute flags (format 9, docs/attrs.md): two hosts on one region.
 * Host A sets chattr flags, host B is refused what Linux (ext4) refuses,
 * at once, also through the per-open-file cache it filled before the flag
 * came (an already open descriptor); who may change which flag; flags
 * that forbid nothing; fsck of unknown bits; and a writer on B racing
 * A's +i: once daxfs_setflags returned, no byte of the file changes.
 */
#include <pthread.h>

#include "tfile.h"
#include "tcheck.h"

#define REGION (32 * MiB)
#define ROOT 1
#define ALL (DAXFS_MAY_OWNER | DAXFS_MAY_IMMUTABLE)
#define KEEP DAXFS_FALLOC_KEEP_SIZE
#define PUNCH (DAXFS_FALLOC_PUNCH_HOLE | DAXFS_FALLOC_KEEP_SIZE)
#define ZERO DAXFS_FALLOC_ZERO_RANGE
#define BS 4096ULL

static u8 buf[64 << 10], out[64 << 10];

struct two {
	struct daxfs_fs a, b;
	struct t_renewer ra, rb;	/* each idles while the other works */
	void *r;
};

static void two_setup_opts(struct two *t, const struct daxfs_format_opts *o)
{
	memset(t, 0, sizeof(*t));
	t->r = t_setup(&t->a, REGION, o);
	t_renew_start(&t->ra, &t->a);
	CHECK_EQ(t_join_kept(&t->b, &t->rb, t->r, REGION), 0);
}

static void two_setup(struct two *t)
{
	two_setup_opts(t, NULL);
}

static void two_done(struct two *t)
{
	t_renew_stop(&t->rb);
	t_renew_stop(&t->ra);
	daxfs_host_leave(&t->b);
	t_obs_detach(&t->b);
	daxfs_host_leave(&t->a);
	t_obs_detach(&t->a);
	t_region_free(t->r, REGION);
}

static s64 fc_write(struct daxfs_fs *fs, u64 ino, struct daxfs_fcache *fc,
		    u64 len, u64 off, u32 flags)
{
	struct wsrc w = { buf, 0, 0, 0 };
	u64 pos = 0;

	return daxfs_write_fc(fs, ino, fc, off, len, flags, w_actor, &w, &pos);
}

static u64 mk(struct daxfs_fs *fs, u64 dir, const char *n, u32 mode)
{
	u64 ino = 0;

	if (DAXFS_IS_DIR(mode))
		CHECK_EQ(daxfs_mkdir(fs, dir, n, strlen(n), mode, 0, 0, &ino), 0);
	else
		CHECK_EQ(daxfs_mknod(fs, dir, n, strlen(n), mode, 0, 0, 0, &ino), 0);
	return ino;
}

static int mv(struct daxfs_fs *fs, u64 sd, const char *s, u64 dd,
	      const char *d, u32 flags)
{
	return daxfs_rename(fs, sd, s, strlen(s), dd, d, strlen(d), flags);
}

static int set_attr(struct daxfs_fs *fs, u64 ino, u32 valid)
{
	struct daxfs_attr a;

	memset(&a, 0, sizeof(a));
	a.mode = 0600;
	a.atime_ns = a.mtime_ns = a.ctime_ns = 1000;
	return daxfs_setattr(fs, ino, valid, &a);
}

static u32 flags_of(struct daxfs_fs *fs, u64 ino)
{
	struct daxfs_attr a;
	u32 fl = ~0u;

	CHECK_EQ(daxfs_getflags(fs, ino, &fl), 0);
	CHECK_EQ(t_getattr(fs, ino, &a), 0);
	CHECK_EQ(a.flags, fl);
	return fl;
}

/* What both immutable and append-only forbid on host B's file ino. */
static void refused_both(struct daxfs_fs *b, u64 ino, const char *name)
{
	u64 off;

	CHECK_EQ(daxfs_fallocate(b, ino, PUNCH, 0, BS), -EPERM);
	CHECK_EQ(daxfs_fallocate(b, ino, ZERO, 0, BS), -EPERM);
	CHECK_EQ(daxfs_truncate(b, ino, 1), -EPERM);
	CHECK_EQ(daxfs_truncate(b, ino, 1 << 20), -EPERM);
	CHECK_EQ(daxfs_map_block(b, ino, 0, true, &off), -EPERM);
	CHECK_EQ(set_attr(b, ino, DAXFS_ATTR_MODE), -EPERM);
	CHECK_EQ(set_attr(b, ino, DAXFS_ATTR_UID), -EPERM);
	CHECK_EQ(set_attr(b, ino, DAXFS_ATTR_SIZE), -EPERM);
	CHECK_EQ(daxfs_setxattr(b, ino, "user.n", 6, "v", 1, 0), -EPERM);
	CHECK_EQ(daxfs_removexattr(b, ino, "user.x", 6), -EPERM);
	CHECK_EQ(daxfs_link(b, ino, ROOT, "l", 1), -EPERM);
	CHECK_EQ(daxfs_unlink(b, ROOT, name, strlen(name)), -EPERM);
	CHECK_EQ(mv(b, ROOT, name, ROOT, "moved", 0), -EPERM);
	CHECK_EQ(mv(b, ROOT, "other", ROOT, name, 0), -EPERM);
	CHECK_EQ(mv(b, ROOT, "other", ROOT, name, DAXFS_RENAME_EXCHANGE),
		 -EPERM);
	/* reading stays */
	CHECK_EQ(daxfs_map_block(b, ino, 0, false, &off), 0);
	CHECK(off != 0);
	CHECK_EQ(t_pread(b, ino, out, 100, 0) >= 0, 1);
}

/* A sets +i; B (an open file: its cache filled before) is refused every
 * change; B cannot clear it without the capability; then it can. */
static void test_immutable_file(void)
{
	struct daxfs_fcache fc = { 0 };
	struct two t;
	u64 ino, other, off;

	two_setup(&t);
	memset(buf, 0x61, sizeof(buf));
	ino = mk(&t.a, ROOT, "f", DAXFS_S_IFREG | 0644);
	other = mk(&t.a, ROOT, "other", DAXFS_S_IFREG | 0644);
	CHECK_EQ(daxfs_setxattr(&t.a, ino, "user.x", 6, "1", 1, 0), 0);
	CHECK_EQ(daxfs_open_get(&t.b, ino), 0);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 3 * BS, 0, 0), (s64)(3 * BS));
	CHECK(fc.rec != 0);
	CHECK_EQ(flags_of(&t.b, ino), 0);

	CHECK_EQ(daxfs_setflags(&t.a, ino, DAXFS_FL_IMMUTABLE, ALL), 0);
	CHECK_EQ(flags_of(&t.b, ino), DAXFS_FL_IMMUTABLE);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, 0), -EPERM);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, DAXFS_WRITE_APPEND), -EPERM);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, DAXFS_WRITE_ATOMIC), -EPERM);
	CHECK_EQ(t_pwrite(&t.b, ino, buf, 10, 5 * BS), -EPERM);
	CHECK_EQ(daxfs_truncate_fc(&t.b, ino, &fc, 0), -EPERM);
	CHECK_EQ(daxfs_fallocate(&t.b, ino, 0, 0, 8 * BS), -EPERM);
	CHECK_EQ(daxfs_fallocate(&t.b, ino, KEEP, 0, 8 * BS), -EPERM);
	refused_both(&t.b, ino, "f");
	/* a read's access time alone is not a change */
	CHECK_EQ(set_attr(&t.b, ino, DAXFS_ATTR_ATIME), 0);
	CHECK_EQ(set_attr(&t.b, ino, DAXFS_ATTR_MTIME), -EPERM);
	/* the name and the data stayed */
	CHECK_EQ(daxfs_lookup(&t.b, ROOT, "f", 1, &off), 0);
	CHECK_EQ(off, ino);
	CHECK_EQ(t_pread(&t.b, ino, out, 3 * BS, 0), (s64)(3 * BS));
	CHECK(!memcmp(out, buf, 3 * BS));

	/* who may: the owner alone, or the capability alone, is not enough;
	 * an immutable inode changes no other flag while it stays so */
	CHECK_EQ(daxfs_setflags(&t.b, ino, 0, DAXFS_MAY_OWNER), -EPERM);
	CHECK_EQ(daxfs_setflags(&t.b, ino, 0, DAXFS_MAY_IMMUTABLE), -EPERM);
	CHECK_EQ(daxfs_setflags(&t.b, ino, DAXFS_FL_IMMUTABLE |
				DAXFS_FL_NODUMP, ALL), -EPERM);
	CHECK_EQ(daxfs_setflags(&t.b, ino, DAXFS_FL_IMMUTABLE |
				DAXFS_FL_APPEND, ALL), 0);
	CHECK_EQ(flags_of(&t.a, ino), DAXFS_FL_IMMUTABLE | DAXFS_FL_APPEND);
	CHECK_EQ(daxfs_setflags(&t.b, ino, 0, ALL), 0);
	CHECK_EQ(flags_of(&t.a, ino), 0);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, 0), 10);
	CHECK_EQ(daxfs_map_block(&t.b, ino, 0, true, &off), 0);
	CHECK_EQ(daxfs_unlink(&t.b, ROOT, "f", 1), 0);
	CHECK_EQ(daxfs_open_put(&t.b, ino), 0);
	(void)other;
	two_done(&t);
}

/* +a: appends (and growing preallocation) only; no name, mode, owner,
 * xattr or range change, no truncate either way (Linux). */
static void test_append_file(void)
{
	struct daxfs_fcache fc = { 0 };
	struct daxfs_attr a;
	struct two t;
	u64 ino, pos = 0;

	two_setup(&t);
	memset(buf, 0x62, sizeof(buf));
	ino = mk(&t.a, ROOT, "log", DAXFS_S_IFREG | 0644);
	mk(&t.a, ROOT, "other", DAXFS_S_IFREG | 0644);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 100, 0, 0), 100);
	CHECK_EQ(daxfs_setflags(&t.a, ino, DAXFS_FL_APPEND, ALL), 0);
	CHECK_EQ(flags_of(&t.b, ino), DAXFS_FL_APPEND);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, 0), -EPERM);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 100, 0), -EPERM);
	CHECK_EQ(t_append(&t.b, ino, buf, 50, &pos), 50);
	CHECK_EQ(pos, 100);
	CHECK_EQ(fc_write(&t.b, ino, &fc, 10, 0, DAXFS_WRITE_APPEND |
			  DAXFS_WRITE_ATOMIC), 10);
	CHECK_EQ(daxfs_fallocate(&t.b, ino, 0, 0, 2 * BS), 0);
	CHECK_EQ(daxfs_fallocate(&t.b, ino, KEEP, 0, 4 * BS), 0);
	refused_both(&t.b, ino, "log");
	/* times move (a write's mtime); mode and owners do not */
	CHECK_EQ(set_attr(&t.b, ino, DAXFS_ATTR_MTIME | DAXFS_ATTR_CTIME), 0);
	CHECK_EQ(t_getattr(&t.a, ino, &a), 0);
	CHECK_EQ(a.size, 2 * BS);
	CHECK_EQ(a.mode, DAXFS_S_IFREG | 0644);
	CHECK_EQ(daxfs_setflags(&t.a, ino, 0, ALL), 0);
	CHECK_EQ(daxfs_truncate(&t.b, ino, 0), 0);
	two_done(&t);
}

/* Directories: +i no entry in or out; +a entries in, none out. */
static void test_dirs(void)
{
	struct two t;
	u64 d, e, x, y, ino;

	two_setup(&t);
	d = mk(&t.a, ROOT, "d", DAXFS_S_IFDIR | 0755);
	e = mk(&t.a, d, "e", DAXFS_S_IFDIR | 0755);
	x = mk(&t.a, d, "x", DAXFS_S_IFREG | 0644);
	y = mk(&t.a, ROOT, "y", DAXFS_S_IFREG | 0644);
	mk(&t.a, ROOT, "z", DAXFS_S_IFREG | 0644);

	CHECK_EQ(daxfs_setflags(&t.a, d, DAXFS_FL_IMMUTABLE, ALL), 0);
	CHECK_EQ(flags_of(&t.b, d), DAXFS_FL_IMMUTABLE);
	CHECK_EQ(daxfs_mknod(&t.b, d, "n", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), -EPERM);
	CHECK_EQ(daxfs_mkdir(&t.b, d, "n", 1, 0755, 0, 0, &ino), -EPERM);
	/* an existing name is EEXIST, naming its inode (open(O_CREAT)
	 * opens it), as in Linux: the lookup comes before the flags */
	ino = 0;
	CHECK_EQ(daxfs_mknod(&t.b, d, "x", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), -EEXIST);
	CHECK_EQ(ino, x);
	CHECK_EQ(daxfs_symlink(&t.b, d, "n", 1, "y", 1, 0, 0, &ino), -EPERM);
	CHECK_EQ(daxfs_link(&t.b, y, d, "n", 1), -EPERM);
	CHECK_EQ(daxfs_unlink(&t.b, d, "x", 1), -EPERM);
	CHECK_EQ(daxfs_rmdir(&t.b, d, "e", 1), -EPERM);
	CHECK_EQ(mv(&t.b, d, "x", ROOT, "x2", 0), -EPERM);
	CHECK_EQ(mv(&t.b, ROOT, "y", d, "y", 0), -EPERM);
	CHECK_EQ(mv(&t.b, d, "x", d, "x3", 0), -EPERM);
	CHECK_EQ(mv(&t.b, ROOT, "d", ROOT, "d2", 0), -EPERM);
	CHECK_EQ(set_attr(&t.b, d, DAXFS_ATTR_MODE), -EPERM);
	/* the directory's own name goes nowhere either */
	CHECK_EQ(daxfs_rmdir(&t.b, ROOT, "d", 1), -EPERM);
	/* its files are not immutable */
	CHECK_EQ(t_pwrite(&t.b, x, buf, 10, 0), 10);

	CHECK_EQ(daxfs_setflags(&t.a, d, DAXFS_FL_APPEND, ALL), 0);
	CHECK_EQ(flags_of(&t.b, d), DAXFS_FL_APPEND);
	CHECK_EQ(daxfs_mknod(&t.b, d, "n", 1, DAXFS_S_IFREG | 0644, 0, 0, 0,
			     &ino), 0);
	CHECK_EQ(daxfs_link(&t.b, y, d, "yl", 2), 0);
	CHECK_EQ(mv(&t.b, ROOT, "z", d, "z", 0), 0);
	CHECK_EQ(daxfs_unlink(&t.b, d, "n", 1), -EPERM);
	CHECK_EQ(daxfs_rmdir(&t.b, d, "e", 1), -EPERM);
	CHECK_EQ(mv(&t.b, d, "x", ROOT, "x2", 0), -EPERM);
	CHECK_EQ(mv(&t.b, ROOT, "y", d, "x", 0), -EPERM);	/* replaces x */
	CHECK_EQ(daxfs_rmdir(&t.b, ROOT, "d", 1), -EPERM);

	CHECK_EQ(daxfs_setflags(&t.a, d, 0, ALL), 0);
	CHECK_EQ(daxfs_unlink(&t.b, d, "n", 1), 0);
	CHECK_EQ(daxfs_rmdir(&t.b, d, "e", 1), 0);
	(void)e;
	two_done(&t);
}

/* Flags that forbid nothing, unknown flags, and a symlink or device. */
static void test_other_flags(void)
{
	struct two t;
	u64 ino, s;
	u32 fl = DAXFS_FL_NODUMP | DAXFS_FL_NOATIME | DAXFS_FL_SYNC;

	two_setup(&t);
	ino = mk(&t.a, ROOT, "f", DAXFS_S_IFREG | 0644);
	CHECK_EQ(daxfs_setflags(&t.a, ino, 0x1, ALL), -EOPNOTSUPP);
	CHECK_EQ(daxfs_setflags(&t.a, ino, 0x80000, ALL), -EOPNOTSUPP);
	CHECK_EQ(daxfs_setflags(&t.a, ino, fl, 0), -EPERM);
	CHECK_EQ(daxfs_setflags(&t.a, ino, fl, DAXFS_MAY_OWNER), 0);
	CHECK_EQ(flags_of(&t.b, ino), fl);
	CHECK_EQ(t_pwrite(&t.b, ino, buf, 10, 0), 10);
	CHECK_EQ(daxfs_truncate(&t.b, ino, 0), 0);
	CHECK_EQ(daxfs_unlink(&t.b, ROOT, "f", 1), 0);
	CHECK_EQ(daxfs_symlink(&t.a, ROOT, "s", 1, "t", 1, 0, 0, &s), 0);
	CHECK_EQ(daxfs_setflags(&t.a, s, DAXFS_FL_NODUMP, ALL), 0);
	CHECK_EQ(flags_of(&t.b, s), DAXFS_FL_NODUMP);
	two_done(&t);
}

struct fsck_seen {
	int unknown;
};

static void fsck_report(void *ctx, const struct daxfs_check_problem *e)
{
	struct fsck_seen *s = ctx;

	if (strstr(e->msg, "unknown inode flags"))
		s->unknown++;
}

/* fsck: the chattr bits are known; another bit is reported and -y
 * clears it (the defined ones stay). */
static void test_fsck(void)
{
	struct daxfs_check_result res;
	struct fsck_seen seen = { 0 };
	struct daxfs_inode *ip;
	struct two t;
	u64 ino;

	two_setup(&t);
	ino = mk(&t.a, ROOT, "f", DAXFS_S_IFREG | 0644);
	CHECK_EQ(daxfs_setflags(&t.a, ino, DAXFS_FL_IMMUTABLE |
				DAXFS_FL_NOATIME, ALL), 0);
	CHECK_EQ(t_fsck(t.r, REGION, false, fsck_report, &seen, &res), 0);
	CHECK_EQ(seen.unknown, 0);
	CHECK_EQ(res.nr[DAXFS_CHK_ERROR], 0);
	ip = t_ip(&t.a, ino);
	t_renew_stop(&t.rb);
	t_renew_stop(&t.ra);
	daxfs_host_leave(&t.b);
	daxfs_host_leave(&t.a);
	daxfs_store32(&ip->flags, daxfs_load32(&ip->flags) | (1u << 9));
	CHECK_EQ(t_fsck(t.r, REGION, false, fsck_report, &seen, &res), 0);
	CHECK_EQ(seen.unknown, 1);
	CHECK(res.nr[DAXFS_CHK_ERROR] > 0);
	CHECK_EQ(t_fsck(t.r, REGION, true, fsck_report, &seen, &res), 0);
	CHECK_EQ(seen.unknown, 2);
	seen.unknown = 0;
	CHECK_EQ(t_fsck(t.r, REGION, false, fsck_report, &seen, &res), 0);
	CHECK_EQ(seen.unknown, 0);
	CHECK_EQ(daxfs_load32(&ip->flags), DAXFS_IF_IMMUTABLE | DAXFS_IF_NOATIME);
	t_obs_detach(&t.b);
	t_obs_detach(&t.a);
	t_region_free(t.r, REGION);
}

/* Host B overwrites the file's first block with rising counters while
 * host A sets +i: after daxfs_setflags returned, no write succeeds and
 * no byte changes (docs/attrs.md "Ordering"). */
struct racer {
	struct daxfs_fs *fs;
	u64 ino;
	u64 ok, after;
	int last, done, stop;
	int *locked;
};

static void *race_writer(void *arg)
{
	struct racer *r = arg;
	struct daxfs_fcache fc = { 0 };
	u8 b[BS];
	u64 n;
	s64 w;

	for (n = 1; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); n++) {
		int was = __atomic_load_n(r->locked, __ATOMIC_ACQUIRE);

		memset(b, (int)(n & 0xff), sizeof(b));
		{
			struct wsrc s = { b, 0, 0, 0 };

			w = daxfs_write_fc(r->fs, r->ino, &fc, 0, BS, 0,
					   w_actor, &s, NULL);
		}
		if (w < 0) {
			r->last = (int)w;
			__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
			return NULL;
		}
		__atomic_fetch_add(&r->ok, 1, __ATOMIC_RELAXED);
		if (was)
			r->after++;	/* began after setflags returned */
	}
	return NULL;
}

static void test_race(void)
{
	/* its own lease, not the short one of test_c_unit_short_lease: the
	 * writer keeps a CPU busy, and a renewer of A starved past 300 ms on a
	 * loaded machine had A declared dead (setflags -ESTALE) */
	static const struct daxfs_format_opts o = { .lease_ms = 10000 };
	static u8 snap[BS], fin[BS];
	struct two t;
	struct racer r;
	pthread_t th;
	int locked = 0, round, err;

	two_setup_opts(&t, &o);
	for (round = 0; round < 20; round++) {
		char name[16];

		snprintf(name, sizeof(name), "r%d", round);
		memset(&r, 0, sizeof(r));
		r.fs = &t.b;
		r.ino = mk(&t.a, ROOT, name, DAXFS_S_IFREG | 0644);
		r.locked = &locked;
		__atomic_store_n(&locked, 0, __ATOMIC_RELEASE);
		pthread_create(&th, NULL, race_writer, &r);
		/* a writer that failed at once ends the wait too (its
		 * error is then checked below) */
		while (__atomic_load_n(&r.ok, __ATOMIC_RELAXED) < 5 &&
		       !__atomic_load_n(&r.done, __ATOMIC_ACQUIRE))
			sched_yield();
		err = daxfs_setflags(&t.a, r.ino, DAXFS_FL_IMMUTABLE, ALL);
		if (err) {
			/* the writer never meets the flag: stop it, or the
			 * join below waits for ever */
			__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
			pthread_join(th, NULL);
			CHECK_EQ(err, 0);
			break;
		}
		CHECK_EQ(t_pread(&t.a, r.ino, snap, BS, 0), (s64)BS);
		__atomic_store_n(&locked, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		CHECK_EQ(r.last, -EPERM);
		CHECK_EQ(r.after, 0);
		CHECK_EQ(t_pread(&t.a, r.ino, fin, BS, 0), (s64)BS);
		CHECK(!memcmp(snap, fin, BS));
	}
	two_done(&t);
}

int main(void)
{
	RUN(test_immutable_file);
	RUN(test_append_file);
	RUN(test_dirs);
	RUN(test_other_flags);
	RUN(test_fsck);
	RUN(test_race);
	return t_done();
}
