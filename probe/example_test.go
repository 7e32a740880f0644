package probe_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/sim"
)

// Probe a limiter from Go: name the target's URL, run the probe, and read
// the inference. Here the target is the reference token bucket on the
// simulator (Options.Network, targets/sim): the real plan on virtual time,
// across a LAN-like link, seeded, so the example runs in a moment and
// prints the same every time. To probe over real sockets leave Network
// nil and name the target's URL (refserver.StartBuiltin serves the same
// bucket on loopback).
func ExampleRun() {
	cfg, err := sim.ParseSpec("sim:token_bucket?rate=10/s&burst=20&rtt=1ms&jitter=200us&stall=15ms&seed=1")
	if err != nil {
		panic(err)
	}
	req, err := attack.NewRequest("GET", "http://127.0.0.1/", nil, "")
	if err != nil {
		panic(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: 20 * time.Second, Network: sim.Func(cfg)})
	if err != nil {
		panic(err)
	}
	inf := res.Inference
	fmt.Printf("%s, burst %d, rate within 10%%: %v\n", inf.Family, inf.Burst, inf.RatePerS > 9 && inf.RatePerS < 11)
	// Output: token_bucket, burst 20, rate within 10%: true
}

// A budget that cannot hold the smallest plan is refused before anything
// is sent.
func ExampleRun_budgetTooSmall() {
	req, _ := attack.NewRequest("GET", "http://127.0.0.1:1/", nil, "")
	_, err := probe.Run(context.Background(), req, probe.Options{MaxRequests: 50})
	fmt.Println(err)
	// Output: a probe budget of 50 requests cannot hold the smallest plan, which needs at least 303
}
