package service

import (
	"context"
	"time"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/detect"
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
	// Paused: the beet is created paused.
	Paused bool
	// LastEventAt is the check's last event in the service it comes from
	// (nil: none): the beet starts from it (detect.Imported), up, or down
	// if that is overdue by now.
	LastEventAt *time.Time
	// Down: the service had the check down (a reported failure, when its
	// deadline has not passed yet).
	Down bool
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
	now := s.Now()
	if in.LastEventAt != nil {
		last := *in.LastEventAt
		if last.After(now) {
			last = now // another clock's future
		}
		b.LastEventAt = &last
	}
	var flips []beet.Flip
	switch {
	case in.Paused:
		f := beet.Flip{At: now, From: b.Status, To: beet.StatusPaused, Kind: beet.FlipManual,
			Reason: "Paused where it was imported from: events are recorded, no alerts are raised."}
		b.Status, b.StatusReason = f.To, f.Reason
		flips = append(flips, f)
	case b.LastEventAt != nil:
		if flips, err = detect.Imported(b, now, in.Down); err != nil {
			return nil, err
		}
	}
	if err := s.store.CreateImportedBeet(ctx, b, tags, in.SourceKey, flips); err != nil {
		return nil, err
	}
	s.log.Info("beet imported", "account_id", accountID, "beet_id", b.ID, "status", b.Status)
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
