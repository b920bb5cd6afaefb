// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which copy libdaxfs' writes make (lib/copy.c): from how many bytes on a
 * write streams.  By default 4 KiB on every CPU (docs/libdaxfs.md,
 * docs/benchmarks.md "Which copy a 4 KiB write makes"); a write that does
 * not continue its open file's last one streams from DAXFS_NT_MIN on
 * (lib/copy.h).  DAXFS_INCOPY=nt streams every write, =cached none,
 * =sequential goes by length only, and DAXFS_INCOPY_MIN sets the length,
 * which the A/B runs of bench/ rely on; each of them turns pacing
 * (lib/pace.h) off, which is on otherwise.  The choice is made once per
 * process, so each case runs in a child of its own.
 */
#include <sys/stat.h>

#include "tutil.h"
#include "lib/copy.h"

/* neither a threshold nor "never" (~0): what a failed child gives */
#define CHILD_FAILED	(~0UL - 1)

enum choice { NT_MIN, JUMP_MIN, PACED, SPAN };

/* The child's lib_copy_nt_min, lib_copy_nt_jump_min or lib_copy_paced
 * after lib_copy_init with DAXFS_INCOPY set to incopy (NULL: unset), or
 * CHILD_FAILED. */
static unsigned long choice_of(const char *incopy, enum choice what)
{
	int fds[2], st;
	unsigned long v;
	pid_t pid;

	if (pipe(fds))
		return CHILD_FAILED;
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		if (incopy)
			setenv("DAXFS_INCOPY", incopy, 1);
		else
			unsetenv("DAXFS_INCOPY");
		lib_copy_init();
		v = what == SPAN ? lib_copy_cached_span :
		    what == PACED ? lib_copy_paced :
		    what == JUMP_MIN ? lib_copy_nt_jump_min : lib_copy_nt_min;
		_exit(write(fds[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &v, sizeof(v)) != sizeof(v))
		v = CHILD_FAILED;
	close(fds[0]);
	if (pid > 0 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
			WEXITSTATUS(st)))
		v = CHILD_FAILED;
	return v;
}

static unsigned long choice_in_child(const char *incopy)
{
	return choice_of(incopy, NT_MIN);
}


static void test_default(void)
{
	CHECK_EQ(choice_in_child(NULL), DAXFS_NT_WRITE_MIN);
	CHECK_EQ(choice_of(NULL, JUMP_MIN), DAXFS_NT_MIN);
	/* a value it does not know leaves the default */
	CHECK_EQ(choice_in_child("bogus"), DAXFS_NT_WRITE_MIN);
	CHECK_EQ(choice_of("bogus", JUMP_MIN), DAXFS_NT_MIN);
}

static void test_environment_fixes_it(void)
{
	CHECK_EQ(choice_in_child("nt"), 0);
	CHECK_EQ(choice_of("nt", JUMP_MIN), 0);
	CHECK_EQ(choice_in_child("cached"), ~0UL);
	CHECK_EQ(choice_of("cached", JUMP_MIN), ~0UL);
	CHECK_EQ(choice_of("sequential", JUMP_MIN), choice_in_child(NULL));
}

/* DAXFS_INCOPY_MIN sets the length from which writes stream (the
 * bench's A/B of the old AMD choice: 8 KiB, by length only). */
static unsigned long choice_with_min(const char *incopy, const char *min,
				     enum choice what)
{
	unsigned long v;

	setenv("DAXFS_INCOPY_MIN", min, 1);
	v = choice_of(incopy, what);
	unsetenv("DAXFS_INCOPY_MIN");
	return v;
}

static void test_length_from_environment(void)
{
	CHECK_EQ(choice_with_min(NULL, "8192", NT_MIN), 8192);
	CHECK_EQ(choice_with_min(NULL, "8192", JUMP_MIN), DAXFS_NT_MIN);
	CHECK_EQ(choice_with_min("sequential", "8192", JUMP_MIN), 8192);
}

/* Writes through an open file's cache are paced (lib/pace.h) unless the
 * environment fixes the choice for an A/B run. */
static void test_paced_unless_fixed(void)
{
	CHECK_EQ(choice_of(NULL, PACED), 1);
	CHECK_EQ(choice_of("paced", PACED), 1);
	CHECK_EQ(choice_of("bogus", PACED), 1);
	CHECK_EQ(choice_of("nt", PACED), 0);
	CHECK_EQ(choice_of("cached", PACED), 0);
	CHECK_EQ(choice_of("sequential", PACED), 0);
	CHECK_EQ(choice_with_min(NULL, "8192", PACED), 0);
}

/* Where a write lands decides with what length it streams: one that
 * starts where the last ended, or rewrites the range that ended there,
 * goes by lib_copy_nt_min; any other by lib_copy_nt_jump_min.  (This
 * process never ran lib_copy_init: the thresholds are set here.) */
static void test_jumps_stream_sooner(void)
{
	lib_copy_nt_min = 8192;
	lib_copy_nt_jump_min = 2048;
	/* sequential: by length */
	CHECK(!daxfs_write_streams_at(4096, 8192, 8192));
	CHECK(daxfs_write_streams_at(8192, 8192, 8192));
	/* the same 4 KiB again (a page rewritten in place) */
	CHECK(!daxfs_write_streams_at(4096, 4096, 8192));
	/* elsewhere: from 2 KiB on */
	CHECK(daxfs_write_streams_at(4096, 1 << 20, 8192));
	CHECK(daxfs_write_streams_at(2048, 0, 8192));
	CHECK(!daxfs_write_streams_at(2047, 1 << 20, 8192));
	/* the first write through a fresh cache (end 0) at 0 continues */
	CHECK(!daxfs_write_streams_at(4096, 0, 0));
	CHECK(daxfs_write_streams_at(4096, 4096 * 7, 0));
}

