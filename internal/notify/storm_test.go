package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
)

// TestFlapping: a beet that flips more than FlapLimit times in an hour is
// reported once as flapping, then quiet; once it settles, flips are sent
// again.
func TestFlapping(t *testing.T) {
	r := newRig(t, "sqlite")
	rc := newReceiver(t)
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
	start := time.Now().Add(-3 * time.Hour)
	for i := range 8 { // down, up, down, up, … one a minute
		at := start.Add(time.Duration(i) * time.Minute)
		if i%2 == 0 {
			r.flipAt(at, beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
		} else {
			r.flipAt(at, beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
		}
	}
	w := r.worker(func(w *notify.Worker) { w.FlapLimit = 3 })
	ds := r.drain(w, ch)
	got := rc.requests()
	if len(got) != 4 {
		t.Fatalf("receiver got %d messages for 8 flips, want 3 and one flapping notice", len(got))
	}
	var last webhookBody
	decodeStrict(t, got[3].Body, &last)
	if !last.Flapping || !strings.Contains(last.Message, "is flapping") || !strings.Contains(last.Message, "quiet") {
		t.Fatalf("fourth message is not the flapping notice: %+v", last)
	}
	suppressed := 0
	for _, d := range ds {
		if d.Status == beet.DeliverySuppressed && strings.Contains(d.Error, "flapping") {
			suppressed++
		}
	}
	if suppressed != 4 {
		t.Fatalf("%d deliveries suppressed as flapping, want 4", suppressed)
	}
	// Two hours later it has settled: the next outage is sent as usual.
	r.flipAt(time.Now(), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
	r.drain(w, ch)
	if got := rc.requests(); len(got) != 5 {
		t.Fatalf("after settling: %d messages, want 5", len(got))
	} else {
		var m webhookBody
		decodeStrict(t, got[4].Body, &m)
		if m.Flapping || m.Event != "beet.down" {
			t.Fatalf("after settling: %+v", m)
		}
	}
}

// TestReminders: while a beet stays down, a channel with reminders gets
// "still down" every period, once per period across passes; recovery ends
// them, and a channel without reminders gets none.
func TestReminders(t *testing.T) {
	r := newRig(t, "sqlite")
	rc, quiet := newReceiver(t), newReceiver(t)
	ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
	qch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: quiet.URL})
	every := 15 * time.Minute
	if _, err := r.db.UpdateChannel(context.Background(), ch.ID, beet.ChannelUpdate{ReminderEvery: &every}, time.Now()); err != nil {
		t.Fatal(err)
	}
	r.flipAt(time.Now().Add(-20*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event for 20 min")
	w := r.worker()
	// The alert was created 20 minutes ago, so the first reminder is due
	// as soon as the alert is out.
	r.drain(w, ch)
	r.drain(w, qch)
	for range 3 { // several passes (or instances) add one reminder
		if _, err := r.db.CreateReminders(context.Background(), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	r.drain(w, ch)
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d messages, want the alert and one reminder", len(got))
	}
	var rem webhookBody
	decodeStrict(t, got[1].Body, &rem)
	if rem.Reminder != 1 || rem.Event != "beet.down" || !strings.Contains(rem.Message, "is still down") || !strings.Contains(rem.Message, "20 min ago") {
		t.Fatalf("reminder = %+v", rem)
	}
	if n := len(quiet.requests()); n != 1 {
		t.Fatalf("the channel without reminders got %d messages", n)
	}
	r.up()
	r.drain(w, ch)
	if n, _ := r.db.CreateReminders(context.Background(), time.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("%d reminders after recovery", n)
	}
}
