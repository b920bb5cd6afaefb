// SPDX-License-Identifier: GPL-2.0 OR MIT

// The sequential model of a round's directory (namespace rounds): four
// names, each empty or naming a file, a directory (empty but in nested
// rounds: model_nest.go), a symlink that never resolves or a whiteout
// (RENAME_WHITEOUT, lc_run -W).  Hard links share an identity: a file's is
// its inode number (create reports it); a directory's, a symlink's and a
// file whose create never returned get a placeholder (>= pseudo) that a
// later stat binds to the inode number it sees.  Every name also carries
// the tag of the leaf that made it, as a rename's second step needs.
//
// A rename is not one atomic step in DaxFS (docs/namespace.md, "Rename"):
// it publishes the new name (step 1), then drops the old one (step 2), and
// between the two both names exist.  With RENAME_WHITEOUT step 2 puts a
// new whiteout (a character device 0/0) at the old name in the same
// instant: the old name is never missing (docs/recovery.md).  readHistory splits every rename that
// succeeded or never returned into two operations over the same interval,
// opRenameP and opRenameD, and the model lets them take effect at two
// points, in that order; one cluster-wide claim serializes renames, so at
// most one is between its two steps (inflight), and no other rename, not
// even one that fails, can take effect meanwhile.
//
// Link counts: a rename pins its file (nlink+1) for its whole run, link
// raises the count before it publishes and unlink drops it after it
// removed the name, and recovery leaves counts high, never low
// (docs/recovery.md).  So an lstat may see more links than names, never
// fewer unless a remover of its name races it (see below); the
// final lstat of a round without a crash must see exactly the names.
//
// readdir walks the directory while others change it: a name added or
// removed by an operation that overlaps it may or may not be listed
// (as POSIX allows), every other name must be exactly as the model says.
//
// Racing a remover: an operation by path finds its inode by name, then
// acts on the inode.  If a concurrent unlink or rename frees that inode in
// between, it fails with ENOENT although the name may be there again (as
// link(2) does on Linux); an lstat reads the attributes of an inode that
// the name no longer has (renamed, truncated, its count dropped: as
// Linux's lstat can); a truncate truncates a file that has another name
// by then, or none.  An operation that another one, which returned and
// can remove its name, overlaps (input.racy) may so fail at any point,
// changing nothing, such an lstat is not checked and such a truncate may
// have truncated any file.  So may a worker's operation called after the
// call of one that never returned (killed: its rename may replace the
// name at any time, recovery rolling it forward); the final lstats, made
// after its recovery, must see its outcome.
package main

import (
	"fmt"
	"syscall"

	"github.com/anishathalye/porcupine"
)

const (
	tNone = iota
	tFile
	tDir
	tLink
)

// tWhiteout: a character device (0/0), what lc_type_of calls "other".
const tWhiteout = 9

func typeName(t uint8) string {
	switch t {
	case tFile:
		return "file"
	case tDir:
		return "dir"
	case tLink:
		return "symlink"
	case tWhiteout:
		return "whiteout"
	}
	return "?"
}

const pseudo = uint64(1) << 48

type entry struct {
	typ  uint8
	leaf uint32
	id   uint64
	size uint64
}

// inflight: a rename between its two steps (id: its operation's id + 1).
type inflight struct {
	id       int32
	pa       place // the old name
	xchg     bool
	noop     bool
	wh       bool // RENAME_WHITEOUT: step 2 leaves a whiteout at a
	src, tgt entry
}

type nsState struct {
	e  [nTop]entry
	d  [nDirs]dirNode // directories, by identity (model_nest.go)
	w  [nWalks]walk   // walks of nested names in flight
	fl inflight
	// closed: a rename (id + 1) that never returned and whose second
	// step was placed as not having happened: its first may not follow.
	closed int32
	// vfsNoop: a guest's rename (id + 1) of two names of one object,
	// which the VFS answered itself (0) without the claim: its first step
	// took effect, its second (nothing to do) is still to come.
	vfsNoop int32
	// look: what the VFS found under the source name of a guest's rename
	// (id + 1) in flight, looked up before its target (vfsCheck)
	look [4]lookup
}

