package detect

import (
	"time"

	"github.com/beethq/beet"
)

// ApplySettings works b's detection state out again after a person changed
// its settings, so that its deadline, status and reason follow the new ones
// at once rather than from the next event. was is the beet before the
// change (its settings and time zone are read), b the same beet with the
// new ones and its state as it stands. It changes b's Status, StatusReason,
// StatusSince, DueAt and Model in place, as of now, and returns the flips
// in time order. A change that detection does not read (the zone of a
// period or cron beet: a schedule has its own) changes nothing.
//
//   - The deadline counts from the last event, as if it had come under the
//     new settings, or from a resume since then (the grace Resume gives).
//   - A deadline that has passed by now is judged now, as the sweeper would
//     judge it: the beet goes down with the flip and messages of a silence
//     or a missed run, dated now.
//   - Leaving auto mode ends learning: a learning beet is up (a manual flip)
//     and what auto mode learned is dropped. Entering it starts learning
//     afresh, as for a new beet: up becomes learning (a manual flip).
//   - A beet that is up or learning and stays so gets a reason that says
//     what changed and what is expected now.
//   - New, paused, down and anomalous beets keep their status and reason:
//     a change of settings does not undo an alert that went out; the next
//     event ends it as usual.
func ApplySettings(was beet.Beet, b *beet.Beet, now time.Time) ([]beet.Flip, error) {
	return applySettings(&defaultParams, was, b, now)
}

func applySettings(p *Params, was beet.Beet, b *beet.Beet, now time.Time) ([]beet.Flip, error) {
	auto, wasAuto := b.Detection.Mode == beet.ModeAuto, was.Detection.Mode == beet.ModeAuto
	if was.Detection == b.Detection && (was.Timezone == b.Timezone || !auto) {
		return nil, nil
	}
	if auto != wasAuto {
		b.Model = nil // leaving auto drops what it learned; entering it learns afresh
	}
	if !watching(b.Status) {
		return nil, nil // paused or down: no deadline until resumed or the next event
	}
	b.DueAt = nil
	var flips []beet.Flip
	if b.Status != beet.StatusNew && b.LastEventAt != nil {
		what := settingsChange(was, b)
		from := countsFrom(was, b)
		switch b.Detection.Mode {
		case beet.ModeAuto:
			if !wasAuto && b.Status == beet.StatusUp {
				f := flipAt(b, now, beet.StatusLearning, beet.FlipManual, "")
				flips = apply(b, Decision{Flip: f}, flips)
			}
			if b.Model != nil {
				model, err := loadRateModel(b.Model, location(b), p)
				if err == nil {
					if due, ok := deadlineFrom(model, from, b.Status == beet.StatusUp); ok {
						b.DueAt = &due
					}
					releaseModel(model)
				} // an old model: learning starts over at the next event
			}
		case beet.ModePeriod:
			due := from.Add(period(b) + grace(b))
			b.DueAt = &due
		case beet.ModeCron:
			c, loc, err := cronOf(b)
			if err != nil {
				return nil, err
			}
			due := c.Next(from.Add(grace(b)), loc).Add(grace(b))
			b.DueAt = &due
		}
		if !auto && b.Status == beet.StatusLearning {
			flips = apply(b, Decision{Flip: flipAt(b, now, beet.StatusUp, beet.FlipManual, ""), Due: b.DueAt}, flips)
		}
		if b.Status == beet.StatusUp || b.Status == beet.StatusLearning {
			b.StatusReason = what + " " + Expectation(b)
			for i := range flips {
				flips[i].Reason = b.StatusReason
			}
		}
	}
	setRunDeadline(b)
	return settle(p, b, now, flips)
}

// settle judges, now, each deadline of b that has passed by now, and
// dates its flips now: they are found now, not when the deadline was.
func settle(p *Params, b *beet.Beet, now time.Time, flips []beet.Flip) ([]beet.Flip, error) {
	for n := 0; b.DueAt != nil && !b.DueAt.After(now) && n < maxLateDeadlines; n++ {
		if limit, _ := RunLimit(b); b.Detection.Mode == beet.ModePeriod && (b.Runs.StartedAt == nil || limit <= 0) {
			// Judged as of now, the silence reason counts the silence up to
			// now, and still names the last event.
			b.DueAt = &now
		}
		d, err := onDeadline(p, b)
		if err != nil {
			return flips, err
		}
		if d.Flip == nil {
			apply(b, d, nil)
			break
		}
		d.Flip.At = maxTime(d.Flip.At, now)
		flips = apply(b, d, flips)
	}
	return flips, nil
}

// countsFrom is when b's silence counts from: its last event, or a resume
// since (Resume counts the deadline from then). A period deadline already
// set says which: a learning beet switched to period mode after its last
// event is up since then, yet counts from the event.
func countsFrom(was beet.Beet, b *beet.Beet) time.Time {
	from := *b.LastEventAt
	if (b.Status != beet.StatusUp && b.Status != beet.StatusLearning) || !b.StatusSince.After(from) {
		return from
	}
	set := b.StatusSince
	limit, _ := RunLimit(&was)
	if was.Detection.Mode == beet.ModePeriod && b.DueAt != nil && (b.Runs.StartedAt == nil || limit <= 0) {
		if d := b.DueAt.Add(-period(&was) - grace(&was)); d.Before(set) && !d.Before(from) {
			set = d // counted from d; later than d only while the global guard held it
		}
	}
	return set
}

// settingsChange says what a person changed, for the reason.
func settingsChange(was beet.Beet, b *beet.Beet) string {
	switch {
	case was.Detection.Mode != b.Detection.Mode:
		return "Switched to " + string(b.Detection.Mode) + " mode."
	case was.Detection != b.Detection:
		return "Detection settings changed."
	}
	return "Time zone changed to " + b.Timezone + "."
}

func maxTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// Imported works out, as of now, the state of a beet imported from
// another service with its last event there (b.LastEventAt, set; b is
// new): what that event would have made it, then every deadline passed
// by now judged now, as ApplySettings judges them (a silence or a missed
// run, with its alert). down says the other service had it down: one
// still up by its deadline was down for a reported failure (the only way
// to be down before the deadline), and is down here too, until its next
// successful event. It changes b in place and returns the flips.
func Imported(b *beet.Beet, now time.Time, down bool) ([]beet.Flip, error) {
	p := &defaultParams
	last := *b.LastEventAt
	d, err := onEvents(p, b, last, 1, nil, false)
	if err != nil {
		return nil, err
	}
	if d.Flip != nil {
		d.Flip.At = now // imported now, with what it knew
		d.Flip.Reason = "Imported with its last event at " + last.In(location(b)).Format("Jan 2 15:04 MST") + ". " + Expectation(b)
	}
	flips, err := settle(p, b, now, apply(b, d, nil))
	if err != nil || !down || b.Status == beet.StatusDown {
		return flips, err
	}
	f := flipAt(b, now, beet.StatusDown, beet.FlipFailed, "Down in the service it was imported from: its last run reported failure.")
	f.Observed, f.Expected = ptr(0), ptr(1)
	return apply(b, Decision{Flip: f}, flips), nil
}
