package detect

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// scheduleRun feeds b its events in order through ApplyEvents (the path
// live ingestion and backtests share), and checks every missed-run flip
// against the events: its slot (the flip's time less the grace the model
// had) must have had no event within that grace. Unless learnedBy is zero,
// the model must hold a schedule by then. It returns the flips.
func scheduleRun(t *testing.T, b *beet.Beet, events []time.Time, until, learnedBy time.Time) []beet.Flip {
	t.Helper()
	var flips []beet.Flip
	wrong := false // one report per stream is enough
	check := func(fl []beet.Flip, model []byte) {
		t.Helper()
		for _, f := range fl {
			if f.Kind != beet.FlipMissedRun || wrong {
				continue
			}
			m, err := LoadRateModel(model, location(b))
			if err != nil {
				t.Fatal(err)
			}
			g := m.Grace()
			slot := f.At.Add(-g)
			i := sort.Search(len(events), func(i int) bool { return !events[i].Before(slot.Add(-g)) })
			if i < len(events) && !events[i].After(f.At) {
				t.Errorf("%s: missed run for the slot at %s (grace %s), but an event came at %s",
					f.Reason, slot, g, events[i])
				wrong = true
			}
		}
		flips = append(flips, fl...)
	}
	for _, at := range events {
		if !learnedBy.IsZero() && !at.Before(learnedBy) {
			if m, err := LoadRateModel(b.Model, location(b)); err != nil || !m.Scheduled() {
				t.Fatalf("no schedule learned by %s: %v, model %+v", learnedBy, err, m)
			}
			learnedBy = time.Time{}
		}
		model := b.Model
		fl, err := ApplyEvents(b, beet.EventSpan{First: at, Last: at, Count: 1})
		if err != nil {
			t.Fatal(err)
		}
		check(fl, model)
	}
	model := b.Model
	fl, err := ApplyDeadlines(b, until)
	if err != nil {
		t.Fatal(err)
	}
	check(fl, model)
	return flips
}

// episodeFlips counts the flips out of up and back to up at or after from.
func episodeFlips(flips []beet.Flip, from time.Time) (out, back int, log string) {
	for _, f := range flips {
		if f.At.Before(from) {
			continue
		}
		if f.From == beet.StatusUp {
			out++
		}
		if f.To == beet.StatusUp {
			back++
		}
		log += fmt.Sprintf("\n  %s %s→%s %s: %s", f.At.Format(time.DateTime), f.From, f.To, f.Kind, f.Reason)
	}
	return out, back, log
}

// TestScheduleExtraEventsDoNotFlap: a beet that pinged every 2 minutes for
// 11 days is learned as a schedule; then for 3 hours it sends ten events
// every 2 minutes, 12 s apart (a job also triggered by hand, a retry loop).
// Events arrive all along, so no missed run may be flagged; the burst may
// be a surge, flagged once and recovered once, never a down/up pair per
// event (as it was: the schedule's deadline stayed at the first slot of
// the burst, and every event applied it again first).
func TestScheduleExtraEventsDoNotFlap(t *testing.T) {
	b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	burst := time.Date(2026, 3, 12, 2, 0, 0, 0, time.UTC)
	flips := scheduleRun(t, b, burstEvents(t0, burst, time.Time{}), t0.Add(12*24*time.Hour), burst)
	out, back, log := episodeFlips(flips, burst)
	for _, f := range flips[2:] {
		if f.To == beet.StatusDown {
			t.Errorf("events arrived all along, yet %s", log)
			break
		}
	}
	if out > 1 || back != out || b.Status != beet.StatusUp {
		t.Fatalf("%d flips out of up and %d back, status %s; want at most one incident:%s", out, back, b.Status, log)
	}
	t.Logf("flips from the burst on:%s", log)
}

