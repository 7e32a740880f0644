package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/report"
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
	registerTargetFlags(c)
	registerOutputFlags(c)
	fs := c.Flags()
	fs.Lookup("out").Usage = "results streams: a PREFIX (writes PREFIX-1.jsonl, PREFIX-2.jsonl, ...) or a DIR/ (default ratecheck-compare-TIME-N.jsonl)"
	fs.BoolVar(&f.probe, "probe", false, "run the inference experiment instead of a profile: compare inferred families and parameters")
	fs.DurationVar(&f.between, "between", compareBetween, "idle before each http(s) URL target after the first (nginx: and builtin: targets start fresh)")
	fs.DurationVar(&f.maxTime, "max-time", probe.DefaultMaxTime, "--probe: time budget of each target's experiment")
	f.registerProfileFlags(c, profileDefaults{profile: "burst", burst: compareBurst, idle: compareIdle, tail: compareTail})
	return c
}

// compareTarget is one target's entry in compare's JSON.
type compareTarget struct {
	Target    string           `json:"target"`
	Report    *attack.Report   `json:"report,omitempty"`    // profile runs
	Inference *probe.Inference `json:"inference,omitempty"` // --probe runs
	Requests  int              `json:"requests"`
	ElapsedS  float64          `json:"elapsed_s"`
	Results   string           `json:"results_file,omitempty"`
	// Grade is the response-contract grade of what this target answered.
	Grade *grade.Report `json:"grade"`
	Notes []string      `json:"notes,omitempty"`
	// Error says why this target could not be tested (exit 3).
	Error string `json:"error,omitempty"`
	// Stopped says the run was cut short ("interrupted"): partial, ungraded.
	Stopped string `json:"stopped,omitempty"`

	statuses map[int]int // every status the run saw
	probe    *probeRun   // a --probe run, for the report files
}

type compareOutput struct {
	Experiment string          `json:"experiment"` // the profile name, or "probe"
	Targets    []compareTarget `json:"targets"`
	// Interrupted says the comparison was cut short: partial, no verdict.
	Interrupted bool `json:"interrupted,omitempty"`
}

