// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: mounts a DaxFS region with FUSE, as one host of it
 * (docs/fuse.md).  `daxfs mount` runs this program.
 *
 *   daxfs-fuse [-r REGION] [-b BACKING]... [-f] [-d] [-o OPTS] MOUNTPOINT
 *
 * Run as mount.fuse.daxfs (a link in /sbin), it is mount(8)'s helper for
 * `mount -t fuse.daxfs REGION MOUNTPOINT` and fstab entries: the region
 * comes first, and mount(8)'s own flags are ignored.
 *
 * Unless -f, the mount runs in the background.  The region is opened (and
 * the host table joined) by the process that serves the mount: a fork
 * after joining would leave a host behind.  So the parent forks first and
 * waits for the child to say that it joined and mounted (or why not).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dfuse.h"

#define MAX_BACKING	16

struct cfg {
	char *region;
	const char *backing[MAX_BACKING];
	unsigned int nr_backing;
	double timeout;
	unsigned int poll_ms;
	int ro, nohost, trust_suid, trust_dev, validate;
	int foreground, debug, help;
	int helper;			/* run as mount.fuse.daxfs */
	int remount;			/* mount(8)'s -o remount */
	int atime;			/* enum dfuse_atime */
	int nodiratime;
	int noacl;
	int noxattr;
	unsigned int max_threads, idle_threads;
	int clone_fd;
	char *mountpoint;
};

enum { KEY_BACKING, KEY_RO, KEY_FG, KEY_DEBUG, KEY_HELP, KEY_REGION, KEY_DROP };

#define CFG_OPT(t, p, v) { t, offsetof(struct cfg, p), v }

static const struct fuse_opt cfg_opts[] = {
	CFG_OPT("timeout=%lf", timeout, 0),
	CFG_OPT("poll_ms=%u", poll_ms, 0),
	CFG_OPT("nohost", nohost, 1),
	CFG_OPT("trust_suid", trust_suid, 1),
	CFG_OPT("trust_dev", trust_dev, 1),
	CFG_OPT("validate", validate, 1),
	CFG_OPT("relatime", atime, DFUSE_RELATIME),
	CFG_OPT("noatime", atime, DFUSE_NOATIME),
	CFG_OPT("strictatime", atime, DFUSE_STRICTATIME),
	CFG_OPT("nodiratime", nodiratime, 1),
	CFG_OPT("remount", remount, 1),
	CFG_OPT("rw", ro, 0),
	CFG_OPT("diratime", nodiratime, 0),
	CFG_OPT("acl", noacl, 0),
	CFG_OPT("noacl", noacl, 1),
	CFG_OPT("xattr", noxattr, 0),
	CFG_OPT("noxattr", noxattr, 1),
	CFG_OPT("max_threads=%u", max_threads, 0),
	CFG_OPT("max_idle_threads=%u", idle_threads, 0),
	CFG_OPT("clone_fd", clone_fd, 1),
	CFG_OPT("noclone_fd", clone_fd, 0),
	FUSE_OPT_KEY("region=", KEY_REGION),
	FUSE_OPT_KEY("-r ", KEY_REGION),
	FUSE_OPT_KEY("backing=", KEY_BACKING),
	FUSE_OPT_KEY("-b ", KEY_BACKING),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("-f", KEY_FG),
	FUSE_OPT_KEY("-d", KEY_DEBUG),
	FUSE_OPT_KEY("debug", KEY_DEBUG),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	/* mount(8) passes these to helpers: no meaning here */
	FUSE_OPT_KEY("-n", KEY_DROP),
	FUSE_OPT_KEY("-s", KEY_DROP),
	FUSE_OPT_KEY("-v", KEY_DROP),
	FUSE_OPT_KEY("-N ", KEY_DROP),
	FUSE_OPT_KEY("-t ", KEY_DROP),
	FUSE_OPT_KEY("defaults", KEY_DROP),
	FUSE_OPT_KEY("_netdev", KEY_DROP),
	FUSE_OPT_END
};

