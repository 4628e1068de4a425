package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/beethq/beet"
)

// fallbackState is the fallback's: the longest gap between events,
// minutes, in the current week (gapWeek, Unix weeks mod 256) and the two
// before.
type fallbackState struct {
	gapMax  [fallbackWeeks]uint16
	gapWeek uint8
}

// The fallback: whatever a beet's shape, once it has had events for long
// enough, a silence longer than twice the longest gap between events in
// the last three weeks is an alarm. It is what watches a beet no finer
// model is sure of (a shape the schedule and rate models do not know, a
// beet too sparse for the rate model to arm), and it caps how long any
// silence goes unflagged. It keeps the longest gap of each of the last
// three calendar weeks (UTC weeks from Thursday: Unix time modulo a week).

const (
	fallbackFactor = 2
	// fallbackCapFactor: while a finer model is sure, the fallback flags a
	// silence this many times later (deadline).
	fallbackCapFactor = 2
	fallbackFloor     = time.Hour
	// fallbackWeeks of longest gaps are kept: the current and the two before.
	fallbackWeeks = 3
	// armBy: a beet with at least armByEvents events is armed this long
	// after its first event, whatever else it has learned.
	armBy       = 14 * 24 * time.Hour
	armByEvents = 5
	week        = 7 * 24 * 3600
)

// noteGap learns the gap (seconds) that ended at sec. An outage (the beet
// down) or a maintenance window teaches nothing: the caller froze the model.
func (m *RateModel) noteGap(sec, gap int64) {
	w := uint8(sec / week)
	if shift := w - m.gapWeek; shift != 0 {
		known := m.gapMax[0] | m.gapMax[1] | m.gapMax[2]
		longest := uint16(m.longestGap() / time.Minute)
		for i := fallbackWeeks - 1; i >= 0; i-- {
			if j := i - int(shift); j >= 0 && shift < fallbackWeeks {
				m.gapMax[i] = m.gapMax[j]
			} else {
				m.gapMax[i] = 0
			}
		}
		m.gapWeek = w
		if known != 0 && m.gapMax == [fallbackWeeks]uint16{} && m.flags&flagFrozen != 0 {
			// An outage ended a beet whose gaps are longer than the weeks
			// kept (a monthly job): it teaches nothing, and it must not
			// leave the fallback with no gap at all (1 h, the floor, after
			// a month's gap). The longest gap learned stays until newer
			// ones replace it.
			m.gapMax[fallbackWeeks-1] = longest
		}
	}
	if m.flags&flagFrozen == 0 {
		minutes := uint16(min((gap+59)/60, math.MaxUint16))
		m.gapMax[0] = max(m.gapMax[0], minutes)
	}
}

// longestGap is the longest gap of the last three weeks.
func (m *RateModel) longestGap() time.Duration {
	return time.Duration(max(m.gapMax[0], m.gapMax[1], m.gapMax[2])) * time.Minute
}

// fallback is the fallback watch.
type fallback struct{ m *RateModel }

// ready: the later of a week and armEvents events, or armBy after the
// first event with armByEvents events, whichever comes first.
func (w fallback) ready() bool {
	m := w.m
	span := m.last/1e6 - m.first
	return m.events >= armEvents && span >= int64(armAfter/time.Second) ||
		m.events >= armByEvents && span >= int64(armBy/time.Second)
}

func (w fallback) limit() time.Duration {
	return max(fallbackFloor, fallbackFactor*w.m.longestGap())
}

func (w fallback) due(bool) (time.Time, string, bool) {
	return time.UnixMicro(w.m.last).Add(w.limit()), kindFallback, true
}

func (w fallback) alarm(_ string, due time.Time) *alarm {
	m := w.m
	last := time.UnixMicro(m.last)
	return &alarm{kind: beet.FlipSilence, observed: 0, expected: 1, reason: fmt.Sprintf(
		"No event since %s (%s); the longest gap of the last 3 weeks was %s.",
		last.In(m.loc).Format("Jan 2 15:04 MST"), Duration(due.Sub(last)), Duration(m.longestGap()))}
}

func (w fallback) describe(time.Time) string {
	return fmt.Sprintf("events at irregular times; silence is flagged after %s (twice the longest gap of the last 3 weeks, at least %s)",
		Duration(w.limit()), Duration(fallbackFloor))
}
