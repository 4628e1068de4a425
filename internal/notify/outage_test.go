package notify_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/sqlstore"
	"github.com/beethq/beet/internal/testdb"
	"github.com/beethq/beet/internal/testlog"
)

// countingStore is the real store, counting the worker's claims and how
// many of them failed, so the test knows how long the outage lasted in
// polls without reading a clock.
type countingStore struct {
	*sqlstore.DB
	claims, fails atomic.Int64
}

func (s *countingStore) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*beet.Delivery, error) {
	ds, err := s.DB.ClaimDeliveries(ctx, now, lease, limit)
	if err != nil {
		s.fails.Add(1)
	}
	s.claims.Add(1)
	return ds, err
}

// TestOutageLoggedOnce takes PostgreSQL away from a running worker
// (through a TCP proxy that is cut and restored) for at least 30 polls, as
// a 30-second outage is at the default poll of 1 s: the log says once
// that claiming failed and once that it works again, with the count,
// instead of an error a poll.
func TestOutageLoggedOnce(t *testing.T) {
	db, proxy, _ := testdb.PostgresBehindProxy(t)
	store := &countingStore{DB: db}
	r := newRigOn(t, store.DB)

	var logs testlog.Buffer
	w := r.worker(func(w *notify.Worker) {
		w.Store = store
		w.Log = testlog.New(&logs)
		w.Every, w.ReminderEvery = 5*time.Millisecond, 5*time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited in vain for %s:\n%s", what, logs.String())
			}
		}
	}
	waitFor("claims before the outage", func() bool { return store.claims.Load() >= 3 })
	proxy.Cut()
	waitFor("31 failed claims", func() bool { return store.fails.Load() >= 31 })
	succeeded := func() int64 { return store.claims.Load() - store.fails.Load() }
	before := succeeded()
	proxy.Restore()
	waitFor("claims to succeed again", func() bool { return succeeded() >= before+2 })
	cancel()
	<-done

	out := logs.String()
	if n := strings.Count(out, "claiming deliveries failed"); n != 1 {
		t.Errorf("%d lines say claiming failed during one outage of %d failed claims; want 1:\n%s", n, store.fails.Load(), out)
	}
	m := regexp.MustCompile(`claiming deliveries works again" failures=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no line says claiming works again:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 31 {
		t.Errorf("the recovery line does not count the 31 failures or more:\n%s", out)
	}
	for _, step := range []string{"creating reminders", "queueing settled messages"} {
		if n := strings.Count(out, "notify: "+step+" failed"); n > 1 {
			t.Errorf("%d lines say %s failed during one outage; want at most 1", n, step)
		}
	}
	if n := strings.Count(out, "level=ERROR"); n > 3 {
		t.Errorf("%d error lines for one outage; want one a step at most:\n%s", n, out)
	}
}

// TestOutboxLagIsWhatWorkersCanClaim: a recovery held behind its alert,
// which a customer's receiver keeps refusing, is not late; no worker may
// send it yet. beet_outbox_lag_seconds (OpsStats.OldestPending) counts
// only deliveries a worker could claim, so one broken receiver does not
// page the operator with BeetOutboxBacklog while the workers are healthy.
func TestOutboxLagIsWhatWorkersCanClaim(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := t.Context()
		r := newRig(t, engine)
		rc := newReceiver(t, 503, 503, 503)
		r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		r.down()
		r.up()
		w := r.worker(func(w *notify.Worker) { w.BackoffBase, w.BackoffMax = time.Hour, time.Hour })
		if n, err := w.Once(ctx); n != 1 || err != nil {
			t.Fatalf("claimed %d, %v; want the alert alone", n, err)
		}
		later := time.Now().Add(20 * time.Minute)
		st, err := r.db.OpsStats(ctx, later)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending != 2 || !st.OldestPending.IsZero() {
			t.Errorf("20 min on: pending %d, oldest due %v; want 2 pending and none a worker could claim", st.Pending, st.OldestPending)
		}
		// Once the alert's retry is due, it is late, and counted.
		st, err = r.db.OpsStats(ctx, time.Now().Add(2*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if st.OldestPending.IsZero() || st.OldestPending.Before(time.Now().Add(20*time.Minute)) {
			t.Errorf("2 h on: oldest due %v; want the alert's retry time", st.OldestPending)
		}
	})
}
