package cmd

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// namedFile is a file a command reads or writes, with the flag (or
// argument) that names it, so that a refusal can say which two collide.
type namedFile struct {
	flag string // "--html", "the RESULTS argument"
	what string // "the HTML report", "the results stream"
	path string
	out  bool // the command writes it
}

// What each file is, for the messages.
const (
	whatStream = "the results stream"
	whatConfig = "the config"
)

// inputFiles are the files the command reads: report's streams (its
// arguments) and check's --config.
func inputFiles(c *cobra.Command, args []string) []namedFile {
	var in []namedFile
	if c.Name() == "report" {
		for _, a := range args {
			in = append(in, namedFile{flag: "the RESULTS argument", what: whatStream, path: a})
		}
	}
	if fl := c.Flags().Lookup("config"); fl != nil && fl.Value.String() != "" {
		in = append(in, namedFile{flag: "--config", what: whatConfig, path: fl.Value.String()})
	}
	return in
}

// reportFiles are the report files the command was asked to write: --html,
// --json (registerOutputFlags' or the command's own), --junit.
func reportFiles(c *cobra.Command) []namedFile {
	var out []namedFile
	for _, f := range []struct{ name, what string }{
		{flagHTML, "the HTML report"}, {flagJSON, "the JSON report"}, {flagJUnit, "the JUnit report"},
	} {
		if fl := c.Flags().Lookup(f.name); fl != nil && fl.Value.String() != "" {
			out = append(out, namedFile{flag: "--" + f.name, what: f.what, path: fl.Value.String(), out: true})
		}
	}
	return out
}

// clash is exit 2 when a file the command writes is the same file as one
// listed before it (an input, the results stream, another report): writing
// it would destroy the other. It names both flags and the path.
func clash(files []namedFile) error {
	for j, w := range files {
		if !w.out {
			continue
		}
		for _, o := range files[:j] {
			if sameFile(o.path, w.path) {
				return usageErr("%s %s is the same file as %s %s: %s would overwrite %s; give %s another path",
					w.flag, w.path, o.flag, o.path, w.what, o.what, w.flag)
			}
		}
	}
	return nil
}

// sameFile says whether a and b name one file: the same cleaned absolute
// path (its directory's symlinks resolved, for a file not yet written), or
// os.SameFile when both exist (a symlink, a hard link).
func sameFile(a, b string) bool {
	if canonicalPath(a) == canonicalPath(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

func canonicalPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		return filepath.Join(dir, filepath.Base(abs))
	}
	return abs
}

// guardStreams is exit 2, before anything is sent, when a results stream
// the command is about to create would overwrite a file: an input, a
// report of the same run, or — with --out given — a results file already
// there (an earlier run's, most likely). paths are the streams as resolved
// from --out (a prefix or a directory gives several).
func guardStreams(c *cobra.Command, paths []string) error {
	files := inputFiles(c, nil)
	for _, p := range paths {
		files = append(files, namedFile{flag: "--out", what: whatStream, path: p, out: true})
	}
	if err := clash(append(files, reportFiles(c)...)); err != nil {
		return err
	}
	if !c.Flags().Changed("out") {
		return nil // the default names carry the time: never an earlier run's
	}
	out, _ := c.Flags().GetString("out")
	for _, p := range paths {
		if err := refuseEarlierResults(out, p); err != nil {
			return err
		}
	}
	return nil
}

// refuseEarlierResults is exit 2 when path (a stream --out resolves to) is
// a regular file with something in it. An empty file (mktemp's) holds
// nothing to lose, and a device or pipe (/dev/stdout in a Kubernetes Job)
// is not overwritten by writing to it.
func refuseEarlierResults(out, path string) error {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return nil
	}
	if path == out {
		return usageErr("--out %s exists: it may be an earlier run's results; remove it or choose another path", out)
	}
	return usageErr("--out %s names %s, which exists: it may be an earlier run's results; remove it or choose another --out", out, path)
}

// checkFileClashes is the check every command runs before anything else:
// no report file may be an input or another report of the same run.
func checkFileClashes(c *cobra.Command, args []string) error {
	return clash(append(inputFiles(c, args), reportFiles(c)...))
}
