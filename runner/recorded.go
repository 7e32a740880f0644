package runner

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/report"
	"github.com/ratecheck/ratecheck/results"
)

// Recorded reads the results streams at paths back into one document,
// without touching a target: the streams of a sharded run merged into its
// one run, else each stream's own run, a probe's inferred and graded
// again. With exps, each run (a probe's only) is held to them and the
// document has the check's outcome. Every error is a refusal: a path that
// is no results stream, shards that do not make one run.
func Recorded(paths []string, exps []expect.Expectation, version string) (report.Document, error) {
	for _, p := range paths {
		if err := checkStreamPath(p); err != nil {
			return report.Document{}, err
		}
	}
	merged, err := mergeIfSharded(paths)
	switch {
	case err != nil:
		return report.Document{}, err
	case merged != nil && len(exps) > 0:
		return report.Document{}, refused(fmt.Errorf("--expect: the streams hold an attack (%s), not a probe: there is nothing to compare expectations with", merged.Header.Profile))
	case merged != nil:
		return report.NewDocument(version, merged.Header.Command, merged.Header.Profile, report.MergedRun(merged)), nil
	}
	var runs []report.Run
	var headers []results.StreamHeader
	var probes []*probe.Result // per run; nil for an attack's stream
	for _, p := range paths {
		if h, err := results.PeekHeader(p); err == nil && !report.IsProbeStream(h) {
			// An attack's stream, of any length, is read in bounded memory.
			d, err := results.DigestStreamFile(p)
			if err != nil {
				return report.Document{}, streamReadErr(p, err)
			}
			headers, probes, runs = append(headers, d.Header), append(probes, nil), append(runs, report.AttackFromDigest(d, p))
			continue
		}
		rec, err := readStream(p) // a probe's: its inference needs every result
		if err != nil {
			return report.Document{}, err
		}
		headers = append(headers, rec.Header)
		res := probe.FromRecorded(rec) // a probe's stream is inferred and graded again
		res.ResultsFile = p
		probes, runs = append(probes, res), append(runs, report.ProbeRun(rec.Header.Target, rec.Header.URL, res, grade.OfProbe(res)))
	}
	doc := report.RecordedDocument(version, headers, runs...)
	if len(exps) == 0 {
		return doc, nil
	}
	interrupted := false
	for i := range doc.Runs {
		r := &doc.Runs[i]
		if probes[i] == nil {
			return doc, refused(fmt.Errorf("--expect: %s holds an attack (%s), not a probe: there is nothing to compare expectations with", paths[i], r.Profile))
		}
		r.Expectations, r.Outcome = expect.OfRun(exps, probes[i], r.Grade, nil)
		interrupted = interrupted || r.Stopped != ""
	}
	doc.Outcome = Outcome(doc.Runs, interrupted)
	return doc, nil
}

// Interrupted says whether any run of doc was cut short.
func Interrupted(doc report.Document) bool {
	for _, r := range doc.Runs {
		if r.Stopped != "" {
			return true
		}
	}
	return false
}

// RecordedErr is the end the commands that made runs read back gave them:
// an *UntestedError naming each stream and why when a run was cut short
// (interrupted, or a stream with no end record), an attack had nothing
// answered with an admission or a rejection (attack's own rule), or an
// inference is inconclusive; nil when every run tested its target.
func RecordedErr(runs []report.Run) error {
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
	return untested(errors.New(strings.Join(why, "; ")))
}

// mergeIfSharded merges the streams when they are shards of a run (any of
// them is): nil, nil when none is. Streams that do not make exactly one
// run are refused, naming the files or the missing shards.
func mergeIfSharded(paths []string) (*results.Merged, error) {
	hs := make([]results.StreamHeader, len(paths))
	sharded := false
	for i, p := range paths {
		h, err := results.PeekHeader(p)
		if err != nil {
			return nil, refused(err)
		}
		hs[i], sharded = h, sharded || h.Shard != nil
	}
	if !sharded {
		return nil, nil
	}
	if err := results.CheckShards(paths, hs); err != nil {
		return nil, refused(err)
	}
	// What remains to fail is reading a file: the user's to fix as well.
	m, err := results.MergeShards(paths)
	if err != nil {
		return nil, refused(err)
	}
	return m, nil
}

func readStream(path string) (*results.Recorded, error) {
	if err := checkStreamPath(path); err != nil {
		return nil, err
	}
	rec, err := results.ReadStreamFile(path)
	if err != nil {
		return nil, streamReadErr(path, err)
	}
	return rec, nil
}

// Convert writes the one results stream in paths, either format, to w as
// JSON Lines (report -o jsonl): the lines the same run's JSON Lines stream
// holds. A tail cut mid-write is said on stderr; what came before it is
// converted.
func Convert(w, stderr io.Writer, paths []string) error {
	if len(paths) != 1 {
		return refused(fmt.Errorf("-o jsonl converts one results stream (got %d): run it once per file", len(paths)))
	}
	path := paths[0]
	if err := checkStreamPath(path); err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return streamReadErr(path, err)
	}
	defer f.Close()
	sr, err := results.ConvertToJSONLines(w, f)
	if err != nil {
		return streamReadErr(path, err)
	}
	if sr.Truncated {
		fmt.Fprintf(stderr, "ratecheck: %s: its last record was cut mid-write; the lines before it are converted\n", path)
	}
	return nil
}

// streamReadErr refuses a results stream that cannot be read, naming it
// (a compact stream's damage names the byte and the result).
func streamReadErr(path string, err error) error {
	var perr *os.PathError
	if errors.As(err, &perr) {
		return refused(fmt.Errorf("%v (name a results stream: the --out file of attack, probe, check or compare)", err))
	}
	return refused(fmt.Errorf("%s: %v", path, err))
}

// checkStreamPath refuses, saying what to name instead, a path that is no
// results file: missing, unreadable, or a directory.
func checkStreamPath(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return refused(fmt.Errorf("%v (name a results stream: the --out file of attack, probe, check or compare)", err))
	case fi.IsDir():
		return refused(fmt.Errorf("%s is a directory: name the results streams in it, e.g. %s", path, filepath.Join(path, "*.jsonl")))
	}
	return nil
}
