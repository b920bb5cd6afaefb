// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * daxfs-chaos: a hostile peer for testing (docs/tools.md "daxfs-chaos").
 * While hosts work on a region, it writes random values into random LIVE
 * words of it: words it finds by walking the shared structures (overlay
 * buckets, inodes, directory tries and their leaves, file radix trees,
 * symlink records, free chains, limbo batches, open sets, the host table,
 * lanes, the state page).  Every corruption is logged ("N KIND OFFSET
 * OLD NEW"), so a failure can be replayed from the seed.  No host may
 * crash, hang or write outside the region; `fsck.daxfs -y` repairs the
 * region afterwards.  Never run it on a region whose data matters.
 *
 * It does not join: it maps the region and reads it like any host would,
 * validating every offset it follows (the region it walks is the one it
 * corrupts, and the workers change it under its feet).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/daxfs_core.h"
#include "core/internal.h"
#include "core/inode.h"
#include "tools/common.h"

enum kind {
	K_DIRENT, K_TRIE, K_INODE, K_BUCKET, K_RADIX, K_SYMLINK, K_FREE,
	K_LIMBO, K_OPENSET, K_HOST, K_LANE, K_STATE, K_SUPER, K_BASE,
	K_PCACHE, K_NR
};

static const char *const kind_name[K_NR] = {
	"dirent", "trie", "inode", "bucket", "radix", "symlink", "free",
	"limbo", "openset", "host", "lane", "state", "super", "base",
	"pcache",
};

/* Default weights: the fields issue 5 names (leaf name_len and hash,
 * symlink size, free chains, limbo chains) come up most often. */
static unsigned int weight[K_NR] = {
	[K_DIRENT] = 30, [K_TRIE] = 8, [K_INODE] = 15, [K_BUCKET] = 5,
	[K_RADIX] = 6, [K_SYMLINK] = 8, [K_FREE] = 10, [K_LIMBO] = 8,
	[K_OPENSET] = 4, [K_HOST] = 2, [K_LANE] = 2, [K_STATE] = 2,
};

/* Kinds only drawn when named with -k: the fixed headers (superblock,
 * base image, page-cache header) are read once at mount, so changing them
 * under a mounted host tests nothing; they make corrupt images to mount
 * (vm/kfuzz.py).  Their checksums are mostly recomputed, so that the
 * damage gets past the first check. */
static const unsigned int named_weight[K_NR] = {
	[K_SUPER] = 4, [K_BASE] = 4, [K_PCACHE] = 4,
};

static struct daxfs_fs fs;
static u64 rng;
static volatile sig_atomic_t stop;

static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static u64 rnd_below(u64 n)
{
	return n ? rnd() % n : 0;
}

/* Header checksums a target's change may be followed by (fix_csum). */
enum fix { FIX_NONE, FIX_SUPER, FIX_BASE, FIX_PCACHE };

/* A word of the region, found live; low16: change only name_len. */
struct target {
	u64 *word;
	enum kind kind;
	enum fix fix;
	bool low16;
};

static u64 *word_at(u64 off)
{
	return daxfs_ptr(&fs, off, 8, 8);
}

/* A pool object of len bytes at off (64-byte aligned), or NULL. */
static void *obj(u64 off, u64 len)
{
	if (off < fs.pool_off || off >= fs.pool_end || len > fs.pool_end - off)
		return NULL;
	return daxfs_ptr(&fs, off, len, DAXFS_OFF_ALIGN);
}

/* A live inode record (through a random live bucket), or NULL. */
static struct daxfs_inode *pick_inode(u32 want_mode)
{
	struct daxfs_inode *ip;
	u32 tries;

	for (tries = 0; tries < 256; tries++) {
		struct daxfs_bucket *b = &fs.buckets[rnd_below(fs.nr_buckets)];
		u64 key = daxfs_load(&b->key);

		if (!key || key == DAXFS_KEY_TOMB ||
		    key >> DAXFS_KEY_TYPE_SHIFT != DAXFS_KEY_INODE)
			continue;
		ip = obj(daxfs_load(&b->value), sizeof(*ip));
		if (!ip || daxfs_once(ip->magic) != DAXFS_INODE_MAGIC)
			continue;
		if (want_mode && (daxfs_once(ip->mode) & DAXFS_S_IFMT) != want_mode)
			continue;
		return ip;
	}
	return NULL;
}

static bool pick_bucket(struct target *t)
{
	u32 tries;

	for (tries = 0; tries < 256; tries++) {
		struct daxfs_bucket *b = &fs.buckets[rnd_below(fs.nr_buckets)];

		if (!daxfs_load(&b->key))
			continue;
		t->word = rnd() & 1 ? &b->key : &b->value;
		return true;
	}
	return false;
}

static bool pick_inode_word(struct target *t)
{
	struct daxfs_inode *ip = pick_inode(0);

	if (!ip)
		return false;
	t->word = (u64 *)ip + rnd_below(sizeof(*ip) / 8);
	return true;
}

/* Walks a random path down a directory trie: a slot word (trie) or a
 * leaf word (dirent: mostly name_len, then hash, next, ino). */
static bool pick_trie(struct target *t, bool leaf)
{
	struct daxfs_inode *ip = pick_inode(DAXFS_S_IFDIR);
	struct daxfs_trie_node *node;
	struct daxfs_dirent *de;
	u64 v = 0, *slot = NULL;
	unsigned int d, i, start;

	if (!ip || !(node = obj(daxfs_load(&ip->root), sizeof(*node))))
		return false;
	for (d = 0; d < DAXFS_TRIE_MAX_DEPTH; d++) {
		start = (unsigned int)rnd_below(DAXFS_TRIE_FANOUT);
		for (i = 0; i < DAXFS_TRIE_FANOUT; i++) {
			slot = &node->slot[(start + i) % DAXFS_TRIE_FANOUT];
			v = daxfs_load(slot);
			if (v)
				break;
		}
		if (!v)
			return false;
		if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_NODE)
			break;
		if (!leaf && !rnd_below(3))
			break;		/* this slot */
		node = obj(v & ~DAXFS_SLOT_TAG_MASK, sizeof(*node));
		if (!node)
			return false;
	}
	if (!leaf) {
		t->word = slot;
		return true;
	}
	if ((v & DAXFS_SLOT_TAG_MASK) != DAXFS_SLOT_LEAF)
		return false;
	de = obj(v & ~DAXFS_SLOT_TAG_MASK, sizeof(*de));
	if (!de)
		return false;
	switch (rnd_below(10)) {
	case 0: case 1: case 2: case 3: case 4:
		t->word = (u64 *)de + 3;	/* name_len, type, flags */
		t->low16 = true;
		break;
	case 5: case 6:
		t->word = &de->hash;
		break;
	case 7: case 8:
		t->word = &de->next;
		break;
	default:
		t->word = &de->ino;
	}
	return true;
}

