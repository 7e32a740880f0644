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

// ConnDenseRun is the longest run of one connection's admissions sent
// close together: each within denseGapFactor times that connection's
// closest two sends of the run's. A connection's first run before a
// rejection may span seconds of refill (28 admissions of a bucket of 20,
// over a second of the sustained phase) and its half, the other seed,
// falls short (a bucket of 17 was fitted, missing 13 decisions the truth
// explained); a run at the sustained phase's pace is the capacity itself.
func ConnDenseRun(o *observation.Observation) int {
	type keyRun struct {
		last    time.Time
		closest time.Duration // -1 until the key's second send
		run     int
	}
	evs := o.Events()
	keys := map[string]*keyRun{}
	for _, ev := range evs { // each connection's closest two sends
		k := keys[ev.Key]
		switch {
		case k == nil:
			keys[ev.Key] = &keyRun{last: ev.Sent, closest: -1}
			continue
		case k.closest < 0 || ev.Sent.Sub(k.last) < k.closest:
			k.closest = ev.Sent.Sub(k.last)
		}
		k.last = ev.Sent
	}
	best := 0
	for _, ev := range evs {
		k := keys[ev.Key]
		switch {
		case !ev.Admitted:
			k.run = 0
		case k.run > 0 && ev.Sent.Sub(k.last) <= denseGapFactor*max(k.closest, 0):
			k.run++
		default:
			k.run = 1
		}
		k.last = ev.Sent
		best = max(best, k.run)
	}
	return best
}

// denseGapFactor: sends of one connection at most this many times its
// closest spacing apart are one run at its pace.
const denseGapFactor = 2

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
