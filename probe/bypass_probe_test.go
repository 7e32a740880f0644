package probe

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/bypass"
)

// bypassTarget is a path with letters and a query, so that every path
// trial has something to spell another way.
const bypassTarget = "http://127.0.0.1/api/items?page=1"

// probeBypass probes builtin's limiter on the simulator at bypassTarget.
func probeBypass(t *testing.T, builtin string) *Result {
	t.Helper()
	req, err := attack.NewRequest("GET", bypassTarget, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), req, simOptions(t, builtin, simNetwork, Options{}))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// found lists the trials of a suite by outcome.
func byOutcome(s *bypass.Suite) map[bypass.Outcome][]string {
	out := map[bypass.Outcome][]string{}
	if s != nil {
		for _, r := range s.Trials {
			out[r.Outcome] = append(out[r.Outcome], r.Trial)
		}
	}
	return out
}

// Each defect of a built-in target is found by its own trials and by no
// other, and the honest twin shows none, on the real plan (simulated).
func TestSimBypassSuiteFindsEachDefectAndNoOther(t *testing.T) {
	const base = "builtin:token_bucket?rate=5/s&burst=5"
	for _, c := range []struct {
		spec  string
		found []string // the trials that must find it (at least one must run)
	}{
		{base + "&scope=ip", nil},
		{base + "&key=path", []string{"trailing-slash", "letter-case", "doubled-slash", "encoded-letter", "encoded-space", "encoded-tab", "junk-query", "reordered-query"}},
		{base + "&scope=ip&key=client-ip", []string{"x-client-ip", "x-originating-ip", "true-client-ip", "cf-connecting-ip", "x-remote-ip", "x-remote-addr", "client-ip", "x-cluster-client-ip"}},
		{base + "&scope=ip&methods=GET", []string{"method-head"}},
		{base + "&scope=connection", []string{"new-connection"}},
		{base + "&scope=ip&key=user-agent", []string{"user-agent"}},
	} {
		t.Run(c.spec, func(t *testing.T) {
			res := probeBypass(t, c.spec)
			s := res.Inference.Bypass
			got := byOutcome(s)
			if s == nil || len(s.Trials) == 0 {
				t.Fatalf("no bypass trial ran; notes %q", res.Notes)
			}
			for _, name := range got[bypass.Found] {
				if !slices.Contains(c.found, name) {
					t.Errorf("%s found a way around that the target does not have", name)
				}
			}
			if c.found != nil && len(got[bypass.Found]) == 0 {
				t.Errorf("the defect was not found: %v; not run %v; notes %q", fmt.Sprint(got), s.NotRun, res.Notes)
			}
			for _, k := range bypass.Kinds {
				if len(s.OfKind(k)) == 0 {
					t.Errorf("no %s trial ran: %v", k, got)
				}
			}
			if len(got[bypass.Unclear]) > 0 {
				t.Errorf("unclear trials on a simulated steady link: %v", got[bypass.Unclear])
			}
			// The suite's share: at most a tenth of the probe's other
			// requests, and a finding's confirmation already under way.
			suite := 0
			for _, r := range res.Observation.Results {
				if bypass.IsPhase(r.Phase) {
					suite++
				}
			}
			if others := len(res.Observation.Results) - suite; suite > others/10+2*bypass.Confirmations-1 {
				t.Errorf("the suite sent %d requests beside the probe's %d", suite, others)
			}
			t.Logf("%v not run %v; %d requests", got, s.NotRun, suite)
		})
	}
}

// An honest limit — one counter per address, whatever the client writes —
// shows no way around it on any seed of a jittery, stalling link, whatever
// recovers during the suite: a bucket refilling, a window resetting, a log
// sliding. A recovery may make a trial unclear, never a finding.
func TestSimBypassSuiteFindsNothingOnHonestLimits(t *testing.T) {
	for _, spec := range []string{
		"builtin:token_bucket?rate=20/s&burst=10&scope=ip",
		"builtin:fixed_window?limit=10&window=1s&scope=ip",
		"builtin:sliding_log?limit=8&window=2s&scope=ip",
	} {
		for seed := 1; seed <= 4; seed++ {
			req, err := attack.NewRequest("GET", bypassTarget, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			network := fmt.Sprintf("rtt=2ms&jitter=1ms&stall=20ms&seed=%d", seed)
			res, err := Run(context.Background(), req, simOptions(t, spec, network, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			if s := res.Inference.Bypass; s == nil || len(s.Found()) > 0 {
				t.Errorf("%s on %s: %v", spec, network, byOutcome(s))
			}
		}
	}
}
