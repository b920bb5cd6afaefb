// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * flock and OFD locks belong to the open file description, which a fork
 * child shares (docs/locks.md "Descriptions shared across hosts"): the
 * child's own request does not conflict with them and converts them, its
 * unlock releases them, and they stay while any process holds the
 * description, after the process that took them has ended (exit, _exit,
 * SIGKILL: the daemon pattern, also with a daemon that execs).  Under the
 * preload each process is its own host, so the records must move from
 * host to host.  Run with DIR
 * and WAIT_MS (longer than the region's lease: the lock must outlive
 * the ended process's lease); tests/test_preload.py compares the output
 * on tmpfs and in the region.  A second instance is a process that
 * opens the file anew (its own description) and tries a lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int wait_ms;

static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* A lock on bytes [start, start + 10) */
static int lock_at(int fd, int cmd, short type, off_t start)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = 10 };

	return fcntl(fd, cmd, &fl);
}

static int ofd(int fd, int cmd, short type)
{
	return lock_at(fd, cmd, type, 0);
}

/* A second instance: its own open of path, a lock that does not wait.
 * how 0: flock LOCK_EX, 1: flock LOCK_SH, 2: an OFD write lock. */
static const char *other(const char *path, int how)
{
	int st, fd, r;
	pid_t pid = fork();

	if (pid == 0) {
		fd = open(path, O_RDWR);
		if (fd < 0)
			_exit(3);
		if (how == 2)
			r = ofd(fd, F_OFD_SETLK, F_WRLCK);
		else
			r = flock(fd, (how ? LOCK_SH : LOCK_EX) | LOCK_NB);
		_exit(!r ? 0 : errno == EWOULDBLOCK || errno == EAGAIN ? 1 : 2);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return "?";
	switch (WEXITSTATUS(st)) {
	case 0:
		return "got it";
	case 1:
		return "refused";
	}
	return "error";
}

static int make(const char *dir, const char *name, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", dir, name);
	return open(path, O_CREAT | O_RDWR, 0644);
}

static void say(const char *what, int r)
{
	printf("%s: %s\n", what, r ? strerror(errno) : "ok");
}

/* One byte through a pipe: the other side may go on. */
static void go(int fd)
{
	if (write(fd, "x", 1) != 1)
		perror("write");
}

static void await(int fd)
{
	char c;

	while (read(fd, &c, 1) < 0 && errno == EINTR)
		;
}

/* File name in dir, locked (LOCK_EX) by us, then a fork: its pid, or 0
 * in the child; *fd the shared descriptor, path its name. */
static pid_t locked_fork(const char *dir, const char *name, char *path,
			 int *fd)
{
	*fd = make(dir, name, path, 4096);
	say("parent LOCK_EX", flock(*fd, LOCK_EX));
	fflush(stdout);
	return fork();
}

/* The child acts on the lock its parent took through the description. */
static void child_acts(const char *dir)
{
	char path[4096];
	int fd, st;
	pid_t pid = locked_fork(dir, "acts", path, &fd);

	if (pid == 0) {
		/* ours too: no conflict, and a conversion of it */
		say("child LOCK_EX|LOCK_NB", flock(fd, LOCK_EX | LOCK_NB));
		say("child LOCK_SH (convert)", flock(fd, LOCK_SH | LOCK_NB));
		printf("after the child's LOCK_SH, a second LOCK_SH: %s\n",
		       other(path, 1));
		say("child LOCK_EX (convert)", flock(fd, LOCK_EX | LOCK_NB));
		printf("after the child's LOCK_EX, a second LOCK_SH: %s\n",
		       other(path, 1));
		fflush(stdout);
		_exit(0);	/* the parent still holds the description */
	}
	waitpid(pid, &st, 0);
	nap(wait_ms);
	printf("the child ended, the parent holds it: %s\n", other(path, 0));
	close(fd);
	printf("closed everywhere: %s\n", other(path, 0));
}

/* The child's unlock releases its parent's lock; OFD locks as flock. */
static void child_unlocks(const char *dir)
{
	char path[4096];
	int fd = make(dir, "unlocks", path, sizeof(path)), st;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_len = 10 };
	pid_t pid;

	say("parent LOCK_EX", flock(fd, LOCK_EX));
	say("parent F_OFD_SETLK", ofd(fd, F_OFD_SETLK, F_WRLCK));
	say("parent F_SETLK", lock_at(fd, F_SETLK, F_RDLCK, 100));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		/* a POSIX lock is the process's: the child's write lock
		 * conflicts with its parent's read lock */
		say("child F_SETLK over the parent's",
		    lock_at(fd, F_SETLK, F_WRLCK, 100));
		say("child F_OFD_SETLK", ofd(fd, F_OFD_SETLK, F_WRLCK));
		say("child F_OFD_GETLK", fcntl(fd, F_OFD_GETLK, &fl));
		printf("child F_OFD_GETLK sees: %s\n",
		       fl.l_type == F_UNLCK ? "nothing in the way" : "a lock");
		say("child LOCK_UN", flock(fd, LOCK_UN));
		say("child OFD unlock", ofd(fd, F_OFD_SETLK, F_UNLCK));
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	printf("after the child's unlocks, flock: %s\n", other(path, 0));
	printf("after the child's unlocks, OFD: %s\n", other(path, 2));
	close(fd);
}

