// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-fuse: the files open on this host.
 *
 * Opens are published in the host's open set once per inode, not once per
 * open(2) (the set has a per-host cap: a program opening one file 100,000
 * times must not exhaust it), and retracted at the last release.  While
 * published, an unlink of the last name on any host leaves the inode
 * usable (docs/open-files.md).  The kernel keeps a file open while it is
 * mapped, so a mapping holds its inode too.
 *
 * The kernel's page cache in front of these files does not see stores
 * that other hosts make to the region.  The poller compares each open
 * file's change counter every poll_ms and, when it moved, tells the
 * kernel to drop its cached attributes and pages of that file
 * (fuse_lowlevel_notify_inval_inode).  Files that are not open need no
 * poll: every open(2) drops the file's pages (no FOPEN_KEEP_CACHE), and
 * their attributes expire after the entry/attribute timeout.
 *
 * A host declared dead while alive (stopped past its lease) joins again
 * as a new host (libdaxfs).  Recovery dropped its open-set entries, so
 * the opens made before are stale: each entry and each open file notes
 * the handle's join count (daxfs_handle_joins) at open, and I/O on an
 * open noted before the last join gets -ESTALE (dfuse_open_stale).  A
 * later open of the same inode makes an entry of its own, published
 * again.  libdaxfs itself would refuse I/O to every open of an inode
 * that has a stale one; the first look after a rejoin lets go of the
 * stale entries there (let_go), so that only their own opens fail.
 *
 * The same thread does what daxfs.ko's lease work does for an idle host
 * (kernel/super.c): every lease/4 it frees what this host retired once no
 * host can read it (every 2nd tick: df tells the truth after an unlink)
 * and recovers hosts whose lease ran out, with their cache pins (every
 * 4th tick): a killed mount or program is recovered even when every
 * survivor is idle.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "core/pcache.h"
#include "dfuse.h"

struct dfuse_open {
	struct dfuse_open *next;
	uint64_t ino;
	uint64_t opens;			/* open(2)s on this host */
	uint64_t change;		/* change counter last seen */
	uint64_t join;			/* daxfs_handle_joins() at publish */
	bool dir;			/* an open directory: not published */
	bool let_go;			/* stale: closed in libdaxfs already */
	struct daxfs_attr last;		/* a directory's attributes at open */
};

static struct dfuse_open **bucket(struct dfuse *d, uint64_t ino)
{
	return &d->buckets[daxfs_mix64(ino) & (d->nr_buckets - 1)];
}

static struct dfuse_open *find(struct dfuse *d, uint64_t ino, uint64_t join)
{
	struct dfuse_open *o;

	for (o = *bucket(d, ino); o; o = o->next)
		if (o->ino == ino && o->join == join)
			return o;
	return NULL;
}

/* An entry's close in libdaxfs, once: at its last release or at let_go. */
static void unpublish(struct dfuse *d, struct dfuse_open *o)
{
	if (!o->dir && !o->let_go)
		daxfs_file_close(d->h, o->ino);	/* -ESTALE when stale */
	o->let_go = true;
}

/*
 * After a rejoin (under d->lock): closes the stale entries in libdaxfs,
 * whose per-inode check would refuse I/O to the new opens of the same
 * inodes too.  Their own opens still fail: dfuse_open_stale().
 */
static void let_go(struct dfuse *d, uint64_t join)
{
	size_t i;

	if (join <= d->join_seen)
		return;		/* seen, or a count read before a later one */
	d->join_seen = join;
	for (i = 0; i < d->nr_buckets; i++) {
		struct dfuse_open *o;

		for (o = d->buckets[i]; o; o = o->next)
			if (o->join != join)
				unpublish(d, o);
	}
}

int dfuse_opens_init(struct dfuse *d)
{
	d->nr_buckets = 1024;
	d->buckets = calloc(d->nr_buckets, sizeof(*d->buckets));
	if (!d->buckets)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->poll_cond, NULL);
	return 0;
}

/* Retracts what is still published (the kernel released everything on a
 * clean unmount; after an abort it may not have). */
