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
// so that each expects at least windowEvents events at the hour's learned
// rate: at a few events an hour, a window is shorter than the usual gap
// and a regular stream (an hourly job on the rate model) would read as a
// surge in the window of its run and a drop in the others. Each window's
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
)

// windows is how many windows the hour from hour is cut into. It depends
// on the hour bucket's rate alone, which changes only when the hour
// closes, so the open window is the same whether or not the model was
// stored in between.
func (m *RateModel) windows(hour int64) int64 {
	r := float64(m.rate[m.bucket(hour)])
	switch {
	case r >= 6*windowEvents:
		return 6
	case r >= 3*windowEvents:
		return 3
	case r >= 2*windowEvents:
		return 2
	}
	return 1
}

// windowOf is the start of the open hour's window holding t.
func (m *RateModel) windowOf(t int64) int64 {
	w := 3600 / m.windows(m.hourStart)
	return m.hourStart + (t-m.hourStart)/w*w
}

// alarmLevel is an alarm level for an hour of n windows.
func alarmLevel(level float64, n int64) float64 { return level + math.Log(float64(n)) }

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
		n := m.windows(m.hourStart)
		lo, hi := m.rateRange(m.hourStart)
		count := m.winCount()
		for w := m.winStart; w < to; w += 3600 / n {
			m.closeWindow(w, n, count, lo, hi)
			count = 0
		}
	}
	m.winStart = to
	m.winBase = quantBase(m.hourCount)
}

// quantBase is a count of events as winBase is stored: exact up to about
// 1400, within 0.04% above.
func quantBase(x float32) float32 { return decBase(encCount(x)) }

func decBase(q uint16) float32 { return float32(math.Round(float64(decCount(q)))) }
