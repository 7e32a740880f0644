// Package plan is a probe's experiment: it drives the target through an
// attack.Network (the live engine, or the simulator of targets/sim),
// deciding each step from what the last ones showed — calibrate, burst,
// sequential, recovery trace or sustained push, scope and bypass trials,
// silent waits, and the deciding experiment between tied models — within
// the budget, growing the time budget to a long window where allowed. Run
// returns what it observed (probe/observation) and says nothing about what
// the limiter is: the verdict is probe's. Where a step needs a fit of the
// run so far it asks probe/fit, in the background.
package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
)

// Options are what the plan is given: its budget, the shape of the
// requests, what its trials are made from, and whom it tells on the way.
// probe.Run fills them from its own options and the request.
type Options struct {
	// MaxRequests and MaxTime are the budget. Ceiling is what the plan may
	// grow the time budget to (budget.go); zero makes MaxTime a hard cap
	// (a --max-time the user gave).
	MaxRequests int
	MaxTime     time.Duration
	Ceiling     time.Duration
	// Engine shapes the requests: the plan reads its connection limit (a
	// burst holds one connection per request), its first source address
	// (the probe's own) and whether it speaks HTTP/2 (then no trial of a
	// fresh connection).
	Engine attack.Options
	// ScopeKey adds another key value to the scope trials; SecondSource is
	// the address of the scope trial of another address, and SecondWhy
	// why there is none (ScopeSources).
	ScopeKey     bool
	SecondSource netip.Addr
	SecondWhy    string
	// NoBypass skips the bypass trials; Bypass is what they are made from
	// (the request).
	NoBypass bool
	Bypass   bypass.Base
	// OnBudget, when set, is told when the plan grows the time budget: to
	// what (from the probe's start) and why.
	OnBudget func(to time.Duration, why string)
	// Refuted, when set, says whether the run so far refutes what the user
	// stated, and why: the plan stops after the burst that does.
	Refuted func(*observation.Observation) (why string, refuted bool)
	// Fits, when set, keeps the plan's last fit of the run for the
	// verdict, which fits the same run again when nothing was sent since.
	Fits *fit.Fits
}

// The plan's tuning knobs.
const (
	// calibrateRequests spaced calibrateGap apart: far enough that a sliding
	// log's return of these admissions, one window later, is told from a
	// window boundary.
	calibrateRequests = 3
	calibrateGap      = 200 * time.Millisecond
	// FirstBurstSize is the first burst without a header hint: large enough
	// that a limit of up to a hundred is seen exhausted at once.
	FirstBurstSize = 100
	// With a hint of limit L the first burst is 2L+10 (every request over
	// the limit is evidence), kept within these bounds.
	minHintedBurst = 40
	maxHintedBurst = 400
	// BurstGrowth and burstRounds: a burst that was all admitted is followed
	// by one BurstGrowth times larger, at most burstRounds in all.
	BurstGrowth = 4
	burstRounds = 3
	// minBurstSize: a smaller burst tells nothing a trace would not.
	minBurstSize = 10
	// AfterBurstReserve requests are kept for what follows the burst: the
	// sequential requests and the recovery trace (or the sustained phase).
	AfterBurstReserve = 200
	// sequentialRequests sent one after another right after exhaustion:
	// only a concurrency cap admits them all.
	sequentialRequests = 5
	// traceStartRate, per second, with no hint: well above the refill of
	// most limits a burst of 100 exhausts. With a hint, four times the
	// advertised rate within [traceMinHinted, traceMaxHinted].
	traceStartRate  = 100.0
	traceMinHinted  = 10.0
	traceMaxHinted  = 200.0
	traceMaxRate    = 800.0 // doubling stops here
	traceMinRate    = 4.0   // the slowest pace the budget may stretch the trace to
	traceCheckEvery = 5     // the stop rule is evaluated every few sends
	// traceMinReserve: below this many requests left the trace stops.
	traceMinReserve = 10
	// continuousReturns single admissions over at least continuousSpan
	// measure a continuous refill to well under 1% at the trace's
	// resolution; stepsSeen steps of at least stepSize admissions give a
	// window's length and phase.
	continuousReturns = 8
	continuousSpan    = fit.TiersSeedSpan
	stepsSeen         = 2
	stepSize          = 3
	// sustainDuration and sustainMaxRequests: when no burst was limited, the
	// rest of the budget (at most this many) is sent evenly over this long,
	// the push behind an answer of none.
	sustainDuration    = 2 * time.Second
	sustainMaxRequests = 400
	// answerGrace: the plan stops sending this long before the time budget,
	// so the last answers arrive inside it.
	answerGrace = 500 * time.Millisecond
)

