package limiter

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// tokenBucket is a continuous lazy-refill bucket of capacity Burst filled at
// Rate per second; it starts full and a rejected request takes nothing.
// GCRA and nginx limit_req with nodelay (capacity burst+1) look the same from
// outside. golang.org/x/time/rate does the arithmetic, on the caller's clock.
type tokenBucket struct {
	cfg  Config
	keys map[string]*rate.Limiter
}

func newTokenBucket(cfg Config) *tokenBucket {
	return &tokenBucket{cfg: cfg, keys: map[string]*rate.Limiter{}}
}

func (b *tokenBucket) Config() Config            { return b.cfg }
func (b *tokenBucket) Release(string, time.Time) {}

func (b *tokenBucket) Allow(key string, now time.Time) Decision {
	lim := b.keys[key]
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(b.cfg.Rate), b.cfg.Burst)
		b.keys[key] = lim
	}
	d := Decision{Limit: b.cfg.Burst, Allowed: lim.AllowN(now, 1)}
	tokens := lim.TokensAt(now)
	if !d.Allowed {
		d.RetryAfter = secondsToDuration((1 - tokens) / b.cfg.Rate)
	}
	d.Remaining = int(math.Floor(tokens))
	if d.Remaining < 0 {
		d.Remaining = 0
	}
	d.Reset = secondsToDuration((float64(b.cfg.Burst) - tokens) / b.cfg.Rate)
	return d
}

// secondsToDuration rounds to the nearest nanosecond: the float arithmetic
// carries noise far below that, and exact tests need 1/r to come out exact.
func secondsToDuration(s float64) time.Duration {
	if s <= 0 {
		return 0
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// check is Allow without the charge (checker). The decision is AllowN's:
// admitted when the wait for the missing part of a token, truncated to
// whole nanoseconds as rate.Limiter does, is zero.
func (b *tokenBucket) check(key string, now time.Time) Decision {
	tokens := float64(b.cfg.Burst) // a new key starts full
	if lim := b.keys[key]; lim != nil {
		tokens = lim.TokensAt(now)
	}
	d := Decision{Limit: b.cfg.Burst, Remaining: max(int(math.Floor(tokens)), 0)}
	d.Allowed = tokens >= 1 || time.Duration((1-tokens)/b.cfg.Rate*float64(time.Second)) <= 0
	if !d.Allowed {
		d.RetryAfter = secondsToDuration((1 - tokens) / b.cfg.Rate)
	}
	d.Reset = secondsToDuration((float64(b.cfg.Burst) - tokens) / b.cfg.Rate)
	return d
}
