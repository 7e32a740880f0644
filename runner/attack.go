package runner

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
)

// Attacking is an attack profile run against one target: what 'attack'
// does.
type Attacking struct {
	Profile attack.Profile
	Request Request
	// Run is the run's options: engine, results stream, header, shard and
	// start; Attack fills in the request, the progress line's sink and the
	// header's host (this machine, which a merged shard is shown with).
	Run    attack.RunOptions
	Stderr io.Writer // told where the results stream is
	// Progress draws a progress line on Stderr while the run lasts.
	Progress bool
}

// Attack runs the profile against an opened target. Nothing sent (a
// request, an option or a stream the user must fix) is a *RefusedError; a
// profile that could not finish its experiment an *UntestedError, with the
// partial result. Otherwise the error is attack.Run's, with the https://
// hint: it wraps attack.ErrUntested when the run tested nothing.
func Attack(ctx context.Context, tgt *launch.Target, a Attacking) (*attack.RunResult, error) {
	req, err := a.Request(tgt.URL)
	if err != nil {
		return nil, refused(err)
	}
	ro := a.Run
	prog := report.NewProgress(a.Stderr, a.Progress, ro.MaxDuration)
	ro.Request, ro.Sinks = req, append(ro.Sinks, prog.Add)
	if ro.Header.Host == "" {
		ro.Header.Host, _ = os.Hostname() // "" if unknown
	}
	res, err := attack.Run(ctx, a.Profile, ro)
	prog.Stop()
	if res == nil { // nothing was sent: the flags or --out are at fault
		return nil, runConfigErr(err, ro.Options)
	}
	if res.StreamErr != nil {
		fmt.Fprintf(a.Stderr, "ratecheck: writing %s: %v\n", ro.Out, res.StreamErr)
	}
	fmt.Fprintf(a.Stderr, "results: %s\n", ro.Out)
	err = res.WithHTTPSHint(tgt.URL, err)
	if !res.Concluded {
		// The profile could not finish its experiment. Partial data is
		// kept; say what was measured before failing.
		return res, untested(fmt.Errorf("%w (%d requests recorded in %s)", err, res.Summary.Requests, ro.Out))
	}
	return res, err
}

// AttackErr is the end of an attack that concluded, as Attack returned it
// (res, err): an *UntestedError when it tested nothing (err says why) or a
// signal cut it short (its figures cover only what was sent before); nil
// otherwise.
func AttackErr(res *attack.RunResult, err error) error {
	switch {
	case res.Untested != "":
		return untested(err)
	case res.Stopped == attack.StopInterrupted:
		return untested(fmt.Errorf("interrupted after %.2f s: the figures cover only what was sent before", res.Elapsed.Seconds()))
	}
	return nil
}

// Attacked is an attack's run as its -o json document.
type Attacked struct {
	results.Report
	Target   string            `json:"target"`
	Results  string            `json:"results_file"`
	ElapsedS float64           `json:"elapsed_s"`
	Stopped  attack.StopReason `json:"stopped,omitempty"`  // why the run was cut short
	Untested string            `json:"untested,omitempty"` // why the target could not be tested
	CPU      attack.CPUUsage   `json:"cpu"`                // ratecheck's own CPU over the run
}

// AttackedOf is res, run against spec and streamed at path, as its
// document.
func AttackedOf(spec, path string, res *attack.RunResult) Attacked {
	return Attacked{res.Report, spec, path, res.Elapsed.Seconds(), res.Stopped, res.Untested, res.CPU}
}

// Document is the attack's run as the report files' document: the
// profile's verdict and figures from the live run, every request from its
// results stream.
func (a Attacked) Document(version string) report.Document {
	return report.NewDocument(version, "attack", a.Profile, report.AttackRunFromFile(a.Target, a.Results, a.Report))
}
