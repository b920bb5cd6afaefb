// SPDX-License-Identifier: GPL-2.0 OR MIT

// History lines written by lc_run (tests/lincheck/lc_driver.c):
//
//	R round mode
//	client call ret op a b c d res o1 o2 o3     (ret 0: never returned)
package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"

	"github.com/anishathalye/porcupine"
)

// Operation codes, as in tests/lincheck/lc.h.
const (
	opCreate = 1 + iota
	opUnlink
	opMkdir
	opRmdir
	opRename
	opLink
	opSymlink
	opStat
	opReaddir
	opTrunc
	// the two steps of a rename (model_ns.go), made by readRounds
	opRenameP
	opRenameD
	// a guest's rename or link: the VFS's lookup of its source, first
	opRenameL
	opLinkL
	// the walk to a nested name's parent (model_nest.go): of a, of b
	opWalkA
	opWalkB
)

const (
	opPwrite = 20 + iota
	opAppend
	opFtrunc
	opRead
	opFstat
	opFalloc
)

const (
	modeNS   = 0
	modeData = 1
	modeNest = 2 // namespace rounds with nested names (model_nest.go)
)

// input is what a worker asked; id numbers operations within a round
// (a rename's two steps share one); exact: a final observation of a round
// where no worker was killed; racy: another operation that can remove its
// first name overlaps it, one that never returned from its call on
// (model_ns.go, "Racing a remover").
type input struct {
	op         int
	a, b, c, d int64
	id         int
	exact      bool
	racy       bool
	busy       bool   // a name under a directory changes meanwhile
	touched    uint64 // readdir: names an overlapping operation changes
}

// output is what it got back; a pending operation has a nil output.
type output struct {
	res        int64
	o1, o2, o3 uint64
}

type round struct {
	id   uint64
	mode int
	ops  []porcupine.Operation
}

// readRounds sends each round of r on the channel, in order.
func readRounds(r io.Reader, out chan<- *round) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	var cur *round
	var maxTs int64
	var nextID int
	flush := func() {
		if cur == nil {
			return
		}
		// a pending operation may take effect at any time after its
		// call: it returns after everything else in the round
		crashed := false
		observer := 0
		for i := range cur.ops {
			if cur.ops[i].Output == nil {
				cur.ops[i].Return = maxTs + 1
				crashed = true
			}
			if cur.ops[i].ClientId > observer {
				observer = cur.ops[i].ClientId
			}
		}
		for i := range cur.ops {
			if cur.ops[i].ClientId == observer && !crashed {
				in := cur.ops[i].Input.(input)
				in.exact = true
				cur.ops[i].Input = in
			}
		}
		markRacy(cur.ops, observer)
		out <- cur
		cur = nil
	}
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "R" {
			flush()
			id, err1 := strconv.ParseUint(f[1], 10, 64)
			mode, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				return fmt.Errorf("line %d: bad round header", line)
			}
			cur = &round{id: id, mode: mode}
			maxTs = 0
			nextID = 0
			continue
		}
		if len(f) != 12 || cur == nil {
			return fmt.Errorf("line %d: %d fields outside a round", line, len(f))
		}
		var v [12]int64
		for i := range f {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				u, err := strconv.ParseUint(f[i], 10, 64)
				if err != nil {
					return fmt.Errorf("line %d: field %d: %v", line, i, err)
				}
				n = int64(u)
			}
			v[i] = n
		}
		op := porcupine.Operation{
			ClientId: int(v[0]),
			Call:     v[1],
			Input: input{op: int(v[3]), a: v[4], b: v[5], c: v[6],
				d: v[7], id: nextID},
		}
		// ESTALE: the worker's host was declared dead mid-operation
		// (it stalled past its lease); recovery decides, as for a kill.
		// Not a guest's namespace call (d = 1): daxfs.ko turns a
		// fenced op's ESTALE into EIO (kernel/super.c daxfs_kerr), so
		// one that reaches the caller failed (nsStep)
		guestNS := v[7] == 1 && v[3] < opPwrite
		if v[2] != 0 && (v[8] != -int64(syscall.ESTALE) || guestNS) {
			op.Return = v[2]
			op.Output = output{res: v[8], o1: uint64(v[9]),
				o2: uint64(v[10]), o3: uint64(v[11])}
			if v[2] > maxTs {
				maxTs = v[2]
			}
		}
		if v[1] > maxTs {
			maxTs = v[1]
		}
		cur.ops = append(cur.ops, splitWalks(op)...)
		nextID++
	}
	flush()
	return sc.Err()
}

