package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/beethq/beet"
)

// burstState is the burst watch's: the unit of independent counts, the
// usual gap between calls, and how long the dispersion has learned.
type burstState struct {
	burst     float32 // mean calls per cluster (EWMA), ≥ 1: the unit of independent counts
	callGap   float32 // usual seconds between calls (EWMA, winsorised): a beet that reports counts every 30 min is not late at minute 10
	dispHourN uint8   // closed hours the dispersion learned from, up to dispHoursMax (dispHours)
	burstyOn  bool    // the beet is read as bursty (bursty; stored as the sign of burst)
}

// Bursts: a webhook that fires in bursts (a handful to dozens of events
// seconds apart, then nothing for minutes or hours) is a stream of
// clusters, not of events. Its hourly counts are overdispersed because
// whole bursts come or do not, and its silences are silences between
// bursts: judged in events (as for a smooth stream), every ordinary gap
// between two bursts looks like a stop, and every big burst like a surge.
//
// So the burst unit B, the mean calls per cluster (events closer than
// clusterGap), is learned apart from the rates, as a plain average over
// the first clusters and then slowly (a surge, whose events merge into
// long clusters, must not hide itself by raising B). The drop and surge
// CUSUMs (rate.go) count in units of B: a burst is one arrival. And while
// a beet is bursty (B well above what merely close single events give) the
// burst watch below leads instead of the rate watch: silence is judged in
// expected bursts, with the dispersion of burst counts the hourly counts
// show.
//
// The rate model arms early (two days) only once the dispersion has been
// learned from a day of hours: before that a bursty or overdispersed beet
// looks Poisson, and its first busy hour is a surge.

const (
	// burstSlow is the weight of a new cluster in B once burstSlow clusters
	// have been seen (before that, the plain average).
	burstSlow = 64
	// burstyFactor: a beet is bursty when B is at least this many times
	// the mean cluster that Poisson events at its busiest rate would form.
	// Negative binomial beets at 50 an hour reached B of 1.7-2 times it on
	// busy days (their hours' chance chains), bursts at 3 an hour of 1-20
	// events stay at 3-4 times it.
	burstyFactor = 2.5
	// burstyExit: a bursty beet stops being one only once B falls under
	// burstyExit times the bound. B and the busiest rate wander by a few
	// percent an hour, and a beet whose busiest hours put B at the bound
	// was read in bursts and in events by turns, its page's words with
	// them: bursts at 5 an hour of 1-20 events, 109 times in four weeks
	// (TestBurstyReadingHolds).
	burstyExit = 0.8
	// chanceFactor: a beet's clusters are chance (singles) while B is under
	// this many times chanceCluster's bound.
	chanceFactor = 1.5
	// mergedFactor: while a surge builds, a bursty beet's cluster of more
	// than mergedFactor·B calls counts as merged bursts (noteMerged).
	mergedFactor = 1.75
	// dispHoursEarly is how many hours the dispersion must have learned
	// from before the rate model may arm early.
	dispHoursEarly = 24
	// dispHoursMax saturates the count (6 bits as stored).
	dispHoursMax = 63
)

// learnBurst learns B from a cluster of calls that just ended.
func (m *RateModel) learnBurst(calls uint8) {
	if m.flags&(flagFrozen|flagHoldDisp) != 0 {
		return
	}
	if m.flags&(flagSurge|flagSuspended) == 0 && float32(calls) > 2*m.burst && m.cusumsOn() && m.surgeNow() >= sizeHoldNats {
		// A surge's events chain into long clusters: taught, they raise B
		// and hide the surge, counted in units of B (a 9-fold night hour of
		// a negative-binomial beet at 50 an hour took B from 2.5 to 4, and
		// its surge went unflagged). Held as the size is (sizeHoldNats),
		// until the surge is flagged. Not for a schedule a long cluster
		// suspended: an hourly job that bursts after every run has B of its
		// bursts, learned from them (TestScheduleExtraEventsProperty: a
		// surge per burst, held). Clusters of up to 2B calls move B little,
		// and spare most clusters' ends the surge reading.
		return
	}
	// About events/B clusters so far: the plain average at first.
	w := max(1/float32(burstSlow), min(1, m.burst/max(1, float32(m.events))))
	// Winsorised, so one huge cluster (a retry loop, a surge) moves B
	// little; early on the cap is wide enough for ordinary bursts.
	c := min(float32(calls), max(2*m.burst+1, 32))
	m.burst = max(1, m.burst+w*(c-m.burst))
}

