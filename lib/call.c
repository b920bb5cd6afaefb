// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: the guard around every public call (LIB_CALL), the call gate
 * a rejoin closes to wait for the calls running on the old host slot.
 * docs/libdaxfs.md "Declared dead while busy" has the protocol.
 *
 * Each handle has LIB_CALL_SLOTS in-flight counters, one cache line each,
 * plus one shared by the threads that found no slot free.  A thread takes
 * a slot index once (process-wide, kept in a thread-local) and gives it
 * back when it exits.  A call:
 *
 *   enter: n[slot] += 1 (seq_cst RMW); if gate_closed (seq_cst load):
 *          n[slot] -= 1, wait for the gate to open, start again
 *   leave: n[slot] -= 1 (seq_cst RMW); if gate_closed: wake the rejoin
 *
 * A rejoin sets gate_closed (seq_cst store), then waits until every
 * counter reads 0 (seq_cst loads).  All of these are in the single total
 * order of seq_cst operations (Dekker): if the caller's flag load comes
 * before the store, its increment comes before the rejoin's counter loads
 * and the rejoin waits for the call; otherwise the caller sees the flag
 * and backs off.  A caller that reads the flag 0 stored when the gate
 * opened again synchronizes with that store and sees the new fs.host.
 * Sharing a counter (the overflow one, or a slot reused after its thread
 * exited) is correct too: they change only by atomic RMW, a slot only
 * saves the cache-line traffic of one shared counter.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "libdaxfs-internal.h"

__thread struct lib_thread lib_self
	__attribute__((tls_model("initial-exec")));

static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static bool slot_used[LIB_CALL_SLOTS];
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;

/* Thread exit: free the slot.  A libdaxfs call from a later destructor of
 * this thread uses the shared counter. */
static void slot_release(void *v)
{
	unsigned int i = (unsigned int)(uintptr_t)v - 1;

	pthread_mutex_lock(&slot_lock);
	slot_used[i] = false;
	pthread_mutex_unlock(&slot_lock);
	lib_self.slot = LIB_CALL_SLOTS + 1;
}

static void slot_key_init(void)
{
	pthread_key_create(&slot_key, slot_release);
}

static __attribute__((noinline, cold)) unsigned int slot_take(void)
{
	unsigned int i;

	pthread_once(&slot_once, slot_key_init);
	pthread_mutex_lock(&slot_lock);
	for (i = 0; i < LIB_CALL_SLOTS && slot_used[i]; i++)
		;
	if (i < LIB_CALL_SLOTS)
		slot_used[i] = true;
	pthread_mutex_unlock(&slot_lock);
	if (i < LIB_CALL_SLOTS &&
	    pthread_setspecific(slot_key, (void *)(uintptr_t)(i + 1))) {
		pthread_mutex_lock(&slot_lock);
		slot_used[i] = false;
		pthread_mutex_unlock(&slot_lock);
		i = LIB_CALL_SLOTS;
	}
	lib_self.slot = i + 1;
	return i;
}

bool lib_call_inside(struct daxfs_handle *h)
{
	struct lib_call *c;

	for (c = lib_self.call; c; c = c->up)
		if (c->h == h)
			return true;
	return false;
}

void lib_gate_wake(struct daxfs_handle *h)
{
	pthread_mutex_lock(&h->gate_lock);
	pthread_cond_broadcast(&h->gate_cond);
	pthread_mutex_unlock(&h->gate_lock);
}

/* A rejoin closed the gate under the call just counted in: uncount it
 * (as lib_call_end() does), wait for the gate to open again. */
void lib_gate_wait(struct daxfs_handle *h, unsigned int slot)
{
	__atomic_fetch_sub(&h->inflight[slot].n, 1, __ATOMIC_SEQ_CST);
	lib_gate_wake(h);
	pthread_mutex_lock(&h->gate_lock);
	while (__atomic_load_n(&h->gate_closed, __ATOMIC_SEQ_CST))
		pthread_cond_wait(&h->gate_cond, &h->gate_lock);
	pthread_mutex_unlock(&h->gate_lock);
}

