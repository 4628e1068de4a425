package jobs

import (
	"context"
	"testing"
	"time"
)

// fakeSweeper records the watermarks it is asked to sweep to, and hands
// back full batches a set number of times.
type fakeSweeper struct {
	watermarks []time.Time
	full       int
}

func (f *fakeSweeper) Sweep(_ context.Context, now, watermark time.Time, limit int) (int, int, error) {
	f.watermarks = append(f.watermarks, watermark)
	if f.full > 0 {
		f.full--
		return 1, limit, nil
	}
	return 0, 0, nil
}

func TestSweeperWatermarkAndHold(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	f := &fakeSweeper{}
	ready := false
	queued := now.Add(-time.Minute) // an event received a minute ago is not yet observed
	s := &Sweeper{Sweeper: f, Ready: func() bool { return ready }, Lag: 2 * time.Second, Batch: 10,
		Now: func() time.Time { return now }, Watermark: func(time.Time) time.Time { return queued }}

	if n, _ := s.Once(context.Background()); n != 0 || len(f.watermarks) != 0 {
		t.Fatal("swept while the spool holds events")
	}
	ready = true
	s.Once(context.Background())
	if len(f.watermarks) != 1 || !f.watermarks[0].Equal(queued) {
		t.Fatalf("watermark %v, want the oldest unobserved event %v", f.watermarks, queued)
	}
	queued = now // all observed: the lag bounds it
	f.watermarks, f.full = nil, 2
	if n, _ := s.Once(context.Background()); n != 2 || len(f.watermarks) != 3 || !f.watermarks[2].Equal(now.Add(-2*time.Second)) {
		t.Fatalf("flipped %d over %d batches, watermarks %v", n, len(f.watermarks), f.watermarks)
	}
}
