package service

import (
	"context"
	"fmt"
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
	// The first event after a window closes the window's hours: those teach
	// nothing either.
	sp.Maintenance = s.inMaintenanceNow(b, sp.First) || b.LastEventAt != nil && s.inMaintenanceNow(b, *b.LastEventAt)
	flips, err := detect.ApplyEvents(b, sp)
	if err != nil {
		*b = before
		s.log.Error("detection could not follow events", "beet_id", b.ID, "err", err)
		return nil
	}
	for i := range flips {
		s.logFlip(&flips[i])
	}
	return flips
}

// logFlip writes a state change the detector decided to the operator's log.
func (s *Service) logFlip(f *beet.Flip) {
	s.log.Info("beet flipped", "beet_id", f.BeetID, "from", f.From, "to", f.To, "kind", f.Kind, "reason", f.Reason)
}

// The global guard. Normally a silence is rare (the detector aims at
// under 1 false alarm per 1000 beet-days), so many beets falling silent
// within minutes of each other point at one cause in front of them all:
// Beet's own ingestion, or the network or a proxy on the way to it.
const (
	guardWindow  = 15 * time.Minute // how far back silences count together
	guardMin     = 5                // silences in the window before the guard can trip
	guardShare   = 0.05             // ... and at least this share of watched beets
	guardRecheck = 5 * time.Minute  // a held beet is looked at again after this
	// guardAccounts: the silences must span this many accounts (or every
	// account that has a watched beet, if fewer): an outage in front of
	// Beet silences every account's beets, while one account's own beets
	// falling silent together must not hold the alerts of all the others.
	guardAccounts = 3
)

// Sweep evaluates up to limit beets whose deadline is at or before
// watermark, and returns how many it flipped and how many it examined.
// The caller passes a watermark up to which every received event is
// committed, so that our own backlog never looks like silence. Each flip
// is a compare and set on status and deadline, so several sweepers
// (instances) never flip a beet twice. While the global guard's incident
// is open, beets that fall silent are held instead of flipped.
func (s *Service) Sweep(ctx context.Context, now, watermark time.Time, limit int) (flipped, examined int, err error) {
	// Once per outage, not once a sweep: the sweeper says the rest.
	s.maint.reads.Note(ctx, s.log, now, maintenanceReads, s.refreshMaintenance(ctx, now, false))
	due, err := s.store.FindDueBeets(ctx, watermark, limit)
	if err != nil {
		return 0, 0, err
	}
	decisions := make([]detect.Decision, len(due))
	var silent []int64 // the accounts of the beets falling silent now
	for i, b := range due {
		if decisions[i], err = detect.OnDeadline(b); err != nil {
			// Left due: it is tried again on the next sweep.
			s.log.Error("deadline evaluation failed", "beet_id", b.ID, "err", err)
			decisions[i] = detect.Decision{Due: b.DueAt}
			continue
		}
		if isSilence(decisions[i].Flip) {
			silent = append(silent, b.AccountID)
		}
	}
	inc, err := s.guard(ctx, now, silent)
	if err != nil {
		return 0, len(due), err
	}
	changes := make([]beet.DueChange, 0, len(due))
	for i, b := range due {
		d := decisions[i]
		if inc != nil && isSilence(d.Flip) {
			if _, err := s.store.HoldBeet(ctx, inc.ID, b.ID, *b.DueAt, now.Add(guardRecheck)); err != nil {
				return 0, len(due), err
			}
			continue
		}
		if d.Flip == nil && sameDue(d.Due, b.DueAt) {
			continue // nothing to change (or the detector failed: try again next sweep)
		}
		changes = append(changes, beet.DueChange{BeetID: b.ID, Due: *b.DueAt, Flip: d.Flip, Next: d.Due})
	}
	// A change that lost its race (an event moved the deadline, or another
	// sweeper got there first) is simply not applied.
	if err := s.store.ApplyDue(ctx, changes); err != nil {
		return 0, len(due), err
	}
	for _, c := range changes {
		if c.Applied && c.Flip != nil {
			flipped++
			s.logFlip(c.Flip)
		}
	}
	return flipped, len(due), nil
}

