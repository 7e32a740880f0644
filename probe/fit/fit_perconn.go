package fit

import "github.com/ratecheck/ratecheck/probe/observation"
import "time"

// A limit per connection: each connection is a client of its own, so the
// seeds of its fit start from one connection's capacity and refill.

// ConnCapacity is the most admissions any one connection had before its
// first rejection: the capacity a per-connection limit's seeds start from
// (the bursts' counts are of many connections at once).
func ConnCapacity(o *observation.Observation) int {
	admitted, shut := map[string]int{}, map[string]bool{}
	best := 0
	for _, ev := range o.Events() {
		switch {
		case shut[ev.Key]:
		case ev.Admitted:
			admitted[ev.Key]++
			best = max(best, admitted[ev.Key])
		default:
			shut[ev.Key] = true
		}
	}
	return best
}

// ConnRate is the rate one connection's capacity came back at, over a
// limit per connection: the busiest connection's admissions that each
// ended a run of its rejections, from one to the next. The trace's
// admissions spread over many connections, each a client of its own with
// capacity to spare, so their spacing says nothing about any one
// connection's refill; a connection knocking faster than its capacity
// comes back (the sustained phase's) is admitted as each unit returns, and
// only there — where it knocked slower, or fell silent, the spacing is its
// own. 0 when no connection showed two such returns in a row.
func ConnRate(o *observation.Observation) float64 {
	evs := o.Events()
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Key]++
	}
	busiest := ""
	for k, c := range n {
		if busiest == "" || c > n[busiest] || c == n[busiest] && k < busiest {
			busiest = k
		}
	}
	var gaps time.Duration
	count := 0
	// last: the previous admission that ended a run of rejections;
	// knocked: the run's latest rejection, which locates the return to
	// within the knocking's spacing — a return after a silence (a wait)
	// is located no better than the silence.
	var last, knocked time.Time
	rejected, between := false, false
	for _, ev := range evs {
		switch {
		case ev.Key != busiest:
		case !ev.Admitted:
			rejected, knocked = true, ev.At
		case rejected:
			if gap := ev.At.Sub(last); !last.IsZero() && !between && ev.At.Sub(knocked) <= gap/2 {
				gaps += gap
				count++
			}
			last, rejected, between = ev.At, false, false
		default:
			between = true // admitted without a rejection before: not a return
		}
	}
	if count < 2 || gaps <= 0 {
		return 0
	}
	return float64(count) / gaps.Seconds()
}
