// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Every public libdaxfs call on a host-less view: a region opened
 * DAXFS_OPEN_RDONLY (mapped read-only) or DAXFS_OPEN_NOJOIN (mapped
 * read-write, not joined).  Such a view has no host slot and no lane, so
 * each call must either work without one (reads, stat, readdir) or refuse
 * with a clear error; none may crash (each runs in a child of its own, so
 * that a crash names its call) and none may store into the region (its
 * bytes are compared before and after, which catches a NOJOIN view's
 * stray store; a RDONLY view's faults).  A host-less view cannot hold a
 * page back from reuse, so it maps none alone (-ENODEV, the answer of a
 * region that maps only in 2 MiB pieces: the caller copies).
 *
 * DAXFS_TEST_VERBOSE=1 prints every call's answer: reading them found
 * daxfs_page_map handing out pool pages that nothing held (0 everywhere).
 *
 * The kind of test that was missing: the Python map's pass thread asked
 * daxfs_map_pass_wanted every 20 ms, which read the host table at slot
 * DAXFS_NO_HOST and crashed a read-only map that lived that long; and a
 * read-only map mapped pool pages that another host could free and reuse
 * for another file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tutil.h"
#include "daxfs/libdaxfs.h"
#include "daxfs/libdaxfs-ino.h"
#include "daxfs/libdaxfs-xattr.h"

#define MiB		(1ULL << 20)
#define FILE_LEN	(3 * 4096 + 100)

static char path[64];
static struct daxfs_handle *h;		/* the host-less view under test */
static uint64_t ino_f, ino_d, ino_root;
static char buf[16384];

/* what a call must give on a host-less view */
enum want {
	WANT_OK,	/* >= 0 */
	WANT_LOCAL,	/* >= 0, shut down too: the handle's own state, or a
			 * look at the host table that stores nothing */
	WANT_ROFS,	/* -EROFS: it would change the region */
	WANT_NODEV,	/* -ENODEV: no page maps alone */
	WANT_AGAIN,	/* -EAGAIN: read it instead */
	WANT_ZERO,	/* exactly 0 (no ask for a pass, nothing mapped) */
	WANT_ANY,	/* any result; it only must not crash or store */
};

struct call {
	const char *name;
	long (*fn)(void);
	enum want want;
};

static int count_cb(void *ctx, const char *name, uint32_t len, uint64_t ino,
		    uint32_t dtype, uint64_t pos)
{
	(void)name; (void)len; (void)ino; (void)dtype; (void)pos;
	++*(int *)ctx;
	return 0;
}

static void lock_cb(void *ctx, u64 ino, const struct daxfs_lock_req *r,
		    bool waiting)
{
	(void)ino; (void)r; (void)waiting;
	++*(int *)ctx;
}

static struct daxfs_lock_req wrlock(void)
{
	struct daxfs_lock_req r;

	memset(&r, 0, sizeof(r));
	r.end = 99;
	r.type = DAXFS_LCK_WR;
	r.kind = DAXFS_LCK_POSIX;
	r.owner = 1;
	return r;
}

#define LOCALS struct daxfs_attr a; uint64_t ino, u64v; int n = 0; \
	struct daxfs_fcache fc; struct daxfs_extent ext[4]; \
	struct daxfs_dirent_info de[8]; struct daxfs_lock_req lr = wrlock(); \
	uint32_t slot

/* one function per call: each declares what it needs */
#define CALLS(X)							\
	X(path_stat, WANT_OK, daxfs_path_stat(h, "/d/f", &a))		\
	X(path_lstat, WANT_OK, daxfs_path_lstat(h, "/s", &a))		\
	X(path_resolve, WANT_OK, daxfs_path_resolve(h, "/s", 1, &ino))	\
	X(fstat, WANT_OK, daxfs_fstat(h, ino_f, &a))			\
	X(pread, WANT_OK, daxfs_pread(h, ino_f, buf, sizeof(buf), 0))	\
	X(pread_fc, WANT_OK, (memset(&fc, 0, sizeof(fc)),			\
		daxfs_pread_fc(h, ino_f, &fc, buf, sizeof(buf), 4096)))	\
	X(pread_try, WANT_ANY, (memset(&fc, 0, sizeof(fc)),		\
		daxfs_pread_try(h, ino_f, &fc, buf, 100, 0)))		\
	X(file_seek, WANT_OK, daxfs_file_seek(h, ino_f, 0, 3 /* SEEK_DATA */, &u64v)) \
	X(file_extents, WANT_OK, daxfs_file_extents(h, ino_f, 0, FILE_LEN, ext, 4)) \
	X(path_readlink, WANT_OK, daxfs_path_readlink(h, "/s", buf, 100))	\
	X(path_readdir, WANT_OK, daxfs_path_readdir(h, "/d", count_cb, &n)) \
	X(path_readdir_chunk, WANT_OK,					\
		daxfs_path_readdir_chunk(h, "/", 0, de, 8, &u64v))	\
	X(readdir_chunk, WANT_OK, daxfs_readdir_chunk(h, ino_d, 0, de, 8, &u64v)) \
	X(ino_lookup, WANT_OK, daxfs_ino_lookup(h, ino_d, "f", &ino, &a))	\
	X(ino_readdir, WANT_OK, (u64v = 0,					\
		daxfs_ino_readdir(h, ino_d, &u64v, count_cb, &n)))	\
	X(ino_readlink, WANT_OK, (daxfs_path_lstat(h, "/s", &a),		\
		daxfs_ino_readlink(h, a.ino, buf, 100)))		\
	X(xattr_get, WANT_OK, daxfs_xattr_get(h, ino_f, "user.k", buf, 100)) \
	X(xattr_list, WANT_OK, daxfs_xattr_list(h, ino_f, buf, 100))	\
	X(path_getxattr, WANT_OK,						\
		daxfs_path_getxattr(h, "/s", 1, "user.k", buf, 100))	\
	X(path_listxattr, WANT_OK, daxfs_path_listxattr(h, "/d/f", 0, buf, 100)) \
	X(access, WANT_OK, daxfs_access(h, ino_f, 0, 0, NULL, 0, 4))	\
	X(set_link_prefix, WANT_LOCAL, daxfs_set_link_prefix(h, "/daxfs"))	\
	X(link_outside, WANT_ANY, (daxfs_set_link_prefix(h, "/daxfs"),	\
		daxfs_link_outside(h, "/etc", 4, NULL)))		\
	X(link_in_region, WANT_ANY, (daxfs_set_link_prefix(h, "/daxfs"), \
		strcpy(buf, "/daxfs/d/f"),				\
		daxfs_link_in_region(h, buf, strlen(buf))))		\
	X(link_may_follow, WANT_OK, (daxfs_set_link_protect(h, 1),	\
		daxfs_link_may_follow(h, "/s")))			\
	X(set_creds, WANT_OK, (daxfs_set_creds(h, 1000, 1000),		\
		daxfs_path_stat(h, "/d/f", &a)))			\
	X(region_fd, WANT_LOCAL, daxfs_region_fd(h))			\
	X(region_shutdown, WANT_ANY, (daxfs_region_shutdown(h), 0))	\
	X(statfs, WANT_OK, ({ struct daxfs_statfs s; daxfs_region_statfs(h, &s); })) \
	X(info, WANT_OK, ({ struct daxfs_info i; daxfs_info(h, &i); }))	\
	X(lease_ms, WANT_ANY, daxfs_lease_ms(h))			\
	X(handle_host, WANT_ANY, daxfs_handle_host(h, &slot, &u64v))	\
	X(handle_joins, WANT_ANY, daxfs_handle_joins(h))		\
	X(getlk, WANT_ROFS, daxfs_getlk(h, ino_f, &lr))	/* claims a bucket */			\
	X(lock_list_all, WANT_OK, daxfs_lock_list_all(h, ino_f, lock_cb, &n)) \
	X(cache_info, WANT_ANY,					\
		({ struct daxfs_cache_info c; daxfs_cache_info(h, &c); })) \
	X(cache_drop, WANT_ANY, daxfs_cache_drop(h))			\
	X(page_map, WANT_ANY, ({ const void *p; struct daxfs_page_ref r; \
		int e = daxfs_page_map(h, ino_f, 0, &p, &r);		\
		if (!e) daxfs_page_release(h, &r); e; }))		\
	X(page_map_pool, WANT_AGAIN, ({ const void *p; struct daxfs_page_ref r; \
		daxfs_page_map(h, ino_f, 1, &p, &r); }))		\
	X(page_locate, WANT_OK, ({ const void *p;			\
		daxfs_page_locate(h, ino_f, 1, &p); }))			\
	X(file_open, WANT_OK, daxfs_file_open(h, ino_f))			\
	X(file_close, WANT_ANY, (daxfs_file_open(h, ino_f),		\
		daxfs_file_close(h, ino_f)))				\
	X(map_begin, WANT_OK, daxfs_map_begin(h))				\
	X(map_pass_begin, WANT_OK, daxfs_map_pass_begin(h))		\
	X(map_pass_end, WANT_OK, daxfs_map_pass_end(h, daxfs_map_pass_begin(h))) \
	X(map_pass_wanted, WANT_ZERO, daxfs_map_pass_wanted(h))		\
	X(map_page, WANT_NODEV, daxfs_map_page(h, ino_f, 0, 0, &u64v))	\
	X(map_page_alloc, WANT_ROFS,					\
		daxfs_map_page(h, ino_f, 5, DAXFS_MAP_ALLOC, &u64v))	\
	X(map_hold, WANT_ANY, daxfs_map_hold(h, ino_f))		\
	X(map_hold_nowait, WANT_ANY, daxfs_map_hold_nowait(h, ino_f)) \
	X(map_unhold, WANT_ANY, (daxfs_map_hold(h, ino_f),		\
		daxfs_map_unhold(h, ino_f)))				\
	X(space_wait, WANT_ANY, ({ struct daxfs_space_waiter w;	\
		memset(&w, 0, sizeof(w)); daxfs_space_wait(h, &w); }))	\
	X(region_renew, WANT_ANY, daxfs_region_renew(h))		\
	X(region_watch_hosts, WANT_LOCAL, daxfs_region_watch_hosts(h))	\
	X(fs_watch_hosts, WANT_LOCAL, daxfs_fs_watch_hosts(daxfs_handle_fs(h))) \
	X(region_populate, WANT_ANY, daxfs_region_populate(h, NULL, 0)) \
	X(region_reclaim, WANT_ROFS, daxfs_region_reclaim(h))		\
	X(host_retire_slot, WANT_ROFS, daxfs_host_retire_slot(h, 0, 1))	\
	X(host_adopt_locks, WANT_ROFS,					\
		daxfs_host_adopt_locks(h, 0, 1, 0, ~0ULL, 0))		\
	X(host_adopt_owner_locks, WANT_ROFS,				\
		daxfs_host_adopt_owner_locks(h, 0, 1, ino_f, 1))	\
	X(host_process_gone, WANT_ANY, daxfs_host_process_gone(h, 0, &u64v)) \
	X(set_heartbeat_hook, WANT_LOCAL,					\
		(daxfs_set_heartbeat_hook(h, NULL, NULL), 0))		\
	X(lock, WANT_ROFS, daxfs_lock(h, ino_f, &lr, 0))			\
	X(unlock, WANT_ROFS, daxfs_unlock(h, ino_f, DAXFS_LCK_POSIX, 1, 0, 99)) \
	X(file_open_held, WANT_ANY, daxfs_file_open_held(h, ino_f, 0)) \
	X(path_mkdir, WANT_ROFS, daxfs_path_mkdir(h, "/new", 0755))	\
	X(path_mknod, WANT_ROFS, daxfs_path_mknod(h, "/fifo", S_IFIFO | 0644, 0)) \
	X(path_create, WANT_ROFS, daxfs_path_create(h, "/c", 0644, 0, &ino)) \
	X(path_create_existing, WANT_ROFS,					\
		daxfs_path_create(h, "/d/f", 0644, DAXFS_CREATE_TRUNC, &ino)) \
	X(path_tmpfile, WANT_ROFS, daxfs_path_tmpfile(h, "/d", 0644, &ino)) \
	X(link_open, WANT_ROFS, daxfs_link_open(h, ino_f, "/l2"))		\
	X(path_unlink, WANT_ROFS, daxfs_path_unlink(h, "/d/f"))		\
	X(path_rmdir, WANT_ROFS, daxfs_path_rmdir(h, "/e"))		\
	X(path_rename, WANT_ROFS, daxfs_path_rename(h, "/d/f", "/g", 0))	\
	X(path_link, WANT_ROFS, daxfs_path_link(h, "/d/f", "/g"))		\
	X(path_symlink, WANT_ROFS, daxfs_path_symlink(h, "x", "/t"))	\
	X(path_truncate, WANT_ROFS, daxfs_path_truncate(h, "/d/f", 1))	\
	X(path_chmod, WANT_ROFS, daxfs_path_chmod(h, "/d/f", 0600))	\
	X(path_setflags, WANT_ROFS, daxfs_path_setflags(h, "/d/f", 0))	\
	X(path_chown, WANT_ROFS, daxfs_path_chown(h, "/d/f", 1, 1))	\
	X(path_lchown, WANT_ROFS, daxfs_path_lchown(h, "/s", 1, 1))	\
	X(path_utimens, WANT_ROFS, daxfs_path_utimens(h, "/d/f", 5, 5))	\
	X(pwrite, WANT_ROFS, daxfs_pwrite(h, ino_f, "x", 1, 0))		\
	X(pwrite_fc, WANT_ROFS, (memset(&fc, 0, sizeof(fc)),		\
		daxfs_pwrite_fc(h, ino_f, &fc, "x", 1, 0)))		\
	X(append, WANT_ROFS, daxfs_append(h, ino_f, "x", 1, &u64v))	\
	X(append_fc, WANT_ROFS, (memset(&fc, 0, sizeof(fc)),		\
		daxfs_append_fc(h, ino_f, &fc, "x", 1, &u64v)))		\
	X(ftruncate, WANT_ROFS, daxfs_ftruncate(h, ino_f, 0))		\
	X(ftruncate_fc, WANT_ROFS, (memset(&fc, 0, sizeof(fc)),		\
		daxfs_ftruncate_fc(h, ino_f, &fc, 0)))			\
	X(file_fallocate, WANT_ROFS, daxfs_file_fallocate(h, ino_f, 0, 0, 65536)) \
	X(xattr_set, WANT_ROFS, daxfs_xattr_set(h, ino_f, "user.n", "v", 1, 0)) \
	X(xattr_remove, WANT_ROFS, daxfs_xattr_remove(h, ino_f, "user.k")) \
	X(path_setxattr, WANT_ROFS,					\
		daxfs_path_setxattr(h, "/d/f", 0, "user.n", "v", 1, 0))	\
	X(path_removexattr, WANT_ROFS,					\
		daxfs_path_removexattr(h, "/d/f", 0, "user.k"))		\
	X(acl_inherit, WANT_ROFS, daxfs_acl_inherit(h, ino_d, ino_d))	\
	X(ino_mknod, WANT_ROFS,						\
		daxfs_ino_mknod(h, ino_d, "n", S_IFREG | 0644, 0, 0, 0, &ino)) \
	X(ino_mkdir, WANT_ROFS, daxfs_ino_mkdir(h, ino_d, "m", 0755, 0, 0, &ino)) \
	X(ino_symlink, WANT_ROFS,						\
		daxfs_ino_symlink(h, ino_d, "y", "x", 0, 0, &ino))	\
	X(ino_unlink, WANT_ROFS, daxfs_ino_unlink(h, ino_d, "f"))		\
	X(ino_rmdir, WANT_ROFS, daxfs_ino_rmdir(h, ino_root, "e"))		\
	X(ino_link, WANT_ROFS, daxfs_ino_link(h, ino_f, ino_root, "l3"))	\
	X(ino_rename, WANT_ROFS, daxfs_ino_rename(h, ino_d, "f", ino_root, "r", 0)) \
	X(ino_rename_as, WANT_ROFS,					\
		daxfs_ino_rename_as(h, ino_d, "f", ino_root, "r", 0, 0, 0)) \
	X(ino_setattr, WANT_ROFS, (memset(&a, 0, sizeof(a)), a.mode = 0600, \
		daxfs_ino_setattr(h, ino_f, DAXFS_ATTR_MODE, &a)))	\
	X(ino_setflags, WANT_ROFS, daxfs_ino_setflags(h, ino_f, 0, ~0u))

#define DEFINE(id, want, expr) \
	static long call_##id(void) { LOCALS; (void)n; (void)u64v; (void)ino; \
		(void)fc; (void)ext; (void)de; (void)lr; (void)a; (void)slot; \
		return (long)(expr); }
