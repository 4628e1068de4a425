package notify_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
)

// TestSlowReceiverHoldsUpNoOtherChannel: while sends to a receiver that
// never answers take their slots until the send limit, a delivery to
// another channel that becomes due meanwhile goes out at once, through a
// free slot, instead of waiting for the slowest send of the batch.
func TestSlowReceiverHoldsUpNoOtherChannel(t *testing.T) {
	var hung atomic.Int64
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hung.Add(1)
		select {
		case <-req.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); hang.Close() })
	r := newRig(t, "sqlite")
	for range 4 {
		r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: hang.URL + "/slow"})
	}
	r.down()
	// The send limit is half the lease: 5 s here (30 s in production).
	w := r.worker(func(w *notify.Worker) { w.Lease, w.Every = 10*time.Second, 20*time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	var run sync.WaitGroup
	run.Go(func() { w.Run(ctx) })
	t.Cleanup(func() { cancel(); run.Wait() })
	for deadline := time.Now().Add(5 * time.Second); hung.Load() < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the slow receiver got %d requests, want 4", hung.Load())
		}
	}

	fast := newReceiver(t)
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: fast.URL})
	start := time.Now()
	if err := r.db.CreateDelivery(t.Context(), &beet.Delivery{ChannelID: ch.ID, Event: beet.EventTest, CreatedAt: start}); err != nil {
		t.Fatal(err)
	}
	for len(fast.requests()) == 0 && time.Since(start) < 10*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	if took := time.Since(start); len(fast.requests()) == 0 || took > 2*time.Second {
		t.Fatalf("the healthy channel's message went out after %v, behind sends to a receiver that never answers", took.Round(time.Millisecond))
	}
}

// TestHangingReceiversFillNoPool: as many receivers that never answer as
// the pool has slots (Batch) hold their slots only until SlowAfter, then
// go on outside it: a healthy channel's message goes out while they still
// hang, not once the send limit has cut them off.
func TestHangingReceiversFillNoPool(t *testing.T) {
	var hanging atomic.Int64
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		hanging.Add(1)
		defer hanging.Add(-1)
		select {
		case <-req.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); hang.Close() })
	r := newRig(t, "sqlite")
	var slowChans []*beet.Channel
	for range 2 {
		slowChans = append(slowChans, r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: hang.URL + "/slow"}))
	}
	r.down()
	// Two slots, both taken by the hanging receivers; the send limit is
	// half the lease, 5 s.
	w := r.worker(func(w *notify.Worker) {
		w.Batch, w.SlowAfter, w.Lease, w.Every = 2, 100*time.Millisecond, 10*time.Second, 20*time.Millisecond
	})
	ctx, cancel := context.WithCancel(context.Background())
	var run sync.WaitGroup
	run.Go(func() { w.Run(ctx) })
	t.Cleanup(func() { cancel(); run.Wait() })
	for deadline := time.Now().Add(5 * time.Second); hanging.Load() < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging receiver got %d requests, want 2", hanging.Load())
		}
	}
	// When the healthy message arrives, how many of the hanging sends have
	// not ended (their delivery still pending without an error).
	var stillHanging atomic.Int64
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := int64(0)
		for _, c := range slowChans {
			ds, err := r.db.FindDeliveries(context.Background(), c.ID, 0)
			if err == nil && len(ds) == 1 && ds[0].Status == beet.DeliveryPending && ds[0].Error == "" {
				n++
			}
		}
		stillHanging.Store(n)
	}))
	t.Cleanup(fast.Close)
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: fast.URL})
	if err := r.db.CreateDelivery(t.Context(), &beet.Delivery{ChannelID: ch.ID, Event: beet.EventTest, CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	var ds []*beet.Delivery
	for deadline := time.Now().Add(8 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if ds, err = r.db.FindDeliveries(t.Context(), ch.ID, 0); err != nil {
			t.Fatal(err)
		}
		if ds[0].Status != beet.DeliveryPending {
			break
		}
	}
	if ds[0].Status != beet.DeliveryDelivered || stillHanging.Load() != 2 {
		t.Fatalf("the healthy channel's message: %s, with %d of 2 hanging sends still waiting; want it delivered while both still hang",
			ds[0].Status, stillHanging.Load())
	}
}
