// SPDX-License-Identifier: GPL-2.0 OR MIT

// The sequential model of one file (data rounds): its size.  Rounds are
// partitioned per file.
//
// Only sizes and counts are checked, not bytes: a read that overlaps a
// write or a shrink in flight may see part of it (reads are loads from
// the shared pages, as on any DAX filesystem: not atomic with respect to
// writes), so bytes have no single linearization point.  The size does
// (one word, moved by CAS), and so do the counts and offsets that depend
// on it: append's offset, a read's length, fstat.  The defects this
// model is for (an append or a give-back moving the size across a
// concurrent truncate or write) all show in sizes.
package main

import (
	"fmt"
	"syscall"

	"github.com/anishathalye/porcupine"
)

type fileState struct {
	size int64
}

// benign: errors that leave the file as it was (a full pool, a size CAS
// that lost too often).
func benign(res int64) bool {
	return res == -int64(syscall.ENOSPC) || res == -int64(syscall.EAGAIN)
}

// dataStep: the states after in, given out (nil: pending, may or may not
// have happened).
func dataStep(st fileState, in input, out *output) []interface{} {
	size := st.size
	if out == nil {
		switch in.op {
		case opPwrite:
			return []interface{}{st, fileState{imax(size, in.b+in.c)}}
		case opAppend:
			return []interface{}{st, fileState{size + in.c}}
		case opFtrunc:
			return []interface{}{st, fileState{in.c}}
		case opFalloc:
			return []interface{}{st, fallocState(st, in)}
		}
		return []interface{}{st}
	}
	ok := false
	next := st
	switch in.op {
	case opPwrite:
		switch {
		case out.res < 0:
			ok = benign(out.res)
		case out.res <= in.c:
			ok = true
			if out.res > 0 {
				next.size = imax(size, in.b+out.res)
			}
		}
	case opAppend:
		return appendStep(st, in, out)
	case opFtrunc:
		if out.res == 0 {
			ok = true
			next.size = in.c
		} else {
			ok = benign(out.res)
		}
	case opRead:
		ok = out.res == imin(imax(size-in.b, 0), in.c)
	case opFstat:
		ok = out.res == 0 && int64(out.o3) == size
	case opFalloc:
		// a failed fallocate changes no size (docs/files.md
		// "fallocate": ENOSPC is decided before the size moves)
		if out.res == 0 {
			ok = true
			next = fallocState(st, in)
		} else {
			ok = benign(out.res)
		}
	}
	if !ok {
		return nil
	}
	return []interface{}{next}
}

// fallocState: the size after a fallocate that succeeded: with
// KEEP_SIZE (a punch always has it) the size stays; otherwise it grows
// to the range's end, never down, in one step.
func fallocState(st fileState, in input) fileState {
	if in.d&0x01 != 0 {
		return st
	}
	return fileState{imax(st.size, in.b+in.c)}
}

// imax, imin: the builtins max and min need Go 1.21; Debian 12 has 1.19.
func imax(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

func imin(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}

// vfsAppend in d: an append through the VFS (a guest's write(2) with
// O_APPEND; lc.h LC_VFS_APPEND), which returns a count and no offset:
// checked by the size alone.
const vfsAppend = 0x100

// appendStep: an append reserves [s, s + len) by moving the size to
// s + len, then copies.  One that stops short (a full pool) may keep the
// whole reservation (its tail reads as zeros) or give back the unwritten
// tail, but at its one linearization point: the size may not be seen at
// s + len first and lowered afterwards (defect 6 did that, and cut a
// write that had ended at s + len).  A failed append may have kept its
// reservation too.
func appendStep(st fileState, in input, out *output) []interface{} {
	size := st.size
	switch {
	case out.res < 0:
		if !benign(out.res) {
			return nil
		}
		return []interface{}{st, fileState{size + in.c}}
	case out.res > in.c || (in.d&vfsAppend == 0 && int64(out.o1) != size):
		return nil
	case out.res < in.c:
		return []interface{}{fileState{size + out.res},
			fileState{size + in.c}}
	}
	return []interface{}{fileState{size + in.c}}
}

var dataModel = porcupine.NondeterministicModel{
	Init: func() []interface{} { return []interface{}{fileState{}} },
	Step: func(state, in, out interface{}) []interface{} {
		var o *output
		if out != nil {
			v := out.(output)
			o = &v
		}
		return dataStep(state.(fileState), in.(input), o)
	},
	Hash: func(state interface{}) uint64 {
		return uint64(state.(fileState).size)
	},
	DescribeOperation: describeOp,
	DescribeState: func(state interface{}) string {
		return fmt.Sprintf("size %d", state.(fileState).size)
	},
}
