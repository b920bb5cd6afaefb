// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: advisory locks across hosts (docs/locks.md).  Each try is
 * one lib call; a blocked caller sleeps between tries outside any call,
 * so a rejoin never waits for a lock wait.  The sleep is a futex wait on
 * the low half of the lock bucket's change counter (a shared futex on the
 * region's mapping), bounded by the back-off: an unlocker on the same
 * machine wakes it at once, one on another machine (a VM, a kernel
 * mount) within the back-off.
 */
#include <errno.h>
#include <stdatomic.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libdaxfs-internal.h"
#include "posix-locks.h"

/* Set by the first POSIX lock request this process makes (before it
 * takes effect, so that a close after it sees the flag), and by the
 * preload after exec; cleared in a fork's child.  Process-wide, as the
 * locks are: any handle's close drops them. */
static _Atomic bool posix_locked;

bool lib_posix_locks_maybe(void)
{
	return atomic_load_explicit(&posix_locked, memory_order_relaxed);
}

void lib_posix_locks_assume(void)
{
	atomic_store(&posix_locked, true);
}

void lib_posix_locks_child_fork(void)
{
	atomic_store(&posix_locked, false);
}

static void lock_defaults(struct daxfs_handle *h, struct daxfs_lock_req *r)
{
	if (!r->owner)
		r->owner = r->kind == DAXFS_LCK_POSIX ? (u64)getpid() :
			   (u64)(uintptr_t)h;
	if (!r->pid)
		r->pid = (u32)getpid();
}

static long futex(u64 *w, int op, u32 val, const struct timespec *ts)
{
	/* the counter's low half: little-endian, the word's first 4 bytes */
	return syscall(SYS_futex, (u32 *)w, op, val, ts, NULL, 0);
}

static int do_lock(struct daxfs_handle *h, uint64_t ino,
		   struct daxfs_lock_req *r, u32 flags)
{
	int err = lib_writable(h);
	u64 *w;

	if (err)
		return err;
	err = daxfs_lock_set(&h->fs, ino, r, flags);
	/* an unlock or a downgrade may let waiters in: wake those of this
	 * machine (others look within their back-off) */
	if (!err && r->type != DAXFS_LCK_WR) {
		w = daxfs_lock_seq_word(&h->fs, ino);
		if (w)
			futex(w, FUTEX_WAKE, INT_MAX, NULL);
	}
	return err;
}

static int do_getlk(struct daxfs_handle *h, uint64_t ino,
		    struct daxfs_lock_req *r)
{
	return daxfs_lock_get(&h->fs, ino, r);
}

static int do_cancel(struct daxfs_handle *h, uint64_t ino,
		     const struct daxfs_lock_req *r)
{
	daxfs_lock_cancel(&h->fs, ino, r);
	return 0;
}

static int do_list(struct daxfs_handle *h, uint64_t ino, daxfs_lock_fn fn,
		   void *ctx)
{
	return daxfs_lock_list(&h->fs, ino, fn, ctx);
}

static int lock_try(struct daxfs_handle *h, uint64_t ino,
		    struct daxfs_lock_req *r, u32 flags)
{
	LIB_CALL(h, do_lock(h, ino, r, flags));
}

static int lock_cancel(struct daxfs_handle *h, uint64_t ino,
		       const struct daxfs_lock_req *r)
{
	LIB_CALL(h, do_cancel(h, ino, r));
}

static s64 mono_ms(void)
{
	return daxfs_mono_ns() / 1000000;
}

/* Sleeps until ino's bucket changes from seq (woken by an unlocker of
 * this machine) or the back-off of this round has passed.  A mapping
 * the futex cannot key (EFAULT, EINVAL, ENOSYS) sleeps the back-off. */
static void lock_sleep(struct daxfs_handle *h, uint64_t ino, u64 seq,
		       u32 round)
{
	struct timespec ts = {
		.tv_nsec = (long)daxfs_lock_backoff_us(round) * 1000,
	};
	u64 *w = daxfs_lock_seq_word(&h->fs, ino);

	if (w && daxfs_load(w) != seq)
		return;
	if (w && (!futex(w, FUTEX_WAIT, (u32)seq, &ts) || errno == EAGAIN ||
		  errno == ETIMEDOUT || errno == EINTR))
		return;
	nanosleep(&ts, NULL);
}

