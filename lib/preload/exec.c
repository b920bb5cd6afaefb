// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Process calls: fork gives the child references to every description;
 * exec and spawn hand the descriptor table and a region working
 * directory to the new image in the environment (docs/preload.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload.h"
#include "runfile.h"
#include "spawnplan.h"

extern char **environ;

/*
 * The child's half of a hand-over (docs/preload.md "fork"): join as a
 * host of its own and publish its opens, the parent's slot still holding
 * them, then let the parent go on.
 */
static void handoff_child(int *pfd)
{
	REAL(int, close, int);

	real_close(pfd[0]);
	pl_handle();
	if (write(pfd[1], "", 1) < 0)
		pl_debug("fork hand-over: %s", strerror(errno));
	real_close(pfd[1]);
}

/* The parent's half: wait until the child holds the opens (or died). */
static void handoff_parent(int *pfd)
{
	REAL(int, close, int);
	char c;

	real_close(pfd[1]);
	while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
		;
	real_close(pfd[0]);
}

PUBLIC pid_t fork(void)
{
	REAL(pid_t, fork, void);
	int pfd[2] = { -1, -1 }, err;
	pid_t pid;

	pl_fork_prepare();
	/* a file of ours with no name left dies at our last close unless
	 * the child opened it first: the child does so before we return */
	if (pl_fork_needs_handoff() && pipe2(pfd, O_CLOEXEC))
		pfd[0] = -1;
	pl_map_fork_prepare();
	pid = real_fork();
	err = errno;
	if (pid != 0) {
		pl_map_fork_parent();
		pl_fork_parent(pid < 0, pid);
		if (pfd[0] >= 0 && pid > 0) {
			handoff_parent(pfd);
		} else if (pfd[0] >= 0) {
			close(pfd[0]);
			close(pfd[1]);
		}
	} else {
		pl_map_fork_child();
		if (pfd[0] >= 0)
			handoff_child(pfd);
	}
	errno = err;
	/* the child: state.c's atfork handler reset the map lock */
	return pid;
}

/* A vfork child that touches our tables would corrupt the parent's:
 * make it a fork. */
PUBLIC pid_t vfork(void)
{
	return fork();
}

static int ours(const char *e)
{
	return !strncmp(e, "DAXFS_PRELOAD_FDS=", 18) ||
	       !strncmp(e, "DAXFS_PRELOAD_CWD=", 18) ||
	       !strncmp(e, "DAXFS_PRELOAD_COMM=", 19);
}

/* A region program runs from a memfd, "/proc/self/fd/N", or by its
 * interpreter: the kernel would name the process "N" or the
 * interpreter's name, not the file's.  Its image takes the name from
 * here (state.c). */
static char *run_comm_env(const char *path)
{
	static char buf[64];
	const char *base = path ? strrchr(path, '/') : NULL;

	if (!path)
		return NULL;
	snprintf(buf, sizeof(buf), "DAXFS_PRELOAD_COMM=%.15s",
		 base ? base + 1 : path);
	return buf;
}

/* The working directory a spawn's chdir actions leave the image. */
static char *spawn_cwd_env(const struct pl_spawn_plan *plan)
{
	static char buf[PL_PATH_MAX + 32];

	if (!plan || plan->cwd == PL_SPAWN_CWD_SAME)
		return pl_cwd_env();
	if (plan->cwd == PL_SPAWN_CWD_KERNEL)
		return NULL;
	snprintf(buf, sizeof(buf), "DAXFS_PRELOAD_CWD=%s", plan->cwd_path);
	return buf;
}

/* envp without our variables, plus the current ones (malloc'ed); plan:
 * a spawn's file actions (NULL for an exec); comm: run_comm_env's. */
static char **exec_envp(char *const envp[], int handover, int wait_fd,
			const struct pl_spawn_plan *plan, char *comm)
{
	const struct pl_fd_change *chg = NULL;
	size_t n = 0, i, k = 0, nchg = 0;
	char *fds, *cwd, **out;

	if (plan)
		chg = pl_spawn_changes(plan, &nchg);
	fds = pl_exec_env(handover, wait_fd, chg, nchg);
	cwd = spawn_cwd_env(plan);

	while (envp && envp[n])
		n++;
	out = malloc((n + 4) * sizeof(*out));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++)
		if (!ours(envp[i]))
			out[k++] = envp[i];
	if (fds)
		out[k++] = fds;
	if (cwd)
		out[k++] = cwd;
	if (comm)
		out[k++] = comm;
	out[k] = NULL;
	return out;
}

