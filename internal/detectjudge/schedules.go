package detectjudge

import (
	"math/rand/v2"
	"slices"
	"time"
)

// A calendar is when a scheduled job runs.
type calendar interface {
	// next returns the first slot at or after t.
	next(loc *time.Location, t time.Time) time.Time
}

// everyCal runs every interval of real time at a phase (as cron runs
// "*/5 * * * *" and "17 * * * *": each real hour, DST or not).
type everyCal struct{ every, offset time.Duration }

func (c everyCal) next(_ *time.Location, t time.Time) time.Time {
	s := t.Truncate(c.every).Add(c.offset)
	for s.Before(t) {
		s = s.Add(c.every)
	}
	return s
}

// dailyCal runs at local wall-clock times (minutes after midnight, sorted)
// on the days of the week marked: it moves in UTC across DST.
type dailyCal struct {
	mins []int
	days [7]bool
}

func everyDay(mins ...int) dailyCal {
	return dailyCal{mins: mins, days: [7]bool{true, true, true, true, true, true, true}}
}

func weekdays(mins ...int) dailyCal {
	return dailyCal{mins: mins, days: [7]bool{false, true, true, true, true, true, false}}
}

// quarterHours are the minutes of the day every 15 min from from up to,
// not including, to: a job's runs through a window of the day.
func quarterHours(from, to int) []int {
	var mins []int
	for m := from; m < to; m += 15 {
		mins = append(mins, m)
	}
	return mins
}

func (c dailyCal) next(loc *time.Location, t time.Time) time.Time {
	lt := t.In(loc)
	for d := 0; d < 14; d++ {
		day := time.Date(lt.Year(), lt.Month(), lt.Day()+d, 12, 0, 0, 0, loc)
		if !c.days[day.Weekday()] {
			continue
		}
		for _, m := range c.mins {
			s := time.Date(day.Year(), day.Month(), day.Day(), m/60, m%60, 0, 0, loc)
			if !s.Before(t) {
				return s
			}
		}
	}
	panic("detectjudge: a calendar with no day")
}

// monthlyCal runs on a day of the month at a local time.
type monthlyCal struct{ day, min int }

func (c monthlyCal) next(loc *time.Location, t time.Time) time.Time {
	lt := t.In(loc)
	for k := 0; ; k++ {
		s := time.Date(lt.Year(), lt.Month()+time.Month(k), c.day, c.min/60, c.min%60, 0, 0, loc)
		if !s.Before(t) {
			return s
		}
	}
}

// monthDaysCal runs on some days of each month at a local time, as cron's
// day-of-month list does (`0 6 1,15 * *`): a day the month lacks is skipped.
type monthDaysCal struct {
	days []int // ascending
	min  int
}

func (c monthDaysCal) next(loc *time.Location, t time.Time) time.Time {
	lt := t.In(loc)
	for k := 0; ; k++ {
		for _, d := range c.days {
			s := time.Date(lt.Year(), lt.Month()+time.Month(k), d, c.min/60, c.min%60, 0, 0, loc)
			if s.Day() == d && !s.Before(t) {
				return s
			}
		}
	}
}

// lastDayCal runs on the last day of each month at a local time.
type lastDayCal struct{ min int }

func (c lastDayCal) next(loc *time.Location, t time.Time) time.Time {
	lt := t.In(loc)
	for k := 1; ; k++ {
		// Day 0 of the next month is the last day of this one.
		s := time.Date(lt.Year(), lt.Month()+time.Month(k), 0, c.min/60, c.min%60, 0, 0, loc)
		if !s.Before(t) {
			return s
		}
	}
}

// scheduleModel is a scheduled job. Each run pings once when it ends (dur0
// plus a uniform 0..spread after its slot) or, with startEnd, also when it
// starts (within a few seconds of the slot). One run in a hundred is very
// late: spread to 3×spread more. So a normal run never reports later than
// lateMax = dur0 + 4×spread after its slot: the bound the oracle knows.
// A job with a randomised delay (systemd's RandomizedDelaySec) starts each
// run a uniform 0..delay after its slot, and its bound is that much later.
type scheduleModel struct {
	cal      calendar
	startEnd bool
	dur0     time.Duration
	spread   time.Duration
	lateP    float64
	delay    time.Duration
	// A schedule that the user changes once: from changeAfter after the
	// stream starts, the job runs on changed instead (changed == nil: never).
	changed     calendar
	changeAfter time.Duration
	period      time.Duration // the usual gap between runs, for the excused window
	// A job with one very late run in its second week: the first slot
	// from lateOnceAfter after the stream starts ends lateOnce after it
	// (0: none). Excused: the alarm it may raise is for a run that came.
	lateOnceAfter, lateOnce time.Duration
	// A job that pings only when it had work (or only on success) skips
	// each run with probability skipP, independently (0: never).
	skipP float64
	// A batch job pings once per item it processed: each run is
	// batchMin-batchMax events (uniform), the first as a run's ping, the
	// rest at random over up to batchSpan after it (0: one ping a run).
	batchMin, batchMax int
	batchSpan          time.Duration
	// A flaky job (its host or network down now and then) misses every
	// run in each of its outages, drawn in newModel; incidents come after
	// the last, and the alarms the outages raise are excused (right, but
	// not the incident judged).
	outages []outage
	// A job whose runs take longer as its data grows (a backup): each run
	// lasts growth more per day since the stream started (0: never).
	growth time.Duration
}

