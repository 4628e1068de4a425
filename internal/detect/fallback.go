package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/beethq/beet"
)

// fallbackState is the fallback's: the longest gap between events
// (encGap) in the current week (gapWeek, Unix weeks mod 128) and the two
// before, and whether an even beat's last outage is held (noteAlarmedGap).
type fallbackState struct {
	gapMax     [fallbackWeeks]uint16
	gapWeek    uint8
	outageHeld bool
}

// gapWeeks masks Unix weeks to gapWeek's 7 bits; outageHeldBit stores
// outageHeld beside them.
const (
	gapWeeks      = 127
	outageHeldBit = 128
)

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

// noteAlarmedGap learns the silence from the last event to its alarm at
// sec, as the beet comes back: it was within what the model allowed, so
// the fallback keeps it as a gap (a weekend that ended in an outage must
// still be known as a weekend). Not where the learning guard held the beet
// to a job's gaps (heldJob): that silence was missed runs. Learned as a
// gap, a daily job delayed at random that stopped for three days before it
// was recognised failed its schedule's gaps (gapsFitDays) for three weeks
// after, its missed runs left to the fallback
// (TestJobStoppedWhileLearningStaysAJob).
//
// An even beat's silence is held instead, once: up to its alarm it is
// twice the beat's longest gap, and learned it doubled the wait at each
// outage; a minute's heartbeat down twice in a fortnight was no longer
// even and its stop waited 17 min for its rates (u-heartbeat-1min-flaky).
// Held, it is learned at the next alarm if that comes before the beat has
// beaten on (heldOutageFades): a beat that slowed down for good learns its
// new gaps at its second alarm.
func (m *RateModel) noteAlarmedGap(sec int64) {
	if m.events == 0 || (guard{m}).heldJob() {
		return
	}
	if m.evenBeat() && !m.outageHeld {
		m.outageHeld = true
		return
	}
	m.outageHeld = false
	m.noteGap(sec, sec-m.last/1e6)
}

// heldOutageFades: an even beat's held outage is let go (an outage for
// good) at one gap in this many, at random, once the beat is back: within
// the hour for a minute's beat, almost never at the gap right after it.
const heldOutageFades = 30

// noteExplainedGap learns the gap (seconds) that ended at sec even if the
// beet was down for it: the schedule has come to explain it (anchorDay: the
// weekend of a job whose days start in the evening, flagged before its
// days were known). Left out, the fallback kept the gaps of the week before
// (20 min) and flagged the next weekends after 2 h, 8 h and 32 h.
func (m *RateModel) noteExplainedGap(sec, gap int64) {
	frozen := m.flags & flagFrozen
	m.flags &^= flagFrozen
	m.noteGap(sec, gap)
	m.flags |= frozen
}

// noteScheduledGap learns, as a down beet comes back at sec, its silence
// since its last event at from as a gap when its schedule (anchored at
// anchor then) expects no run before this one: the days the job runs on
// were learned while it was down. New York's working hours on a Sydney
// beet run on Tuesday to Saturday there, from 23:00 or 00:00; their first
// weekend was flagged, and learned only up to its alarm (noteAlarmedGap,
// 15 h) the next weekend's 39 h were flagged by the fallback.
func (m *RateModel) noteScheduledGap(from, anchor, sec int64) {
	if from == 0 || !m.Scheduled() || !m.offDaysBetween(anchor, sec-m.tolerance()) {
		return
	}
	m.noteExplainedGap(sec, sec-from)
}

// noteGap learns the gap (seconds) that ended at sec. An outage (the beet
// down) or a maintenance window teaches nothing: the caller froze the model.
func (m *RateModel) noteGap(sec, gap int64) {
	if m.outageHeld && m.flags&flagFrozen == 0 && mix64(uint64(sec))%heldOutageFades == 0 {
		m.outageHeld = false // back at its pace: the outage stays unlearned
	}
	w := uint8(sec/week) & gapWeeks
	if shift := (w - m.gapWeek) & gapWeeks; shift != 0 {
		known := m.gapMax[0] | m.gapMax[1] | m.gapMax[2]
		longest := encGap(int64(m.longestGap() / time.Second))
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
		m.gapMax[0] = max(m.gapMax[0], encGap(gap))
	}
}

