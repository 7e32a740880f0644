package limiter

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	good := map[string]float64{
		"10/s": 10, "600/m": 10, "10r/s": 10, "30r/m": 0.5, "2.5/s": 2.5,
		"100/1m": 100.0 / 60, "5/500ms": 10, "3600/h": 1,
	}
	for in, want := range good {
		got, err := ParseRate(in)
		if err != nil || got < want*0.999999 || got > want*1.000001 {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"ten", "10", "0/s", "-1/s", "10/fortnight", "NaN/s", "10/-1s", ""} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted", bad)
		}
	}
}

func TestConfigSetAndValidate(t *testing.T) {
	c := Defaults()
	for _, kv := range [][2]string{{"algo", "fixed_window"}, {"limit", "5"}, {"window", "2s"}, {"align", "first"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil || c.Limit != 5 || c.Window != 2*time.Second {
		t.Fatalf("config %+v: %v", c, err)
	}
	bad := []struct{ k, v, msg string }{
		{"burst", "-3", "burst must be ≥ 0"},
		{"rate", "ten", "COUNT/UNIT"}, {"rate", "x/s", "not a positive number"},
		{"window", "forever", "not a duration"},
		{"color", "red", "unknown limiter parameter"},
	}
	for _, b := range bad {
		c := Defaults()
		err := c.Set(b.k, b.v)
		if err == nil || !strings.Contains(err.Error(), b.msg) {
			t.Errorf("Set(%s=%s) = %v, want error containing %q", b.k, b.v, err, b.msg)
		}
	}
	c = Defaults()
	c.Algo = "magic"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "unknown algorithm") {
		t.Fatalf("Validate unknown algo: %v", err)
	}
}

func TestPenaltyParam(t *testing.T) {
	c := Defaults()
	for _, kv := range [][2]string{{"algo", "fixed_window"}, {"penalty", "restart"}} {
		if err := c.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Validate(); err != nil || !c.Restarts() {
		t.Fatalf("%+v: %v", c, err)
	}
	for _, tc := range []struct{ algo, penalty, msg string }{
		{"fixed_window", "forever", `penalty must be "none" or "restart"`},
		{"token_bucket", "restart", "applies to fixed_window only"},
	} {
		c := Defaults()
		c.Algo, c.Penalty = tc.algo, tc.penalty
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s penalty=%s: %v, want %q", tc.algo, tc.penalty, err, tc.msg)
		}
	}
	c = Defaults()
	c.Algo, c.Penalty = FixedWindow, PenaltyNone
	if err := c.Validate(); err != nil || c.Restarts() {
		t.Fatalf("penalty=none: %v", err)
	}
}
