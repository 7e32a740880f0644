package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/results"
)

// SchemaVersion versions the JSON report (docs/json.md). Adding a field
// keeps the version; renaming, removing or changing the meaning of one
// bumps it.
const SchemaVersion = 1

// Document is one report: the runs of one command (attack and probe have
// one run, compare and check one per target). The JSON, JUnit and HTML
// renderers all draw from it, and JSON is its serialisation.
type Document struct {
	SchemaVersion int    `json:"schema_version"`
	Tool          string `json:"tool"` // "ratecheck"
	Version       string `json:"version"`
	// Command made the runs: attack, probe, compare or check.
	Command string `json:"command"`
	// Experiment is what each run was: a profile name, or "probe".
	Experiment string `json:"experiment"`
	Runs       []Run  `json:"runs"`
	// Outcome is the overall result of a check: pass, fail or untested
	// (see expect.Verdict). Empty for the other commands.
	Outcome string `json:"outcome,omitempty"`
	// Interrupted says a run was cut short: what the document shows is
	// partial, and it holds no pass/fail verdict.
	Interrupted bool `json:"interrupted,omitempty"`
}

// settle derives the document-level facts from its runs before rendering:
// a document with a cut-short run is interrupted, and its outcome is
// untested whatever its expectations say.
func (d *Document) settle() {
	for _, r := range d.Runs {
		if r.Stopped != "" {
			d.Interrupted = true
		}
	}
	if d.Interrupted && d.Outcome != "" {
		d.Outcome = expect.Untested
	}
}

// interruptedBanner is the line at the top of an interrupted document.
const interruptedBanner = "INTERRUPTED: partial results, no verdict"

