package plan

import (
	"context"
	"slices"
	"time"

	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// A shorter window's trace and a silent Retry-After wait after it do not
// both fit in the probe's natural length of three windows: a sliding log of 10 s
// shows its second step two windows after the burst, and the wait for a
// fresh lockout's Retry-After is up to a third (it took a probe to 31 s).
// So when the trace, locked again after its first step, projects that it
// and a wait after it would run past the natural length, it waits out the
// lockout's Retry-After in silence itself — what a well-behaved client
// does — and one request tests the header. The step it waited for is then
// seen from that request on; the first lockout, knocked on throughout,
// still gives the window's length.

// traceSilence runs that wait when the trace in tr calls for it (once per
// probe) and returns its request; lastAdmit is the trace's latest
// admission, rate its pace.
func (p *planner) traceSilence(ctx context.Context, tr []*results.Result, lastAdmit time.Duration, rate float64) *results.Result {
	if p.tracedSilently || !locked(tr, lastAdmit, p.e.Now()) || !p.oneKey() {
		return nil
	}
	p.e.Wait() // nothing in flight while waiting
	r := p.latestOfKey()
	if r == nil || !r.Rejected() {
		return nil
	}
	at, ok := observation.RetryAfterOf(p.e.Start(), r)
	if !ok || at.Sub(p.e.Start())-lastAdmit > guidedMinLead {
		return nil // a long lock's trace is guided instead (trace_guided.go)
	}
	if !p.traceWaitWanted(tr, rate, r, at.Sub(p.e.Start()), p.calibrationRTT()) {
		return nil
	}
	p.tracedSilently = true
	// A request of the trace: the step it finds is the trace's, for the
	// fit's window and step estimates as for the stop rule.
	return p.silentRetry(ctx, r, at, observation.PhaseTrace, "Retry-After")
}

// locked says whether the trace tr is in a lockout at now: its latest
// answer a rejection, and nothing admitted for lockedAfter.
func locked(tr []*results.Result, lastAdmit, now time.Duration) bool {
	return len(tr) > 0 && !tr[len(tr)-1].Admitted() && now-lastAdmit > lockedAfter
}

// traceWaitWanted says whether the trace, locked after a step of tr, should
// wait out the Retry-After of rejection r (at, from the probe's start):
// when it and a wait after it would end past the natural length, and the
// wait ends within the time budget.
func (p *planner) traceWaitWanted(tr []*results.Result, rate float64, r *results.Result, at, rtt time.Duration) bool {
	n, ok := lastStep(tr)
	if !ok {
		return false
	}
	wait := max(at-r.Done, 0)
	wake := max(at, r.Done) + rtt + silentMargin
	// The trace would end when it has taken the next step's admissions, as
	// many as this one's at its rate, and the wait after it is about as long
	// as this one.
	step := time.Duration(float64(n) / rate * float64(time.Second))
	return wake+step+wait > p.naturalLength(wait) && wake <= p.deadline-answerGrace
}

// lastStep is how many admissions the trace's latest step had (its
// admissionGroups' last). A step of fewer than stepSize is none.
func lastStep(tr []*results.Result) (int, bool) {
	gs := admissionGroups(tr)
	if len(gs) == 0 {
		return 0, false
	}
	n := gs[len(gs)-1].n
	return n, n >= stepSize
}

// admissionGroup is a run of the trace's admissions none of which came
// lockedAfter after the one before: its first admission's send instant,
// the latest admission before it (the trace's first send for the first
// group), and its size.
type admissionGroup struct {
	first, before time.Duration
	n             int
}

// admissionGroups are the trace's admissions in send order, split where
// none came for lockedAfter.
func admissionGroups(tr []*results.Result) []admissionGroup {
	if len(tr) == 0 {
		return nil
	}
	start := tr[0].Sent
	for _, r := range tr {
		start = min(start, r.Sent)
	}
	adm := observation.AdmittedSent(tr)
	slices.Sort(adm)
	var gs []admissionGroup
	for i, at := range adm {
		switch {
		case i == 0:
			gs = append(gs, admissionGroup{first: at, before: start, n: 1})
		case at-adm[i-1] > lockedAfter:
			gs = append(gs, admissionGroup{first: at, before: adm[i-1], n: 1})
		default:
			gs[len(gs)-1].n++
		}
	}
	return gs
}

// waitOutKnocking waits out the lock's Retry-After in silence, once per
// probe, when the trace's own knocking keeps the key shut
// (knockingKeepsShut): a limiter that counts denied attempts, which a
// polite client gets through by waiting, and which the trace would
// otherwise keep shut for as long as it knocks. The request at its end is
// the trace's, as traceSilence's is.
func (p *planner) waitOutKnocking(ctx context.Context, tr []*results.Result, lastAdmit time.Duration) *results.Result {
	if p.tracedSilently || len(tr) == 0 || !p.oneKey() || !p.knockingKeepsShut(lastAdmit, tr[len(tr)-1]) {
		return nil
	}
	if _, stepped := lastStep(tr); !stepped {
		// The burst's own lock: the knocking is what shows the trace how
		// capacity comes back, and that it counts; the wait is for the
		// lock after a step.
		return nil
	}
	p.e.Wait()
	r := p.latestOfKey()
	if r == nil || !r.Rejected() {
		return nil
	}
	at, ok := observation.RetryAfterOf(p.e.Start(), r)
	if !ok {
		return nil
	}
	p.tracedSilently = true
	p.note("the trace waited out seq %d's Retry-After in silence: its knocking moved the return the headers name later faster than time passed", r.Seq)
	w := p.silentRetry(ctx, r, at, observation.PhaseTrace, "Retry-After")
	p.knockingCounted = w != nil && w.Admitted()
	return w
}
