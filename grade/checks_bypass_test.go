package grade

import (
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/probe/bypass"
)

// Each kind's check fails on a finding (capping at D, naming what was sent
// and the requests), skips on an unclear trial even beside held ones, and
// passes only when every trial of the kind held or was not served.
func TestBypassChecksFailSkipAndPassByKind(t *testing.T) {
	b := newBuilder()
	b.add("burst", 100, 429, "retry-after", "1")
	inf := fw
	inf.Bypass = &bypass.Suite{Trials: []bypass.Result{
		{Trial: "junk-query", Kind: bypass.Path, What: "a junk query", Outcome: bypass.Found, Why: "2 requests admitted", Seqs: []int{7, 8, 9, 10, 11}, Sent: []string{"/?ratecheck=1", "/?ratecheck=2"}},
		{Trial: "trailing-slash", Kind: bypass.Path, Outcome: bypass.Held},
		{Trial: "x-client-ip", Kind: bypass.Address, Outcome: bypass.Held, Seqs: []int{3, 4, 5}},
		{Trial: "true-client-ip", Kind: bypass.Address, Outcome: bypass.NotServed},
		{Trial: "user-agent", Kind: bypass.Identity, Outcome: bypass.Held},
		{Trial: "no-cookies", Kind: bypass.Identity, Outcome: bypass.Unclear, Why: "the key recovered"},
	}}
	rep := b.grade(inf)
	path := check(t, rep, "bypass.path", Fail)
	if !strings.Contains(path.Actual, "/?ratecheck=2") || len(path.Seqs) != 5 || !strings.Contains(strings.Join(rep.Caps, ";"), "D: anyone can get around this limit: a junk query (bypass.path)") {
		t.Errorf("path: %+v; caps %v", path, rep.Caps)
	}
	check(t, rep, "bypass.address", Pass)
	if c := check(t, rep, "bypass.identity", Skip); !strings.Contains(c.Actual, "the key recovered") {
		t.Errorf("identity skip says %q", c.Actual)
	}
	check(t, rep, "bypass.method", Skip)
	inf.Bypass = nil
	if c := check(t, b.grade(inf), "bypass.address", Skip); !strings.Contains(c.Actual, "did not run") {
		t.Errorf("no suite: %q", c.Actual)
	}
}
