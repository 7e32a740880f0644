package plan

import (
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// A long lock the headers name the end of. Knocking evenly through it
// spends the request budget on answers every model agrees on, keeps a
// limiter that counts denied attempts shut, and — slowed down to spare
// such a limiter (knockRate) — blurs the instants that tell the models
// apart: a sliding log gives back its admissions one window after each was
// made, in the order they were made, where a fixed window gives them all
// back at once. So while the key's latest rejection names an instant R
// (Retry-After, a reset) more than guidedMinLead ahead, the trace knocks
// sparsely, each knock halfway to R, and from guidedLead before R until
// guidedSpan after it at its full rate: the returns are seen at the
// trace's resolution. A header that names R too late is caught by the
// sparse knocks, one that names it too early by the knocking after R,
// which then goes on as before.

const (
	// guidedMinLead: locks shorter than this are knocked on as before
	// (the probe of a short window stays as it was).
	guidedMinLead = 10 * time.Second
	// guidedLead: headers name R in whole seconds, rounded up, so capacity
	// may return up to a second before it; the margin covers the trip.
	guidedLead = 1500 * time.Millisecond
	// guidedSpan after R the trace keeps its full rate: a sliding log's
	// returns span as long as the admissions they give back took (the
	// calibration and the burst, about a second and a half).
	guidedSpan = 3 * time.Second
	// guidedTolerance: a knock sent this long after the return it was
	// first told and still rejected shows the header wrong (or the
	// knocking counted); the trip and a server's clock a little behind
	// ours.
	guidedTolerance = 250 * time.Millisecond
	// guidedDrift: a return named later than the first one by more than
	// the headers' rounding to whole seconds (and the trip) has moved.
	guidedDrift = 1250 * time.Millisecond
	// guidedMaxGap: the sparse knocks are never further apart, so a header
	// that names R too late costs at most this much resolution.
	guidedMaxGap = 10 * time.Second
	// guidedStepTime: the longest the trace takes to take back a step
	// of the capacity, so that a long window's second step is seen within
	// a few seconds of its return.
	guidedStepTime = 2 * time.Second
)

// guidedLock says whether the trace tr, whose latest admission was at
// lastAdmit, is in a lock the headers name a long one: shut for
// lockedAfter, its latest answer a rejection naming a return more than
// guidedMinLead after the lock began, and now not past that return's
// guidedSpan.
func (p *planner) guidedLock(tr []*results.Result, lastAdmit, now time.Duration) bool {
	if !locked(tr, lastAdmit, now) || p.guidedSpent == lastAdmit {
		return false
	}
	last := tr[len(tr)-1]
	r, ok := p.namedReturn(last)
	if !ok || r-lastAdmit <= guidedMinLead {
		return false
	}
	told := p.firstReturn(lastAdmit, last).at
	if last.Sent > told+guidedTolerance || r > told+guidedDrift || now > r+guidedSpan {
		// Rejected after the return it was first told, or told a later
		// one: the header was wrong, or the knocking itself keeps the key
		// shut (a limiter that counts denied attempts, whose return moves
		// with every knock). The lock is knocked on as any other, ever
		// more slowly (knockRate).
		p.guidedSpent = lastAdmit
		return false
	}
	return true
}

// lockReturn is the first return a lock's rejections named: the lock by
// its last admission, the instant named and the answer that named it.
type lockReturn struct {
	lockedAt, at, done time.Duration
}

// firstReturn is the first return named in the lock since lastAdmit, last
// being a rejection of it that names one (the first, if none did before).
func (p *planner) firstReturn(lastAdmit time.Duration, last *results.Result) lockReturn {
	if p.lockReturn.lockedAt != lastAdmit || p.lockReturn.done == 0 {
		if r, ok := p.namedReturn(last); ok {
			p.lockReturn = lockReturn{lockedAt: lastAdmit, at: r, done: last.Done}
		}
	}
	return p.lockReturn
}

// knockingKeepsShut says whether the trace's knocking is what keeps the
// key shut in the lock since lastAdmit: its latest rejection last names a
// return later than the lock's first by more than the time between the
// two answers (and the headers' rounding). Time alone moves a return by at
// most that (a constant Retry-After); a window or a bucket does not move
// it at all; only a limiter that counts the denied knocks moves it faster.
func (p *planner) knockingKeepsShut(lastAdmit time.Duration, last *results.Result) bool {
	r, ok := p.namedReturn(last)
	if !ok || !last.Rejected() {
		return false
	}
	first := p.firstReturn(lastAdmit, last)
	return r-first.at > last.Done-first.done+guidedDrift
}

// guidedRate is the trace's rate in a guided lock: its starting rate, or
// faster where that would take longer than guidedStepTime to take back a
// step of the capacity the burst saw.
func (p *planner) guidedRate(startRate float64) float64 {
	return min(max(startRate, float64(p.capacity())/guidedStepTime.Seconds()), traceMaxRate)
}

// guidedGap is the gap to the trace's next knock at now in a guided lock
// whose latest answer is last, given the gap at the trace's rate (full):
// halfway to the dense span before the named return, within
// [full, guidedMaxGap]; full inside it.
func (p *planner) guidedGap(last *results.Result, now, full time.Duration) time.Duration {
	r, _ := p.namedReturn(last)
	dense := r - guidedLead
	if now >= dense {
		return full
	}
	return min(max((dense-now)/2, full), guidedMaxGap, dense-now)
}

// namedReturn is the earliest instant (from the probe's start) r's headers
// name for capacity to return: its Retry-After or its reset.
func (p *planner) namedReturn(r *results.Result) (time.Duration, bool) {
	at, ok := observation.RetryAfterOf(p.e.Start(), r)
	if reset, has := observation.ResetOf(p.e.Start(), r); has && (!ok || reset.Before(at)) {
		at, ok = reset, true
	}
	return at.Sub(p.e.Start()), ok
}
