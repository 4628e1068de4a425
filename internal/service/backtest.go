package service

import (
	"context"
	"slices"
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
	// Newest first, a page at a time, back to the start of the window;
	// the next page starts before the oldest event seen (time, then ID).
	var evs []beet.Event
	f := beet.EventFilter{BeetID: id, Since: &res.From, Until: &until, Limit: beet.MaxPageLimit}
	for len(evs) < BacktestMaxEvents {
		page, err := s.store.FindEvents(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, e := range page {
			ev := *e
			ev.Message, ev.UserAgent = "", "" // detection reads neither; 50,000 messages could be 500 MB
			evs = append(evs, ev)
		}
		if len(page) < beet.MaxPageLimit {
			break
		}
		last := page[len(page)-1]
		f.Until, f.BeforeID = &last.ReceivedAt, &last.ID
	}
	if len(evs) >= BacktestMaxEvents {
		evs, res.Truncated = evs[:BacktestMaxEvents], true
		res.From = evs[len(evs)-1].ReceivedAt
	}
	res.Events = len(evs)
	slices.Reverse(evs) // oldest first
	res.Flips, err = backtest.RunEvents(trial, evs, until)
	if err != nil {
		return nil, err
	}
	return res, nil
}
