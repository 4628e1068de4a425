// Package detect decides when a beet changes state: what an arriving event
// means (first event, recovery) and what a passed deadline means (silence,
// a missed scheduled run). It is pure: no clock, no I/O. The same code runs
// live (the writer's observer and the sweeper) and in backtests, so both
// give the same flips.
//
// Between events nothing needs watching: each event sets the beet's next
// deadline (the one instant at which silence would become an alarm), and
// only beets whose deadline has passed are looked at again.
package detect

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// Decision is what the detector decided for one beet: a state change to
// record (nil for none) and the next deadline (nil for none).
type Decision struct {
	Flip  *beet.Flip
	Due   *time.Time
	Model []byte // auto mode: the updated learned model to store
}

// OnEvents decides what count events arriving for b mean; last is the
// newest one's receipt time, and downSince, for a beet that is down, when
// it went down (nil if unknown). The flip, if any, starts from b.Status.
func OnEvents(b *beet.Beet, last time.Time, count int, downSince *time.Time) (Decision, error) {
	return onEvents(&defaultParams, b, last, count, downSince, false)
}

// onEvents is OnEvents; with freeze, the hours the events close teach the
// learned model nothing (a maintenance window).
func onEvents(p *Params, b *beet.Beet, last time.Time, count int, downSince *time.Time, freeze bool) (Decision, error) {
	if b.Status == beet.StatusPaused {
		return Decision{}, nil // records events, raises nothing, waits for resume
	}
	if b.Detection.Mode == beet.ModeAuto {
		return onEventsAuto(p, b, last, count, downSince, freeze)
	}
	var d Decision
	switch b.Detection.Mode {
	case beet.ModePeriod:
		due := last.Add(period(b) + grace(b))
		d.Due = &due
	case beet.ModeCron:
		c, loc, err := cronOf(b)
		if err != nil {
			return Decision{}, err
		}
		// An event up to grace before a slot is that slot's run (a job that
		// starts a little early), so the next expected run is the first slot
		// after last + grace.
		due := c.Next(last.Add(grace(b)), loc).Add(grace(b))
		d.Due = &due
	}
	switch b.Status {
	case beet.StatusNew:
		d.Flip = flipAt(b, last, beet.StatusUp, beet.FlipFirst, "First event received. "+Expectation(b))
	case beet.StatusDown, beet.StatusAnomalous:
		d.Flip = recovery(b, last, downSince)
	}
	return d, nil
}

func flipAt(b *beet.Beet, at time.Time, to beet.Status, kind beet.FlipKind, reason string) *beet.Flip {
	return &beet.Flip{BeetID: b.ID, At: at, From: b.Status, To: to, Kind: kind, Reason: reason}
}

func recovery(b *beet.Beet, last time.Time, downSince *time.Time) *beet.Flip {
	was := ""
	if downSince != nil {
		was = " after being down for " + Duration(last.Sub(*downSince))
	}
	f := flipAt(b, last, beet.StatusUp, beet.FlipRecovery, "Events are back"+was+".")
	f.Observed, f.Expected = ptr(1), ptr(1)
	return f
}

