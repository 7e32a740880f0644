package limiter

import (
	"testing"
	"time"
)

// The wall grid's shortcut must agree with Truncate everywhere, for
// windows that are whole seconds and for those that are not.
func TestWallGridStartIsTruncate(t *testing.T) {
	base := time.Unix(1_800_000_000, 123_456_789)
	for _, w := range []time.Duration{time.Second, 2 * time.Second, 499 * time.Millisecond, 2008 * time.Millisecond, 10 * time.Second} {
		var c clock
		g := newGrid(&c, time.Time{}, w)
		cur, ok := instant{}, false
		for i := range 5000 {
			now := base.Add(time.Duration(i) * 7919 * time.Microsecond)
			got := g.start(&c, c.at(now), cur, ok)
			if want := c.at(now.Truncate(w)); got != want {
				t.Fatalf("w=%s now=%s: grid start %+v, Truncate %+v", w, now, got, want)
			}
			// also from no window at all
			cur, ok = got, i%97 != 0
		}
	}
}
