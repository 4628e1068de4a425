package detect

import (
	"fmt"
	"math"
	"time"
)

// newCluster learns the gap between the previous cluster's start and t.
func (m *RateModel) newCluster(t time.Time, count int) {
	sec := t.Unix()
	prevN, prevCalls, prev := m.clusterN, m.calls, m.cluster
	m.clusterN, m.calls = uint16(min(count, math.MaxUint16)), 1
	// Calls per cluster (a webhook's burst of separate requests, not a
	// count sent at once, which is many events): the unit of independent
	// counts for the CUSUMs. Slow and winsorised, so a surge (whose events
	// merge into long clusters) does not hide itself.
	if m.flags&(flagFrozen|flagHoldDisp) == 0 {
		m.burst = max(1, m.burst+(min(float32(prevCalls), 2*m.burst+1)-m.burst)/64)
	}
	if prevN > maxRunEvents {
		if m.flags&flagSuspended != 0 {
			// A suspended schedule resumes with a run on it, k periods
			// after the anchor (the long cluster's start). If the burst
			// opened an incident (a surge), the schedule holds from now on,
			// but the incident ends only after an hour of runs on time
			// (onSchedule), counted by the streak: so extras after every
			// run are one incident, not a surge and a recovery per run.
			m.flags &^= flagSuspended
			p := int64(m.period)
			if l, ok := m.lateness(prev, sec, max(1, (sec-prev+p/2)/p)); ok && abs(l) <= m.tolerance() {
				m.cluster = sec - l*3/4
				if m.flags&(flagSurge|flagHoldDisp) != 0 {
					m.flags |= flagResumed
					m.streak = 0
				}
				return
			}
		}
		m.cluster, m.period, m.streak = sec, 0, 0 // a run pings once or twice; this is a stream of counts
		m.flags &^= flagResumed
		return
	}
	if m.period == 0 {
		m.startPeriod(prev, sec)
		return
	}
	p := int64(m.period)
	late, ok := m.lateness(prev, sec, 1)
	if !ok && m.Scheduled() {
		// A missed run is a gap of k periods; it keeps the schedule.
		if k := (sec - prev + p/2) / p; k >= 2 {
			if l, ok := m.lateness(prev, sec, k); ok && abs(l) <= m.tolerance() {
				m.cluster = sec - l*3/4
				return
			}
		}
		m.streak /= 2 // an off-schedule run: trust the schedule less, keep its phase
		return
	}
	if !ok {
		m.startPeriod(prev, sec)
		return
	}
	// The anchor follows the runs as a phase-locked loop: a quarter of each
	// run's lateness moves it, so the jitter measured is one run's, not
	// the difference of two.
	m.cluster = sec - late*3/4
	if m.streak < math.MaxUint8 {
		m.streak++
	}
	if m.confirmed() {
		m.flags &^= flagResumed
	}
	if p%86400 != 0 {
		m.period = uint32(max(1, p+late/16)) // follows a slowly drifting interval
	}
	dev := min(abs(late), math.MaxUint16)
	m.devMean = uint16((7*int64(m.devMean) + dev + 4) / 8)
	m.devMax = uint16(max(dev, int64(m.devMax)-int64(m.devMax+255)/256))
}

// startPeriod takes the gap from prev to now as the candidate period. A
// gap of about whole days on the wall clock is taken as whole days, so a
// daily job is matched on the wall clock across DST.
func (m *RateModel) startPeriod(prev, now int64) {
	p := now - prev
	w := wallGap(prev, now, m.loc)
	if k := (w + 43200) / 86400; k >= 1 && abs(w-k*86400) <= k*86400/20 {
		p = k * 86400
	}
	m.cluster = now
	m.period, m.streak, m.devMean, m.devMax = uint32(min(max(p, 1), math.MaxUint32)), 0, 0, 0
	m.flags &^= flagResumed
}

