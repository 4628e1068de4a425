package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet/internal/jobs"
	"github.com/beethq/beet/internal/service"
)

type countingCleaner chan struct{}

func (c countingCleaner) Cleanup(context.Context, time.Time, bool) (*service.CleanupReport, error) {
	c <- struct{}{}
	return &service.CleanupReport{}, nil
}

// TestRetentionFirstPassSoon: the first pass comes soon after start, not
// one whole interval later (a worker restarted more often than the
// interval never cleaned up); its default delay is 30-60 s with jitter.
func TestRetentionFirstPassSoon(t *testing.T) {
	c := make(countingCleaner, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		(&jobs.Retention{Cleaner: c, Every: time.Hour, First: 10 * time.Millisecond}).Run(ctx)
		close(done)
	}()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Error("no pass within 5 s of start with an hourly interval")
	}
	cancel()
	<-done
	for range 100 {
		if d := jobs.FirstPassDelay(10 * time.Minute); d < 30*time.Second || d >= time.Minute {
			t.Fatalf("FirstPassDelay(10m) = %v, want 30-60 s", d)
		}
	}
	if d := jobs.FirstPassDelay(time.Second); d != time.Second {
		t.Errorf("FirstPassDelay(1s) = %v, want at most the interval", d)
	}
}
