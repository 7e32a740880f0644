package cmd

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ratecheck/ratecheck/outfiles"
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
