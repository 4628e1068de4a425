package detect

import (
	"fmt"
	"math"
	"time"
)

// RateModel learns how often a beet's events come, by local hour of day
// and weekday or weekend, and says when a silence has become too long to
// be chance. It is the silence part of auto mode (DETECTION.md, rate
// model); drops and surges come later.
//
// Events closer than clusterGap to the previous one form one cluster: a
// webhook that fires five times in a second is one happening, and the
// silence between happenings is what a stop lengthens.
type RateModel struct {
	loc *time.Location

	rate [48]float32 // expected clusters per hour, per bucket
	seen [48]uint16  // hours observed per bucket, for the learning rate
	disp float32     // dispersion index (variance / mean) of hourly counts, ≥ 1

	hourStart int64   // Unix seconds of the open hour (absolute hours, so DST is exact)
	hourCount float32 // clusters in the open hour
	first     int64   // Unix µs of the first event
	last      int64   // Unix µs of the last event
	clusters  int32
	frozen    bool // while a silence alarm is open, hours teach nothing
}

const (
	clusterGap  = 60 * time.Second
	armAfter    = 7 * 24 * time.Hour
	armClusters = 30
	// falseAlarmsGoal is the false alarms a day the threshold aims at. It
	// sits below the product goal (0.001) because real rates drift from
	// what the model learned; measured with bench/detect.
	falseAlarmsGoal = 0.0004
	maxWalk         = 30 * 24 * time.Hour
	minLearnRate    = 0.08
)

// NewRateModel starts a model for a beet in loc.
func NewRateModel(loc *time.Location) *RateModel { return &RateModel{loc: loc, disp: 1} }

// Observe takes count events at t (t never decreases).
func (m *RateModel) Observe(t time.Time, count int) {
	if count <= 0 {
		return
	}
	us := t.UnixMicro()
	m.closeHours(t.Unix())
	if m.clusters == 0 {
		m.first = us
	}
	if m.clusters == 0 || time.Duration(us-m.last)*time.Microsecond >= clusterGap {
		m.clusters++
		m.hourCount++
	}
	m.last = us
	m.frozen = false
}

// Freeze stops learning while an alarm is open, so an outage does not
// teach the model that silence is normal.
func (m *RateModel) Freeze() { m.frozen = true }

// Armed reports whether the model has seen enough to alarm.
func (m *RateModel) Armed() bool {
	return m.clusters >= armClusters && time.Duration(m.last-m.first)*time.Microsecond >= armAfter
}

// SilenceDeadline returns when a silence since the last event becomes
// significant: when the clusters expected since then reach the threshold.
// ok is false when it would take longer than maxWalk.
func (m *RateModel) SilenceDeadline() (time.Time, bool) {
	need := m.threshold()
	t := time.UnixMicro(m.last)
	end := t.Add(maxWalk)
	acc := 0.0
	for t.Before(end) {
		hourEnd := time.Unix((t.Unix()/3600+1)*3600, 0)
		r := float64(m.rate[m.bucket(t.Unix())])
		span := hourEnd.Sub(t).Hours()
		if r > 0 && acc+r*span >= need {
			return t.Add(time.Duration((need - acc) / r * float64(time.Hour))), true
		}
		acc += r * span
		t = hourEnd
	}
	return time.Time{}, false
}

// Expected returns the clusters the model expected between a and b.
func (m *RateModel) Expected(a, b time.Time) float64 {
	acc := 0.0
	for t := a; t.Before(b); {
		hourEnd := time.Unix((t.Unix()/3600+1)*3600, 0)
		if hourEnd.After(b) {
			hourEnd = b
		}
		acc += float64(m.rate[m.bucket(t.Unix())]) * hourEnd.Sub(t).Hours()
		t = hourEnd
	}
	return acc
}

// threshold is the expected-cluster count a silence must reach: with
// about g gaps a day, a per-gap false-alarm probability of goal/g keeps
// false alarms near goal per day; for Poisson gaps that is ln(g/goal)
// expected clusters, widened by the dispersion for bursty traffic.
func (m *RateModel) threshold() float64 {
	daily := 0.0
	for b := range 24 {
		daily += (5*float64(m.rate[b]) + 2*float64(m.rate[24+b])) / 7
	}
	g := math.Max(daily, 1)
	return math.Log(g/falseAlarmsGoal) * math.Max(1, float64(m.disp))
}

// closeHours finishes every hour that ended by now, teaching each bucket
// its count (zero for silent hours).
func (m *RateModel) closeHours(now int64) {
	if m.hourStart == 0 {
		m.hourStart = now / 3600 * 3600
		return
	}
	if now-m.hourStart > int64(maxWalk/time.Second) {
		m.hourStart = now / 3600 * 3600 // after a very long gap, start afresh
		m.hourCount = 0
		return
	}
	for m.hourStart+3600 <= now {
		m.learn(m.bucket(m.hourStart), m.hourCount)
		m.hourStart += 3600
		m.hourCount = 0
	}
}

func (m *RateModel) learn(b int, count float32) {
	if m.frozen {
		return
	}
	mu := m.rate[b]
	if m.seen[b] > 3 && mu > 0.2 {
		d := (count - mu) * (count - mu) / mu
		m.disp = min(50, max(1, 0.97*m.disp+0.03*d))
	}
	if m.seen[b] < math.MaxUint16 {
		m.seen[b]++
	}
	a := max(1/float32(m.seen[b]), minLearnRate)
	m.rate[b] += a * (count - mu)
}

// bucket maps an instant to its local hour of day, weekdays 0-23, weekend 24-47.
func (m *RateModel) bucket(unix int64) int {
	t := time.Unix(unix, 0).In(m.loc)
	b := t.Hour()
	if wd := t.Weekday(); wd == time.Saturday || wd == time.Sunday {
		b += 24
	}
	return b
}

// Describe says in words what the model has learned, and how soon, after
// an event at t, a silence would be flagged.
func (m *RateModel) Describe(t time.Time) string {
	busiest, busyRate, total := 0, float32(0), 0.0
	for b, r := range m.rate {
		if r > busyRate {
			busiest, busyRate = b, r
		}
		if b < 24 {
			total += float64(r) * 5 / 7
		} else {
			total += float64(r) * 2 / 7
		}
	}
	when := "weekdays"
	if busiest >= 24 {
		when = "weekends"
	}
	words := fmt.Sprintf("about %s a day, busiest on %s around %02d:00 (about %s an hour)",
		count(total), when, busiest%24, count(float64(busyRate)))
	saved := m.last
	m.last = t.UnixMicro()
	due, ok := m.SilenceDeadline()
	m.last = saved
	if ok {
		words += "; silence at " + t.In(m.loc).Format("15:04") + " would be flagged after about " + Duration(due.Sub(t))
	}
	return words
}

func count(x float64) string {
	if x >= 10 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}