// The smallest budget that can hold the plan: three calibration requests, a
// first burst, and what the sequential and trace phases (or, when nothing
// is rejected, the sustained phase) need after it. Less than this cannot
// earn any answer, so probe.Run refuses it before sending.
const (
	MinRequests = calibrateRequests + FirstBurstSize + AfterBurstReserve
	// MinTime: calibration (2 × 200 ms), waiting for the burst instant
	// (≤ 1.3 s), the sequential requests and a trace of two seconds, with
	// room for answers.
	MinTime = 5 * time.Second
)

// ErrUnreachable means every calibration request failed.
var ErrUnreachable = errors.New("target unreachable")

// Run drives the adaptive experiment. Each step is sized by what the
// previous ones showed: calibrate (RTT, header hints), a burst after idle
// (capacity; queueing delays), sequential requests right after exhaustion
// (a concurrency cap admits them, a rate limiter does not), a recovery trace
// at a rate above the refill (continuous refill, steps at boundaries, or
// admissions returning one window later), and a second key (scope). When no
// burst is limited, a sustained phase pushes the rest of the budget instead.
//
// It sends through e, reads the answers from col (which e's results must
// reach), and returns what it observed: the results, the notes of the
// phases it ran or could not, and the budget it grew. The error wraps
// ErrUnreachable, is a *QuotaCostError, says that no request of a burst
// was answered, or is ctx's (the run ended); a plan that stopped early
// for what it found (no limiter decisions, blocked from the first request,
// a stated model refuted) returns none.
func Run(ctx context.Context, e attack.Network, col *attack.Collector, opt Options) (*observation.Observation, error) {
	end := e.Now() + opt.MaxTime - answerGrace
	ceiling := opt.MaxTime
	if opt.Ceiling > 0 {
		ceiling = opt.Ceiling
	}
	p := &planner{e: e, col: col, opt: opt, deadline: end, end: end, ceiling: e.Now() + ceiling - answerGrace}
	p.budget = observation.Budget{MaxRequests: opt.MaxRequests, MaxTime: opt.MaxTime, Ceiling: opt.Ceiling}
	err := p.run(ctx)
	e.Wait()
	if p.budget.GrewTo > 0 {
		p.note("the time budget grew from %s to %s: %s", FormatSpan(p.budget.MaxTime), FormatSpan(p.budget.GrewTo), p.budget.Why)
	}
	obs := &observation.Observation{Start: e.Start(), Notes: p.notes, Budget: p.budget, Bypass: opt.Bypass}
	for _, r := range col.Results() {
		obs.Results = append(obs.Results, *r)
	}
	obs.RTT = observation.MinRTT(obs.Results)
	return obs, err
}

type planner struct {
	e        attack.Network
	col      *attack.Collector
	opt      Options
	deadline time.Duration // when the phase under way must stop sending
	end      time.Duration // when the plan must stop sending: the budget less answerGrace
	notes    []string

	// ceiling is the latest end the budget may grow to (budget.go),
	// budget what it was and grew to, tooLongSaid whether the run said a
	// window is too long to grow for.
	ceiling     time.Duration
	budget      observation.Budget
	tooLongSaid bool

	hintLimit  int
	hintWindow time.Duration
	paced      bool // a burst was queued, not rejected (pacing)

	tracedSilently bool // the trace waited out a Retry-After (trace_silence.go)
	// knockingCounted: the trace's knocking kept the key shut, and a wait
	// in silence opened it (waitOutKnocking).
	knockingCounted bool

	// lockReturn: the first return the trace's current lock named;
	// guidedSpent the lock whose named return proved wrong; wasGuided
	// whether any was guided (trace_guided.go).
	lockReturn  lockReturn
	guidedSpent time.Duration
	wasGuided   bool // a lock of the trace was guided
}

