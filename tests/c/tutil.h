/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Tiny harness for the C unit tests: CHECK macros that count instead of
 * aborting, "N passed, N failed" at the end, and a shared region helper
 * (an anonymous MAP_SHARED mapping, so every thread can join as its own
 * host with its own struct daxfs_fs, like separate hosts would).
 */
#ifndef DAXFS_TUTIL_H
#define DAXFS_TUTIL_H

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/daxfs_core.h"
#include "core/internal.h"

static unsigned long t_pass, t_fail;

#define CHECK(cond) do {						\
	if (cond) {							\
		__atomic_fetch_add(&t_pass, 1, __ATOMIC_RELAXED);	\
	} else {							\
		__atomic_fetch_add(&t_fail, 1, __ATOMIC_RELAXED);	\
		fprintf(stderr, "%s:%d: CHECK(%s) failed\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a == _b) {							\
		__atomic_fetch_add(&t_pass, 1, __ATOMIC_RELAXED);	\
	} else {							\
		__atomic_fetch_add(&t_fail, 1, __ATOMIC_RELAXED);	\
		fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
			__FILE__, __LINE__, #a, #b, _a, _b);		\
	}								\
} while (0)

#define RUN(fn) do {							\
	unsigned long _f = t_fail;					\
	fn();								\
	printf("%-40s %s\n", #fn, t_fail == _f ? "ok" : "FAILED");	\
	fflush(stdout);							\
} while (0)

static inline int t_done(void)
{
	printf("%lu passed, %lu failed\n", t_pass, t_fail);
	return t_fail ? 1 : 0;
}


/*
 * Lease observation tables (docs/hosts.md "Leases") of the hosts that
 * t_setup/t_join opened, by region, so that t_age() can make a slot look
 * silent for a while to every one of them: the tests' stand-in for
 * waiting a lease of real time.  Freed with the region.
 */
#define T_OBS_MAX 1024
static struct { void *base; struct daxfs_host_obs *obs; } t_obs[T_OBS_MAX];
static pthread_mutex_t t_obs_lock = PTHREAD_MUTEX_INITIALIZER;

/* Forgets the observers of an earlier region mapped at base (unmapped
 * without t_region_free): a new region there must not inherit what they
 * saw, since its slots can have the very same state and counter values. */
static inline void t_obs_forget(void *base)
{
	int i;

	pthread_mutex_lock(&t_obs_lock);
	for (i = 0; i < T_OBS_MAX; i++) {
		if (t_obs[i].base != base)
			continue;
		t_obs[i].base = NULL;
		t_obs[i].obs = NULL;
	}
	pthread_mutex_unlock(&t_obs_lock);
}

static inline void *t_region(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	t_obs_forget(p);
	return p;
}

/* A new observer starts with what the region's last observer saw, as a
 * process watching all along would (the tests age slots beforehand). */
static inline void t_obs_attach(struct daxfs_fs *fs)
{
	int i, from = -1, k;

	fs->obs = calloc(DAXFS_MAX_HOSTS, sizeof(*fs->obs));
	pthread_mutex_lock(&t_obs_lock);
	for (i = 0; i < T_OBS_MAX; i++)
		if (t_obs[i].base == fs->base)
			from = i;
	if (fs->obs && from >= 0) {
		memcpy(fs->obs, t_obs[from].obs,
		       DAXFS_MAX_HOSTS * sizeof(*fs->obs));
		for (k = 0; k < DAXFS_MAX_HOSTS; k++)
			fs->obs[k].busy = 0;
	}
	for (i = 0; i < T_OBS_MAX && t_obs[i].base; i++)
		;
	if (fs->obs && i < T_OBS_MAX) {
		t_obs[i].base = fs->base;
		t_obs[i].obs = fs->obs;
	}
	pthread_mutex_unlock(&t_obs_lock);
}

/* For an fs that goes away before its region (t_fsck's). */
static inline void t_obs_detach(struct daxfs_fs *fs)
{
	int i;

	pthread_mutex_lock(&t_obs_lock);
	for (i = 0; i < T_OBS_MAX; i++) {
		if (t_obs[i].obs != fs->obs)
			continue;
		t_obs[i].base = NULL;
		t_obs[i].obs = NULL;
	}
	pthread_mutex_unlock(&t_obs_lock);
	free(fs->obs);
	fs->obs = NULL;
}

