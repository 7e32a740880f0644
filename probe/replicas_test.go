package probe

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/results"

	"github.com/ratecheck/ratecheck/probe/observation"
)

// burstWithRemaining is a burst whose admitted answers carry these
// Remaining values (Limit 20), then a rejection.
func burstWithRemaining(rem ...int) *observation.Observation {
	o := &observation.Observation{}
	for i, v := range rem {
		o.Results = append(o.Results, results.Result{Seq: i + 1, Phase: observation.PhaseBurst, Status: 200,
			Headers: map[string]string{"x-ratelimit-limit": "20", "x-ratelimit-remaining": strconv.Itoa(v)}})
	}
	o.Results = append(o.Results, results.Result{Seq: len(rem) + 1, Phase: observation.PhaseBurst, Status: 429})
	return o
}

func TestReplicasFromInterleavedRemaining(t *testing.T) {
	seq := func(top, bottom, each int) []int {
		var out []int
		for v := top; v >= bottom; v-- {
			for range each {
				out = append(out, v)
			}
		}
		return out
	}
	for _, c := range []struct {
		name     string
		rem      []int
		replicas int
		fact     string
	}{
		{"three counters", seq(19, 0, 3), 3, "3 replicas with their own counters: the effective limit is 3× the advertised 20 (60)"},
		{"three, the last value partly", append(seq(19, 4, 3), 3, 3), 3, "3 replicas"},
		{"one counter", seq(19, 0, 1), 1, "one shared limit of 20"},
		{"racy store: the first values repeated", append(append(seq(19, 19, 30), seq(18, 18, 12)...), seq(17, 10, 1)...), 0, ""},
		{"a gap", append(seq(19, 15, 2), seq(13, 0, 2)...), 0, ""},
		{"too few values", seq(19, 18, 3), 0, ""},
	} {
		o := burstWithRemaining(c.rem...)
		f := replicaFindings(o)
		facts := strings.Join(replicaFacts(f), "\n")
		if f.Replicas != c.replicas || (c.fact == "") != (facts == "") || !strings.Contains(facts, c.fact) {
			t.Errorf("%s: %+v %q", c.name, f, facts)
		}
		var inf Inference
		inf.setReplicas(f)
		if want := map[bool]int{true: 60, false: 0}[c.replicas == 3]; inf.EffectiveLimit != want {
			t.Errorf("%s: effective limit %d", c.name, inf.EffectiveLimit)
		}
	}
}