// onEventsAuto learns from the events, checks a surge and a slow hour or
// day (the alarms an event can raise: the hours it closes are when they
// are known), recovers an open incident when the rate is back, and sets
// the next deadline.
func onEventsAuto(p *Params, b *beet.Beet, last time.Time, count int, downSince *time.Time, freeze bool) (Decision, error) {
	var d Decision
	model, err := loadRateModel(b.Model, location(b), p)
	if err != nil {
		model = newRateModel(location(b), p) // an old or unreadable model starts over
	}
	defer releaseModel(model) // nothing below keeps it: the decision holds its encoding
	// A down beet's last event and schedule anchor before these events.
	var silentFrom, anchor int64
	var low *alarm // a down beet's rate before its silence, when it was a drop's
	switch {
	case freeze:
		model.Freeze() // a maintenance window's hours are not normal either
	case b.Status == beet.StatusDown:
		if downSince != nil {
			model.noteAlarmedGap(downSince.Unix()) // fallback.go
		}
		silentFrom, anchor = model.last/1e6, model.cluster
		low = model.lowBeforeSilence(last)
		model.Freeze() // the outage's silent hours must not teach "silence is normal"
	case b.Status == beet.StatusAnomalous:
		model.HoldDispersion()
		model.dropOpen = true // unless a surge (flagSurge)
	}
	model.lowSince = b.StatusSince.Unix() // daylow.go
	model.Observe(last, count)
	switch {
	case b.Status == beet.StatusNew:
		d.Flip = flipAt(b, last, beet.StatusLearning, beet.FlipFirst, "First event received. Beet is learning its rhythm; "+ArmingRule.Meanwhile()+".")
	case b.Status == beet.StatusLearning && model.Armed():
		d.Flip = flipAt(b, last, beet.StatusUp, beet.FlipLearned, "Learned this beet's rhythm: "+model.Describe(last)+".")
	case b.Status == beet.StatusDown:
		d.Flip = recovery(b, last, downSince)
		if !model.Armed() {
			// The learning guard's alarm: back to learning, which is what
			// the beet still is (its page keeps saying what is watched).
			d.Flip.To = beet.StatusLearning
			d.Flip.Reason += " Beet is still learning this beet's rhythm."
		}
		model.noteScheduledGap(silentFrom, anchor, last.Unix()) // fallback.go
		if low != nil && model.Armed() {
			// The silence came in a drop, and one event does not end it:
			// back to the drop, open until the rate is (rates.go).
			d.Flip.To, d.Flip.Kind = beet.StatusAnomalous, beet.FlipDrop
			d.Flip.Reason = strings.TrimSuffix(d.Flip.Reason, ".") + "; " + low.reason
			d.Flip.Observed, d.Flip.Expected = ptr(low.observed), ptr(low.expected)
			model.reopenDrop()
		} else {
			model.endIncident()
			model.calmAfterSilence(last.Unix())
		}
	case b.Status == beet.StatusAnomalous && !model.Armed():
		// Switched to auto mode while anomalous (ApplySettings): the alarm
		// ends, and the beet learns afresh.
		d.Flip = recovery(b, last, nil)
		d.Flip.To = beet.StatusLearning
		d.Flip.Reason += " Beet is learning this beet's rhythm afresh."
		model.endIncident()
	case b.Status == beet.StatusAnomalous && model.flags&flagSurge == 0 && model.slowDay():
		model.slowDayOpen() // a drop open already: over once the level is back
	case b.Status == beet.StatusAnomalous && model.incidentOver():
		d.Flip = flipAt(b, last, beet.StatusUp, beet.FlipRecovery, model.recoveryReason(last))
		hour := time.Unix(model.hourStart, 0)
		d.Flip.Observed, d.Flip.Expected = ptr(float64(model.hourCount)), ptr(model.Expected(hour, last))
		model.endIncident()
	case b.Status == beet.StatusUp && model.tooOften && model.Scheduled():
		d.Flip = flipAt(b, last, beet.StatusAnomalous, beet.FlipTooOften, model.tooOftenReason())
		model.flags |= flagSurge
	case b.Status == beet.StatusUp && model.slowDay():
		d.Flip = model.slowDayAlarm(b, last)
		model.dropOpen = true
	case b.Status == beet.StatusUp && !model.Scheduled() && model.finer() != nil && model.Surging():
		d.Flip = flipAt(b, last, beet.StatusAnomalous, beet.FlipSurge, model.surgeReason(last))
		_, obs, exp := model.surgeRun()
		d.Flip.Observed, d.Flip.Expected = &obs, &exp
		model.flags |= flagSurge
	}
	status := b.Status
	if d.Flip != nil {
		status = d.Flip.To
	}
	if status == beet.StatusUp || status == beet.StatusAnomalous || status == beet.StatusLearning {
		if due, _, ok := model.Deadline(status == beet.StatusUp); ok {
			if due.Before(last) {
				due = last // already significant (the model keeps microseconds)
			}
			d.Due = &due
		}
	}
	if d.Model, err = model.MarshalBinary(); err != nil {
		return Decision{}, err
	}
	return d, nil
}

// OnDeadline decides what b's passed deadline means. It is called only for
// a beet whose deadline (b.DueAt) has passed and whose events up to it are
// all committed: what it decides depends on the deadline, not on the time
// it is called.
func OnDeadline(b *beet.Beet) (Decision, error) {
	return onDeadline(&defaultParams, b)
}

