// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * posix_spawn with file actions on the files of directory DIR
 * (tests/test_preload.py compares the output with tmpfs): each action
 * glibc's child runs (dup2, open, close, chdir, fchdir, closefrom) with
 * region descriptors and paths, and what the spawned program sees.
 *   pl_spawn DIR
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *dir;

static char *at(const char *name)
{
	static char buf[4][4096];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void show_file(const char *label, const char *name)
{
	char buf[256];
	struct stat st;
	ssize_t n;
	int fd = open(at(name), O_RDONLY);

	if (fd < 0) {
		printf("%s: open %s: %s\n", label, name, strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	fstat(fd, &st);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	printf("%s: %s mode %o size %lld [%s]\n", label, name,
	       st.st_mode & 07777, (long long)st.st_size, buf);
}

/* Spawns argv with fa and prints its status, or posix_spawn's error. */
static void spawn_show(const char *label, posix_spawn_file_actions_t *fa,
		       char *const argv[], int search)
{
	pid_t pid;
	int st, r;

	fflush(stdout);
	r = search ? posix_spawnp(&pid, argv[0], fa, NULL, argv, environ) :
		     posix_spawn(&pid, argv[0], fa, NULL, argv, environ);
	if (r) {
		printf("%s: posix_spawn: %s\n", label, strerror(r));
		return;
	}
	waitpid(pid, &st, 0);
	printf("%s: status %d\n", label, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* The spawned shell's output, through a pipe onto its stdout. */
static void spawn_sh(const char *label, posix_spawn_file_actions_t *fa,
		     const char *script)
{
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	char buf[512];
	int p[2];
	ssize_t n;

	if (pipe(p))
		exit(1);
	posix_spawn_file_actions_adddup2(fa, p[1], 1);
	posix_spawn_file_actions_addclose(fa, p[0]);
	spawn_show(label, fa, argv, 0);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	buf[n > 0 ? n : 0] = 0;
	printf("%s: got [%s]\n", label, buf);
}

static int put(const char *name, const char *data)
{
	int fd = open(at(name), O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd < 0 || write(fd, data, strlen(data)) < 0)
		exit(1);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

int main(int argc, char **argv)
{
	char *echo[] = { "/bin/echo", "written by echo", NULL };
	char *echop[] = { "echo", "written by echo from PATH", NULL };
	posix_spawn_file_actions_t fa;
	int fd, fd2, d;

	if (argc != 2)
		return 2;
	dir = argv[1];
	if (mkdir(at("sub"), 0755))
		return 1;

	/* the child's stdout is a region file */
	fd = open(at("out"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	spawn_show("dup2 stdout", &fa, echo, 0);
	spawn_show("dup2 stdout, spawnp", &fa, echop, 1);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	show_file("dup2 stdout", "out");

	/* its stdin is one, at the description's offset */
	fd = put("in", "line one\nline two\n");
	lseek(fd, 9, SEEK_SET);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 0);
	spawn_sh("dup2 stdin", &fa, "cat");
	posix_spawn_file_actions_destroy(&fa);
	printf("offset after: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
	close(fd);

	/* a region descriptor onto another: the second names the first's file */
	fd = put("first", "first file\n");
	fd2 = put("second", "second file\n");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, fd2);
	spawn_sh("dup2 onto region", &fa, "cat <&4");
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	close(fd2);

	/* open actions: create with a mode, append, and failures */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, at("opened"),
					 O_WRONLY | O_CREAT | O_TRUNC, 0640);
	spawn_show("open create", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	show_file("open create", "opened");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, at("opened"),
					 O_WRONLY | O_APPEND, 0);
	spawn_show("open append", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	show_file("open append", "opened");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, at("missing"), O_RDONLY, 0);
	spawn_show("open missing", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, at("opened/x"), O_RDONLY, 0);
	spawn_show("open through a file", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	/* close-on-exec: made, but the image does not have it */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 5, at("cloexec"),
					 O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	spawn_sh("open cloexec", &fa, "echo x >&5 2>/dev/null; echo $?");
	posix_spawn_file_actions_destroy(&fa);
	show_file("open cloexec", "cloexec");

	/* close: the image does not have the descriptor */
	fd = put("closed", "not seen\n");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addclose(&fa, fd);
	spawn_sh("close", &fa, "cat <&3 2>/dev/null; echo $?");
	posix_spawn_file_actions_destroy(&fa);
	close(fd);

	/* chdir to a region directory, then a relative open and the
	 * image's working directory */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, at("sub"));
	posix_spawn_file_actions_addopen(&fa, 6, "rel", O_WRONLY | O_CREAT,
					 0644);
	spawn_sh("chdir", &fa, "/bin/pwd; echo made here >&6; ls");
	posix_spawn_file_actions_destroy(&fa);
	show_file("chdir", "sub/rel");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, at("out"));
	spawn_show("chdir to a file", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	/* and back out to the kernel's /: the image's cwd is the kernel's */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addchdir_np(&fa, at("sub"));
	posix_spawn_file_actions_addchdir_np(&fa, "/");
	spawn_sh("chdir and back", &fa, "/bin/pwd");
	posix_spawn_file_actions_destroy(&fa);

	/* fchdir to a region directory's descriptor */
	d = open(at("sub"), O_RDONLY | O_DIRECTORY);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addfchdir_np(&fa, d);
	spawn_sh("fchdir", &fa, "/bin/pwd; cat rel");
	posix_spawn_file_actions_destroy(&fa);
	close(d);

	/* closefrom: the region file dup'ed below it stays the image's */
	fd = open(at("kept"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
	fd2 = put("dropped", "dropped\n");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd, 1);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	spawn_show("closefrom", &fa, echo, 0);
	posix_spawn_file_actions_destroy(&fa);
	close(fd);
	close(fd2);
	show_file("closefrom", "kept");

	/* a file with no name left, closed here as soon as the spawn
	 * returns: the image still reads it */
	fd = put("unnamed", "kept without a name\n");
	unlink(at("unnamed"));
	{
		char *cat[] = { "/bin/sh", "-c", "sleep 0.2; cat", NULL };
		int p[2], st;
		char buf[64];
		ssize_t n;
		pid_t pid;

		if (pipe(p))
			return 1;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, fd, 0);
		posix_spawn_file_actions_adddup2(&fa, p[1], 1);
		posix_spawn_file_actions_addclose(&fa, p[0]);
		if (posix_spawn(&pid, cat[0], &fa, NULL, cat, environ))
			return 1;
		close(fd);
		close(p[1]);
		n = read(p[0], buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		waitpid(pid, &st, 0);
		printf("unnamed: got [%s]\n", buf);
		posix_spawn_file_actions_destroy(&fa);
	}

	/* relative to the program's own working directory */
	if (chdir(dir))
		return 1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 7, "from-cwd",
					 O_WRONLY | O_CREAT, 0644);
	posix_spawn_file_actions_addchdir_np(&fa, "sub");
	spawn_sh("relative", &fa, "/bin/pwd; echo relative >&7; cat rel");
	posix_spawn_file_actions_destroy(&fa);
	show_file("relative", "from-cwd");
	return 0;
}
