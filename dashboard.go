package beet

import (
	"context"
	"time"
)

// Buckets is a run of N equal time buckets of width Step from From.
type Buckets struct {
	From time.Time
	Step time.Duration
	N    int
	// Counted counts only the events that count toward a beet's rhythm
	// (EventKind.Counts: pings and failures, not starts and logs). It
	// reads each event's row, not only the index, so it is for one beet.
	Counted bool
}

// MaxBuckets bounds one bucketed count, so a chart query stays small.
const MaxBuckets = 1000

// End returns the end of the last bucket.
func (b Buckets) End() time.Time { return b.From.Add(time.Duration(b.N) * b.Step) }

// DashboardStore answers the dashboard's reads that the other stores do not:
// counts of events per time bucket (counted by the database, bounded by
// time) and the first-run setup.
type DashboardStore interface {
	// CountEventBuckets counts each beet's events per bucket; the result
	// maps a beet ID to N counts (beets without events are absent).
	CountEventBuckets(ctx context.Context, beetIDs []int64, b Buckets) (map[int64][]int64, error)
	// AccountsExist reports whether any account exists.
	AccountsExist(ctx context.Context) (bool, error)
	// CreateFirstAccount is CreateAccount for the first-run setup: it
	// creates the account only if no account exists yet, even when two
	// setups race, and is ECONFLICT otherwise.
	CreateFirstAccount(ctx context.Context, a *Account, u *User) error
	// AddUser adds a user to an existing account; a taken email is ECONFLICT.
	AddUser(ctx context.Context, u *User) error
}