/* Leave the host table before the image goes, when no other thread
 * than the heartbeat could be inside the library. */
static void before_exec(void)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	int threads = 99;

	/* a regular file survives: the new image takes our opens over,
	 * then retires our host; if exec fails we go on as we were */
	if (pl_exec_handing_over())
		return;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &threads) == 1)
			break;
	fclose(f);
	if (threads <= 2)
		pl_handle_drop();
}

enum { EXEC_PATH, EXEC_SEARCH, EXEC_FD };

/* The exec family's search runs a file the kernel will not as a shell
 * script, as glibc's does. */
static void exec_as_script(const char *path, char *const argv[],
			   char *const e[])
{
	REAL(int, execve, const char *, char *const *, char *const *);
	size_t n = 0, i;
	char **sh;

	while (argv && argv[n])
		n++;
	sh = malloc((n + 2) * sizeof(*sh));
	if (!sh)
		return;
	sh[0] = "/bin/sh";
	sh[1] = (char *)path;
	for (i = 1; i < n; i++)
		sh[i + 1] = argv[i];
	sh[n > 0 ? n + 1 : 2] = NULL;
	real_execve(sh[0], sh, e);
	free(sh);
}

/*
 * The three exec system calls: a region file prepared (runfile.c), our
 * environment, then the real call.  A search with a region directory in
 * PATH is made here, else by glibc.
 */
static int do_exec(int how, const char *path, int fd, char *const argv[],
		   char *const envp[])
{
	REAL(int, execve, const char *, char *const *, char *const *);
	REAL(int, execvpe, const char *, char *const *, char *const *);
	REAL(int, fexecve, int, char *const *, char *const *);
	enum { VIA_RUN, VIA_SEARCH, VIA_FD } via = VIA_RUN;
	char found[PL_PATH_MAX];
	int err, prep = 1;
	struct pl_run r;
	char **e;

	if (how == EXEC_FD && !pl_fd_is_region(fd)) {
		via = VIA_FD;
	} else if (how == EXEC_SEARCH && !strchr(path, '/')) {
		err = pl_run_search(path, found, sizeof(found));
		if (err < 0)
			return -1;
		via = err ? VIA_SEARCH : VIA_RUN;
		path = err ? path : found;
	}
	if (via == VIA_RUN) {
		prep = pl_run_prepare(&r, how == EXEC_FD ? NULL : path,
				      how == EXEC_FD ? fd : -1, argv);
		if (prep < 0) {
			pl_run_end(&r);
			return -1;
		}
	}
	e = exec_envp(envp, 1, -1, NULL, prep ? NULL : run_comm_env(path));
	if (e) {
		before_exec();
		if (via == VIA_FD)
			real_fexecve(fd, argv, e);
		else if (via == VIA_SEARCH)
			real_execvpe(path, argv, e);
		else
			real_execve(r.kpath, r.argv ? r.argv : argv, e);
		if (how == EXEC_SEARCH && via == VIA_RUN && errno == ENOEXEC)
			exec_as_script(path, argv, e);
	}
	err = errno;
	if (via == VIA_RUN)
		pl_run_end(&r);
	free(e);
	errno = err;
	return -1;
}

PUBLIC int execve(const char *path, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_PATH, path, -1, argv, envp);
}

