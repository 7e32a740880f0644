package sim_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

func TestAdmittedAnswerCarriesQuotaHeadersAndTheSimulatedDate(t *testing.T) {
	r := run(t, bucket, attack.Options{})
	r.sleepTo(5 * time.Second)
	res := r.do(attack.Shot{})
	// Sent at 5.02s after the handshake, decided 10ms later.
	if want := r.n.Epoch().Add(5030 * ms).Format(http.TimeFormat); res.Headers["date"] != want {
		t.Errorf("Date %q, want %q (the epoch plus the decision's 5.03s)", res.Headers["date"], want)
	}
	for name, want := range map[string]string{
		"x-ratelimit-limit":     "20",
		"x-ratelimit-remaining": "19",
		"ratelimit-policy":      `"default";q=20;w=2`,
	} {
		if res.Headers[name] != want {
			t.Errorf("%s: %q, want %q", name, res.Headers[name], want)
		}
	}
	if res.Headers["ratelimit"] == "" || res.Headers["x-ratelimit-reset"] == "" {
		t.Errorf("headers %v lack RateLimit or X-RateLimit-Reset", res.Headers)
	}
	if res.Body != "" {
		t.Errorf("an admitted answer kept its body %q", res.Body)
	}
}

func TestRejectionCarriesRetryAfterAndProblemJSON(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=1/s&burst=1&rtt=20ms&seed=1", attack.Options{})
	r.sleepTo(3 * time.Second)
	r.do(attack.Shot{})
	res := r.do(attack.Shot{})
	if res.Status != 429 || res.Headers["retry-after"] != "1" || res.Headers["content-type"] != "application/problem+json" {
		t.Fatalf("status %d, headers %v: want 429 with Retry-After 1 and application/problem+json", res.Status, res.Headers)
	}
	var p struct {
		Type   string `json:"type"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal([]byte(res.Body), &p); err != nil || p.Status != 429 ||
		p.Type != "https://iana.org/assignments/http-problem-types#quota-exceeded" {
		t.Errorf("body %q: %+v, %v", res.Body, p, err)
	}
	if want := r.n.Epoch().Add(3050 * ms).Format(http.TimeFormat); res.Headers["date"] != want {
		t.Errorf("Date %q, want %q", res.Headers["date"], want)
	}
}
