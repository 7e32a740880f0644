package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// Endpoint is one target of a check: how to probe it and what it must be.
type Endpoint struct {
	Name, Spec string
	Line       int // in the config file; 0 from the command line
	Probing    Probing
	Expect     []expect.Expectation
}

// Label names the endpoint in messages: its name and spec.
func (e Endpoint) Label() string {
	if e.Name != "" {
		return e.Name + " (" + e.Spec + ")"
	}
	return e.Spec
}

// Endpoints reads the check's --config suite at path (probe/expect) into
// its endpoints: s, the command line's, as defaults under each endpoint's
// own settings, minGrade the default min-grade. Every problem is a
// *RefusedError naming the file, the line and the key.
func Endpoints(path string, s ProbeSpec, minGrade string) ([]Endpoint, error) {
	suite, err := expect.LoadSuite(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, refused(fmt.Errorf("--config: %v", err))
		}
		return nil, refused(err)
	}
	var eps []Endpoint
	for _, se := range suite.Endpoints {
		es := s.Under(se)
		if err := es.Check(); err != nil {
			return nil, refused(fmt.Errorf("%s:%d: %v", path, se.Line, err))
		}
		exps, err := suite.Expectations(se, minGrade)
		if err != nil {
			return nil, refused(err)
		}
		eps = append(eps, Endpoint{Name: se.Name, Spec: se.Target, Line: se.Line, Expect: exps, Probing: es.Probing()})
	}
	return eps, nil
}

// Under is the spec under an endpoint's own settings: each it sets
// replaces the spec's, its headers are added to the spec's.
func (s ProbeSpec) Under(se expect.Endpoint) ProbeSpec {
	s.Method = cmp.Or(se.Method, s.Method)
	s.Body = cmp.Or(se.Body, s.Body)
	s.KeyHeader = cmp.Or(se.KeyHeader, s.KeyHeader)
	s.Timeout = cmp.Or(se.Timeout, s.Timeout)
	s.MaxRequests = cmp.Or(se.MaxRequests, s.MaxRequests)
	s.MaxTime = cmp.Or(se.MaxTime, s.MaxTime)
	if se.Headers != nil {
		s.Headers = slices.Concat(s.Headers, se.Headers)
	}
	return s
}

// Check is a check of several endpoints, each probed in turn and held to
// its expectations.
type Check struct {
	Endpoints []Endpoint
	Config    string   // the file the endpoints were read from; "": the command line
	Paths     []string // each endpoint's results stream
	Targets   launch.Options
	Stderr    io.Writer
	Progress  bool      // draw a progress line on Stderr
	Text      io.Writer // each run's text as it ends; nil: none
	Version   string
}

