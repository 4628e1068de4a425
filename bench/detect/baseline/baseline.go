// Package baseline holds the reference detectors that Beet's anomaly
// detector is compared with in the evaluation harness: one that never fires
// (the harness's sanity check) and the fixed period + grace check that a
// careful user would configure by hand.
package baseline

import (
	"fmt"
	"time"

	"github.com/beethq/beet/bench/detect/harness"
)

// Never is a detector that never raises an alarm. On NAB it must score
// exactly 0, whatever the profile; anything else is a harness bug.
type Never struct{}

// NewNever is the Factory of Never.
func NewNever(harness.StreamInfo) harness.Detector { return Never{} }

// Event implements harness.Detector.
func (Never) Event(time.Time, int) []harness.Alarm { return nil }

// Advance implements harness.Detector.
func (Never) Advance(time.Time) []harness.Alarm { return nil }

// PeriodGrace is Beet's explicit period mode: a silence alarm once no event
// has come for Period + Grace after the last one, and a recovery on the next
// event. It knows nothing of seasons, drops or surges.
type PeriodGrace struct {
	Period, Grace time.Duration

	last time.Time // last event; zero before the first
	down bool      // a silence alarm is open
}

// NewPeriodGrace configures a PeriodGrace the way a careful user would from
// the stream's learning part: see CarefulPeriod. Grace is 10% of the period,
// at least a minute (DETECTION.md's schedule-mode floor for grace).
func NewPeriodGrace(info harness.StreamInfo) harness.Detector {
	p := CarefulPeriod(info.History, info.LearnEnd.Sub(info.Start))
	return &PeriodGrace{Period: p, Grace: max(time.Minute, p/10)}
}

// CarefulPeriod is the period a careful user states after looking at a
// beet's history: the longest gap between events seen in it, rounded up to
// a figure a person would type (whole minutes up to 10 min, then 5 min up to
// an hour, 15 min up to 6 h, whole hours beyond).
//
// Why the longest gap and not a percentile such as p99.9: at 50 events/h a
// four-week history holds ~30,000 gaps, so its p99.9 is exceeded about once
// a day by design, which no one would accept from a period check. The
// longest gap is what a user sees on a chart of the history ("it was never
// quiet for more than 40 min") and is the most generous setting that still
// reacts. With fewer than two events, the whole history span is used.
func CarefulPeriod(history []harness.Event, span time.Duration) time.Duration {
	var longest time.Duration
	for i := 1; i < len(history); i++ {
		longest = max(longest, history[i].T.Sub(history[i-1].T))
	}
	if longest == 0 {
		longest = span
	}
	if longest <= 0 {
		longest = 24 * time.Hour
	}
	return roundUp(longest)
}

// roundUp rounds d up to the next figure on a human scale.
func roundUp(d time.Duration) time.Duration {
	unit := time.Hour
	switch {
	case d <= 10*time.Minute:
		unit = time.Minute
	case d <= time.Hour:
		unit = 5 * time.Minute
	case d <= 6*time.Hour:
		unit = 15 * time.Minute
	}
	return (d + unit - 1).Truncate(unit)
}

// Event implements harness.Detector: any event closes an open silence alarm.
func (p *PeriodGrace) Event(t time.Time, count int) []harness.Alarm {
	if count <= 0 {
		return p.Advance(t)
	}
	// Advance first: the harness always does, but a deadline passed exactly
	// before this event must not be lost if a caller does not.
	out := p.Advance(t)
	p.last = t
	if p.down {
		p.down = false
		out = append(out, harness.Alarm{At: t, Kind: harness.KindSilence, Recovery: true})
	}
	return out
}

// Advance implements harness.Detector: the silence alarm is due strictly
// after last + Period + Grace (an event exactly on the deadline is in time,
// as in healthchecks' "down when now > last ping + timeout + grace").
func (p *PeriodGrace) Advance(t time.Time) []harness.Alarm {
	if p.last.IsZero() || p.down {
		return nil
	}
	due := p.last.Add(p.Period + p.Grace)
	if !t.After(due) {
		return nil
	}
	p.down = true
	return []harness.Alarm{{At: due, Kind: harness.KindSilence}}
}

// Describe implements harness.Describer.
func (p *PeriodGrace) Describe() string {
	return fmt.Sprintf("period %s, grace %s", fmtDuration(p.Period), fmtDuration(p.Grace))
}

func fmtDuration(d time.Duration) string {
	s := d.String()
	for _, suf := range []string{"m0s", "h0m"} {
		if len(s) > len(suf) && s[len(s)-len(suf):] == suf {
			s = s[:len(s)-len(suf)+1]
		}
	}
	return s
}
