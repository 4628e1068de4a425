package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/app"
	"github.com/beethq/beet/internal/ingest"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testalloc"
)

// TestIngestRequestAllocations fails if a recorded ping allocates again on
// its way through the public handler chain (logging, recovery, metrics,
// routing, the ingestion handler) on its own goroutine: the log's and the
// metrics' status recorders were one allocation each a request, and the
// bot check lowered a browser's User-Agent into a new string. What
// net/http allocates before the chain, and the commit on the writer's
// goroutine, are not counted.
func TestIngestRequestAllocations(t *testing.T) {
	a := startApp(t, testConfig(t), app.Options{Log: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	acct, _, err := a.Backend().Service.CreateAccount(ctx, "allocs@example.com", "password1", beet.PlanPro)
	if err != nil {
		t.Fatal(err)
	}
	var reqs []*http.Request
	for range 5 { // 41 requests a token: under the limit of 60
		b, err := a.Backend().Service.CreateBeet(ctx, acct.ID, service.BeetInput{Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(http.MethodGet, ingest.Prefix+b.Token, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36")
		reqs = append(reqs, req)
	}
	h := a.Handler()
	w := &testalloc.ResponseWriter{H: http.Header{}}
	for _, req := range reqs { // the limiter's first sight of a token is not a request's cost
		h.ServeHTTP(w, req)
	}
	i := 0
	n := testalloc.Under(t, "internal/server.Logging", 199, func() {
		clear(w.H)
		h.ServeHTTP(w, reqs[i%len(reqs)])
		i++
		if w.Status != http.StatusOK {
			t.Fatalf("status %d", w.Status)
		}
	})
	t.Logf("%.2f allocations a recorded ping in the handler chain", n)
	if n > 0.5 {
		t.Errorf("%.2f allocations a recorded ping in the handler chain, want 0", n)
	}
}
