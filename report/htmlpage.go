package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The page's markup, built as nodes (htmlnode.go) from the page model
// (html.go). It is kept well-formed XML — every element closed, void
// elements self-closed (html.Render writes <meta .../>), no named entities
// beyond XML's — so tests can parse it with encoding/xml.

// footerText closes the page; %s is the version, %d the schema version.
const footerText = "Written by ratecheck %s (report schema %d). This file is self-contained: no script, no network. Hover a point or bar for its details; a check's request numbers link to the points."

func pageNode(p page) node {
	return block("html", attr("lang", "en"), pageHead(p), pageBody(p))
}

func pageHead(p page) node {
	return block("head",
		el("meta", attr("charset", "utf-8")),
		el("meta", attr("name", "viewport"), attr("content", "width=device-width, initial-scale=1")),
		el("meta", attr("name", "generator"), attr("content", "ratecheck "+p.Doc.Version)),
		el("title", txt(p.Title)),
		el("style", raw(pageCSS)))
}

func pageBody(p page) node {
	runs := make(group, len(p.Runs))
	for i := range p.Runs {
		runs[i] = runSection(&p.Runs[i])
	}
	return block("body", block("main",
		block("header", el("h1", txt(p.Title)), el("p", class("meta"), txt(p.Subtitle))),
		bannerNode(p.Outcome, attr("data-outcome", p.Doc.Outcome)),
		overviewSection(p.Overview),
		runs,
		el("footer", txt(fmt.Sprintf(footerText, p.Doc.Version, p.Doc.SchemaVersion)))))
}

// bannerNode is an outcome banner, or nothing without one.
func bannerNode(b *banner, extra ...part) node {
	if b == nil {
		return node{}
	}
	return el("div", class("banner "+b.Class), group(extra), txt(b.Text))
}

func overviewSection(o *overview) node {
	if o == nil {
		return node{}
	}
	heads := make(group, len(o.Heads))
	for i, h := range o.Heads {
		heads[i] = el("th", txt(h))
	}
	rows := make(group, len(o.Rows))
	for i, row := range o.Rows {
		tds := make(group, len(row))
		for j, c := range row {
			tds[j] = cellNode(c)
		}
		rows[i] = lines(el("tr", tds))
	}
	return block("section", class("overview"), attr("id", "overview"),
		el("h2", txt("Targets side by side")),
		block("table", el("thead", el("tr", heads)), el("tbody", rows)))
}

func cellNode(c cell) node {
	content := txt(c.Text)
	if c.Href != "" {
		content = el("a", attr("href", c.Href), content)
	}
	return el("td", attrIf(c.Class != "", "class", c.Class), content)
}

func runSection(r *pageRun) node {
	return block("section", class("run"), attr("id", r.Anchor), attr("data-kind", r.Kind),
		el("h2", txt(r.Heading)),
		bannerNode(r.Outcome),
		block("div", class("cards"), verdictCard(r), gradeCard(r), countsCard(r)),
		expectTable(r),
		el("h3", txt("Timeline")),
		timelineLegend(r),
		chartNodes(r.Timeline),
		el("h3", txt("Requests per interval")),
		intervalsLegend(r),
		chartNodes(r.Intervals),
		el("h3", txt("Latency distribution")),
		chartNodes(r.LatencyC),
		checksTable(r),
		evidence(r),
		when(len(r.Alts) > 0, el("p", class("note"), txt("Alternatives: "+strings.Join(r.Alts, "; ")+"."))),
		rowsTable(r),
		notes(r))
}

// dtdd is one term of a description list, on a line of its own.
func dtdd(term string, def ...part) group {
	return group{el("dt", txt(term)), el("dd", def...), node{newline()}}
}

// dl is a description list of dtdd terms.
func dl(classes string, terms ...part) node {
	return el("dl", class(classes), node{newline()}, group(terms))
}

func verdictCard(r *pageRun) node {
	big := r.Verdict
	if r.Error != "" {
		big = "could not be tested: " + r.Error
	}
	experiment := r.Kind
	if r.Profile != "" && r.Profile != r.Kind {
		experiment += " · profile " + r.Profile
	}
	facts := make(group, len(r.Facts))
	for i, f := range r.Facts {
		facts[i] = dtdd(f[0], txt(f[1]))
	}
	results := r.ResultsFile
	if !r.Complete {
		results += " (interrupted)"
	}
	return block("div", class("card verdict"),
		el("p", class("big"), txt(big)),
		dl("kv",
			dtdd("experiment", txt(experiment)),
			facts,
			dtdd("target", class("mono"), txt(r.Target)),
			when(r.URL != "" && r.URL != r.Target, dtdd("sent to", class("mono"), txt(r.URL))),
			dtdd("started", txt(utcText(r.Start))),
			when(r.ResultsFile != "", dtdd("results", class("mono"), txt(results)))))
}

// utcText writes a run's start; a zero time is unknown.
func utcText(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000 UTC")
}

