package ratelimit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/beethq/beet"
)

// DefaultRedisPrefix namespaces the limiter's Redis keys.
const DefaultRedisPrefix = "beet:rl:"

// RedisOptions configures NewRedis. Zero fields take their defaults.
type RedisOptions struct {
	Limit  int           // default beet.IngestLimit
	Window time.Duration // default beet.IngestWindow
	Prefix string        // prepended to every key; default DefaultRedisPrefix
}

// Redis is a sliding-log limiter shared by every instance that uses the same
// Redis: one sorted set per key, scored by accepted request time in
// microseconds, checked and updated by one atomic Lua script.
//
// The script uses the caller's now, not Redis TIME. Instances' clocks are
// NTP-synced to well within the precision that matters for a 10 s window,
// and passing now gives one behaviour for Redis and Memory (so Fallback can
// switch between them), lets the shared test suite drive time, and keeps
// the script deterministic. Because the log is a sorted set, a request from
// an instance whose clock is slightly behind is still counted correctly.
type Redis struct {
	client redis.Scripter
	limit  string
	window int64 // microseconds
	ttl    string
	prefix string

	member string // per-process, so members from different instances never collide
	seq    atomic.Uint64
}

var _ beet.RateLimiter = (*Redis)(nil)

// allowScript is the sliding log. Numbers are passed as strings and used
// unchanged in commands because Lua would format a microsecond timestamp
// (about 1.8e15) with only 14 significant digits; comparisons and the
// retry-after arithmetic are exact in Lua's doubles (all values < 2^53).
//
// KEYS[1] the log; ARGV: now (µs), cutoff = now - window (µs), window (µs),
// limit, unique member, ttl (ms).
// Returns {1, 0} when accepted, {0, retry-after µs} when not.
var allowScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
	redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
	redis.call('PEXPIRE', KEYS[1], ARGV[6])
	return {1, 0}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tonumber(oldest[2]) + tonumber(ARGV[3]) - tonumber(ARGV[1])}
`)

// NewRedis returns a limiter on client (a *redis.Client, *redis.ClusterClient
// or *redis.Ring: each call touches one key).
func NewRedis(client redis.Scripter, opts RedisOptions) *Redis {
	if opts.Limit <= 0 {
		opts.Limit = beet.IngestLimit
	}
	if opts.Window <= 0 {
		opts.Window = beet.IngestWindow
	}
	if opts.Prefix == "" {
		opts.Prefix = DefaultRedisPrefix
	}
	var id [8]byte
	rand.Read(id[:])
	return &Redis{
		client: client,
		limit:  strconv.Itoa(opts.Limit),
		window: opts.Window.Microseconds(),
		// A key expires a window (plus slack for latency) after its newest
		// accepted entry: by then it holds nothing that counts.
		ttl:    strconv.FormatInt(opts.Window.Milliseconds()+1000, 10),
		prefix: opts.Prefix,
		member: hex.EncodeToString(id[:]) + ":",
	}
}

// redisKey is the Redis key of a limiter key: the prefix and the first 16
// bytes of the key's SHA-256, never the key itself. The keys are ingestion
// tokens, and a token is all it takes to send pings, so anyone who can read
// Redis (a replica, a dump, a shared instance) must not learn them. A token
// has 131 random bits, so a plain hash cannot be turned back into it, and
// 128 bits keep distinct tokens on distinct keys.
func (r *Redis) redisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return r.prefix + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// Allow implements beet.RateLimiter. Errors come from Redis (unreachable,
// timeout) and carry only a redacted key.
func (r *Redis) Allow(ctx context.Context, key string, now time.Time) (bool, time.Duration, error) {
	t := now.UnixMicro()
	member := r.member + strconv.FormatUint(r.seq.Add(1), 36)
	res, err := allowScript.Run(ctx, r.client, []string{r.redisKey(key)},
		strconv.FormatInt(t, 10), strconv.FormatInt(t-r.window, 10),
		strconv.FormatInt(r.window, 10), r.limit, member, r.ttl,
	).Int64Slice()
	if err != nil {
		return false, 0, fmt.Errorf("ratelimit: redis, key %s: %w", beet.Redact(key), err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("ratelimit: redis, key %s: unexpected reply %v", beet.Redact(key), res)
	}
	return res[0] == 1, time.Duration(res[1]) * time.Microsecond, nil
}
