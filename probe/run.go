package probe

import (
	"context"
	"errors"
	"fmt"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"

	"github.com/ratecheck/ratecheck/probe/fit"
	"github.com/ratecheck/ratecheck/probe/plan"
)

// Options bound and shape a probe. The zero value is the default probe.
type Options struct {
	// MaxTime is the time budget, a hard cap. Zero: DefaultMaxTime, which
	// the plan grows to what the limit it meets needs, up to
	// DefaultMaxTimeCeiling (probe/plan's budget.go).
	MaxTime     time.Duration
	MaxRequests int // request budget; default DefaultMaxRequests
	// ScopeKey adds another key value to the scope trials (needs the
	// request's KeyHeader); the other identities (another source address,
	// a fresh connection, forged proxy headers) are tried regardless
	// (probe/plan's scope.go).
	ScopeKey bool
	// Engine shapes the requests (timeout, TLS, connections, keys). Its
	// budget fields are ignored: the probe's budget above is the engine's.
	// Of its Sources the probe's own connections bind the first and the
	// scope trial the second (for a loopback target, another loopback
	// address when there is no second).
	Engine attack.Options
	// ResultsFile, when set, receives every result as it arrives (compact
	// or JSON Lines by its name, see results.CreateStream), so an
	// interrupted probe keeps its data.
	ResultsFile string
	// Command and Target label the results stream ("probe" and the URL by
	// default): the command that ran and the target as the user wrote it.
	Command, Target string
	// Sinks also receive every result (a progress line, say).
	Sinks []func(*results.Result)
	// Network is what the plan sends through (attack.Network); nil: the
	// live engine on real sockets. targets/sim gives a simulated one.
	Network attack.NetworkFunc
	// OnBudget, when set, is told when the plan grows the time budget: to
	// what (from the probe's start) and why.
	OnBudget func(to time.Duration, why string)
	// Stated are the capacities the user states (check's expectations,
	// expect.StatedBy): a burst that admits more refutes one, and the
	// plan stops there (stated.go).
	Stated []Stated
	// NoBypass skips the bypass trials (probe/bypass, probe/plan's
	// bypass.go); BypassMethods are the methods besides HEAD they may send
	// instead of the request's own (they may change state: only when the
	// user says).
	NoBypass      bool
	BypassMethods []string

	// adaptive: no MaxTime was given, so the budget may grow.
	adaptive bool

	// bypassBase is what the bypass trials are made from (the request).
	bypassBase bypass.Base
}

// Defaults for a probe's budget: the bar is ≤ max(20 s, 3 W) and
// ≤ 2,000 requests; the plan stops well before when the evidence suffices.
const (
	DefaultMaxTime     = 60 * time.Second
	DefaultMaxRequests = 2000
	// DefaultMaxTimeCeiling is what a probe given no MaxTime may grow its
	// time budget to: two windows of a limit of two minutes fit, with room.
	DefaultMaxTimeCeiling = 5 * time.Minute
)

// The smallest budget that can hold the plan (plan.MinRequests,
// plan.MinTime): less than this cannot earn any answer, so Run refuses it
// before sending.
const (
	MinRequests = plan.MinRequests
	MinTime     = plan.MinTime
)

// BudgetError says a budget cannot hold the smallest plan.
type BudgetError struct {
	What string // "requests" or "time"
	Have string
	Need string
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("a probe budget of %s %s cannot hold the smallest plan, which needs at least %s", e.Have, e.What, e.Need)
}

// ErrUnreachable means every calibration request failed (plan.ErrUnreachable).
var ErrUnreachable = plan.ErrUnreachable

// QuotaCostError refuses a probe whose calibration found a quota the
// request budget cannot measure (plan.QuotaCostError).
type QuotaCostError = plan.QuotaCostError

