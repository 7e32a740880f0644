package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/sim"
)

// runCmd runs the command line in-process with a hard time limit.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = Run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

const tb20 = "builtin:token_bucket?rate=10/s&burst=20"

// simNetwork is the link the command tests' simulated targets run across
// (grade's): a LAN's round trip with jitter and a loaded machine's stalls,
// on one fixed seed.
const simNetwork = "rtt=1ms&jitter=200us&stall=15ms&seed=1"

// simOf is builtin's limiter as a sim: target across simNetwork: the same
// reference limiter and response contract, probed by the real plan on
// virtual time (targets/sim), the same run every time.
func simOf(builtin string) string { return sim.FromBuiltin(builtin, simNetwork) }

// The check tests below check the command — its expectations, exit codes,
// messages and report files — on what the probe inferred, so they probe
// sim: targets: a live probe would spend its wall time (3-10 s each) to
// show nothing more about the command, and a loaded machine may probe a
// different run each time (issue #29). The command on a live target is
// the unreachable case of TestCheckUntestedIsExit3 and the bad-input
// matrix's live cases.

// The acceptance examples for check, through the real command, on
// a simulated token bucket of 10/s burst 20.
func TestCheckPassesWhenExpectationsHold(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "check", simOf(tb20), "--expect", "family=token_bucket", "--expect", "rate=10/s±10%", "--expect", "burst=20±2",
		"--out", filepath.Join(dir, "r.jsonl"), "--junit", filepath.Join(dir, "j.xml"), "--html", filepath.Join(dir, "r.html"), "--json", filepath.Join(dir, "r.json"))
	if code != ExitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "PASS: 3 passed, 0 failed, 0 untested") || !strings.Contains(out, "rate=10/s±10%") {
		t.Errorf("stdout:\n%s", out)
	}
	var j struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "j.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(b, &j); err != nil || j.Tests < 4 || j.Failures != 0 || j.Errors != 0 {
		t.Errorf("junit %+v (%v)", j, err)
	}
	var d struct {
		SchemaVersion int    `json:"schema_version"`
		Command       string `json:"command"`
		Outcome       string `json:"outcome"`
		Runs          []struct {
			Expectations []struct{ Result string } `json:"expectations"`
		} `json:"runs"`
	}
	b, _ = os.ReadFile(filepath.Join(dir, "r.json"))
	if err := json.Unmarshal(b, &d); err != nil || d.SchemaVersion != 1 || d.Command != "check" || d.Outcome != "pass" || len(d.Runs) != 1 || len(d.Runs[0].Expectations) != 3 {
		t.Errorf("json %+v (%v)", d, err)
	}
	if h, err := os.ReadFile(filepath.Join(dir, "r.html")); err != nil || !bytes.Contains(h, []byte(`data-outcome="pass"`)) {
		t.Errorf("html: %v", err)
	}
}

// A failed expectation is exit 1, naming what was expected and what was
// found.
func TestCheckFailsNamingTheMismatch(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runCmd(t, "check", simOf(tb20), "--expect", "family=fixed_window", "--out", filepath.Join(dir, "r.jsonl"))
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"family=fixed_window: expected fixed_window, actual token_bucket"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "✗ FAIL") || !strings.Contains(out, "fixed_window") {
		t.Errorf("stdout:\n%s", out)
	}
}

