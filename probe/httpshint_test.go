package probe

import (
	"github.com/ratecheck/ratecheck/results"
	"testing"
)

// What a plain request to an HTTPS port gets: answers, none a decision. A
// decision, or no answer at all, is something else.
func TestAnsweredWithoutDecision(t *testing.T) {
	for _, c := range []struct {
		name string
		rs   []results.Result
		want bool
	}{
		{"400s", []results.Result{{Status: 400}, {Status: 400}}, true},
		{"bytes, no status", []results.Result{{FirstByte: 1, Error: "malformed HTTP response"}}, true},
		{"an admission", []results.Result{{Status: 400}, {Status: 200}}, false},
		{"a rejection", []results.Result{{Status: 429}}, false},
		{"silence", []results.Result{{Error: "timeout"}}, false},
		{"nothing", nil, false},
	} {
		if got := answeredWithoutDecision(c.rs); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
