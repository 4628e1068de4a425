package service

import (
	"context"

	"github.com/beethq/beet"
)

// RotatedTokens returns the beet's old tokens still in their grace window
// after rotation, newest first, with the requests they received since
// (which recorded nothing). limit is accepted for the list shape; a beet
// keeps at most beet.MaxRotatedTokens.
func (s *Service) RotatedTokens(ctx context.Context, accountID, id int64, limit int) ([]*beet.RotatedToken, error) {
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	if err := checkPage(limit, 0); err != nil {
		return nil, err
	}
	return s.store.FindRotatedTokens(ctx, id, s.Now().Add(-beet.RotatedTokenGrace))
}
