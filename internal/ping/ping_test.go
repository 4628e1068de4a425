package ping_test

import (
	"testing"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ping"
)

var t0 = time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)

func at(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }

func index(bs ...*beet.Beet) (map[int64]*beet.Beet, map[string]*beet.Beet) {
	byID, byToken := map[int64]*beet.Beet{}, map[string]*beet.Beet{}
	for _, b := range bs {
		byID[b.ID], byToken[b.Token] = b, b
	}
	return byID, byToken
}

// TestMatch: an event goes to the beet that has its token now, or to the
// beet of its ID; a token no beet has, a beet that is gone, and a token
// whose beet is not the one the caller named drop the event, and a token
// the caller had seen on a beet that no longer has it is stale.
func TestMatch(t *testing.T) {
	byID, byToken := index(&beet.Beet{ID: 1, Token: "tok1"}, &beet.Beet{ID: 2, Token: "tok2"})
	events := []beet.Event{
		{Token: "tok1"},            // the beet with the token
		{BeetID: 2},                // by ID
		{Token: "gone"},            // no beet's
		{Token: "gone", BeetID: 1}, // rotated away from beet 1
		{Token: "tok2", BeetID: 1}, // the token is another beet's now
		{BeetID: 9},                // deleted
		{Token: "tok2", BeetID: 2}, // agrees
	}
	ping.Match(events, byID, byToken)
	want := []struct {
		id    int64
		stale bool
	}{{1, false}, {2, false}, {0, false}, {0, true}, {0, false}, {0, false}, {2, false}}
	for i, w := range want {
		if events[i].BeetID != w.id || events[i].Stale != w.stale {
			t.Errorf("event %d: beet %d stale %v, want beet %d stale %v", i, events[i].BeetID, events[i].Stale, w.id, w.stale)
		}
	}
}

// TestApply: the beets that got events come back in ID order with their
// span (starts and logs left out of the rhythm), last_event_at moves
// forward only, and the observer's flips carry their beet.
func TestApply(t *testing.T) {
	later := at(1000)
	b1 := &beet.Beet{ID: 1, Token: "tok1"}
	b2 := &beet.Beet{ID: 2, Token: "tok2", LastEventAt: &later}
	b3 := &beet.Beet{ID: 3, Token: "tok3"}
	byID, byToken := index(b1, b2, b3)
	events := []beet.Event{
		{Token: "tok2", ReceivedAt: at(30)},
		{Token: "tok1", ReceivedAt: at(20)},
		{Token: "tok1", ReceivedAt: at(10)},
		{Token: "tok1", ReceivedAt: at(40), Kind: beet.KindLog},
		{Token: "nobody", ReceivedAt: at(50)},
	}
	spans := map[int64]beet.EventSpan{}
	touched, flips := ping.Apply(events, byID, byToken, func(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
		spans[b.ID] = sp
		return []beet.Flip{{At: sp.Last, To: beet.StatusUp}}
	})
	if len(touched) != 2 || touched[0] != b1 || touched[1] != b2 {
		t.Fatalf("touched %v, want beets 1 and 2 in order", touched)
	}
	if sp := spans[1]; !sp.First.Equal(at(10)) || !sp.Last.Equal(at(20)) || sp.Count != 2 {
		t.Errorf("beet 1 span %+v, want 10 s to 20 s, 2 events (the log left out)", sp)
	}
	if b1.LastEventAt == nil || !b1.LastEventAt.Equal(at(20)) {
		t.Errorf("beet 1 last event %v, want 20 s", b1.LastEventAt)
	}
	if !b2.LastEventAt.Equal(later) {
		t.Errorf("beet 2 last event %v moved back from %v", b2.LastEventAt, later)
	}
	if len(flips) != 2 || flips[0].BeetID != 1 || flips[1].BeetID != 2 {
		t.Errorf("flips %+v, want one for beet 1, then one for beet 2", flips)
	}
	if events[4].BeetID != 0 {
		t.Errorf("an unknown token's event went to beet %d", events[4].BeetID)
	}
}

// TestApplyRuns: a group's job signals are paired in time order, whatever
// order they arrive in, by run ID as Healthchecks pairs them; a plain ping
// of a beet with no open run tracks nothing.
func TestApplyRuns(t *testing.T) {
	b := &beet.Beet{ID: 1, Token: "tok"}
	byID, byToken := index(b)
	events := []beet.Event{
		{Token: "tok", ReceivedAt: at(60), RID: "a"},
		{Token: "tok", ReceivedAt: at(100), Kind: beet.KindFail, RID: "b"},
		{Token: "tok", ReceivedAt: at(0), Kind: beet.KindStart, RID: "a"},
		{Token: "tok", ReceivedAt: at(10), Kind: beet.KindStart, RID: "b"},
	}
	var span beet.EventSpan
	ping.Apply(events, byID, byToken, func(_ *beet.Beet, sp beet.EventSpan) []beet.Flip { span = sp; return nil })
	if d := events[0].Duration; d == nil || *d != time.Minute {
		t.Errorf("run a took %v, want 1m0s", d)
	}
	if d := events[1].Duration; d == nil || *d != 90*time.Second {
		t.Errorf("run b took %v, want 1m30s", d)
	}
	if len(span.Signals) != 4 || !span.Signals[0].At.Equal(at(0)) || span.Signals[3].Kind != beet.KindFail {
		t.Errorf("signals %+v, want the four in time order", span.Signals)
	}
	if b.Runs.Open() {
		t.Errorf("runs %+v left open", b.Runs)
	}

	plain := &beet.Beet{ID: 2, Token: "plain"}
	byID, byToken = index(plain)
	ping.Apply([]beet.Event{{Token: "plain", ReceivedAt: at(5)}}, byID, byToken,
		func(_ *beet.Beet, sp beet.EventSpan) []beet.Flip { span = sp; return nil })
	if span.Signals != nil || span.OpenRun != nil {
		t.Errorf("a plain ping's span %+v has signals", span)
	}
}