static void usage(FILE *f)
{
	fputs("usage: daxfs mount [-r REGION] [-b BACKING]... [-f] [-d] [-o OPTIONS] "
	      "MOUNTPOINT\n"
	      "Mounts a DaxFS region with FUSE, as one host of it (docs/fuse.md).\n"
	      "REGION defaults to $DAXFS_REGION.  Options (-o, comma separated):\n"
	      "  ro                 read-only mount (still a host)\n"
	      "  nohost             with ro: map read-only and join no host table\n"
	      "  backing=FILE       a backing file of a split-mode region (repeat)\n"
	      "  trust_suid         honour set-id bits (default: nosuid)\n"
	      "  trust_dev          honour device nodes (default: nodev)\n"
	      "  validate           validate the whole base image at mount\n"
	      "  relatime (default), noatime, strictatime, nodiratime: when reads\n"
	      "                     and listings update the access time\n"
	      "  acl (default), noacl: POSIX ACLs enforced (docs/xattr.md)\n"
	      "  noxattr            no extended attributes (nor ACLs): one request\n"
	      "                     per write(2) instead of two (docs/fuse.md)\n"
	      "  timeout=SECONDS    how long the kernel may cache names and\n"
	      "                     attributes that another host changes (default 1)\n"
	      "  poll_ms=MS         check files open here for other hosts' changes\n"
	      "                     this often (default: half of timeout)\n"
	      "  allow_other        let other users in (permissions still apply)\n"
	      "  writeback_cache, [no_]splice_read/write/move: FUSE's own\n"
	      "  max_threads=N (16), max_idle_threads=N, clone_fd: the workers\n"
	      "  -f stays in the foreground, -d also prints every request.\n"
	      "Unmount with `daxfs umount MOUNTPOINT` or `fusermount3 -u MOUNTPOINT`.\n", f);
}

static int cfg_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct cfg *c = data;

	switch (key) {
	case KEY_REGION:
		free(c->region);
		c->region = strdup(arg + (arg[0] == '-' ? 2 : 7));
		return 0;
	case KEY_BACKING:
		if (c->nr_backing >= MAX_BACKING) {
			fprintf(stderr, "daxfs mount: at most %d backing files\n",
				MAX_BACKING);
			return -1;
		}
		c->backing[c->nr_backing++] = strdup(arg + (arg[0] == '-' ? 2 : 8));
		return 0;
	case KEY_RO:
		c->ro = 1;
		return 1;		/* the kernel's "ro" too */
	case KEY_FG:
		c->foreground = 1;
		return 0;
	case KEY_DEBUG:
		c->debug = c->foreground = 1;
		return 1;		/* libfuse's -d */
	case KEY_HELP:
		c->help = 1;
		return 0;
	case KEY_DROP:
		return 0;
	case FUSE_OPT_KEY_NONOPT:
		if (c->helper && !c->region) {
			c->region = strdup(arg);
			return 0;
		}
		if (c->mountpoint) {
			fprintf(stderr, "daxfs mount: one mount point only ('%s')\n", arg);
			return -1;
		}
		c->mountpoint = realpath(arg, NULL);
		if (!c->mountpoint) {
			fprintf(stderr, "daxfs mount: %s: %s\n", arg, strerror(errno));
			return -1;
		}
		return 0;
	}
	return 1;
}

/* The background parent: waits for the child's word (a message, or
 * nothing when it mounted) and exits with it. */
static int wait_child(pid_t pid, int fd)
{
	char msg[512];
	ssize_t n = read(fd, msg, sizeof(msg) - 1);
	int status;

	if (n <= 0)
		return 0;	/* it closed the pipe: mounted */
	msg[n] = 0;
	fputs(msg, stderr);
	waitpid(pid, &status, 0);
	return 1;
}

/* Reports a failure to the waiting parent (or to stderr in the
 * foreground). */
static void fail(int fd, const char *fmt, const char *a, const char *b)
{
	char msg[512];
	int n = snprintf(msg, sizeof(msg), fmt, a, b);

	if (fd < 0 || write(fd, msg, n > 0 ? (size_t)n : 0) < 0)
		fputs(msg, stderr);
}

static void detach(int fd)
{
	int null = open("/dev/null", O_RDWR);

	setsid();
	if (chdir("/") < 0)
		return;
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	close(fd);	/* the parent's read returns 0: mounted */
}

/*
 * mount -o remount,ro (or rw) of a running mount: the kernel changes the
 * read-only flag; the server goes on as it is (it refuses nothing the
 * kernel lets through, and a read-only kernel mount sends no change).
 */
