package limiter

import "time"

// slidingLog keeps the instants of the last L admissions per key and admits a
// request when fewer than L of them lie in the trailing window: exactly "L in
// any W". A request exactly W after an admission no longer sees it. Rejected
// requests are not logged (as Caddy's rate_limit).
type slidingLog struct {
	cfg  Config
	keys map[string]*slState
}

// slState is a ring of admission instants, oldest at head.
type slState struct {
	ring []time.Time
	head int
	n    int
}

func newSlidingLog(cfg Config) *slidingLog {
	return &slidingLog{cfg: cfg, keys: map[string]*slState{}}
}

func (l *slidingLog) Config() Config            { return l.cfg }
func (l *slidingLog) Release(string, time.Time) {}

func (l *slidingLog) Allow(key string, now time.Time) Decision {
	s := l.keys[key]
	if s == nil {
		s = &slState{ring: make([]time.Time, l.cfg.Limit)}
		l.keys[key] = s
	}
	// Drop admissions that have left the window (t ≤ now − W).
	for s.n > 0 && !s.ring[s.head].Add(l.cfg.Window).After(now) {
		s.head = (s.head + 1) % len(s.ring)
		s.n--
	}
	d := Decision{Limit: l.cfg.Limit}
	if s.n < len(s.ring) {
		s.ring[(s.head+s.n)%len(s.ring)] = now
		s.n++
		d.Allowed = true
	} else {
		d.RetryAfter = s.ring[s.head].Add(l.cfg.Window).Sub(now)
	}
	d.Remaining = l.cfg.Limit - s.n
	newest := s.ring[(s.head+s.n-1)%len(s.ring)]
	d.Reset = newest.Add(l.cfg.Window).Sub(now)
	return d
}
