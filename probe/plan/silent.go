package plan

import (
	"context"
	"github.com/ratecheck/ratecheck/results"
	"time"

	"github.com/ratecheck/ratecheck/attack"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// Silent waits: the probe's other phases keep knocking, and a limiter that
// counts rejected requests (a window restarted by every over-limit request,
// a log of blocked attempts) stays closed because of the knocking itself.
// silentMargin is added to every wait: the timer's lateness on a loaded
// machine is on top of it, never under it.
const silentMargin = 10 * time.Millisecond

// silentWaits reserves the time the two silent waits need at the end of the
// probe (taking it from the phases that run before) and returns the function
// that runs them, after the phases whose time it takes; ties is the fit of
// the run before the waits, which decides whether a wait past the probe's
// natural length is a quiet period the limiter forces.
func (p *planner) silentWaits(ctx context.Context) func(ties *pendingFit) {
	reserve := time.Duration(0)
	if r := p.latestOfKey(); r != nil && r.Rejected() && p.oneKey() {
		done := p.e.Start().Add(r.Done)
		// Each wait: its length, a round trip and the margin; the second
		// also re-exhausts the quota first.
		var needRA, needReset time.Duration
		if at, ok := observation.RetryAfterOf(p.e.Start(), r); ok {
			needRA = max(at.Sub(done), 0) + p.calibrationRTT() + silentMargin
		}
		if at, ok := observation.ResetOf(p.e.Start(), r); ok {
			needReset = max(at.Sub(done), 0) + p.calibrationRTT() + silentMargin + 300*time.Millisecond
		}
		// Only what leaves the other phases a third of the time for both
		// waits, half for one: a window of minutes cannot be waited out in
		// the budget, and the trace still needs its share.
		left := p.deadline - p.e.Now()
		switch {
		case 2*needRA+needReset <= 2*left/3:
			reserve = 2*needRA + needReset // room for a second Retry-After wait
		case needRA+needReset <= 2*left/3:
			reserve = needRA + needReset
		case needRA <= left/2:
			reserve = needRA
		}
	}
	p.deadline -= reserve
	return func(ties *pendingFit) {
		p.deadline += reserve
		p.e.Wait() // the last scheduled requests are in
		if !p.oneKey() {
			p.note("silent waits not run: the requests went to several keys")
			return
		}
		r := p.rejectionOfKey(ctx)
		if r == nil {
			p.note("silent waits not run: no rejection to wait out")
			return
		}
		// The Retry-After wait first. The rejection waited out may have
		// come late in its lockout, where even a too-short Retry-After
		// ends after it; when the silent retry was admitted, a second wait
		// starts from a fresh exhaustion, at the start of a lockout, where
		// a too-short value shows — last, and only within the probe's
		// natural length (it costs a whole lockout).
		var retried *results.Result
		at, hasRA := observation.RetryAfterOf(p.e.Start(), r)
		forced, natural := true, time.Duration(0)
		if hasRA {
			forced, natural = p.quietForced(ctx, r, at, ties)
		}
		switch {
		case !forced && p.knockingCounted:
			p.note("silent wait for Retry-After not run: it would take the probe past %.0f s, its natural length, and the trace already waited one out in silence where its knocking kept the key shut, and was admitted", natural.Seconds())
		case !forced:
			tested := "the trace's knocking tested Retry-After"
			if p.tracedSilently {
				tested = "the trace waited one out in silence"
			}
			p.note("silent wait for Retry-After not run: it would take the probe past %.0f s, its natural length, and the run so far shows no limiter that counts denied attempts (%s)", natural.Seconds(), tested)
		case hasRA:
			retried = p.silentRetry(ctx, r, at, observation.PhaseRetryWait, "Retry-After")
		default:
			p.note("silent wait for Retry-After not run: seq %d carried no readable Retry-After", r.Seq)
		}
		// The Reset wait. When the same rejection's reset falls before the
		// silent retry was sent, that retry was the key's next request
		// after it in silence too: it tested the reset (grade's
		// reset.accurate reads the key's next request, whatever its phase).
		reset, hasReset := observation.ResetOf(p.e.Start(), r)
		switch {
		case !hasReset:
			p.note("silent wait for Reset not run: seq %d carried no readable reset", r.Seq)
		case retried != nil && !p.e.Start().Add(retried.Sent).Before(reset):
		default:
			if r = p.rejectionOfKey(ctx); r == nil {
				p.note("silent wait for Reset not run: no rejection to wait out")
				break
			}
			if at, ok := observation.ResetOf(p.e.Start(), r); ok {
				// Held to the natural length, as the second Retry-After
				// wait is: after the trace's two windows and a Retry-After
				// wait, a wait for a whole window's reset is a fourth.
				p.silentRetryWithin(ctx, r, at, observation.PhaseResetWait, "Reset", "silent wait for Reset")
			} else {
				p.note("silent wait for Reset not run: seq %d carried no readable reset", r.Seq)
			}
		}
		if retried == nil || !retried.Admitted() {
			return
		}
		r2 := p.rejectionOfKey(ctx)
		if r2 == nil {
			return
		}
		if at2, ok := observation.RetryAfterOf(p.e.Start(), r2); ok {
			p.silentRetryWithin(ctx, r2, at2, observation.PhaseRetryWait, "Retry-After", "second silent wait for Retry-After")
		}
	}
}

// quietForced says whether the first Retry-After wait may run: when it
// ends within the probe's natural length, or when every model of the run so
// far (ties, awaited until the wait would end) counts denied attempts, so
// the quiet is what the limiter forces. A sliding log of 10 s is exhausted
// again only two windows into the probe, and its wait took the probe to
// 31 s; the trace's knocking has tested its Retry-After already. A fit not
// ready by then leaves the wait to run. It returns the natural length it
// judged by.
func (p *planner) quietForced(ctx context.Context, r *results.Result, at time.Time, ties *pendingFit) (bool, time.Duration) {
	wake := max(at.Sub(p.e.Start()), r.Done) + p.calibrationRTT() + silentMargin
	natural := p.naturalLength(at.Sub(p.e.Start().Add(r.Done)))
	if wake <= natural {
		return true, natural
	}
	if p.knockingCounted {
		return false, natural // the quiet it forces was waited out already (waitOutKnocking)
	}
	fit, ok := ties.await(ctx, p.e.After(wake-p.e.Now()))
	if !ok {
		return true, natural
	}
	end, _ := p.naturalEnd(fit.models)
	natural = max(end, p.naturalLength(0))
	return wake <= natural, natural
}

// naturalLength is how long a probe should take (NaturalSpan) of the
// window a RateLimit policy names, or without one of the longest a wait
// named (span): a sliding counter's reset names when all of its quota is
// back, up to two windows later, and a wait that long is not the window's.
func (p *planner) naturalLength(span time.Duration) time.Duration {
	if p.hintWindow > 0 {
		return NaturalSpan(p.hintWindow)
	}
	return NaturalSpan(span)
}

// NaturalSpan is how long a probe of a window w should take: a short
// window three times over (its trace's two steps and a silent wait after
// them), a long one twice and naturalSlack — its two steps are what name
// it, and a third window of waiting would make a limit of N per minute a
// three-minute probe — and never under naturalMin.
func NaturalSpan(w time.Duration) time.Duration {
	return max(naturalMin, min(3*w, 2*w+naturalSlack))
}

// naturalSlack is what a long window's probe takes beyond its two windows:
// the second step's admissions, the scope and bypass trials.
const naturalSlack = 10 * time.Second

// silentRetryWithin is silentRetry held to the probe's natural length (a
// wait that names a longer window lengthens it): a wait that would end
// after it is not run, and the run notes why.
func (p *planner) silentRetryWithin(ctx context.Context, r *results.Result, at time.Time, phase, what, wait string) {
	natural := p.naturalLength(at.Sub(p.e.Start().Add(r.Done)))
	if wake := max(at.Sub(p.e.Start()), r.Done) + p.calibrationRTT() + silentMargin; wake > natural {
		p.note("%s not run: it would take the probe past %.0f s, its natural length", wait, natural.Seconds())
		return
	}
	p.silentRetry(ctx, r, at, phase, what)
}

// naturalMin is the shortest natural length of a probe.
const naturalMin = 20 * time.Second

// silentRetry sleeps until at (and at least until r completed) plus the
// margin, sending nothing, then sends one request in phase and returns it
// (nil when the budget or the run ended first).
func (p *planner) silentRetry(ctx context.Context, r *results.Result, at time.Time, phase, what string) *results.Result {
	wake := max(at.Sub(p.e.Start()), r.Done) + p.calibrationRTT() + silentMargin
	if wake > p.deadline {
		p.note("silent wait for %s not run: seq %d asked for %.2f s, beyond the probe's time budget", what, r.Seq, (wake - r.Done).Seconds())
		return nil
	}
	if p.left() < 1 || !p.e.Sleep(ctx, wake-p.e.Now()) {
		return nil
	}
	w, _ := p.e.Do(ctx, attack.Shot{Phase: phase})
	return w
}

// rejectionOfKey returns the probe key's latest result if it is a
// rejection, or uses the quota up until one is: sequential requests (a
// bounded number), then, for a limiter they never exhaust (a concurrency
// cap), one burst released at one instant whose last-sent request must be
// the rejection — nothing of the key is sent after it.
func (p *planner) rejectionOfKey(ctx context.Context) *results.Result {
	if r := p.latestOfKey(); r != nil && r.Rejected() {
		return r
	}
	n := max(2*p.hintLimit+10, 50)
	for range n {
		if p.left() < 2 || p.e.Now() > p.deadline {
			return nil
		}
		r, ok := p.e.Do(ctx, attack.Shot{Phase: observation.PhaseSilentExhaust})
		if !ok {
			return nil
		}
		if r.Error == "" && r.Rejected() {
			return r
		}
	}
	size := min(max(2*p.hintLimit+10, 20), p.left()-2)
	if size < 2 || p.e.Now() > p.deadline {
		return nil
	}
	shots := make([]attack.Shot, size)
	for i := range shots {
		shots[i] = attack.Shot{Phase: observation.PhaseSilentBurst}
	}
	p.e.Burst(ctx, p.e.Now()+5*time.Millisecond, shots)
	p.e.Wait() // every one of them answered: nothing in flight while waiting
	if r := p.latestOfKey(); r != nil && r.Phase == observation.PhaseSilentBurst && r.Rejected() {
		return r
	}
	return nil
}

// latestOfKey is the decided result of the probe's key sent last.
func (p *planner) latestOfKey() *results.Result {
	var last *results.Result
	for _, r := range p.col.Results() {
		if r.Phase != observation.PhaseScopeOther && observation.Decided(r) && (last == nil || r.Sent > last.Sent) {
			last = r
		}
	}
	return last
}

// oneKey reports whether the probe's requests all went to one key. With
// --keys the engine spreads them over several, and nothing the plan sends
// next is known to land on the key it waited for.
func (p *planner) oneKey() bool {
	keys := map[string]bool{}
	for _, r := range p.col.Results() {
		if r.Phase != observation.PhaseScopeOther {
			keys[r.Key] = true
		}
	}
	return len(keys) <= 1
}