PUBLIC int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_SEARCH, file, -1, argv, envp);
}

PUBLIC int fexecve(int fd, char *const argv[], char *const envp[])
{
	return do_exec(EXEC_FD, NULL, fd, argv, envp);
}

PUBLIC int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

PUBLIC int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl*: the arguments into an array, then the vector call. */
#define ARGV_FROM(arg0, ap, argv, envp_out)				\
	do {								\
		size_t n_ = 1;						\
		va_list cp_;						\
		va_copy(cp_, ap);					\
		while (va_arg(cp_, char *))				\
			n_++;						\
		va_end(cp_);						\
		argv = alloca((n_ + 1) * sizeof(char *));		\
		argv[0] = (char *)arg0;					\
		for (size_t i_ = 1; i_ <= n_; i_++)			\
			argv[i_] = va_arg(ap, char *);			\
		if (envp_out != NULL)					\
			*(char ***)envp_out = va_arg(ap, char **);	\
	} while (0)

PUBLIC int execl(const char *path, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	ARGV_FROM(arg, ap, argv, (void *)NULL);
	va_end(ap);
	return execve(path, argv, environ);
}

PUBLIC int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	va_list ap;

	va_start(ap, arg);
	ARGV_FROM(arg, ap, argv, (void *)NULL);
	va_end(ap);
	return execvpe(file, argv, environ);
}

PUBLIC int execle(const char *path, const char *arg, ...)
{
	char **argv, **envp = NULL;
	va_list ap;

	va_start(ap, arg);
	ARGV_FROM(arg, ap, argv, (void *)&envp);
	va_end(ap);
	return execve(path, argv, envp);
}

/*
 * A spawned image (posix_spawn, popen) opens held by our slot, and our
 * close of a file with no name left must not come first (docs/preload.md
 * "exec").  When we hold such a file, the image gets the write end of a
 * pipe, which its constructor closes once it holds our opens; we wait for
 * end-of-file.  An image that cannot take them (no preload in its
 * environment) is not waited for; one that has the preload in its
 * environment but drops it (set-user-ID) is waited for at most
 * SPAWN_WAIT_MS.  Map lock held (pl_fork_prepare); *rfd gets the read end.
 */
#define SPAWN_WAIT_MS	5000
#define SPAWN_WAIT_FD_MIN 900

static int spawn_wait_open(char *const envp[], int *rfd)
{
	REAL(int, close, int);
	int pfd[2], w = -1;
	size_t i;

	*rfd = -1;
	for (i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11) &&
		    strstr(envp[i], "daxfs-preload"))
			break;
	if (!envp || !envp[i] || !pl_fork_needs_handoff())
		return -1;
	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	/* above the program's own numbers, where spawn file actions that
	 * dup2 onto low descriptors do not replace it; open across exec */
	w = (int)syscall(SYS_fcntl, pfd[1], F_DUPFD, SPAWN_WAIT_FD_MIN);
	real_close(pfd[1]);
	if (w < 0) {
		real_close(pfd[0]);
		return -1;
	}
	*rfd = pfd[0];
	return w;
}

/* The environment named no wait descriptor (no regular file survives):
 * the image must not inherit it. */
static void spawn_wait_drop_unnamed(int *rfd, int *wfd)
{
	REAL(int, close, int);

	if (*wfd < 0 || pl_exec_waits())
		return;
	real_close(*wfd);
	real_close(*rfd);
	*rfd = *wfd = -1;
}

/* After the spawn: our write end goes, then the image's (or its exit). */
static void spawn_wait(int rfd, int wfd, int spawned)
{
	REAL(int, close, int);
	REAL(int, poll, struct pollfd *, nfds_t, int);
	struct pollfd p = { .fd = rfd, .events = POLLIN };

	if (wfd >= 0)
		real_close(wfd);
	if (rfd < 0)
		return;
	/* nobody writes: readable means end-of-file */
	while (spawned) {
		int n = real_poll(&p, 1, SPAWN_WAIT_MS);

		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			pl_debug("spawned image did not take our opens over");
		break;
	}
	real_close(rfd);
}

