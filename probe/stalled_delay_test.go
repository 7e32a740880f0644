package probe

import (
	"context"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// nginx limit_req burst=10 delay=4 behind a client whose reader stalls
// (40 ms, on a tenth of the answers — a loaded machine's worst): one of
// the five answers nginx sent at once was read 66 ms late, like the
// burst's rejections, and delay=N was read as 3 (confidence 0.63), on
// other seeds not at all (no model explained the run). A stall the
// rejections show too is the client's, not a queue's: delay=4 is a
// candidate again, and the fit names it.
func TestSimStalledReaderStillReadsNginxDelay(t *testing.T) {
	req, err := attack.NewRequest("GET", simTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	const network = "rtt=1ms&jitter=200us&stall=40ms&stall-share=0.1&seed=5"
	res, err := Run(context.Background(), req, simOptions(t, "builtin:leaky_shaping?rate=10/s&burst=10&delay=4", network, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	inf := res.Inference
	if inf.Family != limiter.LeakyShaping || inf.Burst != 10 || inf.Delay != 4 || inf.RatePerS < 9.9 || inf.RatePerS > 10.1 {
		t.Fatalf("inferred %s (delay %d, confidence %.2f), want leaky_shaping 10/s, queue 10, delay 4", inf.Summary(), inf.Delay, inf.Confidence)
	}
}