// dispHours is how many closed hours the dispersion has learned from
// (saturating at dispHoursMax).
func (s *burstState) dispHours() int { return int(s.dispHourN) }

func (s *burstState) noteDispHours(n int) { s.dispHourN = uint8(min(dispHoursMax, s.dispHours()+n)) }

// dispersionKnown reports whether the rate model may trust its rates and
// dispersion: after a day of hours the dispersion learned from, with
// armEventsEarly/2 independent units counted in the dispersion the data
// shows (an overdispersed beet's first days say little about its hours),
// or in any case after armAfter. (The full armEventsEarly cost NAB's PFE
// series its first window, 48.2 → 42.7, for 1.8 → 1.3 false alarms per
// 1000 beet-days on negbin-50, tuning seeds.)
//
// A model that armed already keeps trusting them: one stored before the
// count of hours existed reads 0 hours, and must not stop watching.
func (m *RateModel) dispersionKnown() bool {
	return m.dispHours() >= dispHoursEarly && float32(m.events)/m.disp >= armEventsEarly/2 ||
		m.last/1e6-m.first >= int64(armAfter/time.Second) || m.armedAt != 0
}

// bursty reports whether the beet's clusters are read as bursts, as the
// latest closed hour left it (noteBursty): within an hour the CUSUMs' unit
// and the watch stay put.
func (m *RateModel) bursty() bool { return m.burstyOn }

// noteBursty decides, as hours close, whether the beet is bursty: B at
// least burstyFactor times the mean cluster Poisson events at the beet's
// busiest rate would form (e^(rate × clusterGap)), a busy smooth stream
// having long clusters too, whose silences are judged in events; once
// bursty, until B falls under burstyExit times that.
func (m *RateModel) noteBursty() {
	if m.burst < 2 {
		m.burstyOn = false // no scan of the rates: a job's hours close by the dozen
		return
	}
	bound := m.burstyLimit()
	if m.burstyOn {
		bound *= burstyExit
	}
	m.burstyOn = float64(m.burst) >= bound
}

// burstyLimit is bursty's bound on B (cached with the busiest rate).
func (m *RateModel) burstyLimit() float64 {
	if m.daily(); m.burstyBound == 0 { // m.busiest is current, its bound not yet
		m.burstyBound = burstyFactor * math.Exp(float64(m.busiest)/3600*clusterGap.Seconds())
	}
	return m.burstyBound
}

// unit is the count the drop and surge CUSUMs take as one independent
// arrival: B on a bursty beet, whose bursts come or do not as a whole, else
// 1 (overdispersed beets: B too, windows.go). A busy smooth stream's
// clusters are chance (at 200 an hour, events
// under a minute apart chain into clusters of dozens), and counting each
// as one arrival threw away all but a few percent of its evidence: a
// fivefold surge of such a stream took half an hour to flag.
func (m *RateModel) unit() float64 {
	if m.bursty() || m.overdispersed() {
		return float64(m.burst)
	}
	return 1
}

// burstDisp is the dispersion index of burst counts per hour: the hourly
// event counts' D over 2B (for compound Poisson traffic D is E[S²]/E[S],
// under 2B for burst sizes up to geometric), at least 1.
func (m *RateModel) burstDisp() float64 {
	return max(1, float64(m.disp)/(2*float64(m.burst)))
}

// burstNeed is what a silence must reach on a bursty beet: with g bursts
// a day, a per-gap false-alarm probability of goal/g, that is ln(g/goal)
// expected bursts (times their dispersion), of B events each: ln(g/goal)
// nats, one for every B·burstDisp expected events.
func (m *RateModel) burstNeed() silenceBound {
	b := float64(m.burst)
	g := math.Max(m.daily()/b, 1)
	return silenceBound{need: math.Log(g / m.p.SilenceFalseAlarms), d: m.burstDisp() * b, k: m.burstEvidence()}
}

// burstEvidence is the clusters B rests on (silenceBound's k): about
// events/B so far, at most the 2·burstSlow − 1 its EWMA holds. Cluster
// sizes vary about as much as their mean (geometric), so from n clusters
// B is known to about ±2/√n, as howSure says of a rate from n events.
func (m *RateModel) burstEvidence() float64 {
	return max(1, min(float64(m.events)/float64(max(1, m.burst)), 2*burstSlow-1))
}

