package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/beethq/beet"
)

// rateState is the rate model's: expected events per hour by local hour
// of day, weekdays and weekends apart, the dispersion of hourly counts,
// the open hour, and the CUSUMs for surges and drops.
type rateState struct {
	rate  [48]float32 // expected events per hour per bucket; < 0: never seen (always what q decodes to)
	q     [48]uint16  // rate as stored (codec.go)
	disp  float32     // dispersion index D of hourly counts, in [1, maxDisp]
	nbNum float32     // EWMA of (count − mean)² − mean over hours …
	nbDen float32     // … and of mean²: their ratio estimates 1/r, r the negative-binomial size

	hourStart int64   // Unix seconds of the open hour (absolute hours, so DST is exact); not stored: the last event's hour
	hourCount float32 // events in the open hour
	winStart  int64   // Unix seconds of the CUSUMs' open window (window.go); not stored: the last event's window
	winBase   float32 // events of the open hour before the open window (quantBase)
	winN      uint8   // windows in the open hour (1, 2, 3 or 6), set when it opens
	winBursts uint8   // clusters started in the open window (at most 60 an hour: they are a minute apart)

	up, dn cusum // surge and drop

	dropOpen bool // the beet's open alarm is a drop: its silences are read at the level since (dropShare); not stored

	dailySum    float64 // daily's answer while dailyOK (a cache; not stored)
	busiest     float32 // the busiest bucket's rate while dailyOK (the same cache) …
	burstyBound float64 // … and bursty's bound from it, once asked (0: not yet)
	shape       int8    // dailyShape's answer while dailyOK, once asked (0: not yet, 1: no, 2: yes)
	dailyOK     bool
}

// The rate model's flags (lifeState.flags).
const (
	flagFrozen   = 1 << 0 // an incident is open: hours teach nothing
	flagSurge    = 1 << 1 // a surge alarm is open
	flagHoldDisp = 1 << 2 // a drop or surge is open: the dispersion learns nothing
)

// The drop and surge CUSUMs run over windows of an hour (window.go):
// counts within one hour share that hour's level (a busy hour is busy
// throughout), so an hour's count is negative binomial with size r around
// its learned mean, and each of its windows is taken as negative binomial
// with size r/k (k windows an hour), which keeps the hour's variance. Each
// CUSUM holds its value at the start of the open window; the open window's
// events so far are added when it is read (partial).

// nbLLR is the log-likelihood ratio of c events where mu were expected, for
// a rate ratio rho against normal, when an hour's count is negative
// binomial with size r (Poisson as r grows).
func nbLLR(rho, c, mu, r float64) float64 {
	l := r * math.Log((mu+r)/(rho*mu+r))
	if c == 0 {
		return l // one logarithm fewer: the drop deadline's hours with no event
	}
	return c*math.Log(rho*(mu+r)/(rho*mu+r)) + l
}

// sizeAt is the size of the predictive distribution of the count of the
// hour from unix, mu expected (in burst units): the learned rate of an
// hour bucket seen n times is itself uncertain, by about a 1/n-th of a
// count's variance (an EWMA of weight a holds as much as (2−a)/a
// samples), so the count's variance is (1 + 1/n)(mu + mu²/r). Early on,
// when a bucket has been seen once or twice, the drop and surge tests ask
// for that much more evidence. With bursts, of the count the drop CUSUM
// takes (dropCount: a bursty beet's bursts).
func (m *RateModel) sizeAt(unix int64, mu float64, bursts bool) float64 {
	r := m.size()
	if bursts {
		r = m.dropSize(r, mu)
	}
	return m.predSize(r, m.seen(unix, m.bucket(unix)), mu)
}

// dropSizeAt is sizeAt for the drop CUSUM, whose hours are counted as
// bursts (dropCount) and read at the day's level, with what is left of
// the days' variance once the day's hours have taught it (levelSize).
func (m *RateModel) dropSizeAt(unix int64, mu float64) float64 {
	return m.dropSizeOf(unix, m.size(), m.seen(unix, m.bucket(unix)), mu)
}

// dropSizeOf is dropSizeAt for a caller that has the size r and the
// bucket's times seen n already (the drop deadline, hour after hour).
func (m *RateModel) dropSizeOf(unix int64, r, n, mu float64) float64 {
	return m.predSize(m.dropSize(m.levelSize(unix, r), mu), n, mu)
}

// predSize is sizeAt for a bucket seen n times, r the size of counts.
func (m *RateModel) predSize(r, n, mu float64) float64 {
	n = m.learnedHours(n)
	return max(0.5, 1/((1+1/n)/r+1/(n*max(mu, 1e-9))))
}

// learnedHours is how many hours a bucket seen n times has learned its
// rate from: n, at least 1, at most the (2−a)/a an EWMA of weight a holds.
func (m *RateModel) learnedHours(n float64) float64 {
	a := m.p.MinLearnRate
	return max(1, min(n, (2-a)/a))
}

// seen is about how often the hour bucket b of unix has been seen, from
// the days since the first event (as learn counts it).
func (m *RateModel) seen(unix int64, b int) float64 {
	days := float64(unix-m.first) / 86400
	if b >= 24 {
		return 1 + days*2/7
	}
	return 1 + days*5/7
}

