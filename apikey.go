package beet

import (
	"context"
	"time"
)

// APIKey authenticates management API calls for one account. Only a hash of
// the key is stored; Prefix is kept so people can tell their keys apart.
type APIKey struct {
	ID        int64
	AccountID int64
	Name      string
	Prefix    string
	Hash      []byte
	CreatedAt time.Time
	RevokedAt *time.Time
	// ReadOnly keys may call the API's GET routes only; any call that
	// changes state is EFORBIDDEN.
	ReadOnly bool
}

// MaxAPIKeysPerAccount bounds an account's keys not revoked.
const MaxAPIKeysPerAccount = 100

// APIKeyStore keeps API keys.
type APIKeyStore interface {
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// FindAPIKeyByHash returns the key with that hash even if revoked;
	// callers check RevokedAt.
	FindAPIKeyByHash(ctx context.Context, hash []byte) (*APIKey, error)
	FindAPIKeyByID(ctx context.Context, id int64) (*APIKey, error)
	FindAPIKeys(ctx context.Context, accountID int64) ([]*APIKey, error)
	// RevokeAPIKey marks the key revoked at the given time; revoking twice
	// keeps the first time.
	RevokeAPIKey(ctx context.Context, id int64, at time.Time) error
}
