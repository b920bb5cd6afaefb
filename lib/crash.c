// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Crash injection for tests (docs/recovery.md): the core calls
 * daxfs_crash_point("protocol.step") between the steps of every shared
 * protocol.  Only a build with -DDAXFS_CRASH_POINTS (`make crash`:
 * build/crash/libdaxfs.so and build/crash/bin/) has the calls; there this
 * file reads the environment once:
 *
 *   DAXFS_CRASH_AT=NAME[:N][,NAME[:N]...]   SIGKILL on the Nth hit (1) of NAME
 *                                            (NAME may end in '*': a prefix)
 *   DAXFS_CRASH_AT=random:P[:SEED]           SIGKILL at each point with
 *                                            probability P (0..1)
 *   DAXFS_CRASH_LOG=PATH                     append "NAME HIT [WINDOW]" to PATH just
 *                                            before the kill (tests check
 *                                            where the victim died)
 *   DAXFS_CRASH_TRACE=PATH                   append the backtrace of the
 *                                            kill to PATH
 *   DAXFS_CRASH_STOP=1                       SIGSTOP instead of SIGKILL: the
 *                                            host goes on when the test sends
 *                                            SIGCONT (a host declared dead
 *                                            while stopped, which still runs)
 *   DAXFS_CRASH_STOP=thread                  only the thread at the point
 *                                            waits, until the process gets
 *                                            SIGUSR1: the host's other
 *                                            threads go on (races between
 *                                            threads of one host)
 *   DAXFS_CRASH_STOP=shutdown                every open handle shuts down
 *                                            (daxfs_region_shutdown) and
 *                                            the thread goes on: the op in
 *                                            flight must run to its end
 *
 * The point "fence" is hit at every fence check (core/internal.h), for
 * "fence:N"; random mode skips it, so that its kills stay spread over the
 * protocol steps.
 *
 *   DAXFS_CRASH_AT=store:N                   SIGKILL after the Nth change
 *                                            of memory through the core's
 *                                            atomics (compat.h daxfs_dirty):
 *                                            a crash between any two stores
 *                                            of a program with no named
 *                                            points (fsck's repair,
 *                                            tests/test_fsck_interrupted.py);
 *                                            random mode never picks it;
 *                                            daxfs_crash_stores() says how
 *                                            many were made so far
 *   DAXFS_CRASH_AT=store-random:P[:SEED]     SIGKILL after each counted
 *                                            store with probability P, and
 *                                            at no named point: with
 *                                            DAXFS_CRASH_PLAIN=1, a host
 *                                            dying between any two of its
 *                                            stores, at random (lincheck)
 *
 * The process kills itself with SIGKILL: no handler, no flush, no atexit,
 * exactly as if the host had lost power between two stores.
 */
#ifdef DAXFS_CRASH_POINTS

#include <execinfo.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/compat.h"
#include "libdaxfs-internal.h"

#define MAX_TARGETS 16

static struct target {
	char name[64];
	unsigned long nth;
	unsigned long hits;
} targets[MAX_TARGETS];
static int nr_targets;
static int inited;		/* 0 no, 1 yes (parsed) */
static double rand_p;		/* > 0: random mode */
static bool rand_stores;	/* ... over stores, not named points */
static unsigned long long rand_state;
static unsigned long total_hits;
static struct target *store_target;	/* a "store:N" target, if any */
static unsigned long stores;		/* every store counted so far */
static int resumed;		/* DAXFS_CRASH_STOP=thread: SIGUSR1 came */
static __thread const char *window;	/* daxfs_crash_window's name */

static void on_resume(int sig)
{
	__atomic_store_n(&resumed, 1, __ATOMIC_RELEASE);
}

/* Waits in this thread only, until SIGUSR1 (one wait per signal). */
static void thread_wait(void)
{
	while (!__atomic_exchange_n(&resumed, 0, __ATOMIC_ACQ_REL))
		usleep(1000);
}

