package detect

import "math"

// The drop and surge CUSUMs observe windows of an hour, not whole hours,
// once an hour holds enough events: a change that starts in the middle of
// an hour is weighed against the normal traffic of the window it starts
// in, not of the whole hour. At 200 events an hour a drop to 30% took
// about 50 minutes when the first hour's normal part weighed against it;
// a CUSUM that knows the rates needs about 14.
//
// An hour is cut into 1, 2, 3 or 6 windows (of 60, 30, 20 or 10 minutes),
// so that each expects at least windowEvents events and spans windowCalls
// usual gaps between calls: shorter, a regular stream (an hourly job on
// the rate model, a count sent every 30 minutes) would read as a surge in
// the windows of its calls and a drop in the others. Each window's
// count is negative binomial with a 1/n share of the hour's mean and of
// its size r (n windows an hour): the hour's windows share its level, and
// this keeps the hour's variance. An alarm level is ln n higher for an
// hour of n windows: n times as many chances for a false alarm.
const (
	// minWindow is the shortest window (seconds): the unit in which
	// window starts are stored.
	minWindow = 600
	// windowEvents is how many events a window expects at least.
	windowEvents = 6
	// windowCalls is how many usual gaps between calls a window spans at
	// least.
	windowCalls = 3
	// windowDisp is the dispersion index D from which a beet's hours are
	// whole windows (overdispersed).
	windowDisp = 2
)

// windows is how many windows the hour from hour is cut into: as many as
// its bucket's rate allows (windowEvents events each), and each
// at least windowCalls usual gaps between calls long (NAB's taxi counts,
// one call every 30 minutes with D at its cap, raised hundreds of false
// alarms in 20-minute windows). An hour keeps the windows it opened with
// (winN, stored).
func (m *RateModel) windows(hour int64) int64 {
	if m.overdispersed() {
		return 1
	}
	r := float64(m.rate[m.bucket(hour)])
	for _, n := range [...]int64{6, 3, 2} {
		if r >= float64(n)*windowEvents && float64(3600/n) >= windowCalls*float64(m.callGap) {
			return n
		}
	}
	return 1
}

// windowOf is the start of the open hour's window holding t.
func (m *RateModel) windowOf(t int64) int64 {
	w := 3600 / int64(max(1, m.winN))
	return m.hourStart + (t-m.hourStart)/w*w
}

// openHour starts the hour from hourStart: no events, its first window
// open, its windows set.
func (m *RateModel) openHour() {
	m.hourCount, m.winBase, m.winBursts = 0, 0, 0
	m.winStart, m.winN = m.hourStart, uint8(m.windows(m.hourStart))
}

// alarmLevel is an alarm level for an hour of n windows: level + ln n.
func alarmLevel(level float64, n int64) float64 { return level + lnWindows[n] }

// dropLevel is the drop CUSUM's alarm level for an hour of n windows:
// Params.DropAlarm, less on a slow beet (slowCut) whose counts are read as
// Poisson (bursts, or events of a beet not overdispersed). An
// overdispersed beet's level is not cut: its hours share more than the
// day's level it learns (daylevel.go), and cut, negative-binomial beets at
// 5 an hour raised a false drop more on the tuning seed (4 false alarms in
// 3960 beet-days, 3 before).
//
// No margin is added for overdispersion: it was 2 nats while the model did
// not know the day's level; once drops were read at that level it mostly
// delayed them. Without it, on 252 beets of each negative-binomial family
// on each of the tuning seeds 100 and 101, at 50 an hour 69 of the 114
// drops and surges the yardstick finds were found, at 1.32-1.52 times its
// time (63 at 1.42-1.68), false alarms on 8 beets (9); at 5 an hour 37 of
// 62 (36), on 26 beets (24).
func (m *RateModel) dropLevel(n int64) float64 {
	level := m.p.DropAlarm
	if !m.overdispersed() || m.countsBursts() {
		level -= m.slowCut(m.p.DropSlowCut)
	}
	return alarmLevel(level, n)
}

// slowCut is how much lower a slow beet's drop or surge alarm level is
// than Params.DropAlarm or SurgeAlarm, at most most. By Wald's
// approximation a CUSUM at level h raises a false alarm about every e^h/KL
// steps, KL the evidence a step of the change it looks for gives: for an
// hour of µ units and a rate ratio ρ, µ(ρ − 1 − ln ρ) nats, proportional
// to µ. A level ln(µ) lower keeps a slow beet's false alarms about as rare
// an hour as a busy one's, which is how the yardstick CUSUM of the judge
// sets its threshold (ln(arrivals a day/0.0005)): a level fixed in nats
// makes a slow beet wait for evidence a busy one has in minutes. µ is the
// average hour's (daily), in the CUSUMs' units (unit), so the cut stays
// put through the day; none from Params.SlowRate units an hour up.
func (m *RateModel) slowCut(most float64) float64 {
	if m.p.SlowRate <= 0 || most <= 0 {
		return 0
	}
	mu := m.daily() / 24 / m.unit()
	if !(mu > 0) || mu >= m.p.SlowRate {
		return 0 // nothing learned (nothing to drop from), or busy enough
	}
	return min(most, math.Log(m.p.SlowRate/mu))
}

