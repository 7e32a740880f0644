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
	cfg  Config
	keys map[string]*fwState
}

type fwState struct {
	start time.Time // the current window's opening instant
	count int
	// restarted: a rejection opened the current window, at no boundary of
	// the alignment; when it closes the alignment takes over again.
	restarted bool
}

func newFixedWindow(cfg Config) *fixedWindow {
	return &fixedWindow{cfg: cfg, keys: map[string]*fwState{}}
}

func (f *fixedWindow) Config() Config            { return f.cfg }
func (f *fixedWindow) Release(string, time.Time) {}

func (f *fixedWindow) Allow(key string, now time.Time) Decision {
	w := f.cfg.Window
	s := f.keys[key]
	if s == nil {
		s = &fwState{}
		f.keys[key] = s
	}
	f.roll(s, now)
	reset := s.start.Add(w).Sub(now)
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
func (f *fixedWindow) roll(s *fwState, now time.Time) {
	w := f.cfg.Window
	if s.restarted && !now.Before(s.start.Add(w)) {
		s.start, s.count, s.restarted = time.Time{}, 0, false
	}
	switch {
	case s.restarted: // the penalty window runs until start+w whatever the alignment
	case f.cfg.Align == AlignWall:
		start := windowStart(now, s.start, w)
		if !start.Equal(s.start) {
			s.start, s.count = start, 0
		}
	case f.cfg.Align == AlignStart:
		start := gridStart(now, s.start, f.cfg.Origin, w)
		if !start.Equal(s.start) {
			s.start, s.count = start, 0
		}
	default: // AlignFirst
		if s.start.IsZero() || !now.Before(s.start.Add(w)) {
			s.start, s.count = now, 0
		}
	}
}

// check is Allow without the charge (checker): the window rolled on a copy.
func (f *fixedWindow) check(key string, now time.Time) Decision {
	var s fwState
	if cur := f.keys[key]; cur != nil {
		s = *cur
	}
	f.roll(&s, now)
	reset := s.start.Add(f.cfg.Window).Sub(now)
	d := Decision{Limit: f.cfg.Limit, Reset: reset, Remaining: max(f.cfg.Limit-s.count, 0), Allowed: s.count < f.cfg.Limit}
	if !d.Allowed {
		d.RetryAfter = reset
	}
	return d
}

// gridStart is the start of the window holding now on the grid origin +
// k·w (the wall grid, windowStart's, when origin is the zero time), with
// windowStart's shortcut when now lies in the window starting at cur or
// the next.
func gridStart(now, cur, origin time.Time, w time.Duration) time.Time {
	if origin.IsZero() {
		return windowStart(now, cur, w)
	}
	if !cur.IsZero() && !now.Before(cur) {
		if next := cur.Add(w); now.Before(next) {
			return cur
		} else if now.Before(next.Add(w)) {
			return next
		}
	}
	d := now.Sub(origin)
	k := d / w
	if d < 0 && d%w != 0 {
		k--
	}
	return origin.Add(k * w)
}

// windowStart is now.Truncate(w) — the start of the wall-aligned window
// holding now (Truncate works on absolute time: multiples of w since the
// zero time) — but skips Truncate's division, slow for windows that are not
// whole seconds, when now lies in the window starting at cur or the next.
// Inference replays millions of decisions through these models.
func windowStart(now, cur time.Time, w time.Duration) time.Time {
	if !cur.IsZero() && !now.Before(cur) {
		if next := cur.Add(w); now.Before(next) {
			return cur
		} else if now.Before(next.Add(w)) {
			return next
		}
	}
	return now.Truncate(w)
}
