package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// Request builds a run's request for its target's URL, known once the
// target is open (attack.NewRequest with the user's method, headers, body).
type Request func(url string) (*attack.Request, error)

// Graded is one probe carried out against a target and graded: what
// 'probe' does, and what check and compare --probe do for each target.
type Graded struct {
	Spec, URL string
	Res       *probe.Result
	Grade     *grade.Report // nil when the target did not answer
}

// Run is the graded probe as the report's run.
func (g *Graded) Run() report.Run { return report.ProbeRun(g.Spec, g.URL, g.Res, g.Grade) }

// Document is probe's document of the graded probe, for its report files.
func (g *Graded) Document(version string) report.Document {
	return report.NewDocument(version, "probe", "probe", g.Run())
}

// Untested is what the probe could not test, though it ran: it was
// interrupted, or its inference is inconclusive (an *UntestedError); nil
// when it named a model.
func (g *Graded) Untested() error {
	switch inf := g.Res.Inference; {
	case g.Res.Observation.Stopped != "":
		return untested(errors.New("probe interrupted: " + inf.Reason))
	case inf.Family == probe.Inconclusive:
		return untested(errors.New(inf.Summary()))
	}
	return nil
}

// Probing is how to probe a target: its request, and the probe's options
// (budget, engine, bypass, stated capacities) but for what Probe fills in
// — the results stream, the target, the command, the progress line.
type Probing struct {
	Request Request
	Options probe.Options
	Command string
	// Stderr is told where the results stream is, and a probe's error
	// that did not stop it.
	Stderr io.Writer
	// Progress draws a progress line on Stderr while the probe runs.
	Progress bool
}

// ProbeSpec is how a command line says to probe: the request and the
// engine's options, the probe's time budget (0: its own, which grows with
// the limit) and whether to skip the bypass suite. The probe's time
// budget is the engine's: messages name Options.MaxDuration as Names
// names "ProbeSpec.MaxTime".
type ProbeSpec struct {
	attack.RequestSpec
	MaxTime  time.Duration
	NoBypass bool
}

// Probing is how the spec says to probe a target.
func (s ProbeSpec) Probing() Probing {
	eo := s.Options()
	eo.Names = func(field string) string {
		if field == "Options.MaxDuration" {
			field = "ProbeSpec.MaxTime"
		}
		if s.Names == nil {
			return ""
		}
		return s.Names(field)
	}
	return Probing{Request: s.Request, Options: probe.Options{MaxTime: s.MaxTime, MaxRequests: s.MaxRequests,
		ScopeKey: s.KeyHeader != "", Engine: eo, NoBypass: s.NoBypass, BypassMethods: s.Methods}}
}

// CheckBudget refuses a budget that cannot hold the smallest probe plan,
// before anything is started or sent, naming the flag to raise.
func CheckBudget(o probe.Options) error {
	return budgetErr(o.Validate(), o.Engine)
}

func budgetErr(err error, o attack.Options) error {
	var be *probe.BudgetError
	if !errors.As(err, &be) {
		return err
	}
	flag, need := name(o, "Options.MaxRequests"), be.Need
	if be.What == "time" {
		flag = name(o, "Options.MaxDuration") // the probe's time budget is the engine's
	} else {
		need += " requests"
	}
	return refused(fmt.Errorf("%s %s is too small: the smallest probe plan needs at least %s; raise %s", flag, be.Have, need, flag))
}

// Probe runs probe.Run against an opened target — results streamed at
// path — and grades it. A target that did not answer is an
// *UntestedError, with the run (inference inconclusive, not graded) for
// the commands that still show it; a request, budget or stream the user
// must fix, or a quota too costly to measure, is a *RefusedError.
func Probe(ctx context.Context, tgt *launch.Target, path string, p Probing) (*Graded, error) {
	req, err := p.Request(tgt.URL)
	if err != nil {
		return nil, refused(err)
	}
	opt := p.Options
	opt.ResultsFile, opt.Command, opt.Target = path, p.Command, tgt.Spec
	prog := report.NewProgress(p.Stderr, p.Progress, progressBudget(opt.MaxTime))
	defer prog.Stop()
	if p.Progress {
		opt.Sinks, opt.OnBudget = []func(*results.Result){prog.Add}, prog.SetBudget
	}
	p.Stderr = prog.Writer()  // a message clears the line first
	opt.Network = tgt.Network // nil: real sockets
	res, err := probe.Run(ctx, req, opt)
	var costly *probe.QuotaCostError
	if errors.As(err, &costly) {
		// Refused after the calibration: its requests are in the stream.
		fmt.Fprintf(p.Stderr, "results: %s\n", path)
		return nil, refused(err)
	}
	if res == nil {
		if err = budgetErr(err, opt.Engine); err != nil && !Refused(err) {
			err = refused(fmt.Errorf("%v (choose another place with %s)", err, name(opt.Engine, "RunOptions.Out")))
		}
		return nil, err
	}
	fmt.Fprintf(p.Stderr, "results: %s\n", path)
	if tgt.Network == nil { // a simulated server has no port to try TLS on
		err = res.WithHTTPSHint(tgt.URL, err)
	}
	if errors.Is(err, probe.ErrUnreachable) {
		return &Graded{Spec: tgt.Spec, URL: tgt.URL, Res: res}, untested(fmt.Errorf("%s: %w", tgt.Spec, err))
	}
	if err != nil {
		fmt.Fprintf(p.Stderr, "ratecheck: %v\n", err)
	}
	return &Graded{Spec: tgt.Spec, URL: tgt.URL, Res: res, Grade: grade.OfProbe(res)}, nil
}

// progressBudget is the time budget a probe's progress line counts down
// from: the probe's starting one when none was given.
func progressBudget(maxTime time.Duration) time.Duration {
	if maxTime <= 0 {
		return probe.DefaultMaxTime
	}
	return maxTime
}
