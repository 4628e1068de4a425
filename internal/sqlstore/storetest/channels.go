package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// channelTests are the conformance tests of channels, the delivery outbox
// and maintenance windows; Run runs them with the rest.
var channelTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"Channels", testChannels},
	{"BeetChannels", testBeetChannels},
	{"OutboxFanOut", testOutboxFanOut},
	{"OutboxClaim", testOutboxClaim},
	{"Reminders", testReminders},
	{"RemindersOnlyToTheBeetsChannels", testRemindersOnlyToTheBeetsChannels},
	{"Flapping", testFlapping},
	{"Settled", testSettled},
	{"IncidentSent", testIncidentSent},
	{"PauseFanOut", testPauseFanOut},
	{"Maintenance", testMaintenance},
}

func newChannel(t *testing.T, s beet.Store, accountID int64, kind beet.ChannelKind, cfg beet.ChannelConfig) *beet.Channel {
	t.Helper()
	c := &beet.Channel{AccountID: accountID, Kind: kind, Name: uniq("channel "), Config: cfg, CreatedAt: t0}
	if err := s.CreateChannel(t.Context(), c); err != nil {
		t.Fatalf("CreateChannel: %v", err)
	}
	return c
}

func flip(t *testing.T, s beet.Store, beetID int64, at time.Time, from, to beet.Status, kind beet.FlipKind) *beet.Flip {
	t.Helper()
	f := &beet.Flip{BeetID: beetID, At: at, From: from, To: to, Kind: kind, Reason: string(kind)}
	if err := s.SetBeetStatus(t.Context(), f); err != nil {
		t.Fatalf("SetBeetStatus %s→%s: %v", from, to, err)
	}
	return f
}

