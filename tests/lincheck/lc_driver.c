// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * lc_run: the lincheck driver (docs/lincheck.md).  Formats a region, starts
 * K worker processes (each exec'd afresh, each its own host; with -P T,
 * each runs T threads on its one handle: T clients of one host), and runs
 * rounds: set up a fresh directory, release the workers, maybe SIGKILL
 * one mid-round, wait, let survivors recover a dead host, observe the
 * final state as one more client, print the round's history on stdout
 * for the checker (tools/lincheck), remove the directory.
 *
 * Guests (-g G, -x PAGE; docs/lincheck.md "Guests"): G more clients run in
 * QEMU guests on daxfs.ko mounts of the region (tests/lincheck/lc_guest.c),
 * with the shared page in the file PAGE (a second nvdimm of theirs); they
 * mount once the page says the region is formatted, and take the slots
 * after the workers'.  Namespace and data rounds.  -K SLOT:PIDFILE kills
 * guest client SLOT's QEMU (its pid in PIDFILE) inside an operation of a
 * random early round; the others carry on without it and recover its
 * host (docs/lincheck.md "A guest killed mid-round").
 *
 * History lines:  "R round mode"  then one line per operation:
 *   client call ret op a b c d res o1 o2 o3     (ret 0: never returned)
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "include/daxfs/libdaxfs.h"
#include "tests/lincheck/lc.h"

struct opts {
	const char *region, *crash_at;
	uint64_t size, rounds, seed;
	double seconds, kill_p;
	int workers, ops, mode, lease_ms, fill, no_rename, no_trunc, no_link;
	int whiteout;
	int falloc;
	int threads;		/* clients per worker process (-P) */
	int hosts;		/* workers * threads: the processes' slots */
	int guests;		/* -g: clients in QEMU guests, after those */
	int clients;		/* hosts + guests: the history's slots */
	int delay_us, flip;	/* -d, -X */
	const char *page;	/* -x: the shared page's file (guests) */
	int kill_guest;		/* -K: this guest client's QEMU is killed */
	const char *qemu_pidfile;	/* -K: where that QEMU wrote its pid */
};

static struct lc_shm *S;
static char shm_path[128];		/* the clock page, removed at exit */
static struct daxfs_handle *H;
static struct lc_rec obs[LC_NEST_NAMES + LC_FILES * 2 + 1];
static int nr_obs;
/* a nested round's directories a and b, made before the workers start:
 * reported as the observer's first operations */
static struct lc_rec setup_recs[2];
static int nr_setup;
static uint8_t gone[LC_MAX_WORKERS];	/* guest clients killed (-K) */

static void remove_clock(void)
{
	unlink(shm_path);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "lc_run: %s: %s\n", what, daxfs_strerror(err));
	exit(2);
}

/* Whether client i is alive: a worker process's is checked (and reaped);
 * a guest's is unless this driver killed its QEMU (-K): a guest that hangs
 * by itself shows as a round that hangs. */
static int client_alive(const struct opts *o, int i);

/* Worker process p runs the clients (slots) p * threads .. + threads - 1;
 * its pid is kept in the first one's slot. */
static struct lc_slot *proc_slot(const struct opts *o, int p)
{
	return &S->slots[p * o->threads];
}

