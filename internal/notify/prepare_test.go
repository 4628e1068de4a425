package notify_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/secretbox"
	"github.com/beethq/beet/internal/testdb"
)

// TestUnpreparableDeliveryGivesUp: a delivery whose channel cannot be
// read (its sealed URL and no key to open it) is a failed attempt like a
// failed send: counted in the metrics as a retry, retried later, and given
// up on after the give-up time, which marks the channel failing.
func TestUnpreparableDeliveryGivesUp(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		r := newRig(t, engine)
		key, err := secretbox.ParseKey(base64.StdEncoding.EncodeToString(make([]byte, secretbox.KeyLen)))
		if err != nil {
			t.Fatal(err)
		}
		ring, err := secretbox.NewKeyring(key)
		if err != nil {
			t.Fatal(err)
		}
		r.db.SetSecretKeys(ring)
		rc := newReceiver(t)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		r.down()
		r.db.SetSecretKeys(nil) // restarted without BEET_SECRET_KEY

		var mu sync.Mutex
		var seen []string
		now := time.Now()
		w := r.worker(func(w *notify.Worker) {
			w.Now = func() time.Time { return now }
			w.Observe = func(kind beet.ChannelKind, outcome string, _ time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, outcome)
			}
		})
		if n, err := w.Once(ctx); err != nil || n != 1 {
			t.Fatalf("Once = %d, %v", n, err)
		}
		ds, _ := r.db.FindDeliveries(ctx, ch.ID, 0)
		if d := ds[0]; d.Status != beet.DeliveryPending || !d.NextAt.After(now) || !strings.Contains(d.Error, "BEET_SECRET_KEY") {
			t.Fatalf("after a failed preparation: %+v; want a retry later, saying why", d)
		}
		now = now.Add(25 * time.Hour)
		if n, err := w.Once(ctx); err != nil || n != 1 {
			t.Fatalf("Once a day later = %d, %v", n, err)
		}
		ds, _ = r.db.FindDeliveries(ctx, ch.ID, 0)
		if d := ds[0]; d.Status != beet.DeliveryFailed || !strings.HasPrefix(d.Error, "gave up after 24 h of retries: preparing the message") {
			t.Fatalf("a day later: %+v; want it given up", d)
		}
		if len(seen) != 2 || seen[0] != "retry" || seen[1] != "failed" {
			t.Fatalf("metrics saw %v; want retry, failed", seen)
		}
		r.db.SetSecretKeys(ring)
		if c, err := r.db.FindChannelByID(ctx, ch.ID); err != nil || c.FailingSince == nil || !strings.Contains(c.FailingReason, "BEET_SECRET_KEY") {
			t.Fatalf("channel = %+v, %v; want it marked failing", c, err)
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("receiver got %d requests", n)
		}
	})
}

// TestLateAlertGetsADayOfRetries: an alert about a flip of 30 hours ago
// (written late, after the workers were down) is not given up on at its
// first failure: it is retried for a day from its first attempt.
func TestLateAlertGetsADayOfRetries(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		r := newRig(t, engine)
		rc := newReceiver(t, 503, 503)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		r.flipAt(time.Now().Add(-30*time.Hour), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
		now := time.Now()
		w := r.worker(func(w *notify.Worker) { w.Now = func() time.Time { return now } })
		if _, err := w.Once(ctx); err != nil {
			t.Fatal(err)
		}
		ds, _ := r.db.FindDeliveries(ctx, ch.ID, 0)
		if d := ds[0]; d.Status != beet.DeliveryPending || !strings.Contains(d.Error, "HTTP 503") {
			t.Fatalf("after the first failure: %+v; want a retry", d)
		}
		now = now.Add(24*time.Hour + time.Minute)
		if _, err := w.Once(ctx); err != nil {
			t.Fatal(err)
		}
		ds, _ = r.db.FindDeliveries(ctx, ch.ID, 0)
		if d := ds[0]; d.Status != beet.DeliveryFailed || !strings.HasPrefix(d.Error, "gave up after 24 h of retries") {
			t.Fatalf("a day after the first attempt: %+v; want it given up", d)
		}
	})
}
