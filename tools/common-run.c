// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * `daxfs run [-r REGION] [--at DIR] [--mode posix|sync|strict] -- COMMAND
 * [ARGS...]`:
 * runs COMMAND with libdaxfs-preload.so, so that its paths under DIR are
 * served from the region by loads and stores (docs/preload.md).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daxfs/libdaxfs.h"
#include "common.h"

/* $DAXFS_PRELOAD_LIB, else libdaxfs-preload.so beside the build's bin/
 * (build/bin/daxfs -> build/libdaxfs-preload.so), in ../lib, or where
 * the Debian package puts it (/usr/bin/daxfs -> /usr/lib/daxfs/). */
static int find_preload(char *out, size_t size)
{
	static const char *const rel[] = { "../libdaxfs-preload.so",
		"../lib/libdaxfs-preload.so", "../lib/daxfs/libdaxfs-preload.so",
		"libdaxfs-preload.so" };
	char exe[PATH_MAX];
	const char *env = getenv("DAXFS_PRELOAD_LIB");
	const char *dir;
	ssize_t n;
	size_t i;

	if (env && *env) {
		snprintf(out, size, "%s", env);
		return access(out, R_OK) ? -errno : 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	/* once: dirname() cuts exe in place, so a second call would go up
	 * one more level (only the first candidate used to be right) */
	dir = dirname(exe);
	for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(out, size, "%s/%s", dir, rel[i]);
		if (!access(out, R_OK))
			return 0;
	}
	return -ENOENT;
}

/* Whether path (len bytes) is DIR or below it. */
static int under_at(const char *path, size_t len, const char *at)
{
	size_t n = strlen(at);

	while (n > 1 && at[n - 1] == '/')
		n--;
	return len >= n && !strncmp(path, at, n) &&
	       (len == n || path[n] == '/' || n == 1);
}

/*
 * The program is a region file, or PATH has a region directory: only the
 * preload can start it (docs/preload.md "Running region files"), and
 * this launcher runs without it.  A shell started with the preload execs
 * it.
 */
static int runs_from_region(const char *cmd, const char *at)
{
	const char *p = getenv("PATH"), *end;

	if (strchr(cmd, '/'))
		return cmd[0] == '/' && under_at(cmd, strlen(cmd), at);
	for (; p; p = end ? end + 1 : NULL) {
		end = strchr(p, ':');
		if (p[0] == '/' && under_at(p, end ? (size_t)(end - p) :
					    strlen(p), at))
			return 1;
	}
	return 0;
}

static void run_usage(FILE *f)
{
	fprintf(f,
"Usage: daxfs run [-r REGION] [--at DIR] [--mode posix|sync|strict] [--prefault]\n"
"                 -- COMMAND [ARGS...]\n"
"Run an unmodified program with its paths under DIR (default /daxfs) served\n"
"from the region (LD_PRELOAD).  Other paths go to the kernel untouched.\n"
"  -r, --region REGION  the region (default: $DAXFS_REGION)\n"
"      --at DIR         where the region appears (an absolute path)\n"
"      --mode MODE      consistency mode (docs/modes.md): posix (default),\n"
"                       sync (each call durable on return), strict (sync,\n"
"                       and each write atomic for strict readers)\n"
"      --prefault       map the whole region at the program's first region\n"
"                       call: no page fault on it later (a fork's child\n"
"                       maps pages as it uses them; docs/preload.md)\n"
"DAXFS_DEBUG=1 prints one line for each call the preload cannot serve.\n");
}

int daxfs_run_main(const char *region, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "region", required_argument, NULL, 'r' },
		{ "at", required_argument, NULL, 'a' },
		{ "mode", required_argument, NULL, 'm' },
		{ "prefault", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char lib[PATH_MAX], abs[PATH_MAX], real_at[PATH_MAX], pre[2 * PATH_MAX];
	const char *at = "/daxfs", *mode = "posix", *old;
	struct daxfs_handle *h;
	int ch, err, prefault = 0;
	char **cmd;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+r:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'r':
			region = optarg;
			break;
		case 'a':
			at = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'p':
			prefault = 1;
			break;
		case 'h':
			run_usage(stdout);
			return 0;
		default:
			run_usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		run_usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	if (!region || !*region) {
		fprintf(stderr, "daxfs: run: no region given: use -r REGION or "
			"set DAXFS_REGION\n");
		return TOOL_EXIT_USAGE;
	}
	if (strcmp(mode, "posix") && strcmp(mode, "sync") &&
	    strcmp(mode, "strict")) {
		fprintf(stderr, "daxfs: run: unknown mode '%s' (posix, sync or "
			"strict)\n", mode);
		return TOOL_EXIT_USAGE;
	}
	if (at[0] != '/') {
		fprintf(stderr, "daxfs: run: --at needs an absolute path\n");
		return TOOL_EXIT_USAGE;
	}
	if (under_at("/", 1, at)) {
		fprintf(stderr, "daxfs: run: --at %s would lay the region over "
			"the whole filesystem (/proc, /dev, the programs' "
			"libraries): choose a directory, e.g. /daxfs\n", at);
		return TOOL_EXIT_USAGE;
	}
	/* Fail here, with the library's words, rather than in the program. */
	err = daxfs_region_open(region, DAXFS_OPEN_RDONLY, &h);
	if (err) {
		if (err != -ENOMEM || !tool_enomem_from_limit("run", region, 0))
			fprintf(stderr, "daxfs: run: %s: %s\n", region,
				daxfs_strerror(err));
		return 1;
	}
	daxfs_region_close(h);
	if (access(region, W_OK))
		fprintf(stderr, "daxfs: run: %s: %s: programs get it read-only "
			"(changes fail with EROFS)\n", region, strerror(errno));
	if (!realpath(region, abs))
		snprintf(abs, sizeof(abs), "%s", region);
	if (under_at(abs, strlen(abs), at) || (realpath(at, real_at) &&
	    under_at(abs, strlen(abs), real_at))) {
		fprintf(stderr, "daxfs: run: the region %s lies under --at %s, "
			"where programs would see the region's files instead of "
			"it: choose another directory, e.g. /daxfs\n", abs, at);
		return TOOL_EXIT_USAGE;
	}
	err = find_preload(lib, sizeof(lib));
	if (err) {
		fprintf(stderr, "daxfs: run: libdaxfs-preload.so not found (set "
			"DAXFS_PRELOAD_LIB): %s\n", strerror(-err));
		return 1;
	}
	old = getenv("LD_PRELOAD");
	snprintf(pre, sizeof(pre), "%s%s%s", lib, old && *old ? ":" : "",
		 old && *old ? old : "");
	setenv("LD_PRELOAD", pre, 1);
	setenv("DAXFS_PRELOAD_REGION", abs, 1);
	setenv("DAXFS_PRELOAD_AT", at, 1);
	setenv("DAXFS_PRELOAD_MODE", mode, 1);
	setenv("DAXFS_PRELOAD_REGION_PREFAULT", prefault ? "1" : "0", 1);
	cmd = argv + optind;
	if (runs_from_region(cmd[0], at)) {
		cmd = calloc((size_t)(argc - optind + 4), sizeof(*cmd));
		if (!cmd) {
			fprintf(stderr, "daxfs: run: %s\n", strerror(ENOMEM));
			return 1;
		}
		cmd[0] = "/bin/sh";
		cmd[1] = "-c";
		cmd[2] = "exec \"$0\" \"$@\"";
		memcpy(cmd + 3, argv + optind, (size_t)(argc - optind) *
		       sizeof(*cmd));
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "daxfs: run: %s: %s\n", argv[optind], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}
