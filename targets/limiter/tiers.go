package limiter

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Two limits on one key (Algo Tiers). Real deployments stack them: two
// nginx limit_req zones on one location (10 r/s burst 5 per client and
// 30 per minute), or a steady limit with a burst pool beside it (4 per
// second, or 8 more per 10 s). Config.TierMode says how the two compose:
//
//   - TiersAll: every tier must admit, and a tier is charged only if none
//     rejects (nginx checks every zone and charges them only then; the
//     largest delay applies);
//   - TiersEither: the first (primary) tier admits if it can, else the
//     second (the pool) does; only the tier that admitted is charged.
//
// A tier is a plain rate family that punishes nothing, so asking a tier
// that rejects charges it nothing — unless it is a window that counts
// denied attempts (Tier.CountRejected): then every attempt it is asked
// about is charged to it, as HAProxy's counters and many Redis sliding
// windows count every tracked request. In the either mode a request the
// primary denies is asked of the pool, so both count it.

// Tiers is the family name of a two-tier composition.
const Tiers = "tiers"

// Tier modes (Config.TierMode).
const (
	TiersAll    = "all"
	TiersEither = "either"
)

// Tier is one limiter of a composition: a plain rate family and the
// parameters it uses (Config's fields of the same names). A tier on a
// start grid shares the composition's Config.Origin.
type Tier struct {
	Algo       string
	Rate       float64
	Burst      int
	DelayAfter int
	Limit      int
	Window     time.Duration
	Align      string
	// CountRejected: a window tier charges the attempts it denies too
	// (fixed_window, sliding_log, sliding_counter).
	CountRejected bool
	// RefillEvery: a token_bucket tier refilled in clumps, on the
	// composition's Origin.
	RefillEvery time.Duration
}

// tierFamilies are the families a tier may be: the ones that limit a rate
// and reject (a concurrency cap limits something else, none and an
// unbounded pacer never reject).
var tierFamilies = [...]string{TokenBucket, LeakyShaping, FixedWindow, SlidingLog, SlidingCounter}

// tierParams are the parameters a tier's spelling accepts.
var tierParams = [...]string{"rate", "burst", "delay", "refill", "limit", "window", "align", "count-rejected"}

// Config is the tier as a limiter of its own.
func (t Tier) Config(origin time.Time) Config {
	return Config{Algo: t.Algo, Rate: t.Rate, Burst: t.Burst, DelayAfter: t.DelayAfter, Limit: t.Limit,
		Window: t.Window, Align: t.Align, CountRejected: t.CountRejected, RefillEvery: t.RefillEvery, Origin: origin}
}

// TierOf is the tier c describes (its family's parameters only).
func TierOf(c Config) Tier {
	t := Tier{Algo: c.Algo}
	switch c.Algo {
	case TokenBucket, LeakyShaping:
		t.Rate, t.Burst = c.Rate, c.Burst
		if c.Algo == LeakyShaping {
			t.DelayAfter = c.DelayAfter
		} else {
			t.RefillEvery = c.RefillEvery
		}
	case FixedWindow, SlidingLog, SlidingCounter:
		t.Limit, t.Window, t.CountRejected = c.Limit, c.Window, c.CountRejected
		if c.Algo != SlidingLog {
			t.Align = c.Align
		}
	}
	return t
}

// String spells the tier the way ParseTier reads it back, with only the
// parameters its family uses: token_bucket:rate=10/s,burst=5.
func (t Tier) String() string {
	var kv []string
	switch t.Algo {
	case TokenBucket, LeakyShaping:
		kv = append(kv, "rate="+FormatRate(t.Rate), fmt.Sprintf("burst=%d", t.Burst))
		if t.DelayAfter > 0 {
			kv = append(kv, fmt.Sprintf("delay=%d", t.DelayAfter))
		}
		if t.RefillEvery > 0 {
			kv = append(kv, "refill="+t.RefillEvery.String())
		}
	case FixedWindow, SlidingLog, SlidingCounter:
		kv = append(kv, fmt.Sprintf("limit=%d", t.Limit), "window="+t.Window.String())
		if t.Align != "" && t.Align != AlignWall && t.Algo != SlidingLog {
			kv = append(kv, "align="+t.Align)
		}
		if t.CountRejected {
			kv = append(kv, "count-rejected=on")
		}
	}
	return t.Algo + ":" + strings.Join(kv, ",")
}

// ParseTier reads one tier: FAMILY:key=value,key=value, e.g.
// token_bucket:rate=10/s,burst=5 or fixed_window:limit=30,window=1m.
// Parameters left out take serve's defaults, as a builtin: target's do.
func ParseTier(s string) (Tier, error) {
	algo, params, _ := strings.Cut(strings.TrimSpace(s), ":")
	if !slices.Contains(tierFamilies[:], algo) {
		return Tier{}, fmt.Errorf("%q: a tier is FAMILY:key=value,... with FAMILY one of %s, e.g. token_bucket:rate=10/s,burst=5", s, strings.Join(tierFamilies[:], ", "))
	}
	c := Defaults()
	c.Algo = algo
	seen := map[string]bool{}
	for kv := range strings.SplitSeq(params, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
			return Tier{}, fmt.Errorf("%q: %q has no value: write key=value, pairs separated by commas", s, kv)
		case !slices.Contains(tierParams[:], k):
			return Tier{}, fmt.Errorf("%q: a tier takes %s, not %q (penalty and block do not apply to a tier)", s, strings.Join(tierParams[:], ", "), k)
		case seen[k]:
			return Tier{}, fmt.Errorf("%q: %s is given twice: keep one", s, k)
		}
		seen[k] = true
		if err := c.Set(k, v); err != nil {
			return Tier{}, fmt.Errorf("%q: %w", s, err)
		}
		if c.QueueUnbounded {
			return Tier{}, fmt.Errorf("%q: burst=unbounded never rejects, so it cannot be a tier", s)
		}
	}
	if err := c.Validate(); err != nil {
		return Tier{}, fmt.Errorf("%q: %w", s, err)
	}
	return TierOf(c), nil
}

