package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/jobs"
	"github.com/beethq/beet/internal/service"
)

// cleanerFunc adapts a function to jobs.Cleaner.
type cleanerFunc func(ctx context.Context, now time.Time, dryRun bool) (*service.CleanupReport, error)

func (f cleanerFunc) Cleanup(ctx context.Context, now time.Time, dryRun bool) (*service.CleanupReport, error) {
	return f(ctx, now, dryRun)
}

var _ jobs.Cleaner = (*service.Service)(nil)

func TestRetentionOnceLogsCountsPerPlan(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var gotNow time.Time
	var gotDry bool
	c := cleanerFunc(func(_ context.Context, n time.Time, dry bool) (*service.CleanupReport, error) {
		gotNow, gotDry = n, dry
		return &service.CleanupReport{Now: n, Plans: []service.PlanCleanup{
			{Plan: beet.PlanFree, Deleted: 12}, {Plan: beet.PlanStarter, Deleted: 3},
		}, Total: 15}, nil
	})
	var buf bytes.Buffer
	r := &jobs.Retention{Cleaner: c, Every: time.Minute, Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(&buf, nil))}
	rep, err := r.Once(context.Background())
	if err != nil || rep.Total != 15 {
		t.Fatalf("Once = %+v, %v", rep, err)
	}
	if !gotNow.Equal(now) || gotDry {
		t.Fatalf("Cleanup called with now %v dryRun %v", gotNow, gotDry)
	}
	line := buf.String()
	if strings.Count(line, "\n") != 1 {
		t.Fatalf("want one log line, got %q", line)
	}
	for _, want := range []string{"deleted.free=12", "deleted.starter=3", "total=15", `msg="retention clean-up"`} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
}

func TestRetentionOnceLogsFailure(t *testing.T) {
	var buf bytes.Buffer
	r := &jobs.Retention{
		Cleaner: cleanerFunc(func(context.Context, time.Time, bool) (*service.CleanupReport, error) {
			return nil, errors.New("disk on fire")
		}),
		Log: slog.New(slog.NewTextHandler(&buf, nil)),
	}
	if _, err := r.Once(context.Background()); err == nil {
		t.Fatal("no error")
	}
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "disk on fire") {
		t.Fatalf("log: %s", buf.String())
	}
}

func TestRetentionRunTicksAndStops(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	r := &jobs.Retention{
		Every: 5 * time.Millisecond,
		Cleaner: cleanerFunc(func(context.Context, time.Time, bool) (*service.CleanupReport, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return &service.CleanupReport{}, nil
		}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		n := calls
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d passes in 5s", n)
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