// surgeLevel is the surge CUSUM's alarm level for an hour of n windows:
// Params.SurgeAlarm, less on a slow beet (slowCut) and, by
// Params.SurgeSmoothCut, on a smooth one (smooth).
func (m *RateModel) surgeLevel(n int64) float64 {
	level := m.p.SurgeAlarm - m.slowCut(m.p.SurgeSlowCut)
	if m.smooth() {
		level -= m.p.SurgeSmoothCut
	}
	return alarmLevel(level, n)
}

// smooth reports whether the beet's hourly counts are near Poisson:
// neither overdispersed nor bursty. Its windows' evidence is what their
// likelihood says, with no day's level or burst size behind it that the
// model does not know.
func (m *RateModel) smooth() bool { return !m.overdispersed() && !m.bursty() }

var lnWindows = [...]float64{1: 0, 2: math.Log(2), 3: math.Log(3), 6: math.Log(6)}

// overdispersed reports whether the beet's hourly counts vary well beyond
// Poisson (D ≥ windowDisp): its events share the hour's level, which is
// most of the evidence an hour gives (the yardstick CUSUM of such sources
// adds whole hours too). Its CUSUMs keep whole hours and count in burst
// units B, as before the windows: in windows, and counted in events, NAB's
// IBM tweet counts lost a labelled window (73.8 to 30.0) and negative
// binomial streams raised more false surges and drops. A bursty beet's
// counts are read in bursts: its D over events is the bursts' sizes
// (E[S²]/E[S], 13.7 for 1-20 events a burst), its bursts' own D is
// burstDisp, and Poisson bursts are no hour level. Read by events, such a
// beet kept whole hours and the day's level, and its surges were found
// later or not at all (tuning seed, 216 streams of bursts at 3 an hour:
// 35 of the 59 drops and surges the yardstick finds, 37 since, with as
// many false alarms).
func (m *RateModel) overdispersed() bool {
	if m.disp < windowDisp {
		return false // burstDisp is under D: no need to ask bursty, a scan of the rates
	}
	return !m.bursty() || m.burstDisp() >= windowDisp
}

// winCount is the events of the open window.
func (m *RateModel) winCount() float64 { return max(0, float64(m.hourCount-m.winBase)) }

// closeWindows closes the open hour's windows that ended by to (a window
// boundary in the open hour, or its end): the first holds the events since
// winBase, the others none.
func (m *RateModel) closeWindows(to int64) {
	if to <= m.winStart {
		return
	}
	if m.warm(m.hourStart) && m.cusumsOn() {
		n := int64(m.winN)
		lo, hi := m.levelRange(m.hourStart)
		count, bursts := m.winCount(), float64(m.winBursts)
		for w := m.winStart; w < to; w += 3600 / n {
			m.closeWindow(w, n, count, bursts, lo, hi)
			count, bursts = 0, 0
		}
	}
	m.winStart = to
	m.winBase = quantBase(m.hourCount)
	m.winBursts = 0
}

// The open window is stored in 16 bits: the index of winN (2 bits) and
// winBase as a 14-bit logarithm, 2^(q/baseScale) − 1 rounded to a whole
// count (exact up to about 370 events, within 0.14% above).
const baseScale = 256

var windowCounts = [...]uint8{1, 2, 3, 6}

func encWindow(n uint8, base float32) uint16 {
	i := uint16(0)
	for j, c := range windowCounts {
		if c == n {
			i = uint16(j)
		}
	}
	q := math.Round(math.Log2(float64(base)+1) * baseScale)
	return i<<14 | uint16(min(q, 1<<14-1))
}

func decWindow(v uint16) (n uint8, base float32) {
	return windowCounts[v>>14], decBase(v & (1<<14 - 1))
}

func decBase(q uint16) float32 { return float32(math.Round(math.Exp2(float64(q)/baseScale) - 1)) }

// quantBase is a count of events as winBase is stored: itself below 389
// (the code is exact there), without the logarithm.
func quantBase(x float32) float32 {
	if x < 389 && x == float32(math.Round(float64(x))) {
		return x
	}
	return decBase(encWindow(1, x) & (1<<14 - 1))
}