CALLS(DEFINE)

#define ENTRY(id, want, expr) { #id, call_##id, want },
static const struct call calls[] = { CALLS(ENTRY) };

/* FNV-1a over the region file's 64-bit words: any store into it shows */
static uint64_t region_sum(void)
{
	static uint64_t chunk[1 << 13];
	uint64_t s = 0xcbf29ce484222325ULL;
	int fd = open(path, O_RDONLY);
	ssize_t n, i;

	if (fd < 0)
		return 0;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		for (i = 0; i < n / 8; i++)
			s = (s ^ chunk[i]) * 0x100000001b3ULL;
	close(fd);
	return s;
}

/* Runs c in a child: its result, or fails naming the signal that ended it */
static bool run_in_child(const struct call *c, long *ret)
{
	int pfd[2], st;
	pid_t pid;

	if (pipe(pfd))
		return false;
	pid = fork();
	if (pid == 0) {
		long r = c->fn();

		close(pfd[0]);
		if (write(pfd[1], &r, sizeof(r)) != sizeof(r))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], ret, sizeof(*ret)) != sizeof(*ret))
		*ret = LONG_MIN;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "  %s: killed by signal %d\n", c->name,
			WTERMSIG(st));
		return false;
	}
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static bool as_wanted(const struct call *c, long r)
{
	switch (c->want) {
	case WANT_OK:
	case WANT_LOCAL:
		return r >= 0;
	case WANT_ROFS:
		return r == -EROFS;
	case WANT_NODEV:
		return r == -ENODEV;
	case WANT_AGAIN:
		return r == -EAGAIN;
	case WANT_ZERO:
		return r == 0;
	case WANT_ANY:
		return true;
	}
	return false;
}

