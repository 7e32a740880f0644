package cmd

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
	"github.com/ratecheck/ratecheck/report"
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

// guardStreams is exit 2, before anything is sent, when a results stream
// the command is about to create, at paths (a prefix or a directory in
// --out gives several), would overwrite a file (outfiles.GuardStreams).
func guardStreams(c *cobra.Command, paths []string) error {
	out := outfiles.File{Flag: "--out", What: whatStream}
	if c.Flags().Changed("out") {
		out.Path, _ = c.Flags().GetString("out")
	}
	return usageIf(outfiles.GuardStreams(inputFiles(c, nil), out, paths, reportFiles(c)))
}

// checkOutputFiles is the check every command runs before anything else:
// no report file may be an input or another report of the same run, and
// each must name a place a file can be created in (outfiles.CheckReports).
func checkOutputFiles(c *cobra.Command, args []string) error {
	return usageIf(outfiles.CheckReports(inputFiles(c, args), reportFiles(c)))
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

// writeOutputs renders the document into every report file asked for,
// building it only then. A file that cannot be written is the user's to
// fix: exit 2, after the others are written.
func writeOutputs(c *cobra.Command, doc func(version string) report.Document) error {
	files := outputFilesOf(c)
	if !files.Any() {
		return nil
	}
	d := doc(version)
	err := files.Write(d, func(path string) { fmt.Fprintf(c.ErrOrStderr(), "report: %s\n", path) })
	var fe *report.FileError
	if errors.As(err, &fe) {
		return outputErr(c, "--"+fe.Format, fe.Path, fe.Err, d.ResultsFiles())
	}
	return err
}

// outputErr is exit 2 for a report file that could not be written once
// the run was over; the message names the streams it can be rendered
// again from (outfiles.WriteError), but report's, which are its inputs.
func outputErr(c *cobra.Command, flag, path string, err error, streams []string) error {
	if c.Name() == "report" {
		streams = nil
	}
	return usageErr("%w", outfiles.WriteError(flag, path, err, streams))
}