// dropWarm reports whether the hour from unix has been seen
// Params.WarmSamples times on days of its kind, not only by seen's
// estimate: a drop is tested against a bucket's learned rate, and on the
// first Monday of a beet that began on a Thursday evening the weekday
// night hours are one Friday's (NAB's IBM tweets: a busy Friday night,
// then a usual Monday night read as a drop). Surges keep seen's estimate,
// discounted by young: a first week's surges are what early windows find.
func (m *RateModel) dropWarm(unix int64) bool {
	return m.warmDays(m.kindDays(unix, m.bucket(unix)))
}

// warmDays reports whether a bucket whose hours closed n times since the
// first event (kindDays) has been seen Params.WarmSamples times.
func (m *RateModel) warmDays(n int64) bool { return 1+float64(n) >= m.p.WarmSamples }

// kindDays counts the hours of bucket b (of unix, just mapped by bucket)
// closed since the first event: local days of b's kind from the first
// event's day to unix's, the first day's only if its hour came after it.
func (m *RateModel) kindDays(unix int64, b int) int64 {
	off := m.zone.off // the zone of unix; a clock change between shifts the first day by an hour
	fd, ud := floorDay(m.first+off), floorDay(unix+off)
	n := weekdaysBefore(ud) - weekdaysBefore(fd)
	if b >= 24 {
		n = (ud - fd) - n
	}
	first := m.first + off - fd*86400
	if wd := ((fd+4)%7 + 7) % 7; (wd == 6 || wd == 0) == (b >= 24) && first > int64(b%24)*3600 {
		n-- // the first day's hour b came before the first event
	}
	return max(0, n)
}

func floorDay(t int64) int64 { return floorDiv(t, 86400) }

// weekdaysBefore counts Monday-Friday days before day d (days since
// 1970-01-01, a Thursday), from a Monday far enough back.
func weekdaysBefore(d int64) int64 {
	d += 3 + 7*1e6 // day 0 a Monday, and positive
	n := d / 7 * 5
	return n + min(d%7, 5)
}

// warm reports whether the drop and surge tests take the hour from unix
// as evidence: its bucket has been seen Params.WarmSamples times, so its
// rate is more than one hour's count and the dispersion has been learned
// for a while (hours not seen that often count as not seen at all).
func (m *RateModel) warm(unix int64) bool {
	b := m.bucket(unix)
	return m.rate[b] >= 0 && m.seen(unix, b) >= m.p.WarmSamples
}

// sizeCapFloor keeps Params.SizeCap from freezing a near-Poisson beet's
// size: its 1/r is near 0, and may grow by SizeCap/sizeCapFloor·w an hour.
const sizeCapFloor = 20.0

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
	return m.finer() != nil && (!m.Scheduled() || m.flags&(flagSurge|flagHoldDisp) != 0)
}

// closeWindow adds a finished window from start, one of n in its hour
// (count events, lo to hi expected per hour: a range only after a clock
// change, rateRange), to both CUSUMs.
func (m *RateModel) closeWindow(start, n int64, count, bursts, lo, hi float64) {
	u, k := m.unit(), 1/float64(n)
	c, end := count/u, start+3600/n
	inBursts := u > 1 && m.surgeBursts() // burst.go
	if inBursts {
		c = bursts
	}
	mu, r := k*hi/u, k*m.sizeAt(start, hi/u, inBursts)
	m.up.close(start, end, m.surgeHeld(m.young(start, nbLLR(m.p.SurgeRatio, c, mu, r)), c, mu, r), count, m.surgeDecay(n))
	m.noteCalm(end)
	if m.dropWarm(start) {
		kd := k * float64(end-m.dropFrom(start, end)) / float64(end-start)
		m.dn.close(start, end, nbLLR(m.p.DropRatio, m.dropCount(count, bursts, u), kd*lo/u, kd*m.dropSizeAt(start, lo/u)), count, 1)
	}
	if m.flags&flagSurge != 0 {
		m.up.s = min(m.up.s, float32(m.surgeLevel(n))) // hysteresis: recovery is a fall from the alarm level to 0
	}
	if m.flags&flagHoldDisp != 0 {
		m.dn.s = min(m.dn.s, float32(m.dropLevel(n))) // a drop is open, or a surge that fell below normal (surgeOver)
	}
}

// dropFrom is where the drop CUSUM reads the window [start, end) from:
// its start, or, when the beet recovered from a silence inside it
// (calmAfterSilence), the first event back. The silent part was the
// outage, flagged already; read afresh, a 200-an-hour beet's first event
// back was "Only 1 event since 01:30 (7 min), where about 25 were
// expected", a drop 16 s after its recovery (TestNoDropRightAfterOutage).
func (m *RateModel) dropFrom(start, end int64) int64 {
	if calm := int64(m.dn.start); m.dn.s <= 0 && calm > start && calm < end {
		return calm
	}
	return start
}

// calmAfterSilence starts the drop CUSUM afresh at back, the first event
// after a flagged silence: the open window is read from there
// (dropFrom) until it closes.
func (m *RateModel) calmAfterSilence(back int64) { m.dn = cusum{start: uint32(back)} }

// surgeDecay is what a closed window, one of n in its hour, leaves of the
// surge CUSUM: Params.SurgeDecay an hour, 1 (none) when unset or out of
// range.
func (m *RateModel) surgeDecay(n int64) float64 {
	d := m.p.SurgeDecay
	if d <= 0 || d >= 1 {
		return 1
	}
	switch n { // the n-th root, without a Pow per window
	case 2:
		return math.Sqrt(d)
	case 3:
		return math.Cbrt(d)
	case 6:
		return math.Sqrt(math.Cbrt(d))
	}
	return d
}

