package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// recordedProbe is a real probe of builtin:token_bucket?rate=10/s&burst=10,
// recorded with
//
//	ratecheck probe --out report/testdata/probe.jsonl 'builtin:token_bucket?rate=10/s&burst=10'
const recordedProbe = "testdata/probe.jsonl"

func readRecorded(t *testing.T, path string) *results.Recorded {
	t.Helper()
	rec, err := results.ReadStreamFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// probeDoc runs the whole pipeline on the recorded probe: read the stream,
// infer, grade, build the document.
func probeDoc(t *testing.T) (Document, *results.Recorded) {
	rec := readRecorded(t, recordedProbe)
	return NewDocument("test", "probe", "probe", probeRunOf(rec, recordedProbe)), rec
}

// probeRunOf is what `ratecheck report` does with a probe stream: infer
// again (probe), grade (grade), then build the run to render.
func probeRunOf(rec *results.Recorded, path string) Run {
	res := probe.FromRecorded(rec)
	res.ResultsFile = path
	return ProbeRun(rec.Header.Target, rec.Header.URL, res, grade.OfProbe(res))
}

// frozenDocFile is the recorded probe's document as the pipeline built it
// when the golden files were last updated. The golden files are rendered
// from it, so they guard the renderers alone: a change in the inference or
// the grading rubric's wording does not touch them (the structural tests
// run the live pipeline).
const frozenDocFile = "testdata/probe.doc.json"

var freezeOnce sync.Once

// frozenDoc reads the frozen document (rewriting it from the pipeline
// under -update) and attaches the recorded requests, which JSON leaves out.
func frozenDoc(t *testing.T) Document {
	t.Helper()
	if *update {
		freezeOnce.Do(func() {
			d, _ := probeDoc(t)
			var buf bytes.Buffer
			if err := WriteJSON(&buf, d); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(frozenDocFile, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
	b, err := os.ReadFile(frozenDocFile)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	var d Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	rec := readRecorded(t, recordedProbe)
	d.Runs[0].Results = SortResults(rec.Results)
	d.Runs[0].RTT = probe.MinRTT(d.Runs[0].Results)
	return d
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs from the golden file at line %d:\n got: %.300s\nwant: %.300s\n(if the change is intended: go test ./report -update)", name, i+1, g, w)
			}
		}
	}
}

// element is a parsed element of the page.
type element struct {
	name  string
	attrs map[string]string
	text  string
	path  []string // ancestors' names, outermost first
	class []string // ancestors' class attributes
}

// parsePage parses the page as XML (it is written to be well-formed) and
// returns every element with its attributes and direct text.
func parsePage(t *testing.T, page []byte) []*element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(page))
	dec.Strict = true
	var out, stack []*element
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &element{name: tk.Name.Local, attrs: map[string]string{}}
			for _, a := range tk.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			for _, p := range stack {
				e.path = append(e.path, p.name)
				e.class = append(e.class, p.attrs["class"])
			}
			stack = append(stack, e)
			out = append(out, e)
		case xml.EndElement:
			if len(stack) == 0 || stack[len(stack)-1].name != tk.Name.Local {
				t.Fatalf("unbalanced </%s>", tk.Name.Local)
			}
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tk)
			}
		}
	}
	if len(stack) != 0 {
		t.Fatalf("%d elements left open", len(stack))
	}
	return out
}

func (e *element) inClass(c string) bool {
	for _, cl := range e.class {
		for _, f := range strings.Fields(cl) {
			if f == c {
				return true
			}
		}
	}
	return false
}

