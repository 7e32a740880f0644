package sim_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/sim"
)

func probeSim(t *testing.T, spec string) *probe.Result {
	t.Helper()
	cfg, err := sim.ParseSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	req, err := attack.NewRequest("GET", "http://127.0.0.1/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{Network: sim.Func(cfg)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSimulatedProbeNamesTheBucket(t *testing.T) {
	began := time.Now()
	res := probeSim(t, "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&seed=3")
	t.Logf("%s in %.1f s virtual, %v real; notes %q", res.Inference.Summary(), res.Elapsed.Seconds(), time.Since(began), res.Notes)
}

// One probe per family on the simulated network names the family, and
// the scope where the limit is not global; a server that dies mid-probe
// leaves it inconclusive.
func TestSimulatedFamilies(t *testing.T) {
	for _, c := range []struct{ spec, family, scope string }{
		{"sim:fixed_window?limit=20&window=2s&seed=1", "fixed_window", ""},
		{"sim:sliding_log?limit=20&window=3s&seed=2&rtt=5ms&jitter=1ms", "sliding_log", ""},
		{"sim:sliding_counter?limit=30&window=3s&seed=4", "sliding_counter", ""},
		{"sim:leaky_shaping?rate=10/s&burst=5&seed=5", "leaky_shaping", ""},
		{"sim:concurrency?max-inflight=4&latency=50ms&seed=6", "concurrency", ""},
		{"sim:none?seed=7", "none", ""},
		{"sim:token_bucket?rate=10/s&burst=20&scope=connection&seed=8", "token_bucket", probe.ScopePerConnection},
		{"sim:token_bucket?rate=10/s&burst=20&scope=ip&seed=9", "token_bucket", probe.ScopePerIP},
		{"sim:fixed_window?limit=60&window=1m&seed=10", "fixed_window", ""},
		{"sim:token_bucket?rate=10/s&burst=20&stall=20ms&jitter=2ms&seed=11", "token_bucket", ""},
		{"sim:token_bucket?rate=10/s&burst=20&fail=die&seed=12", "inconclusive", ""},
	} {
		inf := probeSim(t, c.spec).Inference
		if inf.Family != c.family || (c.scope != "" && inf.Scope != c.scope) {
			t.Errorf("%s: %s (scope %s), want %s (scope %s)", c.spec, inf.Summary(), inf.Scope, c.family, cmp.Or(c.scope, "any"))
		}
	}
}

// The same seed gives the same stream, byte for byte, and the same
// inference: a failing simulated probe is replayed by its seed.
func TestSameSeedSameStream(t *testing.T) {
	spec := "sim:token_bucket?rate=10/s&burst=20&rtt=20ms&jitter=2ms&stall=15ms&seed=3"
	var streams [2][]byte
	var summaries [2]string
	for i := range streams {
		cfg, err := sim.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := attack.NewRequest("GET", "http://127.0.0.1/", nil, "")
		path := filepath.Join(t.TempDir(), "run.jsonl")
		res, err := probe.Run(context.Background(), req, probe.Options{Network: sim.Func(cfg), ResultsFile: path, Target: spec})
		if err != nil {
			t.Fatal(err)
		}
		if streams[i], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		summaries[i] = fmt.Sprintf("%s %.4f", res.Inference.Summary(), res.Inference.Confidence)
	}
	if !bytes.Equal(streams[0], streams[1]) {
		t.Errorf("two runs of seed 3 wrote different streams (%d and %d bytes)", len(streams[0]), len(streams[1]))
	}
	if summaries[0] != summaries[1] {
		t.Errorf("two runs of seed 3 inferred %q and %q", summaries[0], summaries[1])
	}
}
