package detect

import (
	"fmt"
	"strings"
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
	first  time.Time // the model's first event, while learning
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
	m.dropOpen = b.Status == beet.StatusAnomalous // AlertAfter as the open drop reads silence
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
		w.first = time.Unix(m.first, 0)
		if by := w.first.Add(armBy); by.After(last) {
			w.ArmsBy = &by
		}
		full := w.FullAlerts(last, m.loc)
		w.Description = "Learning this beet's rhythm; " + strings.ToLower(full[:1]) + full[1:] + "." + guarded
		return w, true
	}
	if at, ok := m.ArmedAt(); ok {
		w.ArmedAt = &at
	}
	w.Description = m.Describe(last)
	finer := m.finer()
	if m.evenBeat() {
		finer = nil // its silences are its longest gap's
	}
	switch finer.(type) {
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

// FullAlerts says, for a learning beet's watch, when its full alerts start
// as of now, in loc, never naming a time that has passed: "Full alerts
// from Dec 11 00:13 UTC once 30 events came (6 so far), or sooner once
// its runs make a schedule, and by Dec 18 00:13 UTC at the latest (given
// 5 events)". The watch's description and the beet page both say it so.
func (w Watching) FullAlerts(now time.Time, loc *time.Location) string {
	const layout = "Jan 2 15:04 MST"
	const sooner = "or sooner once its runs make a schedule"
	switch {
	case w.ArmsBy != nil && w.ArmsBy.After(now):
		from := ""
		if week := w.first.Add(armAfter); !w.first.IsZero() && week.After(now) {
			from = " from " + week.In(loc).Format(layout)
		}
		return fmt.Sprintf("Full alerts%s once %d events came (%d so far), %s, and by %s at the latest (given %d events)",
			from, armEvents, w.Events, sooner, w.ArmsBy.In(loc).Format(layout), armByEvents)
	case w.Events >= armByEvents:
		return "Full alerts from its next event at the latest, " + sooner
	}
	return fmt.Sprintf("Full alerts by its %s event at the latest (%d so far), %s", schedule.Ordinal(armByEvents), w.Events, sooner)
}
