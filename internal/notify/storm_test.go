package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
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
	r.drain(w, ch)
	r.drain(w, qch)
	// Reminders count from when the alert went out.
	later := time.Now().Add(15 * time.Minute)
	for range 3 { // several passes (or instances) add one reminder
		if _, err := r.db.CreateReminders(context.Background(), later); err != nil {
			t.Fatal(err)
		}
	}
	w.Now = func() time.Time { return later }
	r.drain(w, ch)
	w.Now = nil
	got := rc.requests()
	if len(got) != 2 {
		t.Fatalf("receiver got %d messages, want the alert and one reminder", len(got))
	}
	var rem webhookBody
	decodeStrict(t, got[1].Body, &rem)
	if rem.Reminder != 1 || rem.Event != "beet.down" || !strings.Contains(rem.Message, "is still down") || !strings.Contains(rem.Message, "35 min ago") {
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

// TestRemindersWaitForTheAlert: while a receiver is failing, its alert
// retries and no reminder piles up behind it; when the receiver recovers
// it gets the alert alone, and the first reminder one period later.
func TestRemindersWaitForTheAlert(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		r := newRig(t, engine)
		rc := newReceiver(t, 503)
		ch := r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: rc.URL})
		every := 15 * time.Minute
		if _, err := r.db.UpdateChannel(context.Background(), ch.ID, beet.ChannelUpdate{ReminderEvery: &every}, time.Now()); err != nil {
			t.Fatal(err)
		}
		r.flipAt(time.Now().Add(-20*time.Minute), beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event for 20 min")
		w := r.worker(func(w *notify.Worker) { w.BackoffBase, w.BackoffMax = time.Hour, time.Hour })
		if _, err := w.Once(context.Background()); err != nil {
			t.Fatal(err)
		}
		if n := len(rc.requests()); n != 1 {
			t.Fatalf("receiver got %d requests, want the failed alert", n)
		}
		for _, at := range []time.Time{time.Now(), time.Now().Add(30 * time.Minute), time.Now().Add(3 * time.Hour)} {
			if n, err := r.db.CreateReminders(context.Background(), at); err != nil || n != 0 {
				t.Fatalf("CreateReminders with the alert still retrying = %d, %v; want none", n, err)
			}
		}
		// The receiver is back when the retry is due.
		w.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
		r.drain(w, ch)
		if got := events(t, rc); len(got) != 2 || got[1] != beet.EventDown {
			t.Fatalf("receiver got %v; want the failed alert, then the alert alone", got)
		}
		if n, _ := r.db.CreateReminders(context.Background(), time.Now().Add(2*time.Hour+14*time.Minute)); n != 0 {
			t.Fatalf("%d reminders less than a period after the alert went out", n)
		}
		if n, _ := r.db.CreateReminders(context.Background(), time.Now().Add(2*time.Hour+15*time.Minute)); n != 1 {
			t.Fatalf("%d reminders a period after the alert went out; want 1", n)
		}
	})
}

// TestFlappingWhileLearning: a learning beet whose alarm comes and goes
// (learning → down → learning …) is reported flapping like any other: its
// returns to learning count as the recoveries they are sent as.
func TestFlappingWhileLearning(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		fr := newFlapRig(t, newRig(t, engine))
		fr.flipAt(time.Now().Add(-4*time.Hour), beet.StatusUp, beet.StatusLearning, beet.FlipSilence, "Relearning")
		start := time.Now().Add(-3 * time.Hour)
		for i := range 8 {
			at := start.Add(time.Duration(i) * time.Minute)
			if i%2 == 0 {
				fr.flipAt(at, beet.StatusLearning, beet.StatusDown, beet.FlipSilence, "No event")
			} else {
				fr.flipAt(at, beet.StatusDown, beet.StatusLearning, beet.FlipRecovery, "Events are back")
			}
		}
		fr.drainAll()
		var got []webhookBody
		for _, req := range fr.hook.requests() {
			var m webhookBody
			decodeStrict(t, req.Body, &m)
			got = append(got, m)
		}
		if len(got) != 5 || !got[4].Flapping {
			t.Fatalf("webhook got %d messages (last %+v); want 4 and the flapping notice", len(got), got[len(got)-1])
		}
	})
}
