/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one place where the core meets its environment.  The core's .c files
 * include only this header and the headers in include/daxfs, so the same
 * sources build into daxfs.ko and into libdaxfs.  It supplies: fixed-width types, errno
 * values, atomics on shared words (always 64-bit, always naturally aligned),
 * barriers, cache-line flush for persistent media, copy routines and a clock.
 *
 * Every shared-word access in the core goes through daxfs_load/daxfs_store/
 * daxfs_cas/daxfs_faa so that a reader never sees a torn or compiler-cached
 * value of a word another host may change.
 */
#ifndef DAXFS_COMPAT_H
#define DAXFS_COMPAT_H

/*
 * From this many bytes, stores of file data into the region stream past
 * the cache (non-temporal): a write's copy (lib/ntcopy.h, daxfs.ko's
 * write actor) and the zeros of a fresh page (daxfs_zero_stream).
 * docs/files.md "Data copies with streaming stores" has the measurements.
 */
#define DAXFS_NT_MIN	2048

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/processor.h>
#include <linux/libnvdimm.h>
#include <linux/bitops.h>
#include <linux/mm.h>
#include <asm/byteorder.h>
#ifdef CONFIG_X86
#include <asm/cpufeature.h>
#endif
/* <linux/magic.h> names the kernel's dax pseudo-filesystem DAXFS_MAGIC, and
 * newer kernels (6.12) pull it in through the headers above; format.h's
 * DAXFS_MAGIC (the superblock magic) is the one daxfs means.  Include it
 * here, once, so the #undef holds whatever a later header includes. */
#include <linux/magic.h>
#undef DAXFS_MAGIC

#ifndef __LITTLE_ENDIAN
#error "DaxFS requires a little-endian host"
#endif

typedef u8 daxfs_u8;
/* Sync mode's store log is libdaxfs' (user space below). */
#define daxfs_dirty(p)		do { } while (0)
#define daxfs_dirty_pause()	NULL
#define daxfs_dirty_resume(d)	do { (void)(d); } while (0)
#define daxfs_likely(x)		likely(x)
#define daxfs_unlikely(x)	unlikely(x)
#define daxfs_noinline		noinline
#define daxfs_always_inline	__always_inline
#define daxfs_must_check	__must_check
/*
 * A local that its function always fills before it reads it: kept out of
 * the kernel's stack zeroing (CONFIG_INIT_STACK_ALL_ZERO, on in Debian's
 * kernels), which otherwise clears it on every call; a write's batch of
 * page offsets was a 512-byte rep stosq per write(2), an unlink's chain
 * arrays about a hundred stores (docs/benchmarks.md "Fewer checks and
 * clock readings in daxfs.ko's create and unlink").
 */
#ifdef __uninitialized
#define daxfs_noinit		__uninitialized
#else
#define daxfs_noinit
#endif

static inline u64 daxfs_load(const u64 *p)
{
	return smp_load_acquire(p);
}

static inline void daxfs_store(u64 *p, u64 v)
{
	smp_store_release(p, v);
}

/*
 * Read-modify-writes on region words must be atomic against OTHER machines
 * (hosts sharing the memory), not only against this kernel's CPUs.  The
 * kernel's cmpxchg()/atomic64_*() use LOCK_PREFIX, which x86 "SMP
 * alternatives" patch away (lock -> ds) on a kernel booted with one present
 * CPU, also in modules loaded later: on such a host every CAS and FAA on the
 * region would be a plain load + store (observed under QEMU TCG with
 * -smp 1,maxcpus=2: two guests popped the same free object).  So on x86 use
 * forms that always carry the lock prefix: sync_cmpxchg() (made for memory
 * shared with a hypervisor, for the same reason) and a literal lock xadd.
 * Other architectures do not patch their atomics.
 */
#if defined(CONFIG_X86) && defined(arch_sync_cmpxchg)
#define daxfs_cmpxchg(p, o, n)	arch_sync_cmpxchg(p, o, n)
#else
#define daxfs_cmpxchg(p, o, n)	cmpxchg(p, o, n)
#endif

