package probe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

// Options bound a probe.
type Options struct {
	MaxTime     time.Duration // default 60 s
	MaxRequests int           // default 2,000
	// ScopeKey tests per-key scope by sending one request with another key
	// value (needs the request's KeyHeader).
	ScopeKey bool
}

// Defaults for a probe's budget: the bar is ≤ max(20 s, 3 W) and
// ≤ 2,000 requests; the plan stops well before when the evidence suffices.
const (
	DefaultMaxTime     = 60 * time.Second
	DefaultMaxRequests = 2000
)

// ErrUnreachable means every calibration request failed.
var ErrUnreachable = errors.New("target unreachable")

// plan phases, as recorded in the results' phase field.
const (
	phaseCalibrate  = "calibrate"
	phaseBurst      = "burst"
	phaseSequential = "sequential"
	phaseTrace      = "trace"
	phaseScopeRef   = "scope-ref"
	phaseScopeOther = "scope-other"
)

// Run drives the adaptive experiment. Each step is sized by what the
// previous ones showed: calibrate (RTT, header hints), a burst after idle
// (capacity; queueing delays), sequential requests right after exhaustion
// (a concurrency cap admits them, a rate limiter does not), a recovery trace
// at a rate above the refill (continuous refill, steps at boundaries, or
// admissions returning one window later), and a second key (scope).
func Run(ctx context.Context, e *attack.Engine, col *attack.Collector, opt Options) (*Observation, error) {
	if opt.MaxTime <= 0 {
		opt.MaxTime = DefaultMaxTime
	}
	if opt.MaxRequests <= 0 {
		opt.MaxRequests = DefaultMaxRequests
	}
	p := &planner{e: e, col: col, opt: opt, deadline: e.Now() + opt.MaxTime}
	err := p.run(ctx)
	e.Wait()
	obs := &Observation{Start: e.Start(), Notes: p.notes}
	for _, r := range col.Results() {
		obs.Results = append(obs.Results, *r)
	}
	obs.RTT = minRTT(obs.Results)
	return obs, err
}

type planner struct {
	e        *attack.Engine
	col      *attack.Collector
	opt      Options
	deadline time.Duration
	notes    []string

	hintLimit  int
	hintWindow time.Duration
}

func (p *planner) note(format string, a ...any) { p.notes = append(p.notes, fmt.Sprintf(format, a...)) }

func (p *planner) left() int { return p.opt.MaxRequests - p.e.Sent() }

func (p *planner) run(ctx context.Context) error {
	if err := p.calibrate(ctx); err != nil {
		return err
	}
	limited, err := p.burst(ctx)
	if err != nil || !limited {
		return err
	}
	p.sequential(ctx)
	defer p.silentWaits(ctx)() // plan_silent.go: reserves its time now, waits at the end
	p.trace(ctx)
	if p.opt.ScopeKey {
		p.scope(ctx)
	}
	return nil
}

