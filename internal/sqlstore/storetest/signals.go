package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

var signalTests = []struct {
	name string
	fn   func(t *testing.T, s beet.Store)
}{
	{"SignalEventFields", testSignalEventFields},
	{"RunDurations", testRunDurations},
	{"RotatedTokens", testRotatedTokens},
	{"RotatedTokensBounded", testRotatedTokensBounded},
}

func signal(beetID int64, at time.Time, kind beet.EventKind, code *int, msg string) beet.Event {
	return beet.Event{ID: eventID(), BeetID: beetID, ReceivedAt: at, Method: "POST", UserAgent: "curl/8", Kind: kind, ExitCode: code, Message: msg}
}

// testSignalEventFields: an event's kind, exit code and message come back
// as stored; a plain event reads back as a ping with none of them.
func testSignalEventFields(t *testing.T, s beet.Store) {
	ctx := t.Context()
	b := newBeet(t, s, newAccount(t, s, beet.PlanFree).ID)
	long := strings.Repeat("x", beet.MaxMessageLen)
	in := []beet.Event{
		events(b.ID, t0, 0, 1)[0],
		signal(b.ID, t0.Add(time.Second), beet.KindLog, nil, "disk 91% full; ünïcode"),
		signal(b.ID, t0.Add(2*time.Second), beet.KindFail, ptr(255), long),
		signal(b.ID, t0.Add(3*time.Second), beet.KindPing, ptr(0), ""),
	}
	addEvents(t, s, in)
	got, err := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	if err != nil || len(got) != 4 {
		t.Fatalf("FindEvents = %d, %v", len(got), err)
	}
	for i, g := range got {
		w := in[3-i]
		if g.Kind != w.Kind.Normal() || g.Message != w.Message || (g.ExitCode == nil) != (w.ExitCode == nil) ||
			g.ExitCode != nil && *g.ExitCode != *w.ExitCode || g.Duration != nil {
			t.Errorf("event %d = kind %q, code %v, message of %d bytes, duration %v; want %q, %v, %d bytes, none",
				i, g.Kind, g.ExitCode, len(g.Message), g.Duration, w.Kind.Normal(), w.ExitCode, len(w.Message))
		}
	}
	// A log moves neither the rhythm nor last_event_at.
	cur, _ := s.FindBeetByID(ctx, b.ID)
	sameTimePtr(t, "LastEventAt", cur.LastEventAt, ptr(t0.Add(3*time.Second)))
}

