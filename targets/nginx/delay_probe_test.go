package nginx_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/nginx"
)

// probeConf probes a real nginx running conf with a budget the plan ends
// within by itself (a shaping queue's last answers then arrive inside it).
func probeConf(t *testing.T, conf string) probe.Inference {
	t.Helper()
	inst, err := nginx.Start(context.Background(), filepath.Join("..", "..", "testdata", "nginx", conf), nginx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Error(err)
		}
	}()
	req, err := attack.NewRequest("GET", inst.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	// A probe that fails under a loaded CI is kept for `ratecheck report`
	// (RATECHECK_KEEP=DIR): the two-zone probe named its fast zone 20/s
	// once in CI and in none of 13 runs since, loaded or not.
	path := filepath.Join(t.TempDir(), testenv.KeepName(conf)+".jsonl")
	testenv.KeepOnFailure(t, path)
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: 20 * time.Second, ResultsFile: path})
	if err != nil {
		t.Fatal(err)
	}
	return res.Inference
}

// A real nginx with `limit_req zone=perip burst=10 delay=4` (10 r/s): the
// probe names a shaping queue of 10 whose first 4 excess requests pass
// undelayed, reading delay=4 from the latency staircase of its burst, and
// says so in the evidence.
func TestProbeReadsNginxDelay(t *testing.T) {
	testenv.NeedNginx(t)
	t.Parallel() // the probe mostly waits on its own nginx
	inf := probeConf(t, "burst-delay.conf")
	if inf.Family != limiter.LeakyShaping || inf.Delay != 4 || inf.Burst != 10 || math.Abs(inf.RatePerS-10) > 1 {
		t.Fatalf("inferred %s (delay %d), want leaky_shaping 10/s, queue 10, delay 4", inf.Summary(), inf.Delay)
	}
	if !strings.Contains(strings.Join(inf.Evidence, "\n"), "delay=4: of a burst after idle the first 5 pass at once, the next 6 are queued 1/r apart") {
		t.Fatalf("evidence %q", inf.Evidence)
	}
	t.Logf("%s (confidence %.2f)", inf.Summary(), inf.Confidence)
}

// Two limit_req zones on one location (testdata/nginx/two-zones.conf:
// 10 r/s burst 5 per address, 5 r/s burst 20 for everyone): no single
// queue explains the run, and the probe names both zones — the tight one
// that rejects a burst first and the slow one whose delays apply — with
// the deep queue's length known only to the interval the run pins.
func TestProbeNamesTwoNginxZones(t *testing.T) {
	testenv.NeedNginx(t)
	t.Parallel() // the probe mostly waits on its own nginx
	inf := probeConf(t, "two-zones.conf")
	if inf.Family != limiter.Tiers || inf.TiersMode != limiter.TiersAll || len(inf.Tiers) != 2 {
		t.Fatalf("inferred %s (confidence %.2f)", inf.Summary(), inf.Confidence)
	}
	fast, slow := inf.Tiers[0], inf.Tiers[1]
	if fast.Family != limiter.LeakyShaping || fast.Burst != 5 || math.Abs(fast.RatePerS-10) > 1 ||
		slow.Family != limiter.LeakyShaping || math.Abs(slow.RatePerS-5) > 0.5 || math.Abs(float64(slow.Burst-20)) > float64(slow.BurstErr)+2 {
		t.Fatalf("inferred %s (confidence %.2f), want leaky_shaping 10/s burst 5 and leaky_shaping 5/s burst 20\nevidence:\n  %s",
			inf.Summary(), inf.Confidence, strings.Join(inf.Evidence, "\n  "))
	}
	t.Logf("%s (confidence %.2f)", inf.Summary(), inf.Confidence)
}