func (p *planner) note(format string, a ...any) { p.notes = append(p.notes, fmt.Sprintf(format, a...)) }

func (p *planner) left() int { return p.opt.MaxRequests - p.e.Sent() }

// errNoDecisions and errBlocked end the plan early: the answers so far
// are no limiter decisions, or rejections from the very first request. The
// inference says so from the results; they are not errors of the probe.
var (
	errNoDecisions = errors.New("no limiter decisions")
	errBlocked     = errors.New("blocked from the first request")
	// errRefuted: a burst refuted a model the user stated
	// (Options.Refuted): the rest of the run cannot make the expectation
	// hold.
	errRefuted = errors.New("a stated model refuted")
)

func (p *planner) run(ctx context.Context) error {
	if err := p.calibrate(ctx); err != nil {
		return err
	}
	if err := p.quotaCost(); err != nil { // quota_cost.go: a quota the budget cannot measure
		return err
	}
	limited, err := p.burst(ctx)
	if errors.Is(err, errNoDecisions) || errors.Is(err, errBlocked) || errors.Is(err, errRefuted) {
		return nil
	}
	if err != nil {
		return err
	}
	if !limited {
		if p.paced {
			return ctx.Err()
		}
		// Nothing rejected yet: push the rest of the budget as a sustained
		// phase. A limit it provokes is traced like a burst's.
		if limited = p.sustain(ctx); !limited {
			return ctx.Err()
		}
	}
	p.sequential(ctx)
	p.growFor(p.lastAdmitted())  // budget.go: a long window's budget
	silent := p.silentWaits(ctx) // silent.go: reserves its time now, waits after the scope trials
	// The trace leaves the scope trials their share; they stop where the
	// silent waits' reserved time begins. The deciding experiments come
	// last, in what is left: each needs a fit of the run so far, seconds of
	// CPU on a long run and a loaded machine, so the first is fitted on the
	// trace while the scope trials and the silent waits run.
	scopeShare := p.scopeTime() + p.bypassTime()
	p.deadline -= scopeShare
	p.trace(ctx)
	p.deadline += scopeShare
	fitCtx, abandon := context.WithCancel(ctx)
	defer abandon() // a background fit still running when the plan ends
	ties := &pendingFit{ch: p.fitTies(fitCtx)}
	p.scopeTrials(ctx)  // scope.go
	p.bypassTrials(ctx) // bypass.go
	silent(ties)
	p.splitTies(ctx, ties) // split.go: the experiment that separates tied models
	return ctx.Err()
}

// calibrate sends three spaced requests: RTT, reachability, header hints.
func (p *planner) calibrate(ctx context.Context) error {
	var lastErr string
	ok := 0
	for i := range calibrateRequests {
		if i > 0 && !p.e.Sleep(ctx, calibrateGap) {
			return ctx.Err()
		}
		r, sent := p.e.Do(ctx, attack.Shot{Phase: observation.PhaseCalibrate})
		if !sent {
			return ctx.Err()
		}
		if r.Error != "" {
			lastErr = r.Error
			continue
		}
		ok++
		if l, w := attack.QuotaHints(r.Headers); l > 0 {
			p.hintLimit, p.hintWindow = l, w
		}
	}
	if ok == 0 {
		return fmt.Errorf("%w: %s", ErrUnreachable, lastErr)
	}
	return nil
}

