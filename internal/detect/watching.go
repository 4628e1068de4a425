package detect

import (
	"fmt"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/schedule"
)

// WatchModel names the watch that leads (Watching.Model, the API's
// watching.model).
type WatchModel string

const (
	WatchLearning WatchModel = "learning" // none is sure yet: the learning guard and young schedules
	WatchSchedule WatchModel = "schedule" // a calendar schedule
	WatchRate     WatchModel = "rate"     // the rate model
	WatchBursts   WatchModel = "bursts"   // the rate model, counting bursts
	WatchFallback WatchModel = "fallback" // the longest gap of the last 3 weeks
)

// Watching says what auto mode watches a beet for and from when: what the
// API and the beet page show, and what turns a learned schedule into an
// explicit cron beet.
type Watching struct {
	// Model is the watch that leads: "schedule", "rate", "bursts",
	// "fallback", or "learning" while none is sure yet.
	Model WatchModel
	// Description says it in words.
	Description string
	// Cron is a learned schedule as the equivalent cron line, in Timezone,
	// with GraceSeconds: empty when there is no schedule or cron cannot say it.
	Cron         string
	Timezone     string
	GraceSeconds int64
	// ArmedAt is when full alerts started (to within 10 minutes, rounded
	// down); nil while learning, when the learning guard and young
	// schedules alert.
	ArmedAt *time.Time
	// ArmsBy is, while learning, the latest full alerts start if
	// events keep coming: a week and 30 events, or 14 days and 5 events;
	// nil once 14 days passed with fewer than 5 (it arms at the 5th).
	ArmsBy *time.Time
	// AlertAfter is how long after the last event a stop would be
	// flagged, as the model stands: the earliest reliable alert. While
	// learning, from the 3rd event, the learning guard's silence.
	AlertAfter time.Duration
	// Events is how many events the model has seen.
	Events int
	// SuggestedZone is a zone the beet's runs follow better than its own
	// (its schedule followed that zone's clock change); empty if none.
	SuggestedZone string
}

// Watch returns what auto mode watches b for; ok is false for a beet not
// in auto mode or with no readable model yet.
func Watch(b *beet.Beet) (w Watching, ok bool) {
	if b.Detection.Mode != beet.ModeAuto || len(b.Model) == 0 {
		return w, false
	}
	m, err := LoadRateModel(b.Model, location(b))
	if err != nil || m.events == 0 {
		return w, false
	}
	last := time.UnixMicro(m.last)
	w.Model, w.SuggestedZone, w.Events = WatchLearning, m.SuggestedZone(), int(m.events)
	if !m.Armed() {
		// Meanwhile, from its 3rd event, the learning guard (firstruns.go).
		guarded := ""
		if g := (guard{m}); g.ready() {
			due, terms := g.dueTerms()
			w.AlertAfter = due.Sub(last)
			guarded = fmt.Sprintf(" Meanwhile a silence is flagged after %s (%s%s).", Duration(w.AlertAfter), g.basis(), terms)
		}
		by := time.Unix(m.first, 0).Add(armBy)
		if !by.After(last) {
			// A sparse beet: past 14 days, short of armByEvents events.
			w.Description = fmt.Sprintf("Learning this beet's rhythm; full alerts start by its %s event at the latest (%d so far), or as soon as its runs make a schedule.",
				schedule.Ordinal(armByEvents), m.events) + guarded
			return w, true
		}
		w.ArmsBy = &by
		const layout = "Jan 2 15:04 MST"
		week := ""
		if at := time.Unix(m.first, 0).Add(armAfter); at.After(last) {
			week = " from " + at.In(m.loc).Format(layout)
		}
		w.Description = fmt.Sprintf("Learning this beet's rhythm; full alerts%s once %d events came (%d so far), or sooner once its runs make a schedule, and by %s at the latest (given %d events).",
			week, armEvents, m.events, by.In(m.loc).Format(layout), armByEvents) + guarded
		return w, true
	}
	if at, ok := m.ArmedAt(); ok {
		w.ArmedAt = &at
	}
	w.Description = m.Describe(last)
	switch m.finer().(type) {
	case calendar:
		w.Model = WatchSchedule
		_, w.Cron = m.calendarWords()
		w.Timezone, w.GraceSeconds = m.loc.String(), m.missedGrace()
	case rates:
		w.Model = WatchRate
		w.Description += sentenceAfter(m.howSure()) // the alarms judged on the rate say it too
	case bursts:
		w.Model = WatchBursts
		w.Description += sentenceAfter(m.howSure())
	default:
		w.Model = WatchFallback
		w.Description += sentenceAfter(m.gapSure())
	}
	if due, _, ok := m.Deadline(false); ok {
		w.AlertAfter = due.Sub(last)
	}
	return w, true
}

// sentenceAfter ends a description (Describe's words, which end without a
// full stop) before s, a sentence that begins with a space; "" stays "".
func sentenceAfter(s string) string {
	if s == "" {
		return ""
	}
	return "." + s
}
