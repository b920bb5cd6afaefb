// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xhost_bench: cross-host inserts (the DaxFS paper's Figure 7).  Every host
 * runs this same program on the same region, each through its own front
 * end: a QEMU guest through its daxfs.ko mount (posix), a host process
 * through libdaxfs on the shared file (daxfs).
 *
 *   xhost_bench run posix MNT    ROLE PEERS SECONDS MAXOPS [paced]
 *   xhost_bench run daxfs REGION ROLE PEERS SECONDS MAXOPS [paced]
 *   xhost_bench verify REGION PEERS
 *
 * run: creates /xh/sync/ready-ROLE, waits until every host of PEERS (e.g.
 * A+B+H) has done the same, then for SECONDS (or MAXOPS operations) repeats
 * one insert: create /xh/f/ROLE-<i> with O_EXCL (new overlay keys for the
 * inode and the name, all hosts in one directory) and append a 16-byte
 * record "ROLE<i>" to the shared file /xh/counter with O_APPEND (the core
 * reserves the range by CAS at the real end of the file).  Then writes
 * /xh/sync/done-ROLE ("<inserts> <seconds>") and prints
 *   role,inserts,seconds,rate,eexist
 * With "paced", the MAXOPS inserts are spread evenly over SECONDS (a fast
 * host process then contends with slow guests for the whole window without
 * filling the region).  eexist counts creates of a name only this host
 * ever creates that failed with EEXIST: a front-end bug (the name is then
 * checked to exist, counted as inserted, and its record appended).
 * verify (after every host is done, through libdaxfs): lists /xh/f and
 * reads /xh/counter, and checks that every insert every host reported is
 * there exactly once (no lost update, no duplicate), then prints
 * key=value lines, including the core's CAS counters from the state page.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

#define REC 16

static struct daxfs_handle *h;
static const char *mnt;
static int lib;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail(const char *what, int err)
{
	fprintf(stderr, "xhost_bench: %s: %s\n", what, strerror(err));
	exit(1);
}

static const char *P(const char *path)
{
	static char buf[4096];

	if (lib)
		return path;
	snprintf(buf, sizeof(buf), "%s%s", mnt, path);
	return buf;
}

static void xmkdir(const char *path)
{
	int err = lib ? daxfs_path_mkdir(h, path, 0755)
		      : (mkdir(P(path), 0755) ? -errno : 0);

	if (err && err != -EEXIST)
		fail(path, -err);
}

/* 1 created, 0 existed */
static int create_excl(const char *path)
{
	int fd, err;

	if (lib) {
		err = daxfs_path_create(h, path, 0644, DAXFS_CREATE_EXCL, NULL);
		if (err == -EEXIST)
			return 0;
		if (err < 0)
			fail(path, -err);
		return 1;
	}
	fd = open(P(path), O_CREAT | O_EXCL | O_WRONLY, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;
		fail(path, errno);
	}
	close(fd);
	return 1;
}

static int exists(const char *path)
{
	struct stat st;
	struct daxfs_attr a;

	return lib ? daxfs_path_stat(h, path, &a) == 0 : stat(P(path), &st) == 0;
}