// Run is one experiment against one target.
type Run struct {
	Target  string `json:"target"`         // as the user wrote it
	URL     string `json:"url,omitempty"`  // what was actually sent to
	Name    string `json:"name,omitempty"` // check --config: the endpoint's name
	Kind    string `json:"kind"`           // "attack" or "probe"
	Profile string `json:"profile,omitempty"`
	// Start is the wall clock of offset 0; every time in Results is an
	// offset from it.
	Start       time.Time `json:"start"`
	ElapsedS    float64   `json:"elapsed_s"`
	ResultsFile string    `json:"results_file,omitempty"`
	// Complete is false when the run was cut short (interrupted, or a
	// results stream with no end record); Stopped then says why.
	Complete bool            `json:"complete"`
	Stopped  string          `json:"stopped,omitempty"`
	Summary  results.Summary `json:"summary"`
	// Verdict is the one-line conclusion: an attack profile's verdict or
	// the inference's summary.
	Verdict string `json:"verdict,omitempty"`
	// Metrics are the attack profile's own figures (a results stream
	// read back has them when the run concluded).
	Metrics      any              `json:"metrics,omitempty"`
	Inference    *probe.Inference `json:"inference,omitempty"`
	Grade        *grade.Report    `json:"grade,omitempty"`
	Expectations []expect.Outcome `json:"expectations,omitempty"`
	// Outcome is this run's check result: pass, fail or untested.
	Outcome string   `json:"outcome,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Error says why the target could not be tested.
	Error string `json:"error,omitempty"`

	// A run split into shards (README: "Beyond one machine") and merged:
	// the run id the shards share, the instant they were told to start
	// at, each shard as its stream recorded it, and the spread of the
	// instants they actually began.
	RunID       string                 `json:"run_id,omitempty"`
	StartAt     time.Time              `json:"start_at,omitzero"`
	Shards      []results.ShardSummary `json:"shards,omitempty"`
	StartSpread time.Duration          `json:"start_spread_ns,omitempty"`

	// Rows are an attack profile's table rows, for text and HTML.
	Rows [][]string `json:"-"`
	// Results are every request, ordered by send time, for the HTML
	// timeline. Not in JSON: the results stream has them.
	Results []results.Result `json:"-"`
	// RTT is the smallest round trip of a decided request: the timing
	// uncertainty of the arrival estimates.
	RTT time.Duration `json:"-"`
}

// NewDocument starts a document for command.
func NewDocument(version, command, experiment string, runs ...Run) Document {
	return Document{SchemaVersion: SchemaVersion, Tool: "ratecheck", Version: version, Command: command,
		Experiment: experiment, Runs: runs}
}

// WriteJSON writes the document as indented JSON.
func WriteJSON(w io.Writer, d Document) error {
	d.settle()
	if d.Runs == nil {
		d.Runs = []Run{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // targets are URLs: keep their & readable
	return enc.Encode(d)
}

// SortResults orders results by send time (the stream is written in
// completion order), then sequence.
func SortResults(rs []results.Result) []results.Result {
	out := slices.Clone(rs)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Sent != out[j].Sent {
			return out[i].Sent < out[j].Sent
		}
		return out[i].Seq < out[j].Seq
	})
	return out
}

// Summarize recomputes the summary of a set of results, as the engine's
// collector would have.
func Summarize(rs []results.Result) results.Summary {
	m := results.NewMetrics()
	for i := range rs {
		m.Add(&rs[i])
	}
	return m.Summary()
}

// ProbeRun builds the run of a probe from its result and grade (nil when
// it was not graded: an interrupted probe). elapsed ≤ 0 takes the last
// completion.
func ProbeRun(target, url string, res *probe.Result, g *grade.Report) Run {
	r := Run{Target: target, URL: url, Kind: "probe", Profile: "probe", Complete: true, Notes: res.Notes,
		ResultsFile: res.ResultsFile, Grade: g}
	i := res.Inference
	r.Inference = &i
	r.Verdict = i.Summary()
	if obs := res.Observation; obs != nil {
		r.Start, r.RTT = obs.Start, obs.RTT
		r.Results = SortResults(obs.Results)
		r.Stopped = obs.Stopped
		r.Complete = obs.Stopped == ""
	}
	r.Summary = Summarize(r.Results)
	r.ElapsedS = res.Elapsed.Seconds()
	if r.ElapsedS <= 0 {
		r.ElapsedS = lastDone(r.Results).Seconds()
	}
	return r
}

// AttackRun builds the run of an attack profile. rep may be nil when the
// profile's analysis is not at hand (a results stream read back).
func AttackRun(target, url, profile string, start time.Time, results []results.Result, rep *results.Report, elapsedS float64, notes []string) Run {
	r := Run{Target: target, URL: url, Kind: "attack", Profile: profile, Start: start, Complete: true,
		Results: SortResults(results), Notes: notes}
	r.RTT = probe.MinRTT(r.Results)
	r.Summary = Summarize(r.Results)
	if rep != nil {
		r.Verdict, r.Metrics, r.Rows = rep.Verdict, rep.Metrics, rep.Rows
		if r.Profile == "" {
			r.Profile = rep.Profile
		}
		if len(rep.Notes) > 0 {
			r.Notes = rep.Notes
		}
	}
	r.ElapsedS = elapsedS
	if r.ElapsedS <= 0 {
		r.ElapsedS = lastDone(r.Results).Seconds()
	}
	return r
}

// AttackFromStream builds the run an attack's results stream recorded,
// without touching the target: the verdict, table and metrics the live run
// stored in the end record (only counts when the run ended before
// concluding). A probe's stream is inferred again by probe.FromRecorded
// instead. It holds every result; AttackFromDigest reads a run of any
// length in bounded memory.
func AttackFromStream(rec *results.Recorded, path string) Run {
	return attackFromStream(rec.Header, rec.End, rec.Truncated, path, rec.Results, Summarize(rec.Results), lastDone(rec.Results), false)
}

// AttackFromDigest is AttackFromStream for a stream read into its digest:
// the figures are every request's, the charts draw its sample.
func AttackFromDigest(d *results.Digest, path string) Run {
	return attackFromStream(d.Header, d.End, d.Truncated, path, d.Sample, d.Summary, d.LastDone, d.Sampled)
}

func attackFromStream(h results.StreamHeader, end *results.StreamEnd, truncated bool, path string, rs []results.Result,
	sum results.Summary, last time.Duration, sampled bool) Run {
	var notes []string
	elapsed := 0.0
	if end != nil {
		notes = slices.Clone(end.Notes)
		elapsed = time.Duration(end.Elapsed).Seconds()
	} else {
		notes = append(notes, "the results stream has no end record: the run was interrupted, and this report covers the requests recorded before that")
	}
	if truncated {
		notes = append(notes, "the results stream's last record was cut mid-write and is left out")
	}
	var rep *results.Report
	if end != nil && end.Outcome != nil {
		o := end.Outcome
		rep = &results.Report{Profile: h.Profile, Verdict: o.Verdict, Rows: o.Rows, Metrics: o.Metrics}
	}
	r := AttackRun(h.Target, h.URL, h.Profile, h.Start, rs, rep, elapsed, notes)
	r.Summary = sum
	if elapsed <= 0 {
		r.ElapsedS = last.Seconds()
	}
	if note := results.SampleNote(sampled, len(rs), sum.Requests); note != "" {
		r.Notes = append(r.Notes, note)
	}
	if rep == nil {
		r.Verdict = fmt.Sprintf("%s profile: %s (the run ended before the profile's verdict; these are the recorded requests' counts)", orDash(h.Profile), countsLine(r.Summary))
	}
	r.ResultsFile = path
	r.Complete = end != nil && end.Stopped == ""
	if end == nil || end.Stopped != "" {
		r.Stopped = "interrupted"
	}
	return r
}

// MergedRun builds the one run the shards of a sharded run make together
// (results.MergeShards). Its Results are a sample when the run is large;
// the summary is every request's.
func MergedRun(m *results.Merged) Run {
	h := m.Header
	r := Run{Target: h.Target, URL: h.URL, Kind: "attack", Profile: h.Profile, Start: h.Start, Complete: m.Stopped == "",
		Stopped: m.Stopped, Results: m.Sample, Summary: m.Summary, Verdict: m.Report.Verdict, Rows: m.Report.Rows,
		Notes: slices.Clone(m.Notes), ElapsedS: m.Elapsed.Seconds(), RunID: m.RunID, StartAt: h.StartAt,
		Shards: m.Shards, StartSpread: m.StartSpread}
	if m.Concluded {
		r.Metrics = m.Report.Metrics
	}
	files := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		files[i] = s.File
	}
	r.ResultsFile = strings.Join(files, ", ")
	r.RTT = probe.MinRTT(r.Results)
	if note := results.SampleNote(m.Sampled, len(m.Sample), m.Summary.Requests); note != "" {
		r.Notes = append(r.Notes, note)
	}
	return r
}

// IsProbeStream reports whether a stream holds a probe experiment: written
// by probe or check, or by compare --probe.
func IsProbeStream(h results.StreamHeader) bool {
	return h.Command == "probe" || h.Command == "check" || (h.Command == "compare" && h.Profile == "probe")
}

func lastDone(rs []results.Result) time.Duration {
	var d time.Duration
	for i := range rs {
		d = max(d, rs[i].Done)
	}
	return d
}

func countsLine(s results.Summary) string {
	parts := []string{fmt.Sprintf("%d requests", s.Requests), fmt.Sprintf("%d admitted", s.Admitted), fmt.Sprintf("%d rejected", s.Rejected)}
	if s.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d errors", s.Errors))
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// Counts tallies a run's requests by outcome as the timeline draws them.
type Counts struct {
	Requests, Admitted, Rejected, Errors, Other int
}

// CountResults tallies results: admitted (2xx), rejected (429/503/403),
// errors (no response) and other statuses.
func CountResults(rs []results.Result) Counts {
	var c Counts
	for i := range rs {
		c.Requests++
		switch outcomeOf(&rs[i]) {
		case outAdmitted:
			c.Admitted++
		case outRejected:
			c.Rejected++
		case outError:
			c.Errors++
		default:
			c.Other++
		}
	}
	return c
}

const (
	outAdmitted = "admitted"
	outRejected = "rejected"
	outError    = "error"
	outOther    = "other"
)

func outcomeOf(r *results.Result) string {
	switch {
	case r.Error != "":
		return outError
	case r.Admitted():
		return outAdmitted
	case r.Rejected():
		return outRejected
	}
	return outOther
}

// AttackRunFromFile builds a live attack's report run: the profile's verdict
// and figures from rep, the requests to draw from its results stream at
// path, read back in bounded memory (an even sample of a long run).
func AttackRunFromFile(spec, path string, rep results.Report) Run {
	var run Run
	if d, err := results.DigestStreamFile(path); err == nil {
		elapsed := 0.0
		if d.End != nil {
			elapsed = float64(d.End.Elapsed) / 1e9
		}
		run = AttackRun(spec, d.Header.URL, rep.Profile, d.Header.Start, d.Sample, &rep, elapsed, rep.Notes)
		run.Summary = d.Summary
		if note := results.SampleNote(d.Sampled, len(d.Sample), d.Summary.Requests); note != "" {
			run.Notes = append(slices.Clone(run.Notes), note)
		}
		run.Complete = d.End != nil && d.End.Stopped == ""
		if d.End != nil {
			run.Stopped = d.End.Stopped
		}
	} else {
		run = AttackRun(spec, "", rep.Profile, time.Time{}, nil, &rep, 0, append(rep.Notes, "the results stream could not be read back: no per-request detail"))
	}
	if rep.Summary.Requests > 0 {
		run.Summary = rep.Summary // the live run's own figures
	}
	run.ResultsFile = path
	return run
}