type lookup struct {
	id int32
	e  entry
}

// vfsCheck: what the VFS answers for a guest's rename from its two
// lookups, the source (la, found earlier) and the target (eb, now), without
// calling the filesystem (do_renameat2, vfs_rename: source == target,
// may_delete); decided false: the filesystem decides, under the rename
// claim, by the names as they are then.  trap: the directory of
// lock_rename's trap dentry (vfsTrap; 0: none), which do_renameat2
// compares with both dentries after the flags' EEXIST and ENOENT.
func vfsCheck(la, eb entry, flags int64, trap uint64) (res int64, decided bool) {
	switch {
	case la.typ == tNone:
		return errno(syscall.ENOENT), true
	case flags&renameExchange != 0 && eb.typ == tNone:
		return errno(syscall.ENOENT), true
	case flags&renameNoreplace != 0 && eb.typ != tNone:
		return errno(syscall.EEXIST), true
	// "source should not be ancestor of target"
	case trap != 0 && la.typ == tDir && la.id == trap:
		return errno(syscall.EINVAL), true
	// "target should not be an ancestor of source"
	case trap != 0 && eb.typ == tDir && eb.id == trap:
		if flags&renameExchange != 0 {
			return errno(syscall.EINVAL), true
		}
		return errno(syscall.ENOTEMPTY), true
	case eb.typ == tNone:
		return 0, false
	case la.typ == eb.typ && la.id == eb.id:
		return 0, true
	case flags&renameExchange != 0:
		return 0, false
	case la.typ == tDir && eb.typ != tDir:
		return errno(syscall.ENOTDIR), true
	case la.typ != tDir && eb.typ == tDir:
		return errno(syscall.EISDIR), true
	}
	return 0, false
}

// vfsTrap: for a guest's rename between the directories its walks found
// (pa.dir, pb.dir), the directory whose dentry lock_rename returns (fs/namei.c
// lock_two_directories: the child of the two parents' common ancestor on
// the way to the lower one; none when neither is above the other).  A
// nested round's walk goes through one name of the round's directory, so
// the only parents one above the other are the round's directory and a
// directory D a walk found in it: the trap is D's dentry.  A directory has
// one dentry (a lookup that finds it under another name moves it there:
// kernel/alias.c), so do_renameat2's comparisons of the looked-up dentries
// with the trap compare directories, by identity.
func vfsTrap(pa, pb place) uint64 {
	switch {
	case pa.dir == 0:
		return pb.dir
	case pb.dir == 0:
		return pa.dir
	}
	return 0
}

func (s *nsState) lookIdx(id int) int {
	for i := range s.look {
		if s.look[i].id == int32(id)+1 {
			return i
		}
	}
	return -1
}

// vfsLinkCheck: what the VFS answers for a guest's link from its lookup
// of the source (la, earlier) and of the new name (eb, now): do_linkat
// looks the source's whole path up (ENOENT) before it walks to the new
// name's parent (errB: that walk's error) and looks the new name up
// (EEXIST), and only then vfs_link sees a directory (EPERM).
func vfsLinkCheck(la, eb entry, errB int64) (res int64, decided bool) {
	switch {
	case la.typ == tNone:
		return errno(syscall.ENOENT), true
	case errB != 0:
		return errB, true
	case eb.typ != tNone:
		return errno(syscall.EEXIST), true
	case la.typ == tDir:
		return errno(syscall.EPERM), true
	}
	return 0, false
}

// lookUp: the VFS finds the source name of rename or link in (opRenameL,
// opLinkL), in the directory its walk found (nothing where that walk
// failed).  do_renameat2 walks to both parents first, then looks the names
// up under lock_rename; do_linkat looks the source's whole path up before
// it walks to the new name's parent.
func (s nsState) lookUp(in input) []interface{} {
	pa, errA, ok := s.resolve(in, false)
	_, _, walkedB := s.resolve(in, true)
	if !ok || (in.op == opRenameL && !walkedB) ||
		(in.op == opLinkL && isNested(in.b) && walkedB) {
		return nil
	}
	var e entry
	if errA == 0 {
		e = s.at(pa)
	}
	for i := range s.look {
		if s.look[i].id == 0 {
			s.look[i] = lookup{id: int32(in.id) + 1, e: e}
			return []interface{}{s}
		}
	}
	return nil
}