// calibrate sends three spaced requests: RTT, reachability, header hints.
func (p *planner) calibrate(ctx context.Context) error {
	var lastErr string
	ok := 0
	for i := range 3 {
		// 200 ms apart: far enough that a sliding log's return of these
		// admissions, one window later, is told from a window boundary.
		if i > 0 && !sleep(ctx, 200*time.Millisecond) {
			return ctx.Err()
		}
		r, sent := p.e.Do(ctx, attack.Shot{Phase: phaseCalibrate})
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
// any limit was seen.
func (p *planner) burst(ctx context.Context) (bool, error) {
	size := 100
	if p.hintLimit > 0 {
		size = min(max(2*p.hintLimit+10, 40), 400)
	}
	for round := 0; ; round++ {
		if size > p.left()-200 {
			size = p.left() - 200
		}
		if size < 10 {
			p.note("request budget too small to exhaust the limiter")
			return false, nil
		}
		phase := phaseBurst
		if round > 0 {
			phase = fmt.Sprintf("%s-%d", phaseBurst, round)
		}
		shots := make([]attack.Shot, size)
		for i := range shots {
			shots[i] = attack.Shot{Phase: phase}
		}
		p.e.Burst(ctx, p.burstInstant(), shots)
		p.e.Wait()
		var rejected, errs int
		for _, r := range p.col.Phase(phase) {
			switch {
			case r.Error != "":
				errs++
			case r.Rejected():
				rejected++
			}
		}
		if errs == size {
			return false, fmt.Errorf("every request of a burst of %d failed: %s", size, p.col.Phase(phase)[0].Error)
		}
		if rejected > 0 {
			return true, nil
		}
		if round >= 2 || ctx.Err() != nil {
			p.note("no limit observed: bursts up to %d requests at one instant were all admitted", size)
			return false, nil
		}
		size *= 4
	}
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
	now := time.Now()
	target := now.Truncate(time.Second).Add(time.Second + margin)
	if target.Sub(now) > time.Second {
		target = target.Add(-time.Second) // still early enough in this second
	}
	if cal := p.col.Phase(phaseCalibrate); len(cal) > 0 {
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
	for _, r := range p.col.Phase(phaseCalibrate) {
		if r.Error == "" && (best == 0 || r.Latency() < best) {
			best = r.Latency()
		}
	}
	return best
}

// sequential sends five requests one after another right after
// exhaustion: only a concurrency cap admits them all.
func (p *planner) sequential(ctx context.Context) {
	for range 5 {
		if _, ok := p.e.Do(ctx, attack.Shot{Phase: phaseSequential}); !ok {
			return
		}
	}
}

// trace sends single requests at an adaptive rate and stops when the
// pattern of returning capacity is clear: enough admissions to measure a
// continuous refill, or two window-sized steps, or the budget.
func (p *planner) trace(ctx context.Context) {
	rate := 100.0
	if p.hintLimit > 0 && p.hintWindow > 0 {
		rate = min(max(4*float64(p.hintLimit)/p.hintWindow.Seconds(), 10), 200)
	}
	const minRate = 4.0
	start := p.e.Now()
	next := start
	lastAdmit := start
	for i := 0; ; i++ {
		if next > p.deadline || p.left() < 10 || ctx.Err() != nil {
			p.note("trace stopped by the probe budget after %.1f s", (p.e.Now() - start).Seconds())
			return
		}
		at := next
		p.e.Schedule(ctx, 1, func(int) attack.Shot { return attack.Shot{At: at, Phase: phaseTrace} })
		next += time.Duration(float64(time.Second) / rate)
		if i%5 != 4 {
			continue
		}
		tr := p.col.Phase(phaseTrace)
		adm := admittedTimes(tr)
		if len(adm) > 0 {
			lastAdmit = max(lastAdmit, adm[len(adm)-1])
		}
		// Nearly everything admitted: the refill keeps up with us, so
		// the trace cannot see it; go faster.
		if recent := tr[max(0, len(tr)-20):]; len(recent) == 20 && countAdmitted(recent) >= 18 && rate < 800 {
			rate *= 2
		}
		// Nothing coming back for a while: the window may be long, so
		// pace the rest of the budget over the time that is left.
		if p.e.Now()-lastAdmit > time.Second {
			if timeLeft := (p.deadline - p.e.Now()).Seconds(); timeLeft > 0 {
				rate = min(rate, max(float64(p.left()-20)/timeLeft, minRate))
			}
		}
		if p.enough(tr, rate, p.e.Now()-start) {
			return
		}
	}
}

// enough decides whether the trace has shown the refill pattern.
func (p *planner) enough(tr []*attack.Result, rate float64, elapsed time.Duration) bool {
	if len(tr) == 0 { // answers still in flight (a slow backend)
		return false
	}
	groups := admissionGroups(tr)
	big := 0
	for _, g := range groups {
		if g >= 3 {
			big++
		}
	}
	last := tr[len(tr)-1]
	singles := 0
	for _, g := range groups {
		if g < 3 {
			singles++
		}
	}
	// A refill one request at a time: eight returns measure its rate to
	// well under 1% at the trace's resolution.
	continuous := singles >= 8 && elapsed >= 2*time.Second
	// Window-sized steps: two of them, each followed by rejections again,
	// give the window's length and phase.
	steps := big >= 2 && !last.Admitted()
	return continuous || steps
}

// admissionGroups counts admissions in runs of consecutive admissions
// (split by rejections only: a stall on a loaded machine may pause the
// trace, which must not cut one window's step in two).
func admissionGroups(rs []*attack.Result) []int {
	var groups []int
	inRun := false
	for _, r := range rs {
		if r.Error != "" {
			continue
		}
		if r.Admitted() {
			if inRun {
				groups[len(groups)-1]++
			} else {
				groups = append(groups, 1)
			}
			inRun = true
		} else {
			inRun = false
		}
	}
	return groups
}

func countAdmitted(rs []*attack.Result) int {
	n := 0
	for _, r := range rs {
		if r.Admitted() {
			n++
		}
	}
	return n
}

func admittedTimes(rs []*attack.Result) []time.Duration {
	var out []time.Duration
	for _, r := range rs {
		if r.Admitted() {
			out = append(out, r.Sent)
		}
	}
	return out
}

// scope compares the exhausted key with a fresh one.
func (p *planner) scope(ctx context.Context) {
	p.e.Do(ctx, attack.Shot{Phase: phaseScopeRef})
	p.e.Do(ctx, attack.Shot{Phase: phaseScopeOther, Key: "ratecheck-probe-other"})
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
