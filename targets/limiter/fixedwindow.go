package limiter

import "time"

// fixedWindow counts admissions per window and forgets them when the window
// closes: the cheapest limiter, and the one that admits 2L across a boundary.
// Rejected requests do not count (with CountRejected they do, which shows
// only in Remaining: the window resets at its boundary whatever the count)
// — unless the penalty is PenaltyRestart: then
// a rejection restarts the key's window (the count stays full), so capacity
// comes back one whole window after the last over-limit request.
type fixedWindow struct {
	cfg   Config
	clock clock
	grid  grid // AlignWall's and AlignStart's
	keys  keyed[fwState]
}

type fwState struct {
	open  bool    // a window is open: start holds its opening instant
	start instant // the current window's opening instant
	count int
	// restarted: a rejection opened the current window, at no boundary of
	// the alignment; when it closes the alignment takes over again.
	restarted bool
}

func newFixedWindow(cfg Config) *fixedWindow {
	f := &fixedWindow{cfg: cfg}
	origin := time.Time{} // AlignWall's grid
	if cfg.Align == AlignStart {
		origin = cfg.Origin
	}
	f.grid = newGrid(&f.clock, origin, cfg.Window)
	return f
}

func (f *fixedWindow) Config() Config            { return f.cfg }
func (f *fixedWindow) Release(string, time.Time) {}

func (f *fixedWindow) Allow(key string, at time.Time) Decision {
	now := f.clock.at(at)
	w := f.cfg.Window
	s := f.keys.get(key)
	f.roll(s, now)
	reset := s.start.add(w).sub(now)
	d := Decision{Limit: f.cfg.Limit, Reset: reset}
	if s.count < f.cfg.Limit {
		s.count++
		d.Allowed = true
	} else {
		if f.cfg.CountRejected && s.count < 1<<30 {
			s.count++ // the attempt is counted; admitted ones were ≤ Limit
		}
		if f.cfg.Restarts() {
			s.start, s.restarted = now, true
			reset, d.Reset = w, w
		}
		d.RetryAfter = reset
	}
	d.Remaining = max(f.cfg.Limit-s.count, 0)
	return d
}

// roll moves s to the window holding now: a window that closed opens a
// new one at zero (a restarted one hands back to the alignment's grid).
func (f *fixedWindow) roll(s *fwState, now instant) {
	w := f.cfg.Window
	if s.restarted && !now.before(s.start.add(w)) {
		*s = fwState{}
	}
	switch {
	case s.restarted: // the penalty window runs until start+w whatever the alignment
	case f.cfg.Align == AlignWall || f.cfg.Align == AlignStart:
		start := f.grid.start(&f.clock, now, s.start, s.open)
		if !s.open || !start.equal(s.start) {
			s.open, s.start, s.count = true, start, 0
		}
	default: // AlignFirst
		if !s.open || !now.before(s.start.add(w)) {
			s.open, s.start, s.count = true, now, 0
		}
	}
}

// check is Allow without the charge (checker): the window rolled on a copy.
func (f *fixedWindow) check(key string, at time.Time) Decision {
	now := f.clock.at(at)
	var s fwState
	if cur := f.keys.lookup(key); cur != nil {
		s = *cur
	}
	f.roll(&s, now)
	reset := s.start.add(f.cfg.Window).sub(now)
	d := Decision{Limit: f.cfg.Limit, Reset: reset, Remaining: max(f.cfg.Limit-s.count, 0), Allowed: s.count < f.cfg.Limit}
	if !d.Allowed {
		d.RetryAfter = reset
	}
	return d
}