// young discounts surge evidence x from the hour at unix while its bucket
// has been seen fewer than Params.SurgeYoung times (Params.SurgeYoung).
func (m *RateModel) young(unix int64, x float64) float64 {
	if x <= 0 || m.p.SurgeYoung <= 0 {
		return x
	}
	return x * min(1, m.seen(unix, m.bucket(unix))/m.p.SurgeYoung)
}

// close adds a finished window's evidence x to the CUSUM, after keeping
// decay of what it held.
func (c *cusum) close(start, end int64, x, count, decay float64) {
	calm := uint32(end) // at 0 from this window's end …
	if c.s <= 0 {
		calm = uint32(start) // … or from before it
		if c.start != 0 {
			calm = c.start
		}
		*c = cusum{start: uint32(start)}
	}
	c.s = float32(decay)*c.s + float32(x)
	c.obs = quantCount(c.obs + float32(count))
	if c.s <= 0 {
		*c = cusum{start: calm}
	}
}

// partial is the open window's contribution to a CUSUM at the last event.
func (m *RateModel) partial(rho float64) float64 {
	if !m.warm(m.hourStart) || rho < 1 && !m.dropWarm(m.hourStart) {
		return 0 // an hour of the week not seen (often enough) yet: no evidence either way
	}
	// Events that would usually come with the next call count as expected
	// already, so a count sent in one batch is not a surge of its own. Not
	// for a surge not yet open on a beet whose calls are single events
	// counted one by one (unit 1): its next call brings one, and at 2 an
	// hour the half hour's events counted ahead held its surges back by up
	// to an hour. (An open surge keeps them: its end, surgeOver, is read
	// at the first event of a window too.)
	n := int64(m.winN)
	gap := int64(m.callGap)
	if rho > 1 && m.flags&flagSurge == 0 && m.unit() == 1 && m.singleCalls() {
		gap = 0
	}
	end := min(m.winStart+3600/n, m.last/1e6+gap)
	lo, hi := m.levelRange(m.hourStart)
	// A drop is tested against the lowest rate a clock change allows, a
	// surge against the highest.
	mu := lo
	if rho > 1 {
		mu = hi
	}
	u := m.unit()
	bursts := rho < 1 || u > 1 && m.surgeBursts() // counted as the drop CUSUM counts (burst.go)
	var r float64                                 // the whole window's, as dropDeadline takes it
	from := m.winStart
	if rho < 1 {
		from = m.dropFrom(m.winStart, m.winStart+3600/n)
		r = m.dropSizeAt(m.hourStart, mu/u) * float64(m.winStart+3600/n-from) / 3600
	} else {
		r = m.sizeAt(m.hourStart, mu/u, bursts) / float64(n)
	}
	mu *= float64(max(0, end-from)) / 3600
	c := m.winCount() / u
	if bursts {
		c = m.dropCount(m.winCount(), float64(m.winBursts), u)
	}
	x := nbLLR(rho, c, mu/u, r)
	if rho > 1 {
		x = m.young(m.hourStart, x)
	}
	return x
}

// Surging reports whether the surge CUSUM has reached its alarm.
func (m *RateModel) Surging() bool {
	n := int64(m.winN)
	x := m.surgeNow()
	if x < alarmLevel(m.p.SurgeAlarm-max(0, m.p.SurgeSlowCut)-max(0, m.p.SurgeSmoothCut), n) {
		return false // below the lowest level a slow or smooth beet may have: no need to ask
	}
	return x >= m.surgeLevel(n)
}

// surgeNow is the surge CUSUM's value at the last event: what the closed
// windows left of it and the open window's evidence so far.
func (m *RateModel) surgeNow() float64 {
	return m.surgeDecay(int64(m.winN))*float64(m.up.s) + m.partial(m.p.SurgeRatio)
}

// dropDeadline returns when, with no further event, the drop CUSUM would
// reach its alarm, if before until: window by window through the open
// hour, then hour by hour (hours with no event add up: an hour's evidence
// is the sum of its windows'). Like a silence (walk), the hours to come are
// read under each reading a followed clock change leaves open, held
// throughout, and the latest crossing taken: against the lower of each
// pair a beet of 12 events a day whose traffic fell to a fifth was flagged
// after a median of 38 h, not 34 (TestSlowDropDeadlineUnderClockChange).
func (m *RateModel) dropDeadline(until time.Time) (time.Time, bool) {
	return m.latestReading(m.last/1e6, until.Unix(), func(d int) (time.Time, bool) { return m.dropDeadlineAs(until, d) })
}

