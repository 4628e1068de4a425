package service

import (
	"context"
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
}

// PlanCleanup is one plan's part of a clean-up pass.
type PlanCleanup struct {
	Plan    beet.Plan `json:"plan"`
	Cutoff  time.Time `json:"cutoff"`
	Deleted int64     `json:"deleted"`
}

// beetsPerPage bounds how many beet IDs one clean-up query returns.
const beetsPerPage = 500

// Cleanup deletes the events that each account's plan no longer keeps, as
// of now. It reads the plan at every pass, so a downgrade takes effect on
// the next one. Deletes go in short transactions of at most the configured
// batch, so ingestion waits on the database writer for a batch at most.
// Several instances may run it at once: the store skips rows another one
// is already deleting.
func (s *Service) Cleanup(ctx context.Context, now time.Time, dryRun bool) (*CleanupReport, error) {
	r := &CleanupReport{Now: now.UTC(), DryRun: dryRun}
	for _, p := range beet.Plans {
		pc := PlanCleanup{Plan: p, Cutoff: p.RetentionCutoff(now)}
		var after int64
		for {
			ids, err := s.store.BeetsWithEventsBefore(ctx, p, pc.Cutoff, after, beetsPerPage)
			if err != nil {
				return r, err
			}
			for _, id := range ids {
				n, err := s.cleanBeet(ctx, id, pc.Cutoff, dryRun)
				pc.Deleted += n
				if err != nil {
					r.Plans = append(r.Plans, pc)
					return r, err
				}
			}
			if len(ids) < beetsPerPage {
				break
			}
			after = ids[len(ids)-1]
		}
		r.Plans = append(r.Plans, pc)
		r.Total += pc.Deleted
	}
	return r, nil
}

func (s *Service) cleanBeet(ctx context.Context, beetID int64, cutoff time.Time, dryRun bool) (int64, error) {
	if dryRun {
		return s.store.CountEventsBefore(ctx, beetID, cutoff)
	}
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := s.store.DeleteEventsBefore(ctx, beetID, cutoff, s.cleanupBatch)
		total += n
		if err != nil || n < int64(s.cleanupBatch) {
			return total, err
		}
	}
}
