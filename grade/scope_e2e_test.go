package grade

import (
	"strings"
	"testing"

	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
)

// The acceptance for spoofable keys: a limit that trusts
// X-Forwarded-For fails scope.spoofable and grades D or worse; the honest
// per-address limit passes it.
func TestSimScopeSpoofableEndToEnd(t *testing.T) {
	t.Parallel()
	p := runProbe(t, "builtin:token_bucket?rate=10/s&burst=20&scope=ip&key=forwarded")
	c := check(t, p.report, "scope.spoofable", Fail)
	if !strings.Contains(c.Actual, "X-Forwarded-For") || letterIndex(p.report.Letter) < letterIndex("D") ||
		!strings.Contains(strings.Join(p.report.Caps, "; "), "anyone can bypass this limit by sending X-Forwarded-For") {
		t.Fatalf("%s", p.describe())
	}
	p = runProbe(t, "builtin:token_bucket?rate=10/s&burst=20&scope=ip")
	check(t, p.report, "scope.spoofable", Pass)
	if p.inf.Scope != probe.ScopePerIP {
		t.Fatalf("%s", p.describe())
	}
}

// The acceptance for fleets: three local replicas are named with
// an effective capacity of 60 and fail limit.agrees; one Redis counter is
// one limit of 20; read-then-write over-admits a burst.
func TestFleetEndToEnd(t *testing.T) {
	t.Parallel() // the probes mostly wait: every test's run side by side
	spec := "builtin:fleet?replicas=3&algo=token_bucket&rate=10/s&burst=20&store="
	t.Run("local", func(t *testing.T) {
		t.Parallel()
		p := runProbe(t, spec+"local")
		c := check(t, p.report, "limit.agrees", Fail)
		if p.inf.Replicas != 3 || p.inf.EffectiveLimit != 60 || !strings.Contains(c.Actual, "3 replicas with their own counters: the effective limit is 3× the advertised 20") ||
			!strings.Contains(strings.Join(p.inf.Evidence, "\n"), "3 replicas with their own counters") {
			t.Fatalf("local: replicas %d effective %d\n%s", p.inf.Replicas, p.inf.EffectiveLimit, p.describe())
		}
	})
	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		testenv.Need(t, "redis-server")
		p := runProbe(t, spec+"redis")
		check(t, p.report, "burst.over-admission", Pass)
		if p.inf.Replicas != 0 || !strings.Contains(strings.Join(p.inf.Evidence, "\n"), "one shared limit of 20") {
			t.Fatalf("redis: %s", p.describe())
		}
		// The store stays up: the evidence names no failure mode.
		if p.inf.StoreFailure != "" {
			t.Errorf("store up: store failure %q", p.inf.StoreFailure)
		}
		// One counter's advertised limit agrees with what it admits: never
		// a failure. The comparison needs a confident inference, which a
		// loaded machine may take away (0.34 beside the simulation sweep):
		// then it is skipped, and says so.
		c, _ := p.report.Check("limit.agrees")
		switch {
		case c.Outcome == Fail, c.Outcome == Skip && !strings.Contains(c.Actual, "not confident enough"):
			t.Fatalf("limit.agrees: %s (%s)\n%s", c.Outcome, c.Actual, p.describe())
		case c.Outcome == Skip:
			return
		}
		// Confident: a token bucket whose stated interval holds the 20
		// (a loaded machine may widen it: 21 ± 1 was seen), not
		// necessarily at its middle.
		if p.inf.Family != "token_bucket" || abs(p.inf.Burst-20) > p.inf.BurstErr {
			t.Fatalf("redis: %s", p.describe())
		}
	})
	t.Run("redis-naive", func(t *testing.T) {
		t.Parallel()
		testenv.Need(t, "redis-server")
		p := runProbe(t, spec+"redis-naive")
		c := check(t, p.report, "burst.over-admission", Fail)
		if p.inf.Replicas != 0 || !strings.Contains(c.Actual, "against an advertised limit of 20") {
			t.Fatalf("redis-naive: %s", p.describe())
		}
	})
}

// The store goes away 2 s into the run: the evidence says whether the
// limiter then fails open or closed (with the store up it says neither:
// TestFleetEndToEnd/redis).
func TestStoreFailureEndToEnd(t *testing.T) {
	t.Parallel() // the probes mostly wait: every test's run side by side
	testenv.Need(t, "redis-server")
	spec := "builtin:fleet?replicas=3&algo=token_bucket&rate=10/s&burst=20&store=redis&fault=store-down-after=2s&store-fails="
	for _, mode := range []string{probe.StoreFailsOpen, probe.StoreFailsClosed} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			p := runProbe(t, spec+mode)
			if p.inf.StoreFailure != mode || !strings.Contains(strings.Join(p.inf.Evidence, "\n"), "the limiter fails "+mode) {
				t.Errorf("%s: store failure %q\nevidence %s", mode, p.inf.StoreFailure, strings.Join(p.inf.Evidence, "\n"))
			}
		})
	}
}

func abs(v int) int { return max(v, -v) }
