// SPDX-License-Identifier: GPL-2.0
/*
 * vm/helpers/kfuzz PHYS SIZE HSDEV MNT - the guest side of the kernel
 * corrupt-image fuzz (vm/kfuzz.py, docs/testing.md "Kernel image fuzz").
 *
 * One guest mounts image after image without rebooting: the host writes a
 * corrupted image into the shared memory file behind PHYS/SIZE, then
 * bumps a sequence number in the handshake device HSDEV (a second,
 * raw-mode nvdimm, read and written with O_DIRECT so that neither side
 * reads a stale page cache).  For each image this program mounts it
 * (mount -t daxfs -o phys=PHYS,size=SIZE), runs a short bounded workload
 * over everything (walk, stat, read, create, write, append, truncate,
 * rename, unlink, mkdir/rmdir, symlink/readlink, mmap), unmounts, scans
 * the kernel log for oopses, WARNs, BUGs, soft lockups and hung tasks,
 * and reports to the host.
 *
 * Handshake device, host page at 0: struct hs_host; guest page at 4096:
 * struct hs_guest.  A kernel hang leaves seq_done behind: the host's
 * per-image timeout notices it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define SECTOR		512	/* the pmem device's logical block */
#define HOST_MAGIC	0x54534f485a464b44ULL	/* "DKFZHOST" */
#define GUEST_MAGIC	0x545345475a464b44ULL	/* "DKFZGEST" */
#define FL_VALIDATE	1ULL
#define FL_STOP		2ULL
#define FL_SELFTEST	4ULL	/* log a fake WARNING after the image */
#define MAX_ENTRIES	400	/* entries the walk visits per image */
#define MAX_DEPTH	8
#define READ_MAX	(128 << 10)	/* bytes read per file */
#define MAP_MAX		(16 << 10)	/* bytes mapped per file */
#define MAX_FILE_SIZE	(1LL << 48)	/* DAXFS_MAX_FILE_SIZE */
#define MSG_LEN		2048
#define HOST_GONE_POLLS	100000	/* 2 ms polls (200 s and more) without a new image */

struct hs_host {
	uint64_t magic;
	uint64_t seq;		/* image number + 1 */
	uint64_t flags;
	uint64_t pad[5];
	char opts[256];		/* more mount options ("backing=..."), or "" */
};

/* errs[e]: operations that failed with errno e (e < 160) */
struct hs_guest {
	uint64_t magic;
	uint64_t seq_done;
	int64_t mount_err;	/* 0 or the errno of mount(2) */
	uint32_t ops, fails;
	uint32_t wrong;		/* answers no healthy filesystem gives: data
				 * read back that differs from what was
				 * written, an impossible file size */
	uint32_t bad;		/* bad kernel log lines (oops, WARN, ...) */
	uint32_t sigbus;	/* mapping accesses that raised SIGBUS */
	uint32_t umount_err;	/* errno of umount(2), 0 when it worked */
	uint32_t errs[160];
	char msg[MSG_LEN];	/* the first bad kernel log lines */
};

static const char *mnt, *hsdev;
static char opts[512];
static const char *phys, *size;
static int hs_fd, kmsg_fd, null_fd, verbose;
static struct hs_guest *res;
static char *buf, *pat;
static unsigned int entries;
static char prev[4096];		/* the entry the walk visited before */

static sigjmp_buf jb;
static volatile sig_atomic_t armed;

static void on_sigbus(int sig)
{
	if (!armed)
		_exit(3);
	siglongjmp(jb, 1);
}

/* Counts an operation: ret < 0 is a failure with errno (KFUZZ_VERBOSE:
 * printed with the line of the call). */
static long op_at(long ret, int line)
{
	int e = errno;

	res->ops++;
	if (ret < 0) {
		res->fails++;
		res->errs[e >= 0 && e < 160 ? e : 0]++;
		if (verbose)
			fprintf(stderr, "kfuzz: line %d: %s\n", line, strerror(e));
	}
	errno = e;
	return ret;
}