static int remount(struct cfg *c)
{
	unsigned long flags = MS_REMOUNT | MS_NOSUID | MS_NODEV;

	if (c->trust_suid)
		flags &= ~MS_NOSUID;
	if (c->trust_dev)
		flags &= ~MS_NODEV;
	if (c->ro)
		flags |= MS_RDONLY;
	if (mount(NULL, c->mountpoint, NULL, flags, NULL)) {
		fprintf(stderr, "daxfs mount: remount %s: %s\n", c->mountpoint,
			strerror(errno));
		return 1;
	}
	return 0;
}

static int open_region(struct cfg *c, struct daxfs_handle **h)
{
	/* readers through the mount never see part of a strict write made
	 * on any host (docs/modes.md "Who is covered") */
	struct daxfs_open_opts o = { .flags = DAXFS_OPEN_ATOMIC_READ };

	if (c->nohost)
		o.flags |= DAXFS_OPEN_RDONLY;
	if (c->validate)
		o.flags |= DAXFS_OPEN_VALIDATE;
	o.backing = c->backing;
	o.nr_backing = c->nr_backing;
	return daxfs_region_open_opts(c->region, &o, h);
}

/* The mount options every daxfs mount has. */
static int add_mount_opts(struct fuse_args *args, struct cfg *c)
{
	char opts[PATH_MAX + 128];

	if (strchr(c->region, ','))
		snprintf(opts, sizeof(opts), "-osubtype=daxfs,fsname=daxfs");
	else
		snprintf(opts, sizeof(opts), "-osubtype=daxfs,fsname=%s", c->region);
	if (fuse_opt_add_arg(args, opts) ||
	    fuse_opt_add_arg(args, "-odefault_permissions"))
		return -1;
	if (c->nohost && !c->ro && fuse_opt_add_arg(args, "-oro"))
		return -1;
	/* libfuse mounts nosuid,nodev unless told "suid", "dev" */
	if (fuse_opt_add_arg(args, c->trust_suid ? "-osuid" : "-onosuid"))
		return -1;
	if (fuse_opt_add_arg(args, c->trust_dev ? "-odev" : "-onodev"))
		return -1;
	return 0;
}

/* Whether the region file is the mount point or below it (both real
 * paths; a region that does not resolve is left to the open's error). */
static bool region_under(const char *region, const char *mnt)
{
	char *real = realpath(region, NULL);
	size_t n = strlen(mnt);
	bool under;

	if (!real)
		return false;
	under = !strncmp(real, mnt, n) &&
		(real[n] == '/' || !real[n] || n == 1);
	free(real);
	return under;
}

