package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beethq/beet/internal/config"
)

// fakeDeadlines records the watermark of each sweep, and fails while down.
type fakeDeadlines struct {
	down       bool
	watermarks []time.Time
}

func (f *fakeDeadlines) Sweep(_ context.Context, _, watermark time.Time, _ int) (int, int, error) {
	if f.down {
		return 0, 0, errors.New("connection refused")
	}
	f.watermarks = append(f.watermarks, watermark)
	return 0, 0, nil
}

// TestSweeperHoldsAfterAnOutage runs a worker's sweeper (no writer of its
// own) through a database outage on a fake clock: once sweeps work again,
// the watermark stays where the last pass before the outage left it, so a
// deadline that passed during the outage is not swept before the ingest
// instances have replayed their spools; after outageHold it moves on.
func TestSweeperHoldsAfterAnOutage(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	a := &App{cfg: config.Default(), log: slog.New(slog.DiscardHandler), now: func() time.Time { return now }, reg: prometheus.NewRegistry()}
	db := &fakeDeadlines{}
	s := a.newSweeper(db)
	tick := func() { now = now.Add(time.Second); s.Once(ctx) }

	tick()
	lastOK := now
	db.down = true
	for range 30 { // a 30 s outage
		tick()
	}
	db.down = false
	db.watermarks = nil
	for range int(outageHold/time.Second) - 1 {
		tick()
	}
	for i, w := range db.watermarks {
		if w.After(lastOK.Add(-sweepLag)) {
			t.Fatalf("sweep %d after the outage swept up to %s, past the last pass before it (%s): a spooled ping may still be on its way",
				i+1, w.Format(time.TimeOnly), lastOK.Add(-sweepLag).Format(time.TimeOnly))
		}
	}
	if len(db.watermarks) == 0 {
		t.Fatal("no sweep ran after the outage")
	}
	tick()
	tick()
	if w := db.watermarks[len(db.watermarks)-1]; !w.Equal(now.Add(-sweepLag)) {
		t.Fatalf("after the hold the watermark is %s, want now - lag (%s)", w.Format(time.TimeOnly), now.Add(-sweepLag).Format(time.TimeOnly))
	}
}
