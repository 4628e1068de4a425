package detect

import (
	"fmt"
	"math"
	"time"
)

// RateModel is auto mode's learned model of one beet (DETECTION.md):
//
//   - a rate model: expected events per hour by local hour of day, for
//     weekdays and for weekends (48 rates), the dispersion of hourly counts
//     (index D and negative-binomial size r), the burst unit (calls per
//     cluster) and the usual gap between calls;
//   - three tests on it: silence (no event while the expected events reach
//     a threshold widened by D), and two CUSUMs of the negative-binomial
//     log-likelihood ratio of hourly counts against a drop to dropRatio and
//     a surge to surgeRatio of normal;
//   - a schedule model for cron-like beets: a constant period between runs
//     (in real or in wall-clock time), with a learned jitter.
//
// Between events every "downward" statistic (silence, the drop CUSUM)
// grows deterministically, so the model can say at each event the one
// instant at which it would become an alarm (Deadline); a surge can only
// grow at an event, so it is checked then.
type RateModel struct {
	loc *time.Location

	rate  [48]float32 // expected events per hour per bucket; < 0: never seen (always what q decodes to)
	q     [48]uint16  // rate as stored (rate_codec.go)
	disp  float32     // dispersion index D of hourly counts, in [1, maxDisp]
	nbNum float32     // EWMA of (count − mean)² − mean over hours …
	nbDen float32     // … and of mean²: their ratio estimates 1/r, r the negative-binomial size

	hourStart int64   // Unix seconds of the open hour (absolute hours, so DST is exact)
	hourCount float32 // events in the open hour
	first     int64   // Unix seconds of the first event
	last      int64   // Unix µs of the last event
	events    uint32  // events seen, saturating
	flags     uint8

	up, dn cusum // surge and drop

	burst   float32 // mean calls per cluster (EWMA), ≥ 1: the unit of independent counts
	callGap float32 // usual seconds between calls (EWMA, winsorised): a beet that reports counts every 30 min is not late at minute 10

	// The latest cluster (events closer than clusterGap) and the schedule
	// model over cluster starts.
	cluster  int64  // Unix seconds: the latest run's smoothed time (the schedule's phase)
	clusterN uint16 // events in the latest cluster, saturating
	calls    uint16 // calls (groups of events) in the latest cluster, saturating
	period   uint32 // seconds between runs; 0: none yet
	streak   uint8  // consecutive gaps that matched period
	devMean  uint16 // mean |lateness| of runs against the phase, seconds (EWMA)
	devMax   uint16 // largest recent |lateness|, seconds (slowly decaying)

	zone zoneSpan // cache for bucket, not stored
}

// A cusum is one CUSUM statistic and the run behind it, kept to explain
// an alarm: since start, obs events came where exp were expected.
type cusum struct {
	s        float32
	start    uint32 // Unix seconds the run started
	obs, exp float32
}

const (
	flagFrozen    = 1 << iota // an incident is open: hours teach nothing
	flagSurge                 // a surge alarm is open
	flagHoldDisp              // a drop or surge is open: the dispersion learns nothing
	flagSuspended             // the schedule is suspended: the latest cluster holds more than a run's events
	flagResumed               // the schedule resumed during an open incident: it holds whatever the streak, which counts the runs since
)

const (
	clusterGap = 60 * time.Second
	armAfter   = 7 * 24 * time.Hour
	armEvents  = 30
	// A busy beet arms after two days: hours not seen yet (the first
	// weekend) count as unknown, neither normal nor anomalous.
	armEarly       = 2 * 24 * time.Hour
	armEventsEarly = 200
	// falseAlarmsGoal is the silence false alarms a day the threshold aims
	// at. It sits below the product goal (0.001 for all kinds together)
	// because real rates drift from what the model learned; set with
	// bench/detect.
	falseAlarmsGoal = 0.0002
	maxWalk         = 30 * 24 * time.Hour
	minLearnRate    = 0.08
	maxDisp         = 1000

	// A schedule needs this many matching gaps in a row, covering a day.
	scheduleStreak = 7
	// A scheduled run's cluster holds at most this many events.
	maxRunEvents = 3
)

// NewRateModel starts a model for a beet in loc.
func NewRateModel(loc *time.Location) *RateModel {
	m := &RateModel{loc: loc, disp: 1}
	for i := range m.rate {
		m.rate[i] = -1
	}
	m.nbDen = 1 // with nbNum 0: Poisson until hours say otherwise
	m.burst = 1
	return m
}

// Observe takes count events at t (t never decreases): it closes the hours
// that ended (learning them and, once armed, adding them to the CUSUMs),
// and follows clusters, calls and the schedule.
func (m *RateModel) Observe(t time.Time, count int) {
	if count <= 0 {
		return
	}
	us, sec := t.UnixMicro(), t.Unix()
	if m.events == 0 {
		m.first, m.last, m.hourStart = sec, us, sec/3600*3600
		m.cluster = sec
	}
	m.closeHours(sec)
	scheduled := m.Scheduled()
	if m.events > 0 && m.flags&(flagFrozen|flagHoldDisp) == 0 {
		gap := float32(us-m.last) / 1e6
		m.callGap += (min(gap, 4*m.callGap+60) - m.callGap) / 32
	}
	m.hourCount += float32(count)
	if m.events > 0 && time.Duration(us-m.last)*time.Microsecond >= clusterGap {
		m.newCluster(t, count)
	} else {
		m.clusterN = uint16(min(int(m.clusterN)+count, math.MaxUint16))
		m.calls = uint16(min(int(m.calls)+1, math.MaxUint16))
		if m.clusterN > maxRunEvents && m.Scheduled() {
			// A run pings once or twice: this schedule is getting more
			// than its runs (extra pings, a retry loop). The rate model
			// takes over while the cluster lasts, so a burst can be a
			// surge; the next cluster resumes the schedule if it is on it.
			m.flags |= flagSuspended
		}
	}
	if scheduled && !m.Scheduled() && m.flags&(flagSurge|flagHoldDisp) == 0 {
		// The drop and surge CUSUMs did not run under the schedule: start
		// them afresh, not from what they held before it.
		m.up, m.dn = cusum{}, cusum{}
	}
	m.events = uint32(min(uint64(m.events)+uint64(count), math.MaxUint32))
	m.last = us
	m.flags &^= flagFrozen | flagHoldDisp
}

