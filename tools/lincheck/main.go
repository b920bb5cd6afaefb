// SPDX-License-Identifier: GPL-2.0 OR MIT

// lincheck: decides whether the histories lc_run writes are linearizable
// against a sequential model of the filesystem (docs/lincheck.md), with
// porcupine.  Each round is checked on its own (a fresh directory); a
// data round is partitioned per file.  Exit status: 0 all linearizable,
// 1 a violation (its history on stderr), 2 bad input.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
)

func describeOp(in, out interface{}) string {
	i := in.(input)
	var d string
	switch i.op {
	case opCreate:
		d = fmt.Sprintf("create(%s, excl=%d)", names[i.a], i.c)
	case opUnlink:
		d = "unlink(" + names[i.a] + ")"
	case opMkdir:
		d = "mkdir(" + names[i.a] + ")"
	case opRmdir:
		d = "rmdir(" + names[i.a] + ")"
	case opRename:
		d = fmt.Sprintf("rename(%s, %s, flags=%d)", names[i.a], names[i.b], i.c)
	case opRenameP:
		d = fmt.Sprintf("rename#%d(%s, %s, flags=%d).publish", i.id, names[i.a], names[i.b], i.c)
	case opRenameD:
		d = fmt.Sprintf("rename#%d(%s, %s, flags=%d).drop", i.id, names[i.a], names[i.b], i.c)
	case opRenameL:
		d = fmt.Sprintf("rename#%d(%s, %s, flags=%d).lookup", i.id, names[i.a], names[i.b], i.c)
	case opLinkL:
		d = fmt.Sprintf("link#%d(%s, %s).lookup", i.id, names[i.a], names[i.b])
	case opLink:
		d = fmt.Sprintf("link(%s, %s)", names[i.a], names[i.b])
	case opWalkA:
		d = fmt.Sprintf("op#%d.walk(%s)", i.id, names[i.a])
	case opWalkB:
		d = fmt.Sprintf("op#%d.walk(%s)", i.id, names[i.b])
	case opSymlink:
		d = "symlink(" + names[i.a] + ")"
	case opStat:
		d = "lstat(" + names[i.a] + ")"
	case opReaddir:
		d = "readdir()"
	case opTrunc:
		d = fmt.Sprintf("truncate(%s, %d)", names[i.a], i.c)
	case opPwrite:
		d = fmt.Sprintf("f%d.pwrite(off=%d, len=%d, byte=%d)", i.a, i.b, i.c, i.d)
	case opAppend:
		d = fmt.Sprintf("f%d.append(len=%d, byte=%d)", i.a, i.c, i.d&0xff)
		if i.d&vfsAppend != 0 {
			d = "vfs " + d
		}
	case opFtrunc:
		d = fmt.Sprintf("f%d.ftruncate(%d)", i.a, i.c)
	case opRead:
		d = fmt.Sprintf("f%d.pread(off=%d, len=%d)", i.a, i.b, i.c)
	case opFstat:
		d = fmt.Sprintf("f%d.fstat()", i.a)
	case opFalloc:
		d = fmt.Sprintf("f%d.fallocate(mode=%#x, off=%d, len=%d)", i.a, i.d, i.b, i.c)
	}
	if out == nil {
		return d + " -> (never returned)"
	}
	o := out.(output)
	return fmt.Sprintf("%s -> %d [%d %d %d]", d, o.res, o.o1, o.o2, o.o3)
}

func partitions(r *round) ([][]porcupine.Operation, porcupine.Model) {
	if r.mode == modeNS || r.mode == modeNest {
		return [][]porcupine.Operation{r.ops}, nsModel.ToModel()
	}
	byFile := map[int64][]porcupine.Operation{}
	for _, op := range r.ops {
		f := op.Input.(input).a
		byFile[f] = append(byFile[f], op)
	}
	var parts [][]porcupine.Operation
	for _, p := range byFile {
		parts = append(parts, p)
	}
	return parts, dataModel.ToModel()
}

type verdict struct {
	r       *round
	result  porcupine.CheckResult
	history []porcupine.Operation
	model   porcupine.Model
}

func check(r *round, timeout time.Duration) verdict {
	parts, model := partitions(r)
	v := verdict{r: r, result: porcupine.Ok}
	for _, p := range parts {
		res := porcupine.CheckOperationsTimeout(model, p, timeout)
		if res != porcupine.Ok {
			v.result, v.history, v.model = res, p, model
			if res == porcupine.Illegal {
				return v
			}
		}
	}
	return v
}

