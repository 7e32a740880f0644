package limiter

import "time"

// slidingLog keeps the instants of the last L admissions per key and admits a
// request when fewer than L of them lie in the trailing window: exactly "L in
// any W". A request exactly W after an admission no longer sees it. Rejected
// requests are not logged (as Caddy's rate_limit) — unless CountRejected:
// then every attempt is logged and a request passes when fewer than L
// attempts lie in the window, so a client that keeps knocking faster than
// L per W is never admitted again.
type slidingLog struct {
	cfg   Config
	clock clock
	keys  keyed[slState]
}

// slState is a ring of admission instants, oldest at head.
type slState struct {
	ring []instant
	head int
	n    int
}

func newSlidingLog(cfg Config) *slidingLog {
	return &slidingLog{cfg: cfg}
}

func (l *slidingLog) Config() Config            { return l.cfg }
func (l *slidingLog) Release(string, time.Time) {}

func (l *slidingLog) Allow(key string, at time.Time) Decision {
	now := l.clock.at(at)
	if l.cfg.CountRejected {
		return l.allowCounting(key, now)
	}
	s := l.keys.lookup(key)
	if s == nil {
		s = &slState{ring: make([]instant, l.cfg.Limit)}
		l.keys.add(key, s)
	}
	// Drop admissions that have left the window (t ≤ now − W).
	for s.n > 0 && !s.ring[s.head].add(l.cfg.Window).after(now) {
		s.head = (s.head + 1) % len(s.ring)
		s.n--
	}
	d := Decision{Limit: l.cfg.Limit}
	if s.n < len(s.ring) {
		s.ring[(s.head+s.n)%len(s.ring)] = now
		s.n++
		d.Allowed = true
	} else {
		d.RetryAfter = s.ring[s.head].add(l.cfg.Window).sub(now)
	}
	d.Remaining = l.cfg.Limit - s.n
	newest := s.ring[(s.head+s.n-1)%len(s.ring)]
	d.Reset = newest.add(l.cfg.Window).sub(now)
	return d
}

// allowCounting logs every attempt, admitted or not (the ring grows past L
// while a client knocks; attempts older than W are dropped).
func (l *slidingLog) allowCounting(key string, now instant) Decision {
	s := l.keys.get(key)
	if s.ring == nil {
		// A fit replays thousands of fresh logs, and growing each from
		// empty was 2.5 % of a sweep's CPU: a small limit knocked on
		// through its lock holds many times its limit.
		s.ring = make([]instant, 0, ringPrealloc)
	}
	for s.n > 0 && !s.ring[s.head].add(l.cfg.Window).after(now) {
		s.head++
		s.n--
	}
	if s.head > len(s.ring)/2 { // compact: the live attempts to the front
		s.ring = append(s.ring[:0], s.ring[s.head:s.head+s.n]...)
		s.head = 0
	}
	L := l.cfg.Limit
	d := Decision{Limit: L, Allowed: s.n < L}
	s.ring = append(s.ring[:s.head+s.n], now)
	s.n++
	if !d.Allowed {
		// A silent client passes once only L−1 attempts remain in the
		// window: when the (n−L+1)-th oldest has left it.
		d.RetryAfter = s.ring[s.head+s.n-L].add(l.cfg.Window).sub(now)
	}
	d.Remaining = max(L-s.n, 0)
	d.Reset = now.add(l.cfg.Window).sub(now)
	return d
}

// check is Allow without the charge (checker), for a log of admissions or,
// counting denied attempts, of attempts.
func (l *slidingLog) check(key string, at time.Time) Decision {
	now := l.clock.at(at)
	L := l.cfg.Limit
	d := Decision{Limit: L, Remaining: L, Allowed: true}
	s := l.keys.lookup(key)
	if s == nil {
		return d
	}
	head, n := s.head, s.n
	for n > 0 && !s.ring[head].add(l.cfg.Window).after(now) {
		head = (head + 1) % len(s.ring)
		n--
	}
	d.Remaining = max(L-n, 0)
	if n >= L {
		// A log that counts denied attempts holds more than L: room
		// comes when the (n−L+1)-th oldest leaves.
		d.Allowed = false
		d.RetryAfter = s.ring[(head+n-L)%len(s.ring)].add(l.cfg.Window).sub(now)
	}
	if n > 0 {
		d.Reset = s.ring[(head+n-1)%len(s.ring)].add(l.cfg.Window).sub(now)
	}
	return d
}

// ringPrealloc is a counting log's first room, in attempts: a probe's
// knocks within one window rarely pass it.
const ringPrealloc = 256
