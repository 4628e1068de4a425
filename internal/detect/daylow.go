package detect

import (
	"fmt"
	"math"
	"time"

	"github.com/beethq/beet"
)

// Slow hours and slow days. The drop CUSUM tests for a fall to
// Params.DropRatio of the rate (a fifth), and the day's level (daylevel.go)
// takes in whatever a day's hours say: a busy checkout whose traffic
// halved for good (half its customers cannot pay) was never flagged, its
// hours read as a slow day's. But days vary only by the CV the level has
// learned (levelCV, at least levelMinCV), and a level far below what that
// allows is no slow day. Each closing hour is tested twice, with the
// spread a level read from weight W has, the days' variance plus the
// hours' own noise:
//
//	z = (x − 1) / √(max(v, levelMinCV²) + 1/W)
//
//   - the hour itself, its level x = count/rate against today's level so
//     far (testHour), whether or not it teaches it: the hours of a drop's
//     run teach nothing (levelHeld), so the day's level alone saw a
//     drop that began mid-day only the next morning (13 h);
//   - today so far, R over the hours that taught the level (testDay): a
//     level whose hours are each too noisy to tell (a slower beet).
//
// z ≤ −Params.DayLowZ at a level of dayLowMax or less raises a drop
// ("Slow: …"), an armed rate beet's only, and a drop open already becomes
// one. It is over at an hour back within dayBackZ of its rate, or a day
// begun since the alarm back within dayBackZ of a usual day, on
// dayBackWeight at least (flagDayLow); not when the drop CUSUM is, which
// at half the rate comes and goes (a halving flagged and recovered three
// times in an hour). A day's test counts only from the beet's latest flip
// (lowSince): after a recovery that day's earlier hours are not slow again.

// flagDayLow (lifeState.flags) marks an open drop as a slow day's. It
// shares bit 6 with flagCalm, which only an open surge sets.
const flagDayLow = flagCalm

const (
	// dayLowMax is the highest level flagged slow: a beet whose days
	// barely vary is not paged for a day at 80%.
	dayLowMax = 0.7
	// dayBackZ: a slow day is over once an hour, or a day begun since the
	// alarm, is within this many of its spreads of a usual one …
	dayBackZ = 1
	// dayBackWeight: … on this many expected events at least (a night
	// hour's few events say little either way).
	dayBackWeight = 25
)

// dayTest is what the hours the events at hand closed said of the day's
// level; not stored.
type dayTest struct {
	low      bool // an hour, or today so far, was slow …
	hourBack bool // … or the latest hour was back …
	dayBack  bool // … or a day begun since the alarm (lowSince)
	// The slow span, for the alarm's words: [from, to), its events (for a
	// day, its level times expected, from the hours that taught it) and
	// those expected.
	from, to int64
	obs, exp float64
}

// spread is the standard deviation of a level read from weight W: the
// days' own, as the level's prior holds it (at least levelMinCV), and the
// hours' noise.
func (m *RateModel) spread(W float64) float64 { return math.Sqrt(1/m.levelPrior() + 1/W) }

// testHour tests the closing hour from hour (count events where mu were
// expected, of weight w, both in units u) against today's level so far,
// before it teaches it: held or not, a drop's hour is as slow as it is.
func (m *RateModel) testHour(hour int64, count, mu, w, u float64) {
	if m.p.DayLowZ <= 0 {
		return
	}
	// w·L ≥ Z² first: |x/L − 1| ≤ 1 below the level, so z ≥ −√(wL) (a
	// job's empty hours, 24 a daily run, skip the square roots).
	x, L := count/u/mu, float64(m.level)
	if x <= dayLowMax && w*L >= m.p.DayLowZ*m.p.DayLowZ && (x/L-1)/m.spread(w*L) <= -m.p.DayLowZ && m.dropWarm(hour) {
		m.day = dayTest{low: true, dayBack: m.day.dayBack, from: hour, to: hour + 3600, obs: count, exp: mu * u}
	}
	m.day.hourBack = w >= dayBackWeight && (x-1)/m.spread(w) >= -dayBackZ
}

// testDay tests today's level so far after the taught hour from hour (W
// the taught weight, a the level's prior shape): its hours' R, not the
// level, which the prior holds near 1.
func (m *RateModel) testDay(hour int64, a, W float64) {
	if W < 1 || m.p.DayLowZ <= 0 {
		return
	}
	R := m.taughtRatio(a, W)
	from := max(m.levelEnd-86400, m.first)
	low, back := R <= dayLowMax && !m.day.low, W >= dayBackWeight
	if from < m.lowSince || !low && !back {
		return // the day began before the beet's latest flip, or says nothing here (no square root)
	}
	z := (R - 1) / m.spread(W)
	if low && z <= -m.p.DayLowZ && m.dropWarm(hour) {
		exp := m.Expected(time.Unix(from, 0), time.Unix(hour+3600, 0))
		m.day = dayTest{low: true, hourBack: m.day.hourBack, from: from, to: hour + 3600, obs: R * exp, exp: exp}
	}
	m.day.dayBack = m.day.dayBack || back && z >= -dayBackZ
}

// slowHour reports whether the hour from hour was found slow: it is
// about to raise a drop, and, as a drop's hours do, it teaches the
// dispersion nothing (one hour at half of 200 an hour took D from 1 to
// 2.3, and the beet was read as overdispersed from then on).
func (m *RateModel) slowHour(hour int64) bool { return m.day.to == hour+3600 && m.slowDay() }

// slowDay reports whether the events at hand found the beet's level
// slow: a rate beet's, armed, and not back at its latest hour (a day's
// level lags its hours: after a slow morning an afternoon back to normal
// held a slow day open for hours).
func (m *RateModel) slowDay() bool {
	if !m.day.low || m.day.hourBack {
		return false // most events: no hour closed
	}
	_, isRates := m.finer().(rates)
	return isRates
}

// slowDayAlarm is the drop raised on a slow day at t.
func (m *RateModel) slowDayAlarm(b *beet.Beet, t time.Time) *beet.Flip {
	d := m.day
	from, to := time.Unix(d.from, 0).In(m.loc), time.Unix(d.to, 0).In(m.loc)
	what := fmt.Sprintf("only %s from %s to %s", events(d.obs), from.Format("Jan 2 15:04"), to.Format("15:04 MST"))
	if d.to-d.from > 3600 {
		what = fmt.Sprintf("about %s since %s (%s)", count(d.obs), from.Format("Jan 2 15:04 MST"), Duration(to.Sub(from)))
	}
	f := flipAt(b, t, beet.StatusAnomalous, beet.FlipDrop, fmt.Sprintf(
		"Slow: %s, where about %s were expected (%.0f%% of normal; this beet's days vary by about %.0f%%).",
		what, count(d.exp), 100*d.obs/d.exp, 100*math.Sqrt(1/m.levelPrior())))
	f.Observed, f.Expected = ptr(d.obs), ptr(d.exp)
	m.slowDayOpen()
	return f
}

// slowDayOpen marks the open drop as a slow day's: over when the level is
// back (dayBack), not when the drop CUSUM is.
func (m *RateModel) slowDayOpen() { m.flags |= flagDayLow | flagHoldDisp }
