// Package detectjudge judges Beet's detection: it generates seeded synthetic
// beets (rate streams and scheduled jobs of many shapes, eight weeks each,
// across DST changes) with labelled incidents, replays them and the NAB count
// series through a Detector, and scores the alarms it raises: false alarms
// per 1000 beet-days from the first event on, the share of incidents found
// (of all, and of those detectable in principle, see OracleAlpha), time to
// detect, and against yardsticks that know the generating process
// (yardstick.go), false alarms while learning, days until armed, and NAB
// scores with leave-one-file-out tuning.
//
// The judge knows nothing about how a detector works. It only drives the
// Detector interface the way Beet's live ingestion path and sweeper would:
// events in time order, and the passage of time between them. Auto runs
// Beet's own detector (internal/detect.ApplyEvents and ApplyDeadlines on a
// beet.Beet, as live and `beet backtest` do).
//
// The command is cmd/detectjudge: go run ./cmd/detectjudge -split holdout;
// docs/EVALUATION.md says how it measures.
package detectjudge

import (
	"fmt"
	"time"
)

// Alarm kinds a detector may raise. The harness treats every kind alike when
// it scores (any raised alarm detects an incident, and any raised alarm on a
// clean stream is a false alarm); the kinds are kept for the report and for
// detectors that want to say why.
const (
	KindSilence   = "silence"
	KindDrop      = "drop"
	KindSurge     = "surge"
	KindMissedRun = "missed_run"
)

// An Alarm is a detector saying "not normal" at At (kind: silence, drop,
// surge, missed_run) and, for recovery, normal again.
type Alarm struct {
	At       time.Time
	Kind     string
	Recovery bool
	// Grace is, for a missed_run alarm, the grace the detector stated for
	// the run (0: unknown).
	Grace time.Duration
}

// Detector sees one event stream in time order.
type Detector interface {
	// Event reports count events at t (t never decreases) and returns alarms raised at t.
	Event(t time.Time, count int) []Alarm
	// Advance tells the detector that time reached t with no events since the last call; it returns alarms whose deadline passed by t (with their exact At).
	Advance(t time.Time) []Alarm
}

// Armer is optionally implemented by detectors that learn before they
// watch: ArmedAt is when the detector started to watch (zero: not yet). A
// detector without it is armed from the first event.
type Armer interface {
	ArmedAt() time.Time
}

// Describer is optionally implemented by detectors that can state their
// configuration in one line (e.g. "period 2h, grace 12m"); the NAB report shows it.
type Describer interface {
	Describe() string
}

// An Event is count events received at T.
type Event struct {
	T     time.Time
	Count int
}

// StreamInfo is what a Factory may know about a stream before replaying it.
type StreamInfo struct {
	Name     string         // unique name, e.g. "poisson-5/outage-6h/17"
	Family   string         // family name, or "nab"
	Location *time.Location // the beet's IANA time zone (UTC for NAB)
	Start    time.Time      // first instant of the stream
	// LearnEnd is the end of the opening part with no incident (synthetic:
	// the family's clean days; NAB: the probationary rows). Nothing is
	// scored differently before it: false alarms count from the first event.
	LearnEnd time.Time
	// History holds the events before LearnEnd. The periodgrace baseline
	// uses it the way a user looks at past traffic before setting a period;
	// a learning detector ignores it, because the replay starts at Start and
	// shows it these events again.
	History []Event
}

// A Factory builds a fresh detector for one stream. Each stream gets its own
// detector, as each beet has its own state in Beet.
type Factory func(StreamInfo) Detector

// Replay drives d over events in time order the way the live system would:
// Advance(t) before every Event(t, n) so that deadlines falling between
// events fire with their exact time, and Advance(end) at the end. It returns
// every alarm raised, recoveries included.
//
// Replay checks the timing contract: an alarm must not be dated before the
// previous call (the detector would be claiming a detection it did not make
// in time) nor after the current one (it would be seeing the future). A
// violation is returned as an error, because scores computed from such
// alarms would be meaningless.
func Replay(d Detector, events []Event, end time.Time) ([]Alarm, error) {
	var out []Alarm
	var prev time.Time // time of the previous call; zero before the first
	check := func(call string, t time.Time, as []Alarm) error {
		for _, a := range as {
			if a.At.After(t) || (!prev.IsZero() && a.At.Before(prev)) {
				return fmt.Errorf("replay: %s(%s) returned alarm %q at %s, outside [%s, %s]",
					call, t.Format(time.RFC3339), a.Kind, a.At.Format(time.RFC3339),
					prev.Format(time.RFC3339), t.Format(time.RFC3339))
			}
		}
		out = append(out, as...)
		prev = t
		return nil
	}
	for i, e := range events {
		if i > 0 && e.T.Before(events[i-1].T) {
			return out, fmt.Errorf("replay: events out of order at %d (%s after %s)", i, e.T, events[i-1].T)
		}
		if err := check("Advance", e.T, d.Advance(e.T)); err != nil {
			return out, err
		}
		if err := check("Event", e.T, d.Event(e.T, e.Count)); err != nil {
			return out, err
		}
	}
	if len(events) > 0 && end.Before(events[len(events)-1].T) {
		return out, fmt.Errorf("replay: end %s before last event %s", end, events[len(events)-1].T)
	}
	if err := check("Advance", end, d.Advance(end)); err != nil {
		return out, err
	}
	return out, nil
}

// Raised returns the times of the alarms that were raised (not recoveries),
// in order. Only these count as detections.
func Raised(alarms []Alarm) []time.Time {
	var ts []time.Time
	for _, a := range alarms {
		if !a.Recovery {
			ts = append(ts, a.At)
		}
	}
	return ts
}
