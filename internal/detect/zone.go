package detect

import (
	"cmp"
	"math"
	"slices"
	"sync"
	"time"
)

// zoneState is how the beet's traffic sits in its zone: the bucket and
// blur caches (not stored) and the evidence for following a clock change.
type zoneState struct {
	zone             zoneSpan // cache for bucket, not stored
	blurFrom, blurTo int64    // cache for blurred: its answer holds in [blurFrom, blurTo); not stored
	blurDirs         uint8
	dirs             *[]int8 // shiftDir's answers for the beet's zone (zoneShiftDirs); not stored
	shiftEv          [2]int8 // evidence for following a clock change, by direction
}

// Zones whose clock changes a job may follow while its beet is set to
// another zone (often UTC): one per distinct rule, most used first. A
// whole-hour shift of a daily schedule is followed only when one of them
// (relative to the beet's own zone) changed its clocks by that hour just
// before, so a job that simply moved is not taken for a clock change.
var dstZoneNames = []string{
	"Europe/Berlin", "Europe/London", "America/New_York", "America/Chicago",
	"America/Denver", "America/Los_Angeles", "America/Halifax", "Australia/Sydney",
	"Pacific/Auckland", "America/Santiago", "Asia/Jerusalem", "America/Havana",
}

var (
	dstZones     []*time.Location
	dstZonesOnce sync.Once
)

func candidateZones() []*time.Location {
	dstZonesOnce.Do(func() {
		for _, n := range dstZoneNames {
			if loc, err := loadLocation(n); err == nil {
				dstZones = append(dstZones, loc)
			}
		}
	})
	return dstZones
}

// dstZone returns a candidate zone whose offset, relative to loc's,
// changed between from and to by −shift (runs shift seconds later in loc
// when that zone's clocks go back an hour), or nil.
func dstZone(loc *time.Location, from, to, shift int64) *time.Location {
	change := func(z *time.Location) int64 {
		_, a := time.Unix(from, 0).In(z).Zone()
		_, b := time.Unix(to, 0).In(z).Zone()
		return int64(b - a)
	}
	own := change(loc)
	for _, z := range candidateZones() {
		if change(z)-own == -shift {
			return z
		}
	}
	return nil
}

func dstNear(loc *time.Location, from, to, shift int64) bool {
	return dstZone(loc, from, to, shift) != nil
}

// clockChange is how far the beet's own clocks moved at their change just
// before t (seconds: forward +, back −) when t is within that much after
// it, so that t's wall time was skipped that night (a run at 03:20 the
// night Berlin's clocks skip 02:00-03:00 may be a job at 02:20) or came
// round a second time; 0 otherwise.
func (m *RateModel) clockChange(t int64) int64 {
	z := zoneAt(t, m.loc)
	if z.start == math.MinInt64 || z.start == t && z.end == t+1 {
		return 0 // no change before t, or its bounds are unknown (zoneAt)
	}
	d := z.off - zoneAt(z.start-1, m.loc).off
	if d == 0 || t-z.start >= abs(d) {
		return 0
	}
	return d
}

// jumpRun reports whether a run at sec is the run of a whole-day schedule
// due k periods after the anchor prev at a wall time the beet's clocks
// skipped that night, come between the jump and the slot (slotFrom's: the
// later reading, 24 h on): cron runs such a job at the jump (03:00, the
// night Berlin's clocks skip 02:00-03:00, for a job at 02:21), systemd at
// the slot (03:21). Either is the slot's run, on time. Read as a run 21 min
// early (or, where the wall-clock reading was nearer, 20 min late: a job at
// 02:40 New York), the jump's run widened the job's spread for good: a
// job whose runs kept within a minute had 2 h 24 min of grace from then
// on, not 5 min (TestSkippedHourRunAtTheJump). It returns the slot.
func (m *RateModel) jumpRun(prev, sec, k int64) (int64, bool) {
	if int64(m.period)%86400 != 0 || m.monthly() || !m.clocksChanged(prev, sec) {
		return 0, false
	}
	w, skipped := m.wallSkipped(prev, k*int64(m.period))
	if !skipped {
		return 0, false // the wall time exists that day
	}
	slot := m.slotFrom(prev, k)
	return slot, sec < slot && m.nearJump(w, sec)
}

// clocksChanged reports whether the beet's clocks changed between prev
// and sec (the zone span localDay keeps for sec starts after prev): the
// runs' readings on the wall clock and in real time differ only then, so
// a run pays for the wall-clock reading's time.Date only then.
func (m *RateModel) clocksChanged(prev, sec int64) bool {
	m.localDay(sec)
	return prev < m.zone.start
}