/*
 * Signals during a lock wait (docs/locks.md "Signals").  The kernel's
 * F_SETLKW and flock fail with EINTR once a handler installed without
 * SA_RESTART ran (alarm() is the way to bound such a wait), and go on
 * after one with SA_RESTART.  A handler that ran between two system calls
 * of this loop leaves no trace in either, so the wait holds the signals a
 * handler may catch (all but the synchronous ones, which a fault must
 * deliver at once) and looks between its sleeps at which are pending:
 * it lets them in there, and ends with -EINTR when one of them has a
 * handler without SA_RESTART.  Before, the wait went on whatever the
 * handler, and a program that bounded it with alarm() waited for ever
 * (tests/preload/pl_lock_signal.c).
 */
static void wait_signals(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
	sigdelset(set, SIGTRAP);
	sigdelset(set, SIGSYS);
}

/* Lets in the signals that came while the wait held them (*held: what
 * it holds, *before: the caller's mask); true when a handler of one of
 * them ends the wait (no SA_RESTART). */
static bool wait_interrupted(const sigset_t *held, const sigset_t *before)
{
	struct sigaction sa;
	bool intr = false, any = false;
	sigset_t pend;
	int sig;

	if (sigpending(&pend))
		return false;
	for (sig = 1; sig < NSIG; sig++) {
		if (sigismember(&pend, sig) != 1 || sigismember(held, sig) != 1 ||
		    sigismember(before, sig) == 1)
			continue;
		any = true;
		if (!sigaction(sig, NULL, &sa) && sa.sa_handler != SIG_DFL &&
		    sa.sa_handler != SIG_IGN && !(sa.sa_flags & SA_RESTART))
			intr = true;
	}
	if (!any)
		return false;
	/* the handlers (and default actions) run here, between two looks */
	pthread_sigmask(SIG_SETMASK, before, NULL);
	pthread_sigmask(SIG_BLOCK, held, NULL);
	return intr;
}

int daxfs_lock(struct daxfs_handle *h, uint64_t ino, struct daxfs_lock_req *r,
	       int timeout_ms)
{
	s64 deadline = timeout_ms > 0 ? mono_ms() + timeout_ms : 0;
	u32 flags = timeout_ms ? DAXFS_LOCK_WAIT : 0, round = 0;
	sigset_t held, before;
	int err;

	lock_defaults(h, r);
	if (r->kind == DAXFS_LCK_POSIX && r->type != DAXFS_LCK_UN)
		lib_posix_locks_assume();
	err = lock_try(h, ino, r, flags);
	if (err != -EAGAIN || !timeout_ms)
		return err;
	wait_signals(&held);
	pthread_sigmask(SIG_BLOCK, &held, &before);
	for (;;) {
		if (deadline && mono_ms() >= deadline) {
			err = -EAGAIN;
			break;
		}
		lock_sleep(h, ino, r->seq, round);
		if (wait_interrupted(&held, &before)) {
			err = -EINTR;
			break;
		}
		/* a change resets the back-off: the next one may be ours */
		round = daxfs_lock_changed(&h->fs, ino, r->seq) ? 0 : round + 1;
		err = lock_try(h, ino, r, flags);
		if (err != -EAGAIN)
			break;
	}
	if (err == -EAGAIN || err == -EINTR)
		lock_cancel(h, ino, r);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	return err;
}

int daxfs_unlock(struct daxfs_handle *h, uint64_t ino, uint32_t kind,
		 uint64_t owner, uint64_t start, uint64_t end)
{
	struct daxfs_lock_req r = {
		.start = start, .end = end, .owner = owner,
		.type = DAXFS_LCK_UN, .kind = kind,
	};

	lock_defaults(h, &r);
	return lock_try(h, ino, &r, 0);
}

int daxfs_getlk(struct daxfs_handle *h, uint64_t ino, struct daxfs_lock_req *r)
{
	lock_defaults(h, r);
	LIB_CALL(h, do_getlk(h, ino, r));
}

int daxfs_lock_list_all(struct daxfs_handle *h, uint64_t ino,
			daxfs_lock_fn fn, void *ctx)
{
	LIB_CALL(h, do_list(h, ino, fn, ctx));
}

int daxfs_flock_req(int op, uint64_t owner, struct daxfs_lock_req *r)
{
	memset(r, 0, sizeof(*r));
	r->owner = owner;
	r->kind = DAXFS_LCK_FLOCK;
	r->end = DAXFS_LOCK_EOF;
	switch (op & ~LOCK_NB) {
	case LOCK_SH:
		r->type = DAXFS_LCK_RD;
		return 0;
	case LOCK_EX:
		r->type = DAXFS_LCK_WR;
		return 0;
	case LOCK_UN:
		r->type = DAXFS_LCK_UN;
		return 0;
	}
	return -EINVAL;
}
