package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe/expect"
	"golang.org/x/net/html"
)

// Why not html/template: its executor calls methods through reflect
// (MethodByName with a name known only at run time), and when such a call
// is reachable the Go linker must keep every exported method of every type
// converted to an interface, in case the call names it. That kept all of
// go-redis's command methods in the binary (4.2 MB of go-redis text with
// html/template linked, 0.57 MB without; the whole binary 31.4 MB, and
// 19.0 MB once the page was built without it). So
// the page is a golang.org/x/net/html node tree (htmlnode.go, htmlpage.go,
// htmlchart.go) written by html.Render, which escapes every text node and
// attribute value by construction: the same safety, no reflection.
// text/template has the same executor and is no alternative.

// WriteHTML renders the document as one self-contained HTML page: inline
// CSS and SVG, no script, no external resource, so it opens offline and
// prints. Every string from a run is a text node or an attribute value,
// which html.Render escapes.
func WriteHTML(w io.Writer, d Document) error {
	d.settle()
	return html.Render(w, document(pageNode(newPage(d))))
}

type page struct {
	Title    string
	Doc      Document
	Subtitle string
	Outcome  *banner
	Overview *overview
	Runs     []pageRun
}

type banner struct {
	Class, Text string
}

type overview struct {
	Heads []string
	Rows  [][]cell
}

type cell struct {
	Text, Class, Href string
}

type pageRun struct {
	Run
	Idx        int
	Anchor     string
	Heading    string
	Counts     Counts
	Statuses   string
	Latency    string
	GradeClass string
	Outcome    *banner
	Expect     []expectRow
	Checks     []checkRow
	Timeline   chart
	Intervals  chart
	LatencyC   chart
	Facts      [][2]string
	Alts       []string
}

type expectRow struct {
	expect.Outcome
	Class, Symbol string
}

type checkRow struct {
	grade.Check
	Class, Symbol string
	Refs          []cell
}

func newPage(d Document) page {
	p := page{Doc: d}
	what := d.Command
	if d.Experiment != "" && d.Experiment != d.Command && !(d.Command == "check" && d.Experiment == "probe") {
		what += " (" + d.Experiment + ")"
	}
	switch len(d.Runs) {
	case 0:
		p.Title = "ratecheck " + what
	case 1:
		p.Title = "ratecheck " + what + ": " + d.Runs[0].Target
	default:
		p.Title = fmt.Sprintf("ratecheck %s: %d targets", what, len(d.Runs))
	}
	p.Subtitle = fmt.Sprintf("ratecheck %s · report schema %d", d.Version, d.SchemaVersion)
	switch {
	case d.Interrupted:
		p.Outcome = outcomeBanner(expect.Untested, interruptedBanner)
	case d.Outcome != "":
		p.Outcome = outcomeBanner(d.Outcome, runsOutcomeText(d))
	}
	for i := range d.Runs {
		p.Runs = append(p.Runs, newPageRun(i+1, &d.Runs[i], len(d.Runs)))
	}
	if len(d.Runs) > 1 {
		p.Overview = newOverview(p.Runs)
	}
	return p
}

func runsOutcomeText(d Document) string {
	pass, fail, untested := 0, 0, 0
	for _, r := range d.Runs {
		p, f, u := expect.Tally(r.Expectations)
		pass, fail, untested = pass+p, fail+f, untested+u
	}
	total := pass + fail + untested
	switch d.Outcome {
	case expect.Pass:
		return fmt.Sprintf("check passed: all %d expectations hold", total)
	case expect.Fail:
		return fmt.Sprintf("check failed: %d of %d expectations do not hold", fail, total)
	}
	return fmt.Sprintf("not tested: %d of %d expectations could not be checked", untested, total)
}

func outcomeBanner(outcome, text string) *banner {
	return &banner{Class: "o-" + outcome, Text: text}
}

