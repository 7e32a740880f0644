package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
)

// JUnit XML, as GitHub Actions reporters, GitLab and Jenkins read it: one
// <testsuite> per run (target), one <testcase> per grading check and per
// expectation, with the expected and the actual value in the failure
// message.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  *junitText      `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut *junitText    `xml:"system-out,omitempty"`
}

// junitText keeps its line breaks readable in the file.
type junitText struct {
	Text string `xml:",cdata"`
}

func text(s string) *junitText {
	if s == "" {
		return nil
	}
	return &junitText{Text: s}
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the document as JUnit XML.
func WriteJUnit(w io.Writer, d Document) error {
	d.settle()
	s := junitSuites{Name: "ratecheck " + d.Command}
	if d.Interrupted {
		s.Name += " — " + interruptedBanner
	}
	total := 0.0
	for i := range d.Runs {
		suite := junitRun(d, &d.Runs[i])
		s.Tests += suite.Tests
		s.Failures += suite.Failures
		s.Errors += suite.Errors
		s.Skipped += suite.Skipped
		total += d.Runs[i].ElapsedS
		s.Suites = append(s.Suites, suite)
	}
	s.Time = secs(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func secs(s float64) string { return fmt.Sprintf("%.3f", s) }

func junitRun(d Document, r *Run) junitSuite {
	name := r.Target
	if r.Name != "" {
		name = r.Name + " (" + r.Target + ")"
	}
	s := junitSuite{Name: name, Time: secs(r.ElapsedS)}
	if !r.Start.IsZero() {
		s.Timestamp = r.Start.UTC().Format("2006-01-02T15:04:05")
	}
	prop := func(k, v string) {
		if v != "" {
			s.Properties = append(s.Properties, junitProperty{Name: k, Value: v})
		}
	}
	prop("command", d.Command)
	prop("experiment", r.Kind)
	prop("profile", r.Profile)
	prop("url", r.URL)
	prop("results_file", r.ResultsFile)
	prop("verdict", r.Verdict)
	if r.Grade != nil {
		prop("grade", fmt.Sprintf("%s (%d/100, rubric %s)", r.Grade.Letter, r.Grade.Score, r.Grade.RubricVersion))
	}
	cls := "ratecheck." + r.Kind
	add := func(c junitCase) {
		if c.Classname == "" {
			c.Classname = cls
		}
		if c.Time == "" {
			c.Time = "0.000"
		}
		s.Tests++
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	// The run itself: it either ran or could not test the target.
	run := junitCase{Name: r.Kind + ": " + orDash(r.Profile), Time: secs(r.ElapsedS), SystemOut: text(runOut(r))}
	switch {
	case r.Stopped != "":
		prop("interrupted", "true")
		run.Error = &junitProblem{Type: "interrupted", Message: interruptedBanner + ": " + r.Verdict, Text: runOut(r)}
	case r.Error != "":
		run.Error = &junitProblem{Type: expect.Untested, Message: "could not be tested: " + r.Error, Text: r.Error}
	case r.Inference != nil && r.Inference.Family == probe.Inconclusive:
		run.Error = &junitProblem{Type: "inconclusive", Message: r.Inference.Summary(), Text: strings.Join(r.Inference.Evidence, "\n")}
	}
	if r.Inference != nil {
		run.Name = "inference"
	}
	add(run)
	for _, o := range r.Expectations {
		c := junitCase{Name: "expect " + o.Expectation, Classname: cls + ".expect"}
		out := fmt.Sprintf("expected: %s\nactual:   %s", o.Expected, o.Actual)
		if o.Note != "" {
			out += "\nnote:     " + o.Note
		}
		switch o.Result {
		case expect.Fail:
			c.Failure = &junitProblem{Type: "expectation", Message: o.Message(), Text: out}
		case expect.Untested:
			c.Error = &junitProblem{Type: expect.Untested, Message: o.Message(), Text: out}
		default:
			c.SystemOut = text(out)
		}
		add(c)
	}
	if r.Grade != nil {
		for _, ch := range r.Grade.Checks {
			add(junitCheck(cls+".grade", ch))
		}
	}
	s.SystemOut = text(strings.Join(r.Notes, "\n"))
	return s
}

func junitCheck(cls string, ch grade.Check) junitCase {
	c := junitCase{Name: ch.ID + ": " + ch.Title, Classname: cls}
	out := fmt.Sprintf("expected: %s\nactual:   %s\nsource:   %s\nseverity: %s", ch.Expected, ch.Actual, ch.Source, ch.Severity)
	if ch.Hint != "" {
		out += "\nhint:     " + ch.Hint
	}
	if len(ch.Seqs) > 0 {
		refs := make([]string, len(ch.Seqs))
		for i, s := range ch.Seqs {
			refs[i] = fmt.Sprintf("#%d", s)
		}
		out += "\nrequests: " + strings.Join(refs, ", ") + " (seq in the results file)"
	}
	msg := fmt.Sprintf("%s: expected %s; actual %s", ch.ID, ch.Expected, ch.Actual)
	switch ch.Outcome {
	case grade.Fail:
		c.Failure = &junitProblem{Type: ch.Severity, Message: msg, Text: out}
	case grade.Skip:
		c.Skipped = &junitSkipped{Message: "not exercised: " + ch.Actual}
	case grade.Warn:
		c.SystemOut = text("warning: " + msg + "\n" + out)
	default:
		c.SystemOut = text(out)
	}
	return c
}

func runOut(r *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", r.Verdict)
	fmt.Fprintf(&b, "%s; statuses %s\n", countsLine(r.Summary), statusText(r.Summary.Statuses))
	if r.Inference != nil {
		for _, e := range r.Inference.Evidence {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	for _, row := range r.Rows {
		fmt.Fprintf(&b, "%s\n", strings.Join(row, ": "))
	}
	return strings.TrimRight(b.String(), "\n")
}