/*
 * A failed cmpxchg() orders nothing (Documentation/atomic_t.txt): on arm64
 * its LL/SC loop exits before the store-release and the dmb.  The core
 * goes on to read what the value found names (a newer chain head, a
 * claimer's slot), so a failure gets the full barrier a success has.
 * x86's lock cmpxchg is a full barrier either way.
 */
static inline void daxfs_cas_failed(void)
{
#ifndef CONFIG_X86
	smp_mb();
#endif
}

/* Returns true and installs desired when *p == *expected; otherwise
 * returns false and stores the value found in *expected.  Full barrier
 * (success and failure: docs/design.md "Memory ordering"). */
static inline bool daxfs_cas(u64 *p, u64 *expected, u64 desired)
{
	u64 old = daxfs_cmpxchg(p, *expected, desired);

	if (old == *expected)
		return true;
	*expected = old;
	daxfs_cas_failed();
	return false;
}

static inline u64 daxfs_faa(u64 *p, u64 delta)
{
#ifdef CONFIG_X86_64
	asm volatile("lock; xaddq %0, %1"
		     : "+r" (delta), "+m" (*p) : : "memory", "cc");
	return delta;
#else
	return atomic64_fetch_add(delta, (atomic64_t *)p);
#endif
}

static inline u32 daxfs_load32(const u32 *p)
{
	return smp_load_acquire(p);
}

static inline void daxfs_store32(u32 *p, u32 v)
{
	smp_store_release(p, v);
}

static inline bool daxfs_cas32(u32 *p, u32 *expected, u32 desired)
{
	u32 old = daxfs_cmpxchg(p, *expected, desired);

	if (old == *expected)
		return true;
	*expected = old;
	daxfs_cas_failed();
	return false;
}

#define daxfs_fence()		smp_mb()
#define daxfs_store_load_fence()	smp_mb()
/* loads before it complete before loads after it (a seqlock reader) */
#define daxfs_rmb()		smp_rmb()
#define daxfs_cpu_relax()	cpu_relax()

static inline void daxfs_flush(const void *p, size_t len)
{
	arch_wb_cache_pmem((void *)p, len);
}

#define daxfs_drain()		wmb()

static inline s64 daxfs_now_ns(void)
{
	return ktime_get_real_ns();
}

/* The clock Linux stamps file writes with: a tick's grain, and a read of
 * a word where the fine clock reads the time source (docs/files.md "Time
 * stamps of writes") */
static inline s64 daxfs_coarse_ns(void)
{
	return ktime_get_coarse_real_ns();
}

/* Lease timing: never stepped by settimeofday/NTP (docs/hosts.md). */
static inline s64 daxfs_mono_ns(void)
{
	return ktime_get_ns();
}

static inline u64 daxfs_thread_id(void)
{
	return (u64)current->pid;
}

/* Long waits (a lane or a claim held by a live host) yield the CPU. */
static inline void daxfs_yield(void)
{
	cond_resched();
}

/* A write's target page faulted in before the fence check (core/file.c
 * daxfs_copy_fenced): nothing to do here.  daxfs.ko maps the whole region
 * at mount, so a store into it never faults, and the user buffer's faults
 * are disabled during the copy (kernel/file.c).  The locked +0 this was
 * made a read-for-ownership of a line the copy then streams over, per
 * page, and bought nothing: a guest can be paused at any instruction. */
static inline void daxfs_fault_in_write(void *p)
{
}

/* So daxfs_copy_fenced walks no target pages at all (core/mapped.h). */
#define DAXFS_WRITE_FAULTS	0

/* The kernel maps the whole region at mount: nothing to populate (and
 * nothing to record as mapped: core/mapped.h). */
static inline bool daxfs_populate(void *p, u64 len)
{
	return false;
}

/* The store fence after streaming stores: see the user-space one.  The
 * write actor (kernel/file.c) leaves its copy to daxfs_copy_fenced's. */
static inline void daxfs_stream_fence(void)
{
	wmb();
}

/* Zeros of a fresh page with streaming stores, the first line through
 * the cache: see the user-space one. */
