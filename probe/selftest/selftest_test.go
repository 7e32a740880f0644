package selftest

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/internal/probetest"
	"github.com/ratecheck/ratecheck/targets/limiter"
	"github.com/ratecheck/ratecheck/targets/refserver"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// demoEvidence is what a variant's demo row must tell its user, the fact
// that the variant's finding rests on.
var demoEvidence = map[string]string{
	"builtin:sliding_counter?limit=10&window=2s&count-rejected=on":                                 "every denied attempt counts",
	"builtin:token_bucket?rate=10/s&burst=20&refill=1s":                                            "capacity returns in clumps of 10 every ",
	"builtin:leaky_shaping?rate=10/s&burst=10&delay=4":                                             "burst=10 delay=4: of a burst after idle the first 5 pass at once",
	"builtin:tiers?mode=either&t1=token_bucket:rate=4/s,burst=4&t2=fixed_window:limit=8,window=2s": "two limits on one key",
}

// simNetwork is the link the family tests probe across: a LAN's round trip
// with jitter and the occasional stall of a loaded machine, on a fixed seed.
const simNetwork = "rtt=1ms&jitter=200us&stall=15ms&seed=1"

// simulated is the demo target spec on the simulated network.
func simulated(spec string) string { return sim.FromBuiltin(spec, simNetwork) }

// One built-in target per family, probed on the simulated network (the
// same plan, models and response contract as live, on virtual time): the
// family and its parameters must come out within the harness's bars, with
// the evidence a demo row tells, at confidence of at least 0.3 (stalls of
// 15 ms cost a concurrency cap 6 of 368 decisions, and it 0.30: the
// sweep's reliability table judges what confidence means). Exact and
// seeded: a failure replays with the command it prints. (The full matrix
// is `go test -tags accuracy ./probe/selftest/`, the whole model space
// TestSimulationSweep.)
func TestProbeNamesEveryFamily(t *testing.T) {
	for spec := range demoEvidence {
		if !slices.Contains(DemoTargets(), spec) {
			t.Fatalf("demoEvidence names %s, which is not a demo target", spec)
		}
	}
	for _, spec := range DemoTargets() {
		run, err := RunSim(context.Background(), Draw{Spec: simulated(spec)})
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		out := run.Outcome
		if !out.FamilyOK || !out.ParamsOK {
			t.Errorf("%s: inferred %q (confidence %.2f), truth %s; param errors %v\nevidence %v\nreplay: %s",
				spec, out.Inference.Summary(), out.Inference.Confidence, out.TruthText, out.ParamErrs, out.Inference.Evidence, run.Replay)
			continue
		}
		if want, ok := demoEvidence[spec]; ok && !strings.Contains(strings.Join(out.Inference.Evidence, "\n"), want) {
			t.Errorf("%s: named right, but no evidence %q: %q", spec, want, out.Inference.Evidence)
		}
		if out.Inference.Confidence < 0.3 {
			t.Errorf("%s: right family but confidence %.2f (%d of %d explained); alternatives %+v\nreplay: %s",
				spec, out.Inference.Confidence, out.Inference.Explained, out.Inference.Decisions, out.Inference.Alternatives, run.Replay)
		}
		if len(run.Violations) > 0 {
			t.Errorf("%s: %v\nreplay: %s", spec, run.Violations, run.Replay)
		}
	}
}

// Without any rate-limit headers the inference works from behaviour alone.
func TestProbeWithoutHeaders(t *testing.T) {
	for _, spec := range []string{
		"builtin:token_bucket?rate=5/s&burst=10&headers=none",
		"builtin:fixed_window?limit=10&window=1s&headers=none&align=first",
	} {
		run, err := RunSim(context.Background(), Draw{Spec: simulated(spec)})
		if err != nil {
			t.Fatal(err)
		}
		if out := run.Outcome; !out.FamilyOK || !out.ParamsOK {
			t.Errorf("%s: inferred %q, truth %s, errors %v\nevidence %v\nreplay: %s", spec, out.Inference.Summary(), out.TruthText, out.ParamErrs, out.Inference.Evidence, run.Replay)
		}
	}
}

