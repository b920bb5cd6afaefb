// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: processes gone (docs/hosts.md "Processes gone").  A host slot
 * of a user-space host names the process that owns it: the kernel boot,
 * the pid namespace, the pid and the process's start time.  A process that
 * ends without leaving (killed, or _exit() in a fork child, as Python's
 * multiprocessing ends its workers) keeps its slot until its lease runs
 * out; 64 such children in a lease filled the host table, and every join
 * on every machine failed with EBUSY until the leases ran out
 * (tests/test_host_table_forks.py).  A joiner that finds the table full
 * declares dead at once the slots whose process it can see is gone, and
 * the join's own look at dead hosts recovers them.
 *
 * Safe by construction: a slot is declared dead only for a process this
 * machine's kernel says has ended (no /proc entry, another start time, or
 * a zombie), in our pid namespace on our boot, so no code of its owner
 * can run again; anything else waits for the lease as before.  The time
 * namespace is part of the identity too: /proc gives start times in the
 * reader's, so a live process of another one would look restarted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libdaxfs-internal.h"
#include "core/internal.h"

struct proc_id {
	u64 boot[2];
	u64 pidns;
	u64 timens;	/* /proc shows start times in the reader's */
};

static int hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* What identifies this machine's processes to each other: the boot and
 * the pid namespace.  -1 when /proc cannot say (then nothing is done). */
static int proc_id_self(struct proc_id *id)
{
	char uuid[64];
	struct stat st;
	u8 b[16];
	int fd, i, n, v, hi;
	ssize_t len;

	memset(id, 0, sizeof(*id));
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, uuid, sizeof(uuid) - 1);
	close(fd);
	if (len < 32)
		return -1;
	uuid[len] = 0;
	for (i = 0, n = 0, hi = -1; uuid[i] && n < 16; i++) {
		v = hex_val(uuid[i]);
		if (v < 0)
			continue;
		if (hi < 0) {
			hi = v;
		} else {
			b[n++] = (u8)(hi << 4 | v);
			hi = -1;
		}
	}
	if (n != 16 || stat("/proc/self/ns/pid", &st))
		return -1;
	memcpy(id->boot, b, 16);
	id->pidns = (u64)st.st_ino;
	/* none before Linux 5.6: 0, the same for every process of the boot */
	if (!stat("/proc/self/ns/time", &st))
		id->timens = (u64)st.st_ino;
	return id->boot[0] || id->boot[1] ? 0 : -1;
}

/*
 * Field 3 (state) and field 22 (start time, clock ticks since boot) of
 * /proc/PID/stat.  0, 1 when there is no such process, -1 when /proc
 * cannot be read as expected.
 */
