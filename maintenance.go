package beet

import (
	"context"
	"time"
)

// MaintenanceWindow silences a beet, or every beet of an account (BeetID
// 0): flips inside it are recorded but not sent. It is one-off (Start,
// End) or repeating (Cron in Timezone, for Duration from each slot).
type MaintenanceWindow struct {
	ID        int64
	AccountID int64
	BeetID    int64
	Start     *time.Time
	End       *time.Time
	Cron      string
	Timezone  string
	Duration  time.Duration
	Note      string
	CreatedAt time.Time
}

// MaxMaintenanceDuration bounds a repeating window's length.
const MaxMaintenanceDuration = 7 * 24 * time.Hour

// Validate checks a window's shape; the caller parses Cron.
func (w *MaintenanceWindow) Validate() error {
	if err := ValidateText("note", w.Note, MaxDescriptionLen, TextLines); err != nil {
		return err
	}
	if w.Cron == "" {
		if w.Start == nil || w.End == nil {
			return FieldError("starts_at", "a window needs starts_at and ends_at, or cron with timezone and duration_seconds")
		}
		if !w.End.After(*w.Start) {
			return FieldError("ends_at", "must be after the start (starts_at)")
		}
		if w.Duration != 0 || w.Timezone != "" {
			return FieldError("cron", "duration_seconds and timezone go with cron")
		}
		return nil
	}
	if w.Start != nil || w.End != nil {
		return FieldError("cron", "a repeating window takes no starts_at or ends_at")
	}
	if err := ValidateTimezone("timezone", w.Timezone); err != nil {
		return err
	}
	if w.Duration < time.Minute || w.Duration > MaxMaintenanceDuration {
		return FieldError("duration_seconds", "must be from 60 to %d", int(MaxMaintenanceDuration.Seconds()))
	}
	return nil
}

// MaintenanceStore keeps maintenance windows.
type MaintenanceStore interface {
	CreateMaintenance(ctx context.Context, w *MaintenanceWindow) error
	// FindMaintenance returns the account's windows, or with beetID > 0
	// those that apply to the beet (its own and the account's).
	FindMaintenance(ctx context.Context, accountID, beetID int64) ([]*MaintenanceWindow, error)
	FindMaintenanceByID(ctx context.Context, id int64) (*MaintenanceWindow, error)
	DeleteMaintenance(ctx context.Context, id int64) error
	// FindLiveMaintenance returns, across accounts, up to limit windows
	// that can still cover an instant after since: every repeating window
	// and the one-off windows that end after since.
	FindLiveMaintenance(ctx context.Context, since time.Time, limit int) ([]*MaintenanceWindow, error)
}
