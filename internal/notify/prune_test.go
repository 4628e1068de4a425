package notify_test

import (
	"context"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
)

// TestPruneCatchesUp: one prune deletes every finished delivery past
// Keep, batch after batch, not one batch an hour (a busy installation
// finishing more than a batch an hour would never catch up); pending
// ones stay.
func TestPruneCatchesUp(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine)
		rc := newReceiver(t)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		for range 3 {
			r.down()
			r.up()
		}
		w := r.worker(func(w *notify.Worker) { w.FlapLimit = 100 })
		if ds := r.drain(w, ch); len(ds) != 6 {
			t.Fatalf("%d deliveries; want 6", len(ds))
		}
		r.down() // pending: not pruned
		w = r.worker(func(w *notify.Worker) {
			w.Keep, w.PruneBatch = time.Nanosecond, 2
			w.Now = func() time.Time { return time.Now().Add(time.Minute) }
		})
		n, err := w.Prune(context.Background())
		if err != nil || n != 6 {
			t.Fatalf("Prune = %d, %v; want the 6 finished deliveries in batches of 2", n, err)
		}
		ds, err := r.db.FindDeliveries(context.Background(), ch.ID, 0)
		if err != nil || len(ds) != 1 || ds[0].Status != beet.DeliveryPending {
			t.Fatalf("left %+v, %v; want the one pending delivery", ds, err)
		}
	})
}