// bursts is the burst watch: silence counted in bursts, and the drop
// CUSUM (in units of B, rate.go). A surge is checked at events (Surging).
type bursts struct{ m *RateModel }

func (w bursts) ready() bool { return rates(w).ready() && w.m.dispersionKnown() && w.m.bursty() }

func (w bursts) due(drop bool) (due time.Time, kind string, ok bool) {
	return w.m.dueAfter(w.m.burstNeed(), drop)
}

func (w bursts) alarm(kind string, due time.Time) *alarm {
	m := w.m
	if kind == kindDrop {
		return rates(w).alarm(kind, due)
	}
	last := time.UnixMicro(m.last)
	exp := m.Expected(last, due)
	return &alarm{kind: beet.FlipSilence, expected: exp, reason: fmt.Sprintf(
		"No event since %s (%s); about %s bursts (of about %s events each) would usually have come by now.",
		last.In(m.loc).Format("Jan 2 15:04 MST"), Duration(due.Sub(last)), count(exp/float64(m.burst)), count(float64(m.burst)))}
}

func (w bursts) describe(t time.Time) string {
	m := w.m
	total, day := m.dayWords()
	words := fmt.Sprintf("bursts of about %s events, about %s bursts %s", count(float64(m.burst)), count(total/float64(m.burst)), day)
	due, ok := m.walk(t, m.burstNeed())
	if ok {
		due = due.Add(time.Duration(m.callGap) * time.Second)
		words += "; silence at " + t.In(m.loc).Format("15:04") + " would be flagged after about " + Duration(due.Sub(t))
	}
	return words
}

// singles reports whether the beet's clusters are what single events of
// the learned rates and dispersion would form by chance, with room to
// spare: B under chanceFactor times chanceCluster's bound. Only then does
// the silence deadline read its hours as negative binomial in events
// (silenceNeed); otherwise its clusters may be bursts that bursty, which
// compares B with the busiest hour's chance cluster alone, does not see.
func (m *RateModel) singles() bool {
	return float64(m.burst) < chanceFactor*m.chanceCluster()
}

// singleCalls reports whether the beet's calls carry single events, as
// its latest cluster's did (at most one and a half events a call): a beet
// that sends counts (NAB's elb_request_count, about 60 requests a call
// every 5 minutes) is silent between calls whatever its events, and read
// as negative-binomial events, 3 minutes after a call made a silence (4
// false silences in its 4032 rows).
func (m *RateModel) singleCalls() bool {
	return 2*int(m.clusterN) <= 3*max(1, int(m.calls))
}

// chanceCluster bounds from above the mean cluster (calls closer than
// clusterGap g) that single events would form at the learned rates,
// clusters counted over the whole week: at λ an hour, a cluster of Poisson
// events holds e^(λg) on average, so over the hours, clusters counted as
// they come, at most e^(g·λw) for λw the rate weighted by events, Σλ²/Σλ
// (Jensen). Events that share an hour's level cluster more: for hours
// negative binomial of size R in events, e^(g·λw·(1 + 1/R)) at most, with
// 1/R = 1/r + (u−1)/λ from the learned size r in units u.
//
// B, learned over about burstSlow clusters, leans on the latest hours:
// on negative-binomial beets at 50 an hour it rose to up to 2.4 times this
// bound at times (their busiest hours: read in units of B then, the safe
// side), and ended under 1.5 of it (tuning seed, 24 clean beets), while
// bursts at 3 an hour of 1-20 events stayed at 3-6 times it once armed.
// Such a beet whose busiest hours bring 90 events is not bursty (B 10.5
// under burstyFactor·e^1.5).
func (m *RateModel) chanceCluster() float64 {
	var s1, s2 float64
	for b, r := range m.rate {
		if r <= 0 {
			continue
		}
		w := 5.0 // weekday hours, five days of seven
		if b >= 24 {
			w = 2
		}
		s1 += w * float64(r)
		s2 += w * float64(r) * float64(r)
	}
	if s1 == 0 {
		return 1
	}
	lw := s2/s1*(1+1/m.size()) + m.unit() - 1
	return math.Exp(lw / 3600 * clusterGap.Seconds())
}

