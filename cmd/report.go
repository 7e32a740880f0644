package cmd

import (
	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/runner"
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
from the recorded requests. An attack's stream, of any length, is read in
bounded memory and shows the profile's table, verdict and metrics as the live
run printed them (stored in its end record): the counts are every request's,
the charts a sample of 10,000 at most. Several files are shown side by side.
An interrupted stream (no end record) is rendered up to its last complete
record, and says so. A stream is JSON Lines or compact (attack's default,
.rcs), told apart by its first bytes; -o jsonl converts one to JSON Lines.

The streams of the shards of one sharded run (attack --shard K/N) are merged
into one run: one verdict, merged histograms, a table of the shards. Streams
of different runs, or a missing shard, are refused (exit 2).

--expect KEY=VALUE (repeatable; as in 'ratecheck check') evaluates
expectations against the recorded probe(s) offline, with check's exit codes.`,
		Example: `  ratecheck report ratecheck-probe-20261129-190000.jsonl
  ratecheck report ratecheck-attack-20261129-191500.rcs -o jsonl > attack.jsonl
  ratecheck report probe.jsonl --html probe.html --junit probe.xml
  ratecheck report runs/ratecheck-compare-*.jsonl --html compare.html
  ratecheck report probe.jsonl --expect family=token_bucket --expect 'rate=10/s±10%'
  ratecheck report run-1.jsonl run-2.jsonl run-3.jsonl run-4.jsonl --html run.html`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageErr("report needs at least one RESULTS file (a .jsonl or .rcs results stream); see '%s --help'", c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error { return runReport(c, args, output, expects) },
	}
	c.Flags().StringVarP(&output, "output", "o", "text", "stdout format: text, json, or jsonl (the one RESULTS stream itself as JSON Lines: converts a compact .rcs stream)")
	c.Flags().StringArrayVarP(&expects, "expect", "e", nil, "evaluate an expectation KEY=VALUE against the recorded probe (repeatable)")
	registerOutputFlags(c)
	return c
}

func runReport(c *cobra.Command, paths []string, output string, expects []string) error {
	if output == "jsonl" {
		return exitOf(runner.Convert(c.OutOrStdout(), c.ErrOrStderr(), paths))
	}
	if output != "text" && output != "json" {
		return usageErr("--output %q: use text, json or jsonl", output)
	}
	exps, err := expect.ParseAll(expects)
	if err != nil {
		return usageErr("--expect: %v", err)
	}
	doc, err := runner.Recorded(paths, exps, version)
	if err != nil {
		return exitOf(err)
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
	if err := writeOutputs(c, func(string) report.Document { return doc }); err != nil {
		return err
	}
	if len(exps) > 0 {
		return exitOf(runner.Verdict(doc, runner.Interrupted(doc)))
	}
	return exitOf(runner.RecordedErr(doc.Runs))
}