func onDeadline(p *Params, b *beet.Beet) (Decision, error) {
	if b.DueAt != nil {
		if d, ok := onRunDeadline(b, *b.DueAt); ok {
			return d, nil // an open run with a run-time limit (signal.go)
		}
	}
	learning := b.Status == beet.StatusLearning && b.Detection.Mode == beet.ModeAuto // the learning guard (firstruns.go)
	if b.DueAt == nil || b.Status != beet.StatusUp && b.Status != beet.StatusAnomalous && !learning {
		return Decision{}, nil // nothing pending; clears a stale deadline
	}
	due := *b.DueAt
	if b.Detection.Mode == beet.ModeAuto {
		return onDeadlineAuto(p, b, due)
	}
	// Up, or anomalous: an auto beet's rate alarm, still open when a person
	// switched it to period or cron mode (ApplySettings); silence can follow.
	f := &beet.Flip{BeetID: b.ID, At: due, From: b.Status, To: beet.StatusDown, Observed: ptr(0), Expected: ptr(1)}
	switch b.Detection.Mode {
	case beet.ModePeriod:
		// The deadline was set by the last event before it; b.LastEventAt
		// may already hold a later one that is about to be observed. A
		// deadline counted from later than the last event (a resume, an
		// alert the global guard held, a change of settings) still names
		// the last event.
		last := due.Add(-period(b) - grace(b))
		if b.LastEventAt != nil && b.LastEventAt.Before(last) {
			last = *b.LastEventAt
		}
		f.Kind = beet.FlipSilence
		f.Reason = fmt.Sprintf("No event since %s (%s); expected one at least every %s",
			last.In(location(b)).Format("Jan 2 15:04 MST"), Duration(due.Sub(last)), Exact(period(b)))
		if grace(b) > 0 {
			f.Reason += ", plus " + Exact(grace(b)) + " grace"
		}
		f.Reason += "."
	case beet.ModeCron:
		c, loc, err := cronOf(b)
		if err != nil {
			return Decision{}, err
		}
		slot := due.Add(-grace(b)).In(loc)
		f.Kind = beet.FlipMissedRun
		f.Reason = fmt.Sprintf("Missed the run due at %s: no event by %s (%s).", slot.Format("Jan 2 15:04 MST"), due.In(loc).Format("15:04"), c.Describe(loc))
	default:
		return Decision{}, nil
	}
	return Decision{Flip: f}, nil
}

// onDeadlineAuto: the model (as the last event left it) says which alarm
// its deadline is. The model is not changed here: the next event learns.
func onDeadlineAuto(p *Params, b *beet.Beet, due time.Time) (Decision, error) {
	model, err := loadRateModel(b.Model, location(b), p)
	if err != nil {
		return Decision{}, nil // an old model: learning starts over at the next event
	}
	defer releaseModel(model)
	model.dropOpen = b.Status == beet.StatusAnomalous // unless a surge (flagSurge)
	at, kind, ok := model.Deadline(b.Status == beet.StatusUp)
	if !ok {
		return Decision{}, nil
	}
	if at.Sub(due) > time.Second {
		return Decision{Due: &at}, nil // not yet: a deadline set by older code
	}
	if kind == kindMissedRun && b.Status == beet.StatusUp {
		// Resumed since the last event (Resume): the run missed is the
		// first one after the resume, not one while it was paused.
		model = model.countedFrom(b.StatusSince)
	}
	a := model.watchOf(kind).alarm(kind, due)
	switch kind {
	case kindSilence, kindDrop:
		a.reason += model.howSure() // arming.go
	case kindFallback:
		a.reason += model.gapSure()
	}
	f := &beet.Flip{BeetID: b.ID, At: due, From: b.Status, To: beet.StatusDown, Kind: a.kind, Reason: a.reason,
		Observed: ptr(a.observed), Expected: ptr(a.expected)}
	d := Decision{Flip: f}
	if a.anomalous {
		f.To = beet.StatusAnomalous
		model.dropOpen = true
		if next, _, ok := model.Deadline(false); ok {
			d.Due = &next // silence may follow
		}
	}
	return d, nil
}