// Two tiers are scored as the limiter they behave as. For every run
// (observable): a window tier that can never bind beside a bucket (tiers
// all) leaves the bucket, its limit being more than the bucket admits in a
// window; one that can bind keeps the composition, and so does "either".
// For the one run a probe had (exercised, here the run on a virtual clock
// of a burst and a trace): a window that could bind but admitted fewer
// than its limit leaves the bucket as what the run showed; one the run
// filled keeps the composition, as does a pool that admitted past the
// bucket; a pool of 130 that admitted all 88 requests the run sent is all
// the run showed.
func TestTruthOfTwoTiers(t *testing.T) {
	for _, tc := range []struct {
		spec, everyRun, thisRun string
	}{
		{"mode=all&t1=token_bucket:rate=1.31/s,burst=2&t2=fixed_window:limit=130,window=12s", limiter.TokenBucket, limiter.TokenBucket},
		{"mode=all&t1=fixed_window:limit=169,window=1.6s&t2=token_bucket:rate=10.64/s,burst=5", limiter.TokenBucket, limiter.TokenBucket},
		{"mode=all&t1=token_bucket:rate=12.68/s,burst=15&t2=fixed_window:limit=160,window=3m2s", limiter.Tiers, limiter.TokenBucket},
		{"mode=all&t1=token_bucket:rate=12.68/s,burst=15&t2=fixed_window:limit=25,window=3m2s", limiter.Tiers, limiter.Tiers},
		{"mode=either&t1=token_bucket:rate=1.31/s,burst=2&t2=fixed_window:limit=130,window=12s", limiter.Tiers, limiter.FixedWindow},
		{"mode=either&t1=token_bucket:rate=2/s,burst=5&t2=fixed_window:limit=10,window=3m42s", limiter.Tiers, limiter.Tiers},
		{"mode=either&t1=token_bucket:rate=2/s,burst=5&t2=fixed_window:limit=1,window=3m42s", limiter.Tiers, limiter.Tiers},
	} {
		sopt, err := refserver.ParseBuiltin("builtin:tiers?" + tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		every := observable(sopt.Limiter)
		if every.Algo != tc.everyRun {
			t.Errorf("%s: observable as %s, want %s", tc.spec, every.Algo, tc.everyRun)
		}
		obs := probetest.Simulated(t, sopt.Limiter, probetest.Epoch, time.Second, 50*time.Millisecond)
		if got := exercised(every, obs).Algo; got != tc.thisRun {
			t.Errorf("%s: the run behaved as %s, want %s", tc.spec, got, tc.thisRun)
		}
	}
}

// A truth scored as another family is that family: nginx limit_req with
// burst=0, or with delay= holding its last requests less than a probe
// resolves, and a sliding log of one that does not count denied attempts,
// are token buckets (of one token, at one per window for the log). The
// two models decide every request of a random bursty schedule alike, and
// the truth holds none as long as a probe can see, so a probe naming the
// bucket is right.
func TestObservableTruthsDecideAlike(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		rate  float64
		burst int
	}{
		{"builtin:leaky_shaping?rate=1.27/s&burst=0", 1.27, 1},
		{"builtin:leaky_shaping?rate=292/s&burst=22&delay=17", 292, 23},
		{"builtin:sliding_log?limit=1&window=800ms", 1.25, 1},
	} {
		sopt, err := refserver.ParseBuiltin(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		as := observable(sopt.Limiter)
		if as.Algo != limiter.TokenBucket || as.Burst != tc.burst || math.Abs(as.Rate-tc.rate) > 1e-9 {
			t.Fatalf("%s: observable as %+v, want a token bucket of %d at %g/s", tc.spec, as, tc.burst, tc.rate)
		}
		truth, err := limiter.New(sopt.Limiter)
		if err != nil {
			t.Fatal(err)
		}
		bucket, err := limiter.New(as)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		at := time.Unix(1_800_000_000, 0)
		admitted := 0
		for i := range 5000 {
			if rng.Float64() > 0.3 { // else at the same instant: a burst
				at = at.Add(time.Duration(rng.ExpFloat64() / tc.rate / 2 * float64(time.Second)))
			}
			l, b := truth.Allow("k", at), bucket.Allow("k", at)
			if l.Allowed != b.Allowed || l.Delay >= probe.DelayResolution {
				t.Fatalf("%s: request %d at %s: truth allowed %v (delay %s), bucket %v", tc.spec, i, at, l.Allowed, l.Delay, b.Allowed)
			}
			if l.Allowed {
				admitted++
			}
		}
		if admitted == 0 || admitted == 5000 {
			t.Fatalf("%s: %d of 5000 admitted: the schedule tests nothing", tc.spec, admitted)
		}
	}
}
