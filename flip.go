package beet

import (
	"context"
	"time"
)

// FlipKind says why a beet changed state.
type FlipKind string

const (
	FlipSilence   FlipKind = "silence"    // events stopped
	FlipDrop      FlipKind = "drop"       // the rate fell far below normal
	FlipSurge     FlipKind = "surge"      // the rate rose far above normal
	FlipMissedRun FlipKind = "missed_run" // a scheduled run did not come
	FlipRecovery  FlipKind = "recovery"   // back to normal
	FlipFirst     FlipKind = "first_event"
	FlipLearned   FlipKind = "learned"
	FlipManual    FlipKind = "manual"  // paused, resumed or switched to another mode by a person
	FlipFailed    FlipKind = "failed"  // the job reported failure (/fail, a non-zero exit code)
	FlipOverrun   FlipKind = "overrun" // a started run did not end within its run-time limit
	// FlipTooOften: a scheduled job runs more often than its schedule
	// (extra runs between its slots, again and again).
	FlipTooOften FlipKind = "too_often"
)

// Flip is one state change of a beet, with the numbers and a sentence that
// explain it. Flips are what notifications are sent for.
type Flip struct {
	ID       int64
	BeetID   int64
	At       time.Time
	From     Status
	To       Status
	Kind     FlipKind
	Reason   string
	Observed *float64
	Expected *float64
}

// FlipFilter selects a page of one beet's flips, newest first (by At,
// then by ID). A nil field means "any".
type FlipFilter struct {
	BeetID int64
	// Until keeps the flips before it (exclusive); with BeforeID, also
	// those at Until itself whose ID is smaller, so that a page that ends
	// among flips of one instant is followed without a gap: the next
	// page's Until and BeforeID are the last flip's At and ID.
	Until    *time.Time
	BeforeID *int64 // with Until only
	Limit    int    // 0 means the store's default
}

// FlipStore reads flips; they are written by BeetStore.SetBeetStatus.
type FlipStore interface {
	// FindFlips returns the beet's newest flips, newest first: the first
	// page of FindFlipPage.
	FindFlips(ctx context.Context, beetID int64, limit int) ([]*Flip, error)
	// FindFlipPage returns a page of the beet's flips, newest first.
	FindFlipPage(ctx context.Context, f FlipFilter) ([]*Flip, error)
}