static bool pick_radix(struct target *t)
{
	struct daxfs_inode *ip = pick_inode(DAXFS_S_IFREG);
	struct daxfs_radix_node *n;
	u64 root, v = 0, *slot = NULL;
	unsigned int h, i, start;

	if (!ip)
		return false;
	root = daxfs_load(&ip->root);
	h = (unsigned int)(root & DAXFS_RADIX_HEIGHT_MASK);
	n = h ? daxfs_ptr(&fs, root & ~DAXFS_RADIX_HEIGHT_MASK, sizeof(*n),
			  DAXFS_PAGE_SIZE) : NULL;
	if (!n) {
		t->word = &ip->root;
		return true;
	}
	for (; h > 0; h--) {
		start = (unsigned int)rnd_below(DAXFS_RADIX_FANOUT);
		for (i = 0; i < DAXFS_RADIX_FANOUT; i++) {
			slot = &n->slot[(start + i) % DAXFS_RADIX_FANOUT];
			v = daxfs_load(slot);
			if (v)
				break;
		}
		if (!v || h == 1 || !rnd_below(3))
			break;
		n = daxfs_ptr(&fs, v, sizeof(*n), DAXFS_PAGE_SIZE);
		if (!n)
			break;
	}
	if (!slot)
		return false;
	t->word = slot;
	return true;
}

