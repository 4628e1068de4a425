package beet

import (
	"context"
	"time"
)

// Incident is a system-level flip of the global guard: so many beets went
// silent together that the likely cause is Beet's own trouble or the
// network in front of it, not each of them. While it is open, beets that
// fall silent are held (no per-beet alert) instead of flipped.
type Incident struct {
	ID        int64
	StartedAt time.Time
	EndedAt   *time.Time
	Reason    string // why it opened, in words
	EndReason string // why it closed
	Held      int    // beets whose alerts it held
	Back      int    // held beets that have had an event since it opened
}

// IncidentStore keeps the global guard's incidents.
type IncidentStore interface {
	// CountSilences counts the beets that flipped to down since t.
	CountSilences(ctx context.Context, since time.Time) (int, error)
	// CountWatched counts the beets watched now: those with a deadline.
	CountWatched(ctx context.Context) (int, error)
	// SilentAccounts returns the distinct accounts of the beets that
	// flipped to down since t, at most limit of them.
	SilentAccounts(ctx context.Context, since time.Time, limit int) ([]int64, error)
	// CountWatchedAccounts counts the accounts with a beet watched now.
	CountWatchedAccounts(ctx context.Context) (int, error)
	// OpenIncident returns the open incident, with its Held and Back
	// counts, or nil.
	OpenIncident(ctx context.Context) (*Incident, error)
	// StartIncident opens inc and sets its ID; ECONFLICT if one is open.
	StartIncident(ctx context.Context, inc *Incident) error
	// HoldBeet records the beet as held by the incident and moves its
	// deadline from due to next, only if it is still due (compare and
	// set, like MoveBeetDue); it reports whether it did.
	HoldBeet(ctx context.Context, incidentID, beetID int64, due, next time.Time) (bool, error)
	// EndIncident closes the open incident id.
	EndIncident(ctx context.Context, id int64, at time.Time, reason string) error
	// FindIncidents returns the latest incidents, newest first, as one
	// account sees them: Held and Back count only that account's beets,
	// since other accounts' beets are not its business.
	FindIncidents(ctx context.Context, accountID int64, limit int) ([]*Incident, error)
}