static void parse(void)
{
	const char *env = getenv("DAXFS_CRASH_AT");
	const char *stop = getenv("DAXFS_CRASH_STOP");
	char buf[1024], *tok, *save = NULL, *colon;

	if (stop && !strcmp(stop, "thread")) {
		struct sigaction sa = { .sa_handler = on_resume };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (!env || !*env)
		return;
	if (!strncmp(env, "store-random:", 13)) {
		rand_stores = true;
		env += 6;
	}
	if (!strncmp(env, "random:", 7)) {
		rand_p = strtod(env + 7, &colon);
		rand_state = (unsigned long long)getpid() * 0x9e3779b97f4a7c15ULL;
		if (*colon == ':')
			rand_state = strtoull(colon + 1, NULL, 0) * 0x9e3779b97f4a7c15ULL + 1;
		return;
	}
	snprintf(buf, sizeof(buf), "%s", env);
	for (tok = strtok_r(buf, ",", &save); tok && nr_targets < MAX_TARGETS;
	     tok = strtok_r(NULL, ",", &save)) {
		struct target *t = &targets[nr_targets++];

		colon = strchr(tok, ':');
		t->nth = 1;
		if (colon) {
			*colon = 0;
			t->nth = strtoul(colon + 1, NULL, 0);
			if (!t->nth)
				t->nth = 1;
		}
		snprintf(t->name, sizeof(t->name), "%s", tok);
		if (!strcmp(t->name, "store"))
			store_target = t;
	}
}

static bool matches(const char *pat, const char *name)
{
	size_t n = strlen(pat);

	if (n && pat[n - 1] == '*')
		return !strncmp(pat, name, n - 1);
	return !strcmp(pat, name);
}

/* DAXFS_CRASH_TRACE=PATH: where the kill came from, a backtrace
 * (addr2line -e build/crash/libdaxfs.so on its +0x offsets). */
static void trace(void)
{
	const char *path = getenv("DAXFS_CRASH_TRACE");
	void *pcs[32];
	int fd, n;

	if (!path || !*path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	n = backtrace(pcs, 32);
	backtrace_symbols_fd(pcs, n, fd);
	fsync(fd);
	close(fd);
}

static void die(const char *name, unsigned long hit)
{
	const char *log = getenv("DAXFS_CRASH_LOG");
	const char *stop = getenv("DAXFS_CRASH_STOP");
	char line[128];
	int fd, len;

	if (log && *log) {
		fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (fd >= 0) {
			len = snprintf(line, sizeof(line), "%s %lu%s%s\n", name,
				       hit, window ? " " : "",
				       window ? window : "");
			if (write(fd, line, (size_t)len) < 0)
				len = 0;
			fsync(fd);
			close(fd);
		}
	}
	trace();
	if (stop && !strcmp(stop, "thread")) {
		thread_wait();
		return;
	}
	if (stop && !strcmp(stop, "shutdown")) {
		lib_shutdown_all();
		return;
	}
	if (stop) {
		kill(getpid(), SIGSTOP);
		return;
	}
	kill(getpid(), SIGKILL);
	for (;;)
		pause();
}

static void parse_once(void)
{
	static int lock;

	if (__atomic_load_n(&inited, __ATOMIC_ACQUIRE) == 1)
		return;
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		;
	if (!inited) {
		parse();
		__atomic_store_n(&inited, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* One draw of random mode: true with probability rand_p. */
static bool rand_hit(void)
{
	unsigned long long x;

	/* splitmix64 step; races between threads only perturb it */
	x = (rand_state += 0x9e3779b97f4a7c15ULL);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return (double)(x >> 11) / (double)(1ULL << 53) < rand_p;
}

void daxfs_crash_store(void)
{
	unsigned long h;

	parse_once();
	h = __atomic_add_fetch(&stores, 1, __ATOMIC_RELAXED);
	if ((store_target && h == store_target->nth) ||
	    (rand_stores && rand_hit()))
		die("store", h);
}

void daxfs_crash_window(const char *name)
{
	window = name;
}

/* How many stores this process made so far: a workload that reads it
 * between its steps learns which N cuts which step (ctypes, tests). */
unsigned long daxfs_crash_stores(void)
{
	return __atomic_load_n(&stores, __ATOMIC_RELAXED);
}

void daxfs_crash_point(const char *name)
{
	unsigned long h;
	int i;

	parse_once();
	h = __atomic_add_fetch(&total_hits, 1, __ATOMIC_RELAXED);
	if (rand_p > 0) {
		if (!rand_stores && strcmp(name, "fence") && rand_hit())
			die(name, h);
		return;
	}
	for (i = 0; i < nr_targets; i++) {
		if (!matches(targets[i].name, name))
			continue;
		h = __atomic_add_fetch(&targets[i].hits, 1, __ATOMIC_RELAXED);
		if (h == targets[i].nth)
			die(name, h);
	}
}

#else
/* ISO C forbids an empty translation unit */
typedef int daxfs_crash_points_disabled;
#endif /* DAXFS_CRASH_POINTS */
