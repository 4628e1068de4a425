package main

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Beet's defaults for the Go runtime, for serve only, each used where the
// environment does not set the runtime's own variable. Measured on the
// ingestion load (docs/BENCHMARKS.md, "Why it is built this way"); why and
// when to change them: docs/OPERATIONS.md, "The Go runtime".
const (
	// extraProcs is how many Ps serve runs beyond the CPUs it may use. A
	// goroutine in a system call keeps its P until the runtime takes it
	// back, and the ingestion path spends much of its time in fsync and
	// SQLite's file writes: with one P a CPU, the answers queue behind them.
	extraProcs = 1
	// gcPercent is GOGC's default: a collection every 5x the live heap
	// instead of 2x, so that the mark phase takes its quarter of the Ps a
	// quarter as often under a stream of requests (4x the live heap
	// allocated between collections instead of 1x).
	gcPercent = 400
	// memoryLimit is GOMEMLIMIT's default, so that the larger GOGC does not
	// grow a large live heap fivefold: past it the collector runs sooner.
	memoryLimit = 256 << 20
)

var tuneOnce sync.Once

// tuneRuntime applies the defaults above once a process, and returns the
// settings in force as log attributes (serve puts them on its first line). It reads the process's own environment, as the
// runtime does, whatever getenv the command was given; an empty variable
// counts as unset, as it does for the runtime.
func tuneRuntime() []any {
	var attrs []any
	tuneOnce.Do(func() {
		var set []string
		if os.Getenv("GOMAXPROCS") == "" {
			runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + extraProcs)
			set = append(set, "GOMAXPROCS")
		}
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(gcPercent)
			set = append(set, "GOGC")
		}
		if os.Getenv("GOMEMLIMIT") == "" {
			debug.SetMemoryLimit(memoryLimit)
			set = append(set, "GOMEMLIMIT")
		}
		// Read GOGC without setting it: SetGCPercent(-1) would turn the
		// collector off for a moment.
		gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(gogc)
		attrs = []any{"gomaxprocs", runtime.GOMAXPROCS(0), "cpus", runtime.NumCPU(),
			"gogc", gogc[0].Value.Uint64(), "gomemlimit", debug.SetMemoryLimit(-1), "beet_defaults", set}
	})
	return attrs
}
