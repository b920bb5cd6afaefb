// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Double fetch of a base file's extent (issue "Trust under concurrency",
 * defect 5).  The base image lies in the region like everything else, so
 * a stray store can change a base inode's size after the mount validated
 * it.  file_view() read the size for the file's size and read limit, and
 * read it again to check the extent against the base area: a size that a
 * peer changed from huge back to valid in between passed the check, and
 * the read limit stayed huge, so a read far past the file copied from far
 * past the base area (past the region: SIGSEGV).  Built by `make race`:
 * the hook below restores the valid size right after file_view loaded it.
 * The read must fail (-EUCLEAN) or return only the file's bytes.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "../c/tfile.h"
#include "../c/tbase.h"

#define REGION		(16 * MiB)
#define BSIZE		(64 * 1024)
#define FSIZE		10000ULL
#define DATA_OFF	12288ULL
#define HUGE_SIZE	(1ULL << 40)	/* what the stray store wrote */

static struct daxfs_base_inode *victim;

void daxfs_race_point(const char *name, const void *p)
{
	if (victim && p == victim && !strcmp(name, "file.base"))
		victim->size = FSIZE;	/* passes the extent check */
}

static void fill_b(u8 *data, u64 n)
{
	memset(data, 'b', n);
}

static void setup(struct daxfs_fs *fs)
{
	void *r = t_region(REGION);
	u8 *b = t_base_one_file(r, REGION, BSIZE, FSIZE, DATA_OFF, fill_b);

	if (t_join(fs, r, REGION)) {
		fprintf(stderr, "base open failed\n");
		exit(2);
	}
	victim = (struct daxfs_base_inode *)(b + 4096) + 1;
}

/* In a child: a stray store makes the size huge after the mount; the
 * hook makes it valid again between file_view's load and its check. */
static void child(u64 off)
{
	struct daxfs_fs fs;
	u8 buf[4096];
	s64 n;

	setup(&fs);
	victim->size = HUGE_SIZE;
	n = t_pread(&fs, 2, buf, sizeof(buf), off);
	if (n > 0 && off + (u64)n > FSIZE) {
		fprintf(stderr, "read %lld bytes at %llu past a %llu-byte file\n",
			(long long)n, (unsigned long long)off,
			(unsigned long long)FSIZE);
		exit(3);
	}
	if (n < 0 && n != -EUCLEAN) {
		fprintf(stderr, "read failed with %lld\n", (long long)n);
		exit(4);
	}
	exit(0);
}

static void test_base_size_refetch(void)
{
	static const u64 offs[] = { 0, FSIZE, REGION, 1ULL << 32 };
	unsigned int i;

	for (i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0)
			child(offs[i]);
		CHECK(pid > 0);
		CHECK(waitpid(pid, &st, 0) == pid);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			fprintf(stderr, "read at %llu: %s %d\n",
				(unsigned long long)offs[i],
				WIFSIGNALED(st) ? "signal" : "exit",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
}

int main(void)
{
	test_base_size_refetch();
	return t_done();
}
