package notify_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/beethq/beet"
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