/* Every observer of fs's region has seen slot's heartbeat unchanged for
 * age_ns (as if the host stopped renewing that long ago). */
static inline void t_age_ns(struct daxfs_fs *fs, u32 slot, s64 age_ns)
{
	struct daxfs_host *h = &fs->hosts[slot];
	int i;

	pthread_mutex_lock(&t_obs_lock);
	for (i = 0; i < T_OBS_MAX; i++) {
		struct daxfs_host_obs *o = t_obs[i].obs;

		if (t_obs[i].base != fs->base || !o)
			continue;
		o[slot].state = daxfs_load(&h->state);
		o[slot].hb = daxfs_load(&h->heartbeat);
		o[slot].changes = 0;
		o[slot].seen_ns = daxfs_mono_ns() - age_ns;
	}
	pthread_mutex_unlock(&t_obs_lock);
}

/* Slot's lease has run out for every observer (two leases of silence). */
static inline void t_age(struct daxfs_fs *fs, u32 slot)
{
	t_age_ns(fs, slot, 2LL * fs->lease_ms * 1000000LL);
}

static inline void t_region_free(void *p, uint64_t size)
{
	int i;

	pthread_mutex_lock(&t_obs_lock);
	for (i = 0; i < T_OBS_MAX; i++) {
		if (t_obs[i].base != p)
			continue;
		free(t_obs[i].obs);
		t_obs[i].base = NULL;
		t_obs[i].obs = NULL;
	}
	pthread_mutex_unlock(&t_obs_lock);
	munmap(p, size);
}

/*
 * DAXFS_TEST_LEASE_MS shortens the lease of every region formatted with
 * the default one: a host that idles longer than that while others work
 * is declared dead, as one starved of CPU for a whole lease would be in
 * a loaded CI (tests/test_c_units.py "short lease").
 */
static inline const struct daxfs_format_opts *
t_lease_opts(const struct daxfs_format_opts *o, struct daxfs_format_opts *buf)
{
	const char *e = getenv("DAXFS_TEST_LEASE_MS");

	if (!e || !*e || (o && o->lease_ms))
		return o;
	if (o)
		*buf = *o;
	else
		memset(buf, 0, sizeof(*buf));
	buf->lease_ms = (u32)strtoul(e, NULL, 10);
	return buf;
}

/* Formats, opens and joins; aborts the program on failure. */
static inline void *t_setup(struct daxfs_fs *fs, uint64_t size,
			    const struct daxfs_format_opts *o)
{
	struct daxfs_format_opts lo;
	void *r = t_region(size);
	int err = daxfs_format(r, size, t_lease_opts(o, &lo));

	if (!err)
		err = daxfs_fs_open(fs, r, size, 0);
	if (!err)
		t_obs_attach(fs);
	if (!err)
		err = daxfs_host_join(fs, "test", 1, DAXFS_HOST_KIND_USER);
	if (err) {
		fprintf(stderr, "setup failed: %d\n", err);
		exit(2);
	}
	return r;
}

static inline int t_join(struct daxfs_fs *fs, void *r, uint64_t size)
{
	int err = daxfs_fs_open(fs, r, size, 0);

	if (err)
		return err;
	t_obs_attach(fs);
	return daxfs_host_join(fs, "t", 1, DAXFS_HOST_KIND_USER);
}

/* t_setup with fs[0], then fs[1..n-1] joined as more hosts. */
static inline void *t_setup_hosts(struct daxfs_fs *fs, int n, uint64_t size,
				  const struct daxfs_format_opts *o)
{
	void *r = t_setup(&fs[0], size, o);
	int i;

	for (i = 1; i < n; i++)
		CHECK_EQ(t_join(&fs[i], r, size), 0);
	return r;
}

