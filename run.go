package beet

import (
	"slices"
	"time"
)

// Signal is one start or end of a run among a group of a beet's events,
// for detection (EventSpan.Signals).
type Signal struct {
	At       time.Time
	Kind     EventKind // KindStart, KindPing (a success) or KindFail
	ExitCode *int
	// Duration is the run's length when this event ended a run.
	Duration *time.Duration
}

// MaxRecentRuns is how many completed runs' durations a beet keeps for
// learning how long its runs take.
const MaxRecentRuns = 20

// Runs is what a beet remembers of its job's runs: the open run, and how
// long recent runs took. The store keeps it up to date with TrackRuns.
type Runs struct {
	// StartedAt is when the watched run started (the latest start); nil
	// when none is open. Detection judges it against the run-time limit.
	StartedAt *time.Time `json:"started_at,omitempty"`
	// StartedRID is the run ID (?rid=) the watched run started with, if any.
	StartedRID string `json:"started_rid,omitempty"`
	// ByRID are the starts that came with a run ID and have not ended,
	// oldest first (at most MaxOpenRuns, none older than MaxRunAge): an end
	// with the same run ID gets its duration from its own start, so
	// overlapping runs of one job are told apart.
	ByRID []RIDStart `json:"by_rid,omitempty"`
	// RecentMS are the last MaxRecentRuns runs' durations in milliseconds,
	// oldest first.
	RecentMS []int64 `json:"recent_ms,omitempty"`
}

// RIDStart is an open run that started with a run ID.
type RIDStart struct {
	RID string    `json:"rid"`
	At  time.Time `json:"at"`
}

// Bounds on the runs kept by run ID: a job killed before its end leaves
// its start behind, and nothing else would ever take it away.
const (
	MaxOpenRuns = 10
	MaxRunAge   = 72 * time.Hour // as Healthchecks: an end pairs with a start at most this old
)

// Zero reports whether r holds nothing (a beet that never sent a start).
func (r Runs) Zero() bool {
	return r.StartedAt == nil && len(r.RecentMS) == 0 && len(r.ByRID) == 0
}

// Open reports whether the beet has a run that an end may pair with, so
// that the store tracks its events in order.
func (r Runs) Open() bool { return r.StartedAt != nil || len(r.ByRID) > 0 }

// startByRID keeps a start by its run ID, within the bounds.
func (r *Runs) startByRID(rid string, at time.Time) {
	r.ByRID = slices.DeleteFunc(slices.Clone(r.ByRID), func(s RIDStart) bool {
		return s.RID == rid || at.Sub(s.At) > MaxRunAge
	})
	r.ByRID = append(r.ByRID, RIDStart{RID: rid, At: at})
	if n := len(r.ByRID); n > MaxOpenRuns {
		r.ByRID = r.ByRID[n-MaxOpenRuns:]
	}
	if len(r.ByRID) == 0 {
		r.ByRID = nil
	}
}

// end applies a success or failure to the open runs.
func (r *Runs) end(e *Event, k EventKind) {
	var start *time.Time
	if e.RID != "" {
		if i := slices.IndexFunc(r.ByRID, func(s RIDStart) bool { return s.RID == e.RID }); i >= 0 {
			if at := r.ByRID[i].At; !e.ReceivedAt.Before(at) && e.ReceivedAt.Sub(at) <= MaxRunAge {
				start = &at
			}
			r.ByRID = slices.Delete(slices.Clone(r.ByRID), i, i+1)
			if len(r.ByRID) == 0 {
				r.ByRID = nil
			}
		}
	} else if r.StartedAt != nil && r.StartedRID == "" && !e.ReceivedAt.Before(*r.StartedAt) {
		start = r.StartedAt
	}
	if r.StartedAt != nil && (r.StartedRID == e.RID || k == KindFail || e.RID == "") {
		r.StartedAt, r.StartedRID = nil, ""
	}
	if start == nil {
		return
	}
	d := e.ReceivedAt.Sub(*start).Truncate(time.Millisecond)
	e.Duration = &d
	r.RecentMS = append(r.RecentMS, d.Milliseconds())
	if n := len(r.RecentMS); n > MaxRecentRuns {
		r.RecentMS = slices.Clone(r.RecentMS[n-MaxRecentRuns:])
	}
}