// nearJump reports whether sec is within the hour from the jump of the
// beet's clocks going forward that skipped the wall time Go's time.Date
// put at w (an hour either side of the jump, by zone: 02:15 Sydney at
// 03:15 AEDT, 02:40 New York at 01:40 EST).
func (m *RateModel) nearJump(w, sec int64) bool {
	z := zoneAt(w, m.loc)
	jump := z.end
	if m.clockChange(w) > 0 {
		jump = z.start
	}
	return sec >= jump && sec < jump+3600
}

// laterClock is an hour when a candidate zone's clocks went back, relative
// to the beet's, between the latest run and slot, for a schedule of whole
// days, or once the schedule followed a change (windowFollowed) for the
// first slot of a grid every few hours (wallHours) or of a day's window
// (whose first slot the beet's own change moves before: windowClockDirs):
// a job that follows that zone's clock runs an hour later in the beet's
// that day (a Berlin job on a UTC beet, the night Berlin's clocks go
// back), and its run is waited for that much longer. A grace of a tenth
// of the day held it; a job whose runs keep within minutes has less.
func (m *RateModel) laterClock(slot time.Time) time.Duration {
	s := slot.Unix()
	switch {
	case m.wholeDays() && !m.monthly() && m.changeDirs(m.cluster, s)&(1<<shiftLater) != 0,
		m.windowStart(s) && m.windowClockDirs(m.windowDayStart(m.cluster), s)&(1<<shiftLater) != 0,
		m.daysOn&windowFollowed != 0 && m.wallHours() && m.clockDirs(m.cluster, s)&(1<<shiftLater) != 0:
		return time.Hour
	}
	return 0
}

// clockDirs is changeDirs with the beet's own clock change in (from, to]
// as a job on a clock that never changes (UTC's) sees it: an hour later
// when the beet's clocks went forward. A daily job's grace, a tenth of
// the day, holds that hour; a window's first slot, at a minute's grace,
// does not (windowClock).
func (m *RateModel) clockDirs(from, to int64) uint8 {
	return m.changeDirs(from, to) | m.ownClockDirs(from, to)
}

// ownClockDirs is the direction (bits shiftLater, shiftEarlier) in which
// the beet's own clock change in (from, to] moves a job on a clock that
// never changes (a server on UTC, the commonest other clock: a beet is
// made in its account's zone): an hour later when the beet's clocks went
// forward, earlier when they went back.
func (m *RateModel) ownClockDirs(from, to int64) uint8 {
	_, a := time.Unix(from, 0).In(m.loc).Zone()
	_, b := time.Unix(to, 0).In(m.loc).Zone()
	switch b - a {
	case 3600:
		return 1 << shiftLater
	case -3600:
		return 1 << shiftEarlier
	}
	return 0
}

// SuggestedZone returns a zone the beet's runs follow better than its own,
// when the schedule followed a whole-hour shift of its runs at a clock
// change of that zone, or the hours of a rate beet moved with it (rateZone):
// "" if none. Zones that change their clocks on the
// same day (all of the EU) cannot be told apart by the runs; the first of
// dstZoneNames is named.
func (m *RateModel) SuggestedZone() string {
	if !m.followedShift() {
		return m.rateZone()
	}
	day, shift := int64(m.shiftDay), int64(3600)
	if day < 0 {
		day, shift = -day, -3600
	}
	if z := dstZone(m.loc, (day-8)*86400, (day+1)*86400, shift); z != nil {
		return z.String()
	}
	return ""
}

// A dstChange is a clock change of a candidate zone: its instant and the
// change of the UTC offset, seconds.
type dstChange struct{ at, delta int64 }

var (
	dstChanges     []dstChange
	dstChangesOnce sync.Once
)

// candidateChanges lists the candidate zones' clock changes from 2000 to
// 2050 in time order.
func candidateChanges() []dstChange {
	dstChangesOnce.Do(func() {
		from, to := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2050, 1, 1, 0, 0, 0, 0, time.UTC)
		for _, z := range candidateZones() {
			for t := from; t.Before(to); {
				_, end := t.In(z).ZoneBounds()
				if end.IsZero() || !end.After(t) {
					break
				}
				_, a := end.Add(-time.Second).In(z).Zone()
				_, b := end.In(z).Zone()
				if a != b {
					dstChanges = append(dstChanges, dstChange{end.Unix(), int64(b - a)})
				}
				t = end
			}
		}
		slices.SortFunc(dstChanges, func(x, y dstChange) int { return cmp.Compare(x.at, y.at) })
	})
	return dstChanges
}

