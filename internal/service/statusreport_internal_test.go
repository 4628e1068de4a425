package service

import (
	"fmt"
	"testing"
	"time"

	"github.com/beethq/beet"
)

// TestHistory: the daily levels and uptime follow the flips: a day is as
// bad as its worst moment, time before the beet existed or while it was
// new or paused is no data and does not count against uptime, and a
// flip at a day's very start belongs to that day only.
func TestHistory(t *testing.T) {
	day := func(i int) time.Time { return time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC) }
	starts := []time.Time{day(0), day(1), day(2), day(3), day(4), day(4).Add(12 * time.Hour)} // 5 days, the last ends at noon
	flip := func(at time.Time, from, to beet.Status) *beet.StatusFlip {
		return &beet.StatusFlip{At: at, From: from, To: to}
	}
	cases := []struct {
		name   string
		b      beet.StatusPageBeet
		flips  []*beet.StatusFlip
		levels string
		uptime string
	}{
		{"quiet", beet.StatusPageBeet{Status: beet.StatusUp, CreatedAt: day(-10)}, nil, "[up up up up up]", "100"},
		{"created on day 2", beet.StatusPageBeet{Status: beet.StatusUp, CreatedAt: day(2).Add(6 * time.Hour)},
			[]*beet.StatusFlip{flip(day(2).Add(7*time.Hour), beet.StatusNew, beet.StatusUp)}, "[none none up up up]", "100"},
		{"down 12 h over midnight", beet.StatusPageBeet{Status: beet.StatusUp, CreatedAt: day(-10)},
			[]*beet.StatusFlip{flip(day(1).Add(18*time.Hour), beet.StatusUp, beet.StatusDown), flip(day(2).Add(6*time.Hour), beet.StatusDown, beet.StatusUp)},
			"[up down down up up]", "88.88"}, // 12 h down of 108 h: cut, not rounded
		{"down since before the window", beet.StatusPageBeet{Status: beet.StatusUp, CreatedAt: day(-10)},
			[]*beet.StatusFlip{flip(day(3), beet.StatusDown, beet.StatusUp)}, "[down down down up up]", "33.33"}, // 36 h up of 108 h
		{"paused, then anomalous", beet.StatusPageBeet{Status: beet.StatusAnomalous, CreatedAt: day(-10)},
			[]*beet.StatusFlip{flip(day(1), beet.StatusUp, beet.StatusPaused), flip(day(3), beet.StatusPaused, beet.StatusUp),
				flip(day(4).Add(time.Hour), beet.StatusUp, beet.StatusAnomalous)}, "[up none none up degraded]", "100"},
		{"never watched", beet.StatusPageBeet{Status: beet.StatusNew, CreatedAt: day(-10)}, nil, "[none none none none none]", "nil"},
	}
	for _, c := range cases {
		levels, uptime := history(&c.b, c.flips, starts)
		got := "nil"
		if uptime != nil {
			got = fmt.Sprint(*uptime)
		}
		if fmt.Sprint(levels) != c.levels || got != c.uptime {
			t.Errorf("%s: %v, uptime %s; want %s, %s", c.name, levels, got, c.levels, c.uptime)
		}
	}
}
