package jobs_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/jobs"
	"github.com/beethq/beet/internal/service"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// TestSweeperOutageLoggedOnce sweeps a real service on PostgreSQL taken
// away through a TCP proxy for 31 passes (a 30-second outage at one pass
// a second): the log says once that sweeping fails and once that it works
// again, with the count, and the same for the maintenance windows the
// sweep reads, instead of two lines a pass.
func TestSweeperOutageLoggedOnce(t *testing.T) {
	db, proxy, _ := testdb.PostgresBehindProxy(t)
	var logs testlog.Buffer
	log := testlog.New(&logs)
	svc := service.New(db, service.Options{Log: log,
		PasswordParams: &service.PasswordParams{Time: 1, Memory: 64, Threads: 1}})
	ctx := context.Background()
	a, _, err := svc.CreateAccount(ctx, "sweep@example.com", "password1", beet.PlanFree)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateBeet(ctx, a.ID, service.BeetInput{Name: "nightly"}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	s := &jobs.Sweeper{Sweeper: svc, Now: func() time.Time { return now }, Log: log}
	if _, err := s.Once(ctx); err != nil {
		t.Fatal(err)
	}
	proxy.Cut()
	for range 31 {
		now = now.Add(time.Second)
		if _, err := s.Once(ctx); err == nil {
			t.Fatal("a sweep worked with the database away")
		}
	}
	proxy.Restore()
	now = now.Add(time.Second)
	if _, err := s.Once(ctx); err != nil {
		t.Fatalf("the sweep after the outage: %v", err)
	}
	out := logs.String()
	for _, c := range []struct {
		line string
		want int
	}{
		{`msg="sweep failed`, 1},
		{`msg="sweeps work again" failures=31 for=31s`, 1},
		{`msg="maintenance windows could not be read`, 1},
		{`msg="maintenance windows can be read again"`, 1},
	} {
		if n := strings.Count(out, c.line); n != c.want {
			t.Errorf("%d lines with %s in one outage of 31 sweeps, want %d", n, c.line, c.want)
		}
	}
	if t.Failed() {
		t.Log(out)
	}
}