// An expectation the run could not test is exit 3, never a pass.
func TestCheckUntestedIsExit3(t *testing.T) {
	dir := t.TempDir()
	// The requests went to several keys, so no scope trial ran and the
	// scope cannot be known: never a pass. (The plan's decision: simulated.)
	code, out, errs := runCmd(t, "check", simOf(tb20), "--key-header", "X-Key", "--keys", "3", "--expect", "family=token_bucket", "--expect", "scope=per-key", "--out", filepath.Join(dir, "r.jsonl"))
	if code != ExitUntested || !strings.Contains(errs, "scope=per-key") {
		t.Fatalf("exit %d, want 3\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// An unreachable target: a real socket's refusal, live.
	code, _, errs = runCmd(t, "check", "http://127.0.0.1:1/", "--expect", "family=token_bucket", "--max-time", "5s", "--timeout", "1s",
		"--out", filepath.Join(dir, "u.jsonl"), "--junit", filepath.Join(dir, "u.xml"))
	if code != ExitUntested {
		t.Fatalf("unreachable: exit %d, want 3\n%s", code, errs)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "u.xml")); err != nil || !bytes.Contains(b, []byte(`type="untested"`)) {
		t.Errorf("the JUnit file does not report the untested expectation: %v\n%s", err, b)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	typo := write("typo.yaml", "max_time: 20s\nendpoints:\n  - name: api\n    target: '"+tb20+"'\n    expct:\n      family: token_bucket\n")
	badExpect := write("expect.yaml", "endpoints:\n  - target: '"+tb20+"'\n    expect:\n      family: token_bucket\n      rat: 10/s\n")
	top := write("top.yaml", "endpoint:\n  - target: x\n")
	noTarget := write("notarget.yaml", "endpoints:\n  - name: a\n  - name: b\n    target: x\n")
	noExp := write("noexp.yaml", "endpoints:\n  - target: '"+tb20+"'\n")
	badSpec := write("badspec.yaml", "endpoints:\n  - target: 'builtin:gcra'\n    expect: [family=token_bucket]\n")
	badValue := write("badvalue.yaml", "endpoints:\n  - target: '"+tb20+"'\n    expect: [burst=many]\n")
	syntax := write("syntax.yaml", "endpoints:\n  - target: [\n")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "--config", typo}, `typo.yaml:5: unknown key "expct" in an endpoint`},
		{[]string{"check", "--config", badExpect}, `expect.yaml:5: unknown expectation key "rat"`},
		{[]string{"check", "--config", top}, `top.yaml:1: unknown key "endpoint" at the top level`},
		{[]string{"check", "--config", noTarget}, "notarget.yaml:2: endpoint 1 has no target"},
		{[]string{"check", "--config", noExp}, "noexp.yaml:2: endpoint " + tb20 + " has no expectations"},
		{[]string{"check", "--config", badSpec}, `badspec.yaml:2: target "builtin:gcra"`},
		{[]string{"check", "--config", badValue}, `badvalue.yaml:3: expectation burst=many`},
		{[]string{"check", "--config", syntax}, "syntax.yaml:"},
		{[]string{"check", "--config", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"check", tb20}, "at least one --expect"},
		{[]string{"check"}, "needs a TARGET"},
		{[]string{"check", tb20, tb20}, "one TARGET"},
		{[]string{"check", tb20, "--expect", "family"}, "KEY=VALUE"},
		{[]string{"check", tb20, "--expect", "famly=token_bucket"}, `unknown expectation key "famly"`},
		{[]string{"check", tb20, "--min-grade", "E"}, "--min-grade"},
		{[]string{"check", tb20, "--config", typo, "--expect", "family=none"}, "not both"},
		{[]string{"check", "--config", typo, "--expect", "family=none"}, "--expect goes with a TARGET"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(t, c.args...)
		if code != ExitUsage || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q (stdout %q)", c.args, code, errs, c.want, out)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: a usage error is one line, got:\n%s", c.args, errs)
		}
	}
}

// A --config of several endpoints runs each and says how each went: one
// that passes and one whose status and grade fail make exit 1, with one
// results stream per endpoint. The endpoints are sim: targets (a config
// names any target kind).
func TestCheckConfigSeveralEndpoints(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ratecheck.yaml")
	bucket := simOf("builtin:token_bucket?rate=10/s&burst=10")
	body := `max_time: 20s
endpoints:
  - name: bucket
    target: '` + bucket + `'
    expect:
      family: token_bucket
      burst: 10±1
      retry_after: present
  - name: window
    target: '` + simOf("builtin:fixed_window?limit=10&window=1s&status=503") + `'
    min_grade: A
    expect:
      - family=fixed_window
      - status=429
`
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd(t, "check", "--config", cfg, "--out", dir+"/", "--json", filepath.Join(dir, "r.json"), "--quiet")
	if code != ExitFailed {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	if !strings.Contains(out, "bucket: "+bucket) || !strings.Contains(out, "PASS: 3 passed") ||
		!strings.Contains(out, "status=429") || !strings.Contains(out, "503 ×") {
		t.Errorf("stdout:\n%s", out)
	}
	var d struct {
		Outcome string `json:"outcome"`
		Runs    []struct {
			Name    string `json:"name"`
			Outcome string `json:"outcome"`
		} `json:"runs"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	if err := json.Unmarshal(b, &d); err != nil || d.Outcome != "fail" || len(d.Runs) != 2 || d.Runs[0].Outcome != "pass" || d.Runs[1].Outcome != "fail" || d.Runs[1].Name != "window" {
		t.Errorf("json %+v (%v)", d, err)
	}
	streams, _ := filepath.Glob(filepath.Join(dir, "ratecheck-check-*-[12].jsonl"))
	if len(streams) != 2 {
		t.Errorf("results streams %v, want one per endpoint", streams)
	}
}
