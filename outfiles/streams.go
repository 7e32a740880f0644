package outfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// Base is the name a command's results stream gets when none is given:
// ratecheck-COMMAND-TIME, the time to the second, so that a default name
// is never an earlier run's.
func Base(command string, now time.Time) string {
	return "ratecheck-" + command + "-" + now.Format("20060102-150405")
}

// StreamPath is the results stream of a command that writes one: out as
// given (its name picks the format: compact for .rcs, JSON Lines
// otherwise), else Base with the command's own format. An attack at full
// speed records millions of requests: compact, about a twentieth of JSON
// Lines ('report -o jsonl' converts it). A probe's few thousand are JSON
// Lines, for jq and the eye.
func StreamPath(command, out string, now time.Time) string {
	switch {
	case out != "":
		return out
	case command == "attack":
		return Base(command, now) + results.CompactExt
	}
	return Base(command, now) + ".jsonl"
}

// StreamPaths names the results streams of n runs from --out. One run
// writes out as given (base.jsonl when out is "", or that name inside a
// directory); several are numbered: BASE-N.jsonl here, those names inside
// a directory, or PREFIX-N.jsonl for any other out (a trailing .jsonl on
// the prefix is dropped). A directory is one that exists, or one written
// with a trailing slash, which is created.
func StreamPaths(base, out string, n int) ([]string, error) {
	dir, err := isDir(out)
	if err != nil {
		return nil, err
	}
	if n == 1 {
		switch {
		case out == "":
			return []string{base + ".jsonl"}, nil
		case dir:
			return []string{filepath.Join(out, base+".jsonl")}, nil
		}
		return []string{out}, nil
	}
	prefix := base
	switch {
	case dir:
		prefix = filepath.Join(out, base)
	case out != "":
		prefix = strings.TrimSuffix(out, ".jsonl")
	}
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("%s-%d.jsonl", prefix, i+1)
	}
	return paths, nil
}

// isDir says whether out names a directory: one that exists, or one
// written with a trailing slash, which it creates.
func isDir(out string) (bool, error) {
	if out == "" {
		return false, nil
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		return true, os.MkdirAll(out, 0o755)
	}
	fi, err := os.Stat(out)
	return err == nil && fi.IsDir(), nil
}

// HoldsData says whether writing a results stream at path could destroy
// something: a regular file with something in it (an earlier run's
// results, most likely). An empty file (mktemp's) holds nothing to lose,
// and a device or pipe (/dev/stdout in a Kubernetes Job) is not
// overwritten by writing to it.
func HoldsData(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Size() > 0
}

// GuardStreams refuses, before anything is sent, results streams about to
// be created at paths that would overwrite a file: an input, a report of
// the same run (Clash, in the order inputs, streams, reports), or a
// results file already there when out names the streams (an earlier
// run's, most likely). out is the flag that names them and its value as
// the user gave it, "" when not given: the default names carry the time,
// never an earlier run's.
func GuardStreams(inputs []File, out File, paths []string, reports []File) error {
	files := inputs
	for _, p := range paths {
		files = append(files, File{Flag: out.Flag, What: out.What, Path: p, Out: true})
	}
	if err := Clash(append(files, reports...)); err != nil || out.Path == "" {
		return err
	}
	for _, p := range paths {
		switch {
		case !HoldsData(p):
		case p == out.Path:
			return fmt.Errorf("%s %s exists: it may be an earlier run's results; remove it or choose another path", out.Flag, out.Path)
		default:
			return fmt.Errorf("%s %s names %s, which exists: it may be an earlier run's results; remove it or choose another %s", out.Flag, out.Path, p, out.Flag)
		}
	}
	return nil
}