func runCompare(c *cobra.Command, f *compareFlags, specs []string) error {
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
		if f.maxTime <= 0 {
			return usageErr("--max-time must be positive")
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
	}
	if f.between < 0 {
		return usageErr("--between must be ≥ 0")
	}
	paths, err := compareOutPaths(f.out, len(specs), time.Now())
	if err != nil {
		return usageErr("--out: %v", err)
	}
	ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
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
	out := compareOutput{Experiment: experiment, Targets: make([]compareTarget, len(specs))}
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
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else if err := printCompare(w, f, out); err != nil {
		return err
	}
	if err := writeCompareOutputs(c, out); err != nil {
		return err
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
func compareProfile(ctx context.Context, f *compareFlags, prof attack.Profile, keep bool, t *launch.Target, path string, opts map[string]string, ct *compareTarget) error {
	req, err := f.request(t.URL)
	if err != nil {
		return err
	}
	res, err := attack.Run(ctx, prof, attack.RunOptions{Options: f.options(), Request: req, Out: path, KeepResults: true,
		Header: attack.StreamHeader{Command: "compare", Target: t.Spec, Options: opts}})
	if res == nil { // nothing was sent: the flags or --out are at fault
		return runConfigErr(err)
	}
	ct.Results = path
	notes := res.Report.Notes
	if res.StreamErr != nil {
		notes = append(notes, fmt.Sprintf("writing %s: %v", path, res.StreamErr))
	}
	ct.Requests, ct.ElapsedS, ct.statuses = res.Summary.Requests, res.Elapsed.Seconds(), res.Summary.Statuses
	if !res.Concluded || res.Untested != "" {
		ct.Notes = notes
		return fmt.Errorf("%w (%d requests recorded in %s)", err, res.Summary.Requests, path)
	}
	rep := res.Report
	rep.Notes = notes
	ct.Report = &rep
	if res.Stopped == attack.StopInterrupted {
		ct.Stopped = string(res.Stopped) // a cut-short run is not graded
		return nil
	}
	rs := make([]attack.Result, len(res.Results))
	for i, r := range res.Results {
		rs[i] = *r
	}
	g := grade.OfAnswers(probe.NewObservation(res.Start, rs))
	ct.Grade = &g
	return nil
}

// compareProbe runs the inference experiment against one target, as probe
// does.
func compareProbe(ctx context.Context, f *compareFlags, t *launch.Target, path string, ct *compareTarget) error {
	ct.Results = path
	run, err := execProbe(ctx, io.Discard, &f.requestFlags, f.maxTime, "compare", t, path)
	if err != nil {
		return err
	}
	s := run.Res.Observation
	statuses := map[int]int{}
	for i := range s.Results {
		if s.Results[i].Error == "" {
			statuses[s.Results[i].Status]++
		}
	}
	ct.Requests, ct.ElapsedS, ct.statuses, ct.Notes = len(s.Results), run.Res.Elapsed.Seconds(), statuses, run.Res.Notes
	ct.Inference, ct.Grade, ct.probe, ct.Stopped = &run.Res.Inference, run.Grade, run, s.Stopped
	return nil
}

// printCompare prints the side-by-side table, then each target's verdict,
// evidence and notes.
func printCompare(w io.Writer, f *compareFlags, out compareOutput) error {
	if out.Interrupted {
		report.Interrupted(w, "")
	}
	header := []string{out.Experiment}
	targetRow := []string{"spec"}
	for i, t := range out.Targets {
		// The renderer upper-cases the header and turns '.' and '_' into
		// spaces; the targets, which may be paths, go in the first row.
		header = append(header, fmt.Sprintf("target %d", i+1))
		targetRow = append(targetRow, t.Target)
	}
	rows := [][]string{targetRow}
	switch {
	case out.Experiment == "probe":
		rows = append(rows, probeRows(out.Targets)...)
	case out.Experiment == "burst":
		rows = append(rows, burstRows(f, out.Targets)...)
	default:
		rows = append(rows, profileRows(out.Targets)...)
	}
	rows = append(rows, row("rejection status", out.Targets, func(t *compareTarget) string { return rejectionStatuses(t.statuses) }))
	rows = append(rows, row("grade", out.Targets, func(t *compareTarget) string {
		if t.Grade == nil {
			return "-"
		}
		// The caps' check IDs only: the full sentences follow below.
		var ids []string
		for _, c := range t.Grade.Caps {
			if i := strings.LastIndex(c, "("); i >= 0 && strings.HasSuffix(c, ")") {
				ids = append(ids, c[i+1:len(c)-1])
			} else {
				ids = append(ids, c)
			}
		}
		if len(ids) == 0 {
			return t.Grade.Letter
		}
		return t.Grade.Letter + " · capped by " + strings.Join(ids, ", ")
	}))
	if err := report.Table(w, header, rows); err != nil {
		return err
	}
	for i, t := range out.Targets {
		fmt.Fprintf(w, "target %d: %s\n", i+1, t.Target)
		switch {
		case t.Error != "":
			fmt.Fprintf(w, "  error: %s\n", t.Error)
		case t.Report != nil:
			fmt.Fprintf(w, "  %s\n", t.Report.Verdict)
		case t.Inference != nil:
			fmt.Fprintf(w, "  %s\n", t.Inference.Summary())
			for _, e := range t.Inference.Evidence {
				fmt.Fprintf(w, "  - %s\n", e)
			}
		}
		if t.Grade != nil {
			fmt.Fprintf(w, "  grade %s (score %d)\n", t.Grade.Letter, t.Grade.Score)
			for _, c := range t.Grade.Caps {
				fmt.Fprintf(w, "    capped at %s\n", c)
			}
		}
		notes := t.Notes
		if t.Report != nil {
			notes = t.Report.Notes
		}
		for _, n := range notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}

// row builds one table row, with "error" / "—" for targets without data.
func row(label string, ts []compareTarget, cell func(*compareTarget) string) []string {
	r := []string{label}
	for i := range ts {
		r = append(r, cell(&ts[i]))
	}
	return r
}

func burstRows(f *compareFlags, ts []compareTarget) [][]string {
	metric := func(label string, get func(m attack.BurstMetrics) string) []string {
		return row(label, ts, func(t *compareTarget) string {
			if t.Report == nil {
				return missing(t)
			}
			m := t.Report.Metrics.Burst
			if m == nil {
				return "?"
			}
			return get(*m)
		})
	}
	return [][]string{
		metric("burst size", func(m attack.BurstMetrics) string { return fmt.Sprint(m.Size) }),
		metric("admitted in the burst", func(m attack.BurstMetrics) string { return fmt.Sprint(m.Admitted) }),
		metric("of which delayed (queued)", func(m attack.BurstMetrics) string { return fmt.Sprint(m.Delayed) }),
		metric("added latency p50 / p99 / max", func(m attack.BurstMetrics) string {
			return fmt.Sprintf("%s / %s / %s", msStr(m.AddedP50), msStr(m.AddedP99), msStr(m.AddedMax))
		}),
		metric("rejected", func(m attack.BurstMetrics) string { return fmt.Sprint(m.Rejected) }),
		metric("errors", func(m attack.BurstMetrics) string { return fmt.Sprint(m.Errors) }),
		metric("sustained admitted rate", func(m attack.BurstMetrics) string {
			if m.TailSent == 0 {
				return "— (no --tail)"
			}
			return fmt.Sprintf("%.1f/s (tail at %s for %s)", m.TailRate, f.tailRate, f.tail)
		}),
		metric("send spread", func(m attack.BurstMetrics) string { return msStr(m.SendSpread) }),
	}
}

// profileRows lines up the profiles' own rows by label, in first-seen order.
func profileRows(ts []compareTarget) [][]string {
	var labels []string
	cells := map[string]map[int]string{}
	for i, t := range ts {
		if t.Report == nil {
			continue
		}
		for _, r := range t.Report.Rows {
			if len(r) < 2 {
				continue
			}
			if cells[r[0]] == nil {
				cells[r[0]] = map[int]string{}
				labels = append(labels, r[0])
			}
			cells[r[0]][i] = r[1]
		}
	}
	var rows [][]string
	for _, l := range labels {
		r := []string{l}
		for i := range ts {
			v, ok := cells[l][i]
			if !ok {
				v = missing(&ts[i])
			}
			r = append(r, v)
		}
		rows = append(rows, r)
	}
	return rows
}

func probeRows(ts []compareTarget) [][]string {
	inf := func(label string, get func(i *probe.Inference) string) []string {
		return row(label, ts, func(t *compareTarget) string {
			if t.Inference == nil {
				return missing(t)
			}
			return get(t.Inference)
		})
	}
	return [][]string{
		inf("inferred family", func(i *probe.Inference) string { return i.Family }),
		inf("parameters", func(i *probe.Inference) string {
			s := i.Summary()
			if p, ok := strings.CutPrefix(s, i.Family+": "); ok {
				return p
			}
			return s
		}),
		inf("confidence", func(i *probe.Inference) string { return fmt.Sprintf("%.2f", i.Confidence) }),
		inf("scope", func(i *probe.Inference) string { return i.Scope }),
		inf("replicas / store failure", replicaAndStoreRow),
		inf("decisions explained", func(i *probe.Inference) string { return fmt.Sprintf("%d of %d", i.Explained, i.Decisions) }),
		row("requests / time", ts, func(t *compareTarget) string {
			return fmt.Sprintf("%d in %.1f s", t.Requests, t.ElapsedS)
		}),
	}
}

// replicaAndStoreRow is compare's row for what a fleet showed: replicas
// counting alone, and whether the limiter failed open or closed when its
// store went away ("—" when neither was seen).
func replicaAndStoreRow(i *probe.Inference) string {
	var parts []string
	if i.Replicas > 1 {
		parts = append(parts, fmt.Sprintf("%d replicas (effective limit %d)", i.Replicas, i.EffectiveLimit))
	}
	if i.StoreFailure != "" {
		parts = append(parts, "fails "+i.StoreFailure)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

func missing(t *compareTarget) string {
	if t.Error != "" {
		return "error"
	}
	return "—"
}

// rejectionStatuses lists the non-2xx statuses a run saw, e.g. "503" or
// "429, 503".
func rejectionStatuses(st map[int]int) string {
	var codes []int
	for code, n := range st {
		if n > 0 && (code < 200 || code >= 300) {
			codes = append(codes, code)
		}
	}
	if len(codes) == 0 {
		if len(st) == 0 {
			return "—"
		}
		return "none"
	}
	sort.Ints(codes)
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ", ")
}

func msStr(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// compareOutPaths names each target's results file. out "" gives
// ratecheck-compare-TIME-N.jsonl here; a directory (existing, or written with
// a trailing slash, then created) gets those names inside it; anything else is
// a prefix: PREFIX-N.jsonl (a trailing .jsonl on the prefix is dropped).
func compareOutPaths(out string, n int, now time.Time) ([]string, error) {
	base := "ratecheck-compare-" + now.Format("20060102-150405")
	prefix := base
	switch {
	case out == "":
	case strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)):
		if err := os.MkdirAll(out, 0o755); err != nil {
			return nil, err
		}
		prefix = filepath.Join(out, base)
	default:
		if fi, err := os.Stat(out); err == nil && fi.IsDir() {
			prefix = filepath.Join(out, base)
		} else {
			prefix = strings.TrimSuffix(out, ".jsonl")
		}
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s-%d.jsonl", prefix, i+1)
	}
	return paths, nil
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