// testRunDurations: a start followed by a success or failure puts the
// run's length on that end event, across groups, and the beet keeps the
// open run and recent durations; the observer sees starts and ends as
// signals but counts only the ends.
func testRunDurations(t *testing.T, s beet.Store) {
	ctx := t.Context()
	b := newBeet(t, s, newAccount(t, s, beet.PlanFree).ID)
	var spans []beet.EventSpan
	observe := func(_ *beet.Beet, sp beet.EventSpan) []beet.Flip { spans = append(spans, sp); return nil }
	add := func(evs ...beet.Event) {
		t.Helper()
		spans = nil
		if err := s.AddEvents(ctx, evs, observe); err != nil {
			t.Fatal(err)
		}
	}
	// A group of a start and a log only: counted nothing, the run is open.
	add(signal(b.ID, t0, beet.KindStart, nil, ""), signal(b.ID, t0.Add(time.Minute), beet.KindLog, nil, "half way"))
	if len(spans) != 1 || spans[0].Count != 0 || len(spans[0].Signals) != 1 || spans[0].Signals[0].Kind != beet.KindStart {
		t.Fatalf("start and log: observer saw %+v; want no counted events and one start signal", spans)
	}
	cur, _ := s.FindBeetByID(ctx, b.ID)
	if cur.LastEventAt != nil || cur.Runs.StartedAt == nil || !cur.Runs.StartedAt.Equal(t0) {
		t.Fatalf("after a start: last event %v, run started %v; want none and %v", cur.LastEventAt, cur.Runs.StartedAt, t0)
	}
	// A plain ping in a later group ends it (the events arrive out of order).
	add(events(b.ID, t0.Add(3*time.Minute+1500*time.Microsecond), 0, 1)[0], signal(b.ID, t0.Add(2*time.Minute), beet.KindLog, nil, "almost"))
	if len(spans) != 1 || spans[0].OpenRun == nil || !spans[0].OpenRun.Equal(t0) {
		t.Errorf("end: the span's open run = %v, want the start at %v", spans[0].OpenRun, t0)
	}
	if len(spans) != 1 || spans[0].Count != 1 || len(spans[0].Signals) != 1 || spans[0].Signals[0].Duration == nil ||
		*spans[0].Signals[0].Duration != 3*time.Minute+time.Millisecond {
		t.Fatalf("end: observer saw %+v; want one counted event that ended a run of 3 min 1 ms", spans)
	}
	// Start and failure with exit code 3 in one group; then a ping with no run open.
	add(signal(b.ID, t0.Add(10*time.Minute), beet.KindStart, nil, ""), signal(b.ID, t0.Add(15*time.Minute), beet.KindFail, ptr(3), "boom"))
	if len(spans[0].Signals) != 2 || spans[0].Signals[1].Kind != beet.KindFail || *spans[0].Signals[1].ExitCode != 3 ||
		*spans[0].Signals[1].Duration != 5*time.Minute {
		t.Fatalf("start and failure: signals %+v", spans[0].Signals)
	}
	add(events(b.ID, t0.Add(20*time.Minute), 0, 1)...)
	if spans[0].Signals != nil {
		t.Errorf("a plain ping with no run open gave signals %+v; want none", spans[0].Signals)
	}
	got, _ := s.FindEvents(ctx, beet.EventFilter{BeetID: b.ID})
	var durations []time.Duration
	for _, e := range got {
		if e.Duration != nil {
			durations = append(durations, *e.Duration)
		}
	}
	if len(durations) != 2 || durations[0] != 5*time.Minute || durations[1] != 3*time.Minute+time.Millisecond {
		t.Errorf("stored durations (newest first) = %v, want [5m 3m0.001s]", durations)
	}
	cur, _ = s.FindBeetByID(ctx, b.ID)
	if cur.Runs.StartedAt != nil || len(cur.Runs.RecentMS) != 2 || cur.Runs.RecentMS[0] != 180001 || cur.Runs.RecentMS[1] != 300000 {
		t.Errorf("beet runs = %+v, want none open and [180001 300000]", cur.Runs)
	}
	sameTimePtr(t, "LastEventAt", cur.LastEventAt, ptr(t0.Add(20*time.Minute)))
	// Without an observer, runs are tracked all the same.
	addEvents(t, s, []beet.Event{signal(b.ID, t0.Add(30*time.Minute), beet.KindStart, nil, "")})
	if cur, _ = s.FindBeetByID(ctx, b.ID); cur.Runs.StartedAt == nil {
		t.Error("a start stored without an observer left no open run")
	}
}