#define op(x) op_at((x), __LINE__)

/* Takes back the count of a failure that is the right answer. */
static void expected(long ret, int e)
{
	if (ret < 0 && errno == e)
		res->fails--, res->errs[e]--;
}

static void msg_add(const char *line, size_t len)
{
	size_t have = strlen(res->msg);

	if (have + len + 2 >= MSG_LEN)
		return;
	memcpy(res->msg + have, line, len);
	res->msg[have + len] = '\n';
}

/* The kernel log records since the last scan; counts the bad ones. */
static void scan_kmsg(void)
{
	static const char *const bad[] = {
		"WARNING:", "BUG:", "Oops", "soft lockup", "blocked for more than",
		"general protection", "RCU Stall", "rcu_sched detected", "Call Trace",
		"still has objects", "UBSAN", "KASAN", "stack-protector", "hung_task",
	};
	char rec[2048];
	ssize_t n;
	size_t i;

	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: read on */
		if (n <= 0)
			return;
		rec[n] = 0;
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (!strstr(rec, bad[i]))
				continue;
			res->bad++;
			msg_add(rec, strcspn(rec, "\n"));
			break;
		}
	}
}

/* The positive control of scan_kmsg: a kernel log line it must count
 * (vm/kfuzz.py --selftest; kfuzz.sh's final scan skips it). */
static void self_test(void)
{
	static const char line[] = "<4>kfuzz self-test: WARNING: injected by the host\n";
	int fd = open("/dev/kmsg", O_WRONLY);

	if (fd < 0 || write(fd, line, sizeof(line) - 1) < 0)
		perror("kfuzz: /dev/kmsg");
	if (fd >= 0)
		close(fd);
}

static void hs_read(struct hs_host *h)
{
	static char *pg;

	if (!pg && posix_memalign((void **)&pg, PAGE, PAGE))
		exit(2);
	if (pread(hs_fd, pg, PAGE, 0) != PAGE) {
		perror("kfuzz: read handshake");
		exit(2);
	}
	memcpy(h, pg, sizeof(*h));
}

/*
 * The answer in two writes: the page with seq_done still the one the host
 * saw last, then the first sector again with the new seq_done.  The host
 * polls seq_done, and one write of the page lands front to back: it saw
 * the new seq_done with the previous image's counts still behind it (an
 * untouched image "failed" with the EUCLEAN counts of the corrupt image
 * before it, in a CI run on a loaded machine).
 */
static void hs_write(void)
{
	static uint64_t published;
	uint64_t seq = res->seq_done;

	res->seq_done = published;
	if (pwrite(hs_fd, res, PAGE, PAGE) != PAGE)
		goto fail;
	res->seq_done = seq;
	if (pwrite(hs_fd, res, SECTOR, PAGE) != SECTOR)
		goto fail;
	published = seq;
	return;
fail:
	perror("kfuzz: write handshake");
	exit(2);
}

static void path_join(char *out, size_t len, const char *dir, const char *name)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static void read_file(const char *path, off_t size)
{
	off_t offs[3] = { 0, size / 2, size > PAGE ? size - PAGE : 0 };
	long done = 0, n;
	int fd, i;

	fd = op(open(path, O_RDONLY | O_NONBLOCK));
	if (fd < 0)
		return;
	for (i = 0; i < 3 && done < READ_MAX; i++) {
		n = op(pread(fd, buf, 64 << 10, offs[i]));
		if (n > 0)
			done += n;
	}
	while (done < READ_MAX && (n = op(read(fd, buf, 64 << 10))) > 0)
		done += n;
	/* the walks behind SEEK_DATA/SEEK_HOLE, and splice_read */
	expected(op(lseek(fd, 0, SEEK_DATA)), ENXIO);	/* no data */
	expected(op(lseek(fd, 0, SEEK_HOLE)), ENXIO);	/* empty file */
	op(lseek(fd, 0, SEEK_END));
	if (null_fd >= 0) {
		off_t at = 0;

		op(sendfile(null_fd, fd, &at, 16 << 10));
	}
	close(fd);
}

