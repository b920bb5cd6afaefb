// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * `daxfs mount` and `daxfs umount` (docs/fuse.md): mount runs daxfs-fuse
 * (built beside this program, tools/fuse) with the region and backing
 * files the daxfs command was given; umount detaches a FUSE mount, also
 * one whose server was killed (ENOTCONN).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "common.h"

/* daxfs-fuse beside the running program, else on PATH. */
static const char *fuse_program(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 16);
	char *slash;

	if (n <= 0)
		return "daxfs-fuse";
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return "daxfs-fuse";
	strcpy(slash + 1, "daxfs-fuse");
	return access(buf, X_OK) ? "daxfs-fuse" : buf;
}

int tool_mount(const char *region, const char *const *backing, unsigned int nr_backing,
	       int argc, char **argv)
{
	char prog[PATH_MAX];
	char **av = calloc((size_t)argc + 2 * nr_backing + 4, sizeof(*av));
	int i, n = 0;

	if (!av)
		return 1;
	av[n++] = (char *)fuse_program(prog, sizeof(prog));
	if (region) {
		av[n++] = "-r";
		av[n++] = (char *)region;
	}
	for (i = 0; i < (int)nr_backing; i++) {
		av[n++] = "-b";
		av[n++] = (char *)backing[i];
	}
	for (i = 1; i < argc; i++)
		av[n++] = argv[i];
	av[n] = NULL;
	execvp(av[0], av);
	tool_errno(errno, "cannot run %s (build it with make; it needs libfuse3-dev)", av[0]);
	free(av);
	return 1;
}

/* One mount point: umount(2) as root, fusermount3 otherwise.  -l: lazy. */
static int umount_one(const char *mp, bool lazy)
{
	char cmd[PATH_MAX + 64];

	int tries;

	/* FUSE releases files after close(2) has returned: a mount whose
	 * last file was just closed can be busy for a moment */
	for (tries = 0; tries < 100; tries++) {
		if (!umount2(mp, lazy ? MNT_DETACH : 0))
			return 0;
		if (errno != EBUSY)
			break;
		usleep(10000);
	}
	if (errno == EBUSY) {
		tool_err("%s: busy (files open there); 'daxfs umount -l' detaches it now", mp);
		return 1;
	}
	if (errno != EPERM) {
		tool_errno(errno, "%s", mp);
		return 1;
	}
	if (strchr(mp, '\'')) {
		tool_err("%s: not root, and the name has a quote: use fusermount3 -u", mp);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "fusermount3 -u %s'%s'", lazy ? "-z " : "", mp);
	return system(cmd) ? 1 : 0;
}

int tool_umount(int argc, char **argv)
{
	bool lazy = false;
	int i, ret = 0, n = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l")) {
			lazy = true;
			continue;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			puts("usage: daxfs umount [-l] MOUNTPOINT...\n"
			     "Ends FUSE mounts of DaxFS (the host leaves its slot); also\n"
			     "cleans up one whose daxfs-fuse was killed.  -l: lazy.");
			return 0;
		}
		n++;
		ret |= umount_one(argv[i], lazy);
	}
	if (!n) {
		tool_err("umount: which mount point?");
		return TOOL_EXIT_USAGE;
	}
	return ret;
}
