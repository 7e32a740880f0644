package corpus

import (
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/probe"
)

// The judge decides what the corpus asserts, so it is tested on inferences
// made up for the purpose: each case is one way a probe can be right or
// wrong.
func TestJudge(t *testing.T) {
	tb := Truth{Family: "token_bucket", Rate: 10, Burst: 20}
	fw := Truth{Family: "fixed_window", Limit: 20, Window: 2 * time.Second, Align: "wall"}
	fwOutside := fw
	fwOutside.Align, fwOutside.Outside = "wall", "something the probe has no model for"
	fwCreation := fw
	fwCreation.Align = "creation"
	pacer := Truth{Family: "leaky_shaping", Rate: 20, Queue: "unbounded"}
	counting := Truth{Family: "sliding_counter", Limit: 20, Window: 4 * time.Second, Align: "first", CountsRejected: true}
	yes, no := true, false
	clumps := Truth{Family: "token_bucket", Rate: 10, Burst: 20, Refill: 500 * time.Millisecond}
	ticks := Truth{Family: "token_bucket", Rate: 10, Burst: 15, Refill: 100 * time.Millisecond}
	for _, tc := range []struct {
		name  string
		truth Truth
		inf   probe.Inference
		want  string
		sure  bool
	}{
		{"within the bars", tb, probe.Inference{Family: "token_bucket", RatePerS: 10.9, Burst: 22, Confidence: 0.9}, NamedRight, false},
		{"rate 11% off", tb, probe.Inference{Family: "token_bucket", RatePerS: 11.1, Burst: 20, Confidence: 0.5}, ParamsOff, false},
		{"burst 3 off, sure", tb, probe.Inference{Family: "token_bucket", RatePerS: 10, Burst: 23, Confidence: 0.9}, WrongSure + " (parameters)", true},
		{"other family, sure", tb, probe.Inference{Family: "sliding_log", Limit: 20, WindowS: 2, Confidence: 0.8}, WrongSure, true},
		{"other family, unsure", tb, probe.Inference{Family: "sliding_log", Confidence: 0.79}, WrongUnsure, false},
		{"inconclusive", tb, probe.Inference{Family: probe.Inconclusive}, Inconclusive, false},
		{"window alignment counts inside the model space", fw, probe.Inference{Family: "fixed_window", Limit: 20, WindowS: 2, Alignment: "first", Confidence: 0.6}, ParamsOff, false},
		{"an alignment the probe could not tell apart is not wrong", fw, probe.Inference{Family: "fixed_window", Limit: 20, WindowS: 2, Alignment: "wall or first (indistinguishable here)", Confidence: 0.9}, NamedRight, false},
		{"window 2.3 s is off", fw, probe.Inference{Family: "fixed_window", Limit: 20, WindowS: 2.3, Alignment: "wall", Confidence: 0.6}, ParamsOff, false},
		{"alignment is not held against an entry outside the model space", fwOutside, probe.Inference{Family: "fixed_window", Limit: 19, WindowS: 2, Alignment: "first", Confidence: 0.9}, NamedRight, false},
		{"a grid fixed at the key's creation is a start grid", fwCreation, probe.Inference{Family: "fixed_window", Limit: 20, WindowS: 2, Alignment: "start", Confidence: 0.9}, NamedRight, false},
		{"a grid fixed at the key's creation is not the wall's", fwCreation, probe.Inference{Family: "fixed_window", Limit: 20, WindowS: 2, Alignment: "wall", Confidence: 0.6}, ParamsOff, false},
		{"a pacer called none", pacer, probe.Inference{Family: "none", Confidence: 0.85}, WrongSure, true},
		{"a pacer named with its queue", pacer, probe.Inference{Family: "leaky_shaping", RatePerS: 19.9, Queue: "unbounded", Confidence: 0.85}, NamedRight, false},
		{"a pacer given a bounded queue", pacer, probe.Inference{Family: "leaky_shaping", RatePerS: 19.9, Burst: 40, Confidence: 0.6}, ParamsOff, false},
		{"an interval refill named with its interval", clumps, probe.Inference{Family: "token_bucket", RatePerS: 10, Burst: 20, RefillS: 0.5, Confidence: 0.9}, NamedRight, false},
		{"clumps of five called continuous", clumps, probe.Inference{Family: "token_bucket", RatePerS: 10, Burst: 20, Confidence: 0.6}, ParamsOff, false},
		{"one token per tick called continuous", ticks, probe.Inference{Family: "token_bucket", RatePerS: 10, Burst: 15, Confidence: 0.9}, NamedRight, false},
		{"a continuous bucket given an interval", tb, probe.Inference{Family: "token_bucket", RatePerS: 10, Burst: 20, RefillS: 1, Confidence: 0.6}, ParamsOff, false},
		{"denied attempts that count, named", counting, probe.Inference{Family: "sliding_counter", Limit: 20, WindowS: 4, Alignment: "first", CountsRejected: &yes, Confidence: 0.9}, NamedRight, false},
		{"denied attempts that count, missed", counting, probe.Inference{Family: "sliding_counter", Limit: 20, WindowS: 4, Alignment: "first", CountsRejected: &no, Confidence: 0.6}, ParamsOff, false},
		{"HAProxy's grid called a start grid", counting, probe.Inference{Family: "sliding_counter", Limit: 20, WindowS: 4, Alignment: "start", CountsRejected: &yes, Confidence: 0.6}, ParamsOff, false},
	} {
		j := Judge(tc.truth, tc.inf)
		if j.Verdict != tc.want || j.Sure() != tc.sure {
			t.Errorf("%s: verdict %q (sure %v), want %q (sure %v); errors %q", tc.name, j.Verdict, j.Sure(), tc.want, tc.sure, j.ParamErrs)
		}
	}
}