static int proc_stat(u32 pid, char *state, u64 *start)
{
	char path[64], buf[1024], *p;
	unsigned long long v;
	ssize_t len;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ESRCH ? 1 : -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return errno == ESRCH || len == 0 ? 1 : -1;
	buf[len] = 0;
	/* the command may hold spaces and parentheses: fields follow the
	 * last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -1;
	p += 2;
	*state = *p;
	for (field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -1;
		p++;
	}
	if (sscanf(p, "%llu", &v) != 1)
		return -1;
	*start = v;
	return 0;
}

/* Our /proc shows our own pid namespace: its pids are the ones the slots
 * of our namespace hold. */
static bool proc_is_ours(void)
{
	char state;
	u64 start;

	return proc_stat((u32)getpid(), &state, &start) == 0;
}

/* Whether pid's /proc entry shows an ended process: none, a zombie, or
 * (start != 0) a later process with that pid.  False when /proc cannot
 * say, or when our /proc is not our pid namespace's. */
bool lib_proc_ended(u32 pid, u64 start)
{
	char state;
	u64 s;
	int r;

	if (!proc_is_ours())
		return false;
	r = proc_stat(pid, &state, &s);
	if (r < 0)
		return false;
	return r == 1 || (start && s != start) || state == 'Z' || state == 'X';
}

/* This process's start time and namespaces, as lib_proc_ended compares
 * them; -1 when /proc cannot say. */
int lib_proc_self(u64 *start, u64 *pidns, u64 *timens)
{
	struct proc_id id;
	char state;

	if (proc_id_self(&id) || proc_stat((u32)getpid(), &state, start))
		return -1;
	*pidns = id.pidns;
	*timens = id.timens;
	return 0;
}

void lib_host_proc_note(struct daxfs_handle *h)
{
	struct daxfs_host *hs = daxfs_host_at(&h->fs, h->fs.host);
	struct proc_id id;
	char state;
	u64 start;

	if (proc_id_self(&id) || proc_stat((u32)getpid(), &state, &start))
		return;
	daxfs_store(&hs->proc_boot[0], id.boot[0]);
	daxfs_store(&hs->proc_boot[1], id.boot[1]);
	daxfs_store(&hs->proc_pidns, id.pidns);
	daxfs_store(&hs->proc_timens, id.timens);
	daxfs_store(&hs->proc_start, start);
	/* last: what a reader checks first */
	__atomic_store_n(&hs->proc_gen, h->fs.host_gen, __ATOMIC_RELEASE);
}

/* Is the ALIVE owner of slot (state word w) a process of ours that has
 * ended? */
static bool slot_process_gone(struct daxfs_fs *fs, u32 slot, u64 w,
			      const struct proc_id *me)
{
	struct daxfs_host *hs = daxfs_host_at(fs, slot);
	u64 start, gen = daxfs_host_gen(w);
	char state;
	int r;

	if (__atomic_load_n(&hs->proc_gen, __ATOMIC_ACQUIRE) != gen ||
	    daxfs_load(&hs->proc_boot[0]) != me->boot[0] ||
	    daxfs_load(&hs->proc_boot[1]) != me->boot[1] ||
	    daxfs_load(&hs->proc_pidns) != me->pidns ||
	    daxfs_load(&hs->proc_timens) != me->timens ||
	    daxfs_load32(&hs->kind) != DAXFS_HOST_KIND_USER)
		return false;
	r = proc_stat(daxfs_load32(&hs->pid), &state, &start);
	if (r < 0)
		return false;
	/* gone: no such pid, the pid of a later process, or a zombie */
	if (!r && start == daxfs_load(&hs->proc_start) && state != 'Z' &&
	    state != 'X')
		return false;
	/* the words read are still the slot's owner's */
	return daxfs_load(&hs->state) == w;
}

/* The slots that hold OFD or flock locks (lock_carriers). */
struct carriers {
	u8 *slot;
	u32 n;
};

static void carrier_note(void *ctx, u64 ino, const struct daxfs_lock_req *l,
			 bool waiting)
{
	struct carriers *c = ctx;

	if (!waiting && l->kind != DAXFS_LCK_POSIX && l->host < c->n)
		c->slot[l->host] = 1;
}

/*
 * A slot of an ended process that holds OFD or flock locks is left to its
 * lease: the locks may be those of a description other processes still
 * hold, which their heartbeats are about to take over (docs/locks.md
 * "Descriptions shared across hosts"); declared dead now, it would drop
 * them.  NULL (no memory): every such slot is left.
 */
static u8 *lock_carriers(struct daxfs_fs *fs)
{
	struct carriers c = { calloc(fs->sb.max_hosts, 1), fs->sb.max_hosts };

	if (c.slot)
		daxfs_lock_list(fs, 0, carrier_note, &c);
	return c.slot;
}

int lib_host_proc_reap(struct daxfs_fs *fs)
{
	struct proc_id me;
	u8 *carry = NULL;
	bool looked = false;
	u32 slot;
	u64 w;
	int n = 0;

	if (proc_id_self(&me) || !proc_is_ours())
		return 0;
	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		w = daxfs_load(&daxfs_host_at(fs, slot)->state);
		if (daxfs_host_st(w) != DAXFS_HOST_ALIVE ||
		    !slot_process_gone(fs, slot, w, &me))
			continue;
		if (!looked) {
			carry = lock_carriers(fs);
			looked = true;
		}
		if (!carry || carry[slot])
			continue;
		/* as a lease that ran out: ALIVE -> DEAD of that generation;
		 * the join's look at dead hosts recovers it */
		if (daxfs_cas(&daxfs_host_at(fs, slot)->state, &w,
			      daxfs_host_word(daxfs_host_gen(w),
					      DAXFS_HOST_DEAD)))
			n++;
	}
	free(carry);
	return n;
}

/* Is any ALIVE slot a user host that never stored its process identity
 * (killed inside its join, before lib_host_proc_note)?  Only its lease
 * can tell that it ended (region.c join_after_leases). */
bool lib_hosts_unnamed(struct daxfs_fs *fs)
{
	u32 slot;
	u64 w;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		struct daxfs_host *hs = daxfs_host_at(fs, slot);

		w = daxfs_load(&hs->state);
		if (daxfs_host_st(w) == DAXFS_HOST_ALIVE &&
		    daxfs_load32(&hs->kind) == DAXFS_HOST_KIND_USER &&
		    __atomic_load_n(&hs->proc_gen, __ATOMIC_ACQUIRE) !=
		    daxfs_host_gen(w))
			return true;
	}
	return false;
}

/* Is any slot declared dead, or being recovered: on its way to free? */
bool lib_hosts_settling(struct daxfs_fs *fs)
{
	u32 slot, st;

	for (slot = 0; slot < fs->sb.max_hosts; slot++) {
		st = daxfs_host_st(daxfs_load(&daxfs_host_at(fs, slot)->state));
		if (st == DAXFS_HOST_DEAD || st == DAXFS_HOST_RECOVERING)
			return true;
	}
	return false;
}

int daxfs_host_process_gone(struct daxfs_handle *h, uint32_t slot,
			    uint64_t *gen)
{
	struct daxfs_fs *fs = &h->fs;
	struct proc_id me;
	u64 w;

	if (slot >= fs->sb.max_hosts || slot == fs->host ||
	    proc_id_self(&me) || !proc_is_ours())
		return 0;
	w = daxfs_load(&daxfs_host_at(fs, slot)->state);
	if (daxfs_host_st(w) != DAXFS_HOST_ALIVE ||
	    !slot_process_gone(fs, slot, w, &me))
		return 0;
	*gen = daxfs_host_gen(w);
	return 1;
}
