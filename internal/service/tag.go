package service

import (
	"context"

	"github.com/beethq/beet"
)

// SetBeetTags replaces the tags of the account's beet; tags is what a
// person typed ("prod, billing").
func (s *Service) SetBeetTags(ctx context.Context, accountID, id int64, tags string) ([]string, error) {
	parsed, err := beet.ParseTags("tags", tags)
	if err != nil {
		return nil, err
	}
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	return parsed, s.store.SetBeetTags(ctx, id, parsed)
}

// SetBeetTagList replaces the tags of the account's beet with a list (the
// API), checked by beet.CleanTags.
func (s *Service) SetBeetTagList(ctx context.Context, accountID, id int64, tags []string) ([]string, error) {
	clean, err := beet.CleanTags("tags", tags)
	if err != nil {
		return nil, err
	}
	if _, err := s.Beet(ctx, accountID, id); err != nil {
		return nil, err
	}
	return clean, s.store.SetBeetTags(ctx, id, clean)
}

// FillTags loads the tags of beets the caller already holds (so already
// scoped to its account).
func (s *Service) FillTags(ctx context.Context, beets ...*beet.Beet) error {
	ids := make([]int64, len(beets))
	for i, b := range beets {
		ids[i] = b.ID
	}
	tags, err := s.store.FindBeetTags(ctx, ids)
	if err != nil {
		return err
	}
	for _, b := range beets {
		b.Tags = tags[b.ID]
	}
	return nil
}

// AccountTags lists every tag of the account's beets.
func (s *Service) AccountTags(ctx context.Context, accountID int64) ([]string, error) {
	return s.store.FindAccountTags(ctx, accountID)
}