// burst releases a burst after the calibration, escalating its size until
// the target rejects something or the budget says stop. It reports whether
// any limit was seen. A round the budget cannot hold is not sent, and the
// note says so; the inference then judges whether what did run suffices.
func (p *planner) burst(ctx context.Context) (bool, error) {
	size := FirstBurstSize
	if p.hintLimit > 0 {
		size = min(max(2*p.hintLimit+10, minHintedBurst), maxHintedBurst)
	}
	conns := p.opt.Engine.MaxConns
	if conns <= 0 {
		conns = attack.DefaultMaxConns
	}
	for round := 0; round < burstRounds; round++ {
		if size > p.left()-AfterBurstReserve {
			size = p.left() - AfterBurstReserve
		}
		if size > conns {
			// A burst holds one connection per request: never more
			// than the engine's connection limit.
			p.note("burst %d capped at the connection limit of %d", round+1, conns)
			size = conns
		}
		if size < minBurstSize {
			p.note("the request budget could not hold burst %d (%d requests left, %d kept for the phases after it)", round+1, p.left(), AfterBurstReserve)
			return false, nil
		}
		at := p.burstInstant()
		if at > p.deadline {
			p.note("the time budget could not hold burst %d", round+1)
			return false, nil
		}
		phase := observation.PhaseBurst
		if round > 0 {
			phase = fmt.Sprintf("%s-%d", observation.PhaseBurst, round)
		}
		shots := make([]attack.Shot, size)
		for i := range shots {
			shots[i] = attack.Shot{Phase: phase}
		}
		p.e.Burst(ctx, at, shots)
		p.e.Wait()
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		var admitted, rejected, errs int
		for _, r := range p.col.Phase(phase) {
			switch {
			case r.Error != "":
				errs++
			case r.Rejected():
				rejected++
			case r.Admitted():
				admitted++
			}
		}
		if errs == size {
			return false, fmt.Errorf("every request of a burst of %d failed: %s", size, p.col.Phase(phase)[0].Error)
		}
		if why, ok := p.refuted(); ok {
			p.note("the probe stopped after burst %d: %s", round+1, why)
			return false, errRefuted
		}
		if admitted+rejected == 0 {
			// Redirects, 404s, 500s: nothing more to learn from a larger
			// burst or a trace (the inference says what was answered).
			return false, errNoDecisions
		}
		if rejected > 0 && admitted == 0 && p.neverAdmitted() {
			// Blocked from the first request: no capacity to measure, and
			// knocking on would only spend the budget.
			return false, errBlocked
		}
		if rejected > 0 {
			return true, nil
		}
		if p.pacing(phase) {
			// A pacer (pacing): a larger burst, or a sustained
			// phase, would only wait beyond the request timeout.
			p.paced = true
			p.note("burst %d was queued, not rejected: a pacer; no larger burst or sustained phase", round+1)
			return false, nil
		}
		size *= BurstGrowth
	}
	return false, nil
}

// refuted is what the run so far refutes of what the user stated
// (Options.Refuted), and whether it refutes anything.
func (p *planner) refuted() (string, bool) {
	if p.opt.Refuted == nil {
		return "", false
	}
	return p.opt.Refuted(p.snapshot())
}

// pacing reports whether the burst in phase was held in a pacer's queue:
// nothing rejected, and its admissions answered in a staircase
// (observation.PacedBurst).
func (p *planner) pacing(phase string) bool {
	var rs []results.Result
	for _, r := range p.col.Phase(phase) {
		if r.Rejected() {
			return false
		}
		rs = append(rs, *r)
	}
	service := time.Duration(-1)
	for _, r := range p.col.Results() {
		if r.Error == "" && r.Admitted() && (service < 0 || r.Latency() < service) {
			service = r.Latency()
		}
	}
	held, _, _ := observation.PacedBurst(rs, max(service, 0))
	return held > 0
}

// admittedSoFar counts the requests of the run admitted so far.
func (p *planner) admittedSoFar() int {
	n := 0
	for _, r := range p.col.Results() {
		if r.Error == "" && r.Admitted() {
			n++
		}
	}
	return n
}

// neverAdmitted reports whether no request of the run so far was admitted.
func (p *planner) neverAdmitted() bool {
	for _, r := range p.col.Results() {
		if r.Error == "" && r.Admitted() {
			return false
		}
	}
	return true
}