static inline void daxfs_zero_stream(void *p, size_t len)
{
#ifdef CONFIG_X86_64
	size_t head = (size_t)(-(uintptr_t)p & 63) + 64;

	if (len >= DAXFS_NT_MIN && len <= PAGE_SIZE) {
		memset(p, 0, head);
		memcpy_flushcache((u8 *)p + head, page_address(ZERO_PAGE(0)),
				  len - head);
		daxfs_stream_fence();
		return;
	}
#endif
	memset(p, 0, len);
}

/*
 * One load of a plain (non-atomic) region field that another host may
 * change: the compiler may neither re-read it later nor merge it with an
 * earlier read, so a value validated once stays the value used.
 */
#define daxfs_once(x)		READ_ONCE(x)

/*
 * In every step of a long walk or wait: yields the CPU, and returns true
 * when the task must stop (a fatal signal); the caller then undoes what it
 * must and returns -EINTR.  Bounded walks still call it: a bound of pool
 * size / object size steps is long for one CPU.
 */
static inline bool daxfs_walk_yield(void)
{
	cond_resched();
	return fatal_signal_pending(current);
}

/* Bit counting: __builtin_popcountll() becomes a libgcc call
 * (__popcountdi2) that the kernel does not provide. */
static inline u32 daxfs_popcount64(u64 w)
{
	return hweight64(w);
}

/* Index of the lowest set bit; w must not be 0. */
static inline u32 daxfs_ctz64(u64 w)
{
	return __ffs64(w);
}

#else /* user space */

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_READ	22	/* Linux 5.14; older libc headers */
#define MADV_POPULATE_WRITE	23
#endif
#include <linux/types.h>
#ifdef __x86_64__
#include <cpuid.h>
#include <emmintrin.h>
#endif

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "DaxFS requires a little-endian host"
#endif

/* Same widths and spellings as the kernel's (u64 is unsigned long long). */
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s64 s64;
typedef __s32 s32;

#define daxfs_likely(x)		__builtin_expect(!!(x), 1)
#define daxfs_unlikely(x)	__builtin_expect(!!(x), 0)
#define daxfs_noinline		__attribute__((__noinline__))
#define daxfs_always_inline	inline __attribute__((__always_inline__))
#define daxfs_must_check	__attribute__((__warn_unused_result__))
/* nothing zeroes locals here (see the kernel's) */
#define daxfs_noinit

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

/*
 * Sync mode (docs/modes.md): a thread inside a libdaxfs call on a handle
 * opened with DAXFS_OPEN_SYNC logs the cache line of every shared word it
 * stores (store, CAS, FAA); the call flushes the logged lines and drains
 * before it returns (lib/sync.c), so its metadata reaches the media even
 * where the core flushes nothing itself.  Outside sync mode the log is
 * NULL: one thread-local load and a branch.
 */
#define DAXFS_DIRTY_MAX	1024u

struct daxfs_dirty {
	u32 n;
	uintptr_t line[DAXFS_DIRTY_MAX];
};

extern __thread struct daxfs_dirty *daxfs_dirty_log
	__attribute__((tls_model("initial-exec")));
void daxfs_dirty_spill(struct daxfs_dirty *d);

/* Crash injection at a store (lib/crash.c, DAXFS_CRASH_AT=store:N): the
 * Nth store, CAS or add that changed memory, counted here because every
 * one of them passes through daxfs_dirty.  User space test builds only. */
#ifdef DAXFS_CRASH_POINTS
void daxfs_crash_store(void);
#else
#define daxfs_crash_store() do { } while (0)
#endif

/* A store the compiler cannot see (a streamed line, a string move) counted
 * as DAXFS_CRASH_PLAIN=1 counts plain ones (lib/crash-plain.c), before it
 * is made: one call per 64-byte line at d. */
#if defined(DAXFS_CRASH_POINTS) && defined(DAXFS_CRASH_PLAIN)
void daxfs_crash_line(const void *d);
#else
#define daxfs_crash_line(d) do { } while (0)
#endif

static inline void daxfs_dirty(const void *p)
{
	struct daxfs_dirty *d = daxfs_dirty_log;
	uintptr_t line = (uintptr_t)p & ~(uintptr_t)63;

	daxfs_crash_store();
	if (daxfs_likely(!d))
		return;
	if (d->n && d->line[d->n - 1] == line)
		return;
	if (d->n == DAXFS_DIRTY_MAX)
		daxfs_dirty_spill(d);
	d->line[d->n++] = line;
}