// outage is one of a flaky job's: from after the stream starts, for length.
type outage struct{ after, length time.Duration }

// window is the outage in a stream that starts at start.
func (o outage) window(start time.Time) Window {
	return Window{Name: "an earlier outage", From: start.Add(o.after), To: start.Add(o.after + o.length)}
}

// newSchedule draws the spread of a job's runs: durations vary by 1-4% of
// its period (dur0 up to 1%), and 1% of runs are very late.
func newSchedule(r *rand.Rand, cal calendar, period time.Duration, startEnd bool) *scheduleModel {
	frac := func(lo, hi float64) time.Duration {
		return time.Duration((lo + (hi-lo)*r.Float64()) * float64(period)).Round(time.Second)
	}
	return &scheduleModel{cal: cal, startEnd: startEnd, dur0: frac(0.002, 0.01), spread: max(time.Second, frac(0.01, 0.04)),
		lateP: 0.01, period: period}
}

func (m *scheduleModel) lateMax() time.Duration { return m.delay + m.dur0 + 4*m.spread }

// grown is how much longer than at the start a growing job's run at slot
// lasts (growth).
func (m *scheduleModel) grown(start, slot time.Time) time.Duration {
	return time.Duration(float64(m.growth) * slot.Sub(start).Hours() / 24).Truncate(time.Second)
}

func (m *scheduleModel) changeAt(start time.Time) time.Time {
	if m.changed == nil {
		return time.Time{}
	}
	return start.Add(m.changeAfter).Truncate(time.Minute)
}

// next is the first slot at or after t, on the calendar in force.
func (m *scheduleModel) next(loc *time.Location, start, t time.Time) time.Time {
	s := m.cal.next(loc, t)
	if at := m.changeAt(start); m.changed != nil && !s.Before(at) {
		return m.changed.next(loc, maxTime(t, at))
	}
	return s
}

// settled: incidents come after minRunsBefore runs, and after 10 days of a
// changed schedule.
func (m *scheduleModel) settled(loc *time.Location, start time.Time) time.Time {
	s := start
	for k := 0; k < minRunsBefore; k++ {
		s = m.next(loc, start, s).Add(time.Second)
	}
	if m.changed != nil {
		s = maxTime(s, m.changeAt(start).AddDate(0, 0, 10))
	}
	for _, o := range m.outages {
		s = maxTime(s, o.window(start).To.AddDate(0, 0, 1))
	}
	return s
}

// excused: the first two periods after a schedule change (a missed slot of
// the old schedule, an unexpected run of the new one) are the user's doing.
func (m *scheduleModel) excused(loc *time.Location, start, _ time.Time) []Window {
	var out []Window
	if slot, ok := m.lateOnceSlot(loc, start); ok {
		out = append(out, Window{Name: "one very late run", From: slot, To: slot.Add(m.lateOnce + DetectTolerance)})
	}
	for _, o := range m.outages {
		w := o.window(start)
		w.To = w.To.Add(DetectTolerance)
		out = append(out, w)
	}
	if m.changed == nil {
		return out
	}
	at := m.changeAt(start)
	return append(out, Window{Name: "schedule changed", From: at, To: at.Add(2*m.period + DetectTolerance)})
}

// inOutage reports whether t falls in one of a flaky job's outages.
func (m *scheduleModel) inOutage(start, t time.Time) bool {
	for _, o := range m.outages {
		if w := o.window(start); !t.Before(w.From) && t.Before(w.To) {
			return true
		}
	}
	return false
}

