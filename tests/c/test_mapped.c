// SPDX-License-Identifier: GPL-2.0 OR MIT
/* The pages a process is known to map (core/mapped.h, lib/mapped.c): the
 * bitmap's marks (word edges, clamping, threads marking at once), and
 * what libdaxfs records: nothing for a fresh host but the batches it
 * populated, everything with DAXFS_OPEN_PREFAULT, daxfs_region_populate's
 * range, nothing in a fork's child (its page tables are new), and no map
 * for a read-only handle.  Data written either way reads back. */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tutil.h"
#include "core/mapped.h"
#include "daxfs/libdaxfs.h"

#define MiB		(1ULL << 20)
#define PG		DAXFS_PAGE_SIZE
#define NPAGES		300	/* not a multiple of 64: a partial last word */

static u64 bits[(NPAGES + 63) / 64];
static u8 fake_region[1];

static struct daxfs_fs fake(void)
{
	struct daxfs_fs fs;

	memset(&fs, 0, sizeof(fs));
	memset(bits, 0, sizeof(bits));
	fs.base = fake_region;	/* only offsets are computed from it */
	fs.size = NPAGES * PG;
	fs.mapped = bits;
	return fs;
}

static u64 count_marked(struct daxfs_fs *fs)
{
	u64 pg, n = 0;

	for (pg = 0; pg < NPAGES; pg++)
		n += daxfs_known_mapped(fs, fs->base + pg * PG);
	return n;
}

static void test_marks(void)
{
	struct daxfs_fs fs = fake();
	u64 pg;

	/* pages 60..131: across two word edges; a range starting and
	 * ending inside pages covers both pages */
	daxfs_mapped_mark(&fs, 60 * PG + 100, 71 * PG);
	for (pg = 0; pg < NPAGES; pg++)
		CHECK_EQ(daxfs_known_mapped(&fs, fs.base + pg * PG + 7),
			 pg >= 60 && pg <= 131);
	/* a whole word */
	daxfs_mapped_mark(&fs, 192 * PG, 64 * PG);
	CHECK_EQ(bits[3], ~0ULL);
	CHECK_EQ(count_marked(&fs), 72 + 64);
	/* nothing, past the end, and clamped at the end */
	daxfs_mapped_mark(&fs, 5 * PG, 0);
	daxfs_mapped_mark(&fs, NPAGES * PG, 10 * PG);
	CHECK_EQ(count_marked(&fs), 72 + 64);
	daxfs_mapped_mark(&fs, (NPAGES - 2) * PG, ~0ULL);
	CHECK_EQ(count_marked(&fs), 72 + 64 + 2);
	CHECK_EQ(bits[4] >> (NPAGES % 64), 0);	/* no bit past the region */
	/* no map kept: nothing is known, marking does nothing */
	fs.mapped = NULL;
	daxfs_mapped_mark(&fs, 0, NPAGES * PG);
	CHECK(!daxfs_known_mapped(&fs, fs.base));
}

struct marker {
	struct daxfs_fs *fs;
	u64 first;
	pthread_t t;
};

/* every 4th page from first, one page per mark: words gain bits from
 * four threads at once */
static void *mark_every_4th(void *arg)
{
	struct marker *m = arg;
	u64 pg;

	for (pg = m->first; pg < NPAGES; pg += 4)
		daxfs_mapped_mark(m->fs, pg * PG, PG);
	return NULL;
}

static void test_threads_mark_at_once(void)
{
	struct daxfs_fs fs;
	struct marker m[4];
	int round, i;

	for (round = 0; round < 200; round++) {
		fs = fake();
		for (i = 0; i < 4; i++) {
			m[i].fs = &fs;
			m[i].first = (u64)i;
			pthread_create(&m[i].t, NULL, mark_every_4th, &m[i]);
		}
		for (i = 0; i < 4; i++)
			pthread_join(m[i].t, NULL);
		if (count_marked(&fs) != NPAGES)
			break;
	}
	CHECK_EQ(count_marked(&fs), NPAGES);
}

static char path[64];

static u64 region_marked(struct daxfs_handle *h)
{
	struct daxfs_fs *fs = daxfs_handle_fs(h);
	u64 off, n = 0;

	for (off = 0; off < fs->size; off += PG)
		n += daxfs_known_mapped(fs, fs->base + off);
	return n;
}

