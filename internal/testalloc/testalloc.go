// Package testalloc counts the allocations a request makes on its own
// goroutine. testing.AllocsPerRun counts the whole process's, and an
// ingestion request waits for a commit that another goroutine makes, whose
// allocations vary from run to run (the SQLite driver's goroutines): a
// count of the request path alone has to leave those out.
package testalloc

import (
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// Under runs f n times with every allocation sampled and returns the
// allocations a run made in stacks that pass through a function whose
// name contains fn (such as "(*Handler).ServeHTTP"). It cannot run beside
// other tests that change runtime.MemProfileRate.
func Under(t testing.TB, fn string, n int, f func()) float64 {
	t.Helper()
	if raceEnabled {
		t.Skip("allocation counts are not the program's under the race detector; .ci/run runs this test without it")
	}
	f() // first-use allocations (caches, pools) are not the request's
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	before := count(fn)
	for range n {
		f()
	}
	return float64(count(fn)-before) / float64(n)
}

// count sums the allocations recorded in stacks through fn. The profile is
// published at the end of a GC cycle, up to two cycles late.
func count(fn string) int64 {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	var total int64
	for i := range recs {
		frames := runtime.CallersFrames(recs[i].Stack())
		for {
			fr, more := frames.Next()
			if strings.Contains(fr.Function, fn) {
				total += recs[i].AllocObjects
				break
			}
			if !more {
				break
			}
		}
	}
	return total
}

// ResponseWriter discards the body, keeps the status and reuses one header
// map (clear it between requests), so that an allocation count is the
// handlers' own and not an httptest.ResponseRecorder's.
type ResponseWriter struct {
	H      http.Header
	Status int
}

func (w *ResponseWriter) Header() http.Header         { return w.H }
func (w *ResponseWriter) WriteHeader(code int)        { w.Status = code }
func (w *ResponseWriter) Write(p []byte) (int, error) { return len(p), nil }
