package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
)

type checkFlags struct {
	requestFlags
	maxTime  time.Duration
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
	f.register(c)
	f.registerBypass(c)
	registerTargetFlags(c)
	fs := c.Flags()
	fs.DurationVar(&f.maxTime, flagMaxTime, 0, "time budget of each probe (default 1m, grown to what a long window needs, up to 5m; a value given is a hard cap)")
	hideMaxDuration(c)
	fs.StringArrayVarP(&f.expects, "expect", "e", nil, "expectation KEY=VALUE (repeatable), e.g. family=token_bucket, rate=10/s±10%")
	fs.StringVar(&f.minGrade, "min-grade", "", "fail unless the response-contract grade is at least this letter (A+, A, B, C, D)")
	fs.StringVar(&f.config, "config", "", "YAML file listing endpoints and their expectations")
	registerOutputFlags(c)
	_ = fs.Set("max-requests", fmt.Sprint(probe.DefaultMaxRequests))
	fs.Lookup("max-requests").DefValue = fmt.Sprint(probe.DefaultMaxRequests)
	fs.Lookup("max-requests").Changed = false
	fs.Lookup("out").Usage = "results stream; with several endpoints a PREFIX (PREFIX-1.jsonl, ...) or a DIR/ (default ratecheck-check-TIME[-N].jsonl)"
	return c
}

// checkEndpoint is one target with its expectations and request settings.
type checkEndpoint struct {
	name    string
	spec    string
	line    int // in the config file; 0 from the command line
	req     requestFlags
	maxTime time.Duration
	exps    []expect.Expectation
}

func runCheck(c *cobra.Command, f *checkFlags, args []string) error {
	if err := oneTimeBudget(c, true); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	if err := checkMaxTime(c, f.maxTime); err != nil {
		return err
	}
	var eps []checkEndpoint
	switch {
	case f.config != "" && len(args) > 0:
		return usageErr("give either a TARGET with --expect or --config FILE, not both")
	case f.config != "":
		if len(f.expects) > 0 {
			return usageErr("--expect goes with a TARGET; in --config, list expectations under each endpoint's expect:")
		}
		cfg, err := loadCheckConfig(f.config, f)
		if err != nil {
			return err
		}
		eps = cfg
	case len(args) == 1:
		exps, err := expect.ParseAll(f.expects)
		if err != nil {
			return usageErr("--expect: %v", err)
		}
		if f.minGrade != "" {
			e, err := expect.ParseKV(expect.KeyMinGrade, f.minGrade)
			if err != nil {
				return usageErr("--min-grade: %v", err)
			}
			exps = append(exps, e)
		}
		if len(exps) == 0 {
			return usageErr("check needs at least one --expect KEY=VALUE or --min-grade (see 'ratecheck check --help')")
		}
		eps = []checkEndpoint{{spec: args[0], req: f.requestFlags, maxTime: f.maxTime, exps: exps}}
	default:
		return usageErr("check needs a TARGET with --expect KEY=VALUE, or --config FILE; see 'ratecheck check --help'")
	}
	for _, ep := range eps {
		if err := checkProbeBudget(&ep.req, ep.maxTime); err != nil {
			if ep.line > 0 {
				var ee *exitError
				errors.As(err, &ee)
				return usageErr("%s:%d: endpoint %s: %v (max_requests:/max_time: in the file, or the flag)", f.config, ep.line, endpointLabel(ep), ee.err)
			}
			return err
		}
	}
	paths, err := outfiles.StreamPaths(outfiles.Base("check", time.Now()), f.out, len(eps))
	if err != nil {
		return usageErr("--out: %v", err)
	}
	if err := guardStreams(c, paths); err != nil {
		return err
	}
	ctx, stop := interruptible(c)
	defer stop()
	stderr := c.ErrOrStderr()

	// Start every target before the first request: a bad spec is exit 2
	// before anything is sent.
	specs := make([]string, len(eps))
	for i, ep := range eps {
		specs[i] = ep.spec
	}
	tgts, closeAll, err := openTargets(ctx, c, specs, func(i int, err error) error {
		var ee *exitError
		if ep := eps[i]; errors.As(err, &ee) && ee.code == ExitUsage && ep.line > 0 {
			return usageErr("%s:%d: target %q: %v", f.config, ep.line, ep.spec, ee.err)
		}
		return err
	})
	defer closeAll()
	if err != nil {
		return err
	}

	doc := report.NewDocument(version, "check", "probe")
	w := c.OutOrStdout()
	for i, ep := range eps {
		if ctx.Err() != nil {
			doc.Runs = append(doc.Runs, report.Run{Target: ep.spec, Name: ep.name, Kind: "probe", Profile: "probe", Error: "not run: interrupted", Outcome: expect.Untested})
			continue
		}
		if len(eps) > 1 {
			fmt.Fprintf(stderr, "check: %s (%d of %d)\n", endpointLabel(ep), i+1, len(eps))
		}
		prog := report.NewProgress(stderr, progressEnabled(stderr, f.quiet), progressBudget(ep.maxTime))
		stated, _ := expect.StatedBy(ep.exps) // a burst that exceeds one ends the probe
		pr, err := execProbe(ctx, prog.Writer(), &ep.req, ep.maxTime, "check", tgts[i], paths[i], prog, stated)
		prog.Stop()
		if cerr := tgts[i].Close(); cerr != nil {
			fmt.Fprintf(stderr, "ratecheck: stopping %s: %v\n", ep.spec, cerr)
		}
		var run report.Run
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.code == ExitUsage {
				return err
			}
			run = report.FailedProbeRun(ep.spec, paths[i], err)
			run.Expectations, run.Outcome = expect.OfRun(ep.exps, nil, nil, err)
		} else {
			run = report.ProbeRun(pr.Spec, pr.URL, pr.Res, pr.Grade)
			run.Expectations, run.Outcome = expect.OfRun(ep.exps, pr.Res, pr.Grade, nil)
		}
		run.Name = ep.name
		doc.Runs = append(doc.Runs, run)
		if f.output == "text" {
			report.CheckRun(w, &run)
		}
	}
	doc.Outcome = checkOutcome(doc.Runs, ctx.Err() != nil)
	if f.output == "json" {
		if err := report.WriteJSON(w, doc); err != nil {
			return err
		}
	}
	if err := writeOutputs(c, doc); err != nil {
		return err
	}
	return checkExit(ctx.Err() != nil, doc)
}

