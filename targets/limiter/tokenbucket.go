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
	keys keyed[rate.Limiter]
}

func newTokenBucket(cfg Config) *tokenBucket {
	return &tokenBucket{cfg: cfg}
}

func (b *tokenBucket) Config() Config            { return b.cfg }
func (b *tokenBucket) Release(string, time.Time) {}

// Allow asks rate.Limiter once where its answer is a rejection: the
// tokens at now decide it as AllowN would (see check), and a rejection
// changes nothing. An admission is AllowN's, which takes the token: the
// tokens left are one fewer (AllowN's own subtraction, and a TokensAt at
// the same instant adds nothing).
func (b *tokenBucket) Allow(key string, now time.Time) Decision {
	lim := b.keys.lookup(key)
	if lim == nil {
		lim = rate.NewLimiter(rate.Limit(b.cfg.Rate), b.cfg.Burst)
		b.keys.add(key, lim)
	}
	tokens := lim.TokensAt(now)
	d := Decision{Limit: b.cfg.Burst}
	if b.admits(tokens) && lim.AllowN(now, 1) {
		d.Allowed = true
		tokens--
	}
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

// admits says whether a request finding tokens in the bucket is admitted:
// AllowN's decision, whose wait for the missing part of a token,
// truncated to whole nanoseconds, is zero. (Where the float arithmetic
// leaves the range of a Duration — a rate of zero or infinity — it says
// yes, and Allow asks AllowN.)
func (b *tokenBucket) admits(tokens float64) bool {
	return tokens >= 1 || time.Duration((1-tokens)/b.cfg.Rate*float64(time.Second)) <= 0
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
	if lim := b.keys.lookup(key); lim != nil {
		tokens = lim.TokensAt(now)
	}
	d := Decision{Limit: b.cfg.Burst, Remaining: max(int(math.Floor(tokens)), 0)}
	d.Allowed = b.admits(tokens)
	if !d.Allowed {
		d.RetryAfter = secondsToDuration((1 - tokens) / b.cfg.Rate)
	}
	d.Reset = secondsToDuration((float64(b.cfg.Burst) - tokens) / b.cfg.Rate)
	return d
}
