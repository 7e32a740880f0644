package cmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// recordedProbe is report's recorded probe of
// builtin:token_bucket?rate=10/s&burst=10.
const recordedProbe = "../report/testdata/probe.jsonl"

func TestReportRerendersARecordedProbe(t *testing.T) {
	dir := t.TempDir()
	html, js, junit := filepath.Join(dir, "p.html"), filepath.Join(dir, "p.json"), filepath.Join(dir, "p.xml")
	code, out, errs := runCmd(t, "report", recordedProbe, "--html", html, "--json", js, "--junit", junit)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "token_bucket: rate") || !strings.Contains(out, "grade:") {
		t.Errorf("stdout:\n%s", out)
	}
	for _, p := range []string{html, js, junit} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
		if !strings.Contains(errs, "report: "+p) {
			t.Errorf("stderr does not name %s:\n%s", p, errs)
		}
	}
	var d struct {
		Command string `json:"command"`
		Runs    []struct {
			Kind      string `json:"kind"`
			Inference struct{ Family string }
		} `json:"runs"`
	}
	b, _ := os.ReadFile(js)
	if err := json.Unmarshal(b, &d); err != nil || d.Command != "probe" || len(d.Runs) != 1 || d.Runs[0].Inference.Family != "token_bucket" {
		t.Errorf("json %+v (%v)", d, err)
	}
	// -o json is the same document.
	code, out, _ = runCmd(t, "report", recordedProbe, "-o", "json")
	if code != ExitOK || !strings.Contains(out, `"schema_version": 1`) {
		t.Errorf("-o json: exit %d\n%.300s", code, out)
	}
}

func TestReportExpectationsOffline(t *testing.T) {
	if code, out, errs := runCmd(t, "report", recordedProbe, "--expect", "family=token_bucket", "--expect", "burst=10"); code != ExitOK {
		t.Errorf("exit %d, want 0\n%s\n%s", code, out, errs)
	}
	code, _, errs := runCmd(t, "report", recordedProbe, "--expect", "family=fixed_window")
	if code != ExitFailed || !strings.Contains(errs, "expected fixed_window, actual token_bucket") {
		t.Errorf("exit %d, want 1: %s", code, errs)
	}
}

func TestReportSeveralAndAttackStreams(t *testing.T) {
	dir := t.TempDir()
	att := filepath.Join(dir, "a.jsonl")
	stream := `{"type":"header","schema":1,"tool":"ratecheck","command":"attack","target":"t","url":"http://127.0.0.1:9/","profile":"burst","start":"2026-01-01T00:00:00Z"}
{"type":"result","seq":1,"phase":"burst","sent_ns":1000,"first_byte_ns":900000,"done_ns":1000000,"status":200}
{"type":"result","seq":2,"phase":"burst","sent_ns":2000,"first_byte_ns":300000,"done_ns":400000,"status":429,"headers":{"retry-after":"1"}}
{"type":"result","seq":3,"phase":"burst","sent_ns":3000,"done_ns":5000000,"error":"timeout"}
`
	if err := os.WriteFile(att, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(dir, "r.html")
	code, out, errs := runCmd(t, "report", recordedProbe, att, "--html", html)
	// The attack's stream has no end record: exit 3 as the interrupted
	// attack itself gave, naming it (the probe's concluded).
	if code != ExitUntested || !strings.Contains(errs, "a.jsonl: the run was cut short") || strings.Contains(errs, filepath.Base(recordedProbe)+":") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "interrupted") || !strings.Contains(out, "burst profile") {
		t.Errorf("stdout:\n%s", out)
	}
	b, _ := os.ReadFile(html)
	if !bytes.Contains(b, []byte(`id="overview"`)) || bytes.Count(b, []byte("data-seq=")) != 133+3 {
		t.Errorf("side-by-side page: overview %v, %d points", bytes.Contains(b, []byte(`id="overview"`)), bytes.Count(b, []byte("data-seq=")))
	}
	// Expectations need a probe.
	if code, _, errs := runCmd(t, "report", att, "--expect", "family=none"); code != ExitUsage || !strings.Contains(errs, "not a probe") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestReportUsageErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.jsonl")
	_ = os.WriteFile(junk, []byte("hello\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "at least one RESULTS"},
		{[]string{"report", filepath.Join(dir, "missing.jsonl")}, "missing.jsonl"},
		{[]string{"report", junk}, "not a ratecheck results file"},
		{[]string{"report", recordedProbe, "-o", "xml"}, "--output"},
		{[]string{"report", recordedProbe, "--expect", "nope"}, "KEY=VALUE"},
		{[]string{"report", recordedProbe, "--html", filepath.Join(dir, "no", "such", "dir", "r.html")}, "--html " + filepath.Join(dir, "no", "such", "dir", "r.html") + " cannot be written"},
	}
	for _, c := range cases {
		code, _, errs := runCmd(t, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// A concluded attack's stream carries its profile's outcome: report shows
// the same table, verdict and metrics the live run printed.
func TestReportShowsTheAttacksOwnVerdict(t *testing.T) {
	dir := t.TempDir()
	stream := filepath.Join(dir, "a.jsonl")
	code, live, errs := runCmd(t, "attack", "--profile", "burst", "--burst", "12", "--idle", "100ms", "--quiet", "-o", "json",
		"--out", stream, "builtin:token_bucket?rate=2/s&burst=5")
	if code != ExitOK {
		t.Fatalf("attack: exit %d\n%s", code, errs)
	}
	var att struct {
		Verdict string          `json:"verdict"`
		Metrics json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(live), &att); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(att.Verdict, "5 admitted") {
		t.Fatalf("live verdict %q: a token bucket of 5 admits 5 of a burst", att.Verdict)
	}
	code, out, errs := runCmd(t, "report", stream)
	if code != ExitOK || !strings.Contains(out, att.Verdict) || !strings.Contains(out, "send spread (first to last)") {
		t.Fatalf("report text: exit %d, want the live verdict %q and the burst table\n%s\n%s", code, att.Verdict, out, errs)
	}
	code, out, _ = runCmd(t, "report", "-o", "json", stream)
	var doc struct {
		Runs []struct {
			Verdict string          `json:"verdict"`
			Metrics json.RawMessage `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != ExitOK || err != nil || len(doc.Runs) != 1 {
		t.Fatalf("report json: exit %d, %v\n%s", code, err, out)
	}
	var want, got any
	_ = json.Unmarshal(att.Metrics, &want)
	_ = json.Unmarshal(doc.Runs[0].Metrics, &got)
	if doc.Runs[0].Verdict != att.Verdict || !reflect.DeepEqual(want, got) {
		t.Fatalf("report json run: verdict %q metrics %s; live: %q %s", doc.Runs[0].Verdict, doc.Runs[0].Metrics, att.Verdict, att.Metrics)
	}
}
