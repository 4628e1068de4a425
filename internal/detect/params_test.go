package detect

import (
	"slices"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestParamsRunTheLiveCode: DefaultParams run through Params.ApplyEvents
// gives exactly the flips of ApplyEvents (what live and `beet backtest`
// call), and a parameter changed through the hook changes what the same
// traffic raises: a drop to a third of the rate is flagged sooner with a
// lower drop alarm level.
func TestParamsRunTheLiveCode(t *testing.T) {
	ts := poissonTimes(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), 30, 30*24*10)
	t1 := ts[len(ts)-1]
	ts = append(ts, poissonTimes(t1, 10, 10*12)...) // a third of the rate for 12 h
	end := t1.Add(13 * time.Hour)
	run := func(events func(*beet.Beet, beet.EventSpan) ([]beet.Flip, error), deadlines func(*beet.Beet, time.Time) ([]beet.Flip, error)) []beet.Flip {
		b := &beet.Beet{ID: 1, Status: beet.StatusNew, Timezone: "UTC", Detection: beet.Detection{Mode: beet.ModeAuto}}
		var flips []beet.Flip
		for _, at := range append(ts, end) {
			fl, err := deadlines(b, at)
			if err != nil {
				t.Fatal(err)
			}
			flips = append(flips, fl...)
			if at.Equal(end) {
				break
			}
			if fl, err = events(b, beet.EventSpan{First: at, Last: at, Count: 1}); err != nil {
				t.Fatal(err)
			}
			flips = append(flips, fl...)
		}
		return flips
	}
	firstDrop := func(flips []beet.Flip) time.Time {
		for _, f := range flips {
			if f.Kind == beet.FlipDrop && !f.At.Before(t1) {
				return f.At
			}
		}
		t.Fatalf("no drop flagged: %+v", alarms(flips))
		return time.Time{}
	}
	live := run(ApplyEvents, ApplyDeadlines)
	def := DefaultParams()
	if hooked := run(def.ApplyEvents, def.ApplyDeadlines); !slices.EqualFunc(live, hooked, func(a, b beet.Flip) bool {
		return a.At.Equal(b.At) && a.Kind == b.Kind && a.To == b.To && a.Reason == b.Reason
	}) {
		t.Fatalf("DefaultParams differ from the live code:\n%+v\n%+v", live, hooked)
	}
	keen := def
	keen.DropAlarm /= 4
	if a, b := firstDrop(live), firstDrop(run(keen.ApplyEvents, keen.ApplyDeadlines)); !b.Before(a) {
		t.Fatalf("drop alarm %v with DropAlarm %v, %v with the defaults: want it sooner", b, keen.DropAlarm, a)
	}
}
