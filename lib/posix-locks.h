/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Whether this process may hold POSIX locks (owner: its pid), which
 * daxfs_file_close drops as close(2) does (lib/locks.c).  Without any, a
 * close skips the unlock: its getpid() system call (about 250 ns here)
 * and its core operation.
 */
#ifndef DAXFS_LIB_POSIX_LOCKS_H
#define DAXFS_LIB_POSIX_LOCKS_H

#include <stdbool.h>

bool lib_posix_locks_maybe(void);
/* The process may hold some it cannot know of: the preload after an
 * exec, which keeps the process's locks and its region descriptors. */
void lib_posix_locks_assume(void);
/* A fork's child holds none (POSIX locks are not inherited). */
void lib_posix_locks_child_fork(void);

#endif