// Directions of a candidate clock change relative to the beet's zone, as
// bits of blurred's answer and indexes of shiftEv: traffic that follows
// the candidate's clock now comes an hour later (each hour looks like the
// one before it used to) or an hour earlier (like the one after it).
const (
	shiftLater   = 0 // the candidate's offset fell by an hour: read the rate an hour back
	shiftEarlier = 1 // it rose by an hour: read the rate an hour on
)

// shiftOffs is, by direction, where the hour a shifted traffic looks like
// lies (seconds from the hour).
var shiftOffs = [2]int64{shiftLater: -3600, shiftEarlier: 3600}

// shiftDir is the direction of the i-th candidate clock change
// (candidateChanges) relative to the beet's zone, or −1 when the beet's
// zone changed its clock the same way (or the change is not an hour).
func (m *RateModel) shiftDir(i int) int {
	if m.dirs == nil {
		m.dirs = zoneShiftDirs(m.loc)
	}
	if m.dirs == unsharedZone {
		return shiftDirIn(candidateChanges()[i], m.loc)
	}
	return int((*m.dirs)[i])
}

// shiftDirs caches shiftDir's answers per zone, for every candidate change:
// blurred asks them for each change in its span at every event (a model
// lives for one event), two zone lookups each, a twentieth of an event's
// cost. Only for the zones loadLocation hands out, one pointer per name
// (a few hundred at most, about a kilobyte each); a zone made elsewhere is
// looked up change by change (unsharedZone), so the cache cannot grow with
// its callers.
var shiftDirs sync.Map // *time.Location → *[]int8

var unsharedZone = new([]int8)

func zoneShiftDirs(loc *time.Location) *[]int8 {
	if d, ok := shiftDirs.Load(loc); ok {
		return d.(*[]int8)
	}
	if shared, ok := locations.Load(loc.String()); !ok || shared.(*time.Location) != loc {
		return unsharedZone
	}
	ch := candidateChanges()
	dirs := make([]int8, len(ch))
	for i, c := range ch {
		dirs[i] = int8(shiftDirIn(c, loc))
	}
	shiftDirs.Store(loc, &dirs)
	return &dirs
}

// shiftDirIn is shiftDir for the change ch and the zone loc.
func shiftDirIn(ch dstChange, loc *time.Location) int {
	_, a := time.Unix(ch.at-86400, 0).In(loc).Zone()
	_, b := time.Unix(ch.at+86400, 0).In(loc).Zone()
	switch ch.delta - int64(b-a) {
	case -3600:
		return shiftLater
	case 3600:
		return shiftEarlier
	}
	return -1
}

// blurred returns the directions (bits shiftLater, shiftEarlier) of the
// candidate zones' clock changes, relative to the beet's zone, within
// Params.DSTFollow before unix. The answer is cached with the span of time
// it holds for, as walks ask hour after hour.
func (m *RateModel) blurred(unix int64) uint8 {
	if unix >= m.blurFrom && unix < m.blurTo {
		return m.blurDirs
	}
	span := int64(m.p.DSTFollow / time.Second)
	ch := candidateChanges()
	i, _ := slices.BinarySearchFunc(ch, unix-span+1, func(c dstChange, t int64) int { return cmp.Compare(c.at, t) })
	// Changes in (unix-span, unix] blur unix; the answer holds until the
	// first of them leaves the span or the next one comes.
	m.blurDirs, m.blurFrom, m.blurTo = 0, unix, math.MaxInt64
	if i > 0 {
		m.blurFrom = max(unix, ch[i-1].at+span)
	}
	for j := i; j < len(ch); j++ {
		if ch[j].at > unix {
			m.blurTo = min(m.blurTo, ch[j].at)
			break
		}
		m.blurTo = min(m.blurTo, ch[j].at+span)
		if d := m.shiftDir(j); d >= 0 {
			m.blurDirs |= 1 << d
		}
	}
	return m.blurDirs
}

// following returns the directions in which the rate model follows a
// clock change at unix: those blurred whose evidence (shiftEv) has not
// ruled the shift out.
func (m *RateModel) following(unix int64) uint8 {
	return m.notRuledOut(m.blurred(unix))
}