void dfuse_opens_destroy(struct dfuse *d)
{
	size_t i;

	for (i = 0; d->buckets && i < d->nr_buckets; i++) {
		while (d->buckets[i]) {
			struct dfuse_open *o = d->buckets[i];

			d->buckets[i] = o->next;
			unpublish(d, o);
			free(o);
		}
	}
	free(d->buckets);
	d->buckets = NULL;
}

/* A new entry for ino with one open (under d->lock), or NULL. */
static struct dfuse_open *add(struct dfuse *d, uint64_t ino, uint64_t join,
			      uint64_t change, bool dir)
{
	struct dfuse_open *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->ino = ino;
	o->opens = 1;
	o->change = change;
	o->join = join;
	o->dir = dir;
	o->next = *bucket(d, ino);
	*bucket(d, ino) = o;
	d->nr_open++;
	return o;
}

/* One more open of ino if it is in the table (under d->lock). */
static struct dfuse_open *again(struct dfuse *d, uint64_t ino, uint64_t join)
{
	struct dfuse_open *o = find(d, ino, join);

	if (o)
		o->opens++;
	return o;
}

int dfuse_open_get(struct dfuse *d, uint64_t ino, uint64_t *join)
{
	struct daxfs_attr a;
	int err = 0;

	/* a rejoin that is due happens first (daxfs_handle_fs); the count
	 * is read before the publish: a rejoin after that makes this open
	 * stale (libdaxfs marks it so), never one we take for fresh */
	daxfs_handle_fs(d->h);
	*join = daxfs_handle_joins(d->h);
	pthread_mutex_lock(&d->lock);
	let_go(d, *join);
	if (again(d, ino, *join))
		goto out;
	/* under the lock: a release racing this first open must not
	 * retract the entry we are about to publish */
	err = daxfs_file_open(d->h, ino);
	if (err)
		goto out;
	err = daxfs_fstat(d->h, ino, &a);
	if (!err && !add(d, ino, *join, a.change, false))
		err = -ENOMEM;
	if (err)
		daxfs_file_close(d->h, ino);
out:
	pthread_mutex_unlock(&d->lock);
	return err;
}

void dfuse_open_put(struct dfuse *d, uint64_t ino, uint64_t join)
{
	struct dfuse_open **p, *o;

	pthread_mutex_lock(&d->lock);
	for (p = bucket(d, ino); (o = *p); p = &o->next) {
		if (o->ino != ino || o->join != join)
			continue;
		if (--o->opens == 0) {
			*p = o->next;
			d->nr_open--;
			unpublish(d, o);
			free(o);
		}
		break;
	}
	pthread_mutex_unlock(&d->lock);
}

/*
 * Open directories are counted here too, not published: the core frees a
 * directory when it is removed, whoever has it open.  What is kept is its
 * attributes, for fstat(2) on an open directory that was removed or
 * renamed over (nlink 0, as on other filesystems).
 */
int dfuse_dir_get(struct dfuse *d, uint64_t ino, const struct daxfs_attr *a,
		  uint64_t *join)
{
	struct dfuse_open *o;
	int err = 0;

	daxfs_handle_fs(d->h);
	*join = daxfs_handle_joins(d->h);
	pthread_mutex_lock(&d->lock);
	o = again(d, ino, *join);
	if (!o)
		o = add(d, ino, *join, a->change, true);
	if (!o)
		err = -ENOMEM;
	else if (o->dir)
		o->last = *a;
	pthread_mutex_unlock(&d->lock);
	return err;
}

/* An entry of ino, of any join (under d->lock). */
static struct dfuse_open *find_any(struct dfuse *d, uint64_t ino)
{
	struct dfuse_open *o;

	for (o = *bucket(d, ino); o; o = o->next)
		if (o->ino == ino)
			return o;
	return NULL;
}

bool dfuse_dir_gone(struct dfuse *d, uint64_t ino, struct daxfs_attr *a)
{
	struct dfuse_open *o;
	bool found;

	pthread_mutex_lock(&d->lock);
	o = find_any(d, ino);
	found = o && o->dir;
	if (found) {
		*a = o->last;
		a->nlink = 0;
	}
	pthread_mutex_unlock(&d->lock);
	return found;
}

