package lockfile

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// waitPoll is how often Wait tries again while another process holds the
// lock.
const waitPoll = 20 * time.Millisecond

// Wait takes the lock on path like Acquire, but waits while another
// process holds it, until ctx ends.
func Wait(ctx context.Context, path string) (*Lock, error) {
	for {
		l, err := Acquire(path)
		var held *HeldError
		if !errors.As(err, &held) {
			return l, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", held, ctx.Err())
		case <-time.After(waitPoll):
		}
	}
}