/* The parent closes: the child's descriptor keeps the lock, until the
 * child closes it too. */
static void last_close(const char *dir)
{
	char path[4096];
	int fd = make(dir, "lastclose", path, sizeof(path)), st;
	int to_child[2], to_parent[2];
	pid_t pid;

	if (pipe(to_child) || pipe(to_parent))
		return;
	say("parent LOCK_EX", flock(fd, LOCK_EX));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		await(to_child[0]);
		close(fd);
		go(to_parent[1]);
		_exit(0);
	}
	close(fd);
	printf("the parent closed, the child holds it: %s\n", other(path, 0));
	go(to_child[1]);
	await(to_parent[0]);
	printf("the child closed too: %s\n", other(path, 0));
	waitpid(pid, &st, 0);
}

/*
 * A fork child that shares the description is killed (SIGKILL: it closes
 * nothing itself): the parent's close is then the last, and the lock
 * goes.  Before session 57 the killed child's reference was never given
 * back under the preload, and the lock stayed with the parent until it
 * ended (docs/preload.md "References of processes that end without
 * closing").
 */
static void killed_sharer(const char *dir)
{
	char path[4096];
	int fd, st;
	pid_t pid = locked_fork(dir, "killedsharer", path, &fd);

	if (pid == 0) {
		pause();
		_exit(0);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	printf("the child killed, the parent holds it: %s\n", other(path, 0));
	close(fd);
	printf("the child killed, the parent closed: %s\n", other(path, 0));
}

/*
 * The daemon pattern: a process locks a pid file, forks, and ends (exit
 * or _exit); the lock is the daemon's while it runs, beyond the lease of
 * the process that took it, and goes when the daemon ends.
 */
static void daemon_pattern(const char *dir, int how)
{
	static const char *const hows[] = { "exit", "_exit", "SIGKILL",
					    "exec" };
	char arg[16];
	char path[4096], name[32];
	int ready[2], done[2], fd, st;
	pid_t mid, daemon = 0;

	if (pipe(ready) || pipe(done))
		return;
	snprintf(name, sizeof(name), "pid-%s", hows[how]);
	fflush(stdout);
	mid = fork();
	if (mid == 0) {
		close(ready[0]);
		fd = make(dir, name, path, sizeof(path));
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB))
			_exit(1);
		if (fork() == 0) {
			/* the daemon: holds fd until told to end */
			close(done[1]);
			daemon = getpid();
			if (write(ready[1], &daemon, sizeof(daemon)) < 0)
				_exit(1);
			if (how == 3) {
				/* a new image keeps fd (no FD_CLOEXEC) */
				snprintf(arg, sizeof(arg), "%d", done[0]);
				execl("/proc/self/exe", "pl_flock_fork",
				      "--hold", arg, (char *)NULL);
				_exit(1);
			}
			await(done[0]);
			_exit(0);
		}
		if (how == 2) {
			pause();
			_exit(0);
		}
		if (how == 1)
			_exit(0);
		exit(0);
	}
	close(ready[1]);
	close(done[0]);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (read(ready[0], &daemon, sizeof(daemon)) != sizeof(daemon))
		daemon = 0;
	if (how == 2)
		kill(mid, SIGKILL);
	waitpid(mid, &st, 0);
	nap(wait_ms);
	printf("daemon (%s): a second instance: %s\n", hows[how],
	       other(path, 0));
	go(done[1]);
	/* ours once its parent ended (main: a subreaper): it has ended,
	 * its descriptors closed, when waitpid says so */
	if (daemon > 0)
		waitpid(daemon, &st, 0);
	close(ready[0]);
	close(done[1]);
	printf("daemon (%s) ended: a second instance: %s\n", hows[how],
	       other(path, 0));
}