func TestHTMLRecordedProbe(t *testing.T) {
	d, rec := probeDoc(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	page := buf.Bytes()
	els := parsePage(t, page)

	// One point per request in the timeline, each with its outcome.
	want := map[string]int{}
	for i := range rec.Results {
		want[outcomeOf(&rec.Results[i])]++
	}
	got := map[string]int{}
	seqs := map[string]bool{}
	var timelines, points int
	for _, e := range els {
		if e.name == "svg" && strings.Contains(e.attrs["class"], "timeline") {
			timelines++
			if n, _ := strconv.Atoi(e.attrs["data-points"]); n != len(rec.Results) {
				t.Errorf("timeline data-points = %d, want %d", n, len(rec.Results))
			}
		}
		if s, ok := e.attrs["data-seq"]; ok {
			if !e.inClass("timeline") {
				t.Errorf("a point outside the timeline: <%s %v>", e.name, e.attrs)
			}
			points++
			if seqs[s] {
				t.Errorf("request %s drawn twice", s)
			}
			seqs[s] = true
			got[e.attrs["data-outcome"]]++
			shape := map[string]string{outAdmitted: "circle", outRejected: "rect", outError: "path", outOther: "path"}[e.attrs["data-outcome"]]
			if e.name != shape {
				t.Errorf("a %s request is a <%s>, want <%s>", e.attrs["data-outcome"], e.name, shape)
			}
			if e.attrs["id"] != "r1-s"+s {
				t.Errorf("point %s has id %q", s, e.attrs["id"])
			}
		}
	}
	if timelines != 1 || points != len(rec.Results) {
		t.Errorf("%d timelines with %d points, want 1 with %d", timelines, points, len(rec.Results))
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%d %s points, want %d", got[k], k, n)
		}
	}
	if want[outAdmitted] == 0 || want[outRejected] == 0 {
		t.Fatalf("the recorded probe should hold admissions and rejections: %v", want)
	}

	// The summary's counts.
	metrics := map[string]string{}
	for _, e := range els {
		if m := e.attrs["data-metric"]; m != "" {
			metrics[m] = strings.TrimSpace(e.text)
		}
	}
	for k, n := range map[string]int{"requests": len(rec.Results), "admitted": want[outAdmitted], "rejected": want[outRejected], "errors": want[outError]} {
		if metrics[k] != strconv.Itoa(n) {
			t.Errorf("summary %s = %q, want %d", k, metrics[k], n)
		}
	}

	// The verdict and the grade card.
	run := d.Runs[0]
	if run.Inference == nil || run.Inference.Family != "token_bucket" {
		t.Fatalf("re-inferred %+v, want token_bucket", run.Inference)
	}
	if !bytes.Contains(page, []byte(">"+escapeText(run.Inference.Summary())+"<")) {
		t.Errorf("the page does not state the verdict %q", run.Inference.Summary())
	}
	letters, checks := 0, 0
	for _, e := range els {
		if l, ok := e.attrs["data-grade"]; ok {
			letters++
			if run.Grade == nil || l != run.Grade.Letter {
				t.Errorf("grade card says %q, want %+v", l, run.Grade)
			}
		}
		if _, ok := e.attrs["data-check"]; ok {
			checks++
		}
	}
	if run.Grade == nil || letters != 1 || checks != len(run.Grade.Checks) {
		t.Errorf("grade card %d, check rows %d, want 1 and one per check of %+v", letters, checks, run.Grade)
	}

	assertOffline(t, els, page)
}

// The golden page, rendered from the frozen document.
func TestHTMLGolden(t *testing.T) {
	d := frozenDoc(t)
	var buf bytes.Buffer
	if err := WriteHTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	parsePage(t, buf.Bytes())
	golden(t, "probe.html", buf.Bytes())
}

// escapeText escapes s as html.Render writes text.
func escapeText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// assertOffline checks that the page needs nothing from the network.
func assertOffline(t *testing.T, els []*element, page []byte) {
	t.Helper()
	for _, e := range els {
		switch e.name {
		case "script", "link", "img", "iframe", "object", "embed", "base":
			t.Errorf("the page has a <%s>", e.name)
		}
		for _, a := range []string{"src", "href", "xlink:href", "action", "poster", "srcset"} {
			v := strings.TrimSpace(strings.ToLower(e.attrs[a]))
			if v != "" && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q>: only in-page links are allowed", e.name, a, v)
			}
		}
	}
	low := bytes.ToLower(page)
	for _, bad := range []string{"url(", "@import", "@font-face", "src=\"http", "href=\"http", "href=\"//", "src=\"//"} {
		if bytes.Contains(low, []byte(bad)) {
			t.Errorf("the page contains %q", bad)
		}
	}
	if !bytes.Contains(page, []byte("@media print")) {
		t.Error("the page has no print style")
	}
}