// longestGap is the longest gap of the last three weeks.
func (m *RateModel) longestGap() time.Duration {
	return decGap(max(m.gapMax[0], m.gapMax[1], m.gapMax[2]))
}

// encGap keeps a gap of sec seconds in 16 bits, rounded up: to the second
// up to gapFine (a heartbeat's gaps: kept in whole minutes, a beat every
// minute had a longest gap of 2 min and its stop waited 4, u-heartbeat-1min
// 3.0× the oracle, now 1.4×), in steps of gapCoarse above it, up to 45
// days (a monthly job's). A larger gap keeps a larger value, so the longest
// gap is the largest.
func encGap(sec int64) uint16 {
	if sec <= gapFine {
		return uint16(max(sec, 0))
	}
	return uint16(min(gapFine+(sec-gapFine+gapCoarse-1)/gapCoarse, math.MaxUint16))
}

// decGap is the gap encGap kept.
func decGap(v uint16) time.Duration {
	sec := int64(v)
	if sec > gapFine {
		sec = gapFine + (sec-gapFine)*gapCoarse
	}
	return time.Duration(sec) * time.Second
}

// Gaps are kept to the second up to gapFine seconds (9 h 6 min), in steps
// of gapCoarse seconds (2 min) above, on whole minutes.
const (
	gapFine   = 546 * 60
	gapCoarse = 120
)

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
	if w.m.evenBeat() {
		return w.evenLimit()
	}
	return max(w.capLimit(), w.randomLimit())
}

// finerCap is how long a silence goes unflagged at most while a finer
// model is sure, and whether the fallback caps it yet (ready): twice its
// limit for gaps that are not random, as the gaps of bursty
// (overdispersed) traffic are too heavy-tailed for twice the longest; a
// heartbeat's own limit (evenBeat), sooner than its rates can tell.
func (w fallback) finerCap() (time.Duration, bool) {
	if w.m.evenBeat() {
		return w.evenLimit(), true
	}
	return fallbackCapFactor * w.capLimit(), w.ready()
}

// capLimit is twice the longest gap (at least fallbackFloor): the
// fallback's limit for gaps that are not random (randomLimit), and what it
// caps a finer model's deadline by (twice as far out).
func (w fallback) capLimit() time.Duration {
	return max(fallbackFloor, fallbackFactor*w.m.longestGap())
}

// randomLimit is, for a beet whose gaps look random (randomGaps), the
// silence such gaps pass with probability SilenceFalseAlarms a day. Twice
// the longest of n random gaps is passed once in (n+1)(n+2)/2 gaps, about
// one in 200 at 20: a webhook at one event a day, watched by the fallback
// from its second week until the rate model arms (armEvents), raised about
// 3 false alarms per 1000 beet-days that way (u-sparse-1-a-day, tuning
// seeds). Regular gaps (a job whose schedule is not learned yet) keep
// twice the longest. 0: not random.
func (w fallback) randomLimit() time.Duration { return w.m.randomGaps(w.m.p.SilenceFalseAlarms, false) }

// randomGaps is, when the beet's gaps look random (the longest of the last
// three weeks at least irregularGaps times the mean gap, or any gaps when
// anyGaps), the silence that gaps at random times pass with probability
// perDay a day: with n gaps over T seconds, the rate's Gamma posterior
// (shape n, rate T) makes a gap longer than t with probability
// (1 + t/T)^−n, and a gap's share of the day's budget is its mean over a
// day. 0: not random.
func (m *RateModel) randomGaps(perDay float64, anyGaps bool) time.Duration {
	n := float64(m.events) - 1
	span := float64(m.last/1e6 - m.first)
	if n < 2 || !(span > 0) {
		return 0
	}
	mean := span / n
	if !anyGaps && m.longestGap().Seconds() < irregularGaps*mean {
		return 0
	}
	alpha := min(0.5, perDay*mean/86400)
	t := span * (math.Pow(alpha, -1/n) - 1)
	return time.Duration(min(t, maxWalk.Seconds())) * time.Second
}

// irregularGaps: gaps whose longest is at least this many times their mean
// are taken as random (randomLimit). The longest of 20 random gaps is
// about 3.6 means, and under 2 now and then: those beets' silences are the
// ones twice the longest flags (2.5 kept half the false alarms 1.5 removed).
// A daily job's longest gap is about one mean, a weekday job's weekend
// about 2, but the fallback watches a job only until its schedule is
// learned again: poisson-0.2, bursty-0.3 and the daily job families raised
// the same alarms at 1.5 on the tuning seeds' 252-beet sets.
const irregularGaps = 1.5

