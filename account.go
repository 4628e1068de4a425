package beet

import (
	"context"
	"time"
)

// Account owns beets, users and API keys. Nothing crosses accounts.
type Account struct {
	ID   int64
	Plan Plan
	// Timezone is the IANA zone new beets take (set from the browser at
	// the first-run setup, editable on the account page).
	Timezone string
	// BadgeKey signs the account's status badge URLs; empty until the
	// first badge is asked for. Changing it retires every badge URL.
	BadgeKey  string
	CreatedAt time.Time
}

// AccountStore keeps accounts and their users.
type AccountStore interface {
	// CreateAccount inserts a and its first user u in one transaction and
	// sets their IDs. A taken email is an ECONFLICT error.
	CreateAccount(ctx context.Context, a *Account, u *User) error
	FindAccountByID(ctx context.Context, id int64) (*Account, error)
	FindAccounts(ctx context.Context) ([]*Account, error)
	SetAccountPlan(ctx context.Context, id int64, p Plan) error
	// FindUserByEmail matches the email case-insensitively.
	FindUserByEmail(ctx context.Context, email string) (*User, error)
	FindUsers(ctx context.Context, accountID int64) ([]*User, error)
}