/* Rewrites within a range no longer than a quarter of the last-level
 * cache may make the cached copy (lib/copy.h): the span from sysconf, from
 * DAXFS_CACHED_SPAN, and none when the environment fixes the copy. */
static void test_cached_span(void)
{
	long llc = (long)lib_copy_llc_sysfs(LIB_COPY_SYS_CACHE);
	unsigned long want;

	if (llc <= 0)
		llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (llc <= 0)
		llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
	want = llc > 0 ? (unsigned long)llc / 4 : 0;
	CHECK_EQ(choice_of(NULL, SPAN), want);
	setenv("DAXFS_CACHED_SPAN", "0", 1);
	CHECK_EQ(choice_of(NULL, SPAN), 0);
	setenv("DAXFS_CACHED_SPAN", "1048576", 1);
	CHECK_EQ(choice_of(NULL, SPAN), 1048576);
	unsetenv("DAXFS_CACHED_SPAN");
	CHECK_EQ(choice_of("nt", SPAN), 0);
	CHECK_EQ(choice_of("cached", SPAN), 0);
	CHECK_EQ(choice_with_min(NULL, "8192", SPAN), 0);
}

/* Writes the file dir/indexI/name holding val (a line, as sysfs). */
static void put_cache_attr(const char *dir, int i, const char *name,
			   const char *val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/index%d", dir, i);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/index%d/%s", dir, i, name);
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fprintf(f, "%s\n", val);
		fclose(f);
	}
}

static void put_cache(const char *dir, int i, const char *level,
		      const char *type, const char *size)
{
	put_cache_attr(dir, i, "level", level);
	put_cache_attr(dir, i, "type", type);
	put_cache_attr(dir, i, "size", size);
}

/* The last-level cache as the kernel describes it (lib/copy.c): the
 * highest level's size, whatever the order of the index directories,
 * never an instruction cache; none in an empty or missing directory. */
static void test_llc_from_sysfs(void)
{
	char dir[] = "/tmp/daxfs-llc-XXXXXX", rm[64];

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ(lib_copy_llc_sysfs(dir), 0);
	put_cache(dir, 0, "1", "Data", "32K");
	put_cache(dir, 1, "1", "Instruction", "32K");
	CHECK_EQ(lib_copy_llc_sysfs(dir), 32 << 10);
	put_cache(dir, 3, "3", "Unified", "32768K");
	put_cache(dir, 2, "2", "Unified", "1024K");
	CHECK_EQ(lib_copy_llc_sysfs(dir), 32ul << 20);
	/* an instruction cache at a higher level does not count */
	put_cache(dir, 4, "4", "Instruction", "65536K");
	CHECK_EQ(lib_copy_llc_sysfs(dir), 32ul << 20);
	put_cache(dir, 5, "4", "Unified", "1G");
	CHECK_EQ(lib_copy_llc_sysfs(dir), 1ul << 30);
	CHECK_EQ(lib_copy_llc_sysfs("/nonexistent/daxfs-llc"), 0);
	snprintf(rm, sizeof(rm), "rm -rf %s", dir);
	CHECK(system(rm) == 0);
}

/* Which writes count as rewrites of what the open file wrote: wholly
 * below its reach, the reach within the span, a reach's worth written
 * through the open file; no sum overflows. */
static void test_write_in_cache(void)
{
	const uint64_t w = 1 << 20;	/* bytes written through the file */

	lib_copy_cached_span = 1 << 20;
	CHECK(daxfs_write_in_cache(4096, 0, 8192, w));
	CHECK(daxfs_write_in_cache(4096, 4096, 8192, w));
	CHECK(!daxfs_write_in_cache(4096, 4097, 8192, w));	/* beyond */
	CHECK(!daxfs_write_in_cache(4096, 8192, 8192, w));	/* further */
	CHECK(!daxfs_write_in_cache(4096, 1 << 21, 1 << 20, w));
	CHECK(daxfs_write_in_cache(4096, 0, 1 << 20, w));
	CHECK(!daxfs_write_in_cache(4096, 0, (1 << 20) + 1, w)); /* too big */
	/* the open file's first pass: not yet a reach's worth written */
	CHECK(!daxfs_write_in_cache(4096, 0, 8192, 8191));
	CHECK(daxfs_write_in_cache(4096, 0, 8192, 8192));
	CHECK(!daxfs_write_in_cache(~(size_t)0, 4096, 8192, w));
	CHECK(!daxfs_write_in_cache(4096, ~(uint64_t)0, 8192, w));
	lib_copy_cached_span = 0;
	CHECK(!daxfs_write_in_cache(1, 0, 8192, w));
}

int main(void)
{
	RUN(test_default);
	RUN(test_environment_fixes_it);
	RUN(test_length_from_environment);
	RUN(test_paced_unless_fixed);
	RUN(test_jumps_stream_sooner);
	RUN(test_llc_from_sysfs);
	RUN(test_cached_span);
	RUN(test_write_in_cache);
	return t_done();
}