// vfsRename: a guest's rename (opRename or its first step) or link once
// its source was looked up: answered by the VFS (done), or not (the state
// without the lookup, to go on with the filesystem's rules).  A failed
// walk answers first, the old name's before the new one's (the VFS walks
// to the old name's parent first).
func (s nsState) vfsRename(in input, out *output) (next nsState, states []interface{}, done bool) {
	i := s.lookIdx(in.id)
	if i < 0 {
		return s, nil, true // its lookup first
	}
	la := s.look[i].e
	s.look[i] = lookup{}
	pa, errA, _ := s.resolve(in, false)
	pb, errB, _ := s.resolve(in, true)
	res, decided := errA, errA != 0
	switch {
	case decided:
	case in.op == opLink:
		res, decided = vfsLinkCheck(la, s.at(pb), errB)
	case errB != 0:
		res, decided = errB, true
	default:
		res, decided = vfsCheck(la, s.at(pb), in.c, vfsTrap(pa, pb))
	}
	if !decided {
		return s, nil, false
	}
	if out != nil && res != out.res {
		return s, nil, true
	}
	s.dropWalks(in)
	if in.op == opRenameP {
		s.vfsNoop = int32(in.id) + 1
	}
	return s, []interface{}{s}, true
}

func errno(e syscall.Errno) int64 { return -int64(e) }

func leafTag(in input, k uint32) uint32 { return uint32(in.id)*4 + k + 1 }

// names: the link count the names give object e (a directory: 2 and its
// subdirectories).
func (s *nsState) names(e entry) uint64 {
	if e.typ == tDir {
		return s.subdirs(e.id)
	}
	var n uint64
	s.each(func(o *entry) {
		if o.typ != tNone && o.id == e.id {
			n++
		}
	})
	return n
}

func (s *nsState) hasID(id uint64) bool {
	return s.names(entry{typ: tFile, id: id}) > 0
}

// twoNames: whether in names a second name (b) that it walks to.
func twoNames(op int) bool {
	return op == opRename || op == opRenameP || op == opLink
}

// apply runs in on s and tells the result it must give and the state after;
// fresh is the identity of a new object.  ok false: a walk of in's has not
// happened yet (model_nest.go), so in cannot take effect now.
func (s nsState) apply(in input, fresh uint64) (res int64, next nsState, ok bool) {
	if in.op == opRenameD {
		if s.vfsNoop == int32(in.id)+1 {
			s.vfsNoop = 0
			return 0, s, true
		}
		s = s.renameDrop()
		s.gc()
		return 0, s, true
	}
	pa, errA, ok := s.resolve(in, false)
	var pb place
	var errB int64
	if ok && twoNames(in.op) {
		pb, errB, ok = s.resolve(in, true)
	}
	if !ok {
		return 0, s, false
	}
	s.dropWalks(in)
	if errA != 0 {
		return errA, s, true
	}
	if errB != 0 && in.op == opLink {
		// libdaxfs looks the source up before it walks to the new name
		switch s.at(pa).typ {
		case tNone:
			return errno(syscall.ENOENT), s, true
		case tDir:
			return errno(syscall.EPERM), s, true
		}
	}
	if errB != 0 {
		return errB, s, true
	}
	res, s = s.applyAt(in, pa, pb, fresh)
	s.gc()
	return res, s, true
}

