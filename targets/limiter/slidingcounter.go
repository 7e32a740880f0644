package limiter

import (
	"math"
	"time"
)

// slidingCounter keeps two counters per key, for the current and the previous
// wall-clock window, and estimates the trailing window's count as
//
//	current + previous × (1 − elapsed/W)
//
// (Cloudflare; HAProxy's http_req_rate). A request is admitted when the
// estimate plus itself stays within L. Rejected requests do not count unless
// CountRejected (HAProxy counts every tracked request, denied ones too).
// The grid is wall-clock (epoch multiples of W), or, with AlignStart,
// anchored at Config.Origin, or, with AlignFirst, HAProxy's freq_ctr: a
// key's grid is anchored at its first request, advances one period at a
// time while requests keep coming, and re-anchors at the next request
// after two or more idle periods (both counters stale).
type slidingCounter struct {
	cfg   Config
	clock clock
	grid  grid // AlignWall's and AlignStart's
	keys  keyed[scState]
}

type scState struct {
	start      instant // current window's start (epoch multiple of W)
	prev, curr int
}

func newSlidingCounter(cfg Config) *slidingCounter {
	c := &slidingCounter{cfg: cfg}
	origin := time.Time{} // the wall grid
	if cfg.Align == AlignStart {
		origin = cfg.Origin
	}
	c.grid = newGrid(&c.clock, origin, cfg.Window)
	return c
}

func (c *slidingCounter) Config() Config { return c.cfg }

func (c *slidingCounter) Release(string, time.Time) {}

// Estimate returns the weighted count the limiter sees for key at now,
// without changing state. Exposed for tests of the worked example.
func (c *slidingCounter) estimate(s *scState, now instant) float64 {
	elapsed := now.sub(s.start)
	frac := float64(elapsed) / float64(c.cfg.Window)
	if c.cfg.Align == AlignFirst {
		// HAProxy's read_freq_ctr_period is integer arithmetic: the
		// previous period's share is rounded down (a probe of HAProxy 2.6
		// is replayed exactly so, and misses decisions unrounded).
		return float64(s.curr) + math.Floor(float64(s.prev)*(1-frac)+1e-9)
	}
	return float64(s.curr) + float64(s.prev)*(1-frac)
}

func (c *slidingCounter) roll(key string, now instant) *scState {
	s := c.keys.lookup(key)
	if s == nil {
		s = &scState{}
		c.keys.add(key, s)
		*s = c.rolled(nil, now)
		return s
	}
	*s = c.rolled(s, now)
	return s
}

// rolled is s moved to the window holding now (s nil: a new key), as a
// copy: check reads it without changing the key's state.
func (c *slidingCounter) rolled(s *scState, now instant) scState {
	w := c.cfg.Window
	if c.cfg.Align == AlignFirst {
		return c.rolledFirst(s, now)
	}
	if s == nil {
		return scState{start: c.grid.start(&c.clock, now, instant{}, false)}
	}
	r := *s
	start := c.grid.start(&c.clock, now, r.start, true)
	switch {
	case start.equal(r.start):
	case start.equal(r.start.add(w)):
		r.prev, r.curr, r.start = r.curr, 0, start
	default: // two or more windows idle: both counters are stale
		r.prev, r.curr, r.start = 0, 0, start
	}
	return r
}

// rolledFirst is rolled on a grid anchored at the key's first request
// (HAProxy's update_freq_ctr_period: one period on while within two, else
// a fresh anchor at now with both counters zero).
func (c *slidingCounter) rolledFirst(s *scState, now instant) scState {
	w := c.cfg.Window
	if s == nil {
		return scState{start: now}
	}
	r := *s
	switch {
	case now.before(r.start.add(w)):
	case now.before(r.start.add(2 * w)):
		r.prev, r.curr, r.start = r.curr, 0, r.start.add(w)
	default:
		r.prev, r.curr, r.start = 0, 0, now
	}
	return r
}

// check is Allow without the charge (checker).
func (c *slidingCounter) check(key string, at time.Time) Decision {
	now := c.clock.at(at)
	s := c.rolled(c.keys.lookup(key), now)
	L := float64(c.cfg.Limit)
	est := c.estimate(&s, now)
	d := Decision{Limit: c.cfg.Limit, Allowed: est+1 <= L+1e-9, Remaining: max(int(math.Floor(L-est)), 0)}
	if !d.Allowed {
		d.RetryAfter = c.retryAfter(&s, now)
	}
	end := s.start.add(c.cfg.Window)
	if s.curr > 0 {
		end = end.add(c.cfg.Window)
	}
	if s.curr > 0 || s.prev > 0 {
		d.Reset = end.sub(now)
	}
	return d
}

func (c *slidingCounter) Allow(key string, at time.Time) Decision {
	now := c.clock.at(at)
	s := c.roll(key, now)
	L := float64(c.cfg.Limit)
	est := c.estimate(s, now)
	d := Decision{Limit: c.cfg.Limit}
	if est+1 <= L+1e-9 { // tolerance: float noise must not flip an exact tie
		s.curr++
		est++
		d.Allowed = true
	} else {
		if c.cfg.CountRejected && s.curr < 1<<30 {
			s.curr++ // counted before the deny; a silent client waits it out too
			est++
		}
		d.RetryAfter = c.retryAfter(s, now)
	}
	d.Remaining = int(math.Floor(L - est))
	if d.Remaining < 0 {
		d.Remaining = 0
	}
	// The estimate reaches zero when the current window has become the
	// previous one and slid fully out, or at this window's end when only
	// the previous window contributes.
	end := s.start.add(c.cfg.Window)
	if s.curr > 0 {
		end = end.add(c.cfg.Window)
	}
	d.Reset = end.sub(now)
	return d
}

// retryAfter solves for the first instant at which est+1 ≤ L.
func (c *slidingCounter) retryAfter(s *scState, now instant) time.Duration {
	w := float64(c.cfg.Window)
	L := float64(c.cfg.Limit)
	room := L - 1 // the estimate must fall to this
	// A share rounded down (HAProxy) is within room − n once it is below
	// room − n + 1: a hair after the unrounded one's instant, found to the
	// nanosecond by stepping from the solution rounded down.
	lift := 0.0
	if c.cfg.Align == AlignFirst {
		lift = 1
	}
	first := func(start instant, curr, prev float64, e float64) instant {
		at := time.Duration(math.Round(e))
		if lift == 0 {
			return start.add(at)
		}
		at = time.Duration(math.Floor(e))
		for range 3 {
			if curr+math.Floor(prev*(1-float64(at)/w)+1e-9) <= room+1e-9 {
				break
			}
			at++
		}
		return start.add(at)
	}
	// Within the current window: curr + prev·(1 − e/W) ≤ room.
	if s.prev > 0 && float64(s.curr) <= room {
		e := w * (1 - (room-float64(s.curr)+lift)/float64(s.prev))
		at := first(s.start, float64(s.curr), float64(s.prev), e)
		if at.after(now) {
			return at.sub(now)
		}
		return 0
	}
	// Otherwise in the next window, where curr becomes prev:
	// curr·(1 − e/W) ≤ room.
	next := s.start.add(c.cfg.Window)
	if float64(s.curr) < room+lift {
		return next.sub(now)
	}
	return first(next, 0, float64(s.curr), w*(1-(room+lift)/float64(s.curr))).sub(now)
}
