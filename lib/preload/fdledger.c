// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Who holds the references of the shared descriptions (docs/preload.md
 * "References of processes that end without closing").
 *
 * refs in a description counts the descriptors of every process that
 * shares the table; a process killed before it closes them never gives
 * its share back.  Until session 57 such a share stayed for ever: the
 * description's last close never came (its OFD or flock lock stayed with
 * the last survivor, docs/locks.md), and a parent whose children were
 * killed leaked a slot of the table per inherited description until opens
 * failed with ENFILE.
 *
 * So each process keeps its per-description counts (fdtable.c localref)
 * in a row of the table memfd instead of private memory, under an entry
 * of a small registry that names the process.  A survivor that finds a
 * registered process ended (lib_proc_ended: no such pid, a zombie, or a
 * later process with that pid) claims its entry and gives its row back:
 * each count taken out of the row by exchange, then subtracted from refs,
 * the last close made where that brings refs to 0.
 *
 * Every step errs towards a leak, never a count given back twice: refs are
 * raised before a row counts them and a row is lowered before refs are; a
 * claim is one CAS of the entry's word; a reaper killed part way leaves
 * the rest to the next one.  A process the registry has no room for
 * counts in private memory as before, and its share can leak as before.
 *
 * An entry's word: state (2 bits), pid (32), tag (30).  The tag tells one
 * use of an entry from the next, so that a spawn's parent that gives back
 * the row of a child that never took it cannot take a later one's.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "preload.h"

enum { LG_FREE, LG_PENDING, LG_LIVE, LG_REAPING };

struct lg_entry {
	_Atomic uint64_t word;
	_Atomic uint64_t start;	/* /proc start time, 0: not known */
	_Atomic uint64_t pidns;
	_Atomic uint64_t timens;
};

#define LG_ROW_BYTES	((size_t)PL_DESC_MAX * sizeof(uint16_t))
#define LG_PAGE_COUNTS	(4096 / sizeof(uint16_t))
#define LG_ROW_PAGES	(LG_ROW_BYTES / 4096)
_Static_assert(PL_LEDGER_SIZE == PL_PROC_MAX * sizeof(struct lg_entry) +
	       PL_PROC_MAX * LG_ROW_BYTES, "ledger size");

bool lib_proc_ended(uint32_t pid, uint64_t start);
int lib_proc_self(uint64_t *start, uint64_t *pidns, uint64_t *timens);

static struct lg_entry *entries;	/* NULL: not mapped (yet) */
static _Atomic uint32_t *entries_used;	/* table head: entries below it */
static uint16_t *rows;
static uint16_t private_row[PL_DESC_MAX];
/* a fork child's counts when the registry had no room (fork copies it) */
static uint16_t child_private[PL_DESC_MAX];
uint16_t *pl_refrow = private_row;
static int own = -1;			/* our entry, -1: private_row */
static uint64_t own_word;
static int child = -1;			/* a fork or spawn's entry */
static uint64_t child_word;
static bool child_prepared;
static uint32_t tag_next;

static uint64_t word_of(int st, uint32_t pid, uint64_t tag)
{
	return (uint64_t)st | (uint64_t)pid << 2 | (tag & 0x3fffffff) << 34;
}

static int word_st(uint64_t w)
{
	return (int)(w & 3);
}

static uint32_t word_pid(uint64_t w)
{
	return (uint32_t)(w >> 2);
}

static uint16_t *row_of(int i)
{
	return rows + (size_t)i * PL_DESC_MAX;
}

/* The table's mark of entries used (its table page); the ledger itself
 * is mapped when first needed. */
void pl_ledger_attach(_Atomic uint32_t *used)
{
	entries_used = used;
	entries = NULL;
	rows = NULL;
}

/*
 * The ledger is mapped at its first use (a fork, a spawn, an import of
 * a row, a give-back): a process that never shares its descriptions
 * spends no address space on it, which a limit on that (ulimit -v) makes
 * scarce.  False when it cannot be mapped: the process counts privately,
 * as one the registry has no room for.  Every caller holds the map lock
 * (or runs alone, at an image's start).
 */