/*
 * Keeps a joined host's lease fresh from a thread of its own, as its front
 * end's heartbeat does (libdaxfs's thread, daxfs.ko's renew work).  A test
 * whose main host only waits while worker hosts run does no op of its own:
 * under load (qemu-user in CI) the wait outlasts a lease and the workers'
 * reclaim declares the waiting host dead (stop 46: test_compact's main host
 * came back to a freed slot and no lane).
 */
struct t_renewer {
	struct daxfs_fs *fs;
	int stop;
	bool running;		/* t_renew_stop of one never started: nothing */
	pthread_t th;
};

static inline void *t_renew_main(void *arg)
{
	struct t_renewer *rn = arg;

	while (!__atomic_load_n(&rn->stop, __ATOMIC_ACQUIRE)) {
		daxfs_host_renew(rn->fs);
		usleep(10 * 1000);
	}
	return NULL;
}

static inline void t_renew_start(struct t_renewer *rn, struct daxfs_fs *fs)
{
	rn->fs = fs;
	rn->stop = 0;
	if (pthread_create(&rn->th, NULL, t_renew_main, rn)) {
		fprintf(stderr, "t_renew_start: no thread\n");
		exit(2);
	}
	/* a real-time renewer where we may (root in CI): a loaded machine
	 * starved the plain one for a whole 300 ms lease (the short-lease
	 * runs of test_peek and test_file_mt, sessions 56 and 57); it sleeps
	 * between its renewals, so it takes almost nothing */
	pthread_setschedparam(rn->th, SCHED_FIFO,
			      &(struct sched_param){ .sched_priority = 1 });
	rn->running = true;
}

static inline void t_renew_stop(struct t_renewer *rn)
{
	if (!rn->running)
		return;
	__atomic_store_n(&rn->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rn->th, NULL);
	rn->running = false;
}

/* t_join, and the lease kept from then on (t_renew_start): a host that
 * works in bursts, or whose reads take no op, as a front end runs it. */
static inline int t_join_kept(struct daxfs_fs *fs, struct t_renewer *rn,
			      void *r, uint64_t size)
{
	int err = t_join(fs, r, size);

	if (!err)
		t_renew_start(rn, fs);
	return err;
}

/* Stops the renewal of t_join_kept and leaves. */
static inline void t_leave_kept(struct daxfs_fs *fs, struct t_renewer *rn)
{
	t_renew_stop(rn);
	daxfs_host_leave(fs);
}

static inline uint64_t t_used(struct daxfs_fs *fs)
{
	return daxfs_load(daxfs_state_word(fs, used_bytes));
}

static inline u64 t_rand(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* How long a race that must catch a re-introduced defect runs:
 * DAXFS_TEST_RACE_SECS when set (tests/helpers/build.py run_with_defect
 * sets it: on a loaded machine the racing sides seldom run at the same
 * moment), else dflt.  Such races stop at their first catch. */
static inline double t_race_secs(double dflt)
{
	const char *e = getenv("DAXFS_TEST_RACE_SECS");

	return e && atof(e) > 0 ? atof(e) : dflt;
}

/* fork() for a racing host: the child dies with the parent, so that
 * children spinning on shared memory never outlive a parent that
 * crashed (they would load the machine until someone kills them). */
static inline pid_t t_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(4);
	}
	return pid;
}

/*
 * A race of hosts in processes: size bytes of zeroed shared memory
 * (MAP_SHARED), n children forked each running child on it (it must
 * _exit), this process running parent on it, then every child must exit
 * 0.  Returns the memory (the caller munmaps it).
 */
static inline void *t_race(int n, size_t size, void (*child)(void *),
			   void (*parent)(void *))
{
	void *s = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid[16];
	int i, st;

	if (s == MAP_FAILED || n > 16) {
		fprintf(stderr, "t_race: no shared memory or %d > 16 children\n",
			n);
		abort();
	}
	memset(s, 0, size);
	fflush(NULL);
	for (i = 0; i < n; i++) {
		pid[i] = t_fork();
		if (!pid[i])
			child(s);
	}
	parent(s);
	for (i = 0; i < n; i++) {
		CHECK_EQ(waitpid(pid[i], &st, 0), pid[i]);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	return s;
}

#endif
