package notify_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
)

// window opens a maintenance window on the rig's beet over [start, end).
func (r *rig) window(start, end time.Time) {
	r.t.Helper()
	w := &beet.MaintenanceWindow{BeetID: r.beet.ID, Start: &start, End: &end, Note: "migration"}
	if err := r.svc.CreateMaintenance(context.Background(), r.acct.ID, w); err != nil {
		r.t.Fatal(err)
	}
}

// events returns the webhook events a receiver got, in order.
func events(t *testing.T, rc *receiver) []string {
	t.Helper()
	var out []string
	for _, req := range rc.requests() {
		var body struct {
			Event string `json:"event"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatal(err)
		}
		out = append(out, body.Event)
	}
	return out
}

// TestMaintenanceClosesSentIncidents: a beet whose alert went out before a
// maintenance window began is reported back up (or paused) during the
// window, and PagerDuty resolves the incident; an outage wholly inside the
// window sends nothing.
func TestMaintenanceClosesSentIncidents(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		for _, end := range []string{"recovery", "pause"} {
			t.Run(end, func(t *testing.T) {
				fr := newFlapRig(t, newRig(t, engine))
				now := time.Now()
				down := fr.flipAt(now.Add(-20*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
				fr.drainAll()
				fr.window(now.Add(-10*time.Minute), now.Add(time.Hour))
				want := beet.EventUp
				if end == "pause" {
					want = beet.EventPaused
					fr.flipAt(now.Add(-5*time.Minute), beet.StatusDown, beet.StatusPaused, beet.FlipManual, "Paused")
					fr.flipAt(now.Add(-4*time.Minute), beet.StatusPaused, beet.StatusUp, beet.FlipManual, "Resumed")
				} else {
					fr.flipAt(now.Add(-5*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
				}
				// A second outage inside the window: alert and recovery held back.
				fr.flipAt(now.Add(-3*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
				fr.flipAt(now.Add(-2*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
				fr.drainAll()

				if got := events(t, fr.hook); len(got) != 2 || got[0] != beet.EventDown || got[1] != want {
					t.Fatalf("webhook got %v; want the alert and then %s", got, want)
				}
				pd := fr.pdEvents()
				if len(pd) != 2 || pd[0].EventAction != "trigger" || pd[1].EventAction != "resolve" ||
					pd[1].DedupKey != pd[0].DedupKey || pd[0].DedupKey != incidentKey(fr.beet, down) {
					t.Fatalf("PagerDuty got %+v; want the trigger, then its resolve", pd)
				}
				ds, _ := fr.db.FindDeliveries(context.Background(), fr.hookCh.ID, 0)
				if len(ds) != 4 || ds[0].Status != beet.DeliverySuppressed || ds[1].Status != beet.DeliverySuppressed {
					t.Fatalf("deliveries = %+v; want the outage inside the window suppressed", ds)
				}
			})
		}
	})
}

// TestMaintenanceSendsSettled: a beet flaps before a maintenance window and
// settles inside it. The flapping notice went out, so the settled message
// does too, or the receiver would believe the beet still flaps (and
// PagerDuty would keep the notice's incident open). When it settles down
// its incident is the current one, never sent: the notice decides, not
// that incident.
func TestMaintenanceSendsSettled(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		for _, state := range []string{"up", "down"} {
			t.Run(state, func(t *testing.T) {
				fr := newFlapRig(t, newRig(t, engine))
				flips := 8 // ends up
				if state == "down" {
					flips = 9
				}
				fs := fr.flap(flips)
				fr.drainAll()
				noticeKey := incidentKey(fr.beet, fs[4])
				now := time.Now()
				fr.window(now.Add(-10*time.Minute), now.Add(time.Hour))
				fr.settle(2)

				got := fr.hook.requests()
				if len(got) != 6 {
					t.Fatalf("webhook got %d messages, want 4, the flapping notice and the settled message", len(got))
				}
				var m webhookBody
				decodeStrict(t, got[5].Body, &m)
				if m.Event != "beet."+state || !m.Settled {
					t.Fatalf("last message = %+v; want the settled message", m)
				}
				pd := fr.pdEvents()
				last := pd[len(pd)-1]
				if last.EventAction != "resolve" || last.DedupKey != noticeKey {
					t.Fatalf("PagerDuty got %+v; want the flapping notice's incident resolved", pd)
				}
			})
		}
	})
}

// TestMaintenanceHoldsSettledOfUnsentNotice: a flapping notice that never
// went out (its retry fell in a window that began meanwhile) leaves the
// receiver nothing to end, so its settled message inside the window is
// held back like any other.
func TestMaintenanceHoldsSettledOfUnsentNotice(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine)
		rc := newReceiver(t, 200, 200, 200, 200, 500) // the notice fails once
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		w := r.worker(func(w *notify.Worker) { w.FlapLimit = 4 })
		start := time.Now().Add(-3 * time.Hour)
		for i := range 8 {
			at := start.Add(time.Duration(i) * time.Minute)
			if i%2 == 0 {
				r.flipAt(at, beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
			} else {
				r.flipAt(at, beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
			}
		}
		// The window opens while the notice is being refused, covering its
		// flip and now: the retry is held back.
		rc.set(func(rc *receiver) {
			rc.onRecv = func(n int) {
				if n != 5 {
					return
				}
				s, e := start.Add(-time.Hour), time.Now().Add(time.Hour)
				mw := &beet.MaintenanceWindow{BeetID: r.beet.ID, Start: &s, End: &e, Note: "migration"}
				if err := r.svc.CreateMaintenance(context.Background(), r.acct.ID, mw); err != nil {
					t.Error(err)
				}
			}
		})
		ds := r.drain(w, ch)
		if len(rc.requests()) != 5 {
			t.Fatalf("receiver got %d messages, want 4 and the refused notice", len(rc.requests()))
		}
		var notice *beet.Delivery
		for _, d := range ds {
			if d.Flapping {
				notice = d
			}
		}
		if notice == nil || notice.Status != beet.DeliverySuppressed {
			t.Fatalf("flapping notice = %+v; want it suppressed by the window", notice)
		}
		if n, err := w.CreateSettled(context.Background()); err != nil || n != 1 {
			t.Fatalf("CreateSettled = %d, %v; want 1", n, err)
		}
		ds = r.drain(w, ch)
		if len(rc.requests()) != 5 {
			t.Fatalf("receiver got %d messages; want the settled message held back", len(rc.requests()))
		}
		if s := ds[0]; s.Event != beet.EventSettled || s.Status != beet.DeliverySuppressed || !strings.Contains(s.Error, "maintenance") {
			t.Fatalf("settled delivery = %+v; want it suppressed by the window", s)
		}
	})
}
