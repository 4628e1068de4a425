package notify_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/notify"
	"github.com/beethq/beet/internal/testdb"
)

const routingKey = "R0UT1NGKEY0123456789abcdefABCDEF"

// flapRig is a rig with a webhook and a PagerDuty channel (both real
// loopback receivers) and a worker that calls more than 4 alerting flips
// in an hour flapping.
type flapRig struct {
	*rig
	hook, pd     *receiver
	hookCh, pdCh *beet.Channel
	w            *notify.Worker
	// kinds and kindChans are further receivers and channels, if any.
	kinds     map[beet.ChannelKind]*receiver
	kindChans []*beet.Channel
}

func newFlapRig(t *testing.T, r *rig) *flapRig {
	fr := &flapRig{rig: r, hook: newReceiver(t), pd: newReceiver(t)}
	fr.hookCh = r.channel(beet.ChannelWebhook, beet.ChannelConfig{URL: fr.hook.URL})
	fr.pdCh = r.channel(beet.ChannelPagerDuty, beet.ChannelConfig{RoutingKey: routingKey})
	fr.w = r.worker(func(w *notify.Worker) { w.FlapLimit = 4 })
	notify.SetPagerDutyURL(fr.w.Sender, fr.pd.URL+"/v2/enqueue")
	return fr
}

