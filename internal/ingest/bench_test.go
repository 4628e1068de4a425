package ingest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

type benchRig struct {
	h      *ingest.Handler
	w      *ingest.Writer
	tokens []string
}

// newBenchRig makes 10,000 beets on a fresh store and an ingestion handler.
// With detect, detection follows every commit, as in `beet serve`, and
// every beet has had its first event before the timer starts: an auto
// beet is learning, a beet in period mode (period true) is watched, with a
// deadline written on every event.
func newBenchRig(b *testing.B, engine string, detect, period bool, opt ingest.WriterOptions) *benchRig {
	store := testdb.New(b, engine)
	ctx := context.Background()
	now := time.Now()
	a := &beet.Account{Plan: beet.PlanPro, CreatedAt: now}
	if err := store.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com", PasswordHash: "-", CreatedAt: now}); err != nil {
		b.Fatal(err)
	}
	r := &benchRig{}
	for i := range 10000 {
		d := beet.Detection{Mode: beet.ModeAuto}
		if period {
			d = beet.Detection{Mode: beet.ModePeriod, PeriodSeconds: 86400} // a day: none falls due during the run
		}
		bt := &beet.Beet{AccountID: a.ID, Name: "b" + strconv.Itoa(i), Token: beet.NewToken(), Status: beet.StatusNew,
			Timezone: "UTC", Detection: d, CreatedAt: now, UpdatedAt: now}
		if err := store.CreateBeet(ctx, bt); err != nil {
			b.Fatal(err)
		}
		r.tokens = append(r.tokens, bt.Token)
	}
	spool, err := ingest.OpenSpool(filepath.Join(b.TempDir(), "spool"), 0)
	if err != nil {
		b.Fatal(err)
	}
	var observe beet.Observer
	if detect {
		observe = service.New(store, service.Options{}).ObserveEvents
		var first []beet.Event
		for i := range 10000 {
			var id beet.EventID
			id[0], id[1], id[2] = 0xfe, byte(i>>8), byte(i)
			first = append(first, beet.Event{ID: id, BeetID: int64(i + 1), ReceivedAt: now.Add(-time.Hour), Method: "GET"})
		}
		for len(first) > 0 {
			n := min(len(first), 256)
			if err := store.AddEvents(ctx, first[:n], observe); err != nil {
				b.Fatal(err)
			}
			first = first[n:]
		}
	}
	opt.Observe = observe
	w := ingest.NewWriter(store, spool, opt)
	r.w = w
	r.h = ingest.New(ingest.Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w})
	b.Cleanup(func() { w.Close(); r.h.Close(); spool.Close() })
	return r
}

// BenchmarkHandler drives the whole ingestion path in-process (no
// network): limiter, beet lookup, group commit to a real database file.
//
//	go test -run '^$' -bench Handler -cpu 2 ./internal/ingest
func BenchmarkHandler(b *testing.B) {
	for _, run := range []struct {
		name, engine   string
		detect, period bool
		opt            ingest.WriterOptions
	}{
		{"sqlite", "sqlite", false, false, ingest.WriterOptions{}},
		{"sqlite+detect", "sqlite", true, false, ingest.WriterOptions{}},
		{"sqlite+period", "sqlite", true, true, ingest.WriterOptions{}},
		{"sqlite+detect+overlap", "sqlite", true, false, ingest.WriterOptions{SyncApart: true}},
		{"sqlite+detect/4", "sqlite", true, false, ingest.WriterOptions{}},
		{"sqlite+detect+overlap/4", "sqlite", true, false, ingest.WriterOptions{SyncApart: true}},
		{"postgres", "postgres", false, false, ingest.WriterOptions{}},
		{"postgres+detect", "postgres", true, false, ingest.WriterOptions{}},
		{"postgres+period", "postgres", true, true, ingest.WriterOptions{}},
	} {
		b.Run(run.name, func(b *testing.B) {
			r := newBenchRig(b, run.engine, run.detect, run.period, run.opt)
			var next atomic.Int64
			b.ReportAllocs()
			// many requests waiting on group commits, as under load; /4:
			// four, as at a moderate rate
			if strings.HasSuffix(run.name, "/4") {
				b.SetParallelism(2)
			} else {
				b.SetParallelism(32)
			}
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					tok := r.tokens[int(next.Add(1))%len(r.tokens)]
					req := httptest.NewRequest("GET", ingest.Prefix+tok, nil)
					w := httptest.NewRecorder()
					r.h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
			st := r.w.Stats()
			b.ReportMetric(float64(st.Committed.Load())/float64(st.Batches.Load()), "events/commit")
		})
	}
}
