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
	spans := make(map[int64]span)
	for i := range events {
		t := events[i].ReceivedAt
		sp, ok := spans[events[i].BeetID]
		if !ok {
			sp = span{first: t, last: t}
		}
		sp.count++
		if t.Before(sp.first) {
			sp.first = t
		}
		if t.After(sp.last) {
			sp.last = t
		}
		spans[events[i].BeetID] = sp
	}
	ids := make([]int64, 0, len(spans))
	for id := range spans {
		ids = append(ids, id)
	}
	beets, err := s.store.FindBeetsByIDs(ctx, ids)
	if err != nil {
		return err
	}
	// The whole group is saved in one transaction: deadlines, models, and
	// the flips events cause (first event, learned), each a compare and
	// set. Recoveries and deadlines that passed before the events take the
	// per-beet path, which looks up when the beet went down.
	var states []beet.BeetState
	var slow []*beet.Beet
	for _, b := range beets {
		sp := spans[b.ID]
		if b.DueAt != nil && b.DueAt.Before(sp.first) || b.Status == beet.StatusDown {
			slow = append(slow, b)
			continue
		}
		d, err := decide(b, sp, nil)
		if err != nil {
			s.log.Error("detection after events failed", "beet_id", b.ID, "err", err)
			continue
		}
		if st, changed := stateOf(b, d); changed {
			states = append(states, st)
		}
	}
	if err := s.store.SaveBeetStates(ctx, states); err != nil {
		return err
	}
	var firstErr error
	for _, b := range slow {
		if err := s.observe(ctx, b.ID, spans[b.ID]); err != nil && !beet.IsNotFound(err) {
			s.log.Error("detection after events failed", "beet_id", b.ID, "err", err)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// span is the first and last receipt time of one beet's events in a
// group, and how many there are.
type span struct {
	first, last time.Time
	count       int
}

// observe applies one beet's new events. A deadline that passed before the
// first of them is applied first (the beet was late, even if the sweeper
// had not got to it yet), so live detection and a backtest, which replays
// in time order, give the same flips. Flips are compare and set; if
// something else changed the beet in between, it decides again.
func (s *Service) observe(ctx context.Context, id int64, sp span) error {
	for attempt := 0; ; attempt++ {
		b, err := s.store.FindBeetByID(ctx, id)
		if err != nil {
			return err
		}
		if b.DueAt != nil && b.DueAt.Before(sp.first) && attempt < 3 {
			if _, err := s.deadline(ctx, b); err != nil {
				return err
			}
			continue // read the beet again, as the deadline left it
		}
		var downSince *time.Time
		if b.Status == beet.StatusDown {
			if fl, err := s.store.FindFlips(ctx, id, 1); err == nil && len(fl) == 1 {
				downSince = &fl[0].At
			}
		}
		d, err := decide(b, sp, downSince)
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
			d.Flip = nil // recorded; what is left to save is the state
		}
		if st, changed := stateOf(b, d); changed {
			return s.store.SaveBeetStates(ctx, []beet.BeetState{st})
		}
		return nil
	}
}

// decide runs the detector on b for the events in sp. If a later commit is
// already in, it decides from that one's time.
func decide(b *beet.Beet, sp span, downSince *time.Time) (detect.Decision, error) {
	last := sp.last
	if b.LastEventAt != nil && b.LastEventAt.After(last) {
		last = *b.LastEventAt
	}
	return detect.OnEvents(b, last, sp.count, downSince)
}

// stateOf is what d changes on b, and whether it changes anything.
func stateOf(b *beet.Beet, d detect.Decision) (beet.BeetState, bool) {
	changed := d.Flip != nil || d.Model != nil || !sameDue(b.DueAt, d.Due)
	return beet.BeetState{ID: b.ID, Due: d.Due, Model: d.Model, Flip: d.Flip}, changed
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
