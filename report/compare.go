package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/results"
)

// Comparison is compare's document: one experiment against several
// targets, each run alone (its -o json; Document gives its report files).
type Comparison struct {
	Experiment string           `json:"experiment"` // the profile name, or "probe"
	Targets    []ComparedTarget `json:"targets"`
	// Interrupted says the comparison was cut short: partial, no verdict.
	Interrupted bool `json:"interrupted,omitempty"`
	// TailPlan labels a burst's sustained-rate row: "tail at 20/s for 3s".
	TailPlan string `json:"-"`
}

// TailPlan is Comparison.TailPlan for a burst's tail at rate (as the user
// wrote it) for tail.
func TailPlan(rate string, tail time.Duration) string {
	return fmt.Sprintf("tail at %s for %s", rate, tail)
}

// ComparedTarget is one target's entry.
type ComparedTarget struct {
	Target    string           `json:"target"`
	Report    *results.Report  `json:"report,omitempty"`    // profile runs
	Inference *probe.Inference `json:"inference,omitempty"` // --probe runs
	Requests  int              `json:"requests"`
	ElapsedS  float64          `json:"elapsed_s"`
	Results   string           `json:"results_file,omitempty"`
	// Grade is the response-contract grade of what this target answered.
	Grade *grade.Report `json:"grade"`
	Notes []string      `json:"notes,omitempty"`
	// Error says why this target could not be tested (exit 3).
	Error string `json:"error,omitempty"`
	// Stopped says the run was cut short ("interrupted"): partial, ungraded.
	Stopped string `json:"stopped,omitempty"`

	// Statuses counts every status the run saw.
	Statuses map[int]int `json:"-"`
	// Run is the target's run for the report files (HTML, JSON, JUnit).
	Run *Run `json:"-"`
}

// Document is the comparison's report document: one run per target, side
// by side; a target that could not be tested keeps its error.
func (c Comparison) Document(version string) Document {
	d := NewDocument(version, "compare", c.Experiment)
	kind := "attack"
	if c.Experiment == "probe" {
		kind = "probe"
	}
	for _, t := range c.Targets {
		if t.Run != nil {
			d.Runs = append(d.Runs, *t.Run)
			continue
		}
		d.Runs = append(d.Runs, Run{Target: t.Target, Kind: kind, Profile: c.Experiment, ResultsFile: t.Results,
			Notes: t.Notes, Error: t.Error, ElapsedS: t.ElapsedS})
	}
	return d
}