// evenBeat reports whether the beet is a heartbeat: armed, no schedule,
// its events at most evenBeatMean apart on average and evenly, the
// longest gap of the last three weeks at most evenGaps times their mean
// plus a minute (a beat every few seconds is even whatever its pings'
// delays), over evenBeatGaps gaps at least (fewer if tighter: evenTight).
// A daemon or a cron line pinging every minute or so is too often for a
// schedule (a run's pings are clusterGap apart at most), a loop's beats
// drift off the clock (evenBeatMean), and the rates took a heartbeat for
// random traffic: a stop was flagged after 16-25 min,
// where no gap had passed 2 min in weeks (u-heartbeat-1min). Twice the
// longest gap (evenLimit) watches its silences. An outage's silence is
// held, not learned, unless a second alarm follows before the beat is back
// at its pace (noteAlarmedGap).
func (m *RateModel) evenBeat() bool {
	return m.evenPace() && !m.Scheduled() && m.Armed() // (asked at every event: the cheap tests first)
}

// evenPace reports whether the beet's gaps so far are a heartbeat's
// (evenBeat's test of its gaps alone).
func (m *RateModel) evenPace() bool {
	g, mean, n := m.longestGap(), m.meanGap(), int64(m.events)-1
	if n < evenTightGaps || g <= 0 || mean > evenBeatMean {
		return false
	}
	if n < evenBeatGaps {
		return g-time.Minute <= time.Duration(evenTight*float64(mean))
	}
	return g-time.Minute <= time.Duration(evenGaps*float64(mean))
}

// evenTight and evenTightGaps: gaps all within evenTight means, evenTightGaps
// of them or more, are a heartbeat's too, before evenBeatGaps: random gaps
// so even come with probability (1 − e^−1.5)^30, 5e-4. A job run in a loop
// every hour (its runs 1-5 min long) waited 200 gaps, over 8 days: its
// first week's stops were flagged after ten times its longest gap, 12 h,
// and its rates then flagged one after 15 h (u-loop-hourly; at 50 gaps
// its day-2 stops still waited: 3 of 12 found on the tuning seed, 9 at 30,
// no other family's trace changed).
const (
	evenTight     = 1.5
	evenTightGaps = 30
)

// evenBeatMean is the longest mean gap of an even beat: a job run in a
// loop (`sleep 900` after each run, a systemd timer's OnUnitActiveSec)
// beats evenly but drifts off the clock, so no schedule fits it; its rates
// flagged a 5-min loop's stop after 1 h 30 min, the fallback's cap an
// hourly one's after 4 h 40 min (TestSleepLoopStopFlagged). Further apart,
// beats are too few to be sure of in three weeks. An hourly job that lost
// its schedule to a retry loop's pings (mean gap 33 min) is watched so too:
// flagged after twice its longest gap, not its rates' 12 h.
const evenBeatMean = 2 * time.Hour

// evenGaps: a heartbeat's longest gap is at most this many of its mean
// gaps: a beat missed now and then makes two. The longest of n random
// gaps is about ln n means, over 6 at evenBeatGaps.
const evenGaps = 2.5

// meanGap is the mean gap between the beet's events (0 before two).
func (m *RateModel) meanGap() time.Duration {
	if m.events < 2 {
		return 0
	}
	return time.UnixMicro(m.last).Sub(time.Unix(m.first, 0)) / time.Duration(m.events-1)
}

// evenBeatGaps is the fewest gaps an even beat is known from: random gaps
// all within evenGaps means come with probability (1 − e^−2.5)^200, under
// 1e-7; a 15-min loop's two days, an hourly one's eight.
const evenBeatGaps = 200

// evenLimit is the silence an even beat is flagged after: twice its
// longest gap, at least evenFloor.
func (w fallback) evenLimit() time.Duration {
	return max(evenFloor, fallbackFactor*w.m.longestGap())
}

// evenFloor is the least silence flagged on an even beat.
const evenFloor = 2 * time.Minute