func (o *Options) fill() {
	if o.MaxTime <= 0 {
		o.MaxTime, o.adaptive = DefaultMaxTime, true
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	if o.Command == "" {
		o.Command = "probe"
	}
}

// ceiling is the longest the probe may run: the budget it may grow to.
func (o *Options) ceiling() time.Duration {
	if o.adaptive {
		return max(DefaultMaxTimeCeiling, o.MaxTime)
	}
	return o.MaxTime
}

// Validate reports a budget too small for the smallest plan (*BudgetError),
// after filling in the defaults.
func (o Options) Validate() error {
	o.fill()
	if o.MaxRequests < MinRequests {
		return &BudgetError{What: "requests", Have: strconv.Itoa(o.MaxRequests), Need: strconv.Itoa(MinRequests)}
	}
	if o.MaxTime < MinTime {
		return &BudgetError{What: "time", Have: o.MaxTime.String(), Need: MinTime.String()}
	}
	return nil
}

// Result is one probe carried out.
type Result struct {
	Observation *observation.Observation
	Inference   Inference
	// Notes are what the engine and the plan said on the way (budget
	// reached, interrupted, phases skipped).
	Notes       []string
	Elapsed     time.Duration
	ResultsFile string // "" when none was written
}

// Run probes the target req points at: the adaptive plan (calibrate, burst,
// sequential, trace, sustain or scope as the evidence asks), streaming every
// result to opt.ResultsFile, then the inference. It never exceeds the
// budget, and a probe cut short (interrupted, or a phase the budget could
// not hold) is Inconclusive with the reason, never a family.
//
// The error is a *BudgetError before anything is sent, an error wrapping
// ErrUnreachable when no calibration request was answered (the Result still
// holds what was recorded), or a results file that cannot be written.
func Run(ctx context.Context, req *attack.Request, opt Options) (*Result, error) {
	opt.fill()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	col := attack.NewCollector(true)
	lost := &lostWatch{} // failures.go: a dead target ends the plan
	var second netip.Addr
	var secondWhy string
	opt.Engine.Sources, second, secondWhy = plan.ScopeSources(req.URL, opt.Engine.Sources)
	opt.bypassBase = plan.BypassBase(req.Method, req.URL, opt.Engine.HTTP2, req.Header.Get("Cookie") != "", opt.BypassMethods)
	eo := opt.Engine
	// The plan stops sending a little before MaxTime; the engine's hard
	// stop is the budget itself, so a probe never overruns it.
	eo.MaxRequests, eo.MaxDuration = opt.MaxRequests, opt.MaxTime
	// The sinks are complete (the stream's among them) before the first
	// send; the network says when offset 0 is (the stream header's start).
	sinks := append([]func(*results.Result){}, opt.Sinks...)
	dial := opt.Network
	if dial == nil {
		dial = attack.Live
	}
	eng := dial(req, eo, func(r *results.Result) {
		for _, sink := range sinks {
			sink(r)
		}
	})
	start := eng.Epoch()
	var stream *results.Stream
	if opt.ResultsFile != "" {
		target := opt.Target
		if target == "" {
			target = req.URL.String()
		}
		var err error
		stream, err = results.CreateStream(opt.ResultsFile, results.StreamHeader{Command: opt.Command, Target: target,
			URL: req.URL.String(), Profile: "probe", Start: start, Options: streamOptions(opt)})
		if err != nil {
			return nil, err
		}
		sinks = append(sinks, stream.Add)
	}
	sinks = append(sinks, col.Add, lost.add)
	// The network runs on the caller's context (its end is an
	// interruption); the plan on one the watch cancels.
	// Real sockets: a CPU is kept from the fits while the plan sends
	// (fit.go), taken before the clock starts (it may wait for a fit).
	release := func() {}
	if opt.Network == nil {
		release = fit.ReserveSender()
	}
	planCtx, stopPlan := context.WithCancel(eng.BeginAt(ctx, start))
	defer stopPlan()
	lost.watch(stopPlan)
	po := plan.Options{MaxRequests: opt.MaxRequests, MaxTime: opt.MaxTime, Engine: opt.Engine,
		ScopeKey: opt.ScopeKey, SecondSource: second, SecondWhy: secondWhy,
		NoBypass: opt.NoBypass, Bypass: opt.bypassBase, OnBudget: opt.OnBudget, Refuted: refutedBy(opt.Stated),
		Fits: new(fit.Fits)}
	if opt.adaptive {
		po.Ceiling = opt.ceiling()
	}
	obs, planErr := plan.Run(planCtx, eng, col, po)
	eng.Finish()
	release()
	if lost.stopped() && ctx.Err() == nil {
		obs.Notes = append(obs.Notes, fmt.Sprintf("the target stopped answering: %d requests in a row got no answer, so the probe stopped sending", lostAfter))
	}
	if ctx.Err() != nil {
		obs.Stopped = observation.StopInterrupted
	}
	res := &Result{Observation: obs, Notes: append(eng.Notes(), obs.Notes...), Elapsed: eng.Now(), ResultsFile: opt.ResultsFile}
	if obs.Stopped == observation.StopInterrupted {
		msg := "interrupted"
		if opt.ResultsFile != "" {
			msg += ": the results so far are in " + opt.ResultsFile
		}
		res.Notes = append(res.Notes, msg)
	}
	var closeErr error
	if stream != nil {
		stream.SetStopped(obs.Stopped)
		closeErr = stream.Close(res.Notes, eng.Now())
	}
	var costly *QuotaCostError
	if errors.As(planErr, &costly) {
		res.Inference = Inference{Family: Inconclusive, Scope: observation.ScopeUntested, Reason: planErr.Error()}
		return res, planErr
	}
	if planErr != nil && errors.Is(planErr, ErrUnreachable) {
		res.Inference = Inference{Family: Inconclusive, Scope: observation.ScopeUntested, Reason: planErr.Error()}
		return res, planErr
	}
	if planErr != nil && !errors.Is(planErr, context.Canceled) && !errors.Is(planErr, context.DeadlineExceeded) {
		res.Notes = append(res.Notes, planErr.Error())
	}
	res.Inference = inferFrom(obs, po.Fits)
	if closeErr != nil {
		return res, fmt.Errorf("writing %s: %w", opt.ResultsFile, closeErr)
	}
	return res, nil
}

// streamOptions records the budget and the method in the stream header, so a later report
// can say what budget a cut-short phase would have needed.
func streamOptions(opt Options) map[string]string {
	m := map[string]string{"max_requests": strconv.Itoa(opt.MaxRequests), "max_time": opt.MaxTime.String(), "method": opt.bypassBase.Method}
	if opt.adaptive {
		m["max_time_ceiling"] = opt.ceiling().String()
	}
	if opt.Engine.HTTP2 {
		m["http2"] = "true" // the version the bypass trials' other-protocol one did not speak
	}
	return m
}

// FromRecorded rebuilds a probe's observation from a results stream read
// back, with the budget and stop reason the live run recorded, and infers
// again: what `ratecheck report` shows for a probe stream.
func FromRecorded(rec *results.Recorded) *Result {
	obs := observation.New(rec.Header.Start, rec.Results)
	if n, err := strconv.Atoi(rec.Header.Options["max_requests"]); err == nil {
		obs.Budget.MaxRequests = n
	}
	if d, err := time.ParseDuration(rec.Header.Options["max_time"]); err == nil {
		obs.Budget.MaxTime = d
	}
	if d, err := time.ParseDuration(rec.Header.Options["max_time_ceiling"]); err == nil {
		obs.Budget.Ceiling = d
	}
	if u, err := url.Parse(rec.Header.URL); err == nil {
		obs.Bypass = plan.BypassBase(rec.Header.Options["method"], u, rec.Header.Options["http2"] == "true", false, nil)
	}
	res := &Result{Observation: obs}
	switch {
	case rec.End == nil:
		// No end record: the process was stopped before it could write one.
		obs.Stopped = observation.StopInterrupted
		res.Notes = append(res.Notes, "the results stream has no end record: the run was interrupted, and this report covers the requests recorded before that")
	default:
		obs.Stopped = rec.End.Stopped
		res.Notes = append(res.Notes, rec.End.Notes...)
		res.Elapsed = time.Duration(rec.End.Elapsed)
	}
	if rec.Truncated {
		res.Notes = append(res.Notes, "the results stream's last record was cut mid-write and is left out")
	}
	obs.Notes = res.Notes
	res.Inference = Infer(obs)
	return res
}