/*
 * posix_spawn[p] of a region file, or with a region directory in PATH,
 * prepared as an exec is (runfile.c): *p, *path and *argv become what
 * glibc spawns, *comm the image's name.  *prep: r holds something (0 or
 * 1, pl_run_prepare's), -2 not.  0, or an errno.
 */
static int spawn_program(struct pl_run *r, int *prep, int *p,
			 const char **path, char *const **argv, char **comm,
			 char *found)
{
	int err;

	*prep = -2;
	*comm = NULL;
	if (*p && !strchr(*path, '/')) {
		err = pl_run_search(*path, found, PL_PATH_MAX);
		if (err < 0)
			return errno;
		if (err)
			return 0;
		*path = found;
	}
	*prep = pl_run_prepare(r, *path, -1, *argv);
	if (*prep < 0) {
		err = errno;
		pl_run_end(r);
		*prep = -2;
		return err;
	}
	*comm = *prep ? NULL : run_comm_env(*path);
	*p = 0;
	*path = r->kpath;
	if (r->argv)
		*argv = r->argv;
	return 0;
}

static int spawn(int p, pid_t *pid, const char *path,
		 const posix_spawn_file_actions_t *fa,
		 const posix_spawnattr_t *at, char *const argv[],
		 char *const envp[])
{
	REAL(int, posix_spawn, pid_t *, const char *,
	     const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	     char *const *, char *const *);
	REAL(int, posix_spawnp, pid_t *, const char *,
	     const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
	     char *const *, char *const *);
	const struct pl_fd_change *chg;
	struct pl_spawn_plan plan;
	struct pl_run run;
	char **e, *comm, found[PL_PATH_MAX];
	size_t nchg;
	int r, rfd, wfd, err, prep;

	/* found: the program PATH gave, which an interpreter's argv names
	 * until the spawn is made */
	r = spawn_program(&run, &prep, &p, &path, &argv, &comm, found);
	if (r)
		return r;
	/* before the map lock: the plan may open region files */
	r = pl_spawn_plan(fa, &plan);
	if (r) {
		if (prep != -2)
			pl_run_end(&run);
		return r;
	}
	fa = pl_spawn_actions(&plan, fa);
	chg = pl_spawn_changes(&plan, &nchg);
	pl_fork_prepare();
	wfd = spawn_wait_open(envp, &rfd);
	e = exec_envp(envp, 0, wfd, &plan, comm);
	spawn_wait_drop_unnamed(&rfd, &wfd);
	if (!e) {
		pl_exec_env_undo(chg, nchg);
		pl_fork_parent(1, 0);
		spawn_wait(rfd, wfd, 0);
		pl_spawn_plan_end(&plan);
		if (prep != -2)
			pl_run_end(&run);
		return ENOMEM;
	}
	r = p ? real_posix_spawnp(pid, path, fa, at, argv, e)
	      : real_posix_spawn(pid, path, fa, at, argv, e);
	if (r)
		pl_exec_env_undo(chg, nchg);
	pl_fork_parent(r != 0, r == 0 && pid ? *pid : 0);
	free(e);
	err = errno;
	spawn_wait(rfd, wfd, r == 0);
	pl_spawn_plan_end(&plan);
	if (prep != -2)
		pl_run_end(&run);
	errno = err;
	return r;
}

PUBLIC int posix_spawn(pid_t *pid, const char *path,
		       const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *at, char *const argv[],
		       char *const envp[])
{
	return spawn(0, pid, path, fa, at, argv, envp);
}

PUBLIC int posix_spawnp(pid_t *pid, const char *file,
			const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *at, char *const argv[],
			char *const envp[])
{
	return spawn(1, pid, file, fa, at, argv, envp);
}

