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

// The drop and surge CUSUMs run over hours: counts within one hour share
// that hour's level (a busy hour is busy throughout), so an hour is one
// observation, negative binomial with size r around its learned mean.
// Each CUSUM holds its value at the start of the open hour; the open
// hour's events so far are added when it is read (partial).

// nbLLR is the log-likelihood ratio of c events where mu were expected, for
// a rate ratio rho against normal, when an hour's count is negative
// binomial with size r (Poisson as r grows).
func nbLLR(rho, c, mu, r float64) float64 {
	return c*math.Log(rho*(mu+r)/(rho*mu+r)) + r*math.Log((mu+r)/(rho*mu+r))
}

// size is the negative-binomial size r of hourly counts, in [0.5, 1000].
func (m *RateModel) size() float64 {
	if m.nbNum <= 0 {
		return 1000
	}
	return min(1000, max(0.5, float64(m.nbDen/m.nbNum)))
}

// cusumsOn reports whether the drop and surge CUSUMs run: on the rate
// model, and while a drop or surge is open (a schedule suspended by a
// burst and resumed in between must not lose the burst's evidence).
func (m *RateModel) cusumsOn() bool {
	return m.Armed() && (!m.Scheduled() || m.flags&(flagSurge|flagHoldDisp) != 0)
}

// closeCUSUMs adds a finished hour (count events, mu expected) to both CUSUMs.
func (m *RateModel) closeCUSUMs(hour int64, count, mu float64) {
	r, u := m.size(), float64(m.burst)
	count, mu = count/u, mu/u
	m.up.close(hour, nbLLR(surgeRatio, count, mu, r), count*u, mu*u)
	m.dn.close(hour, nbLLR(dropRatio, count, mu, r), count*u, mu*u)
	if m.flags&flagSurge != 0 {
		m.up.s = min(m.up.s, surgeAlarm) // hysteresis: recovery is a fall from the alarm level to 0
	}
	if m.flags&flagHoldDisp != 0 && m.flags&flagSurge == 0 {
		m.dn.s = min(m.dn.s, dropAlarm) // a drop is open
	}
}

func (c *cusum) close(hour int64, x, count, mu float64) {
	if c.s <= 0 {
		*c = cusum{start: uint32(hour)}
	}
	c.s += float32(x)
	c.obs += float32(count)
	c.exp += float32(mu)
	if c.s <= 0 {
		*c = cusum{}
	}
}

// partial is the open hour's contribution to a CUSUM at the last event.
func (m *RateModel) partial(rho float64) float64 {
	if m.rate[m.bucket(m.hourStart)] < 0 {
		return 0 // an hour of the week not seen yet: no evidence either way
	}
	// Events that would usually come with the next call count as expected
	// already, so a count sent in one batch is not a surge of its own.
	end := min(m.hourStart+3600, m.last/1e6+int64(m.callGap))
	mu := m.Expected(time.Unix(m.hourStart, 0), time.Unix(end, 0))
	u := float64(m.burst)
	return nbLLR(rho, float64(m.hourCount)/u, mu/u, m.size())
}

// Surging reports whether the surge CUSUM has reached its alarm.
func (m *RateModel) Surging() bool {
	return float64(m.up.s)+m.partial(surgeRatio) >= surgeAlarm
}

// dropDeadline returns when, with no further event, the drop CUSUM would
// reach its alarm, if before until.
func (m *RateModel) dropDeadline(until time.Time) (time.Time, bool) {
	r, u := m.size(), float64(m.burst)
	s := float64(m.dn.s)
	c := float64(m.hourCount) / u
	from := time.UnixMicro(m.last)
	if s >= dropAlarm {
		return from, true // closed hours crossed it already
	}
	// A drop is due one usual gap between calls after the statistic crosses.
	lag := time.Duration(m.callGap) * time.Second
	for h := m.hourStart; h < until.Unix(); h += 3600 {
		raw := m.rate[m.bucket(h)]
		if raw < 0 {
			s, c = max(0, s), 0 // an hour not seen yet: no evidence
			continue
		}
		rate := float64(raw) / u
		hour := time.Unix(h, 0)
		full := s + nbLLR(dropRatio, c, rate, r)
		if full >= dropAlarm && rate > 0 {
			var mu float64
			if c == 0 {
				// r·ln((µ+r)/(ρµ+r)) = need, solved for µ.
				k := math.Exp((dropAlarm - s) / r)
				mu = r * (k - 1) / (1 - k*dropRatio)
			} else {
				lo, hi := 0.0, rate
				for range 40 {
					mid := (lo + hi) / 2
					if s+nbLLR(dropRatio, c, mid, r) >= dropAlarm {
						hi = mid
					} else {
						lo = mid
					}
				}
				mu = hi
			}
			t := hour.Add(time.Duration(mu/rate*float64(time.Hour)) + lag)
			if t.Before(from) {
				t = from
			}
			return t, t.Before(until)
		}
		s, c = max(0, full), 0
	}
	return time.Time{}, false
}

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

