package results

import (
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// Merging the shards of one run.
//
// The shards of a run (see Shard) share a run id and offset 0 (the common
// start instant), so their results are one run's: MergeShards reads their
// streams one result at a time — aggregates, never the whole files — and
// concludes as the profile would have on one machine: steady's rate over
// the common span, a burst's admitted and rejected counts and its send
// spread across all the shards, the clients' amplification, the straddle's
// admitted total against L. Latency and pacing percentiles come from the
// shards' HDR histograms merged exactly.

// MergeSample is the most results a merged run keeps for drawing its
// timeline (an even random sample beyond that).
const MergeSample = 10000

// A MergeError says why streams do not make one run (different runs, a
// shard missing or given twice, a stream that is not a shard): a usage
// error, naming the files.
type MergeError struct{ Msg string }

func (e *MergeError) Error() string { return e.Msg }

// ShardSummary is one shard as its stream recorded it.
type ShardSummary struct {
	File    string    `json:"file"`
	Shard   Shard     `json:"shard"`
	Host    string    `json:"host,omitempty"`
	BeganAt time.Time `json:"began_at"`
	// Late is how long after the common start instant the shard's wait
	// ended, on its own clock.
	Late     time.Duration `json:"late_ns"`
	Requests int           `json:"requests"`
	Complete bool          `json:"complete"`
	Verdict  string        `json:"verdict,omitempty"`
}

// Merged is the one run the shards' streams make together.
type Merged struct {
	RunID  string
	Header StreamHeader // the first shard's, with Shard cleared
	Shards []ShardSummary
	// StartSpread is the spread of the instants the shards began, as
	// their own clocks read them (the hosts' clock offset comes on top).
	StartSpread time.Duration
	Summary     Summary
	// Report is the profile's conclusion over every shard when all of
	// them concluded (Concluded); otherwise its verdict gives the counts.
	Report    Report
	Concluded bool
	Stopped   string        // "interrupted" when a shard was cut short or has no end record
	Elapsed   time.Duration // the longest shard's
	Notes     []string
	// Sample holds the results (all of them up to MergeSample, else an
	// even random sample), in send order.
	Sample  []Result
	Sampled bool
}

// PeekHeader reads only the header of the stream in path.
func PeekHeader(path string) (StreamHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return StreamHeader{}, err
	}
	defer f.Close()
	sr, err := NewStreamReader(f)
	if err != nil {
		return StreamHeader{}, fmt.Errorf("%s: %w", path, err)
	}
	return sr.Header, nil
}

// CheckShards reports whether the streams with these headers (of the
// files paths) are every shard of one run, exactly once: a *MergeError
// naming the files or the missing shards when not.
func CheckShards(paths []string, hs []StreamHeader) error {
	byRun := map[string][]string{}
	var runs []string
	for i, h := range hs {
		if h.Shard == nil || h.RunID == "" {
			return &MergeError{fmt.Sprintf("%s is not a shard of a run (its header has no run id and shard), so it cannot be merged with %s", paths[i], others(paths, i))}
		}
		if _, ok := byRun[h.RunID]; !ok {
			runs = append(runs, h.RunID)
		}
		byRun[h.RunID] = append(byRun[h.RunID], paths[i])
	}
	if len(runs) > 1 {
		parts := make([]string, len(runs))
		for i, r := range runs {
			parts[i] = fmt.Sprintf("run %s: %s", r, strings.Join(byRun[r], ", "))
		}
		return &MergeError{"the streams are of different runs (" + strings.Join(parts, "; ") + "): give the shards of one run"}
	}
	n := hs[0].Shard.N
	seen := map[int]string{}
	for i, h := range hs {
		switch {
		case h.Shard.N != n:
			return &MergeError{fmt.Sprintf("%s is shard %s but %s is shard %s of run %s: the shard counts differ", paths[i], h.Shard, paths[0], hs[0].Shard, h.RunID)}
		case h.Profile != hs[0].Profile || h.URL != hs[0].URL:
			return &MergeError{fmt.Sprintf("%s (%s at %s) and %s (%s at %s) share run id %s but not the plan", paths[i], h.Profile, h.URL, paths[0], hs[0].Profile, hs[0].URL, h.RunID)}
		case seen[h.Shard.K] != "":
			return &MergeError{fmt.Sprintf("shard %s of run %s is given twice: %s and %s", h.Shard, h.RunID, seen[h.Shard.K], paths[i])}
		}
		seen[h.Shard.K] = paths[i]
	}
	var missing []string
	for k := 1; k <= n; k++ {
		if seen[k] == "" {
			missing = append(missing, Shard{K: k, N: n}.String())
		}
	}
	if len(missing) > 0 {
		return &MergeError{fmt.Sprintf("run %s is missing shard %s (%d of %d streams given): give every shard's stream", hs[0].RunID, strings.Join(missing, ", "), len(hs), n)}
	}
	return nil
}

