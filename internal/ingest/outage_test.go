package ingest_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
)

// TestPostgresOutageLosesNothing takes PostgreSQL away in the middle of a
// steady stream of events (through a TCP proxy that is cut and restored)
// and checks that every event that got its 200 is in the database once it
// is back, exactly once.
func TestPostgresOutageLosesNothing(t *testing.T) {
	store, proxy, direct := testdb.PostgresBehindProxy(t)
	verify := testdb.Open(t, direct) // a second view that the outage does not touch

	ctx := context.Background()
	svc := service.New(store, service.Options{PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	a, _, err := svc.CreateAccount(ctx, "outage@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	var beets []*beet.Beet
	for range 8 {
		b, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		beets = append(beets, b)
	}
	spool, err := ingest.OpenSpool(filepath.Join(t.TempDir(), "beet.spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{ReplayEvery: 100 * time.Millisecond, CommitTimeout: 2 * time.Second})
	h := ingest.New(ingest.Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w})
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	// 8 senders, one per beet, each at 5 requests/s: under the rate limit.
	acked := make([]atomic.Int64, len(beets))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, b := range beets {
		wg.Go(func() {
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				res, err := http.Post(srv.URL+ingest.Prefix+b.Token, "application/json", nil)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode == 200 {
					acked[i].Add(1)
				}
			}
		})
	}
	time.Sleep(time.Second)
	proxy.Cut()
	time.Sleep(2 * time.Second)
	if !w.Spooling() {
		t.Error("the writer did not spool during the outage")
	}
	proxy.Restore()
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	srv.Close()
	w.Close()
	h.Close()

	if w.Spooling() {
		t.Fatalf("spool not drained after recovery (%d bytes left)", spool.Size())
	}
	var total int64
	for i, b := range beets {
		evs, err := verify.FindEvents(ctx, beet.EventFilter{BeetID: b.ID, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(evs)) != acked[i].Load() {
			t.Errorf("beet %d: %d events in the database, %d acknowledged", i, len(evs), acked[i].Load())
		}
		total += acked[i].Load()
	}
	st := w.Stats()
	t.Logf("acknowledged %d events; %d committed directly, %d spooled, %d replayed", total, st.Committed.Load(), st.Spooled.Load(), st.Replayed.Load())
	if st.Spooled.Load() == 0 || st.Replayed.Load() != st.Spooled.Load() {
		t.Fatalf("spooled %d, replayed %d: the outage was not exercised or replay lost events", st.Spooled.Load(), st.Replayed.Load())
	}
}
