package limiter

import "time"

// blocking wraps any algorithm with a penalty period: the first rejection
// shuts the key for Config.Block (or until the algorithm itself would admit
// again, if that is later), and every request in that time is rejected
// without reaching the algorithm — knocking neither counts nor extends it
// (rate-limiter-flexible's blockDuration, Cloudflare's penalty period).
type blocking struct {
	inner Limiter
	cfg   Config
	clock clock
	until map[string]instant
	limit int // the algorithm's advertised limit, for headers during a block
}

func newBlocking(inner Limiter, cfg Config) *blocking {
	return &blocking{inner: inner, cfg: cfg, until: map[string]instant{}}
}

func (b *blocking) Config() Config { return b.cfg }

func (b *blocking) Release(key string, now time.Time) { b.inner.Release(key, now) }

func (b *blocking) Allow(key string, at time.Time) Decision {
	now := b.clock.at(at)
	if u, ok := b.until[key]; ok {
		if now.before(u) {
			wait := u.sub(now)
			return Decision{Limit: b.limit, RetryAfter: wait, Reset: wait}
		}
		delete(b.until, key)
	}
	d := b.inner.Allow(key, at)
	b.limit = d.Limit
	if !d.Allowed {
		// A silent client is admitted once the block is over and the
		// algorithm has room again: whichever comes later. The algorithm's
		// own answer is that of a silent client, since nothing reaches it
		// while the key is shut.
		wait := max(b.cfg.Block, d.RetryAfter)
		b.until[key] = now.add(wait)
		d.RetryAfter = wait
		d.Reset = max(d.Reset, wait)
		d.Remaining = 0
	}
	return d
}
