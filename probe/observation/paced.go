package observation

import (
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// A limiter that queues instead of rejecting (a pacer) answers a burst at
// its own rate; a server merely busy with a flood answers at its
// throughput. The plan reads a burst so to stop growing its bursts, and
// the verdict to tell a pacer's held answers from failures.
const (
	// pacerMaxRate: a burst answered more slowly than this, per second, …
	pacerMaxRate = 500.0
	// pacerMinDelay: … and held back more than this, was queued.
	pacerMinDelay = 200 * time.Millisecond
)

// PacedBurst counts the admissions of one burst that a queue held back
// (answered more slowly than pacerMaxRate, each held over pacerMinDelay
// beyond the service time), plus the requests held beyond the per-request
// timeout when there are such admissions; answered is how many were
// admitted, most the longest delay. A burst a flooded server merely
// answers slowly holds none.
func PacedBurst(rs []results.Result, service time.Duration) (held, answered int, most time.Duration) {
	var lo, hi time.Duration = -1, 0
	var delays []time.Duration
	for _, r := range rs {
		if r.Error == "" && r.Admitted() {
			delays = append(delays, r.Latency()-service)
			if lo < 0 || r.Done < lo {
				lo = r.Done
			}
			hi = max(hi, r.Done)
		}
	}
	if len(delays) < 2 || hi <= lo {
		return 0, len(delays), 0
	}
	if rate := float64(len(delays)) / (hi - lo).Seconds(); rate < pacerMaxRate {
		for _, d := range delays {
			if d > pacerMinDelay {
				held++
				most = max(most, d)
			}
		}
	}
	if held > 0 {
		held += Timeouts(rs)
	}
	return held, len(delays), most
}

// Timeouts counts the requests that got no answer within the timeout.
func Timeouts(rs []results.Result) int {
	n := 0
	for _, r := range rs {
		if strings.HasPrefix(r.Error, "timeout") {
			n++
		}
	}
	return n
}