// splitRename makes a rename that succeeded or never returned two
// operations over its interval: its publishing step and its dropping step
// (model_ns.go).  A failed rename changed nothing: it stays one.
//
// A guest's rename (d = 1) has one more before them, the VFS's lookup of
// the source name (opRenameL): the VFS looks the two names up one after
// the other, and answers some renames from what it found (model_ns.go,
// vfsCheck) without calling the filesystem.
func splitRename(op porcupine.Operation) []porcupine.Operation {
	in := op.Input.(input)
	if in.op == opLink && in.d == 1 {
		l := op
		in.op = opLinkL
		l.Input = in
		return []porcupine.Operation{l, op}
	}
	if in.op != opRename {
		return []porcupine.Operation{op}
	}
	var ops []porcupine.Operation
	if in.d == 1 {
		l := op
		in.op = opRenameL
		l.Input = in
		ops = append(ops, l)
		in.op = opRename
	}
	if op.Output != nil && op.Output.(output).res != 0 {
		return append(ops, op)
	}
	p, d := op, op
	in.op = opRenameP
	p.Input = in
	in.op = opRenameD
	d.Input = in
	return append(ops, p, d)
}

// splitWalks puts before an operation on a nested name its walks to the
// name's parent (model_nest.go), over the same interval; then splits a
// rename (splitRename).
func splitWalks(op porcupine.Operation) []porcupine.Operation {
	in := op.Input.(input)
	var ops []porcupine.Operation
	if in.op >= opPwrite || in.op == opReaddir {
		return []porcupine.Operation{op}
	}
	if isNested(in.a) {
		w := op
		wi := in
		wi.op = opWalkA
		w.Input = wi
		ops = append(ops, w)
	}
	if (in.op == opRename || in.op == opLink) && isNested(in.b) {
		w := op
		wi := in
		wi.op = opWalkB
		w.Input = wi
		ops = append(ops, w)
	}
	return append(ops, splitRename(op)...)
}

// removes: whether op can take name i away (or put another object there).
func removes(in input, i int64) bool {
	switch in.op {
	case opUnlink, opRmdir:
		return sameLeaf(in.a, i)
	case opRename, opRenameP, opRenameD:
		return sameLeaf(in.a, i) || sameLeaf(in.b, i)
	}
	return false
}

// movesNested: whether op may add or take a name under a directory.
func movesNested(in input) bool {
	switch in.op {
	case opStat, opReaddir, opTrunc, opRenameL, opLinkL, opWalkA, opWalkB:
		return false
	case opRename, opRenameP, opRenameD, opLink:
		return isNested(in.a) || isNested(in.b)
	}
	return isNested(in.a)
}

// changes: the names op may add or remove (bit i: name i).
func changes(in input) uint64 {
	switch in.op {
	case opStat, opReaddir, opTrunc, opRenameL, opLinkL, opWalkA, opWalkB:
		return 0
	case opRename, opRenameP, opRenameD, opLink:
		return 1<<uint(in.a) | 1<<uint(in.b)
	}
	return 1 << uint(in.a)
}

func markRacy(ops []porcupine.Operation, observer int) {
	for i := range ops {
		in := ops[i].Input.(input)
		for j := range ops {
			if i == j || ops[j].Return < ops[i].Call ||
				ops[j].Call > ops[i].Return {
				continue
			}
			// a remover that never returned (killed: it may take
			// effect at any time after its call, recovery rolling it
			// forward) races the workers' operations after its call
			// as well; the observer looks after its recovery
			other := ops[j].Input.(input)
			killed := ops[j].Output == nil
			if !killed || ops[i].ClientId != observer {
				in.racy = in.racy || removes(other, in.a)
				// a killed host (or its dead recoverer) may
				// leave an entry count high (docs/recovery.md)
				in.busy = in.busy || movesNested(other) || killed
			}
			if in.op == opReaddir {
				in.touched |= changes(other)
			}
		}
		ops[i].Input = in
	}
}