static void spawn(struct opts *o, int p)
{
	char slot[16], threads[16];
	pid_t pid;
	int i;

	for (i = p * o->threads; i < (p + 1) * o->threads; i++) {
		S->slots[i].ready = 0;
		S->slots[i].done_round = S->round;
		S->slots[i].nr_recs = 0;
	}
	snprintf(slot, sizeof(slot), "%d", p * o->threads);
	snprintf(threads, sizeof(threads), "%d", o->threads);
	pid = fork();
	if (pid < 0)
		die("fork", -errno);
	if (!pid) {
		/* a worker never outlives the driver (killed by a test, or
		 * stopped by the checker's -stop) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		if (o->crash_at)
			setenv("DAXFS_CRASH_AT", o->crash_at, 1);
		execl("/proc/self/exe", "lc_run", "--worker", slot, o->region,
		      shm_path, threads, (char *)NULL);
		_exit(127);
	}
	proc_slot(o, p)->pid = pid;
}

/* Is worker process p alive?  Reaps it if not. */
static int alive(const struct opts *o, int p)
{
	struct lc_slot *ps = proc_slot(o, p);
	int st;

	if (!ps->pid)
		return 0;
	if (waitpid(ps->pid, &st, WNOHANG) == ps->pid) {
		ps->pid = 0;
		return 0;
	}
	return 1;
}

static void observe(struct lc_rec *r)
{
	struct daxfs_attr st;
	char p[128];
	static unsigned char buf[LC_MAX_SIZE * 2];
	int64_t res;

	r->call = lc_tick(S);
	switch (r->op) {
	case LC_STAT:
		snprintf(p, sizeof(p), "%s/%s", S->dir, lc_names[r->a]);
		res = daxfs_path_lstat(H, p, &st);
		if (!res)
			lc_stat_rec(r, st.mode, st.nlink, st.ino, st.size);
		break;
	case LC_FSTAT:
		res = daxfs_fstat(H, S->inos[r->a], &st);
		r->o3 = st.size;
		break;
	default:		/* LC_READ */
		res = daxfs_pread(H, S->inos[r->a], buf, r->c, 0);
		r->o1 = lc_hash(buf, res > 0 ? res : 0);
		break;
	}
	r->res = res;
	r->ret = lc_tick(S);
}

/* The final state, seen by one more client once every worker is done. */
static void observe_all(void)
{
	int i;

	nr_obs = 0;
	memset(obs, 0, sizeof(obs));
	if (S->mode != LC_MODE_DATA) {
		for (i = 0; i < (S->mode == LC_MODE_NEST ? LC_NEST_NAMES :
				 LC_NAMES); i++) {
			obs[nr_obs].op = LC_STAT;
			obs[nr_obs].a = i;
			observe(&obs[nr_obs++]);
		}
		return;
	}
	for (i = 0; i < LC_FILES; i++) {
		obs[nr_obs].op = LC_FSTAT;
		obs[nr_obs].a = i;
		observe(&obs[nr_obs++]);
		obs[nr_obs].op = LC_READ;
		obs[nr_obs].a = i;
		obs[nr_obs].c = LC_MAX_SIZE * 2;
		observe(&obs[nr_obs++]);
	}
}

static void emit(FILE *f, int client, const struct lc_rec *r)
{
	fprintf(f, "%d %llu %llu %u %lld %lld %lld %lld %lld %llu %llu %llu\n",
		client, (unsigned long long)r->call,
		(unsigned long long)r->ret, r->op, (long long)r->a,
		(long long)r->b, (long long)r->c, (long long)r->d,
		(long long)r->res, (unsigned long long)r->o1,
		(unsigned long long)r->o2, (unsigned long long)r->o3);
}

static void setup_round(struct opts *o, uint64_t n)
{
	uint64_t ino;
	char p[128];
	int err, i;

	S->mode = o->mode == 2 ? (n & 1 ? LC_MODE_DATA : LC_MODE_NS) :
		  o->mode == 3 ? LC_MODE_NEST : o->mode;
	snprintf(S->dir, sizeof(S->dir), "/r%llu", (unsigned long long)n);
	/* ESTALE: the driver idled past its lease; it re-joins on retry */
	for (i = 0; (err = daxfs_path_mkdir(H, S->dir, 0755)) == -ESTALE &&
	     i < 3; i++)
		;
	if (err)
		die("mkdir round", err);
	nr_setup = 0;
	for (i = 0; S->mode == LC_MODE_NEST && i < 2; i++) {
		struct lc_rec *r = &setup_recs[nr_setup++];

		memset(r, 0, sizeof(*r));
		r->op = LC_MKDIR;
		r->a = i;
		snprintf(p, sizeof(p), "%s/%s", S->dir, lc_names[i]);
		r->call = lc_tick(S);
		r->res = daxfs_path_mkdir(H, p, 0755);
		r->ret = lc_tick(S);
		if (r->res)
			die("mkdir in round", (int)r->res);
	}
	for (i = 0; S->mode == LC_MODE_DATA && i < LC_FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", S->dir, i);
		err = daxfs_path_create(H, p, 0644, DAXFS_CREATE_EXCL, &ino);
		if (err < 0)
			die("create file", err);
		S->inos[i] = ino;
	}
	/* a worker killed before it saw this round would leave the last
	 * round's records in its slot */
	for (i = 0; i < o->clients; i++)
		S->slots[i].nr_recs = 0;
	S->ops = o->ops;
	S->no_rename = o->no_rename;
	S->no_trunc = o->no_trunc;
	S->no_link = o->no_link;
	S->whiteout = o->whiteout;
	S->falloc = o->falloc;
	S->seed = o->seed;
	S->delay_us = o->delay_us;
	S->flip = o->flip;
}

static int cleanup_cb(void *ctx, const char *name, uint32_t len,
		      uint64_t ino, uint32_t dtype, uint64_t pos);

/* Empties directory p, depth first (a nested round's directories hold
 * others: renames move them under one another). */
static void remove_tree(const char *p)
{
	if (strlen(p) < 200)
		daxfs_path_readdir(H, p, cleanup_cb, (void *)p);
}

static int cleanup_cb(void *ctx, const char *name, uint32_t len,
		      uint64_t ino, uint32_t dtype, uint64_t pos)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%.*s", (const char *)ctx, (int)len, name);
	if (daxfs_path_unlink(H, p) == -EISDIR) {
		remove_tree(p);
		daxfs_path_rmdir(H, p);
	}
	return 0;
}

static void cleanup_round(void)
{
	int err;

	remove_tree(S->dir);
	err = daxfs_path_rmdir(H, S->dir);
	if (err)
		fprintf(stderr, "lc_run: rmdir %s: %s\n", S->dir,
			daxfs_strerror(err));
}

/* Leaves the pool nearly full, so appends and writes stop short. */
static void fill_region(struct opts *o)
{
	static unsigned char buf[1 << 16];
	uint64_t ino, off = 0;
	int64_t w;
	int err;

	err = daxfs_path_create(H, "/filler", 0644, DAXFS_CREATE_EXCL, &ino);
	if (err < 0)
		die("create filler", err);
	memset(buf, 0x5a, sizeof(buf));
	while ((w = daxfs_pwrite(H, ino, buf, sizeof(buf), off)) > 0)
		off += w;
	err = daxfs_ftruncate(H, ino, off > (uint64_t)o->fill * 4096 ?
			      off - (uint64_t)o->fill * 4096 : 0);
	if (err)
		die("truncate filler", err);
	daxfs_region_reclaim(H);
}

/* The state letter of every thread of process pid ('T': stopped): whether
 * all of them show one of the letters in want.  A process that is gone
 * shows none, and counts as all. */
static int threads_in(pid_t pid, const char *want)
{
	char p[320], buf[512], *st;
	struct dirent *de;
	DIR *d;
	FILE *f;
	int all = 1;

	snprintf(p, sizeof(p), "/proc/%d/task", (int)pid);
	d = opendir(p);
	if (!d)
		return 1;
	while (all && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/%d/task/%s/stat", (int)pid,
			 de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		/* "tid (comm) S ...": comm may hold spaces and parentheses */
		if (fgets(buf, sizeof(buf), f) && (st = strrchr(buf, ')')) &&
		    st[1] == ' ' && !strchr(want, st[2]))
			all = 0;
		fclose(f);
	}
	closedir(d);
	return all;
}

static int wait_threads(pid_t pid, const char *want)
{
	double t0 = now_s();

	while (!threads_in(pid, want)) {
		if (now_s() - t0 > 10)
			return 0;
		usleep(200);
	}
	return 1;
}

/* Whether op r may change the namespace or a file: only such an op can
 * leave claims, intents or a half-done step for the survivors to meet. */
static int changes(const struct lc_rec *r)
{
	switch (r->op) {
	case LC_STAT:
	case LC_READDIR:
	case LC_READ:
	case LC_FSTAT:
		return 0;
	}
	return 1;
}

/* -W: a rename with RENAME_WHITEOUT that returned 0 (the report says
 * the mix had some, so a test knows the checker saw whiteouts) */
static int whiteout_done(const struct lc_rec *r)
{
	return r->op == LC_RENAME && (r->c & DAXFS_RENAME_WHITEOUT) && r->ret &&
	       r->res == 0;
}

/*
 * -K: stops guest client i's QEMU (every thread: a vCPU that still ran
 * could record a return after we looked) and looks at the client's last
 * record.  Inside an operation that changes something (a call, no
 * return), the QEMU is killed there: the operation may or may not have
 * happened, and nothing the guest did is recorded after it.  Otherwise it
 * goes on; the caller tries again.
 * Returns whether it killed it.
 */
static int kill_guest(const struct opts *o, int i)
{
	struct lc_slot *sl = &S->slots[i];
	long pid = 0;
	uint32_t k;
	FILE *f;
	int inside;

	f = fopen(o->qemu_pidfile, "r");
	if (!f)
		die("-K: the QEMU's pid file", -errno);
	if (fscanf(f, "%ld", &pid) != 1 || pid <= 1)
		die("-K: the QEMU's pid file", -EINVAL);
	fclose(f);
	if (kill(pid, SIGSTOP))
		die("-K: stop the QEMU", -errno);
	if (!wait_threads(pid, "Tt"))
		die("-K: the QEMU did not stop", -ETIMEDOUT);
	k = __atomic_load_n(&sl->nr_recs, __ATOMIC_ACQUIRE);
	inside = k && k <= LC_MAX_OPS && sl->recs[k - 1].call &&
		 !sl->recs[k - 1].ret && changes(&sl->recs[k - 1]);
	if (!inside) {
		kill(pid, SIGCONT);
		return 0;
	}
	kill(pid, SIGKILL);
	/* gone, or a zombie until run-guest.sh's timeout reaps it */
	if (!wait_threads(pid, "ZX"))
		die("-K: the QEMU did not die", -ETIMEDOUT);
	gone[i] = 1;
	return 1;
}

/* Waits until every live client has run round n.  victim: a worker process
 * to SIGKILL kill_us after the start (-k); gvictim (-K): a guest client to
 * kill inside one of its operations, tried from kill_us on, until it
 * finishes the round.  Returns whether a client died in this round. */
static int wait_round(struct opts *o, uint32_t n, int victim, int gvictim,
		      long kill_us)
{
	double t0 = now_s(), t_kill = t0 + kill_us / 1e6;
	int i, pending, dead = 0;

	for (;;) {
		pending = 0;
		for (i = 0; i < o->clients; i++) {
			if (!client_alive(o, i)) {
				/* a guest killed in an earlier round stays
				 * dead; its host was recovered then */
				dead |= i < o->hosts;
				continue;
			}
			if (__atomic_load_n(&S->slots[i].done_round,
					    __ATOMIC_ACQUIRE) != n)
				pending = 1;
		}
		if (victim >= 0 && now_s() >= t_kill &&
		    proc_slot(o, victim)->pid) {
			kill(proc_slot(o, victim)->pid, SIGKILL);
			victim = -1;
			continue;
		}
		if (gvictim >= 0 && now_s() >= t_kill) {
			if (__atomic_load_n(&S->slots[gvictim].done_round,
					    __ATOMIC_ACQUIRE) == n) {
				gvictim = -1;	/* missed: the next round */
			} else if (kill_guest(o, gvictim)) {
				gvictim = -1;
				dead = 1;
				continue;
			} else {
				/* between two operations, or in a read: a little
				 * later */
				t_kill = now_s() + (rand() % 2000) / 1e6;
			}
		}
		if (!pending)
			return dead;
		if (now_s() - t0 > 120) {
			fprintf(stderr, "lc_run: round %u hangs\n", n);
			exit(3);
		}
		usleep(victim >= 0 || gvictim >= 0 ? 10 : 100);
	}
}

static int client_alive(const struct opts *o, int i)
{
	return i >= o->hosts ? !gone[i] : alive(o, i / o->threads);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lc_run -r REGION [-w WORKERS] [-o OPS] [-n ROUNDS | -t SECONDS]\n"
		"              [-m ns|nest|data|mix] [-k KILL_P] [-s SEED] [-S SIZE_MB]\n"
		"              [-l LEASE_MS] [-f FREE_PAGES] [-c CRASH_AT] [-N] [-T] [-L] [-F] [-W]\n"
		"              [-P THREADS] [-g GUESTS -x PAGE] [-d DELAY_US] [-X SLOT]\n"
		"              [-K SLOT:PIDFILE]\n"
		"  -g, -x: GUESTS more clients in QEMU guests, the shared page in PAGE\n"
		"  -K: kill guest client SLOT's QEMU (pid in PIDFILE) mid-operation\n"
		"  -d: a random pause of up to DELAY_US before each operation\n"
		"  -X: client SLOT (a guest's) lies, to show that the checker sees it\n"
		"  -N: no rename, -T: no truncate, -L: no link (to single out a defect)\n"
		"  -P: THREADS clients in each worker process, sharing its handle\n"
		"  -F: fallocate (every mode) in data rounds\n"
		"  -W: renames with RENAME_WHITEOUT too (one in five)\n"
		"  -m nest: namespace rounds with names under directories too\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){ .workers = 4, .ops = 20, .rounds = 100,
			    .size = 64, .lease_ms = 300, .seed = 1,
			    .threads = 1 };
	while ((c = getopt(argc, argv, "r:w:o:n:t:m:k:s:S:l:f:c:P:g:x:d:X:K:NTLFW")) != -1) {
		switch (c) {
		case 'r': o->region = optarg; break;
		case 'w': o->workers = atoi(optarg); break;
		case 'o': o->ops = atoi(optarg); break;
		case 'n': o->rounds = strtoull(optarg, NULL, 0); break;
		case 't': o->seconds = atof(optarg); o->rounds = ~0ull; break;
		case 'm': o->mode = !strcmp(optarg, "ns") ? 0 :
				    !strcmp(optarg, "data") ? 1 :
				    !strcmp(optarg, "nest") ? 3 : 2; break;
		case 'k': o->kill_p = atof(optarg); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'S': o->size = strtoull(optarg, NULL, 0); break;
		case 'l': o->lease_ms = atoi(optarg); break;
		case 'f': o->fill = atoi(optarg); break;
		case 'c': o->crash_at = optarg; break;
		case 'N': o->no_rename = 1; break;
		case 'T': o->no_trunc = 1; break;
		case 'L': o->no_link = 1; break;
		case 'F': o->falloc = 1; break;
		case 'W': o->whiteout = 1; break;
		case 'P': o->threads = atoi(optarg); break;
		case 'g': o->guests = atoi(optarg); break;
		case 'x': o->page = optarg; break;
		case 'd': o->delay_us = atoi(optarg); break;
		case 'X': o->flip = atoi(optarg) + 1; break;
		case 'K':
			o->kill_guest = atoi(optarg);
			o->qemu_pidfile = strchr(optarg, ':');
			if (!o->qemu_pidfile)
				usage();
			o->qemu_pidfile++;
			break;
		default: usage();
		}
	}
	o->hosts = o->workers * o->threads;
	o->clients = o->hosts + o->guests;
	if (!o->region || o->workers < 1 || o->threads < 1 ||
	    o->clients > LC_MAX_WORKERS || o->ops < 1 || o->ops > LC_MAX_OPS)
		usage();
	/* guests: their page named, no kills; in nested rounds no guest
	 * killed either (-K: not tried there) */
	if (o->guests && (!o->page || o->kill_p > 0 || o->crash_at ||
			  (o->mode == 3 && o->qemu_pidfile)))
		usage();
	/* nested rounds: the checker holds the walks of 8 clients */
	if (o->mode == 3 && o->clients > 8)
		usage();
	/* -K: a guest's slot, and one to survive it (the host worker) */
	if (o->qemu_pidfile &&
	    (o->kill_guest < o->hosts || o->kill_guest >= o->clients))
		usage();
}