// followedWithin returns the directions following returns at some instant
// in [from, to]: a change that comes within the span is followed from then.
func (m *RateModel) followedWithin(from, to int64) uint8 {
	dirs := m.blurred(from)
	if to >= m.blurTo { // else no change comes before blurred's answer ends
		dirs |= m.changeDirs(from, to)
	}
	return m.notRuledOut(dirs)
}

// changeDirs returns the directions (bits shiftLater, shiftEarlier) of the
// candidate zones' clock changes, relative to the beet's zone, in (from, to].
func (m *RateModel) changeDirs(from, to int64) uint8 {
	var dirs uint8
	ch := candidateChanges()
	i, _ := slices.BinarySearchFunc(ch, from+1, func(c dstChange, t int64) int { return cmp.Compare(c.at, t) })
	for ; i < len(ch) && ch[i].at <= to; i++ {
		if d := m.shiftDir(i); d >= 0 {
			dirs |= 1 << d
		}
	}
	return dirs
}

// notRuledOut is dirs less the directions whose evidence (shiftEv) ruled
// the shift out, and none for traffic with no daily shape (shaped): an
// hour of flat traffic reads about the same against its neighbour's rate,
// and an overdispersed one's lower of the two only slowed its drops.
func (m *RateModel) notRuledOut(dirs uint8) uint8 {
	if dirs == 0 || !m.shaped() {
		return 0
	}
	for d := range m.shiftEv {
		if float64(m.shiftEv[d]) <= -m.p.ShiftRuleOut*shiftEvScale {
			dirs &^= 1 << d
		}
	}
	return dirs
}

// shiftEvScale is shiftEv's unit: a quarter of a nat, in an int8.
const shiftEvScale = 4

// noteShift weighs a closed hour (count events from hour on) as evidence
// for the clock changes being followed: the log-likelihood ratio of the
// count under the rate an hour on or back (the traffic moved with the
// candidate's clock) against the rate as learned (it did not). A new
// change of a direction starts its evidence afresh, at 0: the shift is
// followed until the hours rule it out (ShiftRuleOut), so a beet whose
// traffic does follow the change is not flagged in its first hours.
func (m *RateModel) noteShift(hour int64, count float32) {
	dirs := m.blurred(hour)
	if dirs == 0 {
		return
	}
	fresh := m.changeDirs(hour-3600, hour) // changes in (hour−1h, hour]: this is the first hour after them
	for d := range m.shiftEv {
		if fresh&(1<<d) != 0 {
			m.shiftEv[d] = 0
		}
	}
	mu := float64(m.rate[m.bucket(hour)])
	if mu <= 0 || m.flags&flagFrozen != 0 {
		return // an outage's hours say nothing about the clock
	}
	nmu := m.kindDays(hour, m.bucket(hour))
	if !m.warmDays(nmu) {
		return // a rate from a count or two says nothing about a clock
	}
	r, u := m.size(), float64(m.burst)
	for d, off := range shiftOffs {
		if dirs&(1<<d) == 0 {
			continue
		}
		nb := m.bucket(hour + off)
		x, nx := float64(m.rate[nb]), m.kindDays(hour+off, nb)
		if x <= 0 || !m.warmDays(nx) {
			continue
		}
		llr := m.shiftLLR(float64(count)/u, x/u, float64(nx), mu/u, float64(nmu), r)
		ev := float64(m.shiftEv[d]) + shiftEvScale*llr
		m.shiftEv[d] = int8(math.Round(min(max(ev, math.MinInt8), math.MaxInt8)))
	}
}