static void write_small(const char *path, const char *s)
{
	uint64_t ino;
	int fd, err;

	if (lib) {
		err = daxfs_path_create(h, path, 0644, 0, &ino);
		if (err < 0 || daxfs_pwrite(h, ino, s, strlen(s), 0) < 0)
			fail(path, EIO);
		return;
	}
	fd = open(P(path), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		fail(path, errno);
	close(fd);
}

static int run(const char *role, char *peers, double secs, uint64_t maxops,
	       int paced)
{
	uint64_t eexist = 0;
	char path[256], rec[32], *tok, *save, buf[64];
	uint64_t i, ino = 0;
	double t0, t;
	int fd = -1, err;

	xmkdir("/xh");
	xmkdir("/xh/sync");
	xmkdir("/xh/f");
	if (lib) {
		err = daxfs_path_create(h, "/xh/counter", 0644, 0, &ino);
		if (err < 0)
			fail("/xh/counter", -err);
	} else {
		fd = open(P("/xh/counter"), O_CREAT | O_WRONLY | O_APPEND, 0644);
		if (fd < 0)
			fail("/xh/counter", errno);
	}
	snprintf(path, sizeof(path), "/xh/sync/ready-%s", role);
	create_excl(path);
	t0 = now();
	for (tok = strtok_r(peers, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		snprintf(path, sizeof(path), "/xh/sync/ready-%s", tok);
		while (!exists(path)) {
			if (now() - t0 > 600)
				fail("waiting for the other hosts", ETIMEDOUT);
			usleep(1000);
		}
	}
	t0 = now();
	for (i = 0; i < maxops; i++) {
		snprintf(path, sizeof(path), "/xh/f/%s-%llu", role,
			 (unsigned long long)i);
		if (!create_excl(path)) {
			if (!exists(path))
				fail(path, EEXIST);
			if (!eexist++)
				fprintf(stderr, "xhost_bench: %s: EEXIST from a create "
					"no other host makes (the name exists)\n", path);
		}
		snprintf(rec, sizeof(rec), "%-3.3s%012llu", role,
			 (unsigned long long)i);
		rec[REC - 1] = '\n';
		if (lib) {
			if (daxfs_append(h, ino, rec, REC, NULL) != REC)
				fail("append", EIO);
		} else if (write(fd, rec, REC) != REC) {
			fail("append", errno);
		}
		if (!(i & 15)) {
			t = now() - t0;
			if (t >= secs) {
				i++;
				break;
			}
			/* paced: ahead of maxops * t / secs, wait */
			while (paced && i + 1 > maxops * (t / secs) && t < secs) {
				usleep(1000);
				t = now() - t0;
			}
		}
	}
	t = now() - t0;
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "/xh/sync/done-%s", role);
	snprintf(buf, sizeof(buf), "%llu %.6f\n", (unsigned long long)i, t);
	write_small(path, buf);
	printf("role,inserts,seconds,rate,eexist\n%s,%llu,%.6f,%.1f,%llu\n", role,
	       (unsigned long long)i, t, i / t, (unsigned long long)eexist);
	return 0;
}

/* ---- verify */
struct names {
	char **v;
	size_t n, cap;
};

static int collect(void *ctx, const char *name, uint32_t len, uint64_t ino,
		   uint32_t dtype, uint64_t pos)
{
	struct names *s = ctx;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4096;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			fail("realloc", ENOMEM);
	}
	s->v[s->n++] = strndup(name, len);
	return 0;
}

