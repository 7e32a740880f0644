package limiter

import (
	"math"
	"time"
)

// intervalBucket is a token bucket refilled in clumps (refill=D): capacity
// Burst, starting full; at every instant Origin + k·D it gains Rate·D
// tokens at once, capped at Burst, and nothing in between. A rejected
// request takes nothing. Older Envoy local rate limit (tokens_per_fill every
// fill_interval, timer started with the process) and bucket4j's
// refillIntervally behave so: capacity returns at a phase that does not
// follow the client. A zero Origin puts the fills on the wall grid (epoch
// multiples of D).
type intervalBucket struct {
	cfg     Config
	perFill float64 // tokens added at each fill instant
	clock   clock
	fills   grid // the fill intervals
	keys    keyed[ibState]
}

type ibState struct {
	tokens float64
	// fill is the last fill instant applied: the start of the fill
	// interval the state is up to date with.
	fill instant
}

// tokenEps absorbs float noise in token counts (Rate·D of 0.1/s × 30 s is
// not exactly 3): far below one token, far above rounding error.
const tokenEps = 1e-9

func newIntervalBucket(cfg Config) *intervalBucket {
	per := math.Round(cfg.Rate*cfg.RefillEvery.Seconds()/tokenEps) * tokenEps
	b := &intervalBucket{cfg: cfg, perFill: per}
	b.fills = newGrid(&b.clock, cfg.Origin, cfg.RefillEvery)
	return b
}

func (b *intervalBucket) Config() Config            { return b.cfg }
func (b *intervalBucket) Release(string, time.Time) {}

func (b *intervalBucket) Allow(key string, at time.Time) Decision {
	return b.decide(key, at, true)
}

// check is Allow without taking a token: what a composition asks a tier
// before it charges any.
func (b *intervalBucket) check(key string, at time.Time) Decision {
	return b.decide(key, at, false)
}

// decide brings the key's tokens up to now and answers, taking a token
// only when take says so.
func (b *intervalBucket) decide(key string, at time.Time, take bool) Decision {
	now := b.clock.at(at)
	every, capacity := b.cfg.RefillEvery, float64(b.cfg.Burst)
	s := b.keys.lookup(key)
	if s == nil {
		// A new key starts full, in the fill interval holding now.
		s = &ibState{tokens: capacity, fill: b.fills.start(&b.clock, now, instant{}, false)}
		b.keys.add(key, s)
	} else if start := b.fills.start(&b.clock, now, s.fill, true); start.after(s.fill) {
		fills := float64(start.sub(s.fill) / every)
		s.tokens = math.Min(capacity, s.tokens+fills*b.perFill)
		s.fill = start
	}
	d := Decision{Limit: b.cfg.Burst}
	if s.tokens >= 1-tokenEps {
		if take {
			s.tokens--
		}
		d.Allowed = true
	} else {
		d.RetryAfter = b.untilTokens(s, 1, now)
	}
	d.Remaining = max(int(math.Floor(s.tokens+tokenEps)), 0)
	d.Reset = b.untilTokens(s, capacity, now)
	return d
}

// untilTokens is the time from now to the first fill instant at which the
// key holds at least want tokens, if nothing is taken meanwhile (0 if it
// holds them now).
func (b *intervalBucket) untilTokens(s *ibState, want float64, now instant) time.Duration {
	missing := want - s.tokens
	if missing <= tokenEps {
		return 0
	}
	fills := time.Duration(math.Ceil(missing/b.perFill - tokenEps))
	return s.fill.add(fills * b.cfg.RefillEvery).sub(now)
}
