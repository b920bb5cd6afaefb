// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * stream_fence - what a locked instruction costs right after streaming
 * stores (docs/benchmarks.md "Where the 4 KiB write rows' time goes").
 *
 *   stream_fence [-m MIB] [-w WORK,WORK...] [-r ROUNDS]
 *
 * A write of fresh pages through libdaxfs copies with streaming stores
 * (lib/ntcopy.h), fences them once (daxfs_copy_fenced) and then publishes
 * the page with a CAS.  A locked instruction waits until the streamed
 * lines have left the core's write-combining buffers; work placed between
 * the fence and it runs while they drain.  This program measures that, on
 * 4 KiB blocks written in order over a MIB MiB MAP_SHARED /dev/shm
 * mapping (the bench's file size), each followed by WORK steps of a
 * dependent multiply-add chain (the rest of a write's work, which has no
 * memory traffic of its own), in four placements:
 *
 *   alone       copy, fence, work               (no locked instruction)
 *   cas_first   copy, fence, CAS, work          (libdaxfs' publish)
 *   cas_last    copy, fence, work, CAS          (the work hides the drain)
 *   cached      cached copy, CAS, work          (rep movsb / memcpy)
 *
 * The CAS is on a private word: its own cost is a few ns, so what it adds
 * is the wait.  Rounds alternate the placements; CSV on stdout:
 *   round,work,placement,ns_per_block
 * and work_ns, the chain alone, as placement "work_only".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "lib/ntcopy.h"

#define BS	4096u

enum placement { ALONE, CAS_FIRST, CAS_LAST, CACHED, WORK_ONLY, NPLACE };

static const char *const names[NPLACE] = {
	"alone", "cas_first", "cas_last", "cached", "work_only",
};

static volatile uint64_t sink;

/* work steps of a dependent chain: no loads or stores but the last */
static void work(unsigned int steps)
{
	uint64_t x = sink;
	unsigned int i;

	for (i = 0; i < steps; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	sink = x;
}

static void cas(uint64_t *word)
{
	uint64_t e = __atomic_load_n(word, __ATOMIC_RELAXED);

	__atomic_compare_exchange_n(word, &e, e + 1, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
}

static double pass(uint8_t *m, size_t msize, const uint8_t *src,
		   enum placement p, unsigned int steps)
{
	static uint64_t word;
	double t0 = bench_now();
	size_t off;

	for (off = 0; off < msize; off += BS) {
		switch (p) {
		case ALONE:
		case CAS_FIRST:
		case CAS_LAST:
			daxfs_copy_nt(m + off, src, BS);
			break;
		case CACHED:
			memcpy(m + off, src, BS);
			break;
		default:
			break;
		}
		if (p == CAS_FIRST || p == CACHED)
			cas(&word);
		work(steps);
		if (p == CAS_LAST)
			cas(&word);
	}
	return (bench_now() - t0) / (double)(msize / BS) * 1e9;
}

int main(int argc, char **argv)
{
	size_t msize = 64ull << 20;
	const char *path = "/dev/shm/daxfs-bench-stream-fence";
	char wlist[256] = "0,100,200,400";
	uint8_t src[BS];
	unsigned int rounds = 5, r;
	uint8_t *m;
	int c, fd;

	while ((c = getopt(argc, argv, "m:w:r:")) != -1) {
		switch (c) {
		case 'm':
			msize = strtoull(optarg, NULL, 0) << 20;
			break;
		case 'w':
			snprintf(wlist, sizeof(wlist), "%s", optarg);
			break;
		case 'r':
			rounds = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr,
				"usage: stream_fence [-m MIB] [-w WORK,...] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (!msize || !rounds) {
		fprintf(stderr, "stream_fence: -m and -r must be positive\n");
		return 2;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)msize)) {
		perror(path);
		return 1;
	}
	m = mmap(NULL, msize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	close(fd);
	unlink(path);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(src, 0x5a, sizeof(src));
	printf("round,work,placement,ns_per_block\n");
	for (r = 0; r < rounds; r++) {
		char list[256], *save = NULL, *tok;

		snprintf(list, sizeof(list), "%s", wlist);
		for (tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			unsigned int steps = (unsigned int)strtoul(tok, NULL, 0);
			int i;

			/* each round starts at another placement */
			for (i = 0; i < NPLACE; i++) {
				enum placement p = (enum placement)((i + r) % NPLACE);

				printf("%u,%u,%s,%.1f\n", r, steps, names[p],
				       pass(m, msize, src, p, steps));
			}
		}
	}
	munmap(m, msize);
	return 0;
}
