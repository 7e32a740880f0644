package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe/expect"
)

// WriteHTML renders the document as one self-contained HTML page: inline
// CSS and SVG, no script, no external resource, so it opens offline and
// prints. Every string from a run goes through html/template's escaping.
func WriteHTML(w io.Writer, d Document) error {
	d.settle()
	return pageTmpl.Execute(w, newPage(d))
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
		for _, a := range inf.Alternatives {
			s := fmt.Sprintf("%s explains %d", a.Family, a.Explained)
			if a.Equivalent {
				s += " (observationally equivalent on this run)"
			}
			pr.Alts = append(pr.Alts, s)
		}
	}
	if len(r.Shards) > 0 {
		// A merged sharded run draws a sample; its counts are every
		// request's.
		sm := r.Summary
		pr.Counts = Counts{Requests: sm.Requests, Admitted: sm.Admitted, Rejected: sm.Rejected, Errors: sm.Errors,
			Other: sm.Requests - sm.Admitted - sm.Rejected - sm.Errors}
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

var funcs = template.FuncMap{
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
	},
	"f2": func(v float64) string { return fmt.Sprintf("%.2f", v) },
	"f1": func(v float64) string { return fmt.Sprintf("%.1f", v) },
}

var pageTmpl = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))

// pageHTML is the page. It is kept well-formed XML (every element closed,
// void elements self-closed, no named entities beyond XML's) so tests can
// parse it with encoding/xml.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name="generator" content="ratecheck {{.Doc.Version}}" />
<title>{{.Title}}</title>
<style>
:root { --ok: #007a5a; --no: #c2410c; --err: #6d28d9; --oth: #6b7280; --ink: #1f2328; --mute: #59636e; --line: #d0d7de; --bg: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--bg); }
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 40px; }
h1 { font-size: 22px; margin: 0 0 2px; }
h2 { font-size: 19px; margin: 0 0 12px; word-break: break-all; }
h3 { font-size: 15px; margin: 22px 0 6px; }
p.meta, p.note, .mute { color: var(--mute); }
p.note { margin: 4px 0 0; font-size: 13px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
section.run, section.overview { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 18px 20px; margin: 16px 0; }
.banner { border-radius: 8px; padding: 10px 16px; font-weight: 600; font-size: 16px; margin: 12px 0; border: 1px solid; }
.o-pass { background: #e6f4ea; border-color: #1a7f37; color: #116329; }
.o-fail { background: #fdecea; border-color: #cf222e; color: #a40e26; }
.o-untested { background: #fff8e1; border-color: #9a6700; color: #7d4e00; }
.cards { display: flex; gap: 14px; flex-wrap: wrap; align-items: stretch; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 12px 14px; background: #fff; }
.card.verdict { flex: 3 1 420px; }
.card.gradecard { flex: 0 0 230px; text-align: center; }
.card.counts { flex: 1 1 230px; }
.verdict .big { font-size: 17px; font-weight: 600; margin: 0 0 8px; word-break: break-word; }
.letter { font-size: 56px; font-weight: 800; line-height: 1; margin: 4px 0; }
.g-a .letter, .gl.g-a { color: #116329; } .g-b .letter, .gl.g-b { color: #0b5394; } .g-c .letter, .gl.g-c { color: #9a6700; }
.g-f .letter, .gl.g-f { color: #a40e26; } .g-na .letter, .gl.g-na { color: var(--oth); }
.gradecard ul { text-align: left; padding-left: 18px; margin: 6px 0 0; font-size: 12.5px; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.kv dt { color: var(--mute); } dl.kv dd { margin: 0; font-variant-numeric: tabular-nums; word-break: break-word; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 5px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.k { color: var(--mute); white-space: nowrap; }
.c-pass .sym { color: #116329; } .c-fail .sym { color: #a40e26; } .c-warn .sym { color: #9a6700; } .c-skip .sym, .c-untested .sym { color: var(--oth); }
.sym { font-weight: 700; white-space: nowrap; }
tr.c-fail td { background: #fff5f5; } tr.c-warn td { background: #fffbea; } tr.c-untested td { background: #fffbea; }
.legend { display: flex; gap: 18px; flex-wrap: wrap; font-size: 12.5px; color: var(--mute); margin: 2px 0 4px; }
.legend svg { vertical-align: middle; margin-right: 4px; }
svg.chart { width: 100%; height: auto; display: block; background: #fff; }
svg .grid { stroke: #eaeef2; stroke-width: 1; }
svg .axis { stroke: #8c959f; stroke-width: 1; }
svg .tick { font-size: 11px; fill: var(--mute); }
svg .axis-label, svg .phase { font-size: 11.5px; fill: var(--mute); }
svg .band0 { fill: #f6f8fa; } svg .band1 { fill: #eef3f9; }
svg .p-admitted { fill: var(--ok); } svg .p-rejected { fill: var(--no); } svg .p-error { fill: var(--err); } svg .p-other { fill: var(--oth); }
svg .pt { stroke: #fff; stroke-width: 0.6; }
svg .pt:hover, svg .pt:target { stroke: #000; stroke-width: 2; }
svg .wait { stroke-width: 1.4; stroke-opacity: 0.75; }
svg .w-admitted { stroke: var(--ok); } svg .w-rejected { stroke: var(--no); } svg .w-error { stroke: var(--err); } svg .w-other { stroke: var(--oth); }
svg .b-admitted { fill: var(--ok); } svg .b-rejected { fill: var(--no); fill-opacity: 0.45; } svg .b-other { fill: var(--oth); fill-opacity: 0.6; }
svg .model { fill: none; stroke: #111827; stroke-width: 2; }
svg .capacity { stroke: #111827; stroke-width: 1.2; stroke-dasharray: 5 4; }
ul.evidence { margin: 4px 0; padding-left: 20px; }
a { color: #0b5394; }
footer { color: var(--mute); font-size: 12px; margin-top: 24px; }
@media print {
  body { background: #fff; font-size: 11px; }
  main { max-width: none; padding: 0; }
  section.run, section.overview { border: none; padding: 0; margin: 0 0 12px; }
  section.run { break-before: page; }
  section.run:first-of-type { break-before: auto; }
  .card, table, svg.chart, h3 { break-inside: avoid; }
  svg.chart { max-height: 90mm; }
  h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
@page { size: A4 landscape; margin: 12mm; }
</style>
</head>
<body>
<main>
<header>
<h1>{{.Title}}</h1>
<p class="meta">{{.Subtitle}}</p>
</header>
{{with .Outcome}}<div class="banner {{.Class}}" data-outcome="{{$.Doc.Outcome}}">{{.Text}}</div>{{end}}
{{with .Overview}}<section class="overview" id="overview">
<h2>Targets side by side</h2>
<table>
<thead><tr>{{range .Heads}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
</section>{{end}}
{{range .Runs}}<section class="run" id="{{.Anchor}}" data-kind="{{.Kind}}">
<h2>{{.Heading}}</h2>
{{with .Outcome}}<div class="banner {{.Class}}">{{.Text}}</div>{{end}}
<div class="cards">
<div class="card verdict">
<p class="big">{{if .Error}}could not be tested: {{.Error}}{{else}}{{.Verdict}}{{end}}</p>
<dl class="kv">
<dt>experiment</dt><dd>{{.Kind}}{{if and .Profile (ne .Profile .Kind)}} · profile {{.Profile}}{{end}}</dd>
{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}<dt>target</dt><dd class="mono">{{.Target}}</dd>
{{if and .URL (ne .URL .Target)}}<dt>sent to</dt><dd class="mono">{{.URL}}</dd>
{{end}}<dt>started</dt><dd>{{utc .Start}}</dd>
{{if .ResultsFile}}<dt>results</dt><dd class="mono">{{.ResultsFile}}{{if not .Complete}} (interrupted){{end}}</dd>
{{end}}</dl>
</div>
{{if .Grade}}<div class="card gradecard {{.GradeClass}}">{{with .Grade}}
<div class="mute">response contract</div>
<div class="letter" data-grade="{{.Letter}}">{{.Letter}}</div>
<div>score {{.Score}}/100 · rubric {{.RubricVersion}}</div>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{if .Caps}}<ul>{{range .Caps}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}</div>{{end}}
<div class="card counts">
<dl class="kv summary">
<dt>requests</dt><dd data-metric="requests">{{.Counts.Requests}}</dd>
<dt>admitted</dt><dd data-metric="admitted">{{.Counts.Admitted}}</dd>
<dt>rejected</dt><dd data-metric="rejected">{{.Counts.Rejected}}</dd>
<dt>errors</dt><dd data-metric="errors">{{.Counts.Errors}}</dd>
{{if .Counts.Other}}<dt>other statuses</dt><dd data-metric="other">{{.Counts.Other}}</dd>
{{end}}<dt>statuses</dt><dd>{{.Statuses}}</dd>
<dt>time</dt><dd>{{f1 .ElapsedS}} s</dd>
{{if .Latency}}<dt>latency</dt><dd>{{.Latency}}</dd>
{{end}}</dl>
</div>
</div>
{{if .Expect}}<h3>Expectations</h3>
<table class="expectations">
<thead><tr><th>result</th><th>expectation</th><th>expected</th><th>actual</th></tr></thead>
<tbody>{{range .Expect}}<tr class="{{.Class}}" data-result="{{.Result}}"><td class="sym">{{.Symbol}} {{.Result}}</td><td class="mono">{{.Expectation}}</td><td>{{.Expected}}</td><td>{{.Actual}}{{if .Note}}<div class="mute">{{.Note}}</div>{{end}}</td></tr>
{{end}}</tbody>
</table>{{end}}
<h3>Timeline</h3>
<div class="legend">
<span><svg width="12" height="12" viewBox="0 0 12 12"><circle cx="6" cy="6" r="4" class="p-admitted" /></svg>admitted ({{.Counts.Admitted}})</span>
<span><svg width="12" height="12" viewBox="0 0 12 12"><rect x="2" y="2" width="8" height="8" class="p-rejected" /></svg>rejected ({{.Counts.Rejected}})</span>
<span><svg width="12" height="12" viewBox="0 0 12 12"><path d="M6 1L11 10L1 10Z" class="p-error" /></svg>transport error ({{.Counts.Errors}})</span>
{{if .Counts.Other}}<span><svg width="12" height="12" viewBox="0 0 12 12"><path d="M6 1L11 6L6 11L1 6Z" class="p-other" /></svg>other status ({{.Counts.Other}})</span>{{end}}
<span><svg width="22" height="12" viewBox="0 0 22 12"><line x1="2" y1="6" x2="20" y2="6" class="wait w-admitted" /></svg>wait from send to first byte</span>
<span>y: requests in send order, grouped by phase</span>
</div>
{{template "chart" .Timeline}}
<h3>Requests per interval</h3>
<div class="legend">
<span><svg width="12" height="12" viewBox="0 0 12 12"><rect x="1" y="1" width="10" height="10" class="b-admitted" /></svg>admitted</span>
<span><svg width="12" height="12" viewBox="0 0 12 12"><rect x="1" y="1" width="10" height="10" class="b-rejected" /></svg>rejected</span>
{{if .Inference}}<span><svg width="22" height="12" viewBox="0 0 22 12"><path d="M1 9H8V3H21" class="model" /></svg>inferred model's admissions</span>
<span><svg width="22" height="12" viewBox="0 0 22 12"><line x1="1" y1="6" x2="21" y2="6" class="capacity" /></svg>sustained capacity</span>{{end}}
</div>
{{template "chart" .Intervals}}
<h3>Latency distribution</h3>
{{template "chart" .LatencyC}}
{{if .Checks}}<h3>Response contract checks</h3>
<table class="checks">
<thead><tr><th>result</th><th>check</th><th>expected</th><th>actual</th><th>requests</th></tr></thead>
<tbody>{{range .Checks}}<tr class="{{.Class}}" data-check="{{.ID}}" data-outcome="{{.Outcome}}"><td class="sym">{{.Symbol}} {{.Outcome}}</td><td><strong>{{.Title}}</strong><div class="mono mute">{{.ID}} · {{.Severity}} · {{.Source}}</div></td><td>{{.Expected}}</td><td>{{.Actual}}{{if .Hint}}<div class="mute">hint: {{.Hint}}</div>{{end}}</td><td>{{range .Refs}}<a href="{{.Href}}">{{.Text}}</a> {{end}}</td></tr>
{{end}}</tbody>
</table>{{end}}
{{with .Inference}}<h3>Inference evidence</h3>
<ul class="evidence">{{range .Evidence}}<li>{{.}}</li>{{end}}</ul>
{{if .Reason}}<p class="note">{{.Reason}}</p>{{end}}{{end}}
{{if .Alts}}<p class="note">Alternatives: {{range $i, $a := .Alts}}{{if $i}}; {{end}}{{$a}}{{end}}.</p>{{end}}
{{if .Rows}}<h3>Profile figures</h3>
<table class="rows"><tbody>{{range .Rows}}<tr>{{range $i, $c := .}}<td{{if not $i}} class="k"{{end}}>{{$c}}</td>{{end}}</tr>
{{end}}</tbody></table>{{end}}
{{if .Notes}}<h3>Notes</h3>
<ul class="evidence">{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
</section>
{{end}}
<footer>Written by ratecheck {{.Doc.Version}} (report schema {{.Doc.SchemaVersion}}). This file is self-contained: no script, no network. Hover a point or bar for its details; a check's request numbers link to the points.</footer>
</main>
</body>
</html>
{{define "chart"}}<svg class="chart {{.Class}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Label}}" data-points="{{.Points}}">
{{range .Shapes}}{{if eq .Kind "circle"}}<circle{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}" cx="{{.X}}" cy="{{.Y}}" r="{{.R}}"{{if .Seq}} data-seq="{{.Seq}}" data-outcome="{{.Outcome}}"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</circle>
{{else if eq .Kind "rect"}}<rect{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}"{{if .Seq}} data-seq="{{.Seq}}" data-outcome="{{.Outcome}}"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</rect>
{{else if eq .Kind "path"}}<path{{if .ID}} id="{{.ID}}"{{end}} class="{{.Class}}" d="{{.D}}"{{if .Seq}} data-seq="{{.Seq}}" data-outcome="{{.Outcome}}"{{end}}>{{if .Title}}<title>{{.Title}}</title>{{end}}</path>
{{else if eq .Kind "line"}}<line class="{{.Class}}" x1="{{.X}}" y1="{{.Y}}" x2="{{.X2}}" y2="{{.Y2}}">{{if .Title}}<title>{{.Title}}</title>{{end}}</line>
{{else if eq .Kind "text"}}<text class="{{.Class}}" x="{{.X}}" y="{{.Y}}"{{if .Anchor}} text-anchor="{{.Anchor}}"{{end}}>{{.Text}}</text>
{{end}}{{end}}</svg>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}{{end}}`
