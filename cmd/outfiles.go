package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/runner"
)

// What each file is, for the messages.
const (
	whatStream = "the results stream"
	whatConfig = "the config"
)

// inputFiles are the files the command reads: report's streams (its
// arguments) and check's --config.
func inputFiles(c *cobra.Command, args []string) []outfiles.File {
	var in []outfiles.File
	if c.Name() == "report" {
		for _, a := range args {
			in = append(in, outfiles.File{Flag: "the RESULTS argument", What: whatStream, Path: a})
		}
	}
	if fl := c.Flags().Lookup("config"); fl != nil && fl.Value.String() != "" {
		in = append(in, outfiles.File{Flag: "--config", What: whatConfig, Path: fl.Value.String()})
	}
	return in
}

// reportFiles are the report files the command was asked to write: --html,
// --json (registerOutputFlags' or the command's own), --junit.
func reportFiles(c *cobra.Command) []outfiles.File {
	var out []outfiles.File
	for _, f := range []struct{ name, what string }{
		{flagHTML, "the HTML report"}, {flagJSON, "the JSON report"}, {flagJUnit, "the JUnit report"},
	} {
		if fl := c.Flags().Lookup(f.name); fl != nil && fl.Value.String() != "" {
			out = append(out, outfiles.File{Flag: "--" + f.name, What: f.what, Path: fl.Value.String(), Out: true})
		}
	}
	return out
}

// clash is exit 2 when a file the command writes is the same file as one
// listed before it: writing it would destroy the other.
func clash(files []outfiles.File) error {
	if err := outfiles.Clash(files); err != nil {
		return usageErr("%w", err)
	}
	return nil
}

// guardStreams is exit 2, before anything is sent, when a results stream
// the command is about to create would overwrite a file: an input, a
// report of the same run, or — with --out given — a results file already
// there (an earlier run's, most likely). paths are the streams as resolved
// from --out (a prefix or a directory gives several).
func guardStreams(c *cobra.Command, paths []string) error {
	files := inputFiles(c, nil)
	for _, p := range paths {
		files = append(files, outfiles.File{Flag: "--out", What: whatStream, Path: p, Out: true})
	}
	if err := clash(append(files, reportFiles(c)...)); err != nil {
		return err
	}
	if !c.Flags().Changed("out") {
		return nil // the default names carry the time: never an earlier run's
	}
	out, _ := c.Flags().GetString("out")
	for _, p := range paths {
		switch {
		case !outfiles.HoldsData(p):
		case p == out:
			return usageErr("--out %s exists: it may be an earlier run's results; remove it or choose another path", out)
		default:
			return usageErr("--out %s names %s, which exists: it may be an earlier run's results; remove it or choose another --out", out, p)
		}
	}
	return nil
}

// checkOutputFiles is the check every command runs before anything else:
// no report file may be an input or another report of the same run, and
// each must name a place a file can be created in (not a missing
// directory, a directory, or one without permission).
func checkOutputFiles(c *cobra.Command, args []string) error {
	if err := clash(append(inputFiles(c, args), reportFiles(c)...)); err != nil {
		return err
	}
	for _, f := range reportFiles(c) {
		switch err := outfiles.CanCreate(f.Path); {
		case errors.Is(err, outfiles.ErrIsDir):
			return usageErr("%s %s is a directory: name a file, e.g. %s", f.Flag, f.Path, filepath.Join(f.Path, "report."+strings.TrimPrefix(f.Flag, "--")))
		case err != nil:
			return usageErr("%s %s cannot be written: %v (choose another place)", f.Flag, f.Path, err)
		}
	}
	return nil
}

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