/* Stores that mean nothing after a power loss (a lane's epoch: every
 * host is dead then) stay out of the log: pause, store, resume. */
static inline void *daxfs_dirty_pause(void)
{
	struct daxfs_dirty *d = daxfs_dirty_log;

	daxfs_dirty_log = NULL;
	return d;
}

static inline void daxfs_dirty_resume(void *d)
{
	daxfs_dirty_log = (struct daxfs_dirty *)d;
}

static inline u64 daxfs_load(const u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void daxfs_store(u64 *p, u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	daxfs_dirty(p);
}

/*
 * Every read-modify-write is a full barrier (docs/design.md "Memory
 * ordering"): the core's protocols rely on a CAS ordering the stores
 * before it against the loads after it, as the kernel's cmpxchg() does.
 * A C11 seq_cst RMW does not promise that for other accesses, and arm64
 * does not give it: an LL/SC loop (ldaxr/stlxr, also the outlined helper
 * on a CPU without LSE) lets a later load pass an earlier store.  So a
 * weakly ordered CPU adds the trailing dmb that Linux adds; x86's locked
 * instructions are full barriers already.
 */
static inline void daxfs_rmw_fence(void)
{
#if !defined(__x86_64__) && !defined(__i386__)
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static inline bool daxfs_cas(u64 *p, u64 *expected, u64 desired)
{
	bool ok = __atomic_compare_exchange_n(p, expected, desired, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);

	daxfs_rmw_fence();
	if (ok)
		daxfs_dirty(p);
	return ok;
}

static inline u64 daxfs_faa(u64 *p, u64 delta)
{
	u64 old = __atomic_fetch_add(p, delta, __ATOMIC_SEQ_CST);

	daxfs_rmw_fence();
	if (delta)
		daxfs_dirty(p);
	return old;
}

static inline u32 daxfs_load32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void daxfs_store32(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	daxfs_dirty(p);
}

static inline bool daxfs_cas32(u32 *p, u32 *expected, u32 desired)
{
	bool ok = __atomic_compare_exchange_n(p, expected, desired, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);

	daxfs_rmw_fence();
	if (ok)
		daxfs_dirty(p);
	return ok;
}

#define daxfs_fence()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
/*
 * Stores before it are visible before loads after it, for stores to
 * ordinary (cached) memory and streaming ones already fenced by
 * daxfs_stream_fence.  On x86-64 a locked add to the stack: the order
 * mfence gives, at the cost of the locked add the change counter's move
 * had (mfence costs more on Intel; Linux's smp_mb is the same add).
 */
static inline void daxfs_store_load_fence(void)
{
#ifdef __x86_64__
	__asm__ __volatile__("lock; addl $0,-8(%%rsp)" : : : "memory", "cc");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}
/* loads before it complete before loads after it (a seqlock reader) */
#define daxfs_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)

static inline void daxfs_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Power-failure states (lib/pmem-trace.c, `make pmem` only): the trace
 * sees every flush and drain of the core and of libdaxfs. */
#ifdef DAXFS_PMEM_TRACE
void daxfs_pmem_flush(const void *p, size_t len);
void daxfs_pmem_drain(void);
#define daxfs_pmem_flush_hook(p, len)	daxfs_pmem_flush(p, len)
#define daxfs_pmem_drain_hook()		daxfs_pmem_drain()
#else
#define daxfs_pmem_flush_hook(p, len)	do { } while (0)
#define daxfs_pmem_drain_hook()		do { } while (0)
#endif

#if defined(__x86_64__)
/* clwb (keeps the line cached) where the CPU has it, else clflushopt,
 * else clflush (CPUID.(EAX=7,ECX=0):EBX bits 24 and 23).  Looked up once
 * per object file. */
static inline int daxfs_x86_wb_kind(void)
{
	static int kind;
	unsigned int a, b = 0, c, d;

	if (daxfs_likely(kind))
		return kind;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 24)))
		kind = 3;
	else if (b & (1u << 23))
		kind = 2;
	else
		kind = 1;
	return kind;
}
#endif