// upBeetWithWebhook makes an account with a webhook channel and a beet
// that came up at t0, so that its next flip is an alert on the channel.
func upBeetWithWebhook(t *testing.T, s beet.Store) (*beet.Channel, *beet.Beet) {
	t.Helper()
	a := newAccount(t, s, beet.PlanFree)
	c := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	b := newBeet(t, s, a.ID)
	flip(t, s, b.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	return c, b
}

func testChannels(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	c := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/hook/abcdef", Secret: "s3cret"})
	if c.ID == 0 {
		t.Fatal("CreateChannel set no ID")
	}
	got, err := s.FindChannelByID(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccountID != a.ID || got.Kind != beet.ChannelWebhook || got.Name != c.Name || got.Config != c.Config ||
		got.ReminderEvery != 0 || got.FailingSince != nil {
		t.Fatalf("FindChannelByID = %+v, want %+v", got, c)
	}
	sameTime(t, "CreatedAt", got.CreatedAt, t0)
	e := newChannel(t, s, a.ID, beet.ChannelEmail, beet.ChannelConfig{To: "ops@example.com"})
	other := newChannel(t, s, newAccount(t, s, beet.PlanFree).ID, beet.ChannelSlack, beet.ChannelConfig{URL: "https://hooks.slack.com/services/x"})
	list, err := s.FindChannels(ctx, a.ID)
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != e.ID {
		t.Fatalf("FindChannels = %v, %v; want the account's two, oldest first", list, err)
	}
	name, every := "renamed", time.Hour
	upd, err := s.UpdateChannel(ctx, c.ID, beet.ChannelUpdate{Name: &name, ReminderEvery: &every,
		Config: &beet.ChannelConfig{URL: c.Config.Masked().URL, Secret: "new secret"}}, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if upd.Name != name || upd.ReminderEvery != every || upd.Config.URL != c.Config.URL || upd.Config.Secret != "new secret" {
		t.Fatalf("UpdateChannel = %+v: the masked URL sent back must keep the stored one", upd)
	}
	wantCode(t, "UpdateChannel missing", func() error { _, err := s.UpdateChannel(ctx, 999999, beet.ChannelUpdate{}, t0); return err }(), beet.ENOTFOUND)
	if err := s.DeleteChannel(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindChannelByID(ctx, other.ID)
	wantCode(t, "FindChannelByID after delete", err, beet.ENOTFOUND)
	wantCode(t, "DeleteChannel twice", s.DeleteChannel(ctx, other.ID), beet.ENOTFOUND)
}

func testBeetChannels(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	before := newBeet(t, s, a.ID)
	c1 := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	c2 := newChannel(t, s, a.ID, beet.ChannelSlack, beet.ChannelConfig{URL: "https://example.com/2"})
	after := newBeet(t, s, a.ID)
	otherAcct := newAccount(t, s, beet.PlanFree)
	foreign := newChannel(t, s, otherAcct.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/3"})
	for _, b := range []*beet.Beet{before, after} {
		ids, err := s.BeetChannels(ctx, b.ID)
		if err != nil || len(ids) != 2 || ids[0] != c1.ID || ids[1] != c2.ID {
			t.Fatalf("BeetChannels(beet %d) = %v, %v; want both of the account's channels", b.ID, ids, err)
		}
	}
	m, err := s.ChannelsOfBeets(ctx, []int64{before.ID, after.ID, 999999})
	if err != nil || len(m) != 2 || len(m[before.ID]) != 2 || m[after.ID][1] != c2.ID {
		t.Fatalf("ChannelsOfBeets = %v, %v", m, err)
	}
	if ids, _ := s.BeetChannels(ctx, newBeet(t, s, otherAcct.ID).ID); len(ids) != 1 || ids[0] != foreign.ID {
		t.Fatalf("another account's beet got channels %v", ids)
	}
	if err := s.SetBeetChannels(ctx, before.ID, []int64{c2.ID, c2.ID}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.BeetChannels(ctx, before.ID); len(ids) != 1 || ids[0] != c2.ID {
		t.Fatalf("after SetBeetChannels: %v", ids)
	}
	err = s.SetBeetChannels(ctx, before.ID, []int64{c1.ID, foreign.ID})
	wantCode(t, "SetBeetChannels with another account's channel", err, beet.ENOTFOUND)
	if ids, _ := s.BeetChannels(ctx, before.ID); len(ids) != 1 || ids[0] != c2.ID {
		t.Fatalf("a refused SetBeetChannels changed the channels: %v", ids)
	}
	if err := s.SetBeetChannels(ctx, before.ID, nil); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.BeetChannels(ctx, before.ID); len(ids) != 0 {
		t.Fatalf("after clearing: %v", ids)
	}
	wantCode(t, "SetBeetChannels of a missing beet", s.SetBeetChannels(ctx, 999999, nil), beet.ENOTFOUND)
}

func testOutboxFanOut(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b := newBeet(t, s, a.ID)
	quiet := newBeet(t, s, a.ID)
	c1 := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	c2 := newChannel(t, s, a.ID, beet.ChannelEmail, beet.ChannelConfig{To: "a@example.com"})
	if err := s.SetBeetChannels(ctx, quiet.ID, nil); err != nil {
		t.Fatal(err)
	}
	deliveries := func(c *beet.Channel) []*beet.Delivery {
		t.Helper()
		ds, err := s.FindDeliveries(ctx, c.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	// Flips people do not need to hear about write nothing.
	flip(t, s, b.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	flip(t, s, quiet.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusPaused, beet.FlipManual)
	flip(t, s, b.ID, t0.Add(2*time.Minute), beet.StatusPaused, beet.StatusUp, beet.FlipManual)
	if n := len(deliveries(c1)) + len(deliveries(c2)); n != 0 {
		t.Fatalf("first-event and manual flips made %d deliveries, want 0", n)
	}
	down := flip(t, s, b.ID, t0.Add(time.Hour), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, quiet.ID, t0.Add(time.Hour), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	anom := flip(t, s, b.ID, t0.Add(2*time.Hour), beet.StatusDown, beet.StatusAnomalous, beet.FlipDrop)
	up := flip(t, s, b.ID, t0.Add(3*time.Hour), beet.StatusAnomalous, beet.StatusUp, beet.FlipRecovery)
	for _, c := range []*beet.Channel{c1, c2} {
		ds := deliveries(c)
		if len(ds) != 3 {
			t.Fatalf("channel %d: %d deliveries, want 3 (down, anomalous, up)", c.ID, len(ds))
		}
		for i, want := range []struct {
			f     *beet.Flip
			event string
		}{{up, beet.EventUp}, {anom, beet.EventAnomalous}, {down, beet.EventDown}} {
			d := ds[i]
			if d.FlipID != want.f.ID || d.Event != want.event || d.BeetID != b.ID || d.Status != beet.DeliveryPending ||
				d.Attempts != 0 || d.IncidentFlipID != down.ID {
				t.Errorf("delivery %d = %+v, want %s of flip %d in incident %d", i, d, want.event, want.f.ID, down.ID)
			}
			sameTime(t, "NextAt", d.NextAt, want.f.At)
		}
		if ds[0].IncidentKey() != ds[2].IncidentKey() || ds[0].IdempotencyKey() == ds[2].IdempotencyKey() {
			t.Errorf("recovery and alert must share the incident key and not the idempotency key")
		}
	}
	// A new incident gets a new key.
	down2 := flip(t, s, b.ID, t0.Add(4*time.Hour), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	if ds := deliveries(c1); ds[0].IncidentFlipID != down2.ID {
		t.Errorf("second incident carries incident flip %d, want %d", ds[0].IncidentFlipID, down2.ID)
	}
	// The flip is readable by ID with its numbers.
	if f, err := s.FindFlipByID(ctx, anom.ID); err != nil || f.Kind != beet.FlipDrop || f.From != beet.StatusDown {
		t.Errorf("FindFlipByID = %+v, %v", f, err)
	}
	if n, err := s.CountNotifiedFlips(ctx, b.ID, t0, t0.Add(4*time.Hour)); err != nil || n != 4 {
		t.Errorf("CountNotifiedFlips = %d, %v; want 4", n, err)
	}
	// Deleting a channel takes its deliveries; deleting the beet takes the rest.
	if err := s.DeleteChannel(ctx, c2.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBeet(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if ds := deliveries(c1); len(ds) != 0 {
		t.Errorf("deliveries of a deleted beet remain: %d", len(ds))
	}
}

func testOutboxClaim(t *testing.T, s beet.Store) {
	ctx := t.Context()
	c, b := upBeetWithWebhook(t, s)
	flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, b.ID, t0.Add(90*time.Second), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	test := &beet.Delivery{ChannelID: c.ID, Event: beet.EventTest, CreatedAt: t0.Add(2 * time.Minute)}
	if err := s.CreateDelivery(ctx, test); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimDeliveries(ctx, t0, time.Minute, 10); len(got) != 0 {
		t.Fatalf("claimed %d deliveries before they were due", len(got))
	}
	now := t0.Add(3 * time.Minute)
	first, err := s.ClaimDeliveries(ctx, now, time.Minute, 1)
	if err != nil || len(first) != 1 || first[0].Event != beet.EventDown || first[0].Attempts != 1 {
		t.Fatalf("first claim = %+v, %v; want the down delivery, attempt 1", first, err)
	}
	second, err := s.ClaimDeliveries(ctx, now, time.Minute, 10)
	if err != nil || len(second) != 1 || second[0].ID != test.ID {
		t.Fatalf("second claim = %+v, %v; want only the test delivery", second, err)
	}
	if more, _ := s.ClaimDeliveries(ctx, now, time.Minute, 10); len(more) != 0 {
		t.Fatalf("claimed %d deliveries that are leased, or a recovery before its alert was recorded", len(more))
	}
	_, err = s.ClaimDelivery(ctx, test.ID, now, time.Minute)
	wantCode(t, "ClaimDelivery of a leased delivery", err, beet.ECONFLICT)
	// The worker holding the first one dies; after the lease, it is claimed again.
	again, err := s.ClaimDeliveries(ctx, now.Add(time.Minute), time.Minute, 10)
	if err != nil || len(again) != 2 || again[0].ID != first[0].ID || again[0].Attempts != 2 {
		t.Fatalf("claim after the lease = %+v, %v; want both again, the first on attempt 2", again, err)
	}
	// The give-up time counts from the first attempt, which a later claim keeps.
	if fa := again[0].FirstAt; fa == nil || !fa.Equal(now) || first[0].FirstAt == nil || !first[0].FirstAt.Equal(now) {
		t.Fatalf("FirstAt = %v (first claim %v); want %v", fa, first[0].FirstAt, now)
	}
	// The dead worker's late result is refused: it is fenced by the attempt.
	if ok, err := s.RecordDelivery(ctx, beet.DeliveryResult{ID: first[0].ID, Attempts: 1, At: now, Status: beet.DeliveryDelivered}); err != nil || ok {
		t.Fatalf("stale RecordDelivery = %v, %v; want refused", ok, err)
	}
	ok, err := s.RecordDelivery(ctx, beet.DeliveryResult{ID: first[0].ID, Attempts: 2, At: now, Latency: 1500 * time.Microsecond,
		Status: beet.DeliveryFailed, Error: "HTTP 410 Gone", ChannelFailing: true})
	if err != nil || !ok {
		t.Fatalf("RecordDelivery = %v, %v", ok, err)
	}
	d, err := s.FindDeliveryByID(ctx, first[0].ID)
	if err != nil || d.Status != beet.DeliveryFailed || d.Error != "HTTP 410 Gone" || d.Latency != 1500*time.Microsecond || d.LastAt == nil {
		t.Fatalf("delivery after a permanent failure = %+v, %v", d, err)
	}
	// With its alert settled, the recovery goes out.
	rec, err := s.ClaimDeliveries(ctx, now.Add(time.Minute), time.Minute, 10)
	if err != nil || len(rec) != 1 || rec[0].Event != beet.EventUp {
		t.Fatalf("claim after the alert was recorded = %+v, %v; want the recovery", rec, err)
	}
	if ok, _ := s.RecordDelivery(ctx, beet.DeliveryResult{ID: rec[0].ID, Attempts: 1, At: now, Status: beet.DeliverySuppressed}); !ok {
		t.Fatal("RecordDelivery suppressed refused")
	}
	if ch, _ := s.FindChannelByID(ctx, c.ID); ch.FailingSince == nil || ch.FailingReason != "HTTP 410 Gone" {
		t.Fatalf("channel not marked failing: %+v", ch)
	}
	// A retry is a pending result with a later NextAt.
	ok, err = s.RecordDelivery(ctx, beet.DeliveryResult{ID: test.ID, Attempts: 2, At: now, Status: beet.DeliveryPending,
		Error: "HTTP 503", NextAt: now.Add(time.Hour)})
	if err != nil || !ok {
		t.Fatalf("RecordDelivery retry = %v, %v", ok, err)
	}
	if got, _ := s.ClaimDeliveries(ctx, now.Add(59*time.Minute), time.Minute, 10); len(got) != 0 {
		t.Fatal("a delivery was claimed before its retry time")
	}
	got, err := s.ClaimDelivery(ctx, test.ID, now.Add(time.Hour), time.Minute)
	if err != nil || got.Attempts != 3 {
		t.Fatalf("ClaimDelivery = %+v, %v", got, err)
	}
	if ok, _ := s.RecordDelivery(ctx, beet.DeliveryResult{ID: test.ID, Attempts: 3, At: now, Status: beet.DeliveryDelivered}); !ok {
		t.Fatal("RecordDelivery delivered refused")
	}
	if ch, _ := s.FindChannelByID(ctx, c.ID); ch.FailingSince != nil || ch.FailingReason != "" {
		t.Fatalf("a success did not clear the failing mark: %+v", ch)
	}
	if n, err := s.DeleteDeliveriesBefore(ctx, now.Add(48*time.Hour), 100); err != nil || n != 3 {
		t.Fatalf("DeleteDeliveriesBefore = %d, %v; want the three finished ones", n, err)
	}
}

func testReminders(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	c := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	silent := newChannel(t, s, a.ID, beet.ChannelEmail, beet.ChannelConfig{To: "a@example.com"})
	every := 15 * time.Minute
	if _, err := s.UpdateChannel(ctx, c.ID, beet.ChannelUpdate{ReminderEvery: &every}, t0); err != nil {
		t.Fatal(err)
	}
	b := newBeet(t, s, a.ID)
	flip(t, s, b.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	down := flip(t, s, b.ID, t0, beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	deliver := func(at time.Time) {
		ds, err := s.ClaimDeliveries(ctx, at, time.Minute, 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if ok, err := s.RecordDelivery(ctx, beet.DeliveryResult{ID: d.ID, Attempts: d.Attempts, At: at, Status: beet.DeliveryDelivered}); err != nil || !ok {
				t.Fatalf("RecordDelivery = %v, %v", ok, err)
			}
		}
	}
	// Reminders count from when the alert went out, and none is queued
	// while it (or the previous reminder) is still waiting to be sent.
	for _, tc := range []struct {
		after   time.Duration
		want    int
		deliver bool // send what is pending first
	}{{20 * time.Minute, 0, false}, {20 * time.Minute, 0, true}, {34 * time.Minute, 0, false}, {35 * time.Minute, 1, false},
		{36 * time.Minute, 0, false}, {60 * time.Minute, 0, false}, {61 * time.Minute, 0, true}, {75 * time.Minute, 0, false}, {76 * time.Minute, 1, false}} {
		if tc.deliver {
			deliver(t0.Add(tc.after))
		}
		n, err := s.CreateReminders(ctx, t0.Add(tc.after))
		if err != nil || n != tc.want {
			t.Fatalf("CreateReminders at +%s = %d, %v; want %d", tc.after, n, err, tc.want)
		}
	}
	ds, _ := s.FindDeliveries(ctx, c.ID, 0)
	if len(ds) != 3 || ds[0].Reminder != 2 || ds[1].Reminder != 1 || ds[0].Event != beet.EventDown || ds[0].IncidentFlipID != down.ID {
		t.Fatalf("deliveries = %+v; want the alert and reminders 1 and 2", ds)
	}
	if ds, _ := s.FindDeliveries(ctx, silent.ID, 0); len(ds) != 1 {
		t.Fatalf("a channel without reminders got %d deliveries", len(ds))
	}
	// Recovery ends reminders.
	flip(t, s, b.ID, t0.Add(77*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	if n, _ := s.CreateReminders(ctx, t0.Add(10*time.Hour)); n != 0 {
		t.Fatalf("CreateReminders after recovery = %d, want 0", n)
	}
}

// testRemindersOnlyToTheBeetsChannels: a channel taken off a beet that is
// down gets no more "still down" reminders about it; put back, it does.
func testRemindersOnlyToTheBeetsChannels(t *testing.T, s beet.Store) {
	ctx := t.Context()
	c, b := upBeetWithWebhook(t, s)
	every := 15 * time.Minute
	if _, err := s.UpdateChannel(ctx, c.ID, beet.ChannelUpdate{ReminderEvery: &every}, t0); err != nil {
		t.Fatal(err)
	}
	flip(t, s, b.ID, t0, beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	ds, err := s.ClaimDeliveries(ctx, t0, time.Minute, 10)
	if err != nil || len(ds) != 1 {
		t.Fatalf("ClaimDeliveries = %d, %v; want the alert", len(ds), err)
	}
	if ok, err := s.RecordDelivery(ctx, beet.DeliveryResult{ID: ds[0].ID, Attempts: ds[0].Attempts, At: t0, Status: beet.DeliveryDelivered}); err != nil || !ok {
		t.Fatalf("RecordDelivery = %v, %v", ok, err)
	}
	if err := s.SetBeetChannels(ctx, b.ID, []int64{}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CreateReminders(ctx, t0.Add(20*time.Minute)); err != nil || n != 0 {
		t.Fatalf("CreateReminders for a channel taken off the beet = %d, %v; want 0", n, err)
	}
	if err := s.SetBeetChannels(ctx, b.ID, []int64{c.ID}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CreateReminders(ctx, t0.Add(21*time.Minute)); err != nil || n != 1 {
		t.Fatalf("CreateReminders for the channel put back = %d, %v; want 1", n, err)
	}
}

func testFlapping(t *testing.T, s beet.Store) {
	ctx := t.Context()
	c, b := upBeetWithWebhook(t, s)
	flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, b.ID, t0.Add(2*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	ds, _ := s.FindDeliveries(ctx, c.ID, 0)
	if ok, err := s.MarkFlapping(ctx, ds[1].ID, t0); err != nil || !ok {
		t.Fatalf("first MarkFlapping = %v, %v", ok, err)
	}
	if ok, _ := s.MarkFlapping(ctx, ds[0].ID, t0); ok {
		t.Fatal("a second flapping notice was marked within the hour")
	}
	if ok, _ := s.MarkFlapping(ctx, ds[0].ID, t0.Add(90*time.Second)); !ok {
		t.Fatal("a flapping notice after the first one's hour was refused")
	}
	if d, _ := s.FindDeliveryByID(ctx, ds[1].ID); !d.Flapping {
		t.Fatal("Flapping not stored")
	}
}

// settler is the part of the outbox only the notify worker uses.
type settler interface {
	CreateSettled(ctx context.Context, now time.Time, quiet time.Duration) (int, error)
	FindOpenFlapping(ctx context.Context, channelID, beetID, beforeID int64) (*beet.Delivery, error)
	IncidentSent(ctx context.Context, channelID, incidentFlipID, beforeID int64) (bool, error)
}

// sendNext claims the next delivery of the store and records status.
func sendNext(t *testing.T, s beet.Store, now time.Time, status beet.DeliveryStatus) *beet.Delivery {
	t.Helper()
	ds, err := s.ClaimDeliveries(t.Context(), now, time.Minute, 1)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claim = %v, %v; want one delivery", ds, err)
	}
	if ok, err := s.RecordDelivery(t.Context(), beet.DeliveryResult{ID: ds[0].ID, Attempts: ds[0].Attempts, At: now, Status: status}); err != nil || !ok {
		t.Fatalf("RecordDelivery = %v, %v", ok, err)
	}
	return ds[0]
}

func testSettled(t *testing.T, s beet.Store) {
	ctx := t.Context()
	st, ok := s.(settler)
	if !ok {
		t.Skip("the store does not look for settled beets")
	}
	c, b := upBeetWithWebhook(t, s)
	down := flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	now := t0.Add(2 * time.Minute)
	notice := sendNext(t, s, now, beet.DeliveryDelivered)
	if ok, err := s.MarkFlapping(ctx, notice.ID, t0); err != nil || !ok {
		t.Fatalf("MarkFlapping = %v, %v", ok, err)
	}
	flip(t, s, b.ID, t0.Add(3*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	down2 := flip(t, s, b.ID, t0.Add(4*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	if n, err := st.CreateSettled(ctx, now, time.Hour); err != nil || n != 0 {
		t.Fatalf("CreateSettled with deliveries pending = %d, %v", n, err)
	}
	now = t0.Add(5 * time.Minute)
	sendNext(t, s, now, beet.DeliverySuppressed)
	sendNext(t, s, now, beet.DeliverySuppressed)
	if n, _ := st.CreateSettled(ctx, t0.Add(63*time.Minute), time.Hour); n != 0 {
		t.Fatalf("CreateSettled before an hour of quiet = %d", n)
	}
	if d, err := st.FindOpenFlapping(ctx, c.ID, b.ID, 1<<40); err != nil || d == nil || d.ID != notice.ID || d.IncidentFlipID != down.ID {
		t.Fatalf("FindOpenFlapping = %+v, %v; want the notice", d, err)
	}
	if d, err := st.FindOpenFlapping(ctx, c.ID, b.ID, notice.ID); err != nil || d != nil {
		t.Fatalf("FindOpenFlapping before the notice = %+v, %v; want none (only notices before beforeID)", d, err)
	}
	other := newChannel(t, s, newAccount(t, s, beet.PlanFree).ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/2"})
	if d, err := st.FindOpenFlapping(ctx, other.ID, b.ID, 1<<40); err != nil || d != nil {
		t.Fatalf("FindOpenFlapping of another channel = %+v, %v; want none", d, err)
	}
	for i, want := range []int{1, 0, 0} {
		if n, err := st.CreateSettled(ctx, t0.Add(65*time.Minute), time.Hour); err != nil || n != want {
			t.Fatalf("CreateSettled pass %d = %d, %v; want %d", i, n, err, want)
		}
	}
	ds, _ := s.FindDeliveries(ctx, c.ID, 1)
	d := ds[0]
	if d.Event != "beet.settled" || d.FlipID != down2.ID || d.IncidentFlipID != down2.ID || d.Status != beet.DeliveryPending || d.Reminder != 0 {
		t.Fatalf("settled delivery = %+v; want the latest flip and the open incident", d)
	}
	sendNext(t, s, t0.Add(65*time.Minute), beet.DeliveryDelivered)
	if d, err := st.FindOpenFlapping(ctx, c.ID, b.ID, 1<<40); err != nil || d != nil {
		t.Fatalf("FindOpenFlapping after the settled message = %+v, %v; want none", d, err)
	}
	if n, _ := st.CreateSettled(ctx, t0.Add(3*time.Hour), time.Hour); n != 0 {
		t.Fatalf("CreateSettled after the settled message = %d", n)
	}
	// Reminders continue from a settled message while the beet is down.
	every := 15 * time.Minute
	if _, err := s.UpdateChannel(ctx, c.ID, beet.ChannelUpdate{ReminderEvery: &every}, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CreateReminders(ctx, t0.Add(81*time.Minute)); err != nil || n != 1 {
		t.Fatalf("CreateReminders after a settled message = %d, %v", n, err)
	}
	ds, _ = s.FindDeliveries(ctx, c.ID, 1)
	if r := ds[0]; r.Event != beet.EventDown || r.Reminder != 1 || r.IncidentFlipID != down2.ID {
		t.Fatalf("reminder = %+v", r)
	}
}

// testIncidentSent: a message of an incident counts as sent to a channel
// when it was delivered or failed (not pending, not suppressed), on that
// channel, in that incident, and before the delivery asked about.
func testIncidentSent(t *testing.T, s beet.Store) {
	ctx := t.Context()
	st, ok := s.(settler)
	if !ok {
		t.Skip("the store does not answer whether an incident was sent")
	}
	a := newAccount(t, s, beet.PlanFree)
	c1 := newChannel(t, s, a.ID, beet.ChannelWebhook, beet.ChannelConfig{URL: "https://example.com/1"})
	c2 := newChannel(t, s, a.ID, beet.ChannelEmail, beet.ChannelConfig{To: "a@example.com"})
	b := newBeet(t, s, a.ID)
	flip(t, s, b.ID, t0, beet.StatusNew, beet.StatusUp, beet.FlipFirst)
	down1 := flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, b.ID, t0.Add(2*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	down2 := flip(t, s, b.ID, t0.Add(3*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence)
	flip(t, s, b.ID, t0.Add(4*time.Minute), beet.StatusDown, beet.StatusUp, beet.FlipRecovery)
	// Each channel's deliveries, oldest first: alert 1, recovery 1, alert 2, recovery 2.
	byChannel := func(c *beet.Channel) []*beet.Delivery {
		t.Helper()
		ds, err := s.FindDeliveries(ctx, c.ID, 0)
		if err != nil || len(ds) != 4 {
			t.Fatalf("FindDeliveries = %d, %v; want 4", len(ds), err)
		}
		slices.Reverse(ds)
		return ds
	}
	d1, d2 := byChannel(c1), byChannel(c2)
	record := func(d *beet.Delivery, status beet.DeliveryStatus) {
		t.Helper()
		now := t0.Add(5 * time.Minute)
		got, err := s.ClaimDelivery(ctx, d.ID, now, time.Minute)
		if err != nil {
			t.Fatalf("ClaimDelivery: %v", err)
		}
		if ok, err := s.RecordDelivery(ctx, beet.DeliveryResult{ID: d.ID, Attempts: got.Attempts, At: now, Status: status}); err != nil || !ok {
			t.Fatalf("RecordDelivery = %v, %v", ok, err)
		}
	}
	sent := func(what string, c *beet.Channel, incident *beet.Flip, beforeID int64, want bool) {
		t.Helper()
		if got, err := st.IncidentSent(ctx, c.ID, incident.ID, beforeID); err != nil || got != want {
			t.Errorf("IncidentSent, %s = %v, %v; want %v", what, got, err, want)
		}
	}
	const all = 1 << 40
	sent("all pending", c1, down1, all, false)
	record(d1[0], beet.DeliverySuppressed)
	record(d2[0], beet.DeliveryFailed)
	sent("alert suppressed", c1, down1, all, false)
	sent("alert failed (it was tried)", c2, down1, all, true)
	record(d1[2], beet.DeliveryDelivered)
	sent("alert delivered", c1, down2, all, true)
	sent("before the recovery", c1, down2, d1[3].ID, true)
	sent("before the alert itself", c1, down2, d1[2].ID, false)
	sent("just after the alert", c1, down2, d1[2].ID+1, true)
	sent("another channel", c2, down2, all, false)
	sent("another incident", c1, down1, all, false)
}

func testPauseFanOut(t *testing.T, s beet.Store) {
	ctx := t.Context()
	c, b := upBeetWithWebhook(t, s)
	down := flip(t, s, b.ID, t0.Add(time.Minute), beet.StatusUp, beet.StatusAnomalous, beet.FlipDrop)
	pause := flip(t, s, b.ID, t0.Add(2*time.Minute), beet.StatusAnomalous, beet.StatusPaused, beet.FlipManual)
	flip(t, s, b.ID, t0.Add(3*time.Minute), beet.StatusPaused, beet.StatusUp, beet.FlipManual)
	flip(t, s, b.ID, t0.Add(4*time.Minute), beet.StatusUp, beet.StatusPaused, beet.FlipManual)
	ds, _ := s.FindDeliveries(ctx, c.ID, 0)
	if len(ds) != 2 {
		t.Fatalf("%d deliveries; want the alert and one pause message (resume and pausing an up beet send nothing)", len(ds))
	}
	if d := ds[0]; d.Event != "beet.paused" || d.FlipID != pause.ID || d.IncidentFlipID != down.ID {
		t.Fatalf("pause delivery = %+v; want the incident of the alert", d)
	}
}

func testMaintenance(t *testing.T, s beet.Store) {
	ctx := t.Context()
	a := newAccount(t, s, beet.PlanFree)
	b, other := newBeet(t, s, a.ID), newBeet(t, s, a.ID)
	end := t0.Add(time.Hour)
	once := &beet.MaintenanceWindow{AccountID: a.ID, BeetID: b.ID, Start: &t0, End: &end, Note: "deploy", CreatedAt: t0}
	weekly := &beet.MaintenanceWindow{AccountID: a.ID, Cron: "0 2 * * 0", Timezone: "Europe/Riga", Duration: 2 * time.Hour}
	for _, w := range []*beet.MaintenanceWindow{once, weekly} {
		if err := s.CreateMaintenance(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	if ws, err := s.FindMaintenance(ctx, a.ID, other.ID); err != nil || len(ws) != 1 || ws[0].ID != weekly.ID {
		t.Fatalf("windows of the other beet = %v, %v; want only the account-wide one", ws, err)
	}
	ws, err := s.FindMaintenance(ctx, a.ID, b.ID)
	if err != nil || len(ws) != 2 {
		t.Fatalf("windows of the beet = %v, %v", ws, err)
	}
	w := ws[0]
	if w.BeetID != b.ID || w.Note != "deploy" || w.Cron != "" {
		t.Errorf("window = %+v", w)
	}
	sameTimePtr(t, "Start", w.Start, &t0)
	sameTimePtr(t, "End", w.End, &end)
	if w := ws[1]; w.BeetID != 0 || w.Cron != "0 2 * * 0" || w.Timezone != "Europe/Riga" || w.Duration != 2*time.Hour || w.Start != nil {
		t.Errorf("repeating window = %+v", w)
	}
	// Live windows: the repeating one always, the one-off one until it ends.
	if ws, err := s.FindLiveMaintenance(ctx, end.Add(-time.Second), 10); err != nil || len(ws) != 2 {
		t.Errorf("live windows before the one-off ends = %v, %v; want both", ws, err)
	}
	if ws, err := s.FindLiveMaintenance(ctx, end, 10); err != nil || len(ws) != 1 || ws[0].ID != weekly.ID {
		t.Errorf("live windows once the one-off ended = %v, %v; want the repeating one", ws, err)
	}
	if ws, _ := s.FindLiveMaintenance(ctx, t0, 1); len(ws) != 1 {
		t.Errorf("live windows with limit 1 = %d", len(ws))
	}
	if err := s.DeleteMaintenance(ctx, once.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.FindMaintenanceByID(ctx, once.ID)
	wantCode(t, "FindMaintenanceByID after delete", err, beet.ENOTFOUND)
}
