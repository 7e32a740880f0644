package results

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Streams that are not every shard of one run, once, are refused with the
// files or shards named.
func TestCheckShardsRefuses(t *testing.T) {
	sh := func(run string, k, n int) StreamHeader {
		return StreamHeader{RunID: run, Shard: &Shard{K: k, N: n}, Profile: "steady", URL: "u"}
	}
	for _, c := range []struct {
		hs   []StreamHeader
		want string
	}{
		{[]StreamHeader{sh("a", 1, 4), sh("a", 2, 4), sh("a", 4, 4)}, "run a is missing shard 3/4"},
		{[]StreamHeader{sh("a", 1, 2), sh("b", 2, 2)}, "different runs (run a: f0; run b: f1)"},
		{[]StreamHeader{sh("a", 1, 2), sh("a", 1, 2)}, "shard 1/2 of run a is given twice: f0 and f1"},
		{[]StreamHeader{sh("a", 1, 2), {Profile: "steady"}}, "f1 is not a shard of a run"},
		{[]StreamHeader{sh("a", 1, 2), sh("a", 2, 3)}, "the shard counts differ"},
	} {
		paths := make([]string, len(c.hs))
		for i := range paths {
			paths[i] = fmt.Sprintf("f%d", i)
		}
		err := CheckShards(paths, c.hs)
		var me *MergeError
		if !errors.As(err, &me) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.hs, err, c.want)
		}
	}
	if err := CheckShards([]string{"x", "y"}, []StreamHeader{sh("a", 2, 2), sh("a", 1, 2)}); err != nil {
		t.Errorf("complete run refused: %v", err)
	}
}

// Merging reads the streams one result at a time: what the merged run
// holds is its aggregates and a bounded sample, not the requests.
func TestMergeHoldsASampleNotTheRequests(t *testing.T) {
	const shards, each = 4, 50000
	dir := t.TempDir()
	start := time.Now().Add(time.Hour)
	var paths []string
	for k := 1; k <= shards; k++ {
		p := filepath.Join(dir, fmt.Sprintf("big-%d.jsonl", k))
		s, err := CreateStream(p, StreamHeader{Command: "attack", URL: "u", Profile: "steady", Start: start, RunID: "big", Shard: &Shard{K: k, N: shards}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range each {
			at := time.Duration(k-1+i*shards) * 250 * time.Microsecond // 4000/s over all shards
			s.Add(&Result{Seq: i + 1, Phase: "steady", Scheduled: at, Sent: at + 20*time.Microsecond, FirstByte: at + time.Millisecond, Done: at + time.Millisecond, Status: 200})
		}
		s.Conclude(Report{Profile: "steady", Metrics: ProfileMetrics{Steady: &SteadyMetrics{TargetRate: 1000, Span: 50 * time.Second, Planned: 50 * time.Second}}})
		if err := s.Close(nil, 50*time.Second); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := MergeShards(paths)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if m.Summary.Requests != shards*each || len(m.Sample) != MergeSample || !m.Sampled {
		t.Fatalf("merged %d requests, sample %d (sampled %v)", m.Summary.Requests, len(m.Sample), m.Sampled)
	}
	// All 200,000 results would take some 40 MB; the sample of 10,000
	// about 2 MB, the histograms well under one.
	if held > 8<<20 {
		t.Errorf("the merged run holds %d MB", held>>20)
	}
	if r := m.Report.Metrics.Steady; r == nil || r.AchievedRate < 3999 || r.AchievedRate > 4001 {
		t.Errorf("merged steady %+v", r)
	}
	runtime.KeepAlive(m)
}
