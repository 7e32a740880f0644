package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/report"
)

const simBucket = "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&seed=3"

// A simulated probe run twice writes the same stream, byte for byte, and
// prints the same inference: its seed replays it.
func TestSimulatedProbeIsReplayedByItsSeed(t *testing.T) {
	dir := t.TempDir()
	var streams [2][]byte
	var docs [2]report.ProbeOutput
	for i := range streams {
		out := filepath.Join(dir, []string{"a.jsonl", "b.jsonl"}[i])
		code, stdout, stderr := runCmd(t, "probe", simBucket, "-o", "json", "-q", "--out", out)
		if code != ExitOK {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if err := json.Unmarshal([]byte(stdout), &docs[i]); err != nil {
			t.Fatal(err)
		}
		var err error
		if streams[i], err = os.ReadFile(out); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(streams[0], streams[1]) {
		t.Error("two probes of one seed wrote different streams")
	}
	a, b := docs[0].Inference, docs[1].Inference
	if a.Family != "token_bucket" || a.Summary() != b.Summary() || a.Confidence != b.Confidence {
		t.Errorf("inferred %s (%.2f) and %s (%.2f), want one token bucket twice", a.Summary(), a.Confidence, b.Summary(), b.Confidence)
	}
	// report reads a simulated stream like any other, to the same answer.
	code, stdout, _ := runCmd(t, "report", filepath.Join(dir, "a.jsonl"))
	if code != ExitOK || !strings.Contains(stdout, a.Summary()) {
		t.Errorf("report: exit %d, want the probe's %q in\n%s", code, a.Summary(), stdout)
	}
}

// A simulated probe that fails says how to replay it; a command that runs
// an attack profile refuses a sim: target before anything runs.
func TestSimulatedTargetsOutsideTheProbe(t *testing.T) {
	code, _, stderr := runCmd(t, "probe", "sim:token_bucket?rate=5/s&burst=10&fail=die&fail-at=3s", "-q", "--out", filepath.Join(t.TempDir(), "r.jsonl"))
	if code != ExitUntested || !strings.Contains(stderr, "replay: ratecheck probe 'sim:token_bucket?rate=5/s&burst=10&fail=die&fail-at=3s&seed=0'") {
		t.Errorf("a dying simulated server: exit %d, want 3 and the replay command in\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"attack", "--profile", "burst", "sim:none"},
		{"compare", "sim:none", "builtin:none"},
	} {
		code, _, stderr := runCmd(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "a sim: target runs the probe's experiment only") {
			t.Errorf("%v: exit %d, want 2 naming why\n%s", args, code, stderr)
		}
	}
}

// selftest's output is a function of its seed (the time goes to stderr);
// --sim is required. The sweep is the smallest that still shows it: two
// probes, so that the second probe's seed is drawn from the sweep's too,
// and seed 2, whose two draws are cheap (a faulted or interrupted run and
// a judged fixed window: a fifth of a second; seed 5's took 6 s).
func TestSelftestIsItsSeed(t *testing.T) {
	var outs [2]string
	for i := range outs {
		code, stdout, stderr := runCmd(t, "selftest", "--sim", "2", "--seed", "2")
		if code != ExitOK && code != ExitFailed {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		outs[i] = stdout
	}
	if outs[0] != outs[1] || !strings.Contains(outs[0], "simulation sweep: 2 probes (seed 2)") {
		t.Errorf("two sweeps of seed 2 printed\n%s\nand\n%s", outs[0], outs[1])
	}
	if code, _, stderr := runCmd(t, "selftest"); code != ExitUsage || !strings.Contains(stderr, "--sim N is required") {
		t.Errorf("selftest without --sim: exit %d\n%s", code, stderr)
	}
}

// A quota of an hour: check passes the limit the probe measured and leaves
// the window it could not observe untested (exit 3); a quota the budget
// cannot spend is refused, exit 2, naming the --max-requests that would.
func TestQuotaLongerThanAProbe(t *testing.T) {
	const hour = "sim:fixed_window?limit=60&window=1h&seed=1"
	dir := t.TempDir()
	for i, tc := range []struct {
		exp  string
		code int
	}{{"limit=60", ExitOK}, {"window=1h", ExitUntested}, {"limit=80", ExitFailed}} {
		code, stdout, stderr := runCmd(t, "check", hour, "-e", tc.exp, "-q", "--out", filepath.Join(dir, fmt.Sprintf("c%d.jsonl", i)))
		if code != tc.code {
			t.Errorf("check -e %s: exit %d, want %d\n%s%s", tc.exp, code, tc.code, stdout, stderr)
		}
	}
	out := filepath.Join(dir, "q.jsonl")
	code, _, stderr := runCmd(t, "probe", "sim:fixed_window?limit=5000&window=1h&seed=1", "-q", "--out", out)
	if code != ExitUsage || !strings.Contains(stderr, "declares a quota of 5000 per 1h0m0s") || !strings.Contains(stderr, "give --max-requests 5203") {
		t.Errorf("a quota of 5000 an hour: exit %d, want 2 naming the budget\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err != nil {
		t.Errorf("the calibration's stream is gone: %v", err)
	}
}

// check's stated model, refuted by the first burst: exit 1 after that
// burst, naming it; the right one is not refuted.
func TestCheckRefutesAStatedCapacityAtOnce(t *testing.T) {
	const target = "sim:fixed_window?limit=100&window=1m&seed=1"
	dir := t.TempDir()
	out := filepath.Join(dir, "wrong.jsonl")
	code, stdout, stderr := runCmd(t, "check", target, "-e", "family=fixed_window", "-e", "limit=80", "-e", "window=60s", "-q", "-o", "json", "--out", out)
	var doc struct {
		Runs []struct {
			ElapsedS float64 `json:"elapsed_s"`
			Summary  struct {
				Requests int `json:"requests"`
			} `json:"summary"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Runs) != 1 || doc.Runs[0].Summary.Requests == 0 {
		t.Fatalf("document: %v\n%s", err, stdout)
	}
	run := doc.Runs[0]
	if code != ExitFailed || !strings.Contains(stderr, "limit=80: expected 80, actual the burst of 210 released at once admitted 97") || run.Summary.Requests > 300 || run.ElapsedS > 15 {
		t.Errorf("limit=80 against 100: exit %d after %d requests in %.1f s, want 1 after the first burst, naming it\n%s", code, run.Summary.Requests, run.ElapsedS, stderr)
	}
	// The right capacity is not refuted (what the rest of the probe then
	// shows is the whole probe's: a 20 s budget leaves the window untested).
	code, _, stderr = runCmd(t, "check", target, "-e", "family=fixed_window", "-e", "limit=100", "-e", "window=60s", "-q", "--max-time", "20s", "--out", filepath.Join(dir, "right.jsonl"))
	if code == ExitFailed || strings.Contains(stderr, "refuted") {
		t.Errorf("the right model: exit %d\n%s", code, stderr)
	}
}