/* Write back cache lines so stores reach persistent media. */
static inline void daxfs_flush(const void *p, size_t len)
{
	daxfs_pmem_flush_hook(p, len);
#if defined(__x86_64__)
	const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63);
	const char *end = (const char *)p + len;
	int kind = daxfs_x86_wb_kind();

	if (kind == 1) {
		for (; c < end; c += 64)
			__builtin_ia32_clflush(c);
		return;
	}
	/* clwb and clflushopt are not ordered with later stores as
	 * clflush is: one sfence after the lines keeps the contract */
	for (; c < end; c += 64) {
		if (kind == 3)
			__asm__ __volatile__("clwb %0" : "+m" (*(volatile char *)c));
		else
			__asm__ __volatile__("clflushopt %0"
					     : "+m" (*(volatile char *)c));
	}
	__asm__ __volatile__("sfence" : : : "memory");
#elif defined(__aarch64__)
	/* clean to the point of coherency, line by line; the line size is
	 * CTR_EL0.DminLine (Linux lets user space read it and run dc cvac).
	 * The dsb makes the clean complete before any later store, as x86's
	 * clflush is ordered with later stores: the core flushes an intent,
	 * then publishes by CAS, and relies on that order. */
	uintptr_t ctr, line, c, end = (uintptr_t)p + len;

	__asm__ __volatile__("mrs %0, ctr_el0" : "=r" (ctr));
	line = (uintptr_t)4 << ((ctr >> 16) & 0xf);
	for (c = (uintptr_t)p & ~(line - 1); c < end; c += line)
		__asm__ __volatile__("dc cvac, %0" : : "r" (c) : "memory");
	__asm__ __volatile__("dsb sy" : : : "memory");
#else
	(void)p;
	(void)len;
#endif
}

/* Flushes complete before later stores: on arm64 a dc cvac is waited for
 * by a dsb only, a dmb orders it without completing it. */
#if defined(__aarch64__)
#define daxfs_drain_insn()	__asm__ __volatile__("dsb sy" : : : "memory")
#else
#define daxfs_drain_insn()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif
#define daxfs_drain()	do { \
		daxfs_drain_insn(); \
		daxfs_pmem_drain_hook(); \
	} while (0)