/* system and popen spawn /bin/sh with environ: put the table there for
 * the duration of the call.  system returns only once the shell is gone,
 * so only popen needs the spawn's wait (wait: *rfd, returns the write
 * end). */
static int env_push(int wait, int *rfd, struct pl_spawn_entry *ent)
{
	char *fds, *cwd = pl_cwd_env();
	int wfd = -1;

	*rfd = -1;
	pl_fork_prepare();
	pl_spawn_entry_get(ent);
	if (wait)
		wfd = spawn_wait_open(environ, rfd);
	fds = pl_exec_env(0, wfd, NULL, 0);
	spawn_wait_drop_unnamed(rfd, &wfd);
	pl_fork_parent(0, 0);
	if (fds)
		putenv(strdup(fds));
	if (cwd)
		putenv(strdup(cwd));
	return wfd;
}

/* over: the shell has ended (system), or never started (failed): the
 * references it was given and never took are given back */
static void env_pop(const struct pl_spawn_entry *ent, int over, int failed)
{
	unsetenv("DAXFS_PRELOAD_FDS");
	unsetenv("DAXFS_PRELOAD_CWD");
	if (over || failed)
		pl_spawn_entry_over(ent, failed);
}

PUBLIC int system(const char *cmd)
{
	REAL(int, system, const char *);
	struct pl_spawn_entry ent;
	int r, rfd;

	if (!cmd)
		return real_system(cmd);
	env_push(0, &rfd, &ent);
	r = real_system(cmd);
	env_pop(&ent, 1, r == -1);
	return r;
}

/*
 * popen's streams and the entries prepared for their shells: a shell
 * that never takes its entry (one that runs without the preload: static,
 * set-id, or started with LD_PRELOAD taken out of the environment) leaves
 * it pending with the references it was given, and only pclose knows
 * when that shell is gone.  Streams beyond these count as before: the
 * entry of a shell that never takes it leaks.
 */
#define POPEN_MAX	64

static struct popen_entry {
	FILE *f;
	struct pl_spawn_entry ent;
} popens[POPEN_MAX];
static pthread_mutex_t popens_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of stream find (NULL: a free one) becomes stream f's, with
 * entry *ent; the entry it had is left in *ent.  False: no such slot. */
static bool popen_swap(FILE *find, FILE *f, struct pl_spawn_entry *ent)
{
	struct pl_spawn_entry had;
	int i;

	pthread_mutex_lock(&popens_lock);
	for (i = 0; i < POPEN_MAX && popens[i].f != find; i++)
		;
	if (i < POPEN_MAX) {
		had = popens[i].ent;
		popens[i].f = f;
		popens[i].ent = *ent;
		*ent = had;
	}
	pthread_mutex_unlock(&popens_lock);
	return i < POPEN_MAX;
}

PUBLIC FILE *popen(const char *cmd, const char *type)
{
	REAL(FILE *, popen, const char *, const char *);
	struct pl_spawn_entry ent;
	int rfd, wfd, err;
	FILE *f;

	wfd = env_push(1, &rfd, &ent);
	f = real_popen(cmd, type);
	err = errno;
	env_pop(&ent, 0, !f);
	if (f && ent.idx >= 0)
		popen_swap(NULL, f, &ent);
	spawn_wait(rfd, wfd, f != NULL);
	errno = err;
	return f;
}

PUBLIC int pclose(FILE *f)
{
	REAL(int, pclose, FILE *);
	struct pl_spawn_entry ent = { .idx = -1 };
	bool noted = f && popen_swap(f, NULL, &ent);
	int r, err;

	r = real_pclose(f);
	err = errno;
	/* -1: not waited for (a fork child's copy of the stream: the shell
	 * is not its child), so perhaps still to take its entry */
	if (noted && r != -1)
		pl_spawn_entry_over(&ent, 0);
	errno = err;
	return r;
}