/* Maps the first 4 pages of an existing file and touches each (a corrupt
 * radix tree must not map a page from outside the file's own); every
 * other file is also written through the mapping. */
static void map_file(const char *path, int nth)
{
	struct sigaction sa = { .sa_handler = on_sigbus, .sa_flags = SA_NODEFER };
	int rw = nth & 1, fd;
	struct stat st;
	volatile char *m;
	volatile char sum = 0;
	size_t len, i;

	fd = op(open(path, (rw ? O_RDWR : O_RDONLY) | O_NONBLOCK));
	if (fd < 0)
		return;
	/* the size now: an earlier step of the walk may have cut the file */
	if (op(fstat(fd, &st)) < 0 || st.st_size <= 0) {
		close(fd);
		return;
	}
	len = st.st_size > MAP_MAX ? MAP_MAX : (size_t)st.st_size;
	m = mmap(NULL, len, PROT_READ | (rw ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	close(fd);
	if (op(m == MAP_FAILED ? -1 : 0) < 0)
		return;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(jb, 1)) {
		armed = 0;
		res->sigbus++;
		goto out;
	}
	armed = 1;
	for (i = 0; i < len; i += PAGE)
		sum += m[i];
	if (rw)
		m[0] = sum;
	armed = 0;
	if (rw)
		op(msync((void *)m, len, MS_SYNC));
out:
	armed = 0;
	munmap((void *)m, len);
}

/* Changes an existing file: append, cut, extend (the paths that free and
 * reuse the blocks a corrupted radix tree names). */
static void poke_file(const char *path, off_t size, int nth)
{
	int fd = op(open(path, O_RDWR | O_APPEND | O_NONBLOCK));

	if (fd < 0)
		return;
	op(write(fd, pat, 100));
	op(ftruncate(fd, size / 2));
	if (nth == 0)
		op(ftruncate(fd, size + 5000));
	op(fsync(fd));
	close(fd);
}

/* A rename of a name the image brought, and back; sometimes an unlink. */
static void rename_back(const char *path)
{
	char to[4100];

	snprintf(to, sizeof(to), "%s~", path);
	if (op(rename(path, to)) == 0)
		op(rename(to, path));
	if (entries % 5 == 0)
		op(unlink(path));
}

/* setattr with what the inode has (mode, times), and a truncating open
 * of some regular files. */
static void set_attrs(const char *path, const struct stat *st)
{
	int fd;

	if (S_ISLNK(st->st_mode))
		return;
	op(chmod(path, st->st_mode & 07777));
	op(utimensat(AT_FDCWD, path, NULL, 0));
	if (S_ISREG(st->st_mode) && entries % 12 == 0) {
		fd = op(open(path, O_WRONLY | O_TRUNC | O_NONBLOCK));
		if (fd >= 0)
			close(fd);
	}
}

/* Two names the image brought swap places (renameat2 RENAME_EXCHANGE),
 * and back; EINVAL is the answer when one is the other's ancestor. */
static void exchange_back(const char *a, const char *b)
{
	long ret = op(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE));

	if (!ret)
		op(renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE));
	expected(ret, EINVAL);
}

/* Directory positions: read a few, remember one, rewind, seek back. */
static void dir_seek(DIR *d)
{
	long pos = -1;
	int i;

	rewinddir(d);
	for (i = 0; i < 4 && readdir(d); i++)
		if (i == 1)
			pos = telldir(d);
	if (pos < 0)
		return;
	seekdir(d, pos);
	errno = 0;
	op(readdir(d) || !errno ? 0 : -1);
}

/* A name the walk found that lstat cannot load: the calls that make, open
 * or remove a name must answer all the same (an open(O_CREAT) of a name
 * naming no inode went round in daxfs.ko's create: the chaos test's guest
 * hung on it). */