// burstEvents is a run every 2 minutes from t0 for 12 days, with ten
// events 12 s apart instead of one for the 3 hours from burst, and no run
// at skip.
func burstEvents(t0, burst, skip time.Time) []time.Time {
	var events []time.Time
	for at := t0; at.Before(t0.Add(12 * 24 * time.Hour)); at = at.Add(2 * time.Minute) {
		n := 1
		if !at.Before(burst) && at.Before(burst.Add(3*time.Hour)) {
			n = 10
		}
		if at.Equal(skip) {
			n = 0
		}
		for i := range n {
			events = append(events, at.Add(time.Duration(i)*12*time.Second))
		}
	}
	return events
}

// TestScheduleBurstIsOneSurge: the 3-hour burst on a learned 2-minute
// schedule is more events than a run brings, so the rate model takes over
// at once and flags it as one surge within minutes, which recovers once
// the rate is back; the schedule is learned again afterwards, and a run
// missed the next day is flagged within its grace.
func TestScheduleBurstIsOneSurge(t *testing.T) {
	b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
	t0 := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	burst := time.Date(2026, 3, 12, 2, 0, 0, 0, time.UTC)
	skip := time.Date(2026, 3, 13, 12, 0, 0, 0, time.UTC)
	flips := scheduleRun(t, b, burstEvents(t0, burst, skip), t0.Add(12*24*time.Hour), burst)
	_, _, log := episodeFlips(flips, burst)
	fl := flips[2:]
	if len(fl) != 4 ||
		fl[0].Kind != beet.FlipSurge || fl[0].At.Sub(burst) > 10*time.Minute ||
		fl[1].Kind != beet.FlipRecovery || fl[1].At.Before(burst.Add(3*time.Hour)) ||
		fl[2].Kind != beet.FlipMissedRun || fl[2].At.Before(skip) || fl[2].At.Sub(skip) > 2*time.Minute ||
		fl[3].Kind != beet.FlipRecovery {
		t.Fatalf("want a surge, its recovery, a missed run and its recovery:%s", log)
	}
}

