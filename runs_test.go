package beet_test

import (
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestTrackRunsByRID: ends pair with their starts by run ID, as
// Healthchecks pairs them, so overlapping runs get their own durations;
// without run IDs a start is ended by the next end, as before.
func TestTrackRunsByRID(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	ev := func(sec int, kind beet.EventKind, rid string) *beet.Event {
		return &beet.Event{ReceivedAt: t0.Add(time.Duration(sec) * time.Second), Kind: kind, RID: rid}
	}
	durations := func(evs []*beet.Event) []time.Duration {
		var out []time.Duration
		for _, e := range evs {
			if e.Duration != nil {
				out = append(out, *e.Duration)
			} else if e.Kind != beet.KindStart && e.Kind != beet.KindLog {
				out = append(out, -1)
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		events []*beet.Event
		want   []time.Duration // of the ends, in order; -1: no duration
		open   bool            // a watched run is still open
		byRID  int
	}{
		{"no rid", []*beet.Event{ev(0, beet.KindStart, ""), ev(30, beet.KindPing, "")}, []time.Duration{30 * time.Second}, false, 0},
		{"restart without rid", []*beet.Event{ev(0, beet.KindStart, ""), ev(10, beet.KindStart, ""), ev(30, beet.KindPing, "")}, []time.Duration{20 * time.Second}, false, 0},
		{"overlapping rids", []*beet.Event{ev(0, beet.KindStart, "a"), ev(10, beet.KindStart, "b"), ev(60, beet.KindPing, "a"), ev(100, beet.KindFail, "b")},
			[]time.Duration{60 * time.Second, 90 * time.Second}, false, 0},
		{"ends in start order", []*beet.Event{ev(0, beet.KindStart, "a"), ev(10, beet.KindStart, "b"), ev(20, beet.KindPing, "b"), ev(40, beet.KindPing, "a")},
			[]time.Duration{10 * time.Second, 40 * time.Second}, false, 0},
		// A success for the other run leaves the latest start watched.
		{"other run succeeds", []*beet.Event{ev(0, beet.KindStart, "a"), ev(10, beet.KindStart, "b"), ev(60, beet.KindPing, "a")},
			[]time.Duration{60 * time.Second}, true, 1},
		{"unknown rid", []*beet.Event{ev(0, beet.KindStart, "a"), ev(5, beet.KindPing, "z")}, []time.Duration{-1}, true, 1},
		{"rid end for a plain start", []*beet.Event{ev(0, beet.KindStart, ""), ev(5, beet.KindPing, "a")}, []time.Duration{-1}, true, 0},
		{"plain end for a rid start", []*beet.Event{ev(0, beet.KindStart, "a"), ev(5, beet.KindPing, "")}, []time.Duration{-1}, false, 1},
		{"failure ends the watched run", []*beet.Event{ev(0, beet.KindStart, "a"), ev(5, beet.KindFail, "z")}, []time.Duration{-1}, false, 1},
		{"start too old to pair", []*beet.Event{ev(0, beet.KindStart, "a"), ev(73*3600, beet.KindPing, "a")}, []time.Duration{-1}, false, 0},
		{"log in between", []*beet.Event{ev(0, beet.KindStart, "a"), ev(3, beet.KindLog, "a"), ev(9, beet.KindPing, "a")}, []time.Duration{9 * time.Second}, false, 0},
	} {
		b := &beet.Beet{}
		beet.TrackRuns(b, c.events)
		got := durations(c.events)
		if len(got) != len(c.want) {
			t.Errorf("%s: durations %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: durations %v, want %v", c.name, got, c.want)
				break
			}
		}
		if (b.Runs.StartedAt != nil) != c.open || len(b.Runs.ByRID) != c.byRID {
			t.Errorf("%s: watched run open %v, %d kept by run ID; want %v and %d", c.name, b.Runs.StartedAt != nil, len(b.Runs.ByRID), c.open, c.byRID)
		}
	}
}

// TestTrackRunsBounded: starts that never end are kept by run ID at most
// MaxOpenRuns at a time.
func TestTrackRunsBounded(t *testing.T) {
	b := &beet.Beet{}
	t0 := time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)
	for i := range 3 * beet.MaxOpenRuns {
		beet.TrackRuns(b, []*beet.Event{{ReceivedAt: t0.Add(time.Duration(i) * time.Minute), Kind: beet.KindStart, RID: string(rune('a' + i))}})
	}
	if len(b.Runs.ByRID) != beet.MaxOpenRuns || b.Runs.ByRID[0].RID != string(rune('a'+2*beet.MaxOpenRuns)) {
		t.Errorf("%d starts kept by run ID, the oldest %q; want the newest %d", len(b.Runs.ByRID), b.Runs.ByRID[0].RID, beet.MaxOpenRuns)
	}
}