// validateTiers is Validate for Algo Tiers.
func (c Config) validateTiers() error {
	if c.TierMode != TiersAll && c.TierMode != TiersEither {
		return fmt.Errorf("tiers needs mode=%s (every tier must admit) or mode=%s (the first admits, else the second), got %q", TiersAll, TiersEither, c.TierMode)
	}
	for i, t := range c.Tiers {
		if t.Algo == "" {
			return fmt.Errorf("tiers needs two tiers: t%d is missing, e.g. t%d=token_bucket:rate=10/s,burst=5", i+1, i+1)
		}
		if !slices.Contains(tierFamilies[:], t.Algo) {
			return fmt.Errorf("t%d: a tier is one of %s, not %q", i+1, strings.Join(tierFamilies[:], ", "), t.Algo)
		}
		if err := t.Config(c.Origin).Validate(); err != nil {
			return fmt.Errorf("t%d: %w", i+1, err)
		}
	}
	return nil
}

// checker is a model that can say what Allow would answer without charging
// anything: Allowed, RetryAfter and Delay as Allow would, Remaining and
// Reset as they stand before this request. The all-must-admit composition
// asks every tier before it charges any.
type checker interface {
	Limiter
	check(key string, now time.Time) Decision
}

// tiered is the composition of two tiers.
type tiered struct {
	cfg Config
	t   [2]checker
}

func newTiered(cfg Config) (*tiered, error) {
	c := &tiered{cfg: cfg}
	for i, t := range cfg.Tiers {
		lim, err := newAlgo(t.Config(cfg.Origin))
		if err != nil {
			return nil, err
		}
		ch, ok := lim.(checker)
		if !ok {
			return nil, fmt.Errorf("t%d: %s cannot be a tier", i+1, t.Algo)
		}
		c.t[i] = ch
	}
	return c, nil
}

func (c *tiered) Config() Config            { return c.cfg }
func (c *tiered) Release(string, time.Time) {}

func (c *tiered) Allow(key string, now time.Time) Decision {
	if c.cfg.TierMode == TiersEither {
		return c.either(key, now)
	}
	return c.all(key, now)
}

// all admits when every tier would, and only then charges them. The
// advertised quota is the smaller capacity; what is left at once is what
// the tighter tier has left.
func (c *tiered) all(key string, now time.Time) Decision {
	a, b := c.t[0].check(key, now), c.t[1].check(key, now)
	if !a.Allowed || !b.Allowed {
		// Nothing is charged but to a tier that counts denied attempts.
		// A silent client only gains capacity in every tier, so the
		// composition admits again once the later of the two tiers does.
		// Such a tier may have had room for this attempt: charged, it
		// may have none left, and it says when it will again.
		for i, t := range c.t {
			if c.cfg.Tiers[i].CountRejected {
				t.Allow(key, now)
				after := t.check(key, now).RetryAfter
				if i == 0 {
					a.RetryAfter = max(a.RetryAfter, after)
				} else {
					b.RetryAfter = max(b.RetryAfter, after)
				}
			}
		}
		return Decision{Limit: min(a.Limit, b.Limit), Remaining: 0, Reset: max(a.Reset, b.Reset),
			RetryAfter: max(a.RetryAfter, b.RetryAfter)}
	}
	a, b = c.t[0].Allow(key, now), c.t[1].Allow(key, now)
	return Decision{Allowed: true, Delay: max(a.Delay, b.Delay), Limit: min(a.Limit, b.Limit),
		Remaining: min(a.Remaining, b.Remaining), Reset: max(a.Reset, b.Reset)}
}

// either asks the primary tier, then the pool: a plain tier that rejects
// is charged nothing, one that counts denied attempts is charged anyway
// (its own Allow does it). What is left at once is both tiers' remainders (the
// primary's first, then the pool's), and the composition admits again as
// soon as either tier does.
func (c *tiered) either(key string, now time.Time) Decision {
	p := c.t[0].Allow(key, now)
	if p.Allowed {
		q := c.t[1].check(key, now)
		p.Limit += q.Limit
		p.Remaining += q.Remaining
		p.Reset = max(p.Reset, q.Reset)
		return p
	}
	q := c.t[1].Allow(key, now)
	d := Decision{Allowed: q.Allowed, Delay: q.Delay, Limit: p.Limit + q.Limit, Remaining: p.Remaining + q.Remaining,
		Reset: max(p.Reset, q.Reset)}
	if !q.Allowed {
		d.RetryAfter = min(p.RetryAfter, q.RetryAfter)
	}
	return d
}