/* Counts the call in; false (and not counted) when a rejoin closed the
 * gate: it waited for the gate to open again, start over. */
static inline bool gate_enter(struct daxfs_handle *h, unsigned int slot)
{
	__atomic_fetch_add(&h->inflight[slot].n, 1, __ATOMIC_SEQ_CST);
	if (daxfs_likely(!__atomic_load_n(&h->gate_closed, __ATOMIC_SEQ_CST)))
		return true;
	lib_gate_wait(h, slot);
	return false;
}

static bool gate_busy(struct daxfs_handle *h)
{
	unsigned int i;

	for (i = 0; i <= LIB_CALL_SLOTS; i++)
		if (__atomic_load_n(&h->inflight[i].n, __ATOMIC_SEQ_CST))
			return true;
	return false;
}

void lib_gate_close(struct daxfs_handle *h)
{
	pthread_mutex_lock(&h->rejoin_lock);
	__atomic_store_n(&h->gate_closed, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&h->gate_lock);
	while (gate_busy(h))
		pthread_cond_wait(&h->gate_cond, &h->gate_lock);
	pthread_mutex_unlock(&h->gate_lock);
}

void lib_gate_open(struct daxfs_handle *h)
{
	pthread_mutex_lock(&h->gate_lock);
	__atomic_store_n(&h->gate_closed, 0, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&h->gate_cond);
	pthread_mutex_unlock(&h->gate_lock);
	pthread_mutex_unlock(&h->rejoin_lock);
}

void lib_gate_init(struct daxfs_handle *h)
{
	pthread_mutex_init(&h->rejoin_lock, NULL);
	pthread_mutex_init(&h->gate_lock, NULL);
	pthread_cond_init(&h->gate_cond, NULL);
	h->gate_closed = 0;
	memset(h->inflight, 0, sizeof(h->inflight));
}

void lib_gate_destroy(struct daxfs_handle *h)
{
	pthread_mutex_destroy(&h->rejoin_lock);
	pthread_mutex_destroy(&h->gate_lock);
	pthread_cond_destroy(&h->gate_cond);
}

void lib_call_prepare_fork(void)
{
	pthread_mutex_lock(&slot_lock);
}

void lib_call_parent_fork(void)
{
	pthread_mutex_unlock(&slot_lock);
}

/* Fork child, this thread alone: only its own slot stays taken. */
void lib_call_child_fork(void)
{
	memset(slot_used, 0, sizeof(slot_used));
	if (lib_self.slot && lib_self.slot <= LIB_CALL_SLOTS)
		slot_used[lib_self.slot - 1] = true;
	pthread_mutex_init(&slot_lock, NULL);
}

/* Fork child: the calls of the threads left behind never end here, and a
 * rejoin of the parent may have held the gate.  Count only this thread's
 * own calls on h. */
void lib_gate_child_fork(struct daxfs_handle *h)
{
	struct lib_call *c;

	lib_gate_init(h);
	for (c = lib_self.call; c; c = c->up)
		if (!c->nested && c->h == h)
			h->inflight[c->slot].n++;
}

/* lib_call_begin() when the inline fast path does not apply. */
int lib_call_begin_slow(struct daxfs_handle *h, struct lib_call *c)
{
	struct lib_thread *t = &lib_self;
	int err;

	c->nested = c->up && lib_call_inside(h);
	if (c->nested)
		return 0;
	c->slot = daxfs_likely(t->slot) ? t->slot - 1 : slot_take();
	do {
		err = lib_rejoin(h);
	} while (!gate_enter(h, c->slot));
	t->call = c;
	return err;
}

int lib_call_lost(struct daxfs_handle *h)
{
	__atomic_store_n(&h->need_rejoin, true, __ATOMIC_RELEASE);
	return -ESTALE;
}
