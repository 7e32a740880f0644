package plan

import (
	"context"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// The tests of what the plan sends run it on the simulator (targets/sim):
// the reference server's limiter models and response contract on virtual
// time, seeded and exact, so a wait of seconds costs none and a seed gives
// the same run every time. probe's tests run the whole probe (Run and the
// verdict) the same way.

// simNetwork is the link the simulated plans run across (probe's): a LAN's
// round trip with jitter and a loaded machine's stalls, on one fixed seed.
const simNetwork = "rtt=1ms&jitter=200us&stall=15ms&seed=1"

// simTarget is the URL a simulated plan's request names: the simulator
// answers whatever it names, and a loopback IPv4 host gives the scope
// trial its second source address (127.0.0.2) as it would live.
const simTarget = "http://127.0.0.1/"

// simRequests is the request budget of a simulated plan given none:
// probe's default.
const simRequests = 2000

// planSim runs the plan against builtin's limiter (a builtin: spec) on the
// simulator, across simNetwork, given opt as probe.Run gives it for a GET
// of simTarget: the engine's sources split for the scope trials, the
// bypass trials made from the request, the engine's budget the plan's.
// keyHeader, when set, is the request's key header.
func planSim(t testing.TB, builtin, keyHeader string, opt Options) *observation.Observation {
	t.Helper()
	cfg, err := sim.ParseSpec(sim.FromBuiltin(builtin, simNetwork))
	if err != nil {
		t.Fatal(err)
	}
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	req.KeyHeader = keyHeader
	if opt.MaxRequests == 0 {
		opt.MaxRequests = simRequests
	}
	opt.Engine.Sources, opt.SecondSource, opt.SecondWhy = ScopeSources(req.URL, opt.Engine.Sources)
	opt.Bypass = BypassBase(req.Method, req.URL, opt.Engine.HTTP2, false, nil)
	engine := opt.Engine
	engine.MaxRequests, engine.MaxDuration = opt.MaxRequests, opt.MaxTime
	col := attack.NewCollector(true)
	net := sim.Func(cfg)(req, engine, col.Add)
	obs, err := Run(net.BeginAt(context.Background(), net.Epoch()), net, col, opt)
	net.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return obs
}
