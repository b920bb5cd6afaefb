// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * libdaxfs: POSIX-like path operations on top of the inode-number core API.
 *
 * Resolution walks one component at a time with daxfs_lookup().  ".." is
 * handled by remembering the directories walked through (directories have
 * exactly one parent, so that is the physical parent), symlinks are
 * expanded in place in the remaining path, at most DAXFS_SYMLOOP_MAX times.
 */
#define _GNU_SOURCE		/* strchrnul */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "libdaxfs-internal.h"

#define WALK_MAX_DEPTH	(PATH_MAX / 2)

struct walk {
	struct daxfs_fs *fs;
	const struct daxfs_handle *h;
	u64 root;
	u32 hops;			/* symlinks followed so far */
	u32 depth;			/* entries in stack */
	/* the attributes of the walk's current inode, read with the lookup
	 * that found it (have_attr), so that neither the walk's caller nor
	 * the next step reads them again */
	bool have_attr;
	/* a walk for a modifying call may leave the lookup of the final
	 * name's directory to the core call (daxfs_mknod_at): pname */
	bool defer;
	/* the path, or the target of a final link it followed, ended in a
	 * slash (what a walk that leaves the region hands on) */
	bool slash_end;
	const char *pname;		/* in buf, not NUL-terminated */
	u32 plen;
	struct daxfs_attr attr;
	u64 stack[WALK_MAX_DEPTH];	/* directories walked through */
	char link[DAXFS_SYMLINK_MAX + 1];
	/*
	 * The path not yet walked: what is left of the caller's, with each
	 * symlink's target spliced in front of it.  Every hop may add a
	 * whole target, so the room is one per hop: a path the kernel would
	 * walk (up to DAXFS_SYMLOOP_MAX links, ELOOP after) never ends in
	 * ENAMETOOLONG here.  Only the pages a walk reaches are touched.
	 */
	char buf[PATH_MAX + DAXFS_SYMLOOP_MAX * (DAXFS_SYMLINK_MAX + 1) + 1];
};

/*
 * A walk is 184 KiB, too big for the stack of every thread a preloaded
 * program calls from (a signal handler on a small alternate stack), and
 * malloc + free of it was 300 instructions of a 6,800-instruction create.
 * Each thread keeps the last one it freed for its next call.  Taken and
 * given back by an atomic exchange on the thread's own word: a signal
 * handler calling in between takes none (and mallocs its own) or gives
 * its own back (and the other is freed), never shares one.  The thread's
 * exit frees it (walk_key's destructor).
 */
static __thread struct walk *walk_spare __attribute__((tls_model("initial-exec")));
static __thread bool walk_keyed __attribute__((tls_model("initial-exec")));
/* The thread's kernel path of its last walk that left the region: PATH_MAX
 * bytes, allocated by the first (4 KiB of static TLS would not leave a
 * dlopen of the library room), freed at the thread's exit. */
static __thread char *walk_outside_path __attribute__((tls_model("initial-exec")));
static pthread_key_t walk_key;
static bool walk_key_ok;
static pthread_once_t walk_once = PTHREAD_ONCE_INIT;

static void walk_exit(void *unused)
{
	walk_keyed = false;
	free(__atomic_exchange_n(&walk_spare, NULL, __ATOMIC_RELAXED));
	free(walk_outside_path);
	walk_outside_path = NULL;
}

static void walk_key_init(void)
{
	walk_key_ok = !pthread_key_create(&walk_key, walk_exit);
}

static struct walk *walk_new(struct daxfs_handle *h)
{
	struct walk *w = __atomic_exchange_n(&walk_spare, NULL, __ATOMIC_RELAXED);

	if (!w)
		w = malloc(sizeof(*w));
	if (!w)
		return NULL;
	w->fs = &h->fs;
	w->h = h;
	w->root = h->fs.sb.root_ino;
	w->hops = 0;
	w->depth = 0;
	w->defer = false;
	return w;
}

/* Symlinks the thread's last walk followed (daxfs_path_links_followed). */
static __thread u32 walk_last_hops __attribute__((tls_model("initial-exec")));

/* Makes the thread's exit run walk_exit; false when it cannot. */
static bool walk_key_set(void)
{
	if (walk_keyed)
		return true;
	pthread_once(&walk_once, walk_key_init);
	/* a value set (any non-NULL) is what runs the destructor */
	if (!walk_key_ok || pthread_setspecific(walk_key, &walk_keyed))
		return false;
	walk_keyed = true;
	return true;
}

/* Keeps w as the thread's spare if the thread can free it at exit. */
static void walk_free(struct walk *w)
{
	walk_last_hops = w->hops;
	if (!walk_key_set()) {
		free(w);
		return;
	}
	free(__atomic_exchange_n(&walk_spare, w, __ATOMIC_RELAXED));
}

/* Replaces the not yet walked part of w->buf (starting at rest) with
 * target + "/" + rest.  Returns the new rest. */
static int splice_link(struct walk *w, char **rest, const char *target, u32 tlen)
{
	size_t rlen = strlen(*rest);

	if (tlen + 1 + rlen + 1 > sizeof(w->buf))
		return -ENAMETOOLONG;
	memmove(w->buf + tlen + 1, *rest, rlen + 1);
	memcpy(w->buf, target, tlen);
	w->buf[tlen] = '/';
	*rest = w->buf;
	return 0;
}

static int read_link(struct walk *w, u64 ino, u32 *len)
{
	int n = daxfs_readlink(w->fs, ino, w->link, DAXFS_SYMLINK_MAX);

	if (n < 0)
		return n;
	if (n == 0)
		return -ENOENT;
	if (n > (int)DAXFS_SYMLINK_MAX)
		return -EUCLEAN;
	w->link[n] = 0;
	*len = (u32)n;
	return 0;
}

/* Is target (tlen bytes) the link prefix or below it? */
static bool under_prefix(const struct daxfs_handle *h, const char *target,
			 size_t tlen)
{
	size_t n = h->link_plen;

	return n && tlen >= n && !memcmp(target, h->link_prefix, n) &&
	       (tlen == n || target[n] == '/');
}