// CheckBudgets refuses an endpoint whose budget cannot hold the smallest
// probe plan, before anything is started; one from the config file is
// named by its line.
func (c Check) CheckBudgets() error {
	for _, ep := range c.Endpoints {
		err := CheckBudget(ep.Probing.Options)
		if err != nil && ep.Line > 0 {
			return refused(fmt.Errorf("%s:%d: endpoint %s: %v (max_requests:/max_time: in the file, or the flag)", c.Config, ep.Line, ep.Label(), err))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Run starts every target, then probes each endpoint in turn and evaluates
// its expectations: the document of the runs with the check's outcome. A
// target that cannot be tested is a run whose expectations are untested; an
// interrupted check leaves the rest not run. Only a refusal (a target's
// spec or config, a request the user must fix) stops the check.
func (c Check) Run(ctx context.Context) (report.Document, error) {
	doc := report.NewDocument(c.Version, "check", "probe")
	specs := make([]string, len(c.Endpoints))
	for i, ep := range c.Endpoints {
		specs[i] = ep.Spec
	}
	tgts, closeAll, failed, err := launch.OpenAll(ctx, specs, c.Targets)
	defer closeAll()
	if err != nil {
		err = targetErr(err)
		if ep := c.Endpoints[failed]; Refused(err) && ep.Line > 0 {
			err = refused(fmt.Errorf("%s:%d: target %q: %v", c.Config, ep.Line, ep.Spec, err))
		}
		return doc, err
	}
	for i, ep := range c.Endpoints {
		if ctx.Err() != nil {
			doc.Runs = append(doc.Runs, report.Run{Target: ep.Spec, Name: ep.Name, Kind: "probe", Profile: "probe", Error: "not run: interrupted", Outcome: expect.Untested})
			continue
		}
		if len(c.Endpoints) > 1 {
			fmt.Fprintf(c.Stderr, "check: %s (%d of %d)\n", ep.Label(), i+1, len(c.Endpoints))
		}
		run, err := c.probe(ctx, ep, tgts[i], c.Paths[i])
		if err != nil {
			return doc, err
		}
		doc.Runs = append(doc.Runs, run)
		if c.Text != nil {
			report.CheckRun(c.Text, &run)
		}
	}
	doc.Outcome = Outcome(doc.Runs, ctx.Err() != nil)
	return doc, nil
}

// probe probes one endpoint and stops its target: its run with the
// expectations evaluated, or a refusal.
func (c Check) probe(ctx context.Context, ep Endpoint, tgt *launch.Target, path string) (report.Run, error) {
	p := ep.Probing
	p.Command, p.Stderr, p.Progress = "check", c.Stderr, c.Progress
	p.Options.Stated, _ = expect.StatedBy(ep.Expect) // a burst that exceeds one ends the probe
	g, err := Probe(ctx, tgt, path, p)
	if cerr := tgt.Close(); cerr != nil {
		fmt.Fprintf(c.Stderr, "ratecheck: stopping %s: %v\n", ep.Spec, cerr)
	}
	var run report.Run
	switch {
	case Refused(err):
		return run, err
	case err != nil:
		run = report.FailedProbeRun(ep.Spec, path, err)
		run.Expectations, run.Outcome = expect.OfRun(ep.Expect, nil, nil, err)
	default:
		run = g.Run()
		run.Expectations, run.Outcome = expect.OfRun(ep.Expect, g.Res, g.Grade, nil)
	}
	run.Name = ep.Name
	return run, nil
}

// Outcome is the overall outcome of a check's runs (expect.OfCheck).
func Outcome(runs []report.Run, interrupted bool) string {
	verdicts := make([]string, len(runs))
	for i, r := range runs {
		verdicts[i] = r.Outcome
	}
	return expect.OfCheck(verdicts, interrupted)
}

// Verdict is a check's end, from its document: a *FailedError naming
// every expectation that does not hold (even a cut-short run fails what
// its data refutes), an *UntestedError when it was interrupted or an
// expectation could not be tested, nil when every one holds.
func Verdict(doc report.Document, interrupted bool) error {
	t := tallyOf(doc)
	switch {
	case len(t.failed) > 0:
		return &FailedError{fmt.Errorf("check failed: %d of %d expectations do not hold: %s", len(t.failed), t.total, strings.Join(t.failed, "; "))}
	case interrupted:
		// A cut-short probe may get anything else wrong: no verdict.
		return untested(errors.New("interrupted: the run was cut short, so no expectation was tested"))
	case doc.Outcome != expect.Pass:
		return untested(fmt.Errorf("check could not test %d of %d expectations: %s", len(t.untested), t.total, strings.Join(t.untested, "; ")))
	}
	return nil
}

// tally is what a document's expectations came to: the failed and the
// untested, each labelled with its run when there are several.
type tally struct {
	failed, untested []string
	total            int
}

func tallyOf(doc report.Document) tally {
	var t tally
	for _, r := range doc.Runs {
		for _, o := range r.Expectations {
			t.total++
			label := o.Message()
			if len(doc.Runs) > 1 {
				who := r.Target
				if r.Name != "" {
					who = r.Name
				}
				label = who + ": " + label
			}
			switch o.Result {
			case expect.Fail:
				t.failed = append(t.failed, label)
			case expect.Untested:
				t.untested = append(t.untested, label)
			}
		}
	}
	return t
}