// lateOnceSlot is the slot of the job's one very late run (lateOnce); ok
// is false for a job without one.
func (m *scheduleModel) lateOnceSlot(loc *time.Location, start time.Time) (time.Time, bool) {
	if m.lateOnce == 0 {
		return time.Time{}, false
	}
	return m.next(loc, start, start.Add(m.lateOnceAfter)), true
}

func (m *scheduleModel) place(r *rand.Rand, loc *time.Location, u time.Time, inc *Incident) bool {
	spec := inc.Spec
	cal := m.cal
	if m.changed != nil {
		cal = m.changed // incidents come after the change (settled)
	}
	slot := cal.next(loc, u)
	after := func(s time.Time, runs int) time.Time {
		for k := 0; k < runs; k++ {
			s = cal.next(loc, s.Add(time.Second))
		}
		return s
	}
	inc.Start = slot
	switch spec.Kind {
	case IncidentTooOften:
		if spec.PerPeriod < 2 {
			return false
		}
		inc.End = after(slot.Add(spec.Duration-time.Second), 1)
	case IncidentMissedRun, IncidentStuck:
		if spec.Kind == IncidentStuck && !m.startEnd {
			return false
		}
		if spec.Duration > 0 {
			inc.End = after(slot.Add(spec.Duration-time.Second), 1)
		} else {
			inc.End = after(slot, spec.Runs)
		}
		if inc.Due, inc.Latest = slot.Add(m.dur0), slot.Add(m.lateMax()); m.startEnd {
			inc.Due = slot
		}
	case IncidentLateRun:
		// Late beyond doubt: past 2-4× the normal bound, a quarter to half
		// of the gap to the next run and 2 min (a grace a person would
		// accept), whichever is latest; yet before the next run.
		gap := after(slot, 1).Sub(slot)
		late := time.Duration((2 + 2*r.Float64()) * float64(m.lateMax()))
		late = max(late, time.Duration((0.25+0.25*r.Float64())*float64(gap)), 2*time.Minute)
		late = min(late, gap*8/10)
		if late < m.lateMax()*3/2 || late < 2*time.Minute {
			return false // no room between runs to be that late
		}
		inc.End = slot.Add(late).Truncate(time.Second)
	case IncidentExtra:
		inc.End = after(slot, spec.Runs)
		// Extras may run on past the next slot (a retry loop).
		inc.End = maxTime(inc.End, inc.Start.Add(time.Duration(spec.Extra)*spec.ExtraGap))
	default:
		return false
	}
	return true
}

func (m *scheduleModel) judge(loc *time.Location, start time.Time, inc *Incident) {
	runs := 0
	for s := m.next(loc, start, start); s.Before(inc.Start) && runs < minRunsBefore; s = m.next(loc, start, s.Add(time.Second)) {
		runs++
	}
	inc.PValue = 0 // beyond anything a normal run does
	inc.Detectable = runs >= minRunsBefore
}

