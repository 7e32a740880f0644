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
	cfg  Config
	keys map[string]*scState
}

type scState struct {
	start      time.Time // current window's start (epoch multiple of W)
	prev, curr int
}

func newSlidingCounter(cfg Config) *slidingCounter {
	return &slidingCounter{cfg: cfg, keys: map[string]*scState{}}
}

func (c *slidingCounter) Config() Config { return c.cfg }

// origin is the grid's anchor: the zero time (the wall grid) unless
// AlignStart.
func (c *slidingCounter) origin() time.Time {
	if c.cfg.Align == AlignStart {
		return c.cfg.Origin
	}
	return time.Time{}
}

func (c *slidingCounter) Release(string, time.Time) {}

// Estimate returns the weighted count the limiter sees for key at now,
// without changing state. Exposed for tests of the worked example.
func (c *slidingCounter) estimate(s *scState, now time.Time) float64 {
	elapsed := now.Sub(s.start)
	frac := float64(elapsed) / float64(c.cfg.Window)
	if c.cfg.Align == AlignFirst {
		// HAProxy's read_freq_ctr_period is integer arithmetic: the
		// previous period's share is rounded down (a probe of HAProxy 2.6
		// is replayed exactly so, and misses decisions unrounded).
		return float64(s.curr) + math.Floor(float64(s.prev)*(1-frac)+1e-9)
	}
	return float64(s.curr) + float64(s.prev)*(1-frac)
}

func (c *slidingCounter) roll(key string, now time.Time) *scState {
	s := c.keys[key]
	if s == nil {
		s = &scState{}
		c.keys[key] = s
	}
	*s = c.rolled(s, now)
	return s
}

// rolled is s moved to the window holding now (s nil: a new key), as a
// copy: check reads it without changing the key's state.
func (c *slidingCounter) rolled(s *scState, now time.Time) scState {
	w := c.cfg.Window
	if c.cfg.Align == AlignFirst {
		return c.rolledFirst(s, now)
	}
	if s == nil {
		return scState{start: gridStart(now, time.Time{}, c.origin(), w)}
	}
	r := *s
	start := gridStart(now, r.start, c.origin(), w)
	switch {
	case start.Equal(r.start):
	case start.Equal(r.start.Add(w)):
		r.prev, r.curr, r.start = r.curr, 0, start
	default: // two or more windows idle: both counters are stale
		r.prev, r.curr, r.start = 0, 0, start
	}
	return r
}

// rolledFirst is rolled on a grid anchored at the key's first request
// (HAProxy's update_freq_ctr_period: one period on while within two, else
// a fresh anchor at now with both counters zero).
func (c *slidingCounter) rolledFirst(s *scState, now time.Time) scState {
	w := c.cfg.Window
	if s == nil {
		return scState{start: now}
	}
	r := *s
	switch {
	case now.Before(r.start.Add(w)):
	case now.Before(r.start.Add(2 * w)):
		r.prev, r.curr, r.start = r.curr, 0, r.start.Add(w)
	default:
		r.prev, r.curr, r.start = 0, 0, now
	}
	return r
}

// check is Allow without the charge (checker).
func (c *slidingCounter) check(key string, now time.Time) Decision {
	s := c.rolled(c.keys[key], now)
	L := float64(c.cfg.Limit)
	est := c.estimate(&s, now)
	d := Decision{Limit: c.cfg.Limit, Allowed: est+1 <= L+1e-9, Remaining: max(int(math.Floor(L-est)), 0)}
	if !d.Allowed {
		d.RetryAfter = c.retryAfter(&s, now)
	}
	end := s.start.Add(c.cfg.Window)
	if s.curr > 0 {
		end = end.Add(c.cfg.Window)
	}
	if s.curr > 0 || s.prev > 0 {
		d.Reset = end.Sub(now)
	}
	return d
}

func (c *slidingCounter) Allow(key string, now time.Time) Decision {
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
	end := s.start.Add(c.cfg.Window)
	if s.curr > 0 {
		end = end.Add(c.cfg.Window)
	}
	d.Reset = end.Sub(now)
	return d
}

// retryAfter solves for the first instant at which est+1 ≤ L.
func (c *slidingCounter) retryAfter(s *scState, now time.Time) time.Duration {
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
	first := func(start time.Time, curr, prev float64, e float64) time.Time {
		at := time.Duration(math.Round(e))
		if lift == 0 {
			return start.Add(at)
		}
		at = time.Duration(math.Floor(e))
		for range 3 {
			if curr+math.Floor(prev*(1-float64(at)/w)+1e-9) <= room+1e-9 {
				break
			}
			at++
		}
		return start.Add(at)
	}
	// Within the current window: curr + prev·(1 − e/W) ≤ room.
	if s.prev > 0 && float64(s.curr) <= room {
		e := w * (1 - (room-float64(s.curr)+lift)/float64(s.prev))
		at := first(s.start, float64(s.curr), float64(s.prev), e)
		if at.After(now) {
			return at.Sub(now)
		}
		return 0
	}
	// Otherwise in the next window, where curr becomes prev:
	// curr·(1 − e/W) ≤ room.
	next := s.start.Add(c.cfg.Window)
	if float64(s.curr) < room+lift {
		return next.Sub(now)
	}
	return first(next, 0, float64(s.curr), w*(1-(room+lift)/float64(s.curr))).Sub(now)
}