static inline s64 daxfs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline s64 daxfs_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME_COARSE, &ts);
	return (s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Lease timing: never stepped by settimeofday/NTP (docs/hosts.md). */
static inline s64 daxfs_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* User space: threads are preempted anyway, and a signal is the
 * application's to handle.  A test may set daxfs_walk_stop to stop walks
 * as a killed kernel task's stop (tests/c/test_walk_stop.c); NULL always
 * otherwise. */
extern bool (*daxfs_walk_stop)(void);

static inline bool daxfs_walk_yield(void)
{
	return daxfs_walk_stop && daxfs_walk_stop();
}

/* Cached per thread: op_begin calls it on every operation.  initial-exec:
 * one %fs-relative load in libdaxfs.so and the preload, where the default
 * model called __tls_get_addr twice per op (8 bytes of the static TLS
 * surplus per file that uses it when libdaxfs.so is dlopen()ed, as
 * lib/call.h's lib_self). */
static inline u64 daxfs_thread_id(void)
{
	static __thread u64 tid __attribute__((tls_model("initial-exec")));

	if (daxfs_unlikely(!tid))
		tid = (u64)syscall(SYS_gettid);
	return tid;
}

static inline void daxfs_yield(void)
{
	sched_yield();
}

/* User space: one plain load maps the page (shared writable mappings map
 * it writable on a read fault) without the locked instruction, which
 * waits for the line before anything after it; a thread can be stopped
 * at any instruction here anyway, not only on the way out of a fault. */
static inline void daxfs_fault_in_write(void *p)
{
	(void)*(volatile const u8 *)p;
}

/* A store into the region can fault: daxfs_copy_fenced faults the target
 * pages in before its fence look (core/mapped.h). */
#define DAXFS_WRITE_FAULTS	1

/*
 * Maps [p, p + len) of the region into this process's page tables in one
 * system call (DAXFS_FS_POPULATE: a fresh page batch): the first store
 * to each page would otherwise take a minor fault of its own, about 1.7
 * us against 1.1 us a page this way (docs/benchmarks.md "Fresh batches
 * mapped at once").  Advice only: an older kernel's EINVAL costs one
 * system call per batch.  True when the pages are mapped now.
 */
static inline bool daxfs_populate(void *p, u64 len)
{
	return !madvise(p, len, MADV_POPULATE_WRITE);
}

/* See the kernel definition: one load of a plain region field. */
#define daxfs_once(x)	(*(const volatile __typeof__(x) *)&(x))

#if defined(__x86_64__)
/*
 * Orders the streaming stores before it before every store after it:
 * they are weakly ordered, and what the core stores after them (a size, a
 * page's publication) must not be seen first.  daxfs_copy_fenced makes one
 * for a whole write (a fence per page held up each page's copy until the
 * one before it reached memory); daxfs_zero_stream and daxfs_copy_nt end
 * with one.
 */
static inline void daxfs_stream_fence(void)
{
	_mm_sfence();
}

/*
 * Streams the whole lines [d, d + n) (d line-aligned, n a multiple of 64)
 * from s, or zeros when s is NULL; not fenced (daxfs_stream_fence).  The
 * copies of lib/ntcopy.h and daxfs_zero_stream go through here.
 */
static inline void daxfs_stream_lines(uint8_t *d, const uint8_t *s, size_t n)
{
	__m128i z = _mm_setzero_si128();
	size_t i;

	/* two loops: a test of s per line cost a 4 KiB copy 200
	 * instructions where the compiler could not tell s from NULL */
	if (!s) {
		for (i = 0; i < n; i += 64) {
			__m128i *dv = (__m128i *)(d + i);

			daxfs_crash_line(dv);
			_mm_stream_si128(dv, z);
			_mm_stream_si128(dv + 1, z);
			_mm_stream_si128(dv + 2, z);
			_mm_stream_si128(dv + 3, z);
		}
		return;
	}
	for (i = 0; i < n; i += 64) {
		const __m128i *sv = (const __m128i *)(s + i);
		__m128i *dv = (__m128i *)(d + i);

		daxfs_crash_line(dv);
		_mm_stream_si128(dv, _mm_loadu_si128(sv));
		_mm_stream_si128(dv + 1, _mm_loadu_si128(sv + 1));
		_mm_stream_si128(dv + 2, _mm_loadu_si128(sv + 2));
		_mm_stream_si128(dv + 3, _mm_loadu_si128(sv + 3));
	}
}
#else
/* streaming stores are x86's alone here: elsewhere plain stores */
static inline void daxfs_stream_fence(void)
{
}
#endif

/*
 * Zeros [p, p + len) of a fresh page (the part of a new page a write
 * does not cover, a page fallocate makes, a run's tail), mostly with
 * streaming stores (docs/files.md "Data copies with streaming stores"):
 * a cached memset reads each line in first, and the streaming copy that
 * follows into those cached lines then costs more than either.  Fenced,
 * as the copies are: the zeros are visible before the page is published.
 */
static inline void daxfs_zero_stream(void *p, size_t len)
{
#if defined(__x86_64__)
	uint8_t *d = p;
	size_t head, body;

	if (len < DAXFS_NT_MIN) {
		memset(d, 0, len);
		return;
	}
	/* up to the second line boundary through the cache: the copy that
	 * follows first loads its first line (daxfs_fault_in_write), and a
	 * load of a line just streamed waits for memory */
	head = (size_t)(-(uintptr_t)d & 63) + 64;
	memset(d, 0, head);
	d += head;
	len -= head;
	body = len & ~(size_t)63;
	daxfs_stream_lines(d, NULL, body);
	daxfs_stream_fence();
	memset(d + body, 0, len - body);
#else
	memset(p, 0, len);
#endif
}

static inline u32 daxfs_popcount64(u64 w)
{
	return (u32)__builtin_popcountll(w);
}

/* Index of the lowest set bit; w must not be 0. */
static inline u32 daxfs_ctz64(u64 w)
{
	return (u32)__builtin_ctzll(w);
}

#endif /* __KERNEL__ */

/*
 * 16-byte compare-and-swap on p[0..1] (16-byte aligned), for the free
 * stacks' {offset, 64-bit tag} heads (docs/alloc.md "Free stacks").
 * Returns true and installs {lo, hi} when p equals expected[0..1];
 * otherwise false, with the value found (read atomically) in expected.
 * Full barrier.  The same inline asm in the kernel and in user space: the
 * lock prefix is literal, so x86 SMP alternatives never patch it away
 * (see daxfs_cmpxchg), and no libatomic lock (process-private) is used.
 * Checked atomic across QEMU TCG guests and the host (docs/alloc.md).
 */
#if defined(__x86_64__)
struct daxfs_cas16_mem {
	u64 w[2];
};

static inline bool daxfs_cas16(u64 *p, u64 *expected, u64 lo, u64 hi)
{
	bool ok;

	asm volatile("lock; cmpxchg16b %[m]"
		     : "=@ccz" (ok), [m] "+m" (*(struct daxfs_cas16_mem *)p),
		       "+a" (expected[0]), "+d" (expected[1])
		     : "b" (lo), "c" (hi)
		     : "memory");
	if (ok)
		daxfs_dirty(p);
	return ok;
}

/* cmpxchg16b is missing on the very first x86-64 CPUs (CPUID.1:ECX.CX16). */
static inline bool daxfs_cpu_has_cas16(void)
{
#ifdef __KERNEL__
	return boot_cpu_has(X86_FEATURE_CX16);
#else
	unsigned int a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 13));