// applyAt: in on the places its names resolved to.
func (s nsState) applyAt(in input, pa, pb place, fresh uint64) (int64, nsState) {
	ea, eb := s.at(pa), s.at(pb)
	switch in.op {
	case opCreate:
		if ea.typ == tNone {
			if !s.live(pa) {
				return errno(syscall.ENOENT), s
			}
			s.set(pa, entry{typ: tFile, id: fresh, leaf: leafTag(in, 0)})
			return 1, s
		}
		if in.c != 0 {
			return errno(syscall.EEXIST), s
		}
		switch ea.typ {
		case tDir:
			return errno(syscall.EISDIR), s
		case tLink:
			return errno(syscall.ENOENT), s
		}
		return 0, s
	case opUnlink:
		switch ea.typ {
		case tNone:
			return errno(syscall.ENOENT), s
		case tDir:
			return errno(syscall.EISDIR), s
		}
		s.set(pa, entry{})
		return 0, s
	case opMkdir, opSymlink:
		if ea.typ != tNone {
			return errno(syscall.EEXIST), s
		}
		if !s.live(pa) {
			return errno(syscall.ENOENT), s
		}
		t := uint8(tDir)
		if in.op == opSymlink {
			t = tLink
		} else {
			s.newDir(fresh)
		}
		s.set(pa, entry{typ: t, id: fresh, leaf: leafTag(in, 0)})
		return 0, s
	case opRmdir:
		switch {
		case ea.typ == tNone:
			return errno(syscall.ENOENT), s
		case ea.typ != tDir:
			return errno(syscall.ENOTDIR), s
		case !s.empty(ea.id):
			return errno(syscall.ENOTEMPTY), s
		}
		s.set(pa, entry{})
		return 0, s
	case opRename, opRenameP:
		return s.renamePublish(in, pa, pb)
	case opLink:
		switch {
		case ea.typ == tNone:
			return errno(syscall.ENOENT), s
		case ea.typ == tDir:
			return errno(syscall.EPERM), s
		case eb.typ != tNone:
			return errno(syscall.EEXIST), s
		case !s.live(pb):
			return errno(syscall.ENOENT), s
		}
		ea.leaf = leafTag(in, 0)
		s.set(pb, ea)
		return 0, s
	case opTrunc:
		switch ea.typ {
		case tNone, tLink:
			return errno(syscall.ENOENT), s
		case tDir:
			return errno(syscall.EISDIR), s
		case tWhiteout:
			return errno(syscall.EINVAL), s
		}
		return 0, s.setSize(ea.id, uint64(in.c))
	}
	return 0, s
}

const (
	renameNoreplace = 1
	renameExchange  = 2
	renameWhiteout  = 4
)

// renameCheck: the errno a rename of pa to pb returns (0: it goes ahead),
// in the order core/namei.c rename_once checks.
func (s *nsState) renameCheck(pa, pb place, flags int64) int64 {
	ea, eb := s.at(pa), s.at(pb)
	xchg := flags&renameExchange != 0
	cross := pa.dir != pb.dir
	switch {
	case ea.typ == tNone:
		return errno(syscall.ENOENT)
	case xchg && eb.typ == tNone:
		return errno(syscall.ENOENT)
	case flags&renameNoreplace != 0 && eb.typ != tNone:
		return errno(syscall.EEXIST)
	case eb.typ != tNone && ea.id == eb.id && ea.typ == eb.typ:
		return 0
	case !xchg && ea.typ == tDir && eb.typ != tNone && eb.typ != tDir:
		return errno(syscall.ENOTDIR)
	case !xchg && ea.typ != tDir && eb.typ == tDir:
		return errno(syscall.EISDIR)
	// no directory into its own subtree
	case ea.typ == tDir && cross && s.within(pb.dir, ea.id):
		return errno(syscall.EINVAL)
	case xchg && eb.typ == tDir && cross && s.within(pa.dir, eb.id):
		return errno(syscall.EINVAL)
	case !xchg && eb.typ == tDir && !s.empty(eb.id):
		return errno(syscall.ENOTEMPTY)
	case eb.typ == tNone && !s.live(pb):
		return errno(syscall.ENOENT) // the target directory was removed
	}
	return 0
}

