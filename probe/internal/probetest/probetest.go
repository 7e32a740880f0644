// Package probetest is what the tests of probe and its layers share: the
// observation a probe would record against a model on a virtual clock, and
// a recorded probe's observation read back from its stream.
package probetest

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/results"
	"github.com/ratecheck/ratecheck/targets/limiter"
)

// Epoch is a wall instant that starts every whole-second window.
var Epoch = time.Unix(1_800_000_000, 0)

// Simulated is the observation a probe would record against cfg on a
// virtual clock: the plan's phases (three calibration requests 200 ms
// apart, a burst of 30 at burstAt, five sequential requests, 50 trace
// requests every traceEvery), each decided by the reference model half a
// millisecond after its send and answered a millisecond after it.
func Simulated(tb testing.TB, cfg limiter.Config, start time.Time, burstAt, traceEvery time.Duration) *observation.Observation {
	tb.Helper()
	lim, err := limiter.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	const rtt = time.Millisecond
	obs := &observation.Observation{Start: start, RTT: rtt}
	send := func(phase string, at time.Duration) {
		d := lim.Allow("", start.Add(at+rtt/2))
		status := 429
		if d.Allowed {
			status = 200
		}
		obs.Results = append(obs.Results, results.Result{Seq: len(obs.Results) + 1, Phase: phase, Scheduled: at, Sent: at,
			FirstByte: at + rtt, Done: at + rtt, Status: status})
	}
	for i := range 3 {
		send(observation.PhaseCalibrate, time.Duration(i)*200*time.Millisecond)
	}
	for range 30 {
		send(observation.PhaseBurst, burstAt)
	}
	at := burstAt + 2*time.Millisecond
	for range 5 {
		send(observation.PhaseSequential, at)
		at += 2 * time.Millisecond
	}
	for range 50 {
		send(observation.PhaseTrace, at)
		at += traceEvery
	}
	return obs
}

// Recorded is the observation of a recorded probe's results stream (a real
// run kept as testdata).
func Recorded(tb testing.TB, path string) *observation.Observation {
	tb.Helper()
	rec, err := results.ReadStreamFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return observation.New(rec.Header.Start, rec.Results)
}
