package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/launch"
)

type compareFlags struct {
	attackFlags
	probe   bool
	between time.Duration
	maxTime time.Duration
}

// Compare's defaults: a burst small enough to run in a few seconds per
// target, with a recovery tail so the sustained rate shows.
const (
	compareBurst   = 20
	compareIdle    = time.Second
	compareTail    = 3 * time.Second
	compareBetween = 2 * time.Second
)

func newCompareCmd() *cobra.Command {
	var f compareFlags
	c := &cobra.Command{
		Use:   "compare [--profile P | --probe] TARGET TARGET...",
		Short: "Run the same experiment against several targets and show the results side by side",
		Long: `compare runs one experiment — an attack profile (default: a burst of 20 after
1 s idle, then a 3 s recovery tail at 20/s), or with --probe the inference
experiment — against each TARGET in turn, and prints a table with one column
per target: admitted in the burst, delayed (count and added latency), rejected,
the rejection status seen, the sustained admitted rate; with --probe the
inferred family and parameters.

Every target is started before the first request, so a bad nginx config is
reported before anything is sent; then each runs alone, in turn (an nginx is
stopped when its turn is over). nginx: and builtin: targets are fresh for their
turn; before each http(s) URL target after the first, compare idles --between
so that the previous experiment's load has drained. Budget flags
(--max-requests, --max-duration) apply to each target; with --probe,
--max-requests defaults to the probe's 2,000 and --max-time bounds each run.

Each target's results stream goes to its own file: --out PREFIX writes
PREFIX-1.jsonl, PREFIX-2.jsonl, ...; --out DIR/ writes
DIR/ratecheck-compare-TIME-N.jsonl (the default, in the current directory).`,
		Example: `  ratecheck compare nginx:limits.conf nginx:limits-nodelay.conf
  ratecheck compare --profile burst --burst 50 --idle 2s nginx:a.conf 'builtin:token_bucket?rate=10/s&burst=6'
  ratecheck compare --probe -o json nginx:limits.conf http://127.0.0.1:8080/ > compare.json
  ratecheck compare --profile storm --clients 20 --out runs/ http://127.0.0.1:8080/a http://127.0.0.1:8080/b`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErr("compare needs at least two TARGETs (URL, builtin:... or nginx:PATH; got %d); see '%s --help'", len(args), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runCompare(c, &f, args) },
	}
	f.register(c)
	f.registerBypass(c)
	registerTargetFlags(c)
	registerOutputFlags(c)
	fs := c.Flags()
	fs.Lookup("out").Usage = "results streams: a PREFIX (writes PREFIX-1.jsonl, PREFIX-2.jsonl, ...) or a DIR/ (default ratecheck-compare-TIME-N.jsonl)"
	fs.BoolVar(&f.probe, "probe", false, "run the inference experiment instead of a profile: compare inferred families and parameters")
	fs.DurationVar(&f.between, "between", compareBetween, "idle before each http(s) URL target after the first (nginx: and builtin: targets start fresh)")
	fs.DurationVar(&f.maxTime, flagMaxTime, 0, "--probe: time budget of each target's experiment (default 1m, grown to what a long window needs, up to 5m)")
	f.registerProfileFlags(c, profileDefaults{profile: "burst", burst: compareBurst, idle: compareIdle, tail: compareTail})
	return c
}

