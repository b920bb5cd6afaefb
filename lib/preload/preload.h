/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs-preload: internals shared by the interposed call families.
 *
 * Layout (docs/preload.md):
 *   state.c   configuration, the lazily opened region handle, debug lines
 *   fdtable.c open file descriptions (shared memfd) and this process's
 *             descriptor map; fork and exec hand-over
 *   route.c   which paths and directory descriptors belong to the region
 *   open.c    open/close/dup/fcntl        io.c     data calls
 *   meta.c    stat and namespace calls    dir.c    directories, cwd
 *   stdio.c   FILE streams                exec.c   exec/spawn/fork
 *   syscall.c syscall() by number        creds.c  setuid and the like
 *   glob.c    glob                       ftw.c    ftw, nftw
 */
#ifndef DAXFS_PRELOAD_H
#define DAXFS_PRELOAD_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "daxfs/libdaxfs.h"

#define PUBLIC __attribute__((visibility("default")))

#define PL_PATH_MAX	4096
#define PL_FD_MAX	65536		/* region fds above this: EMFILE */
#define PL_DESC_MAX	16384		/* open file descriptions per tree */
/* processes of one tree whose references are counted where others can
 * give them back (fdledger.c); more count privately, as before.  Only
 * the entries a tree has used are scanned (struct table_head's
 * ledger_used), and only the row pages that count something take
 * memory: the bound costs address space, 32 KiB per entry. */
#define PL_PROC_MAX	1024
#define PL_LEDGER_SIZE	(PL_PROC_MAX * (32 + PL_DESC_MAX * 2))

/* Consistency modes (docs/modes.md): the region handle's open flags,
 * never how paths are routed. */
enum pl_mode { PL_MODE_POSIX = 0, PL_MODE_SYNC = 1, PL_MODE_STRICT = 2 };

enum pl_kind { PL_KIND_REG = 1, PL_KIND_DIR = 2, PL_KIND_PATH = 3 };

/*
 * A directory removed while this process held a description of it: the
 * attributes it had then, as fchmod, fchown and futimens have changed
 * them since.  The core frees a directory at its rmdir (an open set
 * holds files only, docs/open-files.md), so these are all that is left
 * of it; fstat answers from them as the kernel does from the inode an
 * open file still pins (st_nlink 0), never by the number, which names
 * nothing now.  mode 0: not known to be removed.
 */
struct pl_gone {
	_Atomic uint32_t mode;		/* stored last */
	uint32_t uid, gid, pad;
	int64_t atime_ns, mtime_ns, ctime_ns;
};

/*
 * One open file description, shared by every descriptor dup'ed, forked or
 * exec'ed from the open (lives in a MAP_SHARED memfd).  refs counts the
 * descriptors of every process of the tree that point at it.
 */
struct pl_desc {
	_Atomic uint32_t refs;
	uint32_t kind;			/* enum pl_kind */
	_Atomic int32_t flags;		/* O_ACCMODE | O_APPEND | O_NONBLOCK */
	/* an OFD or flock request was made on it: its owner id
	 * (pl_fd_lock_owner) may have locks in the region */
	_Atomic uint32_t lk_used;
	uint64_t ino;
	_Atomic uint64_t off;		/* file offset or directory position */
	union {
		/* PL_KIND_REG: where ino's record is, checked by the core
		 * on every use: shared by every process the description
		 * is, as it holds region offsets (docs/open-files.md
		 * "Per-open-file cache") */
		struct daxfs_fcache fc;
		/* PL_KIND_DIR: the directory, once it is removed */
		struct pl_gone gone;
	};
	char path[PL_PATH_MAX - 80];	/* region path of the open */
};

struct pl_config {
	char region[PL_PATH_MAX];
	char at[PL_PATH_MAX];		/* mount point, no trailing slash */
	size_t at_len;
	enum pl_mode mode;
	int debug;
	int enabled;
	int prefault;			/* daxfs run --prefault */
};

extern struct pl_config pl_cfg;

/* syscall.c: the kernel's own syscall(), never rerouted.  The library's
 * calls go there: the interposed syscall() routes file calls to the
 * interposed functions, which must not see the library's own. */
