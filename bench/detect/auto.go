package main

import (
	"time"

	"github.com/beethq/beet/bench/detect/harness"
	"github.com/beethq/beet/internal/detect"
)

// autoDetector runs Beet's learned rate model (internal/detect) the way
// the live path does: each event moves the silence deadline, and a
// deadline that passes raises silence.
type autoDetector struct {
	m       *detect.RateModel
	due     time.Time
	hasDue  bool
	alarmed bool
}

func newAuto(info harness.StreamInfo) harness.Detector {
	return &autoDetector{m: detect.NewRateModel(info.Location)}
}

func (d *autoDetector) Advance(t time.Time) []harness.Alarm {
	if d.hasDue && !d.alarmed && !d.due.After(t) {
		d.alarmed, d.hasDue = true, false
		d.m.Freeze()
		return []harness.Alarm{{At: d.due, Kind: "silence"}}
	}
	return nil
}

func (d *autoDetector) Event(t time.Time, count int) []harness.Alarm {
	d.m.Observe(t, count)
	var out []harness.Alarm
	if d.alarmed {
		d.alarmed = false
		out = append(out, harness.Alarm{At: t, Kind: "silence", Recovery: true})
	}
	d.hasDue = false
	if d.m.Armed() {
		d.due, d.hasDue = d.m.SilenceDeadline()
	}
	return out
}
