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
 * The region file is fallocated and its mapping touched before timing:
 * DAX memory has no kernel page allocation, so neither do we time one.
 * (fio's first write on tmpfs does include it: that is tmpfs's cost.)
 *
 * Output: CSV on stdout
 *   suite,test,bs,bytes,seconds,mib_s
 *
 * usage: io_bench [-s filesize] [-t seconds] [-r first-write reps]
 *                 [-b bs,bs,...] [-f region] [-m memcpy-file]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"

static const char *region = "/dev/shm/daxfs-bench-io";
static const char *mfile = "/dev/shm/daxfs-bench-memcpy";
static uint64_t fsize = 64ull << 20;
static double dur = 0.5;
static int reps = 3;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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

static void touch(volatile uint8_t *p, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i += 4096)
		(void)p[i];
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

int main(int argc, char **argv)
{
	static const uint64_t def_bs[] = { 4096, 65536 };
	uint64_t bsv[8], nbs = 0, b, ino, *ord, bytes;
	struct daxfs_mkfs_opts o;
	struct daxfs_handle *h;
	struct daxfs_fs *fs;
	uint8_t *buf, *m;
	uint64_t rsize;
	char name[64], *tok, *save;
	double t0, secs;
	int c, fd, err, r, nfile = 0;

	while ((c = getopt(argc, argv, "s:t:r:b:f:m:")) != -1) {
		switch (c) {
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
	if (!nbs) {
		memcpy(bsv, def_bs, sizeof(def_bs));
		nbs = 2;
	}
	if (reps < 1)
		reps = 1;

	/* room for reps fresh files per block size, the rewrite file and
	 * metadata (radix nodes, about 1/512 of the data) */
	rsize = fsize * (reps * nbs + 2) + fsize / 8 + (64ull << 20);
	rsize = (rsize + (2ull << 20) - 1) & ~((2ull << 20) - 1);
	memset(&o, 0, sizeof(o));
	o.force = 1;
	o.lease_ms = 60000;
	unlink(region);
	err = daxfs_region_create(region, rsize, &o);
	if (err)
		die("mkfs", err);
	fd = open(region, O_RDWR);
	if (fd < 0 || posix_fallocate(fd, 0, rsize)) {
		perror("fallocate");
		return 1;
	}
	close(fd);
	err = daxfs_region_open(region, 0, &h);
	if (err)
		die("open", err);
	fs = daxfs_handle_fs(h);
	touch(fs->base, fs->size);

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
	unlink(mfile);
	fd = open(mfile, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || posix_fallocate(fd, 0, fsize)) {
		perror(mfile);
		return 1;
	}
	m = mmap(NULL, fsize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(m, 0x5a, fsize);
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