// testRotatedTokens: a rotation keeps the old token's hash and prefix for
// the grace window (never the token), hits are counted on it, and it goes
// with its beet.
func testRotatedTokens(t *testing.T, s beet.Store) {
	ctx := t.Context()
	b := newBeet(t, s, newAccount(t, s, beet.PlanFree).ID)
	old := b.Token
	if _, err := s.FindRotatedToken(ctx, beet.TokenHash(old), t0.Add(-time.Hour)); beet.ErrorCode(err) != beet.ENOTFOUND {
		t.Fatalf("a live token is found as rotated: %v", err)
	}
	rotated := t0.Add(time.Hour)
	if err := s.SetBeetToken(ctx, b.ID, beet.NewToken(), rotated); err != nil {
		t.Fatal(err)
	}
	rt, err := s.FindRotatedToken(ctx, beet.TokenHash(old), rotated.Add(-beet.RotatedTokenGrace))
	if err != nil {
		t.Fatal(err)
	}
	if rt.BeetID != b.ID || rt.Prefix != beet.Redact(old) || rt.Hits != 0 || rt.LastHitAt != nil {
		t.Errorf("rotated token = %+v, want beet %d, prefix %q, no hits", rt, b.ID, beet.Redact(old))
	}
	sameTime(t, "RotatedAt", rt.RotatedAt, rotated)
	// Past the grace window it is not found.
	if _, err := s.FindRotatedToken(ctx, beet.TokenHash(old), rotated); beet.ErrorCode(err) != beet.ENOTFOUND {
		t.Errorf("a token rotated before since was found: %v", err)
	}
	hash := beet.TokenHash(old)
	err = s.AddRotatedTokenHits(ctx, []beet.RotatedTokenHit{
		{Hash: hash, Count: 10, At: rotated.Add(2 * time.Minute), Addr: "10.0.0.7", UserAgent: "cron-job/1"},
		{Hash: hash, Count: 4, At: rotated.Add(time.Minute), Addr: "10.0.0.8", UserAgent: "older"}, // older: counts, is not the last
		{Hash: beet.TokenHash(beet.NewToken()), Count: 1, At: rotated},                             // unknown: ignored
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.FindRotatedTokens(ctx, b.ID, rotated.Add(-beet.RotatedTokenGrace))
	if err != nil || len(list) != 1 {
		t.Fatalf("FindRotatedTokens = %v, %v; want one", list, err)
	}
	if r := list[0]; r.Hits != 14 || r.LastAddr != "10.0.0.7" || r.LastUserAgent != "cron-job/1" || r.LastHitAt == nil || !r.LastHitAt.Equal(rotated.Add(2*time.Minute)) {
		t.Errorf("after hits: %+v, want 14 hits, last from 10.0.0.7 at +2 min", r)
	}
	if err := s.DeleteBeet(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FindRotatedToken(ctx, hash, rotated.Add(-beet.RotatedTokenGrace)); beet.ErrorCode(err) != beet.ENOTFOUND {
		t.Errorf("a deleted beet's old token is still found: %v", err)
	}
}

// testRotatedTokensBounded: a beet keeps at most MaxRotatedTokens old
// tokens, the newest, and drops those past the grace window.
func testRotatedTokensBounded(t *testing.T, s beet.Store) {
	ctx := t.Context()
	b := newBeet(t, s, newAccount(t, s, beet.PlanFree).ID)
	var olds []string
	for i := range beet.MaxRotatedTokens + 3 {
		cur, _ := s.FindBeetByID(ctx, b.ID)
		olds = append(olds, cur.Token)
		if err := s.SetBeetToken(ctx, b.ID, beet.NewToken(), t0.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	since := t0.Add(-beet.RotatedTokenGrace)
	list, _ := s.FindRotatedTokens(ctx, b.ID, since)
	if len(list) != beet.MaxRotatedTokens || list[0].Prefix != beet.Redact(olds[len(olds)-1]) {
		t.Fatalf("kept %d old tokens, newest %v; want the newest %d", len(list), list[0].Prefix, beet.MaxRotatedTokens)
	}
	if _, err := s.FindRotatedToken(ctx, beet.TokenHash(olds[0]), since); beet.ErrorCode(err) != beet.ENOTFOUND {
		t.Errorf("the oldest old token is still kept: %v", err)
	}
	// A rotation past the grace window drops the old ones.
	if err := s.SetBeetToken(ctx, b.ID, beet.NewToken(), t0.Add(beet.RotatedTokenGrace+time.Hour)); err != nil {
		t.Fatal(err)
	}
	if list, _ = s.FindRotatedTokens(ctx, b.ID, since); len(list) != 1 {
		t.Errorf("after a rotation past the grace window, %d old tokens are kept; want 1", len(list))
	}
}