/* An absolute target that is not below the prefix: not the region's. */
static bool link_leaves(const struct daxfs_handle *h, const char *target,
			size_t tlen)
{
	return h->link_plen && target[0] == '/' &&
	       !under_prefix(h, target, tlen);
}

/* The length of the prefix's parent ("/mnt" of "/mnt/daxfs", "" of
 * "/daxfs": the kernel path is then what follows, or "/"). */
static size_t prefix_parent_len(const struct daxfs_handle *h)
{
	size_t n = h->link_plen;

	while (n && h->link_prefix[n - 1] != '/')
		n--;
	return n ? n - 1 : 0;
}

/* "a//b" as "a/b": the splices put a '/' after every target. */
static void squeeze_slashes(char *p)
{
	const char *in;
	char *out = p;

	for (in = p; *in; in++)
		if (*in != '/' || out == p || out[-1] != '/')
			*out++ = *in;
	*out = 0;
}

/* Ends a walk that left the region at head (hlen bytes) + rest. */
static int walk_outside(const char *head, size_t hlen, const char *rest)
{
	size_t rlen = strlen(rest);

	if (hlen + rlen + 2 > PATH_MAX)
		return -ENAMETOOLONG;
	if (!walk_outside_path) {
		if (!walk_key_set())
			return -ENOMEM;
		walk_outside_path = malloc(PATH_MAX);
		if (!walk_outside_path)
			return -ENOMEM;
	}
	memcpy(walk_outside_path, head, hlen);
	memcpy(walk_outside_path + hlen, rest, rlen + 1);
	squeeze_slashes(walk_outside_path);
	if (!walk_outside_path[0])
		strcpy(walk_outside_path, "/");
	return -DAXFS_EOUTSIDE;
}

const char *daxfs_path_outside(void)
{
	return walk_outside_path ? walk_outside_path : "";
}

/*
 * Linux's protected_symlinks (fs.protected_symlinks = 1, Debian's
 * default), when the handle asks for it (daxfs_set_link_protect: the
 * preload, as its host's kernel says, where a link may lead out of the
 * region onto this host's files): a link that a path ends in, in a
 * sticky world-writable directory, is followed only when it is the
 * follower's own (the handle's uid) or the directory's owner's; any
 * other is -EACCES, root's walk included, as the kernel says on a mount
 * (links met on the way to the last name are followed, as there).
 * Another user's link in the region's shared /tmp must not turn a
 * program onto this host's files (an O_CREAT through a dangling one
 * would make the file it names).
 */
static int may_follow(struct daxfs_fs *fs, const struct daxfs_handle *h,
		      u64 dir, u32 link_uid)
{
	struct daxfs_attr d;
	int err;

	if (!h->link_protect || link_uid == h->uid)
		return 0;
	err = daxfs_getattr(fs, dir, &d);
	if (err)
		return err;
	if ((d.mode & (S_ISVTX | S_IWOTH)) != (S_ISVTX | S_IWOTH))
		return 0;
	return d.uid == link_uid ? 0 : -EACCES;
}

int daxfs_link_outside(const struct daxfs_handle *h, const char *target,
		       size_t tlen, const char *rest)
{
	if (!link_leaves(h, target, tlen))
		return 0;
	return walk_outside(target, tlen, rest ? rest : "");
}

/* Is the name after rest the path's last, and a plain one (not "." or
 * "..", not too long)?  Then the walk looks it up together with the
 * directory it is in, in one core operation. */
static bool next_is_last(char *rest, char **name, u32 *len)
{
	char *p = rest, *q;

	while (*p == '/')
		p++;
	q = strchrnul(p, '/');
	*name = p;
	*len = (u32)(q - p);
	while (*q == '/')
		q++;
	if (*q || !*len || *len > DAXFS_NAME_MAX)
		return false;
	return !(p[0] == '.' && (*len == 1 || (*len == 2 && p[1] == '.')));
}

/*
 * Walks the components of w->buf starting from the root.  follow: follow
 * a symlink in the final component.  Stops before the final component
 * when last is non-NULL: *ino is then the parent directory and *last /
 * *last_len the final name (NULL with len 0 for "/").  Also reports
 * whether the path ended in a slash (trailing, may be NULL), or the
 * target of a final symlink it followed did.
 *
 * The last two names (a directory and a plain name in it) are looked up
 * in one core operation (daxfs_lookup_at); with last and w->defer, the
 * directory's is left to the caller's core call: w->pname is then its
 * name and *ino the directory it is in.  Where the core finds no
 * directory by that name (a symlink, ...), the walk looks it up itself.
 */
