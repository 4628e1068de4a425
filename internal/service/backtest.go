package service

import (
	"context"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/backtest"
)

// Backtest limits: the preview replays at most BacktestDays of a beet's
// history, and at most BacktestMaxEvents of its newest events in it.
const (
	BacktestDays      = 30
	BacktestMaxEvents = 50_000
)

// BacktestResult is what some detection settings would have done over a
// beet's recent history.
type BacktestResult struct {
	From, Until time.Time
	Events      int
	Truncated   bool // more events than BacktestMaxEvents: only the newest were replayed
	Flips       []beet.Flip
}

// Backtest replays the account's beet's last BacktestDays of events
// through the live detector with detection d instead of its own settings,
// without saving anything: the flips are the alerts d would have raised.
func (s *Service) Backtest(ctx context.Context, accountID, id int64, d beet.Detection) (*BacktestResult, error) {
	b, err := s.Beet(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	trial := *b
	trial.Detection = d
	if err := validateBeet(&trial); err != nil {
		return nil, err
	}
	until := s.Now()
	res := &BacktestResult{From: until.Add(-BacktestDays * 24 * time.Hour), Until: until}
	// Newest first, a page at a time, back to the start of the window.
	var times []time.Time
	page := until
	for len(times) < BacktestMaxEvents {
		evs, err := s.store.FindEvents(ctx, beet.EventFilter{BeetID: id, Since: &res.From, Until: &page, Limit: beet.MaxPageLimit})
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			times = append(times, e.ReceivedAt)
		}
		if len(evs) < beet.MaxPageLimit {
			break
		}
		page = evs[len(evs)-1].ReceivedAt
		if len(times) >= BacktestMaxEvents {
			res.Truncated = true
		}
	}
	if len(times) > BacktestMaxEvents {
		times, res.Truncated = times[:BacktestMaxEvents], true
	}
	if res.Truncated && len(times) > 0 {
		res.From = times[len(times)-1]
	}
	res.Events = len(times)
	// Oldest first, events at one instant as one point with a count.
	points := make([]backtest.Point, 0, len(times))
	for i := len(times) - 1; i >= 0; i-- {
		if n := len(points); n > 0 && points[n-1].At.Equal(times[i]) {
			points[n-1].Count++
			continue
		}
		points = append(points, backtest.Point{At: times[i], Count: 1})
	}
	res.Flips, err = backtest.Run(trial, points, until)
	if err != nil {
		return nil, err
	}
	return res, nil
}
