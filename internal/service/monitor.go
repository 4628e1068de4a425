package service

import (
	"context"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// ObserveEvents is ingestion's beet.Observer: the store calls it inside
// the transaction that stores a group of b's events, and it applies them
// to b (first event, recovery, deadline, learned model). A detector error
// leaves b as it was, so the events are stored and detection catches up on
// the next group.
func (s *Service) ObserveEvents(b *beet.Beet, sp beet.EventSpan) []beet.Flip {
	before := *b
	flips, err := detect.ApplyEvents(b, sp)
	if err != nil {
		*b = before
		s.log.Error("detection could not follow events", "beet_id", b.ID, "err", err)
		return nil
	}
	for _, f := range flips {
		s.log.Info("beet flipped", "beet_id", b.ID, "from", f.From, "to", f.To, "kind", f.Kind, "reason", f.Reason)
	}
	return flips
}

// deadline applies b's passed deadline: a flip (compare and set on status
// and deadline) or, when there is nothing to flip, the deadline moved on.
// It reports whether it flipped; losing a race is not an error.
func (s *Service) deadline(ctx context.Context, b *beet.Beet) (bool, error) {
	d, err := detect.OnDeadline(b, *b.DueAt)
	if err != nil {
		return false, err
	}
	if d.Flip == nil {
		_, err := s.store.MoveBeetDue(ctx, b.ID, *b.DueAt, d.Due)
		return false, err
	}
	err = s.store.FlipDueBeet(ctx, d.Flip, *b.DueAt, d.Due)
	switch {
	case beet.ErrorCode(err) == beet.ECONFLICT || beet.IsNotFound(err):
		return false, nil // an event moved the deadline, or another sweeper got there first
	case err != nil:
		return false, err
	}
	s.log.Info("beet flipped", "beet_id", b.ID, "from", d.Flip.From, "to", d.Flip.To, "kind", d.Flip.Kind, "reason", d.Flip.Reason)
	return true, nil
}

// Sweep evaluates up to limit beets whose deadline is at or before
// watermark, and returns how many it flipped and how many it examined. The caller passes a watermark up to which
// every received event is committed and observed, so that our own backlog
// never looks like silence. Each flip is a compare and set on status and
// deadline, so several sweepers (instances) never flip a beet twice.
func (s *Service) Sweep(ctx context.Context, now, watermark time.Time, limit int) (flipped, examined int, err error) {
	due, err := s.store.FindDueBeets(ctx, watermark, limit)
	if err != nil {
		return 0, 0, err
	}
	for _, b := range due {
		ok, err := s.deadline(ctx, b)
		if err != nil {
			if ctx.Err() != nil {
				return flipped, len(due), err
			}
			s.log.Error("deadline evaluation failed", "beet_id", b.ID, "err", err)
			continue
		}
		if ok {
			flipped++
		}
	}
	return flipped, len(due), nil
}

func sameDue(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
