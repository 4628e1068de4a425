package service

import (
	"context"

	"github.com/beethq/beet"
)

// A mistyped token is answered like any unknown one (the GIF, nothing
// recorded), so its owner learns of it only where they look: the
// dashboard says which of their beets it was probably meant for.
const (
	// maxTypoEdits is how far a sent token may be from a live one (a
	// character changed, lost, added, or two swapped, counting one each)
	// and still be taken for a typo of it. Two random tokens are about 28
	// edits apart, so 2 never pairs a typo with the wrong beet by chance.
	maxTypoEdits = 2
	// maxMatchedBeets bounds the work of one page: an account's first
	// beets, in creation order.
	maxMatchedBeets = 10_000
)

// TokenMatcher returns a function that names the account's beet whose
// live token a sent token misses by a typo, or 0 when none does or two
// do. The account's tokens are read on the first call only, so a page
// with no likely typo reads none. The live token is never returned; the
// caller says which beet, never which token.
func (s *Service) TokenMatcher(ctx context.Context, accountID int64) func(sent string) int64 {
	var live []*beet.Beet
	loaded := false
	return func(sent string) int64 {
		if !loaded {
			loaded = true
			for off := 0; off < maxMatchedBeets; {
				bs, total, err := s.store.FindBeets(ctx, beet.BeetFilter{AccountID: &accountID, Limit: 1000, Offset: off})
				if err != nil {
					s.log.Warn("could not read the account's beets to match mistyped tokens", "account_id", accountID, "err", err)
					break
				}
				live = append(live, bs...)
				if off += len(bs); len(bs) == 0 || off >= total {
					break
				}
			}
		}
		best, bestD, tie := int64(0), maxTypoEdits+1, false
		for _, b := range live {
			switch d := typoDistance(sent, b.Token, maxTypoEdits); {
			case d < bestD:
				best, bestD, tie = b.ID, d, false
			case d == bestD && d <= maxTypoEdits:
				tie = true
			}
		}
		if tie {
			return 0
		}
		return best
	}
}

// typoDistance is the optimal string alignment distance between a and b
// (changes, losses, additions and swaps of neighbours), or k+1 once it is
// known to exceed k. Only the band of cells within k of the diagonal is
// computed, and it stops at the first row past k: two random tokens part
// after a few characters.
func typoDistance(a, b string, k int) int {
	const width = 64
	inf := k + 1
	if len(a)-len(b) > k || len(b)-len(a) > k || len(b) >= width {
		return inf
	}
	var rows [3][width]int
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := range len(b) + 1 {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = min(i, inf)
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			if j < i-k || j > i+k {
				cur[j] = inf
				continue
			}
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = min(d, inf)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > k {
			return inf
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[len(b)], inf)
}
