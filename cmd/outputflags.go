package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
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

// outputFiles are the report files a command was asked for.
type outputFiles struct {
	html, json, junit string
}

func (o outputFiles) any() bool { return o.html != "" || o.json != "" || o.junit != "" }

// outputFilesOf reads back the flags registerOutputFlags added.
func outputFilesOf(c *cobra.Command) outputFiles {
	var o outputFiles
	fs := c.Flags()
	if fl := fs.Lookup(flagHTML); fl != nil {
		o.html = fl.Value.String()
	}
	if fl := fs.Lookup(flagJSON); fl != nil && fl.Annotations[annReport] != nil {
		o.json = fl.Value.String()
	}
	if fl := fs.Lookup(flagJUnit); fl != nil {
		o.junit = fl.Value.String()
	}
	return o
}

// write renders d into every file asked for. A file that cannot be written
// is the user's to fix: exit 2, after the others are written.
func (o outputFiles) write(c *cobra.Command, d report.Document) error {
	var firstErr error
	var streams []string
	for _, r := range d.Runs {
		if r.ResultsFile != "" {
			streams = append(streams, r.ResultsFile)
		}
	}
	put := func(flag, path string, render func(*bytes.Buffer) error) {
		if path == "" {
			return
		}
		var buf bytes.Buffer
		err := render(&buf)
		if err == nil {
			err = writeFileAtomic(path, buf.Bytes())
		}
		if err != nil {
			if firstErr == nil {
				firstErr = outputErr(c, flag, path, err, streams)
			}
			return
		}
		fmt.Fprintf(c.ErrOrStderr(), "report: %s\n", path)
	}
	put(flagHTML, o.html, func(b *bytes.Buffer) error { return report.WriteHTML(b, d) })
	put(flagJSON, o.json, func(b *bytes.Buffer) error { return report.WriteJSON(b, d) })
	put(flagJUnit, o.junit, func(b *bytes.Buffer) error { return report.WriteJUnit(b, d) })
	return firstErr
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

// writeFileAtomic writes data to path through a temporary file in the same
// directory, so a reader never sees half a report.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Chmod(tmp, 0o644); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// writeAttackOutputs writes attack's report files: the profile's verdict
// and figures from the live run, every request from its results stream.
func writeAttackOutputs(c *cobra.Command, spec, path string, rep results.Report) error {
	o := outputFilesOf(c)
	if !o.any() {
		return nil
	}
	run := report.AttackRunFromFile(spec, path, rep)
	return o.write(c, report.NewDocument(version, "attack", rep.Profile, run))
}

// writeProbeOutputs writes probe's report files from the live result.
func writeProbeOutputs(c *cobra.Command, run *probeRun) error {
	o := outputFilesOf(c)
	if !o.any() {
		return nil
	}
	return o.write(c, report.NewDocument(version, "probe", "probe", report.ProbeRun(run.Spec, run.URL, run.Res, run.Grade)))
}
