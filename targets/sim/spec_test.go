package sim_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ratecheck/ratecheck/targets/sim"
)

func TestParseSpecReadsNetworkAndServerKeys(t *testing.T) {
	cfg, err := sim.ParseSpec("sim:token_bucket?rate=10/s&burst=20&scope=ip&latency=5ms" +
		"&rtt=20ms&jitter=1ms&stall=15ms&stall-share=0.5&fail=hang&fail-at=3s&seed=9&replicas=3")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTT != 20*ms || cfg.Jitter != ms || cfg.Stall != 15*ms || cfg.StallShare != 0.5 ||
		cfg.Fail != sim.FailHang || cfg.FailAt != 3*time.Second || cfg.Seed != 9 || cfg.Replicas != 3 {
		t.Errorf("network %+v", cfg)
	}
	s := cfg.Server
	if s.Limiter.Algo != "token_bucket" || s.Limiter.Rate != 10 || s.Limiter.Burst != 20 || s.Scope != "ip" || s.Latency != 5*ms {
		t.Errorf("server %+v", s)
	}
}

func TestParseSpecDefaults(t *testing.T) {
	cfg, err := sim.ParseSpec("sim:fixed_window?limit=5&window=1s")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.RTT != sim.DefaultRTT || cfg.Seed != 0 || cfg.Fail != "" || cfg.Replicas != 0 || cfg.Server.Limiter.Limit != 5 {
		t.Errorf("%+v", cfg)
	}
}

func TestParseSpecRefusesBadKeysByName(t *testing.T) {
	for spec, key := range map[string]string{
		"sim:token_bucket?rtt=fast":           "rtt",
		"sim:token_bucket?rtt=-1ms":           "rtt",
		"sim:token_bucket?jitter=2":           "jitter",
		"sim:token_bucket?fail=bogus":         "fail",
		"sim:token_bucket?fail-at=soon":       "fail-at",
		"sim:token_bucket?replicas=0":         "replicas",
		"sim:token_bucket?replicas=65":        "replicas",
		"sim:token_bucket?stall-share=1.5":    "stall-share",
		"sim:token_bucket?seed=-1":            "seed",
		"sim:token_bucket?rate=fast":          "rate",
		"sim:token_bucket?colour=red":         "colour",
		"sim:token_bucket?fault=race":         "race",
		"builtin:token_bucket?rate=10/s":      "not a sim: target",
		"sim:token_bucket?rate=10/s&rate=1/s": "twice",
	} {
		_, err := sim.ParseSpec(spec)
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error %v, want one naming %q", spec, err, key)
		}
	}
}

func TestReplaySpecWritesTheSeed(t *testing.T) {
	for spec, want := range map[string]string{
		"sim:token_bucket":                  "sim:token_bucket?seed=0",
		"sim:token_bucket?rate=10/s":        "sim:token_bucket?rate=10/s&seed=0",
		"sim:token_bucket?seed=7&rate=10/s": "sim:token_bucket?seed=7&rate=10/s",
		"sim:token_bucket?rate=10/s&seed=0": "sim:token_bucket?rate=10/s&seed=0",
	} {
		if got := sim.ReplaySpec(spec); got != want {
			t.Errorf("ReplaySpec(%q) = %q, want %q", spec, got, want)
		}
	}
}

// A builtin: target moves behind a simulated network with its keys whole.
func TestFromBuiltinKeepsTheKeys(t *testing.T) {
	for _, c := range []struct{ builtin, network, want string }{
		{"builtin:none", "seed=1", "sim:none?seed=1"},
		{"builtin:token_bucket?rate=10/s&burst=20", "rtt=1ms&seed=1", "sim:token_bucket?rate=10/s&burst=20&rtt=1ms&seed=1"},
		{"builtin:none", "", "sim:none"},
	} {
		if got := sim.FromBuiltin(c.builtin, c.network); got != c.want {
			t.Errorf("FromBuiltin(%q, %q) = %q, want %q", c.builtin, c.network, got, c.want)
		}
		if _, err := sim.ParseSpec(sim.FromBuiltin(c.builtin, c.network)); err != nil {
			t.Errorf("%s: %v", c.want, err)
		}
	}
}
