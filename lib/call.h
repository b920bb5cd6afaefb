/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * libdaxfs: the guard around every public call (LIB_CALL) and the call
 * gate of a rejoin (call.c has the protocol and its memory ordering).
 * The fast path is inline: a thread-local load, one atomic add on the
 * thread's own counter line, a flag load; at the end a fence, one load of
 * the slot state word, one atomic subtract, a flag load.
 */
#ifndef DAXFS_LIB_CALL_H
#define DAXFS_LIB_CALL_H

/*
 * One public call on a handle.  lib_call_begin() joins again first when
 * needed (after a fork(), or after this host was declared dead), then
 * counts the call in h->inflight until lib_call_end(), so a rejoin (which
 * closes the gate and waits for those counters) never runs under a call.
 * lib_call_end() turns the call's result into -ESTALE when the slot the
 * call started on is no longer ours: recovery may have rolled the call
 * back, its outcome is unknown.  A call made by a thread already inside a
 * call on the same handle (nesting) just runs.
 */
struct lib_call {
	struct daxfs_handle *h;
	struct lib_call *up;		/* the call this one runs inside */
	unsigned int slot;		/* h->inflight index counting it */
	bool nested;
};

/* The calls this thread is inside (innermost first) and its counter slot
 * (index + 1; 0 = none taken yet).  initial-exec: one %fs-relative
 * access, no __tls_get_addr call in libdaxfs.so (16 bytes of the static
 * TLS surplus when it is dlopen()ed). */
struct lib_thread {
	struct lib_call *call;
	unsigned int slot;
};

extern __thread struct lib_thread lib_self
	__attribute__((tls_model("initial-exec")));

/* call.c: the slow paths.  begin_slow: the whole begin (nesting, first
 * call of a thread, rejoin, closed gate); gate_wait: uncounts a call that
 * met a closed gate and waits for it to open; gate_wake: wakes a rejoin
 * waiting for the counters; lost: our slot was lost, -ESTALE. */
int lib_call_begin_slow(struct daxfs_handle *h, struct lib_call *c);
void lib_gate_wait(struct daxfs_handle *h, unsigned int slot);
void lib_gate_wake(struct daxfs_handle *h);
int lib_call_lost(struct daxfs_handle *h);

/* sync.c: a call on a DAXFS_OPEN_SYNC handle logs the lines it stores
 * (begin) and flushes them, then drains (end). */
int lib_sync_begin(void);
void lib_sync_end(void);

static inline int lib_call_begin(struct daxfs_handle *h, struct lib_call *c)
{
	struct lib_thread *t = &lib_self;
	unsigned int slot = t->slot - 1;

	c->h = h;
	c->up = t->call;
	if (daxfs_likely(!c->up && t->slot &&
			 !__atomic_load_n(&h->need_rejoin, __ATOMIC_ACQUIRE))) {
		c->nested = false;
		c->slot = slot;
		__atomic_fetch_add(&h->inflight[slot].n, 1, __ATOMIC_SEQ_CST);
		if (daxfs_likely(!__atomic_load_n(&h->gate_closed,
						  __ATOMIC_SEQ_CST))) {
			t->call = c;
			return 0;
		}
		lib_gate_wait(h, slot);
	}
	return lib_call_begin_slow(h, c);
}

static inline int64_t lib_call_end(struct lib_call *c, int64_t ret)
{
	struct daxfs_handle *h = c->h;
	const u64 *w;

	if (c->nested)
		return ret;
	/* The core call's last stores (its intents done, its lane idle)
	 * must be visible before we read our slot's state: a survivor CASes
	 * that word to declare us dead and only then reads our lanes.  Store
	 * then load needs a full fence (x86 reorders them); with it, either
	 * the survivor sees the call finished or we see the slot lost.
	 * DAXFS_OPEN_SYNC: the fence also completes the call's cache-line
	 * write-backs (daxfs_drain), so what it did is on the media before
	 * it returns (docs/modes.md). */
	if (h->flags & DAXFS_OPEN_SYNC)
		lib_sync_end();
	else
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* slot_state/slot_alive are those the call started with (a rejoin
	 * waits for the gate): if that slot is not ours any more, we were
	 * declared dead during (or before) the call and recovery may have
	 * undone it. */
	w = h->slot_state;
	if (daxfs_unlikely(w && __atomic_load_n(w, __ATOMIC_ACQUIRE) !=
			   h->slot_alive))
		ret = lib_call_lost(h);
	lib_self.call = c->up;
	__atomic_fetch_sub(&h->inflight[c->slot].n, 1, __ATOMIC_SEQ_CST);
	if (daxfs_unlikely(__atomic_load_n(&h->gate_closed, __ATOMIC_SEQ_CST)))
		lib_gate_wake(h);
	return ret;
}

