package limiter

import (
	"math/rand/v2"
	"testing"
	"time"
)

// instantSeed fixes the random times the instant tests draw.
const instantSeed = 20261204

// clockReadings are times of the kinds a model is given: read from a
// record (no monotonic reading), a probe's start plus offsets (both
// readings move together), separate time.Now readings of a live server
// (the two clocks' offset differs from one reading to the next), and those
// stripped of their monotonic reading.
func clockReadings(t *testing.T) []time.Time {
	t.Helper()
	var out []time.Time
	for range 8 {
		now := time.Now()
		out = append(out, now, now.Round(0))
		time.Sleep(50 * time.Microsecond)
	}
	return append(out, time.Unix(1_800_000_000, 123_456_789), time.Date(2026, 1, 1, 12, 4, 0, 0, time.UTC))
}

// Every operation on instants answers what time.Time's answers, for every
// mix of times with and without a monotonic reading: the models' decisions
// rest on it.
func TestInstantIsTime(t *testing.T) {
	r := rand.New(rand.NewPCG(instantSeed, 1))
	readings := clockReadings(t)
	offset := func() time.Duration {
		switch r.IntN(4) {
		case 0:
			return 0
		case 1:
			return time.Duration(r.Int64N(2000)) - 1000 // nanoseconds apart: where the clocks' offsets differ
		case 2:
			return time.Duration(r.Int64N(int64(time.Minute)))
		}
		return -time.Duration(r.Int64N(int64(24 * time.Hour)))
	}
	for range 20000 {
		var c clock
		ta := readings[r.IntN(len(readings))].Add(offset())
		tb := readings[r.IntN(len(readings))].Add(offset())
		if r.IntN(4) == 0 {
			// the same wall time as ta: only a monotonic reading tells them apart
			tb = tb.Add(ta.Round(0).Sub(tb.Round(0)))
		}
		a, b := c.at(ta), c.at(tb)
		if got, want := a.before(b), ta.Before(tb); got != want {
			t.Fatalf("%v before %v: %v, time.Time says %v", ta, tb, got, want)
		}
		if got, want := a.after(b), ta.After(tb); got != want {
			t.Fatalf("%v after %v: %v, time.Time says %v", ta, tb, got, want)
		}
		if got, want := a.equal(b), ta.Equal(tb); got != want {
			t.Fatalf("%v equal %v: %v, time.Time says %v", ta, tb, got, want)
		}
		if got, want := a.sub(b), ta.Sub(tb); got != want {
			t.Fatalf("%v − %v: %v, time.Time says %v", ta, tb, got, want)
		}
		d := offset()
		if got, want := a.add(d), c.at(ta.Add(d)); got != want {
			t.Fatalf("%v + %v: %+v, time.Time says %+v", ta, d, got, want)
		}
		w := time.Duration(1 + r.Int64N(int64(10*time.Second)))
		if got, want := c.truncate(a, w), c.at(ta.Truncate(w)); got != want {
			t.Fatalf("%v truncated to %v: %+v, time.Time says %+v", ta, w, got, want)
		}
	}
}

// gridStartOfTime is a grid's window start on time.Time, the
// straightforward way: Truncate on the wall grid, else origin + k·w with
// k rounded down.
func gridStartOfTime(now, origin time.Time, w time.Duration) time.Time {
	if origin.IsZero() {
		return now.Truncate(w)
	}
	d := now.Sub(origin)
	k := d / w
	if d < 0 && d%w != 0 {
		k--
	}
	return origin.Add(k * w)
}

// A grid's window start, shortcut or not, is the straightforward one, on
// the wall grid and on one anchored at an origin with or without a
// monotonic reading.
func TestGridStartIsStraightforward(t *testing.T) {
	r := rand.New(rand.NewPCG(instantSeed, 2))
	readings := clockReadings(t)
	for range 300 {
		base := readings[r.IntN(len(readings))]
		origin := time.Time{}
		if r.IntN(3) > 0 {
			origin = readings[r.IntN(len(readings))].Add(-time.Duration(r.Int64N(int64(time.Hour))))
		}
		w := time.Duration(1 + r.Int64N(int64(3*time.Second)))
		var c clock
		g := newGrid(&c, origin, w)
		cur, ok := instant{}, false
		at := base
		for range 100 {
			at = at.Add(time.Duration(r.Int64N(int64(w))) - w/4)
			if r.IntN(8) == 0 {
				at = at.Add(time.Duration(r.Int64N(5)) * w) // windows idle
			}
			got := g.start(&c, c.at(at), cur, ok)
			if want := c.at(gridStartOfTime(at, origin, w)); got != want {
				t.Fatalf("w=%v origin=%v at=%v: grid start %+v, want %+v", w, origin, at, got, want)
			}
			cur, ok = got, r.IntN(10) > 0
		}
	}
}
