package detect

import (
	"fmt"
	"time"
)

// Arming is when auto mode starts alerting, in the numbers the model
// itself uses (fallback.ready, rates.ready): the one source of every
// sentence that tells people when alerts start, so the pages cannot
// disagree with each other or with the model.
type Arming struct {
	After        time.Duration // a week after the first event…
	Events       int           // …once this many events came,
	Latest       time.Duration // and this long after it at the latest…
	LatestEvents int           // …given this many events.
}

// ArmingRule is auto mode's rule.
var ArmingRule = Arming{After: armAfter, Events: armEvents, Latest: armBy, LatestEvents: armByEvents}

// Words states the rule, counted from the first event: "a week after the
// first event once 30 events came, or sooner once its runs make a
// schedule, and 14 days after it at the latest (given 5 events)".
func (a Arming) Words() string {
	return fmt.Sprintf("%s after the first event once %d events came, or sooner once its runs make a schedule, and %s after it at the latest (given %d events)",
		span(a.After), a.Events, span(a.Latest), a.LatestEvents)
}

// From states the rule for a beet whose first event came at first, with
// the dates in loc: "from Dec 6 14:03 CET once 30 events came, …, and from
// Dec 13 14:03 CET at the latest (given 5 events)".
func (a Arming) From(first time.Time, loc *time.Location) string {
	const layout = "Jan 2 15:04 MST"
	return fmt.Sprintf("from %s once %d events came, or sooner once its runs make a schedule, and from %s at the latest (given %d events)",
		first.Add(a.After).In(loc).Format(layout), a.Events, first.Add(a.Latest).In(loc).Format(layout), a.LatestEvents)
}

// span says a whole number of days as people do: "a week", "14 days".
func span(d time.Duration) string {
	if d == 7*24*time.Hour {
		return "a week"
	}
	return Duration(d)
}