static void meet_unloadable(const char *path)
{
	int fd = op(open(path, O_WRONLY | O_CREAT | O_NONBLOCK, 0644));

	if (fd >= 0)
		close(fd);
	op(mkdir(path, 0755));
	op(unlink(path));
}

static void walk(const char *dir, int depth)
{
	char path[4096], link[256];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (depth > MAX_DEPTH)
		return;
	d = opendir(dir);
	op(d ? 0 : -1);
	if (!d)
		return;
	while (entries < MAX_ENTRIES) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			op(errno ? -1 : 0);
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		entries++;
		path_join(path, sizeof(path), dir, de->d_name);
		if (op(lstat(path, &st)) < 0) {
			meet_unloadable(path);
			continue;
		}
		if (st.st_size < 0 || st.st_size > MAX_FILE_SIZE)
			res->wrong++;	/* no healthy filesystem says so */
		if (entries % 13 == 0 && prev[0])
			exchange_back(prev, path);
		snprintf(prev, sizeof(prev), "%s", path);
		if (entries % 11 == 0)
			rename_back(path);
		if (S_ISDIR(st.st_mode)) {
			walk(path, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			read_file(path, st.st_size);
			map_file(path, entries);
			if (entries % 7 == 0)
				poke_file(path, st.st_size, entries % 3);
		} else if (S_ISLNK(st.st_mode)) {
			op(readlink(path, link, sizeof(link)));
			op(stat(path, &st));
		}
		if (entries % 4 == 0)
			set_attrs(path, &st);
	}
	dir_seek(d);
	closedir(d);
	path_join(path, sizeof(path), dir, "no-such-name");
	op(lstat(path, &st));
}

/* Writes len bytes of the pattern at off and reads them back. */
static void write_check(int fd, off_t off, size_t len)
{
	if (op(pwrite(fd, pat, len, off)) != (long)len)
		return;
	if (op(pread(fd, buf, len, off)) != (long)len)
		return;
	if (memcmp(buf, pat, len))
		res->wrong++;
}

static void mmap_check(const char *path)
{
	struct sigaction sa = { .sa_handler = on_sigbus, .sa_flags = SA_NODEFER };
	volatile char *m = MAP_FAILED;
	int fd;

	fd = op(open(path, O_RDWR | O_CREAT | O_TRUNC, 0644));
	if (fd < 0)
		return;
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	if (op(ftruncate(fd, 3 * PAGE)) < 0)
		goto out;
	m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (op(m == MAP_FAILED ? -1 : 0) < 0)
		goto out;
	if (sigsetjmp(jb, 1)) {
		armed = 0;
		res->sigbus++;
		goto out;
	}
	armed = 1;
	memcpy((char *)m + PAGE, pat, PAGE);
	if (m[0] != 0)		/* a new file's hole reads zeros */
		res->wrong++;
	armed = 0;
	op(msync((void *)m, 3 * PAGE, MS_SYNC));
	if (op(pread(fd, buf, PAGE, PAGE)) == PAGE && memcmp(buf, pat, PAGE))
		res->wrong++;
out:
	armed = 0;
	if (m != MAP_FAILED)
		munmap((void *)m, 3 * PAGE);
	close(fd);
}