// renamePublish: step 1, the new name pb takes the source (replacing or
// exchanging the target); the old name pa stays until renameDrop.
func (s nsState) renamePublish(in input, pa, pb place) (int64, nsState) {
	flags := in.c
	ea, eb := s.at(pa), s.at(pb)
	if res := s.renameCheck(pa, pb, flags); res != 0 {
		return res, s
	}
	fl := inflight{id: int32(in.id) + 1, pa: pa,
		xchg: flags&renameExchange != 0, wh: flags&renameWhiteout != 0,
		src: ea, tgt: eb}
	if eb.typ != tNone && ea.id == eb.id && ea.typ == eb.typ {
		fl.noop = true // two links of one object: nothing to do
	} else {
		ea.leaf = leafTag(in, 1)
		s.set(pb, ea)
		fl.tgt.leaf = leafTag(in, 2) // the exchange's leaf for pa
	}
	if in.op == opRenameP {
		s.fl = fl
	} else if !fl.noop {
		s.fl = fl
		s = s.renameDrop()
	}
	return 0, s
}

// renameDrop: step 2, the old name goes (or takes the exchanged target)
// if it is still the leaf the rename found; someone who unlinked it
// meanwhile had it (docs/namespace.md, "Exchange racing an unlink").  A
// directory exchanged there whose old directory was removed meanwhile is
// named nowhere: fsck's (core/namei.c rename_src_gone).
func (s nsState) renameDrop() nsState {
	fl := s.fl
	s.fl = inflight{}
	if fl.noop {
		return s
	}
	cur := s.at(fl.pa)
	switch {
	case cur.typ != tNone && cur.leaf == fl.src.leaf:
		s.set(fl.pa, entry{})
		if fl.xchg {
			s.set(fl.pa, fl.tgt)
		}
		if fl.wh {
			// a new object (the rename's own identity: no other
			// operation of its id makes one), on the leaf tag 2
			s.set(fl.pa, entry{typ: tWhiteout, leaf: fl.tgt.leaf,
				id: pseudo + uint64(fl.id-1)})
		}
	case fl.xchg && fl.tgt.typ == tDir && cur.typ == tNone:
		if s.live(fl.pa) {
			s.set(fl.pa, fl.tgt)
		} else if n := s.node(fl.tgt.id); n != nil {
			n.orphan = true
		}
	}
	return s
}

// truncAny: a truncate by path that found its inode by name and then
// lost the name to a concurrent rename or unlink truncated some file: any
// of those the names hold now, or one no name holds any more.
func (s nsState) truncAny(in input) []interface{} {
	states := []interface{}{s}
	var seen []uint64
	s.each(func(e *entry) {
		if e.typ != tFile {
			return
		}
		for _, id := range seen {
			if id == e.id {
				return
			}
		}
		seen = append(seen, e.id)
		states = append(states, s.setSize(e.id, uint64(in.c)))
	})
	return states
}

// setSize: the file id now has size n, under every name and in the
// rename between its steps (whose second step may name it again).
func (s nsState) setSize(id, n uint64) nsState {
	s.each(func(e *entry) {
		if e.typ == tFile && e.id == id {
			e.size = n
		}
	})
	if s.fl.src.typ == tFile && s.fl.src.id == id {
		s.fl.src.size = n
	}
	if s.fl.tgt.typ == tFile && s.fl.tgt.id == id {
		s.fl.tgt.size = n
	}
	return s
}

// bind gives placeholder identity id the inode number ino everywhere.
func (s nsState) bind(id, ino uint64) nsState {
	s.each(func(e *entry) {
		if e.typ != tNone && e.id == id {
			e.id = ino
		}
	})
	if s.fl.src.id == id {
		s.fl.src.id = ino
	}
	if s.fl.tgt.id == id {
		s.fl.tgt.id = ino
	}
	return s
}

