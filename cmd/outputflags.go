package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/runner"
)

// The report files every command can write: --html, --json, --junit. Each
// renders the same report.Document (docs/json.md).
const (
	flagHTML  = "html"
	flagJSON  = "json"
	flagJUnit = "junit"
	// annReport marks a --json flag registerOutputFlags added (probe and
	// demo have a --json of their own, which it leaves alone).
	annReport = "ratecheck/report"
)

// registerOutputFlags adds --html, --json and --junit to c. A command that
// already has a --json keeps its own.
func registerOutputFlags(c *cobra.Command) {
	fs := c.Flags()
	fs.String(flagHTML, "", "write a self-contained HTML report (timeline, intervals, latency, checks) to FILE")
	if fs.Lookup(flagJSON) == nil {
		fs.String(flagJSON, "", "write the JSON report (schema in docs/json.md) to FILE")
		_ = fs.SetAnnotation(flagJSON, annReport, []string{"true"})
	}
	fs.String(flagJUnit, "", "write JUnit XML (one test case per check and expectation) to FILE")
}

// outputFilesOf reads back the flags registerOutputFlags added.
func outputFilesOf(c *cobra.Command) report.Files {
	var o report.Files
	fs := c.Flags()
	if fl := fs.Lookup(flagHTML); fl != nil {
		o.HTML = fl.Value.String()
	}
	if fl := fs.Lookup(flagJSON); fl != nil && fl.Annotations[annReport] != nil {
		o.JSON = fl.Value.String()
	}
	if fl := fs.Lookup(flagJUnit); fl != nil {
		o.JUnit = fl.Value.String()
	}
	return o
}

// writeOutputs renders d into every report file asked for. A file that
// cannot be written is the user's to fix: exit 2, after the others are
// written.
func writeOutputs(c *cobra.Command, d report.Document) error {
	err := outputFilesOf(c).Write(d, func(path string) { fmt.Fprintf(c.ErrOrStderr(), "report: %s\n", path) })
	var fe *report.FileError
	if errors.As(err, &fe) {
		return outputErr(c, fe.Format, fe.Path, fe.Err, d.ResultsFiles())
	}
	return err
}

// outputErr is exit 2 for a report file that could not be written once
// the run was over (its directory removed meanwhile, a full disk). The run
// itself is safe in its results streams, from which 'ratecheck report'
// renders the file again: the message says so, and claims nothing about
// what was or was not sent.
func outputErr(c *cobra.Command, flag, path string, err error, streams []string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is already in the message
	}
	if c.Name() == "report" || len(streams) == 0 {
		return usageErr("--%s %s could not be written: %v", flag, path, err)
	}
	return usageErr("--%s %s could not be written: %v; the run is recorded in %s: render the file again with 'ratecheck report %s --%s %s'",
		flag, path, err, strings.Join(streams, ", "), strings.Join(streams, " "), flag, path)
}

// writeAttackOutputs writes attack's report files: the profile's verdict
// and figures from the live run, every request from its results stream.
func writeAttackOutputs(c *cobra.Command, spec, path string, rep results.Report) error {
	if !outputFilesOf(c).Any() {
		return nil
	}
	run := report.AttackRunFromFile(spec, path, rep)
	return writeOutputs(c, report.NewDocument(version, "attack", rep.Profile, run))
}

// writeProbeOutputs writes probe's report files from the live result.
func writeProbeOutputs(c *cobra.Command, run *runner.Graded) error {
	if !outputFilesOf(c).Any() {
		return nil
	}
	return writeOutputs(c, report.NewDocument(version, "probe", "probe", run.Run()))
}