/* A guest's client joins once its guest has booted and mounted. */
static void wait_guest(int i, double t0)
{
	if (now_s() - t0 > 600) {
		fprintf(stderr, "lc_run: the guest of client %d never came\n", i);
		exit(3);
	}
	usleep(10000);
}

static void run_rounds(struct opts *o)
{
	double t0 = now_s();
	uint64_t n, rnd = o->seed * 2654435761ULL + 17, total = 0, deaths = 0;
	uint64_t whiteouts = 0;
	uint64_t gk_from = 0, gk_round = 0, gk_open = 0;
	int i, j, victim, gvictim;
	long kill_us;

	/* -K: from a random round among the first 50 (guests' rounds take
	 * tens of ms: the kill comes within seconds, most rounds after it) */
	if (o->qemu_pidfile)
		gk_from = 10 + lc_rand(&rnd) % 40;

	for (n = 1; n <= o->rounds; n++) {
		if (o->seconds && now_s() - t0 >= o->seconds)
			break;
		for (i = 0; i < o->workers; i++)
			if (!alive(o, i)) {
				deaths += n > 1;
				spawn(o, i);
			}
		for (i = 0; i < o->clients; i++)
			while (!gone[i] && !__atomic_load_n(&S->slots[i].ready,
							    __ATOMIC_ACQUIRE)) {
				if (i >= o->hosts) {
					wait_guest(i, t0);
					continue;
				}
				if (!alive(o, i / o->threads)) {
					deaths++;
					spawn(o, i / o->threads);
				}
				usleep(200);
			}
		if (n == 1)
			t0 = now_s();	/* -t: the guests' boot is not counted */
		setup_round(o, n);
		victim = -1;
		gvictim = -1;
		kill_us = 0;
		if (o->kill_p > 0 &&
		    (lc_rand(&rnd) % 1000000) < o->kill_p * 1000000) {
			victim = lc_rand(&rnd) % o->workers;
			kill_us = lc_rand(&rnd) % 3000;
		}
		if (gk_from && n >= gk_from && !gone[o->kill_guest]) {
			gvictim = o->kill_guest;
			kill_us = lc_rand(&rnd) % 20000;
		}
		__atomic_store_n(&S->round, (uint32_t)n, __ATOMIC_RELEASE);
		if (wait_round(o, (uint32_t)n, victim, gvictim, kill_us)) {
			/* a survivor (this host) recovers the dead one; the
			 * other survivors' operations may have met its claims
			 * and recovered it already */
			usleep(o->lease_ms * 2200);
			daxfs_region_reclaim(H);
		}
		if (gvictim >= 0 && gone[gvictim])
			gk_round = n;
		observe_all();
		printf("R %llu %u\n", (unsigned long long)n, S->mode);
		for (i = 0; i < o->clients; i++) {
			uint32_t k = S->slots[i].nr_recs;

			for (j = 0; j < (int)k && j < LC_MAX_OPS; j++) {
				if (!S->slots[i].recs[j].call)
					continue;
				gk_open += n == gk_round &&
					   !S->slots[i].recs[j].ret;
				emit(stdout, i, &S->slots[i].recs[j]);
				total++;
				whiteouts += whiteout_done(&S->slots[i].recs[j]);
			}
		}
		for (j = 0; j < nr_setup; j++)
			emit(stdout, o->clients, &setup_recs[j]);
		for (j = 0; j < nr_obs; j++)
			emit(stdout, o->clients, &obs[j]);
		total += nr_setup + nr_obs;
		cleanup_round();
		/* the checker stops reading at its first violation (-stop) */
		if (fflush(stdout) == EOF)
			break;
	}
	fprintf(stderr, "lc_run: %llu rounds, %llu ops in %.1f s (%.0f ops/s)\n",
		(unsigned long long)n - 1, (unsigned long long)total,
		now_s() - t0, total / (now_s() - t0));
	/* kills (-k) and crash points (-c) before the last round: each a
	 * worker started again */
	fprintf(stderr, "lc_run: %llu workers died\n",
		(unsigned long long)deaths);
	if (o->whiteout)
		fprintf(stderr, "lc_run: %llu renames left a whiteout\n",
			(unsigned long long)whiteouts);
	if (gk_round)
		fprintf(stderr, "lc_run: guest client %d killed in round %llu, "
			"%llu operation(s) open; %llu rounds after it\n",
			o->kill_guest, (unsigned long long)gk_round,
			(unsigned long long)gk_open,
			(unsigned long long)(n - 1 - gk_round));
	else if (o->qemu_pidfile)
		fprintf(stderr, "lc_run: guest client %d never killed\n",
			o->kill_guest);
}