func runCompare(c *cobra.Command, f *compareFlags, specs []string) error {
	if err := oneTimeBudget(c, f.probe); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	var prof attack.Profile
	keep := true
	experiment := "probe"
	if f.probe {
		if c.Flags().Changed("profile") {
			return usageErr("--profile and --probe are alternatives: compare runs one experiment")
		}
		if err := checkMaxTime(c, f.maxTime); err != nil {
			return err
		}
		if !c.Flags().Changed("max-requests") {
			f.maxRequests = probe.DefaultMaxRequests // a probe's own budget, as 'probe' has
		}
		if err := checkProbeBudget(&f.requestFlags, f.maxTime); err != nil {
			return err
		}
	} else {
		var err error
		if prof, keep, err = f.buildProfile(); err != nil {
			return err
		}
		if !slices.Contains(attack.ProfileNames(), prof.Name()) {
			return usageErr("unknown profile %q", prof.Name())
		}
		experiment = prof.Name()
		if err := refuseSimulated("compare", specs...); err != nil {
			return err
		}
	}
	if f.between < 0 {
		return usageErr("--between must be ≥ 0")
	}
	paths, err := outfiles.StreamPaths(outfiles.Base("compare", time.Now()), f.out, len(specs))
	if err != nil {
		return usageErr("--out: %v", err)
	}
	if err := guardStreams(c, paths); err != nil {
		return err
	}
	ctx, stop := interruptible(c)
	defer stop()
	stderr := c.ErrOrStderr()

	// Start every target before sending anything: a bad config or a missing
	// nginx stops the comparison before it spends minutes on the others.
	// Idle targets cost nothing, and none sees traffic before its turn.
	tgts, closeAll, err := openTargets(ctx, c, specs, nil)
	defer closeAll()
	if err != nil {
		return err
	}

	opts := map[string]string{}
	c.Flags().Visit(func(fl *pflag.Flag) { opts[fl.Name] = fl.Value.String() })
	out := report.Comparison{Experiment: experiment, Targets: make([]report.ComparedTarget, len(specs)), TailPlan: f.tailPlan()}
	untested, inconclusive := 0, 0
	for i, t := range tgts {
		ct := &out.Targets[i]
		ct.Target = specs[i]
		if ctx.Err() != nil {
			ct.Error = "not run: interrupted"
			untested++
			continue
		}
		if i > 0 && !t.Fresh() && f.between > 0 {
			fmt.Fprintf(stderr, "compare: idling %s before %s\n", f.between, t.Spec)
			sleepCtx(ctx, f.between)
			if ctx.Err() != nil {
				ct.Error = "not run: interrupted"
				untested++
				continue
			}
		}
		fmt.Fprintf(stderr, "compare: %s against %s (%d of %d)\n", experiment, t.Spec, i+1, len(tgts))
		if f.probe {
			err = compareProbe(ctx, f, t, paths[i], ct)
		} else {
			err = compareProfile(ctx, f, prof, keep, t, paths[i], opts, ct)
		}
		// The next target runs alone: stop this one now.
		if cerr := t.Close(); cerr != nil {
			fmt.Fprintf(stderr, "ratecheck: stopping %s: %v\n", t.Spec, cerr)
		}
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.code == ExitUsage {
				return err
			}
			ct.Error = err.Error()
		}
		if ct.Results != "" {
			fmt.Fprintf(stderr, "results: %s\n", ct.Results)
		}
		switch {
		case ct.Error != "":
			untested++
		case ct.Inference != nil && ct.Inference.Family == probe.Inconclusive:
			inconclusive++
		}
	}

	out.Interrupted = ctx.Err() != nil
	w := c.OutOrStdout()
	if f.output == "json" {
		if err := printJSON(w, out); err != nil {
			return err
		}
	} else if err := report.CompareText(w, out); err != nil {
		return err
	}
	if outputFilesOf(c).Any() {
		if err := writeOutputs(c, out.Document(version)); err != nil {
			return err
		}
	}
	// Exit 3 as attack and probe would for the target alone: a run that
	// failed, or (probe) an inference that found no model.
	switch {
	case ctx.Err() != nil:
		return exitWith(ExitUntested, fmt.Errorf("interrupted: the results are partial, %d of %d targets not run", untested, len(specs)))
	case untested > 0 && inconclusive > 0:
		return exitWith(ExitUntested, fmt.Errorf("%d of %d targets could not be tested and %d were inconclusive (see the table)", untested, len(specs), inconclusive))
	case untested > 0:
		return exitWith(ExitUntested, fmt.Errorf("%d of %d targets could not be tested (see the table)", untested, len(specs)))
	case inconclusive > 0:
		return exitWith(ExitUntested, fmt.Errorf("the inference was inconclusive for %d of %d targets (see the table)", inconclusive, len(specs)))
	}
	return nil
}

// compareProfile runs the attack profile against one target, as attack does.
func compareProfile(ctx context.Context, f *compareFlags, prof attack.Profile, keep bool, t *launch.Target, path string, opts map[string]string, ct *report.ComparedTarget) error {
	req, err := f.request(t.URL)
	if err != nil {
		return err
	}
	res, err := attack.Run(ctx, prof, attack.RunOptions{Options: f.options(), Request: req, Out: path, KeepResults: true,
		Header: results.StreamHeader{Command: "compare", Target: t.Spec, Options: opts}})
	if res == nil { // nothing was sent: the flags or --out are at fault
		return runConfigErr(err)
	}
	*ct = report.ComparedAttack(t.Spec, t.URL, prof.Name(), path, res, grade.OfAttack(res.Start, res.Results, res.Stopped))
	if !res.Concluded || res.Untested != "" {
		return fmt.Errorf("%w (%d requests recorded in %s)", err, res.Summary.Requests, path)
	}
	return nil
}

// compareProbe runs the inference experiment against one target, as probe
// does.
func compareProbe(ctx context.Context, f *compareFlags, t *launch.Target, path string, ct *report.ComparedTarget) error {
	ct.Results = path
	run, err := execProbe(ctx, io.Discard, &f.requestFlags, f.maxTime, "compare", t, path, nil, nil)
	if err != nil {
		return err
	}
	*ct = report.ComparedProbe(t.Spec, run.URL, path, run.Res, run.Grade)
	return nil
}

// tailPlan labels a burst's sustained-rate row in the table.
func (f *compareFlags) tailPlan() string {
	return fmt.Sprintf("tail at %s for %s", f.tailRate, f.tail)
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
