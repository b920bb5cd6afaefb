// SPDX-License-Identifier: GPL-2.0 OR MIT

// Nested rounds (lc_run -m nest): the four names of the round's directory
// and, under each that is a directory, two more, x and y (name index
// 4 + 2p + k: "a/x" is 4, "a/y" 5, "b/x" 6 ...).  What lives under a
// directory belongs to the directory, not to its name: a rename of "a" to
// "b" moves "a/x" to "b/x", and between a rename's two steps both names
// show one directory.  So the model keeps directories by identity
// (dirNode, found by the id of their entry; a directory's id is never
// bound to an inode number, so ids are never reused in a round), and a
// name is a place: a directory (0: the round's) and a slot in it.
//
// An operation on a nested name walks to its parent first (opWalkA, for a
// rename or link's second name opWalkB): the walk reads the parent's name
// at one moment, the operation then acts on the directory it found,
// wherever that is by then.  A directory removed in between is dead: its
// names are empty and nothing can be added there (ENOENT), as in
// docs/namespace.md "Meeting a half-done rmdir".  libdaxfs walks the
// parent of a path, then calls the core on that directory's inode: the
// two steps are what it does.
package main

import "syscall"

const (
	nTop   = 4  // names of the round's directory
	nNames = 12 // with the nested ones
	nDirs  = 16 // live directories a state can hold
	nWalks = 16 // walks of operations in flight (2 per client: 8 clients)
)

var names = []string{"a", "b", "c", "d", "a/x", "a/y", "b/x", "b/y",
	"c/x", "c/y", "d/x", "d/y"}

func isNested(i int64) bool  { return i >= nTop }
func parentOf(i int64) int64 { return (i - nTop) / 2 }
func slotOf(i int64) int8    { return int8((i - nTop) % 2) }

// sameLeaf: whether names i and j can be one name at two moments (a
// directory renamed between): the same top name, or the same slot under
// any directory.
func sameLeaf(i, j int64) bool {
	return i == j || (isNested(i) && isNested(j) && slotOf(i) == slotOf(j))
}

type place struct {
	dir uint64 // 0: the round's directory; else a directory's id
	k   int8
}

type dirNode struct {
	id uint64 // 0: a free node
	// orphan: named nowhere, kept (an exchange that lost its old name
	// to an rmdir left the directory it moved to fsck: its names still
	// count in link counts)
	orphan bool
	k      [2]entry
}

type walk struct {
	id  int32 // the operation's id + 1; 0: a free record
	b   bool  // the walk of the second name
	dir uint64
	err int64
}

func (s *nsState) node(id uint64) *dirNode {
	if id == 0 {
		return nil
	}
	for i := range s.d {
		if s.d[i].id == id {
			return &s.d[i]
		}
	}
	return nil
}

// at: the entry in place p (nothing in a dead directory).
func (s *nsState) at(p place) entry {
	if p.dir == 0 {
		return s.e[p.k]
	}
	if n := s.node(p.dir); n != nil {
		return n.k[p.k]
	}
	return entry{}
}

func (s *nsState) live(p place) bool { return p.dir == 0 || s.node(p.dir) != nil }

func (s *nsState) set(p place, e entry) {
	if p.dir == 0 {
		s.e[p.k] = e
	} else if n := s.node(p.dir); n != nil {
		n.k[p.k] = e
	}
}

// newDir gives directory id its (empty) node.
func (s *nsState) newDir(id uint64) {
	for i := range s.d {
		if s.d[i].id == 0 {
			s.d[i] = dirNode{id: id}
			return
		}
	}
	panic("lincheck: more live directories than the model holds (nDirs)")
}

func (s *nsState) empty(id uint64) bool {
	n := s.node(id)
	return n == nil || (n.k[0].typ == tNone && n.k[1].typ == tNone)
}

