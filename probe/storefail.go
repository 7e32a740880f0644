package probe

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A limiter whose store goes away mid-run (a shared Redis stopped, a
// network partition) either admits everything from then on — it fails
// open — or rejects everything — it fails closed. Both show at the end of
// the run, where no model explains them:
//
//   - open: after one-at-a-time requests were limited (the sequential
//     phase or the trace saw rejections), a run of at least
//     4 × the largest burst admission + 20 of the probe's own requests in a
//     row admitted, to the end: no capacity the run measured holds that many;
//   - closed: from some instant to the end only rejections, for longer than
//     twice the refill time the inference measured (and at least 1 s),
//     with a silent wait among them: a request sent after its Retry-After
//     passed in silence was rejected too.

// The store-failure readings (Inference.StoreFailure).
const (
	StoreFailsOpen   = "open"
	StoreFailsClosed = "closed"
)

// storeFailure reads the end of the run; "" when it shows neither.
func storeFailure(o *observation.Observation, inf Inference) (string, string) {
	var own []*results.Result
	for i := range o.Results {
		r := &o.Results[i]
		if observation.Decided(r) && observation.OwnTraffic(r.Phase, inf.Scope) {
			own = append(own, r)
		}
	}
	sort.SliceStable(own, func(a, b int) bool { return own[a].Sent < own[b].Sent })
	if len(own) == 0 {
		return "", ""
	}
	last := own[len(own)-1]
	i := len(own)
	for i > 0 && own[i-1].Admitted() == last.Admitted() {
		i--
	}
	tail := own[i:]
	if i == 0 {
		return "", "" // the whole run answered one way: nothing changed
	}
	if last.Admitted() {
		capacity := 0
		for _, b := range o.BurstPhases() {
			n := 0
			for _, r := range o.Phase(b) {
				if r.Admitted() {
					n++
				}
			}
			capacity = max(capacity, n)
		}
		limitedOneAtATime := false
		for _, r := range own[:i] {
			if r.Rejected() && (r.Phase == observation.PhaseSequential || r.Phase == observation.PhaseTrace) {
				limitedOneAtATime = true
			}
		}
		if limitedOneAtATime && len(tail) >= 4*capacity+20 {
			span := tail[len(tail)-1].Sent - tail[0].Sent
			return StoreFailsOpen, fmt.Sprintf("the limiter fails open: from %.2f s on, all %d requests to the end were admitted (over %.2f s), %d× the most a burst got (%d) after one-at-a-time requests had been limited — as a limiter does when its store goes away and it lets everything through",
				tail[0].Sent.Seconds(), len(tail), span.Seconds(), len(tail)/max(capacity, 1), capacity)
		}
		return "", ""
	}
	// How long capacity took to come back while the store was up: the
	// inferred limit's refill, or — when a misled fit explains the lockout
	// as a long window — the longest wait between the trace's admissions
	// before it, whichever is shorter.
	refill := refillTime(inf)
	if seen := admissionGap(own[:i]); seen > 0 && (refill <= 0 || seen < refill) {
		refill = seen
	}
	if refill <= 0 {
		return "", ""
	}
	lastAdmitted := own[i-1]
	span := last.Sent - lastAdmitted.Sent
	var silent []string
	for _, r := range tail {
		if r.Phase == observation.PhaseRetryWait || r.Phase == observation.PhaseResetWait {
			silent = append(silent, fmt.Sprintf("seq %d (%s)", r.Seq, r.Phase))
		}
	}
	if len(silent) == 0 || span < max(2*refill, time.Second) {
		return "", ""
	}
	return StoreFailsClosed, fmt.Sprintf("the limiter fails closed: after %.2f s every request was rejected to the end (%d over %.2f s, more than twice the %.2f s the measured limit needs to refill), %s included, sent after waiting out its Retry-After in silence — as a limiter does when its store goes away and it turns everything down",
		lastAdmitted.Sent.Seconds(), len(tail), span.Seconds(), refill.Seconds(), strings.Join(silent, " and "))
}

// admissionGap is the longest wait between consecutive admissions of the
// recovery trace in rs (sorted by send); 0 with fewer than two.
func admissionGap(rs []*results.Result) time.Duration {
	var prev time.Duration = -1
	var gap time.Duration
	for _, r := range rs {
		if r.Phase != observation.PhaseTrace || !r.Admitted() {
			continue
		}
		if prev >= 0 {
			gap = max(gap, r.Sent-prev)
		}
		prev = r.Sent
	}
	return gap
}

// refillTime is how long the inferred limit takes to admit one request
// again after exhaustion; 0 when the inference gives none.
func refillTime(inf Inference) time.Duration {
	switch {
	case inf.RatePerS > 0:
		return time.Duration(float64(time.Second) / inf.RatePerS)
	case inf.WindowS > 0:
		return time.Duration(inf.WindowS * float64(time.Second))
	}
	return 0
}
