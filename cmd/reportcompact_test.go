package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// writeBothFormats records the same attack (n results, with an end record
// when end) as a JSON Lines and a compact stream in dir.
func writeBothFormats(t *testing.T, dir string, n int, end bool) (jsonl, rcs string) {
	t.Helper()
	jsonl, rcs = filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "a.rcs")
	for _, p := range []string{jsonl, rcs} {
		s, err := results.CreateStream(p, results.StreamHeader{Command: "attack", Target: "t", URL: "http://127.0.0.1:9/", Profile: "steady",
			Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			r := &results.Result{Seq: i + 1, Phase: "steady", Conn: int64(1 + i%7), Scheduled: time.Duration(i) * 97 * time.Microsecond,
				Sent: time.Duration(i)*97*time.Microsecond + time.Duration(i%13)*1000, Status: 200}
			r.FirstByte, r.Done = r.Sent+time.Duration(100+i%31)*time.Microsecond, r.Sent+time.Duration(120+i%37)*time.Microsecond
			if i%5 == 0 {
				r.Status, r.Body = 429, "slow down"
			}
			r.Headers = map[string]string{"x-ratelimit-remaining": string(rune('0' + i%10)), "x-ratelimit-limit": "10", "retry-after": "1"}
			s.Add(r)
		}
		if end {
			s.Conclude(results.Report{Profile: "steady", Verdict: "sent some", Rows: [][]string{{"target rate", "max"}},
				Metrics: results.ProfileMetrics{Steady: &results.SteadyMetrics{}}})
			if err := s.Close(nil, time.Second); err != nil {
				t.Fatal(err)
			}
		} else {
			time.Sleep(300 * time.Millisecond) // flushed, never closed: killed
		}
	}
	return jsonl, rcs
}

// report renders a compact stream as it renders the same run's JSON Lines,
// and -o jsonl converts it back to that JSON Lines byte for byte.
func TestReportCompactStream(t *testing.T) {
	jsonl, rcs := writeBothFormats(t, t.TempDir(), 30000, true)
	code, a, errs := runCmd(t, "report", jsonl)
	if code != 0 {
		t.Fatalf("report %s: exit %d: %s", jsonl, code, errs)
	}
	code, b, errs := runCmd(t, "report", rcs)
	if code != 0 || b != a {
		t.Fatalf("report %s: exit %d: %s\n%s\nnot as the JSON Lines:\n%s", rcs, code, errs, b, a)
	}
	code, conv, errs := runCmd(t, "report", rcs, "-o", "jsonl")
	want, _ := os.ReadFile(jsonl)
	if code != 0 || conv != string(want) {
		t.Fatalf("report -o jsonl: exit %d: %s; %d bytes, want the %d of %s", code, errs, len(conv), len(want), jsonl)
	}
	if code, _, errs := runCmd(t, "report", rcs, jsonl, "-o", "jsonl"); code != ExitUsage || !strings.Contains(errs, "one results stream") {
		t.Errorf("two streams to convert: exit %d: %s", code, errs)
	}
}

// A compact stream damaged before its last block is exit 2 naming the file
// and the byte; one cut in its last block (killed mid-write) is reported
// up to its last whole block, as interrupted.
func TestReportDamagedCompactStream(t *testing.T) {
	dir := t.TempDir()
	_, rcs := writeBothFormats(t, dir, 60000, true) // several blocks
	b, _ := os.ReadFile(rcs)
	bad := filepath.Join(dir, "bad.rcs")
	damaged := append([]byte(nil), b...)
	damaged[len(damaged)/3] ^= 0xff
	os.WriteFile(bad, damaged, 0o644)
	code, _, errs := runCmd(t, "report", bad)
	if code != ExitUsage || !strings.Contains(errs, "bad.rcs: corrupt compact stream at byte ") || strings.Contains(errs, "goroutine") {
		t.Errorf("damaged: exit %d: %s", code, errs)
	}

	_, cut := writeBothFormats(t, t.TempDir(), 60000, false)
	b, _ = os.ReadFile(cut)
	os.WriteFile(cut, b[:len(b)-5], 0o644)
	code, out, errs := runCmd(t, "report", cut)
	if code != ExitUntested || !strings.Contains(errs, "cut short") || !strings.Contains(out, "last record was cut mid-write") {
		t.Errorf("cut: exit %d\n%s\n%s", code, out, errs)
	}
}

// attack names its stream .rcs by default: compact.
func TestAttackDefaultStreamIsCompact(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := runCmd(t, "attack", "--profile", "burst", "--burst", "3", "--idle", "10ms", "--quiet", "builtin:none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	paths, _ := filepath.Glob("ratecheck-attack-*.rcs")
	if len(paths) != 1 {
		t.Fatalf("streams written: %v (%s)", paths, errs)
	}
	f, _ := os.Open(paths[0])
	defer f.Close()
	sr, err := results.NewStreamReader(f)
	if err != nil || sr.Format != results.Compact {
		t.Fatalf("%s: %v, format %v", paths[0], err, sr.Format)
	}
}