/* Is this thread inside a call on h? */
bool lib_call_inside(struct daxfs_handle *h);

/* The gate: init/destroy with the handle; close waits for the calls in
 * flight and keeps new ones out until open (one closer at a time);
 * child_fork resets it in a fork child.  The call_*_fork hooks guard the
 * process-wide thread slots. */
void lib_gate_init(struct daxfs_handle *h);
void lib_gate_destroy(struct daxfs_handle *h);
void lib_gate_close(struct daxfs_handle *h);
void lib_gate_open(struct daxfs_handle *h);
void lib_gate_child_fork(struct daxfs_handle *h);
void lib_call_prepare_fork(void);
void lib_call_parent_fork(void);
void lib_call_child_fork(void);

/* region.c: joins again when h was declared dead or belongs to a fork
 * parent's host (closes the gate for that); 0 at once otherwise. */
int lib_rejoin(struct daxfs_handle *h);

/*
 * After a call's body returned ret: run it again?  Only for -ENOSPC while
 * freed space is still on its way (docs/reclaim.md "When the pool is
 * empty"), and never inside another call of this thread (that one may hold
 * a lane: a readdir callback).  Sleeps between tries, bounded by about one
 * lease.  (region.c)
 */
bool lib_space_retry(struct lib_call *c, struct daxfs_space_wait *w,
		     int64_t ret);

/*
 * The body of every public entry point: runs expr as one lib call.  A
 * handle shut down (daxfs_region_shutdown) runs none: it crashed, as far
 * as the region can tell, and a call that stored (a lease renewed, a map
 * epoch announced) would undo that; the core's ops refuse on their own,
 * but not every call begins one.
 */
#define LIB_CALL_(h, expr, retry, last)				\
	do {								\
		struct lib_call lib_c_;					\
		struct daxfs_space_wait lib_w_ = { 0 };			\
		int64_t lib_r_ = lib_call_begin((h), &lib_c_);		\
									\
		if (!lib_r_ && daxfs_unlikely(__atomic_load_n(		\
				&(h)->fs.shut, __ATOMIC_ACQUIRE)))	\
			lib_r_ = -EIO;					\
		if (!lib_r_ && !lib_c_.nested &&			\
		    ((h)->flags & DAXFS_OPEN_SYNC))			\
			lib_r_ = lib_sync_begin();			\
		if (!lib_r_) {						\
			do						\
				lib_r_ = (expr);			\
			while ((retry) &&				\
			       lib_space_retry(&lib_c_, &lib_w_, lib_r_)); \
			if (lib_r_ == -ENOSPC)				\
				lib_r_ = (last);			\
		}							\
		return lib_call_end(&lib_c_, lib_r_);			\
	} while (0)

/* The body of every public entry point: runs expr as one lib call. */
#define LIB_CALL(h, expr)	LIB_CALL_(h, expr, false, -ENOSPC)
/* The same for a call whose -ENOSPC had no effect (the core rolled it
 * back), so that running it again is safe: waits out space in limbo. */
#define LIB_CALL_SPACE(h, expr)	LIB_CALL_(h, expr, true, -ENOSPC)
/* A write: whole (DAXFS_WRITE_WHOLE) while the space wait runs it again,
 * then, once the wait gave up, part as the last try: what fits, a short
 * write, as POSIX has it for a full medium (docs/reclaim.md "Short
 * writes"). */
#define LIB_CALL_WRITE(h, whole, part)	LIB_CALL_(h, whole, true, part)

#endif /* DAXFS_LIB_CALL_H */