// -next: after the longest prefix, whether each operation left could
// take the next step (a checker's or a model's defect shows there)
var showNext = flag.Bool("next", false, "after a violation's longest prefix, try each operation left")
var debugOps []porcupine.Operation

func report(w io.Writer, v verdict, viz string) {
	fmt.Fprintf(w, "lincheck: round %d (%s): NOT LINEARIZABLE\n", v.r.id,
		map[int]string{modeNS: "namespace", modeData: "data", modeNest: "nested"}[v.r.mode])
	for _, op := range v.history {
		ret := fmt.Sprint(op.Return)
		if op.Output == nil {
			ret = "-"
		}
		fmt.Fprintf(w, "  client %d [%d, %s] %s\n", op.ClientId, op.Call,
			ret, describeOp(op.Input, op.Output))
	}
	debugOps = v.history
	_, info := porcupine.CheckOperationsVerbose(v.model, v.history, 0)
	explain(w, v.model, info)
	if viz == "" {
		return
	}
	if err := porcupine.VisualizePath(v.model, info, viz); err == nil {
		fmt.Fprintf(w, "lincheck: visualization in %s\n", viz)
	}
}

// explain replays the longest order porcupine found that fits the model,
// with the model's state after each step: the next operation of the
// history could not follow it.
func explain(w io.Writer, model porcupine.Model, info porcupine.LinearizationInfo) {
	var best []porcupine.Operation
	for _, part := range info.PartialLinearizationsOperations() {
		for _, l := range part {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	fmt.Fprintf(w, "  longest linearizable prefix (%d operations):\n", len(best))
	state := model.Init()
	for _, op := range best {
		_, state = model.Step(state, op.Input, op.Output)
		fmt.Fprintf(w, "    %s  => %s\n", describeOp(op.Input, op.Output),
			model.DescribeState(state))
	}
	if *showNext {
		done := map[porcupine.Operation]bool{}
		for _, op := range best {
			done[op] = true
		}
		for _, op := range debugOps {
			if !done[op] {
				ok, _ := model.Step(state, op.Input, op.Output)
				fmt.Fprintf(w, "    next? %v %s\n", ok, describeOp(op.Input, op.Output))
			}
		}
	}
}

func main() {
	timeout := flag.Duration("timeout", 20*time.Second, "search limit per round")
	viz := flag.String("viz", "", "write an HTML visualization of the first violation here")
	maxBad := flag.Int("max-violations", 3, "stop reporting after this many")
	stop := flag.Bool("stop", false, "exit at the first violation (the writer then gets SIGPIPE)")
	flag.Parse()
	in := io.Reader(os.Stdin)
	if flag.NArg() > 0 {
		f, err := os.Open(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "lincheck:", err)
			os.Exit(2)
		}
		defer f.Close()
		in = f
	}
	start := time.Now()
	rounds := make(chan *round, 256)
	verdicts := make(chan verdict, 256)
	var readErr error
	go func() {
		readErr = readRounds(in, rounds)
		close(rounds)
	}()
	var wg sync.WaitGroup
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				verdicts <- check(r, *timeout)
			}
		}()
	}
	go func() { wg.Wait(); close(verdicts) }()
	var nRounds, nOps, bad, unknown int
	summary := func() {
		secs := time.Since(start).Seconds()
		fmt.Printf("lincheck: %d rounds, %d operations, %d violations, %d unknown (timeout) in %.1f s (%.0f ops/s checked)\n",
			nRounds, nOps, bad, unknown, secs, float64(nOps)/secs)
	}
	for v := range verdicts {
		nRounds++
		for _, op := range v.r.ops {
			if o := op.Input.(input).op; o != opRenameD && o != opRenameL && o != opLinkL &&
				o != opWalkA && o != opWalkB {
				nOps++ // a rename's two steps are one operation
			}
		}
		switch v.result {
		case porcupine.Illegal:
			bad++
			if bad <= *maxBad {
				report(os.Stderr, v, *viz)
				*viz = ""
			}
			if *stop {
				summary()
				os.Exit(1)
			}
		case porcupine.Unknown:
			unknown++
			fmt.Fprintf(os.Stderr, "lincheck: round %d: search timed out (%d operations)\n",
				v.r.id, len(v.r.ops))
		}
	}
	summary()
	if readErr != nil {
		fmt.Fprintln(os.Stderr, "lincheck:", readErr)
		os.Exit(2)
	}
	if bad > 0 {
		os.Exit(1)
	}
}
