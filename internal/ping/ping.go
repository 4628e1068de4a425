// Package ping decides what a committed group of events does to its beets:
// which of the looked-up beets each event belongs to, the runs its job
// signals open and end, what it tells detection, and the beet's last event.
// It does no I/O: the store's commit looks the beets up, calls Apply inside
// its transaction, and writes back what Apply returns.
package ping

import (
	"cmp"
	"slices"

	"github.com/beethq/beet"
)

// Apply matches each event to its beet (Match), applies each beet's events
// to it in memory, and returns the beets that got events, in ID order, and
// their flips (BeetID set; At as observe gave it). For each such beet it
// tracks the runs its events open and end (beet.TrackRuns), calls observe
// (if not nil) with the group's span of that beet, and moves LastEventAt
// forward, never back. beets holds the group's beets by ID, byToken the
// same by token.
func Apply(events []beet.Event, beets map[int64]*beet.Beet, byToken map[string]*beet.Beet, observe beet.Observer) (
	touched []*beet.Beet, flips []beet.Flip) {
	Match(events, beets, byToken)
	// Made here and filled by addSpans, so the map does not escape (a
	// small group's stays off the heap).
	spans := make(map[int64]beet.EventSpan, len(beets))
	addSpans(spans, events, beets)
	// In ID order, so two concurrent batches on PostgreSQL take the row
	// locks in the same order and cannot deadlock.
	touched = make([]*beet.Beet, 0, len(spans))
	for id := range spans {
		touched = append(touched, beets[id])
	}
	slices.SortFunc(touched, func(a, b *beet.Beet) int { return cmp.Compare(a.ID, b.ID) })
	for _, b := range touched {
		sp := spans[b.ID]
		var fs []beet.Flip
		if observe != nil {
			fs = observe(b, sp)
		}
		if sp.Count > 0 && (b.LastEventAt == nil || sp.Last.After(*b.LastEventAt)) {
			b.LastEventAt = &sp.Last
		}
		for _, f := range fs {
			f.BeetID = b.ID
			flips = append(flips, f)
		}
	}
	return touched, flips
}

// Match sets each event's BeetID to the beet it belongs to, or to 0 when it
// is dropped. An event with a Token belongs to the beet in byToken with that
// token (its BeetID, if set, must agree); one without, to the beet in beets
// of its BeetID. An event whose caller gave its token a beet that no longer
// has it (rotated meanwhile) is marked Stale, to be counted on the old token.
func Match(events []beet.Event, beets map[int64]*beet.Beet, byToken map[string]*beet.Beet) {
	for i := range events {
		e := &events[i]
		var b *beet.Beet
		if e.Token != "" {
			b = byToken[e.Token]
			e.Stale = b == nil && e.BeetID != 0
		} else {
			b = beets[e.BeetID]
		}
		if b == nil || e.BeetID != 0 && e.BeetID != b.ID {
			e.BeetID = 0
			continue
		}
		e.BeetID = b.ID
	}
}

// addSpans adds to spans, for each beet that got matched events (BeetID not 0), the
// group's span of them, and tracks the runs they move: the beets whose runs
// the group moves (a job signal, or an open run a ping may end) have their
// events applied in time order to b.Runs, which sets ends' durations and the
// span's Signals and OpenRun. A group of plain pings costs one check per
// event.
func addSpans(spans map[int64]beet.EventSpan, events []beet.Event, beets map[int64]*beet.Beet) {
	var runs map[int64][]*beet.Event
	for i := range events {
		e := &events[i]
		if e.BeetID != 0 && (e.Kind.Normal() != beet.KindPing || e.ExitCode != nil || beets[e.BeetID].Runs.Open()) {
			if runs == nil {
				runs = map[int64][]*beet.Event{}
			}
			runs[e.BeetID] = nil
		}
	}
	for i := range events {
		e := &events[i]
		if e.BeetID == 0 {
			continue
		}
		if evs, ok := runs[e.BeetID]; ok {
			runs[e.BeetID] = append(evs, e)
		}
		sp, ok := spans[e.BeetID]
		if !e.Kind.Counts() {
			spans[e.BeetID] = sp // a start or a log: the beet's runs may move, its rhythm does not
			continue
		}
		if !ok || sp.Count == 0 {
			sp.First, sp.Last = e.ReceivedAt, e.ReceivedAt
		}
		sp.Count++
		if e.ReceivedAt.Before(sp.First) {
			sp.First = e.ReceivedAt
		}
		if e.ReceivedAt.After(sp.Last) {
			sp.Last = e.ReceivedAt
		}
		spans[e.BeetID] = sp
	}
	for id, evs := range runs {
		slices.SortStableFunc(evs, func(a, b *beet.Event) int { return a.ReceivedAt.Compare(b.ReceivedAt) })
		sp := spans[id]
		sp.OpenRun = beets[id].Runs.StartedAt
		sp.Signals = beet.TrackRuns(beets[id], evs)
		spans[id] = sp
	}
}
