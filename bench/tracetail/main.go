// Command tracetail reads a Go execution trace of a Beet server (saved by
// bench/ingest -profile DIR -trace 3s, or from /debug/pprof/trace) and shows
// where its tail comes from: the spread of the time goroutines spend
// runnable before they run, and, for the worst episodes, what held the
// process's Ps meanwhile, running or in a system call.
//
//	go run ./bench/tracetail -over 3ms DIR/beet-sqlite-rate.trace
//
// go tool trace -pprof=sched sums the same waits by stack; this groups them
// in time, which is what a p99 feels.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// A wait is a goroutine made runnable and running only later.
type wait struct {
	at   trace.Time // when it ran
	took time.Duration
}

// A span is a goroutine running, or in a system call, from start to end.
type span struct {
	start, end trace.Time
	g          trace.GoID
	syscall    bool
}

// An episode is a cluster of long waits close together in time.
type episode struct {
	at    trace.Time
	waits int
	worst time.Duration
}

func main() {
	over := flag.Duration("over", 3*time.Millisecond, "waits at least this long make an episode")
	window := flag.Duration("window", 20*time.Millisecond, "long waits this close together are one episode")
	top := flag.Int("top", 6, "episodes to show, those with the most long waits first")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("tracetail: give one trace file")
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	waits, spans, names, first, err := read(f)
	if err != nil {
		log.Fatal(err)
	}
	if len(waits) == 0 {
		log.Fatal("tracetail: no goroutine waited in the trace")
	}
	slices.SortFunc(waits, func(a, b wait) int { return cmp.Compare(b.took, a.took) })
	at := func(p float64) time.Duration { return waits[int(float64(len(waits)-1)*(1-p))].took }
	fmt.Printf("%d waits from runnable to running: p50 %v, p99 %v, p99.9 %v, max %v\n",
		len(waits), at(0.5), at(0.99), at(0.999), waits[0].took)

	var eps []episode
	for _, w := range waits {
		if w.took < *over {
			break
		}
		i := slices.IndexFunc(eps, func(e episode) bool { return absDuration(time.Duration(w.at-e.at)) < *window })
		if i < 0 {
			eps = append(eps, episode{at: w.at, waits: 1, worst: w.took})
		} else {
			eps[i].waits++
		}
	}
	slices.SortStableFunc(eps, func(a, b episode) int { return cmp.Compare(b.waits, a.waits) })
	fmt.Printf("%d episodes with a wait of %v or more\n", len(eps), *over)
	for _, e := range eps[:min(*top, len(eps))] {
		from := e.at - trace.Time(e.worst)
		fmt.Printf("\nat %.3f s: %d waits of %v or more, the worst %v; in that %v the Ps held:\n",
			time.Duration(e.at-first).Seconds(), e.waits, *over, e.worst.Round(time.Microsecond), e.worst.Round(time.Microsecond))
		held := map[string]time.Duration{}
		for _, s := range spans {
			if lo, hi := max(s.start, from), min(s.end, e.at); hi > lo {
				name := names[s.g]
				if s.syscall {
					name += " (in a system call)"
				}
				held[name] += time.Duration(hi - lo)
			}
		}
		keys := make([]string, 0, len(held))
		for k := range held {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(held[b], held[a]) })
		for _, k := range keys[:min(8, len(keys))] {
			fmt.Printf("  %-80s %v\n", k, held[k].Round(time.Microsecond))
		}
	}
}

// read collects the trace's waits and spans, and names each goroutine.
func read(r io.Reader) (waits []wait, spans []span, names map[trace.GoID]string, first trace.Time, err error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	names = map[trace.GoID]string{}
	runnable := map[trace.GoID]trace.Time{}
	running := map[trace.GoID]trace.Time{}
	insyscall := map[trace.GoID]trace.Time{}
	for {
		ev, err := tr.ReadEvent()
		if errors.Is(err, io.EOF) {
			return waits, spans, names, first, nil
		}
		if err != nil {
			return nil, nil, nil, 0, err
		}
		if first == 0 {
			first = ev.Time()
		}
		if ev.Kind() != trace.EventStateTransition {
			continue
		}
		st := ev.StateTransition()
		if st.Resource.Kind != trace.ResourceGoroutine {
			continue
		}
		g, now := st.Resource.Goroutine(), ev.Time()
		if _, ok := names[g]; !ok {
			if name := nameOf(st.Stack); name != "" {
				names[g] = name
			} else if name := nameOf(ev.Stack()); name != "" {
				names[g] = name
			}
		}
		from, to := st.Goroutine()
		if from == trace.GoRunning {
			if t, ok := running[g]; ok {
				spans = append(spans, span{t, now, g, false})
				delete(running, g)
			}
		}
		if from == trace.GoSyscall {
			if t, ok := insyscall[g]; ok {
				spans = append(spans, span{t, now, g, true})
				delete(insyscall, g)
			}
		}
		switch to {
		case trace.GoRunnable:
			runnable[g] = now
		case trace.GoRunning:
			if t, ok := runnable[g]; ok && from == trace.GoRunnable {
				waits = append(waits, wait{now, time.Duration(now - t)})
			}
			delete(runnable, g)
			running[g] = now
		case trace.GoSyscall:
			insyscall[g] = now
		}
	}
}

// nameOf names a goroutine by its stack: an HTTP connection, else the
// outermost frame of Beet's own code, else the outermost frame.
func nameOf(s trace.Stack) string {
	var outer, ours string
	for f := range s.Frames() {
		outer = f.Func
		if strings.Contains(f.Func, "beethq/beet") {
			ours = f.Func
		}
	}
	switch {
	case outer == "net/http.(*conn).serve":
		return "an HTTP connection"
	case ours != "":
		return strings.TrimPrefix(ours, "github.com/beethq/beet/")
	}
	return outer
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