func (w fallback) due(bool) (time.Time, string, bool) {
	return w.after(w.limit()), kindFallback, true
}

// after is when a silence of limit from the last event is flagged: later
// by a weekend the beet has not been seen over (unseenWeekend), as the
// learning guard waits. Without it, a weekday job whose first weekend fell
// in an outage, the gaps of its weeks all under a day, was flagged in its
// second weekend (TestWeekdayJobFirstWeekendInOutage).
func (w fallback) after(limit time.Duration) time.Time {
	last := time.UnixMicro(w.m.last)
	at, _ := w.m.unseenWeekend(last, last.Add(limit))
	return at
}

func (w fallback) alarm(_ string, due time.Time) *alarm {
	m := w.m
	last := time.UnixMicro(m.last)
	why := fmt.Sprintf("the longest gap of the last 3 weeks was %s", gapWords(m.longestGap()))
	switch {
	case m.evenBeat():
		why = fmt.Sprintf("its events come evenly, about one every %s, and no gap of the last 3 weeks passed %s",
			Duration(m.meanGap().Round(time.Second)), gapWords(m.longestGap()))
	case w.random():
		why = m.randomGapsWords(m.p.SilenceFalseAlarms)
	}
	if _, ok := m.unseenWeekend(last, due); ok {
		why += unseenWeekendWords
	}
	return &alarm{kind: beet.FlipSilence, observed: 0, expected: 1, reason: fmt.Sprintf(
		"No event since %s (%s); %s.", last.In(m.loc).Format("Jan 2 15:04 MST"), gapWords(due.Sub(last)), why)}
}

// gapWords writes a gap or silence under an hour to the second (Exact), as
// gaps are kept: a minute's heartbeat's longest gap is "1 min 19 s", not
// "1 min", and a stop is flagged after twice that.
func gapWords(d time.Duration) string {
	if d < time.Hour {
		return Exact(d.Truncate(time.Second))
	}
	return Duration(d)
}

func (w fallback) describe(time.Time) string {
	if w.m.evenBeat() {
		return fmt.Sprintf("events evenly, about one every %s, no gap of the last 3 weeks over %s; silence is flagged after %s (twice that, at least %s)",
			Duration(w.m.meanGap().Round(time.Second)), gapWords(w.m.longestGap()), gapWords(w.evenLimit()), Duration(evenFloor))
	}
	if w.random() {
		return fmt.Sprintf("events at irregular times; silence is flagged after %s (%s)", Duration(w.limit()), w.m.randomGapsWords(w.m.p.SilenceFalseAlarms))
	}
	return fmt.Sprintf("events at irregular times; silence is flagged after %s (twice the longest gap of the last 3 weeks, at least %s)",
		Duration(w.limit()), Duration(fallbackFloor))
}

// random reports whether the fallback leads with randomLimit: no finer
// model is sure, and the random gaps' limit is the longer.
func (w fallback) random() bool {
	return w.m.finer() == nil && w.randomLimit() > w.capLimit()
}

// randomGapsWords says what randomGaps(perDay) waits for: "its 21 gaps so
// far came at random times, about one every 16 h 3 min; by chance so long a
// silence comes about once in 14 years". Under fewGaps gaps it says why the
// wait is many times their mean (days after 2 gaps an hour apart): so few
// gaps say little of the rate. Only for a beet whose gaps are random (at
// least 2 of them).
func (m *RateModel) randomGapsWords(perDay float64) string {
	n := int64(m.events) - 1
	span := time.UnixMicro(m.last).Sub(time.Unix(m.first, 0))
	years := fmt.Sprintf("%.0f years", 1/perDay/365)
	if n < fewGaps {
		return fmt.Sprintf("its %d gaps so far came at random times, about one every %s; so few say little of their rate, so Beet waits for a silence that any rate they allow would pass by chance only about once in %s",
			n, Duration(span/time.Duration(n)), years)
	}
	return fmt.Sprintf("its %d gaps so far came at random times, about one every %s; by chance so long a silence comes about once in %s",
		n, Duration(span/time.Duration(n)), years)
}

// fewGaps: under this many gaps, randomGaps waits well past what their
// mean rate alone would ask for (18 days after 2 gaps 1 h 35 min apart,
// against about 15 h; at 9 gaps, about twice), and the words say why.
const fewGaps = 10
