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
	return resumeFlip(b, at, reason, resumeModel(b))
}

// resumeModel is the model of an auto beet that has had events, or nil.
func resumeModel(b *beet.Beet) *RateModel {
	if b.LastEventAt == nil || b.Detection.Mode != beet.ModeAuto {
		return nil
	}
	if m, err := LoadRateModel(b.Model, location(b)); err == nil && m.events > 0 {
		return m
	}
	return nil
}

// resumeFlip is ResumeFlip with b's model m (resumeModel) loaded.
func resumeFlip(b *beet.Beet, at time.Time, reason string, m *RateModel) beet.Flip {
	to := beet.StatusUp
	switch {
	case b.LastEventAt == nil:
		to = beet.StatusNew
	case b.Detection.Mode == beet.ModeAuto && (m == nil || !m.Armed()):
		to = beet.StatusLearning
	}
	f := *flipAt(b, at, to, beet.FlipManual, reason)
	b.Status, b.StatusReason, b.StatusSince = f.To, f.Reason, f.At
	b.DueAt = nil
	return f
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
	m := resumeModel(b)
	switch {
	case b.LastEventAt == nil:
		reason = "Resumed by " + who + "; waiting for the first event."
	case m != nil && m.Armed():
		reason = "Resumed by " + who + "; watching again: " + m.Describe(time.UnixMicro(m.last)) + "."
	case m != nil:
		reason = "Resumed by " + who + "; still learning the beet's rhythm."
	case b.Detection.Mode == beet.ModeAuto:
		reason = "Resumed by " + who + "; learning the beet's rhythm again."
	}
	f := resumeFlip(b, at, reason, m)
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
	due, _, ok := m.countedFrom(from).Deadline(up)
	return maxTime(due, from), ok
}

// countedFrom is a copy of m whose deadlines count from t when t is later
// than its last event (a resume); the copy learns nothing back into m.
func (m *RateModel) countedFrom(t time.Time) *RateModel {
	c := *m
	c.last = max(c.last, t.UnixMicro())
	return &c
}