// silenceNeed is the expected events a silence must reach: with about g
// independent gaps a day, a per-gap false-alarm probability of goal/g
// keeps false alarms near goal a day. For Poisson events that is ln(g/goal)
// expected events; for overdispersed counts, D times that (a conservative
// bound: a zero count is at least exp(−mean/D) likely).
func (m *RateModel) silenceNeed() float64 {
	d := float64(m.disp)
	g := math.Max(m.daily()/d, 1)
	return math.Log(g/falseAlarmsGoal) * d
}

// walk returns the instant after from at which the expected events reach need.
func (m *RateModel) walk(from time.Time, need float64) (time.Time, bool) {
	const hourUs = int64(time.Hour / time.Microsecond)
	us := from.UnixMicro()
	end := us + int64(maxWalk/time.Microsecond)
	acc := 0.0
	for us < end {
		hourEnd := (us/hourUs + 1) * hourUs
		r := m.rateAt(us / 1e6)
		span := float64(hourEnd-us) / float64(hourUs)
		if r > 0 && acc+r*span >= need {
			return time.UnixMicro(us + int64((need-acc)/r*float64(hourUs))), true
		}
		acc += r * span
		us = hourEnd
	}
	return time.Time{}, false
}

// Expected returns the events the model expected between a and b. The
// dashboard draws its expected band from it.
func (m *RateModel) Expected(a, b time.Time) float64 {
	const hourUs = int64(time.Hour / time.Microsecond)
	acc := 0.0
	end := b.UnixMicro()
	for us := a.UnixMicro(); us < end; {
		hourEnd := min((us/hourUs+1)*hourUs, end)
		acc += m.rateAt(us/1e6) * float64(hourEnd-us) / float64(hourUs)
		us = hourEnd
	}
	return acc
}

func (m *RateModel) rateAt(unix int64) float64 { return max(0, float64(m.rate[m.bucket(unix)])) }

// daily is the expected events in an average day.
func (m *RateModel) daily() float64 {
	s := 0.0
	for b := range 24 {
		s += (5*max(0, float64(m.rate[b])) + 2*max(0, float64(m.rate[24+b]))) / 7
	}
	return s
}

// closeHours finishes every hour that ended by now, teaching each bucket
// its count (zero for silent hours).
func (m *RateModel) closeHours(now int64) {
	if now-m.hourStart > int64(maxWalk/time.Second) {
		m.hourStart = now / 3600 * 3600 // after a very long gap, start afresh
		m.hourCount = 0
		return
	}
	for m.hourStart+3600 <= now {
		m.learn(m.hourStart, m.hourCount)
		m.hourStart += 3600
		m.hourCount = 0
	}
}

