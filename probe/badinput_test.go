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

func TestProbeBadTargets(t *testing.T) {
	always := func(code int) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if code == 301 {
				w.Header().Set("Location", "/elsewhere")
			}
			w.WriteHeader(code)
		}))
	}
	blocked := always(429)
	defer blocked.Close()
	inf, err := probeURL(t, blocked.URL, Options{MaxTime: MinTime})
	if err != nil || inf.Family != Inconclusive || !strings.Contains(inf.Reason, "rejected, from the first") {
		t.Fatalf("always-429: %+v %v", inf, err)
	}
	redirect := always(301)
	defer redirect.Close()
	inf, err = probeURL(t, redirect.URL, Options{MaxTime: MinTime})
	if err != nil || inf.Family != Inconclusive || !strings.Contains(inf.Reason, "redirect") {
		t.Fatalf("redirect: %+v %v", inf, err)
	}
	// Neither a blocked client nor a redirect is worth a budget: the plan
	// stops after the first burst, and no note blames the budget.
	for _, srv := range []*httptest.Server{blocked, redirect} {
		req, _ := attack.NewRequest("GET", srv.URL, nil, "")
		res, err := Run(context.Background(), req, Options{MaxTime: MinTime})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Observation.Results); n > calibrateRequests+firstBurstSize {
			t.Errorf("%s: %d requests sent; the plan should stop after the first burst", srv.URL, n)
		}
		for _, n := range res.Notes {
			if strings.Contains(n, "budget") {
				t.Errorf("%s: note %q does not apply", srv.URL, n)
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
// confidence.
func TestProbeBehaviourChangesMidway(t *testing.T) {
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
	inf, err := probeURL(t, srv.URL, Options{MaxTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if inf.Family != Inconclusive && inf.Confidence >= 0.9 {
		t.Fatalf("fabricated a confident family: %s (%.2f)", inf.Summary(), inf.Confidence)
	}
}
