package service

import (
	"context"
	"crypto/sha256"
	"strings"
	"time"

	"github.com/beethq/beet"
)

const maxAPIKeyNameLen = 100

// CreateAPIKey makes a new API key for the account and returns it once in
// plain text; the store keeps only its SHA-256 (the key has 131 random bits,
// so a fast hash is enough, unlike a password).
func (s *Service) CreateAPIKey(ctx context.Context, accountID int64, name string) (*beet.APIKey, string, error) {
	return s.CreateScopedAPIKey(ctx, accountID, name, false)
}

// CreateScopedAPIKey is CreateAPIKey for a read-only key when readOnly is
// set: it can call every GET of the API and nothing that changes state.
func (s *Service) CreateScopedAPIKey(ctx context.Context, accountID int64, name string, readOnly bool) (*beet.APIKey, string, error) {
	name = strings.TrimSpace(name)
	if err := beet.ValidateText("name", name, maxAPIKeyNameLen, 0); err != nil {
		return nil, "", err
	}
	if _, err := s.store.FindAccountByID(ctx, accountID); err != nil {
		return nil, "", err
	}
	keys, err := s.store.FindAPIKeys(ctx, accountID)
	if err != nil {
		return nil, "", err
	}
	live := 0
	for _, k := range keys {
		if k.RevokedAt == nil {
			live++
		}
	}
	if live >= beet.MaxAPIKeysPerAccount {
		return nil, "", beet.Errorf(beet.ECONFLICT, "an account has at most %d API keys; revoke one first", beet.MaxAPIKeysPerAccount)
	}
	key := beet.NewAPIKey()
	k := &beet.APIKey{AccountID: accountID, Name: name, Prefix: beet.Redact(key), Hash: hashAPIKey(key), CreatedAt: s.Now(), ReadOnly: readOnly}
	if err := s.store.CreateAPIKey(ctx, k); err != nil {
		return nil, "", err
	}
	return k, key, nil
}

// RevokeAPIKey revokes a key by ID; calls with it fail from now on.
func (s *Service) RevokeAPIKey(ctx context.Context, keyID int64) error {
	if _, err := s.store.FindAPIKeyByID(ctx, keyID); err != nil {
		return err
	}
	return s.store.RevokeAPIKey(ctx, keyID, s.Now())
}

// AuthenticateAPIKey returns the account a key belongs to. The error never
// contains the key.
func (s *Service) AuthenticateAPIKey(ctx context.Context, key string) (int64, error) {
	k, err := s.APIKeyFor(ctx, key)
	if err != nil {
		return 0, err
	}
	return k.AccountID, nil
}

// APIKeyFor returns the stored key (account and scope) that key is, or
// EUNAUTHORIZED when it is no live key. The error never contains the key.
func (s *Service) APIKeyFor(ctx context.Context, key string) (*beet.APIKey, error) {
	if !beet.ValidAPIKeyShape(key) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "invalid API key")
	}
	k, err := s.store.FindAPIKeyByHash(ctx, hashAPIKey(key))
	if beet.IsNotFound(err) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "invalid API key")
	} else if err != nil {
		return nil, err
	}
	if k.RevokedAt != nil && !k.RevokedAt.After(s.now()) {
		return nil, beet.Errorf(beet.EUNAUTHORIZED, "API key %s was revoked at %s", k.Prefix, k.RevokedAt.Format(time.RFC3339))
	}
	return k, nil
}

func hashAPIKey(key string) []byte {
	h := sha256.Sum256([]byte(key))
	return h[:]
}

// APIKeys lists the account's API keys, revoked ones included.
func (s *Service) APIKeys(ctx context.Context, accountID int64) ([]*beet.APIKey, error) {
	return s.store.FindAPIKeys(ctx, accountID)
}

// RevokeAccountAPIKey revokes one of the account's keys; another
// account's key is not found.
func (s *Service) RevokeAccountAPIKey(ctx context.Context, accountID, keyID int64) error {
	k, err := s.store.FindAPIKeyByID(ctx, keyID)
	if err != nil {
		return err
	}
	if k.AccountID != accountID {
		return beet.Errorf(beet.ENOTFOUND, "API key %d not found", keyID)
	}
	if k.RevokedAt != nil {
		return nil
	}
	if err := s.store.RevokeAPIKey(ctx, keyID, s.Now()); err != nil {
		return err
	}
	s.log.Info("API key revoked", "account_id", accountID, "key_id", keyID, "prefix", k.Prefix)
	return nil
}