// sustain sends what is left of the budget (at most sustainMaxRequests, or
// the limit the headers declare, which a budget the user raised to spend it
// must reach: quotaCost) evenly over sustainDuration right after the last
// burst, which was all admitted: a limit with a large capacity but a finite
// rate shows here. It reports whether anything was rejected.
func (p *planner) sustain(ctx context.Context) bool {
	n := min(p.left()-traceMinReserve, max(sustainMaxRequests, p.hintLimit-p.admittedSoFar()+minBurstSize))
	dur := sustainDuration
	if n < minBurstSize {
		p.note("the request budget could not hold the sustained phase")
		return false
	}
	begin := p.e.Now() + 10*time.Millisecond
	if begin+dur > p.deadline {
		p.note("the time budget could not hold the sustained phase")
		return false
	}
	gap := dur / time.Duration(n)
	p.e.Schedule(ctx, n, func(i int) attack.Shot {
		return attack.Shot{At: begin + time.Duration(i)*gap, Phase: observation.PhaseSustain}
	})
	p.e.Wait()
	for _, r := range p.col.Phase(observation.PhaseSustain) {
		if r.Error == "" && r.Rejected() {
			return true
		}
	}
	return false
}

// burstInstant is just after the next whole second of the wall clock.
// Wall-aligned windows (fixed windows, sliding counters) start on whole
// seconds when their length is whole seconds, as it nearly always is, so a
// burst there falls inside one window — never straddling a boundary — and
// what follows shows the whole window: a sliding counter gives nothing back
// until its next boundary, where a token bucket refills at once. Released
// at an arbitrary phase, that dead time can shrink to a single decision and
// the two become indistinguishable. The margin covers the trip to the server
// and a little disagreement between its clock and ours.
//
// Windows aligned to our first request instead have boundaries a whole
// number of half seconds after it; the instant moves later (by at most
// 300 ms) to keep 150 ms clear of those too.
func (p *planner) burstInstant() time.Duration {
	margin := 20*time.Millisecond + p.calibrationRTT()
	now := p.e.Start().Add(p.e.Now())
	target := now.Truncate(time.Second).Add(time.Second + margin)
	if target.Sub(now) > time.Second {
		target = target.Add(-time.Second) // still early enough in this second
	}
	if cal := p.col.Phase(observation.PhaseCalibrate); len(cal) > 0 {
		first := p.e.Start().Add(cal[0].Sent)
		const half, clear = 500 * time.Millisecond, 150 * time.Millisecond
		switch f := target.Sub(first) % half; {
		case f < clear:
			target = target.Add(clear - f)
		case f > half-clear:
			target = target.Add(half - f + clear)
		}
	}
	return p.e.Now() + target.Sub(now)
}

// calibrationRTT is the fastest calibration round trip (0 if none answered).
func (p *planner) calibrationRTT() time.Duration {
	best := time.Duration(0)
	for _, r := range p.col.Phase(observation.PhaseCalibrate) {
		if r.Error == "" && (best == 0 || r.Latency() < best) {
			best = r.Latency()
		}
	}
	return best
}

// sequential sends requests one after another right after exhaustion:
// only a concurrency cap admits them all.
func (p *planner) sequential(ctx context.Context) {
	for range sequentialRequests {
		if _, ok := p.e.Do(ctx, attack.Shot{Phase: observation.PhaseSequential}); !ok {
			return
		}
	}
}