func gradeCard(r *pageRun) node {
	g := r.Grade
	if g == nil {
		return node{}
	}
	var caps node
	if len(g.Caps) > 0 {
		items := make(group, len(g.Caps))
		for i, c := range g.Caps {
			items[i] = el("li", txt(c))
		}
		caps = el("ul", items)
	}
	return block("div", class("card gradecard "+r.GradeClass),
		el("div", class("mute"), txt("response contract")),
		el("div", class("letter"), attr("data-grade", g.Letter), txt(g.Letter)),
		el("div", txt(fmt.Sprintf("score %d/100 · rubric %s", g.Score, g.RubricVersion))),
		when(g.Note != "", el("p", class("note"), txt(g.Note))),
		caps)
}

func countsCard(r *pageRun) node {
	c := r.Counts
	metric := func(term, name string, n int) group {
		return dtdd(term, attr("data-metric", name), txt(strconv.Itoa(n)))
	}
	return block("div", class("card counts"), dl("kv summary",
		metric("requests", "requests", c.Requests),
		metric("admitted", "admitted", c.Admitted),
		metric("rejected", "rejected", c.Rejected),
		metric("errors", "errors", c.Errors),
		when(c.Other != 0, metric("other statuses", "other", c.Other)),
		dtdd("statuses", txt(r.Statuses)),
		dtdd("time", txt(f1(r.ElapsedS)+" s")),
		when(r.Latency != "", dtdd("latency", txt(r.Latency)))))
}

// headRow is a table's head: one th per column.
func headRow(cols ...string) node {
	ths := make(group, len(cols))
	for i, c := range cols {
		ths[i] = el("th", txt(c))
	}
	return el("thead", el("tr", ths))
}

// withNote is a cell's text and, under it, a muted note when there is one.
func withNote(s, note string) group {
	return group{txt(s), when(note != "", el("div", class("mute"), txt(note)))}
}

func expectTable(r *pageRun) part {
	if len(r.Expect) == 0 {
		return nil
	}
	rows := make(group, len(r.Expect))
	for i, o := range r.Expect {
		rows[i] = lines(el("tr", class(o.Class), attr("data-result", o.Result),
			el("td", class("sym"), txt(o.Symbol+" "+o.Result)),
			el("td", class("mono"), txt(o.Expectation)),
			el("td", txt(o.Expected)),
			el("td", withNote(o.Actual, o.Note))))
	}
	return group{el("h3", txt("Expectations")),
		block("table", class("expectations"), headRow("result", "expectation", "expected", "actual"), el("tbody", rows))}
}

func checksTable(r *pageRun) part {
	if len(r.Checks) == 0 {
		return nil
	}
	rows := make(group, len(r.Checks))
	for i, c := range r.Checks {
		refs := make(group, 0, 2*len(c.Refs))
		for _, ref := range c.Refs {
			refs = append(refs, el("a", attr("href", ref.Href), txt(ref.Text)), txt(" "))
		}
		hint := ""
		if c.Hint != "" {
			hint = "hint: " + c.Hint
		}
		rows[i] = lines(el("tr", class(c.Class), attr("data-check", c.ID), attr("data-outcome", c.Outcome),
			el("td", class("sym"), txt(c.Symbol+" "+c.Outcome)),
			el("td", el("strong", txt(c.Title)), el("div", class("mono mute"), txt(c.ID+" · "+c.Severity+" · "+c.Source))),
			el("td", txt(c.Expected)),
			el("td", withNote(c.Actual, hint)),
			el("td", refs)))
	}
	return group{el("h3", txt("Response contract checks")),
		block("table", class("checks"), headRow("result", "check", "expected", "actual", "requests"), el("tbody", rows))}
}

func evidence(r *pageRun) part {
	inf := r.Inference
	if inf == nil {
		return nil
	}
	return group{el("h3", txt("Inference evidence")),
		bullets(inf.Evidence),
		when(inf.Reason != "", el("p", class("note"), txt(inf.Reason)))}
}

// bullets is a list of sentences.
func bullets(items []string) node {
	lis := make(group, len(items))
	for i, s := range items {
		lis[i] = el("li", txt(s))
	}
	return el("ul", class("evidence"), lis)
}

// rowsTable is an attack profile's own figures: label, then values.
func rowsTable(r *pageRun) part {
	if len(r.Rows) == 0 {
		return nil
	}
	rows := make(group, len(r.Rows))
	for i, row := range r.Rows {
		tds := make(group, len(row))
		for j, c := range row {
			tds[j] = el("td", attrIf(j == 0, "class", "k"), txt(c))
		}
		rows[i] = lines(el("tr", tds))
	}
	return group{el("h3", txt("Profile figures")), el("table", class("rows"), el("tbody", rows))}
}

func notes(r *pageRun) part {
	if len(r.Notes) == 0 {
		return nil
	}
	return group{el("h3", txt("Notes")), bullets(r.Notes)}
}