// lateness is how much later than k periods after the anchor prev a run
// at now came (negative: early), in real time or, for whole days, on the
// wall clock, whichever is nearer; ok if within a tenth of the period.
func (m *RateModel) lateness(prev, now, k int64) (int64, bool) {
	p := int64(m.period)
	late := now - (prev + k*p)
	if p%86400 == 0 {
		if w := now - m.wallNext(prev, k*p/86400); abs(w) < abs(late) {
			late = w
		}
	}
	return late, abs(late) <= max(30, p/10)
}

// wallNext is the same wall-clock time as t, days later.
func (m *RateModel) wallNext(t, days int64) int64 {
	c := time.Unix(t, 0).In(m.loc)
	return time.Date(c.Year(), c.Month(), c.Day()+int(days), c.Hour(), c.Minute(), c.Second(), 0, m.loc).Unix()
}

// wallGap is the difference of two instants' local wall-clock readings.
func wallGap(a, b int64, loc *time.Location) int64 {
	_, oa := time.Unix(a, 0).In(loc).Zone()
	_, ob := time.Unix(b, 0).In(loc).Zone()
	return (b + int64(ob)) - (a + int64(oa))
}

// tolerance is how late a run may be before it counts as missed: at
// least a minute, at most a tenth of the period (or a minute), and wide
// enough for the jitter seen so far.
func (m *RateModel) tolerance() int64 {
	p := int64(m.period)
	g := max(60, 4*int64(m.devMean), 2*int64(m.devMax))
	return min(g, max(60, p/10))
}

// NextRun returns when the next scheduled run is due (before grace): the
// first slot after the latest run that no event has answered yet. An
// event within a slot's window (its grace either side, at most half a
// period) is that slot's run, even one inside a longer cluster (extra
// pings, a job also started by hand), and a slot whose window the last
// event is past was settled already (flagged when its deadline passed),
// so the deadline is always after the last event: an event never brings
// a passed slot back.
func (m *RateModel) NextRun() time.Time {
	p := int64(m.period)
	if p <= 0 {
		return time.Unix(m.cluster, 0) // no schedule
	}
	// Slots up to after are answered or past.
	after := m.last/1e6 + min(m.tolerance(), p/2)
	k := max(1, (after-m.cluster)/p)
	for ; ; k++ {
		if next := m.slot(k); next > after {
			return time.Unix(next, 0)
		}
	}
}

// slot is the k-th scheduled run after the latest run's (smoothed) time.
func (m *RateModel) slot(k int64) int64 {
	p := int64(m.period)
	next := m.cluster + k*p
	if p%86400 == 0 {
		// The same wall-clock time k·p/86400 days later, or later if DST
		// made real time the longer one.
		next = max(next, m.wallNext(m.cluster, k*p/86400))
	}
	return next
}

// Grace is how long after NextRun a missing run is flagged.
func (m *RateModel) Grace() time.Duration { return time.Duration(m.tolerance()) * time.Second }

func (m *RateModel) describeSchedule() string {
	p := time.Duration(m.period) * time.Second
	jitter := Duration(max(time.Minute, time.Duration(m.devMax)*time.Second))
	if m.devMax < 60 {
		jitter = fmt.Sprintf("%ds", max(1, m.devMax))
	}
	var what string
	switch {
	case p == 24*time.Hour:
		at := time.Unix(m.cluster, 0).In(m.loc)
		what = fmt.Sprintf("runs daily at about %s %s ± %s", at.Format("15:04"), m.loc, jitter)
	case p%(24*time.Hour) == 0:
		what = fmt.Sprintf("runs every %d days ± %s", p/(24*time.Hour), jitter)
	default:
		if p >= 10*time.Minute {
			p = p.Round(time.Minute)
		}
		what = fmt.Sprintf("runs every %s ± %s", Duration(p), jitter)
	}
	return what + "; a missed run is flagged " + Duration(m.Grace()) + " after its time"
}