static bool pick_symlink(struct target *t)
{
	struct daxfs_inode *ip = pick_inode(DAXFS_S_IFLNK);
	u64 root;

	if (!ip)
		return false;
	root = daxfs_load(&ip->root);
	if (!(root & DAXFS_SYMLINK_BARE) && obj(root, 8) && rnd() & 1) {
		t->word = word_at(root);	/* len | reserved */
		return t->word != NULL;
	}
	t->word = rnd() & 1 ? &ip->size : &ip->root;
	return true;
}

/* A word of a free chain: a head, or a link some steps down. */
static bool pick_free(struct target *t)
{
	unsigned int class = (unsigned int)rnd_below(DAXFS_NR_CLASSES);
	struct daxfs_free_head *hw = &fs.state->free_head[class].head;
	/* the page class links extents, first | (pages - 1) (format 12) */
	u64 mask = class == DAXFS_CLASS_PAGE ? ~DAXFS_FREE_EXTENT_MASK : ~0ULL;
	u64 *w, off, steps;

	/* The head's offset or its tag; a stale tag only fails a CAS. */
	w = rnd_below(4) ? &hw->off : &hw->tag;
	off = daxfs_load(&hw->off) & mask;
	for (steps = rnd_below(64); steps && off; steps--) {
		if (!obj(off, 8))
			break;
		w = word_at(off);
		off = daxfs_load(w) & mask;
	}
	if (!steps && off && obj(off, 8))
		w = word_at(off);
	t->word = w;
	return w != NULL;
}

static struct daxfs_host *pick_host(void)
{
	u32 tries, slot;

	for (tries = 0; tries < 64; tries++) {
		slot = (u32)rnd_below(fs.sb.max_hosts);
		if (daxfs_host_st(daxfs_load(&fs.hosts[slot].state)) !=
		    DAXFS_HOST_FREE)
			return &fs.hosts[slot];
	}
	return NULL;
}

static bool pick_limbo(struct target *t)
{
	struct daxfs_host *h = pick_host();
	struct daxfs_limbo *lb;
	u64 off, steps;
	u32 n;

	if (!h)
		return false;
	off = daxfs_load(&h->limbo_sealed);
	if (!off || rnd() & 1) {
		u32 slot = (u32)(h - fs.hosts);

		off = daxfs_load(&daxfs_lane_at(&fs, slot,
				 (u32)rnd_below(DAXFS_LANES))->limbo_open);
	}
	for (steps = rnd_below(4); steps && off; steps--) {
		lb = obj(off, DAXFS_PAGE_SIZE);
		if (!lb)
			return false;
		off = daxfs_load(&lb->next);
	}
	lb = obj(off, DAXFS_PAGE_SIZE);
	if (!lb)
		return false;
	switch (rnd_below(4)) {
	case 0:
		t->word = &lb->next;
		break;
	case 1:
		t->word = &lb->epoch;
		break;
	case 2:
		t->word = (u64 *)&lb->count;
		break;
	default:
		n = daxfs_load32(&lb->count);
		n = n && n <= DAXFS_LIMBO_ENTRIES ? n : DAXFS_LIMBO_ENTRIES;
		t->word = &lb->entry[rnd_below(n)];
	}
	return true;
}

static bool pick_openset(struct target *t)
{
	struct daxfs_host *h = pick_host();
	struct daxfs_open_page *p;

	if (!h || !(p = obj(daxfs_load(&h->open_set), sizeof(*p))))
		return false;
	t->word = rnd_below(4) ? &p->ino[rnd_below(DAXFS_OPEN_ENTRIES)] :
		  (u64 *)p + rnd_below(4);
	return true;
}

static bool pick_host_word(struct target *t)
{
	struct daxfs_host *h = pick_host();

	if (!h)
		return false;
	t->word = (u64 *)h + rnd_below(sizeof(*h) / 8);
	return true;
}

static bool pick_lane(struct target *t)
{
	struct daxfs_host *h = pick_host();
	struct daxfs_lane *l;

	if (!h)
		return false;
	l = daxfs_lane_at(&fs, (u32)(h - fs.hosts), (u32)rnd_below(DAXFS_LANES));
	t->word = (u64 *)l + rnd_below(sizeof(*l) / 8);
	return true;
}