// Freeze stops learning while a beet is down, so an outage does not teach
// the model that silence is normal.
func (m *RateModel) Freeze() { m.flags |= flagFrozen }

// HoldDispersion keeps the dispersion index as it is while a drop or
// surge is open; the rates still learn, so a lasting new level becomes
// normal in time.
func (m *RateModel) HoldDispersion() { m.flags |= flagHoldDisp }

// Armed reports whether the model has seen enough to alarm: a week of
// events, or a confirmed schedule.
func (m *RateModel) Armed() bool {
	if m.Scheduled() {
		return true
	}
	span := m.last/1e6 - m.first
	return m.events >= armEvents && span >= int64(armAfter/time.Second) ||
		m.events >= armEventsEarly && span >= int64(armEarly/time.Second)
}

// Scheduled reports whether the beet runs on a learned schedule.
func (m *RateModel) Scheduled() bool {
	return m.flags&flagSuspended == 0 && m.period > 0 && (m.flags&flagResumed != 0 || m.confirmed())
}

// confirmed reports whether the streak of runs on the schedule confirms it.
func (m *RateModel) confirmed() bool {
	return m.streak >= scheduleStreak && (int64(m.streak)*int64(m.period) >= 86400 || m.streak == math.MaxUint8)
}

// onSchedule reports whether the beet keeps its schedule, and has for an
// hour of runs on time and nothing else (at least one run): an open surge
// or drop is over then.
func (m *RateModel) onSchedule() bool {
	return m.Scheduled() && m.streak > 0 && int64(m.streak)*int64(m.period) >= 3600
}

// Deadline returns when, with no further event, the model would alarm and
// which alarm it would be: a missed run for a schedule, else a silence or
// (when drop is true and it comes first) a drop. ok is false when no
// deadline falls within maxWalk.
func (m *RateModel) Deadline(drop bool) (due time.Time, kind string, ok bool) {
	due, kind, ok = m.deadline(drop)
	return due.Truncate(time.Microsecond), kind, ok // as stores keep it
}

func (m *RateModel) deadline(drop bool) (due time.Time, kind string, ok bool) {
	if m.Scheduled() {
		return m.NextRun().Add(m.Grace()), "missed_run", true
	}
	due, ok = m.walk(time.UnixMicro(m.last), m.silenceNeed())
	if !ok {
		due = time.UnixMicro(m.last).Add(maxWalk)
	}
	// A beet that reports every so often (counts sent in batches) is given
	// its usual gap between calls on top.
	due = due.Add(time.Duration(m.callGap) * time.Second)
	if drop {
		if t, dok := m.dropDeadline(due); dok {
			return t, "drop", true
		}
	}
	return due, "silence", ok
}

// Describe says in words what the model has learned, and how soon, after
// an event at t, a stop would be flagged.
func (m *RateModel) Describe(t time.Time) string {
	if m.Scheduled() {
		return m.describeSchedule()
	}
	busiest, busyRate := 0, float32(0)
	for b, r := range m.rate {
		if r > busyRate {
			busiest, busyRate = b, r
		}
	}
	when := "weekdays"
	if busiest >= 24 {
		when = "weekends"
	}
	words := fmt.Sprintf("about %s events a day, busiest on %s around %02d:00 (about %s an hour)",
		count(m.daily()), when, busiest%24, count(float64(busyRate)))
	if q := m.quietest(); q >= 0 && float64(m.rate[q]) < 0.5*float64(busyRate) {
		words += fmt.Sprintf(", fewest around %02d:00 (about %s an hour)", q%24, count(float64(m.rate[q])))
	}
	// The same instant Deadline would set after an event at t.
	due, ok := m.walk(t, m.silenceNeed())
	due = due.Add(time.Duration(m.callGap) * time.Second)
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

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// incidentOver reports whether an open drop or surge has ended: its
// CUSUM, capped at the alarm level while open, has fallen back to 0, or
// the beet has kept its schedule for an hour of runs (onSchedule: a
// schedule learned again, or resumed after the burst that opened the
// incident; a CUSUM that stopped with the schedule would hold for ever).
func (m *RateModel) incidentOver() bool {
	if m.onSchedule() {
		return true
	}
	if m.flags&flagSurge != 0 {
		return float64(m.up.s)+m.partial(surgeRatio) <= 0
	}
	return float64(m.dn.s)+m.partial(dropRatio) <= 0
}

// endIncident forgets the CUSUM runs after a recovery.
func (m *RateModel) endIncident() {
	m.up, m.dn = cusum{}, cusum{}
	m.flags &^= flagSurge
}

func (m *RateModel) recoveryReason(t time.Time) string {
	what := "drop"
	if m.flags&flagSurge != 0 {
		what = "surge"
	}
	if m.onSchedule() {
		return fmt.Sprintf("Back on schedule after the %s: %s.", what, m.describeSchedule())
	}
	return fmt.Sprintf("The event rate is back to normal after the %s (about %s an hour expected at %s).",
		what, count(m.rateAt(t.Unix())), t.In(m.loc).Format("15:04"))
}