func TestHTMLEscapesEverything(t *testing.T) {
	evil := `<script>alert("x")</script>&amp;"'`
	rs := []results.Result{
		{Seq: 1, Phase: evil, Sent: time.Millisecond, FirstByte: 2 * time.Millisecond, Done: 2 * time.Millisecond, Status: 200},
		{Seq: 2, Phase: evil, Key: evil, Sent: 3 * time.Millisecond, Done: 4 * time.Millisecond, Status: 429, Headers: map[string]string{"retry-after": evil}},
		{Seq: 3, Phase: "x", Sent: 5 * time.Millisecond, Done: 90 * time.Millisecond, Error: evil},
		{Seq: 4, Phase: "x", Sent: 6 * time.Millisecond, Done: 9 * time.Millisecond, Status: 500},
	}
	run := AttackRun(evil, "http://127.0.0.1:1/"+evil, evil, time.Unix(1700000000, 0), rs,
		&results.Report{Verdict: evil, Rows: [][]string{{evil, evil}}}, 0, []string{evil})
	run.Error = evil
	run.Expectations = []expect.Outcome{{Expectation: evil, Expected: evil, Actual: evil, Result: expect.Fail, Note: evil}}
	run.Outcome = expect.Fail
	d := NewDocument(evil, "check", evil, run, run)
	d.Outcome = expect.Fail
	var buf bytes.Buffer
	if err := WriteHTML(&buf, d); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("<script")) {
		t.Error("unescaped <script> in the page")
	}
	els := parsePage(t, buf.Bytes())
	assertOffline(t, els, buf.Bytes())
	pts := 0
	for _, e := range els {
		if _, ok := e.attrs["data-seq"]; ok {
			pts++
		}
	}
	if pts != 2*len(rs) {
		t.Errorf("%d points, want %d", pts, 2*len(rs))
	}
	// An admitted circle, a rejected square, an error triangle and an
	// other-status diamond in each run.
	if !strings.Contains(buf.String(), "id=\"overview\"") {
		t.Error("two runs but no side-by-side overview")
	}
}

// Markup injected through a results file — the target URL, a note, a
// response header, the run's kind (an attribute) — comes out as text: the
// raw markup is nowhere in the page, its escaped form is, and the parsed
// page gives the strings back exactly.
func TestHTMLEscapesInjectedMarkup(t *testing.T) {
	const (
		script = `<script>alert(1)</script>`
		img    = `"><img src=x onerror=1>`
	)
	url := "http://127.0.0.1:1/" + img + script
	note := "note " + script + img
	header := img + script
	rs := []results.Result{{Seq: 1, Sent: time.Millisecond, Done: 2 * time.Millisecond, Status: 429, Headers: map[string]string{"retry-after": header}}}
	run := AttackRun("target", url, "burst", time.Unix(1700000000, 0), rs, &results.Report{Verdict: "v"}, 0, []string{note})
	run.Kind = img
	var buf bytes.Buffer
	if err := WriteHTML(&buf, NewDocument("test", "attack", "burst", run)); err != nil {
		t.Fatal(err)
	}
	page := buf.Bytes()
	for _, bad := range []string{script, img, "<img", "<script"} {
		if bytes.Contains(page, []byte(bad)) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	for _, want := range []string{
		`&lt;script&gt;alert(1)&lt;/script&gt;`,
		`data-kind="&#34;&gt;&lt;img src=x onerror=1&gt;"`,
		`&#34;&gt;&lt;img src=x onerror=1&gt;&lt;script&gt;`,
	} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks the escaped %q", want)
		}
	}
	els := parsePage(t, page)
	assertOffline(t, els, page)
	found := map[string]bool{}
	for _, e := range els {
		switch {
		case e.name == "section" && e.attrs["data-kind"] == img:
			found["kind"] = true
		case e.name == "dd" && e.text == url:
			found["url"] = true
		case e.name == "li" && e.text == note:
			found["note"] = true
		case e.name == "title" && strings.HasSuffix(e.text, "Retry-After "+header):
			found["header"] = true
		}
	}
	for _, k := range []string{"kind", "url", "note", "header"} {
		if !found[k] {
			t.Errorf("the injected %s is not in the page as text", k)
		}
	}
}