func endpointLabel(ep checkEndpoint) string {
	if ep.name != "" {
		return ep.name + " (" + ep.spec + ")"
	}
	return ep.spec
}

// checkOutcome is the overall outcome of the runs (expect.OfCheck).
func checkOutcome(runs []report.Run, interrupted bool) string {
	verdicts := make([]string, len(runs))
	for i, r := range runs {
		verdicts[i] = r.Outcome
	}
	return expect.OfCheck(verdicts, interrupted)
}

// checkExit turns the outcome into the exit code and its one-line message.
func checkExit(interrupted bool, doc report.Document) error {
	var failed, untested []string
	total := 0
	for _, r := range doc.Runs {
		for _, o := range r.Expectations {
			total++
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
				failed = append(failed, label)
			case expect.Untested:
				untested = append(untested, label)
			}
		}
	}
	switch {
	case len(failed) > 0:
		// Even a cut-short run fails what its data refutes (a rejection
		// refutes family=none); expect.Evaluate leaves the rest untested.
		return exitWith(ExitFailed, fmt.Errorf("check failed: %d of %d expectations do not hold: %s", len(failed), total, strings.Join(failed, "; ")))
	case interrupted:
		// A cut-short probe may get anything else wrong: no verdict.
		return exitWith(ExitUntested, errors.New("interrupted: the run was cut short, so no expectation was tested"))
	case doc.Outcome != expect.Pass:
		return exitWith(ExitUntested, fmt.Errorf("check could not test %d of %d expectations: %s", len(untested), total, strings.Join(untested, "; ")))
	}
	return nil
}

// loadCheckConfig reads the --config suite (probe/expect) into endpoints,
// the command line's flags as defaults under the file's own settings;
// every problem is a usage error naming the file, the line and the key.
func loadCheckConfig(path string, f *checkFlags) ([]checkEndpoint, error) {
	suite, err := expect.LoadSuite(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, os.ErrPermission) {
			return nil, usageErr("--config: %v", err)
		}
		return nil, usageErr("%v", err)
	}
	var eps []checkEndpoint
	for _, se := range suite.Endpoints {
		at := fmt.Sprintf("%s:%d", path, se.Line)
		ep := checkEndpoint{name: se.Name, spec: se.Target, line: se.Line, req: f.requestFlags, maxTime: f.maxTime, exps: se.Expectations}
		ep.req.out = ""
		if se.Method != "" {
			ep.req.method = se.Method
		}
		if se.Headers != nil {
			ep.req.headers = slices.Concat(f.headers, se.Headers)
		}
		if se.Body != "" {
			ep.req.body = se.Body
		}
		if se.KeyHeader != "" {
			ep.req.keyHeader = se.KeyHeader
		}
		if se.Timeout > 0 {
			ep.req.timeout = se.Timeout
		}
		if se.MaxTime > 0 {
			ep.maxTime = se.MaxTime
		}
		if se.MaxRequests > 0 {
			ep.req.maxRequests = se.MaxRequests
		}
		if err := ep.req.validate(); err != nil {
			return nil, usageErr("%s: %v", at, err)
		}
		if mg := cmp.Or(se.MinGrade, f.minGrade); mg != "" {
			e, err := expect.ParseKV(expect.KeyMinGrade, mg)
			if err != nil {
				return nil, usageErr("%s: min_grade: %v", at, err)
			}
			ep.exps = append(ep.exps, e)
		}
		if len(ep.exps) == 0 {
			return nil, usageErr("%s: endpoint %s has no expectations: add expect: (family: token_bucket, rate: 10/s±10%%, ...) or min_grade:", at, endpointLabel(ep))
		}
		eps = append(eps, ep)
	}
	return eps, nil
}

// progressEnabled says whether to draw the progress line: stderr is a
// terminal and not --quiet.
func progressEnabled(stderr io.Writer, quiet bool) bool {
	if quiet {
		return false
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
