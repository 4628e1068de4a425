package detect

import (
	"time"

	"github.com/beethq/beet"
)

// maxLateDeadlines bounds the passed deadlines ApplyEvents works through
// before the events themselves, so a beet silent for a year costs the
// ingestion commit a bounded amount of work. Deadlines are minutes apart at
// the least; the sweeper normally applied them long before.
const maxLateDeadlines = 1000

// ApplyEvents applies a group of b's new events to b in place: first every
// deadline that passed before the earliest of them (the beet was late, even
// if no sweeper got to it yet), then the events. It returns the flips in
// time order, and leaves b's status, deadline, model and last event as they
// now are. Live ingestion (inside the commit that stores the events) and
// backtests both call it, so they give the same flips.
func ApplyEvents(b *beet.Beet, sp beet.EventSpan) ([]beet.Flip, error) {
	return applyEvents(&defaultParams, b, sp)
}

func applyEvents(p *Params, b *beet.Beet, sp beet.EventSpan) ([]beet.Flip, error) {
	if b.Status == beet.StatusPaused && b.ResumeOnEvent && sp.Count > 0 {
		// Resumed by its first counted event, as POST /resume would at
		// that instant; then the group is applied to the resumed beet.
		f := ResumeFlip(b, sp.First, "Resumed by an event (resume_on_event).")
		flips, err := applyEvents(p, b, sp)
		return append([]beet.Flip{f}, flips...), err
	}
	if sp.Signals != nil || sp.Count == 0 || b.Status == beet.StatusDown {
		return applySignals(p, b, sp) // job signals, or a recovery from a failure (signal.go)
	}
	flips, err := applyDeadlines(p, b, sp.First, maxLateDeadlines)
	if err != nil {
		return flips, err
	}
	last := sp.Last
	if b.LastEventAt != nil && b.LastEventAt.After(last) {
		last = *b.LastEventAt // a later group is already in
	}
	var downSince *time.Time
	if b.Status == beet.StatusDown {
		downSince = &b.StatusSince
	}
	d, err := onEvents(p, b, last, sp.Count, downSince, sp.Maintenance)
	if err != nil {
		return flips, err
	}
	flips = apply(b, d, flips)
	b.LastEventAt = &last
	return flips, nil
}

// ApplyDeadlines applies, in place, every deadline of b before t, and
// returns the flips they caused.
func ApplyDeadlines(b *beet.Beet, t time.Time) ([]beet.Flip, error) {
	return applyDeadlines(&defaultParams, b, t, -1)
}

// applyDeadlines applies up to limit (-1: all) deadlines before t.
func applyDeadlines(p *Params, b *beet.Beet, t time.Time, limit int) ([]beet.Flip, error) {
	var flips []beet.Flip
	for n := 0; b.DueAt != nil && b.DueAt.Before(t) && n != limit; n++ {
		d, err := onDeadline(p, b)
		if err != nil {
			return flips, err
		}
		flips = apply(b, d, flips)
	}
	return flips, nil
}

// apply records d on b and appends its flip, if any, to flips.
func apply(b *beet.Beet, d Decision, flips []beet.Flip) []beet.Flip {
	if d.Flip != nil {
		b.Status, b.StatusReason, b.StatusSince = d.Flip.To, d.Flip.Reason, d.Flip.At
		flips = append(flips, *d.Flip)
	}
	b.DueAt = d.Due
	if d.Model != nil {
		b.Model = d.Model
	}
	return flips
}

// ResumeFlip resumes the paused b at at, in place, as POST /resume does:
// new without events; in auto mode up if its model is armed, otherwise
// learning; otherwise up; with reason. It returns the flip (a manual one:
// it raises no alert) and clears the deadline, which the events applied
// next set.
func ResumeFlip(b *beet.Beet, at time.Time, reason string) beet.Flip {
	f := *flipAt(b, at, resumeTo(b), beet.FlipManual, reason)
	b.Status, b.StatusReason, b.StatusSince = f.To, f.Reason, f.At
	b.DueAt = nil
	return f
}

// resumeTo is the status a paused b resumes to.
func resumeTo(b *beet.Beet) beet.Status {
	switch {
	case b.LastEventAt == nil:
		return beet.StatusNew
	case b.Detection.Mode != beet.ModeAuto:
		return beet.StatusUp
	}
	if m, err := LoadRateModel(b.Model, location(b)); err == nil && m.events > 0 && m.Armed() {
		return beet.StatusUp
	}
	return beet.StatusLearning
}

// Resume resumes the paused b at at, as POST /resume does, by who ("a
// user"): new without events; otherwise up (learning in auto mode while
// its model is not armed), with its deadline counted from at as if an
// event had just come. In auto mode that is the silence the model (or,
// while learning, its learning guard) allows after an event, counted from
// at: the model is kept, and a job paused for days is flagged when it
// stays silent after the resume, not at once for the days it was paused.
// An open run with a time limit keeps the limit's end as its deadline
// (past it, the run is an overrun, as if it had never been paused). It
// changes b in place and returns the flip; a beet that is not paused is
// left as it is.
func Resume(b *beet.Beet, at time.Time, who string) ([]beet.Flip, error) {
	if b.Status != beet.StatusPaused {
		return nil, nil
	}
	reason := "Resumed by " + who + "."
	var m *RateModel
	switch {
	case b.LastEventAt == nil:
		reason = "Resumed by " + who + "; waiting for the first event."
	case b.Detection.Mode == beet.ModeAuto:
		reason = "Resumed by " + who + "; learning the beet's rhythm again."
		if l, err := LoadRateModel(b.Model, location(b)); err == nil && l.events > 0 {
			m = l
			reason = "Resumed by " + who + "; still learning the beet's rhythm."
			if m.Armed() {
				reason = "Resumed by " + who + "; watching again: " + m.Describe(time.UnixMicro(m.last)) + "."
			}
		}
	}
	f := ResumeFlip(b, at, reason)
	switch {
	case m != nil:
		if due, ok := deadlineFrom(m, at, b.Status == beet.StatusUp); ok {
			b.DueAt = &due
		}
	case b.Status == beet.StatusUp && b.Detection.Mode != beet.ModeAuto:
		d, err := OnEvents(b, at, 0, nil)
		if err != nil {
			return nil, err
		}
		b.DueAt = d.Due
	}
	setRunDeadline(b)
	return []beet.Flip{f}, nil
}

// deadlineFrom is m's deadline (up: an armed beet's, drop alarms
// included) counted from from, when that is later than m's last event (a
// resume): the first run of a schedule after from, the silence a rate or
// the learning guard allows after from. Only the deadline: the model
// learns nothing from it, and a silence flagged then names the last event.
func deadlineFrom(m *RateModel, from time.Time, up bool) (time.Time, bool) {
	c := *m
	c.last = max(c.last, from.UnixMicro())
	due, _, ok := c.Deadline(up)
	return maxTime(due, from), ok
}