func others(paths []string, i int) string {
	rest := slices.Delete(slices.Clone(paths), i, i+1)
	if len(rest) == 0 {
		return "nothing"
	}
	return strings.Join(rest, ", ")
}

// MergeShards reads the streams of every shard of one run (see
// CheckShards) and merges them into one run.
func MergeShards(paths []string) (*Merged, error) {
	hs := make([]StreamHeader, len(paths))
	for i, p := range paths {
		h, err := PeekHeader(p)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	if err := CheckShards(paths, hs); err != nil {
		return nil, err
	}
	order := make([]int, len(paths)) // by shard number
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return hs[order[a]].Shard.K < hs[order[b]].Shard.K })
	g := newMerger(hs[order[0]].Profile, earliestStart(hs))
	for _, i := range order {
		if err := g.read(paths[i]); err != nil {
			return nil, err
		}
	}
	return g.conclude(), nil
}

// earliestStart is the earliest of the headers' offset 0: the origin of
// the merged run's common wall clock.
func earliestStart(hs []StreamHeader) time.Time {
	var t time.Time
	for _, h := range hs {
		if !h.Start.IsZero() && (t.IsZero() || h.Start.Before(t)) {
			t = h.Start
		}
	}
	return t
}

// merger aggregates the shards' results as they are read.
type merger struct {
	profile string
	// base is the merged run's offset 0: each shard's results are moved
	// onto it by how much later the shard's own offset 0 was. Shards told
	// one instant move by nothing; shards told different instants (a
	// relative --start-at resolved by each process) keep their real
	// distance instead of appearing to have sent together.
	base   time.Time
	shards []*shardRead
	total  *Metrics
	burst  [][]*Result // each shard's burst requests: at most attack.ConnsCeiling per shard
	tail   Count
	// storm/backoff: each client's admitted answers' completion times,
	// and attempts per 100 ms from offset 0 (bins grow with the run's
	// length, not its size).
	clientDone map[int][]time.Duration
	bins       map[int64]int
	sample     *sampler
}

type shardRead struct {
	path    string
	header  StreamHeader
	shift   time.Duration // from the merged run's offset 0 to this shard's
	end     *StreamEnd
	trunc   bool
	metrics *Metrics
}

const clientsBin = 100 * time.Millisecond

func newMerger(profile string, base time.Time) *merger {
	return &merger{profile: profile, base: base, total: NewMetrics(), clientDone: map[int][]time.Duration{}, bins: map[int64]int{},
		sample: newSampler()}
}

func (g *merger) read(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return g.readFrom(path, f)
}

func (g *merger) readFrom(path string, r io.Reader) error {
	sr, err := NewStreamReader(r)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s := &shardRead{path: path, header: sr.Header, metrics: NewMetrics()}
	if !g.base.IsZero() && !sr.Header.Start.IsZero() {
		s.shift = sr.Header.Start.Sub(g.base)
	}
	g.burst = append(g.burst, nil)
	var res Result // reused: what is kept is copied
	// Only the sample needs a result's headers (the burst's counts and
	// times do not): the others are read without.
	for sr.setLean(!g.sample.wants()); sr.NextInto(&res); sr.setLean(!g.sample.wants()) {
		shiftResult(&res, s.shift)
		s.metrics.Add(&res)
		g.add(&res)
	}
	if err := sr.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	s.end, s.trunc = sr.End, sr.Truncated
	g.shards = append(g.shards, s)
	g.total.Merge(s.metrics)
	return nil
}

// shiftResult moves r's instants by d (a result never answered keeps its
// FirstByte at 0).
func shiftResult(r *Result, d time.Duration) {
	r.Scheduled, r.Sent, r.Done = r.Scheduled+d, r.Sent+d, r.Done+d
	if r.FirstByte != 0 {
		r.FirstByte += d
	}
}

