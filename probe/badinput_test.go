package probe

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/probe/observation"
	"github.com/ratecheck/ratecheck/probe/plan"
)

func probeURL(t *testing.T, url string, opt Options) (Inference, error) {
	t.Helper()
	req, err := attack.NewRequest("GET", url, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), req, opt)
	if err != nil {
		return Inference{}, err
	}
	return res.Inference, nil
}

// Targets that are no limiter, on real sockets (httptest servers: no
// builtin: limiter answers like these): one that rejects everything, one
// that redirects, one that is gone. Each probe runs once; the blocked and
// the redirecting one stop after the first burst.
func TestProbeBadTargets(t *testing.T) {
	t.Parallel() // live probes mostly wait on their servers: side by side
	always := func(code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if code == 301 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(code)
		}))
	}
	for _, c := range []struct {
		name   string
		code   int
		reason string
	}{
		{"always-429", 429, "rejected, from the first"},
		{"redirect", 301, "redirect"},
	} {
		srv := always(c.code)
		defer srv.Close()
		req, _ := attack.NewRequest("GET", srv.URL, nil, "")
		res, err := Run(context.Background(), req, Options{MaxTime: MinTime})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if inf := res.Inference; inf.Family != Inconclusive || !strings.Contains(inf.Reason, c.reason) {
			t.Fatalf("%s: %+v", c.name, inf)
		}
		// Neither a blocked client nor a redirect is worth a budget: the
		// plan stops after the first burst, and no note blames the budget.
		if n := len(res.Observation.Results); n > len(res.Observation.Phase(observation.PhaseCalibrate))+plan.FirstBurstSize {
			t.Errorf("%s: %d requests sent; the plan should stop after the first burst", c.name, n)
		}
		for _, n := range res.Notes {
			if strings.Contains(n, "budget") {
				t.Errorf("%s: note %q does not apply", c.name, n)
			}
		}
	}
	// Unreachable: a clear error, not a verdict.
	dead := always(200)
	url := dead.URL
	dead.Close()
	if _, err := probeURL(t, url, Options{MaxTime: 5 * time.Second}); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("unreachable: %v", err)
	}
}

// A target whose behaviour changes mid-probe (it stops limiting halfway):
// no model explains it, and the probe says so instead of naming one with
// confidence. Its handler is no builtin: limiter, so it runs live; the
// smallest request budget (MinRequests) puts the change halfway through
// the run and ends the trace in under a second, where the default budget
// traced for the whole MaxTime.
func TestProbeBehaviourChangesMidway(t *testing.T) {
	t.Parallel() // live probes mostly wait on their servers: side by side
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		// 10 admitted, then reject until request 150, then admit everything.
		if i > 10 && i < 150 {
			w.WriteHeader(429)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	inf, err := probeURL(t, srv.URL, Options{MaxTime: MinTime, MaxRequests: MinRequests})
	if err != nil {
		t.Fatal(err)
	}
	if inf.Family != Inconclusive && inf.Confidence >= 0.9 {
		t.Fatalf("fabricated a confident family: %s (%.2f)", inf.Summary(), inf.Confidence)
	}
}
