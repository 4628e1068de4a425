package ratelimit_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
	"github.com/beethq/beet/internal/ratelimit"
	"github.com/beethq/beet/internal/ratelimit/limitertest"
)

// testRedis connects to BEET_TEST_REDIS_URL or skips.
func testRedis(tb testing.TB) *redis.Client {
	tb.Helper()
	url := os.Getenv("BEET_TEST_REDIS_URL")
	if url == "" {
		tb.Skip("BEET_TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379/0); skipping the Redis limiter tests")
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		tb.Fatalf("BEET_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	if err := c.Ping(context.Background()).Err(); err != nil {
		c.Close()
		tb.Fatalf("BEET_TEST_REDIS_URL: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// testPrefix returns a key prefix unique to this test under the limiter's
// namespace, and deletes its keys when the test ends.
func testPrefix(tb testing.TB, c *redis.Client) string {
	tb.Helper()
	var b [6]byte
	rand.Read(b[:])
	prefix := ratelimit.DefaultRedisPrefix + "test:" + hex.EncodeToString(b[:]) + ":"
	tb.Cleanup(func() {
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return prefix
}

func TestRedisConformance(t *testing.T) {
	c := testRedis(t)
	limitertest.Run(t, func(t *testing.T) beet.RateLimiter {
		return ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: testPrefix(t, c)})
	})
}

// Instances share the limit: two limiters on one Redis are one.
func TestRedisSharedAcrossInstances(t *testing.T) {
	c := testRedis(t)
	prefix := testPrefix(t, c)
	a := ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: prefix})
	b := ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: prefix})
	key := beet.NewToken()
	got := 0
	for i := range 100 {
		l := a
		if i%2 == 1 {
			l = b
		}
		if mustAllow(t, l, key, t0) {
			got++
		}
	}
	if got != beet.IngestLimit {
		t.Fatalf("%d of 100 allowed across two instances, want %d", got, beet.IngestLimit)
	}
}

func TestRedisKeysNamespacedAndExpire(t *testing.T) {
	c := testRedis(t)
	prefix := testPrefix(t, c)
	l := ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: prefix})
	key := beet.NewToken()
	mustAllow(t, l, key, time.Now())
	// One key under the prefix, holding no part of the token past what
	// logs show: whoever reads Redis must not learn tokens to ping with.
	keys, err := c.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || strings.Contains(keys[0], key[len(beet.TokenPrefix)+4:len(beet.TokenPrefix)+12]) {
		t.Fatalf("keys %q for token %s: want one key that does not hold the token", keys, beet.Redact(key))
	}
	ttl, err := c.PTTL(context.Background(), keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > beet.IngestWindow+time.Second {
		t.Fatalf("PTTL = %v, want in (0, %v]", ttl, beet.IngestWindow+time.Second)
	}
	if !strings.HasPrefix(prefix, "beet:rl:") {
		t.Fatalf("prefix %q not under beet:rl:", prefix)
	}
	if def := ratelimit.DefaultRedisPrefix; def != "beet:rl:" {
		t.Fatalf("DefaultRedisPrefix = %q", def)
	}
}

func TestRedisErrorRedactsKey(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	l := ratelimit.NewRedis(c, ratelimit.RedisOptions{})
	key := beet.NewToken()
	_, _, err := l.Allow(context.Background(), key, time.Now())
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), key[len(beet.TokenPrefix)+4:]) {
		t.Fatalf("error shows the key: %v", err)
	}
	if !strings.Contains(err.Error(), beet.Redact(key)) {
		t.Fatalf("error %q does not name the redacted key", err)
	}
}

func BenchmarkRedisAllow(b *testing.B) {
	c := testRedis(b)
	ctx := context.Background()
	b.Run("hot-key", func(b *testing.B) {
		l := ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: testPrefix(b, c)})
		key := beet.NewToken()
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := l.Allow(ctx, key, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel-10k", func(b *testing.B) {
		l := ratelimit.NewRedis(c, ratelimit.RedisOptions{Prefix: testPrefix(b, c)})
		keys := make([]string, 10_000)
		for i := range keys {
			keys[i] = beet.NewToken()
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			var rb [2]byte
			rand.Read(rb[:])
			i := int(rb[0])<<8 | int(rb[1])
			for pb.Next() {
				if _, _, err := l.Allow(ctx, keys[i%len(keys)], time.Now()); err != nil {
					b.Error(err)
					return
				}
				i++
			}
		})
	})
}
