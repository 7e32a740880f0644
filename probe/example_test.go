package probe_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/targets/refserver"
)

// Probe a limiter from Go: start a reference token bucket on loopback (any
// http(s) URL works the same), run the probe, and read the inference.
func ExampleRun() {
	srv, err := refserver.StartBuiltin("builtin:token_bucket?rate=10/s&burst=20")
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	req, err := attack.NewRequest("GET", srv.URL, nil, "")
	if err != nil {
		panic(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: 20 * time.Second})
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
