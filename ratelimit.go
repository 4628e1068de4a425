package beet

import (
	"context"
	"time"
)

// The ingestion rate limit (CONTRACT §1): a token may have at most
// IngestLimit accepted requests in any sliding IngestWindow. Rejected
// requests are not counted, so a client hammering a limited token gets its
// slots back as soon as its oldest accepted requests age out.
const (
	// IngestLimit is how many accepted ingestion requests one token may
	// have in any IngestWindow.
	IngestLimit = 60
	// IngestWindow is the length of the sliding window of IngestLimit.
	IngestWindow = 10 * time.Second
)

// RateLimiter decides whether one more request for key may proceed now.
//
// Implementations keep a sliding log: a request is allowed when fewer than
// the limit of accepted requests for the same key (compared as an exact,
// case-sensitive string) arrived in the window before now. Keys are secrets
// (ingestion tokens), so implementations never log or return them whole.
type RateLimiter interface {
	// Allow records the request if it is allowed. When it is not, retryAfter says when the oldest counted request leaves the window.
	Allow(ctx context.Context, key string, now time.Time) (allowed bool, retryAfter time.Duration, err error)
}
