package limiter

import (
	"testing"
	"time"
)

// windowStart's shortcut must agree with Truncate everywhere, for windows
// that are whole seconds and for those that are not.
func TestWindowStartIsTruncate(t *testing.T) {
	base := time.Unix(1_800_000_000, 123_456_789)
	for _, w := range []time.Duration{time.Second, 2 * time.Second, 499 * time.Millisecond, 2008 * time.Millisecond, 10 * time.Second} {
		cur := time.Time{}
		for i := range 5000 {
			now := base.Add(time.Duration(i) * 7919 * time.Microsecond)
			got := windowStart(now, cur, w)
			if want := now.Truncate(w); !got.Equal(want) {
				t.Fatalf("w=%s now=%s: windowStart %s, Truncate %s", w, now, got, want)
			}
			if i%97 == 0 {
				cur = time.Time{} // also from no window at all
			} else {
				cur = got
			}
		}
	}
}