// dropDeadlineAs is dropDeadline under one reading (readingBucket).
func (m *RateModel) dropDeadlineAs(until time.Time, d int) (time.Time, bool) {
	r0, u := m.size(), m.unit()
	dropRatio := m.p.DropRatio
	s := float64(m.dn.s)
	c := m.dropCount(m.winCount(), float64(m.winBursts), u)
	from := time.UnixMicro(m.last)
	level := m.dropLevel(1) // + ln n for an hour of n windows (alarmLevel)
	if s >= alarmLevel(level, int64(m.winN)) {
		return from, true // closed windows crossed it already
	}
	// A drop is due when the statistic crosses, and not before one usual
	// gap between calls after the last call: a beet that sends counts every
	// 30 minutes has sent nothing yet for the minutes since. The statistic
	// already counts the calls that did not come after that: the gap added
	// on top of every crossing would flag a Poisson beet of a few events an
	// hour (a gap of 10-30 minutes) that much later.
	lag := time.Duration(m.callGap) * time.Second
	for w := m.winStart; w < until.Unix(); {
		h := w / 3600 * 3600
		b := m.bucket(h)
		n := m.seen(h, b)
		if m.rate[b] < 0 || n < m.p.WarmSamples || !m.dropWarm(h) {
			s, c = max(0, s), 0 // an hour not seen (often enough) yet: no evidence (warm)
			w = h + 3600
			continue
		}
		windows := int64(m.winN)
		if h != m.hourStart {
			windows = m.windows(h) // as the hour would open
		}
		dropAlarm := alarmLevel(level, windows)
		x := max(0, float64(m.rate[m.readingBucket(h, b, d)]))
		rate := m.levelAt(h) * x / u // the day's level (daylevel.go)
		size := m.dropSizeOf(h, r0, n, rate)
		for hourEnd := h + 3600; w < hourEnd && w < until.Unix(); {
			span := hourEnd - w // the rest of the hour once no event is in it …
			if c > 0 {
				span = 3600 / windows // … else the window holding the events
			}
			skip := int64(0) // the open window's silence before a recovery (dropFrom)
			if w == m.winStart {
				skip = m.dropFrom(w, w+3600/windows) - w
			}
			k := float64(span-skip) / 3600
			r := k * size
			full := s + nbLLR(dropRatio, c, k*rate, r)
			if full >= dropAlarm && rate > 0 {
				var mu float64
				if c == 0 {
					// r·ln((µ+r)/(ρµ+r)) = need, solved for µ.
					e := math.Exp((dropAlarm - s) / r)
					mu = max(0, r*(e-1)/(1-e*dropRatio)) // 0: an hour of fewer windows, whose lower alarm level s passed already
				} else {
					lo, hi := 0.0, k*rate
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
				t := time.Unix(w+skip, 0).Add(time.Duration(mu / rate * float64(time.Hour)))
				if l := from.Add(lag); t.Before(l) {
					t = l
				}
				return t, t.Before(until)
			}
			s, c = max(0, full), 0
			w += span
		}
	}
	return time.Time{}, false
}

// A silenceBound is what a silence must reach, and how its hours add up
// to it (walk): need nats of evidence against normal traffic, −ln P(no
// event). At size 0, every d expected events make one nat: for Poisson
// events (d = 1) that is −ln P(no event) exactly; for overdispersed counts
// of dispersion index D, d = D is a conservative bound (a zero count at
// least exp(−mean/D) likely). At size r > 0, hours are negative binomial
// of size r in units u (the learned size, unit), so a part of an hour that
// expects x events gives r·ln(1 + x/(u·r)) nats; with events set, counted
// in events, of the size 1/R = 1/r + (u−1)/x of the same variance. Either
// way r is the hour's predictive size (predSize: a young bucket's rate is
// uncertain) times Params.SilenceSizeShare.
//
// The learned rates are estimates, and a silence is not judged on them
// as if they were exact (so judged, bursty beets at 0.3 bursts an hour
// raised false silences 1.5-2 times as often as e^−need says). A bucket's
// rate x that rests on n learned hours (learnedHours, as predSize counts
// them) holds k = n·x/d units of evidence, as howSure counts a rate's
// (knownTo), and is Gamma of shape k around x: part s of its hour gives
// k·ln(1 + s/n) nats instead of x·s/d (a size-r hour has it already, in
// predSize). What all hours share, the burst unit B's own error (k set:
// the clusters B rests on, burstEvidence), makes the silence's total
// expected nats Gamma of shape k: the silence must reach k·(e^(need/k) − 1)
// of them, whose k·ln(1 + that/k) is need. A silence of days walks a
// bucket once a day, and its hours share the bucket's one uncertain rate:
// S hours of it in all give k·ln(1 + S/n), not k·ln(1 + 1/n) an hour
// (which said slow beets' silences of days were up to a tenth more
// unlikely than they are; TestSilenceBucketWalkedTwice).
type silenceBound struct {
	need, d, size, u float64
	events           bool
	k                float64 // units of evidence the shared unit rests on; 0: exact
}

// silenceNeed is the rate watch's silence bound: with about g independent
// gaps a day, a per-gap false-alarm probability of goal/g keeps false
// alarms near goal a day, so a silence is flagged once its chance under
// normal traffic is below goal/g: need = ln(g/goal) nats.
//
// An overdispersed beet's hours are read as negative binomial once they
// are warm and the size has learned from dispHoursMax hours (after 30, one
// size was still 34 where the traffic's was under 10): a negative
// binomial's zero count is far rarer than exp(−x/D) says, and read so, a
// silence on negative-binomial beets at 50 events an hour took 2.2-2.6
// times the silence oracle's time. In events while the beet's clusters are
// those of single events (singles), else in units of B: a bursty beet that
// bursty does not see must not be read as single events of the same
// variance, whose zero counts are far rarer than those of its bursts (on
// the tuning seed one such beet flagged 7 false silences). Not at all on
// a beet whose calls carry counts (singleCalls): its arrivals are calls.
func (m *RateModel) silenceNeed() silenceBound {
	d := float64(m.disp)
	warm := m.warm(m.hourStart)
	if !warm {
		// Until D has learned from a few days of hours (warm), take the
		// burst unit B as its floor: counts of events that come in clusters
		// of B are at least B times as dispersed as single events (var/mean
		// of a compound count is E[S²]/E[S] ≥ E[S]). A bursty beet armed
		// early would otherwise be watched as if its events were single.
		// Not later: a dense stream's chance chains of calls under a minute
		// apart also count as clusters, and D knows better by then.
		d = max(d, float64(m.burst))
	}
	g := math.Max(m.daily()/d, 1)
	b := silenceBound{need: math.Log(g / m.p.SilenceFalseAlarms), d: d}
	if d > float64(m.disp) {
		b.k = m.burstEvidence() // counted in units of B
	}
	if warm && m.p.SilenceSizeShare > 0 && m.overdispersed() && m.dispHours() >= dispHoursMax && m.singleCalls() {
		b.size, b.u, b.events = m.size(), m.unit(), m.singles()
		if b.u > 1 && !b.events {
			b.k = m.burstEvidence()
		}
	}
	return b
}

// walk returns the instant after from at which a silence since from
// reaches the bound b under every reading of the hours a followed clock
// change leaves open (zone.go): the hours as learned, and shifted an hour
// in each direction followed. A reading holds for the whole silence, so the
// walk takes the latest of their crossings, not the lowest rate hour by hour
// (rateRange's, as a window's CUSUM step takes it): a slow beet's learned
// hours are noisy, and the lower of each pair was about two thirds of the
// rate: a beet of 5 events a day that stopped in the three weeks after
// another zone's change was flagged after a median of 77 h, not 58
// (TestSilenceUnderClockChangeReadings).
func (m *RateModel) walk(from time.Time, b silenceBound) (time.Time, bool) {
	return m.latestReading(from.Unix(), from.Add(maxWalk).Unix(), func(d int) (time.Time, bool) { return m.walkAs(from, b, d) })
}

// ownReading is the reading of the hours as learned (latestReading).
const ownReading = -1

// latestReading is the latest of what as returns for each reading of the
// hours a clock change followed in [from, to] leaves open: as(ownReading)
// and as(d) for each direction d followed; not ok if any is not.
func (m *RateModel) latestReading(from, to int64, as func(d int) (time.Time, bool)) (time.Time, bool) {
	at, ok := as(ownReading)
	if !ok {
		return time.Time{}, false
	}
	dirs := m.followedWithin(from, to)
	for d := range shiftOffs {
		if dirs&(1<<d) == 0 {
			continue
		}
		t, ok := as(d)
		if !ok {
			return time.Time{}, false
		}
		if t.After(at) {
			at = t
		}
	}
	return at, true
}

// readingBucket is the bucket whose rate the hour from h (bucket b) has
// under reading d: its own (ownReading), or while the change in direction
// d is followed, that of the hour shiftOffs[d] on, once seen.
func (m *RateModel) readingBucket(h int64, b int, d int) int {
	if d != ownReading && m.following(h)&(1<<d) != 0 {
		if nb, ok := m.neighbour(h, d); ok {
			return nb
		}
	}
	return b
}

// walkAs is walk under reading d (readingBucket).
func (m *RateModel) walkAs(from time.Time, b silenceBound, d int) (time.Time, bool) {
	const hourUs = int64(time.Hour / time.Microsecond)
	us := from.UnixMicro()
	end := us + int64(maxWalk/time.Microsecond)
	acc, need := 0.0, b.need
	if b.k > 0 {
		need = b.k * math.Expm1(b.need/b.k)
	}
	var walked [len(m.rate)]float64 // each bucket's hours walked so far
	for us < end {
		hourEnd := (us/hourUs + 1) * hourUs
		h := us / 1e6
		bucket := m.readingBucket(h, m.bucket(h), d)
		x := max(0, float64(m.rate[bucket]))
		x *= m.levelAt(h) // the day's level (daylevel.go)
		span := float64(hourEnd-us) / float64(hourUs)
		if x <= 0 {
			us = hourEnd
			continue
		}
		n := m.learnedHours(m.seen(h, bucket))
		if b.size <= 0 {
			k := n * x / b.d        // the bucket's evidence, in units of d
			w := n + walked[bucket] // its hours walked before this one add to n
			e := k * math.Log1p(span/w)
			if acc+e >= need {
				s := w * math.Expm1((need-acc)/k) // k·ln(1 + s/w) = need − acc, solved for s
				return time.UnixMicro(us + int64(s*float64(hourUs))), true
			}
			acc += e
			walked[bucket] += span
			us = hourEnd
			continue
		}
		r, u := m.predSize(b.size, n, x/b.u), b.u
		if b.events {
			r, u = 1/(1/r+(u-1)/x), 1
		}
		r *= m.p.SilenceSizeShare
		e := r * math.Log1p(x*span/(u*r))
		if acc+e >= need {
			y := u * r * math.Expm1((need-acc)/r) // r·ln(1 + y/(u·r)) = need − acc, solved for y
			return time.UnixMicro(us + int64(y/x*float64(hourUs))), true
		}
		acc += e
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

// shaped is dailyShape, asked once while the rates stay as they are
// (daily's cache): following a clock change asks it for every window,
// and naming the zone (rateZone) when the beet is described.
func (m *RateModel) shaped() bool {
	if m.daily(); m.shape == 0 {
		m.shape = 1
		if m.dailyShape() {
			m.shape = 2
		}
	}
	return m.shape == 2
}

func (m *RateModel) rateAt(unix int64) float64 { return max(0, float64(m.rate[m.bucket(unix)])) }

// daily is the expected events in an average day. The sum is kept until a
// rate changes (setRate): the drop deadline, the silence bound and both
// alarm levels ask it at every event, a twelfth of an event's cost. So is
// the busiest rate, for bursty: the drop deadline asks it for every hour
// it walks, and scanning the rates each time was most of an overdispersed
// beet's event (BenchmarkOnEventsSurgeClusters).
func (m *RateModel) daily() float64 {
	if m.dailyOK {
		return m.dailySum
	}
	// Plain comparisons, not the builtin max: a rate is never NaN, and
	// max's rules for NaN and signed zeros made this loop 3.5 times slower
	// (126 against 36 ns), a twentieth of an event's cost.
	s, busiest := 0.0, float32(0)
	for b := range 24 {
		wd, we := m.rate[b], m.rate[24+b]
		a, c := float64(wd), float64(we)
		if a < 0 {
			a = 0 // never seen
		}
		if c < 0 {
			c = 0
		}
		s += (5*a + 2*c) / 7
		if wd > busiest {
			busiest = wd
		}
		if we > busiest {
			busiest = we
		}
	}
	m.dailySum, m.busiest, m.burstyBound, m.shape, m.dailyOK = s, busiest, 0, 0, true
	return s
}

// dayWords is how many events a day the rates expect, and of which day,
// in words: "a day" on average over a week; until one kind of day has
// been seen, the other's ("a weekday (weekends not seen yet)"). Averaged
// with the unseen days as none, a job every 15 min first seen on a Monday
// was "about 69 events a day", where it ran 96 (daily: the silence's
// count, which reads unseen hours as none). A beet whose weekends (or
// weekdays) have almost none is said by its other days: "about 167
// events a weekday, almost none at weekends", not the week's "119 a day".
func (m *RateModel) dayWords() (float64, string) {
	var wd, we float64
	seenWD, seenWE := false, false
	for b := range 24 {
		if r := m.rate[b]; r >= 0 {
			wd, seenWD = wd+float64(r), true
		}
		if r := m.rate[24+b]; r >= 0 {
			we, seenWE = we+float64(r), true
		}
	}
	switch {
	case seenWD && !seenWE:
		return wd, "a weekday (weekends not seen yet)"
	case seenWE && !seenWD:
		return we, "a weekend day (weekdays not seen yet)"
	case we < quietDays*wd:
		return wd, "a weekday, almost none at weekends"
	case wd < quietDays*we:
		return we, "a weekend day, almost none on weekdays"
	}
	return m.daily(), "a day"
}

// quietDays: days whose events are under this share of the other kind's
// are said as almost none (dayWords).
const quietDays = 0.05

// closeHours finishes every hour that ended by now, teaching each bucket
// its count (zero for silent hours).
func (m *RateModel) closeHours(now int64) {
	if now-m.hourStart > int64(maxWalk/time.Second) {
		m.hourStart = now / 3600 * 3600 // after a very long gap, start afresh
		m.noteBursty()
		m.openHour()
		m.level, m.levelEnd = 1, 0 // the next closed hour starts the level's day
		return
	}
	for m.hourStart+3600 <= now {
		m.learn(m.hourStart, m.hourCount)
		m.hourStart += 3600
		m.noteBursty() // before the hour opens: its windows depend on it
		m.openHour()
	}
	m.closeWindows(m.windowOf(now))
}

func (m *RateModel) learn(hour int64, count float32) {
	m.noteShift(hour, count)
	b := m.bucket(hour)
	mu := m.rate[b]
	held := m.levelHeld()
	m.closeWindows(hour + 3600)
	m.teachLevel(hour, count, held)
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
	if n > 1.5 && mu > 0.2 && m.flags&flagHoldDisp == 0 && !m.slowHour(hour) {
		// Winsorise, so one wild hour moves neither the rate nor D much.
		// The margin holds a whole burst (burst unit B calls), so that a
		// bursty beet's D learns its bursts rather than a clipped view.
		count = min(count, mu+6*float32(math.Sqrt(float64(d*mu)))+3*m.burst)
		x := (count - mu) * (count - mu)
		early := 2 / (2 + float32(hour-m.first)/3600) // faster in the first days
		w := max(0.03, early)
		if m.surgeBuilding() {
			w /= surgeDispShare
		}
		m.disp = min(maxDisp, max(1, (1-w)*d+w*x/mu))
		// The size r of hourly counts weighs heavy-tailed squares: it takes
		// longer to settle, and the CUSUMs lean on it (Params.DispWeight).
		w = max(float32(m.p.DispWeight), early)
		y := x - float32(m.unit())*mu
		if k := m.sizeCap(w); k > 0 {
			// One hour moves 1/r by at most w·k·(1/r + 1/sizeCapFloor): a
			// count far off its mean is what a surge or drop is made of, and
			// at a few events an hour a single one would otherwise halve r
			// (and the evidence of the hours after it). Real dispersion
			// still grows r's inverse by up to k·w of itself an hour.
			cap := k * m.nbDen * (1/float32(m.size()) + 1/sizeCapFloor)
			y = min(y, cap)
			if m.overdispersed() {
				y += float32(dispClipLoss(float64(mu), m.unit(), m.size(), float64(cap)))
			}
		}
		if !m.surgeBuilding() {
			m.nbNum = (1-w)*m.nbNum + w*y
			m.nbDen = (1-w)*m.nbDen + w*mu*mu
		}
	}
	if m.flags&flagSurge != 0 && mu < 4*m.burst {
		// While a surge is open D is held and the winsorising above is
		// skipped. At a few events an hour the hours are clipped anyway, or
		// a few hours of a retry loop lose an hourly job's schedule and the
		// next day's single run reads as a drop. Busier beets learn a real
		// rise in full (NAB's AAPL tweets surge again and again if not).
		count = min(count, mu+6*float32(math.Sqrt(float64(d*mu)))+3*m.burst)
	}
	a := max(1/n, float32(m.p.MinLearnRate))
	m.setRate(b, mu+a*(count-mu))
}

// setRate sets a bucket's rate as it will be stored, so that a model
// behaves the same whether or not it was encoded in between.
func (m *RateModel) setRate(b int, r float32) {
	m.q[b] = encodeRate(r)
	m.rate[b] = decodeRate(m.q[b])
	m.dailyOK = false
}

// scaleRates multiplies every rate seen by f as stored: a rate is steps of
// its logarithm (encodeRate), so this shifts the steps once rather than
// taking 48 logarithms (setRate's steps, but for where a product lands
// within a float's error of a half step).
func (m *RateModel) scaleRates(f float64) {
	shift := int(math.Round(math.Log2(f) * rateScale))
	if shift == 0 {
		return
	}
	for b, q := range m.q {
		if q != 0 { // 0: never seen
			m.q[b] = uint16(min(max(int(q)+shift, 1), math.MaxUint16))
			m.rate[b] = decodeRate(m.q[b])
		}
	}
	m.dailyOK = false
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
func (m *RateModel) quietest() int {
	q := -1
	for b := range 24 { // weekdays: the common case
		if m.rate[b] >= 0 && (q < 0 || m.rate[b] < m.rate[q]) {
			q = b
		}
	}
	return q
}

func (m *RateModel) surgeReason(t time.Time) string {
	since, obs, exp := m.surgeRun()
	head := fmt.Sprintf("Surge: %s since %s (%s), ", events(obs), since.In(m.loc).Format("Jan 2 15:04 MST"), Duration(t.Sub(since)))
	if exp < 0.05 {
		// An hour that never has events: "about 0.0 were expected
		// (9334389114.2× normal)" said nothing a person could use.
		return head + "at a time that almost never has any."
	}
	return head + fmt.Sprintf("where about %s were expected (%.1f× normal).", count(exp), obs/exp)
}

// surgeRun is the surge CUSUM's run up to the last event: its start, the
// events seen and the events expected (the open hour included).
func (m *RateModel) surgeRun() (since time.Time, obs, exp float64) {
	since = time.Unix(m.winStart, 0)
	if m.up.s > 0 {
		since = time.Unix(int64(m.up.start), 0)
	}
	end := min(m.winStart+3600/int64(m.winN), m.last/1e6+int64(m.callGap))
	exp = m.Expected(since, time.Unix(end, 0))
	return since, float64(m.up.obs) + m.winCount(), exp
}

// rates is the rate model's watch: silence, and a drop (the drop CUSUM);
// a surge can only grow at an event, so OnEvents checks it (Surging).
type rates struct{ m *RateModel }

// ready: a week and armEvents events, or two days and armEventsEarly
// independent units (bursts count once: a bursty beet's first days say
// little about its hours).
func (w rates) ready() bool {
	m := w.m
	span := m.last/1e6 - m.first
	return m.events >= armEvents && span >= int64(armAfter/time.Second) ||
		float32(m.events)/m.burst >= armEventsEarly && span >= int64(armEarly/time.Second)
}

func (w rates) due(drop bool) (due time.Time, kind string, ok bool) {
	b := w.m.silenceNeed()
	if !drop {
		b.need /= w.m.dropShare()
	}
	return w.m.dueAfter(b, drop)
}

// lowBeforeSilence is, for a rate beet silent until back, the drop its
// rate was in before the silence (nil if none): the drop CUSUM's run
// (dropRun), under half the normal rate, and longer than the silence. Its
// gaps at a tenth of a checkout's rate were flagged as silences, the next
// event recovered the beet to up, and one drop raised a dozen flips
// (TestDropIsOneIncident). A stop from a normal rate, or one longer than
// the drop before it (a stop, not a gap in the drop), recovers at once.
func (m *RateModel) lowBeforeSilence(back time.Time) *alarm {
	if _, ok := m.finer().(rates); !ok {
		return nil
	}
	since, obs, exp, ok := m.dropRun()
	last := time.UnixMicro(m.last)
	if !ok || obs >= exp/2 || back.Sub(last) >= last.Sub(since) {
		return nil
	}
	return &alarm{kind: beet.FlipDrop, anomalous: true, observed: obs, expected: exp,
		reason: fmt.Sprintf("before the silence the rate was already low: only %s from %s to %s, where about %s were expected (%.0f%% of normal). The drop stays open until the rate is back.",
			events(obs), since.In(m.loc).Format("Jan 2 15:04"), last.In(m.loc).Format("15:04 MST"), count(exp), 100*obs/exp)}
}

// reopenDrop returns a beet back from a silence inside a drop to the
// drop: open, its CUSUM capped at the alarm level as an open drop's is
// (closeWindow), so it ends as the rate comes back, not once the
// silence's evidence has drained.
func (m *RateModel) reopenDrop() {
	m.dropOpen = true
	m.dn.s = min(m.dn.s, float32(m.dropLevel(int64(m.winN))))
}

// dropShare is, while a drop is open, the share of the normal rate that
// came in it (dropRun; at least minDropLevel, 1 when the run says too
// little): a silence is flagged as that level reads it. Read at the
// normal rate, the gaps of a drop to a tenth were flagged every 20 min.
func (m *RateModel) dropShare() float64 {
	if !m.dropOpen {
		return 1
	}
	_, obs, exp, ok := m.dropRun()
	if !ok {
		return 1
	}
	return min(1, max(minDropLevel, obs/exp))
}

// dropRun is the drop CUSUM's run up to the last event: when it began,
// the events in it and those expected; ok when a run is open (not a
// surge's) and expected at least dropRunExpected, enough to tell its
// level. A beet of 5 events a day whose stop was first flagged as a drop
// has fewer, and its silence is read at the normal rate.
func (m *RateModel) dropRun() (since time.Time, obs, exp float64, ok bool) {
	if m.flags&flagSurge != 0 || m.dn.s <= 0 {
		return since, 0, 0, false
	}
	since = time.Unix(int64(m.dn.start), 0)
	obs = float64(m.dn.obs) + m.winCount()
	exp = m.Expected(since, time.UnixMicro(m.last))
	return since, obs, exp, obs >= 1 && exp >= dropRunExpected
}

// dropRunExpected: a drop's level is read from a run where this many
// events were expected.
const dropRunExpected = 8

// minDropLevel bounds how much longer than at the normal rate an open
// drop's silence waits: 4 times.
const minDropLevel = 0.25

// dueAfter is the deadline by which a silence since the last event
// reaches the bound b (walk), or the drop deadline before it when drop is
// set and a drop is building up.
func (m *RateModel) dueAfter(b silenceBound, drop bool) (due time.Time, kind string, ok bool) {
	due, ok = m.walk(time.UnixMicro(m.last), b)
	if !ok {
		due = time.UnixMicro(m.last).Add(maxWalk)
	}
	// A beet that reports every so often (counts sent in batches) is given
	// its usual gap between calls on top.
	due = due.Add(time.Duration(m.callGap) * time.Second)
	if drop {
		if t, dok := m.dropDeadline(due); dok {
			return t, kindDrop, true
		}
	}
	return due, kindSilence, ok
}

func (w rates) alarm(kind string, due time.Time) *alarm {
	m := w.m
	last := time.UnixMicro(m.last)
	if kind != kindDrop {
		exp := m.Expected(last, due)
		return &alarm{kind: beet.FlipSilence, expected: exp, reason: fmt.Sprintf("No event since %s (%s); about %s would usually have come by now.",
			last.In(m.loc).Format("Jan 2 15:04 MST"), Duration(due.Sub(last)), count(exp))}
	}
	run := m.dn
	if run.s <= 0 {
		run = cusum{start: uint32(m.dropFrom(m.winStart, m.winStart+3600/int64(m.winN)))} // the open window, from a recovery in it
	}
	since := time.Unix(int64(run.start), 0)
	run.obs += float32(m.winCount())
	exp := m.Expected(since, due)
	a := &alarm{kind: beet.FlipDrop, anomalous: true, observed: float64(run.obs), expected: exp}
	when := fmt.Sprintf("since %s (%s), where about %s were expected", since.In(m.loc).Format("Jan 2 15:04 MST"), Duration(due.Sub(since)), count(exp))
	quiet := m.Expected(last, due)
	switch {
	case run.obs == 0:
		a.reason = "No events " + when + "."
	case last.After(since) && quiet >= 3 && 5*quiet >= 4*(exp-float64(run.obs)):
		// The silence since the last event makes most of the shortfall:
		// say so first. "Only 30 events since 05:30 (15 min): the rate
		// fell to 57%" hid that none had come since 05:39.
		a.reason = fmt.Sprintf("No event since %s (%s), where about %s were expected; only %s %s (%.0f%% of normal).",
			last.In(m.loc).Format("15:04 MST"), Duration(due.Sub(last)), count(quiet), events(float64(run.obs)), when, 100*float64(run.obs)/max(exp, 1e-9))
	default:
		a.reason = fmt.Sprintf("Only %s %s: the rate fell to %.0f%% of normal.", events(float64(run.obs)), when, 100*float64(run.obs)/max(exp, 1e-9))
	}
	return a
}

func (w rates) describe(t time.Time) string {
	m := w.m
	busiest, busyRate := 0, float32(0)
	for b, r := range m.rate {
		if r > busyRate {
			busiest, busyRate = b, r
		}
	}
	total, day := m.dayWords()
	when := " on weekdays"
	switch {
	case day != "a day":
		when = "" // only one kind of day seen
	case busiest >= 24:
		when = " on weekends"
	}
	words := fmt.Sprintf("about %s events %s, busiest%s around %02d:00 %s (about %s an hour)",
		count(total), day, when, busiest%24, m.loc, count(float64(busyRate)))
	if q := m.quietest(); q >= 0 && float64(m.rate[q]) < 0.5*float64(busyRate) {
		fewest := "about " + count(float64(m.rate[q])) + " an hour"
		if m.rate[q] < 0.05 {
			fewest = "almost none" // "about 0.0 an hour"
		}
		words += fmt.Sprintf(", fewest around %02d:00 (%s)", q%24, fewest)
	}
	// The same instant Deadline would set after an event at t.
	due, ok := m.walk(t, m.silenceNeed())
	due = due.Add(time.Duration(m.callGap) * time.Second)
	if ok {
		words += "; silence at " + t.In(m.loc).Format("15:04") + " would be flagged after about " + Duration(due.Sub(t))
	}
	return words
}
