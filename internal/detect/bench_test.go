package detect

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// poissonTimes returns n event times from t at rate perHour (exponential
// gaps, seeded): a rate beet, not a schedule.
func poissonTimes(t time.Time, perHour float64, n int) []time.Time {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Time, n)
	for i := range out {
		t = t.Add(time.Duration(r.ExpFloat64() / perHour * float64(time.Hour)))
		out[i] = t
	}
	return out
}

// BenchmarkOnEventsAuto is the per-event cost of auto mode on an armed
// rate beet (20 events an hour): decode the model, learn, run the CUSUMs,
// find the next deadline, encode the model.
//
//	go test -run '^$' -bench . -benchmem ./internal/detect
func BenchmarkOnEventsAuto(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "Europe/Riga", Detection: beet.Detection{Mode: beet.ModeAuto}}
	r := rand.New(rand.NewPCG(1, 2))
	t := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	step := func() {
		t = t.Add(time.Duration(r.ExpFloat64() / 20 * float64(time.Hour)))
		d, _ := OnEvents(bt, t, 1, nil)
		bt.Model = d.Model
		if d.Flip != nil {
			bt.Status = d.Flip.To
		}
	}
	for range 20 * 24 * 10 { // ten days: armed
		step()
	}
	if bt.Status != beet.StatusUp {
		b.Fatalf("status %s after ten days", bt.Status)
	}
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
}

// BenchmarkDeadline is the deadline computation alone (silence and drop,
// on a decoded model) for a beet at 5 events an hour.
func BenchmarkDeadline(b *testing.B) {
	m := NewRateModel(time.UTC)
	for _, t := range poissonTimes(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 5, 10*24*5) {
		m.Observe(t, 1)
	}
	if !m.Armed() || m.Scheduled() {
		b.Fatal("not an armed rate model")
	}
	for b.Loop() {
		m.Deadline(true)
	}
}

// BenchmarkOnEventsSchedule is the per-event cost of auto mode on a
// learned schedule (a daily job pinged as it ends, 1-4 min after 02:00):
// decode, match the run to its slot, learn its lateness, find the next
// missed-run deadline, encode.
func BenchmarkOnEventsSchedule(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "Europe/Berlin", Detection: beet.Detection{Mode: beet.ModeAuto}}
	r := rand.New(rand.NewPCG(1, 3))
	berlin, _ := time.LoadLocation("Europe/Berlin")
	day := time.Date(2026, 3, 2, 2, 0, 0, 0, berlin)
	step := func() {
		t := day.Add(time.Minute + time.Duration(r.Int64N(int64(3*time.Minute))))
		day = day.AddDate(0, 0, 1)
		d, _ := OnEvents(bt, t, 1, nil)
		bt.Model = d.Model
		if d.Flip != nil {
			bt.Status = d.Flip.To
		}
	}
	for range 30 {
		step()
	}
	if bt.Status != beet.StatusUp {
		b.Fatalf("status %s after 30 days", bt.Status)
	}
	// Replay the next four weeks again and again from the learned model:
	// days run on for years otherwise, into dates past the zone's table.
	model, from := slices.Clone(bt.Model), day
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n++; n%28 == 0 {
			bt.Model, day = slices.Clone(model), from
		}
		step()
	}
}

// BenchmarkOnEventsLearningDelayed: an event of a beet still learning
// whose events came about a day apart at 04:00-12:00 (no streak, and over
// more hours than a daily job delayed at random runs in): its deadline is
// the learning guard's, twice its longest gap (aboutDaily).
func BenchmarkOnEventsLearningDelayed(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "Europe/Riga", Detection: beet.Detection{Mode: beet.ModeAuto}}
	event := func(s string) {
		t, _ := time.Parse(time.RFC3339, s)
		d, err := OnEvents(bt, t, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		bt.Model = d.Model
		if d.Flip != nil {
			bt.Status = d.Flip.To
		}
	}
	for _, s := range []string{"2026-03-05T10:00:00Z", "2026-03-06T02:00:00Z", "2026-03-07T02:30:00Z", "2026-03-08T10:00:00Z"} {
		event(s)
	}
	if w, _ := Watch(bt); bt.Status != beet.StatusLearning || w.AlertAfter == 0 {
		b.Fatalf("status %s, %q: want a learning beet its guard watches", bt.Status, w.Description)
	}
	model, status := slices.Clone(bt.Model), bt.Status
	b.ReportAllocs()
	for b.Loop() {
		bt.Model, bt.Status = model, status
		event("2026-03-09T07:10:00Z")
	}
}

