package cmd

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/runner"
)

type checkFlags struct {
	requestFlags
	expects  []string
	minGrade string
	config   string
}

func newCheckCmd() *cobra.Command {
	var f checkFlags
	c := &cobra.Command{
		Use:   "check TARGET --expect KEY=VALUE... | check --config FILE",
		Short: "Probe a limiter and fail unless it is what you expect (a CI gate)",
		Long: `check probes TARGET exactly as 'probe' does, then compares what it found with
your expectations. Exit 0 when every expectation holds, 1 when any does not
(each printed with expected and actual), 2 for a usage or config error,
3 when the target could not be tested (unreachable, inconclusive, or an
expectation the run could not exercise — a check that ran no experiment never
passes).

Expectations (--expect, repeatable):
  family=token_bucket        fixed_window, sliding_log, sliding_counter,
                             token_bucket, leaky_shaping, concurrency, none
  rate=10/s±10%              sustained rate (default tolerance ±10%; a window
                             family's rate is limit/window); also +- or +/-
  burst=20±2                 bucket capacity / nginx queue (exact by default)
  limit=100                  a window family's L (or a concurrency cap)
  window=60s                 a window family's W (default tolerance ±10%)
  max-inflight=10            a concurrency cap
  status=429                 every rejection has this status (429,503: either)
  retry-after=present        Retry-After on every rejection (or absent)
  scope=per_ip               per_key, per_ip, per_connection or global
  min-grade=B                the response-contract grade (also --min-grade)
  bypass=none                no bypass trial got around the limit
A value matches when it lies within the tolerance of the expected value,
allowing for the probe's own ± uncertainty.

--config FILE checks several endpoints: a YAML file (see README "ratecheck
check"). Unknown keys are errors naming the key and its line.`,
		Example: `  ratecheck check 'builtin:token_bucket?rate=10/s&burst=20' --expect family=token_bucket --expect 'rate=10/s±10%'
  ratecheck check http://127.0.0.1:8080/ --expect family=fixed_window --expect limit=100 --expect window=60s --min-grade B
  ratecheck check --config ratecheck.yaml --html report.html --junit junit.xml`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("check takes one TARGET (got %d); to check several, list them in --config FILE", len(args))
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runCheck(c, &f, args) },
	}
	f.registerProbe(c, "each probe")
	fs := c.Flags()
	fs.StringArrayVarP(&f.expects, "expect", "e", nil, "expectation KEY=VALUE (repeatable), e.g. family=token_bucket, rate=10/s±10%")
	fs.StringVar(&f.minGrade, "min-grade", "", "fail unless the response-contract grade is at least this letter (A+, A, B, C, D)")
	fs.StringVar(&f.config, "config", "", "YAML file listing endpoints and their expectations")
	registerOutputFlags(c)
	fs.Lookup("out").Usage = "results stream; with several endpoints a PREFIX (PREFIX-1.jsonl, ...) or a DIR/ (default ratecheck-check-TIME[-N].jsonl)"
	return c
}

func runCheck(c *cobra.Command, f *checkFlags, args []string) error {
	if err := f.validateProbe(c); err != nil {
		return err
	}
	eps, err := f.endpoints(args)
	if err != nil {
		return err
	}
	stderr := c.ErrOrStderr()
	chk := runner.Check{Endpoints: eps, Config: f.config, Targets: f.targetOptions(c), Stderr: stderr,
		Progress: progressEnabled(stderr, f.quiet), Version: version}
	if err := chk.CheckBudgets(); err != nil {
		return exitOf(err)
	}
	if chk.Paths, err = outfiles.StreamPaths(outfiles.Base("check", time.Now()), f.out, len(eps)); err != nil {
		return usageErr("--out: %v", err)
	}
	if err := guardStreams(c, chk.Paths); err != nil {
		return err
	}
	if f.output == "text" {
		chk.Text = c.OutOrStdout()
	}
	ctx, stop := interruptible(c)
	defer stop()
	doc, err := chk.Run(ctx)
	if err != nil {
		return exitOf(err)
	}
	if f.output == "json" {
		if err := report.WriteJSON(c.OutOrStdout(), doc); err != nil {
			return err
		}
	}
	if err := writeOutputs(c, func(string) report.Document { return doc }); err != nil {
		return err
	}
	return exitOf(runner.Verdict(doc, ctx.Err() != nil))
}

// endpoints are what the check probes: a TARGET with --expect and
// --min-grade, or the endpoints of --config.
func (f *checkFlags) endpoints(args []string) ([]runner.Endpoint, error) {
	switch {
	case f.config != "" && len(args) > 0:
		return nil, usageErr("give either a TARGET with --expect or --config FILE, not both")
	case f.config != "" && len(f.expects) > 0:
		return nil, usageErr("--expect goes with a TARGET; in --config, list expectations under each endpoint's expect:")
	case f.config != "":
		eps, err := runner.Endpoints(f.config, f.ProbeSpec, f.minGrade)
		return eps, exitOf(err)
	case len(args) == 0:
		return nil, usageErr("check needs a TARGET with --expect KEY=VALUE, or --config FILE; see 'ratecheck check --help'")
	}
	exps, err := expect.ParseAll(f.expects)
	if err != nil {
		return nil, usageErr("--expect: %v", err)
	}
	if f.minGrade != "" {
		e, err := expect.ParseKV(expect.KeyMinGrade, f.minGrade)
		if err != nil {
			return nil, usageErr("--min-grade: %v", err)
		}
		exps = append(exps, e)
	}
	if len(exps) == 0 {
		return nil, usageErr("check needs at least one --expect KEY=VALUE or --min-grade (see 'ratecheck check --help')")
	}
	return []runner.Endpoint{{Spec: args[0], Probing: f.Probing(), Expect: exps}}, nil
}

// progressEnabled says whether to draw the progress line: stderr is a
// terminal and not --quiet.
func progressEnabled(stderr io.Writer, quiet bool) bool {
	return !quiet && report.OnTerminal(stderr)
}
