package service

import (
	"context"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
)

// EventsCommitted applies what newly committed events mean for their beets:
// a first event or a recovery flips the beet up, and each event moves the
// beet's deadline. Ingestion calls it after every commit, off the request
// path.
func (s *Service) EventsCommitted(ctx context.Context, events []beet.Event) error {
	latest := make(map[int64]time.Time)
	for i := range events {
		if t, ok := latest[events[i].BeetID]; !ok || events[i].ReceivedAt.After(t) {
			latest[events[i].BeetID] = events[i].ReceivedAt
		}
	}
	var firstErr error
	for id, last := range latest {
		if err := s.observe(ctx, id, last); err != nil && !beet.IsNotFound(err) {
			s.log.Error("detection after events failed", "beet_id", id, "err", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// observe applies one beet's new events. The flip is a compare and set; if
// something else changed the beet in between, it decides again.
func (s *Service) observe(ctx context.Context, id int64, last time.Time) error {
	for attempt := 0; ; attempt++ {
		b, err := s.store.FindBeetByID(ctx, id)
		if err != nil {
			return err
		}
		if b.LastEventAt != nil && b.LastEventAt.After(last) {
			last = *b.LastEventAt // a later commit is already in; decide from it
		}
		var downSince *time.Time
		if b.Status == beet.StatusDown {
			if fl, err := s.store.FindFlips(ctx, id, 1); err == nil && len(fl) == 1 {
				downSince = &fl[0].At
			}
		}
		d, err := detect.OnEvents(b, last, downSince)
		if err != nil {
			return err
		}
		if d.Flip != nil {
			err = s.store.SetBeetStatus(ctx, d.Flip)
			if beet.ErrorCode(err) == beet.ECONFLICT && attempt < 3 {
				continue
			}
			if err != nil {
				return err
			}
		}
		if !sameDue(b.DueAt, d.Due) {
			return s.store.SetBeetDue(ctx, id, d.Due)
		}
		return nil
	}
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
		d, err := detect.OnDeadline(b, now)
		if err != nil {
			s.log.Error("deadline evaluation failed", "beet_id", b.ID, "err", err)
			continue
		}
		if d.Flip == nil {
			if _, err := s.store.MoveBeetDue(ctx, b.ID, *b.DueAt, d.Due); err != nil {
				return flipped, len(due), err
			}
			continue
		}
		err = s.store.FlipDueBeet(ctx, d.Flip, *b.DueAt, d.Due)
		switch {
		case beet.ErrorCode(err) == beet.ECONFLICT || beet.IsNotFound(err):
			continue // an event moved the deadline, or another sweeper got there first
		case err != nil:
			return flipped, len(due), err
		}
		flipped++
		s.log.Info("beet flipped", "beet_id", b.ID, "from", d.Flip.From, "to", d.Flip.To, "kind", d.Flip.Kind, "reason", d.Flip.Reason)
	}
	return flipped, len(due), nil
}

func sameDue(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}
