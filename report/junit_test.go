package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/grade"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/expect"
	"github.com/ratecheck/ratecheck/results"
)

func TestJUnitRecordedProbe(t *testing.T) {
	d, _ := probeDoc(t)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, d); err != nil {
		t.Fatal(err)
	}
	var s junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	run := d.Runs[0]
	if len(s.Suites) != 1 || s.Suites[0].Name != run.Target {
		t.Fatalf("suites %+v", s.Suites)
	}
	// The inference, then one case per grading check.
	if want := 1 + len(run.Grade.Checks); s.Tests != want || len(s.Suites[0].Cases) != want {
		t.Errorf("%d tests, want %d", s.Tests, want)
	}
	if s.Suites[0].Cases[0].Name != "inference" || s.Suites[0].Cases[0].SystemOut == nil ||
		!strings.Contains(s.Suites[0].Cases[0].SystemOut.Text, run.Inference.Summary()) {
		t.Errorf("first case %+v", s.Suites[0].Cases[0])
	}
}

func TestJUnitGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, frozenDoc(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "probe.junit.xml", buf.Bytes())
}

func TestJUnitOutcomes(t *testing.T) {
	run := Run{Target: "http://127.0.0.1:8080/", Kind: "probe", Profile: "probe", ElapsedS: 1.5, Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Inference: &probe.Inference{Family: "token_bucket", RatePerS: 12, Burst: 20, Scope: "untested"},
		Grade: &grade.Report{Letter: "C", Score: 70, Checks: []grade.Check{
			{ID: "status.429", Title: "rejects with 429", Outcome: grade.Fail, Severity: grade.SeverityError, Expected: "every rejection is 429", Actual: "503 ×30", Seqs: []int{4, 5}},
			{ID: "problem.json", Title: "problem+json", Outcome: grade.Warn, Severity: grade.SeverityWarn, Expected: "problem+json", Actual: "text/html"},
			{ID: "remaining.truthful", Title: "Remaining", Outcome: grade.Skip, Severity: grade.SeverityError, Actual: "no quota headers"},
			{ID: "cache.429", Title: "cache", Outcome: grade.Pass, Severity: grade.SeverityError, Expected: "no-store", Actual: "no-store"},
		}},
		Expectations: []expect.Outcome{
			{Expectation: "family=token_bucket", Expected: "token_bucket", Actual: "token_bucket", Result: expect.Pass},
			{Expectation: "rate=10/s±10%", Expected: "10/s ± 10% (9/s – 11/s)", Actual: "12/s", Result: expect.Fail},
			{Expectation: "scope=per-key", Expected: "per-key", Actual: "not tested", Result: expect.Untested, Note: "needs --key-header"},
		},
		Notes: []string{"a note ]]> with a CDATA end"},
	}
	bad := Run{Target: "nginx:bad.conf", Kind: "probe", Error: "connection refused"}
	d := NewDocument("test", "check", "probe", run, bad)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, d); err != nil {
		t.Fatal(err)
	}
	var s junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	// run: inference + 3 expectations + 4 checks; bad: the run's error.
	if s.Tests != 9 || s.Failures != 2 || s.Errors != 2 || s.Skipped != 1 {
		t.Errorf("tests %d failures %d errors %d skipped %d, want 9 2 2 1\n%s", s.Tests, s.Failures, s.Errors, s.Skipped, buf.String())
	}
	byName := map[string]junitCase{}
	for _, c := range s.Suites[0].Cases {
		byName[c.Name] = c
	}
	rate := byName["expect rate=10/s±10%"]
	if rate.Failure == nil || !strings.Contains(rate.Failure.Message, "expected 10/s ± 10% (9/s – 11/s), actual 12/s") {
		t.Errorf("rate case %+v", rate)
	}
	st := byName["status.429: rejects with 429"]
	if st.Failure == nil || !strings.Contains(st.Failure.Message, "expected every rejection is 429; actual 503 ×30") || !strings.Contains(st.Failure.Text, "#4, #5") {
		t.Errorf("status case %+v", st)
	}
	if c := byName["problem.json: problem+json"]; c.Failure != nil || c.SystemOut == nil || !strings.HasPrefix(c.SystemOut.Text, "warning:") {
		t.Errorf("a warning is not a failure: %+v", c)
	}
	if c := byName["expect scope=per-key"]; c.Error == nil || c.Error.Type != "untested" {
		t.Errorf("an untested expectation is an error: %+v", c)
	}
	if s.Suites[0].SystemOut == nil || s.Suites[0].SystemOut.Text != run.Notes[0] {
		t.Errorf("notes lost through CDATA: %+v", s.Suites[0].SystemOut)
	}
	if e := s.Suites[1].Cases[0].Error; e == nil || !strings.Contains(e.Message, "connection refused") {
		t.Errorf("untested target: %+v", s.Suites[1].Cases[0])
	}
}

func TestJUnitAttack(t *testing.T) {
	rs := []results.Result{{Seq: 1, Sent: 0, Done: time.Millisecond, Status: 200}, {Seq: 2, Sent: time.Millisecond, Done: 2 * time.Millisecond, Status: 429}}
	run := AttackRun("builtin:none", "http://127.0.0.1:1/", "burst", time.Time{}, rs, &results.Report{Verdict: "1 admitted", Rows: [][]string{{"admitted", "1"}}}, 0, nil)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, NewDocument("test", "attack", "burst", run)); err != nil {
		t.Fatal(err)
	}
	var s junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Tests != 1 || s.Failures+s.Errors != 0 || s.Suites[0].Cases[0].Name != "attack: burst" {
		t.Errorf("%+v", s)
	}
}
