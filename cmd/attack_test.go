package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A target that could not be tested is exit 3 with the cause in the
// verdict line, never "0 admitted, 0 rejected".
func TestAttackUntestedExits3WithTheCause(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := runCmd(t, "attack", "--profile", "burst", "--idle", "10ms", "--quiet", "--out", out, "http://127.0.0.1:1/")
	want := "not tested: every request failed: connection refused to 127.0.0.1:1"
	if code != ExitUntested || !strings.Contains(stdout, want) || strings.Contains(stdout, "0 admitted, 0 rejected") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "ratecheck: "+want) {
		t.Fatalf("stderr %q does not end with the cause", stderr)
	}
	// The -o json document says it too.
	out = filepath.Join(t.TempDir(), "r.jsonl") // --out is never written over
	code, stdout, _ = runCmd(t, "attack", "--profile", "steady", "--rate", "100/s", "--duration", "50ms", "-o", "json", "--quiet", "--out", out, "http://127.0.0.1:1/")
	var doc struct {
		Verdict  string
		Untested string
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || code != ExitUntested || !strings.Contains(doc.Untested, "connection refused") || !strings.HasPrefix(doc.Verdict, "not tested: ") {
		t.Fatalf("exit %d, %v: %s", code, err, stdout)
	}
}

// Combinations that cannot be run are exit 2 with one line naming the
// flags, before anything is sent: no results file, and no time spent (a
// burst of ten million used to be cut silently and take ~600 MB).
func TestAttackBadCombinationsExit2BeforeSending(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--burst", "50", "--max-requests", "10"}, "--burst 50 is more than the request budget --max-requests 10"},
		{[]string{"--burst", "10000000"}, "--burst 10000000 is beyond the ceiling of 10000"},
		{[]string{"--burst", "2000"}, "--burst 2000 needs 2000 connections at once, more than --max-conns 1000 allows"},
		{[]string{"--burst", "5", "--max-conns", "20000"}, "--max-conns 20000 is beyond the ceiling"},
		{[]string{"--burst", "5", "--tail", "-1s"}, "--tail must be ≥ 0"},
	} {
		out := filepath.Join(t.TempDir(), "r.jsonl")
		began := time.Now()
		args := append([]string{"attack", "--profile", "burst", "--quiet", "--out", out}, c.args...)
		code, _, stderr := runCmd(t, append(args, "builtin:none")...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: a results file was written", c.args)
		}
		if took := time.Since(began); took > 2*time.Second {
			t.Errorf("%v: took %v to refuse", c.args, took)
		}
	}
	for _, args := range [][]string{
		{"--profile", "storm", "--clients", "2000"},
		{"--profile", "boundary", "--limit", "600"},
		{"--profile", "steady", "--rate", "max", "--connections", "5000"},
	} {
		code, _, stderr := runCmd(t, append(append([]string{"attack", "--quiet"}, args...), "builtin:none")...)
		if code != ExitUsage || !strings.Contains(stderr, "--max-conns 1000") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// compare's profile runs share the flags and the refusals.
func TestCompareBurstBeyondMaxConnsExits2(t *testing.T) {
	code, _, stderr := runCmd(t, "compare", "--burst", "2000", "--quiet", "--out", t.TempDir()+"/", "builtin:none", "builtin:none")
	if code != ExitUsage || !strings.Contains(stderr, "more than --max-conns 1000 allows") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// An interrupted attack prints what it measured, says it was cut short,
// and is exit 3: its figures are not the planned run's.
func TestAttackInterruptedExits3(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"attack", "--profile", "steady", "--rate", "100/s", "--duration", "20s", "--quiet", "--out", out, "builtin:none"}, &stdout, &stderr)
	if code != ExitUntested || !strings.Contains(stdout.String(), "cut short after") || !strings.Contains(stderr.String(), "interrupted after") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
}
