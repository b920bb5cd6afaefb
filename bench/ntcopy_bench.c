// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * ntcopy_bench - cached copies (memcpy) against streaming copies
 * (lib/ntcopy.h, what libdaxfs' writes use) into a MAP_SHARED /dev/shm
 * mapping, by block size and mapping size (docs/benchmarks.md "Data
 * copies with streaming stores").
 *
 *   ntcopy_bench [-m MIB[,MIB...]] [-b BYTES[,BYTES...]] [-g GIB] [-r ROUNDS]
 *
 * For each mapping size and block size: GIB GiB of blocks copied from one
 * small source buffer to random block-aligned places in the mapping, once
 * with memcpy and once with daxfs_copy_nt, alternated ROUNDS times; CSV
 * "mib,bs,round,memcpy_mib_s,nt_mib_s" on stdout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "lib/ntcopy.h"

static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static double run(uint8_t *m, size_t msize, const uint8_t *src, size_t bs,
		  uint64_t total, int nt)
{
	size_t nblk = msize / bs;
	uint64_t x = 88172645463325252ull, done;
	double t0 = bench_now();

	for (done = 0; done < total; done += bs) {
		uint8_t *d = m + (xorshift(&x) % nblk) * bs;

		if (nt)
			daxfs_copy_nt(d, src, bs);
		else
			memcpy(d, src, bs);
	}
	return total / 1048576.0 / (bench_now() - t0);
}

static int parse_list(char *s, long *v, int max)
{
	int n = 0;

	for (s = strtok(s, ","); s && n < max; s = strtok(NULL, ","))
		v[n++] = atol(s);
	return n;
}

int main(int argc, char **argv)
{
	char ms[] = "16,64,1024", bss[] = "4096,65536,1048576";
	long mv[8], bv[8];
	char *mlist = ms, *blist = bss, path[64];
	int nm, nb, i, j, r, rounds = 3, c;
	double gib = 2;
	uint8_t *src;

	while ((c = getopt(argc, argv, "m:b:g:r:")) != -1) {
		switch (c) {
		case 'm': mlist = optarg; break;
		case 'b': blist = optarg; break;
		case 'g': gib = atof(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-m MIB,..] [-b BYTES,..] "
				"[-g GIB] [-r ROUNDS]\n", argv[0]);
			return 2;
		}
	}
	nm = parse_list(mlist, mv, 8);
	nb = parse_list(blist, bv, 8);
	src = aligned_alloc(4096, 1 << 20);
	if (!src)
		return 1;
	memset(src, 0x5a, 1 << 20);
	printf("mib,bs,round,memcpy_mib_s,nt_mib_s\n");
	for (i = 0; i < nm; i++) {
		size_t msize = (size_t)mv[i] << 20;
		uint8_t *m;

		snprintf(path, sizeof(path), "/dev/shm/ntcopy-bench-%d", getpid());
		m = bench_shm_map(path, msize, 1);
		if (!m)
			return 1;
		for (j = 0; j < nb; j++) {
			if ((size_t)bv[j] > msize || bv[j] > 1 << 20)
				continue;
			for (r = 1; r <= rounds; r++) {
				uint64_t total = (uint64_t)(gib * (1 << 30));
				double a = run(m, msize, src, bv[j], total, 0);
				double b = run(m, msize, src, bv[j], total, 1);

				printf("%ld,%ld,%d,%.0f,%.0f\n", mv[i], bv[j], r, a, b);
				fflush(stdout);
			}
		}
		munmap(m, msize);
	}
	free(src);
	return 0;
}
