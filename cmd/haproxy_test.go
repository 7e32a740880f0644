package cmd

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
)

// A config haproxy -c rejects: exit 2, one line with HAProxy's message at the
// user's file:line, nothing left running; an explicit --haproxy-bin that
// does not exist is exit 2 too.
func TestHAProxyBadConfigCLI(t *testing.T) {
	testenv.Need(t, "haproxy")
	inRepoRoot(t)
	out := t.TempDir()
	tmp := testenv.IsolateTemp(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"attack", "--profile", "burst", "--out", filepath.Join(out, "a.jsonl"), "haproxy:testdata/haproxy/bad.cfg"}, "testdata/haproxy/bad.cfg:4: haproxy rejected the configuration: 'http-request deny' expects"},
		{[]string{"probe", "--out", filepath.Join(out, "p.jsonl"), "haproxy:testdata/haproxy/bad.cfg"}, "testdata/haproxy/bad.cfg:4: haproxy rejected"},
		{[]string{"probe", "--haproxy-bin", filepath.Join(out, "no-haproxy"), "--out", filepath.Join(out, "q.jsonl"), "haproxy:testdata/haproxy/req-rate.cfg"}, "--haproxy-bin"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), tc.args, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != ExitUsage || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", tc.args, code, msg, tc.want)
		}
		assertNothingLeft(t, tmp)
	}
	testenv.NoChildrenLeft(t)
}

// A full config runs: what ratecheck rewrote is on stderr, prefixed haproxy:,
// and the burst meets the config's limit (gt 5). HAProxy runs one thread
// per CPU and a request is counted by track-sc0 before the deny reads the
// rate, so a request on another thread counted in between can push one
// more over: of a burst released at one instant, 5 − (threads − 1) to 5
// pass.
func TestHAProxyAttackCLI(t *testing.T) {
	testenv.Need(t, "haproxy")
	inRepoRoot(t)
	out := filepath.Join(t.TempDir(), "r.jsonl")
	tmp := testenv.IsolateTemp(t)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"attack", "--profile", "burst", "--burst", "20", "--idle", "100ms", "--out", out, "haproxy:testdata/haproxy/full.cfg"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if want := "haproxy: testdata/haproxy/full.cfg:15: `bind *:8080` rewritten to `bind 127.0.0.1:<port>`"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	m := regexp.MustCompile(`burst of 20 after 100ms idle: (\d+) admitted`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no burst verdict in:\n%s", stdout.String())
	}
	if n, _ := strconv.Atoi(m[1]); n > 5 || n < max(1, 5-(runtime.NumCPU()-1)) {
		t.Errorf("%d of 20 admitted; want 5 (at least %d with %d threads)", n, max(1, 5-(runtime.NumCPU()-1)), runtime.NumCPU())
	}
	assertNothingLeft(t, tmp)
	testenv.NoChildrenLeft(t)
}