/* Creates, changes and removes its own names (and renames a found one). */
static void churn(void)
{
	char d[1024], f[1040], g[1040], s[1040], m[1040], sub[1040], lnk[64];
	long n;
	int fd;

	path_join(d, sizeof(d), mnt, "kfz");
	path_join(f, sizeof(f), d, "f");
	path_join(g, sizeof(g), d, "g");
	path_join(s, sizeof(s), d, "s");
	path_join(m, sizeof(m), d, "m");
	path_join(sub, sizeof(sub), d, "sub");
	op(mkdir(d, 0755));
	fd = op(open(f, O_RDWR | O_CREAT | O_TRUNC, 0644));
	if (fd >= 0) {
		write_check(fd, 0, 10000);
		write_check(fd, 1 << 20, 5000);
		close(fd);
	}
	fd = op(open(f, O_WRONLY | O_APPEND));
	if (fd >= 0) {
		op(write(fd, pat, 300));
		op(ftruncate(fd, 50));
		op(fsync(fd));
		close(fd);
	}
	op(rename(f, g));
	op(symlink("g", s));
	n = op(readlink(s, lnk, sizeof(lnk)));
	if (n >= 0 && (n != 1 || lnk[0] != 'g'))
		res->wrong++;
	op(link(g, f));
	mmap_check(m);
	op(mkdir(sub, 0700));
	op(rmdir(sub));
	op(unlink(s));
	op(unlink(f));
	op(unlink(g));
	op(unlink(m));
	op(rmdir(d));
}

static void run_image(const struct hs_host *h)
{
	struct statfs sf;

	entries = 0;
	prev[0] = 0;
	snprintf(opts, sizeof(opts), "phys=%s,size=%s%s%.*s", phys, size,
		 h->flags & FL_VALIDATE ? ",validate" : "", h->opts[0] ? 1 : 0, ",");
	strncat(opts, h->opts, sizeof(opts) - strlen(opts) - 1);
	if (mount("none", mnt, "daxfs", 0, opts)) {
		res->mount_err = errno;
		return;
	}
	op(statfs(mnt, &sf));
	walk(mnt, 0);
	churn();
	/* past the base image's 20 ms lease: the mount now finds the host
	 * that died in it dead and recovers its claims, limbo and opens */
	usleep(60000);
	walk(mnt, 0);
	churn();
	op(statfs(mnt, &sf));
	if (umount2(mnt, 0)) {
		res->umount_err = errno;
		umount2(mnt, MNT_DETACH);
	}
}

int main(int argc, char **argv)
{
	struct hs_host h;
	uint64_t last = 0;
	long idle = 0;
	int i;

	if (argc != 5) {
		fprintf(stderr, "usage: kfuzz PHYS SIZE HSDEV MNT\n");
		return 2;
	}
	phys = argv[1];
	size = argv[2];
	hsdev = argv[3];
	mnt = argv[4];
	hs_fd = open(hsdev, O_RDWR | O_DIRECT);
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	null_fd = open("/dev/null", O_WRONLY);
	verbose = getenv("KFUZZ_VERBOSE") != NULL;
	if (hs_fd < 0 || kmsg_fd < 0) {
		perror("kfuzz: open");
		return 2;
	}
	lseek(kmsg_fd, 0, SEEK_END);
	if (posix_memalign((void **)&res, PAGE, 2 * PAGE) ||
	    posix_memalign((void **)&buf, PAGE, 64 << 10) ||
	    posix_memalign((void **)&pat, PAGE, 16 << 10))
		return 2;
	for (i = 0; i < 16 << 10; i++)
		pat[i] = (char)(i * 13 + 7);
	memset(res, 0, sizeof(*res));
	res->magic = GUEST_MAGIC;
	hs_write();		/* ready */
	for (;;) {
		hs_read(&h);
		if (h.magic != HOST_MAGIC || h.seq == last) {
			/* a host that went away without a stop (killed) must
			 * not leave this guest running for good */
			if (++idle > HOST_GONE_POLLS) {
				fprintf(stderr, "kfuzz: no word from the host: stopping\n");
				return 4;
			}
			usleep(2000);
			continue;
		}
		idle = 0;
		memset(res, 0, sizeof(*res));
		res->magic = GUEST_MAGIC;
		h.opts[sizeof(h.opts) - 1] = 0;
		if (!(h.flags & FL_STOP))
			run_image(&h);
		if (h.flags & FL_SELFTEST)
			self_test();
		scan_kmsg();
		res->seq_done = last = h.seq;
		hs_write();
		if (h.flags & FL_STOP)
			return 0;
	}
}