// BenchmarkOnEventsWorkhours: an event of a learned job every 15 min from
// 09:00 to 17:45 on weekdays on Los Angeles' clock, on a UTC beet: its
// window wraps UTC's midnight (17:00-01:45), each run reads its slot's
// day across it.
func BenchmarkOnEventsWorkhours(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	r := rand.New(rand.NewPCG(1, 4))
	la, _ := time.LoadLocation("America/Los_Angeles")
	var runs []time.Time
	for h := time.Date(2026, 1, 5, 0, 0, 0, 0, la); h.Before(time.Date(2026, 2, 2, 0, 0, 0, 0, la)); h = h.Add(15 * time.Minute) {
		if wd := h.Weekday(); wd != time.Saturday && wd != time.Sunday && h.Hour() >= 9 && h.Hour() <= 17 {
			runs = append(runs, h.Add(time.Duration(1+r.Int64N(30))*time.Second))
		}
	}
	replayFourthWeek(b, bt, runs, func() {
		if bt.Status != beet.StatusUp {
			b.Fatalf("status %s after 3 weeks", bt.Status)
		}
	})
}

// replayFourthWeek feeds bt the first three weeks of runs (a quarter of
// them each), checks what it learned, then times its fourth week replayed
// again and again from the learned model.
func replayFourthWeek(b *testing.B, bt *beet.Beet, runs []time.Time, learned func()) {
	week := len(runs) / 4
	step := func(t time.Time) {
		d, _ := OnEvents(bt, t, 1, nil)
		bt.Model = d.Model
		if d.Flip != nil {
			bt.Status = d.Flip.To
		}
	}
	for _, t := range runs[:3*week] {
		step(t)
	}
	learned()
	model, last := slices.Clone(bt.Model), runs[3*week:]
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n == len(last) {
			bt.Model, n = slices.Clone(model), 0
		}
		step(last[n])
		n++
	}
}

// BenchmarkOnEventsSurgeClusters: an event of an armed overdispersed beet
// (negative-binomial hours, 120 an hour by day, 15 at night) in the first
// hour of an eightfold night surge, whose events chain into clusters of
// more than 2·B calls: at each such cluster's end, learnBurst reads the
// surge CUSUM (surgeNow) before B may learn from it.
func BenchmarkOnEventsSurgeClusters(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 5))
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	step := func(t time.Time) {
		d, _ := OnEvents(bt, t, 1, nil)
		bt.Model = d.Model
		if d.Flip != nil {
			bt.Status = d.Flip.To
		}
	}
	hour := func(h time.Time, perHour float64) []time.Time {
		n := poissonCount(r, perHour*gammaDraw(r, 3)/3)
		at := make([]time.Time, n)
		for i := range at {
			at[i] = h.Add(time.Duration(r.Int64N(int64(time.Hour))))
		}
		slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
		return at
	}
	start := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	surge := start.AddDate(0, 0, 22).Add(-time.Hour)
	for h := start; h.Before(surge); h = h.Add(time.Hour) {
		perHour := 15.0
		if h.Hour() >= 8 && h.Hour() < 21 {
			perHour = 120
		}
		for _, t := range hour(h, perHour) {
			step(t)
		}
	}
	if bt.Status != beet.StatusUp {
		b.Fatalf("status %s after three weeks", bt.Status)
	}
	events := hour(surge, 8*15)
	model, status := slices.Clone(bt.Model), bt.Status
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n == len(events) {
			bt.Model, bt.Status, n = slices.Clone(model), status, 0
		}
		step(events[n])
		n++
	}
}

// BenchmarkOnEventsLoop: an event of a learned job run in a loop (`sleep
// 900` after runs of 20-80 s), whose schedule asks loop and gridPaced at
// every slot a deadline walks.
func BenchmarkOnEventsLoop(b *testing.B) {
	bt := &beet.Beet{Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	r := rand.New(rand.NewPCG(1, 4))
	var runs []time.Time
	for t := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC); t.Before(time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)); t = t.Add(900*time.Second + time.Duration(20+r.IntN(60))*time.Second) {
		runs = append(runs, t)
	}
	replayFourthWeek(b, bt, runs, func() {
		if m, err := LoadRateModel(bt.Model, time.UTC); err != nil || !m.Scheduled() || !m.loop() {
			b.Fatalf("not watched as a loop after 3 weeks (%v)", err)
		}
	})
}