static int walk_path(struct walk *w, const char *path, int follow, u64 *ino,
		     const char **last, u32 *last_len, bool *trailing)
{
	struct daxfs_attr *a = &w->attr;
	char *rest, *comp;
	char *nname;
	u64 cur = w->root, next, pdir;
	size_t plen = strlen(path);
	u32 nlen;
	int err;

	if (!plen)
		return -ENOENT;
	if (plen >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(w->buf, path, plen + 1);
	w->slash_end = path[plen - 1] == '/';
	if (trailing)
		*trailing = w->slash_end;
	rest = w->buf;
	w->depth = 0;
	w->have_attr = false;
	w->pname = NULL;

	for (;;) {
		u32 len;
		bool final;

		while (*rest == '/')
			rest++;
		if (!*rest) {
			/* path (or a symlink target) ended: "cur" is it */
			if (last) {
				*last = NULL;
				*last_len = 0;
			}
			*ino = cur;
			return 0;
		}
		comp = rest;
		rest = strchrnul(rest, '/');
		len = (u32)(rest - comp);
		if (len > DAXFS_NAME_MAX)
			return -ENAMETOOLONG;
		{
			const char *p = rest;

			while (*p == '/')
				p++;
			final = !*p;
		}
		if (final && last) {
			*ino = cur;
			*last = comp;
			*last_len = len;
			return 0;
		}
		if (len == 1 && comp[0] == '.')
			continue;
		if (len == 2 && comp[0] == '.' && comp[1] == '.') {
			if (w->depth) {
				cur = w->stack[--w->depth];
				w->have_attr = false;
			} else if (w->h->link_plen) {
				/* above the region's root: PREFIX's parent */
				return walk_outside(w->h->link_prefix,
						    prefix_parent_len(w->h),
						    rest);
			}
			continue;
		}
		w->have_attr = false;
		if (!final && next_is_last(rest, &nname, &nlen)) {
			if (last && w->defer && path[plen - 1] != '/') {
				w->pname = comp;
				w->plen = len;
				*ino = cur;
				*last = nname;
				*last_len = nlen;
				return 0;
			}
			if (!last) {
				err = daxfs_lookup_at(w->fs, cur, comp, len, nname,
						      nlen, &pdir, &next, a);
				if (pdir) {
					/* comp is a directory: as below */
					if (w->depth >= WALK_MAX_DEPTH)
						return -ENAMETOOLONG;
					w->stack[w->depth++] = cur;
					cur = pdir;
					if (err)
						return err;
					comp = nname;
					len = nlen;
					rest = nname + nlen;
					final = true;
					goto found;
				}
			}
		}
		err = daxfs_lookup_attr(w->fs, cur, comp, len, &next, a);
		if (err)
			return err;
found:
		if (S_ISLNK(a->mode) && (!final || follow || (trailing && *trailing))) {
			u32 tlen;

			if (++w->hops > DAXFS_SYMLOOP_MAX)
				return -ELOOP;
			/* the kernel's rule is for the last name's link */
			err = final ? may_follow(w->fs, w->h, cur, a->uid) : 0;
			if (err)
				return err;
			err = read_link(w, next, &tlen);
			if (err)
				return err;
			/*
			 * A final link whose target ends in '/' ("f/") names a
			 * directory, as the path "link/" would: the kernel
			 * then says ENOTDIR for a file there.  The splice
			 * below puts a '/' after every target, so the target's
			 * own is told here, as a trailing slash of the path
			 * (resolve_attr checks the type, and a final link met
			 * next is followed as for "link/").
			 */
			if (final && w->link[tlen - 1] == '/')
				w->slash_end = true;
			if (final && trailing && w->slash_end)
				*trailing = true;
			/* the rest starts at the '/' (or NUL) after comp; an
			 * absolute target below the link prefix loses it
			 * ("/daxfs/x": "/x"; "/daxfs": "/"), any other one
			 * leaves the region, with what follows (after a final
			 * link, the path's own end, not the '/' that a splice
			 * put after a target) */
			err = daxfs_link_outside(w->h, w->link, tlen,
						 !final ? rest :
						 w->slash_end ? "/" : "");
			if (err)
				return err;
			tlen = (u32)daxfs_link_in_region(w->h, w->link, tlen);
			err = splice_link(w, &rest, w->link, tlen);
			if (err)
				return err;
			if (w->link[0] == '/') {
				cur = w->root;
				w->depth = 0;
			}
			continue;
		}
		if (!final && !S_ISDIR(a->mode))
			return -ENOTDIR;
		if (!final || S_ISDIR(a->mode)) {
			if (w->depth >= WALK_MAX_DEPTH)
				return -ENAMETOOLONG;
			w->stack[w->depth++] = cur;
		}
		cur = next;
		w->have_attr = true;
	}
}

/* The attributes of the inode the walk ended on: those read when it was
 * found, or read now (the root, or a directory reached by ".."). */
static int walk_attr(struct walk *w, u64 ino, struct daxfs_attr *a)
{
	if (!w->have_attr)
		return daxfs_getattr(w->fs, ino, a);
	*a = w->attr;
	return 0;
}

/* Resolves path to *ino and, with a, its attributes. */
static int resolve_attr(struct daxfs_handle *h, const char *path, int follow,
			u64 *ino, struct daxfs_attr *a)
{
	struct daxfs_attr own;
	struct walk *w;
	bool trailing;
	int err;

	if (!path)
		return -EFAULT;
	w = walk_new(h);
	if (!w)
		return -ENOMEM;
	err = walk_path(w, path, follow, ino, NULL, NULL, &trailing);
	if (!err && (a || trailing)) {
		if (!a)
			a = &own;
		err = walk_attr(w, *ino, a);
		if (!err && trailing && !S_ISDIR(a->mode))
			err = -ENOTDIR;
	}
	walk_free(w);
	return err;
}

static int resolve(struct daxfs_handle *h, const char *path, int follow, u64 *ino)
{
	return resolve_attr(h, path, follow, ino, NULL);
}

/* Resolves the parent directory of path's final component.  The name
 * points into w->buf (not NUL-terminated: use len).  noname is returned
 * for paths without a final name ("/") and "."/".." as final names. */
static int resolve_parent(struct daxfs_handle *h, struct walk *w, const char *path,
			  u64 *dir, const char **name, u32 *len, bool *trailing,
			  int noname)
{
	struct daxfs_attr a;
	int err;

	if (!path)
		return -EFAULT;
	err = walk_path(w, path, 1, dir, name, len, trailing);
	if (err)
		return err;
	if (!*name)
		return noname;
	if ((*len == 1 && (*name)[0] == '.') ||
	    (*len == 2 && (*name)[0] == '.' && (*name)[1] == '.'))
		return noname;
	/* the core calls of begin_entry_at check the directory themselves
	 * (-ENOTDIR) in their op: the root's attributes are not read first
	 * in an op of their own (a name the walk passed is a directory) */
	if (w->defer)
		return 0;
	err = walk_attr(w, *dir, &a);
	if (err)
		return err;
	if (!S_ISDIR(a.mode))
		return -ENOTDIR;
	return 0;
}

/* The final entry of a path that a modifying call works on: its parent
 * directory and name (which points into w->buf: free w only when done). */
struct entry {
	struct walk *w;
	u64 dir;
	const char *name;
	u32 len;
	bool trailing;		/* the path ended in '/' */
	/* begin_entry_at: name is in the directory pname in dir, which the
	 * core call looks up (entry_settle) */
	const char *pname;
	u32 plen;
};

/* Resolves the parent of path's final name into e (see resolve_parent()). */
static int entry_walk(struct daxfs_handle *h, const char *path, int noname,
		      struct entry *e)
{
	int err = resolve_parent(h, e->w, path, &e->dir, &e->name, &e->len,
				 &e->trailing, noname);

	e->pname = e->w->pname;
	e->plen = e->w->plen;
	return err;
}

static int entry_resolve(struct daxfs_handle *h, const char *path, int noname,
			 struct entry *e)
{
	memset(e, 0, sizeof(*e));
	e->w = walk_new(h);
	if (!e->w)
		return -ENOMEM;
	return entry_walk(h, path, noname, e);
}

/* Common prologue of the modifying calls: a writable handle, then the
 * entry.  Pair with entry_end() whatever it returns. */
static int begin_entry(struct daxfs_handle *h, const char *path, int noname,
		       struct entry *e)
{
	int err;

	memset(e, 0, sizeof(*e));	/* entry_end() and rmdir's e.name */
	err = lib_writable(h);
	return err ? err : entry_resolve(h, path, noname, e);
}

/*
 * begin_entry for a call made with daxfs_mknod_at or daxfs_unlink_at:
 * the directory the final name is in may be left to the core call
 * (e->pname), which then looks it up in its own operation instead of
 * the walk in one before it.  Follow the call with entry_settle().
 */
static int begin_entry_at(struct daxfs_handle *h, const char *path, int noname,
			  struct entry *e)
{
	int err;

	memset(e, 0, sizeof(*e));
	err = lib_writable(h);
	if (err)
		return err;
	e->w = walk_new(h);
	if (!e->w)
		return -ENOMEM;
	e->w->defer = true;
	return entry_walk(h, path, noname, e);
}

/*
 * After a core call that looked e->pname up itself: true when it found
 * that directory (pdir, now e->dir), and its answer stands.  Else the
 * call did nothing (pdir 0: no such name, a symlink, not a directory)
 * and the walk resolves the entry as for any call, following symlinks
 * and answering what the walk answers (*werr); the caller then makes
 * its plain call on e.
 */
static bool entry_settle(struct daxfs_handle *h, const char *path, int noname,
			 struct entry *e, u64 pdir, int *werr)
{
	e->pname = NULL;
	e->dir = pdir;
	*werr = 0;
	if (pdir)
		return true;
	e->w->defer = false;
	e->w->hops = 0;
	*werr = entry_walk(h, path, noname, e);
	return false;
}

/* daxfs_mknod of e's name, from begin_entry_at: *werr as entry_settle's
 * (the walk's error is the call's answer, before the create's). */
static int entry_mknod(struct daxfs_handle *h, const char *path, int noname,
		       struct entry *e, u32 mode, u64 rdev, u64 *ino, int *werr)
{
	u64 pdir;
	int err;

	*werr = 0;
	if (e->pname) {
		err = daxfs_mknod_at(&h->fs, e->dir, e->pname, e->plen, e->name,
				     e->len, mode, h->uid, h->gid, rdev, &pdir,
				     ino);
		if (entry_settle(h, path, noname, e, pdir, werr) || *werr)
			return err;
	}
	return daxfs_mknod(&h->fs, e->dir, e->name, e->len, mode, h->uid,
			   h->gid, rdev, ino);
}

static void entry_end(struct entry *e)
{
	if (e->w)
		walk_free(e->w);
}

static int do_path_resolve(struct daxfs_handle *h, const char *path, int follow,
			   uint64_t *ino)
{
	u64 found = 0;
	int err = resolve(h, path, follow, &found);

	*ino = found;
	return err;
}

static int do_path_stat(struct daxfs_handle *h, const char *path,
			struct daxfs_attr *st)
{
	u64 ino;

	return resolve_attr(h, path, 1, &ino, st);
}

static int do_path_lstat(struct daxfs_handle *h, const char *path,
			 struct daxfs_attr *st)
{
	u64 ino;

	return resolve_attr(h, path, 0, &ino, st);
}

static int do_fstat(struct daxfs_handle *h, uint64_t ino, struct daxfs_attr *st)
{
	return daxfs_getattr(&h->fs, ino, st);
}

static int do_path_mkdir(struct daxfs_handle *h, const char *path, uint32_t mode)
{
	struct entry e;
	u64 ino;
	int err = begin_entry(h, path, -EEXIST, &e);

	if (!err)
		err = daxfs_mkdir(&h->fs, e.dir, e.name, e.len, S_IFDIR | (mode & 07777),
				  h->uid, h->gid, &ino);
	entry_end(&e);
	return err;
}

static int do_path_mknod(struct daxfs_handle *h, const char *path, uint32_t mode,
			 uint64_t rdev)
{
	struct entry e;
	u64 ino;
	int err, merr;

	if (!(mode & S_IFMT))
		mode |= S_IFREG;
	switch (mode & S_IFMT) {
	case S_IFREG: case S_IFIFO: case S_IFSOCK: case S_IFCHR: case S_IFBLK:
		break;
	case S_IFDIR:
		return -EPERM;
	default:
		return -EINVAL;
	}
	err = begin_entry_at(h, path, -EEXIST, &e);
	if (!err && e.trailing)
		err = -ENOENT;
	if (!err) {
		merr = entry_mknod(h, path, -EEXIST, &e, mode, rdev, &ino, &err);
		if (!err)
			err = merr;
	}
	entry_end(&e);
	return err;
}

/* An existing name met by create(): open it as a regular file.  -EAGAIN:
 * the inode went (its last name unlinked on some host after we found it),
 * so the name may be free again: the caller's next round. */
static int create_existing(struct daxfs_handle *h, const char *path, u64 ino,
			   unsigned int flags, uint64_t *out)
{
	struct daxfs_attr a;
	int err = daxfs_getattr(&h->fs, ino, &a);

	if (err)
		return err == -ENOENT ? -EAGAIN : err;
	if (S_ISLNK(a.mode)) {
		err = resolve_attr(h, path, 1, &ino, &a);
		if (err)
			return err;
	}
	if (S_ISDIR(a.mode))
		return -EISDIR;
	if ((flags & DAXFS_CREATE_TRUNC) && S_ISREG(a.mode) && a.size) {
		err = daxfs_truncate(&h->fs, ino, 0);
		if (err)
			return err == -ENOENT ? -EAGAIN : err;
	}
	if (out)
		*out = ino;
	return 0;
}

/* do_path_create's rounds before it gives up with -EAGAIN (damage). */
#define CREATE_ROUNDS	(1u << 16)

static int do_path_create(struct daxfs_handle *h, const char *path, uint32_t mode,
			  unsigned int flags, uint64_t *out)
{
	struct entry e;
	struct daxfs_attr a;
	u64 ino;
	u32 tries;
	int err, merr;

	err = begin_entry_at(h, path, -EISDIR, &e);
	if (err)
		goto out;
	/* Create first: the name is usually new, and the core's create looks
	 * it up anyway (naming the inode it finds: daxfs_core.h), so a
	 * lookup of our own would be a second one.  Lookup and create race
	 * with other hosts: whoever loses the create finds the winner's
	 * file on the next round.  A round is lost only to other hosts'
	 * progress (a create, then an unlink, of the name, between our two
	 * looks), so rounds are not counted down to an error as they were:
	 * 16 lost rounds gave open(O_CREAT) EAGAIN, and an inode unlinked
	 * between our look and our getattr gave it ENOENT (tests/c/
	 * test_create_churn.c).  The bound only stops a name that damage
	 * makes both taken and missing forever. */
	for (tries = 0; tries < CREATE_ROUNDS; tries++) {
		if (tries >= 16)
			sched_yield();
		merr = -EEXIST;
		ino = 0;
		if (!e.trailing) {
			merr = entry_mknod(h, path, -EISDIR, &e,
					   S_IFREG | (mode & 07777), 0, &ino, &err);
			if (err)
				goto out;
			if (!merr) {
				if (out)
					*out = ino;
				err = 1;
				goto out;
			}
		}
		/* any failure: the name may exist (a full region that cannot
		 * copy a base directory up still opens its files) */
		err = 0;
		if (merr != -EEXIST || !ino)
			err = daxfs_lookup(&h->fs, e.dir, e.name, e.len, &ino);
		if (!err) {
			if (flags & DAXFS_CREATE_EXCL) {
				err = -EEXIST;
				goto out;
			}
			err = create_existing(h, path, ino, flags, out);
			if (err != -EAGAIN)
				goto out;
			/* it went: look again, unless the name names no
			 * inode at all (damage, -EUCLEAN: every round would
			 * find it so; only a lookup that loads the inode,
			 * into a, can tell) */
			err = daxfs_lookup_attr(&h->fs, e.dir, e.name, e.len,
						&ino, &a);
			if (err == -EUCLEAN)
				goto out;
			continue;
		}
		if (err != -ENOENT)
			goto out;
		if (e.trailing) {
			err = -EISDIR;
			goto out;
		}
		if (merr != -EEXIST) {
			err = merr;
			goto out;
		}
	}
	err = -EAGAIN;
out:
	entry_end(&e);
	return err;
}

static int do_path_unlink(struct daxfs_handle *h, const char *path)
{
	struct entry e;
	struct daxfs_attr a;
	u64 ino, pdir;
	int err = begin_entry_at(h, path, -EISDIR, &e), werr;

	if (err)
		goto out;
	if (e.pname) {
		err = daxfs_unlink_at(&h->fs, e.dir, e.pname, e.plen, e.name,
				      e.len, &pdir);
		if (entry_settle(h, path, -EISDIR, &e, pdir, &werr) || werr) {
			err = werr ? werr : err;
			goto out;
		}
	}
	/* The core's unlink finds the name (-ENOENT) and refuses a directory
	 * (-EISDIR) itself; only "name/" needs a look first: -EISDIR for a
	 * directory, else -ENOTDIR. */
	if (e.trailing) {
		err = daxfs_lookup_attr(&h->fs, e.dir, e.name, e.len, &ino, &a);
		if (!err)
			err = S_ISDIR(a.mode) ? -EISDIR : -ENOTDIR;
		goto out;
	}
	err = daxfs_unlink(&h->fs, e.dir, e.name, e.len);
out:
	entry_end(&e);
	return err;
}

static int do_path_rmdir(struct daxfs_handle *h, const char *path)
{
	struct entry e;
	int err = begin_entry(h, path, -EBUSY, &e);

	if (err == -EBUSY && e.name && e.len == 1)
		err = -EINVAL;		/* rmdir("x/.") */
	else if (err == -EBUSY && e.name && e.len == 2)
		err = -ENOTEMPTY;	/* rmdir("x/..") */
	if (!err)
		err = daxfs_rmdir(&h->fs, e.dir, e.name, e.len);
	entry_end(&e);
	return err;
}

static int do_path_rename(struct daxfs_handle *h, const char *src, const char *dst,
			  unsigned int flags)
{
	struct entry s, d = { NULL };
	int err = begin_entry(h, src, -EBUSY, &s);

	if (!err)
		err = entry_resolve(h, dst, -EBUSY, &d);
	if (!err)
		err = daxfs_rename_whiteout(&h->fs, s.dir, s.name, s.len, d.dir,
					    d.name, d.len, flags, h->uid, h->gid);
	entry_end(&d);
	entry_end(&s);
	return err;
}

static int do_path_link(struct daxfs_handle *h, const char *oldpath,
			const char *newpath)
{
	struct entry s = { NULL }, e = { NULL };
	struct daxfs_attr a;
	u64 ino;
	int err;

	err = resolve_attr(h, oldpath, 0, &ino, &a);
	if (err)
		return err;
	if (S_ISDIR(a.mode))
		return -EPERM;
	/* the source by name: the core links what it names when the link
	 * takes effect (ino 0) and holds it until the link is in */
	err = entry_resolve(h, oldpath, -EPERM, &s);
	if (!err)
		err = begin_entry(h, newpath, -EEXIST, &e);
	if (!err)
		err = daxfs_link_name(&h->fs, s.dir, s.name, s.len, 0, e.dir,
				      e.name, e.len);
	entry_end(&e);
	entry_end(&s);
	return err;
}

/* O_TMPFILE: an unnamed file held open by this handle, as daxfs_file_open
 * would (closed with daxfs_file_close, which frees it unless linked). */
static int do_path_tmpfile(struct daxfs_handle *h, const char *dirpath,
			   uint32_t mode, uint64_t *out)
{
	struct daxfs_attr a;
	u64 dir, ino;
	int err;

	err = resolve_attr(h, dirpath, 1, &dir, &a);
	if (err)
		return err;
	if (!S_ISDIR(a.mode))
		return -ENOTDIR;
	err = daxfs_tmpfile(&h->fs, dir, mode, h->uid, h->gid, &ino);
	if (err)
		return err;
	err = lib_files_add(h, ino);
	if (err) {
		daxfs_open_put(&h->fs, ino);
		return err;
	}
	*out = ino;
	return 0;
}

/* linkat(fd, "", AT_EMPTY_PATH) of a file this handle holds open. */
static int do_link_open(struct daxfs_handle *h, uint64_t ino,
			const char *newpath)
{
	struct entry e;
	int err = begin_entry(h, newpath, -EEXIST, &e);

	if (!err)
		err = daxfs_link_unnamed(&h->fs, ino, e.dir, e.name, e.len);
	entry_end(&e);
	return err;
}

static int do_path_symlink(struct daxfs_handle *h, const char *target,
			   const char *linkpath)
{
	struct entry e;
	size_t tlen;
	u64 ino;
	int err;

	if (!target)
		return -EFAULT;
	tlen = strlen(target);
	if (!tlen)
		return -ENOENT;
	if (tlen > DAXFS_SYMLINK_MAX || tlen >= PATH_MAX)
		return -ENAMETOOLONG;
	err = begin_entry(h, linkpath, -EEXIST, &e);
	if (!err && e.trailing)
		err = -ENOENT;
	if (!err)
		err = daxfs_symlink(&h->fs, e.dir, e.name, e.len, target, (u32)tlen,
				    h->uid, h->gid, &ino);
	entry_end(&e);
	return err;
}

static int do_path_readlink(struct daxfs_handle *h, const char *path, char *buf,
			    size_t bufsize)
{
	struct daxfs_attr a;
	u64 ino;
	u32 cap;
	int err, n;

	err = resolve_attr(h, path, 0, &ino, &a);
	if (err)
		return err;
	if (!S_ISLNK(a.mode))
		return -EINVAL;
	cap = bufsize ? (u32)(bufsize > UINT32_MAX ? UINT32_MAX : bufsize - 1) : 0;
	n = daxfs_readlink(&h->fs, ino, buf, cap);
	if (n < 0)
		return n;
	if (bufsize)
		buf[(u32)n < cap ? (u32)n : cap] = 0;
	return n;
}

static int setattr_path(struct daxfs_handle *h, const char *path, int follow,
			u32 valid, struct daxfs_attr *a)
{
	u64 ino;
	int err = lib_writable(h);

	if (!err)
		err = resolve(h, path, follow, &ino);
	return err ? err : daxfs_setattr(&h->fs, ino, valid, a);
}

/* A writable handle, the path resolved following symlinks, and its
 * current attributes. */
static int resolve_for_change(struct daxfs_handle *h, const char *path,
			      u64 *ino, struct daxfs_attr *a)
{
	int err = lib_writable(h);

	return err ? err : resolve_attr(h, path, 1, ino, a);
}

static int do_path_truncate(struct daxfs_handle *h, const char *path,
			    uint64_t size)
{
	struct daxfs_attr a;
	u64 ino;
	int err = resolve_for_change(h, path, &ino, &a);

	if (err)
		return err;
	if (S_ISDIR(a.mode))
		return -EISDIR;
	if (!S_ISREG(a.mode))
		return -EINVAL;
	if (size > DAXFS_MAX_FILE_SIZE)
		return -EFBIG;
	return daxfs_truncate(&h->fs, ino, size);
}

static int do_path_chmod(struct daxfs_handle *h, const char *path, uint32_t mode)
{
	struct daxfs_attr a;
	u64 ino;
	int err = resolve_for_change(h, path, &ino, &a);

	if (err)
		return err;
	a.mode = (a.mode & S_IFMT) | (mode & 07777);
	a.ctime_ns = daxfs_now_ns();
	return daxfs_setattr(&h->fs, ino, DAXFS_ATTR_MODE | DAXFS_ATTR_CTIME, &a);
}

/* The library makes no permission checks (docs/libdaxfs.md): the caller
 * acts as the owner with CAP_LINUX_IMMUTABLE. */
static int do_path_setflags(struct daxfs_handle *h, const char *path,
			    uint32_t flags)
{
	struct daxfs_attr a;
	u64 ino;
	int err = resolve_for_change(h, path, &ino, &a);

	return err ? err : daxfs_setflags(&h->fs, ino, flags,
					  DAXFS_MAY_OWNER |
					  DAXFS_MAY_IMMUTABLE);
}

static int chown_common(struct daxfs_handle *h, const char *path, int follow,
			uint32_t uid, uint32_t gid)
{
	struct daxfs_attr a;
	u32 valid = DAXFS_ATTR_CTIME | DAXFS_ATTR_CHOWN;

	memset(&a, 0, sizeof(a));
	if (uid != (uint32_t)-1) {
		a.uid = uid;
		valid |= DAXFS_ATTR_UID;
	}
	if (gid != (uint32_t)-1) {
		a.gid = gid;
		valid |= DAXFS_ATTR_GID;
	}
	a.ctime_ns = daxfs_now_ns();
	return setattr_path(h, path, follow, valid, &a);
}

static int do_path_chown(struct daxfs_handle *h, const char *path, uint32_t uid,
			 uint32_t gid)
{
	return chown_common(h, path, 1, uid, gid);
}

static int do_path_lchown(struct daxfs_handle *h, const char *path, uint32_t uid,
			  uint32_t gid)
{
	return chown_common(h, path, 0, uid, gid);
}

static int do_path_utimens(struct daxfs_handle *h, const char *path,
			   int64_t atime_ns, int64_t mtime_ns)
{
	struct daxfs_attr a;
	s64 now = daxfs_now_ns();
	u32 valid = DAXFS_ATTR_CTIME;

	memset(&a, 0, sizeof(a));
	if (atime_ns != DAXFS_UTIME_OMIT) {
		a.atime_ns = atime_ns == DAXFS_UTIME_NOW ? now : atime_ns;
		valid |= DAXFS_ATTR_ATIME;
	}
	if (mtime_ns != DAXFS_UTIME_OMIT) {
		a.mtime_ns = mtime_ns == DAXFS_UTIME_NOW ? now : mtime_ns;
		valid |= DAXFS_ATTR_MTIME;
	}
	a.ctime_ns = now;
	return setattr_path(h, path, 1, valid, &a);
}

/* ---- directory listing ---- */

static bool is_dot(const char *name, u32 len)
{
	return (len == 1 && name[0] == '.') ||
	       (len == 2 && name[0] == '.' && name[1] == '.');
}

struct cb_ctx {
	daxfs_dir_cb cb;
	void *ctx;
	int ret;
};

static int cb_fill(void *ctx, const char *name, u32 len, u64 ino, u32 dtype,
		   u64 pos)
{
	struct cb_ctx *c = ctx;

	if (is_dot(name, len))
		return 0;
	c->ret = c->cb(c->ctx, name, len, ino, dtype, pos);
	return c->ret;
}

static int check_dir(struct daxfs_handle *h, u64 ino)
{
	struct daxfs_attr a;
	int err = daxfs_getattr(&h->fs, ino, &a);

	if (err)
		return err;
	return S_ISDIR(a.mode) ? 0 : -ENOTDIR;
}

static int do_path_readdir(struct daxfs_handle *h, const char *path,
			   daxfs_dir_cb cb, void *ctx)
{
	struct cb_ctx c = { cb, ctx, 0 };
	u64 ino, pos = 0;
	int err;

	err = resolve(h, path, 1, &ino);
	if (!err)
		err = check_dir(h, ino);
	if (err)
		return err;
	err = daxfs_readdir(&h->fs, ino, &pos, cb_fill, &c);
	if (err)
		return err;
	return c.ret;
}

struct chunk_ctx {
	struct daxfs_dirent_info *ents;
	unsigned int max, n;
};

static int chunk_fill(void *ctx, const char *name, u32 len, u64 ino, u32 dtype,
		      u64 pos)
{
	struct chunk_ctx *c = ctx;
	struct daxfs_dirent_info *e;

	if (is_dot(name, len))
		return 0;
	if (c->n >= c->max)
		return 1;	/* stop: this entry comes again next time */
	if (len > DAXFS_NAME_MAX)
		len = DAXFS_NAME_MAX;
	e = &c->ents[c->n++];
	e->ino = ino;
	e->pos = pos;
	e->dtype = dtype;
	e->name_len = len;
	memcpy(e->name, name, len);
	e->name[len] = 0;
	return 0;
}

static int do_readdir_chunk(struct daxfs_handle *h, uint64_t dir, uint64_t start,
			    struct daxfs_dirent_info *ents, unsigned int max,
			    uint64_t *next_pos)
{
	struct chunk_ctx c = { ents, max, 0 };
	u64 pos = start;
	int err = check_dir(h, dir);
	if (err)
		return err;
	if (pos == DAXFS_POS_EOF) {
		*next_pos = DAXFS_POS_EOF;
		return 0;
	}
	err = daxfs_readdir(&h->fs, dir, &pos, chunk_fill, &c);
	if (err)
		return err;
	*next_pos = pos;
	return (int)c.n;
}

static int do_path_readdir_chunk(struct daxfs_handle *h, const char *path,
				 uint64_t pos, struct daxfs_dirent_info *ents,
				 unsigned int max, uint64_t *next_pos)
{
	u64 ino;
	int err = resolve(h, path, 1, &ino);

	if (err)
		return err;
	return do_readdir_chunk(h, ino, pos, ents, max, next_pos);
}

static int do_region_statfs(struct daxfs_handle *h, struct daxfs_statfs *st)
{
	return daxfs_statfs(&h->fs, st);
}

/* The public entry points: each runs its do_ variant as one lib call
 * (LIB_CALL, libdaxfs-internal.h). */

int daxfs_path_resolve(struct daxfs_handle *h, const char *path, int follow,
		       uint64_t *ino)
{
	LIB_CALL(h, do_path_resolve(h, path, follow, ino));
}

int daxfs_path_stat(struct daxfs_handle *h, const char *path,
		    struct daxfs_attr *st)
{
	LIB_CALL(h, do_path_stat(h, path, st));
}

int daxfs_path_lstat(struct daxfs_handle *h, const char *path,
		     struct daxfs_attr *st)
{
	LIB_CALL(h, do_path_lstat(h, path, st));
}

int daxfs_fstat(struct daxfs_handle *h, uint64_t ino, struct daxfs_attr *st)
{
	LIB_CALL(h, do_fstat(h, ino, st));
}

int daxfs_path_mkdir(struct daxfs_handle *h, const char *path, uint32_t mode)
{
	LIB_CALL_SPACE(h, do_path_mkdir(h, path, mode));
}

int daxfs_path_mknod(struct daxfs_handle *h, const char *path, uint32_t mode,
		     uint64_t rdev)
{
	LIB_CALL_SPACE(h, do_path_mknod(h, path, mode, rdev));
}

int daxfs_path_create(struct daxfs_handle *h, const char *path, uint32_t mode,
		      unsigned int flags, uint64_t *out)
{
	LIB_CALL_SPACE(h, do_path_create(h, path, mode, flags, out));
}

int daxfs_path_unlink(struct daxfs_handle *h, const char *path)
{
	LIB_CALL_SPACE(h, do_path_unlink(h, path));
}

int daxfs_path_rmdir(struct daxfs_handle *h, const char *path)
{
	LIB_CALL_SPACE(h, do_path_rmdir(h, path));
}

int daxfs_path_rename(struct daxfs_handle *h, const char *src, const char *dst,
		      unsigned int flags)
{
	LIB_CALL_SPACE(h, do_path_rename(h, src, dst, flags));
}

int daxfs_path_link(struct daxfs_handle *h, const char *oldpath,
		    const char *newpath)
{
	LIB_CALL_SPACE(h, do_path_link(h, oldpath, newpath));
}

int daxfs_path_tmpfile(struct daxfs_handle *h, const char *dirpath,
		       uint32_t mode, uint64_t *ino)
{
	LIB_CALL_SPACE(h, do_path_tmpfile(h, dirpath, mode, ino));
}

int daxfs_link_open(struct daxfs_handle *h, uint64_t ino, const char *newpath)
{
	LIB_CALL_SPACE(h, do_link_open(h, ino, newpath));
}

int daxfs_path_symlink(struct daxfs_handle *h, const char *target,
		       const char *linkpath)
{
	LIB_CALL_SPACE(h, do_path_symlink(h, target, linkpath));
}

int daxfs_path_readlink(struct daxfs_handle *h, const char *path, char *buf,
			size_t bufsize)
{
	LIB_CALL(h, do_path_readlink(h, path, buf, bufsize));
}

int daxfs_path_truncate(struct daxfs_handle *h, const char *path,
			uint64_t size)
{
	LIB_CALL_SPACE(h, do_path_truncate(h, path, size));
}

int daxfs_path_chmod(struct daxfs_handle *h, const char *path, uint32_t mode)
{
	LIB_CALL_SPACE(h, do_path_chmod(h, path, mode));
}

int daxfs_path_setflags(struct daxfs_handle *h, const char *path,
			uint32_t flags)
{
	LIB_CALL(h, do_path_setflags(h, path, flags));
}

int daxfs_path_chown(struct daxfs_handle *h, const char *path, uint32_t uid,
		     uint32_t gid)
{
	LIB_CALL_SPACE(h, do_path_chown(h, path, uid, gid));
}

int daxfs_path_lchown(struct daxfs_handle *h, const char *path, uint32_t uid,
		      uint32_t gid)
{
	LIB_CALL_SPACE(h, do_path_lchown(h, path, uid, gid));
}

int daxfs_path_utimens(struct daxfs_handle *h, const char *path,
		       int64_t atime_ns, int64_t mtime_ns)
{
	LIB_CALL_SPACE(h, do_path_utimens(h, path, atime_ns, mtime_ns));
}

int daxfs_path_readdir(struct daxfs_handle *h, const char *path,
		       daxfs_dir_cb cb, void *ctx)
{
	LIB_CALL(h, do_path_readdir(h, path, cb, ctx));
}

int daxfs_path_readdir_chunk(struct daxfs_handle *h, const char *path,
			     uint64_t pos, struct daxfs_dirent_info *ents,
			     unsigned int max, uint64_t *next_pos)
{
	LIB_CALL(h, do_path_readdir_chunk(h, path, pos, ents, max, next_pos));
}

int daxfs_readdir_chunk(struct daxfs_handle *h, uint64_t dir, uint64_t start,
			struct daxfs_dirent_info *ents, unsigned int max,
			uint64_t *next_pos)
{
	LIB_CALL(h, do_readdir_chunk(h, dir, start, ents, max, next_pos));
}

int daxfs_region_statfs(struct daxfs_handle *h, struct daxfs_statfs *st)
{
	LIB_CALL(h, do_region_statfs(h, st));
}

int daxfs_set_link_prefix(struct daxfs_handle *h, const char *prefix)
{
	size_t n = prefix ? strlen(prefix) : 0;

	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (n && prefix[0] != '/')
		return -EINVAL;
	if (n >= sizeof(h->link_prefix))
		return -ENAMETOOLONG;
	if (n == 1)		/* "/": the region is the whole tree */
		n = 0;
	memcpy(h->link_prefix, prefix ? prefix : "", n);
	h->link_prefix[n] = 0;
	h->link_plen = (uint32_t)n;
	return 0;
}

void daxfs_set_link_protect(struct daxfs_handle *h, int on)
{
	h->link_protect = on;
}

size_t daxfs_link_in_region(const struct daxfs_handle *h, char *target,
			    size_t tlen)
{
	size_t n = h->link_plen;

	if (!under_prefix(h, target, tlen))
		return tlen;
	if (tlen == n) {		/* the prefix itself: the root */
		strcpy(target, "/");
		return 1;
	}
	memmove(target, target + n, tlen - n + 1);
	return tlen - n;
}

static int link_may_follow(struct daxfs_handle *h, const char *linkpath)
{
	struct daxfs_attr link;
	const char *name;
	struct walk *w;
	bool trailing;
	u64 dir, ino;
	u32 len;
	int err;

	if (!h->link_protect)
		return 0;
	w = walk_new(h);
	if (!w)
		return -ENOMEM;
	/* the link's directory, then the link itself in it */
	err = resolve_parent(h, w, linkpath, &dir, &name, &len, &trailing,
			     -EINVAL);
	if (!err)
		err = daxfs_lookup_attr(w->fs, dir, name, len, &ino, &link);
	if (!err)
		err = may_follow(w->fs, h, dir, link.uid);
	walk_free(w);
	return err;
}

int daxfs_link_may_follow(struct daxfs_handle *h, const char *linkpath)
{
	LIB_CALL(h, link_may_follow(h, linkpath));
}

unsigned int daxfs_path_links_followed(void)
{
	return walk_last_hops;
}