/* flags: of the view; shut: a joined handle shut down first
 * (daxfs_region_shutdown), whose every call that reaches the region must
 * fail with EIO */
static void sweep(unsigned int flags, bool shut, const char *what)
{
	uint64_t before;
	size_t i;
	long r;

	CHECK_EQ(daxfs_region_open(path, flags, &h), 0);
	if (!h)
		return;
	if (shut)
		daxfs_region_shutdown(h);
	before = region_sum();
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		uint64_t was = region_sum();
		bool ran = run_in_child(&calls[i], &r);
		bool ok = shut && calls[i].want != WANT_LOCAL ?
			  calls[i].want == WANT_ANY || r == -EIO :
			  as_wanted(&calls[i], r);

		if (region_sum() != was) {
			fprintf(stderr, "  %s view, %s: stored into the region\n",
				what, calls[i].name);
			CHECK(0);
		}

		if (getenv("DAXFS_TEST_VERBOSE"))
			printf("  %s view, %s: %ld\n", what, calls[i].name, r);
		CHECK(ran);
		if (ran && !ok) {
			fprintf(stderr, "  %s view, %s: got %ld (%s)\n", what,
				calls[i].name, r, r < 0 ? strerror((int)-r) : "");
			CHECK(0);
		}
	}
	if (shut) {
		CHECK_EQ(daxfs_pread(h, ino_f, buf, sizeof(buf), 0), -EIO);
		CHECK_EQ(region_sum(), before);
		daxfs_region_close(h);	/* gives the slot up as DEAD: a store */
		h = NULL;
		return;
	}
	/* and in this process: what the children read is the file */
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(daxfs_pread(h, ino_f, buf, sizeof(buf), 0), FILE_LEN);
	CHECK_EQ((unsigned char)buf[4097], (4097 * 7) & 0xff);
	daxfs_region_close(h);
	h = NULL;
	CHECK_EQ(region_sum(), before);
}

