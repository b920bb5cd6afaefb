// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * io_bench: file I/O through libdaxfs (daxfs_pread / daxfs_pwrite) on one
 * file, in the patterns of the DaxFS paper's Table 2, and memcpy of the
 * same blocks between a small buffer and a /dev/shm mapping (the ceiling
 * for any copy-based read or write).  bench/run.sh runs fio on tmpfs with
 * the same patterns in the same run.
 *
 * Patterns, for each block size:
 *   seqwrite-first    sequential writes into a new file (pages allocated
 *                     by DaxFS); several fresh files, total bytes / time
 *   seqwrite-rewrite  sequential writes over the existing file
 *   seqread           sequential reads
 *   randread          reads in a random permutation of the blocks
 *   randwrite         writes (rewrite) in a random permutation
 * Timed patterns make whole passes over the file until -t seconds passed.
 *
 * The region file is fallocated and mapped with DAXFS_OPEN_PREFAULT
 * before timing: DAX memory has no kernel page allocation, so neither do
 * we time one (nor libdaxfs' per-batch mapping of fresh pages, which a
 * pre-faulted region does not make).
 * (fio's first write on tmpfs does include it: that is tmpfs's cost.)
 *
 * Output: CSV on stdout
 *   suite,test,bs,bytes,seconds,mib_s
 *
 * usage: io_bench [-s filesize] [-t seconds] [-r first-write reps]
 *                 [-b bs,bs,...] [-f region] [-m memcpy-file]
 *
 * Job mode (bench/evaluate.py): io_bench -j JOBFILE [-S sect,sect...] [-c]
 *                 [-f region] [-m memcpy-file]
 * runs the sections of a fio job file (bench/fio/table2.fio, the one fio
 * runs on the other targets) through libdaxfs, with fio's meaning for the
 * keys it uses: rw (read, write, randread, randwrite), bs, size, numjobs
 * (threads of this one host, all on the section's one file), time_based,
 * runtime, filename, unlink; ${VAR} is taken from the environment.  Keys
 * that only matter to fio (ioengine=sync, directory, fallocate, invalidate,
 * group_reporting, stonewall) are accepted and ignored; any other key is
 * an error, so the job file cannot silently mean something else here.
 * -c also runs each section as memcpy between private buffers and a
 * MAP_SHARED /dev/shm mapping of the same size (the copy ceiling), with
 * the same threads and block order; a write section also as the
 * streaming copy libdaxfs' writes make (suite ntcopy, lib/ntcopy.h), and
 * on x86-64 every section as one `rep movsb` per block (suite movsb: what
 * libdaxfs' reads and short writes copy with, lib/copy.h).  The ceiling
 * of a row is the fastest of them.  Output: CSV on stdout
 *   suite,test,rw,bs,numjobs,bytes,seconds,mib_s,cpu_ns_op,ins_op
 * cpu_ns_op: the threads' CPU time (CLOCK_THREAD_CPUTIME_ID) per block;
 * unlike mib_s it does not count time other processes held the CPUs.
 * ins_op: user-space instructions per block (perf_event_open; 0 where
 * perf events are not allowed), nearly deterministic: bench/ab.sh.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"
#include "bench.h"
#include "lib/ntcopy.h"
#include "lib/copy.h"

static const char *region = "/dev/shm/daxfs-bench-io";
static const char *mfile = "/dev/shm/daxfs-bench-memcpy";
static uint64_t fsize = 64ull << 20;
static double dur = 0.5;
static int reps = 3;

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Counter of this thread's user-space instructions; -1 if unavailable. */
static int ins_open(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static uint64_t ins_read(int fd)
{
	uint64_t v = 0;

	if (fd >= 0 && read(fd, &v, sizeof(v)) != sizeof(v))
		v = 0;
	return v;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void die(const char *what, int err)
{
	fprintf(stderr, "io_bench: %s: %s\n", what, daxfs_strerror(err));
	exit(1);
}

static void report(const char *suite, const char *test, uint64_t bs,
		   uint64_t bytes, double secs)
{
	printf("%s,%s,%llu,%llu,%.4f,%.1f\n", suite, test,
	       (unsigned long long)bs, (unsigned long long)bytes, secs,
	       bytes / secs / (1 << 20));
	fflush(stdout);
}

/* A fresh region of rsize (rounded up to 2 MiB), fully allocated and
 * faulted in so that no timed run pays for it; NULL after a message. */
static struct daxfs_handle *bench_region(const char *region, uint64_t rsize)
{
	struct daxfs_mkfs_opts o;
	struct daxfs_handle *h;
	int fd, err;

	rsize = (rsize + (2ull << 20) - 1) & ~((2ull << 20) - 1);
	memset(&o, 0, sizeof(o));
	o.force = 1;
	o.lease_ms = 60000;
	o.small_pages = bench_small_pages();
	unlink(region);
	err = daxfs_region_create(region, rsize, &o);
	if (err)
		die("mkfs", err);
	fd = open(region, O_RDWR);
	if (fd < 0 || posix_fallocate(fd, 0, rsize)) {
		perror("fallocate");
		return NULL;
	}
	close(fd);
	err = daxfs_region_open(region, DAXFS_OPEN_PREFAULT, &h);
	if (err)
		die("open", err);
	return h;
}

/* random permutation of [0, n) */
static uint64_t *perm(uint64_t n, uint64_t seed)
{
	uint64_t *p = malloc(n * sizeof(*p)), i, j, t, s = seed | 1;

	if (!p)
		exit(1);
	for (i = 0; i < n; i++)
		p[i] = i;
	for (i = n - 1; i > 0; i--) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		j = s % (i + 1);
		t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

enum { OP_READ, OP_WRITE };

/* one pass over the file in order ord (NULL: sequential) */
static void pass(struct daxfs_handle *h, uint64_t ino, int rw, uint8_t *buf,
		 uint64_t bs, const uint64_t *ord)
{
	uint64_t i, n = fsize / bs, off;
	int64_t r;

	for (i = 0; i < n; i++) {
		off = (ord ? ord[i] : i) * bs;
		r = rw == OP_READ ? daxfs_pread(h, ino, buf, bs, off)
				  : daxfs_pwrite(h, ino, buf, bs, off);
		if (r != (int64_t)bs)
			die(rw == OP_READ ? "pread" : "pwrite",
			    r < 0 ? (int)r : -EIO);
	}
}

static void timed(struct daxfs_handle *h, uint64_t ino, const char *test,
		  int rw, uint8_t *buf, uint64_t bs, const uint64_t *ord)
{
	uint64_t bytes = 0;
	double t0 = now(), t;

	do {
		pass(h, ino, rw, buf, bs, ord);
		bytes += fsize;
		t = now();
	} while (t - t0 < dur);
	report("daxfs", test, bs, bytes, t - t0);
}

static void mc_pass(uint8_t *m, uint8_t *buf, int rw, uint64_t bs,
		    const uint64_t *ord)
{
	uint64_t i, n = fsize / bs, off;

	for (i = 0; i < n; i++) {
		off = (ord ? ord[i] : i) * bs;
		if (rw == OP_READ)
			memcpy(buf, m + off, bs);
		else
			memcpy(m + off, buf, bs);
		/* keep the copies from being elided */
		__asm__ __volatile__("" ::: "memory");
	}
}

static void mc_timed(uint8_t *m, uint8_t *buf, const char *test, int rw,
		     uint64_t bs, const uint64_t *ord)
{
	uint64_t bytes = 0;
	double t0 = now(), t;

	do {
		mc_pass(m, buf, rw, bs, ord);
		bytes += fsize;
		t = now();
	} while (t - t0 < dur);
	report("memcpy", test, bs, bytes, t - t0);
}

/* ------------------------------------------------------------------ */
/* Job mode: the sections of a fio job file, through libdaxfs          */
/* ------------------------------------------------------------------ */

struct job {
	char name[64];
	char rw[16];
	char filename[128];
	uint64_t bs, size;
	int numjobs, time_based, unlink;
	double runtime;
};

static void jdie(const char *file, int line, const char *msg, const char *arg)
{
	fprintf(stderr, "io_bench: %s:%d: %s%s%s\n", file, line, msg,
		arg ? ": " : "", arg ? arg : "");
	exit(2);
}

static uint64_t parse_bytes(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 0);

	switch (tolower((unsigned char)*end)) {
	case 'k': n <<= 10; break;
	case 'm': n <<= 20; break;
	case 'g': n <<= 30; break;
	}
	return n;
}

static double parse_time(const char *v)
{
	char *end;
	double t = strtod(v, &end);

	if (!strncmp(end, "ms", 2))
		return t / 1000;
	if (!strncmp(end, "us", 2))
		return t / 1e6;
	if (*end == 'm')
		return t * 60;
	return t;		/* s or none: seconds (fio's default unit) */
}

/* ${VAR} from the environment, in place */
static void expand(char *v, size_t cap, const char *file, int line)
{
	char out[512], name[128], *p, *q;
	size_t n = 0;

	for (p = v; *p && n < sizeof(out) - 1;) {
		if (p[0] == '$' && p[1] == '{' && (q = strchr(p, '}'))) {
			const char *e;

			snprintf(name, sizeof(name), "%.*s", (int)(q - p - 2), p + 2);
			e = getenv(name);
			if (!e)
				jdie(file, line, "environment variable not set", name);
			n += snprintf(out + n, sizeof(out) - n, "%s", e);
			p = q + 1;
		} else {
			out[n++] = *p++;
		}
	}
	out[n < sizeof(out) ? n : sizeof(out) - 1] = 0;
	snprintf(v, cap, "%s", out);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int set_key(struct job *j, const char *k, char *v, const char *file,
		   int line)
{
	static const char *const ignored[] = {
		"directory", "fallocate", "invalidate", "group_reporting",
		"stonewall", "thread", NULL };
	int i;

	if (!strcmp(k, "rw") || !strcmp(k, "readwrite")) {
		if (strcmp(v, "read") && strcmp(v, "write") &&
		    strcmp(v, "randread") && strcmp(v, "randwrite"))
			jdie(file, line, "rw not supported", v);
		snprintf(j->rw, sizeof(j->rw), "%s", v);
	} else if (!strcmp(k, "bs")) {
		j->bs = parse_bytes(v);
	} else if (!strcmp(k, "size")) {
		j->size = parse_bytes(v);
	} else if (!strcmp(k, "numjobs")) {
		j->numjobs = atoi(v);
	} else if (!strcmp(k, "time_based")) {
		j->time_based = !*v || atoi(v);
	} else if (!strcmp(k, "runtime")) {
		j->runtime = parse_time(v);
	} else if (!strcmp(k, "filename")) {
		snprintf(j->filename, sizeof(j->filename), "%s", v);
	} else if (!strcmp(k, "unlink")) {
		j->unlink = !*v || atoi(v);
	} else if (!strcmp(k, "ioengine")) {
		if (strcmp(v, "sync") && strcmp(v, "psync"))
			jdie(file, line, "only the sync engine is modelled", v);
	} else {
		for (i = 0; ignored[i]; i++)
			if (!strcmp(k, ignored[i]))
				return 0;
		jdie(file, line, "key not modelled by io_bench", k);
	}
	return 0;
}

/* all sections of file (global first), in order; returns the count */
static int parse_jobs(const char *file, struct job *jobs, int max)
{
	struct job glob, *cur = &glob;
	char buf[512], val[512], *l, *eq;
	int n = 0, line = 0;
	FILE *f = fopen(file, "r");

	if (!f) {
		perror(file);
		exit(2);
	}
	memset(&glob, 0, sizeof(glob));
	glob.numjobs = 1;
	glob.size = 64ull << 20;
	glob.bs = 4096;
	snprintf(glob.rw, sizeof(glob.rw), "read");
	while (fgets(buf, sizeof(buf), f)) {
		line++;
		l = trim(buf);
		if (!*l || *l == ';' || *l == '#')
			continue;
		if (*l == '[') {
			char *e = strchr(l, ']');

			if (!e)
				jdie(file, line, "bad section header", l);
			*e = 0;
			if (!strcmp(l + 1, "global")) {
				cur = &glob;
				continue;
			}
			if (n == max)
				jdie(file, line, "too many sections", NULL);
			jobs[n] = glob;
			cur = &jobs[n++];
			snprintf(cur->name, sizeof(cur->name), "%s", l + 1);
			if (!cur->filename[0])
				snprintf(cur->filename, sizeof(cur->filename),
					 "%s.0.0", cur->name);
			continue;
		}
		eq = strchr(l, '=');
		val[0] = 0;
		if (eq) {
			*eq = 0;
			snprintf(val, sizeof(val), "%s", trim(eq + 1));
		}
		expand(val, sizeof(val), file, line);
		set_key(cur, trim(l), val, file, line);
	}
	fclose(f);
	return n;
}

struct worker {
	pthread_t t;
	struct daxfs_handle *h;	/* NULL: memcpy */
	uint8_t *m;		/* memcpy target */
	int nt;			/* with m: writes as libdaxfs streams */
	int movsb;		/* with m: one rep movsb per block */
	const struct job *j;
	uint64_t ino, seed, bytes;
	volatile int *go;
	double start, end, cpu;	/* cpu: this thread's CPU seconds */
	uint64_t ins;		/* user-space instructions (0: no counter) */
	int err;
	struct daxfs_fcache fc;	/* per open file, as fio's job has one */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct job *j = w->j;
	int rnd = !strncmp(j->rw, "rand", 4);
	int rd = strstr(j->rw, "read") != NULL;
	uint64_t n = j->size / j->bs, i, off, *ord = rnd ? perm(n, w->seed) : NULL;
	uint8_t *buf;
	int64_t r;
	int fd = ins_open();

	if (posix_memalign((void **)&buf, 4096, j->bs)) {
		w->err = -ENOMEM;
		return NULL;
	}
	memset(buf, 0xa5, j->bs);
	while (!*w->go)
		__asm__ __volatile__("pause" ::: "memory");
	w->start = now();
	w->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID);
	w->ins = ins_read(fd);
	for (;;) {
		for (i = 0; i < n; i++) {
			off = (ord ? ord[i] : i) * j->bs;
			if (w->h) {
				r = rd ? daxfs_pread_fc(w->h, w->ino, &w->fc, buf,
							j->bs, off)
				       : daxfs_pwrite_fc(w->h, w->ino, &w->fc, buf,
							 j->bs, off);
				if (r != (int64_t)j->bs) {
					w->err = r < 0 ? (int)r : -EIO;
					goto out;
				}
			} else if (w->movsb) {
				daxfs_movsb(rd ? buf : w->m + off,
					    rd ? w->m + off : buf, j->bs);
			} else if (rd) {
				memcpy(buf, w->m + off, j->bs);
			} else if (w->nt) {
				daxfs_copy_nt(w->m + off, buf, j->bs);
			} else {
				memcpy(w->m + off, buf, j->bs);
			}
			__asm__ __volatile__("" ::: "memory");
			w->bytes += j->bs;
			if (j->time_based && !(i & 63) && now() - w->start >= j->runtime)
				goto out;
		}
		if (!j->time_based || now() - w->start >= j->runtime)
			break;
	}
out:
	w->end = now();
	w->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - w->cpu;
	w->ins = fd >= 0 ? ins_read(fd) - w->ins : 0;
	if (fd >= 0)
		close(fd);
	free(ord);
	free(buf);
	return NULL;
}

/* numjobs threads on one file (or mapping); total bytes / wall time */
static void run_job(const char *suite, const struct job *j,
		    struct daxfs_handle *h, uint64_t ino, uint8_t *m)
{
	struct worker w[64];
	volatile int go = 0;
	double t0 = 1e300, t1 = 0, cpu = 0;
	uint64_t bytes = 0, ins = 0;
	int i, nj = j->numjobs < 1 ? 1 : j->numjobs > 64 ? 64 : j->numjobs;

	for (i = 0; i < nj; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].h = h;
		w[i].m = m;
		w[i].nt = !strcmp(suite, "ntcopy");
		w[i].movsb = !strcmp(suite, "movsb");
		w[i].j = j;
		w[i].ino = ino;
		w[i].go = &go;
		w[i].seed = 0x2545f4914f6cdd1dull + j->bs * 131 + i * 7919;
		if (pthread_create(&w[i].t, NULL, worker_main, &w[i]))
			die("pthread_create", -EAGAIN);
	}
	go = 1;
	for (i = 0; i < nj; i++) {
		pthread_join(w[i].t, NULL);
		if (w[i].err)
			die(j->name, w[i].err);
		bytes += w[i].bytes;
		cpu += w[i].cpu;
		ins += w[i].ins;
		if (w[i].start < t0)
			t0 = w[i].start;
		if (w[i].end > t1)
			t1 = w[i].end;
	}
	printf("%s,%s,%s,%llu,%d,%llu,%.4f,%.1f,%.0f,%.0f\n", suite, j->name,
	       j->rw, (unsigned long long)j->bs, nj, (unsigned long long)bytes,
	       t1 - t0, bytes / (t1 - t0) / (1 << 20),
	       bytes ? cpu * 1e9 / (bytes / j->bs) : 0,
	       bytes ? (double)ins / (bytes / j->bs) : 0);
	fflush(stdout);
}

static int wanted(const char *list, const char *name)
{
	char buf[1024], *tok, *save;

	if (!list)
		return 1;
	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, name))
			return 1;
	return 0;
}

static int job_mode(const char *file, const char *sections, int ceiling)
{
	static struct job jobs[64];
	struct daxfs_handle *h;
	struct daxfs_attr st;
	uint64_t rsize, maxsize = 0, ino;
	char path[160];
	uint8_t *m = NULL, *buf;
	int n = parse_jobs(file, jobs, 64), i, err;

	for (i = 0; i < n; i++) {
		if (!jobs[i].bs || jobs[i].size % jobs[i].bs)
			jdie(file, 0, "bs must divide size in section", jobs[i].name);
		if (jobs[i].size > maxsize)
			maxsize = jobs[i].size;
	}
	/* two files of the largest size at once, plus metadata */
	rsize = maxsize * 3 + (64ull << 20);
	h = bench_region(region, rsize);
	if (!h)
		return 1;
	if (ceiling) {
		m = bench_shm_map(mfile, maxsize, 0x5a);
		if (!m)
			return 1;
	}
	if (posix_memalign((void **)&buf, 4096, 1 << 20))
		return 1;
	memset(buf, 0x3c, 1 << 20);
	printf("suite,test,rw,bs,numjobs,bytes,seconds,mib_s,cpu_ns_op,ins_op\n");
	for (i = 0; i < n; i++) {
		const struct job *j = &jobs[i];

		if (!wanted(sections, j->name))
			continue;
		snprintf(path, sizeof(path), "/%s", j->filename);
		err = daxfs_path_create(h, path, 0644, 0, &ino);
		if (err < 0)
			die(path, err);
		/* like fio: a read job lays its file out first when short */
		if (strstr(j->rw, "read") && (daxfs_fstat(h, ino, &st) ||
					       st.size < j->size)) {
			uint64_t off, c;

			for (off = 0; off < j->size; off += c) {
				c = j->size - off < (1 << 20) ? j->size - off : (1 << 20);
				if (daxfs_pwrite(h, ino, buf, c, off) != (int64_t)c)
					die("layout", -EIO);
			}
		}
		run_job("daxfs", j, h, ino, NULL);
		if (ceiling)
			run_job("memcpy", j, NULL, 0, m);
		/* writes: also the copy libdaxfs makes (lib/ntcopy.h) */
		if (ceiling && !strstr(j->rw, "read"))
			run_job("ntcopy", j, NULL, 0, m);
#if defined(__x86_64__)
		if (ceiling)
			run_job("movsb", j, NULL, 0, m);
#endif
		if (j->unlink) {
			err = daxfs_path_unlink(h, path);
			if (err)
				die("unlink", err);
			daxfs_region_reclaim(h);
		}
	}
	daxfs_region_close(h);
	unlink(region);
	if (m)
		munmap(m, maxsize);
	return 0;
}

int main(int argc, char **argv)
{
	static const uint64_t def_bs[] = { 4096, 65536 };
	uint64_t bsv[8], nbs = 0, b, ino, *ord, bytes;
	struct daxfs_handle *h;
	uint8_t *buf, *m;
	uint64_t rsize;
	char name[64], *tok, *save;
	double t0, secs;
	int c, err, r, nfile = 0, ceiling = 0;
	const char *jobfile = NULL, *sections = NULL;

	while ((c = getopt(argc, argv, "s:t:r:b:f:m:j:S:c")) != -1) {
		switch (c) {
		case 'j': jobfile = optarg; break;
		case 'S': sections = optarg; break;
		case 'c': ceiling = 1; break;
		case 's': fsize = strtoull(optarg, NULL, 0); break;
		case 't': dur = atof(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'b':
			for (tok = strtok_r(optarg, ",", &save); tok && nbs < 8;
			     tok = strtok_r(NULL, ",", &save))
				bsv[nbs++] = strtoull(tok, NULL, 0);
			break;
		case 'f': region = optarg; break;
		case 'm': mfile = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-s filesize] [-t seconds] "
				"[-r reps] [-b bs,...] [-f region] [-m file]\n",
				argv[0]);
			return 2;
		}
	}
	if (jobfile)
		return job_mode(jobfile, sections, ceiling);
	if (!nbs) {
		memcpy(bsv, def_bs, sizeof(def_bs));
		nbs = 2;
	}
	if (reps < 1)
		reps = 1;

	/* room for reps fresh files per block size, the rewrite file and
	 * metadata (radix nodes, about 1/512 of the data) */
	rsize = fsize * (reps * nbs + 2) + fsize / 8 + (64ull << 20);
	h = bench_region(region, rsize);
	if (!h)
		return 1;

	if (posix_memalign((void **)&buf, 4096, 1 << 20))
		return 1;
	memset(buf, 0xa5, 1 << 20);

	printf("suite,test,bs,bytes,seconds,mib_s\n");
	for (b = 0; b < nbs; b++) {
		uint64_t bs = bsv[b];

		if (!bs || bs > (1 << 20) || fsize % bs)
			die("block size must divide the file size, <= 1 MiB",
			    -EINVAL);
		/* first writes: fresh files */
		bytes = 0;
		secs = 0;
		for (r = 0; r < reps; r++) {
			snprintf(name, sizeof(name), "/first-%d", nfile++);
			err = daxfs_path_create(h, name, 0644, DAXFS_CREATE_EXCL,
						&ino);
			if (err < 0)
				die("create", err);
			t0 = now();
			pass(h, ino, OP_WRITE, buf, bs, NULL);
			secs += now() - t0;
			bytes += fsize;
		}
		report("daxfs", "seqwrite-first", bs, bytes, secs);
		/* the last fresh file is rewritten and read */
		timed(h, ino, "seqwrite-rewrite", OP_WRITE, buf, bs, NULL);
		timed(h, ino, "seqread", OP_READ, buf, bs, NULL);
		ord = perm(fsize / bs, 0x2545f4914f6cdd1dull + bs);
		timed(h, ino, "randread", OP_READ, buf, bs, ord);
		timed(h, ino, "randwrite", OP_WRITE, buf, bs, ord);
		free(ord);
	}
	daxfs_region_close(h);
	unlink(region);

	/* the copy ceiling: the same blocks between a small buffer and a
	 * 64 MiB MAP_SHARED /dev/shm mapping (the same kind of pages) */
	m = bench_shm_map(mfile, fsize, 0x5a);
	if (!m)
		return 1;
	for (b = 0; b < nbs; b++) {
		uint64_t bs = bsv[b];

		mc_timed(m, buf, "seqwrite", OP_WRITE, bs, NULL);
		mc_timed(m, buf, "seqread", OP_READ, bs, NULL);
		ord = perm(fsize / bs, 0x2545f4914f6cdd1dull + bs);
		mc_timed(m, buf, "randread", OP_READ, bs, ord);
		mc_timed(m, buf, "randwrite", OP_WRITE, bs, ord);
		free(ord);
	}
	munmap(m, fsize);
	unlink(mfile);
	return 0;
}
