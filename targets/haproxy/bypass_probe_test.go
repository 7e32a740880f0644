//go:build unix

package haproxy_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/attack"
	"github.com/ratecheck/ratecheck/internal/testenv"
	"github.com/ratecheck/ratecheck/probe"
	"github.com/ratecheck/ratecheck/probe/bypass"
	"github.com/ratecheck/ratecheck/targets/haproxy"
)

// A real HAProxy that tracks its limit on CF-Connecting-IP when a request
// has one is got around by a forged one, and only that way; the same limit
// tracked on the connection's address (req-rate.cfg) by nothing.
func TestProbeFindsHAProxyHeaderKey(t *testing.T) {
	testenv.NeedHAProxy(t)
	for _, c := range []struct {
		conf  string
		trial string // the trial that must get around the limit; "" for none
	}{
		{"bypass-cf-connecting-ip.cfg", "cf-connecting-ip"},
		{"req-rate.cfg", ""},
	} {
		t.Run(c.conf, func(t *testing.T) {
			t.Parallel() // each probe mostly waits on its own haproxy
			s := probeHAProxy(t, c.conf).Bypass
			if s == nil {
				t.Fatal("no bypass trial ran")
			}
			found := false
			for _, r := range s.Trials {
				t.Logf("%s", r.Line())
				if r.Outcome != bypass.Found {
					continue
				}
				found = found || r.Trial == c.trial
				if r.Kind != bypass.Address || c.trial == "" {
					t.Errorf("%s (%s) found a way around that %s does not have", r.Trial, r.Kind, c.conf)
				}
			}
			if c.trial != "" && !found {
				t.Errorf("%s: %s did not get around the limit; %s", c.conf, c.trial, s.Summary())
			}
		})
	}
}

// probeHAProxy probes a fresh haproxy running testdata/haproxy/conf as
// `ratecheck probe` does.
func probeHAProxy(t *testing.T, conf string) probe.Inference {
	t.Helper()
	inst, err := haproxy.Start(context.Background(), filepath.Join("..", "..", "testdata", "haproxy", conf), haproxy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := inst.Stop(); err != nil {
			t.Error(err)
		}
	}()
	req, err := attack.NewRequest("GET", inst.URL, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := probe.Run(context.Background(), req, probe.Options{MaxTime: 8 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res.Inference
}
