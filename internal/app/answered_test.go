package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ingest"
)

// heldStore holds every commit until release is closed.
type heldStore struct{ release chan struct{} }

func (s heldStore) AddEvents(ctx context.Context, _ []beet.Event, _ beet.Observer) error {
	select {
	case <-s.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestSeesAnsweredPingsSparesProbes: with the journal's replayer held, an
// API request waits for it (up to its bound), while the health probes and
// /metrics answer at once: a liveness probe that waited on the database
// would get a healthy instance restarted.
func TestSeesAnsweredPingsSparesProbes(t *testing.T) {
	store := heldStore{release: make(chan struct{})}
	spool, err := ingest.OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := ingest.NewWriter(store, spool, ingest.WriterOptions{Journal: true})
	defer w.Close()
	defer close(store.release)
	if err := w.Write(beet.Event{Token: "bt_held", ReceivedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h := seesAnsweredPings(w, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	took := func(path string) time.Duration {
		start := time.Now()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
		return time.Since(start)
	}
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		if d := took(p); d > answeredPingsWait/2 {
			t.Errorf("%s waited %s for the journal", p, d)
		}
	}
	if d := took("/api/v1/beets"); d < answeredPingsWait {
		t.Errorf("an API read with a ping not applied returned after %s, before the %s bound", d, answeredPingsWait)
	}
}
