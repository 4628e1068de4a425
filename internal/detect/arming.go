package detect

import (
	"fmt"
	"math"
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
	// Meanwhile: a schedule is watched once its first runs show it
	// (firstruns.go), and the learning guard flags, from the GuardEvents-th
	// event, a silence GuardFactor times the longest gap seen (fewer times
	// for a daily job's runs, more for random gaps).
	GuardEvents, GuardFactor int
	// RunsDaily and RunsShorter runs recognise a daily schedule and a
	// shorter one from their first runs.
	RunsDaily, RunsShorter int
}

// ArmingRule is auto mode's rule.
var ArmingRule = Arming{After: armAfter, Events: armEvents, Latest: armBy, LatestEvents: armByEvents,
	GuardEvents: guardEvents, GuardFactor: guardFactor, RunsDaily: youngRunsDaily, RunsShorter: youngRunsShorter}

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

// Meanwhile states what is watched before the rhythm is learned, in a
// clause: "meanwhile a job is watched from its 3rd run (its 4th if it runs
// more often than daily), and from the 3rd event a silence far longer than
// any gap seen is flagged". How much longer depends on the gaps (10 times
// the longest, less for a daily job's runs, more for random ones), so only
// the beet's own watch (Watch) names it.
func (a Arming) Meanwhile() string {
	return fmt.Sprintf("meanwhile a job is watched from its %s run (its %s if it runs more often than daily), and from the %s event a silence far longer than any gap seen is flagged",
		ordinal(a.RunsDaily), ordinal(a.RunsShorter), ordinal(a.GuardEvents))
}

// ordinal says 3 as "3rd".
func ordinal(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return fmt.Sprintf("%dth", n)
	case n%10 == 1:
		return fmt.Sprintf("%dst", n)
	case n%10 == 2:
		return fmt.Sprintf("%dnd", n)
	case n%10 == 3:
		return fmt.Sprintf("%drd", n)
	}
	return fmt.Sprintf("%dth", n)
}

// span says a whole number of days as people do: "a week", "14 days".
func span(d time.Duration) string {
	if d == 7*24*time.Hour {
		return "a week"
	}
	return Duration(d)
}

// sureEvents and sureDays: a rate learned from fewer events, or over fewer
// days, is uncertain enough that an alarm judged on it says so (howSure).
// From 100 events a rate is known to about ±20% (two standard errors of
// a Poisson count, 2/√n).
const (
	sureEvents = 100
	sureDays   = 7
)

// knownTo is how well, in percent, a rate learned from n independent
// units is known: two standard errors of a Poisson count, 2/√n (its Gamma
// posterior has shape n). The silence bound counts the same evidence
// (silenceBound: a bucket's n·x/d units, B's clusters).
func knownTo(n float64) int { return int(math.Round(200 / math.Sqrt(n))) }

// howSure says, for an alarm judged on a learned rate (a silence, a drop),
// how sure that rate is when it was learned from few units or over few
// days: " Learned from only 34 events in 8 days: the usual rate is known
// to about ±34%." A bursty or overdispersed beet's units are its bursts
// (unit: the rate rests on the bursts, however many events each holds).
// Empty once it is sure.
func (m *RateModel) howSure() string {
	n := int64(m.events)
	seen := time.UnixMicro(m.last).Sub(time.Unix(m.first, 0))
	if n <= 0 {
		return ""
	}
	units, what := float64(n), fmt.Sprintf("%d events", n)
	if b := m.unit(); b > 1 {
		units = float64(n) / b
		what = fmt.Sprintf("%.0f bursts (%d events)", units, n)
	}
	switch {
	case units < sureEvents:
		return fmt.Sprintf(" Learned from only %s in %s: the usual rate is known to about ±%d%%.",
			what, Duration(seen), knownTo(units))
	case seen < sureDays*24*time.Hour:
		return fmt.Sprintf(" Learned over only %s (%s): the usual rate at this time of the week rests on %s of it.",
			Duration(seen), what, Duration(seen))
	}
	return ""
}

// gapSure says, for the fallback's alarm (twice the longest gap of the
// last 3 weeks), that the longest gap rests on few events when it does.
func (m *RateModel) gapSure() string {
	if n := int64(m.events); n > 0 && n < sureEvents {
		return fmt.Sprintf(" Its longest gap rests on only %d events in %s.", n, Duration(time.UnixMicro(m.last).Sub(time.Unix(m.first, 0))))
	}
	return ""
}
