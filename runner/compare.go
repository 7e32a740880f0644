package runner

import (
	"context"
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

// Compare is one experiment run against several targets in turn: an attack
// profile, or with Probing set the probe.
type Compare struct {
	Specs []string
	Paths []string // each target's results stream
	// The profile's run: its request and engine options, the flags to
	// record in each stream's header. TailPlan labels a burst's tail.
	Profile  attack.Profile
	Request  Request
	Engine   attack.Options
	Flags    map[string]string
	TailPlan string
	// Probing, when set, probes each target instead (compare --probe).
	Probing *Probing
	// Between is the idle before each target after the first that is not
	// fresh (a URL that the previous experiment's load may still hold).
	Between time.Duration
	Targets launch.Options
	Stderr  io.Writer
}

// Compared is the comparison, with how many targets could not be tested
// and how many probes were inconclusive.
type Compared struct {
	report.Comparison
	Untested, Inconclusive int
}

// Err is an *UntestedError, as attack and probe would end for each target
// alone, when a target's run failed or (probe) its inference found no
// model, or the comparison was interrupted; nil when each was tested.
func (c Compared) Err() error {
	n := len(c.Targets)
	switch {
	case c.Interrupted:
		return untested(fmt.Errorf("interrupted: the results are partial, %d of %d targets not run", c.Untested, n))
	case c.Untested > 0 && c.Inconclusive > 0:
		return untested(fmt.Errorf("%d of %d targets could not be tested and %d were inconclusive (see the table)", c.Untested, n, c.Inconclusive))
	case c.Untested > 0:
		return untested(fmt.Errorf("%d of %d targets could not be tested (see the table)", c.Untested, n))
	case c.Inconclusive > 0:
		return untested(fmt.Errorf("the inference was inconclusive for %d of %d targets (see the table)", c.Inconclusive, n))
	}
	return nil
}

// Run starts every target, then runs the experiment against each alone,
// stopping it when its turn is over. A target that cannot be tested keeps
// its error in its entry; an interrupted comparison leaves the rest not
// run. Only a refusal (a spec, a config or a request the user must fix)
// stops the comparison.
func (c Compare) Run(ctx context.Context) (Compared, error) {
	experiment := "probe"
	if c.Probing == nil {
		experiment = c.Profile.Name()
	}
	out := Compared{Comparison: report.Comparison{Experiment: experiment, Targets: make([]report.ComparedTarget, len(c.Specs)), TailPlan: c.TailPlan}}
	tgts, closeAll, _, err := launch.OpenAll(ctx, c.Specs, c.Targets)
	defer closeAll()
	if err != nil {
		return out, targetErr(err)
	}
	for i, t := range tgts {
		ct := &out.Targets[i]
		ct.Target = c.Specs[i]
		if i > 0 && !t.Fresh() && c.Between > 0 && ctx.Err() == nil {
			fmt.Fprintf(c.Stderr, "compare: idling %s before %s\n", c.Between, t.Spec)
			sleep(ctx, c.Between)
		}
		if ctx.Err() != nil {
			ct.Error = "not run: interrupted"
			out.Untested++
			continue
		}
		fmt.Fprintf(c.Stderr, "compare: %s against %s (%d of %d)\n", experiment, t.Spec, i+1, len(tgts))
		if c.Probing != nil {
			err = c.probe(ctx, t, c.Paths[i], ct)
		} else {
			err = c.attack(ctx, t, c.Paths[i], ct)
		}
		// The next target runs alone: stop this one now.
		if cerr := t.Close(); cerr != nil {
			fmt.Fprintf(c.Stderr, "ratecheck: stopping %s: %v\n", t.Spec, cerr)
		}
		if Refused(err) {
			return out, err
		}
		if err != nil {
			ct.Error = err.Error()
		}
		if ct.Results != "" {
			fmt.Fprintf(c.Stderr, "results: %s\n", ct.Results)
		}
		switch {
		case ct.Error != "":
			out.Untested++
		case ct.Inference != nil && ct.Inference.Family == probe.Inconclusive:
			out.Inconclusive++
		}
	}
	out.Interrupted = ctx.Err() != nil
	return out, nil
}

// attack runs the profile against one target, as 'attack' does.
func (c Compare) attack(ctx context.Context, t *launch.Target, path string, ct *report.ComparedTarget) error {
	req, err := c.Request(t.URL)
	if err != nil {
		return refused(err)
	}
	res, err := attack.Run(ctx, c.Profile, attack.RunOptions{Options: c.Engine, Request: req, Out: path, KeepResults: true,
		Header: results.StreamHeader{Command: "compare", Target: t.Spec, Options: c.Flags}})
	if res == nil { // nothing was sent: the flags or --out are at fault
		return runConfigErr(err, c.Engine)
	}
	*ct = comparedAttack(t.Spec, t.URL, c.Profile.Name(), path, res, grade.OfAttack(res.Start, res.Results, string(res.Stopped)))
	if !res.Concluded || res.Untested != "" {
		return fmt.Errorf("%w (%d requests recorded in %s)", err, res.Summary.Requests, path)
	}
	return nil
}

// probe runs the probe against one target, as 'probe' does.
func (c Compare) probe(ctx context.Context, t *launch.Target, path string, ct *report.ComparedTarget) error {
	ct.Results = path
	p := *c.Probing
	p.Command, p.Stderr = "compare", io.Discard
	g, err := Probe(ctx, t, path, p)
	if err != nil {
		return err
	}
	*ct = report.ComparedProbe(t.Spec, g.URL, path, g.Res, g.Grade)
	return nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// comparedAttack is a target's entry from an attack profile's run, res,
// streamed at path, and its grade g (nil for a cut-short run, which then
// says why it stopped). A run that could not test the target keeps its
// figures and notes only, and its run says why; g is not shown.
func comparedAttack(spec, url, profile, path string, res *attack.RunResult, g *grade.Report) report.ComparedTarget {
	notes := res.Report.Notes
	if res.StreamErr != nil {
		notes = append(notes, fmt.Sprintf("writing %s: %v", path, res.StreamErr))
	}
	ct := report.ComparedTarget{Target: spec, Results: path, Requests: res.Summary.Requests, ElapsedS: res.Elapsed.Seconds(), Statuses: res.Summary.Statuses}
	rs := make([]results.Result, len(res.Results))
	for i, r := range res.Results {
		rs[i] = *r
	}
	rep := res.Report
	rep.Notes = notes
	run := report.AttackRun(spec, url, profile, res.Start, rs, &rep, res.Elapsed.Seconds(), notes)
	run.ResultsFile, run.Stopped, run.Complete = path, string(res.Stopped), res.Stopped == ""
	ct.Run = &run
	if !res.Concluded || res.Untested != "" {
		ct.Notes = notes
		run.Error = res.Untested
		return ct
	}
	ct.Report = &rep
	ct.Grade, run.Grade = g, g
	if g == nil {
		ct.Stopped = string(res.Stopped)
	}
	return ct
}
