package ingest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/testdb"
)

type benchRig struct {
	h      *ingest.Handler
	tokens []string
}

// newBenchRig makes 10,000 beets on a fresh store and an ingestion handler.
func newBenchRig(b *testing.B, engine string) *benchRig {
	store := testdb.New(b, engine)
	ctx := context.Background()
	now := time.Now()
	a := &beet.Account{Plan: beet.PlanPro, CreatedAt: now}
	if err := store.CreateAccount(ctx, a, &beet.User{Email: "bench@example.com", PasswordHash: "-", CreatedAt: now}); err != nil {
		b.Fatal(err)
	}
	r := &benchRig{}
	for i := range 10000 {
		bt := &beet.Beet{AccountID: a.ID, Name: "b" + strconv.Itoa(i), Token: beet.NewToken(), Status: beet.StatusNew,
			Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}, CreatedAt: now, UpdatedAt: now}
		if err := store.CreateBeet(ctx, bt); err != nil {
			b.Fatal(err)
		}
		r.tokens = append(r.tokens, bt.Token)
	}
	spool, err := ingest.OpenSpool(filepath.Join(b.TempDir(), "spool"), 0)
	if err != nil {
		b.Fatal(err)
	}
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{})
	r.h = ingest.New(ingest.Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w})
	b.Cleanup(func() { w.Close(); r.h.Close(); spool.Close() })
	return r
}

// BenchmarkHandler drives the whole ingestion path in-process (no
// network): limiter, beet lookup, group commit to a real database file.
//
//	go test -run '^$' -bench Handler -cpu 2 ./internal/ingest
func BenchmarkHandler(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run(engine, func(b *testing.B) {
			r := newBenchRig(b, engine)
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(32) // many requests waiting on group commits, as under load
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
		})
	}
}
