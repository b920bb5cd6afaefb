// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Messages, sizes and progress lines for the DaxFS tools.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common.h"

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

const char *tool_name = "daxfs";

void tool_vmsg(const char *sub, const char *fmt, va_list ap)
{
	/* what went to stdout so far comes before the message */
	fflush(stdout);
	if (sub)
		fprintf(stderr, "%s: %s: ", tool_name, sub);
	else
		fprintf(stderr, "%s: ", tool_name);
	vfprintf(stderr, fmt, ap);
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(NULL, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_errno(int errnum, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tool_vmsg(NULL, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", tool_strerror(errnum));
}

const char *tool_strerror(int errnum)
{
	if (errnum < 0)
		errnum = -errnum;
	if (errnum == EUCLEAN)
		return "Structure needs cleaning (filesystem corrupt: run fsck.daxfs)";
	return strerror(errnum);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t *out, const char **why)
{
	const char *p = s;
	uint64_t whole = 0, mult = 1;
	double frac = 0, scale = 0.1;
	bool digits = false, has_frac = false;
	int shift = 0;

	*why = "expected a number with an optional K, M, G or T suffix (e.g. 64M)";
	if (!s || !*s)
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		digits = true;
		if (whole > (UINT64_MAX - 9) / 10) {
			*why = "value too large";
			return -ERANGE;
		}
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		has_frac = true;
		for (p++; isdigit((unsigned char)*p); p++) {
			digits = true;
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (!digits)
		return -EINVAL;
	switch (toupper((unsigned char)*p)) {
	case 'K':
		shift = 10;
		break;
	case 'M':
		shift = 20;
		break;
	case 'G':
		shift = 30;
		break;
	case 'T':
		shift = 40;
		break;
	case 'P':
		shift = 50;
		break;
	case 'E':
		shift = 60;
		break;
	case '\0':
	case 'B':
		break;
	default:
		*why = "unknown size suffix (use K, M, G or T, powers of 1024)";
		return -EINVAL;
	}
	if (shift) {
		p++;
		if (toupper((unsigned char)*p) == 'I')
			p++;
	}
	if (toupper((unsigned char)*p) == 'B')
		p++;
	if (*p) {
		*why = "unknown size suffix (use K, M, G or T, powers of 1024)";
		return -EINVAL;
	}
	mult = 1ULL << shift;
	if (has_frac && !shift && frac != 0) {
		*why = "a fractional size needs a unit suffix (e.g. 1.5G)";
		return -EINVAL;
	}
	if (whole > UINT64_MAX >> shift) {
		*why = "value too large";
		return -ERANGE;
	}
	*out = whole * mult + (uint64_t)(frac * (double)mult);
	return 0;
}

/* ceil() without libm (the tools link only libdaxfs and pthread) */
static double ceil_pos(double v)
{
	double i = (double)(uint64_t)v;

	return i < v ? i + 1 : i;
}

/*
 * Below 1024, writes bytes whole (then small_suffix) into buf and returns
 * false.  Else returns true with *v the size in the largest power of 1024
 * that keeps it >= 1 (*unit 0 is K, 5 is E).
 */
static bool scale_1024(uint64_t bytes, const char *small_suffix, char *buf, size_t len,
		       double *v, int *unit)
{
	if (bytes < 1024) {
		snprintf(buf, len, "%llu%s", (unsigned long long)bytes, small_suffix);
		return false;
	}
	*v = (double)bytes;
	*unit = -1;
	while (*v >= 1024 && *unit < 5) {
		*v /= 1024;
		(*unit)++;
	}
	return true;
}

void format_human(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGTPE";
	double v;
	int u;

	if (!scale_1024(bytes, "", buf, len, &v, &u))
		return;
	/* like coreutils: one decimal below 10, rounded up */
	if (v < 10) {
		v = ceil_pos(v * 10) / 10;
		if (v >= 10) {
			snprintf(buf, len, "%.0f%c", v, units[u]);
			return;
		}
		snprintf(buf, len, "%.1f%c", v, units[u]);
	} else {
		v = ceil_pos(v);
		if (v >= 1024 && u < 5) {
			snprintf(buf, len, "1.0%c", units[u + 1]);
			return;
		}
		snprintf(buf, len, "%.0f%c", v, units[u]);
	}
}

void format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v;
	int u;

	if (!scale_1024(bytes, " bytes", buf, len, &v, &u))
		return;
	if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.2f %s", v, units[u]);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_init(struct progress *p, bool quiet)
{
	memset(p, 0, sizeof(*p));
	p->enabled = !quiet && isatty(STDERR_FILENO);
	p->last = now_seconds();
}

void progress_update(struct progress *p, const char *what, uint64_t n, uint64_t total)
{
	double t;

	if (!p->enabled)
		return;
	t = now_seconds();
	if (t - p->last < 1.0 && n - p->last_count < 1000)
		return;
	p->last = t;
	p->last_count = n;
	if (total)
		fprintf(stderr, "\r%s: %s %llu/%llu (%u%%)\033[K", tool_name, what,
			(unsigned long long)n, (unsigned long long)total,
			(unsigned int)(n * 100 / total));
	else
		fprintf(stderr, "\r%s: %s %llu\033[K", tool_name, what,
			(unsigned long long)n);
	fflush(stderr);
	p->shown = true;
}

void progress_done(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = false;
}

uint64_t daxfs_encode_dev(dev_t dev)
{
	uint64_t ma = major(dev), mi = minor(dev);

	/* Linux new_encode_dev(): 12-bit major, 20-bit minor */
	return (mi & 0xff) | (ma << 8) | ((mi & ~0xffULL) << 12);
}

dev_t daxfs_decode_dev(uint64_t v)
{
	unsigned int ma = (unsigned int)((v & 0xfff00) >> 8);
	unsigned int mi = (unsigned int)((v & 0xff) | ((v >> 12) & 0xfff00));

	return makedev(ma, mi);
}

/* Bytes of address space this process uses now (/proc/self/statm). */
static uint64_t as_used(void)
{
	unsigned long long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

bool tool_enomem_from_limit(const char *sub, const char *target,
			    uint64_t size)
{
	struct rlimit rl;
	struct stat st;
	char lim[32], sz[32];

	if (getrlimit(RLIMIT_AS, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	if (!size && !stat(target, &st) && S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;
	/* a limit the mapping fits under (with room for its 2 MiB
	 * alignment) is not the cause: the holes are */
	if (size && as_used() + size + (4ULL << 20) <= (uint64_t)rl.rlim_cur)
		return false;
	format_bytes((uint64_t)rl.rlim_cur, lim, sizeof(lim));
	format_bytes(size, sz, sizeof(sz));
	fflush(stdout);
	fprintf(stderr, "%s: %s%s%s: out of memory mapping the region%s%s%s "
		"under an address-space limit of %s (ulimit -v): raise the "
		"limit, or use a smaller region\n", tool_name, sub ? sub : "",
		sub ? ": " : "", target, size ? " (" : "", size ? sz : "",
		size ? ")" : "", lim);
	return true;
}