func (s nsState) observe(in input, out *output) (bool, nsState) {
	switch in.op {
	case opReaddir:
		var mask uint64
		for i, e := range s.e {
			if e.typ != tNone {
				mask |= 1 << i
			}
		}
		// names added or removed while it runs may or may not be
		// listed (POSIX readdir); the others must be exact
		return out.res == 0 && (out.o1^mask)&^in.touched == 0, s
	case opStat:
		pa, err, _ := s.resolve(in, false)
		s.dropWalks(in)
		if err != 0 {
			return out.res == err, s
		}
		e := s.at(pa)
		if e.typ == tNone {
			return out.res == errno(syscall.ENOENT), s
		}
		if out.res != 0 || out.o1&0xff != uint64(e.typ) {
			return false, s
		}
		n, want := out.o1>>8, s.names(e)
		if n < want || (in.exact && n != want) {
			return false, s
		}
		if e.typ != tFile {
			return true, s
		}
		if e.size != out.o3 {
			return false, s
		}
		if e.id >= pseudo {
			if s.hasID(out.o2) {
				return false, s
			}
			return true, s.bind(e.id, out.o2)
		}
		return e.id == out.o2, s
	}
	return false, s
}

// claimed: whether in must wait for the rename claim held by another.
// (A guest's rename that the VFS answers itself takes no claim: vfsRename.)
func (s *nsState) claimed(in input) bool {
	switch in.op {
	case opRename:
		return s.fl.id != 0 && !s.walkFailed(in)
	case opRenameP:
		return s.fl.id != 0 || s.closed == int32(in.id)+1
	case opRenameD:
		return s.fl.id != int32(in.id)+1 && s.vfsNoop != int32(in.id)+1
	}
	return false
}

// walked: whether in's walks (model_nest.go) have happened.
func (s *nsState) walked(in input) bool {
	if in.op == opRenameD || in.op == opReaddir {
		return true
	}
	_, _, ok := s.resolve(in, false)
	if ok && twoNames(in.op) {
		_, _, ok = s.resolve(in, true)
	}
	return ok
}

// walkFailed: whether a walk of in's failed: libdaxfs then returns before
// the core takes any claim.
func (s *nsState) walkFailed(in input) bool {
	_, errA, _ := s.resolve(in, false)
	_, errB, _ := s.resolve(in, true)
	return errA != 0 || (twoNames(in.op) && errB != 0)
}

func nsPending(s nsState, in input, fresh uint64) []interface{} {
	switch in.op {
	case opStat, opReaddir:
		return []interface{}{s}
	case opRenameL, opLinkL:
		return s.lookUp(in)
	case opRenameD:
		if s.fl.id == int32(in.id)+1 {
			_, next, _ := s.apply(in, fresh) // recovery rolls forward
			return []interface{}{next}
		}
		s.closed = int32(in.id) + 1
		return []interface{}{s}
	case opRenameP:
		if s.claimed(in) {
			return []interface{}{s}
		}
	}
	if _, next, ok := s.apply(in, fresh); ok {
		return []interface{}{s, next}
	}
	return []interface{}{s}
}

// undone: what an operation that failed having changed nothing leaves.
func (s nsState) undone(in input) []interface{} {
	s.dropWalks(in)
	return []interface{}{s}
}

