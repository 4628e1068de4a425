package service

import (
	"context"

	"github.com/beethq/beet"
)

// SearchBeets lists a page of the account's beets whose name contains q
// (any case), optionally of one status, and how many match in all.
func (s *Service) SearchBeets(ctx context.Context, accountID int64, f beet.BeetFilter, q string) ([]*beet.Beet, int, error) {
	if len(q) > beet.MaxNameLen*4 {
		return nil, 0, beet.FieldError("q", "is longer than a beet name can be")
	}
	f.Name = q
	return s.Beets(ctx, accountID, f)
}

// EventCounts counts events per bucket for beets the caller already holds
// (so already scoped to its account), such as a page of the beet list.
func (s *Service) EventCounts(ctx context.Context, beets []*beet.Beet, b beet.Buckets) (map[int64][]int64, error) {
	ids := make([]int64, len(beets))
	for i, x := range beets {
		ids[i] = x.ID
	}
	return s.store.CountEventBuckets(ctx, ids, b)
}

// BeetEventCounts counts one of the account's beets' events per bucket.
// A job that reports its runs counts only its runs' ends (Buckets.Counted),
// so its chart holds as many events as runs, as detection reads it; a
// beet that only pings needs no filter, and keeps the index-only count.
func (s *Service) BeetEventCounts(ctx context.Context, accountID, id int64, b beet.Buckets) ([]int64, error) {
	x, err := s.Beet(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	r := x.Runs
	b.Counted = b.Counted || r.StartedAt != nil || len(r.ByRID) > 0 || len(r.RecentMS) > 0
	m, err := s.store.CountEventBuckets(ctx, []int64{id}, b)
	if err != nil {
		return nil, err
	}
	if c, ok := m[id]; ok {
		return c, nil
	}
	return make([]int64, b.N), nil
}