// rateRange is the rate at unix and, while a clock change is followed,
// the lowest and the highest of it and the same hour's neighbour in the
// direction of the change: what a CUSUM window is read against. A surge is
// read against no less than surgeFloor of the busier neighbouring hour.
func (m *RateModel) rateRange(unix int64) (lo, hi float64) {
	b := m.bucket(unix)
	r := max(0, float64(m.rate[b]))
	lo, hi = r, r
	busiest := r
	dirs := m.following(unix)
	for d := range shiftOffs {
		nb, ok := m.neighbour(unix, d)
		if !ok {
			continue
		}
		x := float64(m.rate[nb])
		busiest = max(busiest, x)
		if dirs&(1<<d) != 0 {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	return lo, max(hi, m.surgeFloor(unix, b, busiest))
}

// surgeFloor is the least rate a surge is read against in unix's bucket b,
// seen n times: 1/(n+1) of busiest, the busier neighbouring hour's rate.
// A bucket's first hours of an overdispersed beet can teach it next to
// nothing by chance (an hour of negative-binomial size 1.5 falls under a
// tenth of its mean one time in twenty), and the next ordinary hours then
// read as a surge (up to 150 times normal): four of the six false surges on
// the tuning seed (untuned families included), all in a beet's first week.
// An hour that is that quiet is learned as such: the floor fades as its
// bucket is seen.
func (m *RateModel) surgeFloor(unix int64, b int, busiest float64) float64 {
	return busiest / (m.seen(unix, b) + 1)
}

// neighbour is the bucket of the hour shiftOffs[d] on from h, the hour a
// traffic shifted in direction d looks like, if it has been seen.
func (m *RateModel) neighbour(h int64, d int) (int, bool) {
	nb := m.bucket(h + shiftOffs[d])
	return nb, m.rate[nb] >= 0
}

// rateZone returns the candidate zone whose latest clock change the rate
// beet's hours followed, when the evidence for it (shiftEv) reaches
// Params.ShiftFollowed: "" if none.
func (m *RateModel) rateZone() string {
	if !m.shaped() {
		return ""
	}
	ch := candidateChanges()
	last := m.last / 1e6
	for d, shift := range [2]int64{3600, -3600} { // shiftLater, shiftEarlier: the runs' move in loc
		if float64(m.shiftEv[d]) < m.p.ShiftFollowed*shiftEvScale {
			continue
		}
		i, _ := slices.BinarySearchFunc(ch, last+1, func(c dstChange, t int64) int { return cmp.Compare(c.at, t) })
		for i--; i >= 0; i-- {
			if m.shiftDir(i) == d {
				if z := dstZone(m.loc, ch[i].at-86400, ch[i].at+86400, shift); z != nil {
					return z.String()
				}
				break
			}
		}
	}
	return ""
}

// dailyShape reports whether the weekday hours' learned rates differ from
// one hour to the next by more than learning them leaves of noise: the
// neighbours' squared differences, each over its variance D(a+b)/n (n the
// hours a rate learned from), make a chi-square that flat traffic keeps
// under its 0.01 quantile. Flat traffic names no clock: read against its
// neighbour's rate or its own, an hour is read at about the same rate,
// and the evidence of a move walks at random (7 of 12 flat streams of 30
// events a day named a zone: TestFlatTrafficSuggestsNoZone).
func (m *RateModel) dailyShape() bool {
	n := m.learnedHours(m.seen(m.last/1e6, 0))
	var chi2 float64
	k := 0
	for h := range 24 {
		a, b := float64(m.rate[h]), float64(m.rate[(h+1)%24])
		if a < 0 || b < 0 || a+b == 0 {
			continue
		}
		chi2 += (a - b) * (a - b) * n / (float64(m.disp) * (a + b))
		k++
	}
	if k < 12 {
		return false
	}
	// The 0.01 quantile of chi-square with k degrees of freedom
	// (Wilson-Hilferty).
	c := 1 - 2/(9*float64(k)) + 2.33*math.Sqrt(2/(9*float64(k)))
	return chi2 > float64(k)*c*c*c
}

// shiftLLR is the evidence of one hour's count c that traffic moved with
// a clock: c read against the neighbour's rate x (learned from about nx
// hours) over its own rate mu (from nmu), each as the predictive
// distribution of a rate learned from that many hours (predSize), and
// neither below half an event over those hours. Read against the rates as
// points, a young night hour learned at 0 made one event tens of nats
// (int8's whole range: a beet kept the change blurred for its three weeks,
// or ruled out one its traffic did follow; TestYoungRatesNoShiftEvidence).
func (m *RateModel) shiftLLR(c, x, nx, mu, nmu, r float64) float64 {
	x, mu = max(x, 0.5/nx), max(mu, 0.5/nmu)
	return logNB(c, x, m.predSize(r, nx, x)) - logNB(c, mu, m.predSize(r, nmu, mu))
}

// logNB is ln P(c) for a negative binomial count of mean mu and size r
// (c need not be whole: counts in burst units).
func logNB(c, mu, r float64) float64 {
	if c == 0 {
		return r * math.Log(r/(r+mu)) // the log-gammas cancel: most hours of a job's beet
	}
	a, _ := math.Lgamma(c + r)
	b, _ := math.Lgamma(r)
	f, _ := math.Lgamma(c + 1)
	return a - b - f + r*math.Log(r/(r+mu)) + c*math.Log(mu/(r+mu))
}
