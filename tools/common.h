/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Helpers shared by the DaxFS command-line tools (mkfs.daxfs, daxfs, ...):
 * messages, size parsing and printing, progress lines and the base image
 * builder used by `mkfs.daxfs --source`.
 */
#ifndef DAXFS_TOOLS_COMMON_H
#define DAXFS_TOOLS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit codes shared by the tools (mkfs follows mke2fs). */
#define TOOL_EXIT_OK		0
#define TOOL_EXIT_FAIL		1	/* daxfs: operation failed; mkfs: usage */
#define TOOL_EXIT_USAGE		2	/* daxfs: usage error */
#define MKFS_EXIT_USAGE		1
#define MKFS_EXIT_ERROR		8

/* ---- messages (common-util.c) ---- */

/* Program name used as the prefix of every message ("daxfs", "mkfs.daxfs"). */
extern const char *tool_name;

/* "NAME: [SUB: ]message" on stderr, no newline (stdout flushed first). */
void tool_vmsg(const char *sub, const char *fmt, va_list ap);
/* "NAME: message\n" on stderr. */
void tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "NAME: message: strerror(errnum)\n" on stderr (errnum positive). */
void tool_errno(int errnum, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* strerror() that also names EUCLEAN as corruption. */
const char *tool_strerror(int errnum);

/*
 * ENOMEM from opening or making a region has two causes the library does
 * not tell apart: an address-space limit (ulimit -v) too small to map
 * the region, or a region file whose filesystem has no room for its
 * holes.  When RLIMIT_AS is set, prints the first (with the limit and
 * the region's size: size, or when 0 the file's; "NAME: [SUB: ]TARGET:
 * ...") and returns true.
 */
bool tool_enomem_from_limit(const char *sub, const char *target,
			    uint64_t size);

/* ---- sizes (common-util.c) ---- */

/*
 * Parses "4096", "64K", "1.5G", "2MiB", "1T" (binary units, case
 * insensitive, optional "B"/"iB").  Returns 0, or -EINVAL with a reason
 * in *why (static string) for a malformed value, -ERANGE on overflow.
 */
int parse_size(const char *s, uint64_t *out, const char **why);
/* Strict unsigned decimal (or 0x hex) number; -EINVAL / -ERANGE. */
int parse_u64(const char *s, uint64_t *out);
/* df -h style: "0", "512", "4.0K", "1.5M", "23G" (powers of 1024). */
void format_human(uint64_t bytes, char *buf, size_t len);
/* "64 MiB", "1.50 GiB", "4096 bytes": for summaries. */
void format_bytes(uint64_t bytes, char *buf, size_t len);

/* ---- progress lines (common-util.c) ---- */

struct progress {
	bool enabled;		/* stderr is a tty and not quiet */
	bool shown;		/* something is on the line */
	double last;		/* time of the last update (s) */
	uint64_t last_count;
};

void progress_init(struct progress *p, bool quiet);
/* Shows "NAME: WHAT N[/TOTAL]" at most once a second or every 1000 items. */
void progress_update(struct progress *p, const char *what, uint64_t n, uint64_t total);
/* Clears the progress line (call before any other output). */
void progress_done(struct progress *p);
double now_seconds(void);

/* ---- base image builder (common-base-image.c) ---- */

struct base_image;

struct base_image_stats {
	uint64_t nr_inodes;
	uint64_t nr_dirents;
	uint64_t nr_files, nr_dirs, nr_symlinks, nr_special, nr_hardlinks;
	uint64_t data_bytes;	/* file + symlink bytes */
	uint64_t image_size;	/* bytes of the base region (4 KiB multiple) */
};

/*
 * Scans the tree under dir (symlinks are stored, not followed; mount
 * points below dir are entered like any directory) and plans the image.
 * On failure prints a message and returns a negative errno.
 */
int base_image_scan(const char *dir, bool quiet, struct base_image **out);
void base_image_stats(const struct base_image *bi, struct base_image_stats *st);
/*
 * Writes the complete image (header, inode table, dirents, data read from
 * the source files) into dst, which is the BASE region of size bytes
 * (>= image_size).  Prints a message and returns a negative errno when a
 * source file cannot be read or changed size since the scan.
 */
int base_image_write(struct base_image *bi, void *dst, uint64_t size, bool quiet);
void base_image_free(struct base_image *bi);
/*
 * Split mode (mkfs --backing): regular file data goes to nr backing files
 * (each file whole in one of them; balanced by size, or first fit under
 * max_per_file when non-zero) instead of the base region, which keeps
 * metadata and symlink targets.  Call after base_image_scan, before
 * base_image_stats.  Then base_image_write_backing writes the backing
 * files (header page + data) and fills descs[nr] for the PCACHE table.
 */
struct daxfs_backing_desc;
int base_image_split(struct base_image *bi, unsigned int nr, uint64_t max_per_file);
uint64_t base_image_backing_size(const struct base_image *bi, unsigned int idx);
int base_image_write_backing(struct base_image *bi, const char *const *paths, bool force,
			     bool quiet, struct daxfs_backing_desc *descs);

/* Linux dev_t encoding stored in the format (new_encode_dev / huge). */
uint64_t daxfs_encode_dev(dev_t dev);
dev_t daxfs_decode_dev(uint64_t v);

/* `daxfs run` (common-run.c): argv[0] is "run". */
int daxfs_run_main(const char *region, int argc, char **argv);

/* `daxfs mount` / `daxfs umount` (common-mount.c, docs/fuse.md): argv[0] is
 * the command name. */
int tool_mount(const char *region, const char *const *backing, unsigned int nr_backing,
	       int argc, char **argv);
int tool_umount(int argc, char **argv);

#endif /* DAXFS_TOOLS_COMMON_H */
