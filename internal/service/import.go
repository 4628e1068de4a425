package service

import (
	"context"

	"github.com/beethq/beet"
)

// ImportInput is one beet to import from another service.
type ImportInput struct {
	BeetInput
	Tags []string
	// Token, when set, becomes the beet's token (an imported check's UUID,
	// so its clients keep working); it must have a token's shape. Empty
	// gives a fresh bt_ token.
	Token string
	// SourceKey names where the beet came from; the account imports each
	// key once.
	SourceKey string
	// Paused pauses the beet after creating it.
	Paused bool
}

// ImportBeet creates a beet imported from another service, under the
// same rules as CreateBeet, with its tags and source key in the same
// transaction. A source key the account imported already is ECONFLICT
// (field source_key).
func (s *Service) ImportBeet(ctx context.Context, accountID int64, in ImportInput) (*beet.Beet, error) {
	if in.SourceKey == "" {
		return nil, beet.FieldError("source_key", "is required")
	}
	if in.Token != "" && !beet.ValidTokenShape(in.Token) {
		return nil, beet.FieldError("token", "is not a token's shape (bt_… or a lowercase UUID)")
	}
	tags, err := beet.CleanTags("tags", in.Tags)
	if err != nil {
		return nil, err
	}
	b, err := s.draftBeet(ctx, accountID, in.BeetInput)
	if err != nil {
		return nil, err
	}
	b.Token = in.Token
	if b.Token == "" {
		b.Token = beet.NewToken()
	}
	if err := s.store.CreateImportedBeet(ctx, b, tags, in.SourceKey); err != nil {
		return nil, err
	}
	s.log.Info("beet imported", "account_id", accountID, "beet_id", b.ID)
	if in.Paused {
		return s.Pause(ctx, accountID, b.ID)
	}
	return b, nil
}

// ImportedBeet returns the account's beet imported as sourceKey, or an
// ENOTFOUND error.
func (s *Service) ImportedBeet(ctx context.Context, accountID int64, sourceKey string) (*beet.Beet, error) {
	id, err := s.store.FindImportedBeet(ctx, accountID, sourceKey)
	if err != nil {
		return nil, err
	}
	return s.Beet(ctx, accountID, id)
}