func (m *RateModel) learn(hour int64, count float32) {
	b := m.bucket(hour)
	mu := m.rate[b]
	if mu >= 0 && m.cusumsOn() {
		m.closeCUSUMs(hour, float64(count), float64(mu))
	}
	if m.flags&flagFrozen != 0 {
		return
	}
	if mu < 0 {
		m.setRate(b, count) // the first of its kind
		return
	}
	// How often this bucket has been seen, from the days since the first
	// event: the learning rate is the plain average at first.
	days := float32(hour-m.first) / 86400
	n := 1 + days*5/7
	if b >= 24 {
		n = 1 + days*2/7
	}
	d := m.disp
	if n > 1.5 && mu > 0.2 && m.flags&flagHoldDisp == 0 {
		// Winsorise, so one wild hour moves neither the rate nor D much.
		count = min(count, mu+6*float32(math.Sqrt(float64(d*mu)))+3)
		x := (count - mu) * (count - mu)
		w := max(0.03, 2/(2+float32(hour-m.first)/3600)) // faster in the first days
		m.disp = min(maxDisp, max(1, (1-w)*d+w*x/mu))
		m.nbNum = (1-w)*m.nbNum + w*(x-m.burst*mu)
		m.nbDen = (1-w)*m.nbDen + w*mu*mu
	}
	a := max(1/n, minLearnRate)
	m.setRate(b, mu+a*(count-mu))
}

// setRate sets a bucket's rate as it will be stored, so that a model
// behaves the same whether or not it was encoded in between.
func (m *RateModel) setRate(b int, r float32) {
	m.q[b] = encodeRate(r)
	m.rate[b] = decodeRate(m.q[b])
}

// bucket maps an instant to its local hour of day, weekdays 0-23, weekend
// 24-47. The zone's offset is cached with the span it holds for, since
// walks ask hour after hour.
func (m *RateModel) bucket(unix int64) int {
	if unix < m.zone.start || unix >= m.zone.end {
		m.zone = zoneAt(unix, m.loc)
	}
	local := unix + m.zone.off
	day := local / 86400
	if local < 0 && local%86400 != 0 {
		day--
	}
	b := int((local - day*86400) / 3600)
	if wd := ((day+4)%7 + 7) % 7; wd == 6 || wd == 0 { // 1970-01-01 was a Thursday (4)
		b += 24 // Saturday or Sunday
	}
	return b
}

// zoneSpan is a zone offset and the span [start, end) of Unix seconds it
// holds for.
type zoneSpan struct{ off, start, end int64 }

func zoneAt(unix int64, loc *time.Location) zoneSpan {
	t := time.Unix(unix, 0).In(loc)
	_, off := t.Zone()
	z := zoneSpan{off: int64(off), start: math.MinInt64, end: math.MaxInt64}
	s, e := t.ZoneBounds()
	if !s.IsZero() {
		z.start = s.Unix()
	}
	if !e.IsZero() {
		z.end = e.Unix()
	}
	if unix < z.start || unix >= z.end {
		// Time.ZoneBounds can miss the instant at the end of leap years
		// (golang/go#81583): cache nothing then.
		z.start, z.end = unix, unix+1
	}
	return z
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

func (m *RateModel) quietest() int {
	q := -1
	for b := range 24 { // weekdays: the common case
		if m.rate[b] >= 0 && (q < 0 || m.rate[b] < m.rate[q]) {
			q = b
		}
	}
	return q
}

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

func (m *RateModel) surgeReason(t time.Time) string {
	since, obs, exp := m.surgeRun()
	return fmt.Sprintf("Surge: %.0f events since %s (%s), where about %s were expected (%.1f× normal).",
		obs, since.In(m.loc).Format("Jan 2 15:04 MST"), Duration(t.Sub(since)), count(exp), obs/max(exp, 1e-9))
}

// surgeRun is the surge CUSUM's run up to the last event: its start, the
// events seen and the events expected (the open hour included).
func (m *RateModel) surgeRun() (since time.Time, obs, exp float64) {
	since = time.Unix(m.hourStart, 0)
	if m.up.s > 0 {
		since = time.Unix(int64(m.up.start), 0)
	}
	end := min(m.hourStart+3600, m.last/1e6+int64(m.callGap))
	exp = float64(m.up.exp) + m.Expected(time.Unix(m.hourStart, 0), time.Unix(end, 0))
	return since, float64(m.up.obs + m.hourCount), exp
}

// The drop and surge CUSUMs test normal against these rate ratios and
// alarm when the log-likelihood ratio reaches their thresholds; set with
// bench/detect for at most 1 false alarm per 1000 beet-days on every
// synthetic family (DETECTION.md).
const (
	dropRatio  = 0.2
	surgeRatio = 3.0
	dropAlarm  = 20.0
	surgeAlarm = 14.0
)
