package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/beethq/beet"
)

// CleanupReport says what one clean-up pass deleted (or, on a dry run,
// would delete), per plan.
type CleanupReport struct {
	Now    time.Time     `json:"now"`
	DryRun bool          `json:"dry_run"`
	Plans  []PlanCleanup `json:"plans"`
	Total  int64         `json:"deleted_total"`
	// PartitionsDropped counts the whole partitions of events (PostgreSQL)
	// dropped because they end before every plan's cutoff; their rows are
	// not in Total.
	PartitionsDropped int `json:"partitions_dropped"`
}

// PlanCleanup is one plan's part of a clean-up pass.
type PlanCleanup struct {
	Plan    beet.Plan `json:"plan"`
	Cutoff  time.Time `json:"cutoff"`
	Deleted int64     `json:"deleted"`
}

// cleanupSkew is how far past the service clock a clean-up's now may be:
// the caller read its clock first, and the service cuts its own to
// microseconds.
const cleanupSkew = time.Second

// Cleanup deletes the events that each account's plan no longer keeps, as
// of now. It reads the plan at every pass, so a downgrade takes effect on
// the next one. Whole partitions past the longest retention go first;
// then each plan's expired events are deleted by time, from where the
// plan's last pass stopped, in short transactions that each read at most
// the configured batch of events, so a pass costs what expired since the
// last one and ingestion waits on the database writer for a batch at
// most. Several instances may run it at once: one works on a plan at a
// time, the others pass it by.
//
// A pass as of a time later than the service clock is refused (a dry run
// is not): it would move the plans' retention marks past events still
// to come, and later passes would never delete those.
// SetCleanupObserver sets fn to be told of every pass that deletes (not
// dry runs): its report, possibly partial, and its error, which wraps
// context.Canceled when the pass was stopped (by shutdown), whatever the
// store said. Call it before the clean-up job starts.
func (s *Service) SetCleanupObserver(fn func(*CleanupReport, error)) { s.cleanupObserve = fn }

func (s *Service) Cleanup(ctx context.Context, now time.Time, dryRun bool) (rep *CleanupReport, err error) {
	if s.cleanupObserve != nil && !dryRun {
		defer func() {
			e := err
			if e != nil && ctx.Err() != nil && !errors.Is(e, ctx.Err()) {
				e = fmt.Errorf("%w: %w", ctx.Err(), e)
			}
			s.cleanupObserve(rep, e)
		}()
	}
	if clock := s.Now(); !dryRun && now.After(clock.Add(cleanupSkew)) {
		return nil, beet.Errorf(beet.EINVALID, "cannot clean up as of %s, later than now (%s): the retention marks would pass events still to come, which later passes would never delete; use --dry-run to look ahead",
			now.UTC().Format(time.RFC3339), clock.Format(time.RFC3339))
	}
	r := &CleanupReport{Now: now.UTC(), DryRun: dryRun}
	oldest := now
	for _, p := range beet.Plans {
		if c := p.RetentionCutoff(now); c.Before(oldest) {
			oldest = c
		}
	}
	if !dryRun {
		n, err := s.store.DropEventsBefore(ctx, oldest)
		r.PartitionsDropped = n
		if err != nil {
			return r, err
		}
	}
	for _, p := range beet.Plans {
		pc := PlanCleanup{Plan: p, Cutoff: p.RetentionCutoff(now)}
		var err error
		if dryRun {
			pc.Deleted, err = s.store.CountExpiredEvents(ctx, p, pc.Cutoff)
		} else {
			for {
				if err = ctx.Err(); err != nil {
					break
				}
				var n int64
				var done bool
				n, done, err = s.store.DeleteExpiredEvents(ctx, p, pc.Cutoff, s.cleanupBatch)
				pc.Deleted += n
				if err != nil || done {
					break
				}
			}
		}
		r.Plans = append(r.Plans, pc)
		r.Total += pc.Deleted
		if err != nil {
			return r, err
		}
	}
	return r, nil
}