static int cmps(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int verify(char *peers)
{
	struct names names = { 0 };
	struct daxfs_info *info = calloc(1, sizeof(*info));
	struct daxfs_attr st;
	char path[256], buf[64], *tok, *save, *data, **recs, want[64];
	uint64_t expected = 0, ino, nrec, i, dup_n = 0, dup_r = 0, bad_r = 0;
	uint64_t found_n = 0, found_r = 0, cnt, k;
	int64_t r;
	int err;

	err = daxfs_path_readdir(h, "/xh/f", collect, &names);
	if (err < 0)
		fail("/xh/f", -err);
	qsort(names.v, names.n, sizeof(*names.v), cmps);
	for (i = 1; i < names.n; i++)
		dup_n += !strcmp(names.v[i], names.v[i - 1]);
	err = daxfs_path_resolve(h, "/xh/counter", 1, &ino);
	if (err || daxfs_fstat(h, ino, &st))
		fail("/xh/counter", ENOENT);
	data = malloc(st.size + 1);
	r = daxfs_pread(h, ino, data, st.size, 0);
	if (r != (int64_t)st.size)
		fail("read /xh/counter", EIO);
	nrec = st.size / REC;
	recs = malloc((nrec + 1) * sizeof(*recs));
	for (i = 0; i < nrec; i++) {
		recs[i] = data + i * REC;
		if (recs[i][REC - 1] != '\n')
			bad_r++;
		recs[i][REC - 1] = 0;
	}
	qsort(recs, nrec, sizeof(*recs), cmps);
	for (i = 1; i < nrec; i++)
		dup_r += !strcmp(recs[i], recs[i - 1]);
	for (tok = strtok_r(peers, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		uint64_t fino;

		snprintf(path, sizeof(path), "/xh/sync/done-%s", tok);
		memset(buf, 0, sizeof(buf));
		if (daxfs_path_resolve(h, path, 1, &fino) ||
		    daxfs_pread(h, fino, buf, sizeof(buf) - 1, 0) <= 0)
			fail(path, ENOENT);
		cnt = strtoull(buf, NULL, 10);
		expected += cnt;
		printf("inserts_%s=%llu\n", tok, (unsigned long long)cnt);
		for (k = 0; k < cnt; k++) {
			char *key = want;

			snprintf(want, sizeof(want), "%s-%llu", tok,
				 (unsigned long long)k);
			found_n += bsearch(&key, names.v, names.n, sizeof(*names.v),
					   cmps) != NULL;
			snprintf(want, sizeof(want), "%-3.3s%012llu", tok,
				 (unsigned long long)k);
			found_r += bsearch(&key, recs, nrec, sizeof(*recs),
					   cmps) != NULL;
		}
	}
	if (daxfs_info(h, info))
		fail("info", EIO);
	printf("expected=%llu\nnames=%zu\nlost_names=%llu\ndup_names=%llu\n"
	       "extra_names=%lld\nrecords=%llu\nlost_records=%llu\n"
	       "dup_records=%llu\nbad_records=%llu\nextra_records=%lld\n"
	       "stat_inserts=%llu\nstat_cas_fail=%llu\ncas_success=%.6f\n",
	       (unsigned long long)expected, names.n,
	       (unsigned long long)(expected - found_n),
	       (unsigned long long)dup_n,
	       (long long)names.n - (long long)found_n,
	       (unsigned long long)nrec,
	       (unsigned long long)(expected - found_r),
	       (unsigned long long)dup_r, (unsigned long long)bad_r,
	       (long long)nrec - (long long)found_r,
	       (unsigned long long)info->stat_inserts,
	       (unsigned long long)info->stat_cas_fail,
	       (double)info->stat_inserts /
	       (double)(info->stat_inserts + info->stat_cas_fail));
	return expected == found_n && expected == found_r && !dup_n &&
	       !dup_r && !bad_r && names.n == found_n && nrec == found_r ? 0 : 3;
}

int main(int argc, char **argv)
{
	int err;

	if (argc == 4 && !strcmp(argv[1], "verify")) {
		lib = 1;
		err = daxfs_region_open(argv[2], 0, &h);
		if (err)
			fail(argv[2], -err);
		err = verify(argv[3]);
		daxfs_region_close(h);
		return err;
	}
	if (argc < 8 || argc > 9 || strcmp(argv[1], "run") ||
	    (strcmp(argv[2], "posix") && strcmp(argv[2], "daxfs"))) {
		fprintf(stderr, "usage: xhost_bench run posix|daxfs MNT|REGION ROLE "
			"PEERS SECONDS MAXOPS [paced]\n       xhost_bench verify REGION PEERS\n");
		return 2;
	}
	lib = !strcmp(argv[2], "daxfs");
	if (lib) {
		err = daxfs_region_open(argv[3], 0, &h);
		if (err)
			fail(argv[3], -err);
	} else {
		mnt = argv[3];
	}
	err = run(argv[4], argv[5], atof(argv[6]), strtoull(argv[7], NULL, 0),
		  argc == 9 && !strcmp(argv[8], "paced"));
	if (lib)
		daxfs_region_close(h);
	return err;
}