static bool ledger_ready(void)
{
	if (entries)
		return true;
	entries = pl_table_ledger_map();
	if (!entries)
		return false;
	rows = (uint16_t *)(entries + PL_PROC_MAX);
	return true;
}

/* How many entries a scan looks at: those ever taken.  A taker raises
 * the mark before it takes the entry above it, and the mark never goes
 * down, so an entry a scan misses was taken after the scan began, by a
 * process that has not ended yet as far as that scan could know: the
 * next scan finds it. */
static uint32_t entries_in_use(void)
{
	uint32_t n = atomic_load(entries_used);

	return n < PL_PROC_MAX ? n : PL_PROC_MAX;
}

/* Our start time and namespaces, read once per process where it is safe
 * to (never in a fork child's handler; /proc through our own routing
 * costs a few system calls each). */
static uint64_t my_start, my_pidns, my_timens;

static bool ns_known(void)
{
	if (!my_pidns && lib_proc_self(&my_start, &my_pidns, &my_timens))
		my_pidns = 0;
	return my_pidns != 0;
}

/* Entry e is of our namespaces, start our start time (0: not known; then
 * only a process that has gone, or become a zombie, is ended). */
static void note(struct lg_entry *e, uint64_t start)
{
	atomic_store(&e->start, start);
	atomic_store(&e->timens, my_timens);
	atomic_store(&e->pidns, my_pidns);
}

/* Gives entry i's row back, each count by exchange first; then frees the
 * entry if it is still the claim cw. */
static void drain(int i, uint64_t cw)
{
	uint16_t *r = row_of(i);
	unsigned char vec[LG_ROW_PAGES];
	unsigned int idx, c;

	/* a page of the row that never counted anything is a hole of the
	 * memfd: not read, so that it stays one */
	if (sysconf(_SC_PAGESIZE) != 4096 || mincore(r, LG_ROW_BYTES, vec))
		memset(vec, 1, sizeof(vec));
	for (idx = 0; idx < PL_DESC_MAX; idx++) {
		if (!(vec[idx / LG_PAGE_COUNTS] & 1) ||
		    !__atomic_load_n(&r[idx], __ATOMIC_RELAXED))
			continue;
		c = __atomic_exchange_n(&r[idx], 0, __ATOMIC_ACQ_REL);
		if (c)
			pl_fd_give_back(idx, c);
	}
	atomic_compare_exchange_strong(&entries[i].word, &cw, LG_FREE);
}

/* Claims entry i (word w) for a reaping by us: true when it is ours. */
static bool claim(int i, uint64_t w, uint64_t *cw)
{
	*cw = word_of(LG_REAPING, (uint32_t)getpid(), w >> 34);
	return atomic_compare_exchange_strong(&entries[i].word, &w, *cw);
}

/*
 * Is the process behind entry i (word w) one that has ended?  Only an
 * entry of our pid namespace (pidns) is judged: another's pids are other
 * processes, and an entry that names none is left.  Its start time
 * counts only in its time namespace.  A claim whose reaper died part way
 * is judged by its pid.
 */
static bool ended(int i, uint64_t w, uint64_t pidns, uint64_t timens)
{
	struct lg_entry *e = &entries[i];
	uint32_t pid = word_pid(w);
	uint64_t start;

	if (atomic_load(&e->pidns) != pidns)
		return false;
	if (word_st(w) == LG_REAPING)
		return pid == (uint32_t)getpid() || lib_proc_ended(pid, 0);
	start = atomic_load(&e->timens) == timens ? atomic_load(&e->start) : 0;
	return lib_proc_ended(pid, start);
}

/* Gives back the rows of ended processes (only >= 0: of those that count
 * description only); true when one was. */
bool pl_ledger_reap(int only)
{
	uint64_t w, cw;
	bool any = false;
	int i, n, st;

	if (!ledger_ready() || !ns_known())
		return false;
	n = (int)entries_in_use();
	for (i = 0; i < n; i++) {
		if (i == own || i == child)
			continue;
		w = atomic_load(&entries[i].word);
		st = word_st(w);
		if (st != LG_LIVE && st != LG_REAPING)
			continue;	/* free, or a child not yet named */
		if (only >= 0 && st == LG_LIVE &&
		    !__atomic_load_n(&row_of(i)[only], __ATOMIC_RELAXED))
			continue;
		if (!ended(i, w, my_pidns, my_timens) || !claim(i, w, &cw))
			continue;
		drain(i, cw);
		any = true;
	}
	return any;
}