// each calls f on every name: the round's directory's, then those of
// every directory the state holds (named or orphaned).
func (s *nsState) each(f func(e *entry)) {
	for i := range s.e {
		f(&s.e[i])
	}
	for i := range s.d {
		if s.d[i].id != 0 {
			f(&s.d[i].k[0])
			f(&s.d[i].k[1])
		}
	}
}

// parentDir: the directory holding directory id (0: the round's, or none).
func (s *nsState) parentDir(id uint64) uint64 {
	for i := range s.d {
		for _, e := range s.d[i].k {
			if s.d[i].id != 0 && e.typ == tDir && e.id == id {
				return s.d[i].id
			}
		}
	}
	return 0
}

// within: whether directory dir is anc or below it.
func (s *nsState) within(dir, anc uint64) bool {
	for n := 0; dir != 0 && n <= nDirs; n++ {
		if dir == anc {
			return true
		}
		dir = s.parentDir(dir)
	}
	return false
}

// gc frees the nodes of directories named nowhere (removed, replaced):
// what is reachable from the round's directory, the rename in flight and
// the orphans stays.
func (s *nsState) gc() {
	var keep [nDirs]bool
	var mark func(e entry)
	mark = func(e entry) {
		if e.typ != tDir {
			return
		}
		for i := range s.d {
			if s.d[i].id == e.id && !keep[i] {
				keep[i] = true
				mark(s.d[i].k[0])
				mark(s.d[i].k[1])
			}
		}
	}
	for _, e := range s.e {
		mark(e)
	}
	mark(s.fl.src)
	mark(s.fl.tgt)
	for i := range s.d {
		if s.d[i].orphan {
			mark(entry{typ: tDir, id: s.d[i].id})
		}
	}
	for i := range s.d {
		if !keep[i] {
			s.d[i] = dirNode{}
		}
	}
}

// walkTo: the walk of a nested name's parent (opWalkA, opWalkB): what it
// finds in the round's directory now.  A symlink there is followed to a
// name that does not exist.
func (s nsState) walkTo(in input) []interface{} {
	i := in.a
	if in.op == opWalkB {
		i = in.b
	}
	w := walk{id: int32(in.id) + 1, b: in.op == opWalkB}
	// the VFS walks to the old name's parent first (do_renameat2,
	// do_linkat: a guest's, d = 1)
	if _, _, ok := s.resolve(in, false); w.b && in.d == 1 && !ok {
		return nil
	}
	switch e := s.e[parentOf(i)]; e.typ {
	case tDir:
		w.dir = e.id
	case tNone, tLink:
		w.err = errno(syscall.ENOENT)
	default:
		w.err = errno(syscall.ENOTDIR)
	}
	for j := range s.w {
		if s.w[j].id == 0 {
			s.w[j] = w
			return []interface{}{s}
		}
	}
	panic("lincheck: more walks in flight than the model holds (nWalks)")
}

// resolve: the place of in's first (or second: b) name, from its walk;
// err: the walk's; ok false: its walk has not happened yet.
func (s *nsState) resolve(in input, b bool) (p place, err int64, ok bool) {
	i := in.a
	if b {
		i = in.b
	}
	if !isNested(i) {
		return place{k: int8(i)}, 0, true
	}
	for _, w := range s.w {
		if w.id == int32(in.id)+1 && w.b == b {
			return place{dir: w.dir, k: slotOf(i)}, w.err, true
		}
	}
	return place{}, 0, false
}

func (s *nsState) dropWalks(in input) {
	for j := range s.w {
		if s.w[j].id == int32(in.id)+1 {
			s.w[j] = walk{}
		}
	}
}

// subdirs: directory id's link count, 2 and one per directory in it.
func (s *nsState) subdirs(id uint64) uint64 {
	n := uint64(2)
	if d := s.node(id); d != nil {
		for j, e := range d.k {
			// one directory under both names between a rename's steps
			if e.typ == tDir && (j == 0 || d.k[0].typ != tDir || d.k[0].id != e.id) {
				n++
			}
		}
	}
	return n
}
