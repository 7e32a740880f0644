package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The TLS flags are checked before anything is sent: a certificate without
// its key (or the reverse), an unreadable or non-PEM CA file — each a usage
// error (exit 2) with one line naming the flag and the file.
func TestTLSFlagErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.txt")
	if err := os.WriteFile(notPEM, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--cert", notPEM}, "--cert and --key go together"},
		{[]string{"--key", notPEM}, "--cert and --key go together"},
		{[]string{"--cacert", filepath.Join(dir, "missing.pem")}, "missing.pem"},
		{[]string{"--cacert", notPEM}, "holds no PEM certificate"},
		{[]string{"--cert", notPEM, "--key", notPEM}, "client certificate"},
	} {
		var so, se bytes.Buffer
		args := append(append([]string{"attack", "--out", filepath.Join(dir, "r.jsonl")}, c.args...), "https://127.0.0.1:1/")
		code := Run(context.Background(), args, &so, &se)
		msg := strings.TrimSpace(se.String())
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q", c.args, code, msg, ExitUsage, c.want)
		}
	}
}