func TestHTMLEmptyAndInterrupted(t *testing.T) {
	rec := &results.Recorded{Header: results.StreamHeader{Type: "header", Command: "probe", Target: "http://127.0.0.1:9/"}}
	run := probeRunOf(rec, "x.jsonl")
	if run.Complete || run.Inference == nil || run.Inference.Family != probe.Inconclusive {
		t.Fatalf("empty interrupted probe stream gave %+v", run)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, NewDocument("test", "report", "probe", run)); err != nil {
		t.Fatal(err)
	}
	parsePage(t, buf.Bytes())
	if !strings.Contains(buf.String(), "interrupted") {
		t.Error("the page does not say the run was interrupted")
	}
}

func TestTimelineSamplesHugeRuns(t *testing.T) {
	rs := make([]results.Result, 3*maxPoints+1)
	for i := range rs {
		rs[i] = results.Result{Seq: i + 1, Sent: time.Duration(i) * time.Millisecond, Done: time.Duration(i)*time.Millisecond + 500*time.Microsecond, Status: 200}
	}
	c := timeline(1, rs)
	if c.Points > maxPoints || c.Points < maxPoints/2 || c.Note == "" {
		t.Errorf("%d requests drew %d points (note %q)", len(rs), c.Points, c.Note)
	}
}

// The intervals chart replays the inferred model exactly as the inference
// scored it, so it explains the very decisions the inference says its model
// explains: on the recorded probe, and on that probe with its send times
// moved by 1.5 ms either way — scheduling noise of a loaded machine, within
// the replay's timing uncertainty, which a naive replay at send + RTT/2
// does not allow for (it got 10 of these 133 decisions wrong).
func TestChartExplainsWhatTheInferenceExplains(t *testing.T) {
	rec := readRecorded(t, recordedProbe)
	jittered := slices.Clone(rec.Results)
	for i := range jittered {
		r := &jittered[i]
		d := time.Duration(r.Seq%3-1) * 1500 * time.Microsecond
		r.Sent, r.FirstByte, r.Done = r.Sent+d, r.FirstByte+d, r.Done+d
	}
	for name, rs := range map[string][]results.Result{"recorded": rec.Results, "jittered": jittered} {
		obs := probe.NewObservation(rec.Header.Start, rs)
		inf := probe.Infer(obs)
		run := ProbeRun(rec.Header.Target, rec.Header.URL, &probe.Result{Observation: obs, Inference: inf}, nil)
		rp, err := replayModel(&run)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := fmt.Sprintf("explains %d of %d decisions", inf.Explained, inf.Decisions)
		if c := intervals(&run); rp.Explained() != inf.Explained || len(rp.Requests) != inf.Decisions || !strings.Contains(c.Note, want) {
			t.Errorf("%s: the chart's model %s explains %d of %d decisions, the inference (%s) %d of %d; note %q",
				name, modelText(rp.Config), rp.Explained(), len(rp.Requests), inf.Summary(), inf.Explained, inf.Decisions, c.Note)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{2.5, 10, 0.5}, {2.5, 50, 0.05}, {60, 10, 10}, {0.013, 10, 0.002}, {7, 5, 2}} {
		if got := niceStep(c.span, c.n); abs(got-c.want) > 1e-12 {
			t.Errorf("niceStep(%v, %d) = %v, want %v", c.span, c.n, got, c.want)
		}
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// Sampling a huge run keeps each outcome's share: a limiter admitting every
// other request must not come out all one colour.
func TestTimelineSamplingKeepsOutcomes(t *testing.T) {
	rs := make([]results.Result, 2*maxPoints+2)
	for i := range rs {
		st := 200
		if i%2 == 1 {
			st = 429
		}
		rs[i] = results.Result{Seq: i + 1, Sent: time.Duration(i) * time.Millisecond, Done: time.Duration(i)*time.Millisecond + 100*time.Microsecond, Status: st}
	}
	c := timeline(1, rs)
	n := map[string]int{}
	for _, s := range c.Shapes {
		if s.Seq > 0 {
			n[s.Outcome]++
		}
	}
	if n[outAdmitted] == 0 || n[outRejected] == 0 || abs(float64(n[outAdmitted]-n[outRejected])) > 2 || c.Points > maxPoints+2 {
		t.Errorf("sampled points by outcome %v (%d drawn)", n, c.Points)
	}
}