/* from's counts into a taken entry's row (all zeros while it was free):
 * only the pages that count something are touched, and the memfd gives
 * memory only to those. */
static void row_fill(uint16_t *row, const uint16_t *from)
{
	unsigned int i;

	for (i = 0; i < PL_DESC_MAX; i++)
		if (from[i])
			row[i] = from[i];
}

/* Entry i taken as word st/pid with a new tag if it is free. */
static bool take_at(uint32_t i, int st, uint32_t pid, uint64_t *wp)
{
	uint64_t zero = LG_FREE, w = word_of(st, pid, tag_next++);

	if (atomic_load(&entries[i].word) != LG_FREE ||
	    !atomic_compare_exchange_strong(&entries[i].word, &zero, w))
		return false;
	*wp = w;
	return true;
}

/* A free entry, taken as word st/pid with a new tag: one given back
 * below the mark first, else the next never used; -1: none, even after
 * the entries of ended processes were given back. */
static int take(int st, uint32_t pid, uint64_t *wp)
{
	uint32_t i, n;
	int pass;

	if (!tag_next)
		tag_next = (uint32_t)getpid() * 2654435761u | 1;
	for (pass = 0; pass < 2; pass++) {
		n = entries_in_use();
		for (i = 0; i < n; i++)
			if (take_at(i, st, pid, wp))
				return (int)i;
		/* another taker may take the one we raised the mark for
		 * first (it scans below the new mark): raise it again */
		while ((n = atomic_load(entries_used)) < PL_PROC_MAX)
			if (atomic_compare_exchange_strong(entries_used, &n,
							   n + 1) &&
			    take_at(n, st, pid, wp))
				return (int)n;
		if (!pl_ledger_reap(-1))
			break;
	}
	return -1;
}

/* A row of our own, with what we counted so far: taken at our first
 * fork or spawn, when others come to share our descriptions (a process
 * that never shares them reads no /proc for this at its start). */
static void own_take(void)
{
	int i;

	if (own >= 0 || !ledger_ready() || !ns_known())
		return;
	i = take(LG_PENDING, (uint32_t)getpid(), &own_word);
	if (i < 0)
		return;
	note(&entries[i], my_start);
	row_fill(row_of(i), pl_refrow);
	own_word = word_of(LG_LIVE, (uint32_t)getpid(), own_word >> 34);
	atomic_store(&entries[i].word, own_word);
	pl_refrow = row_of(i);
	own = i;
}

/* Before a fork or spawn, the child's references raised already: its
 * counts, ours now, in an entry of its own (or private memory, which
 * fork copies). */
void pl_ledger_fork_prepare(void)
{
	own_take();
	child_prepared = true;
	child = ledger_ready() && ns_known() ?
		take(LG_PENDING, (uint32_t)getpid(), &child_word) : -1;
	if (child >= 0) {
		note(&entries[child], 0);
		row_fill(row_of(child), pl_refrow);
	} else {
		memcpy(child_private, pl_refrow, LG_ROW_BYTES);
	}
}

/*
 * After it, in the parent.  failed: no child will count them, give them
 * back (true: done here; false: the caller gives back its private
 * counts).  Else pid (0: not known, as for system and popen) is the
 * child's: the entry waits for it (the child's import names it).
 */
bool pl_ledger_fork_parent(bool failed, pid_t pid)
{
	bool done = child >= 0;

	if (failed && child >= 0) {
		drain(child, child_word);
	} else if (child >= 0 && pid > 0) {
		uint64_t w = child_word;

		atomic_compare_exchange_strong(&entries[child].word, &w,
				word_of(LG_LIVE, (uint32_t)pid,
					child_word >> 34));
	}
	child = -1;
	child_prepared = false;
	return done;
}

/* The entry the spawn just prepared waits for its image (system, popen:
 * the pid is not known here): its word, for pl_ledger_spawn_over. */
uint64_t pl_ledger_pending(int *idx)
{
	*idx = child;
	return child_word;
}

