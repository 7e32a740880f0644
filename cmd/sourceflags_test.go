package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// A bad --source-addrs is exit 2 with the item at fault, for every traffic
// command, before anything is sent.
func TestBadSourceAddrsExit2(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	for _, args := range [][]string{
		{"attack", "--profile", "burst", "--source-addrs", "127.0.0.300", "--out", out, "http://127.0.0.1:1/"},
		{"probe", "--source-addrs", "127.0.0.0/40", "--out", out, "http://127.0.0.1:1/"},
		{"check", "--source-addrs", "somehost", "--expect", "family=token_bucket", "--out", out, "http://127.0.0.1:1/"},
		{"compare", "--source-addrs", "10.0.0.0/8", "--out", out, "http://127.0.0.1:1/", "http://127.0.0.1:2/"},
	} {
		code, stdout, stderr := runCmd(t, append(args, "--quiet")...)
		if code != ExitUsage || !strings.Contains(stderr, "--source-addrs: source ") {
			t.Errorf("%s: exit %d\nstdout %s\nstderr %s", args[0], code, stdout, stderr)
		}
	}
}

// --expect scope=per-ip works in check, with no extra flag on a loopback
// target, in either spelling; a global limit fails it. What is checked is
// the expectation against the scope the probe inferred, so the targets are
// simulated (the simulator keys its limiter by source address as the
// reference server does); that the address trial works on real sockets is
// probe's TestProbeFindsTheScopeOnRealSockets.
func TestCheckExpectsScope(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, stdout, stderr := runCmd(t, "check", simOf("builtin:token_bucket?rate=10/s&burst=20&scope=ip"), "--expect", "scope=per-ip", "--expect", "scope=per_ip", "--out", out)
	if code != 0 || !strings.Contains(stdout, "2 passed, 0 failed") {
		t.Fatalf("per ip: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	out = filepath.Join(t.TempDir(), "r.jsonl") // --out is never written over
	code, stdout, stderr = runCmd(t, "check", simOf("builtin:token_bucket?rate=10/s&burst=20"), "--expect", "scope=per-ip", "--out", out)
	if code != ExitFailed || !strings.Contains(stdout, "global") {
		t.Fatalf("global: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
}

// A fleet spec that cannot run is exit 2 with the key at fault.
func TestBadFleetSpecExit2(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.jsonl")
	code, _, stderr := runCmd(t, "probe", "--quiet", "--out", out, "builtin:fleet?replicas=0&algo=token_bucket")
	if code != ExitUsage || !strings.Contains(stderr, `replicas "0": use a whole number from 1 to 64`) {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
}
