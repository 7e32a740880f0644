// Package observation is a probe's recorded run: its results in send order,
// the phases the plan sent them in, what counts over them (a burst a queue
// held back among it), when a rejection says capacity returns, whom the
// limit counts (the scope trials), and the time line a replay reads them
// as (events, clusters, keys, timing uncertainty). It reads results only:
// the layers above (probe/fit, the plan and the verdict in probe) import
// it, never the reverse.
package observation

import (
	"encoding/json"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Observation is one probe's raw material: every result, in send order, plus
// what the plan learned on the way.
type Observation struct {
	Start   time.Time // wall clock of offset 0
	Results []results.Result
	RTT     time.Duration // smallest round trip seen: the timing uncertainty
	Notes   []string
	// Stopped says why the run ended before its plan did (StopInterrupted),
	// or "" when the plan ran to its end: an interrupted probe names no
	// family.
	Stopped string
	// Budget is what the probe was allowed (zero when unknown: results
	// recorded by something else), for reasons that say what would suffice.
	Budget Budget
	// Bypass is what the bypass trials were made from: the probe's
	// request (probe/bypass).
	Bypass bypass.Base
}

// Budget is a probe's request and time budget.
type Budget struct {
	MaxRequests int           `json:"max_requests"`
	MaxTime     time.Duration `json:"-"`
	// Ceiling is what the time budget may grow to (0: a --max-time, which
	// never grows); GrewTo what it grew to, and Why (probe/plan's
	// budget.go).
	Ceiling time.Duration `json:"-"`
	GrewTo  time.Duration `json:"-"`
	Why     string        `json:"why,omitempty"`
}

// MarshalJSON writes the durations in seconds: the budget the run started
// with, the ceiling it could grow to, and what it grew to.
func (b Budget) MarshalJSON() ([]byte, error) {
	type plain Budget
	return json.Marshal(struct {
		plain
		MaxTimeS float64 `json:"max_time_s"`
		CeilingS float64 `json:"ceiling_s,omitempty"`
		GrewToS  float64 `json:"grew_to_s,omitempty"`
	}{plain(b), b.MaxTime.Seconds(), b.Ceiling.Seconds(), b.GrewTo.Seconds()})
}

// StopInterrupted is Observation.Stopped for a run cut short by a signal or
// a cancelled context.
const StopInterrupted = "interrupted"

// ScopeUntested is Inference.Scope when no second identity was tried.
const ScopeUntested = "untested"

// arrival estimates when the server decided on r: half a round trip after
// the send.
func (o *Observation) arrival(r *results.Result) time.Time {
	return o.Start.Add(r.Sent + o.RTT/2)
}

// SortedResults returns results ordered by send time.
func SortedResults(rs []results.Result) []results.Result {
	out := append([]results.Result(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Sent < out[j].Sent })
	return out
}

// Phase returns the results of one phase.
func (o *Observation) Phase(name string) []results.Result {
	var out []results.Result
	for _, r := range o.Results {
		if r.Phase == name {
			out = append(out, r)
		}
	}
	return out
}

// Decided reports whether r carries a limiter decision (not a transport
// error and not some unrelated status).
func Decided(r *results.Result) bool {
	return r.Error == "" && (r.Admitted() || r.Rejected())
}

// MinRTT is the timing uncertainty of results: the smallest latency among rejected (never queued) or, failing
// those, all decided results.
func MinRTT(rs []results.Result) time.Duration {
	best := time.Duration(-1)
	for i := range rs {
		r := &rs[i]
		if !Decided(r) {
			continue
		}
		if l := r.Latency(); best < 0 || l < best {
			best = l
		}
	}
	return max(best, 0)
}

// New wraps results recorded elsewhere (an attack profile, a
// saved results file) so they can be graded or inferred from.
func New(start time.Time, rs []results.Result) *Observation {
	o := &Observation{Start: start, Results: SortedResults(rs)}
	o.RTT = MinRTT(o.Results)
	return o
}
