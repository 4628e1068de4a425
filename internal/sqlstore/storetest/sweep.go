package storetest

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// sweepTests cover what the sweeper writes through ApplyDue: flips and
// their outbox rows, as SetBeetStatus writes them.
var sweepTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"ApplyDueOutbox", testApplyDueOutbox},
}

func testApplyDueOutbox(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	c1 := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	c2 := newChannel(t, s, a.ID, beet.ChannelEmail, beet.ChannelConfig{To: "a@example.com"})
	var bs []*beet.Beet
	due := t0.Add(time.Hour)
	for range 4 {
		b := newBeet(t, s, a.ID)
		if err := s.SetBeetChannels(ctx, b.ID, []int64{c1.ID, c2.ID}); err != nil {
			t.Fatal(err)
		}
		flip(t, s, b.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
		if err := s.SetBeetDue(ctx, b.ID, &due); err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	if err := s.SetBeetChannels(ctx, bs[1].ID, nil); err != nil { // a beet without channels
		t.Fatal(err)
	}
	down := func(observed float64) *beet.Flip {
		return &beet.Flip{At: due, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "silent",
			Observed: &observed, Expected: ptr(3.5)}
	}
	next := due.Add(time.Hour)
	batch := []beet.DueChange{
		{BeetID: bs[2].ID, Due: due, Flip: down(2)},
		{BeetID: bs[0].ID, Due: due, Flip: down(0)},
		{BeetID: bs[1].ID, Due: due, Flip: down(1)},
		{BeetID: bs[3].ID, Due: due, Next: &next},
	}
	if err := s.ApplyDue(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for i, c := range batch {
		if !c.Applied || c.Flip != nil && (c.Flip.ID == 0 || c.Flip.BeetID != c.BeetID) {
			t.Fatalf("change %d = %+v applied %v", i, c.Flip, c.Applied)
		}
	}
	f, err := s.FindFlipByID(ctx, batch[0].Flip.ID)
	if err != nil || f.BeetID != bs[2].ID || f.Observed == nil || *f.Observed != 2 || f.Expected == nil || *f.Expected != 3.5 || f.Reason != "silent" {
		t.Fatalf("FindFlipByID = %+v, %v; want beet %d's silence with its numbers", f, err, bs[2].ID)
	}
	sameTime(t, "flip At", f.At, due)
	if got, _ := s.FindBeetByID(ctx, bs[3].ID); got.Status != beet.StatusUp || got.DueAt == nil || !got.DueAt.Equal(next) {
		t.Errorf("moved beet: %s due %v", got.Status, got.DueAt)
	}
	outbox := func(c *beet.Channel) map[int64][]*beet.Delivery {
		t.Helper()
		ds, err := s.FindDeliveries(ctx, c.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64][]*beet.Delivery{}
		for _, d := range ds {
			out[d.BeetID] = append(out[d.BeetID], d)
		}
		return out
	}
	for _, c := range []*beet.Channel{c1, c2} {
		got := outbox(c)
		if len(got) != 2 || len(got[bs[0].ID]) != 1 || len(got[bs[2].ID]) != 1 {
			t.Fatalf("channel %d: deliveries by beet %v, want one each for beets %d and %d", c.ID, got, bs[0].ID, bs[2].ID)
		}
		for _, ch := range []beet.DueChange{batch[0], batch[1]} {
			d := got[ch.BeetID][0]
			if d.FlipID != ch.Flip.ID || d.IncidentFlipID != ch.Flip.ID || d.Event != beet.EventDown || d.Status != beet.DeliveryPending {
				t.Errorf("delivery %+v, want the down message of flip %d opening its incident", d, ch.Flip.ID)
			}
			sameTime(t, "NextAt", d.NextAt, due)
		}
	}
	// The recovery belongs to the incident the silence opened; a change
	// whose deadline moved meanwhile is not applied and writes nothing.
	up := &beet.Flip{At: next, From: beet.StatusDown, To: beet.StatusUp, Kind: beet.FlipRecovery, Reason: "back"}
	stale := &beet.Flip{At: next, From: beet.StatusUp, To: beet.StatusDown, Kind: beet.FlipSilence, Reason: "stale"}
	recovered := due.Add(time.Hour) // bs[2]'s deadline was cleared by its silence: set one to pass
	if err := s.SetBeetDue(ctx, bs[2].ID, &recovered); err != nil {
		t.Fatal(err)
	}
	batch2 := []beet.DueChange{
		{BeetID: bs[2].ID, Due: recovered, Flip: up},
		{BeetID: bs[3].ID, Due: due, Flip: stale}, // its deadline is next now
	}
	if err := s.ApplyDue(ctx, batch2); err != nil {
		t.Fatal(err)
	}
	if !batch2[0].Applied || batch2[1].Applied || stale.ID != 0 {
		t.Fatalf("second batch applied %v %v (stale flip ID %d); want the recovery only", batch2[0].Applied, batch2[1].Applied, stale.ID)
	}
	for _, c := range []*beet.Channel{c1, c2} {
		got := outbox(c)
		if len(got[bs[3].ID]) != 0 {
			t.Errorf("the stale change wrote %d deliveries", len(got[bs[3].ID]))
		}
		ds := got[bs[2].ID]
		if len(ds) != 2 || ds[0].FlipID != up.ID || ds[0].Event != beet.EventUp || ds[0].IncidentFlipID != batch[0].Flip.ID {
			t.Errorf("channel %d: beet %d deliveries %+v; want the recovery in incident %d first", c.ID, bs[2].ID, ds, batch[0].Flip.ID)
		}
	}
}
