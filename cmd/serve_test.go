package cmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The acceptance example, through the real command: five 200s, then
// 429 with Retry-After and a problem+json body. align=first keeps the 2 s
// window from rolling over mid-test whatever the wall clock reads.
func TestServeCommandEndToEnd(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"serve", "--algo", "fixed_window", "--limit", "5", "--window", "2s",
			"--align", "first", "--addr", "127.0.0.1:0"}, pw, io.Discard)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no listening line: %v", err)
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("listening line %q has no loopback URL", line)
	}
	go io.Copy(io.Discard, pr)
	for i := 1; i <= 6; i++ {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := 200
		if i == 6 {
			want = 429
		}
		if resp.StatusCode != want {
			t.Fatalf("request %d: %d, want %d", i, resp.StatusCode, want)
		}
		if i == 6 {
			if resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(string(body), `"status":429`) {
				t.Fatalf("429 lacks Retry-After or problem+json: %v %s", resp.Header, body)
			}
		} else if resp.Header.Get("X-RateLimit-Limit") != "5" || resp.Header.Get("RateLimit-Policy") == "" {
			t.Fatalf("200 lacks quota headers: %v", resp.Header)
		}
	}
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("serve exited %d after stop, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop after cancel")
	}
}

func TestUsageErrorsExit2WithOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--rate", "ten"},
		{"serve", "--burst", "-1"},
		{"serve", "--algo", "magic"},
		{"serve", "--refill", "10ms"},                        // 10/s × 10 ms is a tenth of a token
		{"serve", "--algo", "sliding_log", "--refill", "1s"}, // token_bucket only
		{"serve", "--refill", "soon"},
		{"serve", "--no-such-flag"},
		{"no-such-command"},
		{"version", "extra"},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), args, io.Discard, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if code != ExitUsage || len(lines) != 1 || !strings.HasPrefix(lines[0], "ratecheck: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one 'ratecheck:' line", args, code, stderr.String())
		}
	}
}

func TestVersionAndCompletion(t *testing.T) {
	var out bytes.Buffer
	if code := Run(context.Background(), []string{"version"}, &out, io.Discard); code != 0 || !strings.HasPrefix(out.String(), "ratecheck ") {
		t.Fatalf("version: %d %q", code, out.String())
	}
	out.Reset()
	if code := Run(context.Background(), []string{"completion", "bash"}, &out, io.Discard); code != 0 || !strings.Contains(out.String(), "ratecheck") {
		t.Fatalf("completion bash: exit %d", code)
	}
}

func TestAttackBadInputExits2(t *testing.T) {
	for _, args := range [][]string{
		{"attack", "--profile", "nosuch", "builtin:none"},
		{"attack", "builtin:none"},
		{"attack", "--profile", "steady", "--rate", "0/s", "builtin:none"},
		{"attack", "--profile", "steady", "not a url"},
		{"attack", "--profile", "steady", "-H", "NoColon", "builtin:none"},
		{"attack", "--profile", "steady", "builtin:magic"},
		{"attack", "--profile", "burst", "--burst", "0", "builtin:none"},
		{"attack", "--profile", "steady", "-o", "yaml", "builtin:none"},
		{"attack", "--profile", "steady"},
	} {
		var stderr bytes.Buffer
		code := Run(context.Background(), args, io.Discard, &stderr)
		if code != ExitUsage || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line", args, code, stderr.String())
		}
	}
}

// An attack writes its results stream and prints a JSON report.
func TestAttackCommandJSON(t *testing.T) {
	out := t.TempDir() + "/r.jsonl"
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"attack", "--profile", "burst", "--burst", "30", "--idle", "10ms",
		"-o", "json", "--out", out, "builtin:token_bucket?rate=1/s&burst=10"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var rep struct {
		Profile string
		Metrics struct{ Admitted, Rejected int }
		Results string `json:"results_file"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if rep.Profile != "burst" || rep.Metrics.Admitted != 10 || rep.Metrics.Rejected != 20 || rep.Results != out {
		t.Fatalf("report %+v", rep)
	}
	b, err := os.ReadFile(out)
	if err != nil || strings.Count(string(b), "\n") != 32 { // header + 30 results + end
		t.Fatalf("results file: %d lines, %v", strings.Count(string(b), "\n"), err)
	}
}