bool dfuse_ino_stale(struct dfuse *d, uint64_t ino)
{
	uint64_t join = daxfs_handle_joins(d->h);
	struct dfuse_open *o;
	bool stale = false;

	pthread_mutex_lock(&d->lock);
	for (o = *bucket(d, ino); o && !stale; o = o->next)
		stale = o->ino == ino && o->join != join;
	pthread_mutex_unlock(&d->lock);
	return stale;
}

struct seen {
	uint64_t ino, join, change;
};

/* The open files and the change each had when last seen. */
static size_t snapshot(struct dfuse *d, struct seen **out)
{
	struct seen *s;
	size_t i, n = 0;

	pthread_mutex_lock(&d->lock);
	s = malloc((d->nr_open + 1) * sizeof(*s));
	for (i = 0; s && i < d->nr_buckets; i++) {
		struct dfuse_open *o;

		for (o = d->buckets[i]; o; o = o->next)
			s[n++] = (struct seen){ o->ino, o->join, o->change };
	}
	pthread_mutex_unlock(&d->lock);
	*out = s;
	return n;
}

static void remember(struct dfuse *d, const struct seen *s, uint64_t change)
{
	struct dfuse_open *o;

	pthread_mutex_lock(&d->lock);
	o = find(d, s->ino, s->join);
	if (o)
		o->change = change;
	pthread_mutex_unlock(&d->lock);
}

static void poll_once(struct dfuse *d)
{
	struct seen *s;
	size_t i, n;

	/* a rejoin is seen within poll_ms even when no file is opened */
	daxfs_handle_fs(d->h);
	pthread_mutex_lock(&d->lock);
	let_go(d, daxfs_handle_joins(d->h));
	pthread_mutex_unlock(&d->lock);
	n = snapshot(d, &s);

	for (i = 0; i < n; i++) {
		struct daxfs_attr a;

		if (daxfs_fstat(d->h, s[i].ino, &a) ||
		    !daxfs_change_bytes_moved(s[i].change, a.change))
			continue;
		/* remember first: a change after this read is seen next time */
		remember(d, &s[i], a.change);
		fuse_lowlevel_notify_inval_inode(d->se, dfuse_node(d, s[i].ino), 0, 0);
	}
	free(s);
}

static uint64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static void housekeeping(struct dfuse *d, uint64_t tick)
{
	struct daxfs_fs *fs = daxfs_handle_fs(d->h);

	if (d->ro)
		return;
	if (tick % 2 == 0)
		daxfs_region_reclaim(d->h);
	if (tick % 4 == 0) {
		daxfs_recover_dead_hosts(fs);
		daxfs_pcache_reap(fs);
	}
}

static void *poller(void *arg)
{
	struct dfuse *d = arg;
	uint64_t tick_ms = daxfs_handle_fs(d->h)->lease_ms / 4;
	uint64_t next = mono_ms() + tick_ms, ticks = 0;
	unsigned int wait_ms = d->poll_ms;
	struct timespec t;

	if (tick_ms && tick_ms < wait_ms)
		wait_ms = (unsigned int)tick_ms;

	pthread_mutex_lock(&d->lock);
	while (!d->poll_stop) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		t.tv_sec += wait_ms / 1000 + t.tv_nsec / 1000000000L;
		t.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&d->poll_cond, &d->lock, &t);
		if (d->poll_stop)
			break;
		pthread_mutex_unlock(&d->lock);
		poll_once(d);
		if (mono_ms() >= next) {
			housekeeping(d, ++ticks);
			next = mono_ms() + tick_ms;
		}
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int dfuse_poller_start(struct dfuse *d)
{
	pthread_condattr_t ca;
	int err;

	/* timed waits on the monotonic clock: a stepped wall clock must not
	 * stall the checks */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&d->poll_cond);
	pthread_cond_init(&d->poll_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&d->poller, NULL, poller, d);
	if (err)
		return -err;
	d->poll_running = true;
	return 0;
}

void dfuse_poller_stop(struct dfuse *d)
{
	if (!d->poll_running)
		return;
	pthread_mutex_lock(&d->lock);
	d->poll_stop = true;
	pthread_cond_signal(&d->poll_cond);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->poller, NULL);
	d->poll_running = false;
}