long pl_syscall(long nr, ...);
#define syscall pl_syscall

/* state.c */
extern __thread int pl_opening_region;	/* open.c moves its fds high */
void pl_init(void);
struct daxfs_handle *pl_handle(void);	/* NULL: errno is set */
void pl_handle_drop(void);		/* before exec */
struct daxfs_handle *pl_handle_peek(void);	/* as it is, may be NULL */
/* The handle when it needs nothing done first (no open, no
 * re-publication pending), else NULL: for the lock-free read. */
struct daxfs_handle *pl_handle_ready(void);
void pl_handle_settle(void);		/* before taking the map lock */
void *pl_real(const char *name);
void pl_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int pl_fail(int neg_errno);		/* sets errno, returns -1 */
/*
 * err of a region path call: -DAXFS_EOUTSIDE when its walk left the
 * region through a symlink (docs/preload.md "Symlinks").  Then buf
 * (PL_PATH_MAX) gets the kernel path, for the call to be made there, and
 * the answer is 1; else 0.
 */
int pl_outside(long err, char *buf);
void pl_attr_to_stat(const struct daxfs_attr *a, struct stat *st);
dev_t pl_dev(void);

#define REAL(ret, name, ...)						\
	static ret (*real_##name)(__VA_ARGS__);				\
	if (!real_##name)						\
		real_##name = (ret (*)(__VA_ARGS__))pl_real(#name)

/* fdtable.c */
struct pl_desc *pl_fd_get(int fd);	/* NULL: a kernel descriptor */
void pl_fd_put(struct pl_desc *d);
/* fd's description with no lock (NULL: none, or the map is changing);
 * what was loaded from it counts only while pl_fd_peek_still(seq). */
struct pl_desc *pl_fd_peek(int fd, unsigned int *seq);
int pl_fd_peek_still(unsigned int seq);
int pl_fd_install(uint64_t ino, int kind, int flags, const char *path);
int pl_fd_reserve(int flags);		/* a number, before the open acts */
int pl_fd_install_at(int fd, uint64_t ino, int kind, int flags,
		     const char *path);
void pl_fd_unreserve(int fd);
int pl_fd_release(int fd);		/* drop fd's entry (kernel fd stays) */
bool pl_fd_dirs_held(void);
bool pl_fd_dir_held(uint64_t ino);
void pl_fd_gone_mark(uint64_t ino, const struct pl_gone *g);
bool pl_gone_load(struct pl_desc *d, struct pl_gone *g);
void pl_fd_alias(int newfd, int oldfd);	/* newfd now shares oldfd's desc */
void pl_fd_drop_locked(int fd);		/* map lock held for writing */
void pl_fd_lock(void);
void pl_fd_unlock(void);
int pl_fd_is_region(int fd);
bool pl_fd_linkable(int fd, bool clear);	/* O_TMPFILE, not yet named */
/* in a description's flags: an O_TMPFILE open that may still be named
 * (the kernel's own __O_TMPFILE bit; glibc's includes O_DIRECTORY) */
#define PL_O_LINKABLE	020000000
void pl_fork_prepare(void);		/* before fork: refs for the child */
void pl_fork_parent(int failed, pid_t pid);	/* pid 0: not known */
void pl_fork_child(void);
void pl_reopen_all(struct daxfs_handle *h);
/* What a spawn's file actions leave at descriptor fd (spawn.c): region
 * description desc, or -1 for none of ours. */
struct pl_fd_change {
	int fd;
	int desc;
	bool cloexec;	/* spawn.c's own: closed after the last action */
};
/* "DAXFS_PRELOAD_FDS=..."; chg: a spawn's file actions, NULL for none */
char *pl_exec_env(int handover, int wait_fd, const struct pl_fd_change *chg,
		  size_t nchg);
void pl_exec_env_undo(const struct pl_fd_change *chg, size_t nchg);
bool pl_fd_table_made(void);		/* a region descriptor was ever made */
int pl_fd_desc(int fd);			/* its description, -1: the kernel's */
int pl_desc_dir(int idx, char *path, size_t size);	/* a directory's path */
int pl_exec_handing_over(void);		/* keep the host across this exec */
int pl_exec_waits(void);		/* the spawn names a wait descriptor */
int pl_exec_takeover_due(void);		/* new image: join, take over */
void pl_exec_wait_done(void);		/* new image: parent may go on */
int pl_fork_needs_handoff(void);	/* map lock held */
void pl_exec_import(void);
void pl_run_comm_import(void);		/* runfile.c */
void pl_spawn_fork_child(void);		/* spawn.c */
int pl_own_fd(int fd);		/* the table's memfd or the template */
void pl_own_move(int fd);	/* ours: moved up before fd is taken */
int pl_own_in(unsigned int first, unsigned int last, int out[2]);
/* the spawn's entry that waits for its image (system, popen) */
struct pl_spawn_entry {
	int idx;
	uint64_t word;
};
void pl_spawn_entry_get(struct pl_spawn_entry *e);
void pl_spawn_entry_over(const struct pl_spawn_entry *e, int failed);

/* fdledger.c: each process's references, where others can give them
 * back once it has ended (docs/preload.md) */
extern uint16_t *pl_refrow;	/* our count per description */
void pl_ledger_attach(_Atomic uint32_t *used);
/* fdtable.c: the ledger part of the table memfd, mapped, or NULL */
void *pl_table_ledger_map(void);
bool pl_ledger_reap(int only);
void pl_ledger_fork_prepare(void);
bool pl_ledger_fork_parent(bool failed, pid_t pid);
bool pl_ledger_fork_child(void);
uint64_t pl_ledger_pending(int *idx);
void pl_ledger_child_add(unsigned int desc, int delta);
void pl_ledger_spawn_over(int idx, uint64_t w);
int pl_ledger_env(char *buf, size_t size);
bool pl_ledger_import(int i, uint64_t w);
void pl_ledger_leave(void);
void pl_fd_give_back(unsigned int idx, unsigned int count);	/* fdtable.c */

/* open.c */
mode_t pl_umask(void);
int pl_open_region(const char *rpath, int flags, mode_t mode);

/* prefault.c: map the file's pages into this process at open */
void pl_prefault(uint64_t ino, uint64_t size);

/* lock.c */
struct flock;
int pl_lock(int fd, int cmd, struct flock *fl);
void pl_lock_drop_posix(uint64_t ino);	/* a close: the process's go */
void pl_lock_drop_desc(uint64_t ino, uint64_t id); /* its last close */
void pl_lock_inherited(void);		/* exec took locks over */
bool pl_lock_took(void);		/* this process asked for a lock */
/* The heartbeat's look at who carries our descriptions' locks. */
void pl_lock_watch(struct daxfs_handle *h, void *arg);
/* Before leaving: do we carry locks of a description others still hold
 * (n pairs of inode and owner id)?  Then we must not leave. */
bool pl_lock_carried(struct daxfs_handle *h, const uint64_t (*c)[2],
		     unsigned int n);
/* fdtable.c: the described (ino, lock id) pairs for the two above */
unsigned int pl_fd_locked(uint64_t (*c)[2], unsigned int max,
			  unsigned int *from);
/* The owner id of d's OFD and flock locks: the same in every process
 * that maps the table, and unlike any other description's of any host;
 * marks d as locked (lk_used). */
uint64_t pl_fd_lock_owner(struct pl_desc *d);
#define PL_EXIT_CARRY_MAX	64
unsigned int pl_exit_release(uint64_t (*c)[2]);

/* stdio.c */
void pl_std_fix(int fd);	/* after fd 0..2 changed */

/* fsize.c: RLIMIT_FSIZE; 0 or -EFBIG (SIGXFSZ raised) */
int pl_fsize_write(uint64_t at, size_t *len);	/* may shorten *len */
int pl_fsize_grow(uint64_t size, uint64_t new_size);
int pl_fsize_grow_ino(struct daxfs_handle *h, uint64_t ino, uint64_t new_size);
bool pl_fsize_limited(void);			/* a limit is set */

/* map.c: MAP_SHARED mappings of region files */
int pl_map_any(void);
void *pl_map_shared(void *addr, size_t len, int prot, int flags, int fd,
		    off_t off);
void *pl_map_fixed(void *(*real)(void *, size_t, int, int, int, off_t),
		   void *addr, size_t len, int prot, int flags, int fd,
		   off_t off);
void pl_map_cut(uint64_t ino);		/* after this process cut ino */
void pl_map_stop(void);			/* before the handle closes */
void pl_map_fork_prepare(void);
void pl_map_fork_parent(void);
void pl_map_fork_child(void);		/* in the child, after fork */

/* route.c */
/*
 * PL_KERNEL: the kernel's, as given; PL_KERNEL_ABS: the kernel's, but
 * relative to a region directory, so out holds the absolute kernel path
 * to use; PL_REGION: out holds the region path; -1: errno is set.
 */
enum { PL_KERNEL = 0, PL_REGION = 1, PL_KERNEL_ABS = 2 };
int pl_route(int dirfd, const char *path, char *out);
int pl_dir_path(char *out, size_t size, const char *rpath, const char *suffix);
int pl_region_resolve(struct daxfs_handle *h, const char *in, char *out);
int pl_physical(struct daxfs_handle *h, char *rpath);	/* dir.c */
int pl_chdir_target(struct daxfs_handle *h, char *rpath);	/* dir.c */
#define PL_KPATH(r, path, buf) ((r) == PL_KERNEL_ABS ? (buf) : (path))

/* fdlink.c: "/proc/self/fd/N", "/dev/fd/N", "/dev/stdout"... of region
 * descriptors: N (what follows it in *rest), or -1 for other paths */
int pl_fd_link(const char *path, const char **rest);
int pl_fd_link_exact(const char *path);		/* nothing follows N */
int pl_route_follow(int dirfd, const char *path, char *out);
int pl_fd_link_target(int fd, char *out, size_t size);
int pl_open_fd_link(int fd, int flags, mode_t mode);	/* open.c */
/* "/proc/self/cwd" of a region working directory: what follows it */
const char *pl_cwd_link(const char *path);
int pl_cwd_link_target(char *out, size_t size);
char *pl_cwd_env(void);
int pl_last_dots(const char *path);
int pl_parent_err(int dirfd, const char *path);
size_t pl_parent_len(const char *path);
int pl_ino_touch(struct daxfs_handle *h, uint64_t ino);
int pl_region_dir(struct daxfs_handle *h, const char *rpath,
		  struct daxfs_attr *a);
int pl_region_parent(struct daxfs_handle *h, const char *rpath,
		     struct daxfs_attr *a);
int pl_dots(int dirfd, const char *path, int dot_err, int dotdot_err);
int pl_path_step(const char **p, char *out, size_t *n, int *slash);
bool pl_next_dotdot(const char *p);	/* is p's next component ".."? */
int pl_cwd_set(const char *region_path);	/* NULL: back to the kernel */
/* fchdir into a removed directory; its attributes changed */
void pl_cwd_set_gone(const char *region_path, uint64_t ino,
		     const struct pl_gone *g);
void pl_cwd_gone_update(uint64_t ino, const struct pl_gone *g);
bool pl_cwd_gone(void);
/*
 * The removed directory itself, as the last pl_route of this thread
 * found it: a path of "." alone from a removed directory (a descriptor,
 * the working directory).  pl_route then gives PL_REGION and "" for the
 * region path, which every library call answers with ENOENT; the calls
 * that the kernel answers from the directory's inode look here first.
 */
struct pl_self {
	bool on;
	uint64_t ino;
	struct pl_gone g;
	const char *path;		/* the region path it had */
};
extern __thread struct pl_self pl_self;
void pl_gone_attr(uint64_t ino, const struct pl_gone *g,
		  struct daxfs_attr *a);
int pl_cwd_copy(char *buf, size_t size);	/* 1: a region cwd */
void pl_kcwd_refresh(void);
void pl_kcwd_detach(void);		/* kernel cwd: an empty, removed dir */

#endif /* DAXFS_PRELOAD_H */
