package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/beethq/beet/internal/testlog"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/ratelimit/limitertest"
)

// limiterFunc is a func-field mock of beet.RateLimiter.
type limiterFunc func(ctx context.Context, key string, now time.Time) (bool, time.Duration, error)

func (f limiterFunc) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	return f(ctx, key, now)
}

var _ beet.RateLimiter = limiterFunc(nil)

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func deadRedis(t *testing.T) *ratelimit.Redis {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	t.Cleanup(func() { c.Close() })
	return ratelimit.NewRedis(c, ratelimit.RedisOptions{})
}

// With the primary down, the suite still passes on the in-process fallback.
func TestFallbackConformanceWithDeadPrimary(t *testing.T) {
	limitertest.Run(t, func(t *testing.T) beet.RateLimiter {
		return ratelimit.NewFallback(deadRedis(t), ratelimit.NewMemory(ratelimit.MemoryOptions{}), nil)
	})
}

func TestFallbackDeadRedis(t *testing.T) {
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	counter := prometheus.NewCounter(ratelimit.FallbackCounterOpts)
	f := ratelimit.NewFallback(deadRedis(t), ratelimit.NewMemory(ratelimit.MemoryOptions{}), log,
		ratelimit.WithCounter(counter))
	key := beet.NewToken()
	if n := fillN(t, f, key, t0, 100); n != beet.IngestLimit {
		t.Fatalf("%d of 100 allowed, want %d", n, beet.IngestLimit)
	}
	// Over several retry intervals: the primary is tried again, still one log line.
	if n := fillN(t, f, key, t0.Add(5*time.Second), 100); n != 0 {
		t.Fatalf("%d allowed at 5 s, want 0", n)
	}
	if got := logs.Lines(); got != 1 {
		t.Fatalf("%d log lines, want 1:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("log: %s", logs.String())
	}
	if strings.Contains(logs.String(), key) {
		t.Fatalf("log shows the key whole: %s", logs.String())
	}
	if got := f.FallbackCount(); got != 200 {
		t.Fatalf("FallbackCount = %d, want 200", got)
	}
	if got := counterValue(t, counter); got != 200 {
		t.Fatalf("%s = %v, want 200", ratelimit.FallbackCounterOpts.Name, got)
	}
	if !f.Down() {
		t.Fatal("Down = false")
	}
}

// switchable fails while broken is set and counts its calls.
type switchable struct {
	broken atomic.Bool
	calls  atomic.Int64
	inner  beet.RateLimiter
}

func (s *switchable) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	s.calls.Add(1)
	if s.broken.Load() {
		return false, 0, errors.New("ratelimit: redis, key " + beet.Redact(key) + ": connection refused")
	}
	return s.inner.Allow(ctx, key, now)
}

func TestFallbackRecovers(t *testing.T) {
	var logs testlog.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	primary := &switchable{inner: ratelimit.NewMemory(ratelimit.MemoryOptions{})}
	fallback := ratelimit.NewMemory(ratelimit.MemoryOptions{})
	f := ratelimit.NewFallback(primary, fallback, log)
	ka, kb := beet.NewToken(), beet.NewToken()

	mustAllow(t, f, ka, t0)
	primary.broken.Store(true)
	// Concurrently, while down: the primary is tried once, then left alone.
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() { mustAllow(t, f, kb, t0.Add(time.Second)) })
	}
	wg.Wait()
	if got := primary.calls.Load(); got > 1+50 {
		t.Fatalf("primary called %d times", got)
	}
	before := primary.calls.Load()
	fillN(t, f, kb, t0.Add(1500*time.Millisecond), 100)
	if got := primary.calls.Load() - before; got != 0 {
		t.Fatalf("primary called %d times within the retry interval, want 0", got)
	}
	fillN(t, f, kb, t0.Add(2100*time.Millisecond), 100)
	if got := primary.calls.Load() - before; got != 1 {
		t.Fatalf("primary called %d times after the retry interval, want 1", got)
	}
	if got := logs.Lines(); got != 1 {
		t.Fatalf("%d log lines while down, want 1:\n%s", got, logs.String())
	}

	// Back: the next probe uses it, and all calls after that.
	primary.broken.Store(false)
	before = primary.calls.Load()
	fb := f.FallbackCount()
	if n := fillN(t, f, kb, t0.Add(3200*time.Millisecond), 100); n != beet.IngestLimit {
		// The primary never saw kb: 60 fresh slots.
		t.Fatalf("%d of 100 allowed by the recovered primary, want %d", n, beet.IngestLimit)
	}
	if got := primary.calls.Load() - before; got != 100 {
		t.Fatalf("primary called %d times after recovery, want 100", got)
	}
	if f.FallbackCount() != fb || f.Down() {
		t.Fatalf("FallbackCount %d → %d, Down %v after recovery", fb, f.FallbackCount(), f.Down())
	}
	if got := logs.Lines(); got != 2 || !strings.Contains(logs.String(), "level=INFO") {
		t.Fatalf("%d log lines, want 2 (down, back):\n%s", got, logs.String())
	}
}

// A slow primary is cut off by the timeout and the fallback answers.
func TestFallbackTimeout(t *testing.T) {
	slow := limiterFunc(func(ctx context.Context, _ string, _ time.Time) (bool, time.Duration, error) {
		<-ctx.Done()
		return false, 0, ctx.Err()
	})
	f := ratelimit.NewFallback(slow, ratelimit.NewMemory(ratelimit.MemoryOptions{}), nil,
		ratelimit.WithTimeout(20*time.Millisecond), ratelimit.WithRetryInterval(time.Minute))
	start := time.Now()
	if !mustAllow(t, f, beet.NewToken(), t0) {
		t.Fatal("rejected")
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	if !f.Down() || f.FallbackCount() != 1 {
		t.Fatalf("Down %v, FallbackCount %d", f.Down(), f.FallbackCount())
	}
}

// A caller that gave up does not mark the primary down.
func TestFallbackCallerCanceled(t *testing.T) {
	primary := limiterFunc(func(ctx context.Context, _ string, _ time.Time) (bool, time.Duration, error) {
		return false, 0, ctx.Err()
	})
	f := ratelimit.NewFallback(primary, ratelimit.NewMemory(ratelimit.MemoryOptions{}), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, _, err := f.Allow(ctx, beet.NewToken(), t0)
	if err != nil || !ok {
		t.Fatalf("Allow = %v, %v", ok, err)
	}
	if f.Down() {
		t.Fatal("primary marked down because the caller canceled")
	}
}

// A real Redis primary is used while it works: two Fallbacks (instances) share it.
func TestFallbackUsesWorkingRedis(t *testing.T) {
	c := testRedis(t)
	prefix := testPrefix(t, c)
	newInstance := func() *ratelimit.Fallback {
		return ratelimit.NewFallback(ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: prefix}),
			ratelimit.NewMemory(ratelimit.MemoryOptions{}), nil, ratelimit.WithTimeout(time.Second))
	}
	a, b := newInstance(), newInstance()
	key := beet.NewToken()
	n := fillN(t, a, key, t0, 40) + fillN(t, b, key, t0, 40)
	if n != beet.IngestLimit {
		t.Fatalf("%d of 80 allowed across two instances, want %d", n, beet.IngestLimit)
	}
	if a.FallbackCount()+b.FallbackCount() != 0 {
		t.Fatal("fallback used with a working Redis")
	}
}