func (m *scheduleModel) generate(r *rand.Rand, loc *time.Location, start, end time.Time, inc []Incident) []Event {
	var evs []Event
	add := func(t time.Time) {
		if !t.Before(start) && t.Before(end) {
			evs = append(evs, Event{T: t, Count: 1})
		}
	}
	extraRuns := make([]int, len(inc)) // runs given their extras so far, per incident
	lateSlot, lateOnce := m.lateOnceSlot(loc, start)
	for s := m.next(loc, start, start); s.Before(end); s = m.next(loc, start, s.Add(time.Second)) {
		// Draw every run's timing whatever happens to it, so that streams
		// with and without an incident share their runs.
		d := m.dur0 + time.Duration(r.Int64N(int64(m.spread)+1)) + m.grown(start, s)
		if r.Float64() < m.lateP {
			d += m.spread + time.Duration(r.Int64N(2*int64(m.spread)+1))
		}
		startPing := s.Add(time.Duration(r.Int64N(int64(min(5*time.Second, m.spread/10)) + 1)))
		if m.delay > 0 { // drawn only for such jobs: other streams keep their runs
			delay := time.Duration(r.Int64N(int64(m.delay) + 1))
			d, startPing = d+delay, startPing.Add(delay)
		}
		if lateOnce && s.Equal(lateSlot) {
			d = m.lateOnce // drawn in newModel: other streams keep their runs
		}
		if m.skipP > 0 && r.Float64() < m.skipP { // drawn only for such jobs
			continue // the run had no work: no ping
		}
		if m.inOutage(start, s) {
			continue // the host was down: the run never started
		}
		d = d.Truncate(time.Millisecond)
		pingStart, pingEnd := m.startEnd, true
		for k := range inc {
			in := &inc[k]
			switch in.Spec.Kind {
			case IncidentMissedRun:
				if in.covers(s) {
					pingStart, pingEnd = false, false
				}
			case IncidentStuck:
				if s.Equal(in.Start) {
					pingEnd = false
				} else if in.covers(s) {
					pingStart, pingEnd = false, false
				}
			case IncidentLateRun:
				if s.Equal(in.Start) {
					d = in.End.Sub(s)
				}
			}
			if (pingStart || pingEnd) && in.covers(s) {
				in.Arrivals++
			}
		}
		if pingStart {
			add(startPing)
		}
		if !pingEnd {
			continue
		}
		t := s.Add(d)
		add(t)
		if m.batchMax > 0 { // drawn only for such jobs
			n, span := m.batchMin+r.IntN(m.batchMax-m.batchMin+1), time.Duration(r.Int64N(int64(m.batchSpan)+1))
			items := make([]time.Time, 0, n)
			for range n - 1 {
				items = append(items, t.Add(time.Duration(r.Int64N(int64(span)+1))).Truncate(time.Millisecond))
			}
			slices.SortFunc(items, time.Time.Compare)
			for _, at := range items {
				add(at)
			}
		}
		for _, in := range inc {
			if in.Spec.Kind != IncidentTooOften || !in.covers(s) {
				continue
			}
			// PerPeriod−1 more runs, evenly spaced up to the next slot,
			// each as late as this one.
			gap := m.next(loc, start, s.Add(time.Second)).Sub(s)
			for x := 1; x < in.Spec.PerPeriod; x++ {
				add(t.Add(gap * time.Duration(x) / time.Duration(in.Spec.PerPeriod)))
			}
		}
		for k, in := range inc {
			if in.Spec.Kind != IncidentExtra || s.Before(in.Start) || extraRuns[k] == in.Spec.Runs {
				continue
			}
			extraRuns[k]++
			gap := in.Spec.ExtraGap
			if gap == 0 {
				gap = m.next(loc, start, s.Add(time.Second)).Sub(s) / 2
			}
			for x := 1; x <= in.Spec.Extra; x++ {
				add(t.Add(time.Duration(x) * gap))
			}
		}
	}
	if len(m.outages) > 0 { // pings of runs that were under way when the host went down
		evs = slices.DeleteFunc(evs, func(e Event) bool { return m.inOutage(start, e.T) })
	}
	return removeOutages(evs, inc)
}

// loopCal is a job run in a loop (`while true; do job; curl …; sleep 900;
// done`, or a systemd timer's OnUnitActiveSec): each ping comes sleep plus
// the next run's length after the one before, so its pings drift off any
// clock. Its slots are the pings themselves (the model's runs add at most
// a second): each run lasts least plus a uniform 0..spread, one in a
// hundred up to 3× spread more, drawn in order from its own source so a
// stream's loop is the same whatever is asked of it next. It starts at the
// first time asked for, which must be the stream's start (settled and
// generate ask for it before anything else).
type loopCal struct {
	sleep, least, spread time.Duration
	r                    *rand.Rand
	pings                []time.Time
}

func newLoop(r *rand.Rand, sleep, least, spread time.Duration) *loopCal {
	return &loopCal{sleep: sleep, least: least, spread: spread, r: rand.New(rand.NewPCG(r.Uint64(), r.Uint64()))}
}

func (c *loopCal) next(_ *time.Location, t time.Time) time.Time {
	if len(c.pings) == 0 {
		c.pings = append(c.pings, t.Add(c.run()))
	}
	for c.pings[len(c.pings)-1].Before(t) {
		c.pings = append(c.pings, c.pings[len(c.pings)-1].Add(c.sleep+c.run()))
	}
	i, _ := slices.BinarySearchFunc(c.pings, t, time.Time.Compare)
	return c.pings[i]
}

// run draws one run's length, to the millisecond.
func (c *loopCal) run() time.Duration {
	d := c.least + time.Duration(c.r.Int64N(int64(c.spread)+1))
	if c.r.IntN(100) == 0 {
		d += c.spread + time.Duration(c.r.Int64N(2*int64(c.spread)+1))
	}
	return d.Truncate(time.Millisecond)
}

// longest is the most a normal gap between pings can be: the sleep and the
// longest run.
func (c *loopCal) longest() time.Duration { return c.sleep + c.least + 4*c.spread }

// before is the ping before slot s (s itself at the first).
func (c *loopCal) before(s time.Time) time.Time {
	i, _ := slices.BinarySearchFunc(c.pings, s, time.Time.Compare)
	return c.pings[max(i-1, 0)]
}
