package detect

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// scheduleRun feeds b its events in order through ApplyEvents (the path
// live ingestion and backtests share), and checks every missed-run flip
// against the events: its slot (the flip's time less the grace the model
// had) must have had no event within that grace. It returns the flips.
func scheduleRun(t *testing.T, b *beet.Beet, events []time.Time, until time.Time) []beet.Flip {
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
	var events []time.Time
	for at := t0; at.Before(t0.Add(12 * 24 * time.Hour)); at = at.Add(2 * time.Minute) {
		n := 1
		if !at.Before(burst) && at.Before(burst.Add(3*time.Hour)) {
			n = 10
		}
		for i := range n {
			events = append(events, at.Add(time.Duration(i)*12*time.Second))
		}
	}
	flips := scheduleRun(t, b, events, t0.Add(12*24*time.Hour))
	if len(flips) < 2 || flips[1].Kind != beet.FlipLearned || !strings.Contains(flips[1].Reason, "runs every 2 min") {
		t.Fatalf("not learned as a schedule: %+v", flips)
	}
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