static void write_file(struct daxfs_handle *h, const char *name, u64 len)
{
	static u8 buf[64 * 1024];
	uint64_t ino;
	u64 off;

	memset(buf, 0x3c, sizeof(buf));
	CHECK_EQ(daxfs_path_create(h, name, 0644, 0, &ino), 1);
	for (off = 0; off < len; off += sizeof(buf))
		CHECK_EQ(daxfs_pwrite(h, ino, buf, sizeof(buf), off),
			 sizeof(buf));
}

static bool file_reads_back(struct daxfs_handle *h, const char *name,
			    u64 len)
{
	static u8 buf[64 * 1024];
	uint64_t ino;
	u64 off, i;

	if (daxfs_path_resolve(h, name, 1, &ino))
		return false;
	for (off = 0; off < len; off += sizeof(buf)) {
		if (daxfs_pread(h, ino, buf, sizeof(buf), off) != sizeof(buf))
			return false;
		for (i = 0; i < sizeof(buf); i++)
			if (buf[i] != 0x3c)
				return false;
	}
	return true;
}

static void test_library_records(void)
{
	struct daxfs_mkfs_opts o;
	struct daxfs_handle *h;
	struct daxfs_fs *fs;
	u64 pages, after;
	pid_t pid;
	int st;

	memset(&o, 0, sizeof(o));
	o.force = 1;
	snprintf(path, sizeof(path), "/dev/shm/daxfs-tmapped-%d", getpid());
	CHECK_EQ(daxfs_region_create(path, 64 * MiB, &o), 0);

	/* a plain host: nothing known until it populates fresh batches
	 * (from its second on), which it then knows */
	CHECK_EQ(daxfs_region_open(path, 0, &h), 0);
	fs = daxfs_handle_fs(h);
	pages = fs->size / PG;
	CHECK(fs->mapped != NULL);
	CHECK_EQ(region_marked(h), 0);
	write_file(h, "/a", 4 * MiB);
	after = region_marked(h);
	CHECK(after >= 4 * MiB / PG - 2 * 64 && after < pages / 2);
	/* populate: the page's bit; outside the region: -EINVAL */
	CHECK_EQ(daxfs_region_populate(h, fs->base + fs->size - PG - 1, 1), 0);
	CHECK(daxfs_known_mapped(fs, fs->base + fs->size - 2 * PG));
	CHECK_EQ(region_marked(h), after + 1);
	CHECK_EQ(daxfs_region_populate(h, fs->base + fs->size, PG), -EINVAL);
	CHECK_EQ(daxfs_region_populate(h, (u8 *)fs->base - PG, PG), -EINVAL);
	daxfs_region_close(h);

	/* pre-faulted: every page known */
	CHECK_EQ(daxfs_region_open(path, DAXFS_OPEN_PREFAULT, &h), 0);
	CHECK_EQ(region_marked(h), pages);
	write_file(h, "/b", 4 * MiB);
	CHECK(file_reads_back(h, "/a", 4 * MiB));
	CHECK(file_reads_back(h, "/b", 4 * MiB));
	/* a fork's child knows none (and writes all the same); the
	 * parent keeps its map */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		bool ok = region_marked(h) == 0;

		write_file(h, "/c", 1 * MiB);
		ok = ok && file_reads_back(h, "/c", 1 * MiB);
		daxfs_region_close(h);
		_exit(ok && !t_fail ? 0 : 1);
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	CHECK_EQ(region_marked(h), pages);
	CHECK(file_reads_back(h, "/c", 1 * MiB));
	daxfs_region_close(h);

	/* read-only: writes nothing, keeps no map */
	CHECK_EQ(daxfs_region_open(path, DAXFS_OPEN_RDONLY |
				   DAXFS_OPEN_PREFAULT, &h), 0);
	CHECK(daxfs_handle_fs(h)->mapped == NULL);
	CHECK(file_reads_back(h, "/b", 4 * MiB));
	daxfs_region_close(h);
	unlink(path);
}

int main(void)
{
	RUN(test_marks);
	RUN(test_threads_mark_at_once);
	RUN(test_library_records);
	return t_done();
}
