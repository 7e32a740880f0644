package sim_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/sim"
)

const ms = time.Millisecond

// host is the simulated target's address, as messages name it.
const host = "127.0.0.1:8080"

// rig is one simulated run begun at its epoch, with every result its
// sinks received, in the order they were handed over.
type rig struct {
	t   *testing.T
	n   *sim.Network
	ctx context.Context // the run's context (BeginAt's)
	got []*results.Result
}

// spec parses a sim: target or fails the test.
func spec(t *testing.T, s string) sim.Config {
	t.Helper()
	cfg, err := sim.ParseSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// begin builds the network of cfg and begins its run on ctx.
func begin(t *testing.T, ctx context.Context, cfg sim.Config, opt attack.Options) *rig {
	t.Helper()
	req, err := attack.NewRequest("GET", "http://"+host+"/", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t}
	r.n = sim.New(cfg, req, opt, func(res *results.Result) { r.got = append(r.got, res) })
	r.ctx = r.n.BeginAt(ctx, r.n.Epoch())
	return r
}

// run parses s and begins its run with opt.
func run(t *testing.T, s string, opt attack.Options) *rig {
	t.Helper()
	return begin(t, context.Background(), spec(t, s), opt)
}

// do sends one shot now and fails the test when it was not sent.
func (r *rig) do(s attack.Shot) *results.Result {
	r.t.Helper()
	res, ok := r.n.Do(r.ctx, s)
	if !ok || res == nil {
		r.t.Fatalf("Do at %v: not sent (notes %q)", r.n.Now(), r.n.Notes())
	}
	return res
}

// sleepTo moves the clock to t.
func (r *rig) sleepTo(t time.Duration) {
	r.t.Helper()
	if d := t - r.n.Now(); d < 0 || !r.n.Sleep(r.ctx, d) {
		r.t.Fatalf("cannot sleep from %v to %v", r.n.Now(), t)
	}
}

// every is a Schedule plan: shot i at first + i*step.
func every(first, step time.Duration) func(int) attack.Shot {
	return func(i int) attack.Shot { return attack.Shot{At: first + time.Duration(i)*step} }
}

// shots are k shots of nothing in particular (a Burst's).
func shots(k int) []attack.Shot { return make([]attack.Shot, k) }

// admitted counts the 2xx results.
func admitted(rs []*results.Result) int {
	k := 0
	for _, r := range rs {
		if r.Admitted() {
			k++
		}
	}
	return k
}