static bool pick_state(struct target *t)
{
	static const size_t offs[] = {
		offsetof(struct daxfs_state, bump.v),
		offsetof(struct daxfs_state, next_ino.v),
		offsetof(struct daxfs_state, epoch.v),
		offsetof(struct daxfs_state, used_bytes.v),
		offsetof(struct daxfs_state, rename_claim.v),
		offsetof(struct daxfs_state, page_stack.v),
	};

	t->word = (u64 *)((u8 *)fs.state + offs[rnd_below(6)]);
	return true;
}

/* A word of the superblock (not its checksum). */
static bool pick_super(struct target *t)
{
	t->word = (u64 *)fs.base + rnd_below(offsetof(struct daxfs_super, csum) / 8);
	t->fix = FIX_SUPER;
	return true;
}

/* A word of the base image's header or metadata (inodes, dirents). */
static bool pick_base(struct target *t)
{
	struct daxfs_base_header *bh;
	u64 meta;

	if (!fs.base_off)
		return false;
	bh = (struct daxfs_base_header *)(fs.base + fs.base_off);
	meta = fs.bh.dirent_off + fs.bh.nr_dirents * sizeof(struct daxfs_base_dirent);
	if (meta > fs.base_size || meta < fs.bh.inode_off || !rnd_below(4))
		t->word = (u64 *)bh + rnd_below(offsetof(struct daxfs_base_header,
							 meta_csum) / 8);
	else
		t->word = (u64 *)(fs.base + fs.base_off + ((fs.bh.inode_off +
				  rnd_below(meta - fs.bh.inode_off)) & ~7ULL));
	t->fix = FIX_BASE;
	return true;
}

/* A cache slot's state or tag (mostly a used one), a live word, a pin
 * owner, a pin byte's word, a header word or a backing descriptor's. */
static bool pick_pcache(struct target *t)
{
	struct daxfs_pcache_view *pc = &fs.pc;
	struct daxfs_pcache_slot *sl;
	u64 i, tries;

	if (!pc->hdr || !pc->nr_slots)
		return false;
	switch (rnd_below(9)) {
	case 0:
		t->word = (u64 *)pc->live + rnd_below(sizeof(*pc->live) / 8);
		return true;
	case 1:
		t->word = &pc->owner[rnd_below(fs.sb.max_hosts)];
		return true;
	case 2:
		t->word = (u64 *)(pc->pins + (rnd_below(pc->nr_slots * pc->pin_stride) & ~7ULL));
		return true;
	case 3:
		t->word = (u64 *)pc->hdr + rnd_below(offsetof(struct daxfs_pcache_header,
							      backing) / 8);
		t->fix = FIX_PCACHE;
		return true;
	case 4:
		/* a descriptor word that names a backing file (size, id,
		 * header checksum): only fsck --backing can tell */
		if (!pc->nr_backing)
			return false;
		t->word = (u64 *)&pc->hdr->backing[rnd_below(pc->nr_backing)] +
			  rnd_below(4);
		t->fix = FIX_PCACHE;
		return true;
	}
	for (tries = 0; tries < 64; tries++) {
		i = rnd_below(pc->nr_slots);
		sl = &pc->slots[i];
		if (daxfs_load(&sl->state) || tries == 63)
			break;
	}
	t->word = rnd() & 1 ? &sl->state : &sl->tag;
	return true;
}

/* Recomputes the checksum of the header the target lies in (3 times in
 * 4), so that the damage gets past the checksum. */