func newPageRun(idx int, r *Run, nruns int) pageRun {
	pr := pageRun{Run: *r, Idx: idx, Anchor: fmt.Sprintf("run%d", idx), Counts: CountResults(r.Results)}
	pr.Heading = r.Target
	if r.Name != "" {
		pr.Heading = r.Name + ": " + r.Target
	}
	if nruns > 1 {
		pr.Heading = fmt.Sprintf("%d. %s", idx, pr.Heading)
	}
	pr.Statuses = statusText(r.Summary.Statuses)
	if r.Summary.Latency.Max > 0 {
		l := r.Summary.Latency
		pr.Latency = fmt.Sprintf("p50 %s · p90 %s · p99 %s · max %s", fmtDur(l.P50), fmtDur(l.P90), fmtDur(l.P99), fmtDur(l.Max))
	}
	if r.Grade != nil {
		pr.GradeClass = gradeClass(r.Grade.Letter)
		for _, c := range r.Grade.Checks {
			row := checkRow{Check: c, Class: "c-" + c.Outcome, Symbol: symbols[c.Outcome]}
			for _, s := range c.Seqs {
				row.Refs = append(row.Refs, cell{Text: fmt.Sprintf("#%d", s), Href: fmt.Sprintf("#r%d-s%d", idx, s)})
			}
			pr.Checks = append(pr.Checks, row)
		}
	}
	if r.Outcome != "" {
		p, f, u := expect.Tally(r.Expectations)
		pr.Outcome = outcomeBanner(r.Outcome, fmt.Sprintf("%s: %d passed, %d failed, %d untested", r.Outcome, p, f, u))
	}
	for _, o := range r.Expectations {
		pr.Expect = append(pr.Expect, expectRow{Outcome: o, Class: "c-" + o.Result, Symbol: symbols[o.Result]})
	}
	if inf := r.Inference; inf != nil {
		pr.Facts = append(pr.Facts, [2]string{"family", inf.Family})
		if inf.Family != "inconclusive" {
			pr.Facts = append(pr.Facts, [2]string{"parameters", strings.TrimPrefix(inf.Summary(), inf.Family+": ")})
		}
		pr.Facts = append(pr.Facts,
			[2]string{"confidence", fmt.Sprintf("%.2f", inf.Confidence)},
			[2]string{"decisions explained", fmt.Sprintf("%d of %d", inf.Explained, inf.Decisions)},
			[2]string{"scope", inf.Scope})
		if inf.Failures != nil {
			pr.Facts = append(pr.Facts, [2]string{"failed", failuresLine(inf.Failures)})
		}
		if b := inf.Bypass; b != nil {
			pr.Facts = append(pr.Facts, [2]string{"bypass", b.Summary()})
			for _, r := range b.Found() {
				pr.Facts = append(pr.Facts, [2]string{"bypass " + r.Trial, r.Line()})
			}
		}
		for _, a := range inf.Alternatives {
			s := fmt.Sprintf("%s explains %s", a.Family, a.ExplainedText())
			if a.Equivalent {
				s += " (observationally equivalent on this run)"
			}
			pr.Alts = append(pr.Alts, s)
		}
	}
	if len(r.Shards) > 0 || r.Summary.Requests > len(r.Results) {
		// A run that draws a sample (a merged sharded run, a long attack
		// read back): its counts are every request's.
		sm := r.Summary
		pr.Counts = Counts{Requests: sm.Requests, Admitted: sm.Admitted, Rejected: sm.Rejected, Errors: sm.Errors,
			Other: sm.Requests - sm.Admitted - sm.Rejected - sm.Errors}
	}
	if len(r.Shards) > 0 {
		pr.Facts = append(pr.Facts, [2]string{"shards", fmt.Sprintf("%d of run %s, told to start at %s; began within %s of each other",
			len(r.Shards), r.RunID, r.StartAt.UTC().Format("15:04:05.000"), fmtDur(r.StartSpread))})
		for _, sh := range r.Shards {
			pr.Facts = append(pr.Facts, [2]string{"shard " + sh.Shard.String(), fmt.Sprintf("%s · began +%s · %d requests%s",
				orDash(sh.Host), fmtDur(sh.Late), sh.Requests, map[bool]string{true: "", false: " · interrupted"}[sh.Complete])})
		}
	}
	pr.Timeline = timeline(idx, r.Results)
	pr.Intervals = intervals(r)
	pr.LatencyC = latencyChart(r.Results)
	return pr
}

