package detectjudge

// The reference detectors Beet's detector is compared with: one that never
// fires and one that always does (the judge's sanity checks), and the fixed
// period + grace check that a careful user would configure by hand.

import (
	"fmt"
	"time"
)

// Never is a detector that never raises an alarm. On NAB it must score
// exactly 0, whatever the profile; anything else is a harness bug.
type Never struct{}

// NewNever is the Factory of Never.
func NewNever(StreamInfo) Detector { return Never{} }

// Event implements Detector.
func (Never) Event(time.Time, int) []Alarm { return nil }

// Advance implements Detector.
func (Never) Advance(time.Time) []Alarm { return nil }

// Always raises an alarm at every event and never recovers: it finds every
// incident that has an event in its window and drowns in false alarms, so
// a judge that rewards it is broken.
type Always struct{}

// NewAlways is the Factory of Always.
func NewAlways(StreamInfo) Detector { return Always{} }

// Event implements Detector.
func (Always) Event(t time.Time, _ int) []Alarm { return []Alarm{{At: t, Kind: KindSurge}} }

// Advance implements Detector.
func (Always) Advance(time.Time) []Alarm { return nil }

// PeriodGrace is Beet's explicit period mode: a silence alarm once no event
// has come for Period + Grace after the last one, and a recovery on the next
// event. It knows nothing of seasons, drops or surges.
type PeriodGrace struct {
	Period, Grace time.Duration
	// From is when the user set the check up; before it, nothing is watched.
	From time.Time

	last time.Time // last event; zero before the first
	down bool      // a silence alarm is open
}

// NewPeriodGrace configures a PeriodGrace the way a careful user would
// after watching the stream's opening part (its History, two weeks on
// synthetic beets): see CarefulPeriod. Grace is 10% of the period, at least
// a minute. It watches from the end of that part on.
func NewPeriodGrace(info StreamInfo) Detector { return NewPeriodGraceTuned(0.1)(info) }

// NewPeriodGraceTuned is NewPeriodGrace with grace = graceFrac × period
// (at least a minute): a parameter for the leave-one-file-out check.
func NewPeriodGraceTuned(graceFrac float64) Factory {
	return func(info StreamInfo) Detector {
		p := CarefulPeriod(info.History, info.LearnEnd.Sub(info.Start))
		g := max(time.Minute, time.Duration(graceFrac*float64(p)))
		return &PeriodGrace{Period: p, Grace: g, From: info.LearnEnd}
	}
}

// PeriodGraceTunings are the periodgrace grace fractions a tuner may choose.
func PeriodGraceTunings() []Tuning {
	var out []Tuning
	for _, f := range []float64{0.1, 0.5, 1, 3} {
		out = append(out, Tuning{Name: fmt.Sprintf("grace %g×period", f), Factory: NewPeriodGraceTuned(f)})
	}
	return out
}

// ArmedAt implements Armer.
func (p *PeriodGrace) ArmedAt() time.Time { return p.From }

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
func CarefulPeriod(history []Event, span time.Duration) time.Duration {
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

// Event implements Detector: any event closes an open silence alarm.
func (p *PeriodGrace) Event(t time.Time, count int) []Alarm {
	if count <= 0 {
		return p.Advance(t)
	}
	// Advance first: the harness always does, but a deadline passed exactly
	// before this event must not be lost if a caller does not.
	out := p.Advance(t)
	p.last = t
	if p.down {
		p.down = false
		out = append(out, Alarm{At: t, Kind: KindSilence, Recovery: true})
	}
	return out
}

// Advance implements Detector: the silence alarm is due strictly
// after last + Period + Grace (an event exactly on the deadline is in time,
// as in healthchecks' "down when now > last ping + timeout + grace").
func (p *PeriodGrace) Advance(t time.Time) []Alarm {
	if p.last.IsZero() || p.down {
		return nil
	}
	due := maxTime(p.last, p.From).Add(p.Period + p.Grace)
	if !t.After(due) {
		return nil
	}
	p.down = true
	return []Alarm{{At: due, Kind: KindSilence}}
}

// Describe implements Describer.
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
