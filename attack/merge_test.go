package attack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/results"
)

// runShards runs n shards of p concurrently on one common start instant,
// each into its own stream, and returns the streams' paths.
func runShards(t *testing.T, url string, p Profile, n int, runID string) []string {
	t.Helper()
	dir := t.TempDir()
	at := time.Now().Add(300 * time.Millisecond)
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		paths[k-1] = filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", k))
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[k-1] = Run(context.Background(), p, RunOptions{Request: mustRequest(t, url), Out: paths[k-1], StartAt: at,
				Shard: results.Shard{K: k, N: n}, Header: results.StreamHeader{Command: "attack", Target: url, RunID: runID, Host: "local"}})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// The merged steady run has every shard's requests, its histograms are
// exactly those of all the requests together, and its rate is over the
// common span.
func TestMergeSteadyShardsExactly(t *testing.T) {
	srv := startBuiltin(t, "builtin:none")
	paths := runShards(t, srv.URL, Steady{Rate: 2000, Duration: 100 * time.Millisecond}, 4, "r1")
	m, err := results.MergeShards(paths)
	if err != nil {
		t.Fatal(err)
	}
	direct := results.NewMetrics()
	for _, p := range paths {
		f, _ := os.Open(p)
		rec, err := results.ReadStream(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i := range rec.Results {
			direct.Add(&rec.Results[i])
		}
	}
	want := direct.Summary()
	if m.Summary.Requests != 200 || m.Summary.Latency != want.Latency || m.Summary.Lateness != want.Lateness || m.Summary.SendSpan != want.SendSpan {
		t.Fatalf("merged summary %+v\nwant %+v", m.Summary, want)
	}
	if !m.Concluded || len(m.Shards) != 4 || m.RunID != "r1" || m.Shards[2].Shard != (results.Shard{K: 3, N: 4}) || m.Shards[0].Requests != 50 {
		t.Fatalf("merged %+v", m)
	}
	s := m.Report.Metrics.Steady
	if s == nil || s.TargetRate != 2000 || s.Span != 100*time.Millisecond || !strings.HasPrefix(m.Report.Verdict, "sent ") {
		t.Fatalf("steady %+v, verdict %q", s, m.Report.Verdict)
	}
	if m.StartSpread < 0 || m.StartSpread > 50*time.Millisecond {
		t.Errorf("start spread %v", m.StartSpread)
	}
}

// A burst split four ways against one limiter admits its capacity from all
// the shards together, and the merged run concludes one burst when the
// shards kept to one instant. Whether four shards in one process under
// -race on a loaded machine keep within oneInstant is up to the scheduler,
// so when they did not, the verdict must say so and name the late shard
// (the logic on both sides is exact in TestMergeBurstShardsOnTheCommonClock).
func TestMergeBurstShardsAsOneBurst(t *testing.T) {
	srv := startBuiltin(t, "builtin:token_bucket?rate=1/s&burst=10")
	paths := runShards(t, srv.URL, Burst{K: 20}, 4, "r2")
	m, err := results.MergeShards(paths)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Report.Metrics.Burst
	if b == nil || b.Size != 20 || b.Admitted+b.Rejected != 20 || b.Admitted < 10 {
		t.Fatalf("merged burst %+v", b)
	}
	if b.SendSpread < time.Second && b.Admitted != 10 { // a refill of 1/s adds a token only after a second
		t.Fatalf("merged burst sent over %v admitted %d, want the bucket's 10", b.SendSpread, b.Admitted)
	}
	if m.Concluded {
		if !strings.HasPrefix(m.Report.Verdict, "burst of 20 after 0s idle: 10 admitted") {
			t.Errorf("verdict %q", m.Report.Verdict)
		}
		return
	}
	if !strings.Contains(m.Report.Verdict, "NOT released at one instant") || !strings.Contains(m.Report.Verdict, "was late to the common instant") {
		t.Errorf("not concluded, verdict %q", m.Report.Verdict)
	}
	t.Logf("the shards missed one instant on this machine: %s", m.Report.Verdict)
}

// Storm's shards merge into one population of clients.
func TestMergeClientShards(t *testing.T) {
	srv := startBuiltin(t, "builtin:token_bucket?rate=200/s&burst=5")
	paths := runShards(t, srv.URL, Clients{N: 10, Goal: 2}, 2, "r3")
	m, err := results.MergeShards(paths)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Report.Metrics.Clients
	if c == nil || c.Clients != 10 || c.Goal != 2 || c.Successes != 20 || c.Finished != 10 || c.Attempts != m.Summary.Requests || c.Attempts < 20 {
		t.Fatalf("merged clients %+v", c)
	}
	if want := float64(c.Attempts) / 20; c.Amplification != want || !strings.HasPrefix(m.Report.Verdict, "10 storm clients wanting 2 each") {
		t.Errorf("amplification %g, want %g; verdict %q", c.Amplification, want, m.Report.Verdict)
	}
}

// The straddle split in two still sees a fixed window admit about 2L.
func TestMergeBoundaryShardsSeeTheLeak(t *testing.T) {
	srv := startBuiltin(t, "builtin:fixed_window?limit=20&window=1s")
	paths := runShards(t, srv.URL, Boundary{Limit: 20, Window: time.Second}, 2, "r4")
	m, err := results.MergeShards(paths)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Report.Metrics.Boundary
	if b == nil || b.Limit != 20 || b.VolleyBefore != 20 || b.VolleyAfter != 20 || !b.Leaks {
		t.Fatalf("merged boundary %+v, verdict %q", b, m.Report.Verdict)
	}
	t.Logf("%s", m.Report.Verdict)
}
