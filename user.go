package beet

import (
	"context"
	"time"
)

// MaxUsersPerAccount bounds the people who sign in to one account.
const MaxUsersPerAccount = 100

// User is a person who signs in to an account's dashboard.
type User struct {
	ID           int64
	AccountID    int64
	Email        string
	PasswordHash string // an encoded slow hash, never the password
	CreatedAt    time.Time
}

// UserStore changes accounts and users after they are created.
type UserStore interface {
	// SetAccountTimezone sets the zone new beets take.
	SetAccountTimezone(ctx context.Context, accountID int64, tz string) error
	// SetAccountBadgeKey replaces the badge key only if it is still old
	// (compare and set), so two first badges agree on one key; it reports
	// whether it did.
	SetAccountBadgeKey(ctx context.Context, accountID int64, old, key string) (bool, error)
	// FindUserByID returns the user or ENOTFOUND.
	FindUserByID(ctx context.Context, id int64) (*User, error)
	// SetUserPassword replaces the user's password hash and ends every
	// session of the user but keep (the session hash that made the change,
	// or nil for none), in one transaction.
	SetUserPassword(ctx context.Context, userID int64, hash string, keep []byte) error
	// DeleteUser removes one of the account's users with its sessions,
	// unless it is the account's last user (ECONFLICT) or not the
	// account's (ENOTFOUND).
	DeleteUser(ctx context.Context, accountID, userID int64) error
}
