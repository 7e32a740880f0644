package limiter

import "time"

// concurrencyCap admits a request while fewer than MaxInflight of the same
// key are being served. Sequential clients are never limited, which is the
// fingerprint that tells it from every rate-based family.
type concurrencyCap struct {
	cfg      Config
	inflight map[string]int
}

func newConcurrency(cfg Config) *concurrencyCap {
	return &concurrencyCap{cfg: cfg, inflight: map[string]int{}}
}

func (c *concurrencyCap) Config() Config { return c.cfg }

func (c *concurrencyCap) Allow(key string, _ time.Time) Decision {
	d := Decision{Limit: c.cfg.MaxInflight}
	if c.inflight[key] < c.cfg.MaxInflight {
		c.inflight[key]++
		d.Allowed = true
	}
	d.Remaining = c.cfg.MaxInflight - c.inflight[key]
	return d
}

func (c *concurrencyCap) Release(key string, _ time.Time) {
	if c.inflight[key] > 0 {
		c.inflight[key]--
	}
	if c.inflight[key] == 0 {
		delete(c.inflight, key)
	}
}
