package report

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestProgressCountsAndDraws(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	var buf syncBuf
	p := NewProgress(&buf, true, time.Minute)
	for i, st := range []int{200, 429, 429, 0} {
		r := &results.Result{Seq: i + 1, Phase: "burst", Status: st}
		if st == 0 {
			r.Error = "timeout"
		}
		p.Add(r)
	}
	if got := p.Line(); !strings.HasPrefix(got, "burst · 4 requests · 1 admitted · 2 rejected · 1 errors · ≤ ") || strings.Contains(got, "\x1b") {
		t.Errorf("Line() = %q", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "4 requests") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	fmt.Fprintln(p.Writer(), "results: x.jsonl")
	p.Stop()
	p.Stop()
	out := buf.String()
	if !strings.Contains(out, "\r\x1b[2Kresults: x.jsonl\n") {
		t.Errorf("a message was not put on a cleared line: %q", out)
	}
	if !strings.Contains(out, "\x1b[32m1\x1b[0m admitted") || !strings.HasPrefix(out, "\r\x1b[2K") {
		t.Errorf("drawn %q", out)
	}
}

func TestProgressNoColorAndDisabled(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	var buf syncBuf
	p := NewProgress(&buf, true, 0)
	p.Add(&results.Result{Status: 200, Phase: "trace"})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(buf.String(), "trace") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	if out := buf.String(); strings.Contains(out, "\x1b[3") || !strings.Contains(out, "trace · 1 requests") {
		t.Errorf("NO_COLOR output %q", out)
	}
	var quiet syncBuf
	q := NewProgress(&quiet, false, time.Minute)
	q.Add(&results.Result{Status: 200})
	time.Sleep(3 * progressEvery)
	q.Stop()
	if quiet.String() != "" {
		t.Errorf("a disabled progress wrote %q", quiet.String())
	}
}

// A probe that grows its budget says so once per real step, on a line of
// its own, and the line counts down from the new budget.
func TestProgressSaysTheBudgetGrew(t *testing.T) {
	var buf syncBuf
	p := NewProgress(&buf, true, time.Minute)
	p.SetBudget(193*time.Second, "the window looks like 60 s")
	p.SetBudget(200*time.Second, "the window looks like 62 s") // 7 s more: not worth a line
	p.SetBudget(260*time.Second, "the window looks like 80 s")
	line := p.Line()
	p.Stop()
	out := buf.String()
	for _, want := range []string{"the window looks like 60 s: probing up to 3m13s\n", "the window looks like 80 s: probing up to 4m20s\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in %q", want, out)
		}
	}
	if strings.Contains(out, "62 s") {
		t.Errorf("a growth of 7 s was announced: %q", out)
	}
	if !strings.Contains(line, "≤ 4m1") && !strings.Contains(line, "≤ 4m2") {
		t.Errorf("the line does not count down from 4m20s: %q", line)
	}
}

// A progress line is drawn only on a terminal: not in a buffer or a file.
func TestOnTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if OnTerminal(f) || OnTerminal(&bytes.Buffer{}) {
		t.Error("a file or a buffer taken for a terminal")
	}
}