// watched is the number of watched beets, counted at most once a minute
// (and once for all the batches of one sweep, which share their now):
// counting a million index entries on every sweep batch would cost more
// than the sweep, and the share it feeds needs no precision.
func (s *Service) watched(ctx context.Context, now time.Time) (beets, accounts int, err error) {
	s.watchedMu.Lock()
	defer s.watchedMu.Unlock()
	if !s.watchedAt.IsZero() && now.Sub(s.watchedAt) < time.Minute && !now.Before(s.watchedAt) {
		return s.watchedN, s.watchedA, nil
	}
	if beets, err = s.store.CountWatched(ctx); err != nil {
		return 0, 0, err
	}
	if accounts, err = s.store.CountWatchedAccounts(ctx); err != nil {
		return 0, 0, err
	}
	s.watchedN, s.watchedA, s.watchedAt = beets, accounts, now
	return beets, accounts, nil
}

func isSilence(f *beet.Flip) bool { return f != nil && f.To == beet.StatusDown }

// guard opens the global incident when silences pile up, closes it when
// most held beets have events again, and returns it while it is open.
func (s *Service) guard(ctx context.Context, now time.Time, silentAccounts []int64) (*beet.Incident, error) {
	silentNow := len(silentAccounts)
	inc, err := s.store.OpenIncident(ctx)
	if err != nil {
		return nil, err
	}
	if inc != nil {
		back := inc.Held > 0 && 2*inc.Back >= inc.Held
		if !back && (inc.Held > 0 || now.Sub(inc.StartedAt) < guardWindow) {
			return inc, nil
		}
		// Reasons are read by every account: they carry no installation's
		// counts (the log does), and the API counts each account's own.
		reason := fmt.Sprintf("Events are flowing again: most held beets have sent events in the %s since it opened; alerts resume.",
			detect.Duration(now.Sub(inc.StartedAt)))
		if inc.Held == 0 {
			reason = "No more beets fell silent; alerts resume."
		}
		if err := s.store.EndIncident(ctx, inc.ID, now, reason); err != nil && beet.ErrorCode(err) != beet.ECONFLICT {
			return nil, err
		}
		s.log.Warn("system incident closed", "incident_id", inc.ID, "held", inc.Held, "back", inc.Back)
		return nil, nil
	}
	if silentNow == 0 {
		return nil, nil
	}
	recent, err := s.store.CountSilences(ctx, now.Add(-guardWindow))
	if err != nil {
		return nil, err
	}
	n := recent + silentNow
	if n < guardMin {
		return nil, nil
	}
	watched, watchedAccounts, err := s.watched(ctx, now)
	if err != nil {
		return nil, err
	}
	if float64(n) < guardShare*float64(watched+recent) {
		return nil, nil
	}
	if need := min(guardAccounts, max(watchedAccounts, 1)); need > 1 {
		earlier, err := s.store.SilentAccounts(ctx, now.Add(-guardWindow), need)
		if err != nil {
			return nil, err
		}
		accounts := map[int64]bool{}
		for _, id := range append(earlier, silentAccounts...) {
			accounts[id] = true
		}
		if len(accounts) < need {
			return nil, nil // one account's own beets, however many
		}
	}
	inc = &beet.Incident{StartedAt: now, Reason: fmt.Sprintf(
		"Many beets fell silent within %s: the cause is likely in front of them all (Beet's ingestion or the network to it), so their alerts are held until events flow again.",
		detect.Duration(guardWindow))}
	switch err := s.store.StartIncident(ctx, inc); {
	case beet.ErrorCode(err) == beet.ECONFLICT:
		return s.store.OpenIncident(ctx) // another sweeper opened it
	case err != nil:
		return nil, err
	}
	s.log.Warn("system incident opened: holding silence alerts", "incident_id", inc.ID, "silent", n,
		"watched", watched+recent, "window", guardWindow.String())
	return inc, nil
}

func sameDue(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

// Incidents returns the global guard's latest incidents, newest first.
// They concern the whole installation, so every account may read them;
// they name no beet, and count only the account's own held beets.
func (s *Service) Incidents(ctx context.Context, accountID int64, limit int) ([]*beet.Incident, error) {
	return s.store.FindIncidents(ctx, accountID, limit)
}
