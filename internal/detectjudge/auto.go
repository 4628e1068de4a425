package detectjudge

import (
	"fmt"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// An Engine is the detector code a beet runs through: the live path and
// `beet backtest` call detect.ApplyEvents for each group of events and
// detect.ApplyDeadlines as time passes. A tuned engine is the same code with
// other parameters (see AutoTunings).
type Engine struct {
	ApplyEvents    func(*beet.Beet, beet.EventSpan) ([]beet.Flip, error)
	ApplyDeadlines func(*beet.Beet, time.Time) ([]beet.Flip, error)
}

// LiveEngine is exactly what the live service and `beet backtest` run.
var LiveEngine = Engine{ApplyEvents: detect.ApplyEvents, ApplyDeadlines: detect.ApplyDeadlines}

// A Tuning is one parameter set of a detector, as a Factory.
type Tuning struct {
	Name    string
	Factory Factory
}

// AutoTunings returns the parameter sets of auto that the leave-one-file-out
// NAB evaluation may choose from: the defaults (LiveEngine) first, then each
// numeric field of detect.Params halved and doubled, one at a time. Every
// set runs the live code (detect.Params.ApplyEvents and ApplyDeadlines).
func AutoTunings() []Tuning { return autoTunings(detect.DefaultParams(), NewAuto(LiveEngine)) }

// AutoTuningsAt is AutoTunings around p instead of the defaults (the
// judge's -set): p first (named "defaults" there: the run's own), then each
// numeric field of p halved and doubled.
func AutoTuningsAt(p detect.Params) []Tuning { return autoTunings(p, NewAutoAt(p)) }

func autoTunings(def detect.Params, first Factory) []Tuning {
	out := []Tuning{{Name: "defaults", Factory: first}}
	for _, v := range Variants(def, 0.5, 2)[1:] {
		p := v.(detect.Params)
		if p.SurgeDecay > 1 {
			continue // a share of the value kept: above 1 it would grow
		}
		out = append(out, Tuning{Name: VariantName(def, v), Factory: NewAutoAt(p)})
	}
	return out
}

// NewAutoAt is the Factory of auto mode run with parameters p, through the
// live code (detect.Params.ApplyEvents and ApplyDeadlines).
func NewAutoAt(p detect.Params) Factory { return NewAuto(Engine{p.ApplyEvents, p.ApplyDeadlines}) }

// autoDetector runs a beet in auto mode through an Engine: ApplyDeadlines
// when time passes, ApplyEvents for events. A flip to down or anomalous is
// an alarm, a flip back to up its recovery, and the first flip out of
// learning is when it armed.
type autoDetector struct {
	b      beet.Beet
	engine Engine
	armed  time.Time
	zone   *time.Location // the beet's, loaded once
}

// NewAuto returns the Factory of auto mode on engine: a new beet in the
// stream's zone, detection left at auto.
func NewAuto(engine Engine) Factory {
	return func(info StreamInfo) Detector {
		return &autoDetector{engine: engine, zone: info.Location, b: beet.Beet{Status: beet.StatusNew, Timezone: info.Location.String(),
			Detection: beet.Detection{Mode: beet.ModeAuto}}}
	}
}

// alarms turns the flips of a call at t into alarms and notes when the beet
// armed: at its first flip out of learning once its model says it is armed
// (a learning beet may flag a silence, and that is no arming), else at t,
// the call at which the model first says so.
func (d *autoDetector) alarms(t time.Time, flips []beet.Flip, event bool) []Alarm {
	var out []Alarm
	// A model arms on an event; a deadline call is looked at only when it flips.
	armedNow := d.armed.IsZero() && (event || len(flips) > 0) && d.modelArmed()
	for _, f := range flips {
		if armedNow && d.armed.IsZero() && (f.From == beet.StatusLearning || f.From == beet.StatusNew) &&
			f.To != beet.StatusLearning && f.To != beet.StatusNew {
			d.armed = f.At
		}
		switch {
		case f.To.InTrouble():
			a := Alarm{At: f.At, Kind: string(f.Kind)}
			if f.Kind == beet.FlipMissedRun {
				// The model as the last event left it set the deadline,
				// and says the grace the beet page shows. Not the hour
				// more a clock change gives (laterClock, pairSlack): when
				// the job's clock did change, its run is due an hour later
				// and the grace is counted from there; when it did not,
				// the hour is time lost (counted so, the judge credited a
				// run flagged 1 h 1 min after its time, and no longer a
				// Berlin job's run flagged its grace after its new time).
				if m, err := detect.LoadRateModel(d.b.Model, d.loc()); err == nil && m.Scheduled() {
					a.Grace = m.Grace()
				}
			}
			out = append(out, a)
		case (f.To == beet.StatusUp || f.To == beet.StatusLearning) && f.From.InTrouble():
			// A learning beet whose silence alarm ends goes back to learning.
			out = append(out, Alarm{At: f.At, Kind: string(f.Kind), Recovery: true})
		}
	}
	if armedNow && d.armed.IsZero() {
		d.armed = t
	}
	return out
}

// modelArmed says whether the beet's model has armed (is past learning).
func (d *autoDetector) modelArmed() bool {
	if len(d.b.Model) == 0 {
		return false
	}
	m, err := detect.LoadRateModel(d.b.Model, d.loc())
	return err == nil && m.Armed()
}

// Advance implements Detector: every deadline before t.
func (d *autoDetector) Advance(t time.Time) []Alarm {
	flips, err := d.engine.ApplyDeadlines(&d.b, t)
	if err != nil {
		panic(fmt.Sprintf("detectjudge: ApplyDeadlines: %v", err)) // a bug in the detector: the judge must not hide it
	}
	return d.alarms(t, flips, false)
}

// Event implements Detector.
func (d *autoDetector) Event(t time.Time, count int) []Alarm {
	flips, err := d.engine.ApplyEvents(&d.b, beet.EventSpan{First: t, Last: t, Count: count})
	if err != nil {
		panic(fmt.Sprintf("detectjudge: ApplyEvents: %v", err))
	}
	return d.alarms(t, flips, true)
}

func (d *autoDetector) loc() *time.Location {
	if d.zone != nil {
		return d.zone
	}
	return time.UTC
}

// ArmedAt implements Armer.
func (d *autoDetector) ArmedAt() time.Time { return d.armed }