func (g *merger) add(r *Result) {
	switch {
	case r.Phase == "burst":
		last, c := len(g.burst)-1, r.Clone()
		g.burst[last] = append(g.burst[last], &c)
	case r.Phase == "tail":
		g.tail.Total++
		if r.Admitted() {
			g.tail.Admitted++
		}
	case g.profile == "storm" || g.profile == "backoff":
		if r.Admitted() {
			g.clientDone[r.Client] = append(g.clientDone[r.Client], r.Done)
		}
		g.bins[int64(r.Sent/clientsBin)]++
	}
	g.sample.add(r)
}

func (g *merger) conclude() *Merged {
	first := g.shards[0]
	m := &Merged{RunID: first.header.RunID, Header: first.header, Summary: g.total.Summary(), Concluded: true}
	m.Header.Shard, m.Header.BeganAt, m.Header.Host = nil, time.Time{}, ""
	if !g.base.IsZero() {
		m.Header.Start = g.base
		if !m.Header.StartAt.IsZero() {
			m.Header.StartAt = g.base
		}
	}
	hosts := map[string]bool{}
	var lo, hi time.Time
	for _, s := range g.shards {
		h := s.header
		sum := ShardSummary{File: s.path, Shard: *h.Shard, Host: h.Host, BeganAt: h.BeganAt, Requests: s.metrics.Requests,
			Complete: s.end != nil && s.end.Stopped == ""}
		if !h.StartAt.IsZero() && !h.BeganAt.IsZero() {
			sum.Late = h.BeganAt.Sub(h.StartAt)
		}
		if lo.IsZero() || h.BeganAt.Before(lo) {
			lo = h.BeganAt
		}
		if h.BeganAt.After(hi) {
			hi = h.BeganAt
		}
		hosts[h.Host] = true
		if s.end == nil || s.end.Outcome == nil {
			m.Concluded = false
		} else {
			sum.Verdict = s.end.Outcome.Verdict
		}
		if !sum.Complete {
			m.Stopped = Interrupted
		}
		if s.end != nil {
			m.Elapsed = max(m.Elapsed, s.shift+time.Duration(s.end.Elapsed))
			for _, n := range s.end.Notes {
				m.Notes = append(m.Notes, fmt.Sprintf("shard %s: %s", h.Shard, n))
			}
		} else {
			m.Notes = append(m.Notes, fmt.Sprintf("shard %s: its stream %s has no end record: the run was interrupted, and this report covers the requests recorded before that", h.Shard, s.path))
		}
		if s.trunc {
			m.Notes = append(m.Notes, fmt.Sprintf("shard %s: the last record of %s was cut mid-write and is left out", h.Shard, s.path))
		}
		m.Shards = append(m.Shards, sum)
	}
	m.StartSpread = hi.Sub(lo)
	if note := g.startsApart(); note != "" {
		m.Notes = append(m.Notes, note)
	}
	if len(hosts) > 1 {
		m.Notes = append(m.Notes, fmt.Sprintf("the shards ran on %d hosts: times across them compare only up to the hosts' clock offset (NTP typically keeps a LAN within ~1 ms)", len(hosts)))
	}
	m.Sample, m.Sampled = g.sample.sample()
	m.Report = g.verdict(m)
	if why := m.Summary.Untested(m.Stopped); why != "" {
		m.Report.Verdict = "not tested: " + why
	}
	m.Report.Notes = m.Notes
	return m
}

// verdict is the merged run's report: the profile's conclusion over every
// shard when each of them concluded, else the recorded requests' counts. A
// burst whose shards went out further apart than one instant concludes
// nothing about one burst (Concluded turns false), whatever its counts.
func (g *merger) verdict(m *Merged) Report {
	outOfStep := g.outOfStep()
	if outOfStep != "" {
		m.Notes = append(m.Notes, outOfStep)
	}
	switch {
	case m.Concluded && outOfStep != "":
		m.Concluded = false
		rep := g.report(m.Summary)
		rep.Verdict = notOneInstantVerdict(rep, outOfStep)
		return rep
	case m.Concluded:
		return g.report(m.Summary)
	}
	return Report{Profile: g.profile, Summary: m.Summary, Verdict: fmt.Sprintf(
		"%s profile over %d shards: %d requests, %d admitted, %d rejected, %d errors (a shard ended before its verdict: these are the recorded requests' counts)",
		g.profile, len(g.shards), m.Summary.Requests, m.Summary.Admitted, m.Summary.Rejected, m.Summary.Errors)}
}