// Counting bursts. A bursty beet's drop CUSUM counts the clusters that
// start in a window (winBursts), one arrival each, against the learned
// burst rate (rate/B: B is calls per cluster, so that is clusters an
// hour), as the yardstick CUSUM counts a bursty source's arrivals: its
// events over B vary with the bursts' sizes too, noise the count of bursts
// does not have (bursts of 1-20 events: hourly events over B vary 1.3
// times as much as the bursts, about 30% less evidence an hour). Its
// drops alarm at the level of a beet read as Poisson (dropLevel).
//
// Its surge CUSUM counts bursts too, unless its bursts are overdispersed
// (surgeBursts). In a surge bursts come minutes apart and clusters merge
// (at 12 bursts an hour of 1-20 events 5 s apart, about a third of them):
// counted as one each, the tuning seed's bursty surges were found 12% of
// the times the yardstick found them, 58% in events over B. So while a
// surge builds a cluster of more than mergedFactor·B calls counts as
// merged bursts (noteMerged): on the tuning seed's 168 streams of bursts
// at 3 an hour, drops and surges found 25 -> 28 of the yardstick's 40
// (surges 67% -> 86% of the detectable), as many false alarms (at 1.5·B:
// 29, six times as many false surges; at 2·B: 27). A drop makes merging
// rarer: its count of clusters errs on the safe side, and without surge
// evidence a long cluster is one burst.
//
// The learned size r is of hourly counts in units of B: for bursts of
// Poisson arrival, of sizes of coefficient of variation v, 1/r holds v²/λ
// (λ bursts an hour) beside the hours' own level (1/r_lvl). Clusters of
// calls vary in size about as much as a geometric distribution at most,
// v² ≤ 1 − 1/B (burstDisp takes D ≤ 2B of the same bound), so the count
// of bursts is read with size 1/(1/r − (1 − 1/B)/λ) (burstSize), at least
// r (bursts whose sizes vary less leave more of 1/r, on the safe side) and
// at most 1000 (Poisson).

// countsBursts reports whether the drop CUSUM counts bursts (bursty beets).
func (m *RateModel) countsBursts() bool { return m.bursty() }

// surgeBursts reports whether the surge CUSUM counts bursts: on a bursty
// beet whose bursts come as a Poisson process. One whose bursts are
// overdispersed (burstDisp, the only way a bursty beet is overdispersed)
// is read in whole hours of events over B, as NAB's series and negative
// binomial beets are. A single scan of the rates: this is asked at events.
func (m *RateModel) surgeBursts() bool { return m.countsBursts() && m.burstDisp() < windowDisp }

// noteMerged counts one burst more in the open window for every B calls
// the latest cluster (calls so far) holds past mergedFactor·B, while the
// surge CUSUM holds evidence on a beet whose surges count bursts: such a
// cluster is bursts merged, minutes apart in a surge.
func (m *RateModel) noteMerged() {
	if m.up.s <= 0 {
		return
	}
	b := float64(m.burst)
	over := float64(m.calls) - mergedFactor*b
	if over <= 0 || math.Mod(over, b) >= 1 || !m.surgeBursts() {
		return // calls grow one at a time: one of every B past the mark counts
	}
	m.winBursts = min(m.winBursts+1, math.MaxUint8)
}

// dropCount is a window's count for the drop CUSUM, in units u (unit): its
// bursts on a bursty beet, else its events over u. The surge CUSUM takes
// it too where it counts bursts (surgeBursts).
func (m *RateModel) dropCount(events, bursts, u float64) float64 {
	if u > 1 && m.countsBursts() {
		return bursts
	}
	return events / u
}

// dropSize is the size of an hour's drop count (dropCount) of mean mu
// units, r the learned size of hourly counts in units.
func (m *RateModel) dropSize(r, mu float64) float64 {
	if !m.countsBursts() {
		return r
	}
	return burstSize(r, mu, float64(m.burst))
}

// burstSize is the size of an hour's count of bursts of b calls on
// average, mu expected, r the size of its calls over b.
func burstSize(r, mu, b float64) float64 {
	if b <= 1 || mu <= 0 {
		return r
	}
	inv := 1/r - (1-1/b)/mu
	return min(1000, 1/max(inv, 1e-3))
}
