// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A lock wait and a signal handler (docs/locks.md "Signals"), as the
 * kernel does it: F_SETLKW, F_OFD_SETLKW and flock(LOCK_EX) fail with
 * EINTR once a handler installed without SA_RESTART ran (alarm() is the
 * way to bound such a wait), and go on waiting after one with SA_RESTART.
 * The parent holds each lock; a child waits for it.  Run with DIR:
 * tests/test_preload.py compares the output on tmpfs and in the region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t fired;

static void on_alarm(int sig)
{
	(void)sig;
	fired++;
}

static void arm(int restart)
{
	struct sigaction sa;
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = restart ? SA_RESTART : 0;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static int lock_ex(int fd, int how)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (how == 2)
		return flock(fd, LOCK_EX);
	return fcntl(fd, how ? F_OFD_SETLKW : F_SETLKW, &fl);
}

/* The child's wait, answered through its exit status: 0 locked, 1 EINTR,
 * 2 another error; a wait that goes on is killed by the parent. */
static int child(const char *path, int how, int restart)
{
	int fd = open(path, O_RDWR);

	if (fd < 0)
		return 2;
	arm(restart);
	if (!lock_ex(fd, how))
		return 0;
	return errno == EINTR && fired ? 1 : 2;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "F_SETLKW", "F_OFD_SETLKW",
					     "flock" };
	char path[4096];
	int how, restart, fd, st, waited;
	pid_t pid;

	if (argc < 2)
		return 2;
	snprintf(path, sizeof(path), "%s/lk", argv[1]);
	for (how = 0; how < 3; how++) {
		for (restart = 0; restart < 2; restart++) {
			fd = open(path, O_CREAT | O_RDWR, 0644);
			if (fd < 0 || lock_ex(fd, how)) {
				perror("holder");
				return 2;
			}
			pid = fork();
			if (pid == 0)
				_exit(child(path, how, restart));
			/* a restarting wait is still waiting after 1 s */
			for (waited = 0; waited < 100; waited++) {
				if (waitpid(pid, &st, WNOHANG) == pid)
					break;
				usleep(10000);
			}
			if (waited == 100) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				printf("%s, handler %s: still waiting\n",
				       names[how], restart ? "SA_RESTART" : "plain");
			} else {
				printf("%s, handler %s: %s\n", names[how],
				       restart ? "SA_RESTART" : "plain",
				       WEXITSTATUS(st) == 1 ? "EINTR" :
				       WEXITSTATUS(st) == 0 ? "locked" : "error");
			}
			close(fd);
		}
	}
	return 0;
}
