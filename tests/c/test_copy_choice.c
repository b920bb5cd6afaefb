// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Which copy libdaxfs' writes make (lib/copy.c): from how many bytes on a
 * write streams.  By default 4 KiB on an Intel CPU and 8 KiB elsewhere
 * (docs/libdaxfs.md, docs/benchmarks.md "Streaming 4 KiB writes on
 * Intel"); a write that does not continue its open file's last one streams
 * from DAXFS_NT_MIN on (lib/copy.h).  DAXFS_INCOPY=nt streams every write,
 * =cached none, =sequential goes by length only, which the A/B runs of
 * bench/ rely on.  The choice is made once per process, so each
 * case runs in a child of its own.  The CPU's vendor is read here from
 * /proc/cpuinfo, not from CPUID as the library does, so that the test does
 * not repeat the code it checks.
 */
#include "tutil.h"
#include "lib/copy.h"

/* neither a threshold nor "never" (~0): what a failed child gives */
#define CHILD_FAILED	(~0UL - 1)

/* The child's lib_copy_nt_min (jump: lib_copy_nt_jump_min) after
 * lib_copy_init with DAXFS_INCOPY set to incopy (NULL: unset), or
 * CHILD_FAILED. */
static unsigned long choice_of(const char *incopy, bool jump)
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
		v = jump ? lib_copy_nt_jump_min : lib_copy_nt_min;
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
	return choice_of(incopy, false);
}

#if defined(__x86_64__)
static bool cpu_vendor_intel(void)
{
	char line[256];
	bool intel = false;
	FILE *f = fopen("/proc/cpuinfo", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9)) {
			intel = strstr(line, "GenuineIntel") != NULL;
			break;
		}
	}
	fclose(f);
	return intel;
}
#endif

static void test_default_follows_vendor(void)
{
	unsigned long want = DAXFS_NT_WRITE_MIN;

#if defined(__x86_64__)
	/* (elsewhere /proc/cpuinfo may be an emulator's host's) */
	if (cpu_vendor_intel())
		want = DAXFS_NT_WRITE_MIN_INTEL;
#endif
	CHECK_EQ(choice_in_child(NULL), want);
	CHECK_EQ(choice_of(NULL, true), DAXFS_NT_MIN);
	/* a value it does not know leaves the default */
	CHECK_EQ(choice_in_child("bogus"), want);
	CHECK_EQ(choice_of("bogus", true), DAXFS_NT_MIN);
}

static void test_environment_fixes_it(void)
{
	CHECK_EQ(choice_in_child("nt"), 0);
	CHECK_EQ(choice_of("nt", true), 0);
	CHECK_EQ(choice_in_child("cached"), ~0UL);
	CHECK_EQ(choice_of("cached", true), ~0UL);
	CHECK_EQ(choice_of("sequential", true), choice_in_child(NULL));
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

int main(void)
{
	RUN(test_default_follows_vendor);
	RUN(test_environment_fixes_it);
	RUN(test_jumps_stream_sooner);
	return t_done();
}
