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