// Expectation tells a person what the detector expects of b and how soon
// it would notice a stop, in one sentence.
func Expectation(b *beet.Beet) string {
	switch b.Detection.Mode {
	case beet.ModePeriod:
		if grace(b) == 0 {
			return fmt.Sprintf("Expects an event at least every %s; silence is flagged %s after the last event.",
				Exact(period(b)), Exact(period(b)))
		}
		return fmt.Sprintf("Expects an event at least every %s, plus %s grace; silence is flagged %s after the last event.",
			Exact(period(b)), Exact(grace(b)), Exact(period(b)+grace(b)))
	case beet.ModeCron:
		c, loc, err := cronOf(b)
		if err != nil {
			return "Cannot read the schedule: " + err.Error()
		}
		if grace(b) == 0 {
			return fmt.Sprintf("Expects a run %s; a missed run is flagged as soon as its time passes.", c.Describe(loc))
		}
		return fmt.Sprintf("Expects a run %s; a missed run is flagged %s after its time.", c.Describe(loc), Exact(grace(b)))
	}
	if b.Status == beet.StatusNew {
		return "Waiting for the first event. Then Beet learns its rhythm; " + ArmingRule.Meanwhile() + "."
	}
	if m, err := LoadRateModel(b.Model, location(b)); err == nil {
		switch {
		case m.Armed():
			return "Learned: " + m.Describe(time.UnixMicro(m.last)) + "."
		case guard{m}.ready():
			return "Learning this beet's rhythm; " + guard{m}.describe(time.UnixMicro(m.last)) + "."
		}
	}
	return "Learning this beet's rhythm; full alerts start " + ArmingRule.Words() + "; " + ArmingRule.Meanwhile() + "."
}

func period(b *beet.Beet) time.Duration {
	return time.Duration(b.Detection.PeriodSeconds) * time.Second
}
func grace(b *beet.Beet) time.Duration { return time.Duration(b.Detection.GraceSeconds) * time.Second }

func cronOf(b *beet.Beet) (*schedule.Cron, *time.Location, error) {
	c, err := schedule.ParseCron(b.Detection.Cron)
	if err != nil {
		return nil, nil, fmt.Errorf("beet %d: cron %q: %w", b.ID, b.Detection.Cron, err)
	}
	loc, err := loadLocation(b.Detection.Timezone)
	if err != nil {
		return nil, nil, fmt.Errorf("beet %d: time zone %q: %w", b.ID, b.Detection.Timezone, err)
	}
	return c, loc, nil
}

func location(b *beet.Beet) *time.Location {
	if loc, err := loadLocation(b.Timezone); err == nil {
		return loc
	}
	return time.UTC
}

// locations caches time zones: time.LoadLocation reads and parses the zone
// file on every call, which profiling showed to dominate per-event cost.
// There are a few hundred IANA names, so the cache stays small.
var locations sync.Map // name → *time.Location

func loadLocation(name string) (*time.Location, error) {
	if loc, ok := locations.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, loc)
	return loc, nil
}

// Duration writes d for people, the one way Beet's pages, messages and
// reasons write a length of time: "300 ms", "2.5 s", "45 s", "12 min",
// "2 h 5 min", "3 days", "2 days 16 h". Each unit is truncated, so 59.9 s is "59 s", never
// "60 s", and a duration under a millisecond (a recovery in the same
// instant as its flip) is "under 1 ms", never "0s".
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return "under 1 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < 10*time.Second:
		return strconv.FormatFloat(float64(d/(100*time.Millisecond))/10, 'f', -1, 64) + " s"
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d/time.Minute))
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return fmt.Sprintf("%d h", h)
		}
		return fmt.Sprintf("%d h %d min", h, m)
	default:
		days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
		if h == 0 {
			return fmt.Sprintf("%d days", days)
		}
		return fmt.Sprintf("%d days %d h", days, h)
	}
}

// Exact writes a length someone set (a period, a grace) as Duration does
// when Duration drops nothing, else to the second: a grace of 90 s is
// "1 min 30 s", not "1 min", so "every 1 min 30 s, plus 1 min 30 s grace"
// adds up to the 3 min it is flagged after.
func Exact(d time.Duration) string {
	unit := time.Minute
	switch {
	case d < time.Minute:
		return Duration(d)
	case d >= 48*time.Hour:
		unit = time.Hour
	}
	if d%unit == 0 {
		return Duration(d)
	}
	var parts []string
	if d >= 48*time.Hour {
		parts = append(parts, fmt.Sprintf("%d days", int(d/(24*time.Hour))))
		d %= 24 * time.Hour
	}
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}} {
		if n := int(d / u.unit); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, u.name))
		}
		d %= u.unit
	}
	return strings.Join(parts, " ")
}

func ptr(f float64) *float64 { return &f }
