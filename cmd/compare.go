package cmd

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/runner"
	"github.com/ratecheck/ratecheck/targets/launch"
)

type compareFlags struct {
	attackFlags
	probe   bool
	between time.Duration
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
	registerOutputFlags(c)
	fs := c.Flags()
	fs.Lookup("out").Usage = "results streams: a PREFIX (writes PREFIX-1.jsonl, PREFIX-2.jsonl, ...) or a DIR/ (default ratecheck-compare-TIME-N.jsonl)"
	fs.BoolVar(&f.probe, "probe", false, "run the inference experiment instead of a profile: compare inferred families and parameters")
	fs.DurationVar(&f.between, "between", compareBetween, "idle before each http(s) URL target after the first (nginx: and builtin: targets start fresh)")
	fs.DurationVar(&f.MaxTime, flagMaxTime, 0, "--probe: time budget of each target's experiment (default 1m, grown to what a long window needs, up to 5m)")
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
	run, err := f.comparison(c, specs)
	if err != nil {
		return err
	}
	if f.between < 0 {
		return usageErr("--between must be ≥ 0")
	}
	if run.Paths, err = outfiles.StreamPaths(outfiles.Base("compare", time.Now()), f.out, len(specs)); err != nil {
		return usageErr("--out: %v", err)
	}
	if err := guardStreams(c, run.Paths); err != nil {
		return err
	}
	ctx, stop := interruptible(c)
	defer stop()
	out, err := run.Run(ctx)
	if err != nil {
		return exitOf(err)
	}
	w := c.OutOrStdout()
	if f.output == "json" {
		if err := printJSON(w, out.Comparison); err != nil {
			return err
		}
	} else if err := report.CompareText(w, out.Comparison); err != nil {
		return err
	}
	if err := writeOutputs(c, out.Document); err != nil {
		return err
	}
	return exitOf(out.Err())
}

// comparison is the experiment the flags describe, against specs: the
// probe (--probe) with its budget checked, or the attack profile.
func (f *compareFlags) comparison(c *cobra.Command, specs []string) (runner.Compare, error) {
	run := runner.Compare{Specs: specs, Between: f.between, Targets: f.targetOptions(c), Stderr: c.ErrOrStderr(),
		Request: f.Request, Engine: f.options(), Flags: map[string]string{}, TailPlan: report.TailPlan(f.profile.TailRate, f.profile.Burst.Tail)}
	if f.probe {
		if c.Flags().Changed("profile") {
			return run, usageErr("--profile and --probe are alternatives: compare runs one experiment")
		}
		if err := checkMaxTime(c, f.MaxTime); err != nil {
			return run, err
		}
		if !c.Flags().Changed("max-requests") {
			f.MaxRequests = probe.DefaultMaxRequests // a probe's own budget, as 'probe' has
		}
		p := f.Probing()
		run.Probing = &p
		return run, exitOf(runner.CheckBudget(p.Options))
	}
	prof, err := f.buildProfile()
	if err != nil {
		return run, err
	}
	if err := launch.RefuseSimulated(specs...); err != nil {
		return run, usageErr("%v", err)
	}
	c.Flags().Visit(func(fl *pflag.Flag) { run.Flags[fl.Name] = fl.Value.String() })
	run.Profile = prof
	return run, nil
}