// trace sends single requests at an adaptive rate and stops when the
// pattern of returning capacity is clear: enough admissions to measure a
// continuous refill, or two window-sized steps, or the budget.
func (p *planner) trace(ctx context.Context) {
	rate := traceStartRate
	if p.hintLimit > 0 && p.hintWindow > 0 {
		rate = min(max(4*float64(p.hintLimit)/p.hintWindow.Seconds(), traceMinHinted), traceMaxHinted)
	}
	startRate := rate
	start := p.e.Now()
	next := start
	lastAdmit := start
	for i := 0; ; i++ {
		if ctx.Err() != nil {
			return
		}
		if next > p.deadline || p.left() < traceMinReserve {
			p.note("trace stopped after %.1f s: %s", (p.e.Now() - start).Seconds(), p.traceStopCause())
			return
		}
		at := next
		p.e.Schedule(ctx, 1, func(int) attack.Shot { return attack.Shot{At: at, Phase: observation.PhaseTrace} })
		tr := p.col.Phase(observation.PhaseTrace)
		if adm := observation.AdmittedSent(tr); len(adm) > 0 {
			lastAdmit = max(lastAdmit, adm[len(adm)-1])
		}
		guided := p.guidedLock(tr, lastAdmit, p.e.Now())
		switch {
		case guided:
			rate, p.wasGuided = p.guidedRate(startRate), true
		case p.wasGuided && len(tr) > 0 && !tr[len(tr)-1].Admitted():
			// A step whose return the headers named is over: into the
			// lock after it no faster than the guided rate, where a rate
			// doubled while the step was taken would spend hundreds of
			// requests.
			rate = min(rate, p.guidedRate(startRate))
		}
		next += p.knockGap(tr, rate, p.e.Now()-lastAdmit, guided)
		if i%traceCheckEvery != traceCheckEvery-1 {
			continue
		}
		// Nearly everything admitted: the refill keeps up with us, so
		// the trace cannot see it; go faster.
		if recent := tr[max(0, len(tr)-20):]; len(recent) == 20 && observation.CountAdmitted(recent) >= 18 && rate < traceMaxRate {
			rate *= 2
		}
		// Nothing coming back for a while: the window may be long, so
		// grow the budget to it (budget.go) and pace the rest of
		// the budget over the time that is left.
		if locked(tr, lastAdmit, p.e.Now()) {
			p.growFor(lastAdmit)
		}
		if p.e.Now()-lastAdmit > time.Second && !guided {
			if timeLeft := (p.deadline - p.e.Now()).Seconds(); timeLeft > 0 {
				rate = min(rate, max(float64(p.left()-2*traceMinReserve)/timeLeft, traceMinRate))
			}
		}
		if p.enough(tr, p.e.Now()-start) {
			return
		}
		if lock, crowded := p.secondStepCrowdsOut(tr); crowded { // trace_one_step.go
			p.note("trace stopped after one step: the key stayed shut %.1f s before it, and a second as late would leave the deciding experiments less than that", lock.Seconds())
			return
		}
		w := p.traceSilence(ctx, tr, lastAdmit, rate)
		if w == nil {
			w = p.waitOutKnocking(ctx, tr, lastAdmit)
		}
		if w != nil {
			next = p.e.Now()
			if w.Admitted() {
				lastAdmit = w.Sent
			}
		}
	}
}

// knockGap is the gap to the trace's next knock at its rate, slower on a
// key shut for locked (knockRate), or guided by the instant the headers
// name for a long lock's end (trace_guided.go).
func (p *planner) knockGap(tr []*results.Result, rate float64, locked time.Duration, guided bool) time.Duration {
	full := time.Duration(float64(time.Second) / rate)
	if guided {
		return p.guidedGap(tr[len(tr)-1], p.e.Now(), full)
	}
	return time.Duration(float64(time.Second) / min(rate, p.knockRate(locked)))
}

// traceStopCause says which budget ended the trace: the requests, the
// probe's time, or the time kept for what follows it.
func (p *planner) traceStopCause() string {
	switch {
	case p.left() < traceMinReserve:
		return fmt.Sprintf("the request budget is spent (%d left)", p.left())
	case p.end-p.deadline < time.Second:
		return "the probe's time budget is spent"
	}
	return fmt.Sprintf("the last %.1f s of the probe's time are kept for the scope trials, the silent waits and the deciding experiments", (p.end - p.deadline).Seconds())
}

// knockRate is the fastest the trace may knock on a key that has admitted
// nothing for locked: a limiter that counts denied attempts (HAProxy's
// http_req_rate, a log of attempts, a window every rejection restarts)
// stays shut for as long as a client keeps knocking, so knocking must slow
// down the longer the key stays shut. At most half the capacity the burst
// saw per time shut: a limiter of any window up to that time then sees at
// most half its limit in each window, and reopens, while a limiter that
// does not count rejections still shows its boundaries to within a small
// share of the time waited. The quiet periods grow with the lock, and the
// budget is not spent knocking on a locked key.
func (p *planner) knockRate(locked time.Duration) float64 {
	if locked <= lockedAfter {
		return math.Inf(1)
	}
	return float64(max(p.capacity(), 1)) / (2 * locked.Seconds())
}

// lockedAfter: a key that has admitted nothing for longer than this is
// treated as shut, and knocked on ever more slowly (knockRate).
const lockedAfter = time.Second

