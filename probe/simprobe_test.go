package probe

import (
	"context"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// The tests that check the plan and the inference end to end run the real
// plan (Run) on the simulator (targets/sim): the same limiter models and
// response contract as a builtin: reference server, on virtual time, seeded
// and exact. A live probe takes its wall time and, on a loaded machine,
// may see a different run each time; a simulated one takes the fits' CPU
// and replays from its seed (issue #29). What only a real socket shows —
// real connections and source addresses, the engine's timing — stays live,
// in a short probe that asserts what the physics guarantees.

// simNetwork is the link the simulated probes run across (grade's): a
// LAN's round trip with jitter and a loaded machine's stalls, on one fixed
// seed.
const simNetwork = "rtt=1ms&jitter=200us&stall=15ms&seed=1"

// simTarget is the URL a simulated probe's request names: the simulator
// answers whatever it names, and a loopback IPv4 host gives the scope
// trial its second source address (127.0.0.2) as it would live.
const simTarget = "http://127.0.0.1/"

// simOptions is opt with the network set to builtin's limiter (a builtin:
// spec) simulated across network.
func simOptions(t testing.TB, builtin, network string, opt Options) Options {
	t.Helper()
	testenv.Simulated(t)
	cfg, err := sim.ParseSpec(sim.FromBuiltin(builtin, network))
	if err != nil {
		t.Fatal(err)
	}
	opt.Network = sim.Func(cfg)
	if opt.Target == "" {
		opt.Target = builtin
	}
	return opt
}

// probeSim probes builtin's limiter with the real plan on the simulator,
// across simNetwork; keyHeader, when set, is the request's key header.
func probeSim(t testing.TB, builtin, keyHeader string, opt Options) *Result {
	t.Helper()
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	req.KeyHeader = keyHeader
	res, err := Run(context.Background(), req, simOptions(t, builtin, simNetwork, opt))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// Three replicas of a bucket, each with its own count, behind a fast link:
// a request sent after another's answer was read cannot find that one still
// holding a slot, so the concurrency cap's "a release just before may not
// have freed its slot yet" must not excuse it. With that excuse the sweep
// (seed 1071817279636263) named this fleet a concurrency cap at 0.84.
func TestSimReplicatedBucketIsNoConfidentConcurrencyCap(t *testing.T) {
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	opt := simOptions(t, "builtin:token_bucket?burst=62&rate=18.85/s&replicas=3", "rtt=210us&seed=1071817279636263", Options{})
	res, err := Run(context.Background(), req, opt)
	if err != nil {
		t.Fatal(err)
	}
	if inf := res.Inference; inf.Family == "concurrency" && inf.Confidence >= 0.8 {
		t.Fatalf("a replicated bucket named a concurrency cap at %.2f: %s", inf.Confidence, inf.Reason)
	}
}
