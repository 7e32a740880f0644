package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
)

// untilFault sends a request every 100ms up to 900ms, each answered
// before the fault at 1s, and fails the test when one is not.
func untilFault(t *testing.T, r *rig) {
	t.Helper()
	for at := time.Duration(0); at < time.Second; at += 100 * ms {
		r.sleepTo(at)
		if res := r.do(attack.Shot{}); res.Error != "" || res.Status != 200 {
			t.Fatalf("before the fault, at %v: status %d error %q", at, res.Status, res.Error)
		}
	}
	r.sleepTo(time.Second)
}

func TestFailDieAndRefuseRefuseFromFailAt(t *testing.T) {
	for _, fail := range []string{"die", "refuse"} {
		r := run(t, "sim:token_bucket?rate=100/s&burst=100&rtt=20ms&seed=1&fail-at=1s&fail="+fail, attack.Options{})
		untilFault(t, r)
		for range 2 {
			res := r.do(attack.Shot{})
			if want := "connection refused to " + host; !strings.HasPrefix(res.Error, want) || res.Status != 0 {
				t.Errorf("fail=%s after fail-at: status %d error %q, want %q…", fail, res.Status, res.Error, want)
			}
		}
	}
}

// Requests in flight at the fault: one sent before it and arriving after,
// one decided before it and written after. A dying server drops both, a
// refusing one still answers them.
func TestFailDieDropsRequestsInFlightAndRefuseAnswersThem(t *testing.T) {
	for fail, want := range map[string]string{"die": "server closed the connection without answering", "refuse": ""} {
		for _, c := range []struct{ latency, sent string }{{"0s", "995ms"}, {"30ms", "980ms"}} {
			r := run(t, "sim:token_bucket?rate=100/s&burst=100&rtt=20ms&seed=1&fail-at=1s&fail="+fail+"&latency="+c.latency, attack.Options{})
			r.do(attack.Shot{})
			sent, _ := time.ParseDuration(c.sent)
			r.sleepTo(sent)
			res := r.do(attack.Shot{})
			if res.Error != want || (want == "") != (res.Status == 200) {
				t.Errorf("fail=%s, latency %s, sent at %s: status %d error %q, want error %q", fail, c.latency, c.sent, res.Status, res.Error, want)
			}
		}
	}
}

func TestFail500AnswersWithoutQuotaHeaders(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=100/s&burst=100&rtt=20ms&seed=1&fail-at=1s&fail=500", attack.Options{})
	untilFault(t, r)
	res := r.do(attack.Shot{})
	if res.Status != 500 || res.Error != "" {
		t.Fatalf("after fail-at: status %d error %q, want 500", res.Status, res.Error)
	}
	for name := range res.Headers {
		if strings.Contains(name, "ratelimit") || name == "retry-after" {
			t.Errorf("the 500 carries %s: %q", name, res.Headers[name])
		}
	}
}

func TestFailHangTimesOutAfterTheTimeout(t *testing.T) {
	r := run(t, "sim:token_bucket?rate=100/s&burst=100&rtt=20ms&seed=1&fail-at=1s&fail=hang", attack.Options{Timeout: 2 * time.Second})
	untilFault(t, r)
	res := r.do(attack.Shot{})
	if want := "timeout waiting for " + host; res.Error != want || res.Status != 0 {
		t.Errorf("after fail-at: status %d error %q, want %q", res.Status, res.Error, want)
	}
	if res.Sent != time.Second || res.Done != 3*time.Second || r.n.Now() != 3*time.Second {
		t.Errorf("sent %v done %v now %v, want 1s, 3s (the 2s timeout), 3s", res.Sent, res.Done, r.n.Now())
	}
}
