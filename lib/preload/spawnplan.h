/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* posix_spawn's file actions with region files (spawn.c). */
#ifndef DAXFS_PRELOAD_SPAWNPLAN_H
#define DAXFS_PRELOAD_SPAWNPLAN_H

#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>

#include "preload.h"

enum {
	PL_SPAWN_CWD_SAME,	/* no chdir action: ours */
	PL_SPAWN_CWD_KERNEL,	/* the kernel's, as the child's actions left it */
	PL_SPAWN_CWD_REGION,	/* cwd_path */
};

struct pl_spawn_plan {
	posix_spawn_file_actions_t fa;	/* what glibc's child runs */
	bool built;			/* fa was initialized */
	bool region;			/* the actions touch a region file */
	struct pl_fd_change *chg;	/* per descriptor, what they leave */
	size_t nchg, cchg;
	int *opened;			/* region opens made for the child */
	size_t nopened;
	int cwd;
	char cwd_path[PL_PATH_MAX];	/* region path */
};

int pl_spawn_plan(const posix_spawn_file_actions_t *fa,
		  struct pl_spawn_plan *p);
const posix_spawn_file_actions_t *
pl_spawn_actions(const struct pl_spawn_plan *p,
		 const posix_spawn_file_actions_t *fa);
const struct pl_fd_change *pl_spawn_changes(const struct pl_spawn_plan *p,
					    size_t *n);
void pl_spawn_plan_end(struct pl_spawn_plan *p);

#endif