static void fix_csum(const struct target *t)
{
	struct daxfs_base_header *bh;
	struct daxfs_super *sb;
	struct daxfs_pcache_header *ph;
	u64 meta;

	if (!t->fix || !rnd_below(4))
		return;
	switch (t->fix) {
	case FIX_SUPER:
		sb = (struct daxfs_super *)fs.base;
		sb->csum = daxfs_crc32c(0, sb, offsetof(struct daxfs_super, csum));
		break;
	case FIX_BASE:
		bh = (struct daxfs_base_header *)(fs.base + fs.base_off);
		meta = fs.bh.dirent_off + fs.bh.nr_dirents * sizeof(struct daxfs_base_dirent);
		if (meta <= fs.base_size && meta >= fs.bh.inode_off)
			bh->meta_csum = daxfs_crc32c(0, fs.base + fs.base_off + fs.bh.inode_off,
						     meta - fs.bh.inode_off);
		bh->csum = daxfs_crc32c(0, bh, offsetof(struct daxfs_base_header, csum));
		break;
	case FIX_PCACHE:
		ph = fs.pc.hdr;
		ph->csum = daxfs_crc32c(0, ph, offsetof(struct daxfs_pcache_header, csum));
		break;
	default:
		break;
	}
}

static bool pick(enum kind k, struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->kind = k;
	switch (k) {
	case K_DIRENT:	return pick_trie(t, true);
	case K_TRIE:	return pick_trie(t, false);
	case K_INODE:	return pick_inode_word(t);
	case K_BUCKET:	return pick_bucket(t);
	case K_RADIX:	return pick_radix(t);
	case K_SYMLINK:	return pick_symlink(t);
	case K_FREE:	return pick_free(t);
	case K_LIMBO:	return pick_limbo(t);
	case K_OPENSET:	return pick_openset(t);
	case K_HOST:	return pick_host_word(t);
	case K_LANE:	return pick_lane(t);
	case K_SUPER:	return pick_super(t);
	case K_BASE:	return pick_base(t);
	case K_PCACHE:	return pick_pcache(t);
	default:	return pick_state(t);
	}
}

/* A hostile value: random, a bit flip, 0, ~0, off by one, or an offset
 * inside the pool (the values that pass a naive check). */
static u64 mutate(u64 old, bool low16)
{
	static const u16 lens[] = { 0, 1, 255, 256, 4096, 0xffff };
	u64 pool = fs.pool_end - fs.pool_off;

	if (low16) {
		u64 len = rnd() & 1 ? lens[rnd_below(6)] : rnd() & 0xffff;

		return (old & ~0xffffULL) | len;
	}
	switch (rnd_below(8)) {
	case 0:		return rnd();
	case 1:		return old ^ (1ULL << rnd_below(64));
	case 2:		return 0;
	case 3:		return ~0ULL;
	case 4:		return rnd() & 1 ? old + 1 : old - 1;
	case 5:		return ((fs.pool_off + rnd_below(pool)) &
			       ~(DAXFS_OFF_ALIGN - 1)) | (old & 63);
	case 6:		return fs.pool_off + rnd_below(pool);
	default:	return (old & ~0xffffULL) | (rnd() & 0xffff);
	}
}

static enum kind pick_kind(void)
{
	unsigned int total = 0, r, k;

	for (k = 0; k < K_NR; k++)
		total += weight[k];
	r = (unsigned int)rnd_below(total);
	for (k = 0; k < K_NR; k++) {
		if (r < weight[k])
			return (enum kind)k;
		r -= weight[k];
	}
	return K_STATE;
}

static int set_kinds(const char *list)
{
	char buf[256], *tok, *save = NULL;
	unsigned int k, w[K_NR] = { 0 };
	bool any = false;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < K_NR && strcmp(tok, kind_name[k]); k++)
			;
		if (k == K_NR)
			return -EINVAL;
		w[k] = weight[k] ? weight[k] : named_weight[k];
		any = true;
	}
	if (!any)
		return -EINVAL;
	memcpy(weight, w, sizeof(w));
	return 0;
}

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: daxfs-chaos [-s SEED] [-r RATE] [-n COUNT] [-t SECONDS]\n"
		"                   [-k KIND,...] [-l LOG] [-q] REGION\n"
		"Writes random values into random live words of REGION while\n"
		"hosts work on it (a hostile peer, for testing only).\n"
		"  -s SEED     random seed (default: time)\n"
		"  -r RATE     corruptions per second (0: as fast as possible)\n"
		"  -n COUNT    stop after COUNT corruptions (0: no limit)\n"
		"  -t SECONDS  stop after SECONDS (0: no limit)\n"
		"  -k KINDS    only these kinds: dirent,trie,inode,bucket,radix,\n"
		"              symlink,free,limbo,openset,host,lane,state;\n"
		"              only when named: super,base,pcache (fixed headers,\n"
		"              checksums mostly recomputed: for corrupt images)\n"
		"  -l LOG      append one line per corruption: N KIND OFFSET OLD NEW\n"
		"  -q          no summary\n");
}