/* A spawn's file actions give its image delta more descriptors of
 * description desc (its references raised before, lowered after). */
void pl_ledger_child_add(unsigned int desc, int delta)
{
	if (child_prepared && child >= 0)
		row_of(child)[desc] = (uint16_t)(row_of(child)[desc] + delta);
}

/* A spawn whose image is gone (system returned): an entry it never took
 * is given back. */
void pl_ledger_spawn_over(int idx, uint64_t w)
{
	uint64_t cw;

	if (idx >= 0 && entries && word_st(w) == LG_PENDING &&
	    atomic_load(&entries[idx].word) == w && claim(idx, w, &cw))
		drain(idx, cw);
}

/*
 * In a fork child.  True when the fork was prepared (our wrapper): the
 * prepared counts are ours (the parent names the entry ours: a child
 * stores nothing there, its pid may be of a namespace of its own).
 * False for a fork made inside libc (daemon(3)): the caller raises the
 * references for us, counted privately (the parent's row, should the
 * parent end without closing, is then given back for the parent alone).
 */
bool pl_ledger_fork_child(void)
{
	bool prepared = child_prepared;

	if (!prepared && own >= 0)
		memcpy(child_private, pl_refrow, LG_ROW_BYTES);
	if (prepared && child >= 0)
		pl_refrow = row_of(child);
	else if (prepared || own >= 0)
		pl_refrow = child_private;
	own = prepared ? child : -1;
	own_word = child_word;
	child = -1;
	child_prepared = false;
	/* ours differ (our start time; perhaps our namespaces): read
	 * again when next needed */
	my_pidns = 0;
	return prepared;
}

/* Our entry's word now: the parent of a fork child names it after the
 * fork (pending until then); nobody else changes it while we run. */
static uint64_t own_now(void)
{
	uint64_t w = atomic_load(&entries[own].word);

	if (w >> 34 == own_word >> 34 &&
	    (word_st(w) == LG_PENDING || word_st(w) == LG_LIVE))
		own_word = w;
	return own_word;
}

/* "R<entry>.<word>;" for a new image's environment (an exec: our own
 * entry; a spawn, prepared: the one prepared for it); 0 when there is
 * none. */
int pl_ledger_env(char *buf, size_t size)
{
	int i = child_prepared ? child : own;
	uint64_t w;

	if (i < 0)
		return 0;
	w = child_prepared ? child_word : own_now();
	return snprintf(buf, size, "R%d.%llx;", i, (unsigned long long)w);
}

/*
 * A new image, told of entry i with word w: ours if it still is that, or
 * names us (an exec: our own; a spawn: one prepared for us, which the
 * parent may have named us in since).  Its namespaces are ours already
 * (an exec or a spawn keeps them; the one that took the entry noted
 * them).  True: pl_refrow counts what the image before us held; false:
 * nothing is counted yet.
 */
bool pl_ledger_import(int i, uint64_t w)
{
	uint64_t live, now;

	/* only an entry someone took (below the mark) is named here */
	if (i < 0 || i >= PL_PROC_MAX || !ledger_ready() ||
	    (uint32_t)i >= entries_in_use())
		return false;
	if (word_st(w) != LG_PENDING && word_st(w) != LG_LIVE)
		return false;
	if (word_st(w) == LG_LIVE && word_pid(w) != (uint32_t)getpid())
		return false;
	live = word_of(LG_LIVE, (uint32_t)getpid(), w >> 34);
	now = atomic_load(&entries[i].word);
	if (now != w && now != live)
		return false;
	if (!atomic_compare_exchange_strong(&entries[i].word, &w, live) &&
	    w != live)
		return false;
	own = i;
	own_word = live;
	pl_refrow = row_of(i);
	return true;
}

/* Every count of ours given back (pl_exit_release): the entry goes, and
 * anything counted from now on is private. */
void pl_ledger_leave(void)
{
	uint64_t w;

	if (own < 0)
		return;
	w = own_now();
	memset(private_row, 0, sizeof(private_row));
	pl_refrow = private_row;
	atomic_compare_exchange_strong(&entries[own].word, &w, LG_FREE);
	own = -1;
}