var symbols = map[string]string{
	grade.Pass: "✓", grade.Warn: "!", grade.Fail: "✗", grade.Skip: "–", expect.Untested: "?",
}

func gradeClass(letter string) string {
	switch letter {
	case "A+", "A":
		return "g-a"
	case "B":
		return "g-b"
	case "C":
		return "g-c"
	case "D", "F":
		return "g-f"
	}
	return "g-na"
}

// statusText lists a run's statuses with their counts: "200 ×12, 429 ×31".
func statusText(st map[int]int) string {
	codes := make([]int, 0, len(st))
	for c := range st {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d ×%d", c, st[c])
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, ", ")
}

// newOverview puts the runs side by side: one column per target.
func newOverview(runs []pageRun) *overview {
	o := &overview{Heads: []string{""}}
	for _, r := range runs {
		o.Heads = append(o.Heads, fmt.Sprintf("target %d", r.Idx))
	}
	add := func(label string, get func(r *pageRun) cell) {
		row := []cell{{Text: label, Class: "k"}}
		for i := range runs {
			row = append(row, get(&runs[i]))
		}
		o.Rows = append(o.Rows, row)
	}
	text := func(s string) cell { return cell{Text: s} }
	add("target", func(r *pageRun) cell { return cell{Text: r.Target, Href: "#" + r.Anchor} })
	if anyRun(runs, func(r *pageRun) bool { return r.Name != "" }) {
		add("name", func(r *pageRun) cell { return text(r.Name) })
	}
	if anyRun(runs, func(r *pageRun) bool { return r.Outcome != nil }) {
		add("check", func(r *pageRun) cell {
			if r.Outcome == nil {
				return text("—")
			}
			return cell{Text: r.Run.Outcome, Class: r.Outcome.Class}
		})
	}
	add("verdict", func(r *pageRun) cell {
		if r.Error != "" {
			return cell{Text: "error: " + r.Error, Class: "o-untested"}
		}
		return text(r.Verdict)
	})
	if anyRun(runs, func(r *pageRun) bool { return r.Inference != nil }) {
		add("confidence", func(r *pageRun) cell {
			if r.Inference == nil {
				return text("—")
			}
			return text(fmt.Sprintf("%.2f", r.Inference.Confidence))
		})
	}
	if anyRun(runs, func(r *pageRun) bool { return r.Grade != nil }) {
		add("grade", func(r *pageRun) cell {
			if r.Grade == nil {
				return text("—")
			}
			return cell{Text: fmt.Sprintf("%s (%d/100)", r.Grade.Letter, r.Grade.Score), Class: "gl " + r.GradeClass}
		})
	}
	// An attack profile's own rows, lined up by label.
	var labels []string
	seen := map[string]bool{}
	for _, r := range runs {
		for _, row := range r.Rows {
			if len(row) >= 2 && !seen[row[0]] {
				seen[row[0]] = true
				labels = append(labels, row[0])
			}
		}
	}
	for _, l := range labels {
		add(l, func(r *pageRun) cell {
			for _, row := range r.Rows {
				if len(row) >= 2 && row[0] == l {
					return text(row[1])
				}
			}
			return text("—")
		})
	}
	add("requests", func(r *pageRun) cell { return text(fmt.Sprintf("%d in %.1f s", r.Counts.Requests, r.ElapsedS)) })
	add("admitted / rejected / errors", func(r *pageRun) cell {
		return text(fmt.Sprintf("%d / %d / %d", r.Counts.Admitted, r.Counts.Rejected, r.Counts.Errors+r.Counts.Other))
	})
	add("statuses", func(r *pageRun) cell { return text(r.Statuses) })
	add("latency", func(r *pageRun) cell { return text(r.Latency) })
	return o
}

func anyRun(runs []pageRun, f func(*pageRun) bool) bool {
	for i := range runs {
		if f(&runs[i]) {
			return true
		}
	}
	return false
}
