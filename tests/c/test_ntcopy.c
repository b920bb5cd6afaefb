// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs_copy_nt (lib/ntcopy.h), the copy of libdaxfs' writes of 8 KiB or
 * more (4 KiB on Intel) into the region, daxfs_copy_cached (lib/copy.h: `rep movsb` from
 * 1 KiB on x86-64), the copy of its reads and shorter writes, and
 * daxfs_zero_stream (core/compat.h), the zeros of a fresh
 * page: for every destination alignment within a line, several source
 * alignments and lengths around the streaming threshold and the line
 * size, the destination holds exactly the source's bytes (or zeros) and
 * nothing around it changed (the cached head and tail and the streamed
 * body meet without a gap or an overlap).
 */
#include "tutil.h"
#include "lib/ntcopy.h"
#include "lib/copy.h"

#define SLACK	128
#define MAXLEN	(64 * 1024 + 200)

static uint8_t src_buf[MAXLEN + 64];
static uint8_t dst_buf[MAXLEN + 2 * SLACK + 64];

static const uint8_t zeros[MAXLEN];

/* salign ~0: daxfs_zero_stream instead of a copy; cached: the copy is
 * daxfs_copy_cached, not daxfs_copy_nt */
static int one(size_t dalign, size_t salign, size_t len, bool cached)
{
	uint8_t *d = dst_buf + SLACK + dalign;
	const uint8_t *s = salign == (size_t)~0 ? zeros : src_buf + salign;
	size_t i;

	memset(dst_buf, 0xee, sizeof(dst_buf));
	if (s == zeros)
		daxfs_zero_stream(d, len);
	else if (cached)
		daxfs_copy_cached(d, s, len);
	else
		daxfs_copy_nt(d, s, len);
	if (memcmp(d, s, len))
		return 0;
	for (i = 0; i < (size_t)(d - dst_buf); i++)
		if (dst_buf[i] != 0xee)
			return 0;
	for (i = (size_t)(d - dst_buf) + len; i < sizeof(dst_buf); i++)
		if (dst_buf[i] != 0xee)
			return 0;
	return 1;
}

static void alignments(bool cached)
{
	static const size_t lens[] = {
		0, 1, 63, 64, 65, 511, DAXFS_MOVSB_MIN - 1, DAXFS_MOVSB_MIN,
		DAXFS_MOVSB_MIN + 1, DAXFS_NT_MIN - 1, DAXFS_NT_MIN,
		2047, 2048, 2049, 2111, 2112, 4095, 4096, 4097, 4096 + 63,
		8192, 65536, 65536 + 13, MAXLEN,
	};
	static const size_t saligns[] = { 0, 1, 8, 15, 16, 33, ~(size_t)0 };
	const size_t nsa = sizeof(saligns) / sizeof(saligns[0]);
	size_t l, sa, da, bad = 0, ran = 0;

	for (l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (sa = 0; sa < nsa; sa++)
			for (da = 0; da < 64; da++) {
				ran++;
				if (!one(da, saligns[sa], lens[l], cached)) {
					if (!bad)
						fprintf(stderr, "first bad: len %zu src +%zd "
							"dst +%zu\n", lens[l],
							(ssize_t)saligns[sa], da);
					bad++;
				}
			}
	CHECK_EQ(bad, 0);
	CHECK_EQ(ran, sizeof(lens) / sizeof(lens[0]) * nsa * 64);
}

static void test_alignments(void)
{
	alignments(false);
}

/* the string move itself, on every x86-64 (ERMS or not: it only makes
 * it fast) */
static void test_alignments_cached(void)
{
	lib_copy_init();
	lib_copy_movsb = true;
	alignments(true);
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(src_buf); i++)
		src_buf[i] = (uint8_t)(i * 131 + (i >> 8) * 7 + 1);
	RUN(test_alignments);
	RUN(test_alignments_cached);
	return t_done();
}