#endif
}
#elif defined(__aarch64__)
/* ldaxp/stlxp: the pair is read atomically only when the store-exclusive
 * succeeds, so a mismatch stores back what it read before reporting it. */
static inline bool daxfs_cas16(u64 *p, u64 *expected, u64 lo, u64 hi)
{
	u64 olo, ohi;
	u32 fail;
	bool same;

	do {
		asm volatile("ldaxp %0, %1, %2"
			     : "=&r" (olo), "=&r" (ohi)
			     : "Q" (*p) : "memory");
		same = olo == expected[0] && ohi == expected[1];
		asm volatile("stlxp %w0, %2, %3, %1"
			     : "=&r" (fail), "=Q" (*p)
			     : "r" (same ? lo : olo), "r" (same ? hi : ohi)
			     : "memory");
	} while (fail);
	asm volatile("dmb ish" : : : "memory");
	expected[0] = olo;
	expected[1] = ohi;
	if (same)
		daxfs_dirty(p);
	return same;
}

static inline bool daxfs_cpu_has_cas16(void)
{
	return true;	/* ldxp/stxp are base ARMv8 */
}
#else
#error "DaxFS needs a 16-byte compare-and-swap: x86-64 or arm64"
#endif

/* A hint that the line at p is about to be stored to (prefetchw where the
 * CPU has it; GCC's builtin in both builds).  Never faults: any address. */
#define daxfs_prefetch_store(p)	__builtin_prefetch((p), 1)

/* Test hook for crash injection at named protocol points (user space
 * tests only; compiled out unless DAXFS_CRASH_POINTS is defined). */
#ifdef DAXFS_CRASH_POINTS
void daxfs_crash_point(const char *name);
#else
#define daxfs_crash_point(name) do { } while (0)
#endif

/* Test hook: names a documented crash window this thread is in (NULL:
 * none), for the kill log of a store:N cut (lib/crash.c), so that a test
 * can hold a cut inside it to what the window is documented to leave. */
#ifdef DAXFS_CRASH_POINTS
void daxfs_crash_window(const char *name);
#else
#define daxfs_crash_window(name) do { } while (0)
#endif

/* Test hook for double-fetch tests: called right after a region value
 * was loaded and validated, so that a test can change it in the region
 * before it is used (user space tests only; compiled out unless
 * DAXFS_RACE_POINTS is defined: `make race`, tests/race/). */
#ifdef DAXFS_RACE_POINTS
void daxfs_race_point(const char *name, const void *p);
#else
#define daxfs_race_point(name, p) do { } while (0)
#endif

#endif /* DAXFS_COMPAT_H */