static void test_read_only_view(void)
{
	sweep(DAXFS_OPEN_RDONLY, false, "read-only");
}

static void test_unjoined_view(void)
{
	sweep(DAXFS_OPEN_NOJOIN, false, "unjoined");
}

static void test_shut_down_handle(void)
{
	sweep(0, true, "shut-down");
}

/* a default ACL for /d, so that daxfs_acl_inherit has one to write:
 * version 2, then user::rwx, group::r-x, other::r-x */
static const uint32_t default_acl[] = {
	2, 0x01 | 7 << 16, ~0u, 0x04 | 5 << 16, ~0u, 0x20 | 5 << 16, ~0u,
};

static int populate(void)
{
	struct daxfs_handle *w;
	struct daxfs_attr a;
	int i, err;

	for (i = 0; i < FILE_LEN && i < (int)sizeof(buf); i++)
		buf[i] = (char)(i * 7);
	err = daxfs_region_open(path, 0, &w);
	if (err)
		return err;
	err = daxfs_path_mkdir(w, "/d", 0755) ?:
	      daxfs_path_mkdir(w, "/e", 0755) ?:
	      (daxfs_path_create(w, "/d/f", 0644, DAXFS_CREATE_EXCL, &ino_f) - 1) ?:
	      (int)(daxfs_pwrite(w, ino_f, buf, FILE_LEN, 0) - FILE_LEN) ?:
	      daxfs_path_symlink(w, "/d/f", "/s") ?:
	      daxfs_xattr_set(w, ino_f, "user.k", "val", 3, 0) ?:
	      daxfs_path_setxattr(w, "/d", 0, "system.posix_acl_default",
				  default_acl, sizeof(default_acl), 0) ?:
	      daxfs_path_stat(w, "/d", &a);
	ino_d = a.ino;
	if (!err)
		err = daxfs_path_stat(w, "/", &a);
	ino_root = a.ino;
	daxfs_region_close(w);
	return err;
}

int main(void)
{
	struct daxfs_mkfs_opts o;
	int err;

	snprintf(path, sizeof(path), "/dev/shm/daxfs-t-hostless.%d",
		 (int)getpid());
	memset(&o, 0, sizeof(o));
	o.force = 1;
	err = daxfs_region_create(path, 32 * MiB, &o) ?: populate();
	if (err) {
		fprintf(stderr, "mkfs or populate failed: %d\n", err);
		unlink(path);
		return 2;
	}
	RUN(test_read_only_view);
	RUN(test_unjoined_view);
	RUN(test_shut_down_handle);
	unlink(path);
	return t_done();
}