/*
 * The daemon pattern with a lock per resource, more of them than a look
 * at a process's locked descriptions used to take: the parent locks 80
 * files and forks the daemon, which locks the first 64 again (their
 * records move to its host) before the parent ends; the parent then
 * carries only the last 16.  Every lock must stay the daemon's past the
 * parent's lease.  Until session 58 the parent's exit looked at the first
 * 64 descriptions only (none its own: it left, and the last 16 went with
 * it), and the daemon's heartbeat took over the first 32 only.
 */
#define MANY_LOCKS	80
#define MANY_MOVED	64

static void many_path(const char *dir, int i, char *path, size_t size)
{
	snprintf(path, size, "%s/many-%d", dir, i);
}

static void daemon_many(const char *dir)
{
	int ready[2], done[2], moved[2], fds[MANY_LOCKS], st, i;
	pid_t mid, daemon = 0;
	int refused = 0;
	char path[4096];

	if (pipe(ready) || pipe(done) || pipe(moved))
		return;
	fflush(stdout);
	mid = fork();
	if (mid == 0) {
		close(ready[0]);
		for (i = 0; i < MANY_LOCKS; i++) {
			many_path(dir, i, path, sizeof(path));
			fds[i] = open(path, O_CREAT | O_RDWR, 0644);
			if (fds[i] < 0 || flock(fds[i], LOCK_EX | LOCK_NB))
				_exit(1);
		}
		if (fork() == 0) {
			close(done[1]);
			for (i = 0; i < MANY_MOVED; i++)
				if (flock(fds[i], LOCK_EX | LOCK_NB))
					_exit(1);
			go(moved[1]);
			daemon = getpid();
			if (write(ready[1], &daemon, sizeof(daemon)) < 0)
				_exit(1);
			await(done[0]);
			_exit(0);
		}
		/* ends once the daemon moved those records */
		await(moved[0]);
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	close(moved[0]);
	close(moved[1]);
	if (read(ready[0], &daemon, sizeof(daemon)) != sizeof(daemon))
		daemon = 0;
	waitpid(mid, &st, 0);
	nap(wait_ms);
	for (i = 0; i < MANY_LOCKS; i++) {
		many_path(dir, i, path, sizeof(path));
		refused += !strcmp(other(path, 0), "refused");
	}
	printf("daemon (%d locks): a second instance refused on %d\n",
	       MANY_LOCKS, refused);
	go(done[1]);
	if (daemon > 0)
		waitpid(daemon, &st, 0);
	close(ready[0]);
	close(done[1]);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--hold")) {
		await(atoi(argv[2]));	/* an exec'ed daemon */
		return 0;
	}
	if (argc < 3)
		return 2;
	wait_ms = atoi(argv[2]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* orphaned daemons become our children: we can wait for them */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	child_acts(argv[1]);
	child_unlocks(argv[1]);
	last_close(argv[1]);
	killed_sharer(argv[1]);
	daemon_pattern(argv[1], 0);
	daemon_pattern(argv[1], 1);
	daemon_pattern(argv[1], 3);
	daemon_pattern(argv[1], 2);
	daemon_many(argv[1]);
	return 0;
}