struct opts {
	u64 seed, count;
	double rate, secs;
	const char *log_path, *region;
	bool quiet;
};

/* 0 to run, else the exit code. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int opt;

	o->seed = (u64)time(NULL);
	while ((opt = getopt(argc, argv, "s:r:n:t:k:l:qh")) != -1) {
		switch (opt) {
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			o->rate = strtod(optarg, NULL);
			break;
		case 'n':
			o->count = strtoull(optarg, NULL, 0);
			break;
		case 't':
			o->secs = strtod(optarg, NULL);
			break;
		case 'k':
			if (!set_kinds(optarg))
				break;
			tool_err("bad kind list '%s'", optarg);
			return TOOL_EXIT_USAGE;
		case 'l':
			o->log_path = optarg;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	o->region = argv[optind];
	return 0;
}

/* Maps the region read-write without joining: the chaos host is no
 * host, only a source of stray stores. */
static int map_region(const char *path)
{
	struct stat st;
	void *base;
	int fd, err;

	fd = open(path, O_RDWR);
	if (fd < 0 || fstat(fd, &st)) {
		tool_errno(errno, "%s", path);
		return -1;
	}
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	close(fd);
	if (base == MAP_FAILED) {
		tool_errno(errno, "mmap %s", path);
		return -1;
	}
	err = daxfs_fs_open(&fs, base, (u64)st.st_size, DAXFS_FS_RDONLY);
	if (err) {
		tool_errno(-err, "%s", path);
		return -1;
	}
	return 0;
}

/* One corruption; false when no live word of the kind drawn was found. */
static bool corrupt_one(FILE *log, u64 n, u64 *per)
{
	struct target t;
	u64 old, new;

	if (!pick(pick_kind(), &t) || !t.word)
		return false;
	old = daxfs_load(t.word);
	new = mutate(old, t.low16);
	__atomic_store_n(t.word, new, __ATOMIC_RELAXED);
	fix_csum(&t);
	per[t.kind]++;
	if (log)
		fprintf(log, "%llu %s %#llx %#llx %#llx\n",
			(unsigned long long)n, kind_name[t.kind],
			(unsigned long long)((u8 *)t.word - fs.base),
			(unsigned long long)old, (unsigned long long)new);
	return true;
}

int main(int argc, char **argv)
{
	u64 n = 0, tries = 0, per[K_NR] = { 0 };
	struct opts o = { 0 };
	FILE *log = NULL;
	double t0, el;
	unsigned int k;
	int ret;

	tool_name = "daxfs-chaos";
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret;
	if (map_region(o.region))
		return TOOL_EXIT_FAIL;
	if (o.log_path && !(log = fopen(o.log_path, "a"))) {
		tool_errno(errno, "%s", o.log_path);
		return TOOL_EXIT_FAIL;
	}
	rng = o.seed * 0x9e3779b97f4a7c15ULL + 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	t0 = now_seconds();
	while (!stop && (!o.count || n < o.count)) {
		el = now_seconds() - t0;
		if (o.secs && el >= o.secs)
			break;
		if (o.rate > 0 && n >= el * o.rate) {
			usleep(1000);
			continue;
		}
		tries++;
		if (corrupt_one(log, n + 1, per))
			n++;
	}
	if (log)
		fclose(log);
	if (o.quiet)
		return TOOL_EXIT_OK;
	printf("seed %llu: %llu corruptions in %.1f s (%llu picks)\n",
	       (unsigned long long)o.seed, (unsigned long long)n,
	       now_seconds() - t0, (unsigned long long)tries);
	for (k = 0; k < K_NR; k++)
		if (per[k])
			printf("  %-8s %llu\n", kind_name[k],
			       (unsigned long long)per[k]);
	return TOOL_EXIT_OK;
}