// CompareText prints the side-by-side table, then each target's verdict,
// evidence and notes.
func CompareText(w io.Writer, out Comparison) error {
	if out.Interrupted {
		Interrupted(w, "")
	}
	header := []string{out.Experiment}
	targetRow := []string{"spec"}
	for i, t := range out.Targets {
		// The renderer upper-cases the header and turns '.' and '_' into
		// spaces; the targets, which may be paths, go in the first row.
		header = append(header, fmt.Sprintf("target %d", i+1))
		targetRow = append(targetRow, t.Target)
	}
	rows := [][]string{targetRow}
	switch {
	case out.Experiment == "probe":
		rows = append(rows, probeRows(out.Targets)...)
	case out.Experiment == "burst":
		rows = append(rows, burstRows(out.TailPlan, out.Targets)...)
	default:
		rows = append(rows, profileRows(out.Targets)...)
	}
	rows = append(rows, row("rejection status", out.Targets, func(t *ComparedTarget) string { return rejectionStatuses(t.Statuses) }))
	rows = append(rows, row("grade", out.Targets, func(t *ComparedTarget) string {
		if t.Grade == nil {
			return "-"
		}
		// The caps' check IDs only: the full sentences follow below.
		var ids []string
		for _, c := range t.Grade.Caps {
			if i := strings.LastIndex(c, "("); i >= 0 && strings.HasSuffix(c, ")") {
				ids = append(ids, c[i+1:len(c)-1])
			} else {
				ids = append(ids, c)
			}
		}
		if len(ids) == 0 {
			return t.Grade.Letter
		}
		return t.Grade.Letter + " · capped by " + strings.Join(ids, ", ")
	}))
	if err := Table(w, header, rows); err != nil {
		return err
	}
	for i, t := range out.Targets {
		fmt.Fprintf(w, "target %d: %s\n", i+1, t.Target)
		switch {
		case t.Error != "":
			fmt.Fprintf(w, "  error: %s\n", t.Error)
		case t.Report != nil:
			fmt.Fprintf(w, "  %s\n", t.Report.Verdict)
		case t.Inference != nil:
			fmt.Fprintf(w, "  %s\n", t.Inference.Summary())
			for _, e := range t.Inference.Evidence {
				fmt.Fprintf(w, "  - %s\n", e)
			}
		}
		if t.Grade != nil {
			fmt.Fprintf(w, "  grade %s (score %d)\n", t.Grade.Letter, t.Grade.Score)
			for _, c := range t.Grade.Caps {
				fmt.Fprintf(w, "    capped at %s\n", c)
			}
		}
		notes := t.Notes
		if t.Report != nil {
			notes = t.Report.Notes
		}
		for _, n := range notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}

// row builds one table row, with "error" / "—" for targets without data.
func row(label string, ts []ComparedTarget, cell func(*ComparedTarget) string) []string {
	r := []string{label}
	for i := range ts {
		r = append(r, cell(&ts[i]))
	}
	return r
}

func burstRows(tailPlan string, ts []ComparedTarget) [][]string {
	metric := func(label string, get func(m results.BurstMetrics) string) []string {
		return row(label, ts, func(t *ComparedTarget) string {
			if t.Report == nil {
				return missing(t)
			}
			m := t.Report.Metrics.Burst
			if m == nil {
				return "?"
			}
			return get(*m)
		})
	}
	return [][]string{
		metric("burst size", func(m results.BurstMetrics) string { return fmt.Sprint(m.Size) }),
		metric("admitted in the burst", func(m results.BurstMetrics) string { return fmt.Sprint(m.Admitted) }),
		metric("of which delayed (queued)", func(m results.BurstMetrics) string { return fmt.Sprint(m.Delayed) }),
		metric("added latency p50 / p99 / max", func(m results.BurstMetrics) string {
			return fmt.Sprintf("%s / %s / %s", msStr(m.AddedP50), msStr(m.AddedP99), msStr(m.AddedMax))
		}),
		metric("rejected", func(m results.BurstMetrics) string { return fmt.Sprint(m.Rejected) }),
		metric("errors", func(m results.BurstMetrics) string { return fmt.Sprint(m.Errors) }),
		metric("sustained admitted rate", func(m results.BurstMetrics) string {
			if m.TailSent == 0 {
				return "— (no --tail)"
			}
			return fmt.Sprintf("%.1f/s (%s)", m.TailRate, tailPlan)
		}),
		metric("send spread", func(m results.BurstMetrics) string { return msStr(m.SendSpread) }),
	}
}

// profileRows lines up the profiles' own rows by label, in first-seen order.
func profileRows(ts []ComparedTarget) [][]string {
	var labels []string
	cells := map[string]map[int]string{}
	for i, t := range ts {
		if t.Report == nil {
			continue
		}
		for _, r := range t.Report.Rows {
			if len(r) < 2 {
				continue
			}
			if cells[r[0]] == nil {
				cells[r[0]] = map[int]string{}
				labels = append(labels, r[0])
			}
			cells[r[0]][i] = r[1]
		}
	}
	var rows [][]string
	for _, l := range labels {
		r := []string{l}
		for i := range ts {
			v, ok := cells[l][i]
			if !ok {
				v = missing(&ts[i])
			}
			r = append(r, v)
		}
		rows = append(rows, r)
	}
	return rows
}

func probeRows(ts []ComparedTarget) [][]string {
	inf := func(label string, get func(i *probe.Inference) string) []string {
		return row(label, ts, func(t *ComparedTarget) string {
			if t.Inference == nil {
				return missing(t)
			}
			return get(t.Inference)
		})
	}
	return [][]string{
		inf("inferred family", func(i *probe.Inference) string { return i.Family }),
		inf("parameters", func(i *probe.Inference) string {
			s := i.Summary()
			if p, ok := strings.CutPrefix(s, i.Family+": "); ok {
				return p
			}
			return s
		}),
		inf("confidence", func(i *probe.Inference) string { return fmt.Sprintf("%.2f", i.Confidence) }),
		inf("scope", func(i *probe.Inference) string { return i.Scope }),
		inf("replicas / store failure", replicaAndStoreRow),
		inf("decisions explained", func(i *probe.Inference) string { return fmt.Sprintf("%d of %d", i.Explained, i.Decisions) }),
		row("requests / time", ts, func(t *ComparedTarget) string {
			return fmt.Sprintf("%d in %.1f s", t.Requests, t.ElapsedS)
		}),
	}
}

// replicaAndStoreRow is compare's row for what a fleet showed: replicas
// counting alone, and whether the limiter failed open or closed when its
// store went away ("—" when neither was seen).
func replicaAndStoreRow(i *probe.Inference) string {
	var parts []string
	if i.Replicas > 1 {
		parts = append(parts, fmt.Sprintf("%d replicas (effective limit %d)", i.Replicas, i.EffectiveLimit))
	}
	if i.StoreFailure != "" {
		parts = append(parts, "fails "+i.StoreFailure)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

func missing(t *ComparedTarget) string {
	if t.Error != "" {
		return "error"
	}
	return "—"
}

// rejectionStatuses lists the non-2xx statuses a run saw, e.g. "503" or
// "429, 503".
func rejectionStatuses(st map[int]int) string {
	var codes []int
	for code, n := range st {
		if n > 0 && (code < 200 || code >= 300) {
			codes = append(codes, code)
		}
	}
	if len(codes) == 0 {
		if len(st) == 0 {
			return "—"
		}
		return "none"
	}
	sort.Ints(codes)
	s := make([]string, len(codes))
	for i, c := range codes {
		s[i] = fmt.Sprint(c)
	}
	return strings.Join(s, ", ")
}

func msStr(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
