/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Data actors of the C unit tests: fill with one byte, compare with one. */
#ifndef DAXFS_TBYTES_H
#define DAXFS_TBYTES_H

#include "tutil.h"

/* A write actor filling dst with the byte ctx carries. */
static inline u64 t_fill_byte(void *ctx, void *dst, u64 len)
{
	memset(dst, (int)(uintptr_t)ctx, len);
	return len;
}

/* A read actor: bad is set when a byte (a hole reads as 0) is not c. */
struct t_cmp {
	u8 c;
	bool bad;
};

static inline u64 t_cmp_actor(void *ctx, const void *src, u64 len)
{
	struct t_cmp *cc = ctx;
	const u8 *s = src;
	u64 i;

	for (i = 0; i < len; i++)
		if ((s ? s[i] : 0) != cc->c)
			cc->bad = true;
	return len;
}

#endif /* DAXFS_TBYTES_H */
