package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
)

func newReportCmd() *cobra.Command {
	var output string
	var expects []string
	c := &cobra.Command{
		Use:   "report RESULTS... [--html FILE] [--json FILE] [--junit FILE]",
		Short: "Re-render saved results streams as text, HTML, JSON or JUnit, without touching the target",
		Long: `report reads one or more results streams (the --out files of attack, probe,
compare and check) and renders them again: text on stdout, and with --html,
--json, --junit the same report files the live commands write. Nothing is
sent to the target.

A probe's stream (probe, check, compare --probe) is inferred and graded again
from the recorded requests. An attack's stream is drawn and shows the
profile's table, verdict and metrics as the live run printed them (stored in
the stream's end record). Several files are shown side by side.
An interrupted stream (no end record) is rendered up to its last complete
line, and says so.

The streams of the shards of one sharded run (attack --shard K/N) are merged
into one run: one verdict, merged histograms, a table of the shards. Streams
of different runs, or a missing shard, are refused (exit 2).

--expect KEY=VALUE (repeatable; as in 'ratecheck check') evaluates
expectations against the recorded probe(s) offline, with check's exit codes.`,
		Example: `  ratecheck report ratecheck-probe-20261129-190000.jsonl
  ratecheck report probe.jsonl --html probe.html --junit probe.xml
  ratecheck report runs/ratecheck-compare-*.jsonl --html compare.html
  ratecheck report probe.jsonl --expect family=token_bucket --expect 'rate=10/s±10%'
  ratecheck report run-1.jsonl run-2.jsonl run-3.jsonl run-4.jsonl --html run.html`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("report needs at least one RESULTS file (a .jsonl results stream); see '%s --help'", c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runReport(c, args, output, expects) },
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "stdout format: text or json")
	c.Flags().StringArrayVarP(&expects, "expect", "e", nil, "evaluate an expectation KEY=VALUE against the recorded probe (repeatable)")
	registerOutputFlags(c)
	return c
}

func runReport(c *cobra.Command, paths []string, output string, expects []string) error {
	if output != "text" && output != "json" {
		return usageErr("--output %q: use text or json", output)
	}
	exps, err := expect.ParseAll(expects)
	if err != nil {
		return usageErr("--expect: %v", err)
	}
	for _, p := range paths {
		if err := checkStreamPath(p); err != nil {
			return err
		}
	}
	if merged, err := mergeIfSharded(paths); err != nil || merged != nil {
		if err != nil {
			return err
		}
		return renderMerged(c, output, len(exps) > 0, merged)
	}
	var runs []report.Run
	var headers []results.StreamHeader
	var probes []*probe.Result // per run; nil for an attack's stream
	for _, p := range paths {
		rec, err := readStreamFile(p)
		if err != nil {
			return err
		}
		headers = append(headers, rec.Header)
		if report.IsProbeStream(rec.Header) {
			// A probe's stream is inferred and graded again.
			res := probe.FromRecorded(rec)
			res.ResultsFile = p
			probes = append(probes, res)
			runs = append(runs, report.ProbeRun(rec.Header.Target, rec.Header.URL, res, grade.OfProbe(res)))
		} else {
			probes = append(probes, nil)
			runs = append(runs, report.AttackFromStream(rec, p))
		}
	}
	doc := report.RecordedDocument(version, headers, runs...)
	interrupted := false
	if len(exps) > 0 {
		for i := range doc.Runs {
			r := &doc.Runs[i]
			if probes[i] == nil {
				return usageErr("--expect: %s holds an attack (%s), not a probe: there is nothing to compare expectations with", paths[i], r.Profile)
			}
			r.Expectations, r.Outcome = expect.OfRun(exps, probes[i], r.Grade, nil)
			interrupted = interrupted || r.Stopped != ""
		}
		doc.Outcome = checkOutcome(doc.Runs, interrupted)
	}
	w := c.OutOrStdout()
	if output == "json" {
		if err := report.WriteJSON(w, doc); err != nil {
			return err
		}
	} else {
		for i := range doc.Runs {
			report.RunText(w, &doc.Runs[i])
		}
	}
	if err := writeOutputs(c, doc); err != nil {
		return err
	}
	if len(exps) > 0 {
		return checkExit(interrupted, doc)
	}
	return reportExit(doc.Runs)
}

// reportExit gives a re-rendered run the exit code the command that made
// it gave: 3 when the run was cut short (interrupted, or a stream with no
// end record), an attack had nothing answered with an admission or a
// rejection (attack's own rule), or the inference is inconclusive; the
// one line names each stream and why.
func reportExit(runs []report.Run) error {
	var why []string
	for _, r := range runs {
		switch {
		case r.Stopped != "":
			why = append(why, fmt.Sprintf("%s: the run was cut short (%s): it covers only what was recorded before", r.ResultsFile, r.Stopped))
		case r.Inference != nil && r.Inference.Family == probe.Inconclusive:
			why = append(why, fmt.Sprintf("%s: %s", r.ResultsFile, r.Inference.Summary()))
		case r.Kind == "attack" && r.Summary.Admitted+r.Summary.Rejected == 0:
			why = append(why, fmt.Sprintf("%s: not tested: no answer was an admission (2xx) or a rejection", r.ResultsFile))
		}
	}
	if len(why) == 0 {
		return nil
	}
	return exitWith(ExitUntested, errors.New(strings.Join(why, "; ")))
}

func readStreamFile(path string) (*results.Recorded, error) {
	if err := checkStreamPath(path); err != nil {
		return nil, err
	}
	rec, err := results.ReadStreamFile(path)
	var perr *os.PathError
	switch {
	case errors.As(err, &perr):
		return nil, usageErr("%v (name a results stream: the --out file of attack, probe, check or compare)", err)
	case err != nil:
		return nil, usageErr("%s: %v", path, err)
	}
	return rec, nil
}

// checkStreamPath is exit 2, saying what to name instead, for a path that
// is no results file: missing, unreadable, or a directory.
func checkStreamPath(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return usageErr("%v (name a results stream: the --out file of attack, probe, check or compare)", err)
	case fi.IsDir():
		return usageErr("%s is a directory: name the results streams in it, e.g. %s", path, filepath.Join(path, "*.jsonl"))
	}
	return nil
}
