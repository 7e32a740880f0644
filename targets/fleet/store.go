package fleet

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratecheck/ratecheck/targets/limiter"
)

// The stores a fleet's replicas count in.
const (
	StoreLocal      = "local"       // each replica counts alone
	StoreRedis      = "redis"       // one counter in Redis, updated atomically (a Lua script)
	StoreRedisNaive = "redis-naive" // one counter in Redis, read then written: racy
)

// stores are the store names, for messages.
var stores = [...]string{StoreLocal, StoreRedis, StoreRedisNaive}

// bucket is a token bucket's state as the stores keep it: the tokens left
// at an instant (microseconds since the epoch). The arithmetic is the pure
// model's (targets/limiter's token bucket: continuous refill, starts full,
// a rejection takes nothing); the Lua script repeats it inside Redis.
type bucket struct {
	tokens float64
	at     int64
}

// step decides one request at now on s (nil: a bucket never used).
func step(s *bucket, now int64, rate float64, burst int) (bucket, bool) {
	b := bucket{tokens: float64(burst), at: now}
	if s != nil {
		b = *s
		if now > b.at {
			b.tokens = math.Min(float64(burst), b.tokens+float64(now-b.at)*rate/1e6)
			b.at = now
		}
	}
	if b.tokens >= 1 {
		b.tokens--
		return b, true
	}
	return b, false
}

// decision is what the replica advertises for a bucket after a request.
func decision(tokens float64, allowed bool, rate float64, burst int) limiter.Decision {
	d := limiter.Decision{Allowed: allowed, Limit: burst, Remaining: max(0, int(math.Floor(tokens)))}
	if !allowed {
		d.RetryAfter = seconds((1 - tokens) / rate)
	}
	d.Reset = seconds((float64(burst) - tokens) / rate)
	return d
}

func seconds(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// tokenBucketScript is step inside Redis: read, refill, take and write in
// one script, which Redis runs with nothing else in between. It returns
// whether the request was admitted and the tokens left (as a string: a Lua
// number would be cut to an integer).
var tokenBucketScript = redis.NewScript(`
local rate, burst, now, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local s = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens, at = tonumber(s[1]), tonumber(s[2])
if tokens == nil then tokens, at = burst, now end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1e6)
  at = now
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%d', at))
redis.call('PEXPIRE', KEYS[1], ttl)
return {allowed, string.format('%.17g', tokens)}
`)

// redisBucket is a token bucket kept in Redis, shared by every replica
// that uses the same client and prefix. Safe for concurrent use.
type redisBucket struct {
	cfg    limiter.Config
	rdb    *redis.Client
	prefix string
	naive  bool
	// failOpen: when the store cannot be reached, admit (true) or reject.
	failOpen bool
	// down, once set, makes every call fail as a store that went away
	// would (fault store-down-after).
	down    *atomic.Bool
	timeout time.Duration
}

func (b *redisBucket) Config() limiter.Config     { return b.cfg }
func (b *redisBucket) Release(string, time.Time)  {}
func (b *redisBucket) key(k string) string        { return b.prefix + k }
func (b *redisBucket) ttl() int64                 { return int64(float64(b.cfg.Burst)/b.cfg.Rate*1000) + 1000 }
func (b *redisBucket) micros(now time.Time) int64 { return now.UnixMicro() }
func (b *redisBucket) ctx() (context.Context, func()) {
	return context.WithTimeout(context.Background(), b.timeout)
}

// Allow decides one request in the store. A store that fails gives the
// fail-open or fail-closed answer, as a real limiter's error path does.
func (b *redisBucket) Allow(key string, now time.Time) limiter.Decision {
	var (
		tokens  float64
		allowed bool
		err     error
	)
	if b.down != nil && b.down.Load() {
		err = errStoreDown
	} else if b.naive {
		tokens, allowed, err = b.naiveStep(key, now)
	} else {
		tokens, allowed, err = b.atomicStep(key, now)
	}
	if err != nil {
		d := limiter.Decision{Allowed: b.failOpen, Limit: b.cfg.Burst}
		if !b.failOpen {
			d.RetryAfter = time.Second
		}
		return d
	}
	return decision(tokens, allowed, b.cfg.Rate, b.cfg.Burst)
}

var errStoreDown = fmt.Errorf("the store is down")

func (b *redisBucket) atomicStep(key string, now time.Time) (float64, bool, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	v, err := tokenBucketScript.Run(ctx, b.rdb, []string{b.key(key)}, b.cfg.Rate, b.cfg.Burst, b.micros(now), b.ttl()).Slice()
	if err != nil {
		return 0, false, err
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("token bucket script returned %v", v)
	}
	allowed, _ := v[0].(int64)
	s, _ := v[1].(string)
	tokens, err := strconv.ParseFloat(s, 64)
	return tokens, allowed == 1, err
}

// naiveReadWriteGap is how long the naive store holds a read before it
// writes the result back.
const naiveReadWriteGap = 2 * time.Millisecond

// naiveStep reads the bucket, decides in the replica and writes it back:
// two round trips with nothing holding the others off in between, the
// check-then-act race of a limiter written without a script or a lock.
func (b *redisBucket) naiveStep(key string, now time.Time) (float64, bool, error) {
	ctx, cancel := b.ctx()
	defer cancel()
	var prev *bucket
	v, err := b.rdb.Get(ctx, b.key(key)).Result()
	switch {
	case err == redis.Nil:
	case err != nil:
		return 0, false, err
	default:
		tok, at, ok := strings.Cut(v, " ")
		t, err1 := strconv.ParseFloat(tok, 64)
		a, err2 := strconv.ParseInt(at, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return 0, false, fmt.Errorf("bucket %q holds %q", key, v)
		}
		prev = &bucket{tokens: t, at: a}
	}
	next, allowed := step(prev, b.micros(now), b.cfg.Rate, b.cfg.Burst)
	// The time a real service spends between its read and its write: a
	// round trip to a Redis on another host plus its own work. On
	// loopback the window is ~50 µs, and whether a burst's reads overlap
	// in it was up to the scheduler (a burst of 200 was sometimes
	// admitted exactly 20 on a loaded machine).
	time.Sleep(naiveReadWriteGap)
	val := strconv.FormatFloat(next.tokens, 'g', 17, 64) + " " + strconv.FormatInt(next.at, 10)
	if err := b.rdb.Set(ctx, b.key(key), val, time.Duration(b.ttl())*time.Millisecond).Err(); err != nil {
		return 0, false, err
	}
	return next.tokens, allowed, nil
}
