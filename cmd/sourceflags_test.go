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