// capacity is the most the probe saw admitted at once: the largest burst's
// admissions.
func (p *planner) capacity() int {
	best := 0
	for _, name := range observation.BurstPhaseNames(p.col.Results()) {
		best = max(best, observation.CountAdmitted(p.col.Phase(name)))
	}
	return best
}

// enough decides whether the trace has shown the refill pattern.
func (p *planner) enough(tr []*results.Result, elapsed time.Duration) bool {
	if len(tr) == 0 { // answers still in flight (a slow backend)
		return false
	}
	big := decidedSteps(tr)
	last := tr[len(tr)-1]
	// A refill is continuous only over a stretch no lock interrupted: a
	// bucket behind a window (two tiers) admits singles at its rate until
	// the window binds, and those singles are not the whole pattern. So
	// the singles are counted since the last lock ended, and none while
	// one is open.
	since, inLock := sinceLastLock(tr)
	singles := 0
	for _, g := range observation.AdmissionRuns(since) {
		if g < stepSize {
			singles++
		}
	}
	span := elapsed - (since[0].Sent - tr[0].Sent)
	continuous := !inLock && singles >= continuousReturns && span >= continuousSpan
	// Window-sized steps, each followed by rejections again, give the
	// window's length and phase. Where the knocking itself kept the key
	// shut and silence opened it (waitOutKnocking), one step and that are
	// the pattern: knocking on for a second would only keep it shut.
	need := stepsSeen
	if p.knockingCounted {
		need = 1
	}
	steps := big >= need && !last.Admitted()
	return continuous || steps
}

// sinceLastLock is the trace (in send order, errors left out) from the
// first admission after its last lock, all of it when there was none, and
// whether a lock is open at its end. A lock is a run of rejections that
// spans more than lockFactor times the typical run between two admissions,
// plus lockSlack: a continuous refill spaces its admissions evenly, a
// window that binds behind it does not. Runs are measured over the send
// times of the rejected requests alone, so a stall of the sender on a
// loaded machine (which sends nothing, and whose next request a continuous
// refill admits) is no lock; nor is the end of the trace whose admissions
// a queue has not answered yet.
func sinceLastLock(tr []*results.Result) (since []*results.Result, inLock bool) {
	rs := make([]*results.Result, 0, len(tr))
	for _, r := range tr {
		if r.Error == "" {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return tr, false
	}
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].Sent < rs[j].Sent })
	type run struct {
		span time.Duration
		end  int // the index of the admission that closed it; len(rs) while open
	}
	var runs []run
	var first, last time.Duration
	inRun, seenAdmit := false, false
	for i, r := range rs {
		if r.Admitted() {
			if inRun && seenAdmit {
				runs = append(runs, run{last - first, i})
			}
			inRun, seenAdmit = false, true
			continue
		}
		if !inRun {
			first, inRun = r.Sent, true
		}
		last = r.Sent
	}
	if len(runs) < continuousReturns/2 {
		return rs, false // too few returns to know the rhythm; the count rule waits anyway
	}
	spans := make([]time.Duration, len(runs))
	for i, r := range runs {
		spans[i] = r.span
	}
	slices.Sort(spans)
	longest := lockFactor*spans[len(spans)/2] + lockSlack
	since = rs
	for _, r := range runs {
		if r.span > longest {
			since = rs[r.end:]
		}
	}
	// An admission the limiter delays (a queue, a pacer) is answered
	// late, after rejections sent later: the open run may hide such
	// answers for as long as the longest delay an admission has had, so
	// only its part before that counts.
	var hidden time.Duration
	for _, r := range rs {
		if r.Admitted() {
			hidden = max(hidden, r.Done-r.Sent)
		}
	}
	return since, inRun && seenAdmit && last-hidden-first > longest
}

// lockFactor and lockSlack: how much longer than the typical run between
// admissions a run of rejections must be to be a lock. A continuous refill
// spaces its admissions evenly; the server's order of arrival moves one
// admission by a request or two at the trace's rate, far inside this.
const (
	lockFactor = 2
	lockSlack  = 50 * time.Millisecond
)
