/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Exec of a region file (runfile.c). */
#ifndef DAXFS_PRELOAD_RUNFILE_H
#define DAXFS_PRELOAD_RUNFILE_H

#include "preload.h"

struct pl_run {
	char kpath[PL_PATH_MAX];	/* what the kernel execs */
	char **argv;			/* rewritten for an interpreter */
	int memfd;			/* the copy, -1 for none */
	char *lines[5];			/* interpreter lines argv points into */
	int nlines;
};

int pl_run_prepare(struct pl_run *r, const char *path, int fd,
		   char *const argv[]);
int pl_run_prepare_at(struct pl_run *r, const char *path, int fd,
		      char *const argv[], int depth);
void pl_run_end(struct pl_run *r);
int pl_run_search(const char *file, char *out, size_t size);

#endif