int main(int argc, char **argv)
{
	struct daxfs_mkfs_opts mo = { 0 };
	struct opts o;
	int fd, err, i;

	if (argc == 6 && !strcmp(argv[1], "--worker"))
		return lc_worker_main(argv[3], argv[4], atoi(argv[2]),
				      atoi(argv[5]));
	parse(argc, argv, &o);
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	signal(SIGPIPE, SIG_IGN);
	if (o.page) {
		/* the guests' second nvdimm: theirs as much as ours */
		snprintf(shm_path, sizeof(shm_path), "%s", o.page);
		fd = open(shm_path, O_RDWR);
	} else {
		snprintf(shm_path, sizeof(shm_path), "/dev/shm/lc-clock-%d",
			 getpid());
		fd = open(shm_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd >= 0 && ftruncate(fd, sizeof(*S)))
			fd = -1;
	}
	if (fd < 0)
		die("clock page", -errno);
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (S == MAP_FAILED)
		die("mmap clock page", -errno);
	if (!o.page)
		atexit(remove_clock);
	else
		memset(S, 0, sizeof(*S));
	mo.force = 1;
	mo.lease_ms = o.lease_ms;
	err = daxfs_region_create(o.region, o.size << 20, &mo);
	if (err)
		die("mkfs", err);
	err = daxfs_region_open(o.region, 0, &H);
	if (err)
		die("open", err);
	if (o.fill)
		fill_region(&o);
	/* guests mount from now on */
	__atomic_store_n(&S->magic, LC_MAGIC, __ATOMIC_RELEASE);
	run_rounds(&o);
	fflush(stdout);
	__atomic_store_n(&S->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < o.workers; i++)
		if (proc_slot(&o, i)->pid)
			waitpid(proc_slot(&o, i)->pid, NULL, 0);
	daxfs_region_close(H);
	return 0;
}