static int serve(struct cfg *c, struct fuse_args *args, int fd)
{
	struct dfuse d = { 0 };
	struct fuse_lowlevel_ops ops = dfuse_ops;
	struct fuse_loop_config *lc;
	int err, ret = 1;

	d.timeout = c->timeout;
	d.poll_ms = c->poll_ms ? c->poll_ms : (unsigned int)(c->timeout * 500);
	if (!d.poll_ms)
		d.poll_ms = 1;
	d.ro = c->ro || c->nohost;
	d.atime = (enum dfuse_atime)c->atime;
	d.nodiratime = c->nodiratime;
	d.acl = !c->noacl && !c->noxattr;
	if (c->noxattr) {
		/* ENOSYS once: the kernel stops asking, also the
		 * security.capability look-up it makes before every write */
		ops.setxattr = NULL;
		ops.getxattr = NULL;
		ops.listxattr = NULL;
		ops.removexattr = NULL;
	}
	d.conn_opts = fuse_parse_conn_info_opts(args);
	if (!d.conn_opts) {
		fail(fd, "daxfs mount: bad options\n", "", "");
		return 1;
	}
	err = open_region(c, &d.h);
	if (err) {
		fail(fd, "daxfs mount: %s: %s\n", c->region, daxfs_strerror(err));
		goto out_opts;
	}
	d.root = daxfs_handle_fs(d.h)->sb.root_ino;
	if (dfuse_opens_init(&d)) {
		fail(fd, "daxfs mount: %s\n", strerror(ENOMEM), "");
		goto out_region;
	}
	d.se = fuse_session_new(args, &ops, sizeof(ops), &d);
	if (!d.se) {
		fail(fd, "daxfs mount: cannot start a FUSE session (bad options?)\n",
		     "", "");
		goto out_opens;
	}
	if (fuse_set_signal_handlers(d.se)) {
		fail(fd, "daxfs mount: cannot set signal handlers\n", "", "");
		goto out_session;
	}
	if (fuse_session_mount(d.se, c->mountpoint)) {
		fail(fd, "daxfs mount: cannot mount on %s (is /dev/fuse there, "
		     "and fuse3 installed?)\n", c->mountpoint, "");
		goto out_signals;
	}
	if (dfuse_poller_start(&d)) {
		fail(fd, "daxfs mount: cannot start the change poller\n", "", "");
		goto out_unmount;
	}
	if (fd >= 0)
		detach(fd);
	lc = fuse_loop_cfg_create();
	if (lc) {
		fuse_loop_cfg_set_max_threads(lc, c->max_threads);
		if (c->idle_threads)	/* else libfuse's: keep them all */
			fuse_loop_cfg_set_idle_threads(lc, c->idle_threads);
		fuse_loop_cfg_set_clone_fd(lc, (unsigned int)c->clone_fd);
		ret = fuse_session_loop_mt(d.se, lc) ? 1 : 0;
		fuse_loop_cfg_destroy(lc);
	}
	dfuse_poller_stop(&d);
out_unmount:
	fuse_session_unmount(d.se);
out_signals:
	fuse_remove_signal_handlers(d.se);
out_session:
	fuse_session_destroy(d.se);
out_opens:
	dfuse_opens_destroy(&d);
out_region:
	daxfs_region_close(d.h);	/* leaves the host table */
out_opts:
	free(d.conn_opts);
	return ret;
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct cfg c = { .timeout = 1.0, .max_threads = 16 };
	const char *base = strrchr(argv[0], '/');
	int pipefd[2] = { -1, -1 };
	pid_t pid;
	int ret;

	c.helper = !strncmp(base ? base + 1 : argv[0], "mount.", 6);

	if (fuse_opt_parse(&args, &c, cfg_opts, cfg_proc))
		return 2;
	if (c.help) {
		usage(stdout);
		return 0;
	}
	if (!c.region && getenv("DAXFS_REGION"))
		c.region = strdup(getenv("DAXFS_REGION"));
	if (c.remount && c.mountpoint)
		return remount(&c);
	if (!c.region || !c.mountpoint) {
		usage(stderr);
		return 2;
	}
	if (c.nohost && !c.ro) {
		fprintf(stderr, "daxfs mount: nohost needs ro\n");
		return 2;
	}
	/* as mount(8) for a write-protected device: a region this user may
	 * only read is mounted ro,nohost (a host writes its slot), not
	 * refused with EACCES or EPERM */
	if (!c.ro && c.region && access(c.region, W_OK) &&
	    !access(c.region, R_OK)) {
		fprintf(stderr, "daxfs mount: %s is read-only for you: mounting "
			"ro,nohost\n", c.region);
		c.ro = 1;
		c.nohost = 1;
		if (fuse_opt_add_arg(&args, "-oro"))
			return 1;
	}
	if (region_under(c.region, c.mountpoint)) {
		fprintf(stderr, "daxfs mount: the region %s lies under %s: the "
			"mount would hide it from every program, this host's "
			"next mount included; choose another mount point\n",
			c.region, c.mountpoint);
		return 2;
	}
	if (c.timeout < 0 || c.timeout > 3600) {
		fprintf(stderr, "daxfs mount: timeout must be 0 to 3600 seconds\n");
		return 2;
	}
	if (add_mount_opts(&args, &c))
		return 1;
	if (!c.foreground) {
		if (pipe2(pipefd, O_CLOEXEC) < 0) {
			perror("daxfs mount: pipe");
			return 1;
		}
		pid = fork();
		if (pid < 0) {
			perror("daxfs mount: fork");
			return 1;
		}
		if (pid > 0) {
			close(pipefd[1]);
			return wait_child(pid, pipefd[0]);
		}
		close(pipefd[0]);
	}
	ret = serve(&c, &args, pipefd[1]);
	fuse_opt_free_args(&args);
	return ret;
}