// TestScheduleExtraEventsProperty: schedule beets (every 2 min, 5 min, an
// hour, a day; UTC and Europe/Riga) learn their schedule, then for an
// episode get extra events at random: bursts after runs, single pings
// shortly before or after runs, or pings anywhere. While every run still
// comes, whatever the extras, the episode raises at most one incident (one
// flip out of up, one back) and never a down flip. In a second half of the
// trials one run in six is skipped during the episode too: missed runs may
// then be flagged, but never one whose slot had an event within its grace
// (checked in every trial), and the beet is up again at the end.
func TestScheduleExtraEventsProperty(t *testing.T) {
	periods := []time.Duration{2 * time.Minute, 5 * time.Minute, time.Hour, 24 * time.Hour}
	trials := 96
	if testing.Short() {
		trials = 24
	}
	for trial := range trials {
		skip := trial >= trials/2
		r := rand.New(rand.NewPCG(uint64(trial), 77))
		p := periods[trial%len(periods)]
		tz := []string{"UTC", "Europe/Riga"}[trial/len(periods)%2]
		loc, _ := time.LoadLocation(tz)
		jitter := time.Second
		if p >= time.Hour {
			jitter = time.Duration(1+r.IntN(60)) * time.Second
		}
		learn, episode := 9*24*time.Hour, 6*time.Hour
		if p >= time.Hour {
			learn, episode = 12*24*time.Hour, 3*24*time.Hour
		}
		t0 := time.Date(2026, 3, 20, 1, 30, 0, 0, loc) // the spring-forward night falls inside
		start, end := t0.Add(learn), t0.Add(learn+episode)
		kind := r.IntN(4)
		var events []time.Time
		for at := t0; at.Before(end.Add(3 * 24 * time.Hour)); at = at.Add(p) {
			run := at.Add(time.Duration(r.Int64N(int64(2*jitter))) - jitter)
			in := !run.Before(start) && run.Before(end)
			if !in || !skip || r.IntN(6) > 0 {
				events = append(events, run)
			}
			if !in {
				continue
			}
			switch kind {
			case 0: // a burst right after the run
				n, gap := 2+r.IntN(12), time.Duration(1+r.IntN(30))*time.Second
				for i := 1; i <= n; i++ {
					events = append(events, run.Add(time.Duration(i)*gap))
				}
			case 1: // a ping shortly before or after, now and then
				if r.IntN(3) == 0 {
					events = append(events, run.Add(time.Duration(r.Int64N(int64(p/2)))-p/4))
				}
			case 2: // pings anywhere
				for range r.IntN(3) {
					events = append(events, run.Add(time.Duration(r.Int64N(int64(p)))))
				}
			case 3: // a burst around the run, some of it early
				for range 1 + r.IntN(6) {
					events = append(events, run.Add(time.Duration(r.Int64N(int64(4*time.Minute)))-2*time.Minute))
				}
			}
		}
		sort.Slice(events, func(i, j int) bool { return events[i].Before(events[j]) })
		b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: tz, Detection: beet.Detection{Mode: beet.ModeAuto}}
		name := fmt.Sprintf("trial %d (every %s, %s, extras of kind %d, skipped runs %v)", trial, p, tz, kind, skip)
		flips := scheduleRun(t, b, events, events[len(events)-1].Add(time.Second), start.Add(-p-2*time.Minute))
		if len(flips) < 2 || flips[1].Kind != beet.FlipLearned || flips[1].At.After(start) {
			t.Fatalf("%s: not armed before the episode: %+v", name, flips)
		}
		out, back, log := episodeFlips(flips, start)
		if skip {
			if b.Status != beet.StatusUp {
				t.Errorf("%s: %s 3 days after:%s", name, b.Status, log)
			}
			continue
		}
		down := strings.Contains(log, "→down")
		if out > 1 || back != out || down || b.Status != beet.StatusUp {
			t.Errorf("%s: %d flips out of up, %d back, %s 3 days after (a run came for every slot):%s", name, out, back, b.Status, log)
		}
	}
}

// TestDailyRetryLoop: a daily job at 02:00 Europe/Riga (learned over four
// weeks) runs a retry loop for 3 hours after one run, an event every 12 s.
// The rate model takes over during the loop and may flag it as a surge;
// the next day's run resumes the schedule. Forgetting the schedule instead
// (the rate model learns the loop's hours as a rate of about 25 an hour)
// flagged a silence half an hour after the next day's run.
func TestDailyRetryLoop(t *testing.T) {
	riga, _ := time.LoadLocation("Europe/Riga")
	b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "Europe/Riga", Detection: beet.Detection{Mode: beet.ModeAuto}}
	r := rand.New(rand.NewPCG(9, 9))
	loop := time.Date(2026, 5, 1, 2, 0, 0, 0, riga)
	var events []time.Time
	for day := 0; day < 36; day++ {
		run := time.Date(2026, 4, 1+day, 2, 0, 0, 0, riga).Add(time.Duration(r.Int64N(int64(4*time.Minute))) - 2*time.Minute)
		events = append(events, run)
		if run.Sub(loop).Abs() < time.Hour {
			for i := 1; i <= 900; i++ {
				events = append(events, run.Add(time.Duration(i)*12*time.Second))
			}
		}
	}
	flips := scheduleRun(t, b, events, events[len(events)-1].Add(time.Hour), loop)
	out, back, log := episodeFlips(flips, loop.Add(-time.Hour))
	if out > 1 || back != out || strings.Contains(log, "→down") || b.Status != beet.StatusUp {
		t.Fatalf("%d flips out of up, %d back, %s at the end; want at most one surge and its recovery:%s", out, back, b.Status, log)
	}
	if m, _ := LoadRateModel(b.Model, riga); !m.Scheduled() {
		t.Fatalf("the schedule did not resume:%s", log)
	}
	t.Logf("from the loop on:%s", log)
}