// flap makes n alternating flips a minute apart, starting down, 3 hours
// ago, and returns them.
func (fr *flapRig) flap(n int) []*beet.Flip {
	start := time.Now().Add(-3 * time.Hour)
	var fs []*beet.Flip
	for i := range n {
		at := start.Add(time.Duration(i) * time.Minute)
		if i%2 == 0 {
			fs = append(fs, fr.flipAt(at, beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event"))
		} else {
			fs = append(fs, fr.flipAt(at, beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back"))
		}
	}
	return fs
}

func (fr *flapRig) drainAll() {
	fr.drain(fr.w, fr.hookCh)
	fr.drain(fr.w, fr.pdCh)
}

func (fr *flapRig) drainKinds() {
	fr.drainAll()
	for _, c := range fr.kindChans {
		fr.drain(fr.w, c)
	}
}

func (fr *flapRig) settle(want int) {
	fr.t.Helper()
	for range 3 { // several passes (or instances) add each message once
		n, err := fr.w.CreateSettled(context.Background())
		if err != nil {
			fr.t.Fatal(err)
		}
		if n != want {
			fr.t.Fatalf("CreateSettled added %d, want %d", n, want)
		}
		want = 0
	}
	fr.drainAll()
}

func (fr *flapRig) pdEvents() []pagerDutyEvent {
	var out []pagerDutyEvent
	for _, req := range fr.pd.requests() {
		out = append(out, checkPagerDuty(fr.t, req.Body))
	}
	return out
}

func incidentKey(b *beet.Beet, f *beet.Flip) string {
	return "beet-" + itoa(b.ID) + "-incident-" + itoa(f.ID)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFlappingSettlesUp: a beet flaps and ends up, its recovery
// suppressed. Once it has been quiet for the settle period each channel
// is told once that it settled and is up, and PagerDuty resolves the
// incident the flapping notice opened.
func TestFlappingSettlesUp(t *testing.T) {
	fr := newFlapRig(t, newRig(t, "sqlite"))
	fs := fr.flap(8) // down, up ×4: the 5th flip (down) is the notice
	fr.drainAll()
	if n := len(fr.hook.requests()); n != 5 {
		t.Fatalf("webhook got %d messages, want 4 and the flapping notice", n)
	}
	pd := fr.pdEvents()
	notice := pd[4]
	if notice.EventAction != "trigger" || notice.DedupKey != incidentKey(fr.beet, fs[4]) {
		t.Fatalf("flapping notice on PagerDuty = %+v", notice)
	}
	// Not settled while the quiet period runs.
	fr.w.SettleAfter = 4 * time.Hour
	fr.settle(0)
	fr.w.SettleAfter = 0 // the default hour
	fr.settle(2)         // one per channel

	got := fr.hook.requests()
	if len(got) != 6 {
		t.Fatalf("webhook got %d messages, want one settled message", len(got))
	}
	var m webhookBody
	decodeStrict(t, got[5].Body, &m)
	if m.Event != "beet.up" || !m.Settled || m.Flapping || m.Beet.Status != "up" ||
		!strings.Contains(m.Message, "has settled: it is up") || m.IncidentKey != notice.DedupKey {
		t.Fatalf("settled message = %+v", m)
	}
	pd = fr.pdEvents()
	if len(pd) != 6 || pd[5].EventAction != "resolve" || pd[5].DedupKey != notice.DedupKey {
		t.Fatalf("PagerDuty after settling: %+v; want a resolve of %s", pd, notice.DedupKey)
	}
	// Settled once: later passes add nothing, and the next outage is sent
	// as usual, alone.
	fr.settle(0)
	fr.flip(beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
	fr.drainAll()
	m = webhookBody{}
	decodeStrict(t, fr.hook.requests()[6].Body, &m)
	if m.Event != "beet.down" || m.Settled || m.ResolvesIncidentKey != "" {
		t.Fatalf("next outage = %+v", m)
	}
	if pd := fr.pdEvents(); len(pd) != 7 || pd[6].EventAction != "trigger" {
		t.Fatalf("PagerDuty after the next outage: %+v", pd)
	}
}

// TestFlappingSettlesDown: a beet flaps and ends down. The settled message
// says it is still down; PagerDuty gets the current incident triggered and
// the flapping notice's one resolved, so the recovery (which carries the
// current incident) leaves nothing open. Reminders go on after it.
func TestFlappingSettlesDown(t *testing.T) {
	fr := newFlapRig(t, newRig(t, "sqlite"))
	fs := fr.flap(9) // ends with flip 8 into down
	fr.drainAll()
	noticeKey, current := incidentKey(fr.beet, fs[4]), incidentKey(fr.beet, fs[8])
	fr.settle(2)
	got := fr.hook.requests()
	if len(got) != 6 {
		t.Fatalf("webhook got %d messages, want 4, the flapping notice and the settled message", len(got))
	}
	var m webhookBody
	decodeStrict(t, got[5].Body, &m)
	if m.Event != "beet.down" || !m.Settled || !strings.Contains(m.Message, "has settled: it is down") ||
		!strings.Contains(m.Message, "still down") || m.IncidentKey != current || m.ResolvesIncidentKey != noticeKey {
		t.Fatalf("settled message = %+v", m)
	}
	pd := fr.pdEvents()
	if len(pd) != 7 || pd[5].EventAction != "trigger" || pd[5].DedupKey != current || pd[5].Payload.Severity != "critical" ||
		pd[6].EventAction != "resolve" || pd[6].DedupKey != noticeKey {
		t.Fatalf("PagerDuty after settling down: %+v", pd)
	}
	if !strings.Contains(pd[5].Payload.Summary, "has settled: it is down") {
		t.Fatalf("trigger summary %q", pd[5].Payload.Summary)
	}
	// Reminders continue from the settled message, in its incident.
	every := 15 * time.Minute
	if _, err := fr.db.UpdateChannel(context.Background(), fr.hookCh.ID, beet.ChannelUpdate{ReminderEvery: &every}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n, err := fr.db.CreateReminders(context.Background(), time.Now().Add(20*time.Minute)); err != nil || n != 1 {
		t.Fatalf("reminders after settling down: %d, %v", n, err)
	}
	fr.w.Now = func() time.Time { return time.Now().Add(20 * time.Minute) }
	fr.drainAll()
	fr.w.Now = nil
	m = webhookBody{}
	decodeStrict(t, fr.hook.requests()[6].Body, &m)
	if m.Event != "beet.down" || m.Reminder != 1 || m.Settled || m.IncidentKey != current || !strings.Contains(m.Message, "is still down") {
		t.Fatalf("reminder = %+v", m)
	}
	// The recovery resolves the current incident, and nothing else.
	fr.flip(beet.StatusDown, beet.StatusUp, beet.FlipRecovery, "Events are back")
	fr.drainAll()
	pd = fr.pdEvents()
	if len(pd) != 8 || pd[7].EventAction != "resolve" || pd[7].DedupKey != current {
		t.Fatalf("PagerDuty after recovery: %+v", pd[len(pd)-1])
	}
	m = webhookBody{}
	decodeStrict(t, fr.hook.requests()[7].Body, &m)
	if m.Event != "beet.up" || m.Settled || m.IncidentKey != current || m.ResolvesIncidentKey != "" {
		t.Fatalf("recovery = %+v", m)
	}
}

// TestFlapThenSentFlipClosesNotice: when the flapping ends with a flip
// that is sent as usual (its hour holds few enough), that message also
// closes the incident the flapping notice opened, and no settled message
// follows.
func TestFlapThenSentFlipClosesNotice(t *testing.T) {
	fr := newFlapRig(t, newRig(t, "sqlite"))
	fs := fr.flap(8) // ends up
	fr.drainAll()
	down := fr.flip(beet.StatusUp, beet.StatusDown, beet.FlipSilence, "No event")
	fr.drainAll()
	pd := fr.pdEvents()
	if len(pd) != 7 || pd[5].EventAction != "trigger" || pd[5].DedupKey != incidentKey(fr.beet, down) ||
		pd[6].EventAction != "resolve" || pd[6].DedupKey != incidentKey(fr.beet, fs[4]) {
		t.Fatalf("PagerDuty: %+v", pd)
	}
	fr.settle(0)
}

// TestSettledOnceAcrossInstances: two instances (two connection pools)
// look for settled beets at once; each channel gets one message.
func TestSettledOnceAcrossInstances(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		url := testdb.URL(t, engine)
		db1, db2 := testdb.Open(t, url), testdb.Open(t, url)
		r := newRigOn(t, db1)
		fr := newFlapRig(t, r)
		fr.flap(8)
		fr.drainAll()
		w2 := &notify.Worker{Store: db2, Sender: fr.w.Sender}
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			added int
		)
		for _, w := range []*notify.Worker{fr.w, w2, fr.w, w2} {
			wg.Go(func() {
				n, err := w.CreateSettled(context.Background())
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				added += n
				mu.Unlock()
			})
		}
		wg.Wait()
		if added != 2 {
			t.Fatalf("%s: racing passes added %d settled messages, want 2 (one per channel)", engine, added)
		}
		fr.drainAll()
		settled := 0
		for _, req := range fr.hook.requests() {
			var m webhookBody
			decodeStrict(t, req.Body, &m)
			if m.Settled {
				settled++
			}
		}
		if settled != 1 || len(fr.pdEvents()) != 6 {
			t.Fatalf("%s: webhook got %d settled messages, PagerDuty %d events; want 1 and 6", engine, settled, len(fr.pdEvents()))
		}
	})
}

// TestPauseDownResolves: pausing a beet that is down resolves its
// PagerDuty incident and tells the webhook once; pausing an up beet, and
// resuming, send nothing.
func TestPauseDownResolves(t *testing.T) {
	testdb.Each(t, func(t *testing.T, engine string) {
		fr := newFlapRig(t, newRig(t, engine))
		ctx := context.Background()
		down := fr.down()
		fr.drainAll()
		if _, err := fr.svc.Pause(ctx, fr.acct.ID, fr.beet.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.svc.Pause(ctx, fr.acct.ID, fr.beet.ID); err != nil { // a second pause changes nothing
			t.Fatal(err)
		}
		fr.drainAll()
		key := incidentKey(fr.beet, down)
		pd := fr.pdEvents()
		if len(pd) != 2 || pd[0].EventAction != "trigger" || pd[1].EventAction != "resolve" || pd[0].DedupKey != key || pd[1].DedupKey != key {
			t.Fatalf("PagerDuty: %+v; want trigger then resolve of %s", pd, key)
		}
		got := fr.hook.requests()
		if len(got) != 2 {
			t.Fatalf("webhook got %d messages, want the alert and the pause", len(got))
		}
		var m webhookBody
		decodeStrict(t, got[1].Body, &m)
		if m.Event != "beet.paused" || m.IncidentKey != key || m.Beet.Status != "paused" || m.Flip.Kind != "manual" ||
			!strings.Contains(m.Message, "is paused") || !strings.Contains(m.Message, "alerts are off until it is resumed") {
			t.Fatalf("pause message = %+v", m)
		}
		// No reminders while paused; resuming and pausing an up beet say nothing.
		if n, _ := fr.db.CreateReminders(ctx, time.Now().Add(48*time.Hour)); n != 0 {
			t.Fatalf("%d reminders while paused", n)
		}
		if _, err := fr.svc.Resume(ctx, fr.acct.ID, fr.beet.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := fr.svc.Pause(ctx, fr.acct.ID, fr.beet.ID); err != nil {
			t.Fatal(err)
		}
		fr.drainAll()
		if len(fr.hook.requests()) != 2 || len(fr.pdEvents()) != 2 {
			t.Fatalf("resume or pausing an up beet sent something")
		}
	})
}

// TestPauseBeforeAlertSent: a pause while the alert is still in the
// outbox goes out after it, so PagerDuty never gets the resolve first.
func TestPauseBeforeAlertSent(t *testing.T) {
	fr := newFlapRig(t, newRig(t, "sqlite"))
	down := fr.down()
	if _, err := fr.svc.Pause(context.Background(), fr.acct.ID, fr.beet.ID); err != nil {
		t.Fatal(err)
	}
	fr.drainAll()
	pd := fr.pdEvents()
	if len(pd) != 2 || pd[0].EventAction != "trigger" || pd[1].EventAction != "resolve" || pd[1].DedupKey != incidentKey(fr.beet, down) {
		t.Fatalf("PagerDuty: %+v", pd)
	}
}

// TestPauseAndSettledFormats: the pause and settled messages pass each chat
// kind's format checks and say what happened.
func TestPauseAndSettledFormats(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(fr *flapRig)
		want string
	}{
		{"pause", func(fr *flapRig) {
			fr.down()
			if _, err := fr.svc.Pause(context.Background(), fr.acct.ID, fr.beet.ID); err != nil {
				t.Fatal(err)
			}
		}, "is paused"},
		{"settled", func(fr *flapRig) {
			fr.flap(9)
			fr.drainKinds()
			if _, err := fr.w.CreateSettled(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, "has settled: it is down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := newFlapRig(t, newRig(t, "sqlite"))
			fr.kinds = map[beet.ChannelKind]*receiver{}
			for _, k := range []beet.ChannelKind{beet.ChannelSlack, beet.ChannelDiscord, beet.ChannelTeams, beet.ChannelNtfy} {
				rc := newReceiver(t)
				fr.kinds[k] = rc
				fr.kindChans = append(fr.kindChans, fr.channel(k, beet.ChannelConfig{URL: rc.URL + "/" + string(k)}))
			}
			tc.run(fr)
			fr.drainKinds()
			last := func(k beet.ChannelKind) request {
				got := fr.kinds[k].requests()
				if len(got) == 0 {
					t.Fatalf("%s got nothing", k)
				}
				return got[len(got)-1]
			}
			if m := checkSlack(t, last(beet.ChannelSlack).Body); !strings.Contains(m.Text, tc.want) {
				t.Errorf("slack: %s", last(beet.ChannelSlack).Body)
			}
			if m := checkDiscord(t, last(beet.ChannelDiscord).Body); !strings.Contains(m.Content, tc.want) {
				t.Errorf("discord: %s", last(beet.ChannelDiscord).Body)
			}
			if m := checkTeams(t, last(beet.ChannelTeams).Body); !strings.Contains(m.Attachments[0].Content.Body[0].Text, tc.want) {
				t.Errorf("teams: %s", last(beet.ChannelTeams).Body)
			}
			if h := last(beet.ChannelNtfy).Header; !strings.Contains(h.Get("Title"), tc.want) {
				t.Errorf("ntfy: %v", h)
			}
		})
	}
}

// TestPauseAfterFlapping: pausing a beet whose flapping ended down closes
// both its current incident and the one the flapping notice opened;
// pausing one whose flapping ended up sends nothing then, and the settled
// message says it is paused and resolves the notice's incident.
func TestPauseAfterFlapping(t *testing.T) {
	ctx := context.Background()
	t.Run("down", func(t *testing.T) {
		fr := newFlapRig(t, newRig(t, "sqlite"))
		fs := fr.flap(9)
		fr.drainAll()
		if _, err := fr.svc.Pause(ctx, fr.acct.ID, fr.beet.ID); err != nil {
			t.Fatal(err)
		}
		fr.drainAll()
		pd := fr.pdEvents()
		if len(pd) != 7 || pd[5].EventAction != "resolve" || pd[5].DedupKey != incidentKey(fr.beet, fs[8]) ||
			pd[6].EventAction != "resolve" || pd[6].DedupKey != incidentKey(fr.beet, fs[4]) {
			t.Fatalf("PagerDuty: %+v", pd)
		}
		fr.settle(0)
	})
	t.Run("up", func(t *testing.T) {
		fr := newFlapRig(t, newRig(t, "sqlite"))
		fs := fr.flap(8)
		fr.drainAll()
		if _, err := fr.svc.Pause(ctx, fr.acct.ID, fr.beet.ID); err != nil {
			t.Fatal(err)
		}
		fr.drainAll()
		if n := len(fr.pdEvents()); n != 5 {
			t.Fatalf("pausing an up beet sent %d PagerDuty events", n-5)
		}
		// The pause is the beet's latest flip: an hour after it, settled.
		fr.w.Now = func() time.Time { return time.Now().Add(61 * time.Minute) }
		fr.settle(2)
		pd := fr.pdEvents()
		if len(pd) != 6 || pd[5].EventAction != "resolve" || pd[5].DedupKey != incidentKey(fr.beet, fs[4]) {
			t.Fatalf("PagerDuty: %+v", pd)
		}
		var m webhookBody
		decodeStrict(t, fr.hook.requests()[5].Body, &m)
		if m.Event != "beet.paused" || !m.Settled || !strings.Contains(m.Message, "has settled: it is paused") {
			t.Fatalf("settled message = %+v", m)
		}
	})
}
