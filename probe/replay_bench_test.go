package probe

import (
	"os"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// recordedProbe reads the probe a real run recorded against a built-in token
// bucket (report's fixture), as `ratecheck report` would.
func recordedProbe(tb testing.TB) *Observation {
	tb.Helper()
	f, err := os.Open("../report/testdata/probe.jsonl")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	rec, err := attack.ReadStream(f)
	if err != nil {
		tb.Fatal(err)
	}
	return NewObservation(rec.Header.Start, rec.Results)
}

// BenchmarkInfer times the whole inference — the grid search is nearly all
// of it — on a recorded probe and on simulated ones of the window and
// concurrency families, whose grids are the largest.
func BenchmarkInfer(b *testing.B) {
	cases := []struct {
		name string
		obs  *Observation
	}{
		{"recorded-token-bucket", recordedProbe(b)},
		{"sliding-log", simulated(b, limiter.Config{Algo: limiter.SlidingLog, Limit: 10, Window: time.Second}, epoch, 650*time.Millisecond, 100*time.Millisecond)},
		{"fixed-window", simulated(b, limiter.Config{Algo: limiter.FixedWindow, Limit: 20, Window: 2 * time.Second, Align: limiter.AlignWall}, epoch, 2030*time.Millisecond, 100*time.Millisecond)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Infer(c.obs)
			}
		})
	}
}
