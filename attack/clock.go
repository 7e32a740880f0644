package attack

import (
	"context"
	"runtime"
	"time"
)

// spinWindow is how long before a deadline waitUntil stops sleeping and
// spins. Go's timers routinely wake ~1 ms late on Linux (measured: a 200 µs
// sleep overshoots by 0.9 ms p50), so sleeping to the instant would blow the
// pacing budget; spinning the last stretch with Gosched keeps the P usable by
// the workers while holding error to a few microseconds.
const spinWindow = 2 * time.Millisecond

// waitUntil blocks until t (monotonic) or ctx ends; it reports whether t was
// reached.
func waitUntil(ctx context.Context, t time.Time) bool {
	if d := time.Until(t) - spinWindow; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return false
		}
	}
	for i := 0; time.Now().Before(t); i++ {
		if i&63 == 0 && ctx.Err() != nil {
			return false
		}
		runtime.Gosched()
	}
	return ctx.Err() == nil
}
