// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * chdir into DIR, then list "." and create a file through libc calls
 * whose path walk happens inside glibc (glob, nftw, fopen's internal
 * open is interposed but these are not): they must never see or touch
 * the directory the program started in.
 *
 * Usage: pl_cwd_escape DIR   (run from a directory holding files)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int walk(const char *path, const struct stat *st __attribute__((unused)),
		int flag __attribute__((unused)),
		struct FTW *f __attribute__((unused)))
{
	printf("nftw saw: %s\n", path);
	return 0;
}

int main(int argc, char **argv)
{
	glob_t g;
	size_t i;
	int r;

	if (argc != 2 || chdir(argv[1])) {
		perror("chdir");
		return 2;
	}
	r = glob("*", 0, NULL, &g);
	printf("glob: %d\n", r);
	for (i = 0; !r && i < g.gl_pathc; i++)
		printf("glob saw: %s\n", g.gl_pathv[i]);
	r = nftw(".", walk, 4, FTW_PHYS);
	printf("nftw: %d\n", r);
	return 0;
}
