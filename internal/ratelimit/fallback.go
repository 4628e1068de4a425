package ratelimit

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/beethq/beet"
)

// Defaults of Fallback.
const (
	DefaultFallbackTimeout = 50 * time.Millisecond
	DefaultRetryInterval   = time.Second
)

// FallbackCounterOpts names the counter of fallback decisions, for callers
// that pass one with WithCounter.
var FallbackCounterOpts = prometheus.CounterOpts{
	Name: "beet_ratelimit_fallback_total",
	Help: "Rate-limit decisions taken by the in-process limiter because the shared (Redis) limiter failed or was known to be down.",
}

// FallbackOption configures NewFallback.
type FallbackOption func(*Fallback)

// WithTimeout bounds each call to the primary (default DefaultFallbackTimeout):
// the limiter must never hold up ingestion for long.
func WithTimeout(d time.Duration) FallbackOption {
	return func(f *Fallback) { f.timeout = d }
}

// WithRetryInterval sets how often the primary is tried again while it is
// down (default DefaultRetryInterval). Other calls meanwhile go straight to
// the fallback, so a dead Redis costs no timeouts on the hot path.
func WithRetryInterval(d time.Duration) FallbackOption {
	return func(f *Fallback) { f.retry = d }
}

// WithCounter adds c (see FallbackCounterOpts) to the counted fallback decisions.
func WithCounter(c prometheus.Counter) FallbackOption {
	return func(f *Fallback) { f.counter = c }
}

// Fallback asks the primary limiter (Redis, shared by all instances) and,
// when it fails, the fallback (Memory, this instance only), so ingestion
// never fails because of the limiter. Allow never returns an error.
//
// It logs once when it switches to the fallback and once when the primary
// works again, never per request. While the primary is down, one call per
// retry interval tries it again (measured on the now passed to Allow); the
// others use the fallback without waiting.
//
// go-redis also logs failed dials on its own global logger (redis.SetLogger);
// the app should route that to slog at debug level or silence it, or a dead
// Redis still fills the log.
//
// Trade-off: the two limiters do not share their logs. While Redis is down
// each instance limits on its own (up to Limit per instance), and right
// after it comes back the requests accepted meanwhile are not in Redis, so a
// token may get up to one extra window's worth once per outage.
type Fallback struct {
	primary, fallback beet.RateLimiter
	log               *slog.Logger
	timeout, retry    time.Duration
	counter           prometheus.Counter

	down      atomic.Bool
	nextProbe atomic.Int64 // unix nanos; while down, the first call at or after it tries the primary
	count     atomic.Uint64
}

var _ beet.RateLimiter = (*Fallback)(nil)

// NewFallback returns a limiter that uses primary and falls back to fallback.
// A nil log discards.
func NewFallback(primary, fallback beet.RateLimiter, log *slog.Logger, opts ...FallbackOption) *Fallback {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Fallback{
		primary:  primary,
		fallback: fallback,
		log:      log,
		timeout:  DefaultFallbackTimeout,
		retry:    DefaultRetryInterval,
	}
	for _, o := range opts {
		o(f)
	}
	return f
}

// Allow implements beet.RateLimiter.
func (f *Fallback) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	if f.down.Load() {
		next := f.nextProbe.Load()
		// Only the call that moves nextProbe forward tries the primary.
		if now.UnixNano() < next || !f.nextProbe.CompareAndSwap(next, now.Add(f.retry).UnixNano()) {
			return f.useFallback(ctx, key, now)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, f.timeout)
	allowed, retry, err := f.primary.Allow(pctx, key, now)
	cancel()
	if err == nil {
		if f.down.CompareAndSwap(true, false) {
			f.log.Info("rate limiter: shared limiter works again; using it", "fallback_decisions", f.count.Load())
		}
		return allowed, retry, nil
	}
	// A caller that gave up is not the primary's fault: answer, but keep the state.
	if ctx.Err() == nil {
		f.nextProbe.Store(now.Add(f.retry).UnixNano())
		if f.down.CompareAndSwap(false, true) {
			// err carries only a redacted key.
			f.log.Warn("rate limiter: shared limiter failed; limiting per instance until it works again", "err", err)
		}
	}
	return f.useFallback(ctx, key, now)
}

func (f *Fallback) useFallback(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	f.count.Add(1)
	if f.counter != nil {
		f.counter.Inc()
	}
	allowed, retry, err := f.fallback.Allow(ctx, key, now)
	if err != nil {
		// Ingestion never fails because of the limiter: fail open.
		return true, 0, nil
	}
	return allowed, retry, nil
}

// FallbackCount reports how many decisions the fallback took.
func (f *Fallback) FallbackCount() uint64 { return f.count.Load() }

// Down reports whether the primary is currently considered down.
func (f *Fallback) Down() bool { return f.down.Load() }