func nsStep(s nsState, in input, out *output) []interface{} {
	fresh := pseudo + uint64(in.id)
	if in.op == opWalkA || in.op == opWalkB {
		if out == nil {
			return append([]interface{}{s}, s.walkTo(in)...)
		}
		return s.walkTo(in)
	}
	if out == nil {
		return nsPending(s, in, fresh)
	}
	if !s.walked(in) {
		return nil // its walks first
	}
	if out.res == errno(syscall.EBUSY) || out.res == errno(syscall.ESTALE) {
		// EBUSY: gave up waiting for a claim (a dead holder not yet
		// recovered).  ESTALE (a guest's only: readRounds): the VFS
		// walked again with LOOKUP_REVAL and lost once more, in a
		// lookup or on the inode a lookup found (docs/kernel.md
		// limitation 10, "Stale directory dentries").  Nothing changed
		return s.undone(in)
	}
	if in.op == opRenameL || in.op == opLinkL {
		return s.lookUp(in)
	}
	if in.d == 1 && (in.op == opRename || in.op == opRenameP || in.op == opLink) {
		next, states, done := s.vfsRename(in, out)
		if done {
			return states
		}
		s = next
	}
	if s.claimed(in) {
		return nil
	}
	if in.op == opStat || in.op == opReaddir {
		ok, next := s.observe(in, out)
		if !ok && in.racy {
			return s.undone(in)
		}
		if !ok {
			return nil
		}
		return []interface{}{next}
	}
	if in.op == opCreate && out.res == 1 {
		if s.hasID(out.o2) {
			return nil // an inode number two live files share
		}
		fresh = out.o2
	}
	if in.op == opTrunc && in.racy && out.res == 0 {
		s.dropWalks(in)
		return s.truncAny(in)
	}
	if in.op == opLink && out.res != 0 {
		// libdaxfs looks the source up (resolve_attr), then walks to
		// the new name: a walk that failed later may answer for a
		// source that was fine when it was looked up and is not now
		if _, errB, _ := s.resolve(in, true); errB != 0 && out.res == errB {
			return s.undone(in)
		}
	}
	pa, _, _ := s.resolve(in, false)
	res, next, _ := s.apply(in, fresh)
	if res != out.res {
		if in.racy && out.res == errno(syscall.ENOENT) {
			return s.undone(in)
		}
		// a name on its way in or out of a directory counts in it
		// (docs/namespace.md "Known limits"): ENOTEMPTY while one
		// overlaps, as if before the other emptied it
		if in.busy && out.res == errno(syscall.ENOTEMPTY) &&
			(in.op == opRmdir || in.op == opRename) {
			return s.undone(in)
		}
		return nil
	}
	if in.op == opCreate && res == 0 {
		e := s.at(pa)
		if e.id >= pseudo {
			if s.hasID(out.o2) {
				return nil
			}
			return []interface{}{next.bind(e.id, out.o2)}
		}
		if e.id != out.o2 {
			return nil
		}
	}
	return []interface{}{next}
}

func hashEntry(h uint64, e entry) uint64 {
	return (h ^ uint64(e.typ) ^ uint64(e.leaf)<<8 ^ e.id<<24 ^ e.size<<44) *
		1099511628211
}

var nsModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{nsState{}} },
	Step: func(state, in, out interface{}) []interface{} {
		var o *output
		if out != nil {
			v := out.(output)
			o = &v
		}
		return nsStep(state.(nsState), in.(input), o)
	},
	Hash: func(state interface{}) uint64 {
		s := state.(nsState)
		h := uint64(1469598103934665603)
		for _, e := range s.e {
			h = hashEntry(h, e)
		}
		for _, d := range s.d {
			if d.id != 0 {
				h = hashEntry(h^d.id<<20, d.k[0])
				h = hashEntry(h, d.k[1])
			}
		}
		for _, w := range s.w {
			if w.id != 0 {
				h = (h ^ uint64(w.id)<<40 ^ w.dir ^ uint64(w.err)) * 1099511628211
			}
		}
		for _, l := range s.look {
			h = hashEntry(h^uint64(l.id)<<40, l.e)
		}
		return hashEntry(h^uint64(s.fl.id)<<32^uint64(s.closed)^
			uint64(s.vfsNoop)<<16, s.fl.src)
	},
	DescribeOperation: describeOp,
	DescribeState: func(state interface{}) string {
		s := state.(nsState)
		d := ""
		for i, e := range s.e {
			if e.typ != tNone {
				d += fmt.Sprintf("%s=%s#%x/%d ", names[i],
					typeName(e.typ), e.id, e.size)
			}
		}
		for _, n := range s.d {
			for k, e := range n.k {
				if n.id != 0 && e.typ != tNone {
					d += fmt.Sprintf("#%x/%c=%s#%x/%d ", n.id,
						'x'+k, typeName(e.typ), e.id, e.size)
				}
			}
			if n.orphan {
				d += fmt.Sprintf("(#%x orphaned) ", n.id)
			}
		}
		if s.fl.id != 0 {
			d += fmt.Sprintf("(rename #%d from #%x/%d between its steps)",
				s.fl.id-1, s.fl.pa.dir, s.fl.pa.k)
		}
		return d
	},
}
