package main

import (
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/bench/detect/harness"
	"github.com/beethq/beet/internal/detect"
)

// autoDetector runs Beet's own detector code (internal/detect, auto mode)
// exactly as the live path and `beet backtest` do: OnEvents for events,
// OnDeadline for deadlines that pass. A flip to down or anomalous is an
// alarm, a recovery flip its end.
type autoDetector struct {
	b         beet.Beet
	downSince *time.Time
}

func newAuto(info harness.StreamInfo) harness.Detector {
	return &autoDetector{b: beet.Beet{Status: beet.StatusNew, Timezone: info.Location.String(),
		Detection: beet.Detection{Mode: beet.ModeAuto}}}
}

func (d *autoDetector) apply(dec detect.Decision) *beet.Flip {
	d.b.DueAt = dec.Due
	if dec.Model != nil {
		d.b.Model = dec.Model
	}
	if dec.Flip != nil {
		d.b.Status = dec.Flip.To
	}
	return dec.Flip
}

func (d *autoDetector) Advance(t time.Time) []harness.Alarm {
	var out []harness.Alarm
	for d.b.DueAt != nil && !d.b.DueAt.After(t) {
		dec, err := detect.OnDeadline(&d.b, *d.b.DueAt)
		if err != nil {
			panic(err) // a bug in the detector: the benchmark must not hide it
		}
		if f := d.apply(dec); f != nil && (f.To == beet.StatusDown || f.To == beet.StatusAnomalous) {
			if f.To == beet.StatusDown {
				at := f.At
				d.downSince = &at
			}
			out = append(out, harness.Alarm{At: f.At, Kind: string(f.Kind)})
		}
	}
	return out
}

func (d *autoDetector) Event(t time.Time, count int) []harness.Alarm {
	dec, err := detect.OnEvents(&d.b, t, count, d.downSince)
	if err != nil {
		panic(err)
	}
	d.b.LastEventAt = &t
	switch f := d.apply(dec); {
	case f == nil:
	case f.Kind == beet.FlipRecovery:
		d.downSince = nil
		return []harness.Alarm{{At: t, Kind: string(f.Kind), Recovery: true}}
	case f.To == beet.StatusAnomalous:
		return []harness.Alarm{{At: t, Kind: string(f.Kind)}} // a surge, raised as events arrive
	}
	return nil
}
