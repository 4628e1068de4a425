package ingest

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ratelimit"
)

// TestReplayedOldTokenHitsCounted: pings spooled during a database outage
// with a token that is rotated before the database is back record nothing
// when they are replayed, and are counted on the beet's old token with the
// client's address, as live pings with an old token are; pings of a beet
// that kept its token are stored.
func TestReplayedOldTokenHitsCounted(t *testing.T) {
	ctx := context.Background()
	store := &flakyStore{Store: openTestStore(t)}
	rotated, kept := newTestBeet(t, store), newTestBeet(t, store)
	spool, err := OpenSpool(filepath.Join(t.TempDir(), "spool"), 0)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(store, spool, WriterOptions{ReplayEvery: 20 * time.Millisecond})
	h := New(Options{Store: store, Limiter: ratelimit.NewMemory(ratelimit.MemoryOptions{}), Writer: w})
	mux := http.NewServeMux()
	h.Register(mux)
	srv := httptest.NewServer(mux)
	defer func() { srv.Close(); w.Close(); h.Close(); spool.Close() }()
	ping := func(token string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+Prefix+token, nil)
		req.Header.Set("User-Agent", "backup.sh")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("ping answered %d", res.StatusCode)
		}
	}

	store.down.Store(true)
	for range 5 {
		ping(rotated.Token)
		ping(kept.Token)
	}
	if !w.Spooling() {
		t.Fatal("the writer did not spool during the outage")
	}
	// The owner rotates the token meanwhile (the outage is ingestion's).
	if err := store.Store.SetBeetToken(ctx, rotated.ID, beet.NewToken(), time.Now()); err != nil {
		t.Fatal(err)
	}
	store.down.Store(false)

	var olds []*beet.RotatedToken
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if olds, err = store.FindRotatedTokens(ctx, rotated.ID, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if !w.Spooling() && len(olds) == 1 && olds[0].Hits == 5 {
			break
		}
	}
	if w.Spooling() {
		t.Fatal("spool not replayed after the outage")
	}
	if len(olds) != 1 || olds[0].Hits != 5 || olds[0].LastAddr != "127.0.0.1" || olds[0].LastUserAgent != "backup.sh" {
		t.Fatalf("old token after 5 replayed pings: %+v; want 5 hits from 127.0.0.1, backup.sh", olds)
	}
	if n := countEvents(t, store, rotated.ID); n != 0 {
		t.Errorf("the old token recorded %d events at replay", n)
	}
	if n := countEvents(t, store, kept.ID); n != 5 {
		t.Errorf("the beet that kept its token has %d events, want its 5 spooled pings", n)
	}
	if st := h.UnknownStats(); st.Rotated.Load() != 5 || st.Unknown.Load() != 0 {
		t.Errorf("stats: rotated %d, unknown %d; want 5 and 0", st.Rotated.Load(), st.Unknown.Load())
	}
}
