package results

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sendStep spaces a synthetic shard's sends: ten span 0.1 ms, a burst
// released at one instant as the report that found the fault showed it.
const sendStep = 12 * time.Microsecond

// writeBurstShard writes shard k of 2 of run "apart": a burst of 10 whose
// offset 0 is start and whose sends go out at idle+late, sendStep apart,
// the first half admitted.
func writeBurstShard(t *testing.T, dir string, k int, start time.Time, late time.Duration) string {
	t.Helper()
	const idle, size = time.Second, 10
	p := filepath.Join(dir, fmt.Sprintf("apart-%d.jsonl", k))
	s, err := CreateStream(p, StreamHeader{Command: "attack", URL: "u", Profile: "burst", Start: start, StartAt: start,
		BeganAt: start.Add(50 * time.Microsecond), RunID: "apart", Shard: &Shard{k, 2}, Host: "local"})
	if err != nil {
		t.Fatal(err)
	}
	var burst []*Result
	for i := range size {
		at := idle + late + time.Duration(i)*sendStep
		status := 200
		if i >= size/2 {
			status = 429
		}
		r := &Result{Seq: i + 1, Phase: "burst", Scheduled: idle, Sent: at, FirstByte: at + time.Millisecond, Done: at + time.Millisecond, Status: status}
		s.Add(r)
		burst = append(burst, r)
	}
	m := BurstPhase(burst)
	m.Idle = idle
	s.Conclude(m.Report(Summary{Requests: size}))
	if err := s.Close(nil, idle+late+10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	return p
}

// Shards whose start instants were 3.9 s apart once merged as a burst
// "released within 0.1 ms": each shard's offsets were read as if on one
// clock. On the common wall clock the spread is the real one, and beyond
// one instant the merged run concludes nothing about one burst.
func TestMergeBurstShardsOnTheCommonClock(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name              string
		startGap, lateGap time.Duration // shard 2's start, and its send, after shard 1's
		oneInstant        bool
		verdict           []string
	}{
		{"starts 3.9 s apart", 3928900 * time.Microsecond, 0, false,
			[]string{"NOT released at one instant", "shard 2/2 sent its part 3928.9 ms after shard 1/2", "sent over 3929.0 ms", "same absolute --start-at"}},
		{"one start, a shard 20 ms late", 0, 20 * time.Millisecond, false,
			[]string{"NOT released at one instant", "20.0 ms after", "shard 2/2 was late"}},
		{"one start, 2 ms apart", 0, 2 * time.Millisecond, true, []string{"released within 2.1 ms"}},
		{"one start, in step", 0, 0, true, []string{"burst of 20 after 1s idle: 10 admitted (0 delayed), 10 rejected; released within 0.1 ms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := []string{writeBurstShard(t, dir, 1, t0, 0), writeBurstShard(t, dir, 2, t0.Add(c.startGap), c.lateGap)}
			m, err := MergeShards(paths)
			if err != nil {
				t.Fatal(err)
			}
			b := m.Report.Metrics.Burst
			wantSpread := c.startGap + c.lateGap + 9*sendStep
			if b == nil || b.Size != 20 || b.Admitted != 10 || b.SendSpread != wantSpread || m.Summary.SendSpan != wantSpread {
				t.Fatalf("merged burst %+v, send span %v; want a spread of %v", b, m.Summary.SendSpan, wantSpread)
			}
			if m.Concluded != c.oneInstant {
				t.Errorf("concluded %v, want %v (verdict %q)", m.Concluded, c.oneInstant, m.Report.Verdict)
			}
			for _, w := range c.verdict {
				if !strings.Contains(m.Report.Verdict, w) {
					t.Errorf("verdict %q lacks %q", m.Report.Verdict, w)
				}
			}
			if !m.Header.Start.Equal(t0) || m.Elapsed != c.startGap+time.Second+c.lateGap+10*time.Millisecond {
				t.Errorf("merged start %v, elapsed %v: want shard 1's start and shard 2's end on the common clock", m.Header.Start, m.Elapsed)
			}
		})
	}
}
