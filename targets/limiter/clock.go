package limiter

import (
	"math"
	"time"
)

// The models compute on instants, not on time.Time. Inference replays
// hundreds of millions of decisions through them, and time.Time's
// arithmetic — seconds and nanoseconds kept apart, every sum and
// difference checked for overflow — was a quarter of a fit. An instant is
// the same time as plain nanoseconds, and keeps what makes time.Time's
// comparisons what they are: a reading of the monotonic clock beside the
// wall clock's.
//
// The decisions are time.Time's exactly for instants a model sees within
// 292 years of each other (int64 nanoseconds), with monotonic readings
// between 1885 and 2157 (where time.Time keeps them).

// instant is a time.Time as a model computes with it.
type instant struct {
	wall int64 // nanoseconds on the wall clock since the model's clock's anchor
	// mono is nanoseconds on the monotonic clock since monoAnchor, or
	// noMono if the time has no monotonic reading (read from a record, or
	// truncated to a grid). time.Time compares and subtracts two times by
	// their monotonic readings when both have one, by their wall clocks
	// otherwise; the reference server's time.Now has one, so its
	// decisions depend on it.
	mono int64
}

// noMono marks an instant without a monotonic reading.
const noMono = math.MinInt64

// monoAnchor is the origin of every instant's monotonic reading: a
// time.Now of this process, whose monotonic readings all share one clock,
// so the difference from it is exact.
var monoAnchor = time.Now()

// monotonic says whether both a and b have a monotonic reading: then
// time.Time compares them by it.
func monotonic(a, b instant) bool { return a.mono != noMono && b.mono != noMono }

// add is time.Time.Add.
func (a instant) add(d time.Duration) instant {
	a.wall += int64(d)
	if a.mono != noMono {
		a.mono += int64(d)
	}
	return a
}

// sub is time.Time.Sub.
func (a instant) sub(b instant) time.Duration {
	if monotonic(a, b) {
		return time.Duration(a.mono - b.mono)
	}
	return time.Duration(a.wall - b.wall)
}

// before is time.Time.Before.
func (a instant) before(b instant) bool {
	if monotonic(a, b) {
		return a.mono < b.mono
	}
	return a.wall < b.wall
}

// after is time.Time.After.
func (a instant) after(b instant) bool { return b.before(a) }

// equal is time.Time.Equal.
func (a instant) equal(b instant) bool {
	if monotonic(a, b) {
		return a.mono == b.mono
	}
	return a.wall == b.wall
}

// clock turns a model's time.Time into instants: wall nanoseconds since
// an anchor, the first time the model was given (or its grid's origin),
// so they stay small whatever era the times are in.
type clock struct {
	anchored bool
	sec      int64 // the anchor's Unix time: seconds
	nsec     int64 // and nanoseconds
}

// at is t as an instant, anchoring the clock at t if it is not yet.
func (c *clock) at(t time.Time) instant {
	if !c.anchored {
		c.anchored, c.sec, c.nsec = true, t.Unix(), int64(t.Nanosecond())
	}
	i := instant{wall: (t.Unix()-c.sec)*int64(time.Second) + int64(t.Nanosecond()) - c.nsec, mono: noMono}
	if hasMonotonic(t) {
		i.mono = int64(t.Sub(monoAnchor)) // both have one: the exact difference of the readings
	}
	return i
}

// hasMonotonic says whether t carries a monotonic reading: Round(0)
// strips it and changes nothing else.
func hasMonotonic(t time.Time) bool { return t != t.Round(0) }

// truncate is the time.Time that i is, truncated to a multiple of w since
// the zero time (time.Truncate's grid, the wall grid), as an instant:
// without a monotonic reading, as Truncate leaves it. (i's wall time is
// rebuilt in time.Local, which Truncate, working on absolute time, ignores.)
func (c *clock) truncate(i instant, w time.Duration) instant {
	return c.at(time.Unix(c.sec, c.nsec+i.wall).Truncate(w))
}

// grid is where a model's windows (an interval bucket's fill intervals)
// start: origin + k·w for every integer k, or, with no origin, the wall
// grid (multiples of w since the zero time).
type grid struct {
	w      time.Duration
	wall   bool    // no origin: the wall grid
	origin instant // on the model's clock, unless wall
}

// newGrid is the grid of period w anchored at origin (the wall grid if
// origin is the zero time). It anchors c at origin.
func newGrid(c *clock, origin time.Time, w time.Duration) grid {
	if origin.IsZero() {
		return grid{w: w, wall: true}
	}
	return grid{w: w, origin: c.at(origin)}
}

// start is the start of the grid's window holding now, with a shortcut
// when now lies in the window starting at cur (if ok) or the next: the
// wall grid's is time.Truncate, slow for windows that are not whole
// seconds.
func (g grid) start(c *clock, now, cur instant, ok bool) instant {
	if ok && !now.before(cur) {
		if next := cur.add(g.w); now.before(next) {
			return cur
		} else if now.before(next.add(g.w)) {
			return next
		}
	}
	if g.wall {
		return c.truncate(now, g.w)
	}
	d := now.sub(g.origin)
	k := d / g.w
	if d < 0 && d%g.w != 0 {
		k--
	}
	return g.origin.add(k * g.w)
}
